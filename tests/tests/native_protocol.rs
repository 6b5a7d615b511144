//! The native protocol (v3 and v4) on NativeTransportPort, against a real node: the handshake,
//! statements run through the same executor as Thrift's CQL calls, prepared statements and
//! batches, compression, the refusals drivers rely on (version, order, size), many streams at
//! once on one connection, SASL PLAIN logins, and SCHEMA_CHANGE events.

use std::collections::BTreeMap;
use std::time::Duration;

use e2e::native::*;
use e2e::*;
use thrift_idl::TCassandraSyncClient;

const V4: u8 = 4;
const V3: u8 = 3;

fn int(v: i32) -> Vec<u8> {
    v.to_be_bytes().to_vec()
}

/// A node with keyspace `ks` and table `ks.t (k int PRIMARY KEY, v text)` made over the native
/// port, and a ready v4 connection in `ks`.
fn node_with_table() -> (Node, NativeClient) {
    let node = Node::start(Config::random());
    let mut c = NativeClient::ready(node.native_addr(), V4, None);
    c.query_ok("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", 5);
    c.query_ok("USE ks", 3);
    c.query_ok("CREATE TABLE t (k int PRIMARY KEY, v text)", 5);
    (node, c)
}

#[test]
fn options_answer_what_the_node_supports() {
    let node = Node::start(Config::random());
    for (version, versions) in [(V4, Some(vec!["3/v3".to_string(), "4/v4".to_string()])), (V3, None)] {
        let mut c = NativeClient::connect(node.native_addr(), version);
        let f = c.request(0, OPTIONS, &[]);
        assert_eq!((f.opcode, f.version), (SUPPORTED, 0x80 | version));
        let mut cur = f.cursor();
        let mut options = BTreeMap::new();
        for _ in 0..cur.short() {
            let key = cur.string();
            options.insert(key, cur.string_list());
        }
        assert!(cur.is_done());
        assert_eq!(options.get("CQL_VERSION"), Some(&vec!["3.4.4".to_string()]));
        assert_eq!(options.get("COMPRESSION"), Some(&vec!["lz4".to_string(), "snappy".to_string()]));
        assert_eq!(options.get("PROTOCOL_VERSIONS").cloned(), versions, "v{version}");
        // OPTIONS does not start the connection: a query still needs STARTUP.
        let (code, message) = c.query("SELECT * FROM system.local").error();
        assert_eq!((code, message.as_str()), (0x000A, "Unexpected message QUERY, expecting STARTUP or OPTIONS"));
    }
}

#[test]
fn statements_run_with_exact_rows_and_metadata() {
    let (node, mut c) = node_with_table();
    let f = c.query("CREATE TABLE ks.t2 (a text, b int, c bigint, PRIMARY KEY (a, b))");
    let mut cur = f.cursor();
    assert_eq!(cur.int(), 5, "SCHEMA_CHANGE result");
    assert_eq!(
        (cur.string(), cur.string(), cur.string(), cur.string()),
        ("CREATED".into(), "TABLE".into(), "ks".into(), "t2".into())
    );
    assert!(cur.is_done());
    c.query_ok("INSERT INTO t (k, v) VALUES (1, 'one')", 1);
    c.query_ok("INSERT INTO t (k, v) VALUES (2, 'two')", 1);
    c.query_ok("INSERT INTO t2 (a, b, c) VALUES ('x', 5, 50)", 1);
    c.query_ok("INSERT INTO t2 (a, b) VALUES ('x', 6)", 1);

    let r = rows(&c.query("SELECT k, v FROM t WHERE k = 1"));
    assert!(r.global, "one table: a global table spec");
    assert_eq!(
        r.columns,
        vec![("ks".into(), "t".into(), "k".into(), 0x09), ("ks".into(), "t".into(), "v".into(), 0x0D)]
    );
    assert_eq!(r.rows, vec![vec![Some(int(1)), Some(b"one".to_vec())]]);

    let r = rows(&c.query("SELECT * FROM t2 WHERE a = 'x'"));
    let names: Vec<(&str, u16)> = r.columns.iter().map(|(_, _, n, t)| (n.as_str(), *t)).collect();
    assert_eq!(names, [("a", 0x0D), ("b", 0x09), ("c", 0x02)]);
    assert_eq!(
        r.rows,
        vec![
            vec![Some(b"x".to_vec()), Some(int(5)), Some(50i64.to_be_bytes().to_vec())],
            vec![Some(b"x".to_vec()), Some(int(6)), None],
        ]
    );

    // What Thrift wrote, the native port reads, and the other way round.
    let mut thrift = node.client();
    ok("set_keyspace", thrift.set_keyspace("ks".into()));
    ok(
        "execute_cql3_query",
        thrift.execute_cql3_query(
            b"INSERT INTO t (k, v) VALUES (3, 'three')".to_vec(),
            thrift_idl::Compression::NONE,
            thrift_idl::ConsistencyLevel::ONE,
        ),
    );
    let r = rows(&c.query("SELECT v FROM t WHERE k = 3"));
    assert_eq!(r.rows, vec![vec![Some(b"three".to_vec())]]);

    // Errors with their codes and extra fields.
    assert_eq!(c.query("SELEC * FROM t").error().0, 0x2000);
    let (code, message) = c.query("SELECT * FROM nope").error();
    assert_eq!((code, message.as_str()), (0x2200, "unconfigured table nope"));
    let f = c.query("CREATE TABLE t (k int PRIMARY KEY)");
    let mut cur = f.cursor();
    assert_eq!(cur.int(), 0x2400);
    cur.string();
    assert_eq!((cur.string(), cur.string()), ("ks".to_string(), "t".to_string()));
}

