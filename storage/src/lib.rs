//! Sibyl's single-node storage engine.
//!
//! It stores the data model (crate `model`: marshal types, tokens, cells and rows, schema,
//! filters, mutations) on one machine: keyspaces of column families, rows of timestamped columns
//! sorted by a comparator, tombstones and TTLs, written through a commit log into memtables that
//! flush to immutable SSTables, merged by compaction. It knows nothing of the network.
//!
//! Main types: [`engine::Storage`] (the engine, its API grouped by concern),
//! [`index::IndexExpression`] (what an index query wants) and [`StorageError`]. The data
//! model's modules are re-exported under their old names (`storage::data`, `storage::schema`,
//! ...) for the engine's own code (`crate::data`) and the native front end, which still names
//! them so; every other caller names `model` directly.
//! The modules behind the engine (`commitlog`, `memtable`, `sstable`, `block_cache`, `system`)
//! are public for the engine's own tests, tools and benchmarks; servers never reach into them.
#![deny(clippy::unwrap_used)]

// The data model lives in its own crate (`model`); these names keep `storage::data` and the
// engine's own `crate::data` paths meaning what they always meant.
pub use model::{comparator, counter, data, dht, filter, marshal, mutation, schema, schema_rules};

#[doc(hidden)]
pub mod block_cache;
pub(crate) mod cfs;
#[doc(hidden)]
pub mod commitlog;
pub(crate) mod compaction;
mod directories;
pub mod engine;
mod error;
pub mod index;
#[doc(hidden)]
pub mod memtable;
#[doc(hidden)]
pub mod sstable;
#[doc(hidden)]
pub mod system;

// What the coordinator, the daemon and the admin interface use of the system keyspace: types and
// rules, not its tables, which they reach only through `engine::Storage`'s methods.
pub use system::derived::AuthUser;
pub use system::paxos::{ballot_micros, ballot_order, PaxosRecord, StoredCommit};
pub use system::traces::{TraceEvent, TraceSession};
pub use system::{is_builtin_keyspace, PeerInfo};

pub use compaction::{CleanupSummary, CompactionInfo, ScrubSummary};
pub use error::{Result, StorageError};
