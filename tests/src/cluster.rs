//! Several nodes on 127.0.0.1 … 127.0.0.n forming one cluster, and waiting for them to see
//! each other.

use std::time::Duration;

use crate::{eventually, free_port_on, Config, Node};

/// A cluster node's ports on its own address.
#[derive(Clone, Copy, Debug)]
pub struct Ports {
    pub thrift: u16,
    pub storage: u16,
    pub admin: u16,
}

impl Ports {
    /// Ports that were free a moment ago on `ip`.
    pub fn free_on(ip: [u8; 4]) -> Ports {
        Ports { thrift: free_port_on(ip), storage: free_port_on(ip), admin: free_port_on(ip) }
    }
}

/// Starts `n` nodes on 127.0.0.1 … 127.0.0.n, each with `config(i)` (0-based) made a member of
/// one cluster: node 1 is every node's seed. Returns once each node serves Thrift clients (the
/// others may not have heard of it yet: see [`wait_for_ring`]).
pub fn start_cluster(n: usize, config: impl Fn(usize) -> Config) -> Vec<Node> {
    let ips: Vec<[u8; 4]> = (0..n).map(|i| [127, 0, 0, (i + 1) as u8]).collect();
    let ports: Vec<Ports> = ips.iter().map(|ip| Ports::free_on(*ip)).collect();
    let seed = format!("127.0.0.1:{}", ports[0].storage);
    let mut nodes = Vec::with_capacity(n);
    for (i, (ip, ports)) in ips.into_iter().zip(ports).enumerate() {
        let c = Config { ip, seeds: vec![seed.clone()], ..config(i) };
        nodes.push(Node::start_at(c, ports));
    }
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
