//! What `MessagingService::stats` reports (Cassandra's per-connection pending/completed/dropped
//! counts and per-host timeouts).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::Endpoint;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetStats {
    /// Every peer this node has sent to, by its listen endpoint.
    pub peers: BTreeMap<Endpoint, PeerStats>,
    pub inbound: InboundStats,
}

/// One peer's two outbound connections and its request timeouts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerStats {
    pub small: ConnectionStats,
    pub gossip: ConnectionStats,
    /// Requests to this peer that got no reply in time.
    pub timeouts: u64,
}

impl PeerStats {
    pub fn pending(&self) -> u64 {
        self.small.pending + self.gossip.pending
    }

    pub fn completed(&self) -> u64 {
        self.small.completed + self.gossip.completed
    }

    pub fn dropped(&self) -> u64 {
        self.small.dropped + self.gossip.dropped
    }

    /// Whether either connection is open.
    pub fn connected(&self) -> bool {
        self.small.connected || self.gossip.connected
    }
}

/// One outbound connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionStats {
    /// Messages waiting in the queue.
    pub pending: u64,
    /// Messages written to the socket.
    pub completed: u64,
    /// Messages refused because the queue was full, expired in the queue, or lost with a
    /// connection that failed while writing them.
    pub dropped: u64,
    /// Whether the connection is open and its handshake accepted.
    pub connected: bool,
}

/// Connections other nodes opened to this one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InboundStats {
    /// Connections open now.
    pub open: u64,
    /// Connections accepted since start.
    pub accepted: u64,
    /// Handshakes refused: another cluster name or an unknown protocol version.
    pub refused: u64,
    /// Connections closed for malformed bytes: bad magic, checksum, length, truncation, a bad
    /// or missing handshake.
    pub malformed: u64,
}

#[derive(Debug, Default)]
pub(crate) struct InboundCounters {
    pub open: AtomicU64,
    pub accepted: AtomicU64,
    pub refused: AtomicU64,
    pub malformed: AtomicU64,
}

impl InboundCounters {
    pub fn snapshot(&self) -> InboundStats {
        InboundStats {
            open: self.open.load(Ordering::Relaxed),
            accepted: self.accepted.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            malformed: self.malformed.load(Ordering::Relaxed),
        }
    }
}
