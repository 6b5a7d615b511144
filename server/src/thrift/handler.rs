//! The Thrift API 20.1.0, method by method: each resolves the session's keyspace and checks the
//! client's rights, then hands the request to [`reads`], [`writes`] or [`describe`], which convert
//! and validate it and ask the coordinator. One handler per connection holds its session.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use cluster::coordinator::Coordinator;
use thrift_idl as t;
use uuid::Uuid;

use super::convert::{families_of, BatchMutateArgs, Columns, ColumnsByKey, Found, GetSliceArgs, InsertArgs};
use super::error::{ire, TResult};
use super::session::{auth_error, Session};
use super::validate::is_reserved_keyspace;
use super::{describe, reads, writes};
use crate::auth::Authenticator;

/// What every connection's handler shares.
pub struct ThriftContext {
    pub coordinator: Arc<Coordinator>,
    /// CQL statements, and the statements prepared on this node (shared by every connection).
    pub cql: Arc<cql::Executor>,
    /// Shared with the native protocol's front end.
    pub authenticator: Arc<Authenticator>,
    /// The node's storage-conf.xml: the 0.6 API's `get_string_property("config file")` answers
    /// with its text.
    pub config_file: Option<PathBuf>,
}

pub struct Handler {
    ctx: Arc<ThriftContext>,
    session: Session,
}

type MutationMap = BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>>;

/// What a traced request asked for, as the `parameters` of its session row (3.11 records the
/// key in hex, the column family and the consistency level for these methods).
fn trace_request(key: Option<&[u8]>, column_family: &str, cl: t::ConsistencyLevel) {
    cluster::trace::trace_parameters(|| {
        let level =
            super::convert::consistency_level(cl).map(|l| l.to_string()).unwrap_or_else(|_| format!("{}", cl.0));
        let mut p =
            vec![("column_family".to_string(), column_family.to_string()), ("consistency_level".to_string(), level)];
        if let Some(key) = key {
            p.push(("key".to_string(), key.iter().map(|b| format!("{b:02x}")).collect()));
        }
        p
    });
}

impl Handler {
    pub fn new(ctx: Arc<ThriftContext>) -> Handler {
        Handler { ctx, session: Session::default() }
    }

    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    pub(super) fn coordinator(&self) -> &Coordinator {
        &self.ctx.coordinator
    }

    /// The session keyspace, for a call reading `column_family` of it.
    fn read_keyspace(&self, column_family: &str) -> TResult<Arc<str>> {
        self.session.keyspace_for(&self.ctx.authenticator, [column_family], false)
    }

    /// The session keyspace, for a call writing `column_family` of it.
    fn write_keyspace(&self, column_family: &str) -> TResult<Arc<str>> {
        self.session.keyspace_for(&self.ctx.authenticator, [column_family], true)
    }

