//! Redis' protocol (RESP2), so that the same load generator drives Redis and Sibyl: `SET key
//! value` for an insert, `GET key` for a read, one command in flight per connection, no
//! pipelining, each command sent with one write from a reused buffer — the same discipline as
//! the Thrift connection in [`crate::wire`].
//!
//! Commands are arrays of bulk strings (`*3\r\n$3\r\nSET\r\n$10\r\n<key>\r\n$100\r\n<value>\r\n`).
//! Replies are parsed only as far as the run needs: their type, a bulk string's length, an
//! error's text; nothing of a value is copied.

use std::io::Write as _;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::wire::{clear_read_readiness, connect_nodelay};

/// Largest reply accepted: a bulk string or line longer than this is a protocol error.
const MAX_REPLY: usize = 64 * 1024 * 1024;
/// Nesting of arrays accepted in a reply.
const MAX_DEPTH: u32 = 32;

/// A reply, without its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RespReply {
    /// `+OK` and other simple strings.
    Status,
    /// `-ERR ...`: the server refused the command (the connection stays usable).
    Error(String),
    Integer(i64),
    /// A bulk string of this many bytes.
    Bulk(usize),
    /// `$-1` (GET of a missing key) or `*-1`.
    Nil,
    /// An array of this many elements (their contents are checked and skipped).
    Array(usize),
}

/// Why bytes received are not a RESP reply, or the connection failed.
#[derive(Debug, thiserror::Error)]
pub enum RespError {
    #[error("unknown reply type byte 0x{0:02x}")]
    UnknownType(u8),
    #[error("reply line is not a number: {0:?}")]
    BadNumber(String),
    #[error("bulk string of {0} bytes is not followed by CRLF")]
    MissingCrlf(usize),
    #[error("reply larger than {MAX_REPLY} bytes")]
    TooLarge,
    #[error("reply arrays nested deeper than {MAX_DEPTH}")]
    TooDeep,
    #[error("{0} bytes after the reply")]
    TrailingBytes(usize),
    #[error("server closed the connection")]
    Closed,
    #[error("no reply within {0:?}")]
    TimedOut(Duration),
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

/// Appends one command, an array of bulk strings, to `buf`.
pub fn encode_command(buf: &mut Vec<u8>, args: &[&[u8]]) {
    // Writing into a Vec cannot fail.
    let _ = write!(buf, "*{}\r\n", args.len());
    for a in args {
        let _ = write!(buf, "${}\r\n", a.len());
        buf.extend_from_slice(a);
        buf.extend_from_slice(b"\r\n");
    }
}

/// The position just past the CRLF that ends the line starting at `from`, and the line;
/// `None` when the line is not complete yet.
fn line(buf: &[u8], from: usize) -> Result<Option<(&[u8], usize)>, RespError> {
    let rest = buf.get(from..).unwrap_or_default();
    match rest.windows(2).position(|w| w == b"\r\n") {
        Some(end) => Ok(rest.get(..end).map(|l| (l, from + end + 2))),
        None if rest.len() > MAX_REPLY => Err(RespError::TooLarge),
        None => Ok(None),
    }
}

fn number(text: &[u8]) -> Result<i64, RespError> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| RespError::BadNumber(String::from_utf8_lossy(text).into_owned()))
}

/// Parses the reply at `from` in `buf`: `Ok(None)` while it is incomplete, else the reply and
/// the position just after it.
fn parse_at(buf: &[u8], from: usize, depth: u32) -> Result<Option<(RespReply, usize)>, RespError> {
    let Some(&kind) = buf.get(from) else { return Ok(None) };
    let Some((text, next)) = line(buf, from + 1)? else { return Ok(None) };
    let reply = match kind {
        b'+' => RespReply::Status,
        b'-' => RespReply::Error(String::from_utf8_lossy(text).into_owned()),
        b':' => RespReply::Integer(number(text)?),
        b'$' => match number(text)? {
            -1 => RespReply::Nil,
            n => {
                let len = usize::try_from(n).map_err(|_| RespError::BadNumber(n.to_string()))?;
                if len > MAX_REPLY {
                    return Err(RespError::TooLarge);
                }
                let end = next + len;
                return match buf.get(end..end + 2) {
                    None => Ok(None),
                    Some(b"\r\n") => Ok(Some((RespReply::Bulk(len), end + 2))),
                    Some(_) => Err(RespError::MissingCrlf(len)),
                };
            }
        },
        b'*' => match number(text)? {
            -1 => RespReply::Nil,
            n => {
                let count = usize::try_from(n).map_err(|_| RespError::BadNumber(n.to_string()))?;
                let depth = depth.checked_sub(1).ok_or(RespError::TooDeep)?;
                let mut at = next;
                for _ in 0..count {
                    match parse_at(buf, at, depth)? {
                        Some((_, after)) => at = after,
                        None => return Ok(None),
                    }
                }
                return Ok(Some((RespReply::Array(count), at)));
            }
        },
        other => return Err(RespError::UnknownType(other)),
    };
    Ok(Some((reply, next)))
}

