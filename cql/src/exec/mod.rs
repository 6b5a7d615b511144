//! Running statements: names resolved against the schema, values checked against their
//! columns' types, and the work handed to the coordinator, the one door to data. Each front
//! end (Thrift's CQL calls, later the native protocol) decodes its request, calls
//! [`Executor::execute`] or [`Executor::prepare`], and encodes the [`Outcome`].
//!
//! Bind markers take their values in the order they are written in the statement, named or
//! not, as in 3.11.

mod batch;
pub mod client_warn;
mod collections;
mod ddl;
mod json;
mod lwt;
mod markers;
mod mutations;
mod paging;
mod restrict;
mod select;
mod selectors;
mod system_tables;
mod user_types;
mod values;
mod view;
mod write;

use std::collections::HashMap;
use std::sync::Arc;

use cluster::consistency::ConsistencyLevel;
use cluster::coordinator::{Coordinator, CoordinatorError};
use model::marshal::AbstractType;
use parking_lot::Mutex;

use crate::ast::{QualifiedName, Statement};
use crate::schema::Table;
use crate::SyntaxError;

pub use system_tables::{CASSANDRA_RELEASE, CQL_VERSION};
pub use values::Value;

/// A statement that is valid CQL but cannot run: Cassandra's InvalidRequestException, with
/// its reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidRequest(pub String);

/// Why a statement did not run.
#[derive(Debug, thiserror::Error)]
pub enum CqlError {
    /// The text does not parse (SyntaxException).
    #[error("{0}")]
    Syntax(#[from] SyntaxError),
    /// The statement cannot run as written (InvalidRequestException).
    #[error("{0}")]
    Invalid(String),
    /// The thing to create exists (AlreadyExistsException); `table` is empty for a keyspace.
    #[error("{message}")]
    AlreadyExists {
        /// The keyspace.
        keyspace: String,
        /// The table, or empty.
        table: String,
        /// 3.11's message.
        message: String,
    },
    /// The coordinator could not do it (unavailable, timed out, ...).
    #[error(transparent)]
    Coordinator(CoordinatorError),
}

impl From<InvalidRequest> for CqlError {
    fn from(e: InvalidRequest) -> CqlError {
        CqlError::Invalid(e.0)
    }
}

impl From<model::cql_table::NotATable> for CqlError {
    fn from(e: model::cql_table::NotATable) -> CqlError {
        CqlError::Invalid(e.0)
    }
}

impl From<CoordinatorError> for CqlError {
    fn from(e: CoordinatorError) -> CqlError {
        match e {
            CoordinatorError::Invalid(why) => CqlError::Invalid(why),
            other => CqlError::Coordinator(other),
        }
    }
}

pub(crate) fn invalid<T>(why: impl Into<String>) -> Result<T, CqlError> {
    Err(CqlError::Invalid(why.into()))
}

/// What a statement runs in: the connection's keyspace (`USE`), and the request's serial
/// consistency.
#[derive(Clone, Debug, Default)]
pub struct Session {
    /// The keyspace of unqualified names.
    pub keyspace: Option<String>,
    /// The consistency of a conditional write's Paxos round (the native protocol's serial
    /// consistency); `None` is SERIAL.
    pub serial_consistency: Option<ConsistencyLevel>,
}

/// The name, table and type of a result column or of a bind marker.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnSpec {
    /// The keyspace.
    pub keyspace: String,
    /// The table.
    pub table: String,
    /// The column's name (or alias, or `[limit]`-like name for markers not bound to a column).
    pub name: String,
    /// Its type.
    pub ty: AbstractType,
}

/// Rows of a SELECT: a value (or null) per column.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResultSet {
    /// The columns.
    pub columns: Vec<ColumnSpec>,
    /// The rows, each with one entry per column.
    pub rows: Vec<Vec<Option<Vec<u8>>>>,
    /// Where the next page starts, when the statement was paged and more rows may follow.
    pub paging_state: Option<Vec<u8>>,
}

/// A page of a SELECT: at most `page_size` rows, after where `state` (a previous page's
/// [`ResultSet::paging_state`]) left off.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Paging {
    /// Rows per page (at least one).
    pub page_size: usize,
    /// The previous page's state; `None` for the first page.
    pub state: Option<Vec<u8>>,
}

