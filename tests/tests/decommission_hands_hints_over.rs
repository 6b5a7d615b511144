//! A decommissioned node does not take its hints with it. Writes at consistency ANY whose only
//! replica is down are acknowledged on the strength of a hint kept on the coordinator: the
//! hint is the write's only copy. When that coordinator leaves the ring, it hands its hints to
//! a node that stays, which replays them once the replica is back.

use std::time::Duration;

use e2e::*;
use thrift_idl as t;

const KS: &str = "Hh";
const ROWS: usize = 150;

#[test]
fn a_decommissioned_coordinator_hands_its_hints_over() {
    let tokens = random_partitioner_tokens(3);
    let mut nodes = start_cluster(3, |i| Config {
        cluster_name: "Hint Handover".into(),
        initial_token: tokens[i].clone(),
        ..Config::random().extra("<RingDelayInMillis>1000</RingDelayInMillis>")
    });
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    let mut admin = nodes[0].client();
    ok(
        "add keyspace",
        admin.system_add_keyspace(ks_def(KS, 1, vec![without_read_repair(cf_def(KS, "Kv", "UTF8Type"))])),
    );
    drop(admin);

    // Node 2 goes down; node 3 coordinates writes at ANY, keeping hints for node 2's keys.
    assert!(nodes[1].stop().success());
    assert!(
        eventually(Duration::from_secs(30), || marked_down(&nodes[2], "127.0.0.2")),
        "127.0.0.2 not marked down on 127.0.0.3"
    );
    let mut c = nodes[2].client_in(KS);
    for i in 0..ROWS {
        ok(
            "insert at ANY",
            c.insert(b(&format!("k{i}")), parent("Kv"), column(b("c"), b("v"), ts()), t::ConsistencyLevel::ANY),
        );
    }
    drop(c);

    let run = nodes[2].tool(&["decommission"]).ok();
    assert!(run.stdout.starts_with("Decommissioned: "), "{run:?}");
    assert!(run.stderr.contains("handing over hints"), "{run:?}");
    let handed: usize = run
        .stdout
        .split("hints replayed, ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no hint count in {:?}", run.stdout));
    // About a third of the keys belong to node 2.
    assert!((ROWS / 10..ROWS * 2 / 3).contains(&handed), "{handed} hints handed over: {run:?}");
    assert!(nodes[2].stop().success());

    // Node 2 comes back and gets the writes from the node that took the hints.
    nodes[1].start_again();
    wait_for_ring(&nodes[..2], 2, Duration::from_secs(60));
    let mut c = nodes[1].client_in(KS);
    let mut missing = Vec::new();
    let complete = eventually(Duration::from_secs(30), || {
        missing = (0..ROWS).map(|i| format!("k{i}")).filter(|k| value_at_one(&mut c, k).is_none()).collect();
        missing.is_empty()
    });
    assert!(complete, "writes acknowledged at ANY are lost: {missing:?}");
}
