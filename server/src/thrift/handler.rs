//! The Thrift API, method by method, over the storage engine. One handler per connection holds
//! that connection's keyspace and login. Methods run on a request-executor thread (see `thrift::executor`),
//! so they call the engine directly.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;
use storage::cfs::{ColumnFamilyStore, KeyBound};
use storage::data::{compose_super, now_seconds, Cell, DeletionTime, RangeTombstone, Row};
use storage::dht::Token;
use storage::filter::{CountUnit, ReadFilter};
use storage::mutation::RowMutation;
use thrift_idl as t;
use uuid::Uuid;

use super::convert::{cf_def_from_thrift, ks_def_from_thrift, ks_def_to_thrift, to_thrift_columns};
use super::validate::*;
use crate::auth::{AuthError, AuthenticatedUser};
use crate::node::Node;

/// Per-connection state, shared with the connection loop (which runs query traces).
#[derive(Default)]
pub struct Session {
    keyspace: Option<String>,
    user: Option<AuthenticatedUser>,
    /// Set by trace_next_query: the session id under which the next request is traced.
    trace_next: Option<Uuid>,
}

impl Session {
    /// The trace session id for the request about to run, if one was asked for.
    pub fn take_trace(&mut self) -> Option<Uuid> {
        self.trace_next.take()
    }
}

pub struct Handler {
    node: Arc<Node>,
    session: Arc<Mutex<Session>>,
}

/// What the client sees for a refused login or request. Only `login` declares the
/// authentication and authorization exceptions; every other method reports a refusal as
/// InvalidRequestException, as Cassandra does.
fn auth_error(e: AuthError) -> thrift::Error {
    match e {
        AuthError::BadCredentials(m) => thrift_idl::user_error(t::AuthenticationException::new(m)),
        AuthError::NotAuthorized(m) => ire(m),
        AuthError::NotLoggedIn => ire("You have not logged in"),
    }
}

fn not_supported(what: &str) -> thrift::Error {
    ire(format!("{what} is not supported yet"))
}

impl Handler {
    pub fn new(node: Arc<Node>, session: Arc<Mutex<Session>>) -> Handler {
        Handler { node, session }
    }

    /// The session's keyspace, after checking the login and access rights.
    fn keyspace(&self, write: bool) -> TResult<String> {
        let s = self.session.lock();
        let ks = s.keyspace.clone().ok_or_else(|| ire("You have not set a keyspace for this session"))?;
        if write && is_reserved(&ks) {
            return Err(ire(format!("{ks} keyspace is not user-modifiable")));
        }
        self.authorize(&s, &ks, write)?;
        Ok(ks)
    }

    fn authorize(&self, s: &Session, ks: &str, write: bool) -> TResult<()> {
        self.node.authenticator.authorize(s.user.as_ref(), ks, write).map_err(auth_error)
    }

    /// Creating, changing or dropping keyspaces (`<modify-keyspaces>` in access.properties).
    fn authorize_keyspace_change(&self) -> TResult<()> {
        let s = self.session.lock();
        self.node.authenticator.authorize_keyspace_list_change(s.user.as_ref()).map_err(auth_error)
    }

    /// Changing a column family of `ks`: write access to the keyspace.
    fn authorize_write_to(&self, ks: &str) -> TResult<()> {
        let s = self.session.lock();
        self.authorize(&s, ks, true)
    }

    fn require_login(&self) -> TResult<()> {
        let s = self.session.lock();
        if self.node.authenticator.requires_login() && s.user.is_none() {
            return Err(auth_error(AuthError::NotLoggedIn));
        }
        Ok(())
    }

    fn store(&self, ks: &str, cf: &str) -> TResult<Arc<ColumnFamilyStore>> {
        self.node.storage.store(ks, cf).map_err(storage_error)
    }

    fn check_cl(&self, ks: &str, cl: t::ConsistencyLevel, write: bool) -> TResult<()> {
        self.node
            .storage
            .with_keyspace(ks, |def| check_consistency(def, cl, write))
            .ok_or_else(|| ire(format!("Keyspace '{ks}' does not exist")))?
    }

    /// Reads one row's slice and converts it for the client.
    fn slice(
        &self,
        store: &ColumnFamilyStore,
        key: &[u8],
        parent: &t::ColumnParent,
        filter: &ReadFilter,
    ) -> TResult<Vec<t::ColumnOrSuperColumn>> {
        let cells = store.read(&self.node.storage.decorate(key), filter, now_seconds()).map_err(storage_error)?;
        Ok(to_thrift_columns(cells, store.cmp.is_super(), parent.super_column.is_some()))
    }

    fn read_prologue(
        &self,
        parent: &t::ColumnParent,
        predicate: &t::SlicePredicate,
        cl: t::ConsistencyLevel,
    ) -> TResult<(Arc<ColumnFamilyStore>, ReadFilter)> {
        let ks = self.keyspace(false)?;
        let store = self.store(&ks, &parent.column_family)?;
        validate_parent(&store, parent.super_column.as_deref())?;
        let filter = predicate_filter(&store, parent.super_column.as_deref(), predicate)?;
        self.check_cl(&ks, cl, false)?;
        Ok((store, filter))
    }

