//! Harness for end-to-end tests: start real `sibyl` processes and connect Thrift clients.
//!
//! Every scenario in `tests/tests/` starts its own node with [`Node::start`], which
//! - writes a `storage-conf.xml` (Cassandra 0.6 format) into a fresh temporary directory whose
//!   `data/`, `commitlog/` and `saved_caches/` subdirectories the node uses,
//! - picks free ports on 127.0.0.1 (bind to port 0, read it, release it),
//! - spawns `sibyl --config <that file>` with stdout and stderr going to `sibyl.log` in the same
//!   directory, and waits (at most [`START_TIMEOUT`]) for the line
//!   `Listening for thrift clients on`, panicking with the log otherwise.
//!
//! # Which `sibyl` binary runs
//!
//! An integration test can only get `CARGO_BIN_EXE_<name>` for binaries of its own package, and
//! `sibyl` lives in the `server` package (`sibyltool` in `tools/sibyltool`), so [`sibyl_bin`]
//! finds it this way (tests in other packages, like `sibyl-stress`'s, use it too):
//! 1. the `SIBYL_BIN` environment variable, if set (CI builds once and points every test at it);
//! 2. otherwise it runs `cargo build -p server -p sibyltool --bin sibyl --bin sibyltool` once per
//!    test process (so [`sibyltool_bin`] is there too; `SIBYLTOOL_BIN` overrides it), with the cargo
//!    that built this test (`env!("CARGO")`), this workspace's manifest, and the target directory
//!    and profile this test executable was built into (read from its own path,
//!    `<target>/<debug|release>/deps/<test>-<hash>`). For `debug` it builds with
//!    `--profile test` (so the dependencies already compiled for the test are reused), for
//!    `release` with `--profile bench` (what `cargo test --release` uses). Cargo's own locking makes
//!    concurrent test processes safe. When cross-compiling (`<target>/<triple>/...`), set `SIBYL_BIN`.
//!
//! # Waiting
//!
//! Every wait is bounded: start ([`START_TIMEOUT`]), stop ([`STOP_TIMEOUT`]), and client sockets
//! have read and write timeouts ([`CLIENT_IO_TIMEOUT`]) so a hung server fails a test instead of
//! hanging it. Dropping a [`Node`] kills its process; if the test is panicking, the node's log is
//! printed first so the failure can be understood from the test output alone.

use std::fs::File;
use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol, TInputProtocol, TOutputProtocol};
use thrift::transport::{
    TBufferedReadTransport, TBufferedWriteTransport, TFramedReadTransport, TFramedWriteTransport, TIoChannel,
    TTcpChannel,
};
use thrift_idl as t;

pub use thrift_idl::{CassandraSyncClient, TCassandraSyncClient};

mod call_values;
mod cluster;
mod config;
pub mod native;
pub mod netns;
mod python;
mod thrift_helpers;

pub use python::{python27_cqlsh, run_python, run_python_unittest_on, run_python_unittest_with, PY27_PACKAGES};

pub use call_values::{CallParts, CallValues};
pub use cluster::{
    each_of_two_alone_answers_every_row, marked_down, nodes_with_kv_keyspace, random_partitioner_tokens, seen_as,
    start_cluster, status_lines, three_nodes_at_rf2_with_rows, value_at_one, wait_for_ring, wait_until_gone, Ports,
};
pub use config::{free_port, free_port_on, keyspace_xml, Config};
pub use thrift_helpers::*;

/// The line the daemon logs once it accepts Thrift clients.
pub const READY_LINE: &str = "Listening for thrift clients on";
/// Longest wait for a node to start serving.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest wait for a node to exit after SIGTERM (it flushes memtables first).
pub const STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// Read/write timeout of every client socket.
pub const CLIENT_IO_TIMEOUT: Duration = Duration::from_secs(20);

pub const RANDOM_PARTITIONER: &str = "org.apache.cassandra.dht.RandomPartitioner";
pub const BYTE_ORDERED_PARTITIONER: &str = "org.apache.cassandra.dht.ByteOrderedPartitioner";

/// A connected client; framed and unframed clients have this one type.
pub type Client = CassandraSyncClient<Box<dyn TInputProtocol + Send>, Box<dyn TOutputProtocol + Send>>;

// ---------------------------------------------------------------------------------------------
// Locating the binary
// ---------------------------------------------------------------------------------------------

/// The `sibyl` executable to run (see the crate docs for how it is found).
pub fn sibyl_bin() -> PathBuf {
    server_bin("sibyl", "SIBYL_BIN")
}

