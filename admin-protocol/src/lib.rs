//! The admin wire protocol's messages: requests ([`Request`], parsed by [`parse_request`]),
//! reply lines ([`Reply`]: [`Progress`], a result, or an [`ErrorReply`] with its [`ErrorKind`]),
//! the line limits, and the typed results of every operation ([`RingResult`], [`InfoResult`],
//! [`CfStatsResult`], ...). The daemon (`server::admin`) and the client (`sibyltool`) both depend
//! on this crate, so the two sides cannot drift apart, and neither links the other.
//!
//! It holds messages only: no sockets, no operations. The framing and transport are described in
//! `server/src/admin/mod.rs`, every operation with its result fields in
//! `docs/admin-protocol.md`.

#![deny(clippy::unwrap_used)]

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The protocol version this build speaks. A request may carry `"v"`; absent means 1.
pub const PROTOCOL_VERSION: u64 = 1;

/// Longest request line the server reads, newline excluded. A longer line is read to its end and
/// dropped, and gets an error reply.
pub const MAX_REQUEST_LINE: usize = 1 << 20;

/// Longest reply line the client reads. Replies grow with the schema (cfstats lists every column
/// family), so this is generous; it only stops a runaway peer.
pub const MAX_REPLY_LINE: usize = 64 << 20;

