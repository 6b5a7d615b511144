//! The storage engine of one node: schema, write path, read path, flush, compaction, recovery.
//!
//! ```text
//! apply(RowMutation) → commit log append (durable per sync mode) → memtable → ack
//!                                         memtable over threshold → flush worker → SSTable
//!                                                   new SSTable → compaction worker
//! open() → replay the system keyspace → load schema → open SSTables → replay the rest of the
//!        commit log → convert an old-format schema / write the initial one → host id, generation
//!        → flush → delete replayed segments
//! ```
//!
//! [`Storage`]'s methods are grouped by concern, one file each: [`schema`] (definitions and their
//! changes), [`schema_change`] (how a change or another node's schema rows are written, merged and
//! installed), [`local`] (the node's saved state: tokens, host id, cluster name, generation),
//! [`peers`] (what it knows of other nodes), [`hints`] (mutations kept for replicas that were
//! down), [`paxos`] (compare-and-set's Paxos state), [`write`] (mutations and their
//! durability), [`read`] (point reads and scans), [`index`] (secondary indexes: their life
//! cycle, builds and queries), [`maintenance`] (flush, compaction, truncate, statistics) and
//! [`recovery`] (start-up).
//! Calls block on disk I/O unless said otherwise; async callers run them where blocking is
//! allowed.

mod counter;
mod derived;
mod hints;
mod import;
mod index;
mod local;
mod maintenance;
mod paxos;
mod peers;
mod read;
mod recovery;
mod schema;
mod schema_change;
mod snapshot;
#[cfg(test)]
mod tests_flush;
#[cfg(test)]
mod tests_writer_options;
mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use rustc_hash::FxHashMap;
use tracing::{info, warn};
use uuid::Uuid;

pub use crate::block_cache::DiskAccess;
use crate::block_cache::{self, BlockCache};
use crate::cfs::ColumnFamilyStore;
pub use crate::cfs::LATENCY_SAMPLE_EVERY;
use crate::commitlog::{CommitLog, CommitLogConfig, RecoveryMode};
use crate::compaction::{self, CompactionEnv};
use crate::dht::Partitioner;
use crate::error::{Result, StorageError};
use crate::schema::{KeyspaceDef, Schema};
use crate::system::{self, schema_tables, SystemState};

pub use crate::commitlog::SyncMode;
pub use crate::compaction::CompactionInterrupted;
pub use crate::system::{LocalState, PeerInfo};
pub use hints::Hint;
pub use import::ImportSummary;
pub use index::IndexStatus;
pub use maintenance::{CacheStats, CfStats, LatencyTotals};
pub(crate) use snapshot::snapshot_store;
pub use snapshot::{check_snapshot_tag, SnapshotEntry, SnapshotSummary, BACKUPS_DIR, SNAPSHOTS_DIR};
pub use write::Durable;

/// The timestamp of the schema rows a node writes from its configuration at its first start:
/// older than every change made through the API.
const INITIAL_SCHEMA_TIMESTAMP: i64 = 0;

