//! Compaction: merges SSTables, dropping shadowed data and tombstones past gc_grace_seconds.
//! Which SSTables merge, and into how many SSTables at which level, is the column family's
//! strategy's choice (`plan`: size-tiered, leveled or time-window, as Cassandra's); this module
//! runs what it chose.
//!
//! Crash safety: an output SSTable becomes visible only once complete (the writer's commit
//! point). A compaction writing several outputs finishes them in order, and only the last names
//! the inputs as ancestors: inputs still present at start-up next to a complete output naming
//! them are deleted then (see `sstable::cleanup_leftovers`); after a crash before the last
//! output, the inputs stay, next to a partial copy of their data, which reads merge as any
//! duplicate and a later compaction removes.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::info;

use crate::block_cache::BlockCache;
use crate::cfs::ColumnFamilyStore;
use crate::data::{now_seconds, CellKind, Row};
use crate::dht::DecoratedKey;
use crate::error::{Result, StorageError};
use crate::filter::compact_row;
use crate::sstable::{SsTableReader, SsTableWriter, WriterOptions};

mod plan;
mod rewrite;

pub use model::compaction_options as options;
pub use model::compaction_options::Strategy;
use plan::{Output, Placement};
pub(crate) use rewrite::{cleanup, scrub};
pub use rewrite::{CleanupSummary, ScrubSummary};

/// What a compaction needs from the engine running it, and nothing more.
pub(crate) struct CompactionEnv<'a> {
    pub writer_options: WriterOptions,
    /// Write rate limit in MB/s (0 = unthrottled), read as each row is written: a change
    /// (`setcompactionthroughput`) slows or speeds up running compactions too.
    pub throughput_mb_per_sec: &'a AtomicU32,
    /// The compactions running now (`compactionstats`).
    pub active: &'a ActiveCompactions,
    /// The engine's block cache, for the output's reader.
    pub cache: &'a Arc<BlockCache>,
    /// Set when the engine shuts down: a running compaction gives up (its output is discarded).
    pub stopping: &'a AtomicBool,
    /// `SnapshotBeforeCompaction`: link the column family's SSTables into a snapshot first.
    pub snapshot_before: bool,
}

impl CompactionEnv<'_> {
    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }
}

/// A running compaction, cleanup or scrub, as `compactionstats` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactionInfo {
    /// `Compaction`, `Cleanup` or `Scrub`.
    pub kind: &'static str,
    pub keyspace: String,
    pub cf: String,
    /// Bytes of partitions (uncompressed) processed so far, out of the inputs' total.
    pub bytes_done: u64,
    pub bytes_total: u64,
}

struct Running {
    id: u64,
    kind: &'static str,
    keyspace: String,
    cf: String,
    bytes_total: u64,
    bytes_done: AtomicU64,
    /// Set by `sibyltool stop`: the compaction gives up at its next partition.
    stop_requested: AtomicBool,
}

impl Running {
    fn info(&self) -> CompactionInfo {
        CompactionInfo {
            kind: self.kind,
            keyspace: self.keyspace.clone(),
            cf: self.cf.clone(),
            bytes_done: self.bytes_done.load(Ordering::Relaxed).min(self.bytes_total),
            bytes_total: self.bytes_total,
        }
    }
}

/// A compaction, cleanup or scrub that `sibyltool stop` stopped (Cassandra's
/// CompactionInterruptedException, in its words): what it wrote is removed, its inputs stay.
/// It reaches callers as `StorageError::CompactionInterrupted`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("Compaction interrupted: {kind}@{cf_id}({keyspace}, {cf}, {bytes_done}/{bytes_total})bytes")]
pub struct CompactionInterrupted {
    /// `Compaction`, `Cleanup` or `Scrub`.
    pub kind: &'static str,
    pub keyspace: String,
    pub cf: String,
    pub cf_id: uuid::Uuid,
    /// How far it had got, as `compactionstats` showed it.
    pub bytes_done: u64,
    pub bytes_total: u64,
}

impl CompactionInterrupted {
    /// The interruption `err` carries, if it is one.
    pub fn of(err: &StorageError) -> Option<&CompactionInterrupted> {
        match err {
            StorageError::CompactionInterrupted(i) => Some(i),
            _ => None,
        }
    }
}

/// The compactions running in one engine.
#[derive(Default)]
pub(crate) struct ActiveCompactions {
    running: parking_lot::Mutex<Vec<Arc<Running>>>,
    next_id: AtomicU64,
}

