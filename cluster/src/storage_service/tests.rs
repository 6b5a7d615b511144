//! Gossip between real services on loopback: stopping and starting it, token claims, writes held for an unplaced node.

use super::placement::decode_tokens;
use super::*;
use membership::locator::snitch::SimpleSnitch;
use membership::LocalInfo;
use messaging::NetConfig;
use model::dht::Partitioner;
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
    let info = LocalInfo { cluster_name: cluster.into(), rpc_address: "127.0.0.1".into(), host_id: host_id.clone() };
    let membership = Arc::new(Membership::new(local, info, storage.partitioner(), Arc::new(SimpleSnitch), Vec::new()));
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

    // Running, a shutdown is announced (to node 1, still live: node 2 is shut down first, as
    // node 1's own stop would tell node 2 that node 1 is gone); ended, gossip never starts
    // again. Stopped, a shutdown announces nothing more.
    assert_eq!(two.service.shutdown(), vec![ep1], "running, a shutdown is announced");
    assert_eq!(two.service.stop_gossiping(), None);
    assert_eq!(two.service.start_gossiping(generation + 1), Err(GossipStartError::Ended));
    assert!(one.service.stop_gossiping().is_some());
    assert_eq!(one.service.shutdown(), Vec::<Endpoint>::new());
    assert_eq!(one.service.start_gossiping(generation + 1), Err(GossipStartError::Ended));
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
