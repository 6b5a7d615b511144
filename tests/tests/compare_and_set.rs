//! Thrift's `cas` (Paxos) end to end, as Cassandra 3.11 answers it: on one node and on three
//! nodes with RF 3. Concurrent read-modify-cas increments of one column from 8 clients lose no
//! update: every successful cas shows up exactly once in the partition's history, with nothing
//! in between; with a node killed during the run, SERIAL at QUORUM keeps working.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use e2e::*;
use thrift_idl as t;

const SERIAL: t::ConsistencyLevel = t::ConsistencyLevel::SERIAL;
const QUORUM: t::ConsistencyLevel = t::ConsistencyLevel::QUORUM;
const CLIENTS: usize = 8;
const INCREMENTS: usize = 25;

fn col(name: &str, value: &str) -> t::Column {
    column(b(name), b(value), ts())
}

fn no_value(name: &str) -> t::Column {
    t::Column::new(b(name), None, None, None)
}

fn values(cols: &Option<Vec<t::Column>>) -> Vec<(String, String)> {
    cols.iter()
        .flatten()
        .map(|c| {
            (
                String::from_utf8_lossy(&c.name).into_owned(),
                String::from_utf8_lossy(c.value.as_deref().unwrap_or_default()).into_owned(),
            )
        })
        .collect()
}

fn get(c: &mut Client, cf: &str, key: &str, name: &str, cl: t::ConsistencyLevel) -> Option<String> {
    match c.get(b(key), path(cf, b(name)), cl) {
        Ok(cosc) => cosc.column.and_then(|c| c.value).map(|v| String::from_utf8_lossy(&v).into_owned()),
        Err(thrift::Error::User(e)) if e.downcast_ref::<t::NotFoundException>().is_some() => None,
        Err(e) => panic!("get {key}/{name} at {cl:?}: {e:?}"),
    }
}

fn is_timeout(e: &thrift::Error) -> bool {
    matches!(e, thrift::Error::User(u) if u.downcast_ref::<t::TimedOutException>().is_some())
}

/// A cas's TimedOutException, which says (as 3.11's) that its round may still be finished.
fn is_cas_timeout(e: &thrift::Error) -> bool {
    let thrift::Error::User(u) = e else { return false };
    let Some(te) = u.downcast_ref::<t::TimedOutException>() else { return false };
    assert_eq!(te.paxos_in_progress, Some(true), "{te:?}");
    true
}

/// What one client did: the attempt ids of its successful cas calls and of those that timed out
/// (whose outcome is unknown, as in Cassandra).
#[derive(Default)]
struct Tally {
    applied: Vec<String>,
    unknown: Vec<String>,
}

/// `get` at SERIAL for a client racing others on the same partition: under contention a serial
/// read may time out, as Cassandra's does (its Paxos round keeps losing to the cas calls), so it
/// is retried until `limit`.
fn serial_get_contended(c: &mut Client, cf: &str, key: &str, name: &str, limit: Instant) -> Option<String> {
    loop {
        match c.get(b(key), path(cf, b(name)), SERIAL) {
            Ok(cosc) => return cosc.column.and_then(|c| c.value).map(|v| String::from_utf8_lossy(&v).into_owned()),
            Err(thrift::Error::User(e)) if e.downcast_ref::<t::NotFoundException>().is_some() => return None,
            Err(e) if is_timeout(&e) && Instant::now() < limit => {}
            Err(e) => panic!("serial get {key}/{name}: {e:?}"),
        }
    }
}

/// Increments column `n` of `key` `INCREMENTS` times by read-modify-cas, retrying until each
/// succeeds; every cas also writes `inc-<new value>` = the attempt's id, the history checked
/// at the end.
fn increment(mut c: Client, cf: &str, key: &str, who: usize, limit: Instant) -> Tally {
    let mut tally = Tally::default();
    let mut attempt = 0;
    let mut current = serial_get_contended(&mut c, cf, key, "n", limit);
    while tally.applied.len() < INCREMENTS {
        assert!(Instant::now() < limit, "client {who}: {} increments done when time ran out", tally.applied.len());
        attempt += 1;
        let id = format!("c{who}-a{attempt}");
        let now: u64 = current.as_deref().map_or(0, |v| v.parse().unwrap_or_else(|_| panic!("n = {v:?}")));
        let next = now + 1;
        let expected = match &current {
            Some(v) => vec![col("n", v)],
            None => vec![no_value("n")],
        };
        let updates = vec![col("n", &next.to_string()), col(&format!("inc-{next:08}"), &id)];
        match c.cas(b(key), cf.into(), expected, updates, SERIAL, QUORUM) {
            Ok(r) if r.success => {
                tally.applied.push(id);
                current = Some(next.to_string());
            }
            Ok(r) => {
                // Someone else got there first: the answer carries the value it compared.
                let seen = values(&r.current_values);
                current = seen.into_iter().find(|(n, _)| n == "n").map(|(_, v)| v);
            }
            Err(e) if is_cas_timeout(&e) => {
                tally.unknown.push(id);
                current = serial_get_contended(&mut c, cf, key, "n", limit);
            }
            Err(e) => panic!("client {who}: cas failed: {e:?}"),
        }
    }
    tally
}

