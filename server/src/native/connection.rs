//! One client connection: frames read in order, the connection's state kept in order
//! (STARTUP, authentication, REGISTER are handled before the next frame is read), and
//! statements run concurrently, each answered on its stream when it finishes.
//!
//! States, as 3.11's `ServerConnection`: before STARTUP only OPTIONS and STARTUP; with an
//! authenticator that needs a login, AUTH_RESPONSE until one succeeds; then everything but
//! STARTUP. A frame the decoder refuses (version, length, compression) is answered with a
//! PROTOCOL_ERROR and the connection closes; a body that does not decode is answered and the
//! connection goes on, since the frame's end is known.
//!
//! A statement runs in the reader's own task while no other frame arrives (the usual client,
//! which waits for an answer before it asks again, costs no task per request); a frame that
//! arrives meanwhile moves the statement to a task of its own, so streams never wait on each
//! other.
//!
//! Writes: every response is encoded (and compressed) by whoever made it and handed to the
//! connection's one writer task, which writes what has queued in one go. At most
//! [`MAX_IN_FLIGHT`] statements run at once per connection; past that the reader waits,
//! and TCP pushes back on the client.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch, Semaphore};
use tokio::task::JoinHandle;
use tracing::debug;

use super::error::NativeError;
use super::frame::{self, Compression, Decoder, Frame, FrameError, Opcode, Version};
use super::handler;
use super::request::{self, DecodeError, Request};
use super::NativeContext;
use crate::auth::AuthenticatedUser;

/// Statements of one connection running at once.
pub const MAX_IN_FLIGHT: usize = 256;

/// Responses queued for the writer.
const OUTBOX: usize = MAX_IN_FLIGHT + 16;

/// Bytes the writer gathers into one write.
const WRITE_BATCH: usize = 64 * 1024;

/// How long the answers already under way may take once the reading side has closed.
const FINISH_GRACE: Duration = Duration::from_secs(10);

/// The SASL mechanism's authenticator, as 3.11's PasswordAuthenticator names itself.
const AUTHENTICATOR_CLASS: &str = "org.apache.cassandra.auth.PasswordAuthenticator";

/// What a connection's requests share: its keyspace (`USE`) and its login.
pub struct ConnSession {
    pub client: IpAddr,
    keyspace: Mutex<Option<String>>,
    user: Mutex<Option<AuthenticatedUser>>,
}

impl ConnSession {
    fn new(client: IpAddr) -> ConnSession {
        ConnSession { client, keyspace: Mutex::new(None), user: Mutex::new(None) }
    }