/// Parses one reply from the front of `buf`: `Ok(None)` while more bytes are needed, else the
/// reply and how many bytes it took.
pub fn parse_reply(buf: &[u8]) -> Result<Option<(RespReply, usize)>, RespError> {
    parse_at(buf, 0, MAX_DEPTH)
}

/// One connection to a RESP server with one command in flight at a time.
pub struct RespConn {
    stream: TcpStream,
    timeout: Duration,
    /// The command being sent (reused).
    out: Vec<u8>,
    /// Reply bytes received and not yet parsed.
    inbuf: Vec<u8>,
}

impl RespConn {
    /// Connects (with `timeout`) and sets `TCP_NODELAY`.
    pub async fn connect(host: &str, port: u16, timeout: Duration) -> std::io::Result<RespConn> {
        let stream = connect_nodelay(host, port, timeout).await?;
        Ok(RespConn { stream, timeout, out: Vec::with_capacity(4096), inbuf: Vec::with_capacity(64 * 1024) })
    }

    /// Sends `args` as one command and waits for its reply, within the timeout. An `Err`
    /// means the connection is out of step (or gone) and must be dropped; a server's `-ERR`
    /// is an `Ok(RespReply::Error)`.
    pub async fn command(&mut self, args: &[&[u8]]) -> Result<RespReply, RespError> {
        self.out.clear();
        encode_command(&mut self.out, args);
        let timeout = self.timeout;
        let r = match tokio::time::timeout(timeout, self.exchange()).await {
            Ok(r) => r,
            Err(_) => Err(RespError::TimedOut(timeout)),
        };
        clear_read_readiness(&self.stream);
        r
    }

    async fn exchange(&mut self) -> Result<RespReply, RespError> {
        self.stream.write_all(&self.out).await?;
        self.inbuf.clear();
        loop {
            if let Some((reply, used)) = parse_reply(&self.inbuf)? {
                // One command in flight: anything after its reply is out of step.
                if used != self.inbuf.len() {
                    return Err(RespError::TrailingBytes(self.inbuf.len() - used));
                }
                return Ok(reply);
            }
            if self.inbuf.capacity() == self.inbuf.len() {
                self.inbuf.reserve(self.inbuf.len().max(4096));
            }
            if self.stream.read_buf(&mut self.inbuf).await? == 0 {
                return Err(RespError::Closed);
            }
        }
    }

    /// `SET key value`; anything but a status reply is an error.
    pub async fn set(&mut self, key: &[u8], value: &[u8]) -> Result<RespReply, RespError> {
        self.command(&[b"SET", key, value]).await
    }

