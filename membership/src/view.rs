//! What this node knows of the cluster now: the ring (every member's tokens, as gossip reports
//! them), where each node is (the snitch), which nodes are alive, and each peer's addresses and
//! load. Cassandra keeps this in StorageService, TokenMetadata and the Gossiper; here one object
//! holds it for the coordinator, the admin interface and describe_ring, and gossip updates it
//! (the gossip loop of `cluster::storage_service`, which turns [`crate::gossip::GossipEvent`]s
//! into calls here).
//!
//! The ring is a clone-on-write snapshot: a request takes an `Arc` of it and of the keyspace's
//! replica map (built once per ring or replication change) and never holds a lock while it
//! works.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use model::dht::{Partitioner, Token};
use model::schema::KeyspaceDef;
use parking_lot::{Mutex, RwLock};

use crate::locator::replication::{ReplicaMap, ReplicationError, ReplicationStrategy};
use crate::locator::snitch::Snitch;
use crate::locator::token_metadata::TokenMetadata;
use crate::Endpoint;

/// What gossip tells about a peer besides its tokens.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PeerInfo {
    /// Where its Thrift clients connect (ThriftAddress), as it announces it.
    pub rpc_address: Option<String>,
    pub host_id: Option<String>,
    pub release_version: Option<String>,
    /// Bytes of SSTables on disk.
    pub load: Option<f64>,
    pub schema_version: Option<String>,
    /// Its STATUS (NORMAL, BOOT, LEAVING, LEFT, shutdown...).
    pub status: Option<String>,
}

/// This node's own description.
#[derive(Clone, Debug)]
pub struct LocalInfo {
    pub cluster_name: String,
    pub rpc_address: String,
    pub host_id: String,
}

/// A change in the cluster that clients are told of: the events of Cassandra's
/// `IEndpointLifecycleSubscriber`, which the native protocol pushes as TOPOLOGY_CHANGE and
/// STATUS_CHANGE. Never about this node itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeEvent {
    /// A node took normal tokens it did not hold (it joined the ring).
    Joined(Endpoint),
    /// A node left the ring (decommission, removenode).
    Left(Endpoint),
    /// A member's normal tokens changed (move).
    Moved(Endpoint),
    /// The failure detector holds a node alive again.
    Up(Endpoint),
    /// The failure detector convicted a node, or it announced its shutdown.
    Down(Endpoint),
}

/// What is called with each [`NodeEvent`], on the thread that applied the change; it must not
/// block (a front end forwards the event to a channel).
pub type NodeListener = dyn Fn(NodeEvent) + Send + Sync;

struct CachedMap {
    ring_version: u64,
    strategy: ReplicationStrategy,
    map: Arc<ReplicaMap>,
}

pub struct Membership {
    local: Endpoint,
    info: LocalInfo,
    partitioner: Partitioner,
    snitch: Arc<dyn Snitch>,
    /// The ring; replaced whole on every change.
    ring: RwLock<Arc<TokenMetadata>>,
    /// Bumped with every change of the ring or of a node's location: replica maps built for an
    /// older version are rebuilt.
    ring_version: AtomicU64,
    replica_maps: Mutex<HashMap<String, CachedMap>>,
    /// Peers the failure detector holds alive (this node is always alive to itself).
    alive: RwLock<HashSet<Endpoint>>,
    /// When each peer known to be down was last seen going down (for the hint window).
    down_since: RwLock<HashMap<Endpoint, Instant>>,
    peers: RwLock<BTreeMap<Endpoint, PeerInfo>>,
    /// A live peer has told gossip nothing yet of its place in the ring (no STATUS, or a status
    /// without tokens): it may be about to take ranges, so no write can be placed for sure.
    awaiting_placement: AtomicBool,
    /// Told of every [`NodeEvent`]; a listener dropped by its owner is forgotten.
    listeners: Mutex<Vec<Weak<NodeListener>>>,
}