#[test]
fn prepared_statements_take_positional_and_named_values() {
    let (node, mut c) = node_with_table();
    let (id, f) = c.prepare("INSERT INTO t (k, v) VALUES (?, ?)");
    assert_eq!(id.len(), 16, "an MD5 id");
    let mut cur = f.cursor();
    cur.int();
    cur.short_bytes();
    let flags = cur.int();
    assert_eq!((flags & 1, cur.int()), (1, 2), "two markers of one table");
    assert_eq!((cur.int(), cur.short()), (1, 0), "v4: one partition key marker, the first");
    assert_eq!((cur.string(), cur.string()), ("ks".to_string(), "t".to_string()));
    assert_eq!((cur.string(), cur.short(), cur.string(), cur.short()), ("k".into(), 0x09, "v".into(), 0x0D));
    assert_eq!((cur.int(), cur.int()), (0x0004, 0), "no result metadata");
    assert!(cur.is_done());

    assert_eq!(c.execute(&id, &[Some(&int(10)), Some(b"ten")]).result_kind(), 1);
    assert_eq!(c.execute(&id, &[Some(&int(11)), None]).result_kind(), 1);
    // The same text prepared again has the same id.
    assert_eq!(c.prepare("INSERT INTO t (k, v) VALUES (?, ?)").0, id);

    // Named values, in another order than the markers.
    let (select, _) = c.prepare("SELECT k, v FROM t WHERE k = :k");
    let body = Body::new()
        .short_bytes(&select)
        .short(CL_QUORUM)
        .byte(0x01 | 0x40)
        .short(1)
        .string("k")
        .value(Some(&int(10)))
        .0;
    let r = rows(&c.request(0, EXECUTE, &body));
    assert_eq!(r.rows, vec![vec![Some(int(10)), Some(b"ten".to_vec())]]);
    let r = rows(&c.execute(&select, &[Some(&int(11))]));
    assert_eq!(r.rows, vec![vec![Some(int(11)), None]]);
    // A named marker goes by its own name, not its column's (3.11).
    let (by_name, _) = c.prepare("SELECT v FROM t WHERE k = :wanted");
    let body = Body::new()
        .short_bytes(&by_name)
        .short(CL_QUORUM)
        .byte(0x01 | 0x40)
        .short(1)
        .string("wanted")
        .value(Some(&int(10)))
        .0;
    assert_eq!(rows(&c.request(0, EXECUTE, &body)).rows, vec![vec![Some(b"ten".to_vec())]]);

    // A QUERY with values is bound the same way.
    let body = Body::new()
        .long_string("SELECT v FROM t WHERE k = ?")
        .short(CL_ONE)
        .byte(0x01)
        .short(1)
        .value(Some(&int(10)))
        .0;
    assert_eq!(rows(&c.request(0, QUERY, &body)).rows, vec![vec![Some(b"ten".to_vec())]]);

    // An id the node does not know: Unprepared with that id, which drivers prepare again.
    let unknown = [7u8; 16];
    let f = c.execute(&unknown, &[]);
    let mut cur = f.cursor();
    assert_eq!(cur.int(), 0x2500);
    assert!(cur.string().contains(&"07".repeat(16)));
    assert_eq!(cur.short_bytes(), unknown.to_vec());

    // Too few values.
    assert_eq!(c.execute(&id, &[Some(&int(12))]).error().0, 0x2200);

    // A text Thrift prepared first (same keyspace) is the same statement here, found again
    // rather than prepared twice.
    let mut thrift = node.client();
    ok("set_keyspace", thrift.set_keyspace("ks".into()));
    let text = "SELECT k FROM t WHERE k = ?";
    ok("prepare_cql3_query", thrift.prepare_cql3_query(text.as_bytes().to_vec(), thrift_idl::Compression::NONE));
    let (from_thrift, _) = c.prepare(text);
    assert_eq!(rows(&c.execute(&from_thrift, &[Some(&int(10))])).rows, vec![vec![Some(int(10))]]);
}

