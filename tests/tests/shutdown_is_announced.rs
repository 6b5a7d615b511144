//! A node stopped with SIGTERM tells its peers, and they mark it down at once, not after the
//! failure detector's conviction time (over half a minute for a peer heard from only a few
//! times). That holds for a peer that restarted a moment ago too, although the stopping node's
//! connection to it may still be waiting to reconnect when the stop comes.

use std::time::Duration;

use e2e::*;

/// Far below what the failure detector needs to convict a peer that just restarted.
const ANNOUNCED: Duration = Duration::from_secs(10);

#[test]
fn a_stopping_node_reaches_a_peer_that_just_restarted() {
    let tokens = random_partitioner_tokens(2);
    let mut nodes = start_cluster(2, |i| Config {
        cluster_name: "Shutdown Test".into(),
        initial_token: tokens[i].clone(),
        ..Config::random()
    });
    wait_for_ring(&nodes, 2, Duration::from_secs(60));
    for round in 1..=3 {
        // Node 2 goes away and comes back at once: node 1's connection to it may be between
        // attempts to reconnect.
        assert!(nodes[1].stop().success());
        nodes[1].start_again();
        wait_for_ring(&nodes, 2, Duration::from_secs(60));
        // Node 1 stops as soon as both see each other up.
        assert!(nodes[0].stop().success());
        assert!(
            eventually(ANNOUNCED, || marked_down(&nodes[1], "127.0.0.1")),
            "round {round}: 127.0.0.1 not marked down within {ANNOUNCED:?}: {:?}",
            status_lines(&nodes[1])
        );
        nodes[0].start_again();
        wait_for_ring(&nodes, 2, Duration::from_secs(60));
    }
}
