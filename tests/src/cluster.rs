//! Several nodes on 127.0.0.1 … 127.0.0.n forming one cluster, and waiting for them to see
//! each other.

use std::time::Duration;

use thrift_idl as t;

use crate::{
    b, cf_def, column, eventually, free_port_on, ks_def, ok, parent, path, ts, without_read_repair, Client, Config,
    Node, TCassandraSyncClient, ONE,
};

/// A cluster node's ports on its own address.
#[derive(Clone, Copy, Debug)]
pub struct Ports {
    pub thrift: u16,
    pub storage: u16,
    pub admin: u16,
    /// The native protocol's port (NativeTransportPort).
    pub native: u16,
}

impl Ports {
    /// Ports that were free a moment ago on `ip`.
    pub fn free_on(ip: [u8; 4]) -> Ports {
        Ports { thrift: free_port_on(ip), storage: free_port_on(ip), admin: free_port_on(ip), native: free_port_on(ip) }
    }
}

/// Starts `n` nodes on 127.0.0.1 … 127.0.0.n together, each with `config(i)` (0-based) made a
/// member of one cluster: node 1 is every node's seed. Returns once each node serves Thrift
/// clients, which a node does once gossip has settled (the others may still be learning of
/// it: see [`wait_for_ring`]).
pub fn start_cluster(n: usize, config: impl Fn(usize) -> Config) -> Vec<Node> {
    let ips: Vec<[u8; 4]> = (0..n).map(|i| [127, 0, 0, (i + 1) as u8]).collect();
    let ports: Vec<Ports> = ips.iter().map(|ip| Ports::free_on(*ip)).collect();
    let seed = format!("127.0.0.1:{}", ports[0].storage);
    let mut nodes: Vec<Node> = ips
        .into_iter()
        .zip(ports)
        .enumerate()
        .map(|(i, (ip, ports))| Node::spawn_at(Config { ip, seeds: vec![seed.clone()], ..config(i) }, ports))
        .collect();
    Node::wait_all_started(&mut nodes);
    nodes
}

/// Evenly spaced RandomPartitioner tokens for `n` nodes.
pub fn random_partitioner_tokens(n: usize) -> Vec<String> {
    // 2^127 / n * i, computed in u128.
    let step = (1u128 << 127) / n as u128;
    (0..n).map(|i| (step * i as u128).to_string()).collect()
}

/// Waits until every node's `sibyltool status` lists `n` nodes up (bounded by `limit`).
pub fn wait_for_ring(nodes: &[Node], n: usize, limit: Duration) {
    let ok = eventually(limit, || {
        nodes.iter().all(|node| {
            let run = node.tool(&["status"]);
            run.code == Some(0) && run.stdout.lines().filter(|l| l.starts_with("UN ")).count() == n
        })
    });
    if !ok {
        let views: Vec<String> = nodes.iter().map(|node| node.tool(&["status"]).stdout).collect();
        panic!("the nodes did not all see {n} nodes up within {limit:?}:\n{}", views.join("\n"));
    }
}

/// The node lines of `sibyltool status` as `node` sees the ring: those starting with a
/// status and a state (`UN`, `DN`, `UL`, ...).
pub fn status_lines(node: &Node) -> Vec<String> {
    let is_node_line = |l: &&str| {
        let b = l.as_bytes();
        b.len() > 3 && matches!(b[0], b'U' | b'D') && matches!(b[1], b'N' | b'L' | b'J' | b'M') && b[2] == b' '
    };
    node.tool(&["status"]).stdout.lines().filter(is_node_line).map(String::from).collect()
}

/// How `node` sees the node at `address`: the status and state of its line (`UN`, `DN`, ...).
pub fn seen_as(node: &Node, address: &str) -> Option<String> {
    let line = status_lines(node).into_iter().find(|l| l.contains(&format!(" {address} ")))?;
    Some(line[..2].to_string())
}

/// Whether `node` sees the node at `address` down.
pub fn marked_down(node: &Node, address: &str) -> bool {
    seen_as(node, address).is_some_and(|s| s.starts_with('D'))
}