#[test]
fn batches_mix_texts_and_prepared_ids() {
    let (_node, mut c) = node_with_table();
    let (id, _) = c.prepare("INSERT INTO t (k, v) VALUES (?, ?)");
    let body = Body::new()
        .byte(1) // UNLOGGED
        .short(3)
        .byte(0)
        .long_string("INSERT INTO t (k, v) VALUES (20, 'twenty')")
        .short(0)
        .byte(1)
        .short_bytes(&id)
        .short(2)
        .value(Some(&int(21)))
        .value(Some(b"twenty-one"))
        .byte(0)
        .long_string("UPDATE t SET v = ? WHERE k = ?")
        .short(2)
        .value(Some(b"twenty-two"))
        .value(Some(&int(22)))
        .short(CL_ONE)
        .byte(0x20)
        .long(1_000_000)
        .0;
    assert_eq!(c.request(0, BATCH, &body).result_kind(), 1);
    let r = rows(&c.query("SELECT k, v, writetime(v) FROM t WHERE k IN (20, 21, 22)"));
    let mut got: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> = r
        .rows
        .into_iter()
        .map(|row| (row[0].clone().unwrap(), row[1].clone().unwrap(), row[2].clone().unwrap()))
        .collect();
    got.sort();
    let ts = 1_000_000i64.to_be_bytes().to_vec();
    assert_eq!(
        got,
        vec![
            (int(20), b"twenty".to_vec(), ts.clone()),
            (int(21), b"twenty-one".to_vec(), ts.clone()),
            (int(22), b"twenty-two".to_vec(), ts),
        ],
        "every statement written, with the batch's default timestamp"
    );
    // A SELECT may not be batched.
    let body = Body::new().byte(1).short(1).byte(0).long_string("SELECT * FROM t").short(0).short(CL_ONE).byte(0).0;
    assert_eq!(c.request(0, BATCH, &body).error().0, 0x2200);
    // An unknown prepared id in a batch.
    let body = Body::new().byte(1).short(1).byte(1).short_bytes(&[1; 16]).short(0).short(CL_ONE).byte(0).0;
    assert_eq!(c.request(0, BATCH, &body).error().0, 0x2500);
}

#[test]
fn compressed_connections_in_lz4_and_snappy() {
    let (node, mut plain) = node_with_table();
    for i in 0..20 {
        plain.query_ok(&format!("INSERT INTO t (k, v) VALUES ({i}, '{}')", "x".repeat(100)), 1);
    }
    for compression in [Compression::Lz4, Compression::Snappy] {
        for version in [V3, V4] {
            let mut c = NativeClient::ready(node.native_addr(), version, Some(compression));
            let r = rows(&c.query("SELECT k, v FROM ks.t"));
            assert_eq!(r.rows.len(), 20, "{compression:?} v{version}");
            assert!(r.rows.iter().all(|row| row[1].as_deref() == Some("x".repeat(100).as_bytes())));
            assert!(c.compressed_frames >= 2, "READY and the rows come compressed ({compression:?})");
        }
    }
}

#[test]
fn refusals_drivers_rely_on() {
    let node = Node::start(Config::random());
    // v5: refused in v4 (the highest served), naming the versions, then closed.
    let mut c = NativeClient::connect(node.native_addr(), 5);
    c.send(0, 3, OPTIONS, &[]);
    let f = c.recv();
    assert_eq!((f.version, f.stream), (0x84, 3));
    assert_eq!(
        f.error(),
        (0x000A, "Invalid or unsupported protocol version (5); supported versions are (3/v3, 4/v4)".to_string())
    );
    assert!(c.try_recv().is_none(), "the connection closes");

    // v2: refused in v2's own 8-byte header, so a v2 driver can read it.
    let mut c = NativeClient::connect(node.native_addr(), 2);
    c.write_raw(&[2, 0, 9, OPTIONS, 0, 0, 0, 0]);
    let f = c.recv();
    assert_eq!((f.version, f.stream, f.error().0), (0x82, 9, 0x000A));

    // A request before STARTUP.
    let mut c = NativeClient::connect(node.native_addr(), V4);
    c.send(0, 5, QUERY, &Body::new().long_string("SELECT * FROM system.local").short(CL_ONE).byte(0).0);
    let f = c.recv();
    assert_eq!(f.stream, 5);
    assert_eq!(f.error(), (0x000A, "Unexpected message QUERY, expecting STARTUP or OPTIONS".to_string()));

    // A declared length past NativeTransportMaxFrameSizeInMB (256 MB): refused and closed at
    // once, without waiting for the body.
    let mut c = NativeClient::ready(node.native_addr(), V4, None);
    let mut header = NativeClient::frame_bytes(V4, 0, 8, QUERY, &[]);
    header[5..9].copy_from_slice(&0x7FFF_FFFFu32.to_be_bytes());
    c.write_raw(&header);
    let (code, message) = c.recv().error();
    assert_eq!(code, 0x000A);
    assert!(message.contains("Request is too big") && message.contains("268435456"), "{message}");
    assert!(c.try_recv().is_none(), "the connection closes");

    // A body that does not hold its message: answered, and the connection goes on.
    let mut c = NativeClient::ready(node.native_addr(), V4, None);
    let f = c.request(0, QUERY, &Body::new().long_string("SELECT").0);
    assert_eq!(f.error().0, 0x000A);
    assert_eq!(c.request(0, OPTIONS, &[]).opcode, SUPPORTED);
    // v3 has no "unset" value.
    let mut c = NativeClient::ready(node.native_addr(), V3, None);
    let body = Body::new().long_string("SELECT * FROM system.local").short(CL_ONE).byte(1).short(1).int(-2).0;
    assert_eq!(c.request(0, QUERY, &body).error().0, 0x000A);
}

#[test]
fn fifty_streams_in_flight_on_one_connection() {
    let (node, mut c) = node_with_table();
    for k in 0..50 {
        c.query_ok(&format!("INSERT INTO t (k, v) VALUES ({k}, 'value {k}')"), 1);
    }
    let mut c = NativeClient::ready(node.native_addr(), V4, None);
    // All sent before any answer is read.
    for k in 0..50i16 {
        let q = format!("SELECT v FROM ks.t WHERE k = {k}");
        c.send(0, 100 + k, QUERY, &Body::new().long_string(&q).short(CL_ONE).byte(0).0);
    }
    let mut answered = BTreeMap::new();
    for _ in 0..50 {
        let f = c.recv();
        let r = rows(&f);
        assert!(answered.insert(f.stream, r.rows).is_none(), "stream {} answered twice", f.stream);
    }
    for k in 0..50i16 {
        let want = vec![vec![Some(format!("value {k}").into_bytes())]];
        assert_eq!(answered.get(&(100 + k)), Some(&want), "stream {}", 100 + k);
    }
}

