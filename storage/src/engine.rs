//! The storage engine of one node: schema, write path, read path, flush, compaction, recovery.
//!
//! ```text
//! apply(RowMutation) → commit log append (durable per sync mode) → memtable → ack
//!                                         memtable over threshold → flush worker → SSTable
//!                                                   new SSTable → compaction worker
//! open() → load schema → open SSTables → replay commit log → flush → delete replayed segments
//! ```
//!
//! All calls block (disk I/O); async callers use `spawn_blocking`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use tracing::{info, warn};
use uuid::Uuid;

use crate::cfs::{ColumnFamilyStore, KeyBound};
use crate::commitlog::{CommitLog, CommitLogConfig, ReplayPosition, SyncMode};
use crate::compaction;
use crate::data::{now_seconds, Cell, Row};
use crate::dht::{DecoratedKey, Partitioner};
use crate::error::{Result, StorageError};
use crate::filter::ReadFilter;
use crate::mutation::{decode_record, encode_record, RowMutation};
use crate::schema::{CfDef, KeyspaceDef, Schema};
use crate::sstable::{self, SsTableReader, SsTableWriter, WriterOptions};
use crate::system::{self, SystemState};

/// What the engine needs to know; built by the server from its configuration.
#[derive(Clone, Debug)]
pub struct StorageConfig {
    pub data_dir: PathBuf,
    pub commitlog_dir: PathBuf,
    pub sync: SyncMode,
    pub segment_size: u64,
    pub partitioner: Partitioner,
    /// A memtable is flushed when it holds about this many bytes.
    pub memtable_flush_bytes: usize,
    /// One index entry in this many goes into an SSTable's in-memory summary.
    pub index_interval: usize,
    /// Background compaction after flushes (tests turn it off to control SSTable counts).
    pub auto_compaction: bool,
    /// Compaction write rate limit in MB/s (0 = unthrottled).
    pub compaction_throughput_mb_per_sec: u32,
    /// Schema to create when the node starts for the first time.
    pub initial_keyspaces: Vec<KeyspaceDef>,
}

impl StorageConfig {
    pub fn new(data_dir: impl Into<PathBuf>, commitlog_dir: impl Into<PathBuf>) -> StorageConfig {
        StorageConfig {
            data_dir: data_dir.into(),
            commitlog_dir: commitlog_dir.into(),
            sync: SyncMode::Periodic { period: Duration::from_millis(10_000) },
            segment_size: 32 << 20,
            partitioner: Partitioner::Random,
            memtable_flush_bytes: 64 << 20,
            index_interval: 128,
            auto_compaction: true,
            compaction_throughput_mb_per_sec: 16,
            initial_keyspaces: Vec::new(),
        }
    }
}

/// Full memtables allowed to wait for their flush before writers flush themselves.
const MAX_FLUSHING_MEMTABLES: usize = 2;

/// Background work requests.
enum Work {
    Flush(Arc<ColumnFamilyStore>),
    Compact(Arc<ColumnFamilyStore>),
    Stop,
}

pub(crate) struct Inner {
    pub(crate) config: StorageConfig,
    pub(crate) commitlog: CommitLog,
    /// Writers hold it shared from commit log append to memtable apply; a memtable switch holds
    /// it exclusively, so the commit log position taken at the switch separates exactly the
    /// records in the old memtable from those in the new one. Always taken before any column
    /// family lock.
    switch_lock: RwLock<()>,
    /// The schema and the stores; copy-on-write under this lock. `state_lock` serializes changes
    /// and saving of the system state.
    stores: RwLock<Stores>,
    state_lock: Mutex<SystemState>,
    last_system_timestamp: Mutex<i64>,
    flush_tx: Mutex<mpsc::Sender<Work>>,
    compaction_tx: Mutex<mpsc::Sender<Work>>,
    workers: Mutex<Vec<JoinHandle<()>>>,
    shutting_down: AtomicBool,
    /// Memtables switched out and not yet flushed, over all column families.
    flushing_memtables: AtomicUsize,
}

