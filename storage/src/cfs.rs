//! One column family's data on this node: its memtables and SSTables (Cassandra's
//! ColumnFamilyStore), and the read path that merges them.

use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};

use crate::commitlog::ReplayPosition;
use crate::comparator::CellComparator;
use crate::data::{Cell, Row};
use crate::dht::{DecoratedKey, KeyBound};
use crate::directories::FreeSpace;
use crate::engine::LatencyTotals;
use crate::error::Result;
use crate::filter::{merge_rows, take_live, ReadFilter};
use crate::index::SecondaryIndex;
use crate::memtable::{Memtable, MemtableScan};
use crate::schema::{CfDef, CfMetadata};
use crate::sstable::{CellFilter, Descriptor, SsTableReader};

/// The memtable taking writes, and older ones switched out for a flush (still readable until
/// their SSTable is in place), oldest first.
pub(crate) struct Memtables {
    pub active: Arc<Memtable>,
    pub flushing: Vec<Switched>,
}

/// Where a partition may be (see [`ColumnFamilyStore::sources`]).
enum Sources {
    /// Only the active memtable: none is being flushed, and no SSTable's filter admits the key.
    Memtable(Arc<Memtable>),
    /// Every memtable, active first, and the SSTables whose filters admit the key.
    Merged { memtables: Vec<Arc<Memtable>>, sstables: Vec<Arc<SsTableReader>> },
}

/// A memtable switched out of service, and the commit log position at its switch: every write
/// it holds comes before that position, which its SSTable records as its replay position. It
/// stays in the list until written, so a flush that failed is retried with its own position.
pub(crate) struct Switched {
    pub memtable: Arc<Memtable>,
    pub position: ReplayPosition,
}

/// Counters shown by `sibyltool cfstats`.
#[derive(Default)]
pub struct CfCounters {
    pub reads: AtomicU64,
    pub writes: AtomicU64,
    pub read_latency: LatencySamples,
    pub write_latency: LatencySamples,
    pub flushes: AtomicU64,
    pub compactions: AtomicU64,
}

/// One read and one write in this many (the first of each column family among them) is timed
/// for cfstats' mean latencies. Timing every one took two clock reads per request, 1-2% of the
/// server's CPU per point read (bench/redis-vs-sibyl.sh, perf); a mean over a sixteenth of the
/// requests tells the operator the same.
pub const LATENCY_SAMPLE_EVERY: u64 = 16;

/// The timed operations of one kind: how many, and their time in all.
#[derive(Default)]
pub struct LatencySamples {
    count: AtomicU64,
    nanos: AtomicU64,
}

impl LatencySamples {
    /// The start time of an operation about to run, when it is one to time: the first, then one
    /// in [`LATENCY_SAMPLE_EVERY`], by `done`, the operations of its kind completed so far
    /// (counted once they succeed). Two running at once may both be timed, or neither: that only
    /// shifts which ones are sampled.
    pub fn start(done: &AtomicU64) -> Option<Instant> {
        done.load(Ordering::Relaxed).is_multiple_of(LATENCY_SAMPLE_EVERY).then(Instant::now)
    }

    pub fn record(&self, took: Duration) {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.nanos.fetch_add(took.as_nanos() as u64, Ordering::Relaxed);
    }

    pub fn totals(&self) -> LatencyTotals {
        LatencyTotals { count: self.count.load(Ordering::Relaxed), nanos: self.nanos.load(Ordering::Relaxed) }
    }
}

