//! How the schema changes, wherever the change comes from (Cassandra's `DefsTables.mergeSchema`).
//!
//! ```text
//! local change (system_* call) → diff against the current schema → mutations of the schema tables ─┐
//! mutations from another node (merge_schema) → checked, cells put in comparator order ────────────┤
//!                      apply through the write path → read the schema back from the tables ←─────┘
//!                      → install: open new column families, update changed ones, drop removed ones
//! ```
//!
//! The installed schema is always the one read back from the tables, never the edited copy, so a
//! node's schema is a function of the rows it holds: nodes that exchanged all their rows agree,
//! whatever the order, and merging the same rows again changes nothing.
//!
//! Lock order: `schema_lock` (held by one change or merge from start to end) → a column family's
//! `flush_lock` → `state_lock`. Truncate takes a flush lock then the state lock, never the schema
//! lock.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use tracing::{error, info, warn};
use uuid::Uuid;

use super::{recovery, Storage};
use crate::cfs::ColumnFamilyStore;
use crate::data::{now_seconds, Row};
use crate::dht::KeyBound;
use crate::error::{Result, StorageError};
use crate::filter::{compact_row, insert_cell};
use crate::mutation::RowMutation;
use crate::schema::{valid_name, CfDef, KeyspaceDef, Schema};
use crate::system::{self, schema_tables};

impl Storage {
    /// The rows of the schema tables as mutations, one per keyspace, tombstones included: what
    /// another node needs to reach this node's schema with [`Storage::merge_schema`].
    pub fn schema_mutations(&self) -> Result<Vec<RowMutation>> {
        let now = now_seconds();
        let mut by_key: BTreeMap<Vec<u8>, RowMutation> = BTreeMap::new();
        for cf in [system::SCHEMA_KEYSPACES_CF, system::SCHEMA_COLUMNFAMILIES_CF] {
            let store = self.store(system::KEYSPACE, cf)?;
            for item in store.scan(&KeyBound::Unbounded)? {
                let (key, row) = item?;
                // Leave out cells the row's own tombstones shadow; keep every tombstone.
                let row = compact_row(&store.cmp, row, now, i32::MIN, false);
                if row.is_empty() {
                    continue;
                }
                let m = by_key.entry(key.key.clone()).or_insert_with(|| RowMutation::new(system::KEYSPACE, key.key));
                m.updates.push((cf.to_string(), row));
            }
        }
        Ok(by_key.into_values().collect())
    }

    /// Merges schema rows from another node (or several) into this one's: applies them to the
    /// schema tables, where reconciliation decides between versions of a cell, reads the schema
    /// back and installs it, flushes the tables and returns the new schema version. Only rows of
    /// `system.schema_keyspaces` and `system.schema_columnfamilies` keyed by a keyspace name are
    /// accepted; anything else refuses the whole batch before any of it is applied.
    pub fn merge_schema(&self, mutations: Vec<RowMutation>) -> Result<Uuid> {
        let mut checked = Vec::with_capacity(mutations.len());
        let mut newest = i64::MIN;
        for m in mutations {
            let refuse = |cf: &str| StorageError::InvalidSchemaMutation {
                keyspace: m.keyspace.clone(),
                cf: cf.to_string(),
                key: String::from_utf8_lossy(&m.key).into_owned(),
            };
            let name_ok = std::str::from_utf8(&m.key).is_ok_and(|k| valid_name(k) && !system::is_builtin_keyspace(k));
            if m.keyspace != system::KEYSPACE || !name_ok {
                let cf = m.updates.first().map(|(cf, _)| cf.as_str()).unwrap_or_default();
                return Err(refuse(cf));
            }
            let mut clean = RowMutation::new(system::KEYSPACE, m.key.clone());
            for (cf, row) in &m.updates {
                if !system::is_schema_cf(cf) {
                    return Err(refuse(cf));
                }
                newest = newest.max(newest_timestamp(row));
                // The write path expects cells sorted and unique; a peer's rows are not trusted to be.
                let store = self.store(system::KEYSPACE, cf)?;
                let target = clean.row_mut(cf);
                target.deletion = target.deletion.max(row.deletion);
                target.range_tombstones.extend(row.range_tombstones.iter().cloned());
                for cell in &row.cells {
                    insert_cell(&store.cmp, &mut target.cells, cell.clone());
                }
            }
            if !clean.updates.is_empty() {
                checked.push(clean);
            }
        }
        let _schema = self.inner.schema_lock.lock();
        // Local changes made after this merge must win over what it brought.
        self.advance_system_timestamp(newest);
        self.apply_schema_mutations(checked)
    }

