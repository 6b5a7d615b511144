//! `sibyltool`, the admin tool of a Sibyl node (Cassandra's nodetool). This library is its client
//! side: [`Client`], a blocking connection to a node's admin interface speaking the messages of
//! the `admin_protocol` crate, with [`ToolError`] for what can go wrong; [`ProgressDisplay`], the
//! terminal progress bar; and [`render`], the human-readable output of every result. The command
//! line is in `main.rs`. It links no server code: the node is reached only over TCP.

pub mod render;

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use serde::de::DeserializeOwned;

use admin_protocol::{ErrorReply, Progress, ProtocolError, Reply, Request, MAX_REPLY_LINE};

/// How long a connection attempt may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("cannot connect to sibyl admin interface at {addr}: {source}")]
    Connect { addr: String, source: std::io::Error },
    #[error("cannot resolve {addr}: no address found")]
    NoAddress { addr: String },
    #[error("connection to {addr} failed: {source}")]
    Io { addr: String, source: std::io::Error },
    #[error("no answer from {addr} for {seconds} s (the node may be stuck; see its log)")]
    Timeout { addr: String, seconds: u64 },
    #[error("{addr} closed the connection before answering")]
    Closed { addr: String },
    #[error("a reply line from {addr} is longer than {MAX_REPLY_LINE} bytes")]
    ReplyTooLong { addr: String },
    #[error("{0}")]
    Protocol(#[from] ProtocolError),
    /// The node answered with an error.
    #[error("{}", .0.message)]
    Node(ErrorReply),
}

impl ToolError {
    /// The process exit code: 1 when the node refused or failed the command, 3 when it could
    /// not be reached or answered nonsense (2 is clap's usage error).
    pub fn exit_code(&self) -> u8 {
        match self {
            ToolError::Node(_) => 1,
            _ => 3,
        }
    }
}

/// One connection to a node's admin interface.
pub struct Client {
    addr: String,
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    silence: Duration,
}

impl Client {
    /// Connects to `host:port`. `silence` bounds the wait for each reply line (long operations
    /// send a progress line at least every `server::admin::HEARTBEAT`, 5 s).
    pub fn connect(host: &str, port: u16, silence: Duration) -> Result<Client, ToolError> {
        let addr = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let candidates: Vec<_> =
            addr.to_socket_addrs().map_err(|source| ToolError::Connect { addr: addr.clone(), source })?.collect();
        let mut last = None;
        for candidate in candidates {
            match TcpStream::connect_timeout(&candidate, CONNECT_TIMEOUT) {
                Ok(stream) => {
                    let io = |source| ToolError::Io { addr: addr.clone(), source };
                    stream.set_read_timeout(Some(silence)).map_err(io)?;
                    stream.set_write_timeout(Some(silence)).map_err(io)?;
                    let _ = stream.set_nodelay(true);
                    let writer = stream.try_clone().map_err(io)?;
                    return Ok(Client { addr, reader: BufReader::new(stream), writer, silence });
                }
                Err(e) => last = Some(e),
            }
        }
        Err(match last {
            Some(source) => ToolError::Connect { addr, source },
            None => ToolError::NoAddress { addr },
        })
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Sends `request` and returns the node's result, passing progress lines to `on_progress`.
    pub fn call(
        &mut self,
        request: &Request,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Result<serde_json::Value, ToolError> {
        let line = request.encode_line()?;
        self.writer.write_all(line.as_bytes()).map_err(|e| self.io_error(e))?;
        loop {
            let line = self.read_reply_line()?;
            match Reply::decode_line(&line)? {
                Reply::Progress(p) => on_progress(&p),
                Reply::Ok(value) => return Ok(value),
                Reply::Error(e) => return Err(ToolError::Node(e)),
            }
        }
    }

    /// [`Client::call`], decoding the result as `T`.
    pub fn call_as<T: DeserializeOwned>(
        &mut self,
        request: &Request,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Result<T, ToolError> {
        let value = self.call(request, on_progress)?;
        decode_result(request, value)
    }

    fn io_error(&self, source: std::io::Error) -> ToolError {
        match source.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                ToolError::Timeout { addr: self.addr.clone(), seconds: self.silence.as_secs() }
            }
            _ => ToolError::Io { addr: self.addr.clone(), source },
        }
    }

    fn read_reply_line(&mut self) -> Result<Vec<u8>, ToolError> {
        let mut line = Vec::new();
        loop {
            let available = match self.reader.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io_error(e)),
            };
            if available.is_empty() {
                return Err(ToolError::Closed { addr: self.addr.clone() });
            }
            let (take, found) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            let body = if found { take - 1 } else { take };
            if line.len() + body > MAX_REPLY_LINE {
                return Err(ToolError::ReplyTooLong { addr: self.addr.clone() });
            }
            line.extend_from_slice(available.get(..body).unwrap_or_default());
            self.reader.consume(take);
            if found {
                return Ok(line);
            }
        }
    }
}

