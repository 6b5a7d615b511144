//! A replica that missed a write (it was down and hinted handoff is off) answers stale data at
//! ONE; a QUORUM read through it sees the digests disagree, reconciles, writes the newest data
//! back to it before answering, and from then on it answers the new value itself.

use std::time::Duration;

use e2e::*;
use thrift_idl as t;

const QUORUM: t::ConsistencyLevel = t::ConsistencyLevel::QUORUM;

fn value(c: &mut Client, key: &str, cl: t::ConsistencyLevel) -> Option<Vec<u8>> {
    match c.get(b(key), path("Kv", b("c")), cl) {
        Ok(cosc) => cosc.column.and_then(|c| c.value),
        Err(thrift::Error::User(e)) if e.downcast_ref::<t::NotFoundException>().is_some() => None,
        Err(e) => panic!("get({key}) at {cl:?}: {e:?}"),
    }
}

#[test]
fn a_quorum_read_repairs_a_stale_replica() {
    let tokens = random_partitioner_tokens(3);
    let mut nodes = start_cluster(3, |i| Config {
        cluster_name: "Repair Test".into(),
        initial_token: tokens[i].clone(),
        ..Config::random().extra("<HintedHandoffEnabled>false</HintedHandoffEnabled>")
    });
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    let mut admin = nodes[0].client();
    ok("add keyspace", admin.system_add_keyspace(ks_def("Rr", 3, vec![cf_def("Rr", "Kv", "UTF8Type")])));
    let mut c1 = nodes[0].client_in("Rr");
    for i in 0..20 {
        ok(
            "old",
            c1.insert(b(&format!("k{i}")), parent("Kv"), column(b("c"), b("old"), ts()), t::ConsistencyLevel::ALL),
        );
    }

    // Node 3 stops cleanly (its peers mark it down at once) and misses the new values.
    assert!(nodes[2].stop().success());
    let seen_down = eventually(Duration::from_secs(30), || {
        nodes[0].tool(&["status"]).stdout.lines().any(|l| l.starts_with("DN") && l.contains(" 127.0.0.3 "))
    });
    assert!(seen_down, "node 3 not marked down after its shutdown");
    for i in 0..20 {
        ok("new", c1.insert(b(&format!("k{i}")), parent("Kv"), column(b("c"), b("new"), ts()), QUORUM));
    }
    nodes[2].start_again();
    wait_for_ring(&nodes, 3, Duration::from_secs(60));

    let mut c3 = nodes[2].client_in("Rr");
    // Stale: node 3 answers from its own copy at ONE (no hints were kept).
    assert_eq!(value(&mut c3, "k0", ONE), Some(b("old")), "node 3 should have missed the write");
    // QUORUM through node 3: its digest disagrees with the other replica's; the answer is the
    // newest value, and node 3 is repaired before it is given.
    for i in 0..20 {
        assert_eq!(value(&mut c3, &format!("k{i}"), QUORUM), Some(b("new")), "k{i} at QUORUM");
    }
    for i in 0..20 {
        assert_eq!(value(&mut c3, &format!("k{i}"), ONE), Some(b("new")), "k{i} repaired on node 3");
    }
}