/// What changed in the schema (the native protocol's SCHEMA_CHANGE result).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaChange {
    /// `CREATED`, `UPDATED` or `DROPPED`.
    pub change: &'static str,
    /// `KEYSPACE` or `TABLE`.
    pub target: &'static str,
    /// The keyspace.
    pub keyspace: String,
    /// The table, for a table change.
    pub name: Option<String>,
}

/// What a statement answers.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Nothing (writes).
    Void,
    /// Rows (SELECT, and conditional writes' `[applied]` row).
    Rows(ResultSet),
    /// `USE ks` succeeded.
    SetKeyspace(String),
    /// A schema statement changed this.
    SchemaChange(SchemaChange),
}

/// A parsed statement kept for later executions, with its markers' specifications.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The statement.
    pub statement: Statement,
    /// The session keyspace it was prepared in (for its unqualified names).
    pub keyspace: Option<String>,
    /// One per bind marker, in order.
    pub markers: Vec<ColumnSpec>,
    /// A SELECT's result columns, as its rows will have them (3.11's result metadata);
    /// empty for every other statement.
    pub columns: Vec<ColumnSpec>,
    /// For each partition key column of the statement's table in order, the marker that binds
    /// it (drivers route by it); `None` unless each is bound by one (3.11's partition key bind
    /// indexes).
    pub partition_key: Option<Vec<u16>>,
}

/// Prepared statements kept per node; Thrift's item ids index them.
const MAX_PREPARED: usize = 100_000;

/// The thresholds of 3.11's `cassandra.yaml` that statements are checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// A batch over several partitions whose data is larger warns its client
    /// (`batch_size_warn_threshold_in_kb`; default 5 KiB).
    pub batch_size_warn_bytes: u64,
    /// ... and past this is refused, "Batch too large" (`batch_size_fail_threshold_in_kb`;
    /// default 50 KiB).
    pub batch_size_fail_bytes: u64,
    /// An unlogged batch over more partitions than this warns
    /// (`unlogged_batch_across_partitions_warn_threshold`; default 10).
    pub unlogged_batch_across_partitions_warn: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            batch_size_warn_bytes: 5 << 10,
            batch_size_fail_bytes: 50 << 10,
            unlogged_batch_across_partitions_warn: 10,
        }
    }
}

/// Runs statements through one coordinator.
pub struct Executor {
    coordinator: Arc<Coordinator>,
    prepared: Mutex<PreparedCache>,
    limits: Limits,
}

#[derive(Default)]
struct PreparedCache {
    by_id: HashMap<i32, Arc<Prepared>>,
    by_text: HashMap<(Option<String>, String), i32>,
}

impl Executor {
    /// An executor over `coordinator`.
    pub fn new(coordinator: Arc<Coordinator>) -> Executor {
        Executor::with_limits(coordinator, Limits::default())
    }

    /// An executor over `coordinator` checking statements against `limits`.
    pub fn with_limits(coordinator: Arc<Coordinator>, limits: Limits) -> Executor {
        Executor { coordinator, prepared: Mutex::new(PreparedCache::default()), limits }
    }

    /// The coordinator statements run through.
    pub fn coordinator(&self) -> &Coordinator {
        &self.coordinator
    }

    /// Parses and runs one statement with no bound values.
    pub async fn execute(&self, session: &mut Session, text: &str, cl: ConsistencyLevel) -> Result<Outcome, CqlError> {
        let statement = crate::parse(text)?;
        self.execute_statement(session, &statement, cl).await
    }

    /// Runs a parsed statement with no bound values.
    pub async fn execute_statement(
        &self,
        session: &mut Session,
        statement: &Statement,
        cl: ConsistencyLevel,
    ) -> Result<Outcome, CqlError> {
        self.execute_statement_paged(session, statement, cl, None).await
    }

    /// [`Executor::execute_statement`], a SELECT answering one page of its rows.
    pub async fn execute_statement_paged(
        &self,
        session: &mut Session,
        statement: &Statement,
        cl: ConsistencyLevel,
        paging: Option<Paging>,
    ) -> Result<Outcome, CqlError> {
        let keyspace = session.keyspace.clone();
        self.run(session, statement, keyspace.as_deref(), &[], cl, paging).await
    }

