//! `AutoBootstrap`: a node joining a ring that holds data fetches its ranges' data before it
//! serves them. With RF 1, the rows of the range the new node takes can only come from it
//! afterwards, so every row reading back through either node at ONE shows the fetch happened;
//! writes made while it bootstraps reach it too. Cleanup then drops from the first node what it
//! gave away, and nothing else.

use std::time::Duration;

use e2e::*;
use model::dht::{Partitioner, Range};
use thrift_idl as t;

const KS: &str = "Bs";
const ROWS: usize = 400;

fn value(c: &mut Client, key: &str) -> Option<Vec<u8>> {
    match c.get(b(key), path("Kv", b("c")), ONE) {
        Ok(cosc) => cosc.column.and_then(|c| c.value),
        Err(thrift::Error::User(e)) if e.downcast_ref::<t::NotFoundException>().is_some() => None,
        Err(e) => panic!("get({key}): {e:?}"),
    }
}

/// How many of the rows `k0`, `k1`, ... fall in the second node's range, (tokens[0], tokens[1]].
fn rows_in_second_nodes_range(tokens: &[String]) -> u64 {
    let partitioner = Partitioner::Random;
    let token = |t: &String| partitioner.token_from_string(t).expect("token");
    let range = Range::new(token(&tokens[0]), token(&tokens[1]));
    (0..ROWS).filter(|i| range.contains(&partitioner.token_for_key(format!("k{i}").as_bytes()))).count() as u64
}

#[test]
fn a_bootstrapping_node_takes_its_ranges_data_with_it() {
    let tokens = random_partitioner_tokens(2);
    let ips = [[127, 0, 0, 1], [127, 0, 0, 2]];
    let ports: Vec<Ports> = ips.iter().map(|ip| Ports::free_on(*ip)).collect();
    let seed = format!("127.0.0.1:{}", ports[0].storage);
    let config = |i: usize| Config {
        ip: ips[i],
        seeds: vec![seed.clone()],
        initial_token: tokens[i].clone(),
        auto_bootstrap: true,
        cluster_name: "Bootstrap Test".into(),
        ..Config::random().extra("<RingDelayInMillis>1000</RingDelayInMillis>")
    };
    // The seed does not bootstrap (it is alone anyway).
    let first = Node::start_at(config(0), ports[0]);
    let mut admin = first.client();
    ok("add keyspace", admin.system_add_keyspace(ks_def(KS, 1, vec![cf_def(KS, "Kv", "UTF8Type")])));
    let mut c1 = first.client_in(KS);
    for i in 0..ROWS {
        ok("insert", c1.insert(b(&format!("k{i}")), parent("Kv"), column(b("c"), b("v"), ts()), ONE));
    }

    // A writer keeps going through the first node while the second one bootstraps.
    let writer = {
        let mut c = first.client_in(KS);
        std::thread::spawn(move || {
            for i in 0..ROWS {
                ok("insert", c.insert(b(&format!("during{i}")), parent("Kv"), column(b("c"), b("w"), ts()), ONE));
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let second = Node::start_at(config(1), ports[1]);
    writer.join().expect("writer");
    let nodes = [first, second];
    wait_for_ring(&nodes, 2, Duration::from_secs(60));
    assert!(nodes[1].log().contains("bootstrap: fetched this node's ranges"), "{}", nodes[1].log());

    for node in &nodes {
        let mut c = node.client_in(KS);
        for i in 0..ROWS {
            assert_eq!(value(&mut c, &format!("k{i}")), Some(b("v")), "k{i} through {}", node.address());
            assert_eq!(value(&mut c, &format!("during{i}")), Some(b("w")), "during{i} through {}", node.address());
        }
    }
    // The second node holds about half of the rows itself.
    let keys_on = |node: &Node| {
        node.tool(&["flush", KS]).ok();
        let stats = node.tool(&["--json", "cfstats", &format!("{KS}.Kv")]).ok();
        let json: serde_json::Value = serde_json::from_str(&stats.stdout).expect("JSON");
        json["keyspaces"][0]["column_families"][0]["key_estimate"].as_u64().expect("key_estimate")
    };
    let second = keys_on(&nodes[1]);
    assert!((200..=600).contains(&second), "node 2 holds {second} of {} rows", 2 * ROWS);

    // Until cleanup drops the range it gave away, the first node still holds the rows written
    // there before the bootstrap, besides every row of its own range. (Writes made there once
    // it hears the second node is NORMAL go to the second node alone.)
    let before = keys_on(&nodes[0]);
    let given_away = rows_in_second_nodes_range(&tokens);
    let own = (2 * ROWS) as u64 - second;
    assert!(before >= own + given_away, "node 1 holds {before} rows before cleanup, not {own} + {given_away}");
    let cleanup = nodes[0].tool(&["cleanup", KS]).ok();
    assert!(cleanup.stdout.starts_with("Bs: kept the 1 ranges this node replicates"), "{cleanup:?}");
    let after = keys_on(&nodes[0]);
    assert!(after + second == (2 * ROWS) as u64, "node 1 kept {after}, node 2 holds {second}");
    for node in &nodes {
        let mut c = node.client_in(KS);
        for i in 0..ROWS {
            assert_eq!(value(&mut c, &format!("k{i}")), Some(b("v")), "k{i} through {} after cleanup", node.address());
        }
    }
}
