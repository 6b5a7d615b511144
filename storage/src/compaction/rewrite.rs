//! Compactions that rewrite one SSTable at a time instead of merging several: cleanup, which
//! leaves out the partitions this node no longer owns, and scrub, which keeps what can still be
//! read of a damaged SSTable.

use std::sync::Arc;

use tracing::info;

use super::plan::{Output, Placement};
use super::{already_compacting, compact, reserve, writer_options_for, CompactionEnv};
use crate::cfs::ColumnFamilyStore;
use crate::dht::{DecoratedKey, Range, Token};
use crate::error::{Result, StorageError};
use crate::sstable::{SsTableReader, SsTableWriter, WriterOptions};

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
        let output = Output { level: Placement::At(sstable.metadata().level), max_sstable_bytes: None };
        compact(env, store, vec![sstable], &keep, false, output)?;
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
        progress.check_stop(env, store)?;
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
    let options = writer_options_for(env.writer_options.clone(), &store.metadata());
    let options = WriterOptions { level: sstable.metadata().level, ..options };
    let mut writer = SsTableWriter::create(store.new_descriptor(), readable as usize, options)?;
    let written = (|| {
        let mut scan = sstable.scan(None)?.past_damaged_partitions();
        while let Some(item) = scan.next() {
            progress.check_stop(env, store)?;
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
pub(super) fn holds_span(range: &Range, first: &Token, last: &Token) -> bool {
    range.contains(first) && (first == last || range.contains_range(&Range::new(first.clone(), last.clone())))
}
