//! Joining the cluster and following it (Cassandra's StorageService): gossip runs on the
//! messaging service, this node announces its state (status, tokens, addresses, location, schema
//! version, load), and what gossip reports of other nodes becomes the ring and the liveness the
//! coordinator works with ([`Membership`]).
//!
//! ```text
//! gossip_loop: every GOSSIP_INTERVAL  gossiper.tick → SYNs to peers, convictions
//! GossipSyn/Ack/Ack2 verbs            gossiper.handle → replies, events
//! events → Membership                 NORMAL+TOKENS: ring member; BOOT: pending tokens;
//!                                     LEAVING; MOVING,token; LEFT/removed: out of the ring;
//!                                     up/down; DC/rack;
//!                                     rpc address, host id, load, schema version
//! ```
//!
//! A node joining with `AutoBootstrap` announces its tokens as bootstrapping, fetches its
//! ranges' data from their current replicas, then announces NORMAL; without it, it announces
//! NORMAL at once. Decommission, removenode and move announce LEAVING, removing and MOVING
//! while their data moves (the admin operations in the server drive them). An operator may stop
//! gossip while the node runs and start it again (`disablegossip`, `enablegossip`: see
//! [`StorageService::stop_gossiping`]).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use storage::dht::{Partitioner, Token};
use storage::engine::Storage;
use storage::system::PeerInfo;
use tokio::sync::watch;
use tracing::{debug, info, warn};

use crate::gossip::{
    ApplicationState, GossipConfig, GossipEvent, GossipMessage, Gossiper, Outgoing, Status, GOSSIP_INTERVAL,
};
use crate::join::{GossipView, PeerView};
use crate::membership::Membership;
use crate::net::{MessagingService, Responder, Verb, VerbHandler};
use crate::schema_sync::SchemaSync;
use crate::token_metadata::{choose_token, random_tokens};
use crate::Endpoint;

/// How often this node republishes its load.
const LOAD_INTERVAL: Duration = Duration::from_secs(60);

/// Longest a stopping node (or one that stops gossiping) waits for its shutdown announcement to
/// be written to its peers: about Cassandra's two gossip intervals of grace.
pub const SHUTDOWN_ANNOUNCEMENT_GRACE: Duration = Duration::from_secs(2);

/// What the node tells the cluster about itself.
#[derive(Clone, Debug)]
pub struct Announcement {
    pub cluster_name: String,
    pub seeds: Vec<Endpoint>,
    pub generation: i32,
    pub phi_convict_threshold: f64,
    pub rpc_address: String,
    pub host_id: String,
    pub release_version: String,
    /// KB/s of hints replayed to a node that came back (HintedHandoffThrottleInKB; 0 = no limit).
    pub hint_throttle_kb: u32,
    /// How long a change of this node's status takes to reach every node (RingDelayInMillis).
    pub ring_delay: Duration,
    /// A first start that will bootstrap: it says BOOT from its first gossip round, before it
    /// knows its tokens, so peers need not hold writes for it (its ranges' data is fetched
    /// once it announces them; see [`crate::join`]).
    pub bootstrapping: bool,
}

pub struct StorageService {
    membership: Arc<Membership>,
    messaging: Arc<MessagingService>,
    storage: Storage,
    gossiper: Mutex<Gossiper>,
    schema: Arc<SchemaSync>,
    /// The schema version last announced in gossip.
    announced_schema: Mutex<String>,
    /// Stops the background loops (hint delivery; gossip's has its own in `gossip`).
    stop: watch::Sender<bool>,
    ring_delay: Duration,
    /// This node announced LEFT (decommissioned): it says nothing more, not even its shutdown.
    left: AtomicBool,
    /// Whether gossip runs. Taken before `gossiper` by whoever takes both; held only briefly
    /// (never across an await).
    gossip: Mutex<GossipRun>,
    /// Hint delivery paused by the operator (`sibyltool pausehandoff`); hints are still kept.
    hints_paused: Arc<AtomicBool>,
}

/// Whether this node gossips.
enum GossipRun {
    /// Rounds every [`GOSSIP_INTERVAL`] and answers to peers; the sender stops the round loop.
    Running(watch::Sender<bool>),
    /// Stopped by the operator (`disablegossip`) after announcing the shutdown; may start again.
    Stopped,
    /// Stopped for good: the node shuts down, or has left the ring.
    Ended,
}

