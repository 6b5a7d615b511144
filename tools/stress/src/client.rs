//! Thrift connections (framed or unframed binary protocol over TCP), the stress schema, and
//! the requests each operation sends.

use std::collections::BTreeMap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
use thrift::transport::{TBufferedReadTransport, TBufferedWriteTransport, TFramedReadTransport, TFramedWriteTransport};
use thrift_idl as t;
use thrift_idl::TCassandraSyncClient;

use super::cql::CqlError;
use super::resp::RespError;
use super::wire::{AsyncConn, Reply};

/// Column family written by insert and read by read and range.
pub const STANDARD_CF: &str = "Standard1";
/// Counter column family used by counter_add.
pub const COUNTER_CF: &str = "Counter1";

/// A synchronous Cassandra client over either transport.
pub type Client =
    t::CassandraSyncClient<TBinaryInputProtocol<Box<dyn Read + Send>>, TBinaryOutputProtocol<Box<dyn Write + Send>>>;

/// Why talking to the server failed outside of a measured operation.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot resolve {addr}: {source}")]
    Resolve { addr: String, source: std::io::Error },
    #[error("{addr} resolves to no address")]
    NoAddress { addr: String },
    #[error("cannot connect to {addr}: {source}")]
    Connect { addr: String, source: std::io::Error },
    #[error("{what}: {}", describe_error(.source))]
    Thrift { what: String, source: thrift::Error },
    #[error("CQL at {addr}: {source}")]
    Cql { addr: String, source: CqlError },
}

/// Where and how to connect.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    pub host: String,
    pub port: u16,
    pub framed: bool,
    /// Connect timeout and per-request socket timeout.
    pub timeout: Duration,
}

/// Opens one connection.
pub fn connect(opts: &ConnectOptions) -> Result<Client, ClientError> {
    let addr = format!("{}:{}", opts.host, opts.port);
    let sock = (opts.host.as_str(), opts.port)
        .to_socket_addrs()
        .map_err(|source| ClientError::Resolve { addr: addr.clone(), source })?
        .next()
        .ok_or_else(|| ClientError::NoAddress { addr: addr.clone() })?;
    let io = |source| ClientError::Connect { addr: addr.clone(), source };
    let stream = TcpStream::connect_timeout(&sock, opts.timeout).map_err(io)?;
    // One small request per round trip: Nagle would add delayed-ACK stalls to every call.
    stream.set_nodelay(true).map_err(io)?;
    stream.set_read_timeout(Some(opts.timeout)).map_err(io)?;
    stream.set_write_timeout(Some(opts.timeout)).map_err(io)?;
    let reader = stream.try_clone().map_err(io)?;
    let (read, write): (Box<dyn Read + Send>, Box<dyn Write + Send>) = if opts.framed {
        // The framed transports read the 4-byte length and the frame separately, and write
        // them separately; buffering underneath makes that one syscall (and one TCP segment
        // with TCP_NODELAY) each way, as a C or Java client does.
        (
            Box::new(TFramedReadTransport::new(BufReader::with_capacity(64 * 1024, reader))),
            Box::new(TFramedWriteTransport::new(BufWriter::with_capacity(64 * 1024, stream))),
        )
    } else {
        (Box::new(TBufferedReadTransport::new(reader)), Box::new(TBufferedWriteTransport::new(stream)))
    };
    Ok(t::CassandraSyncClient::new(TBinaryInputProtocol::new(read, true), TBinaryOutputProtocol::new(write, true)))
}

/// A short name for an error, used to count errors by kind: the exception and its message.
pub fn describe_error(e: &thrift::Error) -> String {
    match e {
        thrift::Error::User(inner) => {
            if let Some(x) = inner.downcast_ref::<t::InvalidRequestException>() {
                format!("InvalidRequestException: {}", x.why)
            } else if inner.downcast_ref::<t::NotFoundException>().is_some() {
                "NotFoundException".into()
            } else if inner.downcast_ref::<t::TimedOutException>().is_some() {
                "TimedOutException".into()
            } else if inner.downcast_ref::<t::UnavailableException>().is_some() {
                "UnavailableException".into()
            } else if let Some(x) = inner.downcast_ref::<t::AuthenticationException>() {
                format!("AuthenticationException: {}", x.why)
            } else if let Some(x) = inner.downcast_ref::<t::AuthorizationException>() {
                format!("AuthorizationException: {}", x.why)
            } else if inner.downcast_ref::<t::SchemaDisagreementException>().is_some() {
                "SchemaDisagreementException".into()
            } else {
                format!("server exception: {inner}")
            }
        }
        thrift::Error::Transport(x) => format!("transport error: {}", x.message),
        thrift::Error::Protocol(x) => format!("protocol error: {}", x.message),
        thrift::Error::Application(x) => format!("application error: {}", x.message),
    }
}