impl ActiveCompactions {
    /// Registers a compaction of `inputs`; it is listed until the returned guard is dropped.
    fn start(&self, kind: &'static str, store: &ColumnFamilyStore, inputs: &[Arc<SsTableReader>]) -> ActiveGuard<'_> {
        let running = Arc::new(Running {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            kind,
            keyspace: store.keyspace.clone(),
            cf: store.name.clone(),
            bytes_total: inputs.iter().map(|s| s.metadata().data_size).sum(),
            bytes_done: AtomicU64::new(0),
            stop_requested: AtomicBool::new(false),
        });
        self.running.lock().push(running.clone());
        ActiveGuard { active: self, running }
    }

    pub(crate) fn list(&self) -> Vec<CompactionInfo> {
        self.running.lock().iter().map(|r| r.info()).collect()
    }

    /// Asks every running operation of `kind` (`Compaction`, `Cleanup` or `Scrub`) to give up
    /// (Cassandra's `CompactionManager.stopCompaction`); each does at its next partition, and
    /// its caller gets a [`CompactionInterrupted`]. Returns those asked.
    pub(crate) fn stop(&self, kind: &str) -> Vec<CompactionInfo> {
        let running = self.running.lock();
        let stopped: Vec<CompactionInfo> = running
            .iter()
            .filter(|r| r.kind == kind)
            .inspect(|r| r.stop_requested.store(true, Ordering::Relaxed))
            .map(|r| r.info())
            .collect();
        for c in &stopped {
            info!(kind = c.kind, keyspace = %c.keyspace, cf = %c.cf, "stopping by operator request");
        }
        stopped
    }
}

/// Lists a compaction while it lives.
struct ActiveGuard<'a> {
    active: &'a ActiveCompactions,
    running: Arc<Running>,
}

impl ActiveGuard<'_> {
    fn advance(&self, bytes: u64) {
        self.running.bytes_done.fetch_add(bytes, Ordering::Relaxed);
    }

    /// An error once the engine shuts down, or `sibyltool stop` asked this operation of `store`
    /// to give up.
    fn check_stop(&self, env: &CompactionEnv, store: &ColumnFamilyStore) -> Result<()> {
        if env.stopping() {
            return Err(StorageError::ShuttingDown);
        }
        if !self.running.stop_requested.load(Ordering::Relaxed) {
            return Ok(());
        }
        let r = self.running.info();
        let interrupted = CompactionInterrupted {
            kind: r.kind,
            keyspace: r.keyspace,
            cf: r.cf,
            cf_id: store.id,
            bytes_done: r.bytes_done,
            bytes_total: r.bytes_total,
        };
        info!(keyspace = %store.keyspace, cf = %store.name, "{interrupted}; its output is removed, its inputs stay");
        Err(interrupted.into())
    }
}

impl Drop for ActiveGuard<'_> {
    fn drop(&mut self) {
        let id = self.running.id;
        self.active.running.lock().retain(|r| r.id != id);
    }
}

/// How many compactions the column family is due, as Cassandra's `pending tasks` estimates
/// them for its strategy.
pub(crate) fn pending_tasks(store: &ColumnFamilyStore) -> u64 {
    let Some(thresholds) = thresholds(store) else { return 0 };
    plan::pending(&facts(store), &store.metadata().compaction, thresholds)
}

/// Under leveled compaction: per level (0 to 8), its SSTables and the most it should hold
/// (Cassandra's `cfstats` line). Empty under other strategies.
pub(crate) fn sstables_in_each_level(store: &ColumnFamilyStore) -> Vec<(u64, u64)> {
    match store.metadata().compaction.strategy {
        Strategy::Leveled { fanout, .. } => plan::level_counts(&facts(store), fanout),
        _ => Vec::new(),
    }
}

/// `options` with the column family's bloom filter false-positive chance: its
/// `bloom_filter_fp_chance`, else Cassandra's default for its strategy (0.1 under leveled
/// compaction, whose reads touch few SSTables; 0.01 otherwise).
pub(crate) fn writer_options_for(options: WriterOptions, metadata: &crate::schema::CfMetadata) -> WriterOptions {
    let leveled = matches!(metadata.compaction.strategy, Strategy::Leveled { .. });
    WriterOptions { bloom_fp_chance: bloom_fp_chance(&metadata.def, leveled, options.bloom_fp_chance), ..options }
}