#[test]
fn sasl_plain_logins_against_the_simple_authenticator() {
    let node = Node::start_with_sample_grants();
    let plain = |user: &str, password: &str| format!("\0{user}\0{password}").into_bytes();

    let mut c = NativeClient::connect(node.native_addr(), V4);
    let f = c.startup(None);
    assert_eq!(f.opcode, AUTHENTICATE);
    assert_eq!(f.cursor().string(), "org.apache.cassandra.auth.PasswordAuthenticator");
    // Nothing else before the login.
    assert_eq!(c.query("SELECT * FROM system.local").error().0, 0x000A);
    let f = c.request(0, AUTH_RESPONSE, &Body::new().value(Some(&plain("jsmith", "wrong"))).0);
    assert_eq!(f.error().0, 0x0100, "bad credentials");
    let f = c.request(0, AUTH_RESPONSE, &Body::new().value(Some(&plain("jsmith", "havebadpass"))).0);
    assert_eq!(f.opcode, AUTH_SUCCESS, "{f:?}");
    // The grants of access.properties: jsmith reads Keyspace1 and may not drop it.
    c.query_ok("SELECT * FROM \"Keyspace1\".\"Standard1\"", 2);
    assert_eq!(c.query("DROP KEYSPACE \"MusicApp\"").result_kind(), 5, "jsmith has <modify-keyspaces>");
    let mut d = NativeClient::connect(node.native_addr(), V4);
    assert_eq!(d.startup(None).opcode, AUTHENTICATE);
    let f = d.request(0, AUTH_RESPONSE, &Body::new().value(Some(&plain("Elvis Presley", "graceland4evar"))).0);
    assert_eq!(f.opcode, AUTH_SUCCESS);
    assert_eq!(
        d.query("INSERT INTO \"Keyspace1\".\"Standard2\" (key, column1, value) VALUES (0x01, 'c', 0x02)").error().0,
        0x2100
    );
}

#[test]
fn schema_changes_reach_registered_connections() {
    let (node, mut c) = node_with_table();
    let mut listener = NativeClient::ready(node.native_addr(), V4, None);
    let f = listener.request(0, REGISTER, &Body::new().string_list(&["SCHEMA_CHANGE", "STATUS_CHANGE"]).0);
    assert_eq!(f.opcode, READY);
    let bad = listener.request(0, REGISTER, &Body::new().string_list(&["NOT_AN_EVENT"]).0);
    assert_eq!(bad.error().0, 0x000A);

    let next_event = |l: &mut NativeClient| -> Vec<String> {
        let f = l.recv();
        assert_eq!((f.opcode, f.stream), (EVENT, -1), "{f:?}");
        let mut cur = f.cursor();
        let mut out = vec![cur.string(), cur.string(), cur.string(), cur.string()];
        if out[2] != "KEYSPACE" {
            out.push(cur.string());
        }
        assert!(cur.is_done());
        out
    };
    listener.set_read_timeout(Duration::from_secs(10));
    c.query_ok("CREATE TABLE t3 (k int PRIMARY KEY)", 5);
    assert_eq!(next_event(&mut listener), ["SCHEMA_CHANGE", "CREATED", "TABLE", "ks", "t3"]);

    // A change made through Thrift reaches it too.
    let mut thrift = node.client();
    ok("system_add_keyspace", thrift.system_add_keyspace(ks_def("ks2", 1, vec![])));
    assert_eq!(next_event(&mut listener), ["SCHEMA_CHANGE", "CREATED", "KEYSPACE", "ks2"]);
    c.query_ok("DROP TABLE t3", 5);
    assert_eq!(next_event(&mut listener), ["SCHEMA_CHANGE", "DROPPED", "TABLE", "ks", "t3"]);
}

#[test]
fn a_traced_query_is_recorded_under_the_session_it_answers() {
    let (node, mut c) = node_with_table();
    let body = Body::new().long_string("SELECT * FROM ks.t WHERE k = 1").short(CL_ONE).byte(0).0;
    let f = c.request(FLAG_TRACING, QUERY, &body);
    assert_eq!(f.flags & FLAG_TRACING, FLAG_TRACING, "the answer says it was traced");
    let mut cur = f.cursor();
    let session = cur.uuid();
    assert_eq!(uuid::Uuid::from_bytes(session).get_version_num(), 1, "a time-based session id");
    assert_eq!(cur.int(), 2, "then the rows");
    // Written before the answer: readable at once, over Thrift.
    let mut thrift = node.client();
    ok("set_keyspace", thrift.set_keyspace("system_traces".into()));
    let row = ok("get_slice", thrift.get_slice(session.to_vec(), parent("sessions"), all(100), ONE));
    let values: Vec<Vec<u8>> = row.iter().filter_map(|c| c.column.as_ref().and_then(|c| c.value.clone())).collect();
    assert!(values.iter().any(|v| v == b"Execute CQL3 query"), "request recorded: {values:?}");
    // Untraced: no flag.
    let f = c.request(0, QUERY, &body);
    assert_eq!(f.flags & FLAG_TRACING, 0);
}