/// Whether the connection is unusable after this error (the reply stream is out of step).
pub fn breaks_connection(e: &thrift::Error) -> bool {
    matches!(e, thrift::Error::Transport(_) | thrift::Error::Protocol(_))
}

fn is_not_found(e: &thrift::Error) -> bool {
    matches!(e, thrift::Error::User(inner) if inner.downcast_ref::<t::NotFoundException>().is_some())
}

fn cf_def(keyspace: &str, name: &str, default_validation_class: &str) -> t::CfDef {
    t::CfDef {
        column_type: Some("Standard".into()),
        comparator_type: Some("BytesType".into()),
        comment: Some("created by sibyl-stress".into()),
        default_validation_class: Some(default_validation_class.into()),
        key_validation_class: Some("BytesType".into()),
        ..thrift_idl::bare_cf_def(keyspace, name)
    }
}

/// The two column families of the stress keyspace.
pub fn stress_cf_defs(keyspace: &str) -> Vec<t::CfDef> {
    vec![cf_def(keyspace, STANDARD_CF, "BytesType"), cf_def(keyspace, COUNTER_CF, "CounterColumnType")]
}

fn already_exists(e: &thrift::Error) -> bool {
    matches!(e, thrift::Error::User(inner)
        if inner.downcast_ref::<t::InvalidRequestException>().is_some_and(|x| x.why.to_lowercase().contains("already exist")))
}

/// What [`ensure_schema`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaAction {
    Existed,
    CreatedKeyspace,
    AddedColumnFamilies(Vec<String>),
}

/// Creates the keyspace (SimpleStrategy with `replication_factor`) with `Standard1` and
/// `Counter1` if it is missing, and adds either column family if the keyspace lacks it.
/// "Already exists" answers are ignored: another stress process may be doing the same.
pub fn ensure_schema(
    client: &mut Client,
    keyspace: &str,
    replication_factor: u32,
) -> Result<SchemaAction, ClientError> {
    let thrift = |what: &str| {
        let what = what.to_string();
        move |source| ClientError::Thrift { what, source }
    };
    match client.describe_keyspace(keyspace.to_string()) {
        Ok(ks) => {
            let mut added = Vec::new();
            for def in stress_cf_defs(keyspace) {
                if ks.cf_defs.iter().any(|c| c.name == def.name) {
                    continue;
                }
                // Cassandra adds a column family to the session's keyspace only.
                if added.is_empty() {
                    client.set_keyspace(keyspace.to_string()).map_err(thrift(&format!("set_keyspace {keyspace}")))?;
                }
                let name = def.name.clone();
                match client.system_add_column_family(def) {
                    Ok(_) => added.push(name),
                    Err(e) if already_exists(&e) => {}
                    Err(e) => return Err(thrift(&format!("creating column family {keyspace}.{name}"))(e)),
                }
            }
            Ok(if added.is_empty() { SchemaAction::Existed } else { SchemaAction::AddedColumnFamilies(added) })
        }
        Err(e) if is_not_found(&e) => {
            let mut options = BTreeMap::new();
            options.insert("replication_factor".to_string(), replication_factor.to_string());
            let def = t::KsDef::new(
                keyspace.to_string(),
                "org.apache.cassandra.locator.SimpleStrategy".to_string(),
                options,
                None,
                stress_cf_defs(keyspace),
                Some(true),
            );
            match client.system_add_keyspace(def) {
                Ok(_) => Ok(SchemaAction::CreatedKeyspace),
                Err(e) if already_exists(&e) => Ok(SchemaAction::Existed),
                Err(e) => Err(thrift(&format!("creating keyspace {keyspace}"))(e)),
            }
        }
        Err(e) => Err(thrift(&format!("describing keyspace {keyspace}"))(e)),
    }
}

/// Opens a connection and selects the keyspace.
pub fn connect_to_keyspace(opts: &ConnectOptions, keyspace: &str) -> Result<Client, ClientError> {
    let mut c = connect(opts)?;
    c.set_keyspace(keyspace.to_string())
        .map_err(|source| ClientError::Thrift { what: format!("set_keyspace {keyspace}"), source })?;
    Ok(c)
}

/// Microseconds since the epoch, the usual Thrift client timestamp.
pub fn timestamp_micros() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_micros() as i64).unwrap_or(0)
}