/// Waits until none of `nodes` lists `address` any more, and each lists `remaining` nodes.
pub fn wait_until_gone(nodes: &[Node], address: &str, remaining: usize) {
    for node in nodes {
        let gone = eventually(Duration::from_secs(30), || {
            let lines = status_lines(node);
            lines.len() == remaining && !lines.iter().any(|l| l.contains(&format!(" {address} ")))
        });
        assert!(gone, "{} still lists {address}: {:?}", node.address(), status_lines(node));
    }
}

/// `n` nodes named `cluster_name` with evenly spaced tokens, and keyspace `keyspace` at `rf`
/// with one column family `Kv` (UTF8Type, read repair off, so that only the mechanism a test
/// looks at can bring a row to a replica).
pub fn nodes_with_kv_keyspace(n: usize, cluster_name: &str, keyspace: &str, rf: u32) -> Vec<Node> {
    let tokens = random_partitioner_tokens(n);
    let nodes = start_cluster(n, |i| Config {
        cluster_name: cluster_name.into(),
        initial_token: tokens[i].clone(),
        ..Config::random()
    });
    wait_for_ring(&nodes, n, Duration::from_secs(60));
    let mut admin = nodes[0].client();
    let kv = without_read_repair(cf_def(keyspace, "Kv", "UTF8Type"));
    ok("add keyspace", admin.system_add_keyspace(ks_def(keyspace, rf, vec![kv])));
    nodes
}

/// Three nodes with evenly spaced tokens and `RingDelayInMillis` 1000, and keyspace `keyspace`
/// at RF 2 whose column family `Kv` (read repair off) holds `rows` rows `k0`, `k1`, ... written
/// at ALL, each with column `c` = `v`: a ring to take a node out of.
pub fn three_nodes_at_rf2_with_rows(cluster_name: &str, keyspace: &str, rows: usize) -> Vec<Node> {
    let tokens = random_partitioner_tokens(3);
    let nodes = start_cluster(3, |i| Config {
        cluster_name: cluster_name.into(),
        initial_token: tokens[i].clone(),
        ..Config::random().extra("<RingDelayInMillis>1000</RingDelayInMillis>")
    });
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    let mut admin = nodes[0].client();
    let kv = without_read_repair(cf_def(keyspace, "Kv", "UTF8Type"));
    ok("add keyspace", admin.system_add_keyspace(ks_def(keyspace, 2, vec![kv])));
    let mut c = nodes[0].client_in(keyspace);
    for i in 0..rows {
        ok(
            "insert",
            c.insert(b(&format!("k{i}")), parent("Kv"), column(b("c"), b("v"), ts()), t::ConsistencyLevel::ALL),
        );
    }
    nodes
}

/// For a ring of the first two of `nodes` at RF 2, which must each hold every row: stops each
/// in turn and reads all `rows` rows of [`three_nodes_at_rf2_with_rows`] at ONE through the
/// other, alone.
pub fn each_of_two_alone_answers_every_row(nodes: &mut [Node], keyspace: &str, rows: usize) {
    for (alone, other) in [(0, 1), (1, 0)] {
        assert!(nodes[other].stop().success());
        let other_address = nodes[other].address();
        assert!(
            eventually(Duration::from_secs(30), || marked_down(&nodes[alone], &other_address)),
            "{other_address} not marked down"
        );
        let mut c = nodes[alone].client_in(keyspace);
        for i in 0..rows {
            let key = format!("k{i}");
            assert_eq!(value_at_one(&mut c, &key), Some(b("v")), "{key} on {} alone", nodes[alone].address());
        }
        nodes[other].start_again();
        wait_for_ring(&nodes[..2], 2, Duration::from_secs(60));
    }
}

/// Column `c` of row `key` of `Kv`, read at ONE; `None` when the row has none.
pub fn value_at_one(c: &mut Client, key: &str) -> Option<Vec<u8>> {
    match c.get(b(key), path("Kv", b("c")), ONE) {
        Ok(cosc) => cosc.column.and_then(|c| c.value),
        Err(thrift::Error::User(e)) if e.downcast_ref::<t::NotFoundException>().is_some() => None,
        Err(e) => panic!("get({key}): {e:?}"),
    }
}