/// The bloom filter false-positive chance of `def`'s SSTables: its own when valid, else 0.1
/// under leveled compaction and `default` otherwise (what `system_schema.tables` shows too).
pub(crate) fn bloom_fp_chance(def: &crate::schema::CfDef, leveled: bool, default: f64) -> f64 {
    def.bloom_filter_fp_chance.filter(|p| *p > 0.0 && *p <= 1.0).unwrap_or(if leveled { 0.1 } else { default })
}

/// (min, max) SSTables per merge, as set at run time (`setcompactionthreshold`) or else by the
/// definition; `None` when background compaction is off for the column family (a threshold
/// of 0).
fn thresholds(store: &ColumnFamilyStore) -> Option<(usize, usize)> {
    let (min, max) = store.compaction_thresholds();
    (min > 0 && max > 0).then_some((min as usize, max as usize))
}

/// Checks thresholds to set at run time with Cassandra's rule
/// (`ColumnFamilyStore.validateCompactionThresholds`, in its words), and ours that a merge
/// takes two SSTables at least (as a definition's `min_compaction_threshold`); 0 in either
/// turns background compaction off. The reason they are refused, if they are.
pub(crate) fn check_thresholds(min: i32, max: i32) -> Result<(), String> {
    if min < 0 || max < 0 {
        return Err(format!("compaction thresholds cannot be negative: min is {min}, max is {max}"));
    }
    if min > max && max != 0 {
        return Err(format!(
            "The min_compaction_threshold cannot be larger than the max_compaction_threshold. Min is '{min}', Max is '{max}'."
        ));
    }
    if min == 1 {
        return Err(format!("min_compaction_threshold cannot be less than 2 (got {min})"));
    }
    Ok(())
}

/// What the strategies look at of each SSTable of the column family.
fn facts(store: &ColumnFamilyStore) -> Vec<plan::Facts> {
    let busy = store.compacting.lock();
    let now = std::time::SystemTime::now();
    store
        .sstables()
        .iter()
        .map(|s| {
            let m = s.metadata();
            let written = std::fs::metadata(s.descriptor().path(crate::sstable::Component::Statistics))
                .and_then(|f| f.modified())
                .ok();
            plan::Facts {
                generation: s.descriptor().generation,
                first: m.first_key.clone(),
                last: m.last_key.clone(),
                bytes: s.data_size(),
                level: m.level,
                max_timestamp: m.max_timestamp,
                min_timestamp: m.min_timestamp,
                max_local_deletion_time: m.max_local_deletion_time,
                cells: m.cell_count,
                tombstones: m.tombstone_count,
                age_seconds: written.and_then(|w| now.duration_since(w).ok()).map_or(0, |d| d.as_secs()),
                busy: busy.contains(&s.descriptor().generation),
            }
        })
        .collect()
}

/// The live SSTables with these generations (fewer if some went meanwhile).
fn by_generation(store: &ColumnFamilyStore, generations: &[u64]) -> Vec<Arc<SsTableReader>> {
    let live = store.sstables();
    generations.iter().filter_map(|g| live.iter().find(|s| s.descriptor().generation == *g).cloned()).collect()
}

/// Runs the compactions the column family's strategy asks for, until it asks for none. A
/// tombstone purge of one SSTable ends the pass: it may purge nothing yet, and would be asked
/// for again at once.
pub(crate) fn compact_if_needed(env: &CompactionEnv, store: &Arc<ColumnFamilyStore>) -> Result<()> {
    loop {
        if env.stopping() {
            return Ok(());
        }
        let options = store.metadata().compaction;
        let Some(thresholds) = thresholds(store).filter(|_| options.enabled && store.auto_compaction()) else {
            return Ok(()); // compaction disabled for this column family
        };
        let gc_before = now_seconds().saturating_sub(store.gc_grace_seconds());
        let memtable_min = store.memtable_snapshot().iter().map(|m| m.min_timestamp()).min().unwrap_or(i64::MAX);
        let Some(next) = plan::next(&facts(store), &options, thresholds, gc_before, memtable_min) else {
            return Ok(());
        };
        match next {
            plan::Plan::Merge { inputs, output } => {
                let inputs = by_generation(store, &inputs);
                if inputs.is_empty() || !reserve(store, &inputs) {
                    return Ok(());
                }
                compact(env, store, inputs, &|_| true, true, output)?;
            }
            plan::Plan::PurgeTombstones { input, level } => {
                let inputs = by_generation(store, &[input]);
                if inputs.is_empty() || !reserve(store, &inputs) {
                    return Ok(());
                }
                let output = Output { level: Placement::At(level), max_sstable_bytes: None };
                compact(env, store, inputs, &|_| true, true, output)?;
                return Ok(());
            }
            plan::Plan::Drop(generations) => {
                let expired = by_generation(store, &generations);
                if expired.is_empty() || !reserve(store, &expired) {
                    return Ok(());
                }
                let result = drop_expired(store, &expired);
                let mut busy = store.compacting.lock();
                for s in &expired {
                    busy.remove(&s.descriptor().generation);
                }
                result?;
            }
        }
    }
}

