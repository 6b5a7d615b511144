//! A node never takes a token another member holds. A newcomer configured with a member's
//! InitialToken stops with Cassandra's message, bootstrapping or not, whether the member is up
//! or down; the ring and every row stay as they were. A restarted node keeps the token it took
//! at its first start whatever InitialToken says now, with a warning.

use std::time::Duration;

use e2e::*;

const ROWS: usize = 400;

fn all_rows_readable(nodes: &[&Node]) {
    for node in nodes {
        let mut c = node.client_in("Collide");
        for i in 0..ROWS {
            assert_eq!(value_at_one(&mut c, &format!("k{i}")), Some(b("v")), "k{i} through {}", node.address());
        }
    }
}

/// The ring as `node` sees it (`sibyltool ring`): (address, token) per token, sorted.
fn ring_seen_by(node: &Node) -> Vec<(String, String)> {
    let run = node.tool(&["ring"]).ok();
    let mut seen: Vec<(String, String)> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("127."))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((f.first()?.to_string(), f.last()?.to_string()))
        })
        .collect();
    seen.sort();
    seen
}

#[test]
fn a_newcomer_with_a_members_token_stops_and_the_ring_stays() {
    let tokens = random_partitioner_tokens(2);
    let mut nodes = start_cluster(2, |i| Config {
        cluster_name: "Token Collision".into(),
        initial_token: tokens[i].clone(),
        ..Config::random().extra("<RingDelayInMillis>1000</RingDelayInMillis>")
    });
    wait_for_ring(&nodes, 2, Duration::from_secs(60));
    let mut admin = nodes[0].client();
    ok("add keyspace", admin.system_add_keyspace(ks_def("Collide", 1, vec![cf_def("Collide", "Kv", "UTF8Type")])));
    let mut c = nodes[0].client_in("Collide");
    for i in 0..ROWS {
        ok("insert", c.insert(b(&format!("k{i}")), parent("Kv"), column(b("c"), b("v"), ts()), ONE));
    }
    let ring_before = ring_seen_by(&nodes[0]);
    assert_eq!(ring_before.len(), 2, "{ring_before:?}");
    let seed = nodes[0].storage_endpoint();

    // Node 2's token, taken by a newcomer: bootstrapping, then not; node 2 up, then down.
    let cases = [(true, true, "Bootstrapping to existing token"), (false, true, "Joining the ring at existing token")];
    for (auto_bootstrap, up, message) in cases.into_iter().chain([(true, false, "Bootstrapping to existing token")]) {
        if !up && nodes[1].is_running() {
            assert!(nodes[1].stop().success());
            let address = nodes[1].address();
            assert!(eventually(Duration::from_secs(30), || marked_down(&nodes[0], &address)), "node 2 not seen down");
        }
        let newcomer = Config {
            cluster_name: "Token Collision".into(),
            ip: [127, 0, 0, 3],
            seeds: vec![seed.clone()],
            initial_token: tokens[1].clone(),
            auto_bootstrap,
            ..Config::random().extra("<RingDelayInMillis>1000</RingDelayInMillis>")
        };
        let (newcomer, started) = Node::try_start_at(newcomer, Ports::free_on([127, 0, 0, 3]));
        let log = newcomer.log();
        let status = started.err().unwrap_or_else(|| panic!("the newcomer started at a held token:\n{log}"));
        assert!(!status.success(), "exit status {status}");
        assert!(log.contains(message), "bootstrap {auto_bootstrap}, owner up {up}: no {message:?} in\n{log}");
        assert!(log.contains(&nodes[1].storage_endpoint()), "the message names the holder:\n{log}");
        let state = if up { "is up" } else { "is down" };
        assert!(log.contains(state), "the message says the holder {state}:\n{log}");
        // The seed's ring is as it was: node 2 keeps its token, the newcomer holds none.
        assert_eq!(ring_seen_by(&nodes[0]), ring_before, "bootstrap {auto_bootstrap}, owner up {up}");
    }
    nodes[1].start_again();
    wait_for_ring(&nodes, 2, Duration::from_secs(60));
    assert_eq!(ring_seen_by(&nodes[0]), ring_before);
    all_rows_readable(&[&nodes[0], &nodes[1]]);

    // A restart with another InitialToken keeps the first start's token, and says so.
    nodes[1].config_mut().initial_token = "12345".into();
    nodes[1].restart();
    assert!(
        nodes[1].log().contains("differs from the token(s) this node took at its first start"),
        "{}",
        nodes[1].log()
    );
    wait_for_ring(&nodes, 2, Duration::from_secs(60));
    assert_eq!(ring_seen_by(&nodes[0]), ring_before);
    all_rows_readable(&[&nodes[0], &nodes[1]]);
}
