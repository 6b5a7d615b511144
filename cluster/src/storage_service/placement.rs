//! What gossip learns of other nodes becomes the ring, liveness and what the coordinator knows
//! of each peer: STATUS and TOKENS place a node (a live member keeps its tokens whatever a
//! newcomer announces), every state is saved in `system.peers` and restored at the next start,
//! and a live peer that has not said where it stands holds writes back.

use std::collections::BTreeMap;
use std::time::Instant;

use model::dht::{Partitioner, Token};
use storage::engine::Storage;
use storage::PeerInfo;
use tracing::{debug, info, warn};

use super::StorageService;
use crate::join::{GossipView, PeerView};
use crate::Endpoint;
use membership::gossip::{ApplicationState, GossipEvent, Gossiper, Status};
use membership::Membership;

impl StorageService {
    /// Turns what gossip learned into the ring and liveness.
    pub(super) fn apply(&self, events: Vec<GossipEvent>) {
        // Only liveness and placement change which live peers are awaited; heartbeats and loads,
        // most of gossip, do not (and the check decodes every peer's tokens).
        let placement_may_change = events.iter().any(|e| match e {
            GossipEvent::Changed { state, .. } => matches!(state, ApplicationState::Status | ApplicationState::Tokens),
            _ => true,
        });
        for event in events {
            match event {
                GossipEvent::Alive { ep } => {
                    if self.membership.set_alive(ep, true) {
                        info!(%ep, "node is up");
                    }
                    if let Some(version) = self.membership.peer(ep).and_then(|p| p.schema_version) {
                        self.schema.on_peer_version(ep, &version);
                    }
                }
                GossipEvent::Dead { ep } => {
                    if self.membership.set_alive(ep, false) {
                        info!(%ep, "node is down");
                    }
                }
                GossipEvent::Joined { ep } => debug!(%ep, "learned of a node"),
                GossipEvent::Restarted { ep } => info!(%ep, "node restarted"),
                GossipEvent::Changed { ep, state, value } => self.on_change(ep, state, value),
            }
        }
        if placement_may_change {
            self.note_awaited_peers();
        }
    }

    fn on_change(&self, ep: Endpoint, state: ApplicationState, value: String) {
        if ep == self.membership.local() {
            return;
        }
        if !matches!(state, ApplicationState::Load | ApplicationState::Status | ApplicationState::Tokens) {
            self.save_peer(ep);
        }
        match state {
            // Saved once placed: what is saved is the tokens the ring gave it.
            ApplicationState::Status | ApplicationState::Tokens => {
                self.update_ring_member(ep);
                self.save_peer(ep);
            }
            ApplicationState::Dc | ApplicationState::Rack => {
                let (dc, rack) = {
                    let g = self.gossiper.lock();
                    let s = g.endpoint_state(&ep);
                    (
                        s.and_then(|s| s.value(ApplicationState::Dc)).map(str::to_string),
                        s.and_then(|s| s.value(ApplicationState::Rack)).map(str::to_string),
                    )
                };
                if let (Some(dc), Some(rack)) = (dc, rack) {
                    self.membership.set_location(ep, &dc, &rack);
                }
            }
            ApplicationState::RpcAddress => self.membership.update_peer(ep, |p| p.rpc_address = Some(value)),
            ApplicationState::HostId => self.membership.update_peer(ep, |p| p.host_id = Some(value)),
            ApplicationState::ReleaseVersion => self.membership.update_peer(ep, |p| p.release_version = Some(value)),
            ApplicationState::Load => self.membership.update_peer(ep, |p| p.load = value.parse().ok()),
            ApplicationState::SchemaVersion => {
                if self.membership.is_alive(ep) {
                    self.schema.on_peer_version(ep, &value);
                }
                self.membership.update_peer(ep, |p| p.schema_version = Some(value));
            }
            _ => {}
        }
    }

