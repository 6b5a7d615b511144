//! What each admin operation does on this node, and the statistics it reports.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;

use admin_protocol::*;
use serde::Serialize;
use storage::engine::{CfStats as EngineCfStats, CompactionInterrupted, LatencyTotals};
use storage::StorageError;
use tokio::io::AsyncWrite;

use super::{toggles, ReplyWriter, HEARTBEAT};
use crate::node::Node;
use cluster::coordinator::{Coordinator, CoordinatorError, SyncReport, Transfer};
use cluster::storage_service::StorageService;

/// Operation mode, as `info` and `netstats` print it.
pub(super) const MODE_NORMAL: u8 = 0;
pub(super) const MODE_DRAINING: u8 = 1;
pub(super) const MODE_DRAINED: u8 = 2;
pub(super) const MODE_LEAVING: u8 = 3;
pub(super) const MODE_DECOMMISSIONED: u8 = 4;
pub(super) const MODE_MOVING: u8 = 5;

/// What a client sees after a drain (checked by the sibyltool integration test).
pub const DRAINED_EFFECT: &str = "writes are refused: Thrift clients get an internal error \
     (TApplicationException INTERNAL_ERROR \"storage is shutting down\"); reads still work. \
     Restart the node to accept writes again.";

/// What to do after a move, as Cassandra's documentation says.
pub const MOVED_EFFECT: &str = "the data of the ranges this node gave up stays on it until \
     `sibyltool cleanup`; once every node's `sibyltool ring` shows the new token, run cleanup on \
     this node, and on the nodes whose ranges it took, to reclaim the space.";

/// What a client sees after a decommission.
pub const DECOMMISSIONED_EFFECT: &str = "this node has left the ring and handed its ranges over; \
     it no longer gossips and refuses writes. Stop it. Started again, it forgets its old tokens \
     and joins as a new node.";

/// The admin interface's view of the node.
pub struct AdminState {
    pub node: Arc<Node>,
    started: Instant,
    mode: AtomicU8,
    /// Flush and compact hold it shared, drain exclusively: a drain waits for running
    /// operations, and operations after it see the drained mode.
    pub(super) ops_lock: tokio::sync::RwLock<()>,
}

impl AdminState {
    pub fn new(node: Arc<Node>) -> AdminState {
        AdminState {
            node,
            started: Instant::now(),
            mode: AtomicU8::new(MODE_NORMAL),
            ops_lock: tokio::sync::RwLock::new(()),
        }
    }

    /// One of the `MODE_*` constants.
    pub(super) fn mode(&self) -> u8 {
        self.mode.load(Ordering::SeqCst)
    }

    fn mode_name(&self) -> &'static str {
        match self.mode.load(Ordering::SeqCst) {
            MODE_NORMAL => "NORMAL",
            MODE_DRAINING => "DRAINING",
            MODE_LEAVING => "LEAVING",
            MODE_DECOMMISSIONED => "DECOMMISSIONED",
            MODE_MOVING => "MOVING",
            _ => "DRAINED",
        }
    }

    fn check_not_drained(&self, op: &'static str) -> Result<(), OpError> {
        match self.mode.load(Ordering::SeqCst) {
            // A move holds the operations lock until it ends: what waited for it runs after.
            MODE_NORMAL | MODE_MOVING => Ok(()),
            MODE_LEAVING | MODE_DECOMMISSIONED => Err(OpError::Left(op)),
            _ => Err(OpError::Drained(op)),
        }
    }
}

/// Why an operation failed.
#[derive(Debug, thiserror::Error)]
pub enum OpError {
    #[error("{0}")]
    Storage(StorageError),
    /// A compaction, cleanup or scrub that a `stop` request stopped (Cassandra's words).
    #[error("{0}")]
    Interrupted(CompactionInterrupted),
    #[error("{0}")]
    BadRequest(String),
    #[error(
        "{0}: not supported yet: data moves between nodes only for bootstrap, decommission, removenode and move so far"
    )]
    NeedsStreaming(&'static str),
    #[error("{0}")]
    NotBuilt(String),
    #[error("{0}: the node is drained (restart it to flush, compact or accept writes again)")]
    Drained(&'static str),
    /// Something else the drained (or draining) node refuses, said in full.
    #[error("{0}")]
    DrainedNode(String),
    #[error("{0}: the node is leaving the ring or has left it (decommission)")]
    Left(&'static str),
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    Internal(String),
}

impl From<StorageError> for OpError {
    fn from(e: StorageError) -> OpError {
        match CompactionInterrupted::of(&e) {
            Some(interrupted) => OpError::Interrupted(interrupted.clone()),
            None => OpError::Storage(e),
        }
    }
}

impl From<CoordinatorError> for OpError {
    fn from(e: CoordinatorError) -> OpError {
        match e {
            CoordinatorError::Storage(e) => OpError::from(e),
            other => OpError::Unavailable(other.to_string()),
        }
    }
}

impl OpError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            OpError::Storage(StorageError::UnknownKeyspace(_)) => ErrorKind::UnknownKeyspace,
            OpError::Storage(StorageError::UnknownColumnFamily { .. }) => ErrorKind::UnknownColumnFamily,
            OpError::Storage(
                StorageError::InvalidSnapshotTag { .. }
                | StorageError::SnapshotExists { .. }
                | StorageError::InvalidImport { .. }
                | StorageError::UnknownIndex { .. }
                | StorageError::Dht(_),
            ) => ErrorKind::BadRequest,
            OpError::Storage(_) => ErrorKind::Storage,
            OpError::Interrupted(_) => ErrorKind::Interrupted,
            OpError::BadRequest(_) => ErrorKind::BadRequest,
            OpError::NeedsStreaming(_) | OpError::NotBuilt(_) => ErrorKind::NotSupported,
            OpError::Drained(_) | OpError::DrainedNode(_) | OpError::Left(_) => ErrorKind::Drained,
            OpError::Unavailable(_) => ErrorKind::Unavailable,
            OpError::Internal(_) => ErrorKind::Internal,
        }
    }
}

/// Runs one request; progress lines go to `out`, the final reply is returned.
pub(crate) async fn execute<W: AsyncWrite + Unpin>(
    state: &AdminState,
    request: Request,
    out: &mut ReplyWriter<W>,
) -> Reply {
    match run(state, request, out).await {
        Ok(value) => Reply::Ok(value),
        Err(e) => Reply::error(e.kind(), e.to_string()),
    }
}

