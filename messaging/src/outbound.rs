//! Outbound connections: one bounded queue and one writer task per (peer, connection kind).
//!
//! Senders only push onto the queue (never await), so a slow or dead peer costs a caller at most
//! a QueueFull. The writer connects lazily when the queue has something, reconnects with bounded
//! backoff, drops messages whose timeout passed instead of sending them, and writes the rest in
//! batches. The connection carries frames one way; the writer also reads it, but only to notice
//! the peer closing it (the peer never sends anything after its handshake reply).

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::Notify;
use tokio::time::Instant;
use tracing::{debug, error, info, warn};

use crate::codec::{
    decode_handshake_reply, encode_frame, encode_handshake, Handshake, HandshakeStatus, MessageKind, ProtocolVersion,
};
use crate::error::{ConnectionError, SendError};
use crate::reader::ItemReader;
use crate::service::Shared;
use crate::stats::ConnectionStats;
use crate::verb::ConnectionKind;
use crate::Endpoint;

/// First pause after a failed connection attempt; it doubles up to `RECONNECT_BACKOFF_MAX`.
const RECONNECT_BACKOFF_MIN: Duration = Duration::from_millis(50);
/// Longest pause between connection attempts: a restarted peer is found again within this.
const RECONNECT_BACKOFF_MAX: Duration = Duration::from_secs(1);
/// How long the peer may take to answer our handshake.
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one batch may take to write; a peer that stops reading is disconnected after it.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// Most bytes of payload written per batch (one batch holds at least one message).
const BATCH_BYTES: usize = 256 * 1024;

/// A message waiting for its connection.
pub(crate) struct Queued {
    pub verb: u8,
    pub kind: MessageKind,
    pub id: u64,
    pub payload: Vec<u8>,
    /// Sending it later is pointless: its requester has given up.
    pub expires: Instant,
}

/// One outbound connection's queue and counters, shared by senders and its writer task.
pub(crate) struct Outbound {
    pub peer: Endpoint,
    pub kind: ConnectionKind,
    /// Messages waiting for the writer. Senders push, the writer takes; the lock is never held
    /// across an await or while taking another lock.
    queue: Mutex<VecDeque<Queued>>,
    capacity: usize,
    /// Wakes the writer after a push (or at shutdown).
    pub wake: Notify,
    /// Whether the writer task was spawned (it is, on the first push).
    pub started: AtomicBool,
    connected: AtomicBool,
    /// Set while the writer holds a batch taken from the queue and not yet written.
    writing: AtomicBool,
    completed: AtomicU64,
    dropped: AtomicU64,
}

impl Outbound {
    pub fn new(peer: Endpoint, kind: ConnectionKind, capacity: usize) -> Outbound {
        Outbound {
            peer,
            kind,
            queue: Mutex::new(VecDeque::new()),
            capacity,
            wake: Notify::new(),
            started: AtomicBool::new(false),
            connected: AtomicBool::new(false),
            writing: AtomicBool::new(false),
            completed: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        }
    }

    /// Queues a message, or refuses it at once when the queue is full.
    pub fn push(&self, message: Queued) -> Result<(), SendError> {
        {
            let mut queue = self.queue.lock();
            if queue.len() >= self.capacity {
                drop(queue);
                self.dropped.fetch_add(1, Ordering::Relaxed);
                return Err(SendError::QueueFull { peer: self.peer });
            }
            queue.push_back(message);
        }
        self.wake.notify_one();
        Ok(())
    }

    /// Counts a message lost after it was taken from the queue.
    pub fn count_dropped(&self, n: usize) {
        self.dropped.fetch_add(n as u64, Ordering::Relaxed);
    }

    fn has_pending(&self) -> bool {
        !self.queue.lock().is_empty()
    }

    /// Whether everything queued so far was written to the peer (or dropped).
    pub fn is_idle(&self) -> bool {
        // `writing` is set before a batch leaves the queue, so no message is in neither place.
        !self.writing.load(Ordering::SeqCst) && !self.has_pending()
    }

    /// Drops the messages whose timeout passed; says whether any are left.
    fn drop_expired(&self, now: Instant) -> bool {
        let mut queue = self.queue.lock();
        let before = queue.len();
        queue.retain(|m| m.expires > now);
        let expired = before - queue.len();
        let any_left = !queue.is_empty();
        drop(queue);
        if expired > 0 {
            self.count_dropped(expired);
            debug!(peer = %self.peer, connection = self.kind.name(), expired, "dropped expired messages");
        }
        any_left
    }

