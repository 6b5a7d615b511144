//! Three nodes on 127.0.0.1–3 form one ring: a keyspace created through one node is usable
//! through the others as soon as the call returns; QUORUM writes through one node read back at
//! QUORUM through each other node; describe_ring shows the configured tokens with three
//! replicas each; with RF 1, 10,000 keys spread over the three nodes by their tokens.

use std::collections::BTreeSet;
use std::time::Duration;

use e2e::*;
use thrift_idl as t;

const QUORUM: t::ConsistencyLevel = t::ConsistencyLevel::QUORUM;
const ALL: t::ConsistencyLevel = t::ConsistencyLevel::ALL;

fn cluster() -> (Vec<Node>, Vec<String>) {
    let tokens = random_partitioner_tokens(3);
    let nodes = start_cluster(3, |i| Config {
        cluster_name: "Quorum Test".into(),
        initial_token: tokens[i].clone(),
        ..Config::random()
    });
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    (nodes, tokens)
}

#[test]
fn quorum_writes_through_one_node_read_back_through_every_other() {
    let (nodes, tokens) = cluster();
    let mut admin = nodes[0].client();
    ok("add keyspace", admin.system_add_keyspace(ks_def("Ring3", 3, vec![cf_def("Ring3", "Users", "UTF8Type")])));
    // The keyspace is usable through every node as soon as the call returned.
    let mut clients: Vec<Client> = nodes.iter().map(|n| n.client_in("Ring3")).collect();

    for i in 0..200 {
        let key = format!("user{i}");
        ok(
            "insert at QUORUM",
            clients[0].insert(b(&key), parent("Users"), column(b("name"), b(&format!("n{i}")), ts()), QUORUM),
        );
    }
    for (n, c) in clients.iter_mut().enumerate().skip(1) {
        for i in 0..200 {
            let key = format!("user{i}");
            let got = ok("get at QUORUM", c.get(b(&key), path("Users", b("name")), QUORUM));
            assert_eq!(got.column.and_then(|c| c.value), Some(b(&format!("n{i}"))), "node {} key {key}", n + 1);
        }
    }
    // Written at ALL through node 3: every node holds it and answers at ONE from its own copy.
    ok("insert at ALL", clients[2].insert(b("all"), parent("Users"), column(b("c"), b("v"), ts()), ALL));
    for c in clients.iter_mut() {
        let got = ok("get at ONE", c.get(b("all"), path("Users", b("c")), ONE));
        assert_eq!(got.column.and_then(|c| c.value), Some(b("v")));
    }
    // A range scan through any node sees every key once, in token order.
    let rows = ok("scan", clients[1].get_range_slices(parent("Users"), all(10), token_range("0", "0", 1000), QUORUM));
    assert_eq!(rows.len(), 201, "every key once");
    let keys: BTreeSet<Vec<u8>> = rows.iter().map(|r| r.key.clone()).collect();
    assert_eq!(keys.len(), 201);

    // describe_ring: the configured tokens, three replicas each, on the three addresses.
    let ring = ok("describe_ring", clients[1].describe_ring("Ring3".into()));
    let ends: BTreeSet<String> = ring.iter().map(|r| r.end_token.clone()).collect();
    assert_eq!(ends, tokens.iter().cloned().collect::<BTreeSet<_>>(), "{ring:?}");
    for r in &ring {
        let eps: BTreeSet<&str> = r.endpoints.iter().map(String::as_str).collect();
        assert_eq!(eps, BTreeSet::from(["127.0.0.1", "127.0.0.2", "127.0.0.3"]), "{r:?}");
    }
    let versions = ok("schema versions", clients[2].describe_schema_versions());
    assert_eq!(versions.len(), 1, "one schema version across the cluster: {versions:?}");

    // A column family added through node 2 is usable through nodes 3 and 1 as soon as the call
    // returns: written at ALL through one, read at ONE through the other.
    ok("add column family", clients[1].system_add_column_family(cf_def("Ring3", "Later", "UTF8Type")));
    ok("insert into the new CF", clients[2].insert(b("k"), parent("Later"), column(b("c"), b("v2"), ts()), ALL));
    let got = ok("get from the new CF", clients[0].get(b("k"), path("Later", b("c")), ONE));
    assert_eq!(got.column.and_then(|c| c.value), Some(b("v2")));
}

