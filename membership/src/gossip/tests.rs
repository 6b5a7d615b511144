//! Gossipers exchanging messages in memory with a fake clock: a simulated cluster, plus a few
//! exchanges checked message by message.
#![expect(clippy::unwrap_used, reason = "tests")]

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use super::*;
use crate::Endpoint;

const CLUSTER: &str = "Test Cluster";
const PARTITIONER: &str = "org.apache.cassandra.dht.RandomPartitioner";
/// Seconds since the epoch, as real generations are.
const GENERATION: i32 = 1_700_000_000;

fn ep(i: u8) -> Endpoint {
    Endpoint::from(([127, 0, 0, i], 7000))
}

/// The in-memory cluster. Every message goes through the codec. A stopped node neither ticks nor
/// receives (its messages are dropped), like a process that hangs or a host cut off.
struct Sim {
    now: Instant,
    nodes: BTreeMap<Endpoint, Gossiper>,
    stopped: BTreeSet<Endpoint>,
    events: BTreeMap<Endpoint, Vec<(Instant, GossipEvent)>>,
    threshold: f64,
}

impl Sim {
    /// `n` nodes 127.0.0.1..n, all with 127.0.0.1 as seed, each announcing its usual states.
    fn new(n: u8, threshold: f64) -> Sim {
        let mut sim = Sim {
            now: Instant::now(),
            nodes: BTreeMap::new(),
            stopped: BTreeSet::new(),
            events: BTreeMap::new(),
            threshold,
        };
        for i in 1..=n {
            sim.start(i, GENERATION, CLUSTER, PARTITIONER, vec![ep(1)]);
        }
        sim
    }

    /// Starts (or restarts, replacing its gossiper) node `i`.
    fn start(&mut self, i: u8, generation: i32, cluster: &str, partitioner: &str, seeds: Vec<Endpoint>) {
        let config = GossipConfig::new(partitioner).phi_convict_threshold(self.threshold).rng_seed(u64::from(i) * 7919);
        let mut g = Gossiper::new(ep(i), cluster, generation, seeds, config, self.now);
        for (state, value) in standard_states(i) {
            g.add_local_state(state, value);
        }
        self.nodes.insert(ep(i), g);
        self.stopped.remove(&ep(i));
    }

    fn node(&self, i: u8) -> &Gossiper {
        &self.nodes[&ep(i)]
    }

    fn node_mut(&mut self, i: u8) -> &mut Gossiper {
        self.nodes.get_mut(&ep(i)).unwrap()
    }

    fn running(&self) -> Vec<Endpoint> {
        self.nodes.keys().filter(|e| !self.stopped.contains(e)).copied().collect()
    }

    /// One second: every running node ticks, then all messages are delivered until none is left.
    fn round(&mut self) {
        self.now += GOSSIP_INTERVAL;
        let mut queue = VecDeque::new();
        for from in self.running() {
            let now = self.now;
            let (out, events) = self.nodes.get_mut(&from).unwrap().tick(now);
            self.record(from, events);
            queue.extend(out.into_iter().map(|(to, m)| (from, to, m)));
        }
        self.deliver(queue);
    }

    fn deliver(&mut self, mut queue: VecDeque<(Endpoint, Endpoint, GossipMessage)>) {
        let mut delivered = 0;
        while let Some((from, to, message)) = queue.pop_front() {
            delivered += 1;
            assert!(delivered < 10_000, "message storm");
            assert_ne!(from, to, "a node sent a message to itself");
            let bytes = message.encode();
            let decoded = GossipMessage::decode(&bytes).unwrap();
            assert_eq!(decoded, message);
            if self.stopped.contains(&to) || self.stopped.contains(&from) {
                continue;
            }
            let Some(node) = self.nodes.get_mut(&to) else { continue };
            let (out, events) = node.handle(from, decoded, self.now);
            self.record(to, events);
            queue.extend(out.into_iter().map(|(next, m)| (to, next, m)));
        }
    }

    fn record(&mut self, at: Endpoint, events: Vec<GossipEvent>) {
        let now = self.now;
        self.events.entry(at).or_default().extend(events.into_iter().map(|e| (now, e)));
    }

    /// Runs rounds until `done` holds; returns how many it took, or `None` after `max`.
    fn run_until(&mut self, max: usize, done: impl Fn(&Sim) -> bool) -> Option<usize> {
        for round in 1..=max {
            self.round();
            if done(self) {
                return Some(round);
            }
        }
        None
    }

