//! A replica that dies before the others notice still gets the writes it missed: the
//! coordinator keeps a hint for every replica that fails to acknowledge a write, or has not
//! answered by the write timeout, though it was not marked down when the write came (Cassandra
//! 1.0+ hints on an expired write callback). Two real nodes, a keyspace at RF 2 with read
//! repair off, so only a hint can bring the rows to the node that was killed.

use std::time::Duration;

use e2e::*;

const KS: &str = "Unacked";

#[test]
fn a_replica_killed_before_it_is_marked_down_gets_its_writes_by_hints() {
    let mut nodes = nodes_with_kv_keyspace(2, "Unacknowledged Writes", KS, 2);

    // Node 2 dies without a word; node 1 still holds it alive when the writes come.
    nodes[1].kill9();
    assert!(!marked_down(&nodes[0], "127.0.0.2"), "127.0.0.2 marked down at once: the test proves nothing");
    let keys: Vec<String> = (0..10).map(|i| format!("k{i}")).collect();
    let mut c = nodes[0].client_in(KS);
    for k in &keys {
        ok("insert at ONE", c.insert(b(k), parent("Kv"), column(b("c"), b("v"), ts()), ONE));
    }
    drop(c);
    // Past the write timeout (RpcTimeoutInMillis, 2 s by default): the requests queued for node
    // 2 have expired, so only what the coordinator kept can reach it.
    std::thread::sleep(Duration::from_secs(4));

    nodes[1].start_again();
    wait_for_ring(&nodes, 2, Duration::from_secs(30));
    let mut c = nodes[1].client_in(KS);
    let mut missing = Vec::new();
    let delivered = eventually(Duration::from_secs(40), || {
        missing = keys.iter().filter(|k| value_at_one(&mut c, k).is_none()).cloned().collect();
        missing.is_empty()
    });
    assert!(delivered, "writes the killed replica never acknowledged did not reach it: {missing:?}");
}
