//! Sibyl's cluster layer: the coordinator (the one door to data, Cassandra's `service`) and what
//! runs on replicas for it: reads and writes served for other nodes, hints, Paxos, repair,
//! streaming, schema agreement, joining and leaving the ring.
//!
//! Requests flow one way: a front end (Thrift today) calls the coordinator with the engine's own
//! request types and a consistency level; the coordinator decides which replicas hold the data
//! and talks to the local engine (`storage`) or, through messaging, to other nodes.
//!
//! It stands on three crates below it and on nothing above (no front end, no server):
//! `messaging` (internode messaging), `membership` (gossip, failure detection, snitches, the
//! token ring, replication) and `storage` (the local engine).
//!
//! Main types: [`Coordinator`] (with its request and outcome types in [`coordinator`]),
//! [`ConsistencyLevel`], [`StorageService`] (gossip and the node's announced state),
//! [`Executor`] (the request pool) and the join checks ([`check_new_tokens`], [`wait_to_settle`]).
#![deny(clippy::unwrap_used)]

/// A node as the cluster knows it: its listen address and storage (internode) port. Cassandra
/// identified nodes by address alone; carrying the port lets several nodes share one address in
/// tests, while real deployments give each node its own address (127.0.0.1, .2, .3 locally).
/// The same type as [`messaging::Endpoint`] and [`membership::Endpoint`].
pub type Endpoint = std::net::SocketAddr;

// The modules a front end names by path (`cluster::coordinator::ReadCommand`,
// `cluster::consistency::ConsistencyLevel`, `cluster::trace::traced`); each shows its own small face.
pub mod consistency;
pub mod coordinator;
pub mod trace;

mod executor;
mod hints;
mod join;
mod messages;
mod paxos;
mod replica;
mod schema_sync;
mod storage_service;
mod turn;

pub use consistency::ConsistencyLevel;
pub use coordinator::{Coordinator, CoordinatorError, LocalNode, Settings};
pub use executor::Executor;
pub use join::{check_held_tokens, check_new_tokens, wait_to_settle, SettleWait, TokenConflict};
pub use storage_service::{Announcement, StorageService};
pub use turn::yield_to_ready_tasks;

// The native front end still names these layers through this crate (`cluster::membership::..`,
// `cluster::snitch::SimpleSnitch`); other callers depend on `membership` itself.
pub use ::membership;
pub use membership::locator::snitch;