    /// Whether every running node sees every running node alive with exactly the states it
    /// announces (heartbeats may lag).
    fn converged(&self) -> bool {
        let running = self.running();
        running.iter().all(|observer| {
            running.iter().all(|subject| {
                let truth = self.nodes[subject].endpoint_state(subject).unwrap();
                self.nodes[observer].endpoint_state(subject).is_some_and(|seen| {
                    seen.alive && seen.states == truth.states && seen.heartbeat.generation == truth.heartbeat.generation
                })
            })
        })
    }

    fn events_of(&self, at: u8) -> Vec<GossipEvent> {
        self.events.get(&ep(at)).map(|v| v.iter().map(|(_, e)| e.clone()).collect()).unwrap_or_default()
    }

    fn count_events(&self, at: u8, wanted: &GossipEvent) -> usize {
        self.events_of(at).iter().filter(|e| *e == wanted).count()
    }

    /// When `at` first reported `wanted` after `since`.
    fn event_time(&self, at: u8, wanted: &GossipEvent, since: Instant) -> Option<Instant> {
        self.events.get(&ep(at))?.iter().find(|(t, e)| *t > since && e == wanted).map(|(t, _)| *t)
    }
}

fn standard_states(i: u8) -> Vec<(ApplicationState, String)> {
    vec![
        (ApplicationState::Dc, "dc1".to_owned()),
        (ApplicationState::Rack, format!("rack{}", i % 2)),
        (ApplicationState::HostId, format!("00000000-0000-0000-0000-0000000000{i:02}")),
        (ApplicationState::RpcAddress, format!("127.0.0.{i}:9160")),
        (ApplicationState::ReleaseVersion, "0.1.0".to_owned()),
        (ApplicationState::SchemaVersion, "59adb24e-f3cd-3e02-97f0-5b395827453f".to_owned()),
        (ApplicationState::Tokens, format!("{}", u128::from(i) << 120)),
        (ApplicationState::Status, Status::Normal.to_string()),
    ]
}

#[test]
fn five_nodes_converge_on_one_view() {
    let mut sim = Sim::new(5, 8.0);
    let rounds = sim.run_until(10, Sim::converged);
    println!("5 nodes converged after {rounds:?} rounds");
    assert!(rounds.is_some(), "no convergence within 10 rounds");
    for i in 1..=5u8 {
        assert_eq!(sim.node(i).live_members(), (1..=5).map(ep).collect::<Vec<_>>(), "live members at {i}");
        assert!(sim.node(i).unreachable_members().is_empty());
        for j in (1..=5u8).filter(|j| *j != i) {
            assert_eq!(sim.count_events(i, &GossipEvent::Joined { ep: ep(j) }), 1, "{i} about {j}");
            assert_eq!(sim.count_events(i, &GossipEvent::Alive { ep: ep(j) }), 1, "{i} about {j}");
            let rpc = GossipEvent::Changed {
                ep: ep(j),
                state: ApplicationState::RpcAddress,
                value: format!("127.0.0.{j}:9160"),
            };
            assert_eq!(sim.count_events(i, &rpc), 1, "{i} about {j}");
        }
    }
    // Staying converged: more rounds change nothing but heartbeats.
    let before: Vec<_> = sim.events_of(3);
    for _ in 0..20 {
        sim.round();
    }
    assert!(sim.converged());
    assert_eq!(sim.events_of(3), before);
}

