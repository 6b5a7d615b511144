//! The 0.6 API method by method. Each data call checks the login and the caller's right to the
//! column families it touches in the keyspace it names (0.6 has no session keyspace), converts
//! its 0.6 structs to the 20.1.0 ones ([`super::convert`]) and hands them to the same [`reads`]
//! and [`writes`] functions the 20.1.0 API uses, with that keyspace; answers are converted back.
//! Only what 0.6 does differently is here: its consistency levels (ZERO among them), its words
//! for a few errors, its login, its deprecated calls and its description calls.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;
use std::task::Poll;

use cluster::coordinator::{Coordinator, CoordinatorError};
use model::schema::CfMetadata;
use storage::StorageError;
use thrift_idl as t;
use thrift_idl::v06 as v;
use tracing::debug;

use super::convert::{self, WriteLevel};
use super::describe;
use crate::auth::{AuthError, AuthenticatedUser};
use crate::thrift::convert::GetSliceArgs;
use crate::thrift::error::{ire, TResult, ThriftError};
use crate::thrift::handler::ThriftContext;
use crate::thrift::session::auth_error;
use crate::thrift::validate::{is_reserved_keyspace, validate_path_or_parent};
use crate::thrift::{reads, writes};

type MutationMap06 = BTreeMap<String, BTreeMap<String, Vec<v::Mutation>>>;

/// One connection's 0.6 state: only its login, since 0.6 names the keyspace in every call.
pub struct Handler {
    ctx: Arc<ThriftContext>,
    user: Option<AuthenticatedUser>,
}

impl Handler {
    pub fn new(ctx: Arc<ThriftContext>) -> Handler {
        Handler { ctx, user: None }
    }

    fn coordinator(&self) -> &Arc<Coordinator> {
        &self.ctx.coordinator
    }

