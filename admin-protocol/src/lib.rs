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

mod maintenance;
mod reply;
mod request;
mod statistics;
mod toggles;
mod topology;

pub use maintenance::{
    ActiveCompaction, CfWork, CleanupKeyspace, CleanupResult, ClearSnapshotResult, CompactionStatsResult,
    CompactionThresholdResult, CompactionThroughputResult, DrainResult, GetSsTablesResult, ImportResult,
    ListSnapshotsResult, RebuildIndexResult, RepairCf, RepairResult, ScrubCf, ScrubResult, SnapshotCf, SnapshotResult,
    StopResult, StreamThroughputResult, WorkResult, SCRUB_KEYS_LISTED,
};
pub use reply::{ErrorKind, ErrorReply, Progress, ProtocolError, Reply, MAX_REPLY_LINE};
pub use request::{parse_request, Request, RequestError, MAX_REQUEST_LINE, PROTOCOL_VERSION};
pub use statistics::{
    CfStats, CfStatsResult, DescribeClusterResult, DescribeRingResult, EndpointDetails, GetEndpointsResult,
    GossipEndpoint, GossipInfoResult, GossipState, IndexStatus, IndexStatusResult, InfoResult, KeyspaceStats,
    NetStatsResult, PoolStats, RingEntry, RingResult, TokenRangeInfo, TpStatsResult, VersionResult,
};
pub use toggles::{AutoCompactionResult, HandoffStatus, ServiceStatus, TruncateHintsResult};
pub use topology::{DecommissionResult, MoveResult, RemoveNodeResult};
