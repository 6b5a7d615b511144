//! Sibyl's membership layer: who is in the cluster, where each node sits, which nodes hold which
//! tokens and replicas, and which are alive (Cassandra's `gms` and `locator`).
//!
//! - [`gossip`]: the gossip state machine (heartbeats, application states, SYN/ACK/ACK2), pure
//!   and synchronous; the caller sends what it returns.
//! - failure detection (private `failure_detector`): phi-accrual up/down verdicts from the rhythm
//!   of heartbeats, read through [`Membership`].
//! - [`locator`]: the token ring ([`locator::token_metadata`]), snitches ([`locator::snitch`]) and
//!   replication strategies with their replica maps ([`locator::replication`]).
//! - [`Membership`]: the one view of all that the coordinator and the admin interface read.
//! - [`properties`]: the Java `.properties` parser the snitch files (and the server's
//!   SimpleAuthenticator) are read with.
//!
//! It speaks the data model (`model::dht` tokens and partitioners, `model::schema` keyspaces)
//! and nothing else of ours: it must not depend on the storage engine, on messaging (gossip
//! messages are encoded here and sent by the caller) or on the coordinator.
#![deny(clippy::unwrap_used)]

/// A node as the cluster knows it: its listen address and storage (internode) port. The same
/// type as `messaging::Endpoint` and `cluster::Endpoint`.
pub type Endpoint = std::net::SocketAddr;

mod failure_detector;
pub mod gossip;
pub mod locator;
pub mod properties;
mod view;

pub use view::{LocalInfo, Membership, NodeEvent, NodeListener, PeerInfo};