    /// 0.6's gate before every data call: a login when the authenticator wants one, a keyspace
    /// that exists, and (stricter than 0.6, which checked only the keyspace given to login) the
    /// user's right to read or write each column family the call touches, by a grant on it or
    /// on its keyspace (see [`crate::auth`]).
    fn check<'a>(&self, ks: &str, column_families: impl IntoIterator<Item = &'a str>, write: bool) -> TResult<()> {
        let auth = &self.ctx.authenticator;
        if auth.requires_login() && self.user.is_none() {
            return Err(ire("Login is required before any other API calls"));
        }
        if !self.coordinator().has_keyspace(ks) {
            return Err(ire(format!("Keyspace {ks} does not exist in this schema.")));
        }
        if write && is_reserved_keyspace(ks) {
            return Err(ire(format!("{ks} keyspace is not user-modifiable")));
        }
        auth.authorize_column_families(self.user.as_ref(), ks, column_families, write).map_err(auth_error)
    }

    /// A column family of `ks`, refused with 0.6's words when it does not exist.
    fn cf(&self, ks: &str, cf: &str) -> TResult<Arc<CfMetadata>> {
        self.coordinator().cf_metadata(ks, cf).map_err(|e| match e {
            CoordinatorError::Storage(StorageError::UnknownColumnFamily { .. }) => {
                ire(format!("unconfigured columnfamily {cf}"))
            }
            other => other.into(),
        })
    }

    /// Runs a write at a 0.6 level. `write` gets the coordinator and the 20.1.0 level and must
    /// own everything it uses, so that a ZERO write can outlive the call.
    async fn write<F, Fut>(&self, cl: v::ConsistencyLevel, write: F) -> TResult<()>
    where
        F: FnOnce(Arc<Coordinator>, t::ConsistencyLevel) -> Fut,
        Fut: Future<Output = TResult<()>> + Send + 'static,
    {
        let c = self.coordinator().clone();
        match convert::write_level(cl)? {
            WriteLevel::Wait(cl) => write(c, cl).await,
            // ANY: any replica, or a hint, will do; nobody waits for it anyway.
            WriteLevel::FireAndForget => fire_and_forget(write(c, t::ConsistencyLevel::ANY)).await,
        }
    }

    // ----- login -----

    /// 0.6's login names a keyspace: the user must have some grant in it, on the keyspace or on
    /// one of its column families (AuthorizationException otherwise). Later calls are checked
    /// against their own keyspace and column families.
    pub async fn login(&mut self, keyspace: String, auth_request: v::AuthenticationRequest) -> TResult<()> {
        let auth = &self.ctx.authenticator;
        let user = auth.login(&auth_request.credentials).map_err(auth_error)?;
        auth.authorize_keyspace_use(Some(&user), &keyspace).map_err(|e| match e {
            AuthError::NotAuthorized(why) => ThriftError::Authorization(why),
            other => auth_error(other),
        })?;
        self.user = Some(user);
        Ok(())
    }

    // ----- reads -----

    pub async fn get(
        &mut self,
        ks: String,
        key: String,
        path: v::ColumnPath,
        cl: v::ConsistencyLevel,
    ) -> TResult<v::ColumnOrSuperColumn> {
        self.check(&ks, [path.column_family.as_str()], false)?;
        self.cf(&ks, &path.column_family)?;
        let cl = convert::read_level(cl)?;
        let found = reads::get(self.coordinator(), &ks, convert::key(key), convert::path(path), cl).await?;
        Ok(convert::cosc_06(found.into_thrift()))
    }

    pub async fn get_slice(
        &mut self,
        ks: String,
        key: String,
        parent: v::ColumnParent,
        predicate: v::SlicePredicate,
        cl: v::ConsistencyLevel,
    ) -> TResult<Vec<v::ColumnOrSuperColumn>> {
        self.check(&ks, [parent.column_family.as_str()], false)?;
        self.cf(&ks, &parent.column_family)?;
        let cl = convert::read_level(cl)?;
        let parent = convert::parent(parent);
        let args = GetSliceArgs {
            key: convert::key(key),
            column_family: parent.column_family.into(),
            super_column: parent.super_column,
            predicate: convert::predicate(predicate),
            consistency_level: cl,
        };
        let found = reads::get_slice(self.coordinator(), &ks, args).await?;
        Ok(convert::coscs_06(found.into_thrift()))
    }

    /// Deprecated in 0.6: `get` for many keys; a key with nothing there maps to an empty
    /// ColumnOrSuperColumn. One multiget read of the one name the path points at.
    pub async fn multiget(
        &mut self,
        ks: String,
        keys: Vec<String>,
        path: v::ColumnPath,
        cl: v::ConsistencyLevel,
    ) -> TResult<BTreeMap<String, v::ColumnOrSuperColumn>> {
        self.check(&ks, [path.column_family.as_str()], false)?;
        let meta = self.cf(&ks, &path.column_family)?;
        let cl = convert::read_level(cl)?;
        let path = convert::path(path);
        let (parent, name) = match validate_path_or_parent(&meta, &path)? {
            (sc, Some(column)) => (t::ColumnParent::new(meta.name().to_string(), sc.map(<[u8]>::to_vec)), column),
            (Some(sc), None) => (t::ColumnParent::new(meta.name().to_string(), None), sc),
            (None, None) => {
                return Err(ire(format!("column parameter is not optional for standard CF {}", meta.name())));
            }
        };
        let predicate = t::SlicePredicate::new(vec![name.to_vec()], None);
        let rows = reads::multiget_slice(self.coordinator(), &ks, convert::keys(keys), parent, predicate, cl).await?;
        Ok(rows
            .into_thrift()
            .into_iter()
            .map(|(k, found)| {
                let first = found.into_iter().next().map(convert::cosc_06);
                (convert::key_string(k), first.unwrap_or_else(|| v::ColumnOrSuperColumn::new(None, None)))
            })
            .collect())
    }

    pub async fn multiget_slice(
        &mut self,
        ks: String,
        keys: Vec<String>,
        parent: v::ColumnParent,
        predicate: v::SlicePredicate,
        cl: v::ConsistencyLevel,
    ) -> TResult<BTreeMap<String, Vec<v::ColumnOrSuperColumn>>> {
        self.check(&ks, [parent.column_family.as_str()], false)?;
        self.cf(&ks, &parent.column_family)?;
        let cl = convert::read_level(cl)?;
        let (parent, predicate) = (convert::parent(parent), convert::predicate(predicate));
        let rows = reads::multiget_slice(self.coordinator(), &ks, convert::keys(keys), parent, predicate, cl).await?;
        Ok(rows
            .into_thrift()
            .into_iter()
            .map(|(k, found)| (convert::key_string(k), convert::coscs_06(found)))
            .collect())
    }

    /// 0.6's get_count has no predicate: it counts every column (or super column) of the row.
    pub async fn get_count(
        &mut self,
        ks: String,
        key: String,
        parent: v::ColumnParent,
        cl: v::ConsistencyLevel,
    ) -> TResult<i32> {
        self.check(&ks, [parent.column_family.as_str()], false)?;
        self.cf(&ks, &parent.column_family)?;
        let cl = convert::read_level(cl)?;
        let everything = t::SlicePredicate::new(None, t::SliceRange::new(Vec::new(), Vec::new(), false, i32::MAX));
        reads::get_count(self.coordinator(), &ks, convert::key(key), convert::parent(parent), everything, cl).await
    }

    /// Deprecated in 0.6: get_range_slices over the keys `[start_key, finish_key]`.
    #[expect(clippy::too_many_arguments, reason = "the Thrift method's arguments")]
    pub async fn get_range_slice(
        &mut self,
        ks: String,
        parent: v::ColumnParent,
        predicate: v::SlicePredicate,
        start_key: String,
        finish_key: String,
        row_count: i32,
        cl: v::ConsistencyLevel,
    ) -> TResult<Vec<v::KeySlice>> {
        let range = v::KeyRange::new(start_key, finish_key, None, None, row_count);
        self.get_range_slices(ks, parent, predicate, range, cl).await
    }

    pub async fn get_range_slices(
        &mut self,
        ks: String,
        parent: v::ColumnParent,
        predicate: v::SlicePredicate,
        range: v::KeyRange,
        cl: v::ConsistencyLevel,
    ) -> TResult<Vec<v::KeySlice>> {
        self.check(&ks, [parent.column_family.as_str()], false)?;
        self.cf(&ks, &parent.column_family)?;
        let cl = convert::read_level(cl)?;
        let range = convert::key_range(range)?;
        let (parent, predicate) = (convert::parent(parent), convert::predicate(predicate));
        let rows = reads::get_range_slices(self.coordinator(), &ks, parent, predicate, range, cl)
            .await
            .map_err(convert::range_error_06)?;
        Ok(convert::key_slices_06(rows))
    }

    // ----- writes -----

    /// 0.6's insert names the column with a ColumnPath, and passes value and timestamp apart.
    pub async fn insert(
        &mut self,
        ks: String,
        key: String,
        path: v::ColumnPath,
        value: Vec<u8>,
        timestamp: i64,
        cl: v::ConsistencyLevel,
    ) -> TResult<()> {
        self.check(&ks, [path.column_family.as_str()], true)?;
        self.cf(&ks, &path.column_family)?;
        let name = path
            .column
            .ok_or_else(|| ire(format!("column parameter is not optional for insert into {}", path.column_family)))?;
        let parent = t::ColumnParent::new(path.column_family, path.super_column);
        let column = convert::column(v::Column::new(name, value, timestamp));
        let key = convert::key(key);
        self.write(cl, move |c, cl| async move {
            let args = t::CassandraInsertArgs { key, column_parent: parent, column, consistency_level: cl };
            writes::insert(&c, &ks, args.into()).await
        })
        .await
    }

    /// Deprecated in 0.6: the columns (or super columns) of one row, by column family.
    pub async fn batch_insert(
        &mut self,
        ks: String,
        key: String,
        cfmap: BTreeMap<String, Vec<v::ColumnOrSuperColumn>>,
        cl: v::ConsistencyLevel,
    ) -> TResult<()> {
        self.check(&ks, cfmap.keys().map(String::as_str), true)?;
        for cf in cfmap.keys() {
            self.cf(&ks, cf)?;
        }
        let map = convert::batch_insert_map(key, cfmap);
        self.write(cl, move |c, cl| async move { writes::batch_mutate(&c, &ks, map, cl).await }).await
    }

    pub async fn remove(
        &mut self,
        ks: String,
        key: String,
        path: v::ColumnPath,
        timestamp: i64,
        cl: v::ConsistencyLevel,
    ) -> TResult<()> {
        self.check(&ks, [path.column_family.as_str()], true)?;
        self.cf(&ks, &path.column_family)?;
        let (key, path) = (convert::key(key), convert::path(path));
        self.write(cl, move |c, cl| async move { writes::remove(&c, &ks, key, path, timestamp, cl).await }).await
    }

    pub async fn batch_mutate(
        &mut self,
        ks: String,
        mutation_map: MutationMap06,
        cl: v::ConsistencyLevel,
    ) -> TResult<()> {
        self.check(&ks, mutation_map.values().flat_map(|by_cf| by_cf.keys().map(String::as_str)), true)?;
        for cf in mutation_map.values().flat_map(BTreeMap::keys) {
            self.cf(&ks, cf)?;
        }
        let map = convert::mutation_map(mutation_map)?;
        self.write(cl, move |c, cl| async move { writes::batch_mutate(&c, &ks, map, cl).await }).await
    }

    // ----- properties and descriptions (no login needed, as in 0.6) -----

    pub async fn get_string_property(&mut self, property: String) -> TResult<String> {
        describe::string_property(&self.ctx, &property).await
    }

    pub async fn get_string_list_property(&mut self, property: String) -> TResult<Vec<String>> {
        Ok(match property.as_str() {
            "keyspaces" => describe::keyspace_names(self.coordinator()).into_iter().collect(),
            _ => Vec::new(),
        })
    }

    pub async fn describe_keyspaces(&mut self) -> TResult<BTreeSet<String>> {
        Ok(describe::keyspace_names(self.coordinator()))
    }

    pub async fn describe_cluster_name(&mut self) -> TResult<String> {
        Ok(self.coordinator().cluster_name().to_string())
    }

    pub async fn describe_version(&mut self) -> TResult<String> {
        Ok(v::VERSION.to_string())
    }

    pub async fn describe_partitioner(&mut self) -> TResult<String> {
        Ok(self.coordinator().partitioner().class_name().to_string())
    }

    pub async fn describe_ring(&mut self, keyspace: String) -> TResult<Vec<v::TokenRange>> {
        describe::ring(self.coordinator(), &keyspace)
    }

    pub async fn describe_keyspace(&mut self, keyspace: String) -> TResult<BTreeMap<String, BTreeMap<String, String>>> {
        describe::keyspace(self.coordinator(), &keyspace)
    }

    pub async fn describe_splits(
        &mut self,
        start_token: String,
        end_token: String,
        keys_per_split: i32,
    ) -> TResult<Vec<String>> {
        describe::splits(self.coordinator(), start_token, end_token, keys_per_split).await
    }
}

/// A ZERO write: converted, validated and applied (or queued for the commit log) as far as it
/// goes without waiting, so that a request 0.6 would refuse is still refused; whatever remains
/// (the commit log's acknowledgement, or the whole write when writes must leave the event loop)
/// goes on as a task of its own while the client has its answer.
async fn fire_and_forget(write: impl Future<Output = TResult<()>> + Send + 'static) -> TResult<()> {
    let mut write = Box::pin(write);
    match std::future::poll_fn(|cx| Poll::Ready(write.as_mut().poll(cx))).await {
        Poll::Ready(result) => result,
        Poll::Pending => {
            tokio::spawn(async move {
                if let Err(e) = write.await {
                    debug!(error = %e, "a ZERO-consistency write failed after it was answered");
                }
            });
            Ok(())
        }
    }
}
