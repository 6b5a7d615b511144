//! The node's admin interface, spoken by `sibyltool` (Cassandra's JMX + nodetool, as a small
//! line protocol instead of JMX).
//!
//! # Transport
//!
//! Plain TCP on `AdminAddress:AdminPort` from storage-conf.xml (default `127.0.0.1:7199`). There
//! is no authentication: anyone who can connect can flush, compact and drain the node, so keep
//! the address on loopback or a private network.
//!
//! # Framing
//!
//! Newline-delimited JSON, UTF-8, in both directions. A connection carries any number of
//! requests, one at a time: the client writes one request line, reads reply lines until the
//! final one, then may send the next request.
//!
//! ```text
//! client → {"op":"flush","keyspace":"Keyspace1","cfs":["Standard1"],"v":1}
//! node   ← {"progress":{"done":0,"total":1,"what":"flushing Keyspace1.Standard1"}}
//! node   ← {"progress":{"done":1,"total":1,"what":"flushed 1 column family"}}
//! node   ← {"ok":{"column_families":[{"name":"Keyspace1.Standard1",...}]}}
//! ```
//!
//! - A request is a JSON object with the operation in `"op"` and its arguments as fields
//!   ([`admin_protocol::Request`] lists them all). `"v"` is the protocol version; absent means 1, any
//!   other value gets an `unsupported_version` error. Unknown fields are refused.
//! - The node answers zero or more `{"progress":{"done":D,"total":T,"what":"..."}}` lines, then
//!   exactly one final `{"ok":RESULT}` or `{"error":{"kind":KIND,"message":"..."}}`. While one
//!   step of a long operation runs (a big compaction), its progress line is repeated every
//!   [`HEARTBEAT`], so a client can treat a long silence as a dead node.
//! - Error kinds: `bad_request`, `unsupported_version`, `unknown_keyspace`,
//!   `unknown_column_family`, `not_supported`, `unavailable`, `drained`, `interrupted` (a
//!   compaction, cleanup or scrub stopped by a `stop` request), `storage`, `internal`.
//! - A malformed line (not UTF-8, not JSON, unknown op, bad field) gets a `bad_request` error and
//!   the connection stays open. So does a line longer than [`admin_protocol::MAX_REQUEST_LINE`]
//!   (1 MiB): it gets a `bad_request` error after it has been read to its newline and dropped,
//!   never held in memory.
//!
//! `docs/admin-protocol.md` has every operation with its result fields.
//!
//! # Execution
//!
//! Engine calls block on disk, so they run on tokio's blocking pool. Flush, compact and drain
//! work one column family at a time and report progress per column family. Drain takes the
//! operations lock exclusively, so it never overlaps a flush or compaction started from here.

mod maintenance;
pub mod ops;
mod reply;
mod state;
mod statistics;
mod toggles;
mod topology;

use std::sync::Arc;
use std::time::Duration;

use admin_protocol::{parse_request, ErrorKind, Reply, MAX_REQUEST_LINE};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tracing::{debug, info, warn};

use crate::node::Node;
use reply::ReplyWriter;
pub use reply::HEARTBEAT;
use state::AdminState;

/// Serves admin clients until `shutdown` turns true. Call it once, at node startup: `info`
/// reports uptime from this call.
pub async fn serve(listener: TcpListener, node: Arc<Node>, mut shutdown: watch::Receiver<bool>) {
    let state = Arc::new(AdminState::new(node));
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let state = state.clone();
                    tokio::spawn(async move {
                        if let Err(e) = connection(stream, state).await {
                            debug!(%peer, error = %e, "admin connection closed");
                        }
                    });
                }
                Err(e) => {
                    warn!(error = %e, "admin accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            _ = shutdown.changed() => {
                info!("admin interface stopped");
                return;
            }
        }
    }
}

async fn connection(stream: TcpStream, state: Arc<AdminState>) -> std::io::Result<()> {
    let _ = stream.set_nodelay(true);
    let peer = stream.peer_addr().map(|a| a.to_string()).unwrap_or_else(|_| "?".into());
    let (read, write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut out = ReplyWriter::new(write);
    serve_lines(&mut reader, &mut out, &state, &peer).await
}

/// The request loop of one connection, over any byte stream (tests use in-memory pipes).
pub(crate) async fn serve_lines<R, W>(
    reader: &mut R,
    out: &mut ReplyWriter<W>,
    state: &AdminState,
    peer: &str,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    loop {
        let line = match read_line_bounded(reader, MAX_REQUEST_LINE).await? {
            Line::Eof => return Ok(()),
            Line::TooLong => Err(format!("request line longer than {MAX_REQUEST_LINE} bytes")),
            Line::Complete(bytes) => Ok(bytes),
        };
        let reply = match line.as_deref().map(parse_request) {
            Err(message) => Reply::error(ErrorKind::BadRequest, message),
            Ok(parsed) => match parsed {
                Ok(request) => {
                    info!(%peer, op = request.op(), "admin request");
                    ops::execute(state, request, out).await
                }
                Err(e) => {
                    debug!(%peer, error = %e, "malformed admin request");
                    Reply::error(e.kind(), e.to_string())
                }
            },
        };
        out.send(&reply).await;
        if let Some(e) = out.broken.take() {
            return Err(e);
        }
    }
}

/// One request line as read off the wire.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// Without its `\n`. The last line of a stream may lack the newline.
    Complete(Vec<u8>),
    /// More than the limit before the newline; the whole line was read and dropped.
    TooLong,
    Eof,
}

/// Reads up to and including the next `\n`, keeping at most `max` bytes in memory. The rest of a
/// longer line is read and dropped, so the next line is found again.
pub(crate) async fn read_line_bounded<R: AsyncBufRead + Unpin>(reader: &mut R, max: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::Eof,
                (false, false) => Line::Complete(line),
            });
        }
        let (take, found) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let body = if found { take - 1 } else { take };
        if !too_long && line.len() + body > max {
            too_long = true;
            line = Vec::new();
        }
        if !too_long {
            line.extend_from_slice(available.get(..body).unwrap_or_default());
        }
        reader.consume(take);
        if found {
            return Ok(if too_long { Line::TooLong } else { Line::Complete(line) });
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_compaction;
