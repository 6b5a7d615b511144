//! A shell session: the connection, the current keyspace and its cached schema, `assume`
//! overrides, and the dispatch of parsed statements to their commands.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use model::marshal::AbstractType;
use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
use thrift::transport::{
    TBufferedReadTransport, TBufferedWriteTransport, TFramedReadTransport, TFramedWriteTransport, TIoChannel,
    TReadTransport, TTcpChannel, TWriteTransport,
};
use thrift_idl::{
    AuthenticationException, AuthenticationRequest, AuthorizationException, CassandraSyncClient, CfDef,
    ConsistencyLevel, InvalidRequestException, KsDef, NotFoundException, SchemaDisagreementException,
    TCassandraSyncClient, TimedOutException, UnavailableException,
};

use super::ast::{AssumeTarget, Statement};
use super::parser::ParseError;
use super::schema::SchemaError;
use super::value::{self, ValueError};

/// The generated client over a binary-protocol TCP connection, framed (the default) or
/// unframed (`--unframed`).
pub type Client = CassandraSyncClient<
    TBinaryInputProtocol<Box<dyn TReadTransport + Send>>,
    TBinaryOutputProtocol<Box<dyn TWriteTransport + Send>>,
>;

/// How long to wait for a TCP connection, and for any single reply.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const REPLY_TIMEOUT: Duration = Duration::from_secs(120);