/// What the engine needs to know; built by the server from its configuration.
#[derive(Clone, Debug)]
pub struct StorageConfig {
    /// The primary data directory (0.6's first `DataFileDirectory`): secondary indexes' SSTables
    /// stay in it; every other column family's may go to any data directory.
    pub data_dir: PathBuf,
    /// The other `DataFileDirectory` entries, empty by default. Every column family has a
    /// directory in each; a new SSTable goes to the one with the most free space.
    pub extra_data_dirs: Vec<PathBuf>,
    /// Bytes free under a directory: statvfs ([`crate::directories::free_space`]) by default;
    /// tests replace it to choose where SSTables go.
    pub free_space: crate::directories::FreeSpace,
    pub commitlog_dir: PathBuf,
    pub sync: SyncMode,
    pub segment_size: u64,
    pub partitioner: Partitioner,
    /// A memtable is flushed when it holds about this many bytes (`MemtableThroughputInMB`),
    pub memtable_flush_bytes: usize,
    /// or this many columns written (`MemtableOperationsInMillions`),
    pub memtable_flush_operations: usize,
    /// or when it is this old and holds anything (`MemtableFlushAfterMinutes`).
    pub memtable_flush_after: Duration,
    /// Once the commit log's segments hold more than this many bytes, the column families
    /// keeping the oldest segment alive are flushed so it can be deleted (Cassandra 1.0+'s
    /// `commitlog_total_space_in_mb`).
    pub commitlog_total_space: u64,
    /// One index entry in this many goes into an SSTable's in-memory summary.
    pub index_interval: usize,
    /// A partition whose cells take more than this many bytes gets a column index in the
    /// SSTables flushes and compactions write, one entry per this many bytes of cells, so a
    /// slice reads only the blocks it needs (0.6's `ColumnIndexSizeInKB`). Default 64 KiB.
    pub column_index_size: u32,
    /// Flushes and compactions log a warning naming each partition they write that is larger
    /// than this many bytes (0.6's `RowWarningThresholdInMB`). Default 512 MiB.
    pub large_partition_warning: u64,
    /// Background compaction after flushes (tests turn it off to control SSTable counts).
    pub auto_compaction: bool,
    /// Compaction write rate limit in MB/s (0 = unthrottled).
    pub compaction_throughput_mb_per_sec: u32,
    /// Snapshot a column family's SSTables before each compaction of it (0.6's
    /// `SnapshotBeforeCompaction`); the snapshots are never removed by the engine.
    pub snapshot_before_compaction: bool,
    /// Snapshot a column family before truncating or dropping it (Cassandra's `auto_snapshot`,
    /// on by default): tags `<ms>-truncated-<cf>` and `<ms>-dropped-<cf>`.
    pub auto_snapshot: bool,
    /// Link every SSTable a flush writes into the column family's `backups/` directory
    /// (Cassandra's `incremental_backups`, off by default); the engine never removes them.
    pub incremental_backups: bool,
    /// Bytes of verified SSTable blocks kept in memory for point reads (0 = no cache).
    pub block_cache_bytes: usize,
    /// Whether SSTable components are mapped or read with pread.
    pub disk_access: DiskAccess,
    /// Schema to create when the node starts for the first time.
    pub initial_keyspaces: Vec<KeyspaceDef>,
    /// What commit log replay does with damage other than a torn tail: refuse to start (the
    /// default) or skip it and keep the damaged segments aside. [`StorageConfig::new`] takes it
    /// from the environment ([`crate::commitlog::IGNORE_REPLAY_ERRORS_ENV`]), as Cassandra takes
    /// `cassandra.commitlog.ignorereplayerrors` from a system property.
    pub commitlog_recovery: RecoveryMode,
}

impl StorageConfig {
    pub fn new(data_dir: impl Into<PathBuf>, commitlog_dir: impl Into<PathBuf>) -> StorageConfig {
        StorageConfig {
            data_dir: data_dir.into(),
            extra_data_dirs: Vec::new(),
            free_space: crate::directories::free_space,
            commitlog_dir: commitlog_dir.into(),
            sync: SyncMode::Periodic { period: Duration::from_millis(10_000) },
            segment_size: 32 << 20,
            partitioner: Partitioner::Random,
            memtable_flush_bytes: 64 << 20,
            // Unlimited, as the engine was before it counted operations; the server passes
            // the node's MemtableOperationsInMillions.
            memtable_flush_operations: usize::MAX,
            memtable_flush_after: Duration::from_secs(60 * 60),
            // Cassandra's default on 64-bit machines.
            commitlog_total_space: 8192 << 20,
            index_interval: 128,
            column_index_size: 64 * 1024,
            large_partition_warning: 512 << 20,
            auto_compaction: true,
            compaction_throughput_mb_per_sec: 16,
            snapshot_before_compaction: false,
            auto_snapshot: true,
            incremental_backups: false,
            block_cache_bytes: block_cache::DEFAULT_CAPACITY,
            disk_access: DiskAccess::default(),
            initial_keyspaces: Vec::new(),
            commitlog_recovery: RecoveryMode::from_env(),
        }
    }

    /// Every data directory, the primary first.
    pub fn data_dirs(&self) -> Vec<PathBuf> {
        std::iter::once(&self.data_dir).chain(&self.extra_data_dirs).cloned().collect()
    }
}

/// Memtables flushing or waiting for a flush, over all column families, from which on writes
/// may block (see [`Storage::writes_may_block`]).
const MAX_FLUSHING_MEMTABLES: usize = 2;

/// A memtable this many times over its flush threshold makes its writers wait for the flush
/// (back-pressure), instead of growing while the flush thread falls behind.
const MEMTABLE_HARD_LIMIT_FACTOR: usize = 2;

/// How often the flush thread looks for memtables past `MemtableFlushAfterMinutes` and for
/// flushes to retry, at most.
const FLUSH_CHECK_PERIOD: Duration = Duration::from_secs(10);

