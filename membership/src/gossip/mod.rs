//! Gossip: how nodes learn about each other (Cassandra's `org.apache.cassandra.gms`).
//!
//! Every [`GOSSIP_INTERVAL`] a node bumps its heartbeat and sends a SYN (a digest of every endpoint
//! it knows: generation and highest version) to a random live peer, sometimes to an unreachable
//! one and sometimes to a seed. The receiver answers with an ACK holding the states the sender
//! lacks and the digests it wants; the sender finishes with an ACK2 holding those. Each node's
//! heartbeat and application states (status, tokens, schema version, DC, rack, RPC address...)
//! carry versions from one per-node counter, so "newer" is a number comparison, and a node's
//! generation (set at start-up) tells a restart from a long silence. The phi-accrual
//! [`FailureDetector`](crate::failure_detector::FailureDetector) turns the rhythm of heartbeats
//! into up/down verdicts.
//!
//! [`Gossiper`] is a pure, synchronous state machine: the caller ticks it every
//! [`GOSSIP_INTERVAL`], hands it every gossip message received, and sends the messages it returns
//! (encoded with [`GossipMessage::encode`]) over messaging; every call takes the current
//! `Instant`, so tests drive it with a fake clock. What changed comes back as [`GossipEvent`]s.

mod gossiper;
mod messages;
mod state;
#[cfg(test)]
mod tests;

use std::time::Duration;

pub use gossiper::{GossipConfig, GossipEvent, Gossiper, Outgoing};
pub use messages::{DecodeError, GossipDigest, GossipFormat, GossipMessage, RemoteState};
pub use state::{ApplicationState, EndpointState, HeartBeatState, Status, StatusError, VersionedValue};

/// How often a node gossips (Cassandra's `Gossiper.intervalInMillis`).
pub const GOSSIP_INTERVAL: Duration = Duration::from_secs(1);

/// How long a removed endpoint's gossip is ignored, so peers that have not heard of the removal
/// cannot bring it back: twice Cassandra's `RING_DELAY` of 30 s (`Gossiper.QUARANTINE_DELAY`).
pub const QUARANTINE_DELAY: Duration = Duration::from_secs(60);

/// How long peers keep a LEFT or removed node before forgetting it: Cassandra's
/// `Gossiper.aVeryLongTime`, three days, long enough for every node to have heard of the departure.
pub const LEFT_EXPIRY: Duration = Duration::from_secs(3 * 24 * 3600);

/// A generation this far (in seconds) beyond ours is taken for corruption and ignored
/// (Cassandra's `Gossiper.MAX_GENERATION_DIFFERENCE`, one year); generations are seconds since the
/// Unix epoch.
pub const MAX_GENERATION_DIFFERENCE: i64 = 86_400 * 365;

/// The least time between two reachability checks of one endpoint. Cassandra sends an ECHO
/// before marking a node alive on second-hand news; we send a SYN instead (its ACK proves the
/// round trip) and send it at most this often.
pub const ECHO_INTERVAL: Duration = GOSSIP_INTERVAL;
