//! The native protocol on a cluster: three nodes share one native port on 127.0.0.1-3, as a
//! driver expects. A connection registered on the first node for every event type hears of
//! what happens to the others, while the DataStax Python driver (tests/python/
//! test_cql_driver_cluster.py) routes statements to their replicas and keeps a QUORUM load
//! running across a node killed with SIGKILL: STATUS_CHANGE DOWN for it, UP once it is back,
//! TOPOLOGY_CHANGE NEW_NODE for a fourth node that bootstraps and REMOVED_NODE once it is
//! decommissioned, and SCHEMA_CHANGE for the driver's keyspaces, made through the first node.

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use e2e::native::{Body, NativeClient, EVENT, READY, REGISTER};
use e2e::*;

/// The Python run, connections, schema agreement and the kill's detection included.
const PYTHON_LIMIT: Duration = Duration::from_secs(240);
/// How long an event may take: a killed node is convicted by the failure detector.
const EVENT_LIMIT: Duration = Duration::from_secs(60);
/// Lowest threshold Cassandra accepts: a dead node is convicted in about a dozen seconds.
const FAST_CONVICTION: &str = "<PhiConvictThreshold>5</PhiConvictThreshold><RingDelayInMillis>1000</RingDelayInMillis>";

/// A port free on every one of `ips` a moment ago.
fn port_free_on_all(ips: &[[u8; 4]]) -> u16 {
    for _ in 0..100 {
        let port = free_port_on(ips[0]);
        if ips[1..].iter().all(|ip| TcpListener::bind(SocketAddr::from((*ip, port))).is_ok()) {
            return port;
        }
    }
    panic!("no port free on every address")
}

/// An event as (type, change, address or keyspace).
type Heard = (String, String, String);

fn decode(frame: &native::Frame) -> Heard {
    let mut c = frame.cursor();
    let kind = c.string();
    let change = c.string();
    let subject = if kind == "SCHEMA_CHANGE" {
        let _target = c.string();
        c.string()
    } else {
        c.inet().to_string()
    };
    (kind, change, subject)
}

/// Waits for an event `want`, keeping every event heard on the way in `heard`.
fn expect_event(listener: &mut NativeClient, heard: &mut Vec<Heard>, want: (&str, &str, &str), context: &str) {
    let deadline = Instant::now() + EVENT_LIMIT;
    let matches = |h: &Heard| (h.0.as_str(), h.1.as_str(), h.2.as_str()) == want;
    while !heard.iter().any(matches) {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "{context}: no {want:?} within {EVENT_LIMIT:?}; heard {heard:?}");
        if let Some(frame) = listener.recv_within(left) {
            assert_eq!(frame.opcode, EVENT, "only events come unasked: {frame:?}");
            assert_eq!(frame.stream, -1, "events come on stream -1");
            heard.push(decode(&frame));
        }
    }
}

#[test]
fn drivers_hear_of_nodes_dying_returning_joining_and_leaving() {
    let ips: Vec<[u8; 4]> = (1..=4).map(|i| [127, 0, 0, i]).collect();
    let native_port = port_free_on_all(&ips);
    let ports: Vec<Ports> = ips.iter().map(|ip| Ports { native: native_port, ..Ports::free_on(*ip) }).collect();
    let seed = format!("127.0.0.1:{}", ports[0].storage);
    // Nodes 1-3 evenly apart (0, 1/3, 2/3 of the ring); node 4 later between 1 and 2.
    let sixths = random_partitioner_tokens(6);
    let tokens = [&sixths[0], &sixths[2], &sixths[4], &sixths[1]];
    let config = |i: usize| Config {
        ip: ips[i],
        seeds: vec![seed.clone()],
        initial_token: tokens[i].to_string(),
        auto_bootstrap: i == 3,
        cluster_name: "Native Three".into(),
        ..Config::random().extra(FAST_CONVICTION)
    };
    let mut nodes: Vec<Node> = (0..3).map(|i| Node::spawn_at(config(i), ports[i])).collect();
    Node::wait_all_started(&mut nodes);
    wait_for_ring(&nodes, 3, Duration::from_secs(60));

    let mut listener = NativeClient::ready(nodes[0].native_addr(), 4, None);
    let types = ["TOPOLOGY_CHANGE", "STATUS_CHANGE", "SCHEMA_CHANGE"];
    let registered = listener.request(0, REGISTER, &Body::new().string_list(&types).0);
    assert_eq!(registered.opcode, READY, "{registered:?}");
    let mut heard: Vec<Heard> = Vec::new();

    // The driver's run: routing, then the load across node 3's death (it kills the process).
    let hosts: Vec<String> = nodes.iter().map(|n| n.address()).collect();
    let env = [
        ("SIBYL_NATIVE_HOSTS", Some(hosts.join(","))),
        ("SIBYL_NATIVE_PORT", Some(native_port.to_string())),
        ("SIBYL_VICTIM_PID", Some(nodes[2].pid().expect("node 3 runs").to_string())),
        ("SIBYL_VICTIM_HOST", Some(nodes[2].address())),
    ];
    let (status, output) = run_python("test_cql_driver_cluster.py", "cassandra", &env, PYTHON_LIMIT);
    let logs = |nodes: &[Node]| nodes.iter().map(|n| format!("--- {}:\n{}", n.address(), n.log())).collect::<String>();
    assert!(status.success(), "the driver test failed ({status}):\n{output}\n{}", logs(&nodes));
    assert!(output.contains("\nOK"), "unittest did not report OK:\n{output}");

    // Each key went to the node the server itself places it on.
    let routed: BTreeMap<&str, &str> =
        output.lines().filter_map(|l| l.split_once("ROUTED ")).filter_map(|(_, l)| l.split_once(' ')).collect();
    assert_eq!(routed.len(), 30, "{output}");
    for (key, host) in &routed {
        let endpoints = nodes[0].tool(&["getendpoints", "routing", "kv", key]).ok().stdout;
        assert_eq!(endpoints.trim(), *host, "the driver and the server place {key} apart");
    }

    let native_of = |i: usize| SocketAddr::from((ips[i], native_port)).to_string();
    for keyspace in ["routing", "load"] {
        expect_event(&mut listener, &mut heard, ("SCHEMA_CHANGE", "CREATED", keyspace), "the driver's keyspaces");
    }
    expect_event(&mut listener, &mut heard, ("STATUS_CHANGE", "DOWN", &native_of(2)), "node 3 killed");

    nodes[2].kill9();
    nodes[2].start_again();
    expect_event(&mut listener, &mut heard, ("STATUS_CHANGE", "UP", &native_of(2)), "node 3 started again");

    let mut fourth = Node::start_at(config(3), ports[3]);
    expect_event(&mut listener, &mut heard, ("TOPOLOGY_CHANGE", "NEW_NODE", &native_of(3)), "node 4 joined");
    let run = fourth.tool(&["decommission"]).ok();
    assert!(run.stdout.starts_with("Decommissioned: "), "{run:?}");
    expect_event(&mut listener, &mut heard, ("TOPOLOGY_CHANGE", "REMOVED_NODE", &native_of(3)), "node 4 left");
    assert!(fourth.stop().success());

    // Nothing about the listener's own node; a joining node is announced once it is up.
    assert!(!heard.iter().any(|h| h.2 == native_of(0)), "{heard:?}");
    let of_four: Vec<&str> = heard.iter().filter(|h| h.2 == native_of(3)).map(|h| h.1.as_str()).collect();
    let at = |change| of_four.iter().position(|c| *c == change);
    assert!(at("UP") < at("NEW_NODE"), "{heard:?}");
}