fn to_value<T: Serialize>(result: T) -> Result<serde_json::Value, OpError> {
    serde_json::to_value(result).map_err(|e| OpError::Internal(format!("cannot encode result: {e}")))
}

async fn run<W: AsyncWrite + Unpin>(
    state: &AdminState,
    request: Request,
    out: &mut ReplyWriter<W>,
) -> Result<serde_json::Value, OpError> {
    let node = &state.node;
    match request {
        Request::Ring => to_value(ring(node)),
        Request::Info => to_value(info(state)),
        Request::DescribeCluster => to_value(describe_cluster(node)),
        Request::CfStats { keyspace, cf } => to_value(cf_stats(node, keyspace.as_deref(), cf.as_deref())?),
        Request::TpStats => to_value(tp_stats(node)),
        Request::IndexStatus { keyspace } => to_value(index_status(node, keyspace.as_deref())?),
        Request::Flush { keyspace, cfs } => {
            let _shared = state.ops_lock.read().await;
            state.check_not_drained("flush")?;
            let stores = select_stores(node, keyspace.as_deref(), &cfs)?;
            to_value(per_cf(node, &stores, Work::Flush, out).await?)
        }
        Request::Compact { keyspace, cfs } => {
            let _shared = state.ops_lock.read().await;
            state.check_not_drained("compact")?;
            let stores = select_stores(node, keyspace.as_deref(), &cfs)?;
            to_value(per_cf(node, &stores, Work::Compact, out).await?)
        }
        Request::Cleanup { keyspace } => {
            let _shared = state.ops_lock.read().await;
            state.check_not_drained("cleanup")?;
            to_value(cleanup(node, keyspace.as_deref(), out).await?)
        }
        Request::Drain => to_value(drain(state, out).await?),
        Request::NetStats => {
            to_value(NetStatsResult { mode: state.mode_name().into(), sending: Vec::new(), receiving: Vec::new() })
        }
        Request::GetEndpoints { keyspace, cf, key } => to_value(get_endpoints(node, &keyspace, &cf, &key)?),
        Request::Version => to_value(VersionResult {
            release_version: env!("CARGO_PKG_VERSION").into(),
            thrift_api_version: thrift_idl::VERSION.into(),
            protocol_version: PROTOCOL_VERSION,
        }),
        Request::Move { token } => to_value(move_node(state, Some(&token), out).await?),
        Request::Decommission => to_value(decommission(state, out).await?),
        Request::RemoveNode { node: which } => to_value(remove_node(state, &which, out).await?),
        Request::LoadBalance => to_value(move_node(state, None, out).await?),
        Request::Repair { keyspace, cfs, primary_range } => {
            let _shared = state.ops_lock.read().await;
            state.check_not_drained("repair")?;
            to_value(repair(node, keyspace.as_deref(), &cfs, primary_range, out).await?)
        }
        // A node joins the ring as it starts (there is no join_ring=false start, nor write
        // survey mode), so this is nodetool's answer on a node that has joined.
        Request::Join => {
            state.check_not_drained("join")?;
            Err(OpError::BadRequest("This node has already joined the ring.".into()))
        }
        Request::Snapshot { keyspaces, tag } => {
            let _shared = state.ops_lock.read().await;
            state.check_not_drained("snapshot")?;
            to_value(snapshot(node, &keyspaces, tag, out).await?)
        }
        Request::ClearSnapshot { keyspaces, tag } => to_value(clear_snapshot(node, &keyspaces, tag.as_deref())?),
        Request::ListSnapshots => to_value(list_snapshots(node)?),
        Request::GossipInfo => to_value(gossip_info(node)?),
        Request::GetStreamThroughput => {
            to_value(StreamThroughputResult { megabits_per_sec: node.coordinator.stream_throttle().megabits_per_sec() })
        }
        Request::SetStreamThroughput { megabits_per_sec } => {
            node.coordinator.stream_throttle().set_megabits_per_sec(megabits_per_sec);
            tracing::info!(megabits_per_sec, "stream throughput changed");
            to_value(StreamThroughputResult { megabits_per_sec })
        }
        Request::DescribeRing { keyspace } => to_value(describe_ring(node, keyspace)?),
        Request::RebuildIndex { keyspace, cf, indexes } => {
            state.check_not_drained("rebuild_index")?;
            let rebuilt = node.storage.rebuild_indexes(&keyspace, &cf, &indexes)?;
            to_value(RebuildIndexResult { column_family: format!("{keyspace}.{cf}"), rebuilt })
        }
        Request::CompactionStats => {
            let (running, pending_tasks) = node.storage.compaction_stats();
            let compactions = running.into_iter().map(active_compaction).collect();
            let throughput_mb_per_sec = node.storage.compaction_throughput();
            to_value(CompactionStatsResult { pending_tasks, compactions, throughput_mb_per_sec })
        }
        Request::GetCompactionThroughput => {
            to_value(CompactionThroughputResult { mb_per_sec: node.storage.compaction_throughput() })
        }
        Request::SetCompactionThroughput { mb_per_sec } => {
            node.storage.set_compaction_throughput(mb_per_sec);
            to_value(CompactionThroughputResult { mb_per_sec })
        }
        Request::DisableAutoCompaction { keyspace, cfs } => {
            to_value(toggles::set_auto_compaction(node, keyspace.as_deref(), &cfs, false)?)
        }
        Request::EnableAutoCompaction { keyspace, cfs } => {
            to_value(toggles::set_auto_compaction(node, keyspace.as_deref(), &cfs, true)?)
        }
        Request::GetCompactionThreshold { keyspace, cf } => to_value(compaction_threshold(node, keyspace, cf)?),
        Request::SetCompactionThreshold { keyspace, cf, min, max } => {
            to_value(set_compaction_threshold(node, keyspace, cf, min, max)?)
        }
        Request::GetSsTables { keyspace, cf, key, hex_format } => {
            to_value(get_sstables(node, &keyspace, &cf, &key, hex_format).await?)
        }
        Request::Stop { compaction_type } => to_value(stop(node, &compaction_type)?),
        Request::Scrub { keyspace, cfs } => {
            let _shared = state.ops_lock.read().await;
            state.check_not_drained("scrub")?;
            let stores = select_stores(node, keyspace.as_deref(), &cfs)?;
            to_value(scrub(node, &stores, out).await?)
        }
        Request::Import { keyspace, cf, directory } => {
            state.check_not_drained("import")?;
            to_value(import(node, keyspace, cf, directory, out).await?)
        }
        Request::DisableThrift => to_value(toggles::disable_thrift(node).await?),
        Request::EnableThrift => to_value(toggles::enable_thrift(state).await?),
        Request::StatusThrift => to_value(toggles::status_thrift(node)?),
        Request::DisableGossip => to_value(toggles::disable_gossip(state).await?),
        Request::EnableGossip => to_value(toggles::enable_gossip(state).await?),
        Request::StatusGossip => to_value(toggles::status_gossip(node)?),
        Request::DisableHandoff => to_value(toggles::set_handoff(node, false)?),
        Request::EnableHandoff => to_value(toggles::set_handoff(node, true)?),
        Request::StatusHandoff => to_value(toggles::status_handoff(node)?),
        Request::PauseHandoff => to_value(toggles::pause_handoff(node, true)?),
        Request::ResumeHandoff => to_value(toggles::pause_handoff(node, false)?),
        Request::TruncateHints { endpoint } => to_value(toggles::truncate_hints(node, endpoint.as_deref()).await?),
    }
}