    // ----- writes -----

    /// The cell a Thrift Column becomes, after validation.
    fn cell_of(&self, store: &ColumnFamilyStore, super_column: Option<&[u8]>, c: t::Column, now: i32) -> TResult<Cell> {
        let name_type = match super_column {
            Some(_) => store.cmp.sub_type().unwrap_or(store.cmp.name_type()),
            None => store.cmp.name_type(),
        };
        validate_name(&c.name, name_type, "column")?;
        let value = c.value.ok_or_else(|| ire("Column value is required"))?;
        let timestamp = c.timestamp.ok_or_else(|| ire("Column timestamp is required"))?;
        validate_value(store, &c.name, &value)?;
        let name = match super_column {
            Some(sc) => compose_super(sc, &c.name),
            None => c.name,
        };
        let default_ttl = store.validators().default_time_to_live;
        Ok(match c.ttl {
            Some(ttl) => {
                validate_ttl(ttl)?;
                Cell::expiring(name, value, timestamp, ttl, now)
            }
            None if default_ttl > 0 => Cell::expiring(name, value, timestamp, default_ttl, now),
            None => Cell::live(name, value, timestamp),
        })
    }

    /// Adds a Thrift Mutation (from batch_mutate) to `row`.
    fn add_mutation(&self, store: &ColumnFamilyStore, row: &mut Row, m: t::Mutation, now: i32) -> TResult<()> {
        match (m.column_or_supercolumn, m.deletion) {
            (Some(cosc), None) => {
                let set = [
                    cosc.column.is_some(),
                    cosc.super_column.is_some(),
                    cosc.counter_column.is_some(),
                    cosc.counter_super_column.is_some(),
                ];
                if set.iter().filter(|b| **b).count() != 1 {
                    return Err(ire("ColumnOrSuperColumn must have one (and only one) of column, super_column, counter and counter_super_column"));
                }
                if cosc.counter_column.is_some() || cosc.counter_super_column.is_some() {
                    return Err(not_supported("Counter mutations"));
                }
                if let Some(c) = cosc.column {
                    if store.cmp.is_super() {
                        return Err(ire(format!(
                            "Column family {} is a super column family: a mutation must carry a super_column",
                            store.name
                        )));
                    }
                    row.cells.push(self.cell_of(store, None, c, now)?);
                }
                if let Some(sc) = cosc.super_column {
                    if !store.cmp.is_super() {
                        return Err(ire(format!(
                            "Column family {} is not a super column family: super_column is invalid",
                            store.name
                        )));
                    }
                    validate_name(&sc.name, store.cmp.name_type(), "super column")?;
                    for c in sc.columns {
                        row.cells.push(self.cell_of(store, Some(&sc.name), c, now)?);
                    }
                }
                Ok(())
            }
            (None, Some(d)) => {
                let timestamp = d.timestamp.ok_or_else(|| {
                    ire(format!("Deletion timestamp is not optional for non commutative table {}", store.name))
                })?;
                if d.super_column.is_some() && !store.cmp.is_super() {
                    return Err(ire(format!(
                        "Deletion of super columns is not possible on a standard table (KeySpace={}, table={})",
                        store.keyspace, store.name
                    )));
                }
                self.add_deletion(store, row, d.super_column.as_deref(), d.predicate.as_ref(), timestamp, now)
            }
            _ => Err(ire("Mutation must have one and only one of column_or_supercolumn or deletion")),
        }
    }

    /// Turns a deletion (remove or a batch Deletion) into tombstones in `row`.
    fn add_deletion(
        &self,
        store: &ColumnFamilyStore,
        row: &mut Row,
        super_column: Option<&[u8]>,
        predicate: Option<&t::SlicePredicate>,
        timestamp: i64,
        now: i32,
    ) -> TResult<()> {
        let deletion = DeletionTime::new(timestamp, now);
        let whole_super =
            |sc: &[u8]| RangeTombstone { start: compose_super(sc, b""), end: compose_super(sc, b""), deletion };
        if let Some(sc) = super_column {
            validate_name(sc, store.cmp.name_type(), "super column")?;
        }
        let Some(p) = predicate else {
            match super_column {
                Some(sc) => row.range_tombstones.push(whole_super(sc)),
                None => row.deletion = row.deletion.max(deletion),
            }
            return Ok(());
        };
        let sub_type = store.cmp.sub_type().unwrap_or(store.cmp.name_type());
        match (&p.column_names, &p.slice_range) {
            (Some(names), None) => {
                for n in names {
                    match (store.cmp.is_super(), super_column) {
                        (true, Some(sc)) => {
                            validate_name(n, sub_type, "column")?;
                            row.cells.push(Cell::tombstone(compose_super(sc, n), timestamp, now));
                        }
                        (true, None) => {
                            validate_name(n, store.cmp.name_type(), "super column")?;
                            row.range_tombstones.push(whole_super(n));
                        }
                        (false, _) => {
                            validate_name(n, store.cmp.name_type(), "column")?;
                            row.cells.push(Cell::tombstone(n.clone(), timestamp, now));
                        }
                    }
                }
                Ok(())
            }
            (None, Some(r)) => {
                let ty = if super_column.is_some() { sub_type } else { store.cmp.name_type() };
                check_slice_order(ty, &r.start, &r.finish, false)?;
                let (start, end) = match (store.cmp.is_super(), super_column) {
                    (true, Some(sc)) => (compose_super(sc, &r.start), compose_super(sc, &r.finish)),
                    (true, None) => (
                        if r.start.is_empty() { Vec::new() } else { compose_super(&r.start, b"") },
                        if r.finish.is_empty() { Vec::new() } else { compose_super(&r.finish, b"") },
                    ),
                    (false, _) => (r.start.clone(), r.finish.clone()),
                };
                row.range_tombstones.push(RangeTombstone { start, end, deletion });
                Ok(())
            }
            (Some(_), Some(_)) => Err(ire("SlicePredicate column_names and slice_range may not both be present")),
            (None, None) => Err(ire("A SlicePredicate must be given a list of Columns, a SliceRange, or both")),
        }
    }

