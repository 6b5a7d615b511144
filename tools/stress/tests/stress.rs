//! `sibyl-stress` against a real `sibyl` node: the writes it reports are the rows the node
//! holds, reads find them, counter errors are counted and stop the run, and `--graph` pages
//! accumulate runs.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use sibyl_stress::client::{self, ConnectOptions, STANDARD_CF};
use sibyl_stress::keys::key_of;
use sibyl_stress::report;

const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// A running node in a temporary directory, killed on drop.
struct Node {
    child: Child,
    port: u16,
    native_port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap()
}

fn replace_once(conf: &mut String, from: &str, to: &str) {
    assert!(conf.contains(from), "sample storage-conf.xml no longer contains {from}");
    *conf = conf.replace(from, to);
}

fn start_node() -> Node {
    let dir = tempfile::tempdir().unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conf/storage-conf.xml");
    let mut conf = std::fs::read_to_string(sample).unwrap();
    let port = free_port();
    let root = dir.path().display().to_string();
    replace_once(&mut conf, "<ThriftPort>9160</ThriftPort>", &format!("<ThriftPort>{port}</ThriftPort>"));
    replace_once(&mut conf, "<StoragePort>7000</StoragePort>", &format!("<StoragePort>{}</StoragePort>", free_port()));
    replace_once(&mut conf, "<AdminPort>7199</AdminPort>", &format!("<AdminPort>{}</AdminPort>", free_port()));
    let native_port = free_port();
    replace_once(
        &mut conf,
        "<NativeTransportPort>9042</NativeTransportPort>",
        &format!("<NativeTransportPort>{native_port}</NativeTransportPort>"),
    );
    replace_once(&mut conf, "var/lib/sibyl/data", &format!("{root}/data"));
    replace_once(&mut conf, "var/lib/sibyl/commitlog", &format!("{root}/commitlog"));
    replace_once(&mut conf, "var/lib/sibyl/saved_caches", &format!("{root}/saved_caches"));
    let conf_path = dir.path().join("storage-conf.xml");
    std::fs::write(&conf_path, conf).unwrap();

    // `sibyl` is another package's binary: the e2e harness builds it (or takes `SIBYL_BIN`).
    let mut child = Command::new(e2e::sibyl_bin())
        .arg("--config")
        .arg(&conf_path)
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    // Keeps draining the node's log after startup so it never blocks on a full pipe.
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let node = Node { child, port, native_port, _dir: dir };
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.contains("Listening for thrift clients on") => return node,
            Ok(_) => {}
            Err(e) => panic!("sibyl did not report listening within {STARTUP_TIMEOUT:?}: {e}"),
        }
    }
}

struct StressOutput {
    code: i32,
    summary: serde_json::Value,
    stderr: String,
}

fn stress(node: &Node, args: &[&str]) -> StressOutput {
    let out = Command::new(env!("CARGO_BIN_EXE_sibyl-stress"))
        .args(["--host", "127.0.0.1", "--port", &node.port.to_string(), "--json", "--timeout", "30"])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let summary = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("stdout is not one JSON summary ({e}):\n{stdout}\nstderr:\n{stderr}"));
    StressOutput { code: out.status.code().unwrap_or(-1), summary, stderr }
}

fn num(v: &serde_json::Value, field: &str) -> u64 {
    v[field].as_u64().unwrap_or_else(|| panic!("summary has no integer {field}: {v}"))
}

fn connect(node: &Node) -> client::Client {
    let opts =
        ConnectOptions { host: "127.0.0.1".into(), port: node.port, framed: true, timeout: Duration::from_secs(30) };
    client::connect_to_keyspace(&opts, "Stress").unwrap()
}

