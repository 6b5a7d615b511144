//! The running node as the admin interface sees it: the engine, for statistics, flush,
//! compaction and drain, and the coordinator, for the ring and the replicas of a key. (The
//! Thrift front end sees only the coordinator: see `thrift::handler::ThriftContext`.)

use std::sync::Arc;

use cluster::coordinator::Coordinator;
use cluster::storage_service::StorageService;
use storage::engine::Storage;

pub struct Node {
    pub storage: Storage,
    pub coordinator: Arc<Coordinator>,
    /// Gossip's view of every node (None for a node built without a cluster, in tests).
    pub service: Option<Arc<StorageService>>,
}
