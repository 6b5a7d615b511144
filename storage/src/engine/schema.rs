//! The engine's schema: looking definitions up, changing them (each change is saved in the
//! system keyspace and flushed before it returns), and the node's own saved state.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use tracing::warn;
use uuid::Uuid;

use super::{recovery, Storage};
use crate::cfs::ColumnFamilyStore;
use crate::data::{now_seconds, DeletionTime, RangeTombstone};
use crate::error::{Result, StorageError};
use crate::mutation::RowMutation;
use crate::schema::{CfDef, CfMetadata, KeyspaceDef, Schema};
use crate::system::{self, SystemState};

impl Storage {
    pub fn schema(&self) -> Schema {
        self.inner.stores.read().schema.clone()
    }

    pub fn schema_version(&self) -> Uuid {
        self.inner.stores.read().schema.version
    }

    /// Runs `f` on a keyspace's definition without copying it.
    pub fn with_keyspace<R>(&self, name: &str, f: impl FnOnce(&KeyspaceDef) -> R) -> Option<R> {
        self.inner.stores.read().schema.keyspaces.get(name).map(f)
    }

    pub fn has_keyspace(&self, name: &str) -> bool {
        self.inner.stores.read().schema.keyspaces.contains_key(name)
    }

    pub fn keyspace(&self, name: &str) -> Option<KeyspaceDef> {
        self.inner.stores.read().schema.keyspaces.get(name).cloned()
    }

    /// A column family's definition with its comparator and validators, shared and immutable:
    /// a later schema change makes a new one.
    pub fn cf_metadata(&self, keyspace: &str, cf: &str) -> Result<Arc<CfMetadata>> {
        self.store(keyspace, cf).map(|s| s.metadata())
    }

    /// Every column family as (keyspace, name), in that order.
    pub fn column_families(&self) -> Vec<(String, String)> {
        let stores = self.inner.stores.read();
        let mut names: Vec<(String, String)> =
            stores.by_name.iter().flat_map(|(ks, cfs)| cfs.keys().map(move |cf| (ks.clone(), cf.clone()))).collect();
        names.sort();
        names
    }

    pub(crate) fn store(&self, keyspace: &str, cf: &str) -> Result<Arc<ColumnFamilyStore>> {
        let stores = self.inner.stores.read();
        if let Some(s) = stores.by_name.get(keyspace).and_then(|k| k.get(cf)) {
            return Ok(s.clone());
        }
        if stores.schema.keyspaces.contains_key(keyspace) {
            Err(StorageError::UnknownColumnFamily { keyspace: keyspace.into(), cf: cf.into() })
        } else {
            Err(StorageError::UnknownKeyspace(keyspace.into()))
        }
    }

    pub(crate) fn all_stores(&self) -> Vec<Arc<ColumnFamilyStore>> {
        self.inner.stores.read().by_id.values().cloned().collect()
    }

    pub fn add_keyspace(&self, mut def: KeyspaceDef) -> Result<Uuid> {
        for cf in &mut def.cf_defs {
            cf.keyspace = def.name.clone();
        }
        self.change_schema(|s| {
            if s.keyspaces.keys().any(|k| k.eq_ignore_ascii_case(&def.name)) {
                return Err(StorageError::KeyspaceExists(def.name.clone()));
            }
            s.keyspaces.insert(def.name.clone(), def);
            Ok(())
        })
    }

    /// Changes a keyspace's replication options (not its column families).
    pub fn update_keyspace(&self, def: KeyspaceDef) -> Result<Uuid> {
        self.change_schema(|s| {
            let ks = s.keyspaces.get_mut(&def.name).ok_or_else(|| StorageError::UnknownKeyspace(def.name.clone()))?;
            ks.strategy_class = def.strategy_class;
            ks.strategy_options = def.strategy_options;
            ks.durable_writes = def.durable_writes;
            Ok(())
        })
    }

