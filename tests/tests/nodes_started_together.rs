//! Three nodes started together, used the moment their Thrift ports accept connections, as a
//! new user does: a node serves only once gossip has settled, so the ring it places and reads
//! rows with is the whole ring. No waiting in the tests beyond a client's retry of an
//! UnavailableException.

use std::collections::BTreeSet;
use std::time::Duration;

use e2e::*;
use thrift_idl as t;

const QUORUM: t::ConsistencyLevel = t::ConsistencyLevel::QUORUM;
/// How long a client retries a request the cluster answers Unavailable.
const RETRY: Duration = Duration::from_secs(20);

#[test]
fn every_write_acknowledged_at_once_is_read_at_quorum_through_every_node() {
    let tokens = random_partitioner_tokens(3);
    let nodes = start_cluster(3, |i| Config {
        cluster_name: "Started Together".into(),
        initial_token: tokens[i].clone(),
        ..Config::random()
    });
    let mut admin = nodes[0].client();
    ok("add keyspace", admin.system_add_keyspace(ks_def("Together", 3, vec![cf_def("Together", "Kv", "UTF8Type")])));

    // Every node places each range on all three.
    let everyone: BTreeSet<String> = nodes.iter().map(|n| n.address()).collect();
    for node in &nodes {
        let ring = ok("describe_ring", node.client().describe_ring("Together".into()));
        assert_eq!(ring.len(), 3, "{}: {ring:?}", node.address());
        for range in &ring {
            let endpoints: BTreeSet<String> = range.endpoints.iter().cloned().collect();
            assert_eq!(
                endpoints,
                everyone,
                "{} places range {}..{}",
                node.address(),
                range.start_token,
                range.end_token
            );
        }
    }

    let mut clients: Vec<Client> = nodes.iter().map(|n| n.client_in("Together")).collect();
    let mut refused = 0;
    for i in 0..300 {
        let (key, value) = (format!("k{i}"), format!("v{i}"));
        let c = &mut clients[i % 3];
        let (_, r) = retry_unavailable("insert at QUORUM", RETRY, || {
            c.insert(b(&key), parent("Kv"), column(b("c"), b(&value), ts()), QUORUM)
        });
        refused += r;
    }
    for (n, c) in clients.iter_mut().enumerate() {
        for i in 0..300 {
            let key = format!("k{i}");
            let got = ok("get at QUORUM", c.get(b(&key), path("Kv", b("c")), QUORUM));
            assert_eq!(got.column.and_then(|c| c.value), Some(b(&format!("v{i}"))), "node {} key {key}", n + 1);
        }
    }
    eprintln!("writes answered Unavailable and retried: {refused}");
}

#[test]
fn rows_written_at_one_through_the_seed_are_all_found_through_another_node() {
    const OPP: &str = "org.apache.cassandra.dht.OrderPreservingPartitioner";
    // Keys k0..k9 sort among the tokens so each node owns some of them.
    const TOKENS: [&str; 3] = ["k3", "k6", "z"];
    let nodes = start_cluster(3, |i| Config {
        cluster_name: "Started Together OPP".into(),
        initial_token: TOKENS[i].into(),
        ..Config::random().partitioner(OPP)
    });
    let mut admin = nodes[0].client();
    ok("add keyspace", admin.system_add_keyspace(ks_def("Ordered", 1, vec![cf_def("Ordered", "Kv", "UTF8Type")])));
    let mut writer = nodes[0].client_in("Ordered");
    for i in 0..10 {
        let key = format!("k{i}");
        retry_unavailable("insert at ONE", RETRY, || {
            writer.insert(b(&key), parent("Kv"), column(b("c"), b("v"), ts()), ONE)
        });
    }
    for node in &nodes[1..] {
        let mut reader = node.client_in("Ordered");
        let rows = ok("scan", reader.get_range_slices(parent("Kv"), all(10), key_range("", "", 100), ONE));
        let keys: Vec<String> = slice_keys(&rows);
        let expected: Vec<String> = (0..10).map(|i| format!("k{i}")).collect();
        assert_eq!(keys, expected, "scan through {}", node.address());
    }
}