#[derive(Default, Clone)]
struct Stores {
    schema: Schema,
    by_id: HashMap<Uuid, Arc<ColumnFamilyStore>>,
    /// keyspace → column family → store; looked up with borrowed names on every request.
    by_name: HashMap<String, HashMap<String, Arc<ColumnFamilyStore>>>,
}

/// The storage engine handle; cheap to clone.
#[derive(Clone)]
pub struct Storage {
    inner: Arc<Inner>,
}

impl Storage {
    /// Opens (or creates) the node's data, replays the commit log and starts the background
    /// flush and compaction workers.
    pub fn open(config: StorageConfig) -> Result<Storage> {
        for d in [&config.data_dir, &config.commitlog_dir] {
            std::fs::create_dir_all(d).map_err(|e| StorageError::io(d, e))?;
        }
        let mut stores = Stores::default();
        let system_def = system::keyspace_def();
        for cf in &system_def.cf_defs {
            add_store(&mut stores, Arc::new(open_store(&config.data_dir, cf.clone())?));
        }
        // Pass 1 replays the system keyspace, which says what the rest of the schema is.
        let no_truncations = BTreeMap::new();
        let (replayed_system, _) = replay_into(&config, &stores, &no_truncations, system::is_system_cf)?;
        let (mut state, newest_system_write) = load_system_state(&stores)?;
        let first_start = !state.bootstrapped;
        if first_start {
            for ks in &config.initial_keyspaces {
                ks.validate().map_err(StorageError::InvalidSchema)?;
                state.schema.keyspaces.insert(ks.name.clone(), ks.clone());
            }
            state.schema.version = Uuid::new_v4();
            state.bootstrapped = true;
        }
        state.schema.keyspaces.insert(system_def.name.clone(), system_def);
        stores.schema = state.schema.clone();
        for ks in state.schema.keyspaces.values().filter(|k| k.name != system::KEYSPACE) {
            for cf in &ks.cf_defs {
                add_store(&mut stores, Arc::new(open_store(&config.data_dir, cf.clone())?));
            }
        }
        // Pass 2 replays everything else, skipping what SSTables or a truncate already cover.
        let (replayed, report) = replay_into(&config, &stores, &state.truncated_at, |id| !system::is_system_cf(id))?;
        if replayed + replayed_system > 0 {
            info!(records = replayed + replayed_system, segments = report.segments.len(), "replayed commit log");
        }

        let commitlog = CommitLog::open(CommitLogConfig {
            dir: config.commitlog_dir.clone(),
            segment_size: config.segment_size,
            sync: config.sync,
        })?;
        let (flush_tx, flush_rx) = mpsc::channel();
        let (compaction_tx, compaction_rx) = mpsc::channel();
        let inner = Arc::new(Inner {
            config,
            commitlog,
            switch_lock: RwLock::new(()),
            stores: RwLock::new(stores),
            state_lock: Mutex::new(state),
            last_system_timestamp: Mutex::new(newest_system_write.max(0)),
            flush_tx: Mutex::new(flush_tx),
            compaction_tx: Mutex::new(compaction_tx),
            workers: Mutex::new(Vec::new()),
            shutting_down: AtomicBool::new(false),
            flushing_memtables: AtomicUsize::new(0),
        });
        let storage = Storage { inner };

        if first_start {
            let keyspaces: Vec<KeyspaceDef> =
                storage.inner.state_lock.lock().schema.keyspaces.values().cloned().collect();
            let state = storage.inner.state_lock.lock().clone();
            storage.persist_system(keyspaces.iter().filter(|k| k.name != system::KEYSPACE), &[], &state)?;
        }
        // Everything replayed goes to SSTables before the old segments are removed.
        for store in storage.all_stores() {
            storage.flush_store(&store)?;
        }
        CommitLog::delete_segments(&report.segments)?;

        storage.start_worker("flush", flush_rx);
        storage.start_worker("compaction", compaction_rx);
        if storage.inner.config.auto_compaction {
            for store in storage.all_stores() {
                storage.submit(Work::Compact(store));
            }
        }
        Ok(storage)
    }