/// Stops node 4 of a warmed-up 4-node cluster; returns, per other node, the seconds from the
/// stop to its conviction of node 4; then resumes node 4 and checks everybody sees it again.
fn convict_and_revive(threshold: f64) -> Vec<f64> {
    let mut sim = Sim::new(4, threshold);
    assert!(sim.run_until(10, Sim::converged).is_some());
    // Let the failure detectors learn the rhythm.
    for _ in 0..60 {
        sim.round();
    }
    let stopped_at = sim.now;
    sim.stopped.insert(ep(4));
    let all_convicted = sim.run_until(60, |s| (1..=3u8).all(|i| !s.node(i).is_alive(&ep(4))));
    assert!(all_convicted.is_some(), "node 4 not convicted within 60 s at threshold {threshold}");
    let dead = GossipEvent::Dead { ep: ep(4) };
    let seconds: Vec<f64> =
        (1..=3u8).map(|i| (sim.event_time(i, &dead, stopped_at).unwrap() - stopped_at).as_secs_f64()).collect();
    for i in 1..=3u8 {
        assert_eq!(sim.node(i).unreachable_members(), vec![ep(4)]);
        assert_eq!(sim.count_events(i, &dead), 1);
        // Nobody else was convicted along the way.
        assert!(sim.events_of(i).iter().all(|e| !matches!(e, GossipEvent::Dead { ep: dead } if *dead != ep(4))));
    }
    // Node 4 comes back (same generation: it was paused, not restarted).
    let resumed_at = sim.now;
    sim.stopped.remove(&ep(4));
    let back = sim.run_until(10, |s| (1..=3u8).all(|i| s.node(i).is_alive(&ep(4))));
    println!("threshold {threshold}: convicted after {seconds:?} s, alive again after {back:?} rounds");
    assert!(back.is_some(), "node 4 not seen alive again within 10 s");
    for i in 1..=3u8 {
        assert!(sim.event_time(i, &GossipEvent::Alive { ep: ep(4) }, resumed_at).is_some());
    }
    // Node 4's own detector saw a 30 s pause of its own and convicted nobody for it.
    assert!(sim.events_of(4).iter().all(|e| !matches!(e, GossipEvent::Dead { .. })), "{:?}", sim.events_of(4));
    assert!(sim.run_until(5, |_| false).is_none());
    assert!(sim.converged());
    seconds
}

#[test]
fn silent_node_is_convicted_within_bounds_and_revived() {
    // Heartbeats reach an observer once per round at most, and gaps over 2 s are not recorded,
    // so the mean interval lies in [1 s, 2 s] and conviction comes `threshold * ln 10 * mean`
    // after the last heartbeat: 18.4..36.8 s at threshold 8, 11.5..23 s at threshold 5. In this
    // simulation the mean is close to 1 s.
    let at_8 = convict_and_revive(8.0);
    for s in &at_8 {
        assert!((18.0..=38.0).contains(s), "threshold 8 convicted after {s} s");
    }
    let at_5 = convict_and_revive(5.0);
    for s in &at_5 {
        assert!((11.0..=24.0).contains(s), "threshold 5 convicted after {s} s");
    }
    let slowest_5 = at_5.iter().copied().fold(0.0, f64::max);
    let fastest_8 = at_8.iter().copied().fold(f64::MAX, f64::min);
    assert!(slowest_5 < fastest_8, "threshold 5 {at_5:?} must convict before threshold 8 {at_8:?}");
}

#[test]
fn restart_with_a_new_generation_replaces_the_old_states() {
    let mut sim = Sim::new(3, 8.0);
    sim.node_mut(3).add_local_state(ApplicationState::Load, "12345");
    sim.node_mut(3).add_local_state(ApplicationState::Severity, "0.5");
    assert!(sim.run_until(10, Sim::converged).is_some());
    assert_eq!(sim.node(1).endpoint_state(&ep(3)).unwrap().value(ApplicationState::Load), Some("12345"));

    // A quick restart: a new process, new generation, no LOAD or SEVERITY yet, a new RPC address.
    let restarted_at = sim.now;
    sim.start(3, GENERATION + 100, CLUSTER, PARTITIONER, vec![ep(1)]);
    sim.node_mut(3).add_local_state(ApplicationState::RpcAddress, "127.0.0.3:9161");
    let rounds = sim.run_until(10, Sim::converged);
    assert!(rounds.is_some(), "restart not seen within 10 rounds");
    for i in 1..=2u8 {
        let seen = sim.node(i).endpoint_state(&ep(3)).unwrap();
        assert_eq!(seen.heartbeat.generation, GENERATION + 100);
        assert_eq!(seen.value(ApplicationState::Load), None, "old LOAD kept at {i}");
        assert_eq!(seen.value(ApplicationState::Severity), None);
        assert_eq!(seen.value(ApplicationState::RpcAddress), Some("127.0.0.3:9161"));
        assert!(seen.alive);
        assert!(sim.event_time(i, &GossipEvent::Restarted { ep: ep(3) }, restarted_at).is_some());
    }
}

