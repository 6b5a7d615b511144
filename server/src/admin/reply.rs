//! The reply side of an admin connection: the line writer every operation reports through, and
//! how often a long step repeats its progress. Its own module so that the operations' modules
//! and the connection loop in `mod.rs` depend on it, and not on each other.

use std::time::Duration;

use admin_protocol::{Progress, Reply};
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// How often a running step's progress line is repeated.
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// Writes reply lines; remembers the first write error instead of failing the operation that
/// produced the line, so a flush whose client went away still finishes.
pub(crate) struct ReplyWriter<W> {
    pub(super) write: W,
    pub(super) broken: Option<std::io::Error>,
}

impl<W: AsyncWrite + Unpin> ReplyWriter<W> {
    pub(crate) fn new(write: W) -> ReplyWriter<W> {
        ReplyWriter { write, broken: None }
    }

    pub(crate) async fn send(&mut self, reply: &Reply) {
        if self.broken.is_some() {
            return;
        }
        let line = reply.encode_line();
        let written = async {
            self.write.write_all(line.as_bytes()).await?;
            self.write.flush().await
        }
        .await;
        if let Err(e) = written {
            self.broken = Some(e);
        }
    }

    pub(crate) async fn progress(&mut self, progress: Progress) {
        self.send(&Reply::Progress(progress)).await;
    }
}
