//! Clients of Cassandra 0.6's API (2.2.0) and of API 20.1.0 on one node and one keyspace, over
//! both transports: each generation reads what the other writes, step by step and
//! concurrently; one connection can even speak both; and nothing a 0.6 client sends (garbage,
//! invalid requests, ZERO writes, unknown methods) disturbs the 20.1.0 clients.

mod v06_support;

use std::collections::BTreeMap;
use std::io::Write;
use std::net::Shutdown;
use std::time::{Duration, Instant};

use e2e::*;
use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol, TInputProtocol, TOutputProtocol};
use thrift::transport::{TFramedReadTransport, TFramedWriteTransport, TIoChannel, TTcpChannel};
use thrift_idl as t;
use thrift_idl::v06 as v;
use thrift_idl::v06::TCassandraSyncClient as _;
use v06_support::*;

const KS: &str = "Shared";

/// A 20.1.0 column as (name, value, timestamp).
type Cell = (Vec<u8>, Option<Vec<u8>>, Option<i64>);

fn config() -> Config {
    Config::random().keyspaces(keyspace_xml(
        KS,
        &[
            r#"<ColumnFamily Name="Standard1" CompareWith="UTF8Type"/>"#,
            r#"<ColumnFamily Name="Super1" ColumnType="Super" CompareWith="UTF8Type" CompareSubcolumnsWith="BytesType"/>"#,
        ],
    ))
}

fn row20(c: &mut Client, key: &str) -> Vec<(String, String)> {
    str_pairs(&ok("20.1.0 get_slice", c.get_slice(b(key), parent("Standard1"), all(1000), ONE)))
}

fn row06(c: &mut Client06, key: &str) -> Vec<(String, String)> {
    str_pairs06(&ok("0.6 get_slice", c.get_slice(KS.into(), key.into(), parent06("Standard1"), all06(1000), ONE06)))
}

#[test]
fn each_generation_reads_what_the_other_writes() {
    let node = Node::start(config());
    let mut old_unframed = client06(&node, false);
    let mut old_framed = client06(&node, true);
    let mut new_framed = node.client_in(KS);
    let mut new_unframed = node.client_unframed();
    ok("set_keyspace", new_unframed.set_keyspace(KS.into()));

    let mut model: BTreeMap<String, String> = BTreeMap::new();
    for step in 0..48 {
        let (name, value) = (format!("c{:02}", step % 13), format!("v{step}"));
        match step % 4 {
            0 => ok(
                "0.6 insert",
                old_unframed.insert(KS.into(), "row".into(), path06("Standard1", b(&name)), b(&value), ts(), ONE06),
            ),
            1 => ok(
                "20.1.0 insert",
                new_framed.insert(b("row"), parent("Standard1"), column(b(&name), b(&value), ts()), ONE),
            ),
            2 => {
                let m = batch06("row", "Standard1", vec![insert06(column06(b(&name), b(&value), ts()))]);
                ok("0.6 batch_mutate", old_framed.batch_mutate(KS.into(), m, ONE06))
            }
            _ => {
                let m = batch("row", "Standard1", vec![insert_mutation(column(b(&name), b(&value), ts()))]);
                ok("20.1.0 batch_mutate", new_unframed.batch_mutate(m, ONE))
            }
        }
        model.insert(name, value);
        if step % 5 == 4 {
            // Remove the smallest column, through the generation that did not just write.
            let victim = model.keys().next().cloned().expect("a column");
            if step % 2 == 0 {
                ok(
                    "0.6 remove",
                    old_framed.remove(KS.into(), "row".into(), path06("Standard1", b(&victim)), ts(), ONE06),
                );
            } else {
                ok("20.1.0 remove", new_framed.remove(b("row"), path("Standard1", b(&victim)), ts(), ONE));
            }
            model.remove(&victim);
        }
        let expected: Vec<(String, String)> = model.clone().into_iter().collect();
        assert_eq!(row06(&mut old_unframed, "row"), expected, "0.6 unframed after step {step}");
        assert_eq!(row06(&mut old_framed, "row"), expected, "0.6 framed after step {step}");
        assert_eq!(row20(&mut new_framed, "row"), expected, "20.1.0 framed after step {step}");
        assert_eq!(row20(&mut new_unframed, "row"), expected, "20.1.0 unframed after step {step}");
    }
    let n = model.len() as i32;
    assert_eq!(ok("0.6 get_count", old_framed.get_count(KS.into(), "row".into(), parent06("Standard1"), ONE06)), n);
    assert_eq!(ok("20.1.0 get_count", new_framed.get_count(b("row"), parent("Standard1"), all(1000), ONE)), n);

    // Super columns, both ways, with the timestamps each side chose.
    let t1 = ts();
    let m = batch06("sup", "Super1", vec![super_insert06(b("from-0.6"), vec![column06(vec![1u8], b("a"), t1)])]);
    ok("0.6 super insert", old_unframed.batch_mutate(KS.into(), m, ONE06));
    let t2 = ts();
    ok(
        "20.1.0 super insert",
        new_framed.insert(b("sup"), super_parent("Super1", b("from-20.1")), column(vec![2u8], b("b"), t2), ONE),
    );
    let seen20 = ok("20.1.0 super slice", new_framed.get_slice(b("sup"), parent("Super1"), all(10), ONE));
    let seen20: Vec<(Vec<u8>, Vec<Cell>)> = seen20
        .into_iter()
        .map(|c| {
            let sc = c.super_column.expect("a super column");
            (sc.name, sc.columns.into_iter().map(|c| (c.name, c.value, c.timestamp)).collect())
        })
        .collect();
    assert_eq!(
        seen20,
        vec![
            (b("from-0.6"), vec![(vec![1u8], Some(b("a")), Some(t1))]),
            (b("from-20.1"), vec![(vec![2u8], Some(b("b")), Some(t2))])
        ]
    );
    let seen06 =
        ok("0.6 super slice", old_framed.get_slice(KS.into(), "sup".into(), parent06("Super1"), all06(10), ONE06));
    let seen06: Vec<(Vec<u8>, Vec<v::Column>)> =
        seen06.into_iter().map(|c| c.super_column.expect("a super column")).map(|sc| (sc.name, sc.columns)).collect();
    assert_eq!(
        seen06,
        vec![
            (b("from-0.6"), vec![column06(vec![1u8], b("a"), t1)]),
            (b("from-20.1"), vec![column06(vec![2u8], b("b"), t2)])
        ]
    );

    // Range scans list the same rows to both.
    let keys20 = slice_keys(&ok(
        "20.1.0 scan",
        new_framed.get_range_slices(parent("Standard1"), all(1), key_range("", "", 100), ONE),
    ));
    let range = v::KeyRange::new(String::new(), String::new(), None, None, 100);
    let rows06 = ok("0.6 scan", old_framed.get_range_slices(KS.into(), parent06("Standard1"), all06(1), range, ONE06));
    assert_eq!(rows06.iter().map(|r| r.key.clone()).collect::<Vec<_>>(), keys20);
    assert_eq!(keys20, ["row"]);
}