    fn apply(&self, m: RowMutation) -> TResult<()> {
        self.node.storage.apply(m).map_err(storage_error)
    }

    fn mutate(
        &self,
        mutation_map: BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>>,
        cl: t::ConsistencyLevel,
    ) -> TResult<()> {
        let ks = self.keyspace(true)?;
        self.check_cl(&ks, cl, true)?;
        let now = now_seconds();
        // Validate everything before applying anything.
        let mut mutations = Vec::with_capacity(mutation_map.len());
        for (key, by_cf) in mutation_map {
            validate_key(&key)?;
            let mut rm = RowMutation::new(ks.clone(), key);
            for (cf, list) in by_cf {
                let store = self.store(&ks, &cf)?;
                validate_key_type(&store, &rm.key)?;
                let row = rm.row_mut(&cf);
                for m in list {
                    self.add_mutation(&store, row, m, now)?;
                }
                sort_cells(&store, row);
            }
            mutations.push(rm);
        }
        for m in mutations {
            self.apply(m)?;
        }
        Ok(())
    }

    // ----- range scans -----

    /// Start and end bounds of a KeyRange, as one or two non-wrapping pieces.
    fn key_range_bounds(&self, range: &t::KeyRange) -> TResult<Vec<(KeyBound, KeyBound)>> {
        let p = self.node.storage.partitioner();
        let parse = |s: &str| p.token_from_string(s).map_err(|e| ire(e.to_string()));
        if range.start_key.is_some() == range.start_token.is_some() {
            return Err(ire("exactly one of {start key, start token} must be specified"));
        }
        if range.end_key.is_some() && range.end_token.is_some() {
            return Err(ire("only one of {end key, end token} may be specified"));
        }
        if range.start_token.is_some() && range.end_key.is_some() {
            return Err(ire("start token + end key is not a supported key range"));
        }
        if range.count <= 0 {
            return Err(ire("maxRows must be positive"));
        }
        if let Some(start_key) = &range.start_key {
            let start = if start_key.is_empty() {
                KeyBound::Unbounded
            } else {
                KeyBound::Key { key: p.decorate(start_key), inclusive: true }
            };
            let end = match (&range.end_key, &range.end_token) {
                (Some(k), _) if !k.is_empty() => {
                    let end_key = p.decorate(k);
                    if let KeyBound::Key { key, .. } = &start {
                        if key.token > end_key.token && !p.preserves_order() {
                            return Err(ire("start key's token sorts after end key's token.  this is not allowed; you probably should not specify end key at all except with an ordered partitioner"));
                        }
                        if key > &end_key {
                            return Err(ire("start key must sort before (or equal to) end key in your partitioner!"));
                        }
                    }
                    KeyBound::Key { key: end_key, inclusive: true }
                }
                (_, Some(tok)) => {
                    let t = parse(tok)?;
                    if t == p.min_token() {
                        KeyBound::Unbounded
                    } else {
                        KeyBound::Token { token: t, inclusive: true }
                    }
                }
                _ => KeyBound::Unbounded,
            };
            return Ok(vec![(start, end)]);
        }
        let start = parse(range.start_token.as_deref().unwrap_or_default())?;
        let end = parse(range.end_token.as_deref().unwrap_or_default())?;
        let min = p.min_token();
        let lower = |t: &Token| {
            if *t == min {
                KeyBound::Unbounded
            } else {
                KeyBound::Token { token: t.clone(), inclusive: false }
            }
        };
        let upper = |t: &Token| {
            if *t == min {
                KeyBound::Unbounded
            } else {
                KeyBound::Token { token: t.clone(), inclusive: true }
            }
        };
        // (start, end]: wraps when start >= end, unless end is the minimum (the ring's end).
        // start == end is the whole ring, starting after that token.
        if end != min && start >= end {
            return Ok(vec![(lower(&start), KeyBound::Unbounded), (KeyBound::Unbounded, upper(&end))]);
        }
        Ok(vec![(lower(&start), upper(&end))])
    }