impl Membership {
    /// A view holding this node alone, with `tokens`.
    pub fn new(
        local: Endpoint,
        info: LocalInfo,
        partitioner: Partitioner,
        snitch: Arc<dyn Snitch>,
        tokens: Vec<Token>,
    ) -> Membership {
        let mut ring = TokenMetadata::new(partitioner);
        if !tokens.is_empty() {
            // A token list checked by the caller cannot collide in an empty ring.
            let _ = ring.update_normal_tokens(local, tokens);
        }
        Membership {
            local,
            info,
            partitioner,
            snitch,
            ring: RwLock::new(Arc::new(ring)),
            ring_version: AtomicU64::new(1),
            replica_maps: Mutex::new(HashMap::new()),
            alive: RwLock::new(HashSet::new()),
            down_since: RwLock::new(HashMap::new()),
            peers: RwLock::new(BTreeMap::new()),
            awaiting_placement: AtomicBool::new(false),
            listeners: Mutex::new(Vec::new()),
        }
    }

    /// Whether a live peer's place in the ring is not known yet (see the field); gossip keeps
    /// it up to date, and the coordinator refuses writes meanwhile.
    pub fn awaiting_placement(&self) -> bool {
        self.awaiting_placement.load(Ordering::Relaxed)
    }

    /// Gossip's word on [`Membership::awaiting_placement`]; whether it changed.
    pub fn set_awaiting_placement(&self, awaiting: bool) -> bool {
        self.awaiting_placement.swap(awaiting, Ordering::Relaxed) != awaiting
    }

    pub fn local(&self) -> Endpoint {
        self.local
    }

    pub fn local_info(&self) -> &LocalInfo {
        &self.info
    }

    pub fn partitioner(&self) -> Partitioner {
        self.partitioner
    }

    pub fn snitch(&self) -> &Arc<dyn Snitch> {
        &self.snitch
    }

    /// The ring now.
    pub fn ring(&self) -> Arc<TokenMetadata> {
        self.ring.read().clone()
    }

    /// This node's tokens.
    pub fn local_tokens(&self) -> Vec<Token> {
        self.ring().tokens_of(self.local).to_vec()
    }

    /// Changes the ring: `change` edits a copy, which then replaces the ring. Listeners hear of
    /// the nodes that joined, left or moved by it.
    pub fn update_ring<T>(&self, change: impl FnOnce(&mut TokenMetadata) -> T) -> T {
        let (out, events) = {
            let mut ring = self.ring.write();
            let mut next = TokenMetadata::clone(&ring);
            let out = change(&mut next);
            let events = ring_changes(&ring, &next, self.local);
            *ring = Arc::new(next);
            self.ring_version.fetch_add(1, Ordering::SeqCst);
            (out, events)
        };
        self.tell(&events);
        out
    }

    /// Calls `listener` with every [`NodeEvent`] from now on, as long as its owner keeps it.
    pub fn listen(&self, listener: &Arc<NodeListener>) {
        self.listeners.lock().push(Arc::downgrade(listener));
    }

    fn tell(&self, events: &[NodeEvent]) {
        if events.is_empty() {
            return;
        }
        let live: Vec<Arc<NodeListener>> = {
            let mut listeners = self.listeners.lock();
            listeners.retain(|l| l.strong_count() > 0);
            listeners.iter().filter_map(Weak::upgrade).collect()
        };
        for listener in live {
            for event in events {
                listener(*event);
            }
        }
    }

    /// A node's data centre and rack changed (gossip): replica maps must be rebuilt.
    pub fn set_location(&self, ep: Endpoint, dc: &str, rack: &str) {
        self.snitch.set_location(ep, dc, rack);
        self.ring_version.fetch_add(1, Ordering::SeqCst);
    }

    /// The replicas of every range of `keyspace`, for the ring now.
    pub fn replica_map(&self, keyspace: &KeyspaceDef) -> Result<Arc<ReplicaMap>, ReplicationError> {
        let strategy = ReplicationStrategy::from_keyspace(keyspace)?;
        Ok(self.replica_map_of(&keyspace.name, &strategy))
    }

