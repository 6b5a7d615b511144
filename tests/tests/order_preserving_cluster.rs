//! Seed 003's index pattern on three nodes with OrderPreservingPartitioner: rows keyed
//! `state/city` spread over the ring by their keys, and `get_range_slices` from 'WA' to 'WB'
//! (as the article writes it) returns every Washington city, in key order, complete, although
//! the range crosses two nodes. describe_ring reports the configured tokens.

use std::collections::BTreeMap;
use std::time::Duration;

use e2e::*;

const OPP: &str = "org.apache.cassandra.dht.OrderPreservingPartitioner";
/// Node tokens: "WA/C" falls between WA/Bellingham and WA/Seattle, so the WA rows sit on two nodes.
const TOKENS: [&str; 3] = ["M", "WA/C", "Y"];

#[test]
fn the_washington_range_crosses_nodes_and_comes_back_in_order() {
    let nodes = start_cluster(3, |i| Config {
        cluster_name: "Index Test".into(),
        initial_token: TOKENS[i].into(),
        ..Config::random().partitioner(OPP)
    });
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    let mut admin = nodes[0].client();
    ok(
        "add keyspace",
        admin.system_add_keyspace(ks_def("Geo", 1, vec![cf_def("Geo", "LocationUserIndexCF", "UTF8Type")])),
    );
    let users: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::from([
        ("CA/San Francisco", vec![("Amy", "amy")]),
        ("NY/New York", vec![("Bob", "bob")]),
        ("OR/Portland", vec![("Carla", "carla")]),
        ("WA/Bellingham", vec![("Jason", "jason")]),
        ("WA/Seattle", vec![("Ben", "b"), ("Zack", "zack")]),
        ("WA/Spokane", vec![("Dana", "dana")]),
        ("WI/Madison", vec![("Eve", "eve")]),
        ("WY/Cheyenne", vec![("Finn", "finn")]),
    ]);
    let mut writer = nodes[1].client_in("Geo");
    for (key, people) in &users {
        for (name, id) in people {
            ok("insert", writer.insert(b(key), parent("LocationUserIndexCF"), column(b(name), b(id), ts()), ONE));
        }
    }
    // The rows really are spread: each node holds some of them.
    for node in &nodes {
        node.tool(&["flush", "Geo"]).ok();
    }
    let held: Vec<u64> = nodes
        .iter()
        .map(|n| {
            let stats = n.tool(&["--json", "cfstats", "Geo.LocationUserIndexCF"]).ok();
            let json: serde_json::Value = serde_json::from_str(&stats.stdout).expect("json");
            json["keyspaces"][0]["column_families"][0]["key_estimate"].as_u64().expect("keys")
        })
        .collect();
    assert!(held.iter().filter(|n| **n > 0).count() >= 2, "rows on one node only: {held:?}");

    for node in &nodes {
        let mut c = node.client_in("Geo");
        let rows = ok(
            "WA to WB",
            c.get_range_slices(parent("LocationUserIndexCF"), all(100), key_range("WA", "WB", 100), ONE),
        );
        let keys = slice_keys(&rows);
        assert_eq!(keys, vec!["WA/Bellingham", "WA/Seattle", "WA/Spokane"], "through {}", node.address());
        assert_eq!(str_pairs(&rows[1].columns), vec![("Ben".into(), "b".into()), ("Zack".into(), "zack".into())]);
        // The whole ring, in key order, from any node.
        let everything =
            ok("all", c.get_range_slices(parent("LocationUserIndexCF"), all(100), key_range("", "", 100), ONE));
        assert_eq!(slice_keys(&everything), users.keys().map(|k| k.to_string()).collect::<Vec<_>>());
        // Paging by start key: two rows at a time, each page starting after the last.
        let mut paged = Vec::new();
        let mut start = String::new();
        loop {
            let page =
                ok("page", c.get_range_slices(parent("LocationUserIndexCF"), all(100), key_range(&start, "", 3), ONE));
            let mut keys = slice_keys(&page);
            if !start.is_empty() {
                keys.retain(|k| *k != start);
            }
            if keys.is_empty() {
                break;
            }
            start = keys.last().cloned().unwrap_or_default();
            paged.extend(keys);
        }
        assert_eq!(paged, users.keys().map(|k| k.to_string()).collect::<Vec<_>>(), "paging through {}", node.address());
    }

    let ring = ok("describe_ring", admin.describe_ring("Geo".into()));
    let mut ends: Vec<String> = ring.iter().map(|r| r.end_token.clone()).collect();
    ends.sort();
    assert_eq!(ends, TOKENS.iter().map(|t| t.to_string()).collect::<Vec<_>>());
}
