//! The work an operator has a node do on its data: flush and compact, cleanup, drain, repair,
//! snapshots, scrub, import and index rebuilds; compaction's statistics, thresholds and `stop`;
//! and the throughput limits of compaction and streaming.
//!
//! Flush, compact, cleanup, repair, snapshot and scrub hold the operations lock shared, so a
//! drain (which holds it exclusively) waits for them, and those after a drain see the drained
//! mode. Engine calls block on disk, so they run on the blocking pool ([`run_blocking`]), one
//! column family at a time, each with its progress line.

use admin_protocol::*;
use storage::StorageError;
use tokio::io::AsyncWrite;

use super::reply::{ReplyWriter, HEARTBEAT};
use super::state::{
    follow, join_paths, run_blocking, select_stores, with_heartbeat, AdminState, OpError, MODE_DRAINED, MODE_NORMAL,
};
use crate::node::Node;

/// What a client sees after a drain (checked by the sibyltool integration test).
pub(super) const DRAINED_EFFECT: &str = "writes are refused: Thrift clients get an internal error \
     (TApplicationException INTERNAL_ERROR \"storage is shutting down\"); reads still work. \
     Restart the node to accept writes again.";

/// Cassandra's `nodetool drain`, whose sequence the cluster layer runs
/// ([`Coordinator::drain`](cluster::coordinator::Coordinator::drain)). It holds the operations
/// lock exclusively, so it waits for running flushes and compactions; asked again, it answers
/// that the node is drained already. A node leaving the ring, or gone, refuses it.
pub(super) async fn drain<W: AsyncWrite + Unpin>(
    state: &AdminState,
    out: &mut ReplyWriter<W>,
) -> Result<DrainResult, OpError> {
    let _exclusive = state.ops_lock.write().await;
    match state.mode() {
        MODE_DRAINED => {
            return Ok(DrainResult { already_drained: true, flushed: Vec::new(), effect: DRAINED_EFFECT.into() })
        }
        MODE_NORMAL => {}
        _ => return Err(OpError::Left("drain")),
    }
    let drained = follow(state, out, |progress| state.node.coordinator.drain(progress)).await?;
    Ok(DrainResult { already_drained: false, flushed: drained.flushed, effect: DRAINED_EFFECT.into() })
}

/// What [`flush_or_compact`] does to each column family.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Work {
    Flush,
    Compact,
}

/// `flush` and `compact` of the column families named (every one of the keyspace, or of the
/// node, when none is), each name checked before any work starts.
pub(super) async fn flush_or_compact<W: AsyncWrite + Unpin>(
    state: &AdminState,
    work: Work,
    keyspace: Option<&str>,
    cfs: &[String],
    out: &mut ReplyWriter<W>,
) -> Result<WorkResult, OpError> {
    let _shared = state.ops_lock.read().await;
    state.check_not_drained(if work == Work::Flush { "flush" } else { "compact" })?;
    let stores = select_stores(&state.node, keyspace, cfs)?;
    per_cf(&state.node, &stores, work, out).await
}

fn sstable_totals(node: &Node, (ks, cf): &(String, String)) -> Result<(u64, u64), OpError> {
    let s = node.storage.cf_stats(ks, cf)?;
    Ok((s.sstable_count, s.disk_bytes))
}

/// Flushes or major-compacts each store in turn, reporting progress per column family.
async fn per_cf<W: AsyncWrite + Unpin>(
    node: &Node,
    stores: &[(String, String)],
    work: Work,
    out: &mut ReplyWriter<W>,
) -> Result<WorkResult, OpError> {
    let total = stores.len() as u64;
    let verb = if work == Work::Flush { "flushing" } else { "compacting" };
    let mut done = Vec::new();
    for (i, store) in stores.iter().enumerate() {
        let name = format!("{}.{}", store.0, store.1);
        let progress = Progress { done: i as u64, total, what: format!("{verb} {name}") };
        out.progress(progress.clone()).await;
        let (sstables_before, bytes_before) = sstable_totals(node, store)?;
        let storage = node.storage.clone();
        let (ks, cf) = store.clone();
        run_blocking(out, &progress, move || match work {
            Work::Flush => storage.flush(&ks, &cf),
            Work::Compact => storage.major_compact(&ks, &cf),
        })
        .await??;
        let (sstables_after, bytes_after) = sstable_totals(node, store)?;
        done.push(CfWork { name, sstables_before, sstables_after, bytes_before, bytes_after });
    }
    let noun = if total == 1 { "column family" } else { "column families" };
    let past = if work == Work::Flush { "flushed" } else { "compacted" };
    out.progress(Progress { done: total, total, what: format!("{past} {total} {noun}") }).await;
    Ok(WorkResult { column_families: done })
}

