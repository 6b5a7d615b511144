//! The Thrift front end: accepts connections on the RPC port and hands each to one of the
//! event-loop threads ([`event_loop`]), which reads whole messages (framed or
//! unframed, detected per connection), runs each through the generated processor and writes the
//! reply.
//!
//! Where a request runs: short reads (at most 16 keys and 1000 columns asked for) and writes run
//! inline on the event loop, as Redis runs its commands. Handing them to another thread and back
//! cost more than the request itself (`bench/redis-vs-sibyl.sh`: 15 µs of server CPU per insert
//! inline against 20 µs through the executor). Everything that may take long runs on the request
//! executor ([`executor`]) so that it cannot stall the other connections of its loop: scans,
//! bigger reads, schema changes, truncation, login, messages over 16 KiB, and writes while
//! [`Storage::writes_may_block`] holds (batch-mode commit log, or flushes falling behind).
//! Inline reads may still pread SSTable blocks that neither the block cache nor the page cache
//! holds.
//!
//! [`Storage::writes_may_block`]: storage::Storage::writes_may_block

pub mod convert;
pub mod event_loop;
pub mod executor;
pub mod handler;
pub mod validate;
pub mod wire;

use std::io::Cursor;
use std::sync::Arc;

use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
use thrift::server::TProcessor;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tracing::{debug, info, warn};

use crate::node::Node;
use event_loop::EventLoops;
use executor::{Executor, SubmitError};
use handler::{Handler, Session};
use wire::{looks_unframed, measure_unframed, Measure};

