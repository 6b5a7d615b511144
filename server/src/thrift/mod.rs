//! The Thrift front end: accepts connections on the RPC port and hands each to one of the
//! event-loop threads ([`event_loop`]), which reads whole messages (framed or unframed, detected
//! per connection), runs each through the method table of its API generation ([`dispatch`] for
//! 20.1.0, [`v06`] for Cassandra 0.6's, told apart per message) and writes the reply.
//!
//! A request runs as a future on its connection's event loop, as Redis runs its commands: the
//! handler converts and validates it ([`convert`], [`validate`]) and awaits the coordinator,
//! which does short engine work (a small read, a write) in place and sends anything that may
//! block on disk (scans, big reads, schema changes, writes under back-pressure) to its
//! executor; either way the loop keeps serving its other connections. Handing every request to
//! another thread and back cost more than the request itself (`bench/redis-vs-sibyl.sh`: 15 µs of
//! server CPU per insert inline against 20 µs through an executor).
#![deny(clippy::unwrap_used)]

pub mod convert;
mod cql;
mod describe;
pub mod dispatch;
pub mod error;
pub mod expiry;
pub mod handler;
mod reads;
pub mod server;
pub mod session;
pub mod v06;
pub mod validate;
pub mod wire;
mod writes;

use std::cell::Cell;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tracing::{debug, info, warn};

use crate::event_loop::EventLoops;
use handler::{Handler, ThriftContext};
use wire::{looks_unframed, Measure, Scan};

/// How the front end listens and reads.
#[derive(Clone, Copy, Debug)]
pub struct ServeOptions {
    /// Largest Thrift message accepted, framed or not.
    pub max_message_bytes: usize,
    /// Event-loop threads; 0 means the default ([`crate::event_loop::default_count`]).
    pub event_loops: usize,
}

/// Accepts clients until `shutdown` turns true (or its sender goes). Then the listening socket
/// is closed, and every connection once it has answered the call it is serving (at most
/// [`server::CLIENT_CLOSE_GRACE`]; see [`server`]).
pub async fn serve(
    listener: TcpListener,
    ctx: Arc<ThriftContext>,
    options: ServeOptions,
    mut shutdown: watch::Receiver<bool>,
) {
    let loops = match EventLoops::start("thrift", options.event_loops) {
        Ok(loops) => loops,
        Err(e) => {
            warn!(error = %e, "could not start the event loops; not accepting thrift clients");
            return;
        }
    };
    info!(event_loops = loops.count(), "thrift event loops started");
    let limits = Arc::new(Limits::new(options.max_message_bytes, STALLED_MESSAGE));
    let open = Arc::new(server::OpenConnections::default());
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    let stream = match stream.into_std() {
                        Ok(stream) => stream,
                        Err(e) => {
                            debug!(%peer, error = %e, "could not hand the connection to an event loop");
                            continue;
                        }
                    };
                    let registered = open.register(&stream);
                    let ctx = ctx.clone();
                    let limits = limits.clone();
                    loops.next().spawn(async move {
                        let _registered = registered;
                        let result = match TcpStream::from_std(stream) {
                            Ok(stream) => connection(stream, ctx, &limits).await,
                            Err(e) => Err(e.into()),
                        };
                        if let Err(e) = result {
                            debug!(%peer, error = %e, "connection closed");
                        }
                    });
                }
                Err(e) => {
                    warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            },
            _ = shutdown.changed() => break,
        }
    }
    drop(listener);
    info!("no longer accepting thrift clients");
    open.shut_reads();
    if !open.wait_until_closed(server::CLIENT_CLOSE_GRACE).await {
        warn!(
            connections = open.count(),
            "thrift connections still open {:?} after the stop; closing them",
            server::CLIENT_CLOSE_GRACE
        );
    }
    loops.stop();
}