    /// Takes the unexpired messages at the front of the queue, up to about `BATCH_BYTES`.
    fn take_batch(&self, now: Instant) -> Vec<Queued> {
        let mut batch = Vec::new();
        let mut bytes = 0usize;
        let mut expired = 0usize;
        {
            let mut queue = self.queue.lock();
            while bytes < BATCH_BYTES {
                let Some(message) = queue.pop_front() else { break };
                if message.expires <= now {
                    expired += 1;
                    continue;
                }
                bytes = bytes.saturating_add(message.payload.len());
                batch.push(message);
            }
        }
        if expired > 0 {
            self.count_dropped(expired);
        }
        batch
    }

    /// Empties the queue at shutdown (not counted as drops: nobody waits for them any more).
    pub fn clear(&self) {
        self.queue.lock().clear();
        self.wake.notify_one();
    }

    pub fn stats(&self) -> ConnectionStats {
        ConnectionStats {
            pending: self.queue.lock().len() as u64,
            completed: self.completed.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
            connected: self.connected.load(Ordering::Relaxed),
        }
    }
}

/// An open connection whose handshake was accepted.
struct Connection {
    write: OwnedWriteHalf,
    read: OwnedReadHalf,
    version: ProtocolVersion,
}

/// The writer task of one outbound connection; ends at shutdown.
pub(crate) async fn outbound_loop(shared: Arc<Shared>, out: Arc<Outbound>) {
    let mut shutdown = shared.shutdown_signal();
    let mut connection: Option<Connection> = None;
    let mut backoff = RECONNECT_BACKOFF_MIN;
    let mut failed_attempts = 0u32;
    let mut buf = Vec::new();
    loop {
        if *shutdown.borrow_and_update() {
            break;
        }
        // While connected, expired messages are skipped as batches are taken; while not, they
        // are dropped here, so a dead peer's queue empties as its messages time out.
        let has_work = if connection.is_some() { out.has_pending() } else { out.drop_expired(Instant::now()) };
        if !has_work {
            // Nothing to send: wait for a message, and meanwhile notice a peer that goes away.
            tokio::select! {
                _ = out.wake.notified() => {}
                _ = shutdown.changed() => break,
                why = closed_by_peer(connection.as_mut()) => {
                    debug!(peer = %out.peer, connection = out.kind.name(), why, "connection closed by peer");
                    connection = None;
                    out.connected.store(false, Ordering::Relaxed);
                }
            }
            continue;
        }
        let Some(conn) = connection.as_mut() else {
            let attempt = tokio::select! {
                r = connect(&shared, &out) => r,
                _ = shutdown.changed() => break,
            };
            match attempt {
                Ok(conn) => {
                    if failed_attempts > 0 {
                        info!(peer = %out.peer, connection = out.kind.name(), "connected after {failed_attempts} failed attempts");
                    }
                    connection = Some(conn);
                    out.connected.store(true, Ordering::Relaxed);
                    backoff = RECONNECT_BACKOFF_MIN;
                    failed_attempts = 0;
                }
                Err(e) => {
                    log_connect_failure(&shared, &out, &e, failed_attempts);
                    failed_attempts = failed_attempts.saturating_add(1);
                    tokio::select! {
                        _ = tokio::time::sleep(backoff) => {}
                        _ = shutdown.changed() => break,
                    }
                    backoff = (backoff * 2).min(RECONNECT_BACKOFF_MAX);
                }
            }
            continue;
        };
        if let Some(why) = closed_already(conn) {
            // Writing into a connection the peer closed would lose the batch.
            debug!(peer = %out.peer, connection = out.kind.name(), why, "connection closed by peer");
            connection = None;
            out.connected.store(false, Ordering::Relaxed);
            continue;
        }
        out.writing.store(true, Ordering::SeqCst);
        let batch = out.take_batch(Instant::now());
        if batch.is_empty() {
            out.writing.store(false, Ordering::SeqCst);
            continue;
        }
        buf.clear();
        for m in &batch {
            // Payload sizes were checked against max_message_bytes (<= u32::MAX) when queued.
            if let Err(e) = encode_frame(&mut buf, conn.version, m.verb, m.kind, m.id, &m.payload) {
                warn!(peer = %out.peer, error = %e, "message not sent");
            }
        }
        let written = tokio::select! {
            r = tokio::time::timeout(WRITE_TIMEOUT, conn.write.write_all(&buf)) => r,
            _ = shutdown.changed() => break,
        };
        out.writing.store(false, Ordering::SeqCst);
        match written {
            Ok(Ok(())) => {
                out.completed.fetch_add(batch.len() as u64, Ordering::Relaxed);
            }
            Ok(Err(e)) => {
                warn!(peer = %out.peer, connection = out.kind.name(), error = %e, lost = batch.len(), "write failed; reconnecting");
                out.count_dropped(batch.len());
                connection = None;
                out.connected.store(false, Ordering::Relaxed);
            }
            Err(_) => {
                warn!(peer = %out.peer, connection = out.kind.name(), lost = batch.len(), "peer stopped reading for {WRITE_TIMEOUT:?}; reconnecting");
                out.count_dropped(batch.len());
                connection = None;
                out.connected.store(false, Ordering::Relaxed);
            }
        }
    }
    out.connected.store(false, Ordering::Relaxed);
    out.writing.store(false, Ordering::SeqCst);
}