/// A 20.1.0 client of its own making over `stream`, framed.
fn client20_over(stream: std::net::TcpStream) -> Client {
    let (r, w) = TTcpChannel::with_stream(stream).split().expect("split channel");
    let input: Box<dyn TInputProtocol + Send> = Box::new(TBinaryInputProtocol::new(TFramedReadTransport::new(r), true));
    let output: Box<dyn TOutputProtocol + Send> =
        Box::new(TBinaryOutputProtocol::new(TFramedWriteTransport::new(w), true));
    t::CassandraSyncClient::new(input, output)
}

#[test]
fn one_connection_can_speak_both_generations() {
    let node = Node::start(config());
    let stream = node.raw_socket();
    let mut new = client20_over(stream.try_clone().expect("clone the socket"));
    let mut old = over(stream, true);
    ok("set_keyspace", new.set_keyspace(KS.into()));
    assert_eq!(ok("describe_version after set_keyspace", new.describe_version()), "20.1.0");
    ok("0.6 insert", old.insert(KS.into(), "mixed".into(), path06("Standard1", b("c")), b("from 0.6"), ts(), ONE06));
    // The last deciding message was 0.6's: so are the calls both generations share.
    assert_eq!(ok("describe_version after a 0.6 call", old.describe_version()), "2.2.0");
    // The 20.1.0 side still has its keyspace.
    let got = ok("20.1.0 get", new.get(b("mixed"), path("Standard1", b("c")), ONE));
    assert_eq!(got.column.and_then(|c| c.value), Some(b("from 0.6")));
    assert_eq!(ok("describe_version after a 20.1.0 call", new.describe_version()), "20.1.0");
    let ks = ok("20.1.0 describe_keyspace", new.describe_keyspace(KS.into()));
    assert_eq!(ks.cf_defs.len(), 2);
    let desc = ok("0.6 describe_keyspace", {
        ok("0.6 get_string_property", old.get_string_property("version".into()));
        old.describe_keyspace(KS.into())
    });
    assert_eq!(desc.get("Super1").and_then(|m| m.get("Type")).map(String::as_str), Some("Super"));
}

