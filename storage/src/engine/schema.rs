//! The engine's schema: looking definitions up, and the changes the Thrift `system_*` calls make
//! (each one saved in the schema tables and flushed before it returns; see [`super::schema_change`]
//! for how a change is written, merged and installed).

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use uuid::Uuid;

use super::Storage;
use crate::cfs::ColumnFamilyStore;
use crate::error::{Result, StorageError};
use crate::schema::{CfDef, CfMetadata, KeyspaceDef, UserTypeDef};

/// The column family a thread last asked its engine for, for as long as the schema does not
/// change: a connection's requests nearly always name the same column family, and the lookup
/// (the stores' lock, two hashed names) was about 230 instructions, paid twice by a read of
/// 8,500 (its definition, then its data) and by an insert; the definition from the store was
/// four atomic read-modify-writes more. The store is weak, so that a dropped column family's
/// files are not kept open by an idle thread; the definition holds no file and is kept strong.
struct LastColumnFamily {
    generation: u64,
    store: Weak<ColumnFamilyStore>,
    metadata: Arc<CfMetadata>,
    /// Its keyspace's `durable_writes`, asked by every write.
    durable_writes: bool,
}

thread_local! {
    static LAST: RefCell<Option<LastColumnFamily>> = const { RefCell::new(None) };
}

/// What `take` gives of this thread's last column family, if it is `keyspace`.`cf` of the
/// schema at `generation`.
fn remembered<T>(
    generation: u64,
    keyspace: &str,
    cf: &str,
    take: impl FnOnce(&LastColumnFamily) -> Option<T>,
) -> Option<T> {
    LAST.with_borrow(|last| match last {
        Some(l) if l.generation == generation && l.metadata.name() == cf && l.metadata.keyspace() == keyspace => {
            take(l)
        }
        _ => None,
    })
}

impl Storage {
    pub fn schema(&self) -> crate::schema::Schema {
        self.inner.stores.read().schema.clone()
    }

