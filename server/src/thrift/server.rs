//! Serving Thrift while the node runs, and stopping and starting it again (Cassandra's
//! `ThriftServer`, driven by `nodetool disablethrift` and `enablethrift` for rolling restarts).
//!
//! [`ThriftServer::start`] binds ThriftAddress:ThriftPort and runs [`super::serve`];
//! [`ThriftServer::stop`] closes the listening socket, so new clients are refused and fail over
//! to other nodes, and closes every client connection once the call it is serving (if any) is
//! answered: the accept loop keeps a duplicate of each connection's socket in
//! [`OpenConnections`] and shuts its reading side, so the connection's next read finds the end
//! of the stream, as when a client hangs up. A connection that does not end within
//! [`CLIENT_CLOSE_GRACE`] (a call still running, a client that does not read its reply) is
//! closed when the event loops stop.

use std::collections::HashMap;
use std::net::{Shutdown, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};

use super::handler::ThriftContext;
use super::ServeOptions;

/// How long stopping waits for client connections to end by themselves: a call in progress is
/// answered within its request timeout (RpcTimeoutInMillis and its kin, 10 s by default).
pub const CLIENT_CLOSE_GRACE: Duration = Duration::from_secs(10);

/// How often a stop looks whether every connection has ended.
const CLOSE_POLL: Duration = Duration::from_millis(10);

#[derive(Debug, thiserror::Error)]
pub enum ThriftServerError {
    #[error("cannot listen for thrift clients on {addr}: {source}")]
    Bind { addr: String, source: std::io::Error },
    #[error("the node is shutting down: the thrift server is not started again")]
    ShuttingDown,
}

/// The node's Thrift front end, which can be stopped and started again.
pub struct ThriftServer {
    ctx: Arc<ThriftContext>,
    options: ServeOptions,
    /// Start, stop and close take it for their whole run, across the bind and the wait for
    /// connections to end, so they happen one at a time, in order.
    state: tokio::sync::Mutex<State>,
    /// Whether the front end serves, for readers that must not wait for a start or stop.
    running: Arc<AtomicBool>,
}

struct State {
    /// Where to listen: ThriftAddress:ThriftPort, then the address first bound, so a start
    /// after a stop listens on the same port even when the configured one was 0.
    bind_to: String,
    serving: Option<Serving>,
    /// The node shuts down: no more starts.
    closed: bool,
}

struct Serving {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
    addr: Option<SocketAddr>,
}

impl ThriftServer {
    /// A server for `addr` (`ThriftAddress:ThriftPort`), not yet listening.
    pub fn new(addr: impl Into<String>, ctx: Arc<ThriftContext>, options: ServeOptions) -> ThriftServer {
        ThriftServer {
            ctx,
            options,
            state: tokio::sync::Mutex::new(State { bind_to: addr.into(), serving: None, closed: false }),
            running: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Listens and serves clients; `Ok(false)` when it serves already.
    pub async fn start(&self) -> Result<bool, ThriftServerError> {
        let mut state = self.state.lock().await;
        if state.closed {
            return Err(ThriftServerError::ShuttingDown);
        }
        if let Some(serving) = &state.serving {
            if !serving.task.is_finished() {
                return Ok(false);
            }
            // Its event loops could not start: listen again.
            state.serving = None;
        }
        let listener = TcpListener::bind(state.bind_to.as_str())
            .await
            .map_err(|source| ThriftServerError::Bind { addr: state.bind_to.clone(), source })?;
        let addr = listener.local_addr().ok();
        if let Some(addr) = addr {
            state.bind_to = addr.to_string();
        }
        let (stop, stopped) = watch::channel(false);
        self.running.store(true, Ordering::SeqCst);
        let running = NotRunningOnDrop(self.running.clone());
        let serve = super::serve(listener, self.ctx.clone(), self.options, stopped);
        let task = tokio::spawn(async move {
            let _running = running;
            serve.await;
        });
        info!("Listening for thrift clients on {}", state.bind_to);
        state.serving = Some(Serving { stop, task, addr });
        Ok(true)
    }

    /// Stops serving: the listening socket is closed, then every client connection, each once
    /// the call it is serving is answered (at most [`CLIENT_CLOSE_GRACE`]). False when it was
    /// not serving.
    pub async fn stop(&self) -> bool {
        let mut state = self.state.lock().await;
        Self::stop_serving(&mut state).await
    }

    /// Stops serving for good (the node shuts down): later starts are refused.
    pub async fn close(&self) {
        let mut state = self.state.lock().await;
        state.closed = true;
        Self::stop_serving(&mut state).await;
    }

    async fn stop_serving(state: &mut State) -> bool {
        let Some(serving) = state.serving.take() else { return false };
        let _ = serving.stop.send(true);
        if let Err(e) = serving.task.await {
            warn!(error = %e, "the thrift server's task failed");
        }
        info!("thrift server stopped: no longer listening on {}", state.bind_to);
        true
    }

    /// Whether it serves clients (`nodetool statusthrift`).
    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::SeqCst)
    }

