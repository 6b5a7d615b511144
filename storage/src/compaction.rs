//! Size-tiered compaction: merges SSTables of similar size into one, dropping shadowed data and
//! tombstones past gc_grace_seconds.
//!
//! Crash safety: the output SSTable becomes visible only once complete (the writer's commit
//! point) and names its inputs as ancestors; inputs still present at start-up next to a
//! complete output are deleted then (see `sstable::cleanup_leftovers`).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::info;

use crate::block_cache::BlockCache;
use crate::cfs::ColumnFamilyStore;
use crate::data::{now_seconds, CellKind, Row};
use crate::dht::{DecoratedKey, Range, Token};
use crate::error::{Result, StorageError};
use crate::filter::compact_row;
use crate::sstable::{SsTableReader, SsTableWriter, WriterOptions};

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
        });
        self.running.lock().push(running.clone());
        ActiveGuard { active: self, running }
    }

    pub(crate) fn list(&self) -> Vec<CompactionInfo> {
        self.running
            .lock()
            .iter()
            .map(|r| CompactionInfo {
                kind: r.kind,
                keyspace: r.keyspace.clone(),
                cf: r.cf.clone(),
                bytes_done: r.bytes_done.load(Ordering::Relaxed).min(r.bytes_total),
                bytes_total: r.bytes_total,
            })
            .collect()
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
}

impl Drop for ActiveGuard<'_> {
    fn drop(&mut self) {
        let id = self.running.id;
        self.active.running.lock().retain(|r| r.id != id);
    }
}

/// How many compactions the column family is due, as Cassandra's `pending tasks` estimates
/// them: its size tiers with at least the minimum threshold of SSTables not being compacted.
pub(crate) fn pending_tasks(store: &ColumnFamilyStore) -> u64 {
    let def = &store.metadata().def;
    let min = def.min_compaction_threshold;
    if min <= 0 || def.max_compaction_threshold <= 0 {
        return 0;
    }
    size_tiers(candidates(store)).iter().filter(|t| t.len() >= min as usize).count() as u64
}

/// The SSTables no compaction is working on, with their sizes, for [`size_tiers`].
fn candidates(store: &ColumnFamilyStore) -> Vec<(u64, Arc<SsTableReader>)> {
    let busy = store.compacting.lock();
    store
        .sstables()
        .into_iter()
        .filter(|s| !busy.contains(&s.descriptor().generation))
        .map(|s| (s.data_size(), s))
        .collect()
}

/// SSTables below this size all count as one tier.
const SMALL_SSTABLE_BYTES: u64 = 50 << 20;

/// Groups SSTables of similar size: each tier holds sizes within half to one and a half times
/// its average (all small ones share a tier).
pub fn size_tiers(mut sstables: Vec<(u64, Arc<SsTableReader>)>) -> Vec<Vec<Arc<SsTableReader>>> {
    sstables.sort_by_key(|(size, _)| *size);
    // (average size, members with their sizes)
    type Tier = (u64, Vec<(u64, Arc<SsTableReader>)>);
    let mut tiers: Vec<Tier> = Vec::new();
    for (size, s) in sstables {
        let fits = tiers.last().is_some_and(|(avg, members)| {
            let avg = *avg;
            (size as f64 >= avg as f64 * 0.5 && size as f64 <= avg as f64 * 1.5)
                || (size < SMALL_SSTABLE_BYTES && avg < SMALL_SSTABLE_BYTES && !members.is_empty())
        });
        if fits {
            if let Some((avg, members)) = tiers.last_mut() {
                members.push((size, s));
                *avg = members.iter().map(|(sz, _)| *sz).sum::<u64>() / members.len() as u64;
            }
        } else {
            tiers.push((size, vec![(size, s)]));
        }
    }
    tiers.into_iter().map(|(_, m)| m.into_iter().map(|(_, s)| s).collect()).collect()
}