    pub fn partitioner(&self) -> Partitioner {
        self.inner.config.partitioner
    }

    pub fn config(&self) -> &StorageConfig {
        &self.inner.config
    }

    fn start_worker(&self, name: &str, rx: mpsc::Receiver<Work>) {
        let weak = Arc::downgrade(&self.inner);
        let handle = std::thread::Builder::new().name(format!("sibyl-{name}")).spawn(move || {
            while let Ok(work) = rx.recv() {
                let Some(inner) = weak.upgrade() else { break };
                let storage = Storage { inner };
                let result = match &work {
                    Work::Flush(store) => storage.flush_store(store).map(|_| ()),
                    Work::Compact(store) => compaction::compact_if_needed(&storage, store),
                    Work::Stop => break,
                };
                if let Err(e) = result {
                    warn!(error = %e, "background work failed");
                }
            }
        });
        match handle {
            Ok(h) => self.inner.workers.lock().push(h),
            Err(e) => warn!(error = %e, "cannot start {name} worker"),
        }
    }

    fn submit(&self, work: Work) {
        let tx = match &work {
            Work::Flush(_) => &self.inner.flush_tx,
            _ => &self.inner.compaction_tx,
        };
        let _ = tx.lock().send(work);
    }

    pub(crate) fn request_compaction(&self, store: &Arc<ColumnFamilyStore>) {
        if self.inner.config.auto_compaction && !self.inner.shutting_down.load(Ordering::Relaxed) {
            self.submit(Work::Compact(store.clone()));
        }
    }

    // ----- schema -----

