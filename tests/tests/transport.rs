//! The Thrift port: framed and unframed clients side by side, oversized frames refused by closing
//! the connection, garbage and truncated messages never crash or hang the server, pipelined calls
//! answered in order, and many concurrent connections.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use e2e::*;
use thrift::protocol::{TBinaryInputProtocol, TInputProtocol, TMessageType, TType};

const KS: &str = "Transport";

fn setup() -> Node {
    let node = Node::start(Config::random());
    let mut c = node.client();
    create_keyspace(&mut c, KS, vec![cf_def(KS, "Standard1", "UTF8Type")]);
    node
}

/// Reads until the server closes the connection; `Err` with what happened if it does not
/// within `limit` (a timeout means the server kept the connection open).
fn read_until_closed(s: &mut TcpStream, limit: Duration) -> Result<usize, String> {
    s.set_read_timeout(Some(Duration::from_millis(500))).expect("set_read_timeout");
    let deadline = Instant::now() + limit;
    let mut total = 0;
    let mut buf = [0u8; 65536];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => total += n,
            // A reset is the server closing with unread bytes in its buffer: also closed.
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe
                ) =>
            {
                return Ok(total)
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => return Err(format!("read failed: {e}")),
        }
        if Instant::now() > deadline {
            return Err(format!("connection still open after {limit:?} ({total} bytes read)"));
        }
    }
}

/// The server still answers a fresh, well-behaved client.
fn assert_serving(node: &Node, what: &str) {
    let mut c = node.client_in(KS);
    let key = format!("alive-{}", ts());
    ok(&format!("insert after {what}"), c.insert(b(&key), parent("Standard1"), column(b("c"), b("v"), ts()), ONE));
    let got = ok(&format!("get after {what}"), c.get(b(&key), path("Standard1", b("c")), ONE));
    assert_eq!(got.column.and_then(|c| c.value), Some(b("v")), "after {what}");
}

/// A strict binary-protocol call message with an empty argument struct.
fn call_message(name: &str, seq: i32) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(&0x8001_0001u32.to_be_bytes());
    m.extend_from_slice(&(name.len() as i32).to_be_bytes());
    m.extend_from_slice(name.as_bytes());
    m.extend_from_slice(&seq.to_be_bytes());
    m.push(0); // STOP: no arguments
    m
}

