//! Reads whole decoded items (handshakes, frames) from a socket, buffering partial ones.

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::codec::Decoded;
use crate::error::ConnectionError;

/// Bytes asked of the socket at least per read, so small frames arrive in few system calls.
const READ_CHUNK_BYTES: usize = 64 * 1024;

pub(crate) struct ItemReader<R> {
    io: R,
    /// Received bytes; `buf[pos..]` are not decoded yet.
    buf: Vec<u8>,
    pos: usize,
}

impl<R: AsyncRead + Unpin> ItemReader<R> {
    pub fn new(io: R) -> ItemReader<R> {
        ItemReader { io, buf: Vec::new(), pos: 0 }
    }

    /// The next item, or None when the peer closed the connection between items. The decoder
    /// bounds what it asks for (it checks lengths first), so a peer cannot make this allocate
    /// more than one maximal item.
    pub async fn next<T, E>(
        &mut self,
        what: &'static str,
        decode: impl Fn(&[u8]) -> Result<Decoded<T>, E>,
    ) -> Result<Option<T>, ConnectionError>
    where
        ConnectionError: From<E>,
    {
        loop {
            let pending = self.buf.get(self.pos..).unwrap_or_default();
            let need = match decode(pending)? {
                Decoded::Complete { value, used } => {
                    self.pos = self.pos.saturating_add(used);
                    if self.pos >= self.buf.len() {
                        self.buf.clear();
                        self.pos = 0;
                    }
                    return Ok(Some(value));
                }
                Decoded::Incomplete { need } => need,
            };
            if self.pos > 0 {
                self.buf.drain(..self.pos);
                self.pos = 0;
            }
            self.buf.reserve(need.saturating_sub(self.buf.len()).max(READ_CHUNK_BYTES));
            if self.io.read_buf(&mut self.buf).await? == 0 {
                return if self.buf.is_empty() {
                    Ok(None)
                } else {
                    Err(ConnectionError::Truncated { what, have: self.buf.len(), need })
                };
            }
        }
    }

    pub fn into_inner(self) -> R {
        self.io
    }
}