/// Why a statement failed. Displays as the message cassandra-cli would print.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{0}")]
    Parse(#[from] ParseError),
    /// Not an error for the shells: [`Session::run`] prints it (CliMain.isConnected).
    #[error("Not connected to a cassandra instance.")]
    NotConnected,
    /// Not an error for the shells: [`Session::run`] prints it (CliClient.hasKeySpace).
    #[error("Not authorized to a working keyspace.")]
    NoKeyspace,
    /// CliCompiler.getKeySpace's message.
    #[error("Keyspace '{0}' not found.")]
    UnknownKeyspace(String),
    /// CliCompiler.getColumnFamily's message.
    #[error("{0} not found in current keyspace.")]
    UnknownColumnFamily(String),
    #[error("Exception connecting to {host}/{port}. Reason: {reason}.")]
    Connect { host: String, port: u16, reason: String },
    /// The server's `InvalidRequestException.why`.
    #[error("{0}")]
    InvalidRequest(String),
    #[error("Not found")]
    NotFound,
    #[error("Unavailable: not enough replicas are alive for the requested consistency level")]
    Unavailable,
    #[error("Timed out waiting for replicas")]
    TimedOut,
    #[error("Authentication failed: {0}")]
    Authentication(String),
    #[error("Not authorized: {0}")]
    Authorization(String),
    #[error("schema does not match across nodes, (try again later).")]
    SchemaDisagreement,
    #[error("The schema has not settled in {secs} seconds; further migrations are ill-advised until it does. Versions are {versions}")]
    SchemaNotSettled { secs: u64, versions: String },
    /// Transport, protocol or application errors from Thrift.
    #[error("{0}")]
    Thrift(String),
    #[error("{0}")]
    Value(#[from] ValueError),
    #[error("{0}")]
    Schema(#[from] SchemaError),
    /// A statement that is well-formed but cannot be applied (message says why).
    #[error("{0}")]
    Usage(String),
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}

impl From<thrift::Error> for CliError {
    fn from(e: thrift::Error) -> Self {
        match e {
            thrift::Error::User(inner) => {
                if let Some(x) = inner.downcast_ref::<InvalidRequestException>() {
                    CliError::InvalidRequest(x.why.clone())
                } else if inner.downcast_ref::<NotFoundException>().is_some() {
                    CliError::NotFound
                } else if inner.downcast_ref::<UnavailableException>().is_some() {
                    CliError::Unavailable
                } else if inner.downcast_ref::<TimedOutException>().is_some() {
                    CliError::TimedOut
                } else if let Some(x) = inner.downcast_ref::<AuthenticationException>() {
                    CliError::Authentication(x.why.clone())
                } else if let Some(x) = inner.downcast_ref::<AuthorizationException>() {
                    CliError::Authorization(x.why.clone())
                } else if inner.downcast_ref::<SchemaDisagreementException>().is_some() {
                    CliError::SchemaDisagreement
                } else {
                    CliError::Thrift(inner.to_string())
                }
            }
            other => CliError::Thrift(other.to_string()),
        }
    }
}

/// What the shell should do after a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Exit,
}

/// One shell session.
pub struct Session {
    pub(crate) out: Box<dyn Write>,
    /// Where the messages cassandra-cli prints on standard error without failing go
    /// ("Not authorized to a working keyspace.").
    pub(crate) err: Box<dyn Write>,
    pub(crate) client: Option<Client>,
    /// Framed transport (the default) or unframed (`--unframed`).
    pub(crate) framed: bool,
    pub(crate) host: String,
    pub(crate) port: u16,
    /// Credentials used at connect time (`-u`/`-pw`, or `connect h/p user 'pass'`).
    pub(crate) credentials: Option<(String, String)>,
    pub(crate) username: Option<String>,
    pub(crate) keyspace: Option<String>,
    /// The current keyspace's definition, with this session's `assume` changes applied.
    pub(crate) ks_def: Option<KsDef>,
    /// `assume CF keys as TYPE`, by column family name.
    pub(crate) key_types: HashMap<String, AbstractType>,
    pub(crate) consistency: ConsistencyLevel,
    /// How long DDL statements wait for schema agreement.
    pub(crate) schema_wait: Duration,
}

impl Session {
    /// A disconnected session writing its results to `out` (errors are returned, not written;
    /// the few messages cassandra-cli prints on standard error without failing go there).
    pub fn new(out: Box<dyn Write>) -> Session {
        Session {
            out,
            err: Box::new(std::io::stderr()),
            client: None,
            framed: true,
            host: "127.0.0.1".into(),
            port: thrift_idl::DEFAULT_RPC_PORT,
            credentials: None,
            username: None,
            keyspace: None,
            ks_def: None,
            key_types: HashMap::new(),
            consistency: ConsistencyLevel::ONE,
            schema_wait: Duration::from_secs(10),
        }
    }

    /// Credentials to log in with on every (re)connection (`-u`/`-pw`).
    pub fn set_credentials(&mut self, user: &str, password: &str) {
        self.credentials = Some((user.to_string(), password.to_string()));
    }

    /// Replaces the output (`-B` without `-v` silences it, as cassandra-cli closes its output).
    pub fn set_output(&mut self, out: Box<dyn Write>) {
        self.out = out;
    }

    /// Replaces where non-fatal messages cassandra-cli prints on standard error go.
    pub fn set_error_output(&mut self, err: Box<dyn Write>) {
        self.err = err;
    }

    /// Framed (true, the default) or unframed transport for the next connections.
    pub fn set_framed(&mut self, framed: bool) {
        self.framed = framed;
    }

    /// How long schema changes wait for all nodes to agree.
    pub fn set_schema_wait(&mut self, wait: Duration) {
        self.schema_wait = wait;
    }

    /// The interactive prompt, `[user@keyspace] ` as cassandra-cli shows it.
    pub fn prompt(&self) -> String {
        format!(
            "[{}@{}] ",
            self.username.as_deref().unwrap_or("default"),
            self.keyspace.as_deref().unwrap_or("unknown")
        )
    }

    /// Flushes buffered output.
    pub fn flush(&mut self) -> Result<(), CliError> {
        Ok(self.out.flush()?)
    }

    /// Parses and runs one statement. Statements that need a connection or a keyspace and have
    /// none print cassandra-cli's message and succeed: it checks both before each statement
    /// (CliMain.isConnected, on standard output; CliClient.hasKeySpace, on standard error)
    /// without failing, so scripts go on and exit 0.
    pub fn run(&mut self, text: &str) -> Result<Flow, CliError> {
        let stmt = super::parser::parse_statement(text)?;
        let flow = match self.execute(&stmt) {
            Err(e @ CliError::NotConnected) => {
                writeln!(self.out, "{e}")?;
                Ok(Flow::Continue)
            }
            Err(e @ CliError::NoKeyspace) => {
                self.out.flush()?;
                writeln!(self.err, "{e}")?;
                self.err.flush()?;
                Ok(Flow::Continue)
            }
            other => other,
        };
        self.out.flush()?;
        flow
    }

    /// Runs one parsed statement.
    pub fn execute(&mut self, stmt: &Statement) -> Result<Flow, CliError> {
        use Statement as S;
        match stmt {
            S::Exit => return Ok(Flow::Exit),
            S::NoOp => {}
            S::Help { topic } => {
                let text = super::help::help_text(topic.as_deref());
                writeln!(self.out, "{text}")?;
            }
            S::Connect { host, port, credentials } => {
                if credentials.is_some() {
                    self.credentials = credentials.clone();
                }
                self.connect(host, *port)?;
            }
            S::Use { keyspace, credentials } => self.use_keyspace(keyspace, credentials.as_ref())?,
            S::Set { path, value, ttl } => self.exec_set(path, value, *ttl)?,
            S::Get { path, as_type, limit } => self.exec_get(path, as_type.as_deref(), *limit)?,
            S::GetWhere { cf, conditions, limit } => self.exec_get_where(cf, conditions, *limit)?,
            S::Del { path } => self.exec_del(path)?,
            S::Count { path } => self.exec_count(path)?,
            S::Incr { path, by } => self.exec_incr(path, *by)?,
            S::List { cf, start, end, limit, columns, reversed } => {
                self.exec_list(cf, (start.as_deref(), end.as_deref()), *limit, *columns, *reversed)?
            }
            S::Truncate { cf } => self.exec_truncate(cf)?,
            S::CreateKeyspace { name, attrs } => self.exec_create_keyspace(name, attrs)?,
            S::UpdateKeyspace { name, attrs } => self.exec_update_keyspace(name, attrs)?,
            S::DropKeyspace { name } => self.exec_drop_keyspace(name)?,
            S::CreateColumnFamily { name, attrs } => self.exec_create_cf(name, attrs)?,
            S::UpdateColumnFamily { name, attrs } => self.exec_update_cf(name, attrs)?,
            S::DropColumnFamily { name } => self.exec_drop_cf(name)?,
            S::DropIndex { cf, column } => self.exec_drop_index(cf, column)?,
            S::Assume { cf, target, type_name } => self.exec_assume(cf, *target, type_name)?,
            S::ConsistencyLevel { level } => self.exec_consistency(level)?,
            S::Describe { name } => self.exec_describe(name.as_deref())?,
            S::DescribeCluster => self.exec_describe_cluster()?,
            S::DescribeRing { keyspace } => self.exec_describe_ring(keyspace.as_deref())?,
            S::ShowKeyspaces => self.exec_show_keyspaces()?,
            S::ShowSchema { keyspace } => self.exec_show_schema(keyspace.as_deref())?,
            S::ShowClusterName => {
                let name = self.client()?.describe_cluster_name()?;
                writeln!(self.out, "{name}")?;
            }
            S::ShowApiVersion => {
                let v = self.client()?.describe_version()?;
                writeln!(self.out, "{v}")?;
            }
            S::TraceNextQuery => self.exec_trace_next_query()?,
        }
        Ok(Flow::Continue)
    }

    /// The connected client, or [`CliError::NotConnected`].
    pub(crate) fn client(&mut self) -> Result<&mut Client, CliError> {
        self.client.as_mut().ok_or(CliError::NotConnected)
    }

    /// Opens a binary-protocol connection (framed unless `--unframed`), logs in with the
    /// session's credentials if any, re-selects the current keyspace, and prints the cluster name.
    /// A failed login leaves the session unconnected, as in cassandra-cli.
    pub fn connect(&mut self, host: &str, port: u16) -> Result<(), CliError> {
        self.client = None;
        let fail = |reason: String| CliError::Connect { host: host.to_string(), port, reason };
        let addrs: Vec<_> = (host, port).to_socket_addrs().map_err(|e| fail(e.to_string()))?.collect();
        let mut last = String::from("no address found");
        let mut stream = None;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = e.to_string(),
            }
        }
        let stream = stream.ok_or_else(|| fail(last))?;
        stream.set_read_timeout(Some(REPLY_TIMEOUT)).map_err(|e| fail(e.to_string()))?;
        stream.set_nodelay(true).map_err(|e| fail(e.to_string()))?;
        let (r, w) = TTcpChannel::with_stream(stream).split().map_err(|e| fail(e.to_string()))?;
        let (r, w): (Box<dyn TReadTransport + Send>, Box<dyn TWriteTransport + Send>) = if self.framed {
            (Box::new(TFramedReadTransport::new(r)), Box::new(TFramedWriteTransport::new(w)))
        } else {
            (Box::new(TBufferedReadTransport::new(r)), Box::new(TBufferedWriteTransport::new(w)))
        };
        let input = TBinaryInputProtocol::new(r, true);
        let output = TBinaryOutputProtocol::new(w, true);
        self.client = Some(CassandraSyncClient::new(input, output));
        self.host = host.to_string();
        self.port = port;
        if !self.framed {
            // A Sibyl node takes an unframed connection for Cassandra 0.6's API until a call only
            // 20.1.0 has says otherwise (docs/design.md, "Two API generations on one port"), so
            // `show api version` would answer 2.2.0. describe_snitch is such a call.
            if let Err(e) = self.client()?.describe_snitch() {
                self.client = None;
                return Err(e.into());
            }
        }

        if let Some((user, pass)) = self.credentials.clone() {
            if let Err(e) = self.login(&user, &pass) {
                self.client = None;
                return Err(e);
            }
        }
        if let Some(ks) = self.keyspace.clone() {
            self.keyspace = None;
            self.ks_def = None;
            self.use_keyspace(&ks, None)?;
        }
        let cluster = self.client()?.describe_cluster_name()?;
        writeln!(self.out, "Connected to: \"{cluster}\" on {host}/{port}")?;
        Ok(())
    }

    fn login(&mut self, user: &str, pass: &str) -> Result<(), CliError> {
        let credentials =
            BTreeMap::from([("username".to_string(), user.to_string()), ("password".to_string(), pass.to_string())]);
        self.client()?.login(AuthenticationRequest::new(credentials))?;
        self.username = Some(user.to_string());
        Ok(())
    }

    /// `use KS [user 'pass']`.
    pub fn use_keyspace(&mut self, name: &str, credentials: Option<&(String, String)>) -> Result<(), CliError> {
        let keyspaces = self.client()?.describe_keyspaces()?;
        let real = resolve_name(name, keyspaces.iter().map(|k| k.name.as_str()))
            .ok_or_else(|| CliError::UnknownKeyspace(name.to_string()))?;
        self.client()?.set_keyspace(real.clone())?;
        if let Some((user, pass)) = credentials {
            self.login(user, pass)?;
        }
        self.ks_def = keyspaces.into_iter().find(|k| k.name == real);
        self.keyspace = Some(real.clone());
        self.key_types.clear();
        writeln!(self.out, "Authenticated to keyspace: {real}")?;
        Ok(())
    }

    /// Re-reads the current keyspace's definition from the server (after schema changes). Local
    /// `assume` changes to comparators and validators are dropped, as in cassandra-cli.
    pub(crate) fn refresh_keyspace(&mut self) -> Result<(), CliError> {
        if let Some(ks) = self.keyspace.clone() {
            match self.client()?.describe_keyspace(ks) {
                Ok(def) => self.ks_def = Some(def),
                // Dropped (by us or someone else).
                Err(thrift::Error::User(e)) if e.downcast_ref::<NotFoundException>().is_some() => {
                    self.keyspace = None;
                    self.ks_def = None;
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Requires a connection and a current keyspace.
    pub(crate) fn require_keyspace(&mut self) -> Result<String, CliError> {
        self.client()?;
        self.keyspace.clone().ok_or(CliError::NoKeyspace)
    }

    /// The real name of column family `name` in the current keyspace (exact match first, then a
    /// unique case-insensitive one). Re-reads the schema once if the name is unknown, so column
    /// families created by other clients are found.
    pub(crate) fn resolve_cf(&mut self, name: &str) -> Result<String, CliError> {
        self.require_keyspace()?;
        for attempt in 0..2 {
            if let Some(ks) = &self.ks_def {
                if let Some(real) = resolve_name(name, ks.cf_defs.iter().map(|c| c.name.as_str())) {
                    return Ok(real);
                }
            }
            if attempt == 0 {
                self.refresh_keyspace()?;
            }
        }
        Err(CliError::UnknownColumnFamily(name.to_string()))
    }

    /// The cached definition of a column family (resolved name).
    pub(crate) fn cf_def(&self, cf: &str) -> Result<&CfDef, CliError> {
        self.ks_def
            .as_ref()
            .and_then(|ks| ks.cf_defs.iter().find(|c| c.name == cf))
            .ok_or_else(|| CliError::UnknownColumnFamily(cf.to_string()))
    }

    pub(crate) fn cf_def_mut(&mut self, cf: &str) -> Result<&mut CfDef, CliError> {
        self.ks_def
            .as_mut()
            .and_then(|ks| ks.cf_defs.iter_mut().find(|c| c.name == cf))
            .ok_or_else(|| CliError::UnknownColumnFamily(cf.to_string()))
    }

    /// The type row keys of `cf` are read and shown with: an `assume` override, else
    /// `key_validation_class`.
    pub(crate) fn key_type(&self, cf: &str) -> Result<AbstractType, CliError> {
        if let Some(t) = self.key_types.get(cf) {
            return Ok(t.clone());
        }
        Ok(value::schema_type(self.cf_def(cf)?.key_validation_class.as_deref())?)
    }

    /// `assume CF keys|comparator|sub_comparator|validator as TYPE`. An unknown type is a
    /// message, not an error (CliClient.applyAssumption).
    fn exec_assume(&mut self, cf: &str, target: AssumeTarget, type_name: &str) -> Result<(), CliError> {
        let cf = self.resolve_cf(cf)?;
        let ty = match value::type_by_name(type_name) {
            Ok(ty) => ty,
            Err(e @ value::ValueError::UnknownAssumeType(_)) => {
                writeln!(self.out, "{e} Or any class which extends o.a.c.db.marshal.AbstractType.")?;
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        let class = ty.class_name();
        match target {
            AssumeTarget::Keys => {
                self.key_types.insert(cf.clone(), ty);
            }
            AssumeTarget::Comparator => self.cf_def_mut(&cf)?.comparator_type = Some(class),
            AssumeTarget::SubComparator => self.cf_def_mut(&cf)?.subcomparator_type = Some(class),
            AssumeTarget::Validator => self.cf_def_mut(&cf)?.default_validation_class = Some(class),
        }
        writeln!(self.out, "Assumption for column family '{cf}' added successfully.")?;
        Ok(())
    }

    /// `consistencylevel as LEVEL`. An unknown level is a message, not an error
    /// (CliClient.executeConsistencyLevelStatement, whose list of levels is shown as it is).
    fn exec_consistency(&mut self, level: &str) -> Result<(), CliError> {
        self.client()?;
        const LEVELS: &[(&str, ConsistencyLevel)] = &[
            ("ONE", ConsistencyLevel::ONE),
            ("QUORUM", ConsistencyLevel::QUORUM),
            ("LOCAL_QUORUM", ConsistencyLevel::LOCAL_QUORUM),
            ("EACH_QUORUM", ConsistencyLevel::EACH_QUORUM),
            ("ALL", ConsistencyLevel::ALL),
            ("ANY", ConsistencyLevel::ANY),
            ("TWO", ConsistencyLevel::TWO),
            ("THREE", ConsistencyLevel::THREE),
            ("LOCAL_ONE", ConsistencyLevel::LOCAL_ONE),
        ];
        let upper = level.to_ascii_uppercase();
        let Some(&(name, cl)) = LEVELS.iter().find(|(n, _)| *n == upper) else {
            writeln!(
                self.out,
                "'{upper}' is invalid. Available: ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, EACH_QUORUM, ANY"
            )?;
            return Ok(());
        };
        self.consistency = cl;
        writeln!(self.out, "Consistency level is set to '{name}'.")?;
        Ok(())
    }

    /// `trace next query;` (cassandra-cli 1.2): the server traces this session's next request.
    fn exec_trace_next_query(&mut self) -> Result<(), CliError> {
        let id = self.client()?.trace_next_query()?;
        let shown = uuid::Uuid::from_slice(&id).map_or_else(|_| hex::encode(&id), |u| u.to_string());
        writeln!(self.out, "Will trace next query. Session ID: {shown}")?;
        Ok(())
    }

    /// Prints cassandra-cli's elapsed time line.
    pub(crate) fn elapsed(&mut self, start: Instant) -> Result<(), CliError> {
        writeln!(self.out, "Elapsed time: {} msec(s).", value::elapsed_millis(start.elapsed()))?;
        Ok(())
    }
}

/// Microseconds since the epoch: the timestamp cassandra-cli gives writes and deletes.
pub(crate) fn timestamp_micros() -> i64 {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// `name` itself if present, else the single case-insensitive match.
pub(crate) fn resolve_name<'a>(name: &str, names: impl Iterator<Item = &'a str> + Clone) -> Option<String> {
    if names.clone().any(|n| n == name) {
        return Some(name.to_string());
    }
    let mut matches = names.filter(|n| n.eq_ignore_ascii_case(name));
    match (matches.next(), matches.next()) {
        (Some(one), None) => Some(one.to_string()),
        _ => None,
    }
}
