//! `sibyltool removenode` on a three-node cluster with RF 2: node 3 dies (SIGKILL), node 1
//! removes it, and the replicas node 3 held are restored from the surviving ones onto the
//! nodes that take its ranges. Afterwards each of the two remaining nodes replicates every
//! range, so each one alone answers every row. Removing a live node, or this node, is refused.

use std::time::Duration;

use e2e::*;

const KS: &str = "Rn";
const ROWS: usize = 300;

#[test]
fn a_dead_node_is_removed_and_its_replicas_restored() {
    let mut nodes = three_nodes_at_rf2_with_rows("Removenode Test", KS, ROWS);
    // Refused while node 3 is up, and for the node running it.
    let live = nodes[0].tool(&["removenode", "127.0.0.3"]);
    assert!(live.code != Some(0) && live.stderr.contains("is up"), "{live:?}");
    let itself = nodes[0].tool(&["removenode", "127.0.0.1"]);
    assert!(itself.code != Some(0) && itself.stderr.contains("use decommission"), "{itself:?}");

    nodes[2].kill9();
    assert!(eventually(Duration::from_secs(60), || marked_down(&nodes[0], "127.0.0.3")), "node 3 not marked down");
    let run = nodes[0].tool(&["removenode", "127.0.0.3"]).ok();
    assert!(run.stdout.starts_with("Removed 127.0.0.3: "), "{run:?}");
    assert!(!run.stdout.contains("lost"), "RF 2: every range had another replica: {run:?}");
    assert!(run.stderr.contains("REMOVING") && run.stderr.contains("restoring Rn ("), "{run:?}");
    wait_until_gone(&nodes[..2], "127.0.0.3", 2);
    each_of_two_alone_answers_every_row(&mut nodes[..2], KS, ROWS);
}