#[test]
fn a_node_of_another_cluster_never_enters_the_view() {
    let mut sim = Sim::new(3, 8.0);
    // Node 9 has another cluster name, node 8 another partitioner; both use node 1 as seed, and
    // the cluster's nodes list both as seeds, so SYNs cross in both directions.
    sim.start(9, GENERATION, "Other Cluster", PARTITIONER, vec![ep(1)]);
    sim.start(8, GENERATION, CLUSTER, "org.apache.cassandra.dht.Murmur3Partitioner", vec![ep(1)]);
    for i in 1..=3u8 {
        sim.start(i, GENERATION, CLUSTER, PARTITIONER, vec![ep(1), ep(8), ep(9)]);
    }
    let members = [ep(1), ep(2), ep(3)];
    let converged = |s: &Sim| members.iter().all(|m| members.iter().all(|o| s.nodes[m].is_alive(o)));
    assert!(sim.run_until(10, converged).is_some());
    for _ in 0..30 {
        sim.round();
    }
    for i in 1..=3u8 {
        let known: Vec<Endpoint> = sim.node(i).endpoint_states().map(|(e, _)| *e).collect();
        assert_eq!(known, members.to_vec(), "view of node {i}");
    }
    for outsider in [8, 9] {
        let known: Vec<Endpoint> = sim.node(outsider).endpoint_states().map(|(e, _)| *e).collect();
        assert_eq!(known, vec![ep(outsider)], "view of outsider {outsider}");
        assert!(sim.events_of(outsider).is_empty());
    }
}

#[test]
fn state_changes_reach_every_node() {
    let mut sim = Sim::new(5, 8.0);
    assert!(sim.run_until(10, Sim::converged).is_some());
    let changed_at = sim.now;
    sim.node_mut(2).add_local_state(ApplicationState::Status, Status::Leaving.to_string());
    sim.node_mut(3).add_local_state(ApplicationState::SchemaVersion, "a0d7e1c2-0000-3000-8000-000000000002");
    sim.node_mut(4).add_local_state(ApplicationState::Load, "4096");
    let rounds = sim.run_until(10, Sim::converged);
    println!("state changes reached 5 nodes after {rounds:?} rounds");
    assert!(rounds.is_some());
    let expected = [
        (2, ApplicationState::Status, "LEAVING"),
        (3, ApplicationState::SchemaVersion, "a0d7e1c2-0000-3000-8000-000000000002"),
        (4, ApplicationState::Load, "4096"),
    ];
    for i in 1..=5u8 {
        for (j, state, value) in expected.iter().filter(|(j, ..)| *j != i) {
            let seen = sim.node(i).endpoint_state(&ep(*j)).unwrap();
            assert_eq!(seen.value(*state), Some(*value));
            let event = GossipEvent::Changed { ep: ep(*j), state: *state, value: (*value).to_owned() };
            assert!(sim.event_time(i, &event, changed_at).is_some(), "node {i} missed {event:?}");
            assert_eq!(sim.count_events(i, &event), 1);
        }
    }
    assert_eq!(sim.node(1).endpoint_state(&ep(2)).unwrap().status(), Some(Status::Leaving));
}

#[test]
fn a_pushed_status_reaches_every_live_node_in_one_exchange() {
    let mut sim = Sim::new(5, 8.0);
    assert!(sim.run_until(10, Sim::converged).is_some());
    sim.stopped.insert(ep(5));
    let moving = Status::moving("28356863910078205288614550619314017621");
    sim.node_mut(3).add_local_state(ApplicationState::Status, moving.clone());
    let out = sim.node_mut(3).syn_to_live_members();
    let told: BTreeSet<Endpoint> = out.iter().map(|(to, _)| *to).collect();
    assert_eq!(told, [1, 2, 4, 5].map(ep).into_iter().collect(), "every member believed alive");
    // No round passes: the exchange alone carries the change.
    sim.deliver(out.into_iter().map(|(to, m)| (ep(3), to, m)).collect());
    for i in [1, 2, 4u8] {
        let seen = sim.node(i).endpoint_state(&ep(3)).unwrap();
        assert_eq!(seen.value(ApplicationState::Status), Some(moving.as_str()), "node {i}");
    }
}