pub struct ColumnFamilyStore {
    /// Replaced whole when system_update_column_family changes options (never the comparators,
    /// which Cassandra forbids altering, so `cmp` below stays right).
    metadata: RwLock<Arc<CfMetadata>>,
    pub id: uuid::Uuid,
    pub keyspace: String,
    pub name: String,
    pub cmp: CellComparator,
    /// The primary directory: the first of `dirs`, where secondary indexes live.
    pub dir: PathBuf,
    /// The column family's directory in every data directory, primary first (one for an index
    /// store). Each SSTable lives whole in one of them (see `crate::directories`).
    dirs: Vec<PathBuf>,
    /// How a new SSTable's directory is chosen among `dirs`.
    free_space: FreeSpace,
    /// Lock order: `memtables` and `sstables` are never held together with the engine's switch
    /// lock taken after them (the switch lock is always taken first).
    pub(crate) memtables: RwLock<Memtables>,
    pub(crate) sstables: RwLock<Vec<Arc<SsTableReader>>>,
    next_generation: AtomicU64,
    /// One flush (or truncate) of this column family at a time.
    pub(crate) flush_lock: Mutex<()>,
    /// A flush is queued for the background worker.
    pub(crate) flush_pending: std::sync::atomic::AtomicBool,
    /// The last flush failed and its memtable waits to be written: the error, and a flag the
    /// write path reads without a lock. Cleared by the next flush that succeeds.
    pub(crate) flush_failing: std::sync::atomic::AtomicBool,
    flush_error: Mutex<Option<String>>,
    /// Generations taking part in a running compaction.
    pub(crate) compacting: Mutex<std::collections::HashSet<u64>>,
    pub counters: CfCounters,
    /// The column family's secondary indexes, replaced whole by a schema change. Empty for most
    /// column families, which is all the write path checks then.
    indexes: RwLock<Arc<Vec<Arc<SecondaryIndex>>>>,
    /// Background (minor) compaction runs for this store; `sibyltool disableautocompaction`
    /// clears it until `enableautocompaction` or the next start (Cassandra's
    /// `ColumnFamilyStore.disableAutoCompaction`). Major compaction, cleanup and scrub run anyway.
    auto_compaction: AtomicBool,
    /// `sibyltool setcompactionthreshold`'s (min, max), used instead of the definition's until
    /// the node restarts or the definition changes: as in Cassandra, the live value changes,
    /// not the schema.
    compaction_thresholds: Mutex<Option<(i32, i32)>>,
}

/// Lets an SSTable read skip column index blocks a read filter does not want.
struct BlockFilter<'a> {
    cmp: &'a CellComparator,
    filter: &'a ReadFilter,
}

impl CellFilter for BlockFilter<'_> {
    fn wants_block(&self, first: &[u8], last: &[u8]) -> bool {
        self.filter.may_intersect(self.cmp, first, last)
    }
}

impl ColumnFamilyStore {
    pub(crate) fn open(def: CfDef, dir: PathBuf, sstables: Vec<Arc<SsTableReader>>) -> Result<ColumnFamilyStore> {
        Self::open_in(def, vec![dir], crate::directories::free_space, sstables)
    }

    /// Opens a store whose SSTables live in `dirs` (primary first, never empty), a new one going
    /// to the directory `free_space` finds roomiest. The next generation follows the highest of
    /// all directories.
    pub(crate) fn open_in(
        def: CfDef,
        dirs: Vec<PathBuf>,
        free_space: FreeSpace,
        sstables: Vec<Arc<SsTableReader>>,
    ) -> Result<ColumnFamilyStore> {
        let metadata = CfMetadata::new(def)?;
        let dir = dirs.first().cloned().unwrap_or_default();
        let next = sstables.iter().map(|s| s.descriptor().generation).max().unwrap_or(0) + 1;
        Ok(ColumnFamilyStore {
            id: metadata.def.id,
            keyspace: metadata.def.keyspace.clone(),
            name: metadata.def.name.clone(),
            cmp: metadata.cmp.clone(),
            metadata: RwLock::new(Arc::new(metadata)),
            dir,
            dirs,
            free_space,
            memtables: RwLock::new(Memtables { active: Arc::new(Memtable::new()), flushing: Vec::new() }),
            sstables: RwLock::new(sstables),
            next_generation: AtomicU64::new(next),
            flush_lock: Mutex::new(()),
            flush_pending: Default::default(),
            flush_failing: Default::default(),
            flush_error: Mutex::new(None),
            compacting: Mutex::new(Default::default()),
            counters: CfCounters::default(),
            indexes: RwLock::new(Arc::new(Vec::new())),
            auto_compaction: AtomicBool::new(true),
            compaction_thresholds: Mutex::new(None),
        })
    }

