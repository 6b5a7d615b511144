//! Messaging tests over real TCP on 127.0.0.1. Every wait is bounded (`bounded`, `eventually`),
//! so a failure fails its test instead of hanging the suite.

mod malformed;
mod messaging;

use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::mpsc;

use crate::Endpoint;
use crate::{MessagingService, NetConfig, Responder, Timeouts, Verb, VerbHandler};

/// The longest any single step of a test may take before the test fails.
const LONG: Duration = Duration::from_secs(10);

/// Awaits `f`, failing the test if it takes longer than `LONG`.
async fn bounded<T>(what: &str, f: impl Future<Output = T>) -> T {
    match tokio::time::timeout(LONG, f).await {
        Ok(v) => v,
        Err(_) => panic!("{what}: nothing within {LONG:?}"),
    }
}

/// Waits until `done` holds, failing the test after `LONG`.
async fn eventually(what: &str, done: impl Fn() -> bool) {
    bounded(what, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

fn localhost(port: u16) -> Endpoint {
    Endpoint::from(([127, 0, 0, 1], port))
}

/// A port nobody listens on for as long as the returned socket lives: bound, never listening,
/// so connections to it are refused and no other test's node can take it meanwhile (a port
/// merely released can be handed to the next bind to port 0, in this process or another).
fn dead_port() -> (u16, tokio::net::TcpSocket) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap_or_else(|e| panic!("socket: {e}"));
    socket.bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0))).unwrap_or_else(|e| panic!("bind: {e}"));
    let port = socket.local_addr().unwrap_or_else(|e| panic!("local_addr: {e}")).port();
    (port, socket)
}

/// A port nobody listens on now: bound to 0, then released.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    listener.local_addr().unwrap_or_else(|e| panic!("local_addr: {e}")).port()
}

/// Settings for a test node on 127.0.0.1:`port` (0: any free port) with one timeout for all verbs.
fn config(port: u16, cluster: &str, timeout: Duration) -> NetConfig {
    let mut config = NetConfig::new(localhost(port), cluster);
    config.timeouts = Timeouts::uniform(timeout);
    config.max_message_bytes = 2 << 20;
    config
}

async fn start(config: NetConfig) -> Arc<MessagingService> {
    bounded("start", MessagingService::start(config)).await.unwrap_or_else(|e| panic!("start: {e}"))
}

/// A message as a handler saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    from: Endpoint,
    verb: Verb,
    payload: Vec<u8>,
    expects_reply: bool,
}

/// Records every message and answers requests with `name:` and the payload.
struct Echo {
    name: &'static str,
    seen: mpsc::UnboundedSender<Seen>,
}

impl Echo {
    fn new(name: &'static str) -> (Arc<Echo>, mpsc::UnboundedReceiver<Seen>) {
        let (seen, rx) = mpsc::unbounded_channel();
        (Arc::new(Echo { name, seen }), rx)
    }
}

impl VerbHandler for Echo {
    fn handle(&self, from: Endpoint, verb: Verb, payload: Vec<u8>, reply: Responder) {
        let mut answer = format!("{}:", self.name).into_bytes();
        answer.extend_from_slice(&payload);
        let _ = self.seen.send(Seen { from, verb, payload, expects_reply: reply.expects_reply() });
        reply.respond(answer);
    }
}

/// Answers requests with their own payload, unchanged.
struct Mirror;

impl VerbHandler for Mirror {
    fn handle(&self, _from: Endpoint, _verb: Verb, payload: Vec<u8>, reply: Responder) {
        reply.respond(payload);
    }
}

/// Never answers: drops its responder.
#[derive(Default)]
struct Silent {
    calls: AtomicUsize,
}

impl Silent {
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl VerbHandler for Silent {
    fn handle(&self, _from: Endpoint, _verb: Verb, _payload: Vec<u8>, reply: Responder) {
        self.calls.fetch_add(1, Ordering::SeqCst);
        drop(reply);
    }
}

/// Receives the next message a handler saw, failing the test after `LONG`.
async fn next_seen(rx: &mut mpsc::UnboundedReceiver<Seen>) -> Seen {
    bounded("next message", rx.recv()).await.unwrap_or_else(|| panic!("handler channel closed"))
}

/// Collects log lines written while it is the thread's default subscriber (tests run on a
/// current-thread runtime, so the service's tasks log through it too).
#[derive(Clone, Default)]
struct LogCapture(Arc<Mutex<Vec<u8>>>);

impl LogCapture {
    fn install(&self) -> tracing::subscriber::DefaultGuard {
        let subscriber = tracing_subscriber::fmt()
            .with_writer(self.clone())
            .with_ansi(false)
            .with_max_level(tracing::Level::DEBUG)
            .finish();
        tracing::subscriber::set_default(subscriber)
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock()).into_owned()
    }
}

impl io::Write for LogCapture {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogCapture {
    type Writer = LogCapture;

    fn make_writer(&'a self) -> LogCapture {
        self.clone()
    }
}