    /// Parses `text` and keeps it; the id (as 3.11's Thrift ids, the text's hash with the
    /// keyspace) finds it again.
    pub fn prepare(&self, session: &Session, text: &str) -> Result<(i32, Arc<Prepared>), CqlError> {
        let cache_key = (session.keyspace.clone(), text.to_string());
        // One lock for both lookups: a guard taken in an `if let` lives through its body.
        let cached = {
            let cache = self.prepared.lock();
            cache.by_text.get(&cache_key).and_then(|id| cache.by_id.get(id).map(|p| (*id, p.clone())))
        };
        if let Some(found) = cached {
            return Ok(found);
        }
        let statement = crate::parse(text)?;
        let mut markers = self.markers(&statement, session.keyspace.as_deref())?;
        // Before named markers take their own names: what a marker binds is its column's.
        let partition_key = self.partition_key_indexes(&statement, session.keyspace.as_deref(), &markers);
        // 3.11 names a `:name` marker by its own name, whatever it binds.
        let names = marker_names(&statement);
        if names.len() == markers.len() {
            for (spec, name) in markers.iter_mut().zip(names) {
                if let Some(name) = name {
                    spec.name = name;
                }
            }
        }
        let columns = self.result_columns(&statement, session.keyspace.as_deref())?;
        let prepared =
            Arc::new(Prepared { statement, keyspace: session.keyspace.clone(), markers, columns, partition_key });
        let mut id = thrift_id(session.keyspace.as_deref(), text);
        let mut cache = self.prepared.lock();
        if cache.by_id.len() >= MAX_PREPARED {
            cache.by_id.clear();
            cache.by_text.clear();
        }
        // Another text with the same hash: take the next free id.
        while cache.by_id.get(&id).is_some_and(|p| p.statement.to_string() != prepared.statement.to_string()) {
            id = id.wrapping_add(1);
        }
        cache.by_id.insert(id, prepared.clone());
        cache.by_text.insert(cache_key, id);
        Ok((id, prepared))
    }

    /// The statement prepared under `id`.
    pub fn prepared(&self, id: i32) -> Option<Arc<Prepared>> {
        self.prepared.lock().by_id.get(&id).cloned()
    }

    /// Runs a prepared statement with one value per marker.
    pub async fn execute_prepared(
        &self,
        session: &mut Session,
        prepared: &Prepared,
        values: &[Value],
        cl: ConsistencyLevel,
    ) -> Result<Outcome, CqlError> {
        self.execute_prepared_paged(session, prepared, values, cl, None).await
    }

    /// [`Executor::execute_prepared`], a SELECT answering one page of its rows.
    pub async fn execute_prepared_paged(
        &self,
        session: &mut Session,
        prepared: &Prepared,
        values: &[Value],
        cl: ConsistencyLevel,
        paging: Option<Paging>,
    ) -> Result<Outcome, CqlError> {
        if values.len() != prepared.markers.len() {
            return invalid(format!(
                "there were {} markers(?) in CQL but {} bound variables",
                prepared.markers.len(),
                values.len()
            ));
        }
        self.run(session, &prepared.statement, prepared.keyspace.as_deref(), values, cl, paging).await
    }