/// Anti-entropy repair of the ranges this node replicates, one column family and range at a
/// time (how: `cluster::coordinator::repair`). Ranges with one replica have nothing to compare
/// and are left out.
pub(super) async fn repair<W: AsyncWrite + Unpin>(
    state: &AdminState,
    keyspace: Option<&str>,
    cfs: &[String],
    primary_range: bool,
    out: &mut ReplyWriter<W>,
) -> Result<RepairResult, OpError> {
    let _shared = state.ops_lock.read().await;
    state.check_not_drained("repair")?;
    let node = &state.node;
    let coordinator = &node.coordinator;
    let partitioner = coordinator.partitioner();
    let stores = select_stores(node, keyspace, cfs)?;
    let mut steps = Vec::new();
    for (i, (ks, _)) in stores.iter().enumerate() {
        for (range, replicas) in coordinator.repair_ranges(ks, primary_range)? {
            if replicas.len() > 1 {
                steps.push((i, range, replicas));
            }
        }
    }
    let mut done: Vec<RepairCf> = stores
        .iter()
        .map(|(ks, cf)| RepairCf { name: format!("{ks}.{cf}"), ranges: 0, partitions: 0, writes: 0, mismatched: 0 })
        .collect();
    let total = steps.len() as u64;
    let local = coordinator.membership().local();
    for (step, (i, range, replicas)) in steps.iter().enumerate() {
        let (ks, cf) = &stores[*i];
        let others: Vec<String> = replicas.iter().filter(|ep| **ep != local).map(|ep| ep.ip().to_string()).collect();
        let what = format!("repairing {ks}.{cf} {} with {}", partitioner.range_to_string(range), others.join(", "));
        let progress = Progress { done: step as u64, total, what };
        out.progress(progress.clone()).await;
        let report =
            with_heartbeat(out, &progress, HEARTBEAT, coordinator.repair_range(ks, cf, range, replicas)).await?;
        let cf = &mut done[*i];
        cf.ranges += 1;
        cf.partitions += report.partitions;
        cf.writes += report.writes;
        cf.mismatched += report.mismatched;
    }
    let noun = if total == 1 { "range" } else { "ranges" };
    out.progress(Progress { done: total, total, what: format!("repaired {total} {noun}") }).await;
    Ok(RepairResult { column_families: done })
}