    /// The definition with its parsed comparator and validators (cheap: a shared pointer).
    pub fn metadata(&self) -> Arc<CfMetadata> {
        self.metadata.read().clone()
    }

    /// Installs a changed definition; thresholds set at run time give way to its own.
    pub(crate) fn set_def(&self, def: CfDef) -> Result<()> {
        *self.metadata.write() = Arc::new(CfMetadata::new(def)?);
        *self.compaction_thresholds.lock() = None;
        Ok(())
    }

    /// Whether background compaction runs for this store (see `auto_compaction`).
    pub(crate) fn auto_compaction(&self) -> bool {
        self.auto_compaction.load(Ordering::Acquire)
    }

    /// Turns background compaction on or off; whether that changed anything.
    pub(crate) fn set_auto_compaction(&self, enabled: bool) -> bool {
        self.auto_compaction.swap(enabled, Ordering::AcqRel) != enabled
    }

    /// The (min, max) SSTables a background compaction merges: set at run time, else the
    /// definition's. A 0 in either turns background compaction off.
    pub(crate) fn compaction_thresholds(&self) -> (i32, i32) {
        let set = *self.compaction_thresholds.lock();
        set.unwrap_or_else(|| {
            let def = &self.metadata.read().def;
            (def.min_compaction_threshold, def.max_compaction_threshold)
        })
    }

    /// Sets the thresholds until the next start or definition change. The caller has checked
    /// them.
    pub(crate) fn set_compaction_thresholds(&self, min: i32, max: i32) {
        *self.compaction_thresholds.lock() = Some((min, max));
    }

    pub fn gc_grace_seconds(&self) -> i32 {
        self.metadata.read().def.gc_grace_seconds
    }

    pub(crate) fn new_descriptor(&self) -> Descriptor {
        let generation = self.next_generation.fetch_add(1, Ordering::SeqCst);
        let dir = crate::directories::for_new_sstable(&self.dirs, self.free_space);
        Descriptor::new(dir, self.keyspace.clone(), self.name.clone(), generation)
    }

    /// The secondary indexes, as a schema change last set them.
    pub(crate) fn indexes(&self) -> Arc<Vec<Arc<SecondaryIndex>>> {
        self.indexes.read().clone()
    }

    pub(crate) fn set_indexes(&self, indexes: Vec<Arc<SecondaryIndex>>) {
        *self.indexes.write() = Arc::new(indexes);
    }

    /// Applies `update` to the active memtable, then the index entries it calls for to the
    /// indexes' memtables, and returns the memtable's size in bytes and operations. The caller
    /// holds the engine's switch lock (or is replaying the commit log, alone).
    ///
    /// IMPORTANT: the base first: a query that finds an entry then reads the base row, and must
    /// find the cell the entry came from, or it deletes the entry as stale.
    pub(crate) fn apply(&self, key: &DecoratedKey, update: Row) -> (usize, usize) {
        let entries: Vec<(Arc<SecondaryIndex>, DecoratedKey, Row)> = {
            let indexes = self.indexes.read();
            if indexes.is_empty() {
                Vec::new()
            } else {
                let now = crate::data::now_seconds();
                indexes
                    .iter()
                    .filter_map(|i| i.entry_for(&self.cmp, key, &update, now).map(|(k, r)| (i.clone(), k, r)))
                    .collect()
            }
        };
        let memtable = self.active_memtable();
        memtable.apply(&self.cmp, key, update);
        for (index, value_key, entry) in entries {
            index.store.active_memtable().apply(&index.store.cmp, &value_key, entry);
        }
        (memtable.size(), memtable.operations())
    }

    pub fn active_memtable(&self) -> Arc<Memtable> {
        self.memtables.read().active.clone()
    }

    /// Makes a fresh memtable active; the old one stays readable in the flushing list until it
    /// is written. The caller holds the engine's switch lock, and `position` is the commit
    /// log's position under it.
    pub(crate) fn switch_memtable(&self, position: ReplayPosition) {
        let mut m = self.memtables.write();
        let old = std::mem::replace(&mut m.active, Arc::new(Memtable::new()));
        m.flushing.push(Switched { memtable: old, position });
    }