    fn scan(
        &self,
        store: &ColumnFamilyStore,
        pieces: Vec<(KeyBound, KeyBound)>,
        filter: &ReadFilter,
        max_rows: usize,
        within_super: bool,
    ) -> TResult<Vec<t::KeySlice>> {
        let mut out = Vec::new();
        for (start, end) in pieces {
            if out.len() >= max_rows {
                break;
            }
            let rows = self
                .node
                .storage
                .scan(&store.keyspace, &store.name, &start, &end, filter, max_rows - out.len())
                .map_err(storage_error)?;
            for (key, cells) in rows {
                out.push(t::KeySlice {
                    key: key.key,
                    columns: to_thrift_columns(cells, store.cmp.is_super(), within_super),
                });
            }
        }
        Ok(out)
    }

    fn describe_ring_of(&self, keyspace: &str) -> TResult<Vec<t::TokenRange>> {
        if !self.node.storage.has_keyspace(keyspace) {
            return Err(ire(format!("Keyspace '{keyspace}' does not exist")));
        }
        let token = self.node.storage.partitioner().token_to_string(&self.node.local_token);
        Ok(vec![t::TokenRange {
            start_token: token.clone(),
            end_token: token,
            endpoints: vec![self.node.listen_address.clone()],
            rpc_endpoints: Some(vec![self.node.rpc_address.clone()]),
            endpoint_details: Some(vec![t::EndpointDetails {
                host: Some(self.node.listen_address.clone()),
                datacenter: Some(crate::node::DATACENTER.into()),
                rack: Some(crate::node::RACK.into()),
            }]),
        }])
    }

    fn splits(
        &self,
        cf_name: &str,
        start: &str,
        end: &str,
        keys_per_split: i32,
    ) -> TResult<Vec<(String, String, i64)>> {
        let ks = self.keyspace(false)?;
        let store = self.store(&ks, cf_name)?;
        if keys_per_split <= 0 {
            return Err(ire("keys_per_split must be positive"));
        }
        let p = self.node.storage.partitioner();
        let start_t = p.token_from_string(start).map_err(|e| ire(e.to_string()))?;
        let end_t = p.token_from_string(end).map_err(|e| ire(e.to_string()))?;
        let range = storage::dht::Range { left: start_t.clone(), right: end_t.clone() };
        // Estimate keys in the range from the SSTables' key samples and the memtable.
        let mut total_keys = 0u64;
        for s in store.sstables() {
            let samples = s.sample_keys();
            let inside = samples.iter().filter(|k| range.contains(&k.token)).count() as u64;
            let keys = s.metadata().key_count;
            total_keys += if samples.is_empty() { 0 } else { keys * inside / samples.len() as u64 };
        }
        total_keys += store.active_memtable().partitions() as u64;
        let pieces = ((total_keys / keys_per_split as u64) + 1).min(1 << 16) as usize;
        let mut tokens = vec![start_t.clone()];
        if pieces > 1 {
            tokens.extend(p.split(&start_t, &end_t, pieces));
        }
        tokens.push(end_t);
        tokens.dedup();
        let per = (total_keys / (tokens.len().max(2) as u64 - 1)).max(1) as i64;
        Ok(tokens.windows(2).map(|w| (p.token_to_string(&w[0]), p.token_to_string(&w[1]), per)).collect())
    }
}

/// Cells of one update must be sorted by the comparator; a client may send them in any order.
fn sort_cells(store: &ColumnFamilyStore, row: &mut Row) {
    let cells = std::mem::take(&mut row.cells);
    for c in cells {
        storage::filter::insert_cell(&store.cmp, &mut row.cells, c);
    }
}

impl t::CassandraSyncHandler for Handler {
    fn handle_login(&self, auth_request: t::AuthenticationRequest) -> TResult<()> {
        let user = self.node.authenticator.login(&auth_request.credentials).map_err(auth_error)?;
        self.session.lock().user = Some(user);
        Ok(())
    }

    fn handle_set_keyspace(&self, keyspace: String) -> TResult<()> {
        self.require_login()?;
        if !self.node.storage.has_keyspace(&keyspace) {
            return Err(ire(format!("Keyspace '{keyspace}' does not exist")));
        }
        let mut s = self.session.lock();
        self.authorize(&s, &keyspace, false)?;
        s.keyspace = Some(keyspace);
        Ok(())
    }

