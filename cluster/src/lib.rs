//! Sibyl's cluster layer: the coordinator (the one door to data, Cassandra's `service`) and what
//! runs on replicas for it: reads and writes served for other nodes, hints, Paxos, repair,
//! streaming, schema agreement, joining and leaving the ring.
//!
//! Requests flow one way: a front end (Thrift today) calls the coordinator with the engine's own
//! request types and a consistency level; the coordinator decides which replicas hold the data
//! and talks to the local engine (`storage`) or, through messaging, to other nodes.
//!
//! It stands on three crates below it and on nothing above (no front end, no server):
//! `messaging` (internode messaging, re-exported as [`net`]), `membership` (gossip, failure
//! detection, snitches, the token ring, replication: re-exported under their old paths, as
//! [`gossip`], [`snitch`], [`token_metadata`]...) and `storage` (the local engine).
#![deny(clippy::unwrap_used)]

/// A node as the cluster knows it: its listen address and storage (internode) port. Cassandra
/// identified nodes by address alone; carrying the port lets several nodes share one address in
/// tests, while real deployments give each node its own address (127.0.0.1, .2, .3 locally).
/// The same type as [`messaging::Endpoint`] and [`membership::Endpoint`].
pub type Endpoint = std::net::SocketAddr;

pub mod consistency;
pub mod coordinator;
pub mod executor;
pub mod hints;
pub mod join;
pub mod messages;
pub mod paxos;
pub mod replica;
pub mod schema_sync;
pub mod storage_service;
pub mod trace;
pub mod turn;

// The layers below, under the paths they had when they were modules of this crate.
pub use ::membership;
pub use membership::locator::{replication, snitch, token_metadata};
pub use membership::{failure_detector, gossip, properties};
pub use messaging as net;

pub use coordinator::counter::leader as counter_leader;
pub use paxos::messages as messages_paxos;
