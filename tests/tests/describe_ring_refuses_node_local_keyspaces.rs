//! Issue 11, point 5: describe_ring on a node-local (LocalStrategy) keyspace answers
//! InvalidRequestException "There is no ring for the keyspace: <name>", as Cassandra 3.11 does,
//! while a replicated keyspace gets its ring. describe_local_ring answers the same way.

use e2e::*;
use thrift_idl::TCassandraSyncClient;

#[test]
fn describe_ring_on_a_node_local_keyspace_is_an_invalid_request() {
    let node = Node::start(Config::random());
    let mut c = node.client();
    create_keyspace(&mut c, "Ringed", vec![cf_def("Ringed", "Standard1", "UTF8Type")]);

    let why = expect_ire("describe_ring(system)", c.describe_ring("system".into()));
    assert_eq!(why, "There is no ring for the keyspace: system");
    let why = expect_ire("describe_local_ring(system)", c.describe_local_ring("system".into()));
    assert_eq!(why, "There is no ring for the keyspace: system");
    // Every other node-local keyspace the node keeps answers the same way.
    for ks in ok("describe_keyspaces", c.describe_keyspaces()) {
        if ks.strategy_class.ends_with("LocalStrategy") {
            let why = expect_ire(&format!("describe_ring({})", ks.name), c.describe_ring(ks.name.clone()));
            assert_eq!(why, format!("There is no ring for the keyspace: {}", ks.name));
        }
    }

    // A replicated keyspace has a ring: one range (one node), this node its replica.
    let ring = ok("describe_ring(Ringed)", c.describe_ring("Ringed".into()));
    assert_eq!(ring.len(), 1, "{ring:?}");
    assert_eq!(ring[0].endpoints, vec!["127.0.0.1".to_string()]);
    // An unknown keyspace is an invalid request too, with its own reason.
    let why = expect_ire("describe_ring(unknown)", c.describe_ring("NoSuchKeyspace".into()));
    assert!(why.contains("NoSuchKeyspace"), "{why}");
    // The connection is still usable after the refusals.
    assert_eq!(ok("describe_version", c.describe_version()), "20.1.0");
}
