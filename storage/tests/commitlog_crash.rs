//! Kills a process that appends to the commit log with SIGKILL at random moments, in each sync
//! mode, then replays its directory and checks that every record it acknowledged is there and
//! intact.
//!
//! The writer is this test binary run again with [`CHILD_ENV`] set: the `crash_child` test then
//! appends from several threads and prints `ack <id>` (flushed) after each append returns.
#![expect(clippy::unwrap_used, reason = "test")]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rand::Rng;
use storage::commitlog::{CommitLog, CommitLogConfig, SyncMode};
use uuid::Uuid;

/// Set (to "periodic" or "batch") in the child; names the sync mode.
const CHILD_ENV: &str = "SIBYL_COMMITLOG_CRASH_CHILD";
/// The commit-log directory of the child.
const DIR_ENV: &str = "SIBYL_COMMITLOG_CRASH_DIR";
const KILLS_PER_MODE: usize = 25;
const WRITER_THREADS: u64 = 4;
/// Small segments so that kills also land around rotations.
const SEGMENT_SIZE: u64 = 128 * 1024;
/// A child nobody killed (its parent died) stops by itself after this.
const CHILD_LIFETIME: Duration = Duration::from_secs(30);

/// Record `id` is `id` followed by a length and content derived from it, so that any damage or
/// mix-up shows.
fn record(id: u64) -> Vec<u8> {
    let len = (id.wrapping_mul(2_654_435_761) % 3000) as usize;
    let mut bytes = id.to_be_bytes().to_vec();
    bytes.extend((0..len).map(|j| (id as usize).wrapping_mul(131).wrapping_add(j * 17) as u8));
    bytes
}

fn record_id(bytes: &[u8]) -> u64 {
    u64::from_be_bytes(bytes[..8].try_into().unwrap())
}

/// The writer process. Does nothing in a normal test run.
#[test]
fn crash_child() {
    let Ok(mode) = std::env::var(CHILD_ENV) else { return };
    let dir = std::env::var(DIR_ENV).unwrap();
    let sync = match mode.as_str() {
        "periodic" => SyncMode::Periodic { period: Duration::from_millis(10) },
        "batch" => SyncMode::Batch { window: Duration::from_millis(1) },
        other => panic!("unknown mode {other}"),
    };
    let log = std::sync::Arc::new(
        CommitLog::open(CommitLogConfig { dir: dir.into(), segment_size: SEGMENT_SIZE, sync }).unwrap(),
    );
    let cf = Uuid::new_v4();
    let started = Instant::now();
    let threads: Vec<_> = (0..WRITER_THREADS)
        .map(|t| {
            let log = std::sync::Arc::clone(&log);
            std::thread::spawn(move || {
                for i in 0.. {
                    if started.elapsed() > CHILD_LIFETIME {
                        return;
                    }
                    let id = (t << 32) | i;
                    log.append(&record(id), &[cf]).unwrap();
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "ack {id}").unwrap();
                    out.flush().unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
}

/// What one killed run left behind.
struct RunOutcome {
    acked: usize,
    replayed: usize,
    torn_tail: bool,
}

fn run_and_kill(mode: &str, dir: &Path, kill_after: Duration) -> RunOutcome {
    std::fs::create_dir_all(dir).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_child", "--nocapture", "--test-threads", "1"])
        .env(CHILD_ENV, mode)
        .env(DIR_ENV, dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let acks = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(|line| line.ok())
            .filter_map(|line| line.strip_prefix("ack ").map(|id| id.parse::<u64>().unwrap()))
            .collect::<Vec<u64>>()
    });
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).ok();
        text
    });

    std::thread::sleep(kill_after);
    let exited_early = child.try_wait().unwrap();
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let acked = acks.join().unwrap();
    let errors = errors.join().unwrap();
    assert!(exited_early.is_none(), "the writer exited on its own ({exited_early:?}): {errors}");

    // Replay and check: every acknowledged record is present and intact, and each writer thread's
    // records form a gap-free prefix of what it appended (it appends one after the other).
    let mut replayed: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let report = CommitLog::replay(dir, |_, bytes| {
        let id = record_id(bytes);
        assert_eq!(bytes, record(id).as_slice(), "record {id} replayed with wrong contents");
        replayed.entry(id >> 32).or_default().push(id & 0xffff_ffff);
        Ok(())
    })
    .unwrap_or_else(|e| panic!("replay after kill failed: {e}"));
    for (thread, ids) in &replayed {
        let expected: Vec<u64> = (0..ids.len() as u64).collect();
        assert_eq!(ids, &expected, "thread {thread}: replayed records are not a gap-free prefix");
    }
    for id in &acked {
        let present = replayed.get(&(id >> 32)).is_some_and(|ids| ids.len() as u64 > (id & 0xffff_ffff));
        assert!(present, "acknowledged record {id} (thread {}, #{}) lost in {mode} mode", id >> 32, id & 0xffff_ffff);
    }
    RunOutcome { acked: acked.len(), replayed: report.records as usize, torn_tail: report.truncated_at.is_some() }
}

fn kill_repeatedly(mode: &str) {
    let root = tempfile::tempdir().unwrap();
    let mut rng = rand::thread_rng();
    let started = Instant::now();
    let (mut runs_with_acks, mut total_acked, mut total_replayed, mut torn) = (0, 0, 0, 0);
    for run in 0..KILLS_PER_MODE {
        let kill_after = Duration::from_millis(rng.gen_range(20..250));
        let outcome = run_and_kill(mode, &root.path().join(format!("run-{run}")), kill_after);
        runs_with_acks += usize::from(outcome.acked > 0);
        total_acked += outcome.acked;
        total_replayed += outcome.replayed;
        torn += usize::from(outcome.torn_tail);
    }
    eprintln!(
        "{mode}: {KILLS_PER_MODE} kills in {:?}, {total_acked} acknowledged, {total_replayed} replayed, {torn} torn tails",
        started.elapsed()
    );
    // The test must have tested something: most runs got far enough to acknowledge writes.
    assert!(runs_with_acks * 2 > KILLS_PER_MODE, "only {runs_with_acks} runs acknowledged anything");
}

#[test]
fn acknowledged_records_survive_sigkill_in_periodic_mode() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    kill_repeatedly("periodic");
}

#[test]
fn acknowledged_records_survive_sigkill_in_batch_mode() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    kill_repeatedly("batch");
}
