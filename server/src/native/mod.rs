//! Cassandra's native protocol, versions 3 and 4, on `NativeTransportPort` (9042): a second
//! front end over the same [`cql::Executor`] as Thrift's CQL calls.
//!
//! - [`frame`]: the 9-byte header, version checks, the frame limit and compression;
//! - [`wire`]: the spec's notations ([string], [bytes], [value], ...) read within bounds;
//! - [`request`]: request bodies into [`request::Request`]s;
//! - [`handler`]: QUERY, PREPARE, EXECUTE and BATCH run through the executor, rights checked
//!   as for Thrift ([`crate::cql_access`]);
//! - [`result`]: RESULT and EVENT bodies (a PREPARED with its markers, partition key indexes
//!   and a SELECT's result columns); [`error`]: ERROR bodies from `CqlError`; a v4 RESULT
//!   carries the statement's warnings (`cql::exec::client_warn`) under flag WARNING;
//! - [`connection`]: one connection's states (STARTUP, SASL PLAIN, ready), its requests run
//!   at once on their streams, answered as they finish through one writer;
//! - [`events`]: SCHEMA_CHANGE, STATUS_CHANGE and TOPOLOGY_CHANGE pushed to registered
//!   connections.
//!
//! Not done yet: custom payloads (read and dropped).

pub mod connection;
pub mod error;
pub mod events;
pub mod frame;
pub mod handler;
pub mod request;
pub mod result;
pub mod wire;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cluster::coordinator::Coordinator;
use cql::exec::Prepared;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::{info, warn};

use crate::auth::Authenticator;
use crate::event_loop::EventLoops;
use events::EventHub;

/// The CQL version SUPPORTED names (3.11's).
pub const CQL_VERSION: &str = "3.4.4";

/// Statements prepared through this front end, by their MD5 id; past this many the cache
/// starts again empty (as the executor's does).
const MAX_PREPARED: usize = 100_000;

/// How long a shutdown waits for connections to answer what they were asked.
const CLOSE_GRACE: Duration = Duration::from_secs(10);

/// What every connection shares.
pub struct NativeContext {
    pub coordinator: Arc<Coordinator>,
    pub cql: Arc<cql::Executor>,
    pub authenticator: Arc<Authenticator>,
    pub events: Arc<EventHub>,
    /// Largest frame body, compressed or not (`NativeTransportMaxFrameSizeInMB`).
    pub max_frame_bytes: usize,
    /// Prepared statements by the id clients hold (3.11's MD5 of keyspace and text). The
    /// statement itself is the executor's, shared.
    prepared: Mutex<HashMap<[u8; 16], Arc<Prepared>>>,
}

impl NativeContext {
    pub fn new(
        coordinator: Arc<Coordinator>,
        cql: Arc<cql::Executor>,
        authenticator: Arc<Authenticator>,
        max_frame_bytes: usize,
        native_port: u16,
    ) -> NativeContext {
        NativeContext {
            events: EventHub::new(coordinator.membership(), native_port),
            coordinator,
            cql,
            authenticator,
            max_frame_bytes,
            prepared: Mutex::new(HashMap::new()),
        }
    }

