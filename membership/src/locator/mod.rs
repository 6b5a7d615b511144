//! Where data lives (Cassandra's `org.apache.cassandra.locator`): the token ring, where each node
//! sits, and which nodes replicate each range.
//!
//! - [`token_metadata`]: the ring: every member's tokens, and the tokens of nodes joining, leaving
//!   or moving.
//! - [`snitch`]: each node's data centre and rack.
//! - [`replication`]: the strategies, and the replica map built from a strategy, a ring and a
//!   snitch.

pub mod replication;
pub mod snitch;
pub mod token_metadata;