    /// `GET key`: `Bulk(len)` or `Nil` for a missing key.
    pub async fn get(&mut self, key: &[u8]) -> Result<RespReply, RespError> {
        self.command(&[b"GET", key]).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_arrays_of_bulk_strings() {
        let mut buf = b"leftover".to_vec();
        buf.clear();
        encode_command(&mut buf, &[b"SET", b"0000000042", &[0u8, 0xff, b'\r', b'\n']]);
        assert_eq!(buf, b"*3\r\n$3\r\nSET\r\n$10\r\n0000000042\r\n$4\r\n\x00\xff\r\n\r\n");
        buf.clear();
        encode_command(&mut buf, &[b"GET", b"k"]);
        assert_eq!(buf, b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
        buf.clear();
        encode_command(&mut buf, &[b"SET", b"", &[7u8; 100]]);
        assert!(buf.starts_with(b"*3\r\n$3\r\nSET\r\n$0\r\n\r\n$100\r\n"));
        assert_eq!(buf.len(), 4 + 9 + 6 + 6 + 100 + 2);
    }

    fn whole(bytes: &[u8]) -> RespReply {
        match parse_reply(bytes) {
            Ok(Some((r, used))) => {
                assert_eq!(used, bytes.len(), "{bytes:?}");
                r
            }
            other => panic!("{bytes:?} did not parse: {other:?}"),
        }
    }

    #[test]
    fn each_reply_type_parses() {
        assert_eq!(whole(b"+OK\r\n"), RespReply::Status);
        assert_eq!(
            whole(b"-ERR wrong number of arguments\r\n"),
            RespReply::Error("ERR wrong number of arguments".into())
        );
        assert_eq!(whole(b":-42\r\n"), RespReply::Integer(-42));
        assert_eq!(whole(b"$5\r\nhello\r\n"), RespReply::Bulk(5));
        // A value may hold CRLF: bulk strings are read by length, not by line.
        assert_eq!(whole(b"$4\r\n\r\n\r\n\r\n"), RespReply::Bulk(4));
        assert_eq!(whole(b"$0\r\n\r\n"), RespReply::Bulk(0));
        assert_eq!(whole(b"$-1\r\n"), RespReply::Nil);
        assert_eq!(whole(b"*-1\r\n"), RespReply::Nil);
        assert_eq!(whole(b"*0\r\n"), RespReply::Array(0));
        assert_eq!(whole(b"*3\r\n$1\r\na\r\n*2\r\n:1\r\n$-1\r\n+x\r\n"), RespReply::Array(3));
    }

    #[test]
    fn replies_split_anywhere_wait_for_more() {
        let replies: [&[u8]; 5] =
            [b"+OK\r\n", b"-ERR x\r\n", b"$10\r\n0123456789\r\n", b"$-1\r\n", b"*2\r\n$1\r\na\r\n:7\r\n"];
        for r in replies {
            for cut in 0..r.len() {
                assert!(matches!(parse_reply(&r[..cut]), Ok(None)), "{r:?} cut at {cut}");
            }
            // Two replies back to back: the first is taken alone.
            let two = [r, r].concat();
            let (_, used) = parse_reply(&two).unwrap().unwrap();
            assert_eq!(used, r.len());
        }
    }

    #[test]
    fn malformed_replies_are_errors() {
        assert!(matches!(parse_reply(b"?what\r\n"), Err(RespError::UnknownType(b'?'))));
        assert!(matches!(parse_reply(b":12a\r\n"), Err(RespError::BadNumber(_))));
        assert!(matches!(parse_reply(b"$abc\r\n"), Err(RespError::BadNumber(_))));
        assert!(matches!(parse_reply(b"$-2\r\n"), Err(RespError::BadNumber(_))));
        assert!(matches!(parse_reply(b"$3\r\nabcd\r\n"), Err(RespError::MissingCrlf(3))));
        assert!(matches!(parse_reply(b"$999999999999\r\n"), Err(RespError::TooLarge)));
        let deep = "*1\r\n".repeat(MAX_DEPTH as usize + 1) + ":1\r\n";
        assert!(matches!(parse_reply(deep.as_bytes()), Err(RespError::TooDeep)));
        let ok_depth = "*1\r\n".repeat(MAX_DEPTH as usize) + ":1\r\n";
        assert_eq!(whole(ok_depth.as_bytes()), RespReply::Array(1));
    }

    /// A one-connection server that answers each command it reads with the next canned reply,
    /// sending it in pieces of `chunk` bytes to exercise replies split across reads.
    async fn canned_server(replies: Vec<Vec<u8>>, chunk: usize) -> (u16, tokio::task::JoinHandle<Vec<u8>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let task = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut got = Vec::new();
            for reply in replies {
                let mut buf = [0u8; 4096];
                let n = s.read(&mut buf).await.unwrap();
                got.extend_from_slice(&buf[..n]);
                for piece in reply.chunks(chunk) {
                    s.write_all(piece).await.unwrap();
                    s.flush().await.unwrap();
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
            }
            got
        });
        (port, task)
    }

    #[tokio::test]
    async fn connection_sends_commands_and_reads_split_replies() {
        let replies =
            vec![b"+OK\r\n".to_vec(), b"$3\r\nabc\r\n".to_vec(), b"$-1\r\n".to_vec(), b"-ERR no\r\n".to_vec()];
        let (port, server) = canned_server(replies, 2).await;
        let mut c = RespConn::connect("127.0.0.1", port, Duration::from_secs(5)).await.unwrap();
        assert_eq!(c.set(b"k", b"abc").await.unwrap(), RespReply::Status);
        assert_eq!(c.get(b"k").await.unwrap(), RespReply::Bulk(3));
        assert_eq!(c.get(b"missing").await.unwrap(), RespReply::Nil);
        assert_eq!(c.get(b"x").await.unwrap(), RespReply::Error("ERR no".into()));
        drop(c);
        let sent = tokio::time::timeout(Duration::from_secs(5), server).await.unwrap().unwrap();
        assert_eq!(
            sent,
            b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nabc\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n\
              *2\r\n$3\r\nGET\r\n$7\r\nmissing\r\n*2\r\n$3\r\nGET\r\n$1\r\nx\r\n"
        );
    }

    #[tokio::test]
    async fn trailing_bytes_closed_connections_and_silence_are_errors() {
        let (port, _server) = canned_server(vec![b"+OK\r\n+OK\r\n".to_vec()], 64).await;
        let mut c = RespConn::connect("127.0.0.1", port, Duration::from_secs(5)).await.unwrap();
        // Two replies to one command, sent with one write (so they arrive together on
        // loopback): the stream is out of step.
        assert!(matches!(c.set(b"k", b"v").await, Err(RespError::TrailingBytes(5))));

        let (port, _server) = canned_server(vec![], 1).await;
        let mut c = RespConn::connect("127.0.0.1", port, Duration::from_secs(5)).await.unwrap();
        assert!(matches!(c.get(b"k").await, Err(RespError::Closed | RespError::Io(_))));

        // A server that accepts and never answers: the timeout ends the wait.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut c = RespConn::connect("127.0.0.1", port, Duration::from_millis(200)).await.unwrap();
        let (_held, _) = listener.accept().await.unwrap();
        assert!(matches!(c.get(b"k").await, Err(RespError::TimedOut(_))));
    }
}
