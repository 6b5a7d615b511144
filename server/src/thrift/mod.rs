//! The Thrift front end: accepts connections on the RPC port, reads whole messages (framed or
//! unframed, detected per connection) on the tokio runtime, runs each through the generated
//! processor on a request executor thread ([`executor`]: handlers may block on disk, runtime
//! threads never do), and writes the reply.

pub mod convert;
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
use executor::{Executor, SubmitError};
use handler::{Handler, Session};
use wire::{looks_unframed, measure_unframed, Measure};

/// Accepts clients until `shutdown` turns true.
pub async fn serve(listener: TcpListener, node: Arc<Node>, mut shutdown: watch::Receiver<bool>) {
    let executor = match Executor::for_this_machine() {
        Ok(executor) => executor,
        Err(e) => {
            warn!(error = %e, "could not start the request executors; not accepting thrift clients");
            return;
        }
    };
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let node = node.clone();
                    let executor = executor.clone();
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(async move {
                        if let Err(e) = connection(stream, node, executor).await {
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
    #[error("request not run: {0}")]
    Executor(#[from] SubmitError),
}

async fn connection(mut stream: TcpStream, node: Arc<Node>, executor: Executor) -> Result<(), ConnError> {
    let max = node.max_message_bytes;
    let session = Arc::new(parking_lot::Mutex::new(Session::default()));
    let processor: Arc<Processor> =
        Arc::new(thrift_idl::CassandraSyncProcessor::new(Handler::new(node, session.clone())));
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
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
        // The handler may block on disk (SSTable reads, batch-mode fsync): it runs on an executor
        // thread while this task waits without holding a runtime thread.
        let p = processor.clone();
        let reply = executor.run(move || run_processor(&p, message, framed, trace)).await?;
        stream.write_all(&reply).await?;
    }
}

/// Runs one message through the processor; the reply comes back ready to send, with its frame
/// length in front for framed connections (one write, one packet).
fn run_processor(processor: &Processor, message: Vec<u8>, framed: bool, trace: Option<uuid::Uuid>) -> Vec<u8> {
    let started = std::time::Instant::now();
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
    if let (Some(id), Some(method)) = (trace, method) {
        info!(session = %id, method, elapsed_us = started.elapsed().as_micros() as u64, reply_bytes = out.len(), "trace: request complete");
    }
    out
}

type Processor = thrift_idl::CassandraSyncProcessor<Handler>;

/// Reads one length-prefixed frame; `None` at a clean end of stream.
async fn read_frame(stream: &mut TcpStream, buf: &mut Vec<u8>, max: usize) -> Result<Option<Vec<u8>>, ConnError> {
    while buf.len() < 4 {
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
    buf.reserve(size + 4 - buf.len().min(size + 4));
    while buf.len() < size + 4 {
        if stream.read_buf(buf).await? == 0 {
            return Err(ConnError::Malformed("connection closed inside a frame"));
        }
    }
    let rest = buf.split_off(size + 4);
    let mut frame = std::mem::replace(buf, rest);
    frame.drain(..4);
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
                Measure::Complete(n) => {
                    let rest = buf.split_off(n);
                    return Ok(Some(std::mem::replace(buf, rest)));
                }
                Measure::Invalid(why) => return Err(ConnError::Malformed(why)),
                Measure::Incomplete => {}
            }
            if buf.len() > max {
                warn!(size = buf.len(), max, "refusing oversized unframed message; closing connection");
                return Err(ConnError::FrameTooLarge { size: buf.len(), max });
            }
        }
        buf.reserve(64 * 1024);
        if stream.read_buf(buf).await? == 0 {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(ConnError::Malformed("connection closed inside a message"))
            };
        }
    }
}
