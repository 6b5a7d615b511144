//! Requests, replies, one-way messages, timeouts, full queues, reconnection and shutdown.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::{RequestError, SendError};

const SECOND: Duration = Duration::from_secs(1);

#[tokio::test]
async fn requests_are_answered_in_both_directions() {
    let a = start(config(0, "Test", 5 * SECOND)).await;
    let b = start(config(0, "Test", 5 * SECOND)).await;
    let (echo_a, mut seen_a) = Echo::new("a");
    let (echo_b, mut seen_b) = Echo::new("b");
    a.register(Verb::Read, echo_a);
    b.register(Verb::Read, echo_b);

    let reply = bounded("a to b", a.send_request(b.local(), Verb::Read, b"ping".to_vec())).await;
    assert_eq!(reply, Ok(b"b:ping".to_vec()));
    let reply = bounded("b to a", b.send_request(a.local(), Verb::Read, b"pong".to_vec())).await;
    assert_eq!(reply, Ok(b"a:pong".to_vec()));

    // Handlers learn the sender's listen endpoint from the handshake, not the TCP source port.
    let seen = next_seen(&mut seen_b).await;
    assert_eq!(seen, Seen { from: a.local(), verb: Verb::Read, payload: b"ping".to_vec(), expects_reply: true });
    assert_eq!(next_seen(&mut seen_a).await.from, b.local());
    assert_eq!(a.pending_requests(), 0);
    assert_eq!(b.pending_requests(), 0);
}

#[tokio::test]
async fn one_way_messages_arrive_in_order() {
    let a = start(config(0, "Test", 5 * SECOND)).await;
    let b = start(config(0, "Test", 5 * SECOND)).await;
    let (echo, mut seen) = Echo::new("b");
    b.register(Verb::Mutation, echo);

    for i in 0..200u32 {
        assert_eq!(a.send_one_way(b.local(), Verb::Mutation, i.to_be_bytes().to_vec()), Ok(()));
    }
    for i in 0..200u32 {
        let message = next_seen(&mut seen).await;
        assert_eq!((message.from, message.payload), (a.local(), i.to_be_bytes().to_vec()));
        assert!(!message.expects_reply);
    }
    eventually("stats", || a.stats().peers.get(&b.local()).is_some_and(|p| p.small.completed == 200)).await;
    let stats = a.stats().peers.get(&b.local()).cloned().unwrap_or_default();
    assert!(stats.small.connected);
    assert_eq!((stats.pending(), stats.dropped(), stats.timeouts), (0, 0, 0));
    // A one-way message to a handler that answers sends nothing back: b never connected to a.
    assert!(b.stats().peers.is_empty());
}

#[tokio::test]
async fn gossip_travels_on_its_own_connection() {
    let a = start(config(0, "Test", 5 * SECOND)).await;
    let b = start(config(0, "Test", 5 * SECOND)).await;
    let (echo, mut seen) = Echo::new("b");
    b.register(Verb::GossipSyn, echo);

    assert_eq!(a.send_one_way(b.local(), Verb::GossipSyn, b"digests".to_vec()), Ok(()));
    assert_eq!(next_seen(&mut seen).await.verb, Verb::GossipSyn);
    let stats = a.stats().peers.get(&b.local()).cloned().unwrap_or_default();
    assert_eq!((stats.gossip.completed, stats.small.completed), (1, 0));
    assert!(stats.gossip.connected && !stats.small.connected);
}

#[tokio::test]
async fn a_one_mebibyte_payload_round_trips() {
    let a = start(config(0, "Test", 5 * SECOND)).await;
    let b = start(config(0, "Test", 5 * SECOND)).await;
    b.register(Verb::Mutation, Arc::new(Mirror));

    let payload: Vec<u8> = (0..1u32 << 20).map(|i| (i.wrapping_mul(31) % 251) as u8).collect();
    let reply = bounded("1 MiB", a.send_request(b.local(), Verb::Mutation, payload.clone())).await;
    assert!(reply == Ok(payload), "the 1 MiB payload came back changed or not at all");

    // Over max_message_bytes (2 MiB here): refused at once, never queued.
    let too_big = vec![0u8; (2 << 20) + 1];
    assert_eq!(
        a.send_one_way(b.local(), Verb::Mutation, too_big.clone()),
        Err(SendError::MessageTooLarge { size: too_big.len(), max: 2 << 20 })
    );
    let reply = bounded("too big", a.send_request(b.local(), Verb::Mutation, too_big)).await;
    assert!(matches!(reply, Err(RequestError::MessageTooLarge { .. })), "{reply:?}");
    assert_eq!(a.pending_requests(), 0);
}

