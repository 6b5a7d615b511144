//! What each admin operation does on this node, and the statistics it reports.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;

use admin_protocol::*;
use serde::Serialize;
use storage::cfs::ColumnFamilyStore;
use storage::StorageError;
use tokio::io::AsyncWrite;

use super::{ReplyWriter, HEARTBEAT};
use crate::node::{Node, DATACENTER, RACK};

/// Operation mode, as `info` and `netstats` print it.
const MODE_NORMAL: u8 = 0;
const MODE_DRAINING: u8 = 1;
const MODE_DRAINED: u8 = 2;

/// What a client sees after a drain (checked by the sibyltool integration test).
pub const DRAINED_EFFECT: &str = "writes are refused: Thrift clients get an internal error \
     (TApplicationException INTERNAL_ERROR \"storage is shutting down\"); reads still work. \
     Restart the node to accept writes again.";

/// The admin interface's view of the node.
pub struct AdminState {
    pub node: Arc<Node>,
    started: Instant,
    mode: AtomicU8,
    /// Flush and compact hold it shared, drain exclusively: a drain waits for running
    /// operations, and operations after it see the drained mode.
    ops_lock: tokio::sync::RwLock<()>,
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

    fn mode_name(&self) -> &'static str {
        match self.mode.load(Ordering::SeqCst) {
            MODE_NORMAL => "NORMAL",
            MODE_DRAINING => "DRAINING",
            _ => "DRAINED",
        }
    }

    fn check_not_drained(&self, op: &'static str) -> Result<(), OpError> {
        match self.mode.load(Ordering::SeqCst) {
            MODE_NORMAL => Ok(()),
            _ => Err(OpError::Drained(op)),
        }
    }
}

/// Why an operation failed.
#[derive(Debug, thiserror::Error)]
pub enum OpError {
    #[error("{0}")]
    Storage(#[from] StorageError),
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}: not supported yet: needs the cluster layer")]
    NeedsCluster(&'static str),
    #[error("{0}: the node is drained (restart it to flush, compact or accept writes again)")]
    Drained(&'static str),
    #[error("{0}")]
    Internal(String),
}

impl OpError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            OpError::Storage(StorageError::UnknownKeyspace(_)) => ErrorKind::UnknownKeyspace,
            OpError::Storage(StorageError::UnknownColumnFamily { .. }) => ErrorKind::UnknownColumnFamily,
            OpError::Storage(_) => ErrorKind::Storage,
            OpError::BadRequest(_) => ErrorKind::BadRequest,
            OpError::NeedsCluster(_) => ErrorKind::NotSupported,
            OpError::Drained(_) => ErrorKind::Drained,
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
        Request::Cleanup { keyspace } => to_value(cleanup(node, keyspace.as_deref())?),
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
        Request::Move { .. } => Err(OpError::NeedsCluster("move")),
        Request::Decommission => Err(OpError::NeedsCluster("decommission")),
        Request::RemoveNode { .. } => Err(OpError::NeedsCluster("removenode")),
        Request::LoadBalance => Err(OpError::NeedsCluster("loadbalance")),
        Request::Repair { .. } => Err(OpError::NeedsCluster("repair")),
        Request::Join => Err(OpError::NeedsCluster("join")),
    }
}

// ----- identity and ring -----

/// A stable id for this node until the cluster layer gives nodes real host ids: the MD5 of its
/// token (saved at first start), shaped as a version-3 UUID.
pub fn host_id(node: &Node) -> String {
    use md5::Digest;
    let token = node.storage.partitioner().token_to_string(&node.local_token);
    let digest: [u8; 16] = md5::Md5::digest(token.as_bytes()).into();
    uuid::Builder::from_md5_bytes(digest).into_uuid().to_string()
}

fn load_bytes(node: &Node) -> u64 {
    node.storage.all_stores().iter().flat_map(|s| s.sstables()).map(|r| r.disk_size()).sum()
}