/// Random frames after a valid STARTUP: each is answered with a few bounded responses (or
/// a close), every one a server message, and the node keeps serving.
#[test]
fn random_frames_never_break_a_live_node() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config as RunnerConfig, TestRunner};
    let node = Node::start(Config::random());
    let addr = node.native_addr();
    let mut runner = TestRunner::new(RunnerConfig { cases: 40, ..RunnerConfig::default() });
    let frames = (any::<u8>(), 0u8..0x12, proptest::collection::vec(any::<u8>(), 0..64), any::<bool>());
    runner
        .run(&frames, |(flags, opcode, body, lie)| {
            let mut c = NativeClient::ready(addr, V4, None);
            let mut bytes = NativeClient::frame_bytes(V4, flags & !FLAG_COMPRESSED, 2, opcode, &body);
            if lie && !body.is_empty() {
                // A length shorter than the body: the rest reads as the next frame.
                bytes[8] -= 1;
            }
            c.write_raw(&bytes);
            c.set_read_timeout(Duration::from_millis(500));
            for _ in 0..3 {
                let Some(f) = c.recv_quietly() else { break };
                prop_assert!(f.version & 0x80 != 0, "a response: {f:?}");
                prop_assert!(
                    [ERROR, READY, SUPPORTED, RESULT, EVENT, AUTHENTICATE].contains(&f.opcode),
                    "a server message: {f:?}"
                );
            }
            Ok(())
        })
        .expect("no frame breaks the node");
    let mut c = NativeClient::ready(addr, V4, None);
    assert_eq!(c.request(0, OPTIONS, &[]).opcode, SUPPORTED, "the node still serves");
}

#[test]
fn sibyltool_stops_and_starts_the_native_transport() {
    let (node, mut c) = node_with_table();
    assert_eq!(node.tool(&["statusbinary"]).ok().stdout, "running\n");
    node.tool(&["disablebinary"]).ok();
    assert_eq!(node.tool(&["statusbinary"]).ok().stdout, "not running\n");
    // The port is closed, and so is the connection that was open.
    assert!(std::net::TcpStream::connect(node.native_addr()).is_err(), "the native port still accepts");
    // (A connection still open would time out here, and the read panic.)
    c.set_read_timeout(std::time::Duration::from_secs(5));
    assert!(c.try_recv().is_none(), "an open connection outlived disablebinary");
    // Thrift still serves meanwhile.
    node.client().describe_version().expect("Thrift is not touched");
    node.tool(&["enablebinary"]).ok();
    assert_eq!(node.tool(&["statusbinary"]).ok().stdout, "running\n");
    let mut again = NativeClient::ready(node.native_addr(), V4, None);
    again.query_ok("SELECT * FROM ks.t", 2);
    // Asked twice, each changes nothing the second time.
    node.tool(&["enablebinary"]).ok();
    node.tool(&["disablebinary"]).ok();
    node.tool(&["disablebinary"]).ok();
    assert_eq!(node.tool(&["statusbinary"]).ok().stdout, "not running\n");
}

/// Warnings (v4's WARNING flag) and what PREPARED and EXECUTE with skip-metadata send, field
/// by field, on one node: neither changes what the other sees.
#[test]
fn warnings_and_prepared_metadata_field_by_field() {
    let (node, mut c) = node_with_table();
    c.query_ok("CREATE TABLE wide (a text, b int, v text, PRIMARY KEY (a, b))", 5);
    warnings_ride_v4_results(&node, &mut c);
    prepared_metadata_as_3_11_sends_it(&node, &mut c);
}

/// An UNLOGGED batch BODY of these statement texts.
fn unlogged_batch(texts: &[String]) -> Vec<u8> {
    let mut b = Body::new().byte(1).short(texts.len() as u16);
    for t in texts {
        b = b.byte(0).long_string(t).short(0);
    }
    b.short(CL_ONE).byte(0).0
}