/// Column `i`'s name: `C0`, `C1`, ...
pub fn column_name(i: u32) -> Vec<u8> {
    format!("C{i}").into_bytes()
}

fn parent(cf: &str) -> t::ColumnParent {
    t::ColumnParent { column_family: cf.to_string(), super_column: None }
}

fn first_columns(count: u32) -> t::SlicePredicate {
    t::SlicePredicate {
        column_names: None,
        slice_range: Some(t::SliceRange {
            start: Vec::new(),
            finish: Vec::new(),
            reversed: false,
            count: count as i32,
        }),
    }
}

/// How an operation went wrong.
#[derive(Debug)]
pub enum OpError {
    /// The Thrift server (or the connection) failed the request.
    Thrift(thrift::Error),
    /// The RESP connection failed or went out of step.
    Resp(RespError),
    /// The RESP server answered with an error reply (`-ERR ...`).
    RespServer(String),
    /// The CQL connection failed or went out of step.
    Cql(CqlError),
    /// The CQL server answered with an ERROR frame.
    CqlServer(String),
    /// The request succeeded but found nothing where data was expected.
    Empty(&'static str),
}

impl OpError {
    pub fn describe(&self) -> String {
        match self {
            OpError::Thrift(e) => describe_error(e),
            OpError::Resp(e) => format!("RESP: {e}"),
            OpError::RespServer(why) | OpError::CqlServer(why) => format!("server error: {why}"),
            OpError::Cql(e) => format!("CQL: {e}"),
            OpError::Empty(what) => what.to_string(),
        }
    }