    pub fn keyspace(&self) -> Option<String> {
        self.keyspace.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn set_keyspace(&self, ks: String) {
        *self.keyspace.lock().unwrap_or_else(|p| p.into_inner()) = Some(ks);
    }

    pub fn user(&self) -> Option<AuthenticatedUser> {
        self.user.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set_user(&self, user: AuthenticatedUser) {
        *self.user.lock().unwrap_or_else(|p| p.into_inner()) = Some(user);
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Unstarted,
    Authenticating,
    Ready,
}

/// How a response is framed on this connection.
#[derive(Clone)]
pub struct Responder {
    version: Version,
    compression: Option<Compression>,
    out: mpsc::Sender<Vec<u8>>,
}

impl Responder {
    pub fn version(&self) -> Version {
        self.version
    }

    fn encode(&self, flags: u8, stream: i16, opcode: Opcode, body: &[u8]) -> Vec<u8> {
        frame::encode(self.version.byte(), flags, stream, opcode, body, self.compression)
    }

    /// Queues a response; false when the connection is gone.
    pub async fn send(&self, flags: u8, stream: i16, opcode: Opcode, body: &[u8]) -> bool {
        self.out.send(self.encode(flags, stream, opcode, body)).await.is_ok()
    }

    async fn error(&self, stream: i16, e: &NativeError) -> bool {
        self.send(0, stream, Opcode::Error, &e.body()).await
    }
}

struct Connection {
    ctx: Arc<NativeContext>,
    session: Arc<ConnSession>,
    phase: Phase,
    version: Option<Version>,
    compression: Option<Compression>,
    out: mpsc::Sender<Vec<u8>>,
    permits: Arc<Semaphore>,
    /// Forwards the events registered for; started by the first REGISTER.
    events: Option<JoinHandle<()>>,
    /// The event types registered for (`events::type_bit`s), read by that task.
    registered: Arc<std::sync::atomic::AtomicU8>,
}

/// Serves `socket` until the client leaves, a frame is refused, or `stop`.
pub async fn serve(ctx: Arc<NativeContext>, socket: TcpStream, peer: SocketAddr, mut stop: watch::Receiver<bool>) {
    let (mut reader, writer) = socket.into_split();
    let (out, queued) = mpsc::channel(OUTBOX);
    let writer = tokio::spawn(write_loop(writer, queued));
    let decoder = Decoder { max_body: ctx.max_frame_bytes };
    let mut conn = Connection {
        ctx,
        session: Arc::new(ConnSession::new(peer.ip())),
        phase: Phase::Unstarted,
        version: None,
        compression: None,
        out,
        permits: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
        events: None,
        registered: Arc::default(),
    };
    let mut buf: Vec<u8> = Vec::with_capacity(16 * 1024);
    'read: loop {
        loop {
            match decoder.decode(&buf, conn.compression) {
                Ok(Some((frame, used))) => {
                    buf.drain(..used);
                    match conn.on_frame(frame).await {
                        Step::Next => {}
                        Step::Close => break 'read,
                        // More bytes already here: the client sends without waiting.
                        Step::Run(statement) if !buf.is_empty() => {
                            tokio::spawn(statement);
                        }
                        // Most clients wait for the answer before they send more: the
                        // statement runs here, and only moves to a task of its own if another
                        // frame arrives first, so a slow statement holds up no other stream.
                        Step::Run(mut statement) => {
                            reserve_room(&mut buf);
                            let read = tokio::select! {
                                biased;
                                () = &mut statement => continue,
                                r = reader.read_buf(&mut buf) => r,
                                _ = stop.changed() => {
                                    tokio::spawn(statement);
                                    break 'read;
                                }
                            };
                            tokio::spawn(statement);
                            if !read_went_on(read, peer) {
                                break 'read;
                            }
                        }
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    conn.refuse_frame(e).await;
                    break 'read;
                }
            }
        }
        reserve_room(&mut buf);
        let read = tokio::select! {
            r = reader.read_buf(&mut buf) => r,
            _ = stop.changed() => break,
        };
        if !read_went_on(read, peer) {
            break;
        }
    }
    if let Some(events) = conn.events.take() {
        events.abort();
    }
    // The writer ends once every request under way has sent its answer and dropped its
    // sender.
    drop(conn);
    if tokio::time::timeout(FINISH_GRACE, writer).await.is_err() {
        debug!(%peer, "native transport connection closed with answers still pending");
    }
}

/// What the reader does after a frame.
enum Step {
    Next,
    Close,
    /// A statement to run, holding its permit and answering on its stream.
    Run(Pin<Box<dyn Future<Output = ()> + Send>>),
}

fn reserve_room(buf: &mut Vec<u8>) {
    if buf.capacity() - buf.len() < 4096 {
        buf.reserve(16 * 1024);
    }
}

/// Whether the connection stays open after a read of the socket.
fn read_went_on(read: std::io::Result<usize>, peer: SocketAddr) -> bool {
    match read {
        Ok(0) => false,
        Ok(_) => true,
        Err(e) => {
            debug!(%peer, error = %e, "native transport connection read failed");
            false
        }
    }
}

async fn write_loop(mut socket: OwnedWriteHalf, mut queued: mpsc::Receiver<Vec<u8>>) {
    let mut batch = Vec::with_capacity(WRITE_BATCH);
    while let Some(first) = queued.recv().await {
        batch.clear();
        batch.extend_from_slice(&first);
        while batch.len() < WRITE_BATCH {
            match queued.try_recv() {
                Ok(more) => batch.extend_from_slice(&more),
                Err(_) => break,
            }
        }
        if socket.write_all(&batch).await.is_err() {
            return;
        }
    }
    let _ = socket.shutdown().await;
}

impl Connection {
    fn responder(&self, version: Version) -> Responder {
        Responder { version, compression: self.compression, out: self.out.clone() }
    }

    /// Answers a refused frame in the version the client spoke (v4 past 4, so drivers of
    /// later versions read it and step down).
    async fn refuse_frame(&self, e: FrameError) {
        let version = match &e {
            FrameError::UnsupportedVersion { version, .. } if (1..=4).contains(version) => *version,
            FrameError::UnsupportedVersion { .. } => 4,
            _ => self.version.map_or(4, Version::byte),
        };
        // The compression is not trusted for a refused frame: answered plain.
        let body = NativeError::Protocol(e.to_string()).body();
        let _ = self.out.send(frame::encode(version, 0, e.stream(), Opcode::Error, &body, None)).await;
        debug!(error = %e, "native transport frame refused; closing the connection");
    }

    /// Handles one frame: the connection's own requests here and now, a statement handed
    /// back to run.
    async fn on_frame(&mut self, frame: Frame) -> Step {
        let step = |went_on: bool| if went_on { Step::Next } else { Step::Close };
        match self.version {
            None => self.version = Some(frame.version),
            Some(v) if v != frame.version => {
                let e = NativeError::Protocol(format!(
                    "Invalid message version. Got {} but previous messages on this connection had version {}",
                    frame.version.byte(),
                    v.byte()
                ));
                self.responder(v).error(frame.stream, &e).await;
                return Step::Close;
            }
            Some(_) => {}
        }
        let respond = self.responder(frame.version);
        let stream = frame.stream;
        let (opcode, request) = match request::decode(&frame) {
            Ok(r) => r,
            Err(DecodeError::Protocol(why)) => return step(respond.error(stream, &NativeError::Protocol(why)).await),
            Err(DecodeError::UnknownOpcode(op)) => {
                let e = NativeError::Protocol(format!("Unknown opcode {op}"));
                return step(respond.error(stream, &e).await);
            }
        };
        if let Err(e) = self.check_phase(opcode) {
            return step(respond.error(stream, &e).await);
        }
        match request {
            Request::Options => {
                step(respond.send(0, stream, Opcode::Supported, &super::result::supported(frame.version)).await)
            }
            Request::Startup(options) => step(self.startup(&respond, stream, &options).await),
            Request::AuthResponse(token) => step(self.authenticate(&respond, stream, token.as_deref()).await),
            Request::Register(types) => step(self.register(&respond, stream, &types).await),
            statement => {
                let Ok(permit) = self.permits.clone().acquire_owned().await else { return Step::Close };
                let ctx = self.ctx.clone();
                let session = self.session.clone();
                let traced = frame.flags & frame::flags::TRACING != 0;
                Step::Run(Box::pin(async move {
                    let _permit = permit;
                    handler::run(&ctx, &session, &respond, stream, traced, statement).await;
                }))
            }
        }
    }

    fn check_phase(&self, opcode: Opcode) -> Result<(), NativeError> {
        let unexpected = |expecting: &str| {
            Err(NativeError::Protocol(format!("Unexpected message {}, expecting {expecting}", opcode.name())))
        };
        match (self.phase, opcode) {
            (Phase::Unstarted, Opcode::Startup | Opcode::Options) => Ok(()),
            (Phase::Unstarted, _) => unexpected("STARTUP or OPTIONS"),
            (Phase::Authenticating, Opcode::AuthResponse | Opcode::Options) => Ok(()),
            (Phase::Authenticating, _) => unexpected("SASL_RESPONSE"),
            (Phase::Ready, Opcode::Startup) => {
                Err(NativeError::Protocol("Unexpected message STARTUP, the connection is already initialized".into()))
            }
            (Phase::Ready, Opcode::AuthResponse) => Err(NativeError::Protocol(
                "Unexpected message AUTH_RESPONSE, the connection is already authenticated".into(),
            )),
            (Phase::Ready, _) => Ok(()),
        }
    }

    /// STARTUP: the CQL version checked, the compression agreed; READY, or AUTHENTICATE when
    /// logins are required. Every later frame (this answer included) may be compressed.
    async fn startup(&mut self, respond: &Responder, stream: i16, options: &[(String, String)]) -> bool {
        let option = |name: &str| options.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
        let Some(cql_version) = option("CQL_VERSION") else {
            let e = NativeError::Protocol("Missing value CQL_VERSION in STARTUP message".into());
            return respond.error(stream, &e).await;
        };
        if let Err(why) = check_cql_version(cql_version) {
            return respond.error(stream, &NativeError::Protocol(why)).await;
        }
        if let Some(name) = option("COMPRESSION") {
            match Compression::from_name(name) {
                Some(c) => self.compression = Some(c),
                None => {
                    let e = NativeError::Protocol(format!("Unknown compression algorithm: {name}"));
                    return respond.error(stream, &e).await;
                }
            }
        }
        let respond = self.responder(respond.version);
        if self.ctx.authenticator.requires_login() {
            self.phase = Phase::Authenticating;
            let mut body = Vec::new();
            super::wire::Writer::put_string(&mut body, AUTHENTICATOR_CLASS);
            respond.send(0, stream, Opcode::Authenticate, &body).await
        } else {
            self.phase = Phase::Ready;
            respond.send(0, stream, Opcode::Ready, &[]).await
        }
    }

    /// AUTH_RESPONSE with a SASL PLAIN token: `authzid NUL user NUL password`.
    async fn authenticate(&mut self, respond: &Responder, stream: i16, token: Option<&[u8]>) -> bool {
        let credentials = match token.map(plain_credentials) {
            Some(Ok(c)) => c,
            Some(Err(why)) => return respond.error(stream, &NativeError::BadCredentials(why)).await,
            None => {
                return respond.error(stream, &NativeError::BadCredentials("Authentication token is null".into())).await
            }
        };
        match self.ctx.authenticator.login(&credentials) {
            Ok(user) => {
                self.session.set_user(user);
                self.phase = Phase::Ready;
                let mut body = Vec::new();
                super::wire::Writer::put_bytes(&mut body, None);
                respond.send(0, stream, Opcode::AuthSuccess, &body).await
            }
            Err(e) => {
                let e: NativeError = crate::cql_access::Refusal::Auth(e).into();
                let e = match e {
                    NativeError::Unauthorized(m) => NativeError::BadCredentials(m),
                    other => other,
                };
                respond.error(stream, &e).await
            }
        }
    }

    /// REGISTER: READY, and from now on the events of the types named (added to those of
    /// earlier REGISTERs).
    async fn register(&mut self, respond: &Responder, stream: i16, types: &[String]) -> bool {
        let mut bits = 0;
        for t in types {
            let Some(bit) = super::events::type_bit(t) else {
                let e = NativeError::Protocol(format!("Invalid value '{t}' for Type"));
                return respond.error(stream, &e).await;
            };
            bits |= bit;
        }
        self.registered.fetch_or(bits, std::sync::atomic::Ordering::Relaxed);
        if self.events.is_none() && !types.is_empty() {
            let mut events = self.ctx.events.subscribe();
            let registered = self.registered.clone();
            let out = respond.clone();
            self.events = Some(tokio::spawn(async move {
                loop {
                    match events.recv().await {
                        Ok(event) => {
                            let wanted = registered.load(std::sync::atomic::Ordering::Relaxed) & event.bit() != 0;
                            if wanted && !out.send(0, -1, Opcode::Event, &super::result::event(&event)).await {
                                return;
                            }
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                            debug!(missed = n, "a registered connection fell behind on events");
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                    }
                }
            }));
        }
        respond.send(0, stream, Opcode::Ready, &[]).await
    }
}

/// 3.11's check of STARTUP's CQL_VERSION: any version from 3.0.0 on (drivers send their own,
/// "3.0.0" or "4.0.0"); the statements are then read as this node's CQL, whatever was asked.
fn check_cql_version(version: &str) -> Result<(), String> {
    let mut parts = version.split(['.', '-']);
    let number = |p: Option<&str>| p.and_then(|p| p.parse::<u32>().ok());
    let (Some(major), Some(_minor)) = (number(parts.next()), number(parts.next())) else {
        return Err(format!("Invalid version value: {version}"));
    };
    if major < 3 {
        return Err(format!(
            "CQL version {version} is not supported by the binary protocol (supported version are >= 3.0.0)"
        ));
    }
    Ok(())
}

/// The username and password of a SASL PLAIN token, as the authenticator takes them.
fn plain_credentials(token: &[u8]) -> Result<std::collections::BTreeMap<String, String>, String> {
    let mut parts = token.split(|b| *b == 0);
    let (Some(_authzid), Some(user), Some(password), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("Password must not be null".into());
    };
    let text = |b: &[u8]| String::from_utf8(b.to_vec()).map_err(|_| "Invalid UTF-8 in the credentials".to_string());
    let (user, password) = (text(user)?, text(password)?);
    if user.is_empty() {
        return Err("Authentication ID must not be null".into());
    }
    if password.is_empty() {
        return Err("Password must not be null".into());
    }
    Ok([("username".to_string(), user), ("password".to_string(), password)].into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cql_versions_from_3_on_are_accepted() {
        for ok in ["3.0.0", "3.4.4", "4.0.0", "3.4.4-SNAPSHOT", "3.0"] {
            assert_eq!(check_cql_version(ok), Ok(()), "{ok}");
        }
        assert!(check_cql_version("2.0.0").expect_err("old").contains("supported version are >= 3.0.0"));
        assert_eq!(check_cql_version("three").expect_err("bad"), "Invalid version value: three");
        assert!(check_cql_version("3").is_err());
    }

    #[test]
    fn plain_tokens_give_user_and_password() {
        let c = plain_credentials(b"\0jsmith\0havebadpass").expect("a PLAIN token");
        assert_eq!(c.get("username").map(String::as_str), Some("jsmith"));
        assert_eq!(c.get("password").map(String::as_str), Some("havebadpass"));
        assert!(plain_credentials(b"jsmith").is_err());
        assert!(plain_credentials(b"\0\0pw").is_err());
        assert!(plain_credentials(b"\0u\0p\0extra").is_err());
    }
}