/// Background work requests.
enum Work {
    Flush(Arc<ColumnFamilyStore>),
    /// A commit log segment filled up: flush what pins old segments if the log is over its limit.
    ReclaimCommitLog,
    Compact(Arc<ColumnFamilyStore>),
    Stop,
}

struct Inner {
    config: StorageConfig,
    commitlog: CommitLog,
    /// This engine's SSTable block and key cache (never shared with another engine).
    cache: Arc<BlockCache>,
    /// Writers hold it shared from commit log append to memtable apply; a memtable switch holds
    /// it exclusively, so the commit log position taken at the switch separates exactly the
    /// records in the old memtable from those in the new one. Always taken before any column
    /// family lock.
    switch_lock: RwLock<()>,
    /// The schema and the stores; copy-on-write under this lock.
    stores: RwLock<Stores>,
    /// Held by one schema change or merge from its start to its end (see `schema_change` for
    /// the lock order).
    schema_lock: Mutex<()>,
    /// What `system.local` says; taken briefly, never while taking another lock but
    /// `last_system_timestamp`.
    state_lock: Mutex<SystemState>,
    last_system_timestamp: Mutex<i64>,
    flush_tx: Mutex<mpsc::Sender<Work>>,
    compaction_tx: Mutex<mpsc::Sender<Work>>,
    workers: Mutex<Vec<JoinHandle<()>>>,
    shutting_down: AtomicBool,
    /// Memtables switched out and not yet written, over all column families and indexes.
    flushing_memtables: AtomicUsize,
    /// Column families whose flush is queued for the flush thread (`flush_pending` set).
    pending_flushes: AtomicUsize,
    /// Changed after every change of `stores` (see [`Storage::schema_generation`]).
    schema_generation: AtomicU64,
    /// `compaction_throughput_mb_per_sec`, changed at run time by `setcompactionthroughput`.
    compaction_throughput: AtomicU32,
    active_compactions: compaction::ActiveCompactions,
}

/// Schema generations, unique in the process: a new engine starts past every generation any
/// other engine has used, so a cache keyed by generation never mistakes one engine's schema
/// for another's.
static SCHEMA_GENERATIONS: AtomicU64 = AtomicU64::new(1);

fn next_schema_generation() -> u64 {
    SCHEMA_GENERATIONS.fetch_add(1, Ordering::Relaxed)
}

#[derive(Default, Clone)]
/// The maps use FxHash rather than SipHash: they are looked up two or three times per request
/// (SipHash of the two names was a thousand instructions of a 19,000-instruction insert under
/// callgrind), and their keys are the node's own column families, never a client's choice, so
/// there is no collision flooding to defend against.
struct Stores {
    schema: Schema,
    by_id: FxHashMap<Uuid, Arc<ColumnFamilyStore>>,
    /// keyspace → column family → store; looked up with borrowed names on every request.
    by_name: FxHashMap<String, FxHashMap<String, Arc<ColumnFamilyStore>>>,
}

/// The storage engine handle; cheap to clone.
#[derive(Clone)]
pub struct Storage {
    inner: Arc<Inner>,
}

