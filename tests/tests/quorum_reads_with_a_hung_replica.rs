//! A replica that hangs (SIGSTOP, as a long pause of its process would) before the failure
//! detector convicts it does not fail QUORUM reads: a read whose replicas asked are slow to
//! answer asks one more for data after a delay (speculative retry), so the hung one costs that
//! delay, not the read. Three real nodes, a keyspace at RF 3 with read repair off (so only the
//! speculation can bring the third replica in), every key read right after the freeze.

use std::time::{Duration, Instant};

use e2e::*;
use thrift_idl as t;

const KS: &str = "Hung";
const QUORUM: t::ConsistencyLevel = t::ConsistencyLevel::QUORUM;

#[test]
fn quorum_reads_go_on_while_a_replica_hangs_unconvicted() {
    let mut nodes = nodes_with_kv_keyspace(3, "Hung Replica", KS, 3);
    let mut c = nodes[0].client_in(KS);
    let keys: Vec<String> = (0..12).map(|i| format!("h{i}")).collect();
    for k in &keys {
        ok("insert at ALL", c.insert(b(k), parent("Kv"), column(b("c"), b(k), ts()), t::ConsistencyLevel::ALL));
    }

    // Each of the other two in turn: the digest replica a key's read asks first depends on the
    // key, so between them every key meets a hung replica once.
    for frozen in [1, 2] {
        nodes[frozen].pause();
        let started = Instant::now();
        for k in &keys {
            let got = c.get(b(k), path("Kv", b("c")), QUORUM);
            let got = got.unwrap_or_else(|e| panic!("QUORUM read of {k} with node {} frozen: {e:?}", frozen + 1));
            assert_eq!(got.column.and_then(|col| col.value), Some(b(k)));
        }
        // Well within the failure detector's time to convict (the reads must meet the hung
        // replica unconvicted for the test to mean anything).
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "the reads took {:?}: the hung replica was convicted meanwhile, or each read waited too long",
            started.elapsed()
        );
        assert!(!marked_down(&nodes[0], nodes[frozen].address().as_str()), "convicted during the reads");
        nodes[frozen].resume();
        wait_for_ring(&nodes, 3, Duration::from_secs(60));
    }
}
