//! The messaging service: starting it, sending, dispatching what arrives to verb handlers,
//! replies, stats and shutdown.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::RwLock;
use tokio::net::TcpListener;
use tokio::runtime::Handle;
use tokio::sync::watch;
use tokio::time::Instant;
use tracing::{debug, info, warn};

use crate::callbacks::{Callbacks, Reply, ResponseFuture};
use crate::codec::{Frame, MessageKind};
use crate::config::NetConfig;
use crate::error::{NetError, RequestError, SendError};
use crate::inbound::accept_loop;
use crate::outbound::{outbound_loop, Outbound, Queued};
use crate::stats::{InboundCounters, NetStats, PeerStats};
use crate::verb::{ConnectionKind, Verb};
use crate::Endpoint;

/// How often [`MessagingService::drain_gossip`] looks at the queues.
const DRAIN_POLL: Duration = Duration::from_millis(5);

/// Code that serves one verb.
pub trait VerbHandler: Send + Sync {
    /// Runs on a messaging task: must not block. `reply` may be completed later (from another
    /// thread, after blocking work elsewhere); dropping it without replying sends nothing, and
    /// the requester times out. For a one-way message, replying does nothing.
    fn handle(&self, from: Endpoint, verb: Verb, payload: Vec<u8>, reply: Responder);
}

/// Answers one request. It holds the service weakly: a reply after shutdown is dropped.
pub struct Responder {
    shared: Weak<Shared>,
    to: Endpoint,
    verb: Verb,
    id: u64,
    expects_reply: bool,
}

impl Responder {
    /// Sends `payload` to the requester.
    pub fn respond(self, payload: Vec<u8>) {
        self.reply(Reply::Payload(payload));
    }

    /// Tells the requester its request failed; it gets `RequestError::Failure { reason, .. }`.
    pub fn fail(self, reason: String) {
        self.reply(Reply::Failure(reason));
    }

    /// Whether the sender awaits a reply (false for a one-way message).
    pub fn expects_reply(&self) -> bool {
        self.expects_reply
    }

    fn reply(self, reply: Reply) {
        if !self.expects_reply {
            return;
        }
        let Some(shared) = self.shared.upgrade() else { return };
        if self.to == shared.local {
            shared.callbacks.complete(self.id, self.to, reply);
            return;
        }
        let (kind, payload) = match reply {
            Reply::Payload(payload) => (MessageKind::Response, payload),
            Reply::Failure(reason) => (MessageKind::Failure, reason.into_bytes()),
            Reply::ShuttingDown => return,
        };
        let sent = match shared.enqueue(self.to, self.verb, kind, self.id, payload) {
            // Better a prompt failure than a timeout for a reply the peer would refuse.
            Err(SendError::MessageTooLarge { size, max }) => {
                let reason = format!("the reply of {size} bytes is over the limit of {max} bytes");
                warn!(peer = %self.to, verb = %self.verb, size, max, "reply too large; answering with a failure");
                shared.enqueue(self.to, self.verb, MessageKind::Failure, self.id, reason.into_bytes())
            }
            other => other,
        };
        if let Err(e) = sent {
            debug!(peer = %self.to, verb = %self.verb, error = %e, "reply not sent");
        }
    }
}

/// Cassandra's MessagingService: sends messages to other nodes, receives theirs, runs the
/// handler registered for each verb, and matches replies to requests. Dropping it shuts it down.
pub struct MessagingService {
    shared: Arc<Shared>,
}

/// State shared by the service, its tasks, response futures and responders.
pub(crate) struct Shared {
    pub local: Endpoint,
    pub config: NetConfig,
    runtime: Handle,
    /// Who serves each verb. Read per inbound message; the handler is cloned out before it runs.
    handlers: RwLock<HashMap<Verb, Arc<dyn VerbHandler>>>,
    pub callbacks: Callbacks,
    /// Starts at a random value, so replies meant for an earlier run of this node (same
    /// endpoint, before a restart) do not match this run's requests.
    next_id: AtomicU64,
    /// Outbound state per peer, created on first send and kept (a peer's counters outlive its
    /// connections). Lock order: this one, then a queue's lock (stats, shutdown); never the
    /// other way round, and never across an await.
    peers: RwLock<HashMap<Endpoint, Arc<Peer>>>,
    pub inbound: InboundCounters,
    shutdown: watch::Sender<bool>,
    /// How many of our tasks are running; `shutdown_and_wait` waits for zero.
    live_tasks: watch::Sender<usize>,
}

struct Peer {
    small: Arc<Outbound>,
    gossip: Arc<Outbound>,
    timeouts: AtomicU64,
}

impl Peer {
    fn connection(&self, kind: ConnectionKind) -> &Arc<Outbound> {
        match kind {
            ConnectionKind::Small => &self.small,
            ConnectionKind::Gossip => &self.gossip,
        }
    }

    fn stats(&self) -> PeerStats {
        PeerStats {
            small: self.small.stats(),
            gossip: self.gossip.stats(),
            timeouts: self.timeouts.load(Ordering::Relaxed),
        }
    }
}

