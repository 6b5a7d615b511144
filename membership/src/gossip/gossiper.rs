//! The gossip state machine (Cassandra's `Gossiper` and the SYN/ACK/ACK2/shutdown verb handlers).
//!
//! Liveness follows Cassandra: the failure detector convicts, and a node is marked alive again
//! only once a round trip with it succeeded. Cassandra checks that round trip with an ECHO; having
//! only the gossip verbs, we send the node a SYN and count its ACK (or an ACK2, which also answers
//! one of our messages) as the proof. News of a node from a third party, or a SYN from the node
//! itself, only triggers that check.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use rand::rngs::StdRng;
use rand::seq::{IteratorRandom, SliceRandom};
use rand::{Rng, SeedableRng};

use super::messages::{GossipDigest, GossipMessage, RemoteState};
use super::state::{ApplicationState, EndpointState, HeartBeatState, Status, VersionedValue};
use super::{ECHO_INTERVAL, MAX_GENERATION_DIFFERENCE, QUARANTINE_DELAY};
use crate::failure_detector::{FailureDetector, DEFAULT_PHI_CONVICT_THRESHOLD};
use crate::Endpoint;

/// Messages to send: (destination, message).
pub type Outgoing = Vec<(Endpoint, GossipMessage)>;

/// What the gossiper needs besides its identity.
#[derive(Debug, Clone, PartialEq)]
pub struct GossipConfig {
    /// The partitioner's name; a SYN naming another is refused (an empty name is not checked).
    pub partitioner: String,
    /// Storage-conf's `PhiConvictThreshold` (default 8).
    pub phi_convict_threshold: f64,
    /// Seeds the choice of gossip partners, for reproducible tests; `None` seeds from the OS.
    pub rng_seed: Option<u64>,
}

impl GossipConfig {
    pub fn new(partitioner: impl Into<String>) -> Self {
        GossipConfig {
            partitioner: partitioner.into(),
            phi_convict_threshold: DEFAULT_PHI_CONVICT_THRESHOLD,
            rng_seed: None,
        }
    }

    pub fn phi_convict_threshold(mut self, threshold: f64) -> Self {
        self.phi_convict_threshold = threshold;
        self
    }

    pub fn rng_seed(mut self, seed: u64) -> Self {
        self.rng_seed = Some(seed);
        self
    }
}

/// What changed in this node's view of the cluster (Cassandra's `IEndpointStateChangeSubscriber`
/// callbacks). A node heard of for the first time gives `Joined`, one heard of with a new
/// generation `Restarted` (also a saved endpoint's first news); both are followed by a `Changed`
/// for each of its states, then `Alive` once it answers. `Alive` and `Dead` report transitions
/// only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GossipEvent {
    Joined { ep: Endpoint },
    Restarted { ep: Endpoint },
    Alive { ep: Endpoint },
    Dead { ep: Endpoint },
    Changed { ep: Endpoint, state: ApplicationState, value: String },
}

/// The messages and events produced by one call.
#[derive(Default)]
struct Effects {
    out: Outgoing,
    events: Vec<GossipEvent>,
}

/// One node's gossip: its own state, what it knows of every other endpoint, and the failure
/// detector. See the module documentation for how it is driven.
pub struct Gossiper {
    local: Endpoint,
    cluster_name: String,
    config: GossipConfig,
    /// Seeds other than ourselves.
    seeds: BTreeSet<Endpoint>,
    /// Every known endpoint, ourselves included. Live members are those with `alive` set,
    /// unreachable ones the others.
    endpoints: BTreeMap<Endpoint, EndpointState>,
    fd: FailureDetector,
    /// The last version handed out by this node's counter (Cassandra's `VersionGenerator`).
    version: i32,
    /// When we started, to bound believable generations.
    started: Instant,
    /// Endpoints removed recently, whose gossip is ignored for [`QUARANTINE_DELAY`].
    just_removed: BTreeMap<Endpoint, Instant>,
    /// When we last sent each endpoint a reachability check.
    echo_sent: BTreeMap<Endpoint, Instant>,
    /// Our STATUS before we announced our shutdown (`None`: we had announced none), restored
    /// by [`Gossiper::restart`].
    status_before_shutdown: Option<Option<String>>,
    rng: StdRng,
}