/// Runs size-tiered compactions until no tier has enough SSTables.
pub(crate) fn compact_if_needed(env: &CompactionEnv, store: &Arc<ColumnFamilyStore>) -> Result<()> {
    loop {
        if env.stopping() {
            return Ok(());
        }
        let def = &store.metadata().def;
        let (min, max) = (def.min_compaction_threshold, def.max_compaction_threshold);
        if min <= 0 || max <= 0 {
            return Ok(()); // compaction disabled for this column family
        }
        let Some(mut tier) = size_tiers(candidates(store)).into_iter().find(|t| t.len() >= min as usize) else {
            return Ok(());
        };
        tier.truncate(max as usize);
        if !reserve(store, &tier) {
            return Ok(());
        }
        compact(env, store, tier, &|_| true, true)?;
    }
}

/// Merges every SSTable of the column family (major compaction).
pub(crate) fn compact_all(env: &CompactionEnv, store: &Arc<ColumnFamilyStore>) -> Result<()> {
    let inputs = store.sstables();
    if inputs.is_empty() {
        return Ok(());
    }
    if !reserve(store, &inputs) {
        return Err(already_compacting(store));
    }
    compact(env, store, inputs, &|_| true, true)
}

/// What cleanup did to a column family's SSTables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CleanupSummary {
    /// SSTables rewritten without the partitions outside the owned ranges.
    pub rewritten: usize,
    /// SSTables whose keys all lie in one owned range, left as they are.
    pub untouched: usize,
}

/// Drops the partitions outside `owned` by rewriting each SSTable that may hold one on its own,
/// as Cassandra's cleanup does: it needs free space for one SSTable at a time, not for the
/// whole column family, and leaves the SSTables' sizes (their compaction tiers) as they were.
/// An SSTable whose first and last keys fall in one owned range holds nothing to drop.
pub(crate) fn cleanup(env: &CompactionEnv, store: &Arc<ColumnFamilyStore>, owned: &[Range]) -> Result<CleanupSummary> {
    let mut summary = CleanupSummary::default();
    let keep = |key: &DecoratedKey| owned.iter().any(|r| r.contains(&key.token));
    for sstable in store.sstables() {
        if env.stopping() {
            return Err(StorageError::ShuttingDown);
        }
        let (first, last) = (&sstable.metadata().first_key.token, &sstable.metadata().last_key.token);
        if owned.iter().any(|r| holds_span(r, first, last)) {
            summary.untouched += 1;
            continue;
        }
        if !reserve(store, std::slice::from_ref(&sstable)) {
            return Err(already_compacting(store));
        }
        compact(env, store, vec![sstable], &keep, false)?;
        summary.rewritten += 1;
    }
    Ok(summary)
}

/// What scrub found in a column family's SSTables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScrubSummary {
    /// SSTables read through.
    pub checked: usize,
    /// Damaged SSTables replaced by a copy of what could be read.
    pub rewritten: usize,
    /// Partitions read back whole.
    pub partitions: u64,
    /// The keys of the partitions whose data could not be read, and so were left out.
    pub lost: Vec<DecoratedKey>,
}

/// Cassandra's scrub: reads every SSTable of the column family through, partition by partition
/// as its (separately verified) index lists them, and replaces each one with damaged partitions
/// by a copy of everything else, so reads and compactions stop failing on it. A partition lost
/// this way comes back from the other replicas by repair. An SSTable without damage is left as
/// it is; a damaged one is first linked into snapshot `<ms>-pre-scrub-<cf>-<generation>` (with
/// the column family's other SSTables). One whose index itself is damaged cannot be scrubbed,
/// and fails the scrub by name.
pub(crate) fn scrub(env: &CompactionEnv, store: &Arc<ColumnFamilyStore>) -> Result<ScrubSummary> {
    let mut summary = ScrubSummary::default();
    for sstable in store.sstables() {
        if env.stopping() {
            return Err(StorageError::ShuttingDown);
        }
        if !reserve(store, std::slice::from_ref(&sstable)) {
            return Err(already_compacting(store));
        }
        let result = scrub_one(env, store, &sstable, &mut summary);
        store.compacting.lock().remove(&sstable.descriptor().generation);
        result?;
    }
    Ok(summary)
}