    /// Where it listens now; `None` when stopped.
    pub async fn local_addr(&self) -> Option<SocketAddr> {
        let state = self.state.lock().await;
        state.serving.as_ref().filter(|s| !s.task.is_finished()).and_then(|s| s.addr)
    }
}

/// Clears the running flag when the serving task ends, however it ends.
struct NotRunningOnDrop(Arc<AtomicBool>);

impl Drop for NotRunningOnDrop {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// The client connections a running front end serves, each by a duplicate of its socket, so a
/// stop can end them (see the module documentation).
#[derive(Default)]
pub(super) struct OpenConnections {
    /// Protocol: taken briefly by the accept loop (register), by a connection's end (its guard
    /// deregisters) and by a stop; never held across an await.
    inner: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    next_id: u64,
    sockets: HashMap<u64, std::net::TcpStream>,
}

/// Deregisters its connection when the connection's task ends (or is dropped).
pub(super) struct Registered {
    open: Arc<OpenConnections>,
    id: u64,
}

impl OpenConnections {
    fn lock(&self) -> MutexGuard<'_, Open> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Keeps a duplicate of `stream`'s socket until the guard is dropped. `None` when the socket
    /// cannot be duplicated (no file descriptor left): that connection is closed only when the
    /// event loops stop.
    pub(super) fn register(self: &Arc<Self>, stream: &std::net::TcpStream) -> Option<Registered> {
        let duplicate = match stream.try_clone() {
            Ok(duplicate) => duplicate,
            Err(e) => {
                warn!(error = %e, "cannot keep a handle on a thrift connection; a stop will cut it short");
                return None;
            }
        };
        let mut open = self.lock();
        let id = open.next_id;
        open.next_id += 1;
        open.sockets.insert(id, duplicate);
        Some(Registered { open: self.clone(), id })
    }

    pub(super) fn count(&self) -> usize {
        self.lock().sockets.len()
    }

    /// Ends the reading side of every connection: each finds the end of its stream at its next
    /// read, after it has answered the call it is serving and any call already received, and
    /// closes. Their replies can still be written.
    pub(super) fn shut_reads(&self) {
        for socket in self.lock().sockets.values() {
            if let Err(e) = socket.shutdown(Shutdown::Read) {
                debug!(error = %e, "cannot shut a thrift connection's reading side (already closed?)");
            }
        }
    }