    /// A number that changes whenever the ring does (tokens, nodes joining or leaving).
    pub fn ring_version(&self) -> u64 {
        self.ring_version.load(Ordering::SeqCst)
    }

    /// The replicas of every range of the keyspace named `keyspace`, replicated by `strategy`,
    /// for the ring now: built once per ring or strategy change, then shared.
    pub fn replica_map_of(&self, keyspace: &str, strategy: &ReplicationStrategy) -> Arc<ReplicaMap> {
        let version = self.ring_version.load(Ordering::SeqCst);
        let mut maps = self.replica_maps.lock();
        if let Some(cached) = maps.get(keyspace) {
            if cached.ring_version == version && cached.strategy == *strategy {
                return cached.map.clone();
            }
        }
        let ring = self.ring();
        let map = Arc::new(ReplicaMap::build(strategy, &ring, self.snitch.as_ref(), self.local));
        let cached = CachedMap { ring_version: version, strategy: strategy.clone(), map: map.clone() };
        maps.insert(keyspace.to_string(), cached);
        map
    }

    pub fn is_alive(&self, ep: Endpoint) -> bool {
        ep == self.local || self.alive.read().contains(&ep)
    }

    /// Marks a peer up or down; true when that changed something (and listeners hear of it).
    pub fn set_alive(&self, ep: Endpoint, alive: bool) -> bool {
        if ep == self.local {
            return false;
        }
        let changed = {
            let mut set = self.alive.write();
            if alive {
                self.down_since.write().remove(&ep);
                set.insert(ep)
            } else {
                self.down_since.write().entry(ep).or_insert_with(Instant::now);
                set.remove(&ep)
            }
        };
        if changed {
            self.tell(&[if alive { NodeEvent::Up(ep) } else { NodeEvent::Down(ep) }]);
        }
        changed
    }

    /// How long `ep` has been known to be down (None if up, or never seen up or down).
    pub fn down_for(&self, ep: Endpoint) -> Option<Duration> {
        self.down_since.read().get(&ep).map(|since| since.elapsed())
    }

    /// Every node of the ring and every known peer, this node included, in address order.
    pub fn all_endpoints(&self) -> Vec<Endpoint> {
        let mut all: Vec<Endpoint> = self.ring().endpoints().collect();
        all.extend(self.peers.read().keys().copied());
        all.push(self.local);
        all.sort();
        all.dedup();
        all
    }

    pub fn peer(&self, ep: Endpoint) -> Option<PeerInfo> {
        self.peers.read().get(&ep).cloned()
    }

    /// Edits what is known of a peer (created empty when new).
    pub fn update_peer(&self, ep: Endpoint, change: impl FnOnce(&mut PeerInfo)) {
        change(self.peers.write().entry(ep).or_default());
    }

    pub fn forget_peer(&self, ep: Endpoint) {
        self.peers.write().remove(&ep);
        self.alive.write().remove(&ep);
    }

    /// The address Thrift clients of `ep` connect to: its announced rpc address, else its
    /// listen address.
    pub fn rpc_address(&self, ep: Endpoint) -> String {
        if ep == self.local {
            return self.info.rpc_address.clone();
        }
        self.peer(ep).and_then(|p| p.rpc_address).unwrap_or_else(|| ep.ip().to_string())
    }
}

