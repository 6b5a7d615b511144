//! `sibyltool move` and `sibyltool loadbalance` on a three-node cluster with RF 2: the moving
//! node takes the data of the ranges it will replicate, hands over those it gives up, and ends
//! at its new token, while writes keep coming. Afterwards (and after cleanup) every row is on
//! both of its replicas: with any one node stopped, the other two answer every row at ONE.

use std::time::Duration;

use e2e::*;
use thrift_idl::{self as t, TCassandraSyncClient};

const KS: &str = "Mv";
const ROWS: usize = 300;
/// Rows written during the move.
const DURING: usize = 150;

#[test]
fn a_moved_node_takes_its_new_ranges_and_gives_up_its_old_ones() {
    let mut nodes = three_nodes_at_rf2_with_rows("Move Test", KS, ROWS);
    let tokens = random_partitioner_tokens(3);
    // Node 3 (at 2/3 of the ring) moves to 1/6: between nodes 1 and 2.
    let destination = ((1u128 << 127) / 6).to_string();

    let writer = {
        let mut c = nodes[0].client_in(KS);
        std::thread::spawn(move || {
            for i in 0..DURING {
                let key = format!("w{i}");
                let r = c.insert(b(&key), parent("Kv"), column(b("c"), b("v"), ts()), t::ConsistencyLevel::QUORUM);
                ok("insert during the move", r);
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let run = nodes[2].tool(&["move", &destination]).ok();
    writer.join().expect("writer");
    assert!(run.stdout.starts_with(&format!("Moved from token {} to {destination}: ", tokens[2])), "{run:?}");
    assert!(run.stderr.contains("announced MOVING") && run.stderr.contains("announced NORMAL"), "{run:?}");
    assert!(run.stderr.contains("fetching Mv (") && run.stderr.contains("sending Mv ("), "{run:?}");
    clean_up_once_every_node_sees(&nodes, &destination);
    each_alone_answers_every_row(&mut nodes);

    // The same node again, to where loadbalance puts it: the middle of the largest range of
    // the other two, which is node 1's (from node 2's token around the end of the ring to 0).
    let run = nodes[2].tool(&["loadbalance"]).ok();
    let node2: u128 = tokens[1].parse().expect("token");
    let expected = ((node2 + (1u128 << 127)) / 2).to_string();
    assert!(run.stdout.starts_with(&format!("Moved from token {destination} to {expected}: ")), "{run:?}");
    clean_up_once_every_node_sees(&nodes, &expected);
    each_alone_answers_every_row(&mut nodes);

    // A token another node holds is refused, and so is moving to where it is.
    let taken = nodes[2].tool(&["move", &tokens[0]]);
    assert_eq!(taken.code, Some(1), "{taken:?}");
    assert!(taken.stderr.contains("127.0.0.1:") && taken.stderr.contains("holds it"), "{taken:?}");
    let same = nodes[2].tool(&["move", &expected]);
    assert!(same.stderr.contains("this node is already at token"), "{same:?}");
}

/// Waits until every node sees node 3 at `token`, then runs cleanup on each, as an operator
/// should: a node that still routes by the old ring would read a range from node 3 after node 3
/// dropped it. (Under load the move's last `RingDelayInMillis`, 1 s here, was once not enough.)
fn clean_up_once_every_node_sees(nodes: &[Node], token: &str) {
    for node in nodes {
        assert!(
            eventually(Duration::from_secs(30), || token_of(node, "127.0.0.3").as_deref() == Some(token)),
            "{} does not see 127.0.0.3 at {token}",
            node.address()
        );
    }
    for node in nodes {
        node.tool(&["cleanup", KS]).ok();
    }
}

/// The token `node` sees for the node at `address`.
fn token_of(node: &Node, address: &str) -> Option<String> {
    let run = node.tool(&["--json", "ring"]);
    let ring: serde_json::Value = serde_json::from_str(&run.stdout).ok()?;
    let entries = ring["entries"].as_array()?;
    let entry = entries.iter().find(|e| e["address"] == address)?;
    entry["token"].as_str().map(String::from)
}

/// Stops each node in turn and reads every row (`k…` and `w…`) at ONE through another: each
/// row's two replicas include a live one, which must hold it.
fn each_alone_answers_every_row(nodes: &mut [Node]) {
    let keys: Vec<String> = (0..ROWS).map(|i| format!("k{i}")).chain((0..DURING).map(|i| format!("w{i}"))).collect();
    for stopped in 0..nodes.len() {
        assert!(nodes[stopped].stop().success());
        let address = nodes[stopped].address();
        let reader = (stopped + 1) % nodes.len();
        assert!(
            eventually(Duration::from_secs(30), || marked_down(&nodes[reader], &address)),
            "{address} not marked down"
        );
        let mut c = nodes[reader].client_in(KS);
        for key in &keys {
            assert_eq!(value_at_one(&mut c, key), Some(b("v")), "{key} with {address} stopped");
        }
        nodes[stopped].start_again();
        wait_for_ring(nodes, nodes.len(), Duration::from_secs(60));
    }
}

#[test]
fn a_move_that_loses_a_node_midway_ends_at_the_old_token_with_every_row() {
    let mut nodes = three_nodes_at_rf2_with_rows("Failed Move Test", KS, ROWS);
    let tokens = random_partitioner_tokens(3);
    let destination = ((1u128 << 127) / 6).to_string();
    let mover = std::thread::spawn(nodes[2].tool_later(&["move", &destination]));
    // Inside the RingDelayInMillis (1 s) after MOVING, before any data moves.
    std::thread::sleep(Duration::from_millis(400));
    nodes[1].kill9();
    let run = mover.join().expect("move thread");
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains(&format!("move stopped, the node is NORMAL at token {} again", tokens[2])), "{run:?}");
    let info: serde_json::Value = serde_json::from_str(&nodes[2].tool(&["--json", "info"]).ok().stdout).expect("JSON");
    assert_eq!(info["mode"], "NORMAL");
    // Node 1 sees node 3 back at its old token, not moving.
    assert!(
        eventually(Duration::from_secs(30), || token_of(&nodes[0], "127.0.0.3").as_deref() == Some(&tokens[2])
            && ring_state(&nodes[0], "127.0.0.3").as_deref() == Some("Normal")),
        "node 1's ring: {}",
        nodes[0].tool(&["ring"]).stdout
    );
    // With node 2 dead, every row still has a live replica that holds it.
    assert!(eventually(Duration::from_secs(30), || marked_down(&nodes[0], "127.0.0.2")), "node 2 not marked down");
    let mut c = nodes[0].client_in(KS);
    for i in 0..ROWS {
        let key = format!("k{i}");
        assert_eq!(value_at_one(&mut c, &key), Some(b("v")), "{key}");
    }
}

/// The state (`Normal`, `Moving`, ...) `node` sees for the node at `address`.
fn ring_state(node: &Node, address: &str) -> Option<String> {
    let run = node.tool(&["--json", "ring"]);
    let ring: serde_json::Value = serde_json::from_str(&run.stdout).ok()?;
    let entry = ring["entries"].as_array()?.iter().find(|e| e["address"] == address)?.clone();
    entry["state"].as_str().map(String::from)
}