fn ring(node: &Node) -> RingResult {
    let partitioner = node.storage.partitioner();
    let owns = partitioner.describe_ownership(std::slice::from_ref(&node.local_token)).first().copied().unwrap_or(0.0);
    RingResult {
        partitioner: partitioner.class_name().into(),
        entries: vec![RingEntry {
            address: node.listen_address.clone(),
            datacenter: DATACENTER.into(),
            rack: RACK.into(),
            status: "Up".into(),
            state: "Normal".into(),
            load_bytes: load_bytes(node),
            owns,
            token: partitioner.token_to_string(&node.local_token),
            host_id: host_id(node),
        }],
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
    for s in node.storage.all_stores() {
        let m = s.active_memtable();
        bytes += m.size() as u64;
        operations += m.operations() as u64;
        partitions += m.partitions() as u64;
    }
    let cache = storage::block_cache::global();
    let (hits, misses) = cache.hits_and_misses();
    InfoResult {
        host_id: host_id(node),
        token: node.storage.partitioner().token_to_string(&node.local_token),
        mode: state.mode_name().into(),
        cluster_name: node.cluster_name.clone(),
        listen_address: node.listen_address.clone(),
        rpc_address: node.rpc_address.clone(),
        uptime_seconds: state.started.elapsed().as_secs(),
        load_bytes: load_bytes(node),
        schema_version: node.storage.schema_version().to_string(),
        rss_bytes: rss,
        peak_rss_bytes: peak,
        memtable_bytes: bytes,
        memtable_operations: operations,
        memtable_partitions: partitions,
        block_cache_bytes: cache.size() as u64,
        block_cache_capacity_bytes: cache.capacity() as u64,
        block_cache_hits: hits,
        block_cache_requests: hits + misses,
        datacenter: DATACENTER.into(),
        rack: RACK.into(),
        data_directory: node.storage.data_dir().display().to_string(),
        release_version: env!("CARGO_PKG_VERSION").into(),
    }
}

fn describe_cluster(node: &Node) -> DescribeClusterResult {
    let mut schema_versions = std::collections::BTreeMap::new();
    schema_versions.insert(node.storage.schema_version().to_string(), vec![node.listen_address.clone()]);
    DescribeClusterResult {
        name: node.cluster_name.clone(),
        snitch: node.snitch.clone(),
        partitioner: node.storage.partitioner().class_name().into(),
        schema_versions,
    }
}

// ----- statistics -----

fn mean_ms(count: u64, micros: u64) -> Option<f64> {
    (count > 0).then(|| micros as f64 / count as f64 / 1000.0)
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
        let (mut reads, mut read_us, mut writes, mut write_us) = (0u64, 0u64, 0u64, 0u64);
        for name in names {
            let store = storage.store(&ks.name, name)?;
            let s = store_stats(&store);
            reads += s.read_count;
            writes += s.write_count;
            read_us += store.counters.read_micros.load(Ordering::Relaxed);
            write_us += store.counters.write_micros.load(Ordering::Relaxed);
            cfs.push(s);
        }
        out.push(KeyspaceStats {
            name: ks.name.clone(),
            read_count: reads,
            read_latency_ms: mean_ms(reads, read_us),
            write_count: writes,
            write_latency_ms: mean_ms(writes, write_us),
            column_families: cfs,
        });
    }
    Ok(CfStatsResult { keyspaces: out })
}