impl Gossiper {
    /// A gossiper for `local` in generation `generation` (seconds since the Unix epoch, above
    /// the previous start's). `seeds` may include `local`.
    pub fn new(
        local: Endpoint,
        cluster_name: impl Into<String>,
        generation: i32,
        seeds: Vec<Endpoint>,
        config: GossipConfig,
        now: Instant,
    ) -> Self {
        let mut own = EndpointState::new(HeartBeatState { generation, version: 0 }, now);
        own.alive = true;
        let rng = match config.rng_seed {
            Some(seed) => StdRng::seed_from_u64(seed),
            None => StdRng::from_entropy(),
        };
        Gossiper {
            local,
            cluster_name: cluster_name.into(),
            seeds: seeds.into_iter().filter(|s| *s != local).collect(),
            endpoints: BTreeMap::from([(local, own)]),
            fd: FailureDetector::new(config.phi_convict_threshold),
            config,
            version: 0,
            started: now,
            just_removed: BTreeMap::new(),
            echo_sent: BTreeMap::new(),
            status_before_shutdown: None,
            rng,
        }
    }

    pub fn local_endpoint(&self) -> Endpoint {
        self.local
    }

    pub fn cluster_name(&self) -> &str {
        &self.cluster_name
    }

    pub fn generation(&self) -> i32 {
        self.local_state().map_or(0, |s| s.heartbeat.generation)
    }

    fn local_state(&self) -> Option<&EndpointState> {
        self.endpoints.get(&self.local)
    }

    /// The next version of this node's counter. `i32::MAX` is kept for the shutdown marker.
    fn next_version(&mut self) -> i32 {
        self.version = self.version.saturating_add(1).min(i32::MAX - 1);
        self.version
    }

    /// Sets one of our own application states; it spreads with the next gossip rounds.
    pub fn add_local_state(&mut self, state: ApplicationState, value: impl Into<String>) {
        let version = self.next_version();
        if let Some(own) = self.endpoints.get_mut(&self.local) {
            own.states.insert(state, VersionedValue { value: value.into(), version });
        }
    }

    /// Registers a peer remembered from the system keyspace at start-up: known, gossiped to
    /// now and then as an unreachable member, but not alive until it answers. Its states (DC,
    /// rack, tokens, ...) get version 0 and generation 0, so anything the node itself says wins.
    pub fn add_saved_endpoint(&mut self, ep: Endpoint, states: BTreeMap<ApplicationState, String>, now: Instant) {
        if ep == self.local {
            tracing::debug!(%ep, "not adding ourselves as a saved endpoint");
            return;
        }
        let state = self
            .endpoints
            .entry(ep)
            .or_insert_with(|| EndpointState::new(HeartBeatState { generation: 0, version: 0 }, now));
        state.heartbeat = HeartBeatState { generation: 0, version: 0 };
        state.alive = false;
        for (key, value) in states {
            state.states.entry(key).or_insert(VersionedValue { value, version: 0 });
        }
    }

    /// One gossip round, to be called every [`GOSSIP_INTERVAL`](super::GOSSIP_INTERVAL)
    /// (Cassandra's `GossipTask`): bump our heartbeat, send a SYN to a random live member, maybe to
    /// an unreachable member and maybe to a seed, then let the failure detector judge every peer.
    pub fn tick(&mut self, now: Instant) -> (Outgoing, Vec<GossipEvent>) {
        let mut fx = Effects::default();
        let version = self.next_version();
        if let Some(own) = self.endpoints.get_mut(&self.local) {
            own.heartbeat.version = version;
            own.last_update = now;
        }
        let syn = self.make_syn();
        let gossiped_to_seed = self.gossip_to_live_member(&syn, &mut fx);
        self.maybe_gossip_to_unreachable_member(&syn, &mut fx);
        // Gossip to a seed if we did not already, or if we see fewer live nodes than there are
        // seeds (a partition may be healing): Cassandra's rule (CASSANDRA-150).
        if !gossiped_to_seed || self.live_peers().count() < self.seeds.len() {
            self.maybe_gossip_to_seed(&syn, &mut fx);
        }
        self.status_check(now, &mut fx);
        (fx.out, fx.events)
    }