#[derive(Debug, thiserror::Error)]
enum ConnError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("frame of {size} bytes is larger than the maximum of {max} (thrift_max_message_length)")]
    FrameTooLarge { size: usize, max: usize },
    #[error("negative frame size {0}")]
    NegativeFrame(i32),
    #[error("malformed message: {0}")]
    Malformed(&'static str),
    #[error("no bytes for {:?} in the middle of a message ({have} bytes of it received)", .after)]
    Stalled { have: usize, after: Duration },
    #[error(transparent)]
    BadHeader(#[from] dispatch::BadHeader),
}

/// How long a client may leave a message half sent before its connection is closed. An idle
/// connection, between messages, may wait forever, as Cassandra's do.
const STALLED_MESSAGE: Duration = Duration::from_secs(60);

/// Bytes that all connections together may hold for large frames still arriving: a frame above
/// [`READ_CHUNK`] waits for its share before its body is read. Without a bound, clients that
/// each send a maximum-size frame but its last byte pinned that much memory per connection (an
/// audit held 637 MB with 40 connections).
const FRAME_BUDGET: usize = 256 << 20;

/// What bounds the reading of messages, shared by every connection.
struct Limits {
    /// Largest message accepted (ThriftMaxMessageLengthInMB).
    max: usize,
    /// [`FRAME_BUDGET`] in KiB permits, at least one maximum-size frame.
    budget: Semaphore,
    budget_kib: usize,
    stall: Duration,
}

impl Limits {
    fn new(max: usize, stall: Duration) -> Limits {
        let budget_kib = FRAME_BUDGET.max(max + 4).div_ceil(1024);
        Limits { max, budget: Semaphore::new(budget_kib), budget_kib, stall }
    }

    /// One read into `buf` while a message is partly received, bounded by the stall timeout.
    async fn read_more(&self, stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<usize, ConnError> {
        match tokio::time::timeout(self.stall, stream.read_buf(buf)).await {
            Ok(read) => Ok(read?),
            Err(_) => Err(ConnError::Stalled { have: buf.len(), after: self.stall }),
        }
    }
}

async fn connection(mut stream: TcpStream, ctx: Arc<ThriftContext>, limits: &Limits) -> Result<(), ConnError> {
    let max = limits.max;
    let mut handler = Handler::new(ctx.clone());
    if let Ok(peer) = stream.peer_addr() {
        handler.session_mut().set_client(peer.ip());
    }
    let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    let mut reply: Vec<u8> = Vec::with_capacity(256);
    // The first byte tells the transport: unframed strict binary starts with 0x80.
    if stream.read_buf(&mut buf).await? == 0 {
        return Ok(());
    }
    let framed = !looks_unframed(buf[0]);
    // Both API generations share the port: each message goes to the one it belongs to.
    let mut generations = v06::Generations::new(ctx, framed);
    // How far the unframed message at the front of `buf` has been walked.
    let mut scan = Scan::default();
    // Whether other connections of this event loop ran calls while a call of this one whose
    // reply is not written yet was waiting.
    let mut others_ran = false;
    loop {
        let message = if framed {
            read_frame(&mut stream, &mut buf, limits).await?
        } else {
            let message = read_unframed(&mut stream, &mut buf, limits, &mut scan).await?;
            scan = Scan::default();
            message
        };
        let Some(message) = message else { return Ok(()) };
        // The frame length goes in front once the reply is known: one write, one packet.
        let start = reply.len();
        let header = if framed { 4 } else { 0 };
        reply.resize(start + header, 0);
        // Decoded where it was received; its bytes are dropped once the call has run.
        let turn = begin_call();
        let dispatched = generations.dispatch(&mut handler, &buf[message.clone()], &mut reply).await;
        others_ran |= calls_begun() != turn;
        consume(&mut buf, message.end);
        if let Err(e) = dispatched {
            // The replies to calls pipelined before this one are still owed.
            reply.truncate(start);
            if !reply.is_empty() {
                stream.write_all(&reply).await?;
            }
            return Err(e.into());
        }
        if reply.len() == start + header {
            reply.truncate(start); // a one-way call: no reply
        } else if framed {
            let len = (reply.len() - start - 4) as u32;
            reply[start..start + 4].copy_from_slice(&len.to_be_bytes());
        }
        if reply.len() < PIPELINED_REPLIES && holds_whole_message(&buf, framed, max, &mut scan) {
            continue; // pipelined calls are answered together, in one write
        }
        if reply.is_empty() {
            continue;
        }
        // Let the loop's other connections that are ready run their calls first, so their
        // replies go out in one burst after this one, as Redis writes its replies after reading
        // every ready client. A client then finds several replies per wakeup instead of sleeping
        // between each: with 64 connections that cut the client's context switches from 0.15 to
        // 0.03 per read and the CPU of both sides per read, and took reads from 0.80x to 0.86x
        // Redis' rate (bench/redis-vs-sibyl.sh, docs/benchmarks.md). When other connections
        // ran calls while this one's waited (a write yields for its commit log record), they
        // have had their turn already: a second pass of the loop would only cost time.
        if !others_ran {
            cluster::yield_to_ready_tasks().await;
        }
        others_ran = false;
        write_reply(&mut stream, &reply).await?;
        reply.clear();
        if reply.capacity() > MAX_KEPT_READ_BUFFER {
            reply = Vec::with_capacity(256);
        }
    }
}

/// Writes `reply` whole: at once when the socket takes it, as it takes nearly every reply, else
/// through the runtime as the socket drains. The direct attempt skips the write future and the
/// task budget's bookkeeping (the read that follows still counts against the budget).
async fn write_reply(stream: &mut TcpStream, reply: &[u8]) -> std::io::Result<()> {
    let written = match stream.try_write(reply) {
        Ok(n) => n,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => 0,
        Err(e) => return Err(e),
    };
    if written < reply.len() {
        stream.write_all(&reply[written..]).await?;
    }
    Ok(())
}

thread_local! {
    /// Calls begun on this thread (an event loop, which runs its connections one at a time).
    static CALLS_BEGUN: Cell<u64> = const { Cell::new(0) };
}

/// Counts a call begun on this thread; its number.
fn begin_call() -> u64 {
    CALLS_BEGUN.with(|n| {
        n.set(n.get().wrapping_add(1));
        n.get()
    })
}

fn calls_begun() -> u64 {
    CALLS_BEGUN.with(Cell::get)
}

/// Whether `buf` already starts with a whole message that can be served without reading.
fn holds_whole_message(buf: &[u8], framed: bool, max: usize, scan: &mut Scan) -> bool {
    if !framed {
        return !buf.is_empty() && matches!(scan.measure(buf), Measure::Complete(_));
    }
    match buf.get(..4) {
        Some(h) => {
            let size = i32::from_be_bytes([h[0], h[1], h[2], h[3]]);
            // A bad size is left to read_frame to report, after the replies owed are sent.
            size >= 0 && (size as usize) <= max && buf.len() >= size as usize + 4
        }
        None => false,
    }
}

/// What a connection's read buffer keeps free for the next read: a whole small request (and
/// any the client pipelined behind it) arrives in one recv.
const READ_CHUNK: usize = 16 * 1024;
/// Replies to pipelined calls held back for one write, at most: beyond this they are written
/// before the next call runs, so a client that pipelines without reading cannot grow the buffer.
const PIPELINED_REPLIES: usize = 64 * 1024;
/// A read buffer grown past this for one big message is given back afterwards.
const MAX_KEPT_READ_BUFFER: usize = 1024 * 1024;

/// Drops `buf[..end]` (a message that has been served, with its frame header), keeping the
/// buffer's capacity for the next read (unless one large message grew it). What follows (a
/// request the client pipelined) moves to the front.
fn consume(buf: &mut Vec<u8>, end: usize) {
    buf.drain(..end);
    if buf.capacity() > MAX_KEPT_READ_BUFFER && buf.len() < READ_CHUNK {
        buf.shrink_to(READ_CHUNK);
    }
}

/// Reads until `buf` starts with one whole length-prefixed frame, and returns where its message
/// lies in `buf`; `None` at a clean end of stream.
async fn read_frame(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    limits: &Limits,
) -> Result<Option<Range<usize>>, ConnError> {
    while buf.len() < 4 {
        buf.reserve(READ_CHUNK);
        let read = if buf.is_empty() { stream.read_buf(buf).await? } else { limits.read_more(stream, buf).await? };
        if read == 0 {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(ConnError::Malformed("connection closed inside a frame header"))
            };
        }
    }
    let size = i32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
    if size < 0 {
        return Err(ConnError::NegativeFrame(size));
    }
    let size = size as usize;
    if size > limits.max {
        warn!(size, max = limits.max, "refusing oversized frame; closing connection");
        return Err(ConnError::FrameTooLarge { size, max: limits.max });
    }
    if buf.len() < size + 4 {
        // A large frame still arriving holds its share of the budget until it is whole.
        let _share = if size > READ_CHUNK {
            let kib = (size + 4).div_ceil(1024).min(limits.budget_kib) as u32;
            Some(limits.budget.acquire_many(kib).await.map_err(|_| ConnError::Malformed("server shutting down"))?)
        } else {
            None
        };
        buf.reserve(size + 4 - buf.len());
        while buf.len() < size + 4 {
            if limits.read_more(stream, buf).await? == 0 {
                return Err(ConnError::Malformed("connection closed inside a frame"));
            }
        }
    }
    // Not walked here: the frame is the message, and `thrift_idl::MessageInput` bounds every length
    // and count it declares by the bytes actually received as it decodes.
    Ok(Some(4..size + 4))
}

/// Reads until `buf` starts with one whole unframed message, found by walking its structure
/// (`scan` goes on from where earlier walks over `buf` stopped), and returns where it lies in
/// `buf`; `None` at a clean end of stream.
async fn read_unframed(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    limits: &Limits,
    scan: &mut Scan,
) -> Result<Option<Range<usize>>, ConnError> {
    let max = limits.max;
    loop {
        if !buf.is_empty() {
            match scan.measure(buf) {
                Measure::Complete(n) => return Ok(Some(0..n)),
                Measure::Invalid(why) => return Err(ConnError::Malformed(why)),
                Measure::Incomplete => {}
            }
            if buf.len() > max {
                warn!(size = buf.len(), max, "refusing oversized unframed message; closing connection");
                return Err(ConnError::FrameTooLarge { size: buf.len(), max });
            }
        }
        buf.reserve(READ_CHUNK);
        let read = if buf.is_empty() { stream.read_buf(buf).await? } else { limits.read_more(stream, buf).await? };
        if read == 0 {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(ConnError::Malformed("connection closed inside a message"))
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    /// A connected pair on loopback: (client, server side).
    async fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let client = TcpStream::connect(listener.local_addr().expect("addr")).await.expect("connect");
        let (server, _) = listener.accept().await.expect("accept");
        (client, server)
    }

    fn frame(len: usize) -> Vec<u8> {
        let mut f = (len as u32).to_be_bytes().to_vec();
        f.resize(4 + len, 7);
        f
    }

    #[tokio::test]
    async fn a_message_left_half_sent_closes_the_connection_an_idle_one_does_not() {
        let limits = Limits::new(1 << 20, Duration::from_millis(200));
        let (mut client, mut server) = pair().await;
        let mut buf = Vec::new();
        // Idle, between messages: still waiting after several stall periods.
        let idle = tokio::time::timeout(Duration::from_millis(700), read_frame(&mut server, &mut buf, &limits)).await;
        assert!(idle.is_err(), "an idle connection was given up: {idle:?}");
        // Half a frame, then nothing: refused once the stall period passes.
        client.write_all(&frame(100)[..50]).await.expect("write");
        match read_frame(&mut server, &mut buf, &limits).await {
            Err(ConnError::Stalled { have: 50, .. }) => {}
            other => panic!("{other:?}"),
        }
        // Half a header: the same.
        let (mut client, mut server) = pair().await;
        client.write_all(&[0, 0]).await.expect("write");
        let mut buf = Vec::new();
        assert!(matches!(read_frame(&mut server, &mut buf, &limits).await, Err(ConnError::Stalled { have: 2, .. })));
    }

    #[tokio::test]
    async fn large_frames_still_arriving_share_one_budget() {
        // Room for one 40 KiB frame at a time.
        let limits = Arc::new(Limits {
            max: 1 << 20,
            budget: Semaphore::new(64),
            budget_kib: 64,
            stall: Duration::from_secs(10),
        });
        let (mut first, mut first_server) = pair().await;
        let (mut second, mut second_server) = pair().await;
        let big = frame(40 << 10);
        first.write_all(&big[..1000]).await.expect("write");
        let l = limits.clone();
        let first_read = tokio::spawn(async move {
            let mut buf = Vec::new();
            read_frame(&mut first_server, &mut buf, &l).await.map(|m| m.map(|r| r.len()))
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        second.write_all(&big).await.expect("write");
        let l = limits.clone();
        let mut second_read = tokio::spawn(async move {
            let mut buf = Vec::new();
            read_frame(&mut second_server, &mut buf, &l).await.map(|m| m.map(|r| r.len()))
        });
        // The second waits for the first's share, although all its bytes are there to read.
        assert!(tokio::time::timeout(Duration::from_millis(300), &mut second_read).await.is_err());
        // A small frame meanwhile needs no share.
        let (mut small, mut small_server) = pair().await;
        small.write_all(&frame(100)).await.expect("write");
        let mut buf = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), read_frame(&mut small_server, &mut buf, &limits)).await;
        assert_eq!(read.expect("in time").expect("small frame"), Some(4..104));
        first.write_all(&big[1000..]).await.expect("write");
        assert_eq!(first_read.await.expect("task").expect("first frame"), Some(40 << 10));
        let second = tokio::time::timeout(Duration::from_secs(5), second_read).await.expect("in time");
        assert_eq!(second.expect("task").expect("second frame"), Some(40 << 10));
        // Every share was given back.
        assert_eq!(limits.budget.available_permits(), 64);
    }
}