/// Drops the data of ranges this node no longer replicates (Cassandra's `nodetool cleanup`,
/// after a node joined and took ranges from it): each column family of each keyspace is
/// flushed and rewritten without the partitions outside the node's ranges (those it replicates
/// or is taking over). A keyspace whose ranges cover the ring (one node, or as many replicas
/// as nodes) and the node-local system keyspaces have nothing to clean up, and say so.
pub(super) async fn cleanup<W: AsyncWrite + Unpin>(
    state: &AdminState,
    keyspace: Option<&str>,
    out: &mut ReplyWriter<W>,
) -> Result<CleanupResult, OpError> {
    let _shared = state.ops_lock.read().await;
    state.check_not_drained("cleanup")?;
    let node = &state.node;
    let schema = node.storage.schema();
    let keyspaces: Vec<_> = match keyspace {
        Some(k) => vec![schema.keyspaces.get(k).cloned().ok_or_else(|| StorageError::UnknownKeyspace(k.into()))?],
        None => schema.keyspaces.values().cloned().collect(),
    };
    let ring_size = node.coordinator.membership().ring().sorted_tokens().len();
    let mut done = Vec::new();
    for ks in keyspaces {
        let column_families = ks.cf_defs.len() as u64;
        let nothing = |reason: String| CleanupKeyspace {
            keyspace: ks.name.clone(),
            column_families,
            removed_bytes: 0,
            reason: format!("nothing to clean up: {reason}"),
        };
        if ring_size <= 1 {
            done.push(nothing(format!("this node is the only one in the ring ({ring_size} token) and owns every key")));
            continue;
        }
        if storage::is_builtin_keyspace(&ks.name) {
            done.push(nothing("a system keyspace, local to this node".into()));
            continue;
        }
        let Some(ranges) = node.coordinator.owned_ranges(&ks.name)? else {
            done.push(nothing("this node replicates every range of it".into()));
            continue;
        };
        let mut removed = 0u64;
        for (i, cf) in ks.cf_defs.iter().enumerate() {
            let store = (ks.name.clone(), cf.name.clone());
            let progress = Progress {
                done: i as u64,
                total: column_families,
                what: format!("cleaning up {}.{}", ks.name, cf.name),
            };
            out.progress(progress.clone()).await;
            let (_, before) = sstable_totals(node, &store)?;
            let storage = node.storage.clone();
            let owned = ranges.clone();
            let (k, c) = store.clone();
            let summary = run_blocking(out, &progress, move || storage.cleanup(&k, &c, &owned)).await??;
            tracing::info!(keyspace = %ks.name, cf = %cf.name, rewritten = summary.rewritten, untouched = summary.untouched,
                   "cleaned up");
            let (_, after) = sstable_totals(node, &store)?;
            removed += before.saturating_sub(after);
        }
        done.push(CleanupKeyspace {
            keyspace: ks.name.clone(),
            column_families,
            removed_bytes: removed,
            reason: format!("kept the {} ranges this node replicates", ranges.len()),
        });
    }
    Ok(CleanupResult { keyspaces: done })
}

/// The keyspaces named (every keyspace when none), each checked to exist before any work.
fn named_keyspaces(node: &Node, names: &[String]) -> Result<Vec<model::schema::KeyspaceDef>, OpError> {
    let schema = node.storage.schema();
    if names.is_empty() {
        return Ok(schema.keyspaces.values().cloned().collect());
    }
    names
        .iter()
        .map(|k| {
            schema.keyspaces.get(k).cloned().ok_or_else(|| OpError::Storage(StorageError::UnknownKeyspace(k.clone())))
        })
        .collect()
}

/// Cassandra's `nodetool snapshot`: flushes each column family of the keyspaces and links its
/// SSTables into snapshot `tag` (the time in milliseconds when absent), with a progress line per
/// column family. Every keyspace is checked, and the tag found free everywhere, before any link.
pub(super) async fn snapshot<W: AsyncWrite + Unpin>(
    state: &AdminState,
    keyspaces: &[String],
    tag: Option<String>,
    out: &mut ReplyWriter<W>,
) -> Result<SnapshotResult, OpError> {
    let _shared = state.ops_lock.read().await;
    state.check_not_drained("snapshot")?;
    let node = &state.node;
    let tag = tag.unwrap_or_else(|| (model::data::now_micros() / 1000).to_string());
    let cfs: Vec<(String, String)> = named_keyspaces(node, keyspaces)?
        .into_iter()
        .flat_map(|ks| ks.cf_defs.into_iter().map(move |cf| (ks.name.clone(), cf.name)))
        .collect();
    for (ks, cf) in &cfs {
        // In any data directory.
        let existing = node.storage.snapshot_dirs_of(ks, cf, &tag)?.into_iter().find(|d| d.exists());
        if let Some(dir) = existing {
            return Err(OpError::BadRequest(format!(
                "snapshot {tag} already exists for {ks}.{cf} ({})",
                dir.display()
            )));
        }
    }
    let total = cfs.len() as u64;
    let mut taken = Vec::new();
    for (i, (ks, cf)) in cfs.into_iter().enumerate() {
        let progress = Progress { done: i as u64, total, what: format!("snapshot {tag} of {ks}.{cf}") };
        out.progress(progress.clone()).await;
        let storage = node.storage.clone();
        let (k, c, t) = (ks.clone(), cf.clone(), tag.clone());
        let summary = run_blocking(out, &progress, move || storage.snapshot(&k, &c, &t)).await??;
        let directories = node.storage.snapshot_dirs_of(&ks, &cf, &tag)?;
        let directory = join_paths(&directories.into_iter().filter(|d| d.exists()).collect::<Vec<_>>());
        taken.push(SnapshotCf {
            keyspace: ks,
            column_family: cf,
            tag: tag.clone(),
            files: summary.files,
            bytes: summary.bytes,
            directory,
        });
    }
    out.progress(Progress { done: total, total, what: format!("snapshot {tag} taken") }).await;
    Ok(SnapshotResult { tag, column_families: taken })
}

