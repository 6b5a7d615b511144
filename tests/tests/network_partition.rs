//! A real network partition (network namespaces, see `e2e::netns`): three nodes at RF 3, one cut
//! off from the other two while all three keep running. Each side must see the other down; the
//! majority keeps taking QUORUM writes, the minority refuses them as unavailable but takes writes
//! at ONE; once the network heals, both sides see each other up again and the hints each kept
//! bring the other side's writes over, without a repair: columns, counter increments made on
//! both sides, and a column family the majority added meanwhile.

use std::time::Duration;

use e2e::netns::Network;
use e2e::*;
use thrift_idl as t;

const KS: &str = "Split";
const QUORUM: t::ConsistencyLevel = t::ConsistencyLevel::QUORUM;

fn hits() -> t::CfDef {
    t::CfDef {
        default_validation_class: Some("CounterColumnType".into()),
        ..without_read_repair(cf_def(KS, "Hits", "UTF8Type"))
    }
}

fn count_at_one(c: &mut Client) -> Option<i64> {
    match c.get(b("song"), path("Hits", "likes"), ONE) {
        Ok(got) => got.counter_column.map(|cc| cc.value),
        Err(thrift::Error::User(e)) if e.downcast_ref::<t::NotFoundException>().is_some() => None,
        Err(e) => panic!("counter read: {e:?}"),
    }
}

fn like(c: &mut Client, by: i64, level: t::ConsistencyLevel) -> thrift::Result<()> {
    c.add(b("song"), parent("Hits"), t::CounterColumn::new(b("likes"), by), level)
}

fn wait_seen_as(node: &Node, address: &str, state: &str, limit: Duration) {
    let ok = eventually(limit, || seen_as(node, address).as_deref() == Some(state));
    assert!(ok, "{} does not see {address} as {state}:\n{}", node.address(), node.tool(&["status"]).stdout);
}

fn write(c: &mut Client, key: &str, value: &str, level: t::ConsistencyLevel) -> thrift::Result<()> {
    c.insert(b(key), parent("Kv"), column("c", value, ts()), level)
}

#[test]
fn a_cut_off_minority_refuses_quorum_and_both_sides_converge_after_healing() {
    let net = Network::new(3);
    let tokens = random_partitioner_tokens(3);
    // Each node has its namespace to itself: the usual ports are free there.
    let ports = Ports { thrift: 9160, storage: 7000, admin: 7199, native: 9042 };
    let seed = format!("{}:7000", net.address(0));
    let nodes: Vec<Node> = (0..3)
        .map(|i| {
            let config = Config {
                cluster_name: "Partition".into(),
                ip: net.ip(i),
                seeds: vec![seed.clone()],
                initial_token: tokens[i].clone(),
                netns: Some(net.namespace(i)),
                ..Config::random()
            };
            Node::start_at(config, ports)
        })
        .collect();
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    let mut majority = nodes[0].client();
    ok(
        "add keyspace",
        majority.system_add_keyspace(ks_def(KS, 3, vec![without_read_repair(cf_def(KS, "Kv", "UTF8Type")), hits()])),
    );
    let mut minority = nodes[2].client();
    assert!(
        eventually(Duration::from_secs(30), || minority.set_keyspace(KS.into()).is_ok()),
        "the schema never reached node 3"
    );
    ok("set_keyspace", majority.set_keyspace(KS.into()));
    ok("write before", write(&mut majority, "before", "all", t::ConsistencyLevel::ALL));
    ok("like before", like(&mut majority, 1, t::ConsistencyLevel::ALL));

    // Node 3 loses the other two; all three keep running.
    let (node3, others) = (net.address(2), [net.address(0), net.address(1)]);
    net.cut(&[2], &[0, 1]);
    for node in &nodes[..2] {
        wait_seen_as(node, &node3, "DN", Duration::from_secs(60));
    }
    for other in &others {
        wait_seen_as(&nodes[2], other, "DN", Duration::from_secs(60));
    }

    // The majority still makes a quorum; the minority does not, and says so at once.
    ok("QUORUM write on the majority side", write(&mut majority, "majority", "m", QUORUM));
    let got = ok("QUORUM read on the majority side", majority.get(b("majority"), path("Kv", "c"), QUORUM));
    assert_eq!(got.column.and_then(|c| c.value), Some(b("m")));
    expect_unavailable("QUORUM write on the minority side", write(&mut minority, "minority", "x", QUORUM));
    expect_unavailable("QUORUM read on the minority side", minority.get(b("before"), path("Kv", "c"), QUORUM));
    ok("ONE write on the minority side", write(&mut minority, "minority", "n", ONE));
    assert_eq!(value_at_one(&mut minority, "majority"), None, "the minority cannot have the majority's write yet");
    assert_eq!(value_at_one(&mut minority, "before").as_deref(), Some(&b"all"[..]));
    // Both sides count likes; the majority also adds a column family.
    ok("like on the majority side", like(&mut majority, 10, QUORUM));
    expect_unavailable("QUORUM like on the minority side", like(&mut minority, 1000, QUORUM));
    ok("like on the minority side", like(&mut minority, 100, ONE));
    assert_eq!(count_at_one(&mut minority), Some(101));
    ok("add a column family", majority.system_add_column_family(cf_def(KS, "Later", "UTF8Type")));

    // Healed: everyone sees everyone up again, and the hints carry each side's writes over.
    net.heal(&[2], &[0, 1]);
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    let arrived =
        eventually(Duration::from_secs(60), || value_at_one(&mut minority, "majority").as_deref() == Some(&b"m"[..]));
    assert!(arrived, "node 3 never got the write it missed:\n{}", nodes[0].log());
    for (i, node) in nodes[..2].iter().enumerate() {
        let mut c = node.client_in(KS);
        let arrived =
            eventually(Duration::from_secs(60), || value_at_one(&mut c, "minority").as_deref() == Some(&b"n"[..]));
        assert!(arrived, "node {} never got node 3's write:\n{}", i + 1, nodes[2].log());
    }
    let got = ok("QUORUM read after healing", minority.get(b("minority"), path("Kv", "c"), QUORUM));
    assert_eq!(got.column.and_then(|c| c.value), Some(b("n")));
    // Every replica counts every like once: 1 before, 10 and 100 on either side.
    for (i, node) in nodes.iter().enumerate() {
        let mut c = node.client_in(KS);
        let counted = eventually(Duration::from_secs(30), || count_at_one(&mut c) == Some(111));
        assert!(counted, "node {} counts {:?} likes", i + 1, count_at_one(&mut c));
    }
    let schema_arrived = eventually(Duration::from_secs(30), || {
        let ks = ok("describe_keyspace", minority.describe_keyspace(KS.into()));
        ks.cf_defs.iter().any(|d| d.name == "Later")
    });
    assert!(schema_arrived, "node 3 never learned of the column family added while it was cut off");
}