impl MessagingService {
    /// Listens on `config.local` and starts accepting peers. Must run inside a tokio runtime,
    /// whose tasks then carry the service.
    pub async fn start(config: NetConfig) -> Result<Arc<MessagingService>, NetError> {
        config.validate()?;
        let runtime = Handle::try_current().map_err(|_| NetError::NoRuntime)?;
        let listener =
            TcpListener::bind(config.local).await.map_err(|source| NetError::Bind { addr: config.local, source })?;
        let local = listener.local_addr().map_err(|source| NetError::Bind { addr: config.local, source })?;
        info!(%local, cluster = %config.cluster_name, "internode messaging listening");
        let shared = Arc::new(Shared {
            local,
            config,
            runtime,
            handlers: RwLock::new(HashMap::new()),
            callbacks: Callbacks::default(),
            next_id: AtomicU64::new(rand::random()),
            peers: RwLock::new(HashMap::new()),
            inbound: InboundCounters::default(),
            shutdown: watch::Sender::new(false),
            live_tasks: watch::Sender::new(0),
        });
        shared.spawn_task(accept_loop(Arc::clone(&shared), listener));
        Ok(Arc::new(MessagingService { shared }))
    }

    /// The endpoint this node listens on and tells peers (with the real port if 0 was asked).
    pub fn local(&self) -> Endpoint {
        self.shared.local
    }

    /// Makes `handler` serve `verb` from now on, replacing any earlier one.
    pub fn register(&self, verb: Verb, handler: Arc<dyn VerbHandler>) {
        self.shared.handlers.write().insert(verb, handler);
    }

    /// Never blocks or awaits: queues the message for the peer's connection (or, for this node
    /// itself, hands it to the handler on a task of its own).
    pub fn send_one_way(&self, to: Endpoint, verb: Verb, payload: Vec<u8>) -> Result<(), SendError> {
        if to == self.shared.local {
            return self.shared.deliver_locally(verb, MessageKind::OneWay, 0, payload);
        }
        self.shared.enqueue(to, verb, MessageKind::OneWay, 0, payload)
    }

    /// Sends a request; the future resolves with the peer's reply payload, or an error: Timeout
    /// after the verb's timeout, Failure when the peer's handler failed, QueueFull or
    /// ShuttingDown at once. It never hangs. Does not block.
    pub fn send_request(&self, to: Endpoint, verb: Verb, payload: Vec<u8>) -> ResponseFuture {
        let shared = &self.shared;
        let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
        // Registered before it is sent, so even an instant reply finds its callback.
        let Some(rx) = shared.callbacks.register(id, to) else {
            return ResponseFuture::failed(RequestError::ShuttingDown);
        };
        let sent = if to == shared.local {
            shared.deliver_locally(verb, MessageKind::Request, id, payload)
        } else {
            shared.enqueue(to, verb, MessageKind::Request, id, payload)
        };
        if let Err(e) = sent {
            shared.callbacks.remove(id);
            return ResponseFuture::failed(e.into());
        }
        // The deadline is a timer of our runtime, whichever thread the caller is on.
        let _runtime = shared.runtime.enter();
        ResponseFuture::waiting(Arc::clone(shared), rx, id, verb, to, shared.config.timeouts.for_verb(verb))
    }

    /// Stops every task: the listener closes, connections close, waiting requests fail with
    /// ShuttingDown, queued messages are dropped, and later sends fail with ShuttingDown.
    pub fn shutdown(&self) {
        self.shared.shutdown();
    }

    /// Waits until every gossip message queued so far for `peers` was written (or dropped as
    /// expired), at most `limit`; says whether they all went. A node announcing its shutdown
    /// calls it before [`MessagingService::shutdown`], which drops what is still queued: the
    /// announcement would otherwise be lost whenever its writer had not had its turn yet (or
    /// was reconnecting to a peer that just restarted), and the peer would wait for its
    /// failure detector, half a minute, to see this node down.
    pub async fn drain_gossip(&self, peers: &[Endpoint], limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            let idle = {
                let known = self.shared.peers.read();
                peers.iter().filter_map(|ep| known.get(ep)).all(|peer| peer.gossip.is_idle())
            };
            if idle {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(DRAIN_POLL).await;
        }
    }

    /// Shuts down and waits until every task of the service has ended (so the port is free).
    pub async fn shutdown_and_wait(&self) {
        self.shared.shutdown();
        let mut live = self.shared.live_tasks.subscribe();
        // Cannot fail: `self` holds the sender.
        let _ = live.wait_for(|n| *n == 0).await;
    }

    pub fn stats(&self) -> NetStats {
        let peers = self.shared.peers.read().iter().map(|(endpoint, peer)| (*endpoint, peer.stats())).collect();
        NetStats { peers, inbound: self.shared.inbound.snapshot() }
    }