#[test]
fn announced_shutdown_marks_the_node_down_at_once() {
    let mut sim = Sim::new(4, 8.0);
    assert!(sim.run_until(10, Sim::converged).is_some());
    let out = sim.node_mut(2).shutdown_message();
    assert_eq!(out.len(), 3);
    let queue = out.into_iter().map(|(to, m)| (ep(2), to, m)).collect();
    sim.deliver(queue);
    for i in [1, 3, 4u8] {
        assert!(!sim.node(i).is_alive(&ep(2)), "node {i} still sees 2 alive");
        assert_eq!(sim.count_events(i, &GossipEvent::Dead { ep: ep(2) }), 1);
        assert_eq!(sim.node(i).endpoint_state(&ep(2)).unwrap().status(), Some(Status::Shutdown));
    }
    // Node 2 keeps gossiping for two seconds, as Cassandra does, then stops; gossip about it
    // must not bring it back.
    sim.round();
    sim.round();
    sim.stopped.insert(ep(2));
    for _ in 0..30 {
        sim.round();
    }
    for i in [1, 3, 4u8] {
        assert!(!sim.node(i).is_alive(&ep(2)));
        assert_eq!(sim.count_events(i, &GossipEvent::Dead { ep: ep(2) }), 1);
        assert_eq!(sim.count_events(i, &GossipEvent::Alive { ep: ep(2) }), 1, "only the first Alive");
    }
    // A restart brings it back.
    sim.start(2, GENERATION + 40, CLUSTER, PARTITIONER, vec![ep(1)]);
    assert!(sim.run_until(10, Sim::converged).is_some());
    for i in [1, 3, 4u8] {
        assert_eq!(sim.count_events(i, &GossipEvent::Restarted { ep: ep(2) }), 1);
        assert_eq!(sim.count_events(i, &GossipEvent::Alive { ep: ep(2) }), 2);
    }
}

/// `nodetool disablegossip` then `enablegossip`: the node announces its shutdown and goes
/// silent while its process runs on, then gossips again from the same gossiper with a newer
/// generation. Its peers see it down, then up, with its STATUS back to NORMAL; it convicts none
/// of them for its own silence.
#[test]
fn a_node_that_stops_gossiping_and_starts_again_is_seen_down_then_up() {
    let mut sim = Sim::new(3, 8.0);
    assert!(sim.run_until(10, Sim::converged).is_some());
    let out = sim.node_mut(2).shutdown_message();
    let queue = out.into_iter().map(|(to, m)| (ep(2), to, m)).collect();
    sim.deliver(queue);
    sim.stopped.insert(ep(2));
    for _ in 0..40 {
        sim.round();
    }
    for i in [1, 3u8] {
        assert!(!sim.node(i).is_alive(&ep(2)), "node {i} sees 2 alive while it does not gossip");
        assert_eq!(sim.node(i).endpoint_state(&ep(2)).unwrap().status(), Some(Status::Shutdown));
    }
    let before = sim.node(2).generation();
    let restarted_at = sim.now;
    // A generation that is not newer is raised to one that is.
    sim.node_mut(2).restart(before, restarted_at);
    assert_eq!(sim.node(2).generation(), before + 1);
    assert_eq!(sim.node(2).endpoint_state(&ep(2)).unwrap().status(), Some(Status::Normal));
    sim.stopped.remove(&ep(2));
    assert!(sim.run_until(10, Sim::converged).is_some(), "node 2 not seen up again");
    for i in [1, 3u8] {
        assert_eq!(sim.node(i).endpoint_state(&ep(2)).unwrap().heartbeat.generation, before + 1);
        assert_eq!(sim.node(i).endpoint_state(&ep(2)).unwrap().status(), Some(Status::Normal));
        assert_eq!(sim.count_events(i, &GossipEvent::Restarted { ep: ep(2) }), 1);
        assert_eq!(sim.count_events(i, &GossipEvent::Alive { ep: ep(2) }), 2);
    }
    for _ in 0..30 {
        sim.round();
    }
    for i in [1, 3u8] {
        assert!(sim.node(2).is_alive(&ep(i)));
        assert_eq!(sim.event_time(2, &GossipEvent::Dead { ep: ep(i) }, restarted_at), None, "2 convicted {i}");
    }
}