    async fn run(
        &self,
        session: &mut Session,
        statement: &Statement,
        keyspace: Option<&str>,
        values: &[Value],
        cl: ConsistencyLevel,
        paging: Option<Paging>,
    ) -> Result<Outcome, CqlError> {
        let mut binder = values::Binder::new(values);
        let serial = session.serial_consistency.unwrap_or(ConsistencyLevel::Serial);
        let ctx = Context { coordinator: &self.coordinator, keyspace, paging, serial, limits: self.limits };
        match statement {
            Statement::Use(ks) => {
                let name = ks.name();
                if !self.coordinator.has_keyspace(name) {
                    return invalid(format!("Keyspace '{name}' does not exist"));
                }
                session.keyspace = Some(name.to_string());
                Ok(Outcome::SetKeyspace(name.to_string()))
            }
            Statement::Select(s) => select::select(&ctx, s, &mut binder, cl).await,
            Statement::Insert(s) => write::insert(&ctx, s, &mut binder, None)?.run(&ctx, cl).await,
            Statement::Update(s) => write::update(&ctx, s, &mut binder, None)?.run(&ctx, cl).await,
            Statement::Delete(s) => write::delete(&ctx, s, &mut binder, None)?.run(&ctx, cl).await,
            Statement::Batch(b) => batch::batch(&ctx, b, &mut binder, cl).await,
            Statement::Truncate(name) => {
                let table = ctx.table(name)?;
                if table.view_of.is_some() {
                    return invalid("Cannot TRUNCATE materialized view directly; must truncate base table instead");
                }
                self.coordinator.truncate(&table.keyspace, &table.name).await?;
                Ok(Outcome::Void)
            }
            Statement::CreateKeyspace(s) => ddl::create_keyspace(&ctx, s).await,
            Statement::AlterKeyspace(s) => ddl::alter_keyspace(&ctx, s).await,
            Statement::DropKeyspace { if_exists, name } => ddl::drop_keyspace(&ctx, name.name(), *if_exists).await,
            Statement::CreateTable(s) => ddl::create_table(&ctx, s).await,
            Statement::DropTable(d) => ddl::drop_table(&ctx, &d.name, d.if_exists, false).await,
            Statement::CreateView(s) => view::create_view(&ctx, s, cl).await,
            Statement::DropView(d) => ddl::drop_table(&ctx, &d.name, d.if_exists, true).await,
            Statement::AlterTable(s) => ddl::alter_table(&ctx, s).await,
            Statement::CreateType(s) => user_types::create_type(&ctx, s).await,
            Statement::AlterType(s) => user_types::alter_type(&ctx, s).await,
            Statement::DropType(d) => user_types::drop_type(&ctx, d).await,
            other => invalid(format!("{} is not supported yet", statement_kind(other))),
        }
    }

    /// See [`Prepared::partition_key`]: a marker binds a partition key column when its spec
    /// is that column's (3.11 keeps the last such marker); a batch over several tables has none.
    fn partition_key_indexes(
        &self,
        statement: &Statement,
        keyspace: Option<&str>,
        markers: &[ColumnSpec],
    ) -> Option<Vec<u16>> {
        let ctx = self.prepare_context(keyspace);
        let name = match statement {
            Statement::Select(s) => &s.table,
            Statement::Insert(s) => &s.table,
            Statement::Update(s) => &s.table,
            Statement::Delete(s) => &s.table,
            Statement::Batch(b) => {
                let names: Vec<&QualifiedName> = b.statements.iter().map(crate::ast::BatchStatement::table).collect();
                let first = *names.first()?;
                let same = |n: &QualifiedName| {
                    n.name.name() == first.name.name() && ctx.keyspace_of(n).ok() == ctx.keyspace_of(first).ok()
                };
                if !names.iter().all(|n| same(n)) {
                    return None;
                }
                first
            }
            _ => return None,
        };
        let table = ctx.table(name).ok()?;
        let mut found = vec![None; table.partition_key.len()];
        for (i, m) in markers.iter().enumerate() {
            if m.keyspace != table.keyspace || m.table != table.name {
                continue;
            }
            if let Some(at) = table.partition_key.iter().position(|k| k.name == m.name && k.ty == m.ty) {
                found[at] = u16::try_from(i).ok();
            }
        }
        found.into_iter().collect()
    }

    /// What preparing a statement looks names up in.
    fn prepare_context<'a>(&'a self, keyspace: Option<&'a str>) -> Context<'a> {
        Context {
            coordinator: &self.coordinator,
            keyspace,
            paging: None,
            serial: ConsistencyLevel::Serial,
            limits: self.limits,
        }
    }

    fn result_columns(&self, statement: &Statement, keyspace: Option<&str>) -> Result<Vec<ColumnSpec>, CqlError> {
        let Statement::Select(s) = statement else { return Ok(Vec::new()) };
        let ctx = self.prepare_context(keyspace);
        select::result_columns(&ctx, s)
    }

    fn markers(&self, statement: &Statement, keyspace: Option<&str>) -> Result<Vec<ColumnSpec>, CqlError> {
        let ctx = self.prepare_context(keyspace);
        match statement {
            Statement::Select(s) => markers::select_markers(&ctx, s),
            Statement::Insert(s) => markers::insert_markers(&ctx, s),
            Statement::Update(s) => markers::update_markers(&ctx, s),
            Statement::Delete(s) => markers::delete_markers(&ctx, s),
            Statement::Batch(b) => batch::markers(&ctx, b),
            _ => Ok(Vec::new()),
        }
    }
}