fn warnings_ride_v4_results(node: &Node, c: &mut NativeClient) {
    let count = c.query("SELECT count(*) FROM t");
    assert_eq!(count.flags & FLAG_WARNING, FLAG_WARNING, "the WARNING flag: {count:?}");
    assert_eq!(count.warnings, ["Aggregation query used without partition key"]);
    assert_eq!(rows(&count).rows.len(), 1, "the rows follow the warnings");
    let listed = c.query("SELECT count(*) FROM t WHERE k IN (1, 2)");
    assert_eq!(listed.warnings, ["Aggregation query used on multiple partition keys (IN restriction)"]);
    let grouped = c.query("SELECT a, count(*) FROM wide GROUP BY a");
    assert_eq!(grouped.warnings, ["Aggregation query used without partition key"], "GROUP BY is an aggregation");
    for quiet in ["SELECT count(*) FROM t WHERE k = 1", "SELECT count(*) FROM t WHERE token(k) > 0", "SELECT * FROM t"]
    {
        let f = c.query(quiet);
        assert_eq!((f.flags & FLAG_WARNING, f.warnings.len()), (0, 0), "{quiet}");
    }

    // Traced too: the session id, then the warnings, then the rows.
    let body = Body::new().long_string("SELECT count(*) FROM t").short(CL_ONE).byte(0).0;
    let f = c.request(FLAG_TRACING, QUERY, &body);
    assert_eq!(f.flags & (FLAG_TRACING | FLAG_WARNING), FLAG_TRACING | FLAG_WARNING);
    assert_eq!(f.warnings, ["Aggregation query used without partition key"]);
    let mut cur = f.cursor();
    cur.uuid();
    assert_eq!(cur.int(), 2, "rows after the id and the warnings");

    // Eleven partitions in an unlogged batch are more than 10; ten are not.
    let inserts = |range: std::ops::Range<i32>| -> Vec<String> {
        range.map(|k| format!("INSERT INTO t (k, v) VALUES ({k}, 'b')")).collect()
    };
    let f = c.request(0, BATCH, &unlogged_batch(&inserts(100..111)));
    assert_eq!(f.result_kind(), 1);
    assert_eq!(
        f.warnings,
        ["Unlogged batch covering 11 partitions detected against table [ks.t]. You should use a logged batch for atomicity, or asynchronous writes for performance."]
    );
    let f = c.request(0, BATCH, &unlogged_batch(&inserts(200..210)));
    assert_eq!((f.result_kind(), f.warnings.len()), (1, 0), "ten partitions: {:?}", f.warnings);

    // Size as 3.11 counts it: per row its clustering values (b, 4 bytes) and per cell 16
    // bytes with the value; the row marker and the partition key count for nothing. Two
    // partitions of two rows each: 4 * (4 + 16 + len).
    let sized = |len: usize| -> Vec<String> {
        let v = "x".repeat(len);
        (0..4).map(|i| format!("INSERT INTO wide (a, b, v) VALUES ('p{}', {i}, '{v}')", i % 2)).collect()
    };
    let f = c.request(0, BATCH, &unlogged_batch(&sized(1260)));
    assert_eq!((f.result_kind(), f.warnings.len()), (1, 0), "5120 bytes is not past 5120: {:?}", f.warnings);
    let f = c.request(0, BATCH, &unlogged_batch(&sized(1261)));
    assert_eq!(f.result_kind(), 1);
    assert_eq!(f.warnings, ["Batch for [ks.wide] is of size 5124, exceeding specified threshold of 5120 by 4."]);
    // A map's elements: 12 bytes for the collection, and per element 16 with key and value.
    c.query_ok("CREATE TABLE maps (k int PRIMARY KEY, m map<text, text>)", 5);
    let v = "y".repeat(2600);
    let maps = vec![
        format!("INSERT INTO maps (k, m) VALUES (1, {{'a': '{v}'}})"),
        format!("UPDATE maps SET m = m + {{'b': '{v}'}} WHERE k = 2"),
    ];
    let f = c.request(0, BATCH, &unlogged_batch(&maps));
    assert_eq!(f.warnings, ["Batch for [ks.maps] is of size 5258, exceeding specified threshold of 5120 by 138."]);
    // One partition is never checked (3.11, CASSANDRA-10876), whatever its size.
    let big = "z".repeat(30_000);
    let one = vec![
        format!("INSERT INTO wide (a, b, v) VALUES ('one', 1, '{big}')"),
        format!("INSERT INTO wide (a, b, v) VALUES ('one', 2, '{big}')"),
    ];
    let f = c.request(0, BATCH, &unlogged_batch(&one));
    assert_eq!((f.result_kind(), f.warnings.len()), (1, 0));
    // Past 50 KiB over two partitions: refused, nothing written, and an error has no warnings.
    let two = vec![
        format!("INSERT INTO wide (a, b, v) VALUES ('two', 1, '{big}')"),
        format!("INSERT INTO wide (a, b, v) VALUES ('three', 1, '{big}')"),
    ];
    let f = c.request(0, BATCH, &unlogged_batch(&two));
    assert_eq!(f.error(), (0x2200, "Batch too large".to_string()));
    assert_eq!(f.flags & FLAG_WARNING, 0);
    assert!(rows(&c.query("SELECT * FROM wide WHERE a IN ('two', 'three')")).rows.is_empty());

    // v3 has no warnings: the same statements answer without the flag.
    let mut v3 = NativeClient::ready(node.native_addr(), V3, None);
    let f = v3.query("SELECT count(*) FROM ks.t");
    assert_eq!((f.flags & FLAG_WARNING, f.warnings.len()), (0, 0));
    assert_eq!(rows(&f).rows.len(), 1);
    v3.query_ok("USE ks", 3);
    let f = v3.request(0, BATCH, &unlogged_batch(&inserts(300..311)));
    assert_eq!((f.result_kind(), f.flags & FLAG_WARNING), (1, 0));

    // Thrift's CQL calls cannot carry them: the node logs them, as 3.11 does.
    let mut thrift = node.client();
    ok("set_keyspace", thrift.set_keyspace("ks".into()));
    let text = format!("BEGIN UNLOGGED BATCH {} APPLY BATCH", inserts(400..412).join("; "));
    ok(
        "execute_cql3_query",
        thrift.execute_cql3_query(text.into_bytes(), thrift_idl::Compression::NONE, thrift_idl::ConsistencyLevel::ONE),
    );
    let log = node.log();
    assert!(log.contains("Unlogged batch covering 12 partitions detected against table [ks.t]"), "{log}");
}

