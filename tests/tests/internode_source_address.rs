//! Internode connections leave from the node's ListenAddress, as Cassandra binds them: on
//! nodes at 127.0.0.21 and .22, every connection to a storage port (as `ss` lists them) has
//! the sending node's own address as its source, so firewall rules and partitions keyed on
//! node addresses see the traffic where it comes from.

use std::process::Command;
use std::time::Duration;

use e2e::*;

/// (local, peer) addresses of the established TCP connections to `port` on 127.0.0.0/8.
fn connections_to(port: u16) -> Vec<(String, String)> {
    let out = Command::new("ss").args(["-tnH", "state", "established"]).output().expect("run ss (iproute2)");
    assert!(out.status.success(), "ss: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (local, peer) = (f.get(f.len().checked_sub(2)?)?, f.last()?);
            peer.ends_with(&format!(":{port}")).then(|| (local.to_string(), peer.to_string()))
        })
        .collect()
}

#[test]
fn outbound_internode_connections_leave_from_the_listen_address() {
    let ips = [[127, 0, 0, 21], [127, 0, 0, 22]];
    let ports = ips.map(Ports::free_on);
    let seed = format!("127.0.0.21:{}", ports[0].storage);
    let mut nodes: Vec<Node> = ips
        .iter()
        .zip(ports)
        .map(|(ip, p)| {
            let config = Config {
                ip: *ip,
                seeds: vec![seed.clone()],
                cluster_name: "Source Address".into(),
                ..Config::random()
            };
            Node::spawn_at(config, p)
        })
        .collect();
    Node::wait_all_started(&mut nodes);
    wait_for_ring(&nodes, 2, Duration::from_secs(60));
    for (i, node) in nodes.iter().enumerate() {
        let other = &nodes[1 - i];
        let port = ports[1 - i].storage;
        let conns = connections_to(port);
        let from_node: Vec<&(String, String)> =
            conns.iter().filter(|(_, peer)| peer.starts_with(&format!("{}:", other.address()))).collect();
        assert!(!from_node.is_empty(), "no connection to {}:{port}: {conns:?}", other.address());
        for (local, peer) in from_node {
            assert!(
                local.starts_with(&format!("{}:", node.address())),
                "{local} -> {peer}: not from {}",
                node.address()
            );
        }
    }
}