/// Cassandra's `nodetool clearsnapshot`: removes snapshot `tag` (all of them without one) of the
/// keyspaces (all without any), those of dropped column families included.
pub(super) fn clear_snapshot(
    node: &Node,
    keyspaces: &[String],
    tag: Option<&str>,
) -> Result<ClearSnapshotResult, OpError> {
    let mut removed = Vec::new();
    if keyspaces.is_empty() {
        removed = node.storage.clear_snapshots(None, tag)?;
    } else {
        for ks in keyspaces {
            removed.extend(node.storage.clear_snapshots(Some(ks), tag)?);
        }
    }
    Ok(ClearSnapshotResult { removed: removed.iter().map(|p| p.display().to_string()).collect() })
}

/// Cassandra's `nodetool scrub` of the column families named (as [`flush_or_compact`] names
/// them), a column family at a time, with a progress line for each.
pub(super) async fn scrub<W: AsyncWrite + Unpin>(
    state: &AdminState,
    keyspace: Option<&str>,
    cfs: &[String],
    out: &mut ReplyWriter<W>,
) -> Result<ScrubResult, OpError> {
    let _shared = state.ops_lock.read().await;
    state.check_not_drained("scrub")?;
    let node = &state.node;
    let stores = select_stores(node, keyspace, cfs)?;
    let total = stores.len() as u64;
    let mut done = Vec::new();
    for (i, (ks, cf)) in stores.iter().enumerate() {
        let name = format!("{ks}.{cf}");
        let progress = Progress { done: i as u64, total, what: format!("scrubbing {name}") };
        out.progress(progress.clone()).await;
        let storage = node.storage.clone();
        let (k, c) = (ks.clone(), cf.clone());
        let summary = run_blocking(out, &progress, move || storage.scrub(&k, &c)).await??;
        done.push(ScrubCf {
            name,
            checked: summary.checked as u64,
            rewritten: summary.rewritten as u64,
            partitions: summary.partitions,
            lost: summary.lost.len() as u64,
            lost_keys: summary
                .lost
                .iter()
                .take(SCRUB_KEYS_LISTED)
                .map(|k| String::from_utf8_lossy(&k.key).into_owned())
                .collect(),
        });
    }
    out.progress(Progress { done: total, total, what: format!("scrubbed {total} column families") }).await;
    Ok(ScrubResult { column_families: done })
}

/// Cassandra 4's `nodetool import`: checks every SSTable of `keyspace.cf` in `directory`, then
/// loads them all into the column family (or none), and rebuilds its secondary indexes.
pub(super) async fn import<W: AsyncWrite + Unpin>(
    state: &AdminState,
    keyspace: String,
    cf: String,
    directory: String,
    out: &mut ReplyWriter<W>,
) -> Result<ImportResult, OpError> {
    state.check_not_drained("import")?;
    let node = &state.node;
    let progress = Progress { done: 0, total: 1, what: format!("importing {directory} into {keyspace}.{cf}") };
    out.progress(progress.clone()).await;
    let storage = node.storage.clone();
    let (k, c, d) = (keyspace.clone(), cf.clone(), directory.clone());
    let summary =
        run_blocking(out, &progress, move || storage.import_sstables(&k, &c, std::path::Path::new(&d))).await??;
    out.progress(Progress { done: 1, total: 1, what: format!("imported {} SSTables", summary.files.len()) }).await;
    Ok(ImportResult {
        keyspace,
        column_family: cf,
        files: summary.files.iter().map(|f| f.display().to_string()).collect(),
        partitions: summary.partitions,
        bytes: summary.bytes,
    })
}

