//! Sibyl's cluster layer: token ring, replication, gossip, failure detection and the coordinator.
//!
//! Not built yet: a single node serves every token. The crate exists so the dependency direction
//! `server → cluster → storage` is fixed from the start.
