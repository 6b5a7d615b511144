//! The engine's schema: looking definitions up, and the changes the Thrift `system_*` calls make
//! (each one saved in the schema tables and flushed before it returns; see [`super::schema_change`]
//! for how a change is written, merged and installed).

use std::sync::Arc;

use uuid::Uuid;

use super::Storage;
use crate::cfs::ColumnFamilyStore;
use crate::error::{Result, StorageError};
use crate::schema::{CfDef, CfMetadata, KeyspaceDef};

impl Storage {
    pub fn schema(&self) -> crate::schema::Schema {
        self.inner.stores.read().schema.clone()
    }

    /// A digest of every user keyspace's definition: the same on every node holding the same
    /// schema, and across restarts.
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
        self.change_schema(|s| {
            s.keyspaces.remove(name).map(|_| ()).ok_or_else(|| StorageError::UnknownKeyspace(name.into()))
        })
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
            if old.is_counter() != def.is_counter() {
                // Counter cells and plain cells reconcile differently: one CF never holds both.
                return Err(StorageError::InvalidSchema(format!(
                    "Cannot change column family {} between counter and non counter (default_validation_class)",
                    def.name
                )));
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
}