/// Scrubs one reserved SSTable: a read-through first, and a rewrite only if it found damage.
fn scrub_one(
    env: &CompactionEnv,
    store: &Arc<ColumnFamilyStore>,
    sstable: &Arc<SsTableReader>,
    summary: &mut ScrubSummary,
) -> Result<()> {
    let mut lost = Vec::new();
    let mut readable = 0u64;
    let progress = env.active.start("Scrub", store, std::slice::from_ref(sstable));
    let mut scan = sstable.scan(None)?.past_damaged_partitions();
    while let Some(item) = scan.next() {
        match item {
            Ok((_, row)) => {
                readable += 1;
                progress.advance(row.size() as u64);
            }
            Err(e) => match scan.damaged_key() {
                Some(key) => {
                    tracing::warn!(keyspace = %store.keyspace, cf = %store.name, key = %String::from_utf8_lossy(&key.key),
                                   error = %e, "scrub: a damaged partition is left out");
                    lost.push(key.clone());
                }
                None => return Err(e),
            },
        }
    }
    summary.checked += 1;
    summary.partitions += readable;
    if lost.is_empty() {
        return Ok(());
    }

    // As Cassandra's scrub does, the damaged files are kept in a snapshot first: what cannot
    // be read here may still be worth an expert's look.
    let millis = crate::data::now_micros() / 1000;
    let generation = sstable.descriptor().generation;
    crate::engine::snapshot_store(store, &format!("{millis}-pre-scrub-{}-{generation}", store.name), false)?;
    let mut writer = SsTableWriter::create(store.new_descriptor(), readable as usize, env.writer_options.clone())?;
    let written = (|| {
        let mut scan = sstable.scan(None)?.past_damaged_partitions();
        while let Some(item) = scan.next() {
            match item {
                Ok((key, row)) => writer.append(&key, &row)?,
                // The damage found above is skipped; anything else stops the rewrite.
                Err(e) if scan.damaged_key().is_none() => return Err(e),
                Err(_) => {}
            }
        }
        Ok::<_, StorageError>(())
    })();
    if let Err(e) = written {
        writer.abort();
        return Err(e);
    }
    let position = sstable.metadata().replay_position;
    let output = if readable > 0 {
        Some(Arc::new(writer.finish((position.segment_id, position.offset), vec![generation], env.cache)?))
    } else {
        writer.abort();
        None
    };
    {
        let mut live = store.sstables.write();
        if !live.iter().any(|s| s.descriptor().generation == generation) {
            // A truncate removed it meanwhile.
            drop(live);
            if let Some(o) = output {
                o.delete_files()?;
            }
            return Ok(());
        }
        live.retain(|s| s.descriptor().generation != generation);
        if let Some(o) = &output {
            live.push(o.clone());
        }
    }
    sstable.delete_files()?;
    info!(keyspace = %store.keyspace, cf = %store.name, file = %sstable.descriptor().path(crate::sstable::Component::Data).display(),
          kept = readable, lost = lost.len(), "scrub: rewrote a damaged SSTable");
    summary.rewritten += 1;
    summary.lost.extend(lost);
    Ok(())
}