    fn handle_get(
        &self,
        key: Vec<u8>,
        path: t::ColumnPath,
        cl: t::ConsistencyLevel,
    ) -> TResult<t::ColumnOrSuperColumn> {
        let ks = self.keyspace(false)?;
        let store = self.store(&ks, &path.column_family)?;
        validate_key(&key)?;
        let (sc, col) = validate_path(&store, &path)?;
        self.check_cl(&ks, cl, false)?;
        let (name, within_super) = match (sc, col) {
            (Some(sc), Some(c)) => (compose_super(sc, c), true),
            (Some(sc), None) => (compose_super(sc, b""), false),
            (None, Some(c)) => (c.to_vec(), false),
            (None, None) => {
                return Err(ire(format!("column parameter is not optional for standard CF {}", store.name)))
            }
        };
        let filter = ReadFilter::names(&store.cmp, vec![name], CountUnit::Cells);
        let cells = store.read(&self.node.storage.decorate(&key), &filter, now_seconds()).map_err(storage_error)?;
        to_thrift_columns(cells, store.cmp.is_super(), within_super)
            .into_iter()
            .next()
            .ok_or_else(|| thrift_idl::user_error(t::NotFoundException::new()))
    }

    fn handle_get_slice(
        &self,
        key: Vec<u8>,
        parent: t::ColumnParent,
        predicate: t::SlicePredicate,
        cl: t::ConsistencyLevel,
    ) -> TResult<Vec<t::ColumnOrSuperColumn>> {
        let (store, filter) = self.read_prologue(&parent, &predicate, cl)?;
        validate_key(&key)?;
        self.slice(&store, &key, &parent, &filter)
    }

    fn handle_get_count(
        &self,
        key: Vec<u8>,
        parent: t::ColumnParent,
        predicate: t::SlicePredicate,
        cl: t::ConsistencyLevel,
    ) -> TResult<i32> {
        let (store, filter) = self.read_prologue(&parent, &predicate, cl)?;
        validate_key(&key)?;
        Ok(self.slice(&store, &key, &parent, &filter)?.len() as i32)
    }

    fn handle_multiget_slice(
        &self,
        keys: Vec<Vec<u8>>,
        parent: t::ColumnParent,
        predicate: t::SlicePredicate,
        cl: t::ConsistencyLevel,
    ) -> TResult<BTreeMap<Vec<u8>, Vec<t::ColumnOrSuperColumn>>> {
        let (store, filter) = self.read_prologue(&parent, &predicate, cl)?;
        let mut out = BTreeMap::new();
        for key in keys {
            validate_key(&key)?;
            let cols = self.slice(&store, &key, &parent, &filter)?;
            out.insert(key, cols);
        }
        Ok(out)
    }

    fn handle_multiget_count(
        &self,
        keys: Vec<Vec<u8>>,
        parent: t::ColumnParent,
        predicate: t::SlicePredicate,
        cl: t::ConsistencyLevel,
    ) -> TResult<BTreeMap<Vec<u8>, i32>> {
        let (store, filter) = self.read_prologue(&parent, &predicate, cl)?;
        let mut out = BTreeMap::new();
        for key in keys {
            validate_key(&key)?;
            let n = self.slice(&store, &key, &parent, &filter)?.len() as i32;
            out.insert(key, n);
        }
        Ok(out)
    }

    fn handle_get_range_slices(
        &self,
        parent: t::ColumnParent,
        predicate: t::SlicePredicate,
        range: t::KeyRange,
        cl: t::ConsistencyLevel,
    ) -> TResult<Vec<t::KeySlice>> {
        let (store, filter) = self.read_prologue(&parent, &predicate, cl)?;
        if range.row_filter.as_ref().is_some_and(|f| !f.is_empty()) {
            return Err(not_supported("Secondary index queries (KeyRange.row_filter)"));
        }
        let pieces = self.key_range_bounds(&range)?;
        self.scan(&store, pieces, &filter, range.count as usize, parent.super_column.is_some())
    }

    fn handle_get_paged_slice(
        &self,
        column_family: String,
        range: t::KeyRange,
        start_column: Vec<u8>,
        cl: t::ConsistencyLevel,
    ) -> TResult<Vec<t::KeySlice>> {
        let ks = self.keyspace(false)?;
        let store = self.store(&ks, &column_family)?;
        if store.cmp.is_super() {
            return Err(ire("get_paged_slice does not work on super column families"));
        }
        if range.row_filter.as_ref().is_some_and(|f| !f.is_empty()) {
            return Err(not_supported("Secondary index queries (KeyRange.row_filter)"));
        }
        self.check_cl(&ks, cl, false)?;
        let pieces = self.key_range_bounds(&range)?;
        let first_key = range.start_key.clone().filter(|k| !k.is_empty());
        // `count` limits columns in total; rows are added until it is used up.
        let mut budget = range.count as usize;
        let mut out = Vec::new();
        for (start, end) in pieces {
            if budget == 0 {
                break;
            }
            // Every row returned has a live column, so `budget` rows fill the budget; one more
            // covers a first row whose columns all sort before start_column.
            let rows = self
                .node
                .storage
                .scan(&ks, &column_family, &start, &end, &ReadFilter::all(), budget + 1)
                .map_err(storage_error)?;
            for (key, cells) in rows {
                if budget == 0 {
                    break;
                }
                let skip_before =
                    (Some(&key.key) == first_key.as_ref() && !start_column.is_empty()).then_some(&start_column);
                let mut columns = Vec::new();
                for c in cells {
                    if skip_before.is_some_and(|s| store.cmp.compare(&c.name, s) == std::cmp::Ordering::Less) {
                        continue;
                    }
                    if budget == 0 {
                        break;
                    }
                    budget -= 1;
                    columns.push(c);
                }
                if !columns.is_empty() {
                    out.push(t::KeySlice { key: key.key, columns: to_thrift_columns(columns, false, false) });
                }
            }
        }
        Ok(out)
    }