/// One request: a JSON object on one line, the operation in `"op"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// The token ring as this node sees it (used by `ring` and `status`).
    Ring,
    /// This node: token, uptime, load, memory, memtables.
    Info,
    /// Cluster name, partitioner, snitch, schema versions.
    DescribeCluster,
    /// Statistics per keyspace and column family; `keyspace` and `cf` narrow the list.
    CfStats {
        #[serde(default)]
        keyspace: Option<String>,
        #[serde(default)]
        cf: Option<String>,
    },
    /// Operation counters per stage.
    TpStats,
    /// The secondary indexes and their builds; `keyspace` narrows the list.
    IndexStatus {
        #[serde(default)]
        keyspace: Option<String>,
    },
    /// Writes memtables to SSTables: every column family, one keyspace's, or the `cfs` listed.
    Flush {
        #[serde(default)]
        keyspace: Option<String>,
        #[serde(default)]
        cfs: Vec<String>,
    },
    /// Major compaction (flush, then merge all SSTables into one), same selection as `Flush`.
    Compact {
        #[serde(default)]
        keyspace: Option<String>,
        #[serde(default)]
        cfs: Vec<String>,
    },
    /// Removes data this node no longer owns.
    Cleanup {
        #[serde(default)]
        keyspace: Option<String>,
    },
    /// Flushes every memtable and stops accepting writes.
    Drain,
    /// Streams in and out of this node.
    NetStats,
    /// The nodes holding `key` (UTF-8) of `keyspace`.`cf`, and the key's token.
    GetEndpoints {
        keyspace: String,
        cf: String,
        key: String,
    },
    /// Release and protocol versions of the node.
    Version,
    /// Moves this node (it must have one token) to `token`; answered with a [`MoveResult`].
    Move {
        token: String,
    },
    Decommission,
    RemoveNode {
        node: String,
    },
    /// Moves this node to the middle of the most loaded node's largest range (0.6's
    /// loadbalance); answered with a [`MoveResult`].
    LoadBalance,
    /// Anti-entropy repair of the ranges this node replicates: of `keyspace` (every keyspace
    /// but the system ones when absent), of the column families `cfs` (all when empty), only
    /// the node's primary ranges with `primary_range`.
    Repair {
        #[serde(default)]
        keyspace: Option<String>,
        #[serde(default)]
        cfs: Vec<String>,
        #[serde(default)]
        primary_range: bool,
    },
    /// Not built yet (a node started outside the ring joining it): answered `not_supported`.
    Join,
    /// Flushes, then hard-links the SSTables of every column family of `keyspaces` (every
    /// keyspace when empty) into snapshot `tag` (the time in milliseconds when absent).
    Snapshot {
        #[serde(default)]
        keyspaces: Vec<String>,
        #[serde(default)]
        tag: Option<String>,
    },
    /// Removes snapshot `tag` (every snapshot when absent) of `keyspaces` (all when empty).
    ClearSnapshot {
        #[serde(default)]
        keyspaces: Vec<String>,
        #[serde(default)]
        tag: Option<String>,
    },
    /// The snapshots on disk.
    ListSnapshots,
    /// Gossip's view of every endpoint; answered with a [`GossipInfoResult`].
    GossipInfo,
    /// The token ranges of `keyspace` and their replicas (Thrift's describe_ring); answered
    /// with a [`DescribeRingResult`].
    DescribeRing {
        keyspace: String,
    },
    /// Empties the indexes `indexes` of `keyspace`.`cf` (all when empty) and builds them again
    /// in the background; answered with a [`RebuildIndexResult`].
    RebuildIndex {
        keyspace: String,
        cf: String,
        #[serde(default)]
        indexes: Vec<String>,
    },
    /// The compactions running and the number due; answered with a [`CompactionStatsResult`].
    CompactionStats,
    /// Compaction's write rate limit in MB/s (0: unthrottled); answered with a
    /// [`CompactionThroughputResult`].
    GetCompactionThroughput,
    /// Sets it, for running compactions too, until the node restarts; answered with the new
    /// [`CompactionThroughputResult`].
    SetCompactionThroughput {
        mb_per_sec: u32,
    },
    /// Stops background (minor) compaction of the column families (as `compact` selects them:
    /// every one when `keyspace` is absent) and their secondary indexes, until
    /// `enable_auto_compaction` or a restart (Cassandra's `nodetool disableautocompaction`); a
    /// major compaction still runs. Answered with an [`AutoCompactionResult`].
    DisableAutoCompaction {
        #[serde(default)]
        keyspace: Option<String>,
        #[serde(default)]
        cfs: Vec<String>,
    },
    /// Runs background compaction again, and checks at once what is due; answered with an
    /// [`AutoCompactionResult`].
    EnableAutoCompaction {
        #[serde(default)]
        keyspace: Option<String>,
        #[serde(default)]
        cfs: Vec<String>,
    },
    /// The minimum and maximum SSTables a background compaction of `keyspace`.`cf` merges;
    /// answered with a [`CompactionThresholdResult`].
    GetCompactionThreshold {
        keyspace: String,
        cf: String,
    },
    /// Sets them for that column family until the node restarts or its definition changes
    /// (the schema keeps its own); 0 and 0 turn background compaction off. Checked as nodetool
    /// does; answered with the new [`CompactionThresholdResult`].
    SetCompactionThreshold {
        keyspace: String,
        cf: String,
        min: i32,
        max: i32,
    },
    /// The Data files of the SSTables of `keyspace`.`cf` holding partition `key`: UTF-8 text,
    /// or its bytes in hexadecimal with `hex_format`. Answered with a [`GetSsTablesResult`].
    #[serde(rename = "get_sstables")]
    GetSsTables {
        keyspace: String,
        cf: String,
        key: String,
        #[serde(default)]
        hex_format: bool,
    },
    /// Stops the running operations of `compaction_type` (Cassandra's names: `COMPACTION`,
    /// `CLEANUP`, `SCRUB`, ...); each gives up, its output removed and its inputs kept, and the
    /// request that started it gets an `interrupted` error. Answered with a [`StopResult`].
    Stop {
        compaction_type: String,
    },
    /// The limit on data this node streams to others, in megabits per second (0: unthrottled);
    /// answered with a [`StreamThroughputResult`].
    GetStreamThroughput,
    /// Sets it, for streams under way too, until the node restarts.
    SetStreamThroughput {
        megabits_per_sec: u32,
    },
    /// Reads every SSTable of the column families (as `compact` selects them) through and
    /// replaces each damaged one by a copy of its readable partitions; answered with a
    /// [`ScrubResult`].
    Scrub {
        #[serde(default)]
        keyspace: Option<String>,
        #[serde(default)]
        cfs: Vec<String>,
    },
    /// Loads the SSTables of `keyspace`.`cf` found in `directory` (a path on the node) into the
    /// column family, live (Cassandra 4's `nodetool import`); answered with an [`ImportResult`].
    Import {
        keyspace: String,
        cf: String,
        directory: String,
    },
    /// Stops serving Thrift: the listening socket is closed and every client connection too,
    /// each once the call it is serving is answered (Cassandra's `nodetool disablethrift`);
    /// answered with a [`ServiceStatus`].
    DisableThrift,
    /// Listens for Thrift clients again on ThriftAddress:ThriftPort; answered with a
    /// [`ServiceStatus`].
    EnableThrift,
    /// Whether Thrift is served; answered with a [`ServiceStatus`].
    StatusThrift,
    /// Announces this node's shutdown to its peers, as a stopping node does, and stops gossiping:
    /// the others see it down while it goes on serving (Cassandra's `nodetool disablegossip`);
    /// answered with a [`ServiceStatus`].
    DisableGossip,
    /// Gossips again, with a newer generation, so the others see it up; answered with a
    /// [`ServiceStatus`].
    EnableGossip,
    /// Whether this node gossips; answered with a [`ServiceStatus`].
    StatusGossip,
    /// Stops keeping hints for replicas that are down, until the node restarts (Cassandra's
    /// `nodetool disablehandoff`); answered with a [`HandoffStatus`].
    DisableHandoff,
    /// Keeps hints again; answered with a [`HandoffStatus`].
    EnableHandoff,
    /// Whether hints are kept, and whether their delivery is paused; answered with a
    /// [`HandoffStatus`].
    StatusHandoff,
    /// Stops replaying hints to replicas that came back (they are still kept); answered with a
    /// [`HandoffStatus`].
    PauseHandoff,
    /// Replays hints again; answered with a [`HandoffStatus`].
    ResumeHandoff,
    /// Deletes the hints kept for `endpoint` (an IP address), or every hint when absent
    /// (Cassandra's `nodetool truncatehints`); answered with a [`TruncateHintsResult`].
    TruncateHints {
        #[serde(default)]
        endpoint: Option<String>,
    },
}

