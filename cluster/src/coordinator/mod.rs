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
//! Replicas come from the keyspace's replication strategy over the ring ([`Membership`]); the
//! local node is served by its engine directly, the others through messaging. With a single node
//! (or a keyspace whose replicas are this node alone) no message is ever sent.

mod bootstrap;
mod cas;
pub(crate) mod counter;
mod drain;
mod index;
mod leave;
mod moving;
mod operation;
mod placements;
mod plan;
mod range;
mod read;
mod repair;
mod ring;
mod ring_change;
mod schema;
mod stream_throttle;
mod write;

pub use stream_throttle::StreamThrottle;

#[cfg(test)]
mod tests;

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use model::data::now_micros;
use model::dht::{KeyBound, Partitioner, Token};
use model::filter::ReadFilter;
use model::schema::{CfMetadata, KeyspaceDef};
use storage::engine::Storage;
use storage::StorageError;
use storage::{TraceEvent, TraceSession};

use crate::consistency::ConsistencyLevel;
use crate::executor::Executor;
use crate::replica::Replica;
use crate::schema_sync::SchemaSync;
use crate::Endpoint;
use membership::locator::replication::{ReplicaMap, ReplicationStrategy};
use membership::locator::snitch::SimpleSnitch;
use membership::{LocalInfo, Membership};
use messaging::{MessagingService, Timeouts};
use placements::{Placement, Placements};

pub use cas::{CasCommand, CasCondition, CasOutcome, Expected, CAS_CONTENTION_TIMEOUT};
pub use drain::{DrainError, DrainOutcome};
pub use index::IndexCommand;
pub use leave::{DecommissionOutcome, RemovalOutcome, Transfer};
pub use moving::{MoveOutcome, MoveTarget};
pub use operation::{OperationEvent, OperationMode, OperationStep};
pub use repair::SyncReport;
pub use ring::{RingEndpoint, RingRange};
pub use ring_change::{RingChangeError, StepFailure};

/// Why a request failed, in the terms a client sees.
#[derive(Debug, thiserror::Error)]
pub enum CoordinatorError {
    /// Too few replicas are alive for the consistency level; nothing was sent.
    #[error("cannot achieve consistency level {cl}: {required} replica(s) required, {alive} alive")]
    Unavailable { cl: ConsistencyLevel, required: usize, alive: usize },
    /// Too few replicas answered in time; a write may still have been applied by some.
    #[error("{operation} timed out after {waited:?}: {received} of {required} replica(s) answered")]
    Timeout { operation: &'static str, waited: Duration, received: usize, required: usize },
    /// A replica could not do its part (it answered with an error, or its queue was full).
    #[error("{operation} failed on replica {endpoint}: {reason}")]
    ReplicaFailure { operation: &'static str, endpoint: Endpoint, reason: String },
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
    /// Shared names (see [`CfMetadata::shared_names`]): a read names its column family without
    /// copying the names.
    pub keyspace: Arc<str>,
    pub cf: Arc<str>,
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

/// How a single node describes itself (a coordinator without a cluster around it).
#[derive(Clone, Debug)]
pub struct LocalNode {
    pub cluster_name: String,
    /// The node's internode endpoint (ListenAddress:StoragePort).
    pub endpoint: Endpoint,
    /// The address Thrift clients connect to (ThriftAddress).
    pub rpc_address: String,
    pub token: Token,
    /// The snitch's full class name.
    pub snitch: String,
}

/// Point reads of at most this many keys and columns run on the caller's thread; bigger ones
/// (say a count of a million to fetch "all" columns of a wide row) run on the executor.
const INLINE_MAX_KEYS: usize = 16;
const INLINE_MAX_COLUMNS: usize = 1000;

/// How long the coordinator waits for replicas, and what it does for those that are down.
#[derive(Clone, Debug)]
pub struct Settings {
    pub timeouts: Timeouts,
    /// Store hints for down replicas (HintedHandoffEnabled).
    pub hinted_handoff: bool,
    /// Replicas down longer than this get no more hints (MaxHintWindowInMs).
    pub max_hint_window: Duration,
    /// The limit on data this node streams out, in megabits per second (0: unthrottled;
    /// StreamThroughputOutboundMegabitsPerSec).
    pub stream_throughput_megabits: u32,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            timeouts: Timeouts::default(),
            hinted_handoff: true,
            max_hint_window: Duration::from_secs(3 * 3600),
            stream_throughput_megabits: 200,
        }
    }
}

pub struct Coordinator {
    storage: Storage,
    executor: Executor,
    membership: Arc<Membership>,
    /// None for a coordinator that never talks to other nodes (a single node on its own).
    messaging: Option<Arc<MessagingService>>,
    /// How this node's schema changes reach the others (None without messaging).
    schema: Option<Arc<SchemaSync>>,
    settings: Settings,
    snitch_name: String,
    /// Each keyspace's strategy and replicas, kept while the schema and the ring stay as they
    /// were.
    placements: Placements,
    local_dc: String,
    stream_throttle: StreamThrottle,
    /// Whether writes keep hints for down replicas: HintedHandoffEnabled at start, then
    /// `sibyltool disablehandoff`/`enablehandoff`.
    hinted_handoff: AtomicBool,
}

impl Coordinator {
    /// A coordinator for a single node owning every token, with no messaging.
    pub fn single_node(storage: Storage, node: LocalNode) -> std::io::Result<Arc<Coordinator>> {
        let executor = Executor::for_this_machine("sibyl-exec")?;
        let info = LocalInfo { cluster_name: node.cluster_name, rpc_address: node.rpc_address, host_id: String::new() };
        let membership = Arc::new(Membership::new(
            node.endpoint,
            info,
            storage.partitioner(),
            Arc::new(SimpleSnitch),
            vec![node.token],
        ));
        let local_dc = membership.snitch().datacenter(membership.local());
        Ok(Arc::new(Coordinator {
            storage,
            executor,
            membership,
            messaging: None,
            schema: None,
            stream_throttle: StreamThrottle::new(Settings::default().stream_throughput_megabits),
            hinted_handoff: AtomicBool::new(Settings::default().hinted_handoff),
            settings: Settings::default(),
            snitch_name: node.snitch,
            placements: Placements::new(),
            local_dc,
        }))
    }

