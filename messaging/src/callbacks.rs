//! Requests awaiting replies: the callback table, keyed by request id, and the future a caller
//! awaits. An entry leaves the table when its reply arrives, when its future times out or is
//! dropped, or at shutdown, so the table holds only requests somebody still waits for.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::oneshot;
use tokio::time::{Instant, Sleep};
use tracing::{debug, warn};

use crate::error::RequestError;
use crate::service::Shared;
use crate::verb::Verb;
use crate::Endpoint;

/// What completes a request.
#[derive(Debug)]
pub(crate) enum Reply {
    Payload(Vec<u8>),
    Failure(String),
    ShuttingDown,
}

struct Callback {
    /// Only this peer may answer: an id from another node is somebody else's request.
    peer: Endpoint,
    tx: oneshot::Sender<Reply>,
}

/// The callback table. Its lock is a leaf: nothing else is locked or awaited while it is held,
/// and a reply is sent to its waiter after the entry is removed and the lock released.
#[derive(Default)]
pub(crate) struct Callbacks {
    table: Mutex<CallbackTable>,
}

#[derive(Default)]
struct CallbackTable {
    entries: HashMap<u64, Callback>,
    /// Set at shutdown, under the lock, so no entry is added after the table was drained.
    closed: bool,
}

impl Callbacks {
    /// Registers request `id`; None when the service is shutting down.
    pub fn register(&self, id: u64, peer: Endpoint) -> Option<oneshot::Receiver<Reply>> {
        let (tx, rx) = oneshot::channel();
        let mut table = self.table.lock();
        if table.closed {
            return None;
        }
        table.entries.insert(id, Callback { peer, tx });
        Some(rx)
    }

    pub fn remove(&self, id: u64) {
        self.table.lock().entries.remove(&id);
    }

    /// Hands a reply from `from` to the request it answers, if somebody still waits for it.
    pub fn complete(&self, id: u64, from: Endpoint, reply: Reply) {
        let callback = {
            let mut table = self.table.lock();
            match table.entries.entry(id) {
                Entry::Occupied(e) if e.get().peer == from => e.remove(),
                Entry::Occupied(e) => {
                    let expected = e.get().peer;
                    drop(table);
                    warn!(%from, %expected, id, "dropping a reply from a node the request was not sent to");
                    return;
                }
                Entry::Vacant(_) => {
                    drop(table);
                    debug!(%from, id, "dropping a reply nobody waits for (timed out or abandoned)");
                    return;
                }
            }
        };
        // The waiter may have gone in the meantime; then nobody wants the reply.
        let _ = callback.tx.send(reply);
    }

    /// Fails every waiting request with ShuttingDown and refuses new ones.
    pub fn close(&self) {
        let drained: Vec<Callback> = {
            let mut table = self.table.lock();
            table.closed = true;
            table.entries.drain().map(|(_, cb)| cb).collect()
        };
        for cb in drained {
            let _ = cb.tx.send(Reply::ShuttingDown);
        }
    }

    pub fn len(&self) -> usize {
        self.table.lock().entries.len()
    }
}

/// The reply to `MessagingService::send_request`: the peer's reply payload, or why there is
/// none. Always resolves, at the latest when the verb's timeout passes. Dropping it abandons
/// the request (a late reply is then dropped).
#[must_use = "a request's reply is only seen by awaiting its ResponseFuture"]
pub struct ResponseFuture {
    state: State,
}

enum State {
    Done(Option<RequestError>),
    Waiting(Box<Waiting>),
}

struct Waiting {
    shared: Arc<Shared>,
    rx: oneshot::Receiver<Reply>,
    deadline: Pin<Box<Sleep>>,
    id: u64,
    verb: Verb,
    peer: Endpoint,
    sent_at: Instant,
}

impl ResponseFuture {
    pub(crate) fn failed(error: RequestError) -> ResponseFuture {
        ResponseFuture { state: State::Done(Some(error)) }
    }

    /// Must be called inside the runtime (the deadline is a tokio timer).
    pub(crate) fn waiting(
        shared: Arc<Shared>,
        rx: oneshot::Receiver<Reply>,
        id: u64,
        verb: Verb,
        peer: Endpoint,
        timeout: Duration,
    ) -> ResponseFuture {
        let sent_at = Instant::now();
        let deadline = Box::pin(tokio::time::sleep_until(sent_at + timeout));
        ResponseFuture { state: State::Waiting(Box::new(Waiting { shared, rx, deadline, id, verb, peer, sent_at })) }
    }
}

impl Future for ResponseFuture {
    type Output = Result<Vec<u8>, RequestError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let w = match &mut self.state {
            // Polled again after it resolved: report it as over rather than panic.
            State::Done(error) => return Poll::Ready(Err(error.take().unwrap_or(RequestError::ShuttingDown))),
            State::Waiting(w) => w,
        };
        let result = if let Poll::Ready(reply) = Pin::new(&mut w.rx).poll(cx) {
            match reply {
                Ok(Reply::Payload(payload)) => Ok(payload),
                Ok(Reply::Failure(reason)) => Err(RequestError::Failure { verb: w.verb, peer: w.peer, reason }),
                // The sender goes away only when the table is drained at shutdown.
                Ok(Reply::ShuttingDown) | Err(_) => Err(RequestError::ShuttingDown),
            }
        } else if w.deadline.as_mut().poll(cx).is_ready() {
            w.shared.callbacks.remove(w.id);
            w.shared.count_timeout(w.peer);
            Err(RequestError::Timeout { verb: w.verb, peer: w.peer, waited: w.sent_at.elapsed() })
        } else {
            return Poll::Pending;
        };
        self.state = State::Done(None);
        Poll::Ready(result)
    }
}

impl Drop for ResponseFuture {
    fn drop(&mut self) {
        if let State::Waiting(w) = &self.state {
            w.shared.callbacks.remove(w.id);
        }
    }
}