/// [`compact_if_needed`] for the compaction thread: a compaction `sibyltool stop` stopped is
/// no failure there (it was logged as it stopped), and the next flush asks for it again.
pub(crate) fn compact_in_background(env: &CompactionEnv, store: &Arc<ColumnFamilyStore>) -> Result<()> {
    match compact_if_needed(env, store) {
        Err(e) if CompactionInterrupted::of(&e).is_some() => Ok(()),
        other => other,
    }
}

/// Deletes reserved SSTables whose content all expired (see `plan::Plan::Drop`).
fn drop_expired(store: &ColumnFamilyStore, expired: &[Arc<SsTableReader>]) -> Result<()> {
    let generations: Vec<u64> = expired.iter().map(|s| s.descriptor().generation).collect();
    store.sstables.write().retain(|s| !generations.contains(&s.descriptor().generation));
    for s in expired {
        s.delete_files()?;
        info!(keyspace = %store.keyspace, cf = %store.name, file = %s.descriptor().path(crate::sstable::Component::Data).display(),
              "dropped an SSTable whose data all expired");
    }
    Ok(())
}

/// Merges every SSTable of the column family (major compaction): into one SSTable, or under
/// the leveled strategy into SSTables of its size filling level 1, then 2, and so on.
pub(crate) fn compact_all(env: &CompactionEnv, store: &Arc<ColumnFamilyStore>) -> Result<()> {
    let inputs = store.sstables();
    if inputs.is_empty() {
        return Ok(());
    }
    if !reserve(store, &inputs) {
        return Err(already_compacting(store));
    }
    let output = match store.metadata().compaction.strategy {
        Strategy::Leveled { sstable_size, fanout } => {
            Output { level: Placement::Fill { fanout }, max_sstable_bytes: Some(sstable_size) }
        }
        _ => Output::ONE_SSTABLE,
    };
    compact(env, store, inputs, &|_| true, true, output)
}

fn already_compacting(store: &ColumnFamilyStore) -> StorageError {
    StorageError::InvalidSchema(format!(
        "a compaction of {}.{} is already running; try again when it ends",
        store.keyspace, store.name
    ))
}

/// Marks `inputs` as being compacted; false if any already is.
fn reserve(store: &ColumnFamilyStore, inputs: &[Arc<SsTableReader>]) -> bool {
    let mut busy = store.compacting.lock();
    if inputs.iter().any(|s| busy.contains(&s.descriptor().generation)) {
        return false;
    }
    busy.extend(inputs.iter().map(|s| s.descriptor().generation));
    true
}

/// Merges the reserved `inputs` into one SSTable, keeping the partitions `keep` admits, then
/// releases them. With `SnapshotBeforeCompaction` and `may_snapshot` (merges, not cleanup, as in
/// 0.6) the column family's SSTables are linked into snapshot `<ms>-compact-<cf>-<generation>`
/// first; the engine never removes those.
fn compact(
    env: &CompactionEnv,
    store: &Arc<ColumnFamilyStore>,
    inputs: Vec<Arc<SsTableReader>>,
    keep: &dyn Fn(&DecoratedKey) -> bool,
    may_snapshot: bool,
    output: Output,
) -> Result<()> {
    let result = (|| {
        if env.snapshot_before && may_snapshot {
            let millis = crate::data::now_micros() / 1000;
            let first = inputs.first().map_or(0, |s| s.descriptor().generation);
            crate::engine::snapshot_store(store, &format!("{millis}-compact-{}-{first}", store.name), false)?;
        }
        let kind = if may_snapshot { "Compaction" } else { "Cleanup" };
        compact_reserved(env, store, &inputs, keep, kind, output)
    })();
    let mut busy = store.compacting.lock();
    for s in &inputs {
        busy.remove(&s.descriptor().generation);
    }
    result
}

