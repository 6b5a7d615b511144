//! Spreading schema changes (Cassandra's MigrationManager). The schema is rows of the system
//! keyspace that merge by timestamp ([`Storage::merge_schema`]), and its version is a digest of
//! their content, so nodes that hold the same rows report the same version in gossip.
//!
//! - A change made on this node is pushed (SchemaPush, the node's schema rows) to every live
//!   node, and the change returns once they merged it or the timeout passed: a column family
//!   added through one node is usable through every other as soon as the call returns.
//! - A peer gossiping another version is asked for its rows (SchemaPull), which are merged here;
//!   a node that was down catches up this way when it returns.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use parking_lot::Mutex;
use storage::engine::Storage;
use tracing::{debug, info, warn};

use crate::messages;
use crate::Endpoint;
use membership::Membership;
use messaging::{MessagingService, Responder, Verb, VerbHandler};

/// Serves SchemaPull and SchemaPush, and pulls from peers whose version differs.
pub struct SchemaSync {
    storage: Storage,
    messaging: Arc<MessagingService>,
    /// Peers a pull is under way from (one at a time per peer).
    pulling: Mutex<HashSet<Endpoint>>,
}

impl SchemaSync {
    pub fn register(storage: Storage, messaging: Arc<MessagingService>) -> Arc<SchemaSync> {
        let sync = Arc::new(SchemaSync { storage, messaging, pulling: Mutex::new(HashSet::new()) });
        sync.messaging.register(Verb::SchemaPull, sync.clone());
        sync.messaging.register(Verb::SchemaPush, sync.clone());
        sync.messaging.register(Verb::SchemaCheck, sync.clone());
        sync
    }

    /// `peer` gossips schema `version`: if it is not ours, fetch its rows and merge them.
    pub fn on_peer_version(self: &Arc<Self>, peer: Endpoint, version: &str) {
        if version == self.storage.schema_version().to_string() {
            return;
        }
        if !self.pulling.lock().insert(peer) {
            return;
        }
        let sync = self.clone();
        tokio::spawn(async move {
            let reply = sync.messaging.send_request(peer, Verb::SchemaPull, Vec::new()).await;
            match reply
                .map_err(|e| e.to_string())
                .and_then(|b| messages::decode_mutations(&b).map_err(|e| e.to_string()))
            {
                Ok(rows) => {
                    let storage = sync.storage.clone();
                    match tokio::task::spawn_blocking(move || storage.merge_schema(rows)).await {
                        Ok(Ok(v)) => info!(%peer, version = %v, "merged a peer's schema"),
                        Ok(Err(e)) => warn!(%peer, error = %e, "cannot merge a peer's schema"),
                        Err(e) => warn!(%peer, error = %e, "schema merge task failed"),
                    }
                }
                Err(e) => debug!(%peer, error = %e, "schema pull failed"),
            }
            sync.pulling.lock().remove(&peer);
        });
    }

    /// Pushes this node's schema rows to every live peer and waits (at most `timeout`) until
    /// each merged them. Returns the peers that did not confirm.
    pub async fn push_to_live(&self, membership: &Membership, timeout: Duration) -> Vec<Endpoint> {
        let local = membership.local();
        let peers: Vec<Endpoint> =
            membership.all_endpoints().into_iter().filter(|ep| *ep != local && membership.is_alive(*ep)).collect();
        if peers.is_empty() {
            return Vec::new();
        }
        let storage = self.storage.clone();
        let rows = match tokio::task::spawn_blocking(move || storage.schema_mutations()).await {
            Ok(Ok(rows)) => rows,
            _ => return peers,
        };
        let payload = messages::encode_mutations(&rows);
        let pushes = peers.iter().map(|ep| {
            let reply = self.messaging.send_request(*ep, Verb::SchemaPush, payload.clone());
            async move { reply.await.is_ok() }
        });
        let done = tokio::time::timeout(timeout, join_all(pushes)).await.unwrap_or_default();
        peers
            .into_iter()
            .zip(done.into_iter().chain(std::iter::repeat(false)))
            .filter(|(_, ok)| !ok)
            .map(|(ep, _)| ep)
            .collect()
    }
}

impl SchemaSync {
    /// Every live node's schema version, asked directly (SchemaCheck); nodes down or not
    /// answering within `timeout` are listed under "UNREACHABLE" (describe_schema_versions).
    pub async fn versions(
        &self,
        membership: &Membership,
        timeout: Duration,
    ) -> std::collections::BTreeMap<String, Vec<String>> {
        let local = membership.local();
        let mut versions: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
        versions.entry(self.storage.schema_version().to_string()).or_default().push(local.ip().to_string());
        let mut asked = Vec::new();
        for ep in membership.all_endpoints().into_iter().filter(|ep| *ep != local) {
            if membership.is_alive(ep) {
                asked.push((ep, self.messaging.send_request(ep, Verb::SchemaCheck, Vec::new())));
            } else {
                versions.entry("UNREACHABLE".to_string()).or_default().push(ep.ip().to_string());
            }
        }
        let (eps, replies): (Vec<Endpoint>, Vec<_>) = asked.into_iter().unzip();
        let answers = tokio::time::timeout(timeout, join_all(replies)).await.unwrap_or_default();
        for (i, ep) in eps.into_iter().enumerate() {
            let version = match answers.get(i) {
                Some(Ok(bytes)) => String::from_utf8_lossy(bytes).into_owned(),
                _ => "UNREACHABLE".to_string(),
            };
            versions.entry(version).or_default().push(ep.ip().to_string());
        }
        versions
    }
}

impl VerbHandler for SchemaSync {
    fn handle(&self, from: Endpoint, verb: Verb, payload: Vec<u8>, reply: Responder) {
        let storage = self.storage.clone();
        match verb {
            Verb::SchemaPull => {
                tokio::task::spawn_blocking(move || match storage.schema_mutations() {
                    Ok(rows) => reply.respond(messages::encode_mutations(&rows)),
                    Err(e) => reply.fail(e.to_string()),
                });
            }
            Verb::SchemaPush => {
                let rows = match messages::decode_mutations(&payload) {
                    Ok(rows) => rows,
                    Err(e) => return reply.fail(e.to_string()),
                };
                tokio::task::spawn_blocking(move || match storage.merge_schema(rows) {
                    Ok(version) => {
                        info!(%from, %version, "merged a pushed schema");
                        reply.respond(Vec::new());
                    }
                    Err(e) => {
                        warn!(%from, error = %e, "cannot merge a pushed schema");
                        reply.fail(e.to_string());
                    }
                });
            }
            Verb::SchemaCheck => reply.respond(storage.schema_version().to_string().into_bytes()),
            other => reply.fail(format!("{other} is not a schema verb")),
        }
    }
}