fn store_stats(store: &ColumnFamilyStore) -> CfStats {
    let c = &store.counters;
    let reads = c.reads.load(Ordering::Relaxed);
    let writes = c.writes.load(Ordering::Relaxed);
    let sstables = store.sstables();
    let memtable = store.active_memtable();
    let min_ts = sstables.iter().map(|s| s.metadata().min_timestamp).filter(|&t| t != i64::MAX).min();
    let max_ts = sstables.iter().map(|s| s.metadata().max_timestamp).filter(|&t| t != i64::MIN).max();
    CfStats {
        name: store.name.clone(),
        sstable_count: sstables.len() as u64,
        space_used_live: sstables.iter().map(|s| s.disk_size()).sum(),
        data_bytes: sstables.iter().map(|s| s.data_size()).sum(),
        key_estimate: sstables.iter().map(|s| s.metadata().key_count).sum(),
        sstable_cells: sstables.iter().map(|s| s.metadata().cell_count).sum(),
        sstable_tombstones: sstables.iter().map(|s| s.metadata().tombstone_count).sum(),
        memtable_operations: memtable.operations() as u64,
        memtable_bytes: memtable.size() as u64,
        memtable_partitions: memtable.partitions() as u64,
        memtable_switch_count: c.flushes.load(Ordering::Relaxed),
        read_count: reads,
        read_latency_ms: mean_ms(reads, c.read_micros.load(Ordering::Relaxed)),
        write_count: writes,
        write_latency_ms: mean_ms(writes, c.write_micros.load(Ordering::Relaxed)),
        compactions: c.compactions.load(Ordering::Relaxed),
        min_timestamp: min_ts,
        max_timestamp: max_ts,
    }
}

fn tp_stats(node: &Node) -> TpStatsResult {
    let (mut reads, mut writes, mut flushes, mut compactions) = (0u64, 0u64, 0u64, 0u64);
    for s in node.storage.all_stores() {
        reads += s.counters.reads.load(Ordering::Relaxed);
        writes += s.counters.writes.load(Ordering::Relaxed);
        flushes += s.counters.flushes.load(Ordering::Relaxed);
        compactions += s.counters.compactions.load(Ordering::Relaxed);
    }
    let pool = |name: &str, completed| PoolStats { name: name.into(), active: None, pending: None, completed };
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
            "There is no internode messaging yet, so no message is ever dropped.".into(),
        ],
    }
}

// ----- flush, compact, cleanup, drain -----