fn compact_reserved(
    env: &CompactionEnv,
    store: &Arc<ColumnFamilyStore>,
    inputs: &[Arc<SsTableReader>],
    keep: &dyn Fn(&DecoratedKey) -> bool,
    kind: &'static str,
    output: Output,
) -> Result<()> {
    let started = Instant::now();
    let progress = env.active.start(kind, store, inputs);
    let now = now_seconds();
    let gc_before = now.saturating_sub(store.gc_grace_seconds());
    let input_gens: Vec<u64> = inputs.iter().map(|s| s.descriptor().generation).collect();
    let others: Vec<Arc<SsTableReader>> =
        store.sstables().into_iter().filter(|s| !input_gens.contains(&s.descriptor().generation)).collect();
    let memtables = store.memtable_snapshot();
    // A tombstone may only be dropped if no data it shadows can live outside this compaction.
    let can_purge = |key: &DecoratedKey, row: &Row| -> bool {
        let max_tombstone = row
            .cells
            .iter()
            .filter(|c| !matches!(c.kind, CellKind::Live))
            .map(|c| c.timestamp)
            .chain(row.range_tombstones.iter().map(|r| r.deletion.marked_at))
            .chain(std::iter::once(row.deletion.marked_at))
            .max()
            .unwrap_or(i64::MIN);
        !others.iter().any(|o| o.metadata().min_timestamp <= max_tombstone && o.might_contain(key))
            && !memtables.iter().any(|m| m.min_timestamp() <= max_tombstone && m.contains(key))
    };

    let replay_position = inputs
        .iter()
        .map(|s| (s.metadata().replay_position.segment_id, s.metadata().replay_position.offset))
        .max()
        .unwrap_or((0, 0));
    let mut outputs = Outputs::new(env, store, inputs, output, replay_position);
    let throttle = Throttle::new(env.throughput_mb_per_sec);
    let mut written_rows = 0u64;
    let merged = (|| {
        let sources = inputs.iter().map(|s| s.scan(None)).collect::<Result<Vec<_>>>()?;
        for item in crate::cfs::MergedScan::over(store.cmp.clone(), sources) {
            progress.check_stop(env, store)?;
            let (key, row) = item?;
            progress.advance(row.size() as u64);
            if !keep(&key) {
                continue;
            }
            let purge = can_purge(&key, &row);
            let row = compact_row(&store.cmp, row, now, gc_before, purge);
            if !row.is_empty() {
                throttle.pace(row.size() as u64);
                outputs.append(&key, &row)?;
                written_rows += 1;
            }
        }
        Ok(())
    })();
    let finished = match merged {
        Ok(()) => outputs.finish(input_gens.clone()),
        Err(e) => {
            outputs.abort();
            return Err(e);
        }
    };
    let finished = finished?;

    // Swap inputs for the outputs, unless a truncate removed the inputs meanwhile.
    {
        let mut live = store.sstables.write();
        if !input_gens.iter().all(|g| live.iter().any(|s| s.descriptor().generation == *g)) {
            drop(live);
            for o in finished {
                o.delete_files()?;
            }
            return Ok(());
        }
        live.retain(|s| !input_gens.contains(&s.descriptor().generation));
        live.extend(finished.iter().cloned());
    }
    for s in inputs {
        s.delete_files()?;
    }
    store.counters.compactions.fetch_add(1, Ordering::Relaxed);
    info!(keyspace = %store.keyspace, cf = %store.name, inputs = inputs.len(), outputs = finished.len(), rows = written_rows,
          elapsed_ms = started.elapsed().as_millis() as u64, "compacted");
    Ok(())
}

/// The SSTables a compaction writes: one, or a new one each time the current one holds
/// `max_sstable_bytes`, at the levels its [`Output`] says.
struct Outputs<'a> {
    env: &'a CompactionEnv<'a>,
    store: &'a ColumnFamilyStore,
    shape: Output,
    replay_position: (u64, u64),
    /// Partitions expected per output, for its bloom filter.
    expected_keys: usize,
    /// Complete outputs, not yet live (none names the inputs as ancestors).
    done: Vec<Arc<SsTableReader>>,
    current: Option<SsTableWriter>,
    /// Under `Placement::Fill`: the level being filled and the SSTables given to it so far.
    filling: (u32, u64),
}