#[test]
fn a_saved_endpoint_is_down_until_it_answers() {
    let mut sim = Sim::new(1, 8.0);
    let saved = BTreeMap::from([(ApplicationState::Dc, "dc1".to_owned()), (ApplicationState::Tokens, "7".to_owned())]);
    let now = sim.now;
    sim.node_mut(1).add_saved_endpoint(ep(2), saved, now);
    sim.node_mut(1).add_saved_endpoint(ep(1), BTreeMap::new(), now);
    assert_eq!(sim.node(1).unreachable_members(), vec![ep(2)]);
    assert_eq!(sim.node(1).live_members(), vec![ep(1)]);
    assert_eq!(sim.node(1).endpoint_state(&ep(2)).unwrap().value(ApplicationState::Tokens), Some("7"));
    for _ in 0..5 {
        sim.round();
    }
    assert!(!sim.node(1).is_alive(&ep(2)));
    // Node 2 starts knowing nobody: node 1 reaches it as an unreachable member.
    sim.start(2, GENERATION, CLUSTER, PARTITIONER, vec![]);
    assert!(sim.run_until(10, Sim::converged).is_some());
    assert_eq!(sim.count_events(1, &GossipEvent::Restarted { ep: ep(2) }), 1);
    assert_eq!(sim.count_events(1, &GossipEvent::Alive { ep: ep(2) }), 1);
    assert_eq!(
        sim.node(1).endpoint_state(&ep(2)).unwrap().value(ApplicationState::Tokens),
        Some(&*(2u128 << 120).to_string())
    );
}

#[test]
fn a_removed_endpoint_stays_out_for_the_quarantine() {
    let mut sim = Sim::new(3, 8.0);
    assert!(sim.run_until(10, Sim::converged).is_some());
    let expiry = 1_800_000_000_000;
    sim.node_mut(3).add_local_state(ApplicationState::Status, Status::Left { expire_at_ms: expiry }.to_string());
    assert!(sim.run_until(10, Sim::converged).is_some());
    sim.stopped.insert(ep(3));
    assert!(sim.run_until(60, |s| !s.node(1).is_alive(&ep(3)) && !s.node(2).is_alive(&ep(3))).is_some());
    assert!(sim.node(1).expired_endpoints(expiry).is_empty());
    assert_eq!(sim.node(1).expired_endpoints(expiry + 1), vec![ep(3)]);

    let now = sim.now;
    let removed = sim.node_mut(1).remove_endpoint(ep(3), now).unwrap();
    assert_eq!(removed.status(), Some(Status::Left { expire_at_ms: expiry }));
    // Node 2 still knows node 3 and keeps gossiping it; node 1 ignores that for the quarantine.
    let quarantine_rounds = QUARANTINE_DELAY.as_secs() as usize;
    for _ in 0..quarantine_rounds - 1 {
        sim.round();
        assert!(sim.node(1).endpoint_state(&ep(3)).is_none());
    }
    // After it, node 2's stale knowledge comes back: every node must remove a LEFT node.
    assert!(sim.run_until(5, |s| s.node(1).endpoint_state(&ep(3)).is_some()).is_some());
    let now = sim.now;
    sim.node_mut(1).remove_endpoint(ep(3), now);
    sim.node_mut(2).remove_endpoint(ep(3), now);
    for _ in 0..quarantine_rounds + 10 {
        sim.round();
    }
    assert!(sim.node(1).endpoint_state(&ep(3)).is_none());
    assert!(sim.node(2).endpoint_state(&ep(3)).is_none());
}

/// Node 1 knows itself at version `v`, node 2 at (GENERATION, 10) with a LOAD at 7, node 3 not.
fn known_gossiper() -> (Gossiper, Instant) {
    let now = Instant::now();
    let mut g = Gossiper::new(ep(1), CLUSTER, GENERATION, vec![], GossipConfig::new(PARTITIONER).rng_seed(1), now);
    g.add_local_state(ApplicationState::Status, "NORMAL");
    let mut remote =
        RemoteState { heartbeat: HeartBeatState { generation: GENERATION, version: 10 }, states: BTreeMap::new() };
    remote.states.insert(ApplicationState::Load, VersionedValue { value: "9".into(), version: 7 });
    remote.states.insert(ApplicationState::Dc, VersionedValue { value: "dc1".into(), version: 3 });
    let (out, events) = g.handle(ep(2), GossipMessage::Ack2 { states: vec![(ep(2), remote)] }, now);
    assert!(out.is_empty());
    assert_eq!(events.first(), Some(&GossipEvent::Joined { ep: ep(2) }));
    assert_eq!(events.last(), Some(&GossipEvent::Alive { ep: ep(2) }));
    (g, now)
}