#[tokio::test]
async fn messages_to_self_are_delivered_without_tcp() {
    let a = start(config(0, "Test", 5 * SECOND)).await;
    let (echo, mut seen) = Echo::new("a");
    a.register(Verb::Read, echo.clone());
    a.register(Verb::Mutation, echo);

    let reply = bounded("self request", a.send_request(a.local(), Verb::Read, b"me".to_vec())).await;
    assert_eq!(reply, Ok(b"a:me".to_vec()));
    assert_eq!(a.send_one_way(a.local(), Verb::Mutation, b"note".to_vec()), Ok(()));
    assert_eq!(next_seen(&mut seen).await.from, a.local());
    let note = next_seen(&mut seen).await;
    assert_eq!((note.from, note.verb, note.payload), (a.local(), Verb::Mutation, b"note".to_vec()));
    let stats = a.stats();
    assert!(stats.peers.is_empty(), "a connection was opened: {stats:?}");
    assert_eq!(stats.inbound.accepted, 0);
}

#[tokio::test]
async fn a_handler_that_never_replies_times_out_on_time() {
    let timeout = Duration::from_millis(400);
    let a = start(config(0, "Test", timeout)).await;
    let b = start(config(0, "Test", timeout)).await;
    let silent = Arc::new(Silent::default());
    b.register(Verb::Read, silent.clone());

    let started = Instant::now();
    let reply = bounded("silent peer", a.send_request(b.local(), Verb::Read, b"?".to_vec())).await;
    let elapsed = started.elapsed();
    match reply {
        Err(RequestError::Timeout { verb: Verb::Read, peer, waited }) => {
            assert_eq!(peer, b.local());
            assert!(waited >= timeout, "reported {waited:?}");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(elapsed >= timeout, "timed out early, after {elapsed:?}");
    assert!(elapsed < timeout + Duration::from_millis(800), "timed out late, after {elapsed:?}");
    assert_eq!(silent.calls(), 1, "the handler ran");
    assert_eq!(a.pending_requests(), 0, "the callback outlived its timeout");
    assert_eq!(a.stats().peers.get(&b.local()).map(|p| p.timeouts), Some(1));
}

#[tokio::test]
async fn a_dead_peer_times_out_without_blocking_the_caller() {
    let timeout = Duration::from_millis(300);
    let a = start(config(0, "Test", timeout)).await;
    let (port, _held) = dead_port();
    let dead = localhost(port);

    let started = Instant::now();
    let future = a.send_request(dead, Verb::Read, b"anyone?".to_vec());
    assert_eq!(a.send_one_way(dead, Verb::Mutation, b"x".to_vec()), Ok(()));
    assert!(started.elapsed() < Duration::from_millis(100), "sending blocked for {:?}", started.elapsed());
    let reply = bounded("dead peer", future).await;
    let elapsed = started.elapsed();
    assert!(matches!(reply, Err(RequestError::Timeout { peer, .. }) if peer == dead), "{reply:?}");
    assert!(elapsed >= timeout && elapsed < timeout + Duration::from_millis(800), "took {elapsed:?}");
    assert_eq!(a.pending_requests(), 0);
    assert!(!a.stats().peers.get(&dead).is_some_and(|p| p.connected()));
}

#[tokio::test]
async fn a_full_queue_answers_queue_full_at_once() {
    let mut cfg = config(0, "Test", 5 * SECOND);
    cfg.queue_capacity = 4;
    let a = start(cfg).await;
    let (port, _held) = dead_port();
    let dead = localhost(port);

    for i in 0..4u8 {
        assert_eq!(a.send_one_way(dead, Verb::Mutation, vec![i]), Ok(()));
    }
    let started = Instant::now();
    assert_eq!(a.send_one_way(dead, Verb::Mutation, vec![4]), Err(SendError::QueueFull { peer: dead }));
    let reply = bounded("full queue", a.send_request(dead, Verb::Read, vec![5])).await;
    assert_eq!(reply, Err(RequestError::QueueFull { peer: dead }));
    assert!(started.elapsed() < Duration::from_millis(100), "QueueFull took {:?}", started.elapsed());
    assert_eq!(a.pending_requests(), 0);

    // Gossip has a queue of its own, so a backlog of mutations never holds up a heartbeat.
    assert_eq!(a.send_one_way(dead, Verb::GossipSyn, vec![6]), Ok(()));
    let stats = a.stats().peers.get(&dead).cloned().unwrap_or_default();
    assert_eq!((stats.small.pending, stats.small.dropped, stats.gossip.pending), (4, 2, 1));
}

#[tokio::test]
async fn expired_messages_are_dropped_not_sent() {
    let timeout = Duration::from_millis(300);
    let (port, held) = dead_port();
    let a = start(config(0, "Test", timeout)).await;
    let b_endpoint = localhost(port);

    for i in 0..3u8 {
        assert_eq!(a.send_one_way(b_endpoint, Verb::Mutation, vec![b's', i]), Ok(()));
    }
    eventually("expired messages dropped", || {
        a.stats().peers.get(&b_endpoint).is_some_and(|p| p.small.dropped == 3 && p.small.pending == 0)
    })
    .await;

    // Now the peer comes up: only what was sent after it can arrive.
    drop(held);
    let b = start(config(port, "Test", timeout)).await;
    let (echo, mut seen) = Echo::new("b");
    b.register(Verb::Mutation, echo);
    assert_eq!(a.send_one_way(b_endpoint, Verb::Mutation, b"fresh".to_vec()), Ok(()));
    assert_eq!(next_seen(&mut seen).await.payload, b"fresh".to_vec());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(seen.try_recv().is_err(), "an expired message was delivered");
}

#[tokio::test]
async fn a_restarted_peer_is_reached_again() {
    let timeout = Duration::from_millis(300);
    let port = free_port();
    let a = start(config(0, "Test", timeout)).await;
    let b = start(config(port, "Test", timeout)).await;
    let (echo, _seen) = Echo::new("b1");
    b.register(Verb::Read, echo);
    assert_eq!(bounded("first b", a.send_request(b.local(), Verb::Read, b"1".to_vec())).await, Ok(b"b1:1".to_vec()));

    bounded("b stops", b.shutdown_and_wait()).await;
    drop(b);
    let reply = bounded("b down", a.send_request(localhost(port), Verb::Read, b"2".to_vec())).await;
    assert!(matches!(reply, Err(RequestError::Timeout { .. })), "{reply:?}");

    let b = start(config(port, "Test", timeout)).await;
    let (echo, mut seen) = Echo::new("b2");
    b.register(Verb::Read, echo);
    let reply = bounded("b restarted", async {
        loop {
            match a.send_request(b.local(), Verb::Read, b"3".to_vec()).await {
                Ok(reply) => return reply,
                Err(RequestError::Timeout { .. }) => continue,
                Err(e) => panic!("unexpected error while reconnecting: {e}"),
            }
        }
    })
    .await;
    assert_eq!(reply, b"b2:3".to_vec());
    assert_eq!(next_seen(&mut seen).await.from, a.local());
    assert!(a.stats().peers.get(&b.local()).is_some_and(|p| p.small.connected));
}

#[tokio::test]
async fn failures_reach_the_requester() {
    struct Failing;
    impl VerbHandler for Failing {
        fn handle(&self, _from: Endpoint, _verb: Verb, _payload: Vec<u8>, reply: Responder) {
            reply.fail("disk on fire".into());
        }
    }
    let a = start(config(0, "Test", 5 * SECOND)).await;
    let b = start(config(0, "Test", 5 * SECOND)).await;
    b.register(Verb::Truncate, Arc::new(Failing));

    let started = Instant::now();
    let reply = bounded("failing handler", a.send_request(b.local(), Verb::Truncate, vec![])).await;
    assert_eq!(
        reply,
        Err(RequestError::Failure { verb: Verb::Truncate, peer: b.local(), reason: "disk on fire".into() })
    );
    // No handler at all: answered with a failure too, not left to time out.
    let reply = bounded("no handler", a.send_request(b.local(), Verb::SchemaPull, vec![])).await;
    assert!(
        matches!(&reply, Err(RequestError::Failure { verb: Verb::SchemaPull, reason, .. }) if reason.contains("no handler")),
        "{reply:?}"
    );
    assert!(started.elapsed() < 2 * SECOND, "failures took {:?}", started.elapsed());
}

#[tokio::test]
async fn a_responder_may_answer_later_from_another_thread() {
    struct Later;
    impl VerbHandler for Later {
        fn handle(&self, _from: Endpoint, _verb: Verb, payload: Vec<u8>, reply: Responder) {
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                reply.respond([b"later:".as_slice(), &payload].concat());
            });
        }
    }
    let a = start(config(0, "Test", 5 * SECOND)).await;
    let b = start(config(0, "Test", 5 * SECOND)).await;
    b.register(Verb::Read, Arc::new(Later));
    let reply = bounded("later", a.send_request(b.local(), Verb::Read, b"x".to_vec())).await;
    assert_eq!(reply, Ok(b"later:x".to_vec()));
}