fn framed(message: &[u8]) -> Vec<u8> {
    let mut f = (message.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(message);
    f
}

/// Reads one framed reply, bounded by the socket's timeout.
fn read_frame(s: &mut TcpStream) -> Vec<u8> {
    s.set_read_timeout(Some(Duration::from_secs(10))).expect("set_read_timeout");
    let mut len = [0u8; 4];
    s.read_exact(&mut len).expect("read reply frame length");
    let n = u32::from_be_bytes(len) as usize;
    assert!(n < 1 << 20, "implausible reply frame length {n}");
    let mut body = vec![0u8; n];
    s.read_exact(&mut body).expect("read reply frame body");
    body
}

#[test]
fn framed_and_unframed_clients_share_the_port() {
    let node = setup();
    let mut framed = node.client_in(KS);
    let mut unframed = node.client_unframed();
    ok("unframed set_keyspace", unframed.set_keyspace(KS.into()));
    assert_eq!(ok("unframed describe_version", unframed.describe_version()), "20.1.0");

    ok("framed insert", framed.insert(b("k"), parent("Standard1"), column(b("from-framed"), b("1"), ts()), ONE));
    ok("unframed insert", unframed.insert(b("k"), parent("Standard1"), column(b("from-unframed"), b("2"), ts()), ONE));
    for (name, c) in [("framed", &mut framed), ("unframed", &mut unframed)] {
        let r = ok(name, c.get_slice(b("k"), parent("Standard1"), all(10), ONE));
        assert_eq!(
            str_pairs(&r),
            vec![("from-framed".to_string(), "1".to_string()), ("from-unframed".to_string(), "2".to_string())],
            "{name} client sees both writes"
        );
    }
    // Exceptions travel over both transports.
    expect_ire("unframed error", unframed.insert(vec![], parent("Standard1"), column(b("c"), b("v"), ts()), ONE));
    expect_ire("framed error", framed.insert(vec![], parent("Standard1"), column(b("c"), b("v"), ts()), ONE));
    // A large value (1 MB) round-trips over both.
    let big = vec![b'x'; 1 << 20];
    ok("unframed big insert", unframed.insert(b("big"), parent("Standard1"), column(b("v"), big.clone(), ts()), ONE));
    let got = ok("framed big get", framed.get(b("big"), path("Standard1", b("v")), ONE));
    assert_eq!(got.column.and_then(|c| c.value).map(|v| v.len()), Some(big.len()));
    let got = ok("unframed big get", unframed.get(b("big"), path("Standard1", b("v")), ONE));
    assert_eq!(got.column.and_then(|c| c.value), Some(big));
}

#[test]
fn unknown_method_gets_an_application_exception() {
    let node = setup();
    let mut s = node.raw_socket();
    s.write_all(&framed(&call_message("no_such_method", 7))).expect("write");
    let reply = read_frame(&mut s);
    let mut p = TBinaryInputProtocol::new(std::io::Cursor::new(reply), true);
    let header = p.read_message_begin().expect("reply header");
    assert_eq!(header.message_type, TMessageType::Exception, "{header:?}");
    assert_eq!(header.sequence_number, 7);
    let err = thrift::Error::read_application_error_from_in_protocol(&mut p).expect("TApplicationException body");
    assert_eq!(err.kind, thrift::ApplicationErrorKind::UnknownMethod, "{err:?}");
    // The same connection goes on: a real call after it is answered.
    s.write_all(&framed(&call_message("describe_version", 8))).expect("write");
    let reply = read_frame(&mut s);
    let mut p = TBinaryInputProtocol::new(std::io::Cursor::new(reply), true);
    let header = p.read_message_begin().expect("reply header");
    assert_eq!(header.message_type, TMessageType::Reply);
    assert_eq!(header.name, "describe_version");
    assert_eq!(header.sequence_number, 8);
}

#[test]
fn arguments_that_overrun_their_frame_get_a_protocol_error_and_the_connection_goes_on() {
    let node = setup();
    let mut s = node.raw_socket();
    // multiget_slice's keys: a list<binary> declaring a million keys in a frame of a few bytes,
    // then a key whose length runs past the frame's end.
    let liars: [&[u8]; 2] =
        [&[15, 0, 1, 11, 0, 0x0f, 0x42, 0x40, 0], &[15, 0, 1, 11, 0, 0, 0, 1, 0, 0, 0, 200, b'k', 0]];
    for (seq, body) in (20..).zip(liars) {
        let mut m = call_message("multiget_slice", seq);
        m.pop();
        m.extend_from_slice(body);
        s.write_all(&framed(&m)).expect("write");
        let reply = read_frame(&mut s);
        let mut p = TBinaryInputProtocol::new(std::io::Cursor::new(reply), true);
        let header = p.read_message_begin().expect("reply header");
        assert_eq!(header.message_type, TMessageType::Exception, "{header:?}");
        assert_eq!(header.sequence_number, seq);
        let err = thrift::Error::read_application_error_from_in_protocol(&mut p).expect("TApplicationException body");
        assert_eq!(err.kind, thrift::ApplicationErrorKind::ProtocolError, "{err:?}");
        assert!(
            err.message.contains("cannot fit") || err.message.contains("ends early"),
            "the reason names the overrun: {err:?}"
        );
    }
    s.write_all(&framed(&call_message("describe_version", 30))).expect("write");
    let reply = read_frame(&mut s);
    let mut p = TBinaryInputProtocol::new(std::io::Cursor::new(reply), true);
    let header = p.read_message_begin().expect("reply header");
    assert_eq!((header.message_type, header.sequence_number), (TMessageType::Reply, 30));
    assert_serving(&node, "overrunning arguments");
}

/// The header of one reply read from `p`, its result struct skipped.
fn reply_header(p: &mut dyn TInputProtocol) -> (TMessageType, String, i32) {
    let header = p.read_message_begin().expect("reply header");
    p.skip(TType::Struct).expect("reply body");
    p.read_message_end().expect("reply end");
    (header.message_type, header.name, header.sequence_number)
}

#[test]
fn pipelined_calls_are_all_answered_in_order() {
    let node = setup();
    let calls = [("describe_version", 1), ("no_such_method", 2), ("describe_cluster_name", 3)];
    let expected: Vec<(TMessageType, String, i32)> = calls
        .iter()
        .map(|&(name, seq)| {
            let kind = if name == "no_such_method" { TMessageType::Exception } else { TMessageType::Reply };
            (kind, name.to_string(), seq)
        })
        .collect();

    // Framed: three calls in one write, then the three replies in the order sent.
    let mut s = node.raw_socket();
    let burst: Vec<u8> = calls.iter().flat_map(|&(name, seq)| framed(&call_message(name, seq))).collect();
    s.write_all(&burst).expect("write the framed burst");
    let got: Vec<_> = (0..calls.len())
        .map(|_| {
            let mut p = TBinaryInputProtocol::new(std::io::Cursor::new(read_frame(&mut s)), true);
            reply_header(&mut p)
        })
        .collect();
    assert_eq!(got, expected, "framed replies");

    // Unframed: the same, with each message found by its structure.
    let mut s = node.raw_socket();
    s.set_read_timeout(Some(Duration::from_secs(10))).expect("set_read_timeout");
    let burst: Vec<u8> = calls.iter().flat_map(|&(name, seq)| call_message(name, seq)).collect();
    s.write_all(&burst).expect("write the unframed burst");
    let mut p = TBinaryInputProtocol::new(s.try_clone().expect("clone the socket"), true);
    let got: Vec<_> = (0..calls.len()).map(|_| reply_header(&mut p)).collect();
    assert_eq!(got, expected, "unframed replies");

    // A malformed message behind a good one: the good one is answered before the connection
    // closes.
    let mut s = node.raw_socket();
    let mut burst = framed(&call_message("describe_version", 9));
    burst.extend_from_slice(&framed(b"not a thrift message"));
    s.write_all(&burst).expect("write the burst");
    let mut p = TBinaryInputProtocol::new(std::io::Cursor::new(read_frame(&mut s)), true);
    assert_eq!(reply_header(&mut p), (TMessageType::Reply, "describe_version".to_string(), 9));
    read_until_closed(&mut s, Duration::from_secs(10)).unwrap_or_else(|e| panic!("after the malformed message: {e}"));
    assert_serving(&node, "pipelined calls");
}

#[test]
fn a_reply_sent_to_the_server_is_refused_not_left_unanswered() {
    let node = setup();
    let mut s = node.raw_socket();
    for (kind, seq) in [(2u8, 41), (3u8, 42)] {
        let mut m = call_message("describe_version", seq);
        m[3] = kind; // REPLY, EXCEPTION
        s.write_all(&framed(&m)).expect("write");
        let reply = read_frame(&mut s);
        let mut p = TBinaryInputProtocol::new(std::io::Cursor::new(reply), true);
        let header = p.read_message_begin().expect("reply header");
        assert_eq!((header.message_type, header.sequence_number), (TMessageType::Exception, seq));
        let err = thrift::Error::read_application_error_from_in_protocol(&mut p).expect("TApplicationException body");
        assert_eq!(err.kind, thrift::ApplicationErrorKind::InvalidMessageType, "{err:?}");
    }
    // The connection goes on.
    s.write_all(&framed(&call_message("describe_version", 43))).expect("write");
    let mut p = TBinaryInputProtocol::new(std::io::Cursor::new(read_frame(&mut s)), true);
    assert_eq!(reply_header(&mut p), (TMessageType::Reply, "describe_version".to_string(), 43));
}

#[test]
fn oversized_frame_closes_only_that_connection() {
    let node = setup();
    let mut bystander = node.client_in(KS);
    ok("bystander insert", bystander.insert(b("by"), parent("Standard1"), column(b("c"), b("1"), ts()), ONE));

    let mut s = node.raw_socket();
    // 20 MB announced; the default maximum (ThriftMaxMessageLengthInMB) is 15 MB.
    s.write_all(&(20u32 << 20).to_be_bytes()).expect("write frame length");
    // Some of the body; the server must not wait for (or buffer) the rest.
    let _ = s.write_all(&vec![0u8; 64 * 1024]);
    read_until_closed(&mut s, Duration::from_secs(10)).unwrap_or_else(|e| panic!("oversized frame: {e}"));

    // A negative frame length is refused the same way.
    let mut s = node.raw_socket();
    s.write_all(&(-5i32).to_be_bytes()).expect("write");
    read_until_closed(&mut s, Duration::from_secs(10)).unwrap_or_else(|e| panic!("negative frame length: {e}"));

    // The other connection was not disturbed, and new ones are served.
    let got = ok("bystander get", bystander.get(b("by"), path("Standard1", b("c")), ONE));
    assert_eq!(got.column.and_then(|c| c.value), Some(b("1")));
    assert_serving(&node, "oversized frames");
}

#[test]
fn configured_maximum_message_length_is_enforced() {
    let node = Node::start(Config::random().extra("<ThriftMaxMessageLengthInMB>1</ThriftMaxMessageLengthInMB>"));
    let mut c = node.client();
    create_keyspace(&mut c, KS, vec![cf_def(KS, "Standard1", "UTF8Type")]);
    ok("set_keyspace", c.set_keyspace(KS.into()));
    ok("small insert", c.insert(b("k"), parent("Standard1"), column(b("c"), vec![1; 1000], ts()), ONE));
    // A 2 MB value does not fit in a 1 MB message: the server closes the connection.
    let r = c.insert(b("k"), parent("Standard1"), column(b("big"), vec![1; 2 << 20], ts()), ONE);
    assert!(r.is_err(), "a 2 MB message was accepted with a 1 MB maximum");
    // The same over unframed transport, where the server must notice while it reads.
    let mut u = node.client_unframed();
    ok("set_keyspace", u.set_keyspace(KS.into()));
    let r = u.insert(b("k"), parent("Standard1"), column(b("big2"), vec![1; 2 << 20], ts()), ONE);
    assert!(r.is_err(), "a 2 MB unframed message was accepted with a 1 MB maximum");
    let mut c = node.client_in(KS);
    expect_not_found("the refused insert was not applied", c.get(b("k"), path("Standard1", b("big")), ONE));
    expect_not_found("the refused unframed insert was not applied", c.get(b("k"), path("Standard1", b("big2")), ONE));
    assert_serving(&node, "a message over the configured maximum");
}

/// A small deterministic generator (xorshift64*) so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

#[test]
fn garbage_and_truncated_messages_do_not_crash_or_hang_the_server() {
    let mut node = setup();
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    let mut inputs: Vec<(String, Vec<u8>)> = vec![
        ("http request".into(), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()),
        ("bad protocol version".into(), vec![0x80, 0x02, 0x00, 0x01, 0, 0, 0, 3, b'g', b'e', b't', 0, 0, 0, 1, 0]),
        ("unframed unknown field type".into(), {
            let mut m = call_message("get", 1);
            m.pop();
            m.extend_from_slice(&[99, 0, 1, 1, 2, 3]);
            m
        }),
        ("unframed negative string length".into(), {
            let mut m = call_message("get", 1);
            m.pop();
            m.extend_from_slice(&[11, 0, 1]);
            m.extend_from_slice(&(-7i32).to_be_bytes());
            m
        }),
        ("framed deep nesting".into(), {
            let mut m = call_message("get", 1);
            m.pop();
            for _ in 0..10_000 {
                m.extend_from_slice(&[12, 0, 1]);
            }
            framed(&m)
        }),
        ("framed huge list length".into(), {
            let mut m = call_message("multiget_slice", 1);
            m.pop();
            m.extend_from_slice(&[15, 0, 1, 11]);
            m.extend_from_slice(&i32::MAX.to_be_bytes());
            framed(&m)
        }),
        ("unframed huge list length".into(), {
            let mut m = call_message("multiget_slice", 1);
            m.pop();
            m.extend_from_slice(&[15, 0, 1, 11]);
            m.extend_from_slice(&i32::MAX.to_be_bytes());
            m
        }),
        ("framed huge map length".into(), {
            let mut m = call_message("batch_mutate", 1);
            m.pop();
            m.extend_from_slice(&[13, 0, 1, 11, 13]);
            m.extend_from_slice(&i32::MAX.to_be_bytes());
            framed(&m)
        }),
        ("framed negative list length".into(), {
            let mut m = call_message("multiget_slice", 1);
            m.pop();
            m.extend_from_slice(&[15, 0, 1, 11]);
            m.extend_from_slice(&(-1i32).to_be_bytes());
            framed(&m)
        }),
        ("framed wrong argument types".into(), {
            let mut m = call_message("get", 1);
            m.pop();
            m.extend_from_slice(&[8, 0, 1, 0, 0, 0, 1, 8, 0, 2, 0, 0, 0, 1, 0]);
            framed(&m)
        }),
        ("truncated framed message".into(), {
            let mut f = framed(&call_message("describe_version", 1));
            f[3] += 50; // announce more than we send
            f
        }),
        ("truncated frame header".into(), vec![0, 0]),
        ("truncated unframed message".into(), call_message("describe_keyspaces", 1)[..10].to_vec()),
    ];
    for i in 0..20 {
        let len = 1 + (rng.next() % 300) as usize;
        inputs.push((format!("random bytes #{i}"), rng.bytes(len)));
        // Random bodies behind a plausible frame header and a valid message header.
        let mut m = call_message(["get", "insert", "batch_mutate", "get_range_slices"][i % 4], 1);
        m.pop();
        m.extend(rng.bytes(len));
        inputs.push((format!("random arguments #{i}"), framed(&m)));
    }

    for (what, bytes) in &inputs {
        let mut s = node.raw_socket();
        // The server may close early (that is fine): ignore write errors.
        let _ = s.write_all(bytes);
        let _ = s.shutdown(Shutdown::Write);
        // Once the client has finished sending, the server must close its side promptly.
        read_until_closed(&mut s, Duration::from_secs(10)).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(node.is_running(), "sibyl exited after {what}:\n{}", node.log());
    }
    assert_serving(&node, "garbage");

    // A client that stops halfway and keeps its connection open must not block others.
    let mut stuck = node.raw_socket();
    stuck.write_all(&framed(&call_message("describe_version", 1))[..9]).expect("write");
    let mut stuck_unframed = node.raw_socket();
    stuck_unframed.write_all(&call_message("describe_version", 1)[..9]).expect("write");
    assert_serving(&node, "a stalled client");
    drop((stuck, stuck_unframed));
    assert!(node.is_running(), "sibyl exited:\n{}", node.log());
    // And the process still shuts down cleanly.
    let status = node.stop();
    assert!(status.success(), "exit status after garbage: {status}");
}

#[test]
fn fifty_concurrent_connections() {
    let node = setup();
    const CLIENTS: usize = 50;
    const ROWS: usize = 5;
    let start = Instant::now();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|i| {
                let node = &node;
                scope.spawn(move || {
                    // Half framed, half unframed.
                    let mut c = if i % 2 == 0 { node.client() } else { node.client_unframed() };
                    ok("set_keyspace", c.set_keyspace(KS.into()));
                    for r in 0..ROWS {
                        let key = format!("client{i}-row{r}");
                        let m = batch(
                            &key,
                            "Standard1",
                            vec![
                                insert_mutation(column(b("client"), i.to_string().into_bytes(), ts())),
                                insert_mutation(column(b("row"), r.to_string().into_bytes(), ts())),
                            ],
                        );
                        ok("batch_mutate", c.batch_mutate(m, ONE));
                        let got = ok("get_slice", c.get_slice(b(&key), parent("Standard1"), all(10), ONE));
                        assert_eq!(
                            str_pairs(&got),
                            vec![("client".to_string(), i.to_string()), ("row".to_string(), r.to_string())]
                        );
                    }
                    let counts = ok(
                        "multiget_count",
                        c.multiget_count(
                            (0..ROWS).map(|r| b(&format!("client{i}-row{r}"))).collect(),
                            parent("Standard1"),
                            all(10),
                            ONE,
                        ),
                    );
                    assert!(counts.values().all(|n| *n == 2), "{counts:?}");
                })
            })
            .collect();
        for h in handles {
            if let Err(p) = h.join() {
                std::panic::resume_unwind(p);
            }
        }
    });
    // Everything every client wrote is visible to a new one.
    let mut c = node.client_in(KS);
    let rows = ok("get_range_slices", c.get_range_slices(parent("Standard1"), all(10), key_range("", "", 10_000), ONE));
    let live = rows.iter().filter(|r| r.columns.len() == 2).count();
    assert_eq!(live, CLIENTS * ROWS);
    eprintln!("{CLIENTS} clients x {ROWS} rows took {:?}", start.elapsed());
}