/// Why gossip cannot start again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GossipStartError {
    #[error("gossip cannot start again: the node is shutting down or has left the ring")]
    Ended,
}

impl StorageService {
    /// Starts gossip for this node (not yet announcing a status: see [`StorageService::join`]).
    pub fn start(
        storage: Storage,
        membership: Arc<Membership>,
        messaging: Arc<MessagingService>,
        me: &Announcement,
    ) -> Arc<StorageService> {
        let partitioner = membership.partitioner();
        let config = GossipConfig::new(partitioner.class_name()).phi_convict_threshold(me.phi_convict_threshold);
        let mut gossiper = Gossiper::new(
            membership.local(),
            me.cluster_name.clone(),
            me.generation,
            me.seeds.clone(),
            config,
            Instant::now(),
        );
        let location = membership.snitch().location(membership.local());
        gossiper.add_local_state(ApplicationState::Dc, location.datacenter);
        gossiper.add_local_state(ApplicationState::Rack, location.rack);
        gossiper.add_local_state(ApplicationState::RpcAddress, me.rpc_address.clone());
        gossiper.add_local_state(ApplicationState::HostId, me.host_id.clone());
        gossiper.add_local_state(ApplicationState::ReleaseVersion, me.release_version.clone());
        let schema_version = storage.schema_version().to_string();
        gossiper.add_local_state(ApplicationState::SchemaVersion, schema_version.clone());
        gossiper.add_local_state(ApplicationState::Load, storage.load_bytes().to_string());
        if me.bootstrapping {
            gossiper.add_local_state(ApplicationState::Status, Status::Boot.to_string());
        }
        let (stop, _) = watch::channel(false);
        let (gossip_stop, gossip_stopped) = watch::channel(false);
        restore_peers(&storage, &membership, &mut gossiper);
        let schema = SchemaSync::register(storage.clone(), messaging.clone());
        let service = Arc::new(StorageService {
            membership,
            messaging,
            storage,
            gossiper: Mutex::new(gossiper),
            schema,
            announced_schema: Mutex::new(schema_version),
            stop,
            ring_delay: me.ring_delay,
            left: AtomicBool::new(false),
            gossip: Mutex::new(GossipRun::Running(gossip_stop)),
            hints_paused: Arc::new(AtomicBool::new(false)),
        });
        for verb in [Verb::GossipSyn, Verb::GossipAck, Verb::GossipAck2] {
            service.messaging.register(verb, Arc::new(GossipHandler(Arc::downgrade(&service))));
        }
        tokio::spawn(gossip_loop(Arc::downgrade(&service), gossip_stopped));
        tokio::spawn(crate::hints::delivery_loop(
            service.storage.clone(),
            service.messaging.clone(),
            service.membership.clone(),
            me.hint_throttle_kb,
            service.hints_paused.clone(),
            service.stop.subscribe(),
        ));
        service
    }

    pub fn membership(&self) -> &Arc<Membership> {
        &self.membership
    }

    /// How schema changes spread (the coordinator pushes its changes through it).
    pub fn schema_sync(&self) -> &Arc<SchemaSync> {
        &self.schema
    }

    /// Learns the ring from the seeds for at most `wait` (until a seed answered and two more
    /// rounds passed), then returns tokens for a node joining it: `count` of them, the first
    /// splitting the most loaded range (or random when the ring is empty or has one node).
    pub async fn choose_tokens(&self, count: usize, wait: Duration) -> Vec<Token> {
        self.learn_ring(wait).await;
        let ring = self.membership.ring();
        let partitioner = self.membership.partitioner();
        if count <= 1 {
            vec![choose_token(partitioner, &ring)]
        } else {
            random_tokens(partitioner, count, &ring)
        }
    }