    /// Records how a flush ended, for [`ColumnFamilyStore::flush_failure`].
    pub(crate) fn record_flush(&self, failure: Option<&crate::error::StorageError>) {
        *self.flush_error.lock() = failure.map(ToString::to_string);
        self.flush_failing.store(failure.is_some(), Ordering::Release);
    }

    /// Why the last flush failed, while its memtable is still waiting to be written.
    pub fn flush_failure(&self) -> Option<String> {
        if !self.flush_failing.load(Ordering::Acquire) {
            return None;
        }
        self.flush_error.lock().clone()
    }

    /// The memtables switched out and not written yet, oldest first.
    pub(crate) fn switched(&self) -> Vec<(Arc<Memtable>, ReplayPosition)> {
        self.memtables.read().flushing.iter().map(|s| (s.memtable.clone(), s.position)).collect()
    }

    pub(crate) fn finish_flush(&self, flushed: &Arc<Memtable>, sstable: Option<Arc<SsTableReader>>) {
        // Add the SSTable before dropping the memtable so no reader ever sees neither.
        if let Some(s) = sstable {
            self.sstables.write().push(s);
        }
        self.memtables.write().flushing.retain(|s| !Arc::ptr_eq(&s.memtable, flushed));
    }

    pub fn sstables(&self) -> Vec<Arc<SsTableReader>> {
        self.sstables.read().clone()
    }

    /// The primary directory (see [`ColumnFamilyStore::sstable_dirs`] for all of them).
    pub fn sstable_dir(&self) -> &Path {
        &self.dir
    }

    /// The column family's directory in every data directory, primary first.
    pub fn sstable_dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Where partition `key` may be. Memtables are looked up before SSTables: a flush adds its
    /// SSTable before it drops its memtable, so a reader looking in this order never misses both.
    fn sources(&self, key: &DecoratedKey) -> Sources {
        let (active, flushing) = {
            let m = self.memtables.read();
            (m.active.clone(), m.flushing.iter().map(|s| s.memtable.clone()).collect::<Vec<_>>())
        };
        let sstables = self.admitting(key);
        if flushing.is_empty() && sstables.is_empty() {
            return Sources::Memtable(active);
        }
        let mut memtables = flushing;
        memtables.insert(0, active);
        Sources::Merged { memtables, sstables }
    }

    /// The SSTables whose filters admit `key`.
    fn admitting(&self, key: &DecoratedKey) -> Vec<Arc<SsTableReader>> {
        self.sstables.read().iter().filter(|s| s.might_contain(key)).cloned().collect()
    }

    /// Every memtable that may hold data: the active one and the switched-out ones.
    pub(crate) fn memtable_snapshot(&self) -> Vec<Arc<Memtable>> {
        let m = self.memtables.read();
        let mut v = Vec::with_capacity(1 + m.flushing.len());
        v.push(m.active.clone());
        v.extend(m.flushing.iter().map(|s| s.memtable.clone()));
        v
    }

    /// The merged partition `key` (all versions, tombstones included), restricted to the blocks
    /// `filter` may need.
    pub fn read_row(&self, key: &DecoratedKey, filter: &ReadFilter) -> Result<Row> {
        let memtables = self.memtable_snapshot();
        self.merged_row(key, filter, &memtables, &self.admitting(key))
    }

