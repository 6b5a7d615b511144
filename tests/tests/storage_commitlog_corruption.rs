//! One byte damaged in the middle of a killed node's commit log, with acknowledged writes after
//! it: the restart fails naming the segment and the offset, and leaves the segment on disk;
//! started again with `SIBYL_COMMITLOG_IGNORE_REPLAY_ERRORS=true`, the node replays every
//! record that verifies, serves all rows but the damaged record's, and keeps the segment aside
//! as `.corrupt`.
//!
//! The robustness audit's scenario: before, the damaged record and everything after it were
//! taken for a torn tail, dropped, and the segment deleted.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use e2e::*;

const KS: &str = "Durable";
const ROWS: usize = 300;
/// The row whose commit log record is damaged.
const DAMAGED: usize = 150;
const OVERRIDE_ENV: &str = "SIBYL_COMMITLOG_IGNORE_REPLAY_ERRORS";

fn row_key(i: usize) -> Vec<u8> {
    b(&format!("cl{i:04}"))
}

fn row_value(i: usize) -> Vec<u8> {
    b(&format!("clv-{i:04}"))
}

/// The newest commit log segment of the node in `dir`.
fn newest_segment(dir: &Path) -> PathBuf {
    let mut segments: Vec<PathBuf> = std::fs::read_dir(dir.join("commitlog"))
        .expect("commit log directory")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    segments.sort();
    segments.pop().expect("a commit log segment")
}

/// A `sibyl` started by hand on a node's directory (so its environment and exit can be
/// controlled); killed when dropped.
struct Run {
    child: Option<Child>,
    log: PathBuf,
}

impl Run {
    fn start(node: &Node, name: &str, env: &[(&str, &str)]) -> Run {
        let log = node.dir().join(name);
        let out = File::create(&log).expect("create the run's log");
        let err = out.try_clone().expect("clone the log handle");
        let child = Command::new(sibyl_bin())
            .arg("--config")
            .arg(node.config_path())
            .current_dir(node.dir())
            .env("NO_COLOR", "1")
            .env_remove(OVERRIDE_ENV)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("spawn sibyl");
        Run { child: Some(child), log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits for the process to exit on its own.
    fn exit_status(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("running");
        wait_bounded(&mut child, START_TIMEOUT)
            .unwrap_or_else(|| panic!("sibyl neither served nor exited within {START_TIMEOUT:?}:\n{}", self.log()))
    }

    /// Waits until it serves Thrift clients.
    fn wait_ready(&mut self, node: &Node) {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if self.log().contains(READY_LINE)
                && std::net::TcpStream::connect_timeout(&node.addr(), Duration::from_secs(2)).is_ok()
            {
                return;
            }
            let child = self.child.as_mut().expect("running");
            if let Ok(Some(status)) = child.try_wait() {
                panic!("sibyl exited ({status}) instead of serving:\n{}", self.log());
            }
            assert!(Instant::now() < deadline, "sibyl did not serve within {START_TIMEOUT:?}:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!("==== {} ====\n{}", self.log.display(), self.log());
        }
    }
}

#[test]
fn a_damaged_commit_log_stops_the_restart_and_the_override_keeps_the_rest() {
    let (mut node, mut c) = Node::start_with_keyspace(Config::random(), KS, vec![cf_def(KS, "Standard1", "UTF8Type")]);
    for i in 0..ROWS {
        ok("insert", c.insert(row_key(i), parent("Standard1"), column(b("c"), row_value(i), ts()), ONE));
    }
    drop(c);
    node.kill9(); // acknowledged, never flushed: the rows live in the commit log only

    // Damage one byte of row DAMAGED's record, in the middle of the segment's rows.
    let segment = newest_segment(node.dir());
    let mut bytes = std::fs::read(&segment).expect("read the segment");
    let key = row_key(DAMAGED);
    let at = bytes.windows(key.len()).position(|w| w == key.as_slice()).expect("the row's key is in the segment");
    bytes[at + 1] ^= 0xFF;
    std::fs::write(&segment, &bytes).expect("write the damaged segment");

    // The restart refuses, naming the file and the offset, and leaves the segment alone.
    let mut refused = Run::start(&node, "refused.log", &[]);
    let status = refused.exit_status();
    let log = refused.log();
    assert_eq!(status.code(), Some(1), "{log}");
    let name = segment.file_name().expect("file name").to_string_lossy().into_owned();
    assert!(log.contains(&name), "the error names the segment:\n{log}");
    assert!(log.contains("damaged at offset"), "the error names the offset:\n{log}");
    assert!(log.contains(OVERRIDE_ENV), "the error says how to go on anyway:\n{log}");
    assert!(!log.contains(READY_LINE), "{log}");
    assert_eq!(std::fs::read(&segment).expect("the segment is still there"), bytes, "the segment was changed");

    // With the override: every other row is back, the damaged segment is kept aside.
    let mut forced = Run::start(&node, "override.log", &[(OVERRIDE_ENV, "true")]);
    forced.wait_ready(&node);
    let mut c = node.client_in(KS);
    let keys: Vec<Vec<u8>> = (0..ROWS).map(row_key).collect();
    let got = ok("multiget_slice", c.multiget_slice(keys, parent("Standard1"), all(10), ONE));
    let missing: Vec<usize> = (0..ROWS)
        .filter(|&i| {
            let cols = got.get(&row_key(i)).map(|v| pairs(v)).unwrap_or_default();
            cols != vec![(b("c"), row_value(i))]
        })
        .collect();
    assert_eq!(missing, vec![DAMAGED], "only the damaged record's row is lost");
    let log = forced.log();
    assert!(log.contains(&name) && log.contains("skipped damaged commit log records"), "{log}");
    let kept = PathBuf::from(format!("{}.corrupt", segment.display()));
    assert_eq!(std::fs::read(&kept).expect("the damaged segment is kept aside"), bytes);
    assert!(!segment.exists(), "the damaged segment is no longer replayed");
}