impl Storage {
    /// Opens (or creates) the node's data, replays the commit log and starts the background
    /// flush and compaction workers.
    pub fn open(mut config: StorageConfig) -> Result<Storage> {
        for d in config.data_dirs().iter().chain([&config.commitlog_dir]) {
            std::fs::create_dir_all(d).map_err(|e| StorageError::io(d, e))?;
        }
        // A directory named twice (or through another path) would list its SSTables twice.
        let mut seen = vec![canonical(&config.data_dir)?];
        let mut extra = Vec::new();
        for d in std::mem::take(&mut config.extra_data_dirs) {
            let c = canonical(&d)?;
            if seen.contains(&c) {
                warn!(dir = %d.display(), "a data directory is listed twice; it is used once");
            } else {
                seen.push(c);
                extra.push(d);
            }
        }
        config.extra_data_dirs = extra;
        let cache = Arc::new(BlockCache::with_disk_access(config.block_cache_bytes, config.disk_access));
        if config.commitlog_recovery == RecoveryMode::SkipDamaged {
            warn!(
                "{} is set: commit log replay skips damaged records (their writes are lost) and keeps damaged \
                 segments aside",
                crate::commitlog::IGNORE_REPLAY_ERRORS_ENV
            );
        }
        let mut stores = Stores::default();
        let builtin = system::builtin_keyspaces();
        for cf in builtin.iter().flat_map(|k| k.cf_defs.iter()) {
            recovery::add_store(&mut stores, Arc::new(recovery::open_store(&config, cf.clone(), &cache)?));
        }
        // Pass 1 replays the system keyspace, which says what the rest of the schema is.
        let no_truncations = BTreeMap::new();
        let (replayed_system, _) =
            recovery::replay_into(&config, &cache, &stores, &no_truncations, system::is_system_cf)?;
        let recovery::LoadedSystem { state, schema: decoded, newest_write } = recovery::load_system_state(&stores)?;
        let first_start = !state.bootstrapped;
        if first_start {
            for ks in &config.initial_keyspaces {
                ks.validate().map_err(StorageError::InvalidSchema)?;
            }
        }
        // Keyspaces still in the old layout have data to replay too; they are converted below.
        let mut keyspaces = decoded.keyspaces;
        for ks in &decoded.legacy {
            keyspaces.entry(ks.name.clone()).or_insert_with(|| ks.clone());
        }
        let version = schema_tables::schema_version(&keyspaces)?;
        for ks in builtin {
            keyspaces.insert(ks.name.clone(), ks);
        }
        stores.schema = Schema { keyspaces, version };
        let user_cfs: Vec<_> = stores
            .schema
            .keyspaces
            .values()
            .filter(|k| !system::is_builtin_keyspace(&k.name))
            .flat_map(|k| k.cf_defs.iter().cloned())
            .collect();
        for cf in user_cfs {
            let store = Arc::new(recovery::open_store(&config, cf.clone(), &cache)?);
            // Before replay, which re-derives the index entries of the records it applies.
            index::sync_indexes(&store, &cf, config.partitioner, &cache)?;
            recovery::add_store(&mut stores, store);
        }
        // Pass 2 replays everything else, skipping what SSTables or a truncate already cover.
        let (replayed, report) =
            recovery::replay_into(&config, &cache, &stores, &state.truncated_at, |id| !system::is_system_cf(id))?;
        if replayed + replayed_system > 0 {
            info!(records = replayed + replayed_system, segments = report.segments.len(), "replayed commit log");
        }
        // Both passes read the same segments; the second one's report is logged.
        report.log();
        // A damaged segment is kept aside whole, torn tail included.
        if let Some((path, offset)) = &report.truncated_at {
            if !report.damaged.iter().any(|d| d.path == *path) {
                CommitLog::cut_torn_tail(path, *offset)?;
            }
        }

        let commitlog = CommitLog::open(CommitLogConfig {
            dir: config.commitlog_dir.clone(),
            segment_size: config.segment_size,
            sync: config.sync,
        })?;
        let (flush_tx, flush_rx) = mpsc::channel();
        let (compaction_tx, compaction_rx) = mpsc::channel();
        let compaction_throughput = config.compaction_throughput_mb_per_sec;
        let inner = Arc::new(Inner {
            config,
            commitlog,
            cache,
            switch_lock: RwLock::new(()),
            stores: RwLock::new(stores),
            schema_lock: Mutex::new(()),
            state_lock: Mutex::new(state),
            last_system_timestamp: Mutex::new(newest_write.max(0)),
            flush_tx: Mutex::new(flush_tx),
            compaction_tx: Mutex::new(compaction_tx),
            workers: Mutex::new(Vec::new()),
            shutting_down: AtomicBool::new(false),
            flushing_memtables: AtomicUsize::new(0),
            pending_flushes: AtomicUsize::new(0),
            schema_generation: AtomicU64::new(next_schema_generation()),
            compaction_throughput: AtomicU32::new(compaction_throughput),
            active_compactions: Default::default(),
        });
        let storage = Storage { inner };

        {
            let _schema = storage.inner.schema_lock.lock();
            storage.convert_legacy_schema(&decoded.legacy)?;
            if first_start {
                // Written older than any change made through the API: on a node joining a
                // running cluster, what the cluster changed since (a replication factor, a
                // dropped column family) wins the schema merge over the file, as Cassandra
                // 0.7+ never loads a file's schema over an existing one. Every node with the
                // same file writes the same rows (the column family ids come from the names).
                let initial = storage.inner.config.initial_keyspaces.clone();
                storage.change_schema_locked_at(INITIAL_SCHEMA_TIMESTAMP, |s| {
                    for ks in initial {
                        s.keyspaces.insert(ks.name.clone(), ks);
                    }
                    Ok(())
                })?;
            }
        }
        for note in storage.configured_schema_drift() {
            warn!("{note}");
        }
        storage.start_local_state()?;
        storage.refresh_schema_rows()?;
        // Everything replayed goes to SSTables before the old segments are removed.
        for store in storage.all_stores() {
            storage.flush_store(&store)?;
        }
        CommitLog::delete_segments(&report.segments)?;
        CommitLog::set_aside_segments(&report.damaged)?;

        let tick = FLUSH_CHECK_PERIOD.min(storage.inner.config.memtable_flush_after / 2).max(Duration::from_millis(1));
        storage.start_worker("flush", flush_rx, Some(tick));
        storage.start_worker("compaction", compaction_rx, None);
        storage.start_pending_index_builds();
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

    pub fn data_dir(&self) -> &Path {
        &self.inner.config.data_dir
    }

    /// Every data directory, the primary first.
    pub fn data_dirs(&self) -> Vec<PathBuf> {
        self.inner.config.data_dirs()
    }

    /// Flushes everything and stops the background workers (clean shutdown, SIGTERM). Writes are
    /// refused from the moment it starts; reads keep working.
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

    /// Stops the flush and compaction threads once the work already given to them is done, and
    /// leaves the memtables unflushed: what a crash leaves on disk, for tests that reopen the same
    /// directories in one process. A plain drop lets a compaction that is still running delete
    /// files while the next instance lists them.
    pub fn abandon(self) {
        let _ = self.inner.flush_tx.lock().send(Work::Stop);
        let _ = self.inner.compaction_tx.lock().send(Work::Stop);
        let workers: Vec<_> = std::mem::take(&mut *self.inner.workers.lock());
        for w in workers {
            let _ = w.join();
        }
    }

    fn is_shutting_down(&self) -> bool {
        self.inner.shutting_down.load(Ordering::Relaxed)
    }

    // ----- background workers -----

    /// Starts a thread doing the work sent to `rx`; with a `tick`, it also runs
    /// [`Storage::flush_expired`] about that often, busy or not.
    fn start_worker(&self, name: &str, rx: mpsc::Receiver<Work>, tick: Option<Duration>) {
        let weak = Arc::downgrade(&self.inner);
        let handle = std::thread::Builder::new().name(format!("sibyl-{name}")).spawn(move || {
            let mut last_check = std::time::Instant::now();
            loop {
                let received = match tick {
                    None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
                    Some(tick) => rx.recv_timeout(tick.saturating_sub(last_check.elapsed())),
                };
                let work = match received {
                    Ok(Work::Stop) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    Ok(work) => Some(work),
                    Err(mpsc::RecvTimeoutError::Timeout) => None,
                };
                let Some(inner) = weak.upgrade() else { break };
                let storage = Storage { inner };
                let result = match &work {
                    None => Ok(()),
                    // Skipped when a writer, the timer or an operator flushed it first.
                    Some(Work::Flush(store)) if !store.flush_pending.load(Ordering::SeqCst) => Ok(()),
                    Some(Work::Flush(store)) => storage.flush_store(store),
                    Some(Work::Compact(store)) => compaction::compact_in_background(&storage.compaction_env(), store),
                    Some(Work::ReclaimCommitLog) => {
                        storage.reclaim_commitlog();
                        Ok(())
                    }
                    Some(Work::Stop) => break,
                };
                if let Err(e) = result {
                    warn!(error = %e, "background work failed");
                }
                if tick.is_some_and(|tick| last_check.elapsed() >= tick) {
                    if !storage.is_shutting_down() {
                        storage.flush_expired();
                        storage.reclaim_commitlog();
                    }
                    last_check = std::time::Instant::now();
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
            Work::Flush(_) | Work::ReclaimCommitLog => &self.inner.flush_tx,
            _ => &self.inner.compaction_tx,
        };
        let _ = tx.lock().send(work);
    }

    fn request_compaction(&self, store: &Arc<ColumnFamilyStore>) {
        if self.inner.config.auto_compaction && !self.is_shutting_down() {
            self.submit(Work::Compact(store.clone()));
        }
    }

    fn compaction_env(&self) -> CompactionEnv<'_> {
        CompactionEnv {
            writer_options: self.writer_options(),
            throughput_mb_per_sec: &self.inner.compaction_throughput,
            active: &self.inner.active_compactions,
            cache: &self.inner.cache,
            stopping: &self.inner.shutting_down,
            snapshot_before: self.inner.config.snapshot_before_compaction,
        }
    }
}

fn canonical(dir: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(dir).map_err(|e| StorageError::io(dir, e))
}
