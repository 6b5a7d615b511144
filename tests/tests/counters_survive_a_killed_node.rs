//! The counter kill test: three nodes at RF 3, eight clients adding +1 to one counter at QUORUM
//! for a bounded time while the third node is SIGKILLed and restarted. The final value at
//! QUORUM through every node is at least the acknowledged increments and at most the
//! attempted ones (exactly the acknowledged ones when none failed), and after those QUORUM reads
//! every node answers the same value at ONE from its own copy: no increment is lost or counted
//! twice by replay, hints or read repair.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use e2e::*;
use thrift_idl as t;

const QUORUM: t::ConsistencyLevel = t::ConsistencyLevel::QUORUM;
const FAST_CONVICTION: &str = "<PhiConvictThreshold>5</PhiConvictThreshold>";
const CLIENTS: usize = 8;
const RUN_FOR: Duration = Duration::from_secs(20);

fn wait_status(observer: &Node, address: &str, code: &str, limit: Duration) {
    let seen = eventually(limit, || {
        observer.tool(&["status"]).stdout.lines().any(|l| l.starts_with(code) && l.contains(&format!(" {address} ")))
    });
    assert!(seen, "{} never showed {address} as {code}:\n{}", observer.address(), observer.tool(&["status"]).stdout);
}

fn read(c: &mut Client, cl: t::ConsistencyLevel) -> i64 {
    let got = ok("get counter", c.get(b("song1"), path("Hits", b("likes")), cl));
    got.counter_column.as_ref().map(|cc| cc.value).unwrap_or_else(|| panic!("not a counter: {got:?}"))
}

#[test]
fn counters_survive_a_killed_node() {
    let tokens = random_partitioner_tokens(3);
    let mut nodes = start_cluster(3, |i| Config {
        cluster_name: "Counter Kill".into(),
        initial_token: tokens[i].clone(),
        ..Config::random().extra(FAST_CONVICTION)
    });
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    let mut cf = cf_def("Cnt", "Hits", "UTF8Type");
    cf.default_validation_class = Some("CounterColumnType".into());
    ok("add keyspace", nodes[0].client().system_add_keyspace(ks_def("Cnt", 3, vec![cf])));

    let (attempted, acked, failed) =
        (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let started = Instant::now();
    let workers: Vec<_> = (0..CLIENTS)
        .map(|i| {
            // Clients talk to the two nodes that stay up; the third is a replica of every key.
            let mut c = nodes[i % 2].client_in("Cnt");
            let (attempted, acked, failed) = (attempted.clone(), acked.clone(), failed.clone());
            std::thread::spawn(move || {
                while started.elapsed() < RUN_FOR {
                    attempted.fetch_add(1, Ordering::SeqCst);
                    match c.add(b("song1"), parent("Hits"), t::CounterColumn::new(b("likes"), 1), QUORUM) {
                        Ok(()) => acked.fetch_add(1, Ordering::SeqCst),
                        Err(thrift::Error::User(_)) => failed.fetch_add(1, Ordering::SeqCst),
                        Err(e) => panic!("transport failure to a node that stays up: {e:?}"),
                    };
                }
            })
        })
        .collect();

    std::thread::sleep(Duration::from_secs(5));
    nodes[2].kill9();
    std::thread::sleep(Duration::from_secs(5));
    nodes[2].start_again();
    for w in workers {
        assert!(w.join().is_ok(), "a client thread panicked");
    }
    let (attempted, acked, failed) =
        (attempted.load(Ordering::SeqCst) as i64, acked.load(Ordering::SeqCst) as i64, failed.load(Ordering::SeqCst));
    assert!(acked > 100, "too few increments acknowledged to prove anything: {acked}");
    wait_status(&nodes[0], "127.0.0.3", "UN", Duration::from_secs(60));
    wait_status(&nodes[1], "127.0.0.3", "UN", Duration::from_secs(60));

    let mut clients: Vec<Client> = nodes.iter().map(|n| n.client_in("Cnt")).collect();
    let mut values = Vec::new();
    for c in clients.iter_mut() {
        values.push(read(c, QUORUM));
    }
    eprintln!("attempted {attempted}, acknowledged {acked}, failed {failed}, QUORUM values {values:?}");
    let value = values.first().copied().unwrap_or_default();
    assert!(values.iter().all(|v| *v == value), "nodes disagree at QUORUM: {values:?}");
    assert!(acked <= value && value <= attempted, "value {value} outside [{acked}, {attempted}]");
    if failed == 0 {
        assert_eq!(value, acked, "no increment failed, so the value is exactly the acknowledged count");
    }
    // Each node's own copy, after the QUORUM reads (read repair) and hints.
    for (i, c) in clients.iter_mut().enumerate() {
        let same = eventually(Duration::from_secs(30), || read(c, ONE) == value);
        assert!(same, "node {} answers {} at ONE, not {value}", i + 1, read(c, ONE));
    }
}