#[test]
fn keys_spread_over_the_nodes_by_token() {
    let (nodes, tokens) = cluster();
    let mut admin = nodes[1].client();
    ok("add keyspace", admin.system_add_keyspace(ks_def("Spread", 1, vec![cf_def("Spread", "Kv", "BytesType")])));
    let mut c = nodes[1].client_in("Spread");
    // 100 batches of 100 rows: each batch's rows go to whichever nodes own their tokens.
    for batch_no in 0..100 {
        let mut m = std::collections::BTreeMap::new();
        for i in batch_no * 100..(batch_no + 1) * 100 {
            let mut by_cf = std::collections::BTreeMap::new();
            by_cf.insert("Kv".to_string(), vec![insert_mutation(column(b("c"), b("v"), ts()))]);
            m.insert(b(&format!("k{i}")), by_cf);
        }
        ok("batch_mutate", c.batch_mutate(m, ONE));
    }
    let mut held = Vec::new();
    for node in &nodes {
        node.tool(&["flush", "Spread"]).ok();
        let stats = node.tool(&["--json", "cfstats", "Spread.Kv"]).ok();
        let json: serde_json::Value = serde_json::from_str(&stats.stdout).expect("json");
        held.push(json["keyspaces"][0]["column_families"][0]["key_estimate"].as_u64().expect("keys"));
    }
    assert_eq!(held.iter().sum::<u64>(), 10_000, "each key on exactly one node with RF 1: {held:?}");
    // Every node holds only keys of its own range: cleanup keeps them all.
    let cleanup = nodes[0].tool(&["cleanup", "Spread"]).ok();
    assert_eq!(cleanup.stdout, "Spread: kept the 1 ranges this node replicates (0 bytes removed)\n", "{cleanup:?}");
    let stats = nodes[0].tool(&["--json", "cfstats", "Spread.Kv"]).ok();
    let json: serde_json::Value = serde_json::from_str(&stats.stdout).expect("json");
    assert_eq!(
        json["keyspaces"][0]["column_families"][0]["key_estimate"].as_u64(),
        Some(held[0]),
        "cleanup kept every key"
    );
    for (i, n) in held.iter().enumerate() {
        assert!((2_600..=4_100).contains(n), "node {} holds {n} of 10,000 keys: {held:?}", i + 1);
    }
    // Every key is readable through every node.
    let mut other = nodes[2].client_in("Spread");
    for i in (0..10_000).step_by(97) {
        let got = ok("get", other.get(b(&format!("k{i}")), path("Kv", b("c")), ONE));
        assert_eq!(got.column.and_then(|c| c.value), Some(b("v")));
    }

    // describering: the three ranges, each with its one replica; gossipinfo: the three nodes.
    let ring = nodes[0].tool(&["describering", "Spread"]).ok().stdout;
    let ranges: Vec<&str> = ring.lines().filter(|l| l.starts_with("\tTokenRange(")).collect();
    assert_eq!(ranges.len(), 3, "{ring}");
    for (i, token) in tokens.iter().enumerate() {
        let owner = format!("end_token:{token}, endpoints:[127.0.0.{}]", i + 1);
        assert!(ranges.iter().any(|r| r.contains(&owner)), "{owner} in {ring}");
    }
    let missing = nodes[0].tool(&["describering", "Nope"]);
    assert!(missing.code == Some(1) && missing.stderr.contains("No such keyspace: Nope"), "{missing:?}");
    let gossip = nodes[0].tool(&["gossipinfo"]).ok().stdout;
    for i in 1..=3 {
        assert!(gossip.contains(&format!("/127.0.0.{i}:")), "{gossip}");
    }
    assert_eq!(gossip.matches("  STATUS:").count(), 3, "{gossip}");
    assert_eq!(gossip.matches(":NORMAL").count(), 3, "{gossip}");
    assert_eq!(gossip.matches("  TOKENS:").count(), gossip.matches(":<hidden>").count(), "{gossip}");
}
