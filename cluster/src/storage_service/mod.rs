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

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use model::dht::Token;
use parking_lot::Mutex;
use storage::engine::Storage;
use tokio::sync::watch;
use tracing::{debug, info, warn};

use crate::schema_sync::SchemaSync;
use crate::Endpoint;
use membership::gossip::{ApplicationState, GossipConfig, GossipMessage, Gossiper, Outgoing, Status, GOSSIP_INTERVAL};
use membership::locator::token_metadata::{choose_token, random_tokens};
use membership::Membership;
use messaging::{MessagingService, Responder, Verb, VerbHandler};

mod placement;
pub use placement::encode_tokens;
use placement::restore_peers;

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
    pub fn announce_moving(&self, token: &Token) -> Result<(), membership::locator::token_metadata::RingError> {
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

#[cfg(test)]
mod tests;