/// A statement's bind markers in the order written: a named marker's name (as Cassandra
/// interns it), `None` for `?`. Read off the statement's printed text, which keeps the order.
fn marker_names(statement: &Statement) -> Vec<Option<String>> {
    use crate::{Punct, TokenKind};
    let text = statement.to_string();
    let Ok(tokens) = crate::tokenize(&text) else { return Vec::new() };
    let tokens: Vec<&crate::Token> = tokens.iter().filter(|t| t.kind != TokenKind::Trivia).collect();
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        match &t.kind {
            TokenKind::QMark => out.push(None),
            TokenKind::Punct(Punct::Colon) => {
                let Some(next) = tokens.get(i + 1) else { continue };
                // `{'k': f(x)}`: a map's value, not a marker.
                if tokens.get(i + 2).is_some_and(|t| t.kind == TokenKind::Punct(Punct::LParen)) {
                    continue;
                }
                let word = || text.get(next.start..next.end).unwrap_or_default().to_ascii_lowercase();
                match &next.kind {
                    TokenKind::Ident => out.push(Some(word())),
                    TokenKind::QuotedName(name) => out.push(Some(name.clone())),
                    TokenKind::Keyword(k) if !k.is_reserved() => out.push(Some(word())),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    out
}

/// 3.11's Thrift item id: the hash of the keyspace and the text (Java's `String.hashCode`).
fn thrift_id(keyspace: Option<&str>, text: &str) -> i32 {
    let full = format!("{}{text}", keyspace.unwrap_or(""));
    full.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// What a statement is, for "not supported yet".
fn statement_kind(s: &Statement) -> String {
    let text = s.to_string();
    let words: Vec<&str> = text.split_whitespace().take(3).collect();
    match words.as_slice() {
        ["CREATE", "MATERIALIZED", "VIEW", ..] | ["DROP", "MATERIALIZED", "VIEW", ..] => {
            format!("{} MATERIALIZED VIEW", words[0])
        }
        [a, b, ..] if matches!(*a, "CREATE" | "ALTER" | "DROP" | "LIST" | "GRANT" | "REVOKE") => format!("{a} {b}"),
        [a, ..] => a.to_string(),
        [] => "this statement".into(),
    }
}

/// What every statement needs: the coordinator and the keyspace of unqualified names.
pub(crate) struct Context<'a> {
    pub coordinator: &'a Coordinator,
    pub keyspace: Option<&'a str>,
    /// The page a SELECT answers, when the client pages.
    pub paging: Option<Paging>,
    /// SERIAL or LOCAL_SERIAL: the Paxos round of a conditional write.
    pub serial: ConsistencyLevel,
    /// What statements are checked against.
    pub limits: Limits,
}

impl Context<'_> {
    /// The keyspace a name is in.
    pub fn keyspace_of(&self, name: &QualifiedName) -> Result<String, CqlError> {
        match (&name.keyspace, self.keyspace) {
            (Some(ks), _) => Ok(ks.name().to_string()),
            (None, Some(ks)) => Ok(ks.to_string()),
            (None, None) => {
                invalid("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
            }
        }
    }

    /// The table a name names, as CQL sees it.
    pub fn table(&self, name: &QualifiedName) -> Result<Arc<Table>, CqlError> {
        let keyspace = self.keyspace_of(name)?;
        if !self.coordinator.has_keyspace(&keyspace) {
            return invalid(format!("Keyspace {keyspace} does not exist"));
        }
        // The shared metadata, not a copy of the whole keyspace: every statement asks.
        let table = name.name.name();
        if let Some(built) = system_tables::table(&keyspace, table) {
            return Ok(Arc::new(built));
        }
        match self.coordinator.cf_metadata(&keyspace, table) {
            Ok(meta) => Ok(meta.cql_table()?),
            Err(_) => invalid(format!("unconfigured table {table}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::marker_names;

    #[test]
    fn named_markers_are_named_in_the_order_written() {
        let s = crate::parse("INSERT INTO ks.t (a, b, c, m) VALUES (?, :Bee, :\"Q\", {'k': now()}) USING TTL :ttl")
            .expect("parses");
        assert_eq!(marker_names(&s), [None, Some("bee".to_string()), Some("Q".to_string()), Some("ttl".to_string())]);
        let s = crate::parse("SELECT * FROM t WHERE k = :key AND c IN (?, :x)").expect("parses");
        assert_eq!(marker_names(&s), [Some("key".to_string()), None, Some("x".to_string())]);
    }
}