impl<'a> Outputs<'a> {
    fn new(
        env: &'a CompactionEnv<'a>,
        store: &'a ColumnFamilyStore,
        inputs: &[Arc<SsTableReader>],
        shape: Output,
        replay_position: (u64, u64),
    ) -> Outputs<'a> {
        let keys: u64 = inputs.iter().map(|s| s.metadata().key_count).sum();
        let bytes: u64 = inputs.iter().map(|s| s.data_size()).sum::<u64>().max(1);
        let expected_keys = match shape.max_sstable_bytes {
            Some(max) if max < bytes => (keys as u128 * u128::from(max) / u128::from(bytes)) as usize + 1,
            _ => keys as usize,
        };
        Outputs { env, store, shape, replay_position, expected_keys, done: Vec::new(), current: None, filling: (1, 0) }
    }

    fn append(&mut self, key: &DecoratedKey, row: &Row) -> Result<()> {
        let full = match (&self.current, self.shape.max_sstable_bytes) {
            (Some(w), Some(max)) => w.data_position() >= max,
            _ => false,
        };
        if full {
            if let Some(w) = self.current.take() {
                self.done.push(Arc::new(w.finish(self.replay_position, Vec::new(), self.env.cache)?));
            }
        }
        let writer = match &mut self.current {
            Some(w) => w,
            None => {
                let options = writer_options_for(self.env.writer_options.clone(), &self.store.metadata());
                let options = WriterOptions { level: self.next_level(), ..options };
                let w = SsTableWriter::create(self.store.new_descriptor(), self.expected_keys, options)?;
                self.current.insert(w)
            }
        };
        writer.append(key, row)
    }

    /// The level of the output about to start.
    fn next_level(&mut self) -> u32 {
        match self.shape.level {
            Placement::At(level) => level,
            Placement::Fill { fanout, .. } => {
                let (level, given) = self.filling;
                self.filling = if given >= fanout.saturating_pow(level) { (level + 1, 1) } else { (level, given + 1) };
                self.filling.0
            }
        }
    }

    /// Completes the last output, which names the inputs as ancestors; returns them all.
    fn finish(mut self, ancestors: Vec<u64>) -> Result<Vec<Arc<SsTableReader>>> {
        if let Some(w) = self.current.take() {
            match w.finish(self.replay_position, ancestors, self.env.cache) {
                Ok(last) => self.done.push(Arc::new(last)),
                Err(e) => {
                    self.abort();
                    return Err(e);
                }
            }
        }
        Ok(std::mem::take(&mut self.done))
    }

    /// Removes what was written: the inputs stay as they are.
    fn abort(&mut self) {
        if let Some(w) = self.current.take() {
            w.abort();
        }
        for s in self.done.drain(..) {
            if let Err(e) = s.delete_files() {
                tracing::warn!(error = %e, "cannot remove the output of a failed compaction");
            }
        }
    }
}

/// Limits compaction's write rate so it does not starve client requests.
/// The rate is read at every row, so a change applies at once; the budget restarts with it.
struct Throttle<'a> {
    mb_per_sec: &'a AtomicU32,
    /// The rate the budget below was counted at, when it started, and the bytes since.
    rate: std::cell::Cell<u32>,
    started: std::cell::Cell<Instant>,
    done: std::cell::Cell<u64>,
}

impl Throttle<'_> {
    fn new(mb_per_sec: &AtomicU32) -> Throttle<'_> {
        Throttle {
            mb_per_sec,
            rate: std::cell::Cell::new(mb_per_sec.load(Ordering::Relaxed)),
            started: std::cell::Cell::new(Instant::now()),
            done: std::cell::Cell::new(0),
        }
    }

    fn pace(&self, bytes: u64) {
        let rate = self.mb_per_sec.load(Ordering::Relaxed);
        if rate != self.rate.get() {
            self.rate.set(rate);
            self.started.set(Instant::now());
            self.done.set(0);
        }
        if rate == 0 {
            return;
        }
        let done = self.done.get() + bytes;
        self.done.set(done);
        let due = Duration::from_secs_f64(done as f64 / (u64::from(rate) * 1024 * 1024) as f64);
        let elapsed = self.started.get().elapsed();
        if due > elapsed {
            // In slices, so a raised rate (or a shutdown) is not kept waiting by a long sleep.
            std::thread::sleep((due - elapsed).min(Duration::from_millis(100)));
        }
    }
}

#[cfg(test)]
mod tests;
