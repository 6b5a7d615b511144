//! What the front end knows about this node: the engine, and the identity it reports to
//! clients (cluster name, token, addresses, authenticator).

use storage::dht::Token;
use storage::engine::Storage;

use crate::auth::Authenticator;

/// Until the cluster layer exists, every node reports itself in one data centre and rack, as
/// Cassandra's SimpleSnitch does.
pub const DATACENTER: &str = "datacenter1";
pub const RACK: &str = "rack1";
pub const SNITCH: &str = "org.apache.cassandra.locator.SimpleSnitch";

pub struct Node {
    pub storage: Storage,
    pub cluster_name: String,
    pub local_token: Token,
    /// Address other nodes (and describe_ring) know this node by.
    pub listen_address: String,
    /// Address Thrift clients connect to.
    pub rpc_address: String,
    pub authenticator: Authenticator,
    pub snitch: String,
    /// Largest Thrift message accepted, framed or not.
    pub max_message_bytes: usize,
    /// Thrift event-loop threads; 0 means the default ([`crate::thrift::event_loop::default_count`]).
    pub event_loops: usize,
}