/// Accepts clients until `shutdown` turns true.
pub async fn serve(listener: TcpListener, node: Arc<Node>, mut shutdown: watch::Receiver<bool>) {
    let started =
        Executor::for_this_machine().and_then(|executor| Ok((executor, EventLoops::start(node.event_loops)?)));
    let (executor, loops) = match started {
        Ok(started) => started,
        Err(e) => {
            warn!(error = %e, "could not start the request threads; not accepting thrift clients");
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
                    let node = node.clone();
                    let executor = executor.clone();
                    loops.next().spawn(async move {
                        let result = match TcpStream::from_std(stream) {
                            Ok(stream) => connection(stream, node, executor).await,
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

/// Requests that run inline on the event loop (see the module documentation): reads of a few
/// partitions and columns, quick metadata calls, and (unless writes may block) writes.
const INLINE_READS: &[&str] = &["get", "get_slice", "get_count", "multiget_slice", "multiget_count", "get_multi_slice"];
/// A read inline asks for at most this many keys and, in a slice, columns; a bigger one (say
/// a count of a million to fetch "all" columns) may walk a wide row and runs on the executor.
const INLINE_MAX_KEYS: usize = 16;
const INLINE_MAX_COLUMNS: i32 = 1000;
const INLINE_METADATA: &[&str] = &[
    "set_keyspace",
    "describe_version",
    "describe_cluster_name",
    "describe_partitioner",
    "describe_snitch",
    "describe_keyspace",
    "describe_keyspaces",
    "describe_schema_versions",
];
const INLINE_WRITES: &[&str] = &["insert", "remove", "batch_mutate", "atomic_batch_mutate"];
/// A larger message (a big batch or multiget) runs on the executor whatever its method.
const INLINE_MAX_MESSAGE: usize = 16 * 1024;

fn runs_inline(message: &[u8], node: &Node) -> bool {
    if message.len() > INLINE_MAX_MESSAGE {
        return false;
    }
    match wire::message_name(message) {
        Some(name) if INLINE_READS.contains(&name) => wire::read_size(message)
            .is_some_and(|size| size.keys <= INLINE_MAX_KEYS && size.count <= INLINE_MAX_COLUMNS),
        Some(name) if INLINE_METADATA.contains(&name) => true,
        Some(name) if INLINE_WRITES.contains(&name) => !node.storage.writes_may_block(),
        _ => false,
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
    #[error("request not run: {0}")]
    Executor(#[from] SubmitError),
    #[error("writes not acknowledged, the commit log failed: {0}")]
    Unacknowledged(storage::error::StorageError),
}

async fn connection(mut stream: TcpStream, node: Arc<Node>, executor: Executor) -> Result<(), ConnError> {
    let max = node.max_message_bytes;
    let session = Arc::new(parking_lot::Mutex::new(Session::default()));
    let processor: Arc<Processor> =
        Arc::new(thrift_idl::CassandraSyncProcessor::new(Handler::new(node.clone(), session.clone())));
    let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    // The first byte tells the transport: unframed strict binary starts with 0x80.
    if stream.read_buf(&mut buf).await? == 0 {
        return Ok(());
    }
    let framed = !looks_unframed(buf[0]);
    loop {
        let message = if framed {
            read_frame(&mut stream, &mut buf, max).await?
        } else {
            read_unframed(&mut stream, &mut buf, max).await?
        };
        let Some(message) = message else { return Ok(()) };
        let trace = session.lock().take_trace();
        let inline = runs_inline(&message, &node);
        let p = processor.clone();
        let run = move || storage::commitlog::defer_acks(|| run_processor(&p, message, framed, trace));
        let (reply, written) = if inline { run() } else { executor.run(run).await? };
        // The reply may acknowledge writes whose commit-log records are only queued: it goes out
        // once they are in a file. Yielding first lets this loop's other connections queue
        // theirs, so one write(2) takes them all.
        if let Some(written) = written {
            tokio::task::yield_now().await;
            written.await.map_err(ConnError::Unacknowledged)?;
        }
        stream.write_all(&reply).await?;
    }
}

/// Runs one message through the processor; the reply comes back ready to send, with its frame
/// length in front for framed connections (one write, one packet).
fn run_processor(processor: &Processor, message: Vec<u8>, framed: bool, trace: Option<uuid::Uuid>) -> Vec<u8> {
    // Only a traced request reads the clock.
    let started = trace.map(|_| std::time::Instant::now());
    let method = trace.map(|_| wire::message_name(&message).unwrap_or("?").to_string());
    let mut out = Vec::with_capacity(256);
    if framed {
        out.extend_from_slice(&[0; 4]);
    }
    {
        let mut input = TBinaryInputProtocol::new(Cursor::new(message), true);
        let mut output = TBinaryOutputProtocol::new(&mut out, true);
        if let Err(e) = processor.process(&mut input, &mut output) {
            debug!(error = %e, "processor reported an error");
        }
    }
    if framed {
        let len = (out.len() - 4) as u32;
        out[..4].copy_from_slice(&len.to_be_bytes());
    }
    if let (Some(id), Some(method), Some(started)) = (trace, method, started) {
        info!(session = %id, method, elapsed_us = started.elapsed().as_micros() as u64, reply_bytes = out.len(), "trace: request complete");
    }
    out
}

type Processor = thrift_idl::CassandraSyncProcessor<Handler>;

/// What a connection's read buffer keeps free for the next read: a whole small request (and
/// any the client pipelined behind it) arrives in one recv.
const READ_CHUNK: usize = 16 * 1024;
/// A read buffer grown past this for one big message is given back afterwards.
const MAX_KEPT_READ_BUFFER: usize = 1024 * 1024;

/// Copies `buf[from..end]` out as one message and drops `buf[..end]`, keeping the buffer's
/// capacity for the next read (unless one large message grew it).
fn take_message(buf: &mut Vec<u8>, from: usize, end: usize) -> Vec<u8> {
    let message = buf[from..end].to_vec();
    buf.drain(..end);
    if buf.capacity() > MAX_KEPT_READ_BUFFER && buf.len() < READ_CHUNK {
        buf.shrink_to(READ_CHUNK);
    }
    message
}

/// Reads one length-prefixed frame; `None` at a clean end of stream.
async fn read_frame(stream: &mut TcpStream, buf: &mut Vec<u8>, max: usize) -> Result<Option<Vec<u8>>, ConnError> {
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
    let frame = take_message(buf, 4, size + 4);
    // The frame must hold exactly one well-formed message: this also bounds every count the
    // message declares by the bytes actually received, before the generated decoder sees it.
    match measure_unframed(&frame) {
        Measure::Complete(n) if n == frame.len() => Ok(Some(frame)),
        Measure::Complete(_) => Err(ConnError::Malformed("frame holds more than one message")),
        Measure::Incomplete => Err(ConnError::Malformed("frame ends inside its message")),
        Measure::Invalid(why) => Err(ConnError::Malformed(why)),
    }
}

/// Reads one unframed message by walking its structure; `None` at a clean end of stream.
async fn read_unframed(stream: &mut TcpStream, buf: &mut Vec<u8>, max: usize) -> Result<Option<Vec<u8>>, ConnError> {
    loop {
        if !buf.is_empty() {
            match measure_unframed(buf) {
                Measure::Complete(n) => return Ok(Some(take_message(buf, 0, n))),
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