    /// [`ColumnFamilyStore::read_row`] from these memtables and these SSTables, whose filters
    /// admitted `key` already.
    fn merged_row(
        &self,
        key: &DecoratedKey,
        filter: &ReadFilter,
        memtables: &[Arc<Memtable>],
        sstables: &[Arc<SsTableReader>],
    ) -> Result<Row> {
        let mut versions = Vec::new();
        // Only cells inside the filter's ranges are copied out of the memtables (as only blocks
        // that may hold such cells are read from SSTables); a count limit cannot be applied per
        // source, since another source's tombstone may hide cells a source counted.
        let every = filter.is_all();
        for m in memtables {
            let found = if every {
                m.get(key)
            } else {
                m.get_cells(key, |c| filter.may_intersect(&self.cmp, &c.name, &c.name))
            };
            if let Some(r) = found {
                versions.push(r);
            }
        }
        let block_filter = BlockFilter { cmp: &self.cmp, filter };
        let all = crate::sstable::AllCells;
        let cf: &dyn CellFilter = if filter.is_all() { &all } else { &block_filter };
        for s in sstables {
            if let Some(r) = s.get_admitted(key, cf)? {
                versions.push(r);
            }
        }
        Ok(merge_rows(&self.cmp, versions))
    }

    /// The live cells of partition `key` that `filter` selects.
    pub fn read(&self, key: &DecoratedKey, filter: &ReadFilter, now: i32) -> Result<Vec<Cell>> {
        let started = LatencySamples::start(&self.counters.reads);
        let cells = match self.sources(key) {
            // One version only: its selected live cells are copied straight out of the
            // memtable, with no merge.
            Sources::Memtable(m) => m.read_live(&self.cmp, key, filter, now).unwrap_or_default(),
            Sources::Merged { memtables, sstables } => {
                take_live(&self.cmp, self.merged_row(key, filter, &memtables, &sstables)?, filter, now)
            }
        };
        if let Some(started) = started {
            self.counters.read_latency.record(started.elapsed());
        }
        self.counters.reads.fetch_add(1, Ordering::Relaxed);
        Ok(cells)
    }

    /// Merged partitions in key order from `start`, every source merged lazily.
    pub fn scan(&self, start: &KeyBound) -> Result<MergedScan> {
        let from = start.as_lower_key();
        let mut sources: Vec<Source> = Vec::new();
        for m in self.memtable_snapshot() {
            // Lazy: a scan that stops after a few rows copies only those.
            sources.push(Box::new(MemtableScan::new(m, Bound::Included(from.clone())).map(Ok)));
        }
        for s in self.sstables() {
            sources.push(Box::new(s.scan(Some(&from))?));
        }
        Ok(MergedScan::new(self.cmp.clone(), sources))
    }
}

type Source = Box<dyn Iterator<Item = Result<(DecoratedKey, Row)>> + Send>;

/// A k-way merge of partition streams, each sorted by key, into merged partitions.
pub struct MergedScan {
    cmp: CellComparator,
    sources: Vec<std::iter::Peekable<Source>>,
}

impl MergedScan {
    fn new(cmp: CellComparator, sources: Vec<Source>) -> MergedScan {
        MergedScan { cmp, sources: sources.into_iter().map(Iterator::peekable).collect() }
    }
}

impl Iterator for MergedScan {
    type Item = Result<(DecoratedKey, Row)>;

    fn next(&mut self) -> Option<Self::Item> {
        // Find the smallest key among the sources' heads; surface errors at once.
        let mut smallest: Option<DecoratedKey> = None;
        for s in self.sources.iter_mut() {
            match s.peek() {
                Some(Ok((k, _))) if smallest.as_ref().is_none_or(|m| k < m) => smallest = Some(k.clone()),
                Some(Ok(_)) => {}
                Some(Err(_)) => return s.next(),
                None => {}
            }
        }
        let key = smallest?;
        let mut versions = Vec::new();
        for s in self.sources.iter_mut() {
            if matches!(s.peek(), Some(Ok((k, _))) if *k == key) {
                if let Some(Ok((_, row))) = s.next() {
                    versions.push(row);
                }
            }
        }
        Some(Ok((key, merge_rows(&self.cmp, versions))))
    }
}

impl MergedScan {
    /// A merge over arbitrary partition streams (compaction's inputs).
    pub(crate) fn over<I>(cmp: CellComparator, sources: Vec<I>) -> MergedScan
    where
        I: Iterator<Item = Result<(DecoratedKey, Row)>> + Send + 'static,
    {
        MergedScan::new(cmp, sources.into_iter().map(|s| Box::new(s) as Source).collect())
    }
}