    /// Places `ep` in the ring by its STATUS and TOKENS.
    fn update_ring_member(&self, ep: Endpoint) {
        let partitioner = self.membership.partitioner();
        let (status, tokens, moving_to) = {
            let g = self.gossiper.lock();
            let Some(s) = g.endpoint_state(&ep) else { return };
            let moving_to = s.value(ApplicationState::Status).and_then(Status::moving_to).map(str::to_string);
            (s.status(), s.value(ApplicationState::Tokens).map(|t| decode_tokens(partitioner, t)), moving_to)
        };
        let status_name = status.map(|s| s.name().to_string());
        let mut previous = None;
        self.membership.update_peer(ep, |p| previous = std::mem::replace(&mut p.status, status_name.clone()));
        if let Some(name) = status_name.as_deref().filter(|_| previous != status_name) {
            info!(%ep, status = name, "node status changed");
        }
        let tokens = tokens.unwrap_or_default();
        match status {
            Some(Status::Normal) if !tokens.is_empty() => {
                let tokens = self.unclaimed_by_live_members(ep, tokens);
                if tokens.is_empty() {
                    return;
                }
                let moved = self.membership.update_ring(|ring| ring.update_normal_tokens(ep, tokens));
                match moved {
                    Ok(taken) => {
                        for (token, from) in taken {
                            info!(%ep, %from, token = %partitioner.token_to_string(&token), "token moved to another node");
                        }
                    }
                    Err(e) => warn!(%ep, error = %e, "cannot place node in the ring"),
                }
            }
            Some(Status::Boot) if !tokens.is_empty() => {
                if let Err(e) = self.membership.update_ring(|ring| ring.add_bootstrap_tokens(ep, tokens)) {
                    warn!(%ep, error = %e, "cannot take a bootstrapping node's tokens");
                }
            }
            Some(Status::Moving) if !tokens.is_empty() => {
                let Some(to) = moving_to.and_then(|t| partitioner.token_from_string(&t).ok()) else {
                    warn!(%ep, "a MOVING status without a valid token");
                    return;
                };
                let moved = self.membership.update_ring(|ring| {
                    ring.update_normal_tokens(ep, tokens).and_then(|_| ring.add_moving_endpoint(ep, to))
                });
                if let Err(e) = moved {
                    warn!(%ep, error = %e, "cannot take a moving node's new token");
                }
            }
            // A dead node being removed (removenode) leaves like a decommissioned one: its ranges
            // are pending on the nodes that take them.
            Some(Status::Leaving) | Some(Status::Removing) => {
                self.membership.update_ring(|ring| ring.add_leaving_endpoint(ep))
            }
            Some(Status::Left { .. }) | Some(Status::Removed { .. }) => {
                self.membership.update_ring(|ring| ring.remove_endpoint(ep));
                self.membership.forget_peer(ep);
                let storage = self.storage.clone();
                tokio::task::spawn_blocking(move || storage.remove_peer(&ep.to_string()));
                info!(%ep, "node left the ring");
            }
            Some(Status::Shutdown) => {
                self.membership.set_alive(ep, false);
                // A member stopped cleanly keeps its tokens: a node that first hears of it now
                // (it joined during a rolling restart) places it as its peers do.
                if !tokens.is_empty() && !self.membership.ring().is_member(ep) {
                    let tokens = self.unclaimed_by_live_members(ep, tokens);
                    if !tokens.is_empty() {
                        if let Err(e) = self.membership.update_ring(|ring| ring.update_normal_tokens(ep, tokens)) {
                            warn!(%ep, error = %e, "cannot place a node that shut down");
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// `tokens` that `ep` announces as NORMAL, less those a live member other than `ep` holds:
    /// a node never takes a live member's token (a newcomer configured with one stops itself,
    /// see [`crate::join`]; until it does, the ring stays as it was). A dead owner's token goes
    /// to the claimant, as Cassandra hands it over.
    fn unclaimed_by_live_members(&self, ep: Endpoint, tokens: Vec<Token>) -> Vec<Token> {
        let ring = self.membership.ring();
        let partitioner = self.membership.partitioner();
        tokens
            .into_iter()
            .filter(|token| match ring.normal_owner(token) {
                Some(owner) if owner != ep && self.membership.is_alive(owner) => {
                    warn!(
                        %ep, %owner, token = %partitioner.token_to_string(token),
                        "a node announces a token that a live member holds; the member keeps it"
                    );
                    false
                }
                _ => true,
            })
            .collect()
    }

    /// Gossip's view of every peer: status, liveness, tokens.
    pub fn gossip_view(&self) -> GossipView {
        let local = self.membership.local();
        let partitioner = self.membership.partitioner();
        let g = self.gossiper.lock();
        let peers = g
            .endpoint_states()
            .filter(|(ep, _)| **ep != local)
            .map(|(ep, s)| {
                let tokens =
                    s.value(ApplicationState::Tokens).map(|t| decode_tokens(partitioner, t)).unwrap_or_default();
                (*ep, PeerView { status: s.status(), alive: s.alive, tokens })
            })
            .collect();
        GossipView { peers }
    }

    /// Tells the coordinator whether a live peer's place in the ring is unknown (it refuses
    /// writes meanwhile), logging each change.
    fn note_awaited_peers(&self) {
        let awaiting = self.gossip_view().awaiting_placement();
        if self.membership.set_awaiting_placement(!awaiting.is_empty()) {
            if awaiting.is_empty() {
                info!("every live node is placed in the ring: writes are placed again");
            } else {
                info!(?awaiting, "a live node has not said where it stands in the ring: writes wait for it");
            }
        }
    }

    /// Saves what gossip says of `ep` in `system.peers`, so a restart knows the ring at once.
    /// For a ring member, the tokens saved are those the ring gave it.
    fn save_peer(&self, ep: Endpoint) {
        let ring = self.membership.ring();
        let partitioner = self.membership.partitioner();
        let info = {
            let g = self.gossiper.lock();
            let Some(s) = g.endpoint_state(&ep) else { return };
            let value = |a| s.value(a).map(str::to_string);
            let placed = ring.tokens_of(ep);
            PeerInfo {
                tokens: if s.status() == Some(Status::Normal) {
                    placed.iter().map(|t| partitioner.token_to_string(t)).collect()
                } else {
                    value(ApplicationState::Tokens)
                        .map(|t| serde_json::from_str::<Vec<String>>(&t).unwrap_or_default())
                        .unwrap_or_default()
                },
                data_center: value(ApplicationState::Dc),
                rack: value(ApplicationState::Rack),
                rpc_address: value(ApplicationState::RpcAddress),
                host_id: value(ApplicationState::HostId).and_then(|v| v.parse().ok()),
                schema_version: value(ApplicationState::SchemaVersion).and_then(|v| v.parse().ok()),
                release_version: value(ApplicationState::ReleaseVersion),
            }
        };
        let storage = self.storage.clone();
        tokio::task::spawn_blocking(move || {
            if let Err(e) = storage.save_peer(&ep.to_string(), &info) {
                warn!(%ep, error = %e, "cannot save a peer's state");
            }
        });
    }

    /// Republishes this node's load.
    pub(super) fn publish_load(&self) {
        let load = self.storage.load_bytes();
        self.gossiper.lock().add_local_state(ApplicationState::Load, load.to_string());
    }

    /// Gossip's view of every endpoint, whole (heartbeat, liveness, versioned states), for
    /// `sibyltool gossipinfo`.
    pub fn gossip_snapshot(&self) -> Vec<(Endpoint, membership::gossip::EndpointState)> {
        self.gossiper.lock().endpoint_states().map(|(ep, s)| (*ep, s.clone())).collect()
    }

    /// Gossip's view of every endpoint: its states, for `sibyltool`.
    pub fn endpoint_states(&self) -> BTreeMap<Endpoint, BTreeMap<ApplicationState, String>> {
        let g = self.gossiper.lock();
        g.endpoint_states()
            .map(|(ep, s)| (*ep, s.states.iter().map(|(k, v)| (*k, v.value.clone())).collect()))
            .collect()
    }
}

/// Puts the peers saved at an earlier run back into the ring and gossip: known, but down until
/// they answer.
pub(super) fn restore_peers(storage: &Storage, membership: &Membership, gossiper: &mut Gossiper) {
    let peers = match storage.peers() {
        Ok(peers) => peers,
        Err(e) => {
            warn!(error = %e, "cannot read saved peers; learning the ring from gossip");
            return;
        }
    };
    let partitioner = membership.partitioner();
    for (key, peer) in peers {
        let Ok(ep) = key.parse::<Endpoint>() else { continue };
        if ep == membership.local() {
            continue;
        }
        let tokens: Vec<Token> = peer.tokens.iter().filter_map(|t| partitioner.token_from_string(t).ok()).collect();
        if !tokens.is_empty() {
            if let Err(e) = membership.update_ring(|ring| ring.update_normal_tokens(ep, tokens.clone())) {
                warn!(%ep, error = %e, "cannot restore a saved peer's tokens");
            }
        }
        if let (Some(dc), Some(rack)) = (&peer.data_center, &peer.rack) {
            membership.set_location(ep, dc, rack);
        }
        membership.update_peer(ep, |p| {
            p.rpc_address = peer.rpc_address.clone();
            p.host_id = peer.host_id.map(|h| h.to_string());
            p.release_version = peer.release_version.clone();
            p.schema_version = peer.schema_version.map(|v| v.to_string());
        });
        membership.set_alive(ep, false);
        let mut states = BTreeMap::new();
        states.insert(ApplicationState::Tokens, encode_tokens(partitioner, &tokens));
        states.insert(ApplicationState::Status, Status::Normal.to_string());
        for (state, value) in [
            (ApplicationState::Dc, peer.data_center),
            (ApplicationState::Rack, peer.rack),
            (ApplicationState::RpcAddress, peer.rpc_address),
            (ApplicationState::HostId, peer.host_id.map(|h| h.to_string())),
            (ApplicationState::ReleaseVersion, peer.release_version),
        ] {
            if let Some(value) = value {
                states.insert(state, value);
            }
        }
        gossiper.add_saved_endpoint(ep, states, Instant::now());
        debug!(%ep, "restored a saved peer");
    }
}

/// TOKENS as gossip carries them: the tokens' strings, as a JSON array (an order-preserving
/// partitioner's tokens may hold any character).
pub fn encode_tokens(partitioner: Partitioner, tokens: &[Token]) -> String {
    let strings: Vec<String> = tokens.iter().map(|t| partitioner.token_to_string(t)).collect();
    serde_json::to_string(&strings).unwrap_or_default()
}

pub fn decode_tokens(partitioner: Partitioner, value: &str) -> Vec<Token> {
    let strings: Vec<String> = serde_json::from_str(value).unwrap_or_default();
    strings.iter().filter_map(|s| partitioner.token_from_string(s).ok()).collect()
}