impl Request {
    /// The operation's name as written in `"op"`.
    pub fn op(&self) -> &'static str {
        match self {
            Request::Ring => "ring",
            Request::Info => "info",
            Request::DescribeCluster => "describe_cluster",
            Request::CfStats { .. } => "cf_stats",
            Request::TpStats => "tp_stats",
            Request::IndexStatus { .. } => "index_status",
            Request::Flush { .. } => "flush",
            Request::Compact { .. } => "compact",
            Request::Cleanup { .. } => "cleanup",
            Request::Drain => "drain",
            Request::NetStats => "net_stats",
            Request::GetEndpoints { .. } => "get_endpoints",
            Request::Version => "version",
            Request::Move { .. } => "move",
            Request::Decommission => "decommission",
            Request::RemoveNode { .. } => "remove_node",
            Request::LoadBalance => "load_balance",
            Request::Repair { .. } => "repair",
            Request::Join => "join",
            Request::Snapshot { .. } => "snapshot",
            Request::ClearSnapshot { .. } => "clear_snapshot",
            Request::ListSnapshots => "list_snapshots",
            Request::Import { .. } => "import",
            Request::Scrub { .. } => "scrub",
            Request::CompactionStats => "compaction_stats",
            Request::RebuildIndex { .. } => "rebuild_index",
            Request::GossipInfo => "gossip_info",
            Request::GetStreamThroughput => "get_stream_throughput",
            Request::SetStreamThroughput { .. } => "set_stream_throughput",
            Request::DescribeRing { .. } => "describe_ring",
            Request::GetCompactionThroughput => "get_compaction_throughput",
            Request::SetCompactionThroughput { .. } => "set_compaction_throughput",
            Request::DisableAutoCompaction { .. } => "disable_auto_compaction",
            Request::EnableAutoCompaction { .. } => "enable_auto_compaction",
            Request::GetCompactionThreshold { .. } => "get_compaction_threshold",
            Request::SetCompactionThreshold { .. } => "set_compaction_threshold",
            Request::GetSsTables { .. } => "get_sstables",
            Request::Stop { .. } => "stop",
            Request::DisableThrift => "disable_thrift",
            Request::EnableThrift => "enable_thrift",
            Request::StatusThrift => "status_thrift",
            Request::DisableGossip => "disable_gossip",
            Request::EnableGossip => "enable_gossip",
            Request::StatusGossip => "status_gossip",
            Request::DisableHandoff => "disable_handoff",
            Request::EnableHandoff => "enable_handoff",
            Request::StatusHandoff => "status_handoff",
            Request::PauseHandoff => "pause_handoff",
            Request::ResumeHandoff => "resume_handoff",
            Request::TruncateHints { .. } => "truncate_hints",
        }
    }

    /// Encodes the request as one line (with the protocol version), newline included.
    pub fn encode_line(&self) -> Result<String, ProtocolError> {
        let mut value = serde_json::to_value(self).map_err(|e| ProtocolError::Encode(e.to_string()))?;
        if let serde_json::Value::Object(map) = &mut value {
            map.insert("v".into(), PROTOCOL_VERSION.into());
        }
        let mut line = serde_json::to_string(&value).map_err(|e| ProtocolError::Encode(e.to_string()))?;
        line.push('\n');
        Ok(line)
    }
}