    fn handle_get_indexed_slices(
        &self,
        _parent: t::ColumnParent,
        _clause: t::IndexClause,
        _predicate: t::SlicePredicate,
        _cl: t::ConsistencyLevel,
    ) -> TResult<Vec<t::KeySlice>> {
        self.keyspace(false)?;
        Err(not_supported("Secondary index queries (get_indexed_slices)"))
    }

    fn handle_insert(
        &self,
        key: Vec<u8>,
        parent: t::ColumnParent,
        column: t::Column,
        cl: t::ConsistencyLevel,
    ) -> TResult<()> {
        let ks = self.keyspace(true)?;
        let store = self.store(&ks, &parent.column_family)?;
        validate_key_type(&store, &key)?;
        validate_parent(&store, parent.super_column.as_deref())?;
        if store.cmp.is_super() && parent.super_column.is_none() {
            return Err(ire(format!(
                "Column family {} is a super column family: insert needs column_parent.super_column",
                store.name
            )));
        }
        self.check_cl(&ks, cl, true)?;
        let cell = self.cell_of(&store, parent.super_column.as_deref(), column, now_seconds())?;
        let mut m = RowMutation::new(ks, key);
        m.row_mut(&store.name).cells.push(cell);
        self.apply(m)
    }

    fn handle_add(
        &self,
        _key: Vec<u8>,
        _parent: t::ColumnParent,
        _column: t::CounterColumn,
        _cl: t::ConsistencyLevel,
    ) -> TResult<()> {
        self.keyspace(true)?;
        Err(not_supported("Counters (add)"))
    }

    fn handle_cas(
        &self,
        _key: Vec<u8>,
        _cf: String,
        _expected: Vec<t::Column>,
        _updates: Vec<t::Column>,
        _serial: t::ConsistencyLevel,
        _commit: t::ConsistencyLevel,
    ) -> TResult<t::CASResult> {
        self.keyspace(true)?;
        Err(not_supported("Lightweight transactions (cas)"))
    }

    fn handle_remove(&self, key: Vec<u8>, path: t::ColumnPath, timestamp: i64, cl: t::ConsistencyLevel) -> TResult<()> {
        let ks = self.keyspace(true)?;
        let store = self.store(&ks, &path.column_family)?;
        validate_key_type(&store, &key)?;
        let (sc, col) = validate_path(&store, &path)?;
        self.check_cl(&ks, cl, true)?;
        let now = now_seconds();
        let mut m = RowMutation::new(ks, key);
        let row = m.row_mut(&store.name);
        match col {
            Some(c) => {
                let predicate = t::SlicePredicate { column_names: Some(vec![c.to_vec()]), slice_range: None };
                self.add_deletion(&store, row, sc, Some(&predicate), timestamp, now)?;
            }
            None => self.add_deletion(&store, row, sc, None, timestamp, now)?,
        }
        self.apply(m)
    }

    fn handle_remove_counter(&self, _key: Vec<u8>, _path: t::ColumnPath, _cl: t::ConsistencyLevel) -> TResult<()> {
        self.keyspace(true)?;
        Err(not_supported("Counters (remove_counter)"))
    }

    fn handle_batch_mutate(
        &self,
        mutation_map: BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>>,
        cl: t::ConsistencyLevel,
    ) -> TResult<()> {
        self.mutate(mutation_map, cl)
    }

    fn handle_atomic_batch_mutate(
        &self,
        mutation_map: BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>>,
        cl: t::ConsistencyLevel,
    ) -> TResult<()> {
        // On one node every row mutation is applied once validated; nothing is left half done
        // by a validation error because all mutations are validated first.
        self.mutate(mutation_map, cl)
    }

    fn handle_truncate(&self, cfname: String) -> TResult<()> {
        let ks = self.keyspace(true)?;
        self.store(&ks, &cfname)?;
        self.node.storage.truncate(&ks, &cfname).map_err(storage_error)
    }