#[test]
fn syn_is_answered_with_requests_and_missing_states() {
    let (mut g, now) = known_gossiper();
    let digests = vec![
        // They are behind on node 2: we send LOAD (7 > 5) and the heartbeat (10 > 5), not DC (3).
        GossipDigest { endpoint: ep(2), generation: GENERATION, max_version: 5 },
        // They know node 3, we do not: request everything.
        GossipDigest { endpoint: ep(3), generation: GENERATION + 1, max_version: 4 },
        // They know an older generation of us: send everything.
        GossipDigest { endpoint: ep(1), generation: GENERATION - 1, max_version: 99 },
    ];
    let syn = GossipMessage::Syn { cluster_name: CLUSTER.into(), partitioner: PARTITIONER.into(), digests };
    let (out, events) = g.handle(ep(5), syn, now);
    assert!(events.is_empty());
    let [(to, GossipMessage::Ack { digests, states })] = out.as_slice() else { panic!("{out:?}") };
    assert_eq!(*to, ep(5));
    assert_eq!(digests, &vec![GossipDigest { endpoint: ep(3), generation: GENERATION + 1, max_version: 0 }]);
    let states: BTreeMap<_, _> = states.iter().cloned().collect();
    assert_eq!(states.len(), 2);
    let two = &states[&ep(2)];
    assert_eq!(two.heartbeat, HeartBeatState { generation: GENERATION, version: 10 });
    assert_eq!(two.states.keys().copied().collect::<Vec<_>>(), vec![ApplicationState::Load]);
    let one = &states[&ep(1)];
    assert_eq!(one.heartbeat.generation, GENERATION);
    assert_eq!(one.states[&ApplicationState::Status].value, "NORMAL");

    // A digest equal to ours asks for nothing and gets nothing.
    let same = GossipDigest { endpoint: ep(2), generation: GENERATION, max_version: 10 };
    let syn = GossipMessage::Syn { cluster_name: CLUSTER.into(), partitioner: PARTITIONER.into(), digests: vec![same] };
    let (out, _) = g.handle(ep(5), syn, now);
    assert_eq!(out, vec![(ep(5), GossipMessage::Ack { digests: vec![], states: vec![] })]);
}

#[test]
fn syn_from_another_cluster_or_partitioner_is_refused() {
    let (mut g, now) = known_gossiper();
    let digests = vec![GossipDigest { endpoint: ep(7), generation: GENERATION, max_version: 4 }];
    for (cluster, partitioner) in [("Other", PARTITIONER), (CLUSTER, "org.apache.cassandra.dht.ByteOrderedPartitioner")]
    {
        let syn = GossipMessage::Syn {
            cluster_name: cluster.into(),
            partitioner: partitioner.into(),
            digests: digests.clone(),
        };
        assert_eq!(g.handle(ep(7), syn, now), (vec![], vec![]));
    }
    assert!(g.endpoint_state(&ep(7)).is_none());
}

#[test]
fn ack_is_applied_and_answered_with_what_it_asked_for() {
    let (mut g, now) = known_gossiper();
    let newer = RemoteState {
        heartbeat: HeartBeatState { generation: GENERATION, version: 12 },
        states: BTreeMap::from([
            (ApplicationState::Load, VersionedValue { value: "10".into(), version: 11 }),
            // Older than what we hold: ignored.
            (ApplicationState::Dc, VersionedValue { value: "stale".into(), version: 2 }),
        ]),
    };
    let ack = GossipMessage::Ack {
        digests: vec![GossipDigest { endpoint: ep(1), generation: GENERATION, max_version: 0 }],
        states: vec![(ep(2), newer)],
    };
    let (out, events) = g.handle(ep(2), ack, now);
    assert_eq!(events, vec![GossipEvent::Changed { ep: ep(2), state: ApplicationState::Load, value: "10".into() }]);
    let seen = g.endpoint_state(&ep(2)).unwrap();
    assert_eq!(seen.heartbeat.version, 12);
    assert_eq!(seen.value(ApplicationState::Dc), Some("dc1"));
    let [(to, GossipMessage::Ack2 { states })] = out.as_slice() else { panic!("{out:?}") };
    assert_eq!(*to, ep(2));
    assert_eq!(states.len(), 1);
    assert_eq!(states[0].0, ep(1));
}

#[test]
fn unbelievable_generations_and_our_own_state_are_not_adopted() {
    let (mut g, now) = known_gossiper();
    let far = GENERATION + (MAX_GENERATION_DIFFERENCE as i32) + 1000;
    let state =
        |generation| RemoteState { heartbeat: HeartBeatState { generation, version: 1 }, states: BTreeMap::new() };
    let (_, events) =
        g.handle(ep(3), GossipMessage::Ack2 { states: vec![(ep(2), state(far)), (ep(1), state(far))] }, now);
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(g.endpoint_state(&ep(2)).unwrap().heartbeat.generation, GENERATION);
    assert_eq!(g.generation(), GENERATION);
}

