//! A shell session: the connection, the current keyspace and its cached schema, `assume`
//! overrides, and the dispatch of parsed statements to their commands.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use storage::marshal::AbstractType;
use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
use thrift::transport::{ReadHalf, TFramedReadTransport, TFramedWriteTransport, TIoChannel, TTcpChannel, WriteHalf};
use thrift_idl::{
    AuthenticationException, AuthenticationRequest, AuthorizationException, CassandraSyncClient, CfDef,
    ConsistencyLevel, InvalidRequestException, KsDef, NotFoundException, SchemaDisagreementException,
    TCassandraSyncClient, TimedOutException, UnavailableException,
};

use super::ast::{AssumeTarget, Statement};
use super::parser::ParseError;
use super::schema::SchemaError;
use super::value::{self, ValueError};

/// The generated client over a framed, binary-protocol TCP connection.
pub type Client = CassandraSyncClient<
    TBinaryInputProtocol<TFramedReadTransport<ReadHalf<TTcpChannel>>>,
    TBinaryOutputProtocol<TFramedWriteTransport<WriteHalf<TTcpChannel>>>,
>;

/// How long to wait for a TCP connection, and for any single reply.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const REPLY_TIMEOUT: Duration = Duration::from_secs(120);

/// Why a statement failed. Displays as the message cassandra-cli would print.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{0}")]
    Parse(#[from] ParseError),
    #[error("Not connected to a cassandra instance.")]
    NotConnected,
    #[error("Not authenticated to a working keyspace.")]
    NoKeyspace,
    #[error("Keyspace {0} does not exist.")]
    UnknownKeyspace(String),
    #[error("No such column family: {0}")]
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
    pub(crate) client: Option<Client>,
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
    /// A disconnected session writing its results to `out` (errors are returned, not written).
    pub fn new(out: Box<dyn Write>) -> Session {
        Session {
            out,
            client: None,
            host: "localhost".into(),
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

    /// Parses and runs one statement.
    pub fn run(&mut self, text: &str) -> Result<Flow, CliError> {
        let stmt = super::parser::parse_statement(text)?;
        let flow = self.execute(&stmt);
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
            S::List { cf, start, end, limit } => self.exec_list(cf, start.as_deref(), end.as_deref(), *limit)?,
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
        }
        Ok(Flow::Continue)
    }

    /// The connected client, or [`CliError::NotConnected`].
    pub(crate) fn client(&mut self) -> Result<&mut Client, CliError> {
        self.client.as_mut().ok_or(CliError::NotConnected)
    }

    /// Opens a framed binary-protocol connection, logs in with the session's credentials if any,
    /// re-selects the current keyspace, and prints the cluster name.
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
        let input = TBinaryInputProtocol::new(TFramedReadTransport::new(r), true);
        let output = TBinaryOutputProtocol::new(TFramedWriteTransport::new(w), true);
        self.client = Some(CassandraSyncClient::new(input, output));
        self.host = host.to_string();
        self.port = port;

        if let Some((user, pass)) = self.credentials.clone() {
            self.login(&user, &pass)?;
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

    /// `assume CF keys|comparator|sub_comparator|validator as TYPE`.
    fn exec_assume(&mut self, cf: &str, target: AssumeTarget, type_name: &str) -> Result<(), CliError> {
        let cf = self.resolve_cf(cf)?;
        let ty = value::type_by_name(type_name)?;
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

    /// `consistencylevel as LEVEL`.
    fn exec_consistency(&mut self, level: &str) -> Result<(), CliError> {
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
            let names: Vec<&str> = LEVELS.iter().map(|(n, _)| *n).collect();
            return Err(CliError::Usage(format!("'{upper}' is invalid. Available: {}", names.join(", "))));
        };
        self.client()?;
        self.consistency = cl;
        writeln!(self.out, "Consistency level is set to '{name}'.")?;
        Ok(())
    }

    /// Prints cassandra-cli's elapsed time line.
    pub(crate) fn elapsed(&mut self, start: Instant) -> Result<(), CliError> {
        writeln!(self.out, "Elapsed time: {} msec(s).", start.elapsed().as_millis())?;
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