    fn handle_get_multi_slice(&self, request: t::MultiSliceRequest) -> TResult<Vec<t::ColumnOrSuperColumn>> {
        let key = request.key.ok_or_else(|| ire("MultiSliceRequest.key is required"))?;
        let parent = request.column_parent.ok_or_else(|| ire("MultiSliceRequest.column_parent is required"))?;
        let ks = self.keyspace(false)?;
        let store = self.store(&ks, &parent.column_family)?;
        validate_key(&key)?;
        validate_parent(&store, parent.super_column.as_deref())?;
        if store.cmp.is_super() {
            return Err(ire("get_multi_slice does not support super column families"));
        }
        let reversed = request.reversed.unwrap_or(false);
        let count = request.count.unwrap_or(1000);
        if count < 0 {
            return Err(ire("get_multi_slice requires non-negative count"));
        }
        self.check_cl(&ks, request.consistency_level.unwrap_or(t::ConsistencyLevel::ONE), false)?;
        let ty = store.cmp.name_type();
        let mut slices = Vec::new();
        for s in request.column_slices.unwrap_or_default() {
            let (start, finish) = (s.start.unwrap_or_default(), s.finish.unwrap_or_default());
            check_slice_order(ty, &start, &finish, reversed)?;
            slices.push((start, finish));
        }
        if slices.is_empty() {
            slices.push((Vec::new(), Vec::new()));
        }
        // Slices must be in traversal order and must not overlap.
        for w in slices.windows(2) {
            let (prev_finish, next_start) = (&w[0].1, &w[1].0);
            let bad = prev_finish.is_empty() || next_start.is_empty() || {
                let o = ty.compare(prev_finish, next_start);
                if reversed {
                    o != std::cmp::Ordering::Greater
                } else {
                    o != std::cmp::Ordering::Less
                }
            };
            if bad {
                return Err(ire("column slices must be in order of traversal and must not overlap"));
            }
        }
        let filter = ReadFilter::slices(slices, reversed, count as usize, CountUnit::Cells);
        self.slice(&store, &key, &parent, &filter)
    }

    fn handle_describe_schema_versions(&self) -> TResult<BTreeMap<String, Vec<String>>> {
        let mut m = BTreeMap::new();
        m.insert(self.node.storage.schema_version().to_string(), vec![self.node.listen_address.clone()]);
        Ok(m)
    }

    fn handle_describe_keyspaces(&self) -> TResult<Vec<t::KsDef>> {
        self.require_login()?;
        Ok(self.node.storage.schema().keyspaces.values().map(ks_def_to_thrift).collect())
    }

    fn handle_describe_cluster_name(&self) -> TResult<String> {
        Ok(self.node.cluster_name.clone())
    }

    fn handle_describe_version(&self) -> TResult<String> {
        Ok(thrift_idl::VERSION.to_string())
    }

    fn handle_describe_ring(&self, keyspace: String) -> TResult<Vec<t::TokenRange>> {
        self.describe_ring_of(&keyspace)
    }

    fn handle_describe_local_ring(&self, keyspace: String) -> TResult<Vec<t::TokenRange>> {
        self.describe_ring_of(&keyspace)
    }

    fn handle_describe_token_map(&self) -> TResult<BTreeMap<String, String>> {
        let mut m = BTreeMap::new();
        m.insert(
            self.node.storage.partitioner().token_to_string(&self.node.local_token),
            self.node.listen_address.clone(),
        );
        Ok(m)
    }

    fn handle_describe_partitioner(&self) -> TResult<String> {
        Ok(self.node.storage.partitioner().class_name().to_string())
    }

    fn handle_describe_snitch(&self) -> TResult<String> {
        Ok(self.node.snitch.clone())
    }

    fn handle_describe_keyspace(&self, keyspace: String) -> TResult<t::KsDef> {
        self.require_login()?;
        self.node
            .storage
            .keyspace(&keyspace)
            .map(|k| ks_def_to_thrift(&k))
            .ok_or_else(|| thrift_idl::user_error(t::NotFoundException::new()))
    }

    fn handle_describe_splits(
        &self,
        cf_name: String,
        start_token: String,
        end_token: String,
        keys_per_split: i32,
    ) -> TResult<Vec<String>> {
        let splits = self.splits(&cf_name, &start_token, &end_token, keys_per_split)?;
        let mut out: Vec<String> = splits.iter().map(|(s, _, _)| s.clone()).collect();
        if let Some((_, e, _)) = splits.last() {
            out.push(e.clone());
        }
        Ok(out)
    }

    fn handle_trace_next_query(&self) -> TResult<Vec<u8>> {
        // A time-based id, as Cassandra's trace sessions. The trace of the next request goes to
        // the server log under this id (there is no system_traces keyspace yet).
        let id = Uuid::now_v1(&NODE_ID);
        self.session.lock().trace_next = Some(id);
        Ok(id.as_bytes().to_vec())
    }

    fn handle_describe_splits_ex(
        &self,
        cf_name: String,
        start_token: String,
        end_token: String,
        keys_per_split: i32,
    ) -> TResult<Vec<t::CfSplit>> {
        let splits = self.splits(&cf_name, &start_token, &end_token, keys_per_split)?;
        Ok(splits.into_iter().map(|(s, e, n)| t::CfSplit { start_token: s, end_token: e, row_count: n }).collect())
    }

