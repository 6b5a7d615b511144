//! The running node as the admin interface sees it: the engine, for statistics, flush,
//! compaction and drain, the coordinator, for the ring and the replicas of a key, and the
//! services an operator stops and starts (gossip, the Thrift server). (The Thrift front end
//! sees only the coordinator: see `thrift::handler::ThriftContext`.)

use std::sync::Arc;

use cluster::coordinator::Coordinator;
use cluster::StorageService;
use storage::engine::Storage;

use crate::native::NativeService;
use crate::thrift::server::ThriftServer;

pub struct Node {
    pub storage: Storage,
    pub coordinator: Arc<Coordinator>,
    /// Gossip's view of every node (None for a node built without a cluster, in tests).
    pub service: Option<Arc<StorageService>>,
    /// The Thrift front end (None for a node built without one, in tests).
    pub thrift: Option<Arc<ThriftServer>>,
    /// The native protocol front end (None with StartNativeTransport false, and in tests).
    pub native: Option<Arc<NativeService>>,
}