    /// Waits, at most `limit`, until every connection has ended; whether they all did.
    pub(super) async fn wait_until_closed(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if self.count() == 0 {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(CLOSE_POLL).await;
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.open.lock().sockets.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests")]

    use std::io::{Read, Write};

    use cluster::coordinator::{Coordinator, LocalNode};
    use storage::engine::{Storage, StorageConfig};
    use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol, TInputProtocol, TOutputProtocol};
    use thrift::transport::{TFramedReadTransport, TFramedWriteTransport, TIoChannel, TTcpChannel};
    use thrift_idl::{CassandraSyncClient, TCassandraSyncClient};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::auth::Authenticator;

    /// Bound on every wait in these tests.
    const WAIT: Duration = Duration::from_secs(20);

    /// A connected pair on loopback, the server side registered in `open` as the accept loop
    /// does: (client, server side, its registration).
    async fn registered_pair(open: &Arc<OpenConnections>) -> (std::net::TcpStream, tokio::net::TcpStream, Registered) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = tokio::task::spawn_blocking(move || std::net::TcpStream::connect(addr));
        let (server, _) = listener.accept().await.unwrap();
        let client = client.await.unwrap().unwrap();
        client.set_read_timeout(Some(WAIT)).unwrap();
        let server = server.into_std().unwrap();
        let registered = open.register(&server).unwrap();
        (client, tokio::net::TcpStream::from_std(server).unwrap(), registered)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_closed_connection_answers_the_call_it_serves_then_ends() {
        let open = Arc::new(OpenConnections::default());
        let (mut busy_client, mut busy, busy_registered) = registered_pair(&open).await;
        let (mut idle_client, mut idle, idle_registered) = registered_pair(&open).await;
        assert_eq!(open.count(), 2);
        // The idle connection waits in a read, as a connection between calls does.
        let idle_task = tokio::spawn(async move {
            let _registered = idle_registered;
            let mut buf = [0u8; 16];
            idle.read(&mut buf).await.unwrap()
        });
        // The busy one has read a call and not answered it yet when the stop comes.
        busy_client.write_all(b"call").unwrap();
        let mut call = [0u8; 4];
        busy.read_exact(&mut call).await.unwrap();
        open.shut_reads();
        assert_eq!(tokio::time::timeout(WAIT, idle_task).await.unwrap().unwrap(), 0, "the idle one sees the end");
        busy.write_all(b"reply").await.unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(busy.read(&mut buf).await.unwrap(), 0, "its next read finds the end");
        drop(busy);
        drop(busy_registered);
        assert!(open.wait_until_closed(WAIT).await);
        // The client got its reply, then the end of the stream.
        let got = tokio::task::spawn_blocking(move || {
            let mut reply = Vec::new();
            busy_client.read_to_end(&mut reply).map(|_| reply)
        });
        assert_eq!(got.await.unwrap().unwrap(), b"reply");
        let idle_end = tokio::task::spawn_blocking(move || idle_client.read(&mut [0u8; 4]));
        assert_eq!(idle_end.await.unwrap().unwrap(), 0);
    }

    #[tokio::test]
    async fn closing_gives_up_on_connections_that_do_not_end() {
        let open = Arc::new(OpenConnections::default());
        let (_client, _server, _registered) = registered_pair(&open).await;
        open.shut_reads();
        // Nobody serves that connection: it stays until the event loops are stopped.
        assert!(!open.wait_until_closed(Duration::from_millis(100)).await);
        assert_eq!(open.count(), 1);
    }

    fn thrift_server(dir: &std::path::Path, addr: &str) -> ThriftServer {
        let storage = Storage::open(StorageConfig::new(dir.join("data"), dir.join("commitlog"))).unwrap();
        let local = LocalNode {
            cluster_name: "Thrift Server Test".into(),
            endpoint: "127.0.0.1:7000".parse().unwrap(),
            rpc_address: "127.0.0.1".into(),
            token: storage.partitioner().token_for_key(b"this node"),
            snitch: "org.apache.cassandra.locator.SimpleSnitch".into(),
        };
        let coordinator = Coordinator::single_node(storage, local).unwrap();
        let cql = Arc::new(cql::Executor::new(coordinator.clone()));
        let ctx = Arc::new(ThriftContext {
            coordinator,
            cql,
            authenticator: Arc::new(Authenticator::AllowAll),
            config_file: None,
        });
        ThriftServer::new(addr, ctx, ServeOptions { max_message_bytes: 1 << 20, event_loops: 1 })
    }

    /// `describe_version` over a new framed connection to `addr`.
    async fn describe_version(addr: SocketAddr) -> thrift::Result<String> {
        tokio::task::spawn_blocking(move || {
            let stream = std::net::TcpStream::connect_timeout(&addr, WAIT)?;
            stream.set_read_timeout(Some(WAIT))?;
            let (r, w) = TTcpChannel::with_stream(stream).split()?;
            let input: Box<dyn TInputProtocol + Send> =
                Box::new(TBinaryInputProtocol::new(TFramedReadTransport::new(r), true));
            let output: Box<dyn TOutputProtocol + Send> =
                Box::new(TBinaryOutputProtocol::new(TFramedWriteTransport::new(w), true));
            CassandraSyncClient::new(input, output).describe_version()
        })
        .await
        .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn stopped_it_refuses_clients_started_again_it_serves_on_the_same_port() {
        let dir = tempfile::tempdir().unwrap();
        let server = thrift_server(dir.path(), "127.0.0.1:0");
        assert!(!server.is_running());
        assert!(!server.stop().await, "stopping a server never started");
        assert!(server.start().await.unwrap());
        assert!(!server.start().await.unwrap(), "a second start changes nothing");
        assert!(server.is_running());
        let addr = server.local_addr().await.unwrap();
        assert_eq!(describe_version(addr).await.unwrap(), thrift_idl::VERSION);
        let mut open = std::net::TcpStream::connect(addr).unwrap();
        open.set_read_timeout(Some(WAIT)).unwrap();

        assert!(server.stop().await);
        assert!(!server.is_running());
        assert_eq!(server.local_addr().await, None);
        let refused = std::net::TcpStream::connect(addr).map(|_| ()).unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused, "{refused}");
        // Closed: the end of the stream, or a reset when the stop came before the accept loop
        // had taken the connection from the listening socket's backlog.
        let end = tokio::task::spawn_blocking(move || open.read(&mut [0u8; 4]));
        match end.await.unwrap() {
            Ok(0) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            other => panic!("an open connection is not closed: {other:?}"),
        }
        assert!(!server.stop().await, "a second stop changes nothing");

        assert!(server.start().await.unwrap());
        assert_eq!(server.local_addr().await, Some(addr));
        assert_eq!(describe_version(addr).await.unwrap(), thrift_idl::VERSION);

        server.close().await;
        assert!(!server.is_running());
        assert!(matches!(server.start().await, Err(ThriftServerError::ShuttingDown)));
    }

    #[tokio::test]
    async fn a_port_in_use_is_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap().to_string();
        let server = thrift_server(dir.path(), &addr);
        let err = server.start().await.unwrap_err();
        assert!(matches!(&err, ThriftServerError::Bind { addr: a, .. } if *a == addr), "{err:?}");
        assert!(err.to_string().starts_with(&format!("cannot listen for thrift clients on {addr}: ")), "{err}");
        assert!(!server.is_running());
    }
}