/// Whether every token from `first` to `last` (`first <= last`, both included) lies in `range`.
fn holds_span(range: &Range, first: &Token, last: &Token) -> bool {
    range.contains(first) && (first == last || range.contains_range(&Range::new(first.clone(), last.clone())))
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
) -> Result<()> {
    let result = (|| {
        if env.snapshot_before && may_snapshot {
            let millis = crate::data::now_micros() / 1000;
            let first = inputs.first().map_or(0, |s| s.descriptor().generation);
            crate::engine::snapshot_store(store, &format!("{millis}-compact-{}-{first}", store.name), false)?;
        }
        let kind = if may_snapshot { "Compaction" } else { "Cleanup" };
        compact_reserved(env, store, &inputs, keep, kind)
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

    let expected: usize = inputs.iter().map(|s| s.metadata().key_count as usize).sum();
    let desc = store.new_descriptor();
    let mut writer = SsTableWriter::create(desc, expected, env.writer_options.clone())?;
    let throttle = Throttle::new(env.throughput_mb_per_sec);
    let mut written_rows = 0u64;
    let merged = (|| {
        let sources = inputs.iter().map(|s| s.scan(None)).collect::<Result<Vec<_>>>()?;
        for item in crate::cfs::MergedScan::over(store.cmp.clone(), sources) {
            if env.stopping() {
                return Err(StorageError::ShuttingDown);
            }
            let (key, row) = item?;
            progress.advance(row.size() as u64);
            if !keep(&key) {
                continue;
            }
            let purge = can_purge(&key, &row);
            let row = compact_row(&store.cmp, row, now, gc_before, purge);
            if !row.is_empty() {
                throttle.pace(row.size() as u64);
                writer.append(&key, &row)?;
                written_rows += 1;
            }
        }
        Ok(())
    })();
    if let Err(e) = merged {
        writer.abort();
        return Err(e);
    }
    let replay_position = inputs
        .iter()
        .map(|s| (s.metadata().replay_position.segment_id, s.metadata().replay_position.offset))
        .max()
        .unwrap_or((0, 0));
    let output = if written_rows > 0 {
        Some(Arc::new(writer.finish(replay_position, input_gens.clone(), env.cache)?))
    } else {
        writer.abort();
        None
    };

    // Swap inputs for the output, unless a truncate removed the inputs meanwhile.
    {
        let mut live = store.sstables.write();
        if !input_gens.iter().all(|g| live.iter().any(|s| s.descriptor().generation == *g)) {
            drop(live);
            if let Some(o) = output {
                o.delete_files()?;
            }
            return Ok(());
        }
        live.retain(|s| !input_gens.contains(&s.descriptor().generation));
        if let Some(o) = &output {
            live.push(o.clone());
        }
    }
    for s in inputs {
        s.delete_files()?;
    }
    store.counters.compactions.fetch_add(1, Ordering::Relaxed);
    info!(keyspace = %store.keyspace, cf = %store.name, inputs = inputs.len(), rows = written_rows,
          elapsed_ms = started.elapsed().as_millis() as u64, "compacted");
    Ok(())
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
mod tests {
    use super::*;

    fn t(b: u8) -> Token {
        Token(vec![b])
    }

    #[test]
    fn a_span_is_held_only_if_no_token_between_its_ends_falls_outside() {
        let plain = Range::new(t(10), t(20));
        assert!(holds_span(&plain, &t(11), &t(20)));
        assert!(holds_span(&plain, &t(15), &t(15)));
        assert!(!holds_span(&plain, &t(10), &t(15)), "the left end is excluded");
        assert!(!holds_span(&plain, &t(15), &t(21)));
        // (200, 5] wraps: it holds (200, max] and [min, 5], not the tokens in between.
        let wrapping = Range::new(t(200), t(5));
        assert!(holds_span(&wrapping, &t(201), &t(255)));
        assert!(holds_span(&wrapping, &t(1), &t(5)));
        assert!(!holds_span(&wrapping, &t(1), &t(201)), "the span crosses the tokens the range skips");
        assert!(!holds_span(&wrapping, &t(6), &t(6)));
        assert!(holds_span(&Range::full_ring(), &t(0), &t(255)));
        // (100, min] runs to the end of the ring.
        let to_end = Range::new(t(100), Token::minimum());
        assert!(holds_span(&to_end, &t(101), &t(255)));
        assert!(!holds_span(&to_end, &t(50), &t(255)));
    }
}