    pub fn drop_keyspace(&self, name: &str) -> Result<Uuid> {
        let version = self.change_schema(|s| {
            s.keyspaces.remove(name).map(|_| ()).ok_or_else(|| StorageError::UnknownKeyspace(name.into()))
        })?;
        let dir = self.inner.config.data_dir.join(name);
        if dir.exists() {
            let _ = std::fs::remove_dir_all(&dir);
        }
        Ok(version)
    }

    pub fn add_column_family(&self, def: CfDef) -> Result<Uuid> {
        self.change_schema(|s| {
            let ks = s
                .keyspaces
                .get_mut(&def.keyspace)
                .ok_or_else(|| StorageError::UnknownKeyspace(def.keyspace.clone()))?;
            if ks.cf_defs.iter().any(|c| c.name.eq_ignore_ascii_case(&def.name)) {
                return Err(StorageError::ColumnFamilyExists { keyspace: def.keyspace.clone(), cf: def.name.clone() });
            }
            ks.cf_defs.push(def);
            Ok(())
        })
    }

    /// Replaces a column family's options; the id, type and comparators cannot change.
    pub fn update_column_family(&self, def: CfDef) -> Result<Uuid> {
        self.change_schema(|s| {
            let ks = s
                .keyspaces
                .get_mut(&def.keyspace)
                .ok_or_else(|| StorageError::UnknownKeyspace(def.keyspace.clone()))?;
            let old = ks.cf_defs.iter_mut().find(|c| c.name == def.name).ok_or_else(|| {
                StorageError::UnknownColumnFamily { keyspace: def.keyspace.clone(), cf: def.name.clone() }
            })?;
            if old.column_type != def.column_type {
                return Err(StorageError::InvalidSchema("cannot modify column_type".into()));
            }
            if old.comparator()? != def.comparator()? || old.subcomparator()? != def.subcomparator()? {
                return Err(StorageError::InvalidSchema("cannot modify comparator or subcomparator".into()));
            }
            let id = old.id;
            let thrift_id = old.thrift_id;
            *old = CfDef { id, thrift_id, ..def };
            Ok(())
        })
    }

    pub fn drop_column_family(&self, keyspace: &str, cf: &str) -> Result<Uuid> {
        self.change_schema(|s| {
            let ks = s.keyspaces.get_mut(keyspace).ok_or_else(|| StorageError::UnknownKeyspace(keyspace.into()))?;
            let before = ks.cf_defs.len();
            ks.cf_defs.retain(|c| c.name != cf);
            if ks.cf_defs.len() == before {
                return Err(StorageError::UnknownColumnFamily { keyspace: keyspace.into(), cf: cf.into() });
            }
            Ok(())
        })
    }