    /// The session keyspace, for a batch writing every column family it names.
    fn batch_keyspace<'a>(&self, column_families: impl IntoIterator<Item = &'a str>) -> TResult<Arc<str>> {
        self.session.keyspace_for(&self.ctx.authenticator, column_families, true)
    }

    /// The session keyspace, for a change to its column families (a keyspace grant).
    fn schema_keyspace(&self) -> TResult<Arc<str>> {
        self.session.keyspace(&self.ctx.authenticator, true)
    }

    /// Changing a column family of `ks`: not a reserved keyspace, and write access to it.
    fn authorize_cf_change(&self, ks: &str) -> TResult<()> {
        if is_reserved_keyspace(ks) {
            return Err(ire(format!("{ks} keyspace is not user-modifiable")));
        }
        self.session.authorize(&self.ctx.authenticator, ks, true)
    }

    // ----- session -----

    pub async fn login(&mut self, auth_request: t::AuthenticationRequest) -> TResult<()> {
        let user = self.ctx.authenticator.login(&auth_request.credentials).map_err(auth_error)?;
        self.session.set_user(user);
        Ok(())
    }

    /// Needs no login, as in Cassandra (some clients, Hector among them, call set_keyspace before
    /// login), and checks no right: 0.7's and 1.2–3.x's set_keyspace only ask that the keyspace
    /// exist. Each data call then checks the login and the right to its column families.
    pub async fn set_keyspace(&mut self, keyspace: String) -> TResult<()> {
        if !self.coordinator().has_keyspace(&keyspace) {
            return Err(ire(format!("Keyspace '{keyspace}' does not exist")));
        }
        self.session.set_keyspace(keyspace);
        Ok(())
    }

    pub async fn trace_next_query(&mut self) -> TResult<Vec<u8>> {
        // A time-based id, as Cassandra's trace sessions.
        let id = Uuid::now_v1(&cluster::trace::NODE_ID);
        self.session.trace_next(id);
        Ok(id.as_bytes().to_vec())
    }

    // ----- reads -----

    pub async fn get(&mut self, key: Vec<u8>, path: t::ColumnPath, cl: t::ConsistencyLevel) -> TResult<Found> {
        trace_request(Some(&key), &path.column_family, cl);
        let ks = self.read_keyspace(&path.column_family)?;
        reads::get(self.coordinator(), &ks, key, path, cl).await
    }

    pub async fn get_slice(&mut self, args: GetSliceArgs<'_>) -> TResult<Columns> {
        trace_request(Some(&args.key), &args.column_family, args.consistency_level);
        let ks = self.read_keyspace(&args.column_family)?;
        reads::get_slice(self.coordinator(), &ks, args).await
    }

    pub async fn get_count(
        &mut self,
        key: Vec<u8>,
        parent: t::ColumnParent,
        predicate: t::SlicePredicate,
        cl: t::ConsistencyLevel,
    ) -> TResult<i32> {
        trace_request(Some(&key), &parent.column_family, cl);
        let ks = self.read_keyspace(&parent.column_family)?;
        reads::get_count(self.coordinator(), &ks, key, parent, predicate, cl).await
    }

    pub async fn multiget_slice(
        &mut self,
        keys: Vec<Vec<u8>>,
        parent: t::ColumnParent,
        predicate: t::SlicePredicate,
        cl: t::ConsistencyLevel,
    ) -> TResult<ColumnsByKey> {
        trace_request(None, &parent.column_family, cl);
        let ks = self.read_keyspace(&parent.column_family)?;
        reads::multiget_slice(self.coordinator(), &ks, keys, parent, predicate, cl).await
    }

    pub async fn multiget_count(
        &mut self,
        keys: Vec<Vec<u8>>,
        parent: t::ColumnParent,
        predicate: t::SlicePredicate,
        cl: t::ConsistencyLevel,
    ) -> TResult<BTreeMap<Vec<u8>, i32>> {
        let ks = self.read_keyspace(&parent.column_family)?;
        reads::multiget_count(self.coordinator(), &ks, keys, parent, predicate, cl).await
    }

    pub async fn get_range_slices(
        &mut self,
        parent: t::ColumnParent,
        predicate: t::SlicePredicate,
        range: t::KeyRange,
        cl: t::ConsistencyLevel,
    ) -> TResult<Vec<t::KeySlice>> {
        trace_request(None, &parent.column_family, cl);
        let ks = self.read_keyspace(&parent.column_family)?;
        reads::get_range_slices(self.coordinator(), &ks, parent, predicate, range, cl).await
    }

    pub async fn get_paged_slice(
        &mut self,
        column_family: String,
        range: t::KeyRange,
        start_column: Vec<u8>,
        cl: t::ConsistencyLevel,
    ) -> TResult<Vec<t::KeySlice>> {
        let ks = self.read_keyspace(&column_family)?;
        reads::get_paged_slice(self.coordinator(), &ks, column_family, range, start_column, cl).await
    }

    pub async fn get_indexed_slices(
        &mut self,
        parent: t::ColumnParent,
        clause: t::IndexClause,
        predicate: t::SlicePredicate,
        cl: t::ConsistencyLevel,
    ) -> TResult<Vec<t::KeySlice>> {
        let ks = self.read_keyspace(&parent.column_family)?;
        reads::get_indexed_slices(self.coordinator(), &ks, parent, clause, predicate, cl).await
    }

    pub async fn get_multi_slice(&mut self, request: t::MultiSliceRequest) -> TResult<Vec<t::ColumnOrSuperColumn>> {
        // No column_parent: only the login is checked here, and the read refuses the request.
        let column_family = request.column_parent.as_ref().map(|p| p.column_family.as_str());
        let ks = self.session.keyspace_for(&self.ctx.authenticator, column_family, false)?;
        reads::get_multi_slice(self.coordinator(), &ks, request).await
    }

    // ----- writes -----

    pub async fn insert(&mut self, args: InsertArgs<'_>) -> TResult<()> {
        trace_request(Some(&args.key), &args.column_family, args.consistency_level);
        let ks = self.write_keyspace(&args.column_family)?;
        writes::insert(self.coordinator(), &ks, args).await
    }

    pub async fn add(
        &mut self,
        key: Vec<u8>,
        parent: t::ColumnParent,
        column: t::CounterColumn,
        cl: t::ConsistencyLevel,
    ) -> TResult<()> {
        let ks = self.write_keyspace(&parent.column_family)?;
        writes::add(self.coordinator(), &ks, key, parent, column, cl).await
    }

    pub async fn cas(&mut self, args: t::CassandraCasArgs) -> TResult<t::CASResult> {
        let ks = self.write_keyspace(&args.column_family)?;
        writes::cas(self.coordinator(), &ks, args).await
    }

    pub async fn remove(
        &mut self,
        key: Vec<u8>,
        path: t::ColumnPath,
        timestamp: i64,
        cl: t::ConsistencyLevel,
    ) -> TResult<()> {
        trace_request(Some(&key), &path.column_family, cl);
        let ks = self.write_keyspace(&path.column_family)?;
        writes::remove(self.coordinator(), &ks, key, path, timestamp, cl).await
    }

    pub async fn remove_counter(&mut self, key: Vec<u8>, path: t::ColumnPath, cl: t::ConsistencyLevel) -> TResult<()> {
        let ks = self.write_keyspace(&path.column_family)?;
        writes::remove_counter(self.coordinator(), &ks, key, path, cl).await
    }

    pub async fn batch_mutate(&mut self, args: BatchMutateArgs<'_>) -> TResult<()> {
        match args {
            BatchMutateArgs::InPlace(batch) => {
                let ks = self.batch_keyspace(batch.column_families())?;
                writes::batch_mutate_in_place(self.coordinator(), &ks, batch).await
            }
            BatchMutateArgs::Decoded(t::CassandraBatchMutateArgs { mutation_map, consistency_level }) => {
                let ks = self.batch_keyspace(families_of(&mutation_map))?;
                writes::batch_mutate(self.coordinator(), &ks, mutation_map, consistency_level).await
            }
        }
    }

    pub async fn atomic_batch_mutate(&mut self, mutation_map: MutationMap, cl: t::ConsistencyLevel) -> TResult<()> {
        let ks = self.batch_keyspace(families_of(&mutation_map))?;
        writes::atomic_batch_mutate(self.coordinator(), &ks, mutation_map, cl).await
    }

    pub async fn truncate(&mut self, cfname: String) -> TResult<()> {
        let ks = self.write_keyspace(&cfname)?;
        writes::truncate(self.coordinator(), &ks, &cfname).await
    }

    // ----- cluster and schema information -----

    pub async fn describe_schema_versions(&mut self) -> TResult<BTreeMap<String, Vec<String>>> {
        Ok(self.coordinator().schema_versions().await)
    }

    pub async fn describe_keyspaces(&mut self) -> TResult<Vec<t::KsDef>> {
        self.session.require_login(&self.ctx.authenticator)?;
        Ok(describe::keyspaces(self.coordinator()))
    }

    pub async fn describe_cluster_name(&mut self) -> TResult<String> {
        Ok(self.coordinator().cluster_name().to_string())
    }

    pub async fn describe_version(&mut self) -> TResult<String> {
        Ok(thrift_idl::VERSION.to_string())
    }

    pub async fn describe_ring(&mut self, keyspace: String) -> TResult<Vec<t::TokenRange>> {
        describe::ring(self.coordinator(), &keyspace, false)
    }

    pub async fn describe_local_ring(&mut self, keyspace: String) -> TResult<Vec<t::TokenRange>> {
        describe::ring(self.coordinator(), &keyspace, true)
    }

    pub async fn describe_token_map(&mut self) -> TResult<BTreeMap<String, String>> {
        Ok(describe::token_map(self.coordinator()))
    }

    pub async fn describe_partitioner(&mut self) -> TResult<String> {
        Ok(self.coordinator().partitioner().class_name().to_string())
    }

    pub async fn describe_snitch(&mut self) -> TResult<String> {
        Ok(self.coordinator().snitch_name().to_string())
    }

    pub async fn describe_keyspace(&mut self, keyspace: String) -> TResult<t::KsDef> {
        self.session.require_login(&self.ctx.authenticator)?;
        describe::keyspace(self.coordinator(), &keyspace)
    }

    pub async fn describe_splits(
        &mut self,
        cf_name: String,
        start_token: String,
        end_token: String,
        keys_per_split: i32,
    ) -> TResult<Vec<String>> {
        let ks = self.read_keyspace(&cf_name)?;
        let splits =
            describe::splits(self.coordinator(), &ks, &cf_name, &start_token, &end_token, keys_per_split).await?;
        let mut out: Vec<String> = splits.iter().map(|(s, _, _)| s.clone()).collect();
        if let Some((_, e, _)) = splits.last() {
            out.push(e.clone());
        }
        Ok(out)
    }

    pub async fn describe_splits_ex(
        &mut self,
        cf_name: String,
        start_token: String,
        end_token: String,
        keys_per_split: i32,
    ) -> TResult<Vec<t::CfSplit>> {
        let ks = self.read_keyspace(&cf_name)?;
        let splits =
            describe::splits(self.coordinator(), &ks, &cf_name, &start_token, &end_token, keys_per_split).await?;
        Ok(splits.into_iter().map(|(s, e, n)| t::CfSplit { start_token: s, end_token: e, row_count: n }).collect())
    }

    // ----- schema changes -----

    pub async fn system_add_column_family(&mut self, cf_def: t::CfDef) -> TResult<String> {
        // 3.11 wants a session keyspace (and the right to create in it) even though the CfDef
        // names its own; Sibyl checks the CfDef's keyspace as well.
        self.schema_keyspace()?;
        self.authorize_cf_change(&cf_def.keyspace)?;
        describe::add_column_family(self.coordinator(), cf_def).await
    }

    pub async fn system_drop_column_family(&mut self, column_family: String) -> TResult<String> {
        let ks = self.schema_keyspace()?;
        describe::drop_column_family(self.coordinator(), &ks, &column_family).await
    }

    pub async fn system_add_keyspace(&mut self, ks_def: t::KsDef) -> TResult<String> {
        self.session.authorize_keyspace_change(&self.ctx.authenticator)?;
        if is_reserved_keyspace(&ks_def.name) {
            return Err(ire(format!("{} is a reserved keyspace name", ks_def.name)));
        }
        describe::add_keyspace(self.coordinator(), ks_def).await
    }

    pub async fn system_drop_keyspace(&mut self, keyspace: String) -> TResult<String> {
        self.session.authorize_keyspace_change(&self.ctx.authenticator)?;
        if is_reserved_keyspace(&keyspace) {
            return Err(ire(format!("{keyspace} is a reserved keyspace and cannot be dropped")));
        }
        describe::drop_keyspace(self.coordinator(), &keyspace).await
    }

    pub async fn system_update_keyspace(&mut self, ks_def: t::KsDef) -> TResult<String> {
        self.session.authorize_keyspace_change(&self.ctx.authenticator)?;
        if is_reserved_keyspace(&ks_def.name) {
            return Err(ire(format!("{} keyspace is not user-modifiable", ks_def.name)));
        }
        describe::update_keyspace(self.coordinator(), ks_def).await
    }

    pub async fn system_update_column_family(&mut self, cf_def: t::CfDef) -> TResult<String> {
        self.authorize_cf_change(&cf_def.keyspace)?;
        describe::update_column_family(self.coordinator(), cf_def).await
    }

    // ----- CQL -----

    /// The CQL 2 calls: removed from Cassandra in 2.2, answered with 3.11's words.
    pub async fn cql2(&mut self, _method: &str) -> TResult<t::CqlResult> {
        Err(ire("CQL2 has been removed in Cassandra 2.2. Please use CQL3 instead"))
    }

    pub async fn cql2_prepare(&mut self, _method: &str) -> TResult<t::CqlPreparedResult> {
        Err(ire("CQL2 has been removed in Cassandra 2.2. Please use CQL3 instead"))
    }

    pub async fn execute_cql3_query(
        &mut self,
        query: Vec<u8>,
        compression: t::Compression,
        consistency: t::ConsistencyLevel,
    ) -> TResult<t::CqlResult> {
        let text = super::cql::query_text(query, compression)?;
        let cl = super::convert::consistency_level(consistency)?;
        // A traced query records its text, as 3.11's trace sessions do.
        cluster::trace::trace_parameters(|| {
            vec![("query".to_string(), text.clone()), ("consistency_level".to_string(), cl.to_string())]
        });
        let statement = cql::parse(&text).map_err(cql::CqlError::from)?;
        self.authorize_cql(&statement)?;
        let mut session = self.cql_session();
        let outcome = self.ctx.cql.execute_statement(&mut session, &statement, cl).await;
        self.keep_cql_session(session);
        Ok(super::cql::result(outcome?))
    }

    pub async fn prepare_cql3_query(
        &mut self,
        query: Vec<u8>,
        compression: t::Compression,
    ) -> TResult<t::CqlPreparedResult> {
        let text = super::cql::query_text(query, compression)?;
        self.session.require_login(&self.ctx.authenticator)?;
        let (id, prepared) = self.ctx.cql.prepare(&self.cql_session(), &text)?;
        Ok(super::cql::prepared_result(id, &prepared))
    }

    pub async fn execute_prepared_cql3_query(
        &mut self,
        item_id: i32,
        values: Vec<Vec<u8>>,
        consistency: t::ConsistencyLevel,
    ) -> TResult<t::CqlResult> {
        let cl = super::convert::consistency_level(consistency)?;
        let Some(prepared) = self.ctx.cql.prepared(item_id) else {
            return Err(ire(format!(
                "Prepared query with ID {item_id} not found (either the query was not prepared on this host (maybe the host has been restarted?) or you have prepared too many queries and it has been evicted from the internal cache)"
            )));
        };
        self.authorize_cql(&prepared.statement)?;
        let values: Vec<cql::exec::Value> = values.into_iter().map(cql::exec::Value::Bytes).collect();
        let mut session = self.cql_session();
        let outcome = self.ctx.cql.execute_prepared(&mut session, &prepared, &values, cl).await;
        self.keep_cql_session(session);
        Ok(super::cql::result(outcome?))
    }

    /// Deprecated in 3.11 and ignored there: every version is accepted.
    pub async fn set_cql_version(&mut self, _version: String) -> TResult<()> {
        Ok(())
    }

    /// The CQL view of this connection: its keyspace, shared with set_keyspace as in 3.11.
    fn cql_session(&self) -> cql::Session {
        cql::Session { keyspace: self.session.current_keyspace_name().map(str::to_string), ..cql::Session::default() }
    }

    fn keep_cql_session(&mut self, session: cql::Session) {
        if let Some(ks) = session.keyspace {
            if self.session.current_keyspace_name() != Some(ks.as_str()) {
                self.session.set_keyspace(ks);
            }
        }
    }

    /// The login and the right a statement needs (keyspace grants, as the Thrift calls).
    fn authorize_cql(&self, statement: &cql::ast::Statement) -> TResult<()> {
        let keyspace = self.session.current_keyspace_name();
        crate::cql_access::authorize(&self.ctx.authenticator, self.session.user(), keyspace, statement).map_err(
            |refusal| match refusal {
                crate::cql_access::Refusal::Auth(e) => auth_error(e),
                crate::cql_access::Refusal::Reserved(why) => ire(why),
            },
        )
    }
}
