//! `sibyltool decommission` on a three-node cluster with RF 2: the leaving node hands every
//! range it replicates to the node taking it over, then leaves the ring. Afterwards each of
//! the two remaining nodes replicates every range, so each one alone answers every row.

use std::time::Duration;

use e2e::*;
use thrift_idl as t;

const KS: &str = "Dc";
const ROWS: usize = 300;

fn value(c: &mut Client, key: &str, through: &Node) -> Option<Vec<u8>> {
    match c.get(b(key), path("Kv", b("c")), ONE) {
        Ok(cosc) => cosc.column.and_then(|c| c.value),
        Err(thrift::Error::User(e)) if e.downcast_ref::<t::NotFoundException>().is_some() => None,
        Err(e) => panic!(
            "get({key}) through {}: {e:?}\n{}\n{}",
            through.address(),
            through.tool(&["status"]).stdout,
            through.log()
        ),
    }
}

/// The node lines of `sibyltool status` (`UN`, `DN`, `UL`, ...).
fn status_lines(node: &Node) -> Vec<String> {
    node.tool(&["status"]).stdout.lines().filter(|l| l.contains(" 127.0.0.")).map(String::from).collect()
}

#[test]
fn a_decommissioned_node_hands_its_ranges_over() {
    let tokens = random_partitioner_tokens(3);
    let mut nodes = start_cluster(3, |i| Config {
        cluster_name: "Decommission Test".into(),
        initial_token: tokens[i].clone(),
        ..Config::random().extra("<RingDelayInMillis>1000</RingDelayInMillis>")
    });
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    let mut admin = nodes[0].client();
    // No read repair: only the handover may put rows on the nodes taking node 3's ranges.
    let kv = without_read_repair(cf_def(KS, "Kv", "UTF8Type"));
    ok("add keyspace", admin.system_add_keyspace(ks_def(KS, 2, vec![kv])));
    let mut c1 = nodes[0].client_in(KS);
    for i in 0..ROWS {
        ok(
            "insert",
            c1.insert(b(&format!("k{i}")), parent("Kv"), column(b("c"), b("v"), ts()), t::ConsistencyLevel::ALL),
        );
    }

    let run = nodes[2].tool(&["decommission"]).ok();
    assert!(run.stdout.starts_with("Decommissioned: "), "{run:?}");
    assert!(run.stderr.contains("announced LEAVING") && run.stderr.contains("announced LEFT"), "{run:?}");
    assert!(run.stderr.contains("sending Dc ("), "{run:?}");
    let info: serde_json::Value = serde_json::from_str(&nodes[2].tool(&["--json", "info"]).ok().stdout).expect("JSON");
    assert_eq!(info["mode"], "DECOMMISSIONED");
    // The others drop it from their rings.
    for node in &nodes[..2] {
        let left = eventually(Duration::from_secs(30), || {
            let lines = status_lines(node);
            lines.len() == 2 && !lines.iter().any(|l| l.contains(" 127.0.0.3 "))
        });
        assert!(left, "{} still lists node 3: {:?}", node.address(), status_lines(node));
    }
    assert!(nodes[2].stop().success());

    // RF 2 on two nodes: each holds every row. Node 1 alone, then node 2 alone.
    for (alone, other) in [(0, 1), (1, 0)] {
        assert!(nodes[other].stop().success());
        let other_address = nodes[other].address();
        let down = eventually(Duration::from_secs(30), || {
            status_lines(&nodes[alone])
                .iter()
                .any(|l| l.starts_with("DN ") && l.contains(&format!(" {other_address} ")))
        });
        assert!(down, "{other_address} not marked down");
        let mut c = nodes[alone].client_in(KS);
        for i in 0..ROWS {
            assert_eq!(
                value(&mut c, &format!("k{i}"), &nodes[alone]),
                Some(b("v")),
                "k{i} on {} alone",
                nodes[alone].address()
            );
        }
        nodes[other].start_again();
        wait_for_ring(&nodes[..2], 2, Duration::from_secs(60));
    }
}