    fn prepared_cache(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 16], Arc<Prepared>>> {
        // A panic while holding it cannot leave the map half-changed: insert and get only.
        self.prepared.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn keep_prepared(&self, id: [u8; 16], p: Arc<Prepared>) {
        let mut cache = self.prepared_cache();
        if cache.len() >= MAX_PREPARED && !cache.contains_key(&id) {
            cache.clear();
        }
        cache.insert(id, p);
    }

    fn find_prepared(&self, id: &[u8]) -> Option<Arc<Prepared>> {
        let id: [u8; 16] = id.try_into().ok()?;
        self.prepared_cache().get(&id).cloned()
    }
}

/// The native port as the operator drives it (`sibyltool disablebinary`, `enablebinary`,
/// `statusbinary`): a listener that closes and opens again while the node runs.
pub struct NativeService {
    addr: String,
    ctx: Arc<NativeContext>,
    options: NativeOptions,
    server: tokio::sync::Mutex<Option<NativeServer>>,
    running: std::sync::atomic::AtomicBool,
}

impl NativeService {
    /// A service not listening yet.
    pub fn new(addr: String, ctx: Arc<NativeContext>, options: NativeOptions) -> NativeService {
        NativeService {
            addr,
            ctx,
            options,
            server: tokio::sync::Mutex::new(None),
            running: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Listens; false if it already did.
    pub async fn start(&self) -> Result<bool, BindError> {
        let mut server = self.server.lock().await;
        if server.is_some() {
            return Ok(false);
        }
        *server = Some(NativeServer::start(&self.addr, self.ctx.clone(), self.options).await?);
        self.running.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(true)
    }

    /// Closes the port and every connection; false if it was not listening.
    pub async fn stop(&self) -> bool {
        let mut server = self.server.lock().await;
        let Some(running) = server.take() else { return false };
        self.running.store(false, std::sync::atomic::Ordering::SeqCst);
        running.close().await;
        true
    }

    /// Whether it listens now.
    pub fn is_running(&self) -> bool {
        self.running.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Settings of the listener.
#[derive(Clone, Copy, Debug)]
pub struct NativeOptions {
    /// `NativeTransportMaxConcurrentConnections`; None is unlimited.
    pub max_connections: Option<usize>,
    /// Event-loop threads serving the connections (as many as Thrift's, `ThriftEventLoops`);
    /// 0 means the default ([`crate::event_loop::default_count`]).
    pub event_loops: usize,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot listen for native transport clients on {addr}: {source}")]
pub struct BindError {
    pub addr: String,
    pub source: std::io::Error,
}

/// The running native front end: the accept loop and the schema watcher.
pub struct NativeServer {
    stop: watch::Sender<bool>,
    accept: JoinHandle<()>,
    watcher: JoinHandle<()>,
    addr: std::net::SocketAddr,
}

impl NativeServer {
    /// Binds `addr` and serves until [`NativeServer::close`].
    pub async fn start(addr: &str, ctx: Arc<NativeContext>, options: NativeOptions) -> Result<NativeServer, BindError> {
        let listener = TcpListener::bind(addr).await.map_err(|source| BindError { addr: addr.to_string(), source })?;
        let local = listener.local_addr().map_err(|source| BindError { addr: addr.to_string(), source })?;
        let (stop, stopped) = watch::channel(false);
        let watcher =
            tokio::spawn(events::schema_watch_loop(ctx.coordinator.clone(), ctx.events.clone(), stopped.clone()));
        let accept = tokio::spawn(accept_loop(listener, ctx, options, stopped));
        info!("Starting listening for CQL clients on {local} (unencrypted)...");
        Ok(NativeServer { stop, accept, watcher, addr: local })
    }

    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.addr
    }

    /// Stops accepting, and ends every connection once its requests are answered (at most
    /// [`CLOSE_GRACE`]).
    pub async fn close(self) {
        let _ = self.stop.send(true);
        if let Err(e) = self.accept.await {
            warn!(error = %e, "the native transport's accept loop failed");
        }
        let _ = self.watcher.await;
        info!("Stopped listening for CQL clients on {}", self.addr);
    }
}

async fn accept_loop(
    listener: TcpListener,
    ctx: Arc<NativeContext>,
    options: NativeOptions,
    mut stop: watch::Receiver<bool>,
) {
    // Connections live on event loops, as Thrift's do: a request's tasks then never wake a
    // worker on another thread (see `crate::event_loop`).
    let loops = match EventLoops::start("native", options.event_loops) {
        Ok(loops) => loops,
        Err(e) => {
            warn!(error = %e, "could not start the event loops; not accepting native transport clients");
            return;
        }
    };
    let open = Arc::new(AtomicUsize::new(0));
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stop.changed() => break,
        };
        let (socket, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of descriptors, say: wait rather than spin.
                warn!(error = %e, "accepting a native transport connection failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let count = open.fetch_add(1, Ordering::SeqCst) + 1;
        if options.max_connections.is_some_and(|max| count > max) {
            open.fetch_sub(1, Ordering::SeqCst);
            warn!(
                %peer,
                limit = options.max_connections.unwrap_or_default(),
                "native transport connection refused: NativeTransportMaxConcurrentConnections reached"
            );
            drop(socket);
            continue;
        }
        let _ = socket.set_nodelay(true);
        let socket = match socket.into_std() {
            Ok(socket) => socket,
            Err(e) => {
                open.fetch_sub(1, Ordering::SeqCst);
                warn!(%peer, error = %e, "could not hand a native transport connection to an event loop");
                continue;
            }
        };
        let open = open.clone();
        let ctx = ctx.clone();
        let stopped = stop.clone();
        connections.spawn_on(
            async move {
                match tokio::net::TcpStream::from_std(socket) {
                    Ok(socket) => connection::serve(ctx, socket, peer, stopped).await,
                    Err(e) => warn!(%peer, error = %e, "could not register a native transport connection"),
                }
                open.fetch_sub(1, Ordering::SeqCst);
            },
            loops.next(),
        );
        // Reap finished ones so the set does not grow with every connection ever made.
        while connections.try_join_next().is_some() {}
    }
    drop(listener);
    let drained = tokio::time::timeout(CLOSE_GRACE, async { while connections.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        warn!("native transport connections still open after {CLOSE_GRACE:?}: closed");
        connections.abort_all();
        while connections.join_next().await.is_some() {}
    }
    // Joins the loop threads: every connection is gone by now.
    let _ = tokio::task::spawn_blocking(move || loops.stop()).await;
}
