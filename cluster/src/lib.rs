//! Sibyl's cluster layer: token ring, replication, snitches, internode messaging, gossip,
//! failure detection and the coordinator (Cassandra's `locator`, `gms`, `net` and `service`).
//!
//! Requests flow one way: a front end (Thrift today) calls the coordinator with the engine's own
//! request types and a consistency level; the coordinator decides which replicas hold the data
//! and talks to the local engine (`storage`) or, through messaging, to other nodes.
#![deny(clippy::unwrap_used)]

/// A node as the cluster knows it: its listen address and storage (internode) port. Cassandra
/// identified nodes by address alone; carrying the port lets several nodes share one address in
/// tests, while real deployments give each node its own address (127.0.0.1, .2, .3 locally).
pub type Endpoint = std::net::SocketAddr;

pub mod consistency;
pub mod coordinator;
pub mod counter_leader;
pub mod executor;
pub mod failure_detector;
pub mod gossip;
pub mod hints;
pub mod join;
pub mod membership;
pub mod messages;
pub mod messages_paxos;
pub mod paxos;
pub mod properties;
pub mod replica;
pub mod replication;
pub mod schema_sync;
pub mod snitch;
pub mod storage_service;
pub mod token_metadata;
pub mod trace;
pub mod turn;

// Internode messaging, a crate of its own, under the path it had as a module of this crate.
pub use messaging as net;