    /// Applies a local change: `change` edits a copy of the schema; the result is validated,
    /// written to the schema tables as the difference from the current schema, and installed.
    /// Returns the new schema version.
    pub(super) fn change_schema(&self, change: impl FnOnce(&mut Schema) -> Result<()>) -> Result<Uuid> {
        let _schema = self.inner.schema_lock.lock();
        self.change_schema_locked(change)
    }

    /// [`Storage::change_schema`] for a caller holding the schema lock.
    pub(super) fn change_schema_locked(&self, change: impl FnOnce(&mut Schema) -> Result<()>) -> Result<Uuid> {
        let timestamp = self.next_system_timestamp();
        self.change_schema_locked_at(timestamp, change)
    }

    /// [`Storage::change_schema_locked`] with the schema rows written at `timestamp`.
    pub(super) fn change_schema_locked_at(
        &self,
        timestamp: i64,
        change: impl FnOnce(&mut Schema) -> Result<()>,
    ) -> Result<Uuid> {
        let current = self.schema();
        let mut schema = current.clone();
        change(&mut schema)?;
        for ks in schema.keyspaces.values_mut().filter(|k| !system::is_builtin_keyspace(&k.name)) {
            crate::schema::assign_index_names(ks);
        }
        for builtin in system::builtin_keyspaces() {
            if schema.keyspaces.get(&builtin.name) != current.keyspaces.get(&builtin.name) {
                return Err(StorageError::InvalidSchema(format!("the {} keyspace cannot be changed", builtin.name)));
            }
        }
        let mut ids: HashMap<Uuid, (&str, &str)> = HashMap::new();
        for ks in schema.keyspaces.values() {
            ks.validate().map_err(StorageError::InvalidSchema)?;
            for cf in &ks.cf_defs {
                if let Some((other_ks, other_cf)) = ids.insert(cf.id, (&ks.name, &cf.name)) {
                    return Err(StorageError::InvalidSchema(format!(
                        "column family {}.{} has the id {} of {other_ks}.{other_cf}",
                        ks.name, cf.name, cf.id
                    )));
                }
            }
        }
        let mutations = schema_tables::diff_mutations(&current.keyspaces, &schema.keyspaces, timestamp, now_seconds())?;
        self.apply_schema_mutations(mutations)
    }

    /// Writes schema table mutations through the ordinary write path, then installs the schema
    /// the tables now hold. The caller holds the schema lock.
    pub(super) fn apply_schema_mutations(&self, mutations: Vec<RowMutation>) -> Result<Uuid> {
        for m in mutations {
            self.apply(m)?;
        }
        let mut newest = i64::MIN;
        let decoded = recovery::read_schema_tables(
            &self.store(system::KEYSPACE, system::SCHEMA_KEYSPACES_CF)?,
            &self.store(system::KEYSPACE, system::SCHEMA_COLUMNFAMILIES_CF)?,
            &mut newest,
        )?;
        let version = self.install_schema(decoded.keyspaces)?;
        self.refresh_schema_rows()?;
        for cf in [system::SCHEMA_KEYSPACES_CF, system::SCHEMA_COLUMNFAMILIES_CF] {
            let store = self.store(system::KEYSPACE, cf)?;
            self.flush_store(&store)?;
        }
        Ok(version)
    }