#[tokio::test]
async fn dropping_a_response_future_frees_its_callback() {
    let a = start(config(0, "Test", 5 * SECOND)).await;
    let b = start(config(0, "Test", 5 * SECOND)).await;
    b.register(Verb::Read, Arc::new(Silent::default()));
    let future = a.send_request(b.local(), Verb::Read, vec![]);
    assert_eq!(a.pending_requests(), 1);
    drop(future);
    assert_eq!(a.pending_requests(), 0);
}

#[tokio::test]
async fn drained_gossip_reaches_its_peer_before_shutdown() {
    let a = start(config(0, "Test", 5 * SECOND)).await;
    let b = start(config(0, "Test", 5 * SECOND)).await;
    let (echo, mut seen) = Echo::new("b");
    b.register(Verb::GossipSyn, echo);

    // On this single-threaded runtime the writer has not run yet: shutting down now would drop
    // the message. Draining gives it its turn.
    assert_eq!(a.send_one_way(b.local(), Verb::GossipSyn, b"shutting down".to_vec()), Ok(()));
    assert!(bounded("drain", a.drain_gossip(&[b.local()], 5 * SECOND)).await);
    a.shutdown();
    assert_eq!(next_seen(&mut seen).await.payload, b"shutting down");

    // A peer nobody listens on: the drain gives up at its limit.
    let c = start(config(0, "Test", 5 * SECOND)).await;
    let (port, _held) = dead_port();
    assert_eq!(c.send_one_way(localhost(port), Verb::GossipSyn, vec![]), Ok(()));
    let started = Instant::now();
    assert!(!bounded("drain", c.drain_gossip(&[localhost(port)], SECOND / 5)).await);
    // Only the peers named are waited for.
    assert!(bounded("drain", c.drain_gossip(&[b.local()], SECOND / 5)).await);
    assert!(started.elapsed() < 2 * SECOND, "the drain took {:?}", started.elapsed());
}

