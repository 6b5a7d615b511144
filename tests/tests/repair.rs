//! `sibyltool repair` on a three-node cluster: a replica that was down while hinted handoff
//! was off misses inserts, overwrites and a deletion; repair brings it up to date, after which it
//! answers everything alone, and a second repair finds nothing to write. With a replica down,
//! repair refuses and names it.

use std::time::Duration;

use e2e::*;
use thrift_idl as t;

const KS: &str = "Rp";
const QUORUM: t::ConsistencyLevel = t::ConsistencyLevel::QUORUM;
const ALL: t::ConsistencyLevel = t::ConsistencyLevel::ALL;

fn value(c: &mut Client, key: &str) -> Option<Vec<u8>> {
    match c.get(b(key), path("Kv", b("c")), ONE) {
        Ok(cosc) => cosc.column.and_then(|c| c.value),
        Err(thrift::Error::User(e)) if e.downcast_ref::<t::NotFoundException>().is_some() => None,
        Err(e) => panic!("get({key}): {e:?}"),
    }
}

fn put(c: &mut Client, key: &str, v: &str, cl: t::ConsistencyLevel) {
    ok("insert", c.insert(b(key), parent("Kv"), column(b("c"), b(v), ts()), cl));
}

fn marked_down(node: &Node, address: &str) -> bool {
    node.tool(&["status"]).stdout.lines().any(|l| l.starts_with("DN") && l.contains(&format!(" {address} ")))
}

/// `(ranges, partitions, writes, mismatched)` of the one column family a `--json repair` run
/// reports.
fn repaired(run: &ToolRun) -> (u64, u64, u64, u64) {
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    let cf = &json["column_families"][0];
    assert_eq!(cf["name"], format!("{KS}.Kv"), "{json}");
    let n = |field: &str| cf[field].as_u64().unwrap_or_else(|| panic!("no {field} in {json}"));
    (n("ranges"), n("partitions"), n("writes"), n("mismatched"))
}

#[test]
fn repair_brings_a_replica_that_missed_writes_up_to_date() {
    let tokens = random_partitioner_tokens(3);
    let mut nodes = start_cluster(3, |i| Config {
        cluster_name: "Repair Command Test".into(),
        initial_token: tokens[i].clone(),
        ..Config::random().extra("<HintedHandoffEnabled>false</HintedHandoffEnabled>")
    });
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    let mut admin = nodes[0].client();
    // No read repair: only the repair command may bring node 3 up to date.
    let kv = without_read_repair(cf_def(KS, "Kv", "UTF8Type"));
    ok("add keyspace", admin.system_add_keyspace(ks_def(KS, 3, vec![kv])));
    let mut c1 = nodes[0].client_in(KS);
    for i in 0..50 {
        put(&mut c1, &format!("old{i}"), "old", ALL);
    }

    // Node 3 stops cleanly and misses new rows, overwrites and a deletion.
    assert!(nodes[2].stop().success());
    assert!(eventually(Duration::from_secs(30), || marked_down(&nodes[0], "127.0.0.3")), "node 3 not marked down");
    for i in 0..300 {
        put(&mut c1, &format!("new{i}"), "new", QUORUM);
    }
    for i in 0..10 {
        put(&mut c1, &format!("old{i}"), "overwritten", QUORUM);
    }
    ok("remove", c1.remove(b("old49"), row_path("Kv"), ts(), QUORUM));
    nodes[2].start_again();
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    let mut c3 = nodes[2].client_in(KS);
    assert_eq!(value(&mut c3, "new0"), None, "node 3 should have missed the writes (no hints)");

    // Every range of the ring has node 3 as a replica (RF 3): three ranges, each compared.
    let run = nodes[2].tool(&["--json", "repair", KS]).ok();
    let (ranges, partitions, writes, mismatched) = repaired(&run);
    assert_eq!(ranges, 3, "{run:?}");
    assert_eq!(partitions, 350, "every partition, the deleted one included: {run:?}");
    assert_eq!(writes, 311, "300 new rows, 10 overwrites and the deletion, to node 3 alone: {run:?}");
    // 300 new keys spread over the ring: most of the 64 sub-ranges of each range differ.
    assert!((100..=192).contains(&mismatched), "sub-ranges whose digests differed: {run:?}");
    assert!(run.stderr.contains("repairing Rp.Kv ("), "progress: {run:?}");
    // Converged: every digest agrees, nothing is compared partition by partition or written,
    // and the plain output says so.
    let again = nodes[0].tool(&["repair", KS, "Kv"]).ok();
    assert!(
        again.stdout.contains("Rp.Kv: 3 ranges, 350 partitions compared, 0 sub-ranges differed, 0 written"),
        "{again:?}"
    );
    let primary = nodes[0].tool(&["--json", "repair", "--partitioner-range", KS]).ok();
    assert_eq!(repaired(&primary).0, 1, "one primary range per node: {primary:?}");

    // Node 3 alone now answers what it missed.
    assert!(nodes[0].stop().success());
    assert!(nodes[1].stop().success());
    assert!(eventually(Duration::from_secs(30), || marked_down(&nodes[2], "127.0.0.1")), "node 1 not marked down");
    for i in 0..300 {
        assert_eq!(value(&mut c3, &format!("new{i}")), Some(b("new")), "new{i} on node 3");
    }
    for i in 0..10 {
        assert_eq!(value(&mut c3, &format!("old{i}")), Some(b("overwritten")), "old{i} on node 3");
    }
    assert_eq!(value(&mut c3, "old10"), Some(b("old")));
    assert_eq!(value(&mut c3, "old49"), None, "the deletion reached node 3");

    // With its peers down, repair refuses and names a down replica.
    let refused = nodes[2].tool(&["repair", KS]);
    assert_ne!(refused.code, Some(0), "{refused:?}");
    assert!(refused.stderr.contains("is down"), "{refused:?}");
}