// ----- identity and ring -----

/// This node's host id (announced through gossip); a node built without one (tests) gets the
/// MD5 of its tokens, shaped as a version-3 UUID.
pub fn host_id(node: &Node) -> String {
    let announced = &node.coordinator.membership().local_info().host_id;
    if !announced.is_empty() {
        return announced.clone();
    }
    use md5::Digest;
    let digest: [u8; 16] = md5::Md5::digest(local_tokens(node).as_bytes()).into();
    uuid::Builder::from_md5_bytes(digest).into_uuid().to_string()
}

/// This node's tokens, comma-separated.
fn local_tokens(node: &Node) -> String {
    let partitioner = node.coordinator.partitioner();
    let tokens: Vec<String> =
        node.coordinator.membership().local_tokens().iter().map(|t| partitioner.token_to_string(t)).collect();
    tokens.join(",")
}

/// Every token of the ring with its node's state, in token order (`nodetool ring`); `status`
/// shows the same per node.
fn ring(node: &Node) -> RingResult {
    let c = &node.coordinator;
    let m = c.membership();
    let partitioner = c.partitioner();
    let ring = m.ring();
    let local = m.local();
    let mut entries: Vec<(storage::dht::Token, cluster::Endpoint, f64, &str)> = ring
        .sorted_tokens()
        .iter()
        .cloned()
        .zip(ring.sorted_owners().iter().copied())
        .zip(partitioner.describe_ownership(ring.sorted_tokens()))
        .map(|((t, ep), owns)| {
            let state = if ring.is_leaving(ep) {
                "Leaving"
            } else if ring.is_moving(ep) {
                "Moving"
            } else {
                "Normal"
            };
            (t, ep, owns, state)
        })
        .collect();
    for (t, ep) in ring.bootstrap_tokens() {
        entries.push((t.clone(), *ep, 0.0, "Joining"));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let snitch = m.snitch();
    RingResult {
        partitioner: partitioner.class_name().into(),
        entries: entries
            .into_iter()
            .map(|(token, ep, owns, state)| {
                let peer = m.peer(ep).unwrap_or_default();
                RingEntry {
                    address: ep.ip().to_string(),
                    datacenter: snitch.datacenter(ep),
                    rack: snitch.rack(ep),
                    status: if m.is_alive(ep) { "Up".into() } else { "Down".into() },
                    state: state.into(),
                    load_bytes: if ep == local { node.storage.load_bytes() } else { peer.load.unwrap_or(0.0) as u64 },
                    owns,
                    token: partitioner.token_to_string(&token),
                    host_id: if ep == local { host_id(node) } else { peer.host_id.unwrap_or_default() },
                }
            })
            .collect(),
    }
}

/// `VmRSS` and `VmHWM` of this process, in bytes.
fn process_memory() -> (Option<u64>, Option<u64>) {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else { return (None, None) };
    let field = |name: &str| {
        status.lines().find_map(|l| {
            let rest = l.strip_prefix(name)?.strip_prefix(':')?;
            let kb: u64 = rest.trim().strip_suffix("kB")?.trim().parse().ok()?;
            Some(kb * 1024)
        })
    };
    (field("VmRSS"), field("VmHWM"))
}

fn info(state: &AdminState) -> InfoResult {
    let node = &state.node;
    let (rss, peak) = process_memory();
    let (mut bytes, mut operations, mut partitions) = (0u64, 0u64, 0u64);
    for s in node.storage.all_cf_stats() {
        bytes += s.memtable_bytes;
        operations += s.memtable_operations;
        partitions += s.memtable_partitions;
    }
    let cache = node.storage.cache_stats();
    let m = node.coordinator.membership();
    let local = m.local();
    InfoResult {
        host_id: host_id(node),
        token: local_tokens(node),
        mode: state.mode_name().into(),
        gossip_active: node.service.as_ref().is_some_and(|s| s.is_gossip_running()),
        thrift_active: node.thrift.as_ref().is_some_and(|t| t.is_running()),
        cluster_name: m.local_info().cluster_name.clone(),
        listen_address: local.ip().to_string(),
        rpc_address: m.local_info().rpc_address.clone(),
        uptime_seconds: state.started.elapsed().as_secs(),
        load_bytes: node.storage.load_bytes(),
        schema_version: node.storage.schema_version().to_string(),
        rss_bytes: rss,
        peak_rss_bytes: peak,
        memtable_bytes: bytes,
        memtable_operations: operations,
        memtable_partitions: partitions,
        block_cache_bytes: cache.bytes,
        block_cache_capacity_bytes: cache.capacity_bytes,
        block_cache_hits: cache.hits,
        block_cache_requests: cache.hits + cache.misses,
        datacenter: m.snitch().datacenter(local),
        rack: m.snitch().rack(local),
        data_directory: join_paths(&node.storage.data_dirs()),
        release_version: env!("CARGO_PKG_VERSION").into(),
    }
}

fn describe_cluster(node: &Node) -> DescribeClusterResult {
    let c = &node.coordinator;
    DescribeClusterResult {
        name: c.cluster_name().into(),
        snitch: c.snitch_name().into(),
        partitioner: c.partitioner().class_name().into(),
        schema_versions: c.known_schema_versions(),
    }
}

// ----- statistics -----

fn index_status(node: &Node, keyspace: Option<&str>) -> Result<IndexStatusResult, OpError> {
    if let Some(ks) = keyspace {
        if !node.storage.schema().keyspaces.contains_key(ks) {
            return Err(OpError::Storage(StorageError::UnknownKeyspace(ks.to_string())));
        }
    }
    let indexes = node
        .storage
        .index_status(keyspace)
        .into_iter()
        .map(|s| {
            let column = match node.storage.cf_metadata(&s.keyspace, &s.cf) {
                Ok(meta) => meta.cmp.name_type().to_display_string(&s.column),
                Err(_) => String::from_utf8_lossy(&s.column).into_owned(),
            };
            IndexStatus {
                keyspace: s.keyspace,
                column_family: s.cf,
                index: s.index,
                column,
                built: s.built,
                building: s.building,
                rows_done: s.rows_done,
                rows_total: s.rows_total,
            }
        })
        .collect();
    Ok(IndexStatusResult { indexes })
}

fn cf_stats(node: &Node, keyspace: Option<&str>, cf: Option<&str>) -> Result<CfStatsResult, OpError> {
    let storage = &node.storage;
    let schema = storage.schema();
    let keyspaces: Vec<_> = match keyspace {
        Some(k) => {
            vec![schema.keyspaces.get(k).cloned().ok_or_else(|| StorageError::UnknownKeyspace(k.into()))?]
        }
        None if cf.is_some() => return Err(OpError::BadRequest("a column family needs its keyspace".into())),
        None => schema.keyspaces.values().cloned().collect(),
    };
    let mut out = Vec::new();
    for ks in keyspaces {
        let names: Vec<&str> = match cf {
            Some(c) => vec![c],
            None => ks.cf_defs.iter().map(|d| d.name.as_str()).collect(),
        };
        let mut cfs = Vec::new();
        let (mut reads, mut writes) = (0u64, 0u64);
        let (mut read_latency, mut write_latency) = (LatencyTotals::default(), LatencyTotals::default());
        for name in names {
            let stats = storage.cf_stats(&ks.name, name)?;
            reads += stats.reads;
            writes += stats.writes;
            read_latency += stats.read_latency;
            write_latency += stats.write_latency;
            cfs.push(cf_stats_of(stats));
        }
        out.push(KeyspaceStats {
            name: ks.name.clone(),
            read_count: reads,
            read_latency_ms: read_latency.mean_ms(),
            write_count: writes,
            write_latency_ms: write_latency.mean_ms(),
            column_families: cfs,
        });
    }
    Ok(CfStatsResult { keyspaces: out })
}

fn cf_stats_of(s: EngineCfStats) -> CfStats {
    CfStats {
        name: s.name,
        sstable_count: s.sstable_count,
        sstables_in_each_level: s.sstables_in_each_level,
        space_used_live: s.disk_bytes,
        data_bytes: s.data_bytes,
        key_estimate: s.key_estimate,
        sstable_cells: s.sstable_cells,
        sstable_tombstones: s.sstable_tombstones,
        memtable_operations: s.memtable_operations,
        memtable_bytes: s.memtable_bytes,
        memtable_partitions: s.memtable_partitions,
        memtable_switch_count: s.flushes,
        read_count: s.reads,
        read_latency_ms: s.read_latency.mean_ms(),
        write_count: s.writes,
        write_latency_ms: s.write_latency.mean_ms(),
        compactions: s.compactions,
        min_timestamp: s.min_timestamp,
        max_timestamp: s.max_timestamp,
    }
}

fn tp_stats(node: &Node) -> TpStatsResult {
    let (mut reads, mut writes, mut flushes, mut compactions) = (0u64, 0u64, 0u64, 0u64);
    for s in node.storage.all_cf_stats() {
        reads += s.reads;
        writes += s.writes;
        flushes += s.flushes;
        compactions += s.compactions;
    }
    let pool = |name: &str, completed| PoolStats { name: name.into(), active: None, pending: None, completed };
    let dropped = match node.coordinator.messaging() {
        Some(messaging) => {
            let stats = messaging.stats();
            let n: u64 = stats.peers.values().map(|p| p.dropped()).sum();
            format!("Internode messages dropped since startup (queue full, expired or lost with a connection): {n}.")
        }
        None => "This node has no internode messaging, so no message is ever dropped.".into(),
    };
    TpStatsResult {
        pools: vec![
            pool("ReadStage", reads),
            pool("MutationStage", writes),
            pool("FlushWriter", flushes),
            pool("CompactionExecutor", compactions),
        ],
        notes: vec![
            "Completed counts engine operations since startup, per column family: a write touching two \
             column families counts twice; single-row reads count, range scans do not."
                .into(),
            "Active and Pending are not tracked yet (n/a).".into(),
            dropped,
        ],
    }
}

// ----- flush, compact, cleanup, drain -----

/// Column families named by a flush or compact request, as (keyspace, name) in that order. Every
/// name is checked before any work starts.
pub(super) fn select_stores(
    node: &Node,
    keyspace: Option<&str>,
    cfs: &[String],
) -> Result<Vec<(String, String)>, OpError> {
    let storage = &node.storage;
    let mut stores = match keyspace {
        None if !cfs.is_empty() => return Err(OpError::BadRequest("column families need their keyspace".into())),
        None => storage.column_families(),
        Some(k) => {
            let ks = storage.keyspace(k).ok_or_else(|| StorageError::UnknownKeyspace(k.into()))?;
            let names: Vec<&str> = if cfs.is_empty() {
                ks.cf_defs.iter().map(|d| d.name.as_str()).collect()
            } else {
                cfs.iter().map(String::as_str).collect()
            };
            let mut selected = Vec::new();
            for n in names {
                storage.cf_metadata(k, n)?;
                selected.push((k.to_string(), n.to_string()));
            }
            selected
        }
    };
    stores.sort();
    stores.dedup();
    Ok(stores)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Work {
    Flush,
    Compact,
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

/// Runs `f` on the blocking pool, repeating `progress` every [`HEARTBEAT`] until it returns.
async fn run_blocking<W, T, F>(out: &mut ReplyWriter<W>, progress: &Progress, f: F) -> Result<T, OpError>
where
    W: AsyncWrite + Unpin,
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    run_blocking_every(out, progress, HEARTBEAT, f).await
}

pub(crate) async fn run_blocking_every<W, T, F>(
    out: &mut ReplyWriter<W>,
    progress: &Progress,
    every: std::time::Duration,
    f: F,
) -> Result<T, OpError>
where
    W: AsyncWrite + Unpin,
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let joined = with_heartbeat(out, progress, every, tokio::task::spawn_blocking(f)).await;
    joined.map_err(|e| OpError::Internal(format!("admin task failed: {e}")))
}

/// Awaits `work`, repeating `progress` every `every` until it is done.
async fn with_heartbeat<W, T>(
    out: &mut ReplyWriter<W>,
    progress: &Progress,
    every: std::time::Duration,
    work: impl std::future::Future<Output = T>,
) -> T
where
    W: AsyncWrite + Unpin,
{
    tokio::pin!(work);
    let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        tokio::select! {
            done = &mut work => return done,
            _ = beat.tick() => out.progress(progress.clone()).await,
        }
    }
}