    /// Requests waiting for a reply (tests check that the table does not leak).
    pub fn pending_requests(&self) -> usize {
        self.shared.callbacks.len()
    }
}

impl Drop for MessagingService {
    fn drop(&mut self) {
        self.shared.shutdown();
    }
}

/// Counts a running task until it ends (or is dropped unfinished).
struct TaskGuard(watch::Sender<usize>);

impl Drop for TaskGuard {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Shared {
    pub fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.shutdown.subscribe()
    }

    fn is_shutting_down(&self) -> bool {
        *self.shutdown.borrow()
    }

    pub fn spawn_task(&self, task: impl Future<Output = ()> + Send + 'static) {
        self.live_tasks.send_modify(|n| *n += 1);
        let guard = TaskGuard(self.live_tasks.clone());
        self.runtime.spawn(async move {
            let _guard = guard;
            task.await;
        });
    }

    fn shutdown(&self) {
        if self.shutdown.send_replace(true) {
            return;
        }
        info!(local = %self.local, "internode messaging shutting down");
        self.callbacks.close();
        for peer in self.peers.read().values() {
            peer.small.clear();
            peer.gossip.clear();
        }
    }

    pub fn count_timeout(&self, peer: Endpoint) {
        if let Some(p) = self.peers.read().get(&peer) {
            p.timeouts.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Queues a message for a peer's connection, starting its writer on first use.
    fn enqueue(
        self: &Arc<Self>,
        to: Endpoint,
        verb: Verb,
        kind: MessageKind,
        id: u64,
        payload: Vec<u8>,
    ) -> Result<(), SendError> {
        let max = self.config.max_message_bytes;
        if payload.len() > max {
            return Err(SendError::MessageTooLarge { size: payload.len(), max });
        }
        if self.is_shutting_down() {
            return Err(SendError::ShuttingDown);
        }
        let out = Arc::clone(self.peer(to).connection(verb.connection()));
        let expires = Instant::now() + self.config.timeouts.for_verb(verb);
        out.push(Queued { verb: verb.code(), kind, id, payload, expires })?;
        if !out.started.swap(true, Ordering::AcqRel) {
            self.spawn_task(outbound_loop(Arc::clone(self), out));
        }
        Ok(())
    }

    fn peer(&self, endpoint: Endpoint) -> Arc<Peer> {
        if let Some(peer) = self.peers.read().get(&endpoint) {
            return Arc::clone(peer);
        }
        let capacity = self.config.queue_capacity;
        let mut peers = self.peers.write();
        let peer = peers.entry(endpoint).or_insert_with(|| {
            Arc::new(Peer {
                small: Arc::new(Outbound::new(endpoint, ConnectionKind::Small, capacity)),
                gossip: Arc::new(Outbound::new(endpoint, ConnectionKind::Gossip, capacity)),
                timeouts: AtomicU64::new(0),
            })
        });
        Arc::clone(peer)
    }

    /// A message to this node itself: no TCP, the handler runs on a task of its own (so a
    /// caller holding a lock cannot deadlock with the handler).
    fn deliver_locally(
        self: &Arc<Self>,
        verb: Verb,
        kind: MessageKind,
        id: u64,
        payload: Vec<u8>,
    ) -> Result<(), SendError> {
        if self.is_shutting_down() {
            return Err(SendError::ShuttingDown);
        }
        let shared = Arc::clone(self);
        self.spawn_task(async move {
            let local = shared.local;
            shared.run_handler(local, verb, kind == MessageKind::Request, id, payload);
        });
        Ok(())
    }

    /// Handles a frame from `from` (its listen endpoint, from the handshake).
    pub fn dispatch(self: &Arc<Self>, from: Endpoint, frame: Frame) {
        match frame.kind {
            MessageKind::Response => self.callbacks.complete(frame.id, from, Reply::Payload(frame.payload)),
            MessageKind::Failure => {
                let reason = String::from_utf8_lossy(&frame.payload).into_owned();
                self.callbacks.complete(frame.id, from, Reply::Failure(reason));
            }
            MessageKind::OneWay | MessageKind::Request => match Verb::try_from(frame.verb) {
                Ok(verb) => self.run_handler(from, verb, frame.kind == MessageKind::Request, frame.id, frame.payload),
                // A well-formed frame we cannot serve: the rest of the connection is fine.
                Err(e) => warn!(peer = %from, id = frame.id, error = %e, "dropping message with an unknown verb"),
            },
        }
    }

    fn run_handler(self: &Arc<Self>, from: Endpoint, verb: Verb, expects_reply: bool, id: u64, payload: Vec<u8>) {
        let responder = Responder { shared: Arc::downgrade(self), to: from, verb, id, expects_reply };
        let handler = self.handlers.read().get(&verb).cloned();
        match handler {
            Some(handler) => handler.handle(from, verb, payload, responder),
            None => {
                warn!(peer = %from, %verb, "no handler for the verb; dropping the message");
                responder.fail(format!("no handler for {verb} on {}", self.local));
            }
        }
    }
}
