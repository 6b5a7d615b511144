//! `sibyltool` against a real `sibyl` process: data written over Thrift, then flush, cfstats,
//! ring, status, info, describecluster, getendpoints, tpstats, netstats, cleanup, the ring
//! operations that need the cluster layer, errors, and drain (after which Thrift writes fail).
//!
//! Every wait is bounded: node start, each tool run, Thrift sockets, node stop.

use std::fs::File;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use storage::dht::Partitioner;
use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol, TInputProtocol, TOutputProtocol};
use thrift::transport::{TFramedReadTransport, TFramedWriteTransport, TIoChannel, TTcpChannel};
use thrift_idl::{self as t, CassandraSyncClient, TCassandraSyncClient};

const START_TIMEOUT: Duration = Duration::from_secs(30);
const TOOL_TIMEOUT: Duration = Duration::from_secs(30);
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
const IO_TIMEOUT: Duration = Duration::from_secs(20);
const CLUSTER: &str = "Sibyl Tool Test";

type Client = CassandraSyncClient<Box<dyn TInputProtocol + Send>, Box<dyn TOutputProtocol + Send>>;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

struct Node {
    dir: tempfile::TempDir,
    child: Option<Child>,
    thrift_port: u16,
    admin_port: u16,
}

impl Node {
    fn start() -> Node {
        let dir = tempfile::Builder::new().prefix("sibyltool-").tempdir().expect("tempdir");
        let mut node = Node { dir, child: None, thrift_port: 0, admin_port: 0 };
        for attempt in 1..=3 {
            node.thrift_port = free_port();
            node.admin_port = free_port();
            std::fs::write(node.config_path(), node.config_xml(free_port())).expect("write config");
            let log = File::create(node.log_path()).expect("log file");
            let child = Command::new(env!("CARGO_BIN_EXE_sibyl"))
                .arg("--config")
                .arg(node.config_path())
                .current_dir(node.dir.path())
                .env("NO_COLOR", "1")
                .env("SIBYL_LOG", "info")
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("clone log"))
                .stderr(log)
                .spawn()
                .expect("spawn sibyl");
            node.child = Some(child);
            match node.wait_ready() {
                Ok(()) => return node,
                Err(status) if attempt < 3 && node.log().contains("Address already in use") => {
                    eprintln!("port taken ({status}), retrying");
                }
                Err(status) => panic!("sibyl exited ({status}) before serving.\nlog:\n{}", node.log()),
            }
        }
        unreachable!("the last attempt returns or panics")
    }

    fn config_path(&self) -> PathBuf {
        self.dir.path().join("storage-conf.xml")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("sibyl.log")
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    fn config_xml(&self, storage_port: u16) -> String {
        let dir = self.dir.path().display();
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<Storage>
  <ClusterName>{CLUSTER}</ClusterName>
  <Partitioner>org.apache.cassandra.dht.RandomPartitioner</Partitioner>
  <CommitLogDirectory>{dir}/commitlog</CommitLogDirectory>
  <DataFileDirectories><DataFileDirectory>{dir}/data</DataFileDirectory></DataFileDirectories>
  <Seeds><Seed>127.0.0.1</Seed></Seeds>
  <ListenAddress>127.0.0.1</ListenAddress>
  <StoragePort>{storage_port}</StoragePort>
  <ThriftAddress>127.0.0.1</ThriftAddress>
  <ThriftPort>{thrift}</ThriftPort>
  <AdminAddress>127.0.0.1</AdminAddress>
  <AdminPort>{admin}</AdminPort>
  <CommitLogSync>periodic</CommitLogSync>
  <CommitLogSyncPeriodInMS>1000</CommitLogSyncPeriodInMS>
  <Keyspaces>
    <Keyspace Name="Keyspace1">
      <ColumnFamily Name="Standard1" CompareWith="BytesType"/>
      <ColumnFamily Name="Standard2" CompareWith="UTF8Type"/>
      <ReplicaPlacementStrategy>org.apache.cassandra.locator.RackUnawareStrategy</ReplicaPlacementStrategy>
      <ReplicationFactor>1</ReplicationFactor>
      <EndPointSnitch>org.apache.cassandra.locator.EndPointSnitch</EndPointSnitch>
    </Keyspace>
  </Keyspaces>
</Storage>
"#,
            thrift = self.thrift_port,
            admin = self.admin_port,
        )
    }

    /// Until both the Thrift and the admin ports accept connections.
    fn wait_ready(&mut self) -> Result<(), ExitStatus> {
        let deadline = Instant::now() + START_TIMEOUT;
        let up = |port: u16| {
            TcpStream::connect_timeout(&SocketAddr::from(([127, 0, 0, 1], port)), Duration::from_secs(1)).is_ok()
        };
        loop {
            if self.log().contains("Listening for thrift clients on") && up(self.thrift_port) && up(self.admin_port) {
                return Ok(());
            }
            let child = self.child.as_mut().expect("spawned");
            if let Ok(Some(status)) = child.try_wait() {
                self.child = None;
                return Err(status);
            }
            if Instant::now() > deadline {
                panic!(
                    "sibyl did not serve Thrift and admin within {START_TIMEOUT:?} (does daemon.rs start \
                     server::admin::serve?)\nlog:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    fn client(&self) -> Client {
        let stream = TcpStream::connect_timeout(&SocketAddr::from(([127, 0, 0, 1], self.thrift_port)), IO_TIMEOUT)
            .expect("connect to thrift");
        stream.set_read_timeout(Some(IO_TIMEOUT)).expect("timeout");
        stream.set_write_timeout(Some(IO_TIMEOUT)).expect("timeout");
        let (r, w) = TTcpChannel::with_stream(stream).split().expect("split");
        let input: Box<dyn TInputProtocol + Send> =
            Box::new(TBinaryInputProtocol::new(TFramedReadTransport::new(r), true));
        let output: Box<dyn TOutputProtocol + Send> =
            Box::new(TBinaryOutputProtocol::new(TFramedWriteTransport::new(w), true));
        let mut c = CassandraSyncClient::new(input, output);
        c.set_keyspace("Keyspace1".into()).expect("set_keyspace");
        c
    }

    /// Runs `sibyltool -h 127.0.0.1 -p <admin port> ARGS`.
    fn tool(&self, args: &[&str]) -> ToolRun {
        let port = self.admin_port.to_string();
        let mut all = vec!["-h", "127.0.0.1", "-p", port.as_str()];
        all.extend_from_slice(args);
        run_tool(self.dir.path(), &all)
    }

    /// SIGTERM, then wait for the exit.
    fn stop(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("running");
        let pid = child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().expect("run kill");
        assert!(sent.success(), "kill -TERM {pid}");
        let deadline = Instant::now() + STOP_TIMEOUT;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("sibyl did not exit within {STOP_TIMEOUT:?} of SIGTERM.\nlog:\n{}", self.log());
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!("==== sibyl log ====\n{}==== end of sibyl log ====", self.log());
        }
    }
}

#[derive(Debug)]
struct ToolRun {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl ToolRun {
    fn ok(self) -> ToolRun {
        assert_eq!(self.code, Some(0), "sibyltool failed: {self:?}");
        self
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }
}

/// Runs the tool with output in files (no pipe can fill up), killing it after [`TOOL_TIMEOUT`].
fn run_tool(dir: &Path, args: &[&str]) -> ToolRun {
    let out_path = dir.join("tool.out");
    let err_path = dir.join("tool.err");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sibyltool"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).expect("out file"))
        .stderr(File::create(&err_path).expect("err file"))
        .spawn()
        .expect("spawn sibyltool");
    let deadline = Instant::now() + TOOL_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait sibyltool") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("sibyltool {args:?} did not finish within {TOOL_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    ToolRun {
        code: status.code(),
        stdout: std::fs::read_to_string(out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(err_path).unwrap_or_default(),
    }
}

fn insert(c: &mut Client, cf: &str, key: &str) -> thrift::Result<()> {
    let column = t::Column::new(b"name".to_vec(), b"value".to_vec(), 1_000_i64, None);
    c.insert(key.as_bytes().to_vec(), t::ColumnParent::new(cf.to_string(), None), column, t::ConsistencyLevel::ONE)
}

fn line_value<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.trim_start().strip_prefix(label).map(|rest| rest.trim_start_matches([' ', ':']).trim()))
        .unwrap_or_else(|| panic!("no {label:?} line in:\n{text}"))
}

#[test]
fn sibyltool_reports_and_operates_a_running_node() {
    let mut node = Node::start();
    let mut client = node.client();
    for key in ["key1", "key2", "key3"] {
        insert(&mut client, "Standard1", key).expect("insert");
    }

    // Before the flush: data only in the memtable.
    let before = node.tool(&["cfstats", "Keyspace1.Standard1"]).ok();
    assert_eq!(line_value(&before.stdout, "SSTable count"), "0", "{}", before.stdout);
    assert_eq!(line_value(&before.stdout, "Memtable Columns Count"), "3");
    assert_eq!(line_value(&before.stdout, "Write Count"), "3");

    // flush: progress on stderr as plain lines (not a terminal), a summary on stdout.
    let flush = node.tool(&["flush", "Keyspace1"]).ok();
    assert!(flush.stderr.contains("[0/2] flushing Keyspace1.Standard1\n"), "{flush:?}");
    assert!(flush.stderr.contains("[2/2] flushed 2 column families\n"), "{flush:?}");
    assert!(flush.stdout.contains("Keyspace1.Standard1: 1 new SSTable, 1 SSTables"), "{flush:?}");
    assert!(flush.stdout.contains("Keyspace1.Standard2: memtable was empty, 0 SSTables"), "{flush:?}");

    let stats = node.tool(&["cfstats", "Keyspace1"]).ok();
    let std1 = stats.stdout.split("Column Family: Standard2").next().expect("Standard1 first");
    assert!(std1.contains("Column Family: Standard1"), "{}", stats.stdout);
    assert_eq!(line_value(std1, "SSTable count"), "1", "{}", stats.stdout);
    assert_eq!(line_value(std1, "Number of Keys (estimate)"), "3");
    assert_eq!(line_value(std1, "Memtable Columns Count"), "0");
    assert_eq!(line_value(std1, "Memtable Switch Count"), "1");
    let json = node.tool(&["--json", "cfstats", "Keyspace1.Standard1"]).ok().json();
    let cf = &json["keyspaces"][0]["column_families"][0];
    assert_eq!(cf["sstable_count"], 1, "{json}");
    assert_eq!(cf["key_estimate"], 3, "{json}");
    let space = cf["space_used_live"].as_u64().expect("bytes");
    assert!(space > 0);

    // ring, status and info agree on this node's token and load.
    let info_json = node.tool(&["--json", "info"]).ok().json();
    let token = info_json["token"].as_str().expect("token").to_string();
    // Load is every SSTable on the node: Standard1's and the system keyspace's (schema, state).
    let all = node.tool(&["--json", "cfstats"]).ok().json();
    let total: u64 = all["keyspaces"]
        .as_array()
        .expect("keyspaces")
        .iter()
        .flat_map(|k| k["column_families"].as_array().expect("cfs").iter())
        .map(|c| c["space_used_live"].as_u64().expect("bytes"))
        .sum();
    assert!(total > space, "system keyspace SSTables count in the load: {all}");
    assert_eq!(info_json["load_bytes"].as_u64(), Some(total));
    let ring = node.tool(&["ring"]).ok();
    let row: Vec<&str> = ring.stdout.lines().last().expect("node row").split_whitespace().collect();
    assert_eq!(row[..5], ["127.0.0.1", "datacenter1", "rack1", "Up", "Normal"], "{}", ring.stdout);
    assert_eq!(row[7..], ["100.00%", token.as_str()], "{}", ring.stdout);
    let status = node.tool(&["status"]).ok();
    let row = status.stdout.lines().last().expect("node row");
    assert!(row.starts_with("UN  127.0.0.1"), "{}", status.stdout);
    assert!(row.contains("100.00%") && row.ends_with("rack1"), "{}", status.stdout);
    let info = node.tool(&["info"]).ok();
    assert_eq!(line_value(&info.stdout, "Token"), token);
    assert_eq!(line_value(&info.stdout, "Mode"), "NORMAL");
    assert_eq!(line_value(&info.stdout, "Cluster"), CLUSTER);
    assert!(line_value(&info.stdout, "Uptime (seconds)").parse::<u64>().is_ok(), "{}", info.stdout);
    assert!(line_value(&info.stdout, "Memory (resident)").contains("MB"), "{}", info.stdout);
    // The default 64 MB block cache, as the node reports it.
    assert_eq!(info_json["block_cache_capacity_bytes"], 64 << 20, "{info_json}");
    assert!(line_value(&info.stdout, "Block cache").contains("capacity 64.00 MB"), "{}", info.stdout);

    let cluster = node.tool(&["describecluster"]).ok();
    assert!(cluster.stdout.starts_with("Cluster Information:\n"), "{}", cluster.stdout);
    assert_eq!(line_value(&cluster.stdout, "Name"), CLUSTER);
    assert_eq!(line_value(&cluster.stdout, "Partitioner"), "org.apache.cassandra.dht.RandomPartitioner");
    assert_eq!(line_value(&cluster.stdout, "Snitch"), "org.apache.cassandra.locator.SimpleSnitch");
    let schema_line = cluster.stdout.lines().last().expect("a schema version line");
    assert!(schema_line.ends_with(": [127.0.0.1]"), "{}", cluster.stdout);
    assert_eq!(schema_line.trim().len(), 36 + ": [127.0.0.1]".len(), "a UUID: {schema_line}");

    // getendpoints: this node, and the key's token by the configured partitioner.
    let endpoints = node.tool(&["getendpoints", "Keyspace1", "Standard1", "key1"]).ok();
    assert_eq!(endpoints.stdout, "127.0.0.1\n");
    let json = node.tool(&["--json", "getendpoints", "Keyspace1", "Standard1", "key1"]).ok().json();
    let p = Partitioner::Random;
    assert_eq!(json["token"].as_str(), Some(p.token_to_string(&p.token_for_key(b"key1")).as_str()));

    let tp = node.tool(&["tpstats"]).ok();
    let mutation: Vec<&str> =
        tp.stdout.lines().find(|l| l.starts_with("MutationStage")).expect("MutationStage").split_whitespace().collect();
    // 3 client writes, and 3 the node made to its system keyspace at first start: the
    // configured keyspace's definition, then the local row twice (schema version, token).
    assert_eq!(mutation, ["MutationStage", "n/a", "n/a", "6"], "{}", tp.stdout);

    let net = node.tool(&["netstats"]).ok();
    assert_eq!(net.stdout, "Mode: NORMAL\nNot sending any streams.\nNot receiving any streams.\n");
    let cleanup = node.tool(&["cleanup"]).ok();
    assert!(cleanup.stdout.starts_with("Keyspace1: nothing to clean up"), "{cleanup:?}");
    let version = node.tool(&["version"]).ok();
    assert!(version.stdout.starts_with(&format!("ReleaseVersion: {}\n", env!("CARGO_PKG_VERSION"))));

    // compact with one SSTable keeps one.
    let compact = node.tool(&["compact", "Keyspace1", "Standard1"]).ok();
    assert!(compact.stdout.starts_with("Keyspace1.Standard1: 1 SSTables"), "{compact:?}");
    assert!(compact.stderr.contains("[0/1] compacting Keyspace1.Standard1"), "{compact:?}");

    // Errors: exit code 1 and the node's message.
    for (args, needle) in [
        (&["move", "12345"][..], "move: not supported yet: needs the cluster layer"),
        (&["decommission"][..], "decommission: not supported yet: needs the cluster layer"),
        (&["removenode", "x"][..], "removenode: not supported yet: needs the cluster layer"),
        (&["cfstats", "Nope"][..], "keyspace Nope does not exist"),
        (&["flush", "Keyspace1", "Missing"][..], "column family Keyspace1.Missing does not exist"),
    ] {
        let run = node.tool(args);
        assert_eq!(run.code, Some(1), "{args:?}: {run:?}");
        assert_eq!(run.stderr, format!("sibyltool: {needle}\n"), "{args:?}");
    }

    // drain: every memtable flushed, then Thrift writes fail and reads still work.
    insert(&mut client, "Standard2", "key9").expect("insert before drain");
    let drain = node.tool(&["drain"]).ok();
    // Keyspace1's two column families and the system keyspace's two.
    assert!(drain.stdout.starts_with("Drained: flushed 4 column families."), "{drain:?}");
    assert!(drain.stderr.contains("drained"), "{drain:?}");
    let after = node.tool(&["--json", "cfstats", "Keyspace1.Standard2"]).ok().json();
    assert_eq!(after["keyspaces"][0]["column_families"][0]["sstable_count"], 1, "{after}");
    match insert(&mut client, "Standard1", "key4") {
        Err(thrift::Error::Application(e)) => {
            assert_eq!(e.kind, thrift::ApplicationErrorKind::InternalError, "{e:?}");
            assert_eq!(e.message, "storage is shutting down");
        }
        other => panic!("a write after drain must fail with an internal error, got {other:?}"),
    }
    let mut reader = node.client();
    let path = t::ColumnPath::new("Standard1".to_string(), None, b"name".to_vec());
    let got = reader.get(b"key1".to_vec(), path, t::ConsistencyLevel::ONE).expect("reads work after drain");
    assert_eq!(got.column.and_then(|c| c.value), Some(b"value".to_vec()));
    let info = node.tool(&["info"]).ok();
    assert_eq!(line_value(&info.stdout, "Mode"), "DRAINED");
    let flush = node.tool(&["flush"]);
    assert_eq!(flush.code, Some(1), "{flush:?}");
    assert!(flush.stderr.contains("the node is drained"), "{flush:?}");
    let again = node.tool(&["drain"]).ok();
    assert!(again.stdout.starts_with("Already drained."), "{again:?}");

    // A drained node still stops cleanly.
    let status = node.stop();
    assert!(status.success(), "exit status {status}\nlog:\n{}", node.log());
}

#[test]
fn unreachable_node_and_bad_usage_have_their_own_exit_codes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port().to_string();
    let run = run_tool(dir.path(), &["-p", &port, "ring"]);
    assert_eq!(run.code, Some(3), "{run:?}");
    assert!(
        run.stderr.starts_with(&format!("sibyltool: cannot connect to sibyl admin interface at 127.0.0.1:{port}: ")),
        "{run:?}"
    );
    let usage = run_tool(dir.path(), &["frobnicate"]);
    assert_eq!(usage.code, Some(2), "{usage:?}");
    let usage = run_tool(dir.path(), &["getendpoints", "Keyspace1"]);
    assert_eq!(usage.code, Some(2), "{usage:?}");
}