/// Resolves when the peer closes the connection (or sends anything, which it must not);
/// never resolves without a connection.
async fn closed_by_peer(connection: Option<&mut Connection>) -> &'static str {
    let Some(conn) = connection else { return std::future::pending().await };
    let mut byte = [0u8; 1];
    match conn.read.read(&mut byte).await {
        Ok(0) => "end of stream",
        Ok(_) => "peer sent bytes on an outbound connection",
        Err(_) => "read error",
    }
}

/// Whether the peer has closed the connection, as far as the runtime knows now (no waiting).
fn closed_already(conn: &Connection) -> Option<&'static str> {
    let mut byte = [0u8; 1];
    match conn.read.try_read(&mut byte) {
        Ok(0) => Some("end of stream"),
        Ok(_) => Some("peer sent bytes on an outbound connection"),
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => None,
        Err(_) => Some("read error"),
    }
}

/// A TCP connection to `peer`, leaving from address `from` (any port) when given, as Cassandra
/// binds outbound internode sockets to the listen address: peers, firewalls and partitions see
/// the node's own address as the source. An address of the other family than `peer`'s cannot
/// reach it, so the kernel picks then.
async fn open_stream(peer: SocketAddr, from: Option<IpAddr>) -> std::io::Result<TcpStream> {
    let Some(ip) = from.filter(|ip| ip.is_ipv4() == peer.is_ipv4()) else {
        return TcpStream::connect(peer).await;
    };
    let socket = if peer.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    socket.bind(SocketAddr::new(ip, 0))?;
    socket.connect(peer).await
}

/// Opens the connection and has its handshake accepted.
async fn connect(shared: &Shared, out: &Outbound) -> Result<Connection, ConnectionError> {
    let connect_timeout = shared.config.connect_timeout;
    let from = (!shared.config.outbound_bind_any).then(|| shared.local.ip());
    let stream = tokio::time::timeout(connect_timeout, open_stream(out.peer, from))
        .await
        .map_err(|_| ConnectionError::TimedOut { what: "TCP connection", waited: connect_timeout })??;
    stream.set_nodelay(true)?;
    let (read, mut write) = stream.into_split();
    let ours = ProtocolVersion::CURRENT;
    let mut hello = Vec::new();
    encode_handshake(
        &mut hello,
        &Handshake {
            version: ours as u8,
            kind: out.kind,
            cluster_name: shared.config.cluster_name.clone(),
            from: shared.local,
        },
    )?;
    write.write_all(&hello).await?;
    let mut reader = ItemReader::new(read);
    let reply = tokio::time::timeout(HANDSHAKE_TIMEOUT, reader.next("handshake reply", decode_handshake_reply))
        .await
        .map_err(|_| ConnectionError::TimedOut { what: "handshake reply", waited: HANDSHAKE_TIMEOUT })??
        .ok_or(ConnectionError::Closed("handshake reply"))?;
    match reply.status {
        HandshakeStatus::Accepted => {
            // The acceptor speaks a version we offered; anything else is a broken peer.
            let version = ProtocolVersion::try_from(reply.version)
                .ok()
                .filter(|v| *v <= ours)
                .ok_or(ConnectionError::UnsupportedVersion { theirs: reply.version, ours: ours as u8 })?;
            Ok(Connection { write, read: reader.into_inner(), version })
        }
        HandshakeStatus::ClusterNameMismatch => Err(ConnectionError::ClusterNameMismatch {
            ours: shared.config.cluster_name.clone(),
            theirs: reply.cluster_name,
        }),
        // A later version would retry with the acceptor's version when it knows it.
        HandshakeStatus::UnsupportedVersion => {
            Err(ConnectionError::UnsupportedVersion { theirs: reply.version, ours: ours as u8 })
        }
    }
}

/// A refusal is a configuration error and is always logged; a dead peer is logged at its first
/// failure only, then quietly retried.
fn log_connect_failure(shared: &Shared, out: &Outbound, e: &ConnectionError, failed_before: u32) {
    match e {
        ConnectionError::ClusterNameMismatch { .. } | ConnectionError::UnsupportedVersion { .. } => {
            error!(peer = %out.peer, local = %shared.local, connection = out.kind.name(), error = %e, "peer refused our connection");
        }
        _ if failed_before == 0 => {
            warn!(peer = %out.peer, connection = out.kind.name(), error = %e, "cannot connect; retrying");
        }
        _ => debug!(peer = %out.peer, connection = out.kind.name(), error = %e, "cannot connect; retrying"),
    }
}