/// The `sibyltool` executable, found like [`sibyl_bin`] (`SIBYLTOOL_BIN` overrides).
pub fn sibyltool_bin() -> PathBuf {
    server_bin("sibyltool", "SIBYLTOOL_BIN")
}

fn server_bin(name: &str, override_var: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(override_var) {
        let p = PathBuf::from(p);
        assert!(p.is_file(), "{override_var}={} is not a file", p.display());
        return p;
    }
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let bin = BUILT.get_or_init(build_server_bins).join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.is_file(), "cargo built the server binaries but {} does not exist", bin.display());
    bin
}

/// Builds `sibyl` and `sibyltool` (one cargo run) and returns the directory they are in.
fn build_server_bins() -> PathBuf {
    let exe = std::env::current_exe().expect("path of the running test executable");
    // <target>/<profile dir>/deps/<test>-<hash>
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .unwrap_or_else(|| panic!("cannot find the profile directory above {}", exe.display()))
        .to_path_buf();
    let target_dir = profile_dir
        .parent()
        .unwrap_or_else(|| panic!("cannot find the target directory above {}", profile_dir.display()))
        .to_path_buf();
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "test".to_string(),
        Some("release") => "bench".to_string(),
        Some(other) => other.to_string(),
        None => panic!("unexpected profile directory {}", profile_dir.display()),
    };
    let manifest = repo_root().join("Cargo.toml");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let output = Command::new(&cargo)
        .args(["build", "--quiet", "-p", "server", "-p", "sibyltool", "--bin", "sibyl", "--bin", "sibyltool"])
        .args(["--profile", &profile, "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", &target_dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {} to build sibyl: {e}", Path::new(&cargo).display()));
    assert!(
        output.status.success(),
        "building sibyl and sibyltool failed ({}); set SIBYL_BIN and SIBYLTOOL_BIN to use prebuilt binaries\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    profile_dir
}

// ---------------------------------------------------------------------------------------------
// Nodes
// ---------------------------------------------------------------------------------------------

/// One running (or stopped) `sibyl` process and its directory.
pub struct Node {
    dir: tempfile::TempDir,
    config: Config,
    child: Option<Child>,
    port: u16,
    admin_port: u16,
    native_port: u16,
    /// Ports kept across restarts (a cluster node's identity is its address and storage port).
    fixed_ports: Option<Ports>,
    log_path: PathBuf,
    /// Log of earlier runs of this node (before restarts), kept for failure reports.
    earlier_logs: String,
}

impl Node {
    /// Starts a node with `config` in a fresh directory; panics (with the log) if it does not
    /// come up within [`START_TIMEOUT`].
    pub fn start(config: Config) -> Node {
        Node::start_with_files(config, &[])
    }

    /// Like [`Node::start`], with extra files (name, content) written next to storage-conf.xml
    /// first, such as passwd.properties.
    pub fn start_with_files(config: Config, files: &[(&str, &str)]) -> Node {
        let dir = tempfile::Builder::new().prefix("sibyl-e2e-").tempdir().expect("create a temporary directory");
        for sub in ["data", "commitlog", "saved_caches"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("create node subdirectory");
        }
        for (name, content) in files {
            std::fs::write(dir.path().join(name), content).expect("write a file next to the config");
        }
        let log_path = dir.path().join("sibyl.log");
        let mut node = Node {
            dir,
            config,
            child: None,
            port: 0,
            admin_port: 0,
            native_port: 0,
            fixed_ports: None,
            log_path,
            earlier_logs: String::new(),
        };
        node.launch();
        node
    }

    /// Starts a node of a cluster with fixed `ports` (kept across restarts); panics with the log
    /// if it does not come up.
    pub fn start_at(config: Config, ports: Ports) -> Node {
        let mut node = Node::spawn_at(config, ports);
        node.wait_started();
        node
    }

    /// Like [`Node::start_at`] for a start that may fail: the node, and its exit status if it
    /// exited before serving ([`Node::log`] says why).
    pub fn try_start_at(config: Config, ports: Ports) -> (Node, Result<(), ExitStatus>) {
        let mut node = Node::spawn_at(config, ports);
        let started = node.wait_ready();
        (node, started)
    }

    /// Starts the process of a cluster node with fixed `ports` and returns at once: several
    /// nodes spawned together start together, as an operator's do. [`Node::wait_started`]
    /// waits for it to serve.
    pub fn spawn_at(config: Config, ports: Ports) -> Node {
        let mut node = Node::unstarted_at(config, ports);
        node.spawn(&[]);
        node
    }

    /// Waits until a node from [`Node::spawn_at`] serves; panics with its config and log if it
    /// exits first.
    pub fn wait_started(&mut self) {
        if let Err(status) = self.wait_ready() {
            self.exited_before_serving(status);
        }
    }

    fn exited_before_serving(&self, status: ExitStatus) -> ! {
        panic!(
            "sibyl at {} exited ({status}) before serving clients.\nconfig:\n{}\nlog:\n{}",
            self.address(),
            std::fs::read_to_string(self.config_path()).unwrap_or_default(),
            self.full_log()
        );
    }

    fn unstarted_at(config: Config, ports: Ports) -> Node {
        let dir = tempfile::Builder::new().prefix("sibyl-e2e-").tempdir().expect("create a temporary directory");
        for sub in ["data", "commitlog", "saved_caches"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("create node subdirectory");
        }
        let log_path = dir.path().join("sibyl.log");
        Node {
            dir,
            config,
            child: None,
            port: ports.thrift,
            admin_port: ports.admin,
            native_port: ports.native,
            fixed_ports: Some(ports),
            log_path,
            earlier_logs: String::new(),
        }
    }

    /// This node's internode endpoint (`ip:storage port`), as seeds and other nodes name it.
    pub fn storage_endpoint(&self) -> String {
        let port = self.fixed_ports.map_or(0, |p| p.storage);
        format!("{}:{port}", self.config.address())
    }

    pub fn address(&self) -> String {
        self.config.address()
    }

    /// Sends SIGSTOP: the process stays, but answers nothing until [`Node::resume`].
    pub fn pause(&mut self) {
        self.signal("-STOP");
    }

    /// Sends SIGCONT after [`Node::pause`].
    pub fn resume(&mut self) {
        self.signal("-CONT");
    }

    fn signal(&mut self, signal: &str) {
        let Some(child) = self.child.as_ref() else { panic!("signal {signal}: the node is not running") };
        let status = Command::new("kill").args([signal, &child.id().to_string()]).status();
        assert!(matches!(status, Ok(s) if s.success()), "kill {signal}: {status:?}");
    }

    /// Starts a node with the SimpleAuthenticator, Cassandra's sample access.properties
    /// (examples/simple_authentication) plus a user whose only grant is one column family
    /// (`MusicApp.song_data.<rw>=dilbert`), and the keyspaces those grants name: Keyspace1
    /// (Standard1, Standard2) and MusicApp (song_data, playlists). Passwords: jsmith
    /// `havebadpass`, `Elvis Presley` `graceland4evar`, dilbert `nomoovertime`.
    pub fn start_with_sample_grants() -> Node {
        let cf = |name: &str| format!(r#"<ColumnFamily Name="{name}" CompareWith="UTF8Type"/>"#);
        let config = Config::random()
            .extra("  <Authenticator>org.apache.cassandra.auth.SimpleAuthenticator</Authenticator>\n")
            .keyspaces(
                keyspace_xml("Keyspace1", &[&cf("Standard1"), &cf("Standard2")])
                    + "\n"
                    + &keyspace_xml("MusicApp", &[&cf("song_data"), &cf("playlists")]),
            );
        let access = "<modify-keyspaces>=jsmith\n\
            Keyspace1.<ro>=jsmith,Elvis Presley\n\
            Keyspace1.<rw>=dilbert\n\
            Keyspace1.Standard1.<rw>=jsmith,Elvis Presley,dilbert\n\
            MusicApp.song_data.<rw>=dilbert\n";
        Node::start_with_files(
            config,
            &[
                ("passwd.properties", "jsmith=havebadpass\nElvis\\ Presley=graceland4evar\ndilbert=nomoovertime\n"),
                ("access.properties", access),
            ],
        )
    }

    /// Starts a node, creates `keyspace` with `cf_defs` over Thrift and returns a client in it.
    pub fn start_with_keyspace(config: Config, keyspace: &str, cf_defs: Vec<t::CfDef>) -> (Node, Client) {
        let node = Node::start(config);
        let mut c = node.client();
        create_keyspace(&mut c, keyspace, cf_defs);
        ok("set_keyspace", c.set_keyspace(keyspace.to_string()));
        (node, c)
    }

    /// Starts with the default configuration (RandomPartitioner, no keyspaces).
    pub fn start_default() -> Node {
        Node::start(Config::default())
    }

    /// The node's directory (config, data, commit log, log).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// What the next start writes into `storage-conf.xml` (a restart with another setting).
    pub fn config_mut(&mut self) -> &mut Config {
        &mut self.config
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("storage-conf.xml")
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The admin interface's port (for `sibyltool -p`); it accepts once the node is ready.
    pub fn admin_port(&self) -> u16 {
        self.admin_port
    }

    /// Runs `sibyltool -h 127.0.0.1 -p <admin port> ARGS` (see [`run_sibyltool`]).
    /// The running process' id (for a test's helper that signals it itself).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn tool(&self, args: &[&str]) -> ToolRun {
        let port = self.admin_port.to_string();
        let host = self.config.address();
        let mut all = vec!["-h", host.as_str(), "-p", port.as_str()];
        all.extend_from_slice(args);
        run_sibyltool(self.dir.path(), &all)
    }

    /// [`Node::tool`] to run on another thread, while the test does something else: its output
    /// files go to a directory of their own, so the node's other tool runs do not clash.
    pub fn tool_later(&self, args: &[&str]) -> impl FnOnce() -> ToolRun + Send + 'static {
        let dir = self.dir.path().join("tool-later");
        let mut all = vec!["-h".to_string(), self.config.address(), "-p".to_string(), self.admin_port.to_string()];
        all.extend(args.iter().map(|a| a.to_string()));
        move || {
            std::fs::create_dir_all(&dir).expect("tool output directory");
            let args: Vec<&str> = all.iter().map(String::as_str).collect();
            run_sibyltool(&dir, &args)
        }
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((self.config.ip, self.port))
    }

    /// The native protocol's address (NativeTransportPort), open once the node is ready.
    pub fn native_addr(&self) -> SocketAddr {
        SocketAddr::from((self.config.ip, self.native_port))
    }

    pub fn is_running(&mut self) -> bool {
        match &mut self.child {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// Everything the current run of the process wrote so far.
    pub fn log(&self) -> String {
        let mut s = String::new();
        if let Ok(mut f) = File::open(&self.log_path) {
            let mut bytes = Vec::new();
            let _ = f.read_to_end(&mut bytes);
            s = String::from_utf8_lossy(&bytes).into_owned();
        }
        s
    }

    fn full_log(&self) -> String {
        format!("{}{}", self.earlier_logs, self.log())
    }

    /// Writes the config with fresh ports, spawns the process and waits until it serves; panics
    /// with the config and the log if it exits first.
    fn launch(&mut self) {
        if let Err(status) = self.try_launch(&[]) {
            panic!(
                "sibyl exited ({status}) before serving clients.\nconfig:\n{}\nlog:\n{}",
                std::fs::read_to_string(self.config_path()).unwrap_or_default(),
                self.full_log()
            );
        }
    }

    /// [`Node::launch`] with `env` added to the process' environment, returning the exit status
    /// if the process exits before serving. A start that fails because another process took
    /// the port in between is retried on another port.
    fn try_launch(&mut self, env: &[(&str, &str)]) -> Result<(), ExitStatus> {
        const ATTEMPTS: usize = 3;
        for attempt in 1..=ATTEMPTS {
            self.spawn(env);
            match self.wait_ready() {
                Ok(()) => return Ok(()),
                Err(status) => {
                    let log = self.log();
                    let port_taken = log.contains("cannot listen") || log.contains("Address already in use");
                    if port_taken && attempt < ATTEMPTS && self.fixed_ports.is_none() {
                        continue;
                    }
                    return Err(status);
                }
            }
        }
        unreachable!("the last attempt returns")
    }

    /// Writes the config (fresh ports unless they are fixed) and spawns the process, without
    /// waiting for it to serve.
    fn spawn(&mut self, env: &[(&str, &str)]) {
        let storage_port = match self.fixed_ports {
            Some(p) => p.storage,
            None => {
                self.port = free_port_on(self.config.ip);
                self.admin_port = free_port_on(self.config.ip);
                self.native_port = free_port_on(self.config.ip);
                free_port_on(self.config.ip)
            }
        };
        let xml = self.config.render(self.dir.path(), self.port, storage_port, self.admin_port, self.native_port);
        std::fs::write(self.config_path(), xml).expect("write storage-conf.xml");
        // Keep what earlier runs logged; each run starts a fresh log file.
        let previous = self.log();
        if !previous.is_empty() {
            self.earlier_logs.push_str(&previous);
            self.earlier_logs.push_str("---- (restart) ----\n");
        }
        let log = File::create(&self.log_path).expect("create sibyl.log");
        let log_err = log.try_clone().expect("clone log file handle");
        let mut command = match &self.config.netns {
            None => Command::new(sibyl_bin()),
            Some(ns) => {
                // `ip netns exec` execs the server: the child is still the server's process.
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(sibyl_bin());
                c
            }
        };
        let child = command
            .arg("--config")
            .arg(self.config_path())
            .current_dir(self.dir.path())
            .env("NO_COLOR", "1")
            .env("SIBYL_LOG", std::env::var("SIBYL_LOG").unwrap_or_else(|_| "info".into()))
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn {}: {e}", sibyl_bin().display()));
        self.child = Some(child);
    }

    /// Waits for the ready line; `Err(exit status)` if the process died first.
    fn wait_ready(&mut self) -> Result<(), ExitStatus> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some(started) = self.poll_ready(deadline) {
                return started;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// One look at a starting node: `None` while it is still starting, `Some(Err(exit status))`
    /// if it died; past `deadline` it is killed and the test panics with its log.
    fn poll_ready(&mut self, deadline: Instant) -> Option<Result<(), ExitStatus>> {
        if self.log().contains(READY_LINE) && TcpStream::connect_timeout(&self.addr(), Duration::from_secs(2)).is_ok() {
            return Some(Ok(()));
        }
        let child = self.child.as_mut().expect("a child was just spawned");
        if let Ok(Some(status)) = child.try_wait() {
            self.child = None;
            return Some(Err(status));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            self.child = None;
            panic!("sibyl did not log {READY_LINE:?} within {START_TIMEOUT:?}.\nlog:\n{}", self.full_log());
        }
        None
    }

    /// Waits until every node from [`Node::spawn_at`] serves. Nodes started together wait for
    /// each other, so the first that exits fails the start with its own config and log, rather
    /// than the others timing out while they wait for it.
    pub fn wait_all_started(nodes: &mut [Node]) {
        let deadline = Instant::now() + START_TIMEOUT;
        let mut starting: Vec<usize> = (0..nodes.len()).collect();
        while !starting.is_empty() {
            let mut still = Vec::new();
            for i in starting {
                match nodes[i].poll_ready(deadline) {
                    None => still.push(i),
                    Some(Ok(())) => {}
                    Some(Err(status)) => nodes[i].exited_before_serving(status),
                }
            }
            starting = still;
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Sends SIGTERM (clean shutdown: the node flushes) and waits for the exit; panics with the
    /// log if it takes longer than [`STOP_TIMEOUT`]. Returns the exit status.
    pub fn stop(&mut self) -> ExitStatus {
        let Some(mut child) = self.child.take() else { panic!("stop(): the node is not running") };
        let pid = child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status();
        if !matches!(sent, Ok(s) if s.success()) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("could not send SIGTERM to sibyl (pid {pid}): {sent:?}");
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        loop {
            match child.try_wait() {
                Ok(Some(status)) => return status,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(25)),
                other => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!(
                        "sibyl did not exit within {STOP_TIMEOUT:?} of SIGTERM ({other:?}).\nlog:\n{}",
                        self.full_log()
                    );
                }
            }
        }
    }

    /// SIGKILLs the process (no flush, no goodbye) and reaps it.
    pub fn kill9(&mut self) {
        let Some(mut child) = self.child.take() else { panic!("kill9(): the node is not running") };
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Stops the node (SIGTERM) if it runs, then starts it again on the same directories (the
    /// Thrift port may change: connect again with [`Node::client`]).
    pub fn restart(&mut self) {
        if self.child.is_some() {
            let status = self.stop();
            assert!(status.success(), "sibyl exited with {status} on SIGTERM.\nlog:\n{}", self.full_log());
        }
        self.launch();
    }

    /// Starts a node that was stopped or killed, on the same directories.
    pub fn start_again(&mut self) {
        assert!(self.child.is_none(), "start_again(): the node is still running");
        self.launch();
    }

    /// [`Node::start_again`] with `env` added to the process' environment, for a start that may
    /// fail: `Err(exit status)` if the process exits before serving ([`Node::log`] has why).
    pub fn try_start_again(&mut self, env: &[(&str, &str)]) -> Result<(), ExitStatus> {
        assert!(self.child.is_none(), "try_start_again(): the node is still running");
        self.try_launch(env)
    }

    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect_timeout(&self.addr(), Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("connect to sibyl at {}: {e}\nlog:\n{}", self.addr(), self.full_log()));
        stream.set_read_timeout(Some(CLIENT_IO_TIMEOUT)).expect("set_read_timeout");
        stream.set_write_timeout(Some(CLIENT_IO_TIMEOUT)).expect("set_write_timeout");
        let _ = stream.set_nodelay(true);
        stream
    }

    /// A raw socket to the Thrift port, with the harness' timeouts.
    pub fn raw_socket(&self) -> TcpStream {
        self.connect()
    }

    /// A client over framed transport and the binary protocol (what Cassandra clients use).
    pub fn client(&self) -> Client {
        let (r, w) = TTcpChannel::with_stream(self.connect()).split().expect("split channel");
        let input: Box<dyn TInputProtocol + Send> =
            Box::new(TBinaryInputProtocol::new(TFramedReadTransport::new(r), true));
        let output: Box<dyn TOutputProtocol + Send> =
            Box::new(TBinaryOutputProtocol::new(TFramedWriteTransport::new(w), true));
        CassandraSyncClient::new(input, output)
    }

    /// A client over unframed (buffered) transport and the binary protocol.
    pub fn client_unframed(&self) -> Client {
        let (r, w) = TTcpChannel::with_stream(self.connect()).split().expect("split channel");
        let input: Box<dyn TInputProtocol + Send> =
            Box::new(TBinaryInputProtocol::new(TBufferedReadTransport::new(r), true));
        let output: Box<dyn TOutputProtocol + Send> =
            Box::new(TBinaryOutputProtocol::new(TBufferedWriteTransport::new(w), true));
        CassandraSyncClient::new(input, output)
    }

    /// A framed client with `keyspace` set.
    pub fn client_in(&self, keyspace: &str) -> Client {
        let mut c = self.client();
        c.set_keyspace(keyspace.to_string()).unwrap_or_else(|e| panic!("set_keyspace({keyspace}): {e:?}"));
        c
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!(
                "==== sibyl log ({}) ====\n{}==== end of sibyl log ====",
                self.log_path.display(),
                self.full_log()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// sibyltool
// ---------------------------------------------------------------------------------------------

/// Longest a `sibyltool` run may take.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(30);

/// What a `sibyltool` run printed, and its exit code.
#[derive(Debug)]
pub struct ToolRun {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl ToolRun {
    /// Panics unless the run exited 0.
    pub fn ok(self) -> ToolRun {
        assert_eq!(self.code, Some(0), "sibyltool failed: {self:?}");
        self
    }
}

/// Waits for `child` to exit, at most `limit`; past that it is killed and reaped, and the
/// answer is `None`.
pub fn wait_bounded(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait for a child process") {
            return Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `sibyltool ARGS` with its output in files under `dir` (no pipe can fill up), killing it
/// after [`TOOL_TIMEOUT`].
pub fn run_sibyltool(dir: &Path, args: &[&str]) -> ToolRun {
    let out_path = dir.join("tool.out");
    let err_path = dir.join("tool.err");
    let mut child = Command::new(sibyltool_bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).expect("create tool.out"))
        .stderr(File::create(&err_path).expect("create tool.err"))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot spawn {}: {e}", sibyltool_bin().display()));
    let Some(status) = wait_bounded(&mut child, TOOL_TIMEOUT) else {
        panic!("sibyltool {args:?} did not finish within {TOOL_TIMEOUT:?}");
    };
    ToolRun {
        code: status.code(),
        stdout: std::fs::read_to_string(out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(err_path).unwrap_or_default(),
    }
}

/// Polls `f` every 50 ms until it returns true or `limit` passes; returns whether it did.
pub fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Lower-case hex of bytes: a ByteOrderedPartitioner token.
pub fn hex_token(key: &[u8]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// The repository's root directory (for the sample configuration and the Python tests): the
/// nearest directory above the running test's package (Cargo sets `CARGO_MANIFEST_DIR` when it
/// runs tests) whose Cargo.toml declares the workspace. Not this library's compile-time path:
/// a target directory shared by two checkouts (as `.ci/run` shares /var/tmp/sibyl-target)
/// reuses this library as first built, and that checkout may be gone.
pub fn repo_root() -> PathBuf {
    let compiled_in = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let Some(package) = std::env::var_os("CARGO_MANIFEST_DIR") else { return compiled_in };
    Path::new(&package)
        .ancestors()
        .find(|dir| std::fs::read_to_string(dir.join("Cargo.toml")).is_ok_and(|t| t.contains("[workspace]")))
        .map_or(compiled_in, Path::to_path_buf)
}