/// Runs the increments of `CLIENTS` clients (from `connect(i)`), calling `during` once they are
/// under way; then checks the history: `inc-1` … `inc-N` with N the final value, each naming a
/// distinct attempt, every successful attempt among them, the others only attempts that timed
/// out. Returns (successes, timeouts, N).
fn run_increments(
    mut connect: impl FnMut(usize) -> Client,
    check: &mut Client,
    cf: &str,
    key: &str,
    during: impl FnOnce(),
) -> (usize, usize, usize) {
    let limit = Instant::now() + Duration::from_secs(240);
    let handles: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let c = connect(i);
            let (cf, key) = (cf.to_string(), key.to_string());
            std::thread::spawn(move || increment(c, &cf, &key, i, limit))
        })
        .collect();
    during();
    let tallies: Vec<Tally> = handles.into_iter().map(|h| h.join().expect("a client panicked")).collect();
    let applied: BTreeSet<String> = tallies.iter().flat_map(|t| t.applied.iter().cloned()).collect();
    let unknown: BTreeSet<String> = tallies.iter().flat_map(|t| t.unknown.iter().cloned()).collect();
    assert_eq!(applied.len(), CLIENTS * INCREMENTS);
    let n: usize = get(check, cf, key, "n", SERIAL).expect("n is set").parse().expect("n is a number");
    let history =
        ok("history", check.get_slice(b(key), parent(cf), slice(b("inc-"), b("inc-~"), false, 100_000), SERIAL));
    let history = str_pairs(&history);
    let names: Vec<String> = history.iter().map(|(n, _)| n.clone()).collect();
    let want: Vec<String> = (1..=n).map(|i| format!("inc-{i:08}")).collect();
    assert_eq!(names, want, "the history has gaps or extra entries");
    let ids: BTreeSet<String> = history.iter().map(|(_, v)| v.clone()).collect();
    assert_eq!(ids.len(), n, "an attempt was applied twice");
    let lost: Vec<&String> = applied.difference(&ids).collect();
    assert!(lost.is_empty(), "successful cas calls missing from the history (lost updates): {lost:?}");
    let strays: Vec<&String> = ids.difference(&applied).filter(|id| !unknown.contains(*id)).collect();
    assert!(strays.is_empty(), "applied attempts that were answered 'not applied': {strays:?}");
    assert_eq!(n, applied.len() + ids.difference(&applied).count());
    (applied.len(), unknown.len(), n)
}

