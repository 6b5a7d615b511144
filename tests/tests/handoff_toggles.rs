//! Hinted handoff under the operator's hand, on two real nodes with a keyspace at RF 2 (each
//! node a replica of every key): `disablehandoff` keeps no hints for the node that is down,
//! `pausehandoff` keeps them but does not replay them until `resumehandoff`, and
//! `truncatehints` deletes them. Each is checked by what the node that was down holds when it
//! is back, read at ONE from itself (read repair is off, so only hints can bring the rows).

use std::time::Duration;

use e2e::*;

const KS: &str = "Handoff";
/// How long a node may take to see the other down or up again.
const MARKED: Duration = Duration::from_secs(30);
/// Longer than a few rounds of hint delivery (every 2 s) after the replica is seen up.
const DELIVERY_ROUNDS: Duration = Duration::from_secs(6);

fn keys(prefix: &str) -> Vec<String> {
    (0..20).map(|i| format!("{prefix}{i}")).collect()
}

/// Writes `keys` at ONE through `node` (the other replica is down).
fn write(node: &Node, keys: &[String]) {
    let mut c = node.client_in(KS);
    for k in keys {
        ok("insert at ONE", c.insert(b(k), parent("Kv"), column(b("c"), b("v"), ts()), ONE));
    }
}

/// The keys of `keys` that `node` does not hold.
fn missing_on(node: &Node, keys: &[String]) -> Vec<String> {
    let mut c = node.client_in(KS);
    keys.iter().filter(|k| value_at_one(&mut c, k).is_none()).cloned().collect()
}

/// Stops node 2 and waits until node 1 sees it down.
fn stop_second(nodes: &mut [Node]) {
    assert!(nodes[1].stop().success());
    assert!(eventually(MARKED, || marked_down(&nodes[0], "127.0.0.2")), "127.0.0.2 not marked down");
}

/// Starts node 2 again and waits until node 1 sees it up.
fn start_second(nodes: &mut [Node]) {
    nodes[1].start_again();
    wait_for_ring(nodes, 2, MARKED);
}

fn handoff_status(node: &Node) -> String {
    node.tool(&["statushandoff"]).ok().stdout
}

#[test]
fn handoff_can_be_disabled_paused_and_its_hints_truncated() {
    let mut nodes = nodes_with_kv_keyspace(2, "Handoff Toggles", KS, 2);
    assert_eq!(handoff_status(&nodes[0]), "Hinted handoff is running\n");

    // Disabled: writes while node 2 is down keep no hint for it.
    assert_eq!(nodes[0].tool(&["disablehandoff"]).ok().stdout, "");
    assert_eq!(handoff_status(&nodes[0]), "Hinted handoff is not running\n");
    stop_second(&mut nodes);
    let unhinted = keys("off");
    write(&nodes[0], &unhinted);

    // Enabled and paused: writes keep hints, which are not replayed while paused.
    assert_eq!(nodes[0].tool(&["enablehandoff"]).ok().stdout, "");
    assert_eq!(nodes[0].tool(&["pausehandoff"]).ok().stdout, "");
    assert_eq!(
        handoff_status(&nodes[0]),
        "Hinted handoff is running\nHint delivery is paused (resumehandoff resumes it)\n"
    );
    let hinted = keys("on");
    write(&nodes[0], &hinted);
    start_second(&mut nodes);
    std::thread::sleep(DELIVERY_ROUNDS);
    assert_eq!(missing_on(&nodes[1], &hinted), hinted, "hints replayed while delivery was paused");

    // Resumed: the hints arrive; the writes made with handoff disabled never do.
    assert_eq!(nodes[0].tool(&["resumehandoff"]).ok().stdout, "");
    assert_eq!(handoff_status(&nodes[0]), "Hinted handoff is running\n");
    let mut missing = Vec::new();
    let delivered = eventually(MARKED, || {
        missing = missing_on(&nodes[1], &hinted);
        missing.is_empty()
    });
    assert!(delivered, "hints not replayed after resumehandoff: {missing:?}");
    assert_eq!(missing_on(&nodes[1], &unhinted), unhinted, "rows written while handoff was disabled arrived");

    // Truncated: hints kept for node 2 are deleted before it is back.
    stop_second(&mut nodes);
    let truncated = keys("cut");
    write(&nodes[0], &truncated);
    let run = nodes[0].tool(&["truncatehints", "127.0.0.2"]).ok();
    assert!(run.stdout.starts_with("Deleted 20 hint(s) for 127.0.0.2:"), "{run:?}");
    assert_eq!(nodes[0].tool(&["truncatehints"]).ok().stdout, "", "nothing left to delete");
    let bad = nodes[0].tool(&["truncatehints", "not-an-ip"]);
    assert_eq!(bad.code, Some(1), "{bad:?}");
    assert!(bad.stderr.contains("'not-an-ip' is not an IP address"), "{bad:?}");
    start_second(&mut nodes);
    std::thread::sleep(DELIVERY_ROUNDS);
    assert_eq!(missing_on(&nodes[1], &truncated), truncated, "truncated hints were replayed");
}
