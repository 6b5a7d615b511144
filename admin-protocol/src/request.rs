//! Requests: [`Request`], one JSON object on one line with the operation in `"op"`, and
//! [`parse_request`], which reads such a line and refuses what it does not understand with a
//! [`RequestError`]; with the protocol version and the longest request line.

use serde::{Deserialize, Serialize};

use crate::reply::{ErrorKind, ProtocolError};
// The results the requests' documentation links to; only rustdoc needs them in scope.
#[cfg(doc)]
use crate::{
    AutoCompactionResult, CompactionStatsResult, CompactionThresholdResult, CompactionThroughputResult,
    DescribeRingResult, GetSsTablesResult, GossipInfoResult, HandoffStatus, ImportResult, MoveResult,
    RebuildIndexResult, ScrubResult, ServiceStatus, StopResult, StreamThroughputResult, TruncateHintsResult,
};

/// The protocol version this build speaks. A request may carry `"v"`; absent means 1.
pub const PROTOCOL_VERSION: u64 = 1;

/// Longest request line the server reads, newline excluded. A longer line is read to its end and
/// dropped, and gets an error reply.
pub const MAX_REQUEST_LINE: usize = 1 << 20;

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
    /// Stops serving the native protocol (CQL): the listening socket and every client
    /// connection are closed (Cassandra's `nodetool disablebinary`); answered with a
    /// [`ServiceStatus`].
    DisableBinary,
    /// Listens for native protocol clients again on NativeTransportAddress:NativeTransportPort;
    /// answered with a [`ServiceStatus`].
    EnableBinary,
    /// Whether the native protocol is served; answered with a [`ServiceStatus`].
    StatusBinary,
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
            Request::DisableBinary => "disable_binary",
            Request::EnableBinary => "enable_binary",
            Request::StatusBinary => "status_binary",
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
            Request::DisableBinary,
            Request::EnableBinary,
            Request::StatusBinary,
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
}