    /// Whether the connection is unusable after this error and must be opened again.
    pub fn breaks_connection(&self) -> bool {
        match self {
            OpError::Thrift(e) => breaks_connection(e),
            OpError::Resp(_) | OpError::Cql(_) => true,
            OpError::RespServer(_) | OpError::CqlServer(_) | OpError::Empty(_) => false,
        }
    }
}

impl From<thrift::Error> for OpError {
    fn from(e: thrift::Error) -> Self {
        OpError::Thrift(e)
    }
}

impl From<CqlError> for OpError {
    fn from(e: CqlError) -> Self {
        OpError::Cql(e)
    }
}

impl From<RespError> for OpError {
    fn from(e: RespError) -> Self {
        OpError::Resp(e)
    }
}

/// The mutations of one inserted row: `values` become columns `C0..` with timestamp `ts`.
pub fn row_mutations(values: Vec<Vec<u8>>, ts: i64) -> Vec<t::Mutation> {
    values
        .into_iter()
        .enumerate()
        .map(|(i, value)| t::Mutation {
            column_or_supercolumn: Some(t::ColumnOrSuperColumn {
                column: Some(t::Column {
                    name: column_name(i as u32),
                    value: Some(value),
                    timestamp: Some(ts),
                    ttl: None,
                }),
                super_column: None,
                counter_column: None,
                counter_super_column: None,
            }),
            deletion: None,
        })
        .collect()
}

/// The mutations adding 1 to counters `C0..C{columns-1}`.
pub fn counter_mutations(columns: u32) -> Vec<t::Mutation> {
    (0..columns)
        .map(|i| t::Mutation {
            column_or_supercolumn: Some(t::ColumnOrSuperColumn {
                column: None,
                super_column: None,
                counter_column: Some(t::CounterColumn { name: column_name(i), value: 1 }),
                counter_super_column: None,
            }),
            deletion: None,
        })
        .collect()
}

/// The `batch_mutate` arguments writing `mutations` into row `key` of `cf`.
fn one_row_batch(
    key: &[u8],
    cf: &str,
    mutations: Vec<t::Mutation>,
    cl: t::ConsistencyLevel,
) -> t::CassandraBatchMutateArgs {
    let by_cf = BTreeMap::from([(cf.to_string(), mutations)]);
    t::CassandraBatchMutateArgs { mutation_map: BTreeMap::from([(key.to_vec(), by_cf)]), consistency_level: cl }
}

/// `batch_mutate` of one row: `values` become columns `C0..`.
pub async fn insert_row_async(
    c: &mut AsyncConn,
    key: &[u8],
    values: Vec<Vec<u8>>,
    cl: t::ConsistencyLevel,
) -> Result<(), OpError> {
    let mutations = row_mutations(values, timestamp_micros());
    c.call(&one_row_batch(key, STANDARD_CF, mutations, cl)).await?;
    Ok(())
}

/// `insert` of one column `C0` holding `value`.
pub async fn insert_column_async(
    c: &mut AsyncConn,
    key: &[u8],
    value: Vec<u8>,
    cl: t::ConsistencyLevel,
) -> Result<(), OpError> {
    let args = t::CassandraInsertArgs {
        key: key.to_vec(),
        column_parent: parent(STANDARD_CF),
        column: t::Column { name: column_name(0), value: Some(value), timestamp: Some(timestamp_micros()), ttl: None },
        consistency_level: cl,
    };
    c.call(&args).await?;
    Ok(())
}

/// `get_slice` of the first `columns` columns of a row; a row with no columns is an error.
pub async fn read_row_async(
    c: &mut AsyncConn,
    key: &[u8],
    columns: u32,
    cl: t::ConsistencyLevel,
) -> Result<(), OpError> {
    let args = t::CassandraGetSliceArgs {
        key: key.to_vec(),
        column_parent: parent(STANDARD_CF),
        predicate: first_columns(columns),
        consistency_level: cl,
    };
    if c.call(&args).await? == Reply::List(0) {
        return Err(OpError::Empty("read found no row (key not written?)"));
    }
    Ok(())
}

/// `get_range_slices` of `rows` rows from `start_key`. A generated key may lie past the last
/// row in ring order (a key range does not wrap), so an empty answer is followed, in the same
/// operation, by the same query from the start of the ring; only an empty ring is an error.
pub async fn range_rows_async(
    c: &mut AsyncConn,
    start_key: Vec<u8>,
    rows: u32,
    columns: u32,
    cl: t::ConsistencyLevel,
) -> Result<(), OpError> {
    for start in [start_key, Vec::new()] {
        let args = t::CassandraGetRangeSlicesArgs {
            column_parent: parent(STANDARD_CF),
            predicate: first_columns(columns),
            range: range_from(start, rows),
            consistency_level: cl,
        };
        if c.call(&args).await? != Reply::List(0) {
            return Ok(());
        }
    }
    Err(OpError::Empty("range slice found no rows"))
}

/// `batch_mutate` adding 1 to counters `C0..C{columns-1}` of a row of `Counter1`.
pub async fn counter_add_async(
    c: &mut AsyncConn,
    key: &[u8],
    columns: u32,
    cl: t::ConsistencyLevel,
) -> Result<(), OpError> {
    c.call(&one_row_batch(key, COUNTER_CF, counter_mutations(columns), cl)).await?;
    Ok(())
}

/// Opens an asynchronous connection and selects the keyspace.
pub async fn connect_to_keyspace_async(opts: &ConnectOptions, keyspace: &str) -> Result<AsyncConn, ClientError> {
    let addr = format!("{}:{}", opts.host, opts.port);
    let mut c = AsyncConn::connect(&opts.host, opts.port, opts.framed, opts.timeout)
        .await
        .map_err(|source| ClientError::Connect { addr, source })?;
    c.set_keyspace(keyspace)
        .await
        .map_err(|source| ClientError::Thrift { what: format!("set_keyspace {keyspace}"), source })?;
    Ok(c)
}

fn range_from(start_key: Vec<u8>, rows: u32) -> t::KeyRange {
    t::KeyRange {
        start_key: Some(start_key),
        // The empty key: the end of the ring (a range must name its end).
        end_key: Some(Vec::new()),
        start_token: None,
        end_token: None,
        count: rows as i32,
        row_filter: None,
    }
}

/// Every row key of a column family, paging through `get_range_slices` over the whole ring
/// (`page` rows at a time). Used by tests and to check a load's result.
pub fn all_keys(client: &mut Client, cf: &str, page: u32) -> Result<Vec<Vec<u8>>, ClientError> {
    let page = page.max(2);
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let mut start: Vec<u8> = Vec::new();
    loop {
        let range = t::KeyRange {
            start_key: Some(start.clone()),
            end_key: Some(Vec::new()),
            start_token: None,
            end_token: None,
            count: page as i32,
            row_filter: None,
        };
        let rows = client
            .get_range_slices(parent(cf), first_columns(1), range, t::ConsistencyLevel::ONE)
            .map_err(|source| ClientError::Thrift { what: format!("get_range_slices on {cf}"), source })?;
        let full = rows.len() == page as usize;
        // Pages after the first start at (and so repeat) the previous page's last key.
        let skip = usize::from(!start.is_empty() && rows.first().is_some_and(|r| r.key == start));
        let Some(last) = rows.last().map(|r| r.key.clone()) else { break };
        keys.extend(rows.into_iter().skip(skip).map(|r| r.key));
        if !full || last == start {
            break;
        }
        start = last;
    }
    Ok(keys)
}