/// The nodes other than `local` that joined, left or moved from ring `before` to `after`,
/// judged by their normal tokens.
fn ring_changes(before: &TokenMetadata, after: &TokenMetadata, local: Endpoint) -> Vec<NodeEvent> {
    let mut events = Vec::new();
    for ep in after.endpoints().filter(|ep| *ep != local) {
        if !before.is_member(ep) {
            events.push(NodeEvent::Joined(ep));
        } else if before.tokens_of(ep) != after.tokens_of(ep) {
            events.push(NodeEvent::Moved(ep));
        }
    }
    events.extend(before.endpoints().filter(|ep| *ep != local && !after.is_member(*ep)).map(NodeEvent::Left));
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locator::snitch::SimpleSnitch;

    fn ep(i: u8) -> Endpoint {
        Endpoint::from(([127, 0, 0, i], 7000))
    }

    fn membership() -> Membership {
        let info = LocalInfo { cluster_name: "c".into(), rpc_address: "127.0.0.1".into(), host_id: "h".into() };
        Membership::new(ep(1), info, Partitioner::Random, Arc::new(SimpleSnitch), vec![Token::from_bytes(&[0x10])])
    }

    #[test]
    fn replica_maps_follow_ring_and_schema_changes() {
        let m = membership();
        let mut ks = KeyspaceDef::new("ks");
        ks.strategy_options.insert("replication_factor".into(), "2".into());
        let one = m.replica_map(&ks).expect("map");
        assert_eq!(one.endpoints_for(&Token::from_bytes(&[0x50])), &[ep(1)]);
        assert!(Arc::ptr_eq(&one, &m.replica_map(&ks).expect("cached")), "unchanged ring: cached map");
        m.update_ring(|r| r.update_normal_tokens(ep(2), vec![Token::from_bytes(&[0x80])])).expect("tokens");
        let two = m.replica_map(&ks).expect("map");
        assert_eq!(two.endpoints_for(&Token::from_bytes(&[0x50])), &[ep(2), ep(1)]);
        ks.strategy_options.insert("replication_factor".into(), "1".into());
        assert_eq!(m.replica_map(&ks).expect("map").endpoints_for(&Token::from_bytes(&[0x50])), &[ep(2)]);
    }

    #[test]
    fn liveness_and_peers() {
        let m = membership();
        assert!(m.is_alive(ep(1)), "a node is alive to itself");
        assert!(!m.is_alive(ep(2)));
        assert!(m.set_alive(ep(2), true));
        assert!(!m.set_alive(ep(2), true), "no change");
        assert!(m.is_alive(ep(2)));
        m.update_peer(ep(2), |p| p.rpc_address = Some("10.0.0.2".into()));
        assert_eq!(m.rpc_address(ep(2)), "10.0.0.2");
        assert_eq!(m.rpc_address(ep(3)), "127.0.0.3");
        assert_eq!(m.all_endpoints(), vec![ep(1), ep(2)]);
        m.forget_peer(ep(2));
        assert!(!m.is_alive(ep(2)));
    }

    #[test]
    fn listeners_hear_of_joins_moves_departures_and_liveness() {
        let m = membership();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = heard.clone();
        let listener: Arc<NodeListener> = Arc::new(move |e| sink.lock().push(e));
        m.listen(&listener);
        let token = |b: u8| vec![Token::from_bytes(&[b])];
        m.update_ring(|r| r.update_normal_tokens(ep(2), token(0x80))).expect("join");
        m.update_ring(|r| r.update_normal_tokens(ep(2), token(0x80))).expect("same tokens");
        m.update_ring(|r| r.update_normal_tokens(ep(2), token(0x90))).expect("move");
        m.update_ring(|r| r.update_normal_tokens(ep(1), token(0x20))).expect("local move");
        assert!(m.set_alive(ep(2), true));
        assert!(!m.set_alive(ep(2), true));
        assert!(m.set_alive(ep(2), false));
        m.update_ring(|r| r.remove_endpoint(ep(2)));
        let want = [
            NodeEvent::Joined(ep(2)),
            NodeEvent::Moved(ep(2)),
            NodeEvent::Up(ep(2)),
            NodeEvent::Down(ep(2)),
            NodeEvent::Left(ep(2)),
        ];
        assert_eq!(*heard.lock(), want, "nothing of the local node, nothing twice");
        drop(listener);
        m.set_alive(ep(3), true);
        assert_eq!(heard.lock().len(), want.len(), "a dropped listener is not called");
        assert!(m.listeners.lock().is_empty());
    }
}
