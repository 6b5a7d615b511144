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
mod describe;
pub mod dispatch;
pub mod error;
pub mod event_loop;
pub mod expiry;
pub mod handler;
mod reads;
pub mod session;
pub mod v06;
pub mod validate;
pub mod wire;
mod writes;

use std::ops::Range;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tracing::{debug, info, warn};

use event_loop::EventLoops;
use handler::{Handler, ThriftContext};
use wire::{looks_unframed, Measure, Scan};

/// How the front end listens and reads.
#[derive(Clone, Copy, Debug)]
pub struct ServeOptions {
    /// Largest Thrift message accepted, framed or not.
    pub max_message_bytes: usize,
    /// Event-loop threads; 0 means the default ([`event_loop::default_count`]).
    pub event_loops: usize,
}

/// Accepts clients until `shutdown` turns true.
pub async fn serve(
    listener: TcpListener,
    ctx: Arc<ThriftContext>,
    options: ServeOptions,
    mut shutdown: watch::Receiver<bool>,
) {
    let loops = match EventLoops::start(options.event_loops) {
        Ok(loops) => loops,
        Err(e) => {
            warn!(error = %e, "could not start the event loops; not accepting thrift clients");
            return;
        }
    };
    info!(event_loops = loops.count(), "thrift event loops started");
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
                    let ctx = ctx.clone();
                    loops.next().spawn(async move {
                        let result = match TcpStream::from_std(stream) {
                            Ok(stream) => connection(stream, ctx, options.max_message_bytes).await,
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
            _ = shutdown.changed() => {
                info!("no longer accepting thrift clients");
                loops.stop();
                return;
            }
        }
    }
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
    #[error(transparent)]
    BadHeader(#[from] dispatch::BadHeader),
}

async fn connection(mut stream: TcpStream, ctx: Arc<ThriftContext>, max: usize) -> Result<(), ConnError> {
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
    loop {
        let message = if framed {
            read_frame(&mut stream, &mut buf, max).await?
        } else {
            let message = read_unframed(&mut stream, &mut buf, max, &mut scan).await?;
            scan = Scan::default();
            message
        };
        let Some(message) = message else { return Ok(()) };
        // The frame length goes in front once the reply is known: one write, one packet.
        let start = reply.len();
        let header = if framed { 4 } else { 0 };
        reply.resize(start + header, 0);
        // Decoded where it was received; its bytes are dropped once the call has run.
        let dispatched = generations.dispatch(&mut handler, &buf[message.clone()], &mut reply).await;
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
        if holds_whole_message(&buf, framed, max, &mut scan) {
            continue; // pipelined calls are answered together, in one write
        }
        if reply.is_empty() {
            continue;
        }
        // Let the loop's other connections that are ready run their calls first, so their
        // replies go out in one burst after this one, as Redis writes its replies after reading
        // every ready client. A client then finds several replies per wakeup instead of sleeping
        // between each: with 64 connections that cut the client's context switches from 0.15 to
        // 0.03 per request and the kernel time of both sides (bench/redis-vs-sibyl.sh).
        tokio::task::yield_now().await;
        stream.write_all(&reply).await?;
        reply.clear();
        if reply.capacity() > MAX_KEPT_READ_BUFFER {
            reply = Vec::with_capacity(256);
        }
    }
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
async fn read_frame(stream: &mut TcpStream, buf: &mut Vec<u8>, max: usize) -> Result<Option<Range<usize>>, ConnError> {
    while buf.len() < 4 {
        buf.reserve(READ_CHUNK);
        if stream.read_buf(buf).await? == 0 {
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
    if size > max {
        warn!(size, max, "refusing oversized frame; closing connection");
        return Err(ConnError::FrameTooLarge { size, max });
    }
    buf.reserve((size + 4).saturating_sub(buf.len()));
    while buf.len() < size + 4 {
        if stream.read_buf(buf).await? == 0 {
            return Err(ConnError::Malformed("connection closed inside a frame"));
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
    max: usize,
    scan: &mut Scan,
) -> Result<Option<Range<usize>>, ConnError> {
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
        if stream.read_buf(buf).await? == 0 {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(ConnError::Malformed("connection closed inside a message"))
            };
        }
    }
}