/// Why a request line could not be understood. Sent back as a `bad_request` (or
/// `unsupported_version`) error; the connection stays usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("request is not valid UTF-8")]
    NotUtf8,
    #[error("request is empty")]
    Empty,
    #[error("request is not a JSON object: {0}")]
    NotJson(String),
    #[error("request has no \"op\" field")]
    MissingOp,
    #[error("bad request: {0}")]
    Invalid(String),
    #[error("protocol version {got} is not supported (this node speaks version {PROTOCOL_VERSION})")]
    UnsupportedVersion { got: String },
}

impl RequestError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            RequestError::UnsupportedVersion { .. } => ErrorKind::UnsupportedVersion,
            _ => ErrorKind::BadRequest,
        }
    }
}

/// Parses one request line (without its newline; a trailing `\r` is tolerated).
pub fn parse_request(line: &[u8]) -> Result<Request, RequestError> {
    let text = std::str::from_utf8(line).map_err(|_| RequestError::NotUtf8)?;
    let text = text.trim();
    if text.is_empty() {
        return Err(RequestError::Empty);
    }
    let mut value: serde_json::Value = serde_json::from_str(text).map_err(|e| RequestError::NotJson(e.to_string()))?;
    let serde_json::Value::Object(map) = &mut value else {
        return Err(RequestError::NotJson("expected an object".into()));
    };
    if let Some(v) = map.remove("v") {
        if v.as_u64() != Some(PROTOCOL_VERSION) {
            return Err(RequestError::UnsupportedVersion { got: v.to_string() });
        }
    }
    if !map.contains_key("op") {
        return Err(RequestError::MissingOp);
    }
    let given: Vec<String> = map.keys().cloned().collect();
    let request: Request = serde_json::from_value(value).map_err(|e| RequestError::Invalid(e.to_string()))?;
    // serde ignores extra fields next to an argument-less op; refuse them like any unknown field,
    // so a misspelt argument never passes silently.
    if let Ok(serde_json::Value::Object(known)) = serde_json::to_value(&request) {
        if let Some(extra) = given.iter().find(|k| !known.contains_key(k.as_str())) {
            return Err(RequestError::Invalid(format!("unknown field `{extra}` for op `{}`", request.op())));
        }
    }
    Ok(request)
}

/// Progress of a long operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Steps finished.
    pub done: u64,
    /// Steps in all (column families, for flush and compact).
    pub total: u64,
    /// What is being done now.
    pub what: String,
}

/// What a failed request's error says, so a client can decide without parsing the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request line was not a valid request.
    BadRequest,
    /// The request's protocol version is not this node's.
    UnsupportedVersion,
    UnknownKeyspace,
    UnknownColumnFamily,
    /// The operation exists but needs something not built yet: moving data for move,
    /// loadbalance and join.
    NotSupported,
    /// Other nodes the operation needs are down, failed or did not answer in time (repair).
    Unavailable,
    /// The node was drained: it no longer flushes, compacts or accepts writes.
    Drained,
    /// The operation (a compaction, cleanup or scrub) was stopped by a `stop` request before
    /// it finished; what it wrote was removed.
    Interrupted,
    /// The storage engine failed (I/O, corruption).
    Storage,
    /// Anything else on the node's side.
    Internal,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorReply {
    pub kind: ErrorKind,
    pub message: String,
}

/// One reply line. A request gets zero or more `Progress` lines, then one `Ok` or `Error`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    Progress(Progress),
    Ok(serde_json::Value),
    Error(ErrorReply),
}

impl Reply {
    pub fn error(kind: ErrorKind, message: impl Into<String>) -> Reply {
        Reply::Error(ErrorReply { kind, message: message.into() })
    }