/// Everything 0.6 clients may send that is wrong or odd, each on its own connection.
fn abuse_from_0_6(node: &Node, round: usize) {
    // Garbage and truncated messages, framed and not.
    for bytes in [
        b"\x80\x01\x00\x01\x00\x00\x00\x03get\x00\x00\x00\x01\x0b\x00\x01\x00\x00\x00\x05".to_vec(),
        b"GET / HTTP/1.0\r\n\r\n".to_vec(),
        vec![0, 0, 0, 9, 0x80, 1, 0, 1, 0, 0, 0, 9],
        (0..200u32).map(|i| (i * 31 + round as u32) as u8).collect(),
    ] {
        let mut s = node.raw_socket();
        let _ = s.write_all(&bytes);
        let _ = s.shutdown(Shutdown::Write);
        let _ = std::io::Read::read_to_end(&mut s, &mut Vec::new());
    }
    let mut c = client06(node, round.is_multiple_of(2));
    // Invalid requests, each answered with InvalidRequestException on a connection that stays.
    expect_ire06("empty key", c.get(KS.into(), String::new(), path06("Standard1", b("c")), ONE06));
    expect_ire06("no keyspace", c.insert("Nope".into(), "k".into(), path06("Standard1", b("c")), b("v"), ts(), ONE06));
    expect_ire06("write system", c.insert("system".into(), "k".into(), path06("local", b("c")), b("v"), ts(), ONE06));
    expect_ire06(
        "read at ZERO",
        c.get_slice(KS.into(), "row".into(), parent06("Standard1"), all06(1), v::ConsistencyLevel::ZERO),
    );
    // ZERO writes to rows the 20.1.0 clients do not use.
    for i in 0..10 {
        let key = format!("zero-{round}-{i}");
        ok(
            "ZERO insert",
            c.insert(KS.into(), key, path06("Standard1", b("z")), b("z"), ts(), v::ConsistencyLevel::ZERO),
        );
    }
    ok("login", c.login(KS.into(), v::AuthenticationRequest::new(BTreeMap::new())));
    assert_eq!(ok("version", c.describe_version()), "2.2.0");
}

#[test]
fn nothing_a_0_6_client_sends_disturbs_20_1_0_clients() {
    let node = Node::start(config());
    let deadline = Instant::now() + Duration::from_secs(60);
    std::thread::scope(|scope| {
        // Two 20.1.0 clients write and check their own rows all along.
        let writers: Vec<_> = (0..2)
            .map(|w| {
                let node = &node;
                scope.spawn(move || {
                    let mut c = node.client_in(KS);
                    let key = format!("steady-{w}");
                    for i in 0..150 {
                        assert!(Instant::now() < deadline, "the 20.1.0 writer {w} is too slow");
                        let name = format!("c{i:03}");
                        ok(
                            "20.1.0 insert",
                            c.insert(b(&key), parent("Standard1"), column(b(&name), b(&name), ts()), ONE),
                        );
                        let got = ok("20.1.0 get", c.get(b(&key), path("Standard1", b(&name)), ONE));
                        assert_eq!(got.column.and_then(|c| c.value), Some(b(&name)));
                    }
                    assert_eq!(ok("describe_version", c.describe_version()), "20.1.0");
                })
            })
            .collect();
        // Meanwhile 0.6 clients misbehave, and a well-behaved one writes the same rows.
        let abuser = scope.spawn(|| {
            for round in 0..6 {
                abuse_from_0_6(&node, round);
            }
        });
        let neighbour = scope.spawn(|| {
            let mut c = client06(&node, false);
            for i in 0..100 {
                let name = format!("n{i:03}");
                for w in 0..2 {
                    let key = format!("steady-{w}");
                    ok("0.6 insert", c.insert(KS.into(), key, path06("Standard1", b(&name)), b("0.6"), ts(), ONE06));
                }
            }
        });
        for h in writers {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        }
        abuser.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        neighbour.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        // Counted once every writer is done: the neighbour may still be writing when a 20.1.0
        // writer ends (a count taken then once saw 239 of 250).
        let mut c = node.client_in(KS);
        for w in 0..2 {
            let key = format!("steady-{w}");
            let count = ok("20.1.0 count", c.get_count(b(&key), parent("Standard1"), all(1000), ONE));
            assert_eq!(count, 250, "row {key}: 20.1.0 writer {w}'s 150 columns and the 0.6 neighbour's 100");
        }
    });
    // Every ZERO write landed.
    let mut c = client06(&node, true);
    assert!(
        eventually(Duration::from_secs(10), || {
            (0..6).all(|round| {
                (0..10)
                    .all(|i| c.get(KS.into(), format!("zero-{round}-{i}"), path06("Standard1", b("z")), ONE06).is_ok())
            })
        }),
        "ZERO writes never became visible"
    );
    assert!(!node.log().contains("panicked"), "the server panicked:\n{}", node.log());
}
