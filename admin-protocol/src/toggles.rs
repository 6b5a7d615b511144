//! Results of the requests that stop, start and query a node's services while it runs: Thrift,
//! gossip, hinted handoff (and `truncate_hints`) and background compaction.

use serde::{Deserialize, Serialize};

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
