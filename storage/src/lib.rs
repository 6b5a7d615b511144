//! Sibyl's single-node storage engine.
//!
//! It keeps Cassandra's data model and rules on one machine: keyspaces of column families, rows
//! of timestamped columns sorted by a comparator, tombstones and TTLs, written through a commit
//! log into memtables that flush to immutable SSTables, merged by compaction. It knows nothing of
//! the network.
//!
//! Main types: [`marshal::AbstractType`] (comparators and validators), [`dht::Partitioner`]
//! (row order), [`data::Cell`] and [`data::Row`] (what is stored), [`counter`] (counter
//! contexts: how a counter's value is kept per node), [`schema`] (definitions),
//! [`mutation::RowMutation`] (a write), [`filter::ReadFilter`] (what a read wants),
//! [`index::IndexExpression`] (what an index query wants) and [`engine::Storage`] (the engine).
//!
//! What other crates use: the data types (`data`, `mutation`, `filter`, `index`, `schema`,
//! `marshal`, `comparator`, `dht`, `error`) and the engine's API (`engine::Storage`, grouped by concern).
//! The modules behind it (`commitlog`, `memtable`, `sstable`, `block_cache`, `system`) are
//! public for the engine's own tests, tools and benchmarks; servers never reach into them.
#![deny(clippy::unwrap_used)]

pub mod block_cache;
pub(crate) mod cfs;
pub mod commitlog;
pub(crate) mod compaction;
pub mod comparator;
pub mod counter;
pub mod data;
pub mod dht;
pub mod directories;
pub mod engine;
pub mod error;
pub mod filter;
pub mod index;
pub mod marshal;
pub mod memtable;
pub mod mutation;
pub mod schema;
pub mod schema_rules;
pub mod sstable;
pub mod system;

pub use compaction::{CleanupSummary, CompactionInfo, CompactionOptions, ScrubSummary};
pub use error::{Result, StorageError};
