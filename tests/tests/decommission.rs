//! `sibyltool decommission` on a three-node cluster with RF 2: the leaving node hands every
//! range it replicates to the node taking it over, then leaves the ring. Afterwards each of
//! the two remaining nodes replicates every range, so each one alone answers every row.

use e2e::*;

const KS: &str = "Dc";
const ROWS: usize = 300;

#[test]
fn a_decommissioned_node_hands_its_ranges_over() {
    let mut nodes = three_nodes_at_rf2_with_rows("Decommission Test", KS, ROWS);
    let run = nodes[2].tool(&["decommission"]).ok();
    assert!(run.stdout.starts_with("Decommissioned: "), "{run:?}");
    assert!(run.stderr.contains("announced LEAVING") && run.stderr.contains("announced LEFT"), "{run:?}");
    assert!(run.stderr.contains("sending Dc ("), "{run:?}");
    let info: serde_json::Value = serde_json::from_str(&nodes[2].tool(&["--json", "info"]).ok().stdout).expect("JSON");
    assert_eq!(info["mode"], "DECOMMISSIONED");
    // The others drop it from their rings.
    wait_until_gone(&nodes[..2], "127.0.0.3", 2);
    assert!(nodes[2].stop().success());
    each_of_two_alone_answers_every_row(&mut nodes[..2], KS, ROWS);
}
