//! The coordinator: the one door to data for every front end (Cassandra's StorageProxy).
//!
//! A front end converts and validates a client's request into the engine's own types
//! ([`RowMutation`], [`ReadCommand`], [`RangeCommand`], ...) with a [`ConsistencyLevel`], and
//! awaits the coordinator's answer: the engine's result types, or a typed
//! [`CoordinatorError`] (Unavailable, Timeout, Invalid, or an engine error).
//!
//! Where the work runs: the coordinator is called from event loops, which must never block. Work
//! that is short and cannot block (a point read of a few rows and columns, a write while
//! [`Storage::writes_may_block`] is false) runs on the caller's thread, as Redis runs its
//! commands; everything else runs on the request [`Executor`]. A write's acknowledgement waits
//! for its commit log record to be in a file ([`storage::engine::Durable`]) without blocking the
//! loop, so a loop's writes of one pass share one write(2).
//!
//! Today every token is local: one node, the replicas of every key are this node alone.

mod range;
mod read;
mod ring;
mod schema;
mod write;

use std::sync::Arc;
use std::time::Duration;

use storage::dht::{KeyBound, Partitioner, Token};
use storage::engine::Storage;
use storage::filter::ReadFilter;
use storage::schema::{CfMetadata, KeyspaceDef};
use storage::StorageError;

use crate::consistency::ConsistencyLevel;
use crate::executor::Executor;

pub use ring::{RingEndpoint, RingRange};

/// Why a request failed, in the terms a client sees.
#[derive(Debug, thiserror::Error)]
pub enum CoordinatorError {
    /// Too few replicas are alive for the consistency level; nothing was sent.
    #[error("cannot achieve consistency level {cl}: {required} replica(s) required, {alive} alive")]
    Unavailable { cl: ConsistencyLevel, required: usize, alive: usize },
    /// Too few replicas answered in time; a write may still have been applied by some.
    #[error("{operation} timed out after {waited:?}: {received} of {required} replica(s) answered")]
    Timeout { operation: &'static str, waited: Duration, received: usize, required: usize },
    /// The request itself is wrong (names the problem).
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

pub type Result<T, E = CoordinatorError> = std::result::Result<T, E>;

/// A point read: the cells of one partition that `filter` selects.
#[derive(Clone, Debug)]
pub struct ReadCommand {
    pub keyspace: String,
    pub cf: String,
    pub key: Vec<u8>,
    pub filter: ReadFilter,
}

/// A scan of partitions in token order: `pieces` are non-wrapping bounds scanned in turn (a
/// wrapping range arrives as its two halves), at most `max_rows` partitions over all of them.
#[derive(Clone, Debug)]
pub struct RangeCommand {
    pub keyspace: String,
    pub cf: String,
    pub pieces: Vec<(KeyBound, KeyBound)>,
    pub filter: ReadFilter,
    pub max_rows: usize,
}

/// A scan that pages through columns rather than rows (Thrift's get_paged_slice): every
/// column of each partition in turn, starting at `start_column` in the first partition (when
/// it is the range's start key), until `max_columns` columns are collected.
#[derive(Clone, Debug)]
pub struct PagedRangeCommand {
    pub keyspace: String,
    pub cf: String,
    pub pieces: Vec<(KeyBound, KeyBound)>,
    /// The range's start key and the column to start at within it.
    pub start: Option<(Vec<u8>, Vec<u8>)>,
    pub max_columns: usize,
}

/// What the coordinator reports about this node and its cluster.
#[derive(Clone, Debug)]
pub struct LocalNode {
    pub cluster_name: String,
    /// The address other nodes know this node by (ListenAddress).
    pub listen_address: String,
    /// The address Thrift clients connect to (ThriftAddress).
    pub rpc_address: String,
    pub token: Token,
    pub datacenter: String,
    pub rack: String,
    /// The snitch's full class name.
    pub snitch: String,
}

/// Point reads of at most this many keys and columns run on the caller's thread; bigger ones
/// (say a count of a million to fetch "all" columns of a wide row) run on the executor.
const INLINE_MAX_KEYS: usize = 16;
const INLINE_MAX_COLUMNS: usize = 1000;

pub struct Coordinator {
    storage: Storage,
    executor: Executor,
    node: LocalNode,
}

impl Coordinator {
    /// A coordinator for a single node owning every token.
    pub fn single_node(storage: Storage, node: LocalNode) -> std::io::Result<Arc<Coordinator>> {
        let executor = Executor::for_this_machine("sibyl-exec")?;
        Ok(Arc::new(Coordinator { storage, executor, node }))
    }

    pub fn partitioner(&self) -> Partitioner {
        self.storage.partitioner()
    }

    pub fn local_node(&self) -> &LocalNode {
        &self.node
    }

    pub fn cluster_name(&self) -> &str {
        &self.node.cluster_name
    }

    pub fn snitch_name(&self) -> &str {
        &self.node.snitch
    }

    /// A column family's definition with its comparator and validators, for front ends to
    /// validate and convert requests.
    pub fn cf_metadata(&self, keyspace: &str, cf: &str) -> Result<Arc<CfMetadata>> {
        Ok(self.storage.cf_metadata(keyspace, cf)?)
    }

    pub fn keyspace(&self, name: &str) -> Option<KeyspaceDef> {
        self.storage.keyspace(name)
    }

    pub fn has_keyspace(&self, name: &str) -> bool {
        self.storage.has_keyspace(name)
    }

    /// Every keyspace, the system keyspace included.
    pub fn keyspaces(&self) -> Vec<KeyspaceDef> {
        self.storage.schema().keyspaces.into_values().collect()
    }

    /// Runs blocking engine work on the executor.
    async fn blocking<T, F>(&self, f: F) -> Result<T>
    where
        F: FnOnce(&Storage) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        let storage = self.storage.clone();
        self.executor
            .run(move || f(&storage))
            .await
            .map_err(|_| CoordinatorError::Storage(StorageError::ShuttingDown))?
    }

    /// Checks that `cl` can be met for `keyspace`, before anything is sent or applied.
    fn check_available(&self, keyspace: &str, cl: ConsistencyLevel) -> Result<()> {
        let rf = self
            .storage
            .with_keyspace(keyspace, replication_factor)
            .ok_or_else(|| CoordinatorError::Invalid(format!("Keyspace '{keyspace}' does not exist")))?;
        // One node: it is alive and holds every replica there is (none when rf is 0).
        let alive = rf.min(1);
        let required = cl.block_for(rf, rf);
        if required > alive {
            return Err(CoordinatorError::Unavailable { cl, required, alive });
        }
        Ok(())
    }
}

/// The replication factor a keyspace asks for in total (every data centre's, for
/// NetworkTopologyStrategy).
pub fn replication_factor(ks: &KeyspaceDef) -> usize {
    if ks.strategy_class.ends_with("NetworkTopologyStrategy")
        && !ks.strategy_class.ends_with("OldNetworkTopologyStrategy")
    {
        ks.strategy_options.values().filter_map(|v| v.parse::<usize>().ok()).sum()
    } else {
        ks.strategy_options.get("replication_factor").and_then(|v| v.parse().ok()).unwrap_or(1)
    }
}
