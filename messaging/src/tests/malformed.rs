//! Refused handshakes and malformed bytes: each closes its own connection, is logged with the
//! peer and the reason, runs no handler, and leaves the node serving everyone else.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::*;
use crate::codec::{
    decode_handshake_reply, encode_frame, encode_handshake, Decoded, Handshake, HandshakeReply, HandshakeStatus,
    MessageKind, ProtocolVersion, FRAME_HEADER_BYTES,
};
use crate::{ConnectionKind, RequestError};

const MAX_BYTES: usize = 2 << 20;

/// The endpoint raw test clients claim to listen on.
fn raw_endpoint() -> Endpoint {
    localhost(1)
}

fn handshake_bytes(version: u8, cluster: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let hello = Handshake { version, kind: ConnectionKind::Small, cluster_name: cluster.into(), from: raw_endpoint() };
    assert_eq!(encode_handshake(&mut out, &hello), Ok(()));
    out
}

fn frame_bytes(verb: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    assert_eq!(encode_frame(&mut out, ProtocolVersion::V1, verb, MessageKind::OneWay, 1, payload), Ok(()));
    out
}

/// Sends a handshake on a fresh connection and returns the connection and the reply.
async fn raw_connection(to: Endpoint, handshake: &[u8]) -> (TcpStream, HandshakeReply) {
    let mut stream = bounded("connect", TcpStream::connect(to)).await.unwrap_or_else(|e| panic!("connect: {e}"));
    bounded("send handshake", stream.write_all(handshake)).await.unwrap_or_else(|e| panic!("write: {e}"));
    let mut buf = Vec::new();
    let reply = bounded("handshake reply", async {
        loop {
            match decode_handshake_reply(&buf) {
                Ok(Decoded::Complete { value, .. }) => return value,
                Ok(Decoded::Incomplete { .. }) => {}
                Err(e) => panic!("bad handshake reply: {e}"),
            }
            let mut chunk = [0u8; 256];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => panic!("closed before the handshake reply"),
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await;
    (stream, reply)
}

/// Waits until the node closes `stream` (end of stream or reset).
async fn expect_closed(stream: &mut TcpStream, case: &str) {
    bounded(case, async {
        let mut chunk = [0u8; 256];
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
}

#[tokio::test]
async fn another_cluster_is_refused_and_logged() {
    let logs = LogCapture::default();
    let _logging = logs.install();
    let timeout = Duration::from_millis(400);
    let a = start(config(0, "Other", timeout)).await;
    let b = start(config(0, "Test", timeout)).await;
    let silent = Arc::new(Silent::default());
    b.register(Verb::Read, silent.clone());

    let reply = bounded("refused", a.send_request(b.local(), Verb::Read, b"hi".to_vec())).await;
    assert!(matches!(reply, Err(RequestError::Timeout { .. })), "{reply:?}");
    eventually("refusal counted", || b.stats().inbound.refused >= 1).await;
    // The acceptor logs before it counts, but the capture may still be taking the line.
    eventually("the acceptor logs the refusal", || logs.text().contains("refused internode connection")).await;
    // The sender logs once its task reads the refusal, which may be after the acceptor counted it.
    eventually("the sender logs the refusal", || logs.text().contains("peer refused our connection")).await;
    assert_eq!(silent.calls(), 0, "a handler ran for another cluster");
    assert_eq!(b.stats().inbound.malformed, 0);
    assert!(!a.stats().peers.get(&b.local()).is_some_and(|p| p.connected()));

    let text = logs.text();
    let refusal = text.lines().find(|l| l.contains("refused internode connection"));
    let refusal = refusal.unwrap_or_else(|| panic!("no refusal logged:\n{text}"));
    for needed in ["\"Other\"", "\"Test\"", &a.local().to_string()] {
        assert!(refusal.contains(needed), "refusal log lacks {needed}: {refusal}");
    }

    // A raw client sees the refusal and the acceptor's name, then the close.
    let (mut raw, reply) = raw_connection(b.local(), &handshake_bytes(1, "Other")).await;
    assert_eq!((reply.status, reply.cluster_name.as_str()), (HandshakeStatus::ClusterNameMismatch, "Test"));
    expect_closed(&mut raw, "refused raw connection").await;
}

#[tokio::test]
async fn an_unknown_protocol_version_is_refused() {
    let b = start(config(0, "Test", Duration::from_secs(5))).await;
    let (mut raw, reply) = raw_connection(b.local(), &handshake_bytes(9, "Test")).await;
    assert_eq!((reply.status, reply.version), (HandshakeStatus::UnsupportedVersion, 1));
    expect_closed(&mut raw, "unknown version").await;
    eventually("refusal counted", || b.stats().inbound.refused == 1).await;
}

#[tokio::test]
async fn malformed_bytes_close_only_their_connection() {
    let a = start(config(0, "Test", Duration::from_secs(5))).await;
    let mut b_config = config(0, "Test", Duration::from_secs(5));
    b_config.max_message_bytes = MAX_BYTES;
    let b = start(b_config).await;
    let (echo, mut seen) = Echo::new("b");
    b.register(Verb::Mutation, echo.clone());
    b.register(Verb::Read, echo);

    // A healthy peer connected before, and still connected after, every bad one.
    assert_eq!(bounded("before", a.send_request(b.local(), Verb::Read, b"1".to_vec())).await, Ok(b"b:1".to_vec()));
    assert_eq!(next_seen(&mut seen).await.payload, b"1".to_vec());

    let good = frame_bytes(Verb::Mutation.code(), b"must not arrive");
    let mut bad_crc = good.clone();
    let last = bad_crc.len() - 1;
    bad_crc[last] ^= 0xff;
    let mut bad_magic = good.clone();
    bad_magic[0] = b'X';
    let mut bad_version = good.clone();
    bad_version[4] = 2;
    let mut oversized = good[..FRAME_HEADER_BYTES].to_vec();
    oversized[15..19].copy_from_slice(&(MAX_BYTES as u32 + 1).to_be_bytes());
    let truncated_frame = good[..good.len() - 3].to_vec();
    let mut bad_handshake = handshake_bytes(1, "Test");
    bad_handshake[9] ^= 0x01;

    // (case, needs a valid handshake first, bytes, then close our sending side)
    let cases: Vec<(&str, bool, Vec<u8>, bool)> = vec![
        ("garbage instead of a handshake", false, b"GET / HTTP/1.1\r\nHost: b\r\n\r\n".to_vec(), false),
        ("handshake with a bad checksum", false, bad_handshake, false),
        ("truncated handshake", false, handshake_bytes(1, "Test")[..7].to_vec(), true),
        ("frame with a bad checksum", true, bad_crc, false),
        ("frame with a wrong magic", true, bad_magic, false),
        ("frame of another protocol version", true, bad_version, false),
        ("frame with an oversized length", true, oversized, false),
        ("truncated frame", true, truncated_frame, true),
    ];
    for (i, (case, handshake_first, bytes, close_after)) in cases.into_iter().enumerate() {
        let mut stream = if handshake_first {
            let (stream, reply) = raw_connection(b.local(), &handshake_bytes(1, "Test")).await;
            assert_eq!(reply.status, HandshakeStatus::Accepted, "{case}");
            stream
        } else {
            bounded(case, TcpStream::connect(b.local())).await.unwrap_or_else(|e| panic!("{case}: {e}"))
        };
        bounded(case, stream.write_all(&bytes)).await.unwrap_or_else(|e| panic!("{case}: {e}"));
        if close_after {
            bounded(case, stream.shutdown()).await.unwrap_or_else(|e| panic!("{case}: {e}"));
        }
        expect_closed(&mut stream, case).await;
        eventually(case, || b.stats().inbound.malformed == i as u64 + 1).await;

        let probe = format!("after {case}").into_bytes();
        let reply = bounded(case, a.send_request(b.local(), Verb::Read, probe.clone())).await;
        assert_eq!(reply, Ok([b"b:".as_slice(), &probe].concat()), "{case}");
        let message = next_seen(&mut seen).await;
        assert_eq!((message.from, message.payload), (a.local(), probe), "{case}: a bad frame reached a handler");
    }
    let stats = b.stats();
    assert_eq!((stats.inbound.refused, stats.inbound.malformed), (0, 8));
    assert!(a.stats().peers.get(&b.local()).is_some_and(|p| p.small.connected));
}

#[tokio::test]
async fn an_unknown_verb_is_dropped_and_the_connection_lives_on() {
    let b = start(config(0, "Test", Duration::from_secs(5))).await;
    let (echo, mut seen) = Echo::new("b");
    b.register(Verb::Mutation, echo);

    let (mut raw, reply) = raw_connection(b.local(), &handshake_bytes(1, "Test")).await;
    assert_eq!(reply.status, HandshakeStatus::Accepted);
    let mut bytes = frame_bytes(200, b"from the future");
    bytes.extend_from_slice(&frame_bytes(Verb::Mutation.code(), b"after"));
    bounded("write", raw.write_all(&bytes)).await.unwrap_or_else(|e| panic!("write: {e}"));

    let message = next_seen(&mut seen).await;
    assert_eq!((message.from, message.verb, message.payload), (raw_endpoint(), Verb::Mutation, b"after".to_vec()));
    let stats = b.stats().inbound;
    assert_eq!((stats.open, stats.malformed), (1, 0));
}
