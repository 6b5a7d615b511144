//! The requests that only report (nodetool's status views): the ring and this node (`ring`,
//! `info`, `describe_cluster`, `describe_ring`, `gossip_info`, `get_endpoints`, `version`) and
//! the counters (`cf_stats`, `tp_stats`, `index_status`, `net_stats`). None changes anything,
//! so none takes the operations lock.

use admin_protocol::*;
use cluster::coordinator::CoordinatorError;
use storage::engine::{CfStats as EngineCfStats, LatencyTotals};
use storage::StorageError;

use super::state::{cluster_service, join_paths, AdminState, OpError};
use crate::node::Node;

/// This node's host id (announced through gossip); a node built without one (tests) gets the
/// MD5 of its tokens, shaped as a version-3 UUID.
fn host_id(node: &Node) -> String {
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
pub(super) fn ring(node: &Node) -> RingResult {
    let c = &node.coordinator;
    let m = c.membership();
    let partitioner = c.partitioner();
    let ring = m.ring();
    let local = m.local();
    let mut entries: Vec<(model::dht::Token, cluster::Endpoint, f64, &str)> = ring
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

pub(super) fn info(state: &AdminState) -> InfoResult {
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
        uptime_seconds: state.uptime().as_secs(),
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

pub(super) fn describe_cluster(node: &Node) -> DescribeClusterResult {
    let c = &node.coordinator;
    DescribeClusterResult {
        name: c.cluster_name().into(),
        snitch: c.snitch_name().into(),
        partitioner: c.partitioner().class_name().into(),
        schema_versions: c.known_schema_versions(),
    }
}

/// Cassandra's `nodetool gossipinfo`: every endpoint gossip knows, itself included.
pub(super) fn gossip_info(node: &Node) -> Result<GossipInfoResult, OpError> {
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
pub(super) fn describe_ring(node: &Node, keyspace: String) -> Result<DescribeRingResult, OpError> {
    let c = &node.coordinator;
    let partitioner = c.partitioner();
    let ranges = c
        .describe_ring(&keyspace, false)
        .map_err(|e| match e {
            CoordinatorError::Invalid(why) => OpError::BadRequest(why),
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

pub(super) fn get_endpoints(node: &Node, keyspace: &str, cf: &str, key: &str) -> Result<GetEndpointsResult, OpError> {
    node.storage.cf_metadata(keyspace, cf)?;
    let (token, endpoints) =
        node.coordinator.natural_endpoints(keyspace, key.as_bytes()).map_err(|e| OpError::BadRequest(e.to_string()))?;
    Ok(GetEndpointsResult { token: node.coordinator.partitioner().token_to_string(&token), endpoints })
}

pub(super) fn index_status(node: &Node, keyspace: Option<&str>) -> Result<IndexStatusResult, OpError> {
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

pub(super) fn cf_stats(node: &Node, keyspace: Option<&str>, cf: Option<&str>) -> Result<CfStatsResult, OpError> {
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

pub(super) fn tp_stats(node: &Node) -> TpStatsResult {
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

/// `netstats`: the node's mode; the lists of streams stay empty (transfers between nodes are not
/// listed yet).
pub(super) fn net_stats(state: &AdminState) -> NetStatsResult {
    NetStatsResult { mode: state.mode_name().into(), sending: Vec::new(), receiving: Vec::new() }
}

pub(super) fn version() -> VersionResult {
    VersionResult {
        release_version: env!("CARGO_PKG_VERSION").into(),
        thrift_api_version: thrift_idl::VERSION.into(),
        protocol_version: PROTOCOL_VERSION,
    }
}