    fn handle_system_add_column_family(&self, cf_def: t::CfDef) -> TResult<String> {
        if is_reserved(&cf_def.keyspace) {
            return Err(ire(format!("{} keyspace is not user-modifiable", cf_def.keyspace)));
        }
        self.authorize_write_to(&cf_def.keyspace)?;
        if !self.node.storage.has_keyspace(&cf_def.keyspace) {
            return Err(ire(format!("Keyspace '{}' does not exist", cf_def.keyspace)));
        }
        let def = cf_def_from_thrift(cf_def, None).map_err(ire)?;
        self.node.storage.add_column_family(def).map(|v| v.to_string()).map_err(storage_error)
    }

    fn handle_system_drop_column_family(&self, column_family: String) -> TResult<String> {
        let ks = self.keyspace(true)?;
        self.node.storage.drop_column_family(&ks, &column_family).map(|v| v.to_string()).map_err(storage_error)
    }

    fn handle_system_add_keyspace(&self, ks_def: t::KsDef) -> TResult<String> {
        self.authorize_keyspace_change()?;
        if is_reserved(&ks_def.name) {
            return Err(ire(format!("{} is a reserved keyspace name", ks_def.name)));
        }
        let def = ks_def_from_thrift(ks_def).map_err(ire)?;
        self.node.storage.add_keyspace(def).map(|v| v.to_string()).map_err(storage_error)
    }

    fn handle_system_drop_keyspace(&self, keyspace: String) -> TResult<String> {
        self.authorize_keyspace_change()?;
        if is_reserved(&keyspace) {
            return Err(ire(format!("{keyspace} is a reserved keyspace and cannot be dropped")));
        }
        self.node.storage.drop_keyspace(&keyspace).map(|v| v.to_string()).map_err(storage_error)
    }

    fn handle_system_update_keyspace(&self, ks_def: t::KsDef) -> TResult<String> {
        self.authorize_keyspace_change()?;
        if is_reserved(&ks_def.name) {
            return Err(ire(format!("{} keyspace is not user-modifiable", ks_def.name)));
        }
        if !ks_def.cf_defs.is_empty() {
            return Err(ire("Keyspace update must not contain any table definitions."));
        }
        if !self.node.storage.has_keyspace(&ks_def.name) {
            return Err(ire(format!("Keyspace '{}' does not exist", ks_def.name)));
        }
        let def = ks_def_from_thrift(ks_def).map_err(ire)?;
        self.node.storage.update_keyspace(def).map(|v| v.to_string()).map_err(storage_error)
    }

    fn handle_system_update_column_family(&self, cf_def: t::CfDef) -> TResult<String> {
        if is_reserved(&cf_def.keyspace) {
            return Err(ire(format!("{} keyspace is not user-modifiable", cf_def.keyspace)));
        }
        self.authorize_write_to(&cf_def.keyspace)?;
        let existing = self.store(&cf_def.keyspace, &cf_def.name)?.def();
        let def = cf_def_from_thrift(cf_def, Some(&existing)).map_err(ire)?;
        self.node.storage.update_column_family(def).map(|v| v.to_string()).map_err(storage_error)
    }

    fn handle_execute_cql_query(&self, _query: Vec<u8>, _compression: t::Compression) -> TResult<t::CqlResult> {
        Err(not_supported("CQL (execute_cql_query)"))
    }

    fn handle_execute_cql3_query(
        &self,
        _query: Vec<u8>,
        _compression: t::Compression,
        _cl: t::ConsistencyLevel,
    ) -> TResult<t::CqlResult> {
        Err(not_supported("CQL (execute_cql3_query)"))
    }

    fn handle_prepare_cql_query(&self, _query: Vec<u8>, _compression: t::Compression) -> TResult<t::CqlPreparedResult> {
        Err(not_supported("CQL (prepare_cql_query)"))
    }

    fn handle_prepare_cql3_query(
        &self,
        _query: Vec<u8>,
        _compression: t::Compression,
    ) -> TResult<t::CqlPreparedResult> {
        Err(not_supported("CQL (prepare_cql3_query)"))
    }

    fn handle_execute_prepared_cql_query(&self, _item_id: i32, _values: Vec<Vec<u8>>) -> TResult<t::CqlResult> {
        Err(not_supported("CQL (execute_prepared_cql_query)"))
    }

    fn handle_execute_prepared_cql3_query(
        &self,
        _item_id: i32,
        _values: Vec<Vec<u8>>,
        _cl: t::ConsistencyLevel,
    ) -> TResult<t::CqlResult> {
        Err(not_supported("CQL (execute_prepared_cql3_query)"))
    }

    fn handle_set_cql_version(&self, _version: String) -> TResult<()> {
        Err(not_supported("CQL (set_cql_version)"))
    }
}

/// Node part of the time-based trace session ids.
const NODE_ID: [u8; 6] = *b"sibyl!";

fn is_reserved(name: &str) -> bool {
    ["system", "system_auth", "system_traces", "system_distributed", "system_schema"]
        .iter()
        .any(|r| r.eq_ignore_ascii_case(name))
}