#[test]
fn every_counted_write_is_a_row_on_the_node() {
    let node = start_node();
    let out = stress(
        &node,
        &[
            "--operation",
            "insert",
            "--count",
            "2000",
            "--num-keys",
            "2000",
            "--distribution",
            "sequential",
            "--threads",
            "4",
            "--columns",
            "3",
            "--value-size",
            "20",
            "--quiet",
        ],
    );
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    let s = &out.summary;
    let writes = num(s, "ops");
    assert_eq!(num(s, "errors"), 0, "{s}");
    assert_eq!(writes, 2000, "{s}");
    assert!(s["op_rate"].as_f64().is_some_and(|r| r > 0.0), "{s}");
    assert!(s["p99_ms"].as_f64().is_some_and(|p| p > 0.0 && p >= s["p50_ms"].as_f64().unwrap_or(f64::MAX)), "{s}");

    let mut c = connect(&node);
    let keys = client::all_keys(&mut c, STANDARD_CF, 300).unwrap();
    assert_eq!(keys.len() as u64, writes, "rows found by paging get_range_slices");
    let distinct: BTreeSet<Vec<u8>> = keys.into_iter().collect();
    let expected: BTreeSet<Vec<u8>> = (0..2000).map(key_of).collect();
    assert_eq!(distinct, expected);

    // Every row has the three columns C0..C2 with 20-byte values.
    use thrift_idl::TCassandraSyncClient;
    let cols = c
        .get_slice(
            key_of(1234),
            thrift_idl::ColumnParent { column_family: STANDARD_CF.into(), super_column: None },
            thrift_idl::SlicePredicate {
                column_names: None,
                slice_range: Some(thrift_idl::SliceRange {
                    start: vec![],
                    finish: vec![],
                    reversed: false,
                    count: 100,
                }),
            },
            thrift_idl::ConsistencyLevel::ONE,
        )
        .unwrap();
    let names: Vec<Vec<u8>> = cols.iter().filter_map(|c| c.column.as_ref().map(|c| c.name.clone())).collect();
    assert_eq!(names, vec![b"C0".to_vec(), b"C1".to_vec(), b"C2".to_vec()]);
    assert!(cols.iter().all(|c| c.column.as_ref().and_then(|c| c.value.as_ref()).map(Vec::len) == Some(20)));

    // Reads of the written keys all succeed, over both transports; mixed works too.
    for transport in ["--framed", "--unframed"] {
        let out = stress(
            &node,
            &[
                "--operation",
                "read",
                "--count",
                "500",
                "--num-keys",
                "2000",
                "--columns",
                "3",
                "--threads",
                "3",
                transport,
            ],
        );
        assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
        assert_eq!(num(&out.summary, "ops"), 500, "{}", out.summary);
        assert_eq!(num(&out.summary, "errors"), 0, "{}", out.summary);
    }
    let out = stress(
        &node,
        &["--operation", "mixed", "--mixed-ratio", "write=1,read=3", "--count", "400", "--num-keys", "2000"],
    );
    assert_eq!(num(&out.summary, "errors"), 0, "{}", out.summary);
    let by_kind = &out.summary["ops_by_kind"];
    assert_eq!(num(by_kind, "insert") + num(by_kind, "read"), 400, "{}", out.summary);
    assert!(num(by_kind, "read") > num(by_kind, "insert"), "{}", out.summary);

    let out = stress(&node, &["--operation", "range", "--count", "100", "--range-rows", "5", "--threads", "2"]);
    assert_eq!(num(&out.summary, "ops"), 100, "{}", out.summary);
}