/// Column families named by a flush or compact request, in (keyspace, name) order. Every name is
/// checked before any work starts.
fn select_stores(node: &Node, keyspace: Option<&str>, cfs: &[String]) -> Result<Vec<Arc<ColumnFamilyStore>>, OpError> {
    let storage = &node.storage;
    let mut stores = match keyspace {
        None if !cfs.is_empty() => return Err(OpError::BadRequest("column families need their keyspace".into())),
        None => storage.all_stores(),
        Some(k) => {
            let ks = storage.keyspace(k).ok_or_else(|| StorageError::UnknownKeyspace(k.into()))?;
            let names: Vec<&str> = if cfs.is_empty() {
                ks.cf_defs.iter().map(|d| d.name.as_str()).collect()
            } else {
                cfs.iter().map(String::as_str).collect()
            };
            names.into_iter().map(|n| storage.store(k, n)).collect::<Result<Vec<_>, _>>()?
        }
    };
    stores.sort_by(|a, b| (&a.keyspace, &a.name).cmp(&(&b.keyspace, &b.name)));
    stores.dedup_by(|a, b| a.id == b.id);
    Ok(stores)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Work {
    Flush,
    Compact,
}

fn sstable_totals(store: &ColumnFamilyStore) -> (u64, u64) {
    let s = store.sstables();
    (s.len() as u64, s.iter().map(|r| r.disk_size()).sum())
}

/// Flushes or major-compacts each store in turn, reporting progress per column family.
async fn per_cf<W: AsyncWrite + Unpin>(
    node: &Node,
    stores: &[Arc<ColumnFamilyStore>],
    work: Work,
    out: &mut ReplyWriter<W>,
) -> Result<WorkResult, OpError> {
    let total = stores.len() as u64;
    let verb = if work == Work::Flush { "flushing" } else { "compacting" };
    let mut done = Vec::new();
    for (i, store) in stores.iter().enumerate() {
        let name = format!("{}.{}", store.keyspace, store.name);
        let progress = Progress { done: i as u64, total, what: format!("{verb} {name}") };
        out.progress(progress.clone()).await;
        let (sstables_before, bytes_before) = sstable_totals(store);
        let storage = node.storage.clone();
        let (ks, cf) = (store.keyspace.clone(), store.name.clone());
        run_blocking(out, &progress, move || match work {
            Work::Flush => storage.flush(&ks, &cf),
            Work::Compact => storage.major_compact(&ks, &cf),
        })
        .await??;
        let (sstables_after, bytes_after) = sstable_totals(store);
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
    let mut task = tokio::task::spawn_blocking(f);
    let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    loop {
        tokio::select! {
            joined = &mut task => return joined.map_err(|e| OpError::Internal(format!("admin task failed: {e}"))),
            _ = beat.tick() => out.progress(progress.clone()).await,
        }
    }
}

fn cleanup(node: &Node, keyspace: Option<&str>) -> Result<CleanupResult, OpError> {
    let schema = node.storage.schema();
    let keyspaces: Vec<_> = match keyspace {
        Some(k) => vec![schema.keyspaces.get(k).cloned().ok_or_else(|| StorageError::UnknownKeyspace(k.into()))?],
        None => schema.keyspaces.values().cloned().collect(),
    };
    // With one token in the ring this node's range is the whole ring: every key it stores is
    // its own. Once the cluster layer exists, cleanup has to drop the ranges given away.
    let ring_size = 1;
    Ok(CleanupResult {
        keyspaces: keyspaces
            .into_iter()
            .map(|ks| CleanupKeyspace {
                keyspace: ks.name,
                column_families: ks.cf_defs.len() as u64,
                removed_bytes: 0,
                reason: format!(
                    "nothing to clean up: this node is the only one in the ring ({ring_size} token) and owns every key"
                ),
            })
            .collect(),
    })
}

async fn drain<W: AsyncWrite + Unpin>(state: &AdminState, out: &mut ReplyWriter<W>) -> Result<DrainResult, OpError> {
    let _exclusive = state.ops_lock.write().await;
    if state.mode.load(Ordering::SeqCst) == MODE_DRAINED {
        return Ok(DrainResult { already_drained: true, flushed: Vec::new(), effect: DRAINED_EFFECT.into() });
    }
    state.mode.store(MODE_DRAINING, Ordering::SeqCst);
    let node = &state.node;
    let stores = select_stores(node, None, &[])?;
    let total = stores.len() as u64 + 1;
    let mut flushed = Vec::new();
    for (i, store) in stores.iter().enumerate() {
        let name = format!("{}.{}", store.keyspace, store.name);
        let progress = Progress { done: i as u64, total, what: format!("flushing {name}") };
        out.progress(progress.clone()).await;
        let storage = node.storage.clone();
        let (ks, cf) = (store.keyspace.clone(), store.name.clone());
        if let Err(e) = run_blocking(out, &progress, move || storage.flush(&ks, &cf)).await.and_then(|r| Ok(r?)) {
            // Nothing is stopped yet: the node keeps serving as before.
            state.mode.store(MODE_NORMAL, Ordering::SeqCst);
            return Err(e);
        }
        flushed.push(name);
    }
    // Writes that arrived during the flushes are flushed by shutdown, after it starts refusing
    // new ones.
    let progress = Progress { done: total - 1, total, what: "refusing writes, flushing the rest".into() };
    out.progress(progress.clone()).await;
    let storage = node.storage.clone();
    let stopped = run_blocking(out, &progress, move || storage.shutdown()).await;
    // Whatever happened, the engine now refuses writes.
    state.mode.store(MODE_DRAINED, Ordering::SeqCst);
    stopped??;
    out.progress(Progress { done: total, total, what: "drained".into() }).await;
    tracing::info!("node drained: writes are refused until restart");
    Ok(DrainResult { already_drained: false, flushed, effect: DRAINED_EFFECT.into() })
}

fn get_endpoints(node: &Node, keyspace: &str, cf: &str, key: &str) -> Result<GetEndpointsResult, OpError> {
    node.storage.store(keyspace, cf)?;
    let partitioner = node.storage.partitioner();
    let token = partitioner.try_token_for_key(key.as_bytes()).map_err(|e| OpError::BadRequest(e.to_string()))?;
    Ok(GetEndpointsResult {
        token: partitioner.token_to_string(&token),
        // One node: it holds every key, whatever the replication factor.
        endpoints: vec![node.listen_address.clone()],
    })
}