    /// A coordinator for a node of a cluster: replicas from `membership`, remote ones reached
    /// through `messaging`, on whose runtime replica requests from other nodes are served.
    pub fn new(
        storage: Storage,
        executor: Executor,
        membership: Arc<Membership>,
        messaging: Arc<MessagingService>,
        schema: Arc<SchemaSync>,
        settings: Settings,
    ) -> Arc<Coordinator> {
        let snitch_name = membership.snitch().class_name().to_string();
        let local_dc = membership.snitch().datacenter(membership.local());
        Replica::register(storage.clone(), executor.clone(), &messaging);
        Arc::new_cyclic(|this| {
            crate::coordinator::counter::leader::CounterLeader::register(this.clone(), &messaging);
            Coordinator {
                storage,
                executor,
                membership,
                messaging: Some(messaging),
                schema: Some(schema),
                stream_throttle: StreamThrottle::new(settings.stream_throughput_megabits),
                hinted_handoff: AtomicBool::new(settings.hinted_handoff),
                settings,
                snitch_name,
                placements: Placements::new(),
                local_dc,
            }
        })
    }

    /// Whether writes keep hints for down replicas (`nodetool statushandoff`).
    pub fn hinted_handoff_enabled(&self) -> bool {
        self.hinted_handoff.load(Ordering::Relaxed)
    }

    /// Turns hint keeping on or off until the node restarts (Cassandra's
    /// `StorageProxy.setHintedHandoffEnabled`, `nodetool enablehandoff`/`disablehandoff`); hints
    /// already kept stay, and are delivered. Whether this changed it.
    pub fn set_hinted_handoff(&self, enabled: bool) -> bool {
        self.hinted_handoff.swap(enabled, Ordering::Relaxed) != enabled
    }

    pub fn partitioner(&self) -> Partitioner {
        self.storage.partitioner()
    }

    /// The limit on data this node streams out (`sibyltool get/setstreamthroughput`).
    pub fn stream_throttle(&self) -> &StreamThrottle {
        &self.stream_throttle
    }