/// A column or marker specification: keyspace, table, name, and the type's ids in order.
type Spec = (String, String, String, Vec<u16>);

/// A PREPARED body: (id, marker flags, markers, pk indexes when v4, result flags, result
/// columns), every field read in order and nothing left over.
type PreparedAnswer = (Vec<u8>, i32, Vec<Spec>, Option<Vec<u16>>, i32, Vec<Spec>);

fn type_ids(cur: &mut Cursor<'_>) -> Vec<u16> {
    let id = cur.short();
    let mut out = vec![id];
    match id {
        0x20 | 0x22 => out.extend(type_ids(cur)),
        0x21 => {
            out.extend(type_ids(cur));
            out.extend(type_ids(cur));
        }
        0x31 => {
            let n = cur.short();
            out.push(n);
            for _ in 0..n {
                out.extend(type_ids(cur));
            }
        }
        0x00 => panic!("a custom type: {}", cur.string()),
        _ => {}
    }
    out
}

/// `<flags><count>[<pk_count><pk_index>...]<global spec>?<col_spec>...`, pk fields only when `pk`.
fn column_specs(cur: &mut Cursor<'_>, pk: bool) -> (i32, Vec<Spec>, Option<Vec<u16>>) {
    let flags = cur.int();
    let count = cur.int();
    let indexes = pk.then(|| {
        let n = cur.int();
        (0..n).map(|_| cur.short()).collect::<Vec<u16>>()
    });
    let global = (flags & 0x0001 != 0).then(|| (cur.string(), cur.string()));
    let mut columns = Vec::new();
    if flags & 0x0004 == 0 {
        for _ in 0..count {
            let (ks, table) = global.clone().unwrap_or_else(|| (cur.string(), cur.string()));
            let name = cur.string();
            columns.push((ks, table, name, type_ids(cur)));
        }
    } else {
        assert_eq!(count, 0, "no metadata, no columns");
    }
    (flags, columns, indexes)
}

fn prepared_answer(c: &mut NativeClient, text: &str) -> PreparedAnswer {
    let (id, f) = c.prepare(text);
    let mut cur = f.cursor();
    assert_eq!(cur.int(), 4, "a PREPARED result");
    assert_eq!(cur.short_bytes(), id);
    let (flags, markers, pk) = column_specs(&mut cur, c.version >= V4);
    let (result_flags, result, none) = column_specs(&mut cur, false);
    assert!(none.is_none());
    assert!(cur.is_done(), "{text}: bytes left after the result metadata");
    (id, flags, markers, pk, result_flags, result)
}

fn col(table: &str, name: &str, ty: &[u16]) -> Spec {
    ("ks".into(), table.into(), name.into(), ty.to_vec())
}