/// Cassandra 2.1's `nodetool listsnapshots`.
pub(super) fn list_snapshots(node: &Node) -> Result<ListSnapshotsResult, OpError> {
    let snapshots = node
        .storage
        .list_snapshots(None)?
        .into_iter()
        .map(|e| SnapshotCf {
            keyspace: e.keyspace,
            column_family: e.cf_dir,
            tag: e.tag,
            files: e.summary.files,
            bytes: e.summary.bytes,
            directory: join_paths(&e.directories),
        })
        .collect();
    Ok(ListSnapshotsResult { snapshots })
}

pub(super) fn compaction_threshold(
    node: &Node,
    keyspace: String,
    cf: String,
) -> Result<CompactionThresholdResult, OpError> {
    let (min, max) = node.storage.compaction_thresholds(&keyspace, &cf)?;
    Ok(CompactionThresholdResult { keyspace, column_family: cf, min, max })
}

/// Cassandra's `nodetool setcompactionthreshold`, with nodetool's checks and words (prefixed by
/// the column family): only 0 and 0 turn background compaction off.
pub(super) fn set_compaction_threshold(
    node: &Node,
    keyspace: String,
    cf: String,
    min: i32,
    max: i32,
) -> Result<CompactionThresholdResult, OpError> {
    node.storage.cf_metadata(&keyspace, &cf)?;
    let refused = if min < 0 || max < 0 {
        Some("Thresholds must be positive integers")
    } else if min > max {
        Some("Min threshold cannot be greater than max.")
    } else if min < 2 && max != 0 {
        Some("Min threshold must be at least 2")
    } else {
        None
    };
    if let Some(reason) = refused {
        return Err(OpError::BadRequest(format!("{keyspace}.{cf}: {reason}")));
    }
    node.storage.set_compaction_thresholds(&keyspace, &cf, min, max)?;
    compaction_threshold(node, keyspace, cf)
}

/// `key` as bytes: UTF-8 text, or with `hex_format` hexadecimal digits (Cassandra's
/// `ByteBufferUtil.hexToBytes`, with its words).
fn key_bytes(key: &str, hex_format: bool) -> Result<Vec<u8>, OpError> {
    if !hex_format {
        return Ok(key.as_bytes().to_vec());
    }
    if key.len() % 2 == 1 {
        return Err(OpError::BadRequest("An hex string representing bytes must have an even length".into()));
    }
    let digit = |c: u8| (c as char).to_digit(16);
    key.as_bytes()
        .chunks(2)
        .map(|pair| match pair {
            [high, low] => digit(*high).zip(digit(*low)).map(|(h, l)| (h * 16 + l) as u8),
            _ => None,
        })
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(|| OpError::BadRequest(format!("Non-hex characters in {key}")))
}

/// Cassandra's `nodetool getsstables`: reads index blocks, so it runs off the event loop.
pub(super) async fn get_sstables(
    node: &Node,
    keyspace: &str,
    cf: &str,
    key: &str,
    hex_format: bool,
) -> Result<GetSsTablesResult, OpError> {
    node.storage.cf_metadata(keyspace, cf)?;
    let key = key_bytes(key, hex_format)?;
    let storage = node.storage.clone();
    let (ks, cf) = (keyspace.to_string(), cf.to_string());
    let files = tokio::task::spawn_blocking(move || storage.sstables_for_key(&ks, &cf, &key))
        .await
        .map_err(|e| OpError::Internal(format!("getsstables: {e}")))??;
    Ok(GetSsTablesResult { files: files.iter().map(|f| f.display().to_string()).collect() })
}

