//! Results of the requests that only report (nodetool's status views): the ring and this node
//! (`ring`, `info`, `describe_cluster`, `describe_ring`, `gossip_info`, `get_endpoints`,
//! `version`) and the counters (`cf_stats`, `tp_stats`, `index_status`, `net_stats`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One node of the ring.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RingEntry {
    pub address: String,
    pub datacenter: String,
    pub rack: String,
    /// `Up` or `Down`.
    pub status: String,
    /// `Normal`, `Leaving`, `Joining` or `Moving`.
    pub state: String,
    /// Bytes of live SSTables.
    pub load_bytes: u64,
    /// Fraction of the ring this node's token range covers, 0..=1.
    pub owns: f64,
    pub token: String,
    pub host_id: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RingResult {
    pub partitioner: String,
    /// In token order.
    pub entries: Vec<RingEntry>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InfoResult {
    pub host_id: String,
    pub token: String,
    /// `NORMAL`, `MOVING`, `LEAVING`, `DECOMMISSIONED`, `DRAINING` or `DRAINED`.
    pub mode: String,
    /// Whether the node gossips (`disablegossip` stops it) and serves Thrift (`disablethrift`).
    pub gossip_active: bool,
    pub thrift_active: bool,
    pub cluster_name: String,
    pub listen_address: String,
    pub rpc_address: String,
    /// Seconds since the admin interface started, which the daemon does at startup.
    pub uptime_seconds: u64,
    /// Bytes of live SSTables, all column families.
    pub load_bytes: u64,
    pub schema_version: String,
    /// Resident memory (`VmRSS`) and its peak (`VmHWM`) from /proc/self/status; absent where
    /// /proc is not available.
    pub rss_bytes: Option<u64>,
    pub peak_rss_bytes: Option<u64>,
    /// Approximate bytes, operations and partitions in all active memtables.
    pub memtable_bytes: u64,
    pub memtable_operations: u64,
    pub memtable_partitions: u64,
    /// The block cache (SSTable index blocks and data chunks): bytes held, capacity, and
    /// lookups since start that found their block / all lookups.
    pub block_cache_bytes: u64,
    pub block_cache_capacity_bytes: u64,
    pub block_cache_hits: u64,
    pub block_cache_requests: u64,
    pub datacenter: String,
    pub rack: String,
    /// Every `DataFileDirectory`, the first (primary) first, joined by ", ".
    pub data_directory: String,
    pub release_version: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DescribeClusterResult {
    pub name: String,
    pub snitch: String,
    pub partitioner: String,
    /// Schema version → addresses of the nodes on it.
    pub schema_versions: BTreeMap<String, Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CfStatsResult {
    pub keyspaces: Vec<KeyspaceStats>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KeyspaceStats {
    pub name: String,
    pub read_count: u64,
    /// Mean over all reads since startup; `None` before the first read.
    pub read_latency_ms: Option<f64>,
    pub write_count: u64,
    pub write_latency_ms: Option<f64>,
    pub column_families: Vec<CfStats>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CfStats {
    pub name: String,
    pub sstable_count: u64,
    /// Bytes of all components of the live SSTables.
    pub space_used_live: u64,
    /// Bytes of the Data components of the live SSTables.
    pub data_bytes: u64,
    /// Sum of the SSTables' partition counts: a partition in several SSTables counts several
    /// times, and memtables are not included (Cassandra's estimate works the same way).
    pub key_estimate: u64,
    pub sstable_cells: u64,
    pub sstable_tombstones: u64,
    /// Operations (column updates) applied to the active memtable.
    pub memtable_operations: u64,
    pub memtable_bytes: u64,
    pub memtable_partitions: u64,
    /// Memtables flushed since startup.
    pub memtable_switch_count: u64,
    pub read_count: u64,
    pub read_latency_ms: Option<f64>,
    pub write_count: u64,
    pub write_latency_ms: Option<f64>,
    /// Compactions finished since startup.
    pub compactions: u64,
    /// Over the live SSTables; `None` when there is no SSTable or no cell.
    pub min_timestamp: Option<i64>,
    pub max_timestamp: Option<i64>,
    /// Under leveled compaction: per level (0 to 8), its SSTables and how many it should hold
    /// at most. Empty under other strategies.
    #[serde(default)]
    pub sstables_in_each_level: Vec<(u64, u64)>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoolStats {
    pub name: String,
    /// `None`: not tracked by this node yet.
    pub active: Option<u64>,
    pub pending: Option<u64>,
    pub completed: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpStatsResult {
    pub pools: Vec<PoolStats>,
    /// What the numbers mean and what is not tracked.
    pub notes: Vec<String>,
}

/// One secondary index: whether it is built, and how far a running build has got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexStatus {
    pub keyspace: String,
    pub column_family: String,
    pub index: String,
    /// The indexed column, as the column family's comparator shows it.
    pub column: String,
    /// Every row the column family held when the index was added is indexed, durably.
    pub built: bool,
    /// A build is running now.
    pub building: bool,
    /// Partitions the running (or last) build has read, of about `rows_total`.
    pub rows_done: u64,
    pub rows_total: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexStatusResult {
    pub indexes: Vec<IndexStatus>,
}

/// One application state of an endpoint, with the version gossip orders it by.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GossipState {
    /// `STATUS`, `LOAD`, `SCHEMA`, ...
    pub name: String,
    pub version: i32,
    pub value: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GossipEndpoint {
    /// `address:storage port`.
    pub endpoint: String,
    pub generation: i32,
    pub heartbeat: i32,
    pub alive: bool,
    pub states: Vec<GossipState>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GossipInfoResult {
    pub endpoints: Vec<GossipEndpoint>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EndpointDetails {
    pub host: String,
    pub datacenter: String,
    pub rack: String,
}

/// A token range `(start_token, end_token]` and its replicas.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TokenRangeInfo {
    pub start_token: String,
    pub end_token: String,
    pub endpoints: Vec<String>,
    pub rpc_endpoints: Vec<String>,
    pub endpoint_details: Vec<EndpointDetails>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DescribeRingResult {
    pub keyspace: String,
    pub schema_version: String,
    pub ranges: Vec<TokenRangeInfo>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetStatsResult {
    pub mode: String,
    /// Streams to other nodes (none: there is no streaming yet).
    pub sending: Vec<String>,
    pub receiving: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GetEndpointsResult {
    pub token: String,
    pub endpoints: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VersionResult {
    pub release_version: String,
    pub thrift_api_version: String,
    pub protocol_version: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_round_trip() {
        let r = CfStatsResult {
            keyspaces: vec![KeyspaceStats {
                name: "ks".into(),
                read_count: 1,
                read_latency_ms: Some(0.5),
                write_count: 2,
                write_latency_ms: None,
                column_families: vec![CfStats {
                    name: "cf".into(),
                    sstable_count: 1,
                    space_used_live: 100,
                    data_bytes: 60,
                    key_estimate: 3,
                    sstable_cells: 4,
                    sstable_tombstones: 0,
                    memtable_operations: 0,
                    memtable_bytes: 0,
                    memtable_partitions: 0,
                    memtable_switch_count: 1,
                    read_count: 1,
                    read_latency_ms: Some(0.5),
                    write_count: 2,
                    write_latency_ms: None,
                    compactions: 0,
                    min_timestamp: Some(1),
                    max_timestamp: Some(2),
                    sstables_in_each_level: vec![(1, 4), (3, 10)],
                }],
            }],
        };
        let v = serde_json::to_value(&r).expect("encodes");
        let back: CfStatsResult = serde_json::from_value(v).expect("decodes");
        assert_eq!(back, r);
    }
}
