//! The operator toggles of a rolling restart, through `sibyltool` on real `sibyl` processes:
//! `disablethrift` closes the Thrift port and the client connections open on it (clients fail
//! over to other nodes), `enablethrift` listens again; `disablegossip` makes the other nodes see
//! the node down while it goes on serving its clients, `enablegossip` (with a newer generation)
//! up again. Each is idempotent, and `statusthrift`, `statusgossip` and `info` say where they
//! stand.
//!
//! Every wait is bounded: node start and stop, tool runs and Thrift sockets (the harness'), and
//! each wait for the ring's view ([`MARKED`]).

use std::io::Read;
use std::net::TcpStream;
use std::time::Duration;

use e2e::*;

/// Longest a node may take to see another one down or up again.
const MARKED: Duration = Duration::from_secs(30);

fn standard1() -> String {
    keyspace_xml("Keyspace1", &[r#"<ColumnFamily Name="Standard1" CompareWith="BytesType"/>"#])
}

fn line_value<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.trim_start().strip_prefix(label).map(|rest| rest.trim_start_matches([' ', ':']).trim()))
        .unwrap_or_else(|| panic!("no {label:?} line in:\n{text}"))
}

fn json(run: &ToolRun) -> serde_json::Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {run:?}"))
}

/// `--json` run of a toggle: (running, changed).
fn toggle(node: &Node, command: &str) -> (bool, bool) {
    let answer = json(&node.tool(&["--json", command]).ok());
    let flag = |name: &str| answer[name].as_bool().unwrap_or_else(|| panic!("no {name} in {answer}"));
    (flag("running"), flag("changed"))
}

fn insert(c: &mut Client, key: &str, value: &str) -> thrift::Result<()> {
    c.insert(b(key), parent("Standard1"), column(b("c"), b(value), ts()), ONE)
}

fn read(c: &mut Client, key: &str) -> thrift::Result<Option<Vec<u8>>> {
    c.get(b(key), path("Standard1", b("c")), ONE).map(|got| got.column.and_then(|c| c.value))
}

#[test]
fn disablethrift_closes_the_port_and_open_connections_and_enablethrift_opens_it_again() {
    let mut node = Node::start(Config::random().cluster_name("Thrift Toggle Test").keyspaces(standard1()));
    let mut client = node.client_in("Keyspace1");
    insert(&mut client, "k1", "v1").expect("insert");
    assert_eq!(node.tool(&["statusthrift"]).ok().stdout, "running\n");
    // A connection that has sent nothing, as an idle pooled connection.
    let mut idle = node.raw_socket();

    let off = node.tool(&["disablethrift"]).ok();
    assert_eq!(off.stdout, "", "silent, as nodetool is: {off:?}");
    assert_eq!(node.tool(&["statusthrift"]).ok().stdout, "not running\n");
    let refused = TcpStream::connect_timeout(&node.addr(), Duration::from_secs(5)).map(|_| ());
    match refused {
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused, "{e}"),
        Ok(()) => panic!("a new Thrift connection was accepted after disablethrift"),
    }
    // The open connections were closed: the idle one reads the end of its stream (a read
    // timeout would be an error here), the client's next call fails.
    let mut byte = [0u8; 1];
    // (A reset if disablethrift came before the node had accepted it from the backlog.)
    match idle.read(&mut byte) {
        Ok(0) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("the idle connection is still open after disablethrift: {other:?}"),
    }
    assert!(read(&mut client, "k1").is_err(), "a call on a connection open before disablethrift");
    let info = node.tool(&["info"]).ok();
    assert_eq!(line_value(&info.stdout, "Thrift active"), "false", "{}", info.stdout);
    assert_eq!(line_value(&info.stdout, "Gossip active"), "true", "{}", info.stdout);
    assert_eq!(toggle(&node, "disablethrift"), (false, false), "a second disablethrift changes nothing");

    // The port is free; taken by another process, enablethrift fails and names it.
    let squatter = std::net::TcpListener::bind(node.addr()).expect("the Thrift port is free after disablethrift");
    let failed = node.tool(&["enablethrift"]);
    assert_eq!(failed.code, Some(1), "{failed:?}");
    let named = format!("sibyltool: enablethrift: cannot listen for thrift clients on {}: ", node.addr());
    assert!(failed.stderr.starts_with(&named), "{failed:?}");
    assert_eq!(node.tool(&["statusthrift"]).ok().stdout, "not running\n");
    drop(squatter);

    let on = node.tool(&["enablethrift"]).ok();
    assert_eq!(on.stdout, "", "{on:?}");
    assert_eq!(node.tool(&["statusthrift"]).ok().stdout, "running\n");
    assert_eq!(toggle(&node, "enablethrift"), (true, false), "a second enablethrift changes nothing");
    let mut again = node.client_in("Keyspace1");
    assert_eq!(read(&mut again, "k1").expect("a read after enablethrift"), Some(b("v1")));
    insert(&mut again, "k2", "v2").expect("a write after enablethrift");
    let info = node.tool(&["info"]).ok();
    assert_eq!(line_value(&info.stdout, "Thrift active"), "true", "{}", info.stdout);

    let status = node.stop();
    assert!(status.success(), "exit status {status}\nlog:\n{}", node.log());
}