fn prepared_metadata_as_3_11_sends_it(node: &Node, c: &mut NativeClient) {
    const GLOBAL: i32 = 0x0001;
    const NO_METADATA: i32 = 0x0004;
    for k in 1..=3 {
        c.query_ok(&format!("INSERT INTO t (k, v) VALUES ({k}, 'v{k}')"), 1);
    }
    // A SELECT: its markers, the key's marker, and the columns its rows will have.
    let (select, flags, markers, pk, result_flags, result) = prepared_answer(c, "SELECT k, v FROM t WHERE k = ?");
    assert_eq!((flags, markers, pk), (GLOBAL, vec![col("t", "k", &[0x09])], Some(vec![0])));
    assert_eq!((result_flags, result), (GLOBAL, vec![col("t", "k", &[0x09]), col("t", "v", &[0x0D])]));
    // v3: the same without partition key indexes.
    let mut v3 = NativeClient::ready(node.native_addr(), V3, None);
    v3.query_ok("USE ks", 3);
    let (_, flags, markers, pk, result_flags, result) = prepared_answer(&mut v3, "SELECT k, v FROM t WHERE k = ?");
    assert_eq!((flags, markers.len(), pk, result_flags, result.len()), (GLOBAL, 1, None, GLOBAL, 2));

    // Writes: 3.11's names for TTL and TIMESTAMP markers, and no result metadata.
    let (_, flags, markers, pk, result_flags, result) =
        prepared_answer(c, "INSERT INTO t (k, v) VALUES (?, ?) USING TTL ? AND TIMESTAMP ?");
    assert_eq!(flags, GLOBAL);
    assert_eq!(
        markers,
        [col("t", "k", &[0x09]), col("t", "v", &[0x0D]), col("t", "[ttl]", &[0x09]), col("t", "[timestamp]", &[0x02])]
    );
    assert_eq!((pk, result_flags, result), (Some(vec![0]), NO_METADATA, vec![]));
    // Named markers go by their own names and still route by the key; LIMIT ? is `[limit]`.
    let (_, _, markers, pk, _, result) = prepared_answer(c, "SELECT v FROM t WHERE k = :key LIMIT ?");
    assert_eq!((markers, pk), (vec![col("t", "key", &[0x09]), col("t", "[limit]", &[0x09])], Some(vec![0])));
    assert_eq!(result, [col("t", "v", &[0x0D])]);
    // token(?) (RandomPartitioner: a varint), IN ? (a list), CONTAINS ?: no key marker.
    let (_, _, markers, pk, _, _) = prepared_answer(c, "SELECT * FROM t WHERE token(k) > ?");
    assert_eq!((markers, pk), (vec![col("t", "partition key token", &[0x0E])], Some(vec![])));
    let (in_list, _, markers, pk, _, _) = prepared_answer(c, "SELECT v FROM t WHERE k IN ?");
    assert_eq!((markers, pk), (vec![col("t", "in(k)", &[0x20, 0x09])], Some(vec![])));
    let mut list = 2i32.to_be_bytes().to_vec();
    for k in [1, 3] {
        list.extend(4i32.to_be_bytes());
        list.extend(int(k));
    }
    let mut got = rows(&c.execute(&in_list, &[Some(&list)])).rows;
    got.sort();
    assert_eq!(got, vec![vec![Some(b"v1".to_vec())], vec![Some(b"v3".to_vec())]], "IN ? binds a list");
    c.query_ok("CREATE TABLE tags (k int PRIMARY KEY, s set<text>, m map<int, text>)", 5);
    let (_, _, markers, _, _, _) =
        prepared_answer(c, "SELECT k FROM tags WHERE s CONTAINS ? AND m CONTAINS KEY ? ALLOW FILTERING");
    assert_eq!(markers, [col("tags", "value(s)", &[0x0D]), col("tags", "key(m)", &[0x09])]);
    // A batch's own markers are of `[batch].[batch]`: no global table spec, no key indexes.
    let (_, flags, markers, pk, result_flags, _) =
        prepared_answer(c, "BEGIN BATCH USING TIMESTAMP ? INSERT INTO t (k, v) VALUES (?, ?) APPLY BATCH");
    let batch = ("[batch]".to_string(), "[batch]".to_string(), "[timestamp]".to_string(), vec![0x02]);
    assert_eq!((flags, pk, result_flags), (0, Some(vec![]), NO_METADATA));
    assert_eq!(markers, [batch, col("t", "k", &[0x09]), col("t", "v", &[0x0D])]);
    // No markers: flags 0, no columns.
    let (_, flags, markers, pk, result_flags, result) = prepared_answer(c, "SELECT v FROM t WHERE k = 1");
    assert_eq!((flags, markers.len(), pk, result_flags, result.len()), (0, 0, Some(vec![]), GLOBAL, 1));

    // An id this node does not know, on v3 and v4: Unprepared with 3.11's words and the id.
    for client in [&mut *c, &mut v3] {
        let unknown = [0xAB; 16];
        let f = client.execute(&unknown, &[]);
        assert_eq!(f.opcode, ERROR);
        let mut cur = f.cursor();
        assert_eq!(cur.int(), 0x2500);
        assert_eq!(
            cur.string(),
            format!("Prepared query with ID {} not found (either the query was not prepared on this host (maybe the host has been restarted?) or you have prepared too many queries and it has been evicted from the internal cache)", "ab".repeat(16))
        );
        assert_eq!(cur.short_bytes(), unknown.to_vec());
        assert!(cur.is_done());
    }

    // EXECUTE with SKIP_METADATA: flag No_metadata and the column count, then the rows.
    let skip = |id: &[u8], values: &[&[u8]], page: Option<(i32, Option<&[u8]>)>| {
        let mut flags = 0x02 | if values.is_empty() { 0 } else { 0x01 };
        if let Some((_, state)) = page {
            flags |= 0x04 | if state.is_some() { 0x08 } else { 0 };
        }
        let mut b = Body::new().short_bytes(id).short(CL_ONE).byte(flags);
        if !values.is_empty() {
            b = b.short(values.len() as u16);
            for v in values {
                b = b.value(Some(v));
            }
        }
        if let Some((size, state)) = page {
            b = b.int(size);
            if let Some(s) = state {
                b = b.value(Some(s));
            }
        }
        b.0
    };
    let f = c.request(0, EXECUTE, &skip(&select, &[&int(2)[..]], None));
    let mut cur = f.cursor();
    assert_eq!((cur.int(), cur.int(), cur.int()), (2, NO_METADATA, 2), "ROWS, No_metadata, 2 columns");
    assert_eq!((cur.int(), cur.bytes(), cur.bytes()), (1, Some(int(2)), Some(b"v2".to_vec())));
    assert!(cur.is_done());
    // Paged: Has_more_pages with the paging state, still without the column specs.
    let (all, ..) = prepared_answer(c, "SELECT k, v FROM t");
    let mut seen = Vec::new();
    let mut state: Option<Vec<u8>> = None;
    for page in 0.. {
        let f = c.request(0, EXECUTE, &skip(&all, &[], Some((10, state.as_deref()))));
        let mut cur = f.cursor();
        assert_eq!(cur.int(), 2);
        let flags = cur.int();
        assert_eq!((flags & !0x0002, cur.int()), (NO_METADATA, 2), "page {page}");
        state = (flags & 0x0002 != 0).then(|| cur.bytes().expect("a paging state"));
        for _ in 0..cur.int() {
            seen.push((cur.bytes(), cur.bytes()));
        }
        assert!(cur.is_done());
        if state.is_none() {
            break;
        }
        assert!(page < 100, "paging does not end");
    }
    let keys: std::collections::BTreeSet<Vec<u8>> = seen.iter().filter_map(|(k, _)| k.clone()).collect();
    let all_rows = rows(&c.query("SELECT k FROM t")).rows.len();
    assert_eq!((seen.len(), keys.len()), (all_rows, all_rows), "every row once over the pages");
    assert!(all_rows > 20, "several pages");
}
