//! Replies: a request is answered by [`Reply`] lines, zero or more of [`Progress`], then one
//! `ok` with the operation's result or one `error` ([`ErrorReply`], whose [`ErrorKind`] lets a
//! client decide without parsing the message); [`ProtocolError`] is the client's view of a reply
//! it cannot use.

use serde::{Deserialize, Serialize};

/// Longest reply line the client reads. Replies grow with the schema (cfstats lists every column
/// family), so this is generous; it only stops a runaway peer.
pub const MAX_REPLY_LINE: usize = 64 << 20;

/// Progress of a long operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Steps finished.
    pub done: u64,
    /// Steps in all (column families, for flush and compact).
    pub total: u64,
    /// What is being done now.
    pub what: String,
}

/// What a failed request's error says, so a client can decide without parsing the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request line was not a valid request.
    BadRequest,
    /// The request's protocol version is not this node's.
    UnsupportedVersion,
    UnknownKeyspace,
    UnknownColumnFamily,
    /// The operation exists but needs something not built yet: moving data for move,
    /// loadbalance and join.
    NotSupported,
    /// Other nodes the operation needs are down, failed or did not answer in time (repair).
    Unavailable,
    /// The node was drained: it no longer flushes, compacts or accepts writes.
    Drained,
    /// The operation (a compaction, cleanup or scrub) was stopped by a `stop` request before
    /// it finished; what it wrote was removed.
    Interrupted,
    /// The storage engine failed (I/O, corruption).
    Storage,
    /// Anything else on the node's side.
    Internal,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorReply {
    pub kind: ErrorKind,
    pub message: String,
}

/// One reply line. A request gets zero or more `Progress` lines, then one `Ok` or `Error`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    Progress(Progress),
    Ok(serde_json::Value),
    Error(ErrorReply),
}

impl Reply {
    pub fn error(kind: ErrorKind, message: impl Into<String>) -> Reply {
        Reply::Error(ErrorReply { kind, message: message.into() })
    }

    /// One line, newline included. Cannot fail for the types used here (string keys only), but
    /// falls back to an internal error line rather than panic.
    pub fn encode_line(&self) -> String {
        let mut line = serde_json::to_string(self).unwrap_or_else(|e| {
            format!(r#"{{"error":{{"kind":"internal","message":{}}}}}"#, serde_json::Value::String(e.to_string()))
        });
        line.push('\n');
        line
    }

    pub fn decode_line(line: &[u8]) -> Result<Reply, ProtocolError> {
        serde_json::from_slice(line).map_err(|e| ProtocolError::BadReply(e.to_string()))
    }
}

/// The client's view of a protocol failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("cannot encode request: {0}")]
    Encode(String),
    #[error("malformed reply from the node: {0}")]
    BadReply(String),
    #[error("the node's reply does not match the request: {0}")]
    BadResult(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_lines_have_the_documented_shape() {
        let p = Reply::Progress(Progress { done: 3, total: 10, what: "flushing Keyspace1.Standard1".into() });
        assert_eq!(
            p.encode_line(),
            "{\"progress\":{\"done\":3,\"total\":10,\"what\":\"flushing Keyspace1.Standard1\"}}\n"
        );
        let e = Reply::error(ErrorKind::UnknownKeyspace, "keyspace Nope does not exist");
        assert_eq!(
            e.encode_line(),
            "{\"error\":{\"kind\":\"unknown_keyspace\",\"message\":\"keyspace Nope does not exist\"}}\n"
        );
        let ok = Reply::Ok(serde_json::json!({"token":"5"}));
        assert_eq!(ok.encode_line(), "{\"ok\":{\"token\":\"5\"}}\n");
        for r in [p, e, ok] {
            let line = r.encode_line();
            assert_eq!(Reply::decode_line(line.trim_end().as_bytes()), Ok(r));
        }
    }

    #[test]
    fn malformed_reply_lines_are_errors() {
        for bad in
            [&b""[..], b"{}", b"{\"ok\":1,\"error\":2}", b"{\"progress\":{\"done\":1}}", b"\xff", b"{\"nope\":1}"]
        {
            assert!(
                matches!(Reply::decode_line(bad), Err(ProtocolError::BadReply(_))),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