/// Anti-entropy repair of the ranges this node replicates, one column family and range at a
/// time (how: `cluster::coordinator::repair`). Ranges with one replica have nothing to compare
/// and are left out.
async fn repair<W: AsyncWrite + Unpin>(
    node: &Node,
    keyspace: Option<&str>,
    cfs: &[String],
    primary_range: bool,
    out: &mut ReplyWriter<W>,
) -> Result<RepairResult, OpError> {
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
async fn cleanup<W: AsyncWrite + Unpin>(
    node: &Node,
    keyspace: Option<&str>,
    out: &mut ReplyWriter<W>,
) -> Result<CleanupResult, OpError> {
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
        if storage::system::is_builtin_keyspace(&ks.name) {
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

// ----- snapshots -----

/// The keyspaces named (every keyspace when none), each checked to exist before any work.
fn named_keyspaces(node: &Node, names: &[String]) -> Result<Vec<storage::schema::KeyspaceDef>, OpError> {
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
async fn snapshot<W: AsyncWrite + Unpin>(
    node: &Node,
    keyspaces: &[String],
    tag: Option<String>,
    out: &mut ReplyWriter<W>,
) -> Result<SnapshotResult, OpError> {
    let tag = tag.unwrap_or_else(|| (storage::data::now_micros() / 1000).to_string());
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
fn clear_snapshot(node: &Node, keyspaces: &[String], tag: Option<&str>) -> Result<ClearSnapshotResult, OpError> {
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

/// Cassandra's `nodetool scrub`, a column family at a time, with a progress line for each.
async fn scrub<W: AsyncWrite + Unpin>(
    node: &Node,
    stores: &[(String, String)],
    out: &mut ReplyWriter<W>,
) -> Result<ScrubResult, OpError> {
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
async fn import<W: AsyncWrite + Unpin>(
    node: &Node,
    keyspace: String,
    cf: String,
    directory: String,
    out: &mut ReplyWriter<W>,
) -> Result<ImportResult, OpError> {
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
fn list_snapshots(node: &Node) -> Result<ListSnapshotsResult, OpError> {
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

/// Several directories (one per data directory) in one string field: ", " between them.
fn join_paths(paths: &[std::path::PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

async fn drain<W: AsyncWrite + Unpin>(state: &AdminState, out: &mut ReplyWriter<W>) -> Result<DrainResult, OpError> {
    let _exclusive = state.ops_lock.write().await;
    match state.mode.load(Ordering::SeqCst) {
        MODE_DRAINED => {
            return Ok(DrainResult { already_drained: true, flushed: Vec::new(), effect: DRAINED_EFFECT.into() })
        }
        MODE_NORMAL => {}
        _ => return Err(OpError::Left("drain")),
    }
    state.mode.store(MODE_DRAINING, Ordering::SeqCst);
    let flushed = match flush_all(state, out).await {
        Ok(flushed) => flushed,
        Err(e) => {
            // Nothing is stopped yet: the node keeps serving as before.
            state.mode.store(MODE_NORMAL, Ordering::SeqCst);
            return Err(e);
        }
    };
    let stopped = stop_engine(state, out, flushed.len() as u64).await;
    // Whatever happened, the engine now refuses writes.
    state.mode.store(MODE_DRAINED, Ordering::SeqCst);
    stopped?;
    let total = flushed.len() as u64 + 1;
    out.progress(Progress { done: total, total, what: "drained".into() }).await;
    tracing::info!("node drained: writes are refused until restart");
    Ok(DrainResult { already_drained: false, flushed, effect: DRAINED_EFFECT.into() })
}

/// Flushes every column family in turn, with a progress line each (step `i` of one per column
/// family plus one, for [`stop_engine`]); their names.
async fn flush_all<W: AsyncWrite + Unpin>(
    state: &AdminState,
    out: &mut ReplyWriter<W>,
) -> Result<Vec<String>, OpError> {
    let node = &state.node;
    let stores = select_stores(node, None, &[])?;
    let total = stores.len() as u64 + 1;
    let mut flushed = Vec::new();
    for (i, store) in stores.iter().enumerate() {
        let name = format!("{}.{}", store.0, store.1);
        let progress = Progress { done: i as u64, total, what: format!("flushing {name}") };
        out.progress(progress.clone()).await;
        let storage = node.storage.clone();
        let (ks, cf) = store.clone();
        run_blocking(out, &progress, move || storage.flush(&ks, &cf)).await??;
        flushed.push(name);
    }
    Ok(flushed)
}

/// Makes the engine refuse writes and flushes what arrived since [`flush_all`] flushed
/// `flushed` column families (the last step of its progress count).
async fn stop_engine<W: AsyncWrite + Unpin>(
    state: &AdminState,
    out: &mut ReplyWriter<W>,
    flushed: u64,
) -> Result<(), OpError> {
    let progress = Progress { done: flushed, total: flushed + 1, what: "refusing writes, flushing the rest".into() };
    out.progress(progress.clone()).await;
    let storage = state.node.storage.clone();
    run_blocking(out, &progress, move || storage.shutdown()).await??;
    Ok(())
}

/// Removes a dead node from the ring (Cassandra's `nodetool removenode`, 0.6's removetoken):
/// `which` is its address, host id or one of its tokens. Announces it REMOVING and waits
/// `RingDelayInMillis` (from then on every coordinator also writes its ranges to the nodes
/// taking them), writes each range it replicated, read from the range's other live replicas,
/// to its new replica, then announces it REMOVED: every node drops it. Refused for this node,
/// a live node, or when a node that would take a range is down; a range whose only replica was
/// the dead node is counted as lost. A failed transfer leaves it REMOVING: run removenode again.
async fn remove_node<W: AsyncWrite + Unpin>(
    state: &AdminState,
    which: &str,
    out: &mut ReplyWriter<W>,
) -> Result<RemoveNodeResult, OpError> {
    let _shared = state.ops_lock.read().await;
    state.check_not_drained("removenode")?;
    let node = &state.node;
    let service = cluster_service(node, "removenode")?;
    toggles::check_gossiping(service, "removenode")?;
    let coordinator = &node.coordinator;
    let membership = coordinator.membership();
    let partitioner = coordinator.partitioner();
    let ring = membership.ring();
    let matches = |ep: &cluster::Endpoint| {
        ep.ip().to_string() == which
            || ep.to_string() == which
            || membership.peer(*ep).and_then(|p| p.host_id).is_some_and(|id| id == which)
            || ring.tokens_of(*ep).iter().any(|t| partitioner.token_to_string(t) == which)
    };
    let Some(dead) = ring.sorted_owners().iter().copied().find(matches) else {
        return Err(OpError::BadRequest(format!("removenode: no node {which} in the ring")));
    };
    if dead == membership.local() {
        return Err(OpError::BadRequest(format!("removenode: {which} is this node; use decommission")));
    }
    if membership.is_alive(dead) {
        return Err(OpError::BadRequest(format!(
            "removenode: {} is up; removenode is for dead nodes (decommission a live one)",
            dead.ip()
        )));
    }
    let transfers = transfers_with_takers_up("removenode", coordinator, dead)?;
    if !service.advertise_removal(dead, false) {
        return Err(OpError::BadRequest(format!("removenode: {} is not a dead node gossip knows of", dead.ip())));
    }
    let total = transfers.len() as u64 + 2;
    let announced = format!("announced {} REMOVING", dead.ip());
    wait_for_the_ring(out, service, Progress { done: 0, total, what: announced }).await;
    let (mut partitions, mut lost) = (0, 0);
    for (i, transfer) in transfers.iter().enumerate() {
        let range = format!("{} {}", transfer.keyspace, partitioner.range_to_string(&transfer.range));
        if transfer.from.is_empty() {
            tracing::warn!("removenode: {range} had no replica but {}: its data is lost", dead.ip());
            lost += 1;
            continue;
        }
        let progress =
            Progress { done: i as u64 + 1, total, what: format!("restoring {range} on {}", transfer.to.ip()) };
        let report = hand_over("removenode", out, coordinator, transfer, progress).await.map_err(|e| {
            OpError::Unavailable(format!("removenode stopped; {} stays REMOVING, run it again: {e}", dead.ip()))
        })?;
        partitions += report.partitions;
    }
    service.advertise_removal(dead, true);
    out.progress(Progress { done: total, total, what: format!("removed {}", dead.ip()) }).await;
    Ok(RemoveNodeResult {
        removed: dead.ip().to_string(),
        transfers: transfers.len() as u64,
        partitions,
        lost_ranges: lost,
    })
}

/// Hands this node's ranges over and leaves the ring (Cassandra's `nodetool decommission`):
/// announces LEAVING and waits `RingDelayInMillis` (from then on every coordinator also writes
/// these ranges to the nodes taking them), sends each range's data to its new replica
/// (`cluster::coordinator::leave`), announces LEFT and waits again for the ring to hear it,
/// stops gossiping, forgets its tokens and stops the engine like drain. Refused alone in the
/// ring, or when a node that would take a range is down; a failed handover announces NORMAL
/// again.
async fn decommission<W: AsyncWrite + Unpin>(
    state: &AdminState,
    out: &mut ReplyWriter<W>,
) -> Result<DecommissionResult, OpError> {
    let _exclusive = state.ops_lock.write().await;
    state.check_not_drained("decommission")?;
    let node = &state.node;
    let service = cluster_service(node, "decommission")?;
    toggles::check_gossiping(service, "decommission")?;
    let coordinator = &node.coordinator;
    let partitioner = coordinator.partitioner();
    let local = coordinator.membership().local();
    if !coordinator.membership().ring().sorted_owners().iter().any(|ep| *ep != local) {
        return Err(OpError::BadRequest(
            "decommission: this node is the only one in the ring; its data would have nowhere to go".into(),
        ));
    }
    let transfers = transfers_with_takers_up("decommission", coordinator, local)?;
    state.mode.store(MODE_LEAVING, Ordering::SeqCst);
    service.announce_leaving();
    let total = transfers.len() as u64 + 3;
    wait_for_the_ring(out, service, Progress { done: 0, total, what: "announced LEAVING".into() }).await;
    let mut partitions = 0;
    for (i, transfer) in transfers.iter().enumerate() {
        let what = format!(
            "sending {} {} to {}",
            transfer.keyspace,
            partitioner.range_to_string(&transfer.range),
            transfer.to.ip()
        );
        let progress = Progress { done: i as u64 + 1, total, what };
        match hand_over("decommission", out, coordinator, transfer, progress).await {
            Ok(report) => partitions += report.partitions,
            Err(e) => {
                return Err(back_to_normal(
                    state,
                    service,
                    format!("decommission stopped, the node is NORMAL again: {e}"),
                ))
            }
        }
    }
    // The hints this node keeps go too: some are a write's only copy (consistency ANY).
    out.progress(Progress { done: total - 2, total, what: "handing over hints".into() }).await;
    let messaging = coordinator.messaging().ok_or_else(|| OpError::NotBuilt("decommission: no messaging".into()))?;
    let hints = match cluster::hints::hand_over_hints(&node.storage, messaging, coordinator.membership(), |what| {
        tracing::info!("decommission: {what}")
    })
    .await
    {
        Ok(hints) => hints,
        Err(e) => {
            return Err(back_to_normal(state, service, format!("decommission stopped, the node is NORMAL again: {e}")))
        }
    };
    service.announce_left();
    wait_for_the_ring(out, service, Progress { done: total - 1, total, what: "announced LEFT".into() }).await;
    service.stop_after_leaving();
    state.mode.store(MODE_DECOMMISSIONED, Ordering::SeqCst);
    node.storage.save_tokens(Vec::new())?;
    let flushed = flush_all(state, out).await?;
    stop_engine(state, out, flushed.len() as u64).await?;
    out.progress(Progress { done: total, total, what: "decommissioned".into() }).await;
    tracing::info!(transfers = transfers.len(), partitions, "decommissioned: this node left the ring");
    Ok(DecommissionResult {
        transfers: transfers.len() as u64,
        partitions,
        hints_delivered: hints.delivered as u64,
        hints_handed_over: hints.handed_over as u64,
        effect: DECOMMISSIONED_EFFECT.into(),
    })
}

/// Moves this node to `token`, or with `None` (loadbalance, as in 0.6) to the middle of the
/// largest range of the member owning the most of the ring without it (Cassandra's `nodetool
/// move`). Refused for a node with several tokens, a token another node holds, while another
/// node joins, leaves or moves, or when a node that would take a range, or every node that could
/// give one, is down. Announces MOVING and waits `RingDelayInMillis` (from then on every
/// coordinator also writes the ranges changing hands to their new replicas), moves each range's
/// data (`cluster::coordinator::moving`), then saves the new token, announces NORMAL at it and
/// waits again for the ring to hear it. A failed transfer announces NORMAL at the old token
/// again. The node keeps the data of the ranges it gave up until cleanup.
async fn move_node<W: AsyncWrite + Unpin>(
    state: &AdminState,
    token: Option<&str>,
    out: &mut ReplyWriter<W>,
) -> Result<MoveResult, OpError> {
    let op = if token.is_some() { "move" } else { "loadbalance" };
    let _exclusive = state.ops_lock.write().await;
    state.check_not_drained(op)?;
    let node = &state.node;
    let service = cluster_service(node, op)?;
    toggles::check_gossiping(service, op)?;
    let coordinator = &node.coordinator;
    let partitioner = coordinator.partitioner();
    let membership = coordinator.membership();
    let local = membership.local();
    let ring = membership.ring();
    let old = match ring.tokens_of(local) {
        [old] => old.clone(),
        tokens => {
            return Err(OpError::BadRequest(format!(
                "{op}: this node has {} tokens; only a node with one token moves (a node with virtual nodes cannot)",
                tokens.len()
            )))
        }
    };
    check_ring_settled(op, &ring, local)?;
    let new = match token {
        Some(t) => partitioner.token_from_string(t).map_err(|e| OpError::BadRequest(format!("move: {e}")))?,
        None => {
            let mut others = ring.normal_ring();
            others.remove_endpoint(local);
            if others.member_count() == 0 {
                return Err(OpError::BadRequest("loadbalance: this node is the only one in the ring".into()));
            }
            cluster::token_metadata::choose_token(partitioner, &others)
        }
    };
    let (old_text, new_text) = (partitioner.token_to_string(&old), partitioner.token_to_string(&new));
    if new == old {
        return Err(OpError::BadRequest(format!("{op}: this node is already at token {new_text}")));
    }
    let transfers =
        coordinator.transfers_for_moving(local, &new).map_err(|e| OpError::BadRequest(format!("{op}: {e}")))?;
    for t in &transfers {
        let range = format!("keyspace {} range {}", t.keyspace, partitioner.range_to_string(&t.range));
        if !membership.is_alive(t.to) {
            return Err(OpError::Unavailable(format!("{op}: {} would take {range} but is down", t.to.ip())));
        }
        if t.from.is_empty() {
            return Err(OpError::Unavailable(format!("{op}: no live replica of {range} to take its data from")));
        }
    }
    state.mode.store(MODE_MOVING, Ordering::SeqCst);
    if let Err(e) = service.announce_moving(&new) {
        state.mode.store(MODE_NORMAL, Ordering::SeqCst);
        return Err(OpError::BadRequest(format!("{op}: {e}")));
    }
    let total = transfers.len() as u64 + 2;
    let announced = format!("announced MOVING from {old_text} to {new_text}");
    wait_for_the_ring(out, service, Progress { done: 0, total, what: announced }).await;
    let abandon = |e: String| {
        back_to_normal(state, service, format!("{op} stopped, the node is NORMAL at token {old_text} again: {e}"))
    };
    let mut partitions = 0;
    for (i, transfer) in transfers.iter().enumerate() {
        let range = format!("{} {}", transfer.keyspace, partitioner.range_to_string(&transfer.range));
        let what = if transfer.to == local {
            let from: Vec<String> = transfer.from.iter().map(|ep| ep.ip().to_string()).collect();
            format!("fetching {range} from {}", from.join(", "))
        } else {
            format!("sending {range} to {}", transfer.to.ip())
        };
        let progress = Progress { done: i as u64 + 1, total, what };
        match hand_over(op, out, coordinator, transfer, progress).await {
            Ok(report) => partitions += report.partitions,
            Err(e) => return Err(abandon(e.to_string())),
        }
    }
    node.storage.save_tokens(vec![new_text.clone()]).map_err(|e| abandon(e.to_string()))?;
    service.join(vec![new]);
    let announced = format!("announced NORMAL at {new_text}");
    wait_for_the_ring(out, service, Progress { done: total - 1, total, what: announced }).await;
    state.mode.store(MODE_NORMAL, Ordering::SeqCst);
    out.progress(Progress { done: total, total, what: format!("moved to {new_text}") }).await;
    tracing::info!(from = %old_text, to = %new_text, transfers = transfers.len(), partitions, "{op}: moved");
    Ok(MoveResult {
        from_token: old_text,
        token: new_text,
        transfers: transfers.len() as u64,
        partitions,
        effect: MOVED_EFFECT.into(),
    })
}

/// Ends a decommission or move that failed: announces NORMAL at the node's tokens again and
/// gives the error `why` to answer with.
fn back_to_normal(state: &AdminState, service: &StorageService, why: String) -> OpError {
    service.rejoin();
    state.mode.store(MODE_NORMAL, Ordering::SeqCst);
    OpError::Unavailable(why)
}

/// Cassandra's `nodetool gossipinfo`: every endpoint gossip knows, itself included.
fn gossip_info(node: &Node) -> Result<GossipInfoResult, OpError> {
    let service = cluster_service(node, "gossip_info")?;
    let endpoints = service
        .gossip_snapshot()
        .into_iter()
        .map(|(ep, s)| GossipEndpoint {
            endpoint: ep.to_string(),
            generation: s.heartbeat.generation,
            heartbeat: s.heartbeat.version,
            alive: s.alive,
            states: s
                .states
                .iter()
                .map(|(k, v)| GossipState { name: k.name().to_string(), version: v.version, value: v.value.clone() })
                .collect(),
        })
        .collect();
    Ok(GossipInfoResult { endpoints })
}

/// Cassandra's `nodetool describering`: Thrift's describe_ring, with the schema version.
fn describe_ring(node: &Node, keyspace: String) -> Result<DescribeRingResult, OpError> {
    let c = &node.coordinator;
    let partitioner = c.partitioner();
    let ranges = c
        .describe_ring(&keyspace, false)
        .map_err(|e| match e {
            cluster::coordinator::CoordinatorError::Invalid(why) => OpError::BadRequest(why),
            other => OpError::from(other),
        })?
        .into_iter()
        .map(|r| TokenRangeInfo {
            start_token: partitioner.token_to_string(&r.start),
            end_token: partitioner.token_to_string(&r.end),
            endpoints: r.endpoints.iter().map(|e| e.address.clone()).collect(),
            rpc_endpoints: r.endpoints.iter().map(|e| e.rpc_address.clone()).collect(),
            endpoint_details: r
                .endpoints
                .iter()
                .map(|e| EndpointDetails {
                    host: e.address.clone(),
                    datacenter: e.datacenter.clone(),
                    rack: e.rack.clone(),
                })
                .collect(),
        })
        .collect();
    Ok(DescribeRingResult { keyspace, schema_version: node.storage.schema_version().to_string(), ranges })
}

/// The node's gossip and ring service, which `op` needs.
pub(super) fn cluster_service<'n>(node: &'n Node, op: &str) -> Result<&'n Arc<StorageService>, OpError> {
    node.service.as_ref().ok_or_else(|| OpError::NotBuilt(format!("{op}: this node runs without the cluster service")))
}

/// Refuses `op` while a node other than `except` joins, leaves or moves: the transfers of one
/// ring change are computed on the ring as it is, so two at once could miss a range. (`except`
/// is the node the operation is about: a removenode run again finds its node still REMOVING.)
pub(super) fn check_ring_settled(
    op: &str,
    ring: &cluster::token_metadata::TokenMetadata,
    except: cluster::Endpoint,
) -> Result<(), OpError> {
    let other = |ep: &cluster::Endpoint| *ep != except;
    if ring.bootstrap_tokens().values().any(other)
        || ring.leaving_endpoints().iter().any(other)
        || ring.moving_endpoints().keys().any(other)
    {
        return Err(OpError::Unavailable(format!(
            "{op}: another node is joining, leaving or moving; wait until it is done (one ring change at a time)"
        )));
    }
    Ok(())
}

/// What must move for `leaving` to leave the ring; refused (for `op`) while another node joins,
/// leaves or moves, or when a node that would take a range is down.
fn transfers_with_takers_up(
    op: &str,
    coordinator: &Coordinator,
    leaving: cluster::Endpoint,
) -> Result<Vec<Transfer>, OpError> {
    check_ring_settled(op, &coordinator.membership().ring(), leaving)?;
    let transfers = coordinator.transfers_for_leaving(leaving)?;
    if let Some(t) = transfers.iter().find(|t| !coordinator.membership().is_alive(t.to)) {
        return Err(OpError::Unavailable(format!(
            "{op}: {} would take ranges of keyspace {} but is down",
            t.to.ip(),
            t.keyspace
        )));
    }
    Ok(transfers)
}

/// After a status announcement (`announced.what` says which), waits `RingDelayInMillis` for
/// every node to hear it, with a progress line.
async fn wait_for_the_ring<W: AsyncWrite + Unpin>(
    out: &mut ReplyWriter<W>,
    service: &StorageService,
    announced: Progress,
) {
    let delay = service.ring_delay();
    let progress =
        Progress { what: format!("{}; waiting {delay:?} for the ring to hear it", announced.what), ..announced };
    out.progress(progress.clone()).await;
    with_heartbeat(out, &progress, HEARTBEAT, tokio::time::sleep(delay)).await;
}

/// Moves one transfer's data (for `op`), announced by `progress` and repeating it while it runs.
async fn hand_over<W: AsyncWrite + Unpin>(
    op: &'static str,
    out: &mut ReplyWriter<W>,
    coordinator: &Coordinator,
    transfer: &Transfer,
    progress: Progress,
) -> Result<SyncReport, CoordinatorError> {
    out.progress(progress.clone()).await;
    let moving = coordinator.hand_over(transfer, |step| tracing::info!("{op}: {step}"));
    with_heartbeat(out, &progress, HEARTBEAT, moving).await
}

// ----- compaction thresholds, getsstables, stop -----

fn compaction_threshold(node: &Node, keyspace: String, cf: String) -> Result<CompactionThresholdResult, OpError> {
    let (min, max) = node.storage.compaction_thresholds(&keyspace, &cf)?;
    Ok(CompactionThresholdResult { keyspace, column_family: cf, min, max })
}

/// Cassandra's `nodetool setcompactionthreshold`, with nodetool's checks and words (prefixed by
/// the column family): only 0 and 0 turn background compaction off.
fn set_compaction_threshold(
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
async fn get_sstables(
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
fn stop(node: &Node, compaction_type: &str) -> Result<StopResult, OpError> {
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

fn get_endpoints(node: &Node, keyspace: &str, cf: &str, key: &str) -> Result<GetEndpointsResult, OpError> {
    node.storage.cf_metadata(keyspace, cf)?;
    let (token, endpoints) =
        node.coordinator.natural_endpoints(keyspace, key.as_bytes()).map_err(|e| OpError::BadRequest(e.to_string()))?;
    Ok(GetEndpointsResult { token: node.coordinator.partitioner().token_to_string(&token), endpoints })
}