    /// A SYN to every live member at once (not part of Cassandra's rounds): sent right after a
    /// change of our own STATUS, it brings that change to every live node in one exchange
    /// (their ACK asks for it, our ACK2 carries it), where gossip's random rounds may take a
    /// few seconds, longer than a short `RingDelayInMillis`.
    pub fn syn_to_live_members(&mut self) -> Outgoing {
        let syn = self.make_syn();
        let live: Vec<Endpoint> = self.live_peers().collect();
        live.into_iter().map(|to| (to, syn.clone())).collect()
    }

    fn live_peers(&self) -> impl Iterator<Item = Endpoint> + '_ {
        self.endpoints.iter().filter(|(ep, s)| **ep != self.local && s.alive).map(|(ep, _)| *ep)
    }

    fn unreachable_peers(&self) -> impl Iterator<Item = Endpoint> + '_ {
        self.endpoints.iter().filter(|(ep, s)| **ep != self.local && !s.alive).map(|(ep, _)| *ep)
    }

    /// A SYN with a digest of every endpoint we know, in random order so that, should a receiver
    /// ever cut an answer short, no endpoint is always last.
    fn make_syn(&mut self) -> GossipMessage {
        let mut digests: Vec<GossipDigest> = self
            .endpoints
            .iter()
            .map(|(ep, s)| GossipDigest {
                endpoint: *ep,
                generation: s.heartbeat.generation,
                max_version: s.max_version(),
            })
            .collect();
        digests.shuffle(&mut self.rng);
        GossipMessage::Syn {
            cluster_name: self.cluster_name.clone(),
            partitioner: self.config.partitioner.clone(),
            digests,
        }
    }

    /// Sends to a random live member; says whether it was a seed.
    fn gossip_to_live_member(&mut self, syn: &GossipMessage, fx: &mut Effects) -> bool {
        let live: Vec<Endpoint> = self.live_peers().collect();
        match live.choose(&mut self.rng) {
            Some(to) => {
                fx.out.push((*to, syn.clone()));
                self.seeds.contains(to)
            }
            None => false,
        }
    }

    /// With probability unreachable / (live + 1), sends to a random unreachable member to see
    /// whether it is back. Like Cassandra 4, members in a dead state (LEFT...) are not tried.
    fn maybe_gossip_to_unreachable_member(&mut self, syn: &GossipMessage, fx: &mut Effects) {
        let live = self.live_peers().count() as f64;
        let unreachable = self.unreachable_peers().count() as f64;
        if unreachable == 0.0 || self.rng.gen::<f64>() >= unreachable / (live + 1.0) {
            return;
        }
        let candidates = self.endpoints.iter().filter(|(ep, s)| **ep != self.local && !s.alive && !s.is_dead_state());
        if let Some((to, _)) = candidates.choose(&mut self.rng) {
            fx.out.push((*to, syn.clone()));
        }
    }

    /// Sends to a random seed: always while we know no live member, otherwise with probability
    /// seeds / (live + unreachable).
    fn maybe_gossip_to_seed(&mut self, syn: &GossipMessage, fx: &mut Effects) {
        if self.seeds.is_empty() {
            return;
        }
        let live = self.live_peers().count();
        if live > 0 {
            let known = (live + self.unreachable_peers().count()) as f64;
            if self.rng.gen::<f64>() > self.seeds.len() as f64 / known {
                return;
            }
        }
        if let Some(to) = self.seeds.iter().choose(&mut self.rng) {
            fx.out.push((*to, syn.clone()));
        }
    }

    /// Asks the failure detector about every peer and marks the convicted down (Cassandra's
    /// `doStatusCheck`), and ends quarantines that are over.
    fn status_check(&mut self, now: Instant, fx: &mut Effects) {
        let peers: Vec<Endpoint> = self.endpoints.keys().filter(|ep| **ep != self.local).copied().collect();
        for ep in peers {
            if let Some(phi) = self.fd.interpret(&ep, now) {
                self.convict(ep, phi, fx);
            }
        }
        self.just_removed.retain(|_, at| now.saturating_duration_since(*at) <= QUARANTINE_DELAY);
        self.echo_sent.retain(|_, at| now.saturating_duration_since(*at) < ECHO_INTERVAL);
    }

    fn convict(&mut self, ep: Endpoint, phi: f64, fx: &mut Effects) {
        let Some(state) = self.endpoints.get(&ep) else { return };
        if !state.alive {
            return;
        }
        tracing::debug!(%ep, phi, "convicting");
        if state.is_shutdown() {
            self.mark_as_shutdown(ep, fx);
        } else {
            self.mark_dead(ep, fx);
        }
    }

    /// Handles one gossip message from `from` (the messaging layer's sender address).
    pub fn handle(&mut self, from: Endpoint, message: GossipMessage, now: Instant) -> (Outgoing, Vec<GossipEvent>) {
        let mut fx = Effects::default();
        if from == self.local {
            tracing::warn!(%from, "ignoring a gossip message from ourselves");
            return (fx.out, fx.events);
        }
        match message {
            GossipMessage::Syn { cluster_name, partitioner, digests } => {
                self.handle_syn(from, &cluster_name, &partitioner, digests, now, &mut fx)
            }
            GossipMessage::Ack { digests, states } => self.handle_ack(from, digests, states, now, &mut fx),
            GossipMessage::Ack2 { states } => {
                self.notify_and_apply(from, states, now, &mut fx);
                self.heard_from(from, true, now, &mut fx);
            }
            GossipMessage::Shutdown { generation } => self.handle_shutdown(from, generation, &mut fx),
        }
        (fx.out, fx.events)
    }

    /// SYN: refuse other clusters; answer with the digests we need and the states `from` lacks.
    fn handle_syn(
        &mut self,
        from: Endpoint,
        cluster_name: &str,
        partitioner: &str,
        mut digests: Vec<GossipDigest>,
        now: Instant,
        fx: &mut Effects,
    ) {
        if cluster_name != self.cluster_name {
            tracing::warn!(%from, theirs = cluster_name, ours = %self.cluster_name, "ClusterName mismatch: SYN refused");
            return;
        }
        if !partitioner.is_empty() && !self.config.partitioner.is_empty() && partitioner != self.config.partitioner {
            tracing::warn!(%from, theirs = partitioner, ours = %self.config.partitioner, "partitioner mismatch: SYN refused");
            return;
        }
        self.heard_from(from, false, now, fx);
        self.sort_by_distance(&mut digests);
        let mut requests = Vec::new();
        let mut states = Vec::new();
        for digest in digests {
            self.examine(digest, &mut requests, &mut states);
        }
        // An ACK goes back even when empty: it is the round trip that proves we are reachable.
        fx.out.push((from, GossipMessage::Ack { digests: requests, states }));
    }

    /// Orders digests by how far our version of the endpoint is from theirs, farthest first, so
    /// the most out-of-date endpoints are settled first (Cassandra's `doSort`).
    fn sort_by_distance(&self, digests: &mut [GossipDigest]) {
        digests.sort_by_cached_key(|d| {
            let ours = self.endpoints.get(&d.endpoint).map_or(0, EndpointState::max_version);
            let distance = (i64::from(ours) - i64::from(d.max_version)).abs();
            std::cmp::Reverse((d.generation, distance))
        });
    }

    /// Compares one remote digest with what we know (Cassandra's `examineGossiper`): request
    /// what they have newer, send what we have newer.
    fn examine(
        &self,
        digest: GossipDigest,
        requests: &mut Vec<GossipDigest>,
        states: &mut Vec<(Endpoint, RemoteState)>,
    ) {
        let ep = digest.endpoint;
        if self.just_removed.contains_key(&ep) {
            return;
        }
        let Some(ours) = self.endpoints.get(&ep) else {
            requests.push(GossipDigest { endpoint: ep, generation: digest.generation, max_version: 0 });
            return;
        };
        let (generation, max_version) = (ours.heartbeat.generation, ours.max_version());
        if digest.generation == generation && digest.max_version == max_version {
            return;
        }
        let theirs_newer =
            digest.generation > generation || (digest.generation == generation && digest.max_version > max_version);
        if theirs_newer {
            // We are the authority on ourselves: a peer claiming a newer us is only echoing a
            // shutdown marker it set (or a bug), never something to adopt.
            if ep != self.local {
                let from_version = if digest.generation > generation { 0 } else { max_version };
                requests.push(GossipDigest { endpoint: ep, generation: digest.generation, max_version: from_version });
            }
        } else {
            let since = if digest.generation < generation { 0 } else { digest.max_version };
            if let Some(state) = self.state_newer_than(&ep, since) {
                states.push((ep, state));
            }
        }
    }

    /// Our heartbeat and states of `ep` with versions above `version` (Cassandra's
    /// `getStateForVersionBiggerThan`). The heartbeat always travels with newer states, even if
    /// it is older itself: the receiver needs the generation.
    fn state_newer_than(&self, ep: &Endpoint, version: i32) -> Option<RemoteState> {
        let ours = self.endpoints.get(ep)?;
        let states: BTreeMap<_, _> =
            ours.states.iter().filter(|(_, v)| v.version > version).map(|(k, v)| (*k, v.clone())).collect();
        (ours.heartbeat.version > version || !states.is_empty())
            .then_some(RemoteState { heartbeat: ours.heartbeat, states })
    }

    /// ACK: apply the states it brings, send back the states it asked for.
    fn handle_ack(
        &mut self,
        from: Endpoint,
        digests: Vec<GossipDigest>,
        states: Vec<(Endpoint, RemoteState)>,
        now: Instant,
        fx: &mut Effects,
    ) {
        self.notify_and_apply(from, states, now, fx);
        self.heard_from(from, true, now, fx);
        let reply: Vec<(Endpoint, RemoteState)> = digests
            .iter()
            .filter_map(|d| self.state_newer_than(&d.endpoint, d.max_version).map(|s| (d.endpoint, s)))
            .collect();
        if !reply.is_empty() {
            fx.out.push((from, GossipMessage::Ack2 { states: reply }));
        }
    }

    /// GOSSIP_SHUTDOWN: the sender is down from now on, unless the message comes from an
    /// incarnation we no longer know.
    fn handle_shutdown(&mut self, from: Endpoint, generation: i32, fx: &mut Effects) {
        match self.endpoints.get(&from) {
            Some(state) if state.heartbeat.generation == generation => {
                tracing::info!(%from, "peer announced its shutdown");
                self.mark_as_shutdown(from, fx);
            }
            _ => tracing::debug!(%from, generation, "ignoring a shutdown announcement for an unknown incarnation"),
        }
    }

    /// `from` answered one of our messages (`round_trip`) or sent us a SYN: if we thought it down,
    /// it is alive again after a round trip, or gets a reachability check otherwise.
    fn heard_from(&mut self, from: Endpoint, round_trip: bool, now: Instant, fx: &mut Effects) {
        let Some(state) = self.endpoints.get(&from) else { return };
        if state.alive || state.is_dead_state() || state.is_shutdown() {
            return;
        }
        if round_trip {
            self.mark_alive(from, now, fx);
        } else {
            self.maybe_echo(from, fx, now);
        }
    }

    /// Sends `ep` a SYN to learn whether it is reachable, at most once per [`ECHO_INTERVAL`].
    fn maybe_echo(&mut self, ep: Endpoint, fx: &mut Effects, now: Instant) {
        if self.echo_sent.get(&ep).is_some_and(|at| now.saturating_duration_since(*at) < ECHO_INTERVAL) {
            return;
        }
        self.echo_sent.insert(ep, now);
        let syn = self.make_syn();
        fx.out.push((ep, syn));
    }

    fn notify_and_apply(
        &mut self,
        from: Endpoint,
        states: Vec<(Endpoint, RemoteState)>,
        now: Instant,
        fx: &mut Effects,
    ) {
        for (ep, remote) in &states {
            self.notify_failure_detector(*ep, remote, now);
        }
        for (ep, remote) in states {
            self.apply_state(from, ep, remote, now, fx);
        }
    }

    /// Reports `ep` to the failure detector if `remote` is news: a new generation, or a heartbeat
    /// above every version we hold (Cassandra's `notifyFailureDetector`).
    fn notify_failure_detector(&mut self, ep: Endpoint, remote: &RemoteState, now: Instant) {
        if ep == self.local {
            return;
        }
        let Some(ours) = self.endpoints.get_mut(&ep) else { return };
        if remote.heartbeat.generation > ours.heartbeat.generation {
            ours.last_update = now;
            // A restart of a node we thought down: its old intervals say nothing about the new
            // incarnation.
            if !ours.alive {
                self.fd.remove(&ep);
            }
            self.fd.report(ep, now);
        } else if remote.heartbeat.generation == ours.heartbeat.generation
            && remote.heartbeat.version > ours.max_version()
        {
            ours.last_update = now;
            self.fd.report(ep, now);
        }
    }

    /// Merges one endpoint's remote state into ours (Cassandra's `applyStateLocally`).
    fn apply_state(&mut self, from: Endpoint, ep: Endpoint, remote: RemoteState, now: Instant, fx: &mut Effects) {
        if ep == self.local {
            return;
        }
        if let Some(at) = self.just_removed.get(&ep) {
            if now.saturating_duration_since(*at) <= QUARANTINE_DELAY {
                tracing::trace!(%ep, "ignoring gossip about a quarantined endpoint");
                return;
            }
        }
        let Some(ours) = self.endpoints.get(&ep) else {
            // A node we never heard of.
            self.fd.report(ep, now);
            self.handle_major_state_change(from, ep, remote, now, fx);
            return;
        };
        let (generation, max_version) = (ours.heartbeat.generation, ours.max_version());
        let remote_generation = i64::from(remote.heartbeat.generation);
        let elapsed = i64::try_from(now.saturating_duration_since(self.started).as_secs()).unwrap_or(i64::MAX);
        let believable = i64::from(self.generation()).saturating_add(elapsed).saturating_add(MAX_GENERATION_DIFFERENCE);
        if remote_generation > believable {
            tracing::warn!(%ep, remote_generation, "ignoring an unbelievable gossip generation");
        } else if remote.heartbeat.generation > generation {
            self.handle_major_state_change(from, ep, remote, now, fx);
        } else if remote.heartbeat.generation == generation {
            let newer = remote.max_version() > max_version;
            if newer {
                self.apply_new_states(ep, remote, now, fx);
            }
            // Heard from, first or second hand: was it down?
            if ep == from {
                self.heard_from(ep, true, now, fx);
            } else if newer {
                self.heard_from(ep, false, now, fx);
            }
        } else {
            tracing::trace!(%ep, remote_generation, generation, "ignoring an older generation");
        }
    }

    /// A node we did not know, or a new incarnation of one we did: its state replaces ours
    /// whole (Cassandra's `handleMajorStateChange`).
    fn handle_major_state_change(
        &mut self,
        from: Endpoint,
        ep: Endpoint,
        remote: RemoteState,
        now: Instant,
        fx: &mut Effects,
    ) {
        let previous = self.endpoints.remove(&ep);
        let was_alive = previous.as_ref().is_some_and(|s| s.alive);
        let state =
            EndpointState { heartbeat: remote.heartbeat, states: remote.states, alive: was_alive, last_update: now };
        let (dead_state, shutdown) = (state.is_dead_state(), state.is_shutdown());
        if previous.is_some() {
            if !dead_state {
                tracing::info!(%ep, "node has restarted");
            }
            fx.events.push(GossipEvent::Restarted { ep });
        } else {
            if !dead_state {
                tracing::info!(%ep, "node is now part of the cluster");
            }
            fx.events.push(GossipEvent::Joined { ep });
        }
        for (key, value) in &state.states {
            fx.events.push(GossipEvent::Changed { ep, state: *key, value: value.value.clone() });
        }
        self.endpoints.insert(ep, state);
        if dead_state {
            tracing::debug!(%ep, "not marking alive due to dead state");
            self.mark_dead(ep, fx);
        } else if shutdown {
            self.mark_as_shutdown(ep, fx);
        } else if !was_alive {
            self.heard_from(ep, ep == from, now, fx);
        }
    }

    /// Takes the states of `remote` newer than ours, within the same generation.
    fn apply_new_states(&mut self, ep: Endpoint, remote: RemoteState, now: Instant, fx: &mut Effects) {
        let Some(ours) = self.endpoints.get_mut(&ep) else { return };
        if remote.heartbeat.version > ours.heartbeat.version {
            ours.heartbeat = remote.heartbeat;
        }
        let mut shutdown = false;
        for (key, value) in remote.states {
            if ours.states.get(&key).is_some_and(|v| v.version >= value.version) {
                continue;
            }
            if key == ApplicationState::Status && matches!(value.value.parse(), Ok(Status::Shutdown)) {
                shutdown = true;
            }
            fx.events.push(GossipEvent::Changed { ep, state: key, value: value.value.clone() });
            ours.states.insert(key, value);
        }
        ours.last_update = now;
        if shutdown {
            self.mark_as_shutdown(ep, fx);
        }
    }

    fn mark_alive(&mut self, ep: Endpoint, now: Instant, fx: &mut Effects) {
        let Some(state) = self.endpoints.get_mut(&ep) else { return };
        if state.alive {
            return;
        }
        state.alive = true;
        state.last_update = now;
        // Restart the silence from the proof of life, unless a fresh heartbeat already did (a
        // second report at the same instant would record a zero interval).
        if self.fd.phi(&ep, now).is_none() || self.fd.is_convicted(&ep, now) {
            self.fd.report(ep, now);
        }
        self.echo_sent.remove(&ep);
        tracing::info!(%ep, "node is now UP");
        fx.events.push(GossipEvent::Alive { ep });
    }

    fn mark_dead(&mut self, ep: Endpoint, fx: &mut Effects) {
        let Some(state) = self.endpoints.get_mut(&ep) else { return };
        if !state.alive {
            return;
        }
        state.alive = false;
        tracing::info!(%ep, "node is now DOWN");
        fx.events.push(GossipEvent::Dead { ep });
    }

    /// Marks `ep` down as shut down, with its STATUS and heartbeat at the highest version, so no
    /// later news of the same generation can bring it back: only a restart can (Cassandra's
    /// `markAsShutdown`). The marker spreads through gossip like any newer state.
    fn mark_as_shutdown(&mut self, ep: Endpoint, fx: &mut Effects) {
        let Some(state) = self.endpoints.get_mut(&ep) else { return };
        let value = Status::Shutdown.to_string();
        if state.value(ApplicationState::Status) != Some(value.as_str()) {
            fx.events.push(GossipEvent::Changed { ep, state: ApplicationState::Status, value: value.clone() });
        }
        state.states.insert(ApplicationState::Status, VersionedValue { value, version: i32::MAX });
        state.heartbeat.version = i32::MAX;
        self.mark_dead(ep, fx);
    }

    /// Announces our shutdown (Cassandra's `Gossiper.stop`): sets our STATUS to shutdown and
    /// returns a SHUTDOWN message for every live member, which marks us down at once instead of
    /// after the failure detector's ~20 s. The caller should keep gossiping for a moment (Cassandra
    /// waits 2 s) so members it could not reach hear the status.
    pub fn shutdown_message(&mut self) -> Outgoing {
        if self.status_before_shutdown.is_none() {
            let status = self.local_state().and_then(|s| s.value(ApplicationState::Status)).map(str::to_string);
            self.status_before_shutdown = Some(status);
        }
        self.add_local_state(ApplicationState::Status, Status::Shutdown.to_string());
        let generation = self.generation();
        self.live_peers().map(|ep| (ep, GossipMessage::Shutdown { generation })).collect()
    }

    /// Starts a new incarnation of this node after it announced its shutdown and stopped
    /// gossiping while its process went on (`nodetool disablegossip`, then `enablegossip`):
    /// Cassandra's `forceNewerGeneration` before `Gossiper.start`. Peers keep our old
    /// generation marked shut down, which no news of that generation can undo; a newer one
    /// makes them take our state whole and mark us alive once we answer. The generation becomes
    /// `generation`, at least one above the current one; STATUS goes back to what it was before
    /// the shutdown announcement. Peers we saw alive start a fresh failure-detector history, as
    /// if just heard from: the silence while we did not gossip is ours, not theirs, and must
    /// neither convict them nor be taken for a pause of this process.
    pub fn restart(&mut self, generation: i32, now: Instant) {
        let generation = generation.max(self.generation().saturating_add(1));
        let version = self.next_version();
        let status = self.status_before_shutdown.take();
        let status_version = self.next_version();
        if let Some(own) = self.endpoints.get_mut(&self.local) {
            own.heartbeat = HeartBeatState { generation, version };
            own.last_update = now;
            match status {
                Some(Some(value)) => {
                    own.states.insert(ApplicationState::Status, VersionedValue { value, version: status_version });
                }
                Some(None) => {
                    own.states.remove(&ApplicationState::Status);
                }
                None => {}
            }
        }
        let live: Vec<Endpoint> = self.live_peers().collect();
        for ep in live {
            self.fd.remove(&ep);
            self.fd.report(ep, now);
        }
        self.fd.forget_last_interpret();
        self.echo_sent.clear();
        tracing::info!(generation, "gossiping again with a newer generation");
    }

    /// Speaks for a dead peer, as removenode must (Cassandra's `advertiseTokenRemoved`): gives
    /// `ep` a generation above any it had, so every node takes its state whole, with STATUS
    /// `status` (REMOVING while its ranges are restored elsewhere, then REMOVED). Both are dead
    /// states: nobody marks it alive for it. Returns the events of that change here; `None` for
    /// ourselves, an unknown peer or one that is alive.
    pub fn advertise_for(&mut self, ep: Endpoint, status: Status, now: Instant) -> Option<Vec<GossipEvent>> {
        if ep == self.local || !status.is_dead_state() {
            return None;
        }
        let state = self.endpoints.get(&ep).filter(|s| !s.alive)?;
        let heartbeat =
            HeartBeatState { generation: state.heartbeat.generation.saturating_add(1), version: state.max_version() };
        let mut states = state.states.clone();
        states.insert(
            ApplicationState::Status,
            VersionedValue { value: status.to_string(), version: heartbeat.version.saturating_add(1) },
        );
        let mut fx = Effects::default();
        self.handle_major_state_change(self.local, ep, RemoteState { heartbeat, states }, now, &mut fx);
        Some(fx.events)
    }

    /// Forgets `ep` (a LEFT node past its expiry, or removenode) and ignores gossip about it for
    /// [`QUARANTINE_DELAY`], so peers that have not forgotten it yet cannot bring it back.
    pub fn remove_endpoint(&mut self, ep: Endpoint, now: Instant) -> Option<EndpointState> {
        if ep == self.local {
            return None;
        }
        self.fd.remove(&ep);
        self.seeds.remove(&ep);
        self.echo_sent.remove(&ep);
        self.just_removed.insert(ep, now);
        tracing::debug!(%ep, "removing endpoint");
        self.endpoints.remove(&ep)
    }

    /// Down endpoints whose LEFT or removed status has expired at `unix_millis` (wall-clock
    /// milliseconds since the epoch): candidates for [`Gossiper::remove_endpoint`].
    pub fn expired_endpoints(&self, unix_millis: u64) -> Vec<Endpoint> {
        self.endpoints
            .iter()
            .filter(|(ep, s)| **ep != self.local && !s.alive)
            .filter(|(_, s)| s.status().and_then(Status::expire_at_ms).is_some_and(|at| at < unix_millis))
            .map(|(ep, _)| *ep)
            .collect()
    }

    /// Live endpoints, ourselves included (Cassandra's `getLiveMembers`).
    pub fn live_members(&self) -> Vec<Endpoint> {
        self.endpoints.iter().filter(|(_, s)| s.alive).map(|(ep, _)| *ep).collect()
    }

    /// Known endpoints we consider down.
    pub fn unreachable_members(&self) -> Vec<Endpoint> {
        self.unreachable_peers().collect()
    }

    pub fn endpoint_state(&self, ep: &Endpoint) -> Option<&EndpointState> {
        self.endpoints.get(ep)
    }

    /// Every known endpoint and its state, ourselves included.
    pub fn endpoint_states(&self) -> impl Iterator<Item = (&Endpoint, &EndpointState)> {
        self.endpoints.iter()
    }

    pub fn is_alive(&self, ep: &Endpoint) -> bool {
        self.endpoints.get(ep).is_some_and(|s| s.alive)
    }

    pub fn failure_detector(&self) -> &FailureDetector {
        &self.fd
    }
}