#[test]
fn cql_mode_writes_rows_of_a_cql_table_and_reads_them_back() {
    let node = start_node();
    let port = node.native_port.to_string();
    let cql = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_sibyl-stress"))
            .args(["--protocol", "cql", "--host", "127.0.0.1", "--port", &port, "--json", "--quiet", "--timeout", "30"])
            .args(args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
        let summary: serde_json::Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON summary ({e}):\n{stdout}\nstderr:\n{stderr}"));
        summary
    };
    let written = cql(&[
        "--operation",
        "insert",
        "--count",
        "700",
        "--num-keys",
        "700",
        "--distribution",
        "sequential",
        "--threads",
        "8",
    ]);
    assert_eq!((num(&written, "ops"), num(&written, "errors")), (700, 0), "{written}");
    assert_eq!(written["protocol"], "cql");
    // Every read finds its row (a missing one counts as an error).
    let read = cql(&["--operation", "read", "--count", "700", "--num-keys", "700", "--threads", "8"]);
    assert_eq!((num(&read, "ops"), num(&read, "errors")), (700, 0), "{read}");

    // The table holds exactly the keys written, as CQL sees it.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let timeout = Duration::from_secs(30);
        let mut c =
            sibyl_stress::cql::CqlConn::connect("127.0.0.1", node.native_port, timeout, "stress_cql", 5).await.unwrap();
        let all = c.query("SELECT key FROM stress_cql.standard1", thrift_idl::ConsistencyLevel::ONE).await.unwrap();
        assert_eq!(all, sibyl_stress::cql::CqlReply::Rows(700));
        let hex: String = key_of(99).iter().map(|b| format!("{b:02x}")).collect();
        let select = format!("SELECT \"C4\" FROM stress_cql.standard1 WHERE key = 0x{hex}");
        let one = c.query(&select, thrift_idl::ConsistencyLevel::ONE).await.unwrap();
        assert_eq!(one, sibyl_stress::cql::CqlReply::Rows(1));
    });

    // Range slices and counters have no CQL form here: refused before anything is sent.
    let out = Command::new(env!("CARGO_BIN_EXE_sibyl-stress"))
        .args(["--protocol", "cql", "--port", &port, "--operation", "range"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not implemented over CQL"));
}

#[test]
fn insert_call_writes_one_column_per_row() {
    let node = start_node();
    let out = stress(
        &node,
        &[
            "--operation",
            "insert",
            "--write-call",
            "insert",
            "--columns",
            "1",
            "--count",
            "600",
            "--num-keys",
            "600",
            "--distribution",
            "sequential",
            "--value-size",
            "17",
            "--threads",
            "4",
        ],
    );
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    assert_eq!((num(&out.summary, "ops"), num(&out.summary, "errors")), (600, 0), "{}", out.summary);

    let mut c = connect(&node);
    let keys: BTreeSet<Vec<u8>> = client::all_keys(&mut c, STANDARD_CF, 100).unwrap().into_iter().collect();
    assert_eq!(keys, (0..600).map(key_of).collect::<BTreeSet<_>>());
    use thrift_idl::TCassandraSyncClient;
    let path =
        thrift_idl::ColumnPath { column_family: STANDARD_CF.into(), super_column: None, column: Some(b"C0".to_vec()) };
    let found = c.get(key_of(599), path, thrift_idl::ConsistencyLevel::ONE).unwrap();
    let value = found.column.and_then(|c| c.value).expect("column C0 with a value");
    assert_eq!(value.len(), 17);

    // The insert call writes one column: more is refused before anything is sent.
    let out = Command::new(env!("CARGO_BIN_EXE_sibyl-stress"))
        .args(["--port", &node.port.to_string(), "--write-call", "insert", "--columns", "2", "--count", "1"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--columns must be 1"), "{stderr}");
}

#[test]
fn counter_adds_run_without_errors() {
    let node = start_node();
    let out = stress(&node, &["--operation", "counter_add", "--count", "200", "--threads", "4"]);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    let s = &out.summary;
    assert_eq!(num(s, "ops"), 200, "{s}");
    assert_eq!(num(s, "errors"), 0, "{s}");
}

#[test]
fn graph_pages_accumulate_runs() {
    let node = start_node();
    let dir = tempfile::tempdir().unwrap();
    let page: PathBuf = dir.path().join("report.html");
    let page_arg = page.display().to_string();
    for title in ["first", "second"] {
        let out = stress(
            &node,
            &[
                "--operation",
                "insert",
                "--duration",
                "1500ms",
                "--threads",
                "2",
                "--graph",
                &page_arg,
                "--title",
                title,
            ],
        );
        assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
        // A duration run lasts about as long as asked.
        let elapsed = out.summary["elapsed_s"].as_f64().unwrap();
        assert!((1.4..5.0).contains(&elapsed), "{}", out.summary);
    }
    let html = std::fs::read_to_string(&page).unwrap();
    let runs = report::parse_runs(&html, &page_arg).unwrap();
    let titles: Vec<&str> = runs.iter().map(|r| r.summary.title.as_str()).collect();
    assert_eq!(titles, ["first", "second"]);
    assert!(runs.iter().all(|r| !r.intervals.is_empty() && r.summary.ops > 0));
}

/// A minimal RESP server on 127.0.0.1 (a map behind a lock, one thread per connection) that
/// answers SET and GET as Redis does and counts the commands it saw, so the RESP mode can be
/// checked without a Redis installation.
struct FakeRedis {
    port: u16,
    data: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<Vec<u8>, Vec<u8>>>>,
    commands: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

/// Reads one command (an array of bulk strings) from `r`; `None` at end of stream.
fn read_command(r: &mut impl BufRead) -> Option<Vec<Vec<u8>>> {
    fn header(r: &mut impl BufRead, kind: u8) -> Option<usize> {
        let mut line = Vec::new();
        r.read_until(b'\n', &mut line).ok()?;
        let text = line.strip_prefix(&[kind])?.strip_suffix(b"\r\n")?;
        std::str::from_utf8(text).ok()?.parse().ok()
    }
    let n = header(r, b'*')?;
    let mut args = Vec::with_capacity(n);
    for _ in 0..n {
        let len = header(r, b'$')?;
        let mut arg = vec![0u8; len + 2];
        std::io::Read::read_exact(r, &mut arg).ok()?;
        assert_eq!(arg.split_off(len), b"\r\n", "bulk string not ended by CRLF");
        args.push(arg);
    }
    Some(args)
}

impl FakeRedis {
    fn start() -> FakeRedis {
        use std::io::Write;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let fake = FakeRedis { port, data: Default::default(), commands: Default::default() };
        let (data, commands) = (fake.data.clone(), fake.commands.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let (data, commands) = (data.clone(), commands.clone());
                std::thread::spawn(move || {
                    let mut w = stream.try_clone().unwrap();
                    let mut r = BufReader::new(stream);
                    while let Some(args) = read_command(&mut r) {
                        commands.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let reply = match args.as_slice() {
                            [cmd, key, value] if cmd == b"SET" => {
                                data.lock().unwrap().insert(key.clone(), value.clone());
                                b"+OK\r\n".to_vec()
                            }
                            [cmd, key] if cmd == b"GET" => match data.lock().unwrap().get(key) {
                                Some(v) => [format!("${}\r\n", v.len()).as_bytes(), v, b"\r\n"].concat(),
                                None => b"$-1\r\n".to_vec(),
                            },
                            _ => b"-ERR unknown command\r\n".to_vec(),
                        };
                        if w.write_all(&reply).is_err() {
                            break;
                        }
                    }
                });
            }
        });
        fake
    }

    fn commands(&self) -> u64 {
        self.commands.load(std::sync::atomic::Ordering::Relaxed)
    }
}

fn stress_resp(fake: &FakeRedis, args: &[&str]) -> StressOutput {
    let out = Command::new(env!("CARGO_BIN_EXE_sibyl-stress"))
        .args(["--protocol", "resp", "--host", "127.0.0.1", "--port", &fake.port.to_string(), "--json", "--quiet"])
        .args(["--timeout", "30"])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let summary = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("stdout is not one JSON summary ({e}):\n{stdout}\nstderr:\n{stderr}"));
    StressOutput { code: out.status.code().unwrap_or(-1), summary, stderr }
}

#[test]
fn resp_mode_sets_every_key_and_gets_them_back() {
    let fake = FakeRedis::start();
    let out = stress_resp(
        &fake,
        &[
            "--operation",
            "insert",
            "--distribution",
            "sequential",
            "--count",
            "1500",
            "--num-keys",
            "1500",
            "--threads",
            "8",
            "--value-size",
            "100",
        ],
    );
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    assert_eq!((num(&out.summary, "ops"), num(&out.summary, "errors")), (1500, 0), "{}", out.summary);
    assert_eq!(out.summary["protocol"], "resp");
    // Reported; it may be 0 here: /proc counts CPU time in 10 ms ticks, and 1,500 local requests
    // can take less (seen in CI: 21 ms of wall time, no tick).
    assert!(out.summary["client_cpu_s"].as_f64().is_some_and(|c| c >= 0.0), "{}", out.summary);
    assert_eq!(fake.commands(), 1500);
    {
        let data = fake.data.lock().unwrap();
        let keys: BTreeSet<Vec<u8>> = data.keys().cloned().collect();
        assert_eq!(keys, (0..1500).map(key_of).collect::<BTreeSet<_>>());
        assert!(data.values().all(|v| v.len() == 100));
    }

    // Reads of written keys all find a value; mixed writes and reads in proportion.
    let out = stress_resp(&fake, &["--operation", "read", "--count", "700", "--num-keys", "1500", "--threads", "3"]);
    assert_eq!((num(&out.summary, "ops"), num(&out.summary, "errors")), (700, 0), "{}", out.summary);
    assert_eq!(fake.commands(), 2200);
    let out = stress_resp(
        &fake,
        &["--operation", "mixed", "--mixed-ratio", "write=1,read=3", "--count", "400", "--num-keys", "1500"],
    );
    let by_kind = &out.summary["ops_by_kind"];
    assert_eq!(num(by_kind, "insert") + num(by_kind, "read"), 400, "{}", out.summary);
    assert!(num(by_kind, "read") > num(by_kind, "insert"), "{}", out.summary);

    // Keys never written answer nil, which counts as an error by kind.
    let out = stress_resp(&fake, &["--operation", "read", "--count", "400", "--num-keys", "3000", "--threads", "2"]);
    let misses = num(&out.summary, "errors");
    assert!((100..=300).contains(&misses), "about half of 400 reads miss: {}", out.summary);
    assert_eq!(num(&out.summary, "ops") + misses, 400);
    let kinds = out.summary["error_kinds"].as_object().unwrap();
    assert!(kinds.keys().all(|k| k.contains("GET found no value")), "{}", out.summary);

    // Options RESP cannot honour are refused before connecting.
    let out = Command::new(env!("CARGO_BIN_EXE_sibyl-stress"))
        .args(["--protocol", "resp", "--port", &fake.port.to_string(), "--operation", "range"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no RESP equivalent"));
}

#[test]
fn rate_paces_the_run() {
    let fake = FakeRedis::start();
    let out = stress_resp(
        &fake,
        &["--operation", "insert", "--rate", "1000", "--duration", "2s", "--threads", "16", "--num-keys", "100"],
    );
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    let s = &out.summary;
    assert_eq!(s["target_rate"].as_f64(), Some(1000.0), "{s}");
    // Flat out, this fake server answers tens of thousands of requests a second; paced, the
    // run sends what the schedule allows (never more; a busy machine may send somewhat less).
    let rate = s["op_rate"].as_f64().unwrap();
    assert!((700.0..=1060.0).contains(&rate), "{s}");
    assert!((1400..=2100).contains(&num(s, "ops")), "{s}");
}