/// Decodes a result value as the type the request's operation answers with.
pub fn decode_result<T: DeserializeOwned>(request: &Request, value: serde_json::Value) -> Result<T, ToolError> {
    serde_json::from_value(value)
        .map_err(|e| ToolError::Protocol(ProtocolError::BadResult(format!("{}: {e}", request.op()))))
}

/// Shows progress on stderr: a bar redrawn in place on a terminal, plain lines otherwise (one
/// per change, so logs do not fill with heartbeats).
pub struct ProgressDisplay {
    tty: bool,
    last: Option<Progress>,
    drawn: bool,
}

impl ProgressDisplay {
    pub fn new() -> ProgressDisplay {
        ProgressDisplay { tty: std::io::stderr().is_terminal(), last: None, drawn: false }
    }

    /// A display that never redraws, as when stderr is not a terminal.
    pub fn plain() -> ProgressDisplay {
        ProgressDisplay { tty: false, last: None, drawn: false }
    }

    pub fn update(&mut self, p: &Progress) {
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r{}\x1b[K", bar_line(p, 30));
            let _ = err.flush();
            self.drawn = true;
        } else if self.last.as_ref() != Some(p) {
            let _ = writeln!(err, "{}", plain_line(p));
        }
        self.last = Some(p.clone());
    }

    /// Ends the bar's line, so later output starts on a fresh one.
    pub fn finish(&mut self) {
        if self.drawn {
            let _ = writeln!(std::io::stderr());
            self.drawn = false;
        }
    }
}

impl Default for ProgressDisplay {
    fn default() -> Self {
        ProgressDisplay::new()
    }
}

/// `[#########...........]  3/10  flushing Keyspace1.Standard1`
pub fn bar_line(p: &Progress, width: usize) -> String {
    let filled = if p.total == 0 { width } else { (p.done.min(p.total) as usize * width) / p.total as usize };
    format!("[{}{}] {:>3}/{} {}", "#".repeat(filled), ".".repeat(width - filled), p.done, p.total, p.what)
}

/// `[3/10] flushing Keyspace1.Standard1`
pub fn plain_line(p: &Progress) -> String {
    format!("[{}/{}] {}", p.done, p.total, p.what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_bar_fills_in_proportion() {
        let p = |done, total| Progress { done, total, what: "x".into() };
        assert_eq!(bar_line(&p(0, 4), 8), "[........]   0/4 x");
        assert_eq!(bar_line(&p(1, 4), 8), "[##......]   1/4 x");
        assert_eq!(bar_line(&p(4, 4), 8), "[########]   4/4 x");
        // Nothing to do counts as done; a bad `done` cannot overflow the bar.
        assert_eq!(bar_line(&p(0, 0), 4), "[####]   0/0 x");
        assert_eq!(bar_line(&p(9, 4), 4), "[####]   9/4 x");
        assert_eq!(plain_line(&p(3, 10)), "[3/10] x");
    }

    #[test]
    fn exit_codes_tell_node_errors_from_connection_errors() {
        let node = ToolError::Node(ErrorReply { kind: admin_protocol::ErrorKind::Drained, message: "m".into() });
        assert_eq!(node.exit_code(), 1);
        assert_eq!(node.to_string(), "m");
        let closed = ToolError::Closed { addr: "a".into() };
        assert_eq!(closed.exit_code(), 3);
    }

    #[test]
    fn connection_refused_names_the_address() {
        // Bind and drop a listener to find a port nothing listens on.
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port());
        let port = port.expect("free port");
        let err = Client::connect("127.0.0.1", port, Duration::from_secs(1)).err().expect("refused");
        let msg = err.to_string();
        assert!(msg.starts_with(&format!("cannot connect to sibyl admin interface at 127.0.0.1:{port}: ")), "{msg}");
        assert_eq!(err.exit_code(), 3);
    }
}
