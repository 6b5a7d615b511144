//! The coordinator on a single node: what it caches must follow the schema.

use model::data::Cell;
use model::filter::{CountUnit, ReadFilter};
use model::mutation::RowMutation;
use model::schema::{CfDef, KeyspaceDef};

use super::{Coordinator, CoordinatorError, LocalNode, ReadCommand};
use crate::consistency::ConsistencyLevel::{One, Quorum};

/// A coordinator of one node holding keyspace `ks` with column family `cf` (RF 1).
pub(super) fn single_node(dir: &std::path::Path) -> (storage::engine::Storage, std::sync::Arc<Coordinator>) {
    let mut ks = KeyspaceDef::new("ks");
    ks.cf_defs.push(CfDef::new("ks", "cf"));
    let mut config = storage::engine::StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    config.initial_keyspaces = vec![ks];
    let storage = storage::engine::Storage::open(config).expect("opens");
    let node = LocalNode {
        cluster_name: "test".into(),
        endpoint: "127.0.0.1:7000".parse().expect("address"),
        rpc_address: "127.0.0.1".into(),
        token: model::dht::Token::minimum(),
        snitch: "org.apache.cassandra.locator.SimpleSnitch".into(),
    };
    (storage.clone(), Coordinator::single_node(storage, node).expect("coordinator"))
}

fn with_rf(storage: &storage::engine::Storage, rf: &str) {
    let mut ks = storage.keyspace("ks").expect("keyspace");
    ks.strategy_options.insert("replication_factor".into(), rf.into());
    storage.update_keyspace(ks).expect("updates");
}

fn write(name: &str) -> Vec<RowMutation> {
    let mut m = RowMutation::new("ks", b"k".to_vec());
    let mut row = model::data::Row::new();
    row.cells.push(Cell::live(name, "v", 1));
    m.updates.push(("cf".into(), row));
    vec![m]
}

fn read() -> Vec<ReadCommand> {
    let filter = ReadFilter::slice(Vec::new(), Vec::new(), false, 100, CountUnit::Cells);
    vec![ReadCommand { keyspace: "ks".into(), cf: "cf".into(), key: b"k".to_vec(), filter }]
}

#[tokio::test]
async fn a_changed_replication_factor_is_seen_by_the_next_request() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (storage, c) = single_node(dir.path());
    c.mutate(write("a"), Quorum).await.expect("QUORUM of one replica");
    assert_eq!(c.read(read(), Quorum).await.expect("read").concat().len(), 1);

    // Three replicas wanted, one node: QUORUM needs two (Cassandra counts the factor, not the
    // nodes), so the placement computed for RF 1 must not be reused.
    with_rf(&storage, "3");
    match c.mutate(write("b"), Quorum).await {
        Err(CoordinatorError::Unavailable { required: 2, alive: 1, .. }) => {}
        other => panic!("QUORUM with RF 3 on one node answered {other:?}"),
    }
    assert!(matches!(c.read(read(), Quorum).await, Err(CoordinatorError::Unavailable { required: 2, .. })));
    c.mutate(write("b"), One).await.expect("ONE is met");

    with_rf(&storage, "1");
    c.mutate(write("c"), Quorum).await.expect("QUORUM of one replica again");
    assert_eq!(c.read(read(), Quorum).await.expect("read").concat().len(), 3);

    // A keyspace that is gone is not served from the cache.
    storage.drop_keyspace("ks").expect("drops");
    assert!(matches!(c.mutate(write("d"), One).await, Err(CoordinatorError::Invalid(_))));
}

/// Each thread remembers its last placement; two nodes served by one thread (as in tests, or
/// a process hosting two coordinators) each get their own keyspace's replication.
#[tokio::test]
async fn a_thread_remembers_each_coordinators_own_placement() {
    let (one_dir, three_dir) = (tempfile::tempdir().expect("tempdir"), tempfile::tempdir().expect("tempdir"));
    let (_, rf1) = single_node(one_dir.path());
    let (three_storage, rf3) = single_node(three_dir.path());
    with_rf(&three_storage, "3");
    for _ in 0..3 {
        rf1.mutate(write("a"), Quorum).await.expect("QUORUM of one replica");
        assert!(
            matches!(rf3.mutate(write("a"), Quorum).await, Err(CoordinatorError::Unavailable { required: 2, .. })),
            "the RF 3 keyspace was placed as the other coordinator's RF 1"
        );
        assert!(matches!(rf3.read(read(), Quorum).await, Err(CoordinatorError::Unavailable { required: 2, .. })));
        assert_eq!(rf1.read(read(), Quorum).await.expect("read").concat().len(), 1);
    }
}

#[tokio::test]
async fn writes_wait_while_a_live_node_has_no_place_in_the_ring() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_storage, c) = single_node(dir.path());
    c.mutate(write("a"), One).await.expect("placed");
    // Gossip says a live peer has not announced where it stands: it may take this key's range.
    c.membership().set_awaiting_placement(true);
    for cl in [One, Quorum, crate::consistency::ConsistencyLevel::Any] {
        match c.mutate(write("b"), cl).await {
            Err(CoordinatorError::Unavailable { .. }) => {}
            other => panic!("{cl:?} while a node is not placed: {other:?}"),
        }
    }
    // Reads go on: the ring they route with holds every replica that has data.
    assert_eq!(c.read(read(), One).await.expect("read").concat().len(), 1);
    c.membership().set_awaiting_placement(false);
    c.mutate(write("b"), One).await.expect("placed again");
    assert_eq!(c.read(read(), One).await.expect("read").concat().len(), 2);
}
