//! Events pushed to connections that REGISTERed for them (spec §4.2.6).
//!
//! SCHEMA_CHANGE: the node's schema is watched, not told: [`schema_watch_loop`] compares the
//! keyspace definitions each time the schema version moves (checked every
//! [`SCHEMA_POLL_INTERVAL`], and at once when this node's native front end made a change), so
//! a change made through Thrift, through the native protocol, or on another node and merged
//! here all reach the registered clients, as 3.11's migration listener does. Two changes
//! that cancel out between two looks (a table dropped and made again alike) are not seen.
//!
//! STATUS_CHANGE and TOPOLOGY_CHANGE come from the node's view of the cluster: the hub listens
//! to `cluster::membership::Membership`, which tells of every peer that the failure detector
//! finds up or down and of every node that joins, leaves or moves in the ring. As in 3.11, an
//! event names the node by its rpc address and this node's native port, and a node that joins
//! while down is announced (NEW_NODE) only once it is up.

use std::collections::{BTreeMap, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cluster::coordinator::Coordinator;
use cluster::membership::{Membership, NodeEvent, NodeListener};
use cluster::Endpoint;
use cql::exec::SchemaChange;
use storage::schema::KeyspaceDef;
use tokio::sync::{broadcast, watch, Notify};

/// How often the schema version is compared.
pub const SCHEMA_POLL_INTERVAL: Duration = Duration::from_millis(250);

/// Events waiting for a slow connection; one that falls further behind loses the oldest.
const EVENT_BACKLOG: usize = 1024;

/// The kinds of event a client may register for.
pub const EVENT_TYPES: &[&str] = &["TOPOLOGY_CHANGE", "STATUS_CHANGE", "SCHEMA_CHANGE"];

/// One event as the protocol sends it.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// NEW_NODE, REMOVED_NODE or MOVED_NODE, and the node's native address.
    Topology(&'static str, SocketAddr),
    /// UP or DOWN, and the node's native address.
    Status(&'static str, SocketAddr),
    Schema(SchemaChange),
}

impl Event {
    /// The type a client registers for to receive it.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::Topology(..) => "TOPOLOGY_CHANGE",
            Event::Status(..) => "STATUS_CHANGE",
            Event::Schema(_) => "SCHEMA_CHANGE",
        }
    }

    /// Its type's bit in a set of registered types ([`type_bit`]).
    pub fn bit(&self) -> u8 {
        type_bit(self.kind()).unwrap_or(0)
    }
}

/// The bit of an event type (one of [`EVENT_TYPES`]) in a connection's set of registered
/// types; `None` for an unknown type.
pub fn type_bit(kind: &str) -> Option<u8> {
    EVENT_TYPES.iter().position(|t| *t == kind).map(|i| 1 << i)
}

/// Where events are published; each registered connection subscribes.
pub struct EventHub {
    events: broadcast::Sender<Event>,
    /// Wakes the schema watcher early (a change made by this front end).
    nudge: Notify,
    /// Kept for as long as the hub lives: membership holds it weakly.
    _listener: Arc<NodeListener>,
}