/// The generation `observer`'s gossip holds for the node at `address`.
fn generation_of(observer: &Node, address: &str) -> i64 {
    let info = json(&observer.tool(&["--json", "gossipinfo"]).ok());
    let endpoints = info["endpoints"].as_array().unwrap_or_else(|| panic!("no endpoints: {info}"));
    let prefix = format!("{address}:");
    endpoints
        .iter()
        .find(|e| e["endpoint"].as_str().is_some_and(|ep| ep.starts_with(&prefix)))
        .and_then(|e| e["generation"].as_i64())
        .unwrap_or_else(|| panic!("{address} not in {}'s gossip: {info}", observer.address()))
}

fn marked_up(node: &Node, address: &str) -> bool {
    status_lines(node).iter().any(|l| l.starts_with("UN") && l.contains(&format!(" {address} ")))
}

#[test]
fn disablegossip_makes_the_peer_see_the_node_down_and_enablegossip_up_again() {
    let tokens = random_partitioner_tokens(2);
    let keyspaces = standard1();
    let mut nodes = start_cluster(2, |i| Config {
        cluster_name: "Gossip Toggle Test".into(),
        initial_token: tokens[i].clone(),
        keyspaces_xml: keyspaces.clone(),
        ..Config::random()
    });
    wait_for_ring(&nodes, 2, MARKED);
    let (one, two) = (&nodes[0], &nodes[1]);
    assert_eq!(two.tool(&["statusgossip"]).ok().stdout, "running\n");
    let before = generation_of(one, "127.0.0.2");

    let off = two.tool(&["disablegossip"]).ok();
    assert_eq!(off.stdout, "", "{off:?}");
    assert_eq!(two.tool(&["statusgossip"]).ok().stdout, "not running\n");
    assert!(
        eventually(MARKED, || marked_down(one, "127.0.0.2")),
        "127.0.0.1 does not see 127.0.0.2 down within {MARKED:?}: {:?}",
        status_lines(one)
    );
    assert_eq!(toggle(two, "disablegossip"), (false, false), "a second disablegossip changes nothing");
    let info = two.tool(&["info"]).ok();
    assert_eq!(line_value(&info.stdout, "Gossip active"), "false", "{}", info.stdout);
    assert_eq!(line_value(&info.stdout, "Thrift active"), "true", "{}", info.stdout);

    // Node 2 still serves its clients, whichever node holds the keys.
    let mut client = two.client_in("Keyspace1");
    for i in 0..10 {
        insert(&mut client, &format!("key{i}"), &format!("value{i}")).expect("a write while gossip is off");
    }
    for i in 0..10 {
        let got = read(&mut client, &format!("key{i}")).expect("a read while gossip is off");
        assert_eq!(got, Some(format!("value{i}").into_bytes()));
    }
    assert!(marked_down(one, "127.0.0.2"), "back up without enablegossip: {:?}", status_lines(one));

    let on = two.tool(&["enablegossip"]).ok();
    assert_eq!(on.stdout, "", "{on:?}");
    assert_eq!(two.tool(&["statusgossip"]).ok().stdout, "running\n");
    assert!(
        eventually(MARKED, || marked_up(one, "127.0.0.2")),
        "127.0.0.1 does not see 127.0.0.2 up again within {MARKED:?}: {:?}",
        status_lines(one)
    );
    assert_eq!(toggle(two, "enablegossip"), (true, false), "a second enablegossip changes nothing");
    wait_for_ring(&nodes, 2, MARKED);
    let after = generation_of(one, "127.0.0.2");
    assert!(after > before, "enablegossip gossips a newer generation: {before} then {after}");

    for node in nodes.iter_mut().rev() {
        let status = node.stop();
        assert!(status.success(), "exit status {status}\nlog:\n{}", node.log());
    }
}
