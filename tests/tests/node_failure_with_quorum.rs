//! Three nodes, RF 3: one node killed (SIGKILL) or frozen (SIGSTOP) while clients keep going.
//! QUORUM reads and writes keep working, ALL answers UnavailableException once the others have
//! marked it down, and nothing hangs; after a restart the hints for the writes it missed are
//! replayed, so a read at ONE on it sees every write.

use std::time::{Duration, Instant};

use e2e::*;
use thrift_idl as t;

const QUORUM: t::ConsistencyLevel = t::ConsistencyLevel::QUORUM;
const ALL: t::ConsistencyLevel = t::ConsistencyLevel::ALL;
/// Lowest threshold Cassandra accepts: a dead node is convicted in about a dozen seconds.
const FAST_CONVICTION: &str = "<PhiConvictThreshold>5</PhiConvictThreshold>";

fn cluster(name: &str) -> Vec<Node> {
    let tokens = random_partitioner_tokens(3);
    let nodes = start_cluster(3, |i| Config {
        cluster_name: name.into(),
        initial_token: tokens[i].clone(),
        ..Config::random().extra(FAST_CONVICTION)
    });
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    let mut admin = nodes[0].client();
    ok("add keyspace", admin.system_add_keyspace(ks_def("Fail", 3, vec![cf_def("Fail", "Kv", "UTF8Type")])));
    nodes
}

/// Waits until `observer`'s `sibyltool status` shows `address` with status `code` (UN, DN).
fn wait_status(observer: &Node, address: &str, code: &str, limit: Duration) {
    let seen = eventually(limit, || {
        observer.tool(&["status"]).stdout.lines().any(|l| l.starts_with(code) && l.contains(&format!(" {address} ")))
    });
    assert!(seen, "{} never showed {address} as {code}:\n{}", observer.address(), observer.tool(&["status"]).stdout);
}

fn write(c: &mut Client, key: &str, value: &str, cl: t::ConsistencyLevel) -> thrift::Result<()> {
    c.insert(b(key), parent("Kv"), column(b("c"), b(value), ts()), cl)
}

fn read(c: &mut Client, key: &str, cl: t::ConsistencyLevel) -> thrift::Result<Option<Vec<u8>>> {
    match c.get(b(key), path("Kv", b("c")), cl) {
        Ok(cosc) => Ok(cosc.column.and_then(|c| c.value)),
        Err(thrift::Error::User(e)) if e.downcast_ref::<t::NotFoundException>().is_some() => Ok(None),
        Err(e) => Err(e),
    }
}

#[test]
fn a_killed_node_misses_nothing_once_it_returns() {
    let mut nodes = cluster("Kill Test");
    let mut c = nodes[0].client_in("Fail");
    for i in 0..50 {
        ok("write before", write(&mut c, &format!("before{i}"), "b", QUORUM));
    }

    nodes[2].kill9();
    // Writes at QUORUM never need the dead node: two of three acknowledge.
    for i in 0..50 {
        ok("write while the node dies", write(&mut c, &format!("during{i}"), "d", QUORUM));
    }
    wait_status(&nodes[0], "127.0.0.3", "DN", Duration::from_secs(60));
    wait_status(&nodes[1], "127.0.0.3", "DN", Duration::from_secs(60));
    expect_unavailable("ALL with a node down", write(&mut c, "all", "x", ALL));
    expect_unavailable("ALL read with a node down", read(&mut c, "before0", ALL));
    let mut c2 = nodes[1].client_in("Fail");
    for i in 0..50 {
        ok("write while down", write(&mut c2, &format!("down{i}"), "w", QUORUM));
        assert_eq!(ok("read while down", read(&mut c, &format!("down{i}"), QUORUM)), Some(b("w")));
        assert_eq!(ok("read older", read(&mut c2, &format!("before{i}"), QUORUM)), Some(b("b")));
    }

    // A schema change while node 3 is down: it catches up when it returns.
    let mut admin = nodes[1].client_in("Fail");
    ok("add a column family", admin.system_add_column_family(cf_def("Fail", "Later", "UTF8Type")));

    nodes[2].start_again();
    wait_status(&nodes[0], "127.0.0.3", "UN", Duration::from_secs(60));
    wait_status(&nodes[1], "127.0.0.3", "UN", Duration::from_secs(60));
    // The hints for what it missed are replayed: a read at ONE on it (its own copy) sees all.
    let mut c3 = nodes[2].client_in("Fail");
    let caught_up = eventually(Duration::from_secs(60), || {
        (0..50).all(|i| {
            matches!(read(&mut c3, &format!("during{i}"), ONE), Ok(Some(v)) if v == b("d"))
                && matches!(read(&mut c3, &format!("down{i}"), ONE), Ok(Some(v)) if v == b("w"))
        })
    });
    assert!(caught_up, "node 3 did not receive the writes it missed (hints)");
    let schema_caught_up = eventually(Duration::from_secs(60), || {
        c3.describe_keyspace("Fail".into()).is_ok_and(|ks| ks.cf_defs.iter().any(|cf| cf.name == "Later"))
    });
    assert!(schema_caught_up, "node 3 did not learn the column family added while it was down");
    ok("ALL again", write(&mut c, "all", "x", ALL));
}

#[test]
fn a_frozen_node_slows_nothing_forever_and_is_marked_down() {
    let mut nodes = cluster("Stop Test");
    let mut c = nodes[0].client_in("Fail");
    ok("write", write(&mut c, "k", "v", QUORUM));
    nodes[1].pause();
    // Until node 2 is convicted, a request may wait for it: it either succeeds or times out
    // (TimedOutException), well within the client's own timeout, never hangs.
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        let began = Instant::now();
        match read(&mut c, "k", QUORUM) {
            Ok(v) => assert_eq!(v, Some(b("v"))),
            Err(thrift::Error::User(e)) if e.downcast_ref::<t::TimedOutException>().is_some() => {}
            Err(e) => panic!("a read with a frozen replica failed with {e:?}"),
        }
        assert!(began.elapsed() < Duration::from_secs(10), "a request took {:?}", began.elapsed());
        match write(&mut c, "k", "v", QUORUM) {
            Ok(()) => {}
            Err(thrift::Error::User(e)) if e.downcast_ref::<t::TimedOutException>().is_some() => {}
            Err(e) => panic!("a write with a frozen replica failed with {e:?}"),
        }
    }
    wait_status(&nodes[0], "127.0.0.2", "DN", Duration::from_secs(60));
    for i in 0..20 {
        ok("QUORUM write with a node down", write(&mut c, &format!("k{i}"), "v", QUORUM));
        assert_eq!(ok("QUORUM read", read(&mut c, &format!("k{i}"), QUORUM)), Some(b("v")));
    }
    nodes[1].resume();
    wait_status(&nodes[0], "127.0.0.2", "UN", Duration::from_secs(60));
    ok("ALL once it is back", write(&mut c, "back", "v", ALL));
}