impl EventHub {
    /// A hub told of `membership`'s changes; events name nodes by `native_port`, which 3.11
    /// takes to be every node's.
    pub fn new(membership: &Arc<Membership>, native_port: u16) -> Arc<EventHub> {
        let events = broadcast::channel(EVENT_BACKLOG).0;
        let translate = Translator { membership: Arc::downgrade(membership), native_port, pending: Mutex::default() };
        let sender = events.clone();
        let listener: Arc<NodeListener> = Arc::new(move |e| {
            for event in translate.events_of(e) {
                // No receiver is no error: nobody registered.
                let _ = sender.send(event);
            }
        });
        membership.listen(&listener);
        Arc::new(EventHub { events, nudge: Notify::new(), _listener: listener })
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// Asks the watcher to look now.
    pub fn schema_changed(&self) {
        self.nudge.notify_one();
    }
}

/// Turns membership's events into the protocol's.
struct Translator {
    membership: std::sync::Weak<Membership>,
    native_port: u16,
    /// Nodes that joined while down: announced once up (3.11's
    /// `endpointsPendingJoinedNotification`).
    pending: Mutex<HashSet<Endpoint>>,
}

impl Translator {
    fn events_of(&self, event: NodeEvent) -> Vec<Event> {
        let Some(membership) = self.membership.upgrade() else { return Vec::new() };
        let address = |ep: Endpoint| {
            let ip = membership.rpc_address(ep).parse::<IpAddr>().unwrap_or(ep.ip());
            SocketAddr::new(ip, self.native_port)
        };
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        match event {
            NodeEvent::Joined(ep) if !membership.is_alive(ep) => {
                pending.insert(ep);
                Vec::new()
            }
            NodeEvent::Joined(ep) => vec![Event::Topology("NEW_NODE", address(ep))],
            NodeEvent::Left(ep) => {
                pending.remove(&ep);
                vec![Event::Topology("REMOVED_NODE", address(ep))]
            }
            NodeEvent::Moved(ep) => vec![Event::Topology("MOVED_NODE", address(ep))],
            NodeEvent::Up(ep) => {
                let mut out = Vec::new();
                if pending.remove(&ep) {
                    out.push(Event::Topology("NEW_NODE", address(ep)));
                }
                out.push(Event::Status("UP", address(ep)));
                out
            }
            NodeEvent::Down(ep) => vec![Event::Status("DOWN", address(ep))],
        }
    }
}

/// Publishes the schema's changes until `stop` turns true.
pub async fn schema_watch_loop(coordinator: Arc<Coordinator>, hub: Arc<EventHub>, mut stop: watch::Receiver<bool>) {
    let mut version = coordinator.schema_version();
    let mut known = by_name(coordinator.keyspaces());
    loop {
        tokio::select! {
            _ = tokio::time::sleep(SCHEMA_POLL_INTERVAL) => {}
            _ = hub.nudge.notified() => {}
            _ = stop.changed() => return,
        }
        if *stop.borrow() {
            return;
        }
        let now = coordinator.schema_version();
        if now == version {
            continue;
        }
        version = now;
        let current = by_name(coordinator.keyspaces());
        for change in diff(&known, &current) {
            // No receiver is no error: nobody registered.
            let _ = hub.events.send(Event::Schema(change));
        }
        known = current;
    }
}

fn by_name(keyspaces: Vec<KeyspaceDef>) -> BTreeMap<String, KeyspaceDef> {
    keyspaces.into_iter().map(|k| (k.name.clone(), k)).collect()
}

/// The changes from `before` to `after`, in 3.11's terms: a keyspace created or dropped is
/// one KEYSPACE event (its tables go with it); otherwise its own options changed is
/// KEYSPACE UPDATED, and each table created, dropped or changed a TABLE event.
pub fn diff(before: &BTreeMap<String, KeyspaceDef>, after: &BTreeMap<String, KeyspaceDef>) -> Vec<SchemaChange> {
    let event = |change, target, keyspace: &str, name: Option<&str>| SchemaChange {
        change,
        target,
        keyspace: keyspace.to_string(),
        name: name.map(str::to_string),
    };
    let mut out = Vec::new();
    for (name, old) in before {
        let Some(new) = after.get(name) else {
            out.push(event("DROPPED", "KEYSPACE", name, None));
            continue;
        };
        if old.strategy_class != new.strategy_class
            || old.strategy_options != new.strategy_options
            || old.durable_writes != new.durable_writes
        {
            out.push(event("UPDATED", "KEYSPACE", name, None));
        }
        for cf in &old.cf_defs {
            match new.cf_defs.iter().find(|c| c.name == cf.name) {
                None => out.push(event("DROPPED", "TABLE", name, Some(&cf.name))),
                Some(now) if now != cf => out.push(event("UPDATED", "TABLE", name, Some(&cf.name))),
                Some(_) => {}
            }
        }
        for cf in &new.cf_defs {
            if !old.cf_defs.iter().any(|c| c.name == cf.name) {
                out.push(event("CREATED", "TABLE", name, Some(&cf.name)));
            }
        }
    }
    for name in after.keys() {
        if !before.contains_key(name) {
            out.push(event("CREATED", "KEYSPACE", name, None));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use storage::schema::CfDef;

    fn ks(name: &str, tables: &[&str]) -> KeyspaceDef {
        let mut k = KeyspaceDef::new(name);
        k.cf_defs = tables.iter().map(|t| CfDef::new(name, *t)).collect();
        k
    }

    #[test]
    fn changes_are_named_as_3_11_names_them() {
        let before = by_name(vec![ks("a", &["t1", "t2"]), ks("gone", &["x"])]);
        let mut a = before["a"].clone();
        a.durable_writes = false;
        a.cf_defs.remove(0);
        a.cf_defs.push(CfDef::new("a", "t3"));
        let after = by_name(vec![a, ks("new", &["y"])]);
        let got: Vec<String> = diff(&before, &after)
            .into_iter()
            .map(|c| format!("{} {} {} {}", c.change, c.target, c.keyspace, c.name.unwrap_or_default()))
            .collect();
        assert_eq!(
            got,
            [
                "UPDATED KEYSPACE a ",
                "DROPPED TABLE a t1",
                "CREATED TABLE a t3",
                "DROPPED KEYSPACE gone ",
                "CREATED KEYSPACE new "
            ]
        );
        assert!(diff(&after, &after).is_empty());
    }

    #[test]
    fn node_events_name_the_rpc_address_and_wait_for_a_joined_node_to_be_up() {
        use cluster::membership::LocalInfo;
        use storage::dht::{Partitioner, Token};
        let ep = |i: u8| Endpoint::from(([127, 0, 0, i], 7000));
        let info = LocalInfo { cluster_name: "c".into(), rpc_address: "127.0.0.1".into(), host_id: "h".into() };
        let membership = Arc::new(Membership::new(
            ep(1),
            info,
            Partitioner::Random,
            Arc::new(cluster::snitch::SimpleSnitch),
            vec![Token::from_bytes(&[0x10])],
        ));
        let hub = EventHub::new(&membership, 9042);
        let mut events = hub.subscribe();
        let mut heard = || {
            let mut out = Vec::new();
            while let Ok(e) = events.try_recv() {
                out.push(e);
            }
            out
        };
        let native = |ip: &str| SocketAddr::new(ip.parse().expect("ip"), 9042);
        membership.update_peer(ep(2), |p| p.rpc_address = Some("10.0.0.2".into()));
        membership.update_ring(|r| r.update_normal_tokens(ep(2), vec![Token::from_bytes(&[0x80])])).expect("join");
        assert_eq!(heard(), [], "a node that joined while down is not announced yet");
        membership.set_alive(ep(2), true);
        assert_eq!(heard(), [Event::Topology("NEW_NODE", native("10.0.0.2")), Event::Status("UP", native("10.0.0.2"))]);
        membership.set_alive(ep(3), true);
        membership.update_ring(|r| r.update_normal_tokens(ep(3), vec![Token::from_bytes(&[0xa0])])).expect("join");
        membership.set_alive(ep(3), false);
        membership.update_ring(|r| r.remove_endpoint(ep(3)));
        assert_eq!(
            heard(),
            [
                Event::Status("UP", native("127.0.0.3")),
                Event::Topology("NEW_NODE", native("127.0.0.3")),
                Event::Status("DOWN", native("127.0.0.3")),
                Event::Topology("REMOVED_NODE", native("127.0.0.3")),
            ]
        );
    }
}
