//! Results of the operations that change the ring: `move` (and `load_balance`), `decommission`
//! and `remove_node`, each reporting the transfers it made.

use serde::{Deserialize, Serialize};

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
