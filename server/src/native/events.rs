//! Events pushed to connections that REGISTERed for them (spec §4.2.6).
//!
//! SCHEMA_CHANGE: the node's schema is watched, not told: [`schema_watch_loop`] compares the
//! keyspace definitions each time the schema version moves (checked every
//! [`SCHEMA_POLL_INTERVAL`], and at once when this node's native front end made a change), so
//! a change made through Thrift, through the native protocol, or on another node and merged
//! here all reach the registered clients, as 3.11's migration listener does. Two changes
//! that cancel out between two looks (a table dropped and made again alike) are not seen.
//!
//! STATUS_CHANGE and TOPOLOGY_CHANGE are accepted by REGISTER but never sent: gossip's events
//! (`membership::gossip::GossipEvent`) are consumed inside `cluster::storage_service` with no
//! subscription for front ends.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use cluster::coordinator::Coordinator;
use cql::exec::SchemaChange;
use storage::schema::KeyspaceDef;
use tokio::sync::{broadcast, watch, Notify};

/// How often the schema version is compared.
pub const SCHEMA_POLL_INTERVAL: Duration = Duration::from_millis(250);

/// Events waiting for a slow connection; one that falls further behind loses the oldest.
const EVENT_BACKLOG: usize = 1024;

/// The kinds of event a client may register for.
pub const EVENT_TYPES: &[&str] = &["TOPOLOGY_CHANGE", "STATUS_CHANGE", "SCHEMA_CHANGE"];

/// Where events are published; each registered connection subscribes.
pub struct EventHub {
    schema: broadcast::Sender<SchemaChange>,
    /// Wakes the schema watcher early (a change made by this front end).
    nudge: Notify,
}

impl EventHub {
    pub fn new() -> Arc<EventHub> {
        Arc::new(EventHub { schema: broadcast::channel(EVENT_BACKLOG).0, nudge: Notify::new() })
    }

    pub fn subscribe_schema(&self) -> broadcast::Receiver<SchemaChange> {
        self.schema.subscribe()
    }

    /// Asks the watcher to look now.
    pub fn schema_changed(&self) {
        self.nudge.notify_one();
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
            let _ = hub.schema.send(change);
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
}