    /// Makes `keyspaces` (user keyspaces) the engine's schema: opens stores for new column
    /// families, gives changed ones their new definition, then publishes the schema, saves its
    /// version in `system.local`, and only then removes dropped column families and keyspaces
    /// from disk. The caller holds the schema lock.
    fn install_schema(&self, mut keyspaces: BTreeMap<String, KeyspaceDef>) -> Result<Uuid> {
        for builtin in system::builtin_keyspaces() {
            keyspaces.insert(builtin.name.clone(), builtin);
        }
        let version = schema_tables::schema_version(&keyspaces)?;
        let schema = Schema { keyspaces, version };
        let new_defs: BTreeMap<Uuid, &CfDef> =
            schema.keyspaces.values().flat_map(|k| k.cf_defs.iter()).map(|c| (c.id, c)).collect();

        let mut stores = self.inner.stores.read().clone();
        let old_schema = std::mem::take(&mut stores.schema);
        let mut to_build = Vec::new();
        for (id, def) in &new_defs {
            match stores.by_id.get(id) {
                Some(store) if store.metadata().def != **def => {
                    store.set_def((*def).clone())?;
                    for index in self.sync_indexes(store, def)? {
                        to_build.push((store.clone(), index));
                    }
                }
                Some(_) => {}
                None => {
                    let store = recovery::open_store(&self.inner.config, (*def).clone(), &self.inner.cache)?;
                    let store = Arc::new(store);
                    for index in self.sync_indexes(&store, def)? {
                        to_build.push((store.clone(), index));
                    }
                    stores.by_id.insert(*id, store);
                }
            }
        }
        let dropped: Vec<Arc<ColumnFamilyStore>> =
            stores.by_id.values().filter(|s| !new_defs.contains_key(&s.id)).cloned().collect();
        for d in &dropped {
            for index in d.indexes().iter() {
                index.mark_dropped();
            }
        }
        for d in &dropped {
            stores.by_id.remove(&d.id);
        }
        stores.by_name = FxHashMap::default();
        for s in stores.by_id.values() {
            stores.by_name.entry(s.keyspace.clone()).or_default().insert(s.name.clone(), s.clone());
        }
        let removed_keyspaces: Vec<String> =
            old_schema.keyspaces.keys().filter(|k| !schema.keyspaces.contains_key(*k)).cloned().collect();
        stores.schema = schema;
        *self.inner.stores.write() = stores;
        // After the swap: a reader that sees the new generation also sees the new stores (and
        // the column family definitions set above).
        self.inner.schema_generation.store(super::next_schema_generation(), Ordering::Release);
        for (store, index) in to_build {
            self.start_index_build(&store, index);
        }

        if version != old_schema.version || !dropped.is_empty() {
            info!(%version, dropped = dropped.len(), "schema changed");
            self.update_local(|state| {
                state.local.schema_version = version;
                for d in &dropped {
                    state.truncated_at.remove(&d.id);
                }
                Ok(())
            })?;
        }
        let mut kept = Vec::new();
        for d in dropped {
            // Taken before the commit log forgets the column family, so a crash meanwhile
            // replays its writes rather than losing them.
            let snapshot = self.auto_snapshot(&d, "dropped");
            let _guard = d.flush_lock.lock();
            self.inner.commitlog.forget_cf(d.id)?;
            if let Err(e) = snapshot {
                error!(keyspace = %d.keyspace, cf = %d.name, dir = %d.dir.display(), error = %e,
                       "AutoSnapshot of a dropped column family failed; its files stay where they are");
                kept.push(d.keyspace.clone());
                continue;
            }
            // In every data directory: each holds part of its SSTables and perhaps snapshots.
            for dir in d.sstable_dirs() {
                if let Err(e) = super::snapshot::remove_keeping_snapshots(dir) {
                    warn!(dir = %dir.display(), error = %e, "cannot remove dropped column family's files");
                }
            }
        }
        for name in removed_keyspaces.into_iter().filter(|name| !kept.contains(name)) {
            for data_dir in self.inner.config.data_dirs() {
                let dir = data_dir.join(&name);
                if dir.exists() {
                    if let Err(e) = super::snapshot::remove_keeping_snapshots(&dir) {
                        warn!(dir = %dir.display(), error = %e, "cannot remove dropped keyspace's directory");
                    }
                }
            }
        }
        Ok(version)
    }

    /// Converts keyspaces found in the old layout (one JSON `definition` per keyspace) at start.
    /// The caller holds the schema lock.
    pub(super) fn convert_legacy_schema(&self, legacy: &[KeyspaceDef]) -> Result<()> {
        if legacy.is_empty() {
            return Ok(());
        }
        let timestamp = self.next_system_timestamp();
        let mutations = schema_tables::convert_legacy(legacy, timestamp, now_seconds())?;
        let version = self.apply_schema_mutations(mutations)?;
        let names: Vec<&str> = legacy.iter().map(|k| k.name.as_str()).collect();
        info!(
            keyspaces = ?names, %version,
            "converted the schema from the old format (one JSON definition per keyspace) to schema_keyspaces \
             and schema_columnfamilies rows"
        );
        Ok(())
    }
}

/// The newest timestamp a row carries (cells and tombstones).
fn newest_timestamp(row: &Row) -> i64 {
    let cells = row.cells.iter().map(|c| c.timestamp);
    let ranges = row.range_tombstones.iter().map(|r| r.deletion.marked_at);
    cells.chain(ranges).fold(row.deletion.marked_at, i64::max)
}