    /// A number that changes after every schema change, read without a lock: a cache of
    /// anything derived from the schema (a column family's store, a keyspace's replication) is
    /// still good while this returns what it returned when the entry was made. Read it before
    /// deriving the entry, so that a change racing with that leaves the entry stale rather than
    /// wrong. Unique in the process, across engines.
    pub fn schema_generation(&self) -> u64 {
        self.inner.schema_generation.load(Ordering::Acquire)
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

    /// Where the keyspaces of the configuration (`StorageConfig::initial_keyspaces`, the
    /// `<Keyspaces>` of storage-conf.xml) differ from the schema in effect, one note per
    /// keyspace. The file's keyspaces are written only at a node's first start; after that the
    /// schema changes through the API and is shared by the cluster, so an edit of the file does
    /// nothing (Cassandra 0.6 read it at every start): the notes say so, for the start-up log.
    pub fn configured_schema_drift(&self) -> Vec<String> {
        let advice = "storage-conf.xml's <Keyspaces> are read only at a node's first start; \
                      change the schema with sibyl-cli or the Thrift system_* calls";
        let mut notes = Vec::new();
        for configured in &self.inner.config.initial_keyspaces {
            let mut expected = configured.clone();
            crate::schema::assign_index_names(&mut expected);
            for cf in &mut expected.cf_defs {
                cf.keyspace = expected.name.clone();
            }
            // The schema keeps column families in its own order.
            let same_definitions = |mut live: KeyspaceDef, expected: &KeyspaceDef| {
                let mut expected = expected.clone();
                live.cf_defs.sort_by(|a, b| a.name.cmp(&b.name));
                expected.cf_defs.sort_by(|a, b| a.name.cmp(&b.name));
                live == expected
            };
            match self.keyspace(&configured.name) {
                None => notes.push(format!(
                    "keyspace {} of the configuration is not in the schema (dropped since the first start?); {advice}",
                    configured.name
                )),
                Some(live) => {
                    if !same_definitions(live, &expected) {
                        notes.push(format!(
                            "keyspace {} differs from its definition in the configuration (changed through the \
                             API, or the file edited since the first start); the schema in effect is used; {advice}",
                            configured.name
                        ));
                    }
                }
            }
        }
        notes
    }

    pub fn keyspace(&self, name: &str) -> Option<KeyspaceDef> {
        self.inner.stores.read().schema.keyspaces.get(name).cloned()
    }

    /// A column family's definition with its comparator and validators, shared and immutable:
    /// a later schema change makes a new one. Every request asks for it first; the thread's
    /// last column family (`LastColumnFamily`) answers without a lookup.
    pub fn cf_metadata(&self, keyspace: &str, cf: &str) -> Result<Arc<CfMetadata>> {
        let generation = self.schema_generation();
        if let Some(m) = remembered(generation, keyspace, cf, |last| Some(last.metadata.clone())) {
            return Ok(m);
        }
        Ok(self.store(keyspace, cf)?.metadata())
    }

    /// [`crate::schema::Schema::durable_writes`] of `keyspace`. When `cf` of that keyspace is the
    /// thread's last column family (as after [`Storage::store`] of it), that answers without
    /// taking the schema lock.
    pub(crate) fn durable_writes(&self, keyspace: &str, cf: &str) -> bool {
        let generation = self.schema_generation();
        if let Some(durable) = remembered(generation, keyspace, cf, |last| Some(last.durable_writes)) {
            return durable;
        }
        self.inner.stores.read().schema.durable_writes(keyspace)
    }

    /// Every column family as (keyspace, name), in that order.
    pub fn column_families(&self) -> Vec<(String, String)> {
        let stores = self.inner.stores.read();
        let mut names: Vec<(String, String)> =
            stores.by_name.iter().flat_map(|(ks, cfs)| cfs.keys().map(move |cf| (ks.clone(), cf.clone()))).collect();
        names.sort();
        names
    }

    /// A column family's store; the thread's last column family (`LastColumnFamily`) answers
    /// without a lookup.
    pub(crate) fn store(&self, keyspace: &str, cf: &str) -> Result<Arc<ColumnFamilyStore>> {
        // Read before the lookup (see schema_generation). Generations are unique in the
        // process, so another engine's entry never matches.
        let generation = self.schema_generation();
        if let Some(s) = remembered(generation, keyspace, cf, |last| last.store.upgrade()) {
            return Ok(s);
        }
        let stores = self.inner.stores.read();
        if let Some(s) = stores.by_name.get(keyspace).and_then(|k| k.get(cf)) {
            let durable_writes = stores.schema.durable_writes(keyspace);
            LAST.set(Some(LastColumnFamily {
                generation,
                store: Arc::downgrade(s),
                metadata: s.metadata(),
                durable_writes,
            }));
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
            if let Some(existing) = s.keyspaces.keys().find(|k| k.eq_ignore_ascii_case(&def.name)) {
                return Err(StorageError::KeyspaceExists { name: def.name.clone(), existing: existing.clone() });
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

    /// Replaces a keyspace's user types and, in the same schema change, the definitions of its
    /// column families that use a changed type (their type strings carry the type whole). The
    /// column families keep their ids.
    pub fn update_user_types(&self, keyspace: &str, types: Vec<UserTypeDef>, tables: Vec<CfDef>) -> Result<Uuid> {
        self.change_schema(|s| {
            let ks = s.keyspaces.get_mut(keyspace).ok_or_else(|| StorageError::UnknownKeyspace(keyspace.into()))?;
            for def in tables {
                let old = ks.cf_defs.iter_mut().find(|c| c.name == def.name).ok_or_else(|| {
                    StorageError::UnknownColumnFamily { keyspace: keyspace.into(), cf: def.name.clone() }
                })?;
                let (id, thrift_id) = (old.id, old.thrift_id);
                *old = CfDef { id, thrift_id, ..def };
            }
            ks.user_types = types;
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

#[cfg(test)]
mod tests {
    use crate::engine::{Storage, StorageConfig};
    use crate::schema::{CfDef, KeyspaceDef};

    fn open(dir: &std::path::Path, comment: &str) -> Storage {
        let mut c = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
        let mut ks = KeyspaceDef::new("ks");
        let mut cf = CfDef::new("ks", "cf");
        cf.comment = Some(comment.into());
        ks.cf_defs.push(cf);
        c.initial_keyspaces = vec![ks];
        Storage::open(c).expect("opens")
    }

    fn comment(s: &Storage) -> Option<String> {
        s.cf_metadata("ks", "cf").expect("metadata").def.comment.clone()
    }

    /// The store and the definition a thread remembers are given again only while the schema
    /// is unchanged, and only by the engine they came from.
    #[test]
    fn remembered_store_follows_schema_changes_and_engines() {
        let (a_dir, b_dir) = (tempfile::tempdir().expect("tempdir"), tempfile::tempdir().expect("tempdir"));
        let a = open(a_dir.path(), "first");
        let b = open(b_dir.path(), "other engine");
        assert_eq!(comment(&a).as_deref(), Some("first"));
        assert_eq!(comment(&b).as_deref(), Some("other engine"));
        assert_eq!(comment(&a).as_deref(), Some("first"));

        let mut def = a.cf_metadata("ks", "cf").expect("metadata").def.clone();
        def.comment = Some("second".into());
        a.update_column_family(def).expect("update");
        assert_eq!(comment(&a).as_deref(), Some("second"));

        a.drop_column_family("ks", "cf").expect("drop");
        assert!(a.cf_metadata("ks", "cf").is_err(), "a dropped column family has no metadata");
        assert_eq!(comment(&b).as_deref(), Some("other engine"));
    }
}