#[test]
fn cas_on_one_node_answers_as_cassandra() {
    let cfs = vec![cf_def("Cas", "Kv", "UTF8Type"), super_cf_def("Cas", "Super", "UTF8Type", "UTF8Type")];
    let (mut node, mut c) = Node::start_with_keyspace(Config::random(), "Cas", cfs);

    // Nothing expected: applies only while the partition is empty.
    let r = ok(
        "cas on an empty partition",
        c.cas(b("k"), "Kv".into(), vec![], vec![col("a", "1"), col("b", "2")], SERIAL, QUORUM),
    );
    assert!(r.success && r.current_values.is_none(), "{r:?}");
    assert_eq!(get(&mut c, "Kv", "k", "a", ONE), Some("1".into()));
    let r = ok("again", c.cas(b("k"), "Kv".into(), vec![], vec![col("a", "x")], SERIAL, QUORUM));
    assert!(!r.success);
    assert_eq!(values(&r.current_values), vec![("a".to_string(), "1".to_string())], "one cell: the first");

    // Expected values: all must match; the answer shows the expected columns that exist.
    let r = ok("match", c.cas(b("k"), "Kv".into(), vec![col("a", "1")], vec![col("a", "10")], SERIAL, QUORUM));
    assert!(r.success, "{r:?}");
    let r = ok(
        "mismatch",
        c.cas(b("k"), "Kv".into(), vec![col("a", "1"), col("b", "2")], vec![col("a", "x")], SERIAL, QUORUM),
    );
    assert!(!r.success);
    assert_eq!(values(&r.current_values), vec![("a".into(), "10".into()), ("b".into(), "2".into())]);
    let r = ok("missing column", c.cas(b("k"), "Kv".into(), vec![col("zz", "1")], vec![col("a", "x")], SERIAL, QUORUM));
    assert!(!r.success);
    assert_eq!(values(&r.current_values), vec![]);
    // A column expected without a value must be absent.
    let r = ok(
        "absent",
        c.cas(b("k"), "Kv".into(), vec![col("a", "10"), no_value("c")], vec![col("c", "3")], SERIAL, QUORUM),
    );
    assert!(r.success, "{r:?}");
    assert_eq!(get(&mut c, "Kv", "k", "c", SERIAL), Some("3".into()));
    assert_eq!(get(&mut c, "Kv", "k", "a", t::ConsistencyLevel::LOCAL_SERIAL), Some("10".into()));
    // A client's old timestamp does not matter: the ballot's time stamps the update.
    let old = ok(
        "old timestamp",
        c.cas(b("k"), "Kv".into(), vec![col("a", "10")], vec![column(b("a"), b("11"), 1)], SERIAL, ONE),
    );
    assert!(old.success);
    assert_eq!(get(&mut c, "Kv", "k", "a", ONE), Some("11".into()));

    // What Cassandra refuses.
    expect_ire_containing(
        "super column family",
        c.cas(b("k"), "Super".into(), vec![], vec![col("a", "1")], SERIAL, QUORUM),
        &["CAS does not support supercolumns"],
    );
    expect_ire_containing(
        "serial level",
        c.cas(b("k"), "Kv".into(), vec![], vec![col("a", "1")], QUORUM, QUORUM),
        &["SERIAL or LOCAL_SERIAL"],
    );
    expect_ire_containing(
        "commit level",
        c.cas(b("k"), "Kv".into(), vec![], vec![col("a", "1")], SERIAL, SERIAL),
        &["commit consistency"],
    );
    expect_ire_containing(
        "update without a value",
        c.cas(b("k"), "Kv".into(), vec![], vec![no_value("a")], SERIAL, QUORUM),
        &["value"],
    );
    expect_ire("unknown column family", c.cas(b("k"), "Nope".into(), vec![], vec![col("a", "1")], SERIAL, QUORUM));
    expect_ire_containing(
        "serial read of two partitions",
        c.multiget_slice(vec![b("k"), b("j")], parent("Kv"), all(10), SERIAL),
        &["one partition at a time"],
    );
    expect_ire("serial range read", c.get_range_slices(parent("Kv"), all(10), key_range("", "", 10), SERIAL));

    // Many clients, one column: no update is lost.
    let (applied, unknown, n) = run_increments(|_| node.client_in("Cas"), &mut c, "Kv", "counter", || {});
    eprintln!("one node: {applied} applied, {unknown} timed out, final value {n}");

    // The Paxos state and the data survive a restart without a clean shutdown.
    node.kill9();
    node.start_again();
    let mut c = node.client_in("Cas");
    assert_eq!(get(&mut c, "Kv", "counter", "n", SERIAL), Some(n.to_string()));
    let r = ok(
        "after restart",
        c.cas(b("counter"), "Kv".into(), vec![col("n", &n.to_string())], vec![col("n", "done")], SERIAL, QUORUM),
    );
    assert!(r.success, "{r:?}");
}

/// Waits until `observer`'s `sibyltool status` shows `address` with status `code` (UN, DN).
fn wait_status(observer: &Node, address: &str, code: &str) {
    let seen = eventually(Duration::from_secs(60), || {
        observer.tool(&["status"]).stdout.lines().any(|l| l.starts_with(code) && l.contains(&format!(" {address} ")))
    });
    assert!(seen, "{} never showed {address} as {code}:\n{}", observer.address(), observer.tool(&["status"]).stdout);
}

fn cluster(name: &str) -> Vec<Node> {
    let tokens = random_partitioner_tokens(3);
    let nodes = start_cluster(3, |i| Config {
        cluster_name: name.into(),
        initial_token: tokens[i].clone(),
        ..Config::random().extra("<PhiConvictThreshold>5</PhiConvictThreshold>")
    });
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    let mut admin = nodes[0].client();
    ok("add keyspace", admin.system_add_keyspace(ks_def("Cas", 3, vec![cf_def("Cas", "Kv", "UTF8Type")])));
    nodes
}

