//! Messaging errors. Callers see `NetError` (starting the service), `SendError` (a message could
//! not be queued) and `RequestError` (a request got no reply payload). `FrameError` and
//! `HandshakeError` say what was wrong with bytes from a peer; they close that connection and are
//! logged, never returned to a caller.

use std::time::Duration;

use crate::verb::Verb;
use crate::Endpoint;

/// A verb number this node does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("unknown verb {0}")]
pub struct UnknownVerb(pub u8);

/// The messaging service could not start.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: Endpoint, source: std::io::Error },
    /// Peers must be told an address they can reach us on; 0.0.0.0 or :: is none.
    #[error("listen address {0} is unspecified; give the address peers reach this node on")]
    UnspecifiedAddress(Endpoint),
    #[error("invalid messaging setting {field}: {detail}")]
    InvalidConfig { field: &'static str, detail: String },
    /// `start` runs tokio tasks, so it must be called inside a tokio runtime.
    #[error("the messaging service must be started inside a tokio runtime")]
    NoRuntime,
}

/// A message could not be queued for its peer. Nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The peer's queue holds `queue_capacity` messages already (a slow or dead peer).
    #[error("the queue to {peer} is full")]
    QueueFull { peer: Endpoint },
    /// The payload is over `max_message_bytes`; the peer would refuse it and drop the connection.
    #[error("message of {size} bytes is over the limit of {max} bytes")]
    MessageTooLarge { size: usize, max: usize },
    #[error("the messaging service is shutting down")]
    ShuttingDown,
}

/// A request got no reply payload.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// No reply within the verb's timeout (the peer may be dead, slow, or never answered).
    #[error("{verb} to {peer} timed out after {waited:?}")]
    Timeout { verb: Verb, peer: Endpoint, waited: Duration },
    /// The peer's handler failed (or the peer has no handler for the verb).
    #[error("{verb} failed on {peer}: {reason}")]
    Failure { verb: Verb, peer: Endpoint, reason: String },
    #[error("the queue to {peer} is full")]
    QueueFull { peer: Endpoint },
    #[error("message of {size} bytes is over the limit of {max} bytes")]
    MessageTooLarge { size: usize, max: usize },
    #[error("the messaging service is shutting down")]
    ShuttingDown,
}

impl From<SendError> for RequestError {
    fn from(e: SendError) -> RequestError {
        match e {
            SendError::QueueFull { peer } => RequestError::QueueFull { peer },
            SendError::MessageTooLarge { size, max } => RequestError::MessageTooLarge { size, max },
            SendError::ShuttingDown => RequestError::ShuttingDown,
        }
    }
}

/// What was wrong with a message frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("bad frame magic {got:#010x}")]
    BadMagic { got: u32 },
    #[error("frame of protocol version {got}, the connection speaks {expected}")]
    WrongVersion { got: u8, expected: u8 },
    #[error("bad frame flags {0:#04x}")]
    BadFlags(u8),
    #[error("payload of {len} bytes is over the limit of {max} bytes")]
    TooLarge { len: u64, max: usize },
    #[error("checksum mismatch: frame says {expected:#010x}, bytes give {got:#010x}")]
    ChecksumMismatch { expected: u32, got: u32 },
}

/// What was wrong with a handshake (either direction).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandshakeError {
    #[error("bad handshake magic {got:#010x}")]
    BadMagic { got: u32 },
    #[error("cluster name of {len} bytes is over the limit of {max}")]
    NameTooLong { len: usize, max: usize },
    #[error("cluster name is not UTF-8")]
    NameNotUtf8,
    #[error("bad address family {0}")]
    BadAddressFamily(u8),
    #[error("bad connection kind {0}")]
    BadConnectionKind(u8),
    #[error("bad handshake status {0}")]
    BadStatus(u8),
    #[error("handshake checksum mismatch: says {expected:#010x}, bytes give {got:#010x}")]
    ChecksumMismatch { expected: u32, got: u32 },
}

/// Why a connection ended badly. Logged with the peer; never reaches a caller.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectionError {
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error(transparent)]
    Handshake(#[from] HandshakeError),
    #[error("connection closed after {have} bytes of a {need}-byte {what}")]
    Truncated { what: &'static str, have: usize, need: usize },
    #[error("connection closed before the {0}")]
    Closed(&'static str),
    #[error("no {what} within {waited:?}")]
    TimedOut { what: &'static str, waited: Duration },
    #[error("peer speaks protocol version {theirs}; we speak {ours}")]
    UnsupportedVersion { theirs: u8, ours: u8 },
    #[error("peer is in cluster {theirs:?}; we are in {ours:?}")]
    ClusterNameMismatch { ours: String, theirs: String },
}