    /// One line, newline included. Cannot fail for the types used here (string keys only), but
    /// falls back to an internal error line rather than panic.
    pub fn encode_line(&self) -> String {
        let mut line = serde_json::to_string(self).unwrap_or_else(|e| {
            format!(r#"{{"error":{{"kind":"internal","message":{}}}}}"#, serde_json::Value::String(e.to_string()))
        });
        line.push('\n');
        line
    }

    pub fn decode_line(line: &[u8]) -> Result<Reply, ProtocolError> {
        serde_json::from_slice(line).map_err(|e| ProtocolError::BadReply(e.to_string()))
    }
}

/// The client's view of a protocol failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("cannot encode request: {0}")]
    Encode(String),
    #[error("malformed reply from the node: {0}")]
    BadReply(String),
    #[error("the node's reply does not match the request: {0}")]
    BadResult(String),
}

// ----- results -----

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

/// Flush and compact: what was done to each column family.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CfWork {
    /// `keyspace.cf`.
    pub name: String,
    pub sstables_before: u64,
    pub sstables_after: u64,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkResult {
    pub column_families: Vec<CfWork>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CleanupKeyspace {
    pub keyspace: String,
    pub column_families: u64,
    pub removed_bytes: u64,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CleanupResult {
    pub keyspaces: Vec<CleanupKeyspace>,
}

/// One column family's snapshot: taken (`snapshot`) or found on disk (`list_snapshots`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapshotCf {
    pub keyspace: String,
    /// The column family's name (`snapshot`), or its directory's (`<cf>-<id>`, `list_snapshots`:
    /// a dropped column family's snapshots are there too).
    pub column_family: String,
    pub tag: String,
    /// Hard links (SSTable components, its indexes' included) and their bytes.
    pub files: u64,
    pub bytes: u64,
    /// Its directory in each data directory holding part of it, joined by ", ".
    pub directory: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapshotResult {
    pub tag: String,
    pub column_families: Vec<SnapshotCf>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClearSnapshotResult {
    /// The snapshot directories removed.
    pub removed: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ListSnapshotsResult {
    pub snapshots: Vec<SnapshotCf>,
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
pub struct RebuildIndexResult {
    /// `keyspace.cf`.
    pub column_family: String,
    /// The indexes emptied and being built again (`index_status` follows them).
    pub rebuilt: Vec<String>,
}

/// One running compaction, cleanup or scrub.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActiveCompaction {
    /// `Compaction`, `Cleanup` or `Scrub`.
    pub kind: String,
    pub keyspace: String,
    pub column_family: String,
    /// Bytes of partitions (uncompressed) processed, out of the inputs' total.
    pub bytes_done: u64,
    pub bytes_total: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompactionStatsResult {
    /// Compactions due: size tiers holding at least the minimum threshold of SSTables.
    pub pending_tasks: u64,
    pub compactions: Vec<ActiveCompaction>,
    /// The write rate limit they run under, in MB/s (0: unthrottled).
    pub throughput_mb_per_sec: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StreamThroughputResult {
    pub megabits_per_sec: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompactionThroughputResult {
    pub mb_per_sec: u32,
}

/// What `disable_auto_compaction` or `enable_auto_compaction` did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutoCompactionResult {
    /// Background compaction is now on (enable) or off (disable) for every column family below.
    pub enabled: bool,
    /// `keyspace.cf` of each column family named (its secondary indexes with it).
    pub column_families: Vec<String>,
    /// Those this request changed; the others already were as asked.
    pub changed: Vec<String>,
}

/// The compaction thresholds of one column family, as they apply now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionThresholdResult {
    pub keyspace: String,
    pub column_family: String,
    /// SSTables a background compaction merges at least and at most; 0 in either: background
    /// compaction is off.
    pub min: i32,
    pub max: i32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GetSsTablesResult {
    /// The Data files (paths on the node) of the SSTables holding the key, in no order that
    /// means anything.
    pub files: Vec<String>,
}

/// What `stop` stopped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StopResult {
    /// The type asked for, as Cassandra names it (`COMPACTION`, ...).
    pub compaction_type: String,
    /// The operations asked to give up, as they were then.
    pub stopped: Vec<ActiveCompaction>,
}

/// What scrub found in one column family.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScrubCf {
    /// `keyspace.cf`.
    pub name: String,
    /// SSTables read through, and those replaced because they held damaged partitions.
    pub checked: u64,
    pub rewritten: u64,
    /// Partitions read back whole.
    pub partitions: u64,
    /// Partitions left out (their data could not be read): how many, and their keys (UTF-8,
    /// lossy), at most [`SCRUB_KEYS_LISTED`] of them.
    pub lost: u64,
    pub lost_keys: Vec<String>,
}

/// The most lost keys a [`ScrubCf`] lists.
pub const SCRUB_KEYS_LISTED: usize = 100;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScrubResult {
    pub column_families: Vec<ScrubCf>,
}

/// What an import loaded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportResult {
    pub keyspace: String,
    pub column_family: String,
    /// The new Data files in the column family's directory, one per SSTable loaded.
    pub files: Vec<String>,
    pub partitions: u64,
    pub bytes: u64,
}

/// What repair did to one column family.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepairCf {
    /// `keyspace.cf`.
    pub name: String,
    /// Ranges compared (ranges with one replica need no repair and are not counted).
    pub ranges: u64,
    /// Partitions found on any replica of those ranges.
    pub partitions: u64,
    /// Partition versions written to replicas that were behind.
    pub writes: u64,
    /// Sub-ranges (64 per range) whose replicas' digests differed: only those were compared
    /// partition by partition.
    #[serde(default)]
    pub mismatched: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepairResult {
    pub column_families: Vec<RepairCf>,
}

/// What removenode restored before the dead node was dropped from the ring.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RemoveNodeResult {
    /// The removed node's address.
    pub removed: String,
    /// (keyspace, range, new replica) transfers made.
    pub transfers: u64,
    /// Partitions written to the new replicas.
    pub partitions: u64,
    /// Ranges whose only replica was the removed node: their data is gone.
    pub lost_ranges: u64,
}

/// What a move (or loadbalance) did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MoveResult {
    /// The token the node left and the one it holds now.
    pub from_token: String,
    pub token: String,
    /// (keyspace, range, new replica) transfers made, and the partitions they carried.
    pub transfers: u64,
    pub partitions: u64,
    /// What to do next.
    pub effect: String,
}

/// What a decommission handed over before the node left the ring.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecommissionResult {
    /// (keyspace, range, new replica) transfers made.
    pub transfers: u64,
    /// Partitions sent.
    pub partitions: u64,
    /// Hints replayed to their replicas, and hints handed to another node to keep.
    #[serde(default)]
    pub hints_delivered: u64,
    #[serde(default)]
    pub hints_handed_over: u64,
    /// What the node does now.
    pub effect: String,
}