#[test]
fn second_hand_news_of_a_down_node_asks_it_directly() {
    let (mut g, now) = known_gossiper();
    // Node 2 falls silent until convicted.
    let mut t = now;
    let mut dead_after = None;
    for s in 1..60 {
        t = now + Duration::from_secs(s);
        let (_, events) = g.tick(t);
        if events.contains(&GossipEvent::Dead { ep: ep(2) }) {
            dead_after = Some(s);
            break;
        }
    }
    assert!(dead_after.is_some());
    // Node 3 reports a newer heartbeat of node 2: not proof enough, but we check with a SYN.
    let newer =
        RemoteState { heartbeat: HeartBeatState { generation: GENERATION, version: 50 }, states: BTreeMap::new() };
    let (out, events) = g.handle(ep(3), GossipMessage::Ack2 { states: vec![(ep(2), newer.clone())] }, t);
    assert!(!g.is_alive(&ep(2)));
    assert!(events.is_empty(), "{events:?}");
    assert!(matches!(out.as_slice(), [(to, GossipMessage::Syn { .. })] if *to == ep(2)), "{out:?}");
    // Repeated news within the echo interval sends no second check.
    let newer2 =
        RemoteState { heartbeat: HeartBeatState { generation: GENERATION, version: 51 }, states: BTreeMap::new() };
    let (out, _) = g.handle(ep(3), GossipMessage::Ack2 { states: vec![(ep(2), newer2)] }, t);
    assert!(out.is_empty());
    // Node 2 answers with an ACK: alive.
    let (_, events) = g.handle(ep(2), GossipMessage::Ack { digests: vec![], states: vec![] }, t);
    assert_eq!(events, vec![GossipEvent::Alive { ep: ep(2) }]);
    assert!(!g.failure_detector().is_convicted(&ep(2), t));
}

/// removenode: node 1 speaks for dead node 4. Refused for itself, a live node or an unknown
/// one; for the dead node, its REMOVING state (a newer generation) reaches every node and
/// replaces what they knew, without marking it alive, and then REMOVED does the same.
#[test]
fn a_node_announces_a_dead_peers_removal_to_every_node() {
    let mut sim = Sim::new(4, 8.0);
    assert!(sim.run_until(10, Sim::converged).is_some());
    let now = sim.now;
    assert!(sim.node_mut(1).advertise_for(ep(1), Status::Removing, now).is_none(), "ourselves");
    assert!(sim.node_mut(1).advertise_for(ep(4), Status::Removing, now).is_none(), "alive");
    assert!(sim.node_mut(1).advertise_for(ep(9), Status::Removing, now).is_none(), "unknown");
    assert!(sim.node_mut(1).advertise_for(ep(4), Status::Normal, now).is_none(), "not a dead state");

    let old_generation = sim.node(2).endpoint_state(&ep(4)).unwrap().heartbeat.generation;
    let queue = sim.node_mut(4).shutdown_message().into_iter().map(|(to, m)| (ep(4), to, m)).collect();
    sim.deliver(queue);
    sim.stopped.insert(ep(4));
    let events = sim.node_mut(1).advertise_for(ep(4), Status::Removing, now).expect("a dead peer");
    assert!(events.contains(&GossipEvent::Changed {
        ep: ep(4),
        state: ApplicationState::Status,
        value: Status::Removing.to_string()
    }));
    for removed in [Status::Removing, Status::Removed { expire_at_ms: 1_900_000_000_000 }] {
        if removed != Status::Removing {
            let now = sim.now;
            sim.node_mut(1).advertise_for(ep(4), removed, now).expect("still a dead peer");
        }
        let reached = sim.run_until(20, |sim| {
            [1, 2, 3u8].iter().all(|i| sim.node(*i).endpoint_state(&ep(4)).and_then(|s| s.status()) == Some(removed))
        });
        assert!(reached.is_some(), "{removed} did not reach every node");
        for i in [1, 2, 3u8] {
            let state = sim.node(i).endpoint_state(&ep(4)).unwrap();
            assert!(state.heartbeat.generation > old_generation, "node {i} kept the old generation");
            assert!(!sim.node(i).is_alive(&ep(4)), "node {i} marked the removed node alive");
        }
    }
}