    /// Applies a schema change: `change` edits a copy of the schema; the result is validated,
    /// saved, then stores are opened or removed to match. Returns the new schema version.
    fn change_schema(&self, change: impl FnOnce(&mut Schema) -> Result<()>) -> Result<Uuid> {
        let mut state = self.inner.state_lock.lock();
        let mut schema = state.schema.clone();
        change(&mut schema)?;
        if schema.keyspaces.get(system::KEYSPACE) != state.schema.keyspaces.get(system::KEYSPACE) {
            return Err(StorageError::InvalidSchema("the system keyspace cannot be changed".into()));
        }
        for ks in schema.keyspaces.values() {
            ks.validate().map_err(StorageError::InvalidSchema)?;
        }
        schema.version = Uuid::new_v4();

        let old_ids: HashMap<Uuid, ()> =
            state.schema.keyspaces.values().flat_map(|k| k.cf_defs.iter()).map(|c| (c.id, ())).collect();
        let new_defs: BTreeMap<Uuid, CfDef> =
            schema.keyspaces.values().flat_map(|k| k.cf_defs.iter()).map(|c| (c.id, c.clone())).collect();

        // Open stores for new column families before publishing the schema.
        let mut stores = self.inner.stores.read().clone();
        for (id, def) in &new_defs {
            if !old_ids.contains_key(id) {
                let store = recovery::open_store(&self.inner.config.data_dir, def.clone(), &self.inner.cache)?;
                stores.by_id.insert(*id, Arc::new(store));
            } else if let Some(store) = stores.by_id.get(id) {
                store.set_def(def.clone())?;
            }
        }
        let dropped: Vec<Arc<ColumnFamilyStore>> =
            stores.by_id.values().filter(|s| !new_defs.contains_key(&s.id)).cloned().collect();
        for d in &dropped {
            stores.by_id.remove(&d.id);
            state.truncated_at.remove(&d.id);
        }
        stores.by_name = HashMap::new();
        for s in stores.by_id.values() {
            stores.by_name.entry(s.keyspace.clone()).or_default().insert(s.name.clone(), s.clone());
        }
        stores.schema = schema.clone();

        let changed: Vec<KeyspaceDef> = schema
            .keyspaces
            .values()
            .filter(|k| k.name != system::KEYSPACE && state.schema.keyspaces.get(&k.name) != Some(*k))
            .cloned()
            .collect();
        let removed: Vec<String> =
            state.schema.keyspaces.keys().filter(|k| !schema.keyspaces.contains_key(*k)).cloned().collect();
        state.schema = schema;
        // Publish the stores first: persisting writes through them.
        *self.inner.stores.write() = stores;
        let snapshot = state.clone();
        let version = snapshot.schema.version;
        drop(state);
        self.persist_system(changed.iter(), &removed, &snapshot)?;

        // Lock order: never take a column family's flush lock while holding the state lock.
        for d in dropped {
            let _guard = d.flush_lock.lock();
            self.inner.commitlog.forget_cf(d.id)?;
            if let Err(e) = std::fs::remove_dir_all(&d.dir) {
                warn!(dir = %d.dir.display(), error = %e, "cannot remove dropped column family's files");
            }
        }
        Ok(version)
    }

    /// Writes keyspace definitions, keyspace deletions and the local row to the system
    /// keyspace through the ordinary write path, then flushes it.
    pub(super) fn persist_system<'a>(
        &self,
        keyspaces: impl Iterator<Item = &'a KeyspaceDef>,
        removed: &[String],
        state: &SystemState,
    ) -> Result<()> {
        let ts = self.next_system_timestamp();
        for ks in keyspaces {
            let mut m = RowMutation::new(system::KEYSPACE, ks.name.clone().into_bytes());
            *m.row_mut(system::SCHEMA_CF) = system::keyspace_row(ks, ts)?;
            self.apply(m)?;
        }
        for name in removed {
            let mut m = RowMutation::new(system::KEYSPACE, name.clone().into_bytes());
            *m.row_mut(system::SCHEMA_CF) = system::keyspace_tombstone(ts, now_seconds());
            self.apply(m)?;
        }
        let mut m = RowMutation::new(system::KEYSPACE, system::LOCAL_KEY.to_vec());
        let mut local = system::local_row(state, ts);
        // Columns that are gone (a forgotten truncation point) are deleted by this row's
        // range of names: everything older than this write.
        local.range_tombstones.push(RangeTombstone {
            start: Vec::new(),
            end: Vec::new(),
            deletion: DeletionTime::new(ts - 1, now_seconds()),
        });
        *m.row_mut(system::LOCAL_CF) = local;
        self.apply(m)?;
        for cf in [system::SCHEMA_CF, system::LOCAL_CF] {
            let store = self.store(system::KEYSPACE, cf)?;
            self.flush_store(&store)?;
        }
        Ok(())
    }

    /// Strictly increasing timestamps for system writes, even within one microsecond.
    fn next_system_timestamp(&self) -> i64 {
        let mut last = self.inner.last_system_timestamp.lock();
        *last = (*last + 1).max(crate::data::now_micros());
        *last
    }

    /// The token this node took on its first start, if any.
    pub fn saved_token(&self) -> Option<String> {
        self.inner.state_lock.lock().local_token.clone()
    }

    /// Records this node's token durably.
    pub fn save_token(&self, token: String) -> Result<()> {
        let snapshot = {
            let mut state = self.inner.state_lock.lock();
            state.local_token = Some(token);
            state.clone()
        };
        self.persist_system(std::iter::empty(), &[], &snapshot)
    }
}