    /// The key's token, or why the partitioner refuses the key.
    fn token_of(&self, key: &[u8]) -> Result<Token> {
        self.partitioner().try_token_for_key(key).map_err(|e| CoordinatorError::Invalid(e.to_string()))
    }

    pub fn membership(&self) -> &Arc<Membership> {
        &self.membership
    }

    pub fn messaging(&self) -> Option<&Arc<MessagingService>> {
        self.messaging.as_ref()
    }

    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    pub fn cluster_name(&self) -> &str {
        &self.membership.local_info().cluster_name
    }

    pub fn snitch_name(&self) -> &str {
        &self.snitch_name
    }

    /// A column family's definition with its comparator and validators, for front ends to
    /// validate and convert requests.
    pub fn cf_metadata(&self, keyspace: &str, cf: &str) -> Result<Arc<CfMetadata>> {
        Ok(self.storage.cf_metadata(keyspace, cf)?)
    }

    pub fn keyspace(&self, name: &str) -> Option<KeyspaceDef> {
        self.storage.keyspace(name)
    }

    /// Runs `f` on a keyspace's definition without copying it (for what every request asks).
    pub fn with_keyspace<R>(&self, name: &str, f: impl FnOnce(&KeyspaceDef) -> R) -> Option<R> {
        self.storage.with_keyspace(name, f)
    }

    pub fn has_keyspace(&self, name: &str) -> bool {
        self.storage.has_keyspace(name)
    }

    /// Writes a traced request's session row and events to `system_traces` on this node (the
    /// keyspace is local: a trace is read back through the node that coordinated it).
    pub async fn record_trace(&self, session: TraceSession, events: Vec<TraceEvent>) -> Result<()> {
        let timestamp = now_micros();
        self.blocking(move |storage| Ok(storage.record_trace(&session, &events, timestamp)?)).await
    }

    /// This node's address, as trace sessions name their coordinator.
    pub fn local_address(&self) -> IpAddr {
        self.membership.local().ip()
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

    /// The keyspace's replication strategy and its replicas for the ring now. This runs for every
    /// request, so the answer is kept and computed again only when the schema or the ring changed.
    fn placement(&self, keyspace: &str) -> Result<Arc<Placement>> {
        // Versions read before the schema and the ring are: a change racing with this leaves
        // an entry that the next request finds out of date.
        let schema_generation = self.storage.schema_generation();
        let ring_version = self.membership.ring_version();
        if let Some(p) = self.placements.get(keyspace, schema_generation, ring_version) {
            return Ok(p);
        }
        let strategy = self
            .storage
            .with_keyspace(keyspace, ReplicationStrategy::from_keyspace)
            .ok_or_else(|| CoordinatorError::Invalid(format!("Keyspace '{keyspace}' does not exist")))?
            .map_err(|e| CoordinatorError::Invalid(e.to_string()))?;
        let map = self.membership.replica_map_of(keyspace, &strategy);
        let local_only = map.sole_replica() == Some(self.membership.local());
        let placement = Arc::new(Placement { schema_generation, ring_version, strategy, map, local_only });
        self.placements.put(keyspace, &placement);
        Ok(placement)
    }

    /// The keyspace's definition and its replicas for the ring now.
    fn replicas_of(&self, keyspace: &str) -> Result<(KeyspaceDef, Arc<ReplicaMap>)> {
        let ks = self
            .storage
            .keyspace(keyspace)
            .ok_or_else(|| CoordinatorError::Invalid(format!("Keyspace '{keyspace}' does not exist")))?;
        let map = self.membership.replica_map(&ks).map_err(|e| CoordinatorError::Invalid(e.to_string()))?;
        Ok((ks, map))
    }

    /// The messaging service, for a request to another node.
    fn net(&self) -> Result<&Arc<MessagingService>> {
        self.messaging.as_ref().ok_or_else(|| {
            CoordinatorError::Storage(StorageError::InvalidSchema(
                "a replica on another node, but this coordinator has no messaging".into(),
            ))
        })
    }

    /// This node's data centre: fixed for the process, whichever the snitch (gossip never
    /// changes a node's own location).
    fn local_dc(&self) -> &str {
        &self.local_dc
    }
}