#[test]
fn cas_across_three_nodes_loses_no_update() {
    let nodes = cluster("Cas Test");
    let mut clients: Vec<Client> = nodes.iter().map(|n| n.client_in("Cas")).collect();
    // A cas through one node is seen by a cas through another.
    let r = ok("first", clients[0].cas(b("k"), "Kv".into(), vec![], vec![col("v", "1")], SERIAL, QUORUM));
    assert!(r.success);
    let r = ok("second", clients[1].cas(b("k"), "Kv".into(), vec![], vec![col("v", "2")], SERIAL, QUORUM));
    assert!(!r.success);
    assert_eq!(values(&r.current_values), vec![("v".to_string(), "1".to_string())]);
    let r = ok("third", clients[2].cas(b("k"), "Kv".into(), vec![col("v", "1")], vec![col("v", "3")], SERIAL, QUORUM));
    assert!(r.success);
    for c in &mut clients {
        assert_eq!(get(c, "Kv", "k", "v", SERIAL), Some("3".into()));
    }
    // Committed at ALL: every replica holds it, a read at ONE anywhere sees it.
    let r = ok(
        "commit at ALL",
        clients[0].cas(b("k"), "Kv".into(), vec![col("v", "3")], vec![col("v", "4")], SERIAL, t::ConsistencyLevel::ALL),
    );
    assert!(r.success);
    for c in &mut clients {
        assert_eq!(get(c, "Kv", "k", "v", ONE), Some("4".into()));
    }

    let (applied, unknown, n) =
        run_increments(|i| nodes[i % 3].client_in("Cas"), &mut clients[0], "Kv", "counter", || {});
    eprintln!("three nodes: {applied} applied, {unknown} timed out, final value {n}");
}

#[test]
fn serial_quorum_keeps_working_with_a_node_killed_during_the_run() {
    let mut nodes = cluster("Cas Kill Test");
    let mut check = nodes[0].client_in("Cas");
    // Clients only on the nodes that stay up; node 3 dies while they run.
    let mut clients = (0..CLIENTS).map(|i| nodes[i % 2].client_in("Cas")).collect::<Vec<_>>().into_iter();
    let mut watcher = nodes[1].client_in("Cas");
    let victim = &mut nodes[2];
    let (applied, unknown, n) = run_increments(
        |_| clients.next().expect("a client per thread"),
        &mut check,
        "Kv",
        "counter",
        || {
            // Kill it once the clients are well under way.
            let value = |c: &mut Client| get(c, "Kv", "counter", "n", ONE).map_or(0, |v| v.parse().unwrap_or(0));
            assert!(eventually(Duration::from_secs(60), || value(&mut watcher) >= 30), "the increments do not start");
            victim.kill9();
            let at_kill = value(&mut watcher);
            assert!(at_kill < 150, "the node died too late in the run (n = {at_kill})");
        },
    );
    eprintln!("node killed: {applied} applied, {unknown} timed out, final value {n}");
    // Once the others know it is down, SERIAL keeps working on the two left, without timeouts.
    wait_status(&nodes[0], "127.0.0.3", "DN");
    wait_status(&nodes[1], "127.0.0.3", "DN");
    let mut c = nodes[1].client_in("Cas");
    for i in 0..20 {
        let r = ok(
            "cas with a node dead",
            c.cas(b(&format!("after{i}")), "Kv".into(), vec![], vec![col("v", "1")], SERIAL, QUORUM),
        );
        assert!(r.success);
        assert_eq!(get(&mut check, "Kv", &format!("after{i}"), "v", SERIAL), Some("1".into()));
    }
    // With a second node down, too few replicas are alive: Unavailable before anything.
    nodes[1].kill9();
    wait_status(&nodes[0], "127.0.0.2", "DN");
    let limit = Instant::now() + Duration::from_secs(60);
    loop {
        match check.cas(b("late"), "Kv".into(), vec![], vec![col("v", "1")], SERIAL, QUORUM) {
            Err(thrift::Error::User(e)) if e.downcast_ref::<t::UnavailableException>().is_some() => break,
            Err(e) if is_timeout(&e) => {}
            other => panic!("cas with two of three replicas dead answered {other:?}"),
        }
        assert!(Instant::now() < limit, "never Unavailable with two of three replicas dead");
        std::thread::sleep(Duration::from_millis(200));
    }
}