/// Cassandra's operation types (`OperationType`, 3.11), as `nodetool stop` takes them, with the
/// kind of this node's operations each one stops: only compactions, cleanups and scrubs run
/// here stoppably (a single-SSTable tombstone compaction counts as a compaction). The others
/// never run here, so stopping them stops nothing, but for index builds, which do run and
/// cannot be stopped yet.
const OPERATION_TYPES: [(&str, Option<&str>); 20] = [
    ("COMPACTION", Some("Compaction")),
    ("VALIDATION", None),
    ("KEY_CACHE_SAVE", None),
    ("ROW_CACHE_SAVE", None),
    ("COUNTER_CACHE_SAVE", None),
    ("CLEANUP", Some("Cleanup")),
    ("SCRUB", Some("Scrub")),
    ("UPGRADE_SSTABLES", None),
    ("INDEX_BUILD", None),
    ("TOMBSTONE_COMPACTION", None),
    ("UNKNOWN", None),
    ("ANTICOMPACTION", None),
    ("VERIFY", None),
    ("FLUSH", None),
    ("STREAM", None),
    ("WRITE", None),
    ("VIEW_BUILD", None),
    ("INDEX_SUMMARY", None),
    ("RELOCATE", None),
    ("GARBAGE_COLLECT", None),
];

/// Cassandra's `nodetool stop TYPE`: asks every running operation of that type to give up.
pub(super) fn stop(node: &Node, compaction_type: &str) -> Result<StopResult, OpError> {
    let name = compaction_type.trim().to_ascii_uppercase();
    let Some((_, kind)) = OPERATION_TYPES.iter().find(|(n, _)| *n == name) else {
        let known: Vec<&str> = OPERATION_TYPES.iter().map(|(n, _)| *n).collect();
        return Err(OpError::BadRequest(format!(
            "stop: unknown compaction type {compaction_type:?}; the types are {}",
            known.join(", ")
        )));
    };
    if name == "INDEX_BUILD" {
        return Err(OpError::NotBuilt(
            "stop INDEX_BUILD: secondary index builds cannot be stopped yet (indexstatus shows them)".into(),
        ));
    }
    let stopped = kind.map(|k| node.storage.stop_compactions(k)).unwrap_or_default();
    Ok(StopResult { compaction_type: name, stopped: stopped.into_iter().map(active_compaction).collect() })
}

fn active_compaction(c: storage::CompactionInfo) -> ActiveCompaction {
    ActiveCompaction {
        kind: c.kind.to_string(),
        keyspace: c.keyspace,
        column_family: c.cf,
        bytes_done: c.bytes_done,
        bytes_total: c.bytes_total,
    }
}

/// `rebuild_index`: rebuilds the named secondary indexes of a column family from its data.
pub(super) fn rebuild_index(
    state: &AdminState,
    keyspace: String,
    cf: String,
    indexes: &[String],
) -> Result<RebuildIndexResult, OpError> {
    state.check_not_drained("rebuild_index")?;
    let rebuilt = state.node.storage.rebuild_indexes(&keyspace, &cf, indexes)?;
    Ok(RebuildIndexResult { column_family: format!("{keyspace}.{cf}"), rebuilt })
}

/// Cassandra's `nodetool compactionstats`: the compactions running, with the pending count.
pub(super) fn compaction_stats(node: &Node) -> CompactionStatsResult {
    let (running, pending_tasks) = node.storage.compaction_stats();
    let compactions = running.into_iter().map(active_compaction).collect();
    let throughput_mb_per_sec = node.storage.compaction_throughput();
    CompactionStatsResult { pending_tasks, compactions, throughput_mb_per_sec }
}

pub(super) fn compaction_throughput(node: &Node) -> CompactionThroughputResult {
    CompactionThroughputResult { mb_per_sec: node.storage.compaction_throughput() }
}

pub(super) fn set_compaction_throughput(node: &Node, mb_per_sec: u32) -> CompactionThroughputResult {
    node.storage.set_compaction_throughput(mb_per_sec);
    CompactionThroughputResult { mb_per_sec }
}

pub(super) fn stream_throughput(node: &Node) -> StreamThroughputResult {
    StreamThroughputResult { megabits_per_sec: node.coordinator.stream_throttle().megabits_per_sec() }
}

pub(super) fn set_stream_throughput(node: &Node, megabits_per_sec: u32) -> StreamThroughputResult {
    node.coordinator.stream_throttle().set_megabits_per_sec(megabits_per_sec);
    tracing::info!(megabits_per_sec, "stream throughput changed");
    StreamThroughputResult { megabits_per_sec }
}