    /// Listens to gossip for at most `wait`: until another node is known and two more rounds
    /// passed, so this node has the ring as the seeds see it. False when nobody was heard of.
    pub async fn learn_ring(&self, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        let mut heard_at: Option<Instant> = None;
        while Instant::now() < deadline {
            let known = self.membership.all_endpoints().len() > 1;
            match (known, heard_at) {
                (true, None) => heard_at = Some(Instant::now()),
                (true, Some(at)) if at.elapsed() >= 2 * GOSSIP_INTERVAL => return true,
                _ => {}
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        heard_at.is_some()
    }

    /// Announces `tokens` as this node's bootstrap tokens: every node (this one too) then sends
    /// it the writes of the ranges it is taking, while it fetches their older data
    /// ([`crate::coordinator::Coordinator::fetch_pending_ranges`]). [`StorageService::join`]
    /// ends the bootstrap.
    pub fn announce_bootstrap(&self, tokens: &[Token]) {
        let partitioner = self.membership.partitioner();
        let local = self.membership.local();
        if let Err(e) = self.membership.update_ring(|ring| ring.add_bootstrap_tokens(local, tokens.to_vec())) {
            warn!(error = %e, "could not take this node's bootstrap tokens into the ring");
        }
        let mut g = self.gossiper.lock();
        g.add_local_state(ApplicationState::Tokens, encode_tokens(partitioner, tokens));
        g.add_local_state(ApplicationState::Status, Status::Boot.to_string());
        drop(g);
        self.push_own_state();
        info!(tokens = tokens.len(), "bootstrapping: announced this node's tokens");
    }

    /// Waits, at most `limit`, until the ring has a member other than this node (gossip has
    /// told it of the cluster it joins). False when none showed up.
    pub async fn wait_for_ring(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let local = self.membership.local();
        loop {
            if self.membership.ring().sorted_owners().iter().any(|ep| *ep != local) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits, at most `limit`, until every live node reports this node's schema version (a
    /// new node learns the schema from its peers through gossip); the versions seen otherwise.
    pub async fn wait_for_schema_agreement(&self, limit: Duration) -> Result<(), String> {
        let deadline = Instant::now() + limit;
        loop {
            let versions = self.schema.versions(&self.membership, Duration::from_secs(2)).await;
            let reachable: Vec<&String> = versions.keys().filter(|v| *v != "UNREACHABLE").collect();
            if reachable.len() == 1 {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!("schema versions still disagree after {limit:?}: {versions:?}"));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Takes `tokens` and announces this node as a NORMAL member of the ring.
    pub fn join(&self, tokens: Vec<Token>) {
        let partitioner = self.membership.partitioner();
        let local = self.membership.local();
        if let Err(e) = self.membership.update_ring(|ring| ring.update_normal_tokens(local, tokens.clone())) {
            warn!(error = %e, "could not take this node's tokens into the ring");
        }
        let mut g = self.gossiper.lock();
        g.add_local_state(ApplicationState::Tokens, encode_tokens(partitioner, &tokens));
        g.add_local_state(ApplicationState::Status, Status::Normal.to_string());
        drop(g);
        self.push_own_state();
        info!(tokens = tokens.len(), "joined the ring as a normal member");
    }

    /// Tells the cluster this node's schema version when it changed (a local change, or a merge
    /// of another node's rows).
    fn announce_schema_version(&self) {
        let version = self.storage.schema_version().to_string();
        let mut announced = self.announced_schema.lock();
        if *announced != version {
            self.gossiper.lock().add_local_state(ApplicationState::SchemaVersion, version.clone());
            *announced = version;
        }
    }

    /// Announces this node's shutdown to its live peers (they mark it down at once), stops
    /// gossiping for good, and returns the peers told: their gossip connections still have it
    /// to write. Nothing is announced when gossip was stopped already (`disablegossip` announced
    /// it then) or the node has left the ring.
    pub fn shutdown(&self) -> Vec<Endpoint> {
        let told = self.end_gossip(true);
        let _ = self.stop.send(true);
        told
    }

    /// Waits until the shutdown announcement sent to `told` ([`StorageService::shutdown`],
    /// [`StorageService::stop_gossiping`]) is written to them, at most
    /// [`SHUTDOWN_ANNOUNCEMENT_GRACE`], so they mark this node down at once; warns if not.
    pub async fn wait_for_announcement(&self, told: &[Endpoint]) {
        if !self.messaging.drain_gossip(told, SHUTDOWN_ANNOUNCEMENT_GRACE).await {
            warn!("the shutdown announcement did not reach every peer within {SHUTDOWN_ANNOUNCEMENT_GRACE:?}");
        }
    }

    /// Pauses or resumes replaying hints to replicas that came back (Cassandra's
    /// `HintedHandOffManager.pauseHintsDelivery`, `nodetool pausehandoff`/`resumehandoff`);
    /// hints go on being kept meanwhile. Whether this changed it.
    pub fn pause_hint_delivery(&self, paused: bool) -> bool {
        let changed = self.hints_paused.swap(paused, Ordering::SeqCst) != paused;
        if changed {
            info!(paused, "hint delivery {} by operator request", if paused { "paused" } else { "resumed" });
        }
        changed
    }

    pub fn is_hint_delivery_paused(&self) -> bool {
        self.hints_paused.load(Ordering::SeqCst)
    }

    /// Whether this node gossips (`nodetool statusgossip`).
    pub fn is_gossip_running(&self) -> bool {
        matches!(*self.gossip.lock(), GossipRun::Running(_))
    }

    /// Cassandra's `stopGossiping` (`nodetool disablegossip`): announces this node's shutdown to
    /// its live peers exactly as a stopping node does, so they mark it down at once, then stops
    /// the gossip rounds and ignores gossip messages until [`StorageService::start_gossiping`].
    /// Everything else goes on: the node serves reads and writes, with the ring and liveness it
    /// last knew. Returns the peers told (their gossip connections still have the announcement
    /// to write: see [`MessagingService::drain_gossip`]), or `None` when gossip was not running.
    pub fn stop_gossiping(&self) -> Option<Vec<Endpoint>> {
        let mut run = self.gossip.lock();
        let GossipRun::Running(stop) = &*run else { return None };
        let _ = stop.send(true);
        let out = if self.left.load(Ordering::SeqCst) { Vec::new() } else { self.gossiper.lock().shutdown_message() };
        *run = GossipRun::Stopped;
        drop(run);
        let told: Vec<Endpoint> = out.iter().map(|(to, _)| *to).collect();
        self.send(out);
        warn!(peers_told = told.len(), "stopped gossiping by operator request: the other nodes see this node down");
        Some(told)
    }

    /// Cassandra's `startGossiping` (`nodetool enablegossip`) after
    /// [`StorageService::stop_gossiping`]: gossips again as a new incarnation, with generation
    /// `generation` (at least one above the current one; the caller saves it, as a start does),
    /// and the STATUS it had before; peers take the newer generation's state whole and mark this
    /// node up once it answers. False when gossip was running already; an error once it has
    /// ended (shutdown, decommission).
    pub fn start_gossiping(self: &Arc<Self>, generation: i32) -> Result<bool, GossipStartError> {
        let mut run = self.gossip.lock();
        match &*run {
            GossipRun::Running(_) => return Ok(false),
            GossipRun::Ended => return Err(GossipStartError::Ended),
            GossipRun::Stopped => {}
        }
        self.gossiper.lock().restart(generation, Instant::now());
        let (stop, stopped) = watch::channel(false);
        tokio::spawn(gossip_loop(Arc::downgrade(self), stopped));
        *run = GossipRun::Running(stop);
        drop(run);
        self.push_own_state();
        warn!(generation, "started gossiping again by operator request");
        Ok(true)
    }

    /// Stops gossip for good; with `announce`, tells live peers of the shutdown first if gossip
    /// was running and the node has not left. The peers told.
    fn end_gossip(&self, announce: bool) -> Vec<Endpoint> {
        let mut run = self.gossip.lock();
        let running = match std::mem::replace(&mut *run, GossipRun::Ended) {
            GossipRun::Running(stop) => {
                let _ = stop.send(true);
                true
            }
            GossipRun::Stopped | GossipRun::Ended => false,
        };
        let out = if running && announce && !self.left.load(Ordering::SeqCst) {
            self.gossiper.lock().shutdown_message()
        } else {
            Vec::new()
        };
        drop(run);
        let told = out.iter().map(|(to, _)| *to).collect();
        self.send(out);
        told
    }

    /// RingDelayInMillis: how long a change of this node's status takes to reach every node.
    pub fn ring_delay(&self) -> Duration {
        self.ring_delay
    }

    /// Announces that this node is leaving the ring (decommission): every node (this one too)
    /// then also writes the ranges it replicates to the nodes that will take them.
    pub fn announce_leaving(&self) {
        let local = self.membership.local();
        self.membership.update_ring(|ring| ring.add_leaving_endpoint(local));
        self.gossiper.lock().add_local_state(ApplicationState::Status, Status::Leaving.to_string());
        self.push_own_state();
        info!("leaving the ring: announced LEAVING");
    }

    /// Announces that this node is moving to `token` (move, loadbalance): every node (this one
    /// too) then also writes the ranges it will take to it, and those it gives up to the nodes
    /// taking them. [`StorageService::join`] at the new token ends the move, and
    /// [`StorageService::rejoin`] abandons it.
    pub fn announce_moving(&self, token: &Token) -> Result<(), crate::token_metadata::RingError> {
        let local = self.membership.local();
        self.membership.update_ring(|ring| ring.add_moving_endpoint(local, token.clone()))?;
        let token = self.membership.partitioner().token_to_string(token);
        self.gossiper.lock().add_local_state(ApplicationState::Status, Status::moving(&token));
        self.push_own_state();
        info!(%token, "moving: announced MOVING");
        Ok(())
    }

    /// Announces that this node has left the ring, its data handed over: peers drop it from
    /// their rings and forget it after three days, as Cassandra's do.
    pub fn announce_left(&self) {
        let local = self.membership.local();
        self.gossiper
            .lock()
            .add_local_state(ApplicationState::Status, Status::Left { expire_at_ms: forget_at_ms() }.to_string());
        self.push_own_state();
        self.membership.update_ring(|ring| ring.remove_endpoint(local));
        info!("left the ring: announced LEFT");
    }

    /// removenode's announcements for the dead node `ep`: REMOVING while its ranges are
    /// restored on the nodes that take them (every node then also writes those ranges there),
    /// then, with `removed`, REMOVED: every node drops it from its ring. False when `ep` is not
    /// a known peer, or is alive.
    pub fn advertise_removal(&self, ep: Endpoint, removed: bool) -> bool {
        let status = if removed { Status::Removed { expire_at_ms: forget_at_ms() } } else { Status::Removing };
        let events = self.gossiper.lock().advertise_for(ep, status, Instant::now());
        match events {
            Some(events) => {
                self.apply(events);
                self.push_own_state();
                info!(%ep, status = status.name(), "announced for a dead node (removenode)");
                true
            }
            None => false,
        }
    }

    /// Stops gossip after LEFT has reached the other nodes: this node no longer takes part in
    /// the cluster, and says nothing when it shuts down.
    pub fn stop_after_leaving(&self) {
        self.left.store(true, Ordering::SeqCst);
        self.end_gossip(false);
        let _ = self.stop.send(true);
    }

    /// Announces NORMAL again with this node's tokens (a decommission that could not hand its
    /// data over).
    pub fn rejoin(&self) {
        self.join(self.membership.local_tokens());
    }

    /// Sends our view to every live peer at once, after a change of a STATUS we announce:
    /// the ring change reaches them in one exchange, well inside RingDelayInMillis, rather than
    /// over gossip's random rounds.
    /// (Not while gossip is stopped: the change spreads once it starts again.)
    fn push_own_state(&self) {
        let run = self.gossip.lock();
        if !matches!(*run, GossipRun::Running(_)) {
            return;
        }
        let out = self.gossiper.lock().syn_to_live_members();
        drop(run);
        self.send(out);
    }

    fn tick(&self) {
        let run = self.gossip.lock();
        if !matches!(*run, GossipRun::Running(_)) {
            return;
        }
        self.announce_schema_version();
        let (out, events) = self.gossiper.lock().tick(Instant::now());
        drop(run);
        self.send(out);
        self.apply(events);
    }

    /// Handles one gossip message; ignored while gossip is stopped, as Cassandra's verb handlers
    /// ignore them when the gossiper is disabled (answering would tell peers we are reachable).
    fn receive(&self, from: Endpoint, payload: &[u8]) {
        let message = match GossipMessage::decode(payload) {
            Ok(m) => m,
            Err(e) => {
                warn!(%from, error = %e, "dropping a malformed gossip message");
                return;
            }
        };
        let run = self.gossip.lock();
        if !matches!(*run, GossipRun::Running(_)) {
            debug!(%from, "gossip is stopped: ignoring a gossip message");
            return;
        }
        let (out, events) = self.gossiper.lock().handle(from, message, Instant::now());
        drop(run);
        self.send(out);
        self.apply(events);
    }

    fn send(&self, out: Outgoing) {
        for (to, message) in out {
            let verb = match message {
                GossipMessage::Syn { .. } | GossipMessage::Shutdown { .. } => Verb::GossipSyn,
                GossipMessage::Ack { .. } => Verb::GossipAck,
                GossipMessage::Ack2 { .. } => Verb::GossipAck2,
            };
            if let Err(e) = self.messaging.send_one_way(to, verb, message.encode()) {
                debug!(%to, error = %e, "gossip message not sent");
            }
        }
    }

    /// Turns what gossip learned into the ring and liveness.
    fn apply(&self, events: Vec<GossipEvent>) {
        if events.is_empty() {
            return;
        }
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
        self.note_awaited_peers();
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
    fn publish_load(&self) {
        let load = self.storage.load_bytes();
        self.gossiper.lock().add_local_state(ApplicationState::Load, load.to_string());
    }

    /// Gossip's view of every endpoint, whole (heartbeat, liveness, versioned states), for
    /// `sibyltool gossipinfo`.
    pub fn gossip_snapshot(&self) -> Vec<(Endpoint, crate::gossip::EndpointState)> {
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
fn restore_peers(storage: &Storage, membership: &Membership, gossiper: &mut Gossiper) {
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

struct GossipHandler(std::sync::Weak<StorageService>);

impl VerbHandler for GossipHandler {
    fn handle(&self, from: Endpoint, _verb: Verb, payload: Vec<u8>, _reply: Responder) {
        if let Some(service) = self.0.upgrade() {
            service.receive(from, &payload);
        }
    }
}

async fn gossip_loop(service: std::sync::Weak<StorageService>, mut stop: watch::Receiver<bool>) {
    let mut ticker = tokio::time::interval(GOSSIP_INTERVAL);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_load = Instant::now();
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = stop.changed() => return,
        }
        let Some(service) = service.upgrade() else { return };
        service.tick();
        if last_load.elapsed() >= LOAD_INTERVAL {
            last_load = Instant::now();
            service.publish_load();
        }
    }
}

/// When peers may forget a node that left or was removed: three days from now, as Cassandra
/// sets it (milliseconds since the Unix epoch; the value travels between nodes).
fn forget_at_ms() -> u64 {
    const FORGET_AFTER_MS: u64 = 3 * 24 * 3600 * 1000;
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    now_ms + FORGET_AFTER_MS
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::membership::LocalInfo;
    use crate::net::NetConfig;
    use crate::snitch::SimpleSnitch;
    use storage::engine::StorageConfig;

    /// Bound on every wait in these tests.
    const WAIT: Duration = Duration::from_secs(20);

    struct TestNode {
        service: Arc<StorageService>,
        membership: Arc<Membership>,
        storage: Storage,
        _dir: tempfile::TempDir,
    }

    /// A node on 127.0.0.1 (any free storage port) gossiping with `seed` (itself when `None`),
    /// joined at the token of `key`.
    async fn start_node(seed: Option<Endpoint>, key: &[u8]) -> TestNode {
        let node = start_unjoined(seed).await;
        node.service.join(vec![node.storage.partitioner().token_for_key(key)]);
        node
    }

    /// A node gossiping with `seed` that has not announced a status yet.
    async fn start_unjoined(seed: Option<Endpoint>) -> TestNode {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let config = StorageConfig::new(dir.path().join("data"), dir.path().join("commitlog"));
        let storage = Storage::open(config).unwrap_or_else(|e| panic!("engine: {e}"));
        let cluster = "Gossip Toggle Test";
        let net = NetConfig::new(Endpoint::from(([127, 0, 0, 1], 0)), cluster);
        let messaging = MessagingService::start(net).await.unwrap_or_else(|e| panic!("messaging: {e}"));
        let local = messaging.local();
        let state = storage.local_state();
        let host_id = state.host_id.to_string();
        let info =
            LocalInfo { cluster_name: cluster.into(), rpc_address: "127.0.0.1".into(), host_id: host_id.clone() };
        let membership =
            Arc::new(Membership::new(local, info, storage.partitioner(), Arc::new(SimpleSnitch), Vec::new()));
        let me = Announcement {
            cluster_name: cluster.into(),
            seeds: vec![seed.unwrap_or(local)],
            generation: state.generation,
            phi_convict_threshold: 8.0,
            rpc_address: "127.0.0.1".into(),
            host_id,
            release_version: "0.1.0".into(),
            hint_throttle_kb: 0,
            ring_delay: Duration::from_millis(100),
            bootstrapping: false,
        };
        let service = StorageService::start(storage.clone(), membership.clone(), messaging, &me);
        TestNode { service, membership, storage, _dir: dir }
    }

    async fn eventually(what: &str, done: impl Fn() -> bool) {
        let deadline = Instant::now() + WAIT;
        while !done() {
            assert!(Instant::now() < deadline, "{what}: not within {WAIT:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn generation_seen(by: &TestNode, of: Endpoint) -> Option<i32> {
        by.service.gossip_snapshot().into_iter().find(|(ep, _)| *ep == of).map(|(_, s)| s.heartbeat.generation)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn gossip_stopped_and_started_again_is_seen_down_then_up() {
        let one = start_node(None, b"one").await;
        let two = start_node(Some(one.membership.local()), b"two").await;
        let (ep1, ep2) = (one.membership.local(), two.membership.local());
        eventually("both up", || one.membership.is_alive(ep2) && two.membership.is_alive(ep1)).await;

        let told = two.service.stop_gossiping();
        assert_eq!(told, Some(vec![ep1]), "the shutdown is announced to the live peer");
        assert!(!two.service.is_gossip_running());
        assert_eq!(two.service.stop_gossiping(), None, "a second stop changes nothing");
        eventually("node 1 sees node 2 down", || !one.membership.is_alive(ep2)).await;
        // Node 2 answers no gossip meanwhile, and keeps the view it had.
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(!one.membership.is_alive(ep2));
        assert!(two.membership.is_alive(ep1));

        let before = generation_seen(&one, ep2).unwrap_or_else(|| panic!("node 1 knows node 2"));
        let generation = two.storage.renew_generation().unwrap_or_else(|e| panic!("renew: {e}"));
        assert_eq!(two.service.start_gossiping(generation), Ok(true));
        assert_eq!(two.service.start_gossiping(generation), Ok(false), "a second start changes nothing");
        eventually("node 1 sees node 2 up again", || one.membership.is_alive(ep2)).await;
        let after = generation_seen(&one, ep2).unwrap_or_default();
        assert!(after > before, "generation {before} then {after}");
        assert_eq!(one.membership.peer(ep2).and_then(|p| p.status).as_deref(), Some("NORMAL"));

        // Stopped, a shutdown announces nothing more; ended, gossip never starts again.
        assert!(one.service.stop_gossiping().is_some());
        assert_eq!(one.service.shutdown(), Vec::<Endpoint>::new());
        assert_eq!(one.service.start_gossiping(generation + 1), Err(GossipStartError::Ended));
        assert_eq!(two.service.shutdown(), vec![ep1], "running, a shutdown is announced");
        assert_eq!(two.service.stop_gossiping(), None);
        assert_eq!(two.service.start_gossiping(generation + 1), Err(GossipStartError::Ended));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_live_member_keeps_its_token_and_an_unplaced_node_holds_writes() {
        let one = start_node(None, b"one").await;
        let two = start_unjoined(Some(one.membership.local())).await;
        let (ep1, ep2) = (one.membership.local(), two.membership.local());
        eventually("node 1 sees node 2 alive and unplaced", || {
            one.membership.is_alive(ep2) && one.membership.awaiting_placement()
        })
        .await;

        // Node 2 announces node 1's token: node 1 keeps it, node 2 is placed nowhere.
        let taken = one.membership.local_tokens();
        two.service.join(taken.clone());
        eventually("node 2's status reaches node 1", || {
            one.membership.peer(ep2).and_then(|p| p.status).as_deref() == Some("NORMAL")
        })
        .await;
        assert!(!one.membership.awaiting_placement(), "node 2 said where it stands");
        let ring = one.membership.ring();
        assert_eq!(ring.normal_owner(&taken[0]), Some(ep1));
        assert!(!ring.is_member(ep2), "node 2 took nothing");

        // At a free token it joins.
        let free = one.storage.partitioner().token_for_key(b"two");
        two.service.join(vec![free.clone()]);
        eventually("node 2 in node 1's ring", || one.membership.ring().normal_owner(&free) == Some(ep2)).await;
        assert_eq!(one.membership.ring().normal_owner(&taken[0]), Some(ep1));
        let _ = (one.service.shutdown(), two.service.shutdown());
    }

    #[test]
    fn tokens_travel_as_json_strings() {
        for p in Partitioner::ALL {
            let tokens = vec![p.token_for_key(b"a,b\"c"), p.token_for_key(b"second")];
            assert_eq!(decode_tokens(p, &encode_tokens(p, &tokens)), tokens, "{p:?}");
        }
        assert!(decode_tokens(Partitioner::Random, "not json").is_empty());
    }
}