/// Whether one of the node's services (Thrift, gossip) runs: the answer to the requests that
/// stop, start and query it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceStatus {
    pub running: bool,
    /// This request stopped or started it; false when it already was as asked, and for the
    /// status requests.
    pub changed: bool,
}

/// Hinted handoff on this node: the answer to the requests that turn it and its delivery on
/// and off, and query them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandoffStatus {
    /// Writes keep hints for replicas that are down.
    pub enabled: bool,
    /// Hints kept are not replayed to replicas that came back.
    pub paused: bool,
    /// This request changed one of them; false when it already was as asked, and for the
    /// status request.
    pub changed: bool,
}

/// What `truncate_hints` deleted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TruncateHintsResult {
    /// The replicas whose hints were deleted (`ip:port`), with how many each had.
    pub deleted: Vec<(String, u64)>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DrainResult {
    /// The node had been drained before this request.
    pub already_drained: bool,
    pub flushed: Vec<String>,
    /// What clients see now.
    pub effect: String,
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

    fn parse(s: &str) -> Result<Request, RequestError> {
        parse_request(s.as_bytes())
    }

    #[test]
    fn every_request_round_trips_through_its_line() {
        let all = vec![
            Request::Ring,
            Request::Info,
            Request::DescribeCluster,
            Request::CfStats { keyspace: Some("Keyspace1".into()), cf: None },
            Request::TpStats,
            Request::IndexStatus { keyspace: None },
            Request::IndexStatus { keyspace: Some("ks".into()) },
            Request::Flush { keyspace: Some("ks".into()), cfs: vec!["a".into(), "b".into()] },
            Request::Compact { keyspace: None, cfs: vec![] },
            Request::Cleanup { keyspace: None },
            Request::Drain,
            Request::NetStats,
            Request::GetEndpoints { keyspace: "ks".into(), cf: "cf".into(), key: "k\n\"ey".into() },
            Request::Version,
            Request::Move { token: "42".into() },
            Request::Decommission,
            Request::RemoveNode { node: "x".into() },
            Request::LoadBalance,
            Request::Repair { keyspace: None, cfs: Vec::new(), primary_range: false },
            Request::Join,
            Request::Snapshot { keyspaces: vec!["ks".into()], tag: Some("t".into()) },
            Request::ClearSnapshot { keyspaces: Vec::new(), tag: None },
            Request::ListSnapshots,
            Request::Import { keyspace: "ks".into(), cf: "cf".into(), directory: "/backup".into() },
            Request::Scrub { keyspace: Some("ks".into()), cfs: vec!["cf".into()] },
            Request::CompactionStats,
            Request::RebuildIndex { keyspace: "ks".into(), cf: "cf".into(), indexes: vec![] },
            Request::GossipInfo,
            Request::DescribeRing { keyspace: "ks".into() },
            Request::GetStreamThroughput,
            Request::SetStreamThroughput { megabits_per_sec: 400 },
            Request::GetCompactionThroughput,
            Request::SetCompactionThroughput { mb_per_sec: 64 },
            Request::DisableAutoCompaction { keyspace: None, cfs: vec![] },
            Request::EnableAutoCompaction { keyspace: Some("ks".into()), cfs: vec!["cf".into()] },
            Request::GetCompactionThreshold { keyspace: "ks".into(), cf: "cf".into() },
            Request::SetCompactionThreshold { keyspace: "ks".into(), cf: "cf".into(), min: -1, max: 32 },
            Request::GetSsTables { keyspace: "ks".into(), cf: "cf".into(), key: "6b6579".into(), hex_format: true },
            Request::Stop { compaction_type: "COMPACTION".into() },
            Request::DisableThrift,
            Request::EnableThrift,
            Request::StatusThrift,
            Request::DisableGossip,
            Request::EnableGossip,
            Request::StatusGossip,
            Request::DisableHandoff,
            Request::EnableHandoff,
            Request::StatusHandoff,
            Request::PauseHandoff,
            Request::ResumeHandoff,
            Request::TruncateHints { endpoint: None },
            Request::TruncateHints { endpoint: Some("127.0.0.2".into()) },
        ];
        for r in all {
            let line = r.encode_line().expect("encodes");
            assert!(line.ends_with('\n'));
            assert_eq!(line.matches('\n').count(), 1, "one line: {line:?}");
            assert!(line.contains(&format!(r#""op":"{}""#, r.op())), "{line}");
            assert!(line.contains(r#""v":1"#), "{line}");
            assert_eq!(parse(line.trim_end()).expect("parses"), r);
        }
    }

    #[test]
    fn documented_request_lines_parse() {
        assert_eq!(
            parse(r#"{"op":"flush","keyspace":"ks","cfs":["cf"]}"#),
            Ok(Request::Flush { keyspace: Some("ks".into()), cfs: vec!["cf".into()] })
        );
        assert_eq!(parse(r#"{"op":"flush"}"#), Ok(Request::Flush { keyspace: None, cfs: vec![] }));
        assert_eq!(parse(r#"{"op":"flush","keyspace":null}"#), Ok(Request::Flush { keyspace: None, cfs: vec![] }));
        assert_eq!(parse("{\"op\":\"ring\",\"v\":1}\r"), Ok(Request::Ring));
        assert_eq!(parse(r#"  {"op":"drain"}  "#), Ok(Request::Drain));
        assert_eq!(parse(r#"{"op":"disable_thrift"}"#), Ok(Request::DisableThrift));
        assert_eq!(parse(r#"{"op":"enable_gossip","v":1}"#), Ok(Request::EnableGossip));
        assert_eq!(parse(r#"{"op":"truncate_hints"}"#), Ok(Request::TruncateHints { endpoint: None }));
        assert_eq!(
            parse(r#"{"op":"truncate_hints","endpoint":"10.0.0.2"}"#),
            Ok(Request::TruncateHints { endpoint: Some("10.0.0.2".into()) })
        );
        assert!(matches!(parse(r#"{"op":"status_gossip","now":true}"#), Err(RequestError::Invalid(_))));
        assert_eq!(
            parse(r#"{"op":"get_sstables","keyspace":"ks","cf":"cf","key":"k"}"#),
            Ok(Request::GetSsTables { keyspace: "ks".into(), cf: "cf".into(), key: "k".into(), hex_format: false })
        );
        assert_eq!(
            parse(r#"{"op":"disable_auto_compaction","keyspace":"ks"}"#),
            Ok(Request::DisableAutoCompaction { keyspace: Some("ks".into()), cfs: vec![] })
        );
        assert_eq!(
            parse(r#"{"op":"stop","compaction_type":"SCRUB"}"#),
            Ok(Request::Stop { compaction_type: "SCRUB".into() })
        );
        assert!(matches!(parse(r#"{"op":"stop"}"#), Err(RequestError::Invalid(m)) if m.contains("compaction_type")));
    }

    #[test]
    fn malformed_lines_are_typed_errors() {
        assert_eq!(parse_request(&[0xff, 0xfe]), Err(RequestError::NotUtf8));
        assert_eq!(parse(""), Err(RequestError::Empty));
        assert_eq!(parse("   "), Err(RequestError::Empty));
        assert!(matches!(parse("{\"op\":"), Err(RequestError::NotJson(_))));
        assert!(matches!(parse("flush"), Err(RequestError::NotJson(_))));
        assert!(matches!(parse("[1,2]"), Err(RequestError::NotJson(_))));
        assert!(matches!(parse("\"ring\""), Err(RequestError::NotJson(_))));
        assert_eq!(parse(r#"{"keyspace":"ks"}"#), Err(RequestError::MissingOp));
        assert!(matches!(parse(r#"{"op":"explode"}"#), Err(RequestError::Invalid(m)) if m.contains("explode")));
        assert!(matches!(parse(r#"{"op":7}"#), Err(RequestError::Invalid(_))));
        // Fields are checked: unknown ones, wrong types, missing required ones.
        assert!(
            matches!(parse(r#"{"op":"flush","keyspcae":"ks"}"#), Err(RequestError::Invalid(m)) if m.contains("keyspcae"))
        );
        assert!(matches!(parse(r#"{"op":"flush","cfs":"cf"}"#), Err(RequestError::Invalid(_))));
        assert!(
            matches!(parse(r#"{"op":"get_endpoints","keyspace":"ks","cf":"cf"}"#), Err(RequestError::Invalid(m)) if m.contains("key"))
        );
        assert!(matches!(parse(r#"{"op":"ring","extra":1}"#), Err(RequestError::Invalid(_))));
    }

    #[test]
    fn other_protocol_versions_are_refused() {
        let e = parse(r#"{"op":"ring","v":2}"#).expect_err("v2 refused");
        assert_eq!(e, RequestError::UnsupportedVersion { got: "2".into() });
        assert_eq!(e.kind(), ErrorKind::UnsupportedVersion);
        assert!(matches!(parse(r#"{"op":"ring","v":"1"}"#), Err(RequestError::UnsupportedVersion { .. })));
        assert_eq!(parse(r#"{"op":"ring"}"#).map_err(|e| e.kind()), Ok(Request::Ring));
        assert_eq!(RequestError::MissingOp.kind(), ErrorKind::BadRequest);
    }

    #[test]
    fn reply_lines_have_the_documented_shape() {
        let p = Reply::Progress(Progress { done: 3, total: 10, what: "flushing Keyspace1.Standard1".into() });
        assert_eq!(
            p.encode_line(),
            "{\"progress\":{\"done\":3,\"total\":10,\"what\":\"flushing Keyspace1.Standard1\"}}\n"
        );
        let e = Reply::error(ErrorKind::UnknownKeyspace, "keyspace Nope does not exist");
        assert_eq!(
            e.encode_line(),
            "{\"error\":{\"kind\":\"unknown_keyspace\",\"message\":\"keyspace Nope does not exist\"}}\n"
        );
        let ok = Reply::Ok(serde_json::json!({"token":"5"}));
        assert_eq!(ok.encode_line(), "{\"ok\":{\"token\":\"5\"}}\n");
        for r in [p, e, ok] {
            let line = r.encode_line();
            assert_eq!(Reply::decode_line(line.trim_end().as_bytes()), Ok(r));
        }
    }

    #[test]
    fn malformed_reply_lines_are_errors() {
        for bad in
            [&b""[..], b"{}", b"{\"ok\":1,\"error\":2}", b"{\"progress\":{\"done\":1}}", b"\xff", b"{\"nope\":1}"]
        {
            assert!(
                matches!(Reply::decode_line(bad), Err(ProtocolError::BadReply(_))),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

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