    pub fn schema(&self) -> Schema {
        self.inner.stores.read().schema.clone()
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

    pub fn store(&self, keyspace: &str, cf: &str) -> Result<Arc<ColumnFamilyStore>> {
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

    pub fn all_stores(&self) -> Vec<Arc<ColumnFamilyStore>> {
        self.inner.stores.read().by_id.values().cloned().collect()
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
                let store = Arc::new(open_store(&self.inner.config.data_dir, def.clone())?);
                stores.by_id.insert(*id, store);
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
    fn persist_system<'a>(
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
        local.range_tombstones.push(crate::data::RangeTombstone {
            start: Vec::new(),
            end: Vec::new(),
            deletion: crate::data::DeletionTime::new(ts - 1, now_seconds()),
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

    // ----- writes -----

    /// Applies a mutation: durable per the commit log's sync mode when this returns.
    pub fn apply(&self, m: RowMutation) -> Result<()> {
        if self.inner.shutting_down.load(Ordering::Relaxed) {
            return Err(StorageError::ShuttingDown);
        }
        let started = std::time::Instant::now();
        let mut targets = Vec::with_capacity(m.updates.len());
        for (cf, row) in m.updates {
            targets.push((self.store(&m.keyspace, &cf)?, row));
        }
        let durable = {
            let stores = self.inner.stores.read();
            stores.schema.keyspaces.get(&m.keyspace).map(|k| k.durable_writes).unwrap_or(true)
        };
        let dk = self.inner.config.partitioner.decorate(&m.key);
        let mut full = Vec::with_capacity(targets.len());
        {
            let _switch = self.inner.switch_lock.read();
            if durable {
                let ids: Vec<Uuid> = targets.iter().map(|(s, _)| s.id).collect();
                let parts: Vec<(Uuid, &Row)> = targets.iter().map(|(s, r)| (s.id, r)).collect();
                let record = encode_record(&m.key, &parts);
                self.inner.commitlog.append(&record, &ids)?;
            }
            for (store, row) in targets.iter_mut() {
                let memtable = store.active_memtable();
                memtable.apply(&store.cmp, &dk, std::mem::take(row));
                // Remember whether this memtable filled up; the flush is started after the lock.
                full.push(memtable.size() >= self.inner.config.memtable_flush_bytes);
            }
        }
        let elapsed = started.elapsed().as_micros() as u64;
        for ((store, _), full) in targets.iter().zip(full) {
            store.counters.writes.fetch_add(1, Ordering::Relaxed);
            store.counters.write_micros.fetch_add(elapsed, Ordering::Relaxed);
            if full {
                // The write itself is durable in the commit log; a failed flush is retried later.
                if let Err(e) = self.maybe_schedule_flush(store) {
                    warn!(keyspace = %store.keyspace, cf = %store.name, error = %e, "flush failed");
                }
            }
        }
        Ok(())
    }

    /// True when a write now might block for long: the commit log is in batch mode (a write
    /// waits for an fsync), or some memtable is waiting to be flushed, so that a writer could
    /// be the one that must flush (back-pressure). A caller that must not block, such as an
    /// event loop, sends writes elsewhere while this holds.
    pub fn writes_may_block(&self) -> bool {
        matches!(self.inner.config.sync, SyncMode::Batch { .. })
            || self.inner.flushing_memtables.load(Ordering::Relaxed) + 1 >= MAX_FLUSHING_MEMTABLES
    }

    fn maybe_schedule_flush(&self, store: &Arc<ColumnFamilyStore>) -> Result<()> {
        // Back-pressure: when flushes fall behind, the writer flushes itself instead of letting
        // full memtables pile up in memory.
        if store.memtables.read().flushing.len() >= MAX_FLUSHING_MEMTABLES {
            return self.flush_store(store);
        }
        // One queued flush per column family; the flag is cleared when that flush switches
        // memtables.
        if !store.flush_pending.swap(true, Ordering::SeqCst) {
            self.submit(Work::Flush(store.clone()));
        }
        Ok(())
    }

    // ----- reads -----

    pub fn decorate(&self, key: &[u8]) -> DecoratedKey {
        self.inner.config.partitioner.decorate(key)
    }

    /// The live cells of one row that `filter` selects.
    pub fn read(&self, keyspace: &str, cf: &str, key: &[u8], filter: &ReadFilter) -> Result<Vec<Cell>> {
        let store = self.store(keyspace, cf)?;
        store.read(&self.decorate(key), filter, now_seconds())
    }

    /// Rows in key order between `start` and `end` (non-wrapping), with the cells `filter`
    /// selects; rows with no such live cell are left out. At most `max_rows` rows.
    pub fn scan(
        &self,
        keyspace: &str,
        cf: &str,
        start: &KeyBound,
        end: &KeyBound,
        filter: &ReadFilter,
        max_rows: usize,
    ) -> Result<Vec<(DecoratedKey, Vec<Cell>)>> {
        let store = self.store(keyspace, cf)?;
        let now = now_seconds();
        let mut out = Vec::new();
        if max_rows == 0 {
            return Ok(out);
        }
        for item in store.scan(start)? {
            let (key, row) = item?;
            if !start.admits_from_below(&key) {
                continue;
            }
            if !end.admits_from_above(&key) {
                break;
            }
            let cells = crate::filter::collect_live(&store.cmp, &row, filter, now);
            if !cells.is_empty() {
                out.push((key, cells));
                if out.len() >= max_rows {
                    break;
                }
            }
        }
        Ok(out)
    }

    // ----- flush, compaction, truncate -----

    /// Writes the column family's current memtable to an SSTable and waits for it.
    pub fn flush(&self, keyspace: &str, cf: &str) -> Result<()> {
        let store = self.store(keyspace, cf)?;
        self.flush_store(&store)
    }

    pub fn flush_all(&self) -> Result<()> {
        for s in self.all_stores() {
            self.flush_store(&s)?;
        }
        Ok(())
    }

    pub(crate) fn flush_store(&self, store: &Arc<ColumnFamilyStore>) -> Result<()> {
        let _flushing = store.flush_lock.lock();
        let (memtable, position) = {
            let _switch = self.inner.switch_lock.write();
            let position = self.inner.commitlog.current_position();
            store.flush_pending.store(false, Ordering::SeqCst);
            if store.active_memtable().is_empty() {
                drop(_switch);
                self.inner.commitlog.discard_completed(store.id, position)?;
                return Ok(());
            }
            self.inner.flushing_memtables.fetch_add(1, Ordering::Relaxed);
            (store.switch_memtable(), position)
        };
        let desc = store.new_descriptor();
        let mut writer = SsTableWriter::create(desc, memtable.partitions(), self.writer_options())?;
        let written = (|| {
            for (key, row) in memtable.range(std::ops::Bound::Unbounded) {
                writer.append(&key, &row)?;
            }
            Ok::<_, StorageError>(())
        })();
        if let Err(e) = written {
            writer.abort();
            return Err(e);
        }
        let reader = Arc::new(writer.finish((position.segment_id, position.offset), Vec::new())?);
        info!(keyspace = %store.keyspace, cf = %store.name, file = %reader.descriptor().path(sstable::Component::Data).display(),
              partitions = memtable.partitions(), "flushed memtable");
        store.finish_flush(&memtable, Some(reader));
        self.inner.flushing_memtables.fetch_sub(1, Ordering::Relaxed);
        store.counters.flushes.fetch_add(1, Ordering::Relaxed);
        self.inner.commitlog.discard_completed(store.id, position)?;
        self.request_compaction(store);
        Ok(())
    }

    pub(crate) fn writer_options(&self) -> WriterOptions {
        WriterOptions { index_interval: self.inner.config.index_interval as u32, ..WriterOptions::default() }
    }

    /// Flushes, then merges every SSTable of the column family into one.
    pub fn major_compact(&self, keyspace: &str, cf: &str) -> Result<()> {
        let store = self.store(keyspace, cf)?;
        self.flush_store(&store)?;
        compaction::compact_all(self, &store)
    }

    /// Removes all data of a column family, durably: records before this point are never
    /// replayed again.
    pub fn truncate(&self, keyspace: &str, cf: &str) -> Result<()> {
        let store = self.store(keyspace, cf)?;
        let _flushing = store.flush_lock.lock();
        let position = {
            let _switch = self.inner.switch_lock.write();
            let position = self.inner.commitlog.current_position();
            let mut m = store.memtables.write();
            m.active = Arc::new(crate::memtable::Memtable::new());
            self.inner.flushing_memtables.fetch_sub(m.flushing.len(), Ordering::Relaxed);
            m.flushing.clear();
            position
        };
        let snapshot = {
            let mut state = self.inner.state_lock.lock();
            state.truncated_at.insert(store.id, (position.segment_id, position.offset));
            state.clone()
        };
        self.persist_system(std::iter::empty(), &[], &snapshot)?;
        let old: Vec<Arc<SsTableReader>> = std::mem::take(&mut *store.sstables.write());
        for s in old {
            s.delete_files()?;
        }
        self.inner.commitlog.discard_completed(store.id, position)?;
        info!(keyspace, cf, "truncated");
        Ok(())
    }

    /// Flushes everything and stops the background workers (clean shutdown, SIGTERM).
    pub fn shutdown(&self) -> Result<()> {
        if self.inner.shutting_down.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let result = self.flush_all();
        let _ = self.inner.flush_tx.lock().send(Work::Stop);
        let _ = self.inner.compaction_tx.lock().send(Work::Stop);
        let workers: Vec<_> = std::mem::take(&mut *self.inner.workers.lock());
        for w in workers {
            let _ = w.join();
        }
        self.inner.commitlog.shutdown()?;
        result
    }

    pub fn data_dir(&self) -> &Path {
        &self.inner.config.data_dir
    }

    pub fn schema_version(&self) -> Uuid {
        self.inner.stores.read().schema.version
    }

    pub(crate) fn is_shutting_down(&self) -> bool {
        self.inner.shutting_down.load(Ordering::Relaxed)
    }
}

fn add_store(stores: &mut Stores, store: Arc<ColumnFamilyStore>) {
    stores.by_name.entry(store.keyspace.clone()).or_default().insert(store.name.clone(), store.clone());
    stores.by_id.insert(store.id, store);
}

/// Replays the commit log into the memtables of the column families `wanted` selects, skipping
/// records their SSTables or a truncate already cover. Returns the records applied.
fn replay_into(
    config: &StorageConfig,
    stores: &Stores,
    truncated_at: &BTreeMap<Uuid, (u64, u64)>,
    wanted: impl Fn(&Uuid) -> bool,
) -> Result<(u64, crate::commitlog::ReplayReport)> {
    let mut floors: HashMap<Uuid, ReplayPosition> = HashMap::new();
    for (id, store) in stores.by_id.iter().filter(|(id, _)| wanted(id)) {
        let mut floor = store
            .sstables()
            .iter()
            .map(|s| {
                let rp = s.metadata().replay_position;
                ReplayPosition { segment_id: rp.segment_id, offset: rp.offset }
            })
            .max()
            .unwrap_or(ReplayPosition { segment_id: 0, offset: 0 });
        if let Some(&(segment_id, offset)) = truncated_at.get(id) {
            floor = floor.max(ReplayPosition { segment_id, offset });
        }
        floors.insert(*id, floor);
    }
    let mut replayed = 0u64;
    let report = CommitLog::replay(&config.commitlog_dir, |pos, bytes| {
        let record = decode_record(bytes).map_err(|detail| StorageError::Corrupt { file: None, detail })?;
        let dk = config.partitioner.decorate(&record.key);
        for (id, row) in record.updates {
            let (Some(store), Some(floor)) = (stores.by_id.get(&id), floors.get(&id)) else {
                continue; // not replayed in this pass, or the column family was dropped
            };
            if pos < *floor {
                continue;
            }
            store.active_memtable().apply(&store.cmp, &dk, row);
            replayed += 1;
        }
        Ok(())
    })?;
    Ok((replayed, report))
}

/// Reads the schema and node state from the (replayed) system keyspace, with the newest
/// timestamp found there (later system writes must be newer, even if the clock went back).
fn load_system_state(stores: &Stores) -> Result<(SystemState, i64)> {
    let store_of = |cf: &str| {
        stores
            .by_name
            .get(system::KEYSPACE)
            .and_then(|k| k.get(cf))
            .cloned()
            .ok_or_else(|| StorageError::UnknownColumnFamily { keyspace: system::KEYSPACE.into(), cf: cf.into() })
    };
    let now = now_seconds();
    let mut newest = i64::MIN;
    let mut read_all = |cf: &str| -> Result<Vec<(Vec<u8>, Vec<Cell>)>> {
        let store = store_of(cf)?;
        let mut rows = Vec::new();
        for item in store.scan(&KeyBound::Unbounded)? {
            let (key, row) = item?;
            newest = newest
                .max(row.deletion.marked_at)
                .max(row.cells.iter().map(|c| c.timestamp).max().unwrap_or(i64::MIN))
                .max(row.range_tombstones.iter().map(|r| r.deletion.marked_at).max().unwrap_or(i64::MIN));
            rows.push((key.key, crate::filter::collect_live(&store.cmp, &row, &ReadFilter::all(), now)));
        }
        Ok(rows)
    };
    let keyspaces = read_all(system::SCHEMA_CF)?;
    let local = read_all(system::LOCAL_CF)?
        .into_iter()
        .find(|(key, _)| key == system::LOCAL_KEY)
        .map(|(_, cells)| cells)
        .unwrap_or_default();
    Ok((system::decode_state(keyspaces, local)?, newest))
}

/// Opens a column family's directory: removes leftovers of unfinished writes and SSTables a
/// finished compaction replaced (`sstable::cleanup_leftovers`), then opens the rest.
fn open_store(data_dir: &Path, def: CfDef) -> Result<ColumnFamilyStore> {
    let dir = data_dir.join(&def.keyspace).join(format!("{}-{}", def.name, def.id.simple()));
    std::fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
    sstable::cleanup_leftovers(&dir)?;
    let mut readers = Vec::new();
    for desc in sstable::list_sstables(&dir)? {
        readers.push(Arc::new(SsTableReader::open(desc)?));
    }
    ColumnFamilyStore::open(def, dir, readers)
}

impl Storage {
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