#[tokio::test]
async fn shutdown_fails_pending_requests_and_frees_the_port() {
    let a = start(config(0, "Test", 5 * SECOND)).await;
    let b = start(config(0, "Test", 5 * SECOND)).await;
    let silent = Arc::new(Silent::default());
    b.register(Verb::Read, silent.clone());

    let waiting = tokio::spawn(a.send_request(b.local(), Verb::Read, vec![]));
    eventually("request delivered", || silent.calls() == 1).await;
    assert_eq!(b.stats().inbound.open, 1);

    let started = Instant::now();
    bounded("shutdown", a.shutdown_and_wait()).await;
    let reply = bounded("pending request", waiting).await.unwrap_or_else(|e| panic!("join: {e}"));
    assert_eq!(reply, Err(RequestError::ShuttingDown));
    assert!(started.elapsed() < SECOND, "shutdown took {:?}", started.elapsed());
    assert_eq!(a.send_one_way(b.local(), Verb::Mutation, vec![]), Err(SendError::ShuttingDown));
    assert_eq!(
        bounded("after shutdown", a.send_request(b.local(), Verb::Read, vec![])).await,
        Err(RequestError::ShuttingDown)
    );

    // The listener is closed and the connection to b is gone.
    let rebound = std::net::TcpListener::bind(a.local());
    assert!(rebound.is_ok(), "port still taken: {rebound:?}");
    eventually("b sees a's connection close", || b.stats().inbound.open == 0).await;
}

/// Outbound connections leave from the listen address (Cassandra binds them to it), so a peer,
/// a firewall or a partition sees the node's own address as the source; with
/// `outbound_bind_any` the kernel chooses.
#[tokio::test]
async fn outbound_connections_leave_from_the_listen_address() {
    for (ip, bind_any) in [([127, 0, 0, 2], false), ([127, 0, 0, 3], false), ([127, 0, 0, 2], true)] {
        let mut settings = config(0, "Test", 5 * SECOND);
        settings.local = Endpoint::from((ip, 0));
        settings.outbound_bind_any = bind_any;
        let node = start(settings).await;
        // The peer: a plain listener on another address, which sees the TCP source.
        let peer = tokio::net::TcpListener::bind("127.0.0.4:0").await.unwrap_or_else(|e| panic!("bind: {e}"));
        let peer_ep = peer.local_addr().unwrap_or_else(|e| panic!("local_addr: {e}"));
        assert_eq!(node.send_one_way(peer_ep, Verb::Mutation, b"x".to_vec()), Ok(()));
        let (_stream, source) = bounded("connection", peer.accept()).await.unwrap_or_else(|e| panic!("accept: {e}"));
        if bind_any {
            // Loopback destinations get the kernel's choice (127.0.0.1 on Linux), not ours.
            assert_ne!(source.ip(), std::net::IpAddr::from(ip), "bind any: {source}");
        } else {
            assert_eq!(source.ip(), std::net::IpAddr::from(ip), "node at {ip:?}");
        }
        node.shutdown();
    }
}
