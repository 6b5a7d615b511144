//! CQL on three nodes at RF 3: seed 001's tables made through one node over Thrift, written at
//! QUORUM through it and read at QUORUM through the two others; on the same cluster, seed 001
//! through cqlsh (native protocol) on node 1 and its Q1 and Q2 read with cqlsh through nodes 2
//! and 3 at QUORUM and ALL (tests/python/test_cqlsh_cluster.py); and lightweight transactions
//! from two coordinators while a replica is killed, with no update lost or doubled.

use std::time::{Duration, Instant};

use e2e::*;
use thrift_idl as t;

fn cql(c: &mut Client, text: &str, cl: t::ConsistencyLevel) -> thrift::Result<t::CqlResult> {
    c.execute_cql3_query(text.as_bytes().to_vec(), t::Compression::NONE, cl)
}

fn run(c: &mut Client, text: &str, cl: t::ConsistencyLevel) -> t::CqlResult {
    cql(c, text, cl).unwrap_or_else(|e| panic!("{text}: {e:?}"))
}

/// The rows' values as UTF-8 text or big-endian integers by the result's types.
fn values(r: &t::CqlResult) -> Vec<Vec<String>> {
    let schema = r.schema.as_ref().expect("metadata");
    r.rows
        .as_ref()
        .expect("rows")
        .iter()
        .map(|row| {
            row.columns
                .iter()
                .map(|col| {
                    let v = col.value.as_deref().unwrap_or_default();
                    match schema.value_types[&col.name].rsplit('.').next() {
                        Some("Int32Type") => i32::from_be_bytes(v.try_into().expect("int")).to_string(),
                        Some("BooleanType") => (v == [1]).to_string(),
                        _ => String::from_utf8_lossy(v).into_owned(),
                    }
                })
                .collect()
        })
        .collect()
}

fn cluster() -> Vec<Node> {
    let tokens = random_partitioner_tokens(3);
    let nodes = start_cluster(3, |i| Config {
        cluster_name: "CQL Three".into(),
        initial_token: tokens[i].clone(),
        ..Config::random()
    });
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    nodes
}

#[test]
fn seed_001_at_quorum_through_every_node() {
    let nodes = cluster();
    let quorum = t::ConsistencyLevel::QUORUM;
    let mut one = nodes[0].client();
    run(
        &mut one,
        "CREATE KEYSPACE mags WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
        quorum,
    );
    run(
        &mut one,
        "CREATE TABLE mags.magazine_publisher (publisher text,id int,name text, publicationFrequency text,\nPRIMARY KEY (publisher, id)) WITH CLUSTERING ORDER BY (id DESC)",
        quorum,
    );
    for id in 0..40 {
        let publisher = ["Apache", "Ferris", "Tokio"][id % 3];
        run(
            &mut one,
            &format!("INSERT INTO mags.magazine_publisher (publisher, id, name, publicationFrequency) VALUES ('{publisher}', {id}, 'mag {id}', 'Weekly')"),
            quorum,
        );
    }
    // The schema change returned once every live node had it: usable through each at once.
    for node in &nodes[1..] {
        let mut c = node.client();
        let q2 =
            values(&run(&mut c, "SELECT id, name FROM mags.magazine_publisher WHERE publisher = 'Ferris'", quorum));
        let expected: Vec<Vec<String>> =
            (0..40).rev().filter(|id| id % 3 == 1).map(|id| vec![id.to_string(), format!("mag {id}")]).collect();
        assert_eq!(q2, expected);
        let all = values(&run(&mut c, "SELECT COUNT(*) FROM mags.magazine_publisher", quorum));
        assert_eq!(all, [vec!["\0\0\0\0\0\0\0(".to_string()]], "40 as a bigint");
    }
    // ALL sees the three replicas agree.
    let mut three = nodes[2].client();
    let every =
        run(&mut three, "SELECT id FROM mags.magazine_publisher WHERE publisher = 'Tokio'", t::ConsistencyLevel::ALL);
    assert_eq!(values(&every).len(), 13);

    // The seed again, through cqlsh on the native port, with the cluster shared.
    let hosts: Vec<String> = nodes.iter().map(|n| n.native_addr().to_string()).collect();
    let env = [("SIBYL_NATIVE_HOSTS", Some(hosts.join(",")))];
    run_python_unittest_with(&nodes[0], "test_cqlsh_cluster.py", "cqlshlib", &env, CQLSH_LIMIT);
}

/// The cqlsh runs of test_cqlsh_cluster.py: five, each a process and a connection.
const CQLSH_LIMIT: Duration = Duration::from_secs(300);

/// One compare-and-set increment of the counter row, retried until it applies or the budget ends;
/// `Err` if its outcome is unknown (a timeout: it may or may not have been applied).
fn increment(c: &mut Client) -> Result<bool, ()> {
    for _ in 0..50 {
        let current = match cql(c, "SELECT v FROM l.c WHERE k = 0", t::ConsistencyLevel::SERIAL) {
            Ok(r) => values(&r)[0][0].parse::<i32>().expect("an int"),
            Err(_) => continue,
        };
        let update = format!("UPDATE l.c SET v = {} WHERE k = 0 IF v = {current}", current + 1);
        match cql(c, &update, t::ConsistencyLevel::QUORUM) {
            Ok(r) if values(&r)[0][0] == "true" => return Ok(true),
            Ok(_) => continue,
            Err(thrift::Error::User(e)) if e.downcast_ref::<t::TimedOutException>().is_some() => return Err(()),
            Err(_) => continue,
        }
    }
    Ok(false)
}

#[test]
fn lightweight_transactions_lose_nothing_when_a_replica_dies() {
    let mut nodes = cluster();
    let mut c = nodes[0].client();
    run(
        &mut c,
        "CREATE KEYSPACE l WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
        t::ConsistencyLevel::ONE,
    );
    run(&mut c, "CREATE TABLE l.c (k int PRIMARY KEY, v int)", t::ConsistencyLevel::ONE);
    let created =
        values(&run(&mut c, "INSERT INTO l.c (k, v) VALUES (0, 0) IF NOT EXISTS", t::ConsistencyLevel::QUORUM));
    assert_eq!(created, [vec!["true"]]);

    const PER_CLIENT: usize = 15;
    let workers: Vec<_> = (0..2)
        .map(|i| {
            let mut client = nodes[i].client();
            std::thread::spawn(move || {
                let (mut applied, mut unknown) = (0, 0);
                let started = Instant::now();
                for _ in 0..PER_CLIENT {
                    if started.elapsed() > Duration::from_secs(90) {
                        break;
                    }
                    match increment(&mut client) {
                        Ok(true) => applied += 1,
                        Ok(false) => {}
                        Err(()) => unknown += 1,
                    }
                }
                (applied, unknown)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    nodes[2].kill9();
    let results: Vec<(usize, usize)> = workers.into_iter().map(|w| w.join().expect("worker")).collect();
    let applied: usize = results.iter().map(|r| r.0).sum();
    let unknown: usize = results.iter().map(|r| r.1).sum();
    eprintln!("lwt: {results:?}");
    assert!(applied > 0, "{results:?}");
    let final_value: usize =
        values(&run(&mut c, "SELECT v FROM l.c WHERE k = 0", t::ConsistencyLevel::SERIAL))[0][0].parse().expect("int");
    // Every acknowledged increment is there, once; an increment whose answer was lost may be.
    assert!(
        (applied..=applied + unknown).contains(&final_value),
        "final {final_value}, applied {applied}, unknown {unknown}"
    );
}
