//! Kills a process that writes through the whole engine (commit log, memtables, flushes,
//! compactions) with SIGKILL at random moments, in each sync mode; after each kill the engine
//! is reopened and every acknowledged write must read back.
//!
//! The writer is this test binary run again with [`CHILD_ENV`] set: `crash_child` then writes
//! rows from several threads and prints `ack <thread> <seq>` after each `apply` returns.
#![expect(clippy::unwrap_used, reason = "test")]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use model::data::Cell;
use model::dht::Partitioner;
use model::filter::ReadFilter;
use model::mutation::RowMutation;
use model::schema::{CfDef, KeyspaceDef};
use rand::Rng;
use storage::commitlog::SyncMode;
use storage::engine::{Storage, StorageConfig};

const CHILD_ENV: &str = "SIBYL_ENGINE_CRASH_CHILD";
const DIR_ENV: &str = "SIBYL_ENGINE_CRASH_DIR";
const KILLS_PER_MODE: usize = 20;
const WRITER_THREADS: u64 = 4;
/// A child nobody killed stops by itself after this.
const CHILD_LIFETIME: Duration = Duration::from_secs(30);

fn config(dir: &Path, mode: &str) -> StorageConfig {
    let mut c = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    c.partitioner = Partitioner::Murmur3;
    c.sync = match mode {
        "periodic" => SyncMode::Periodic { period: Duration::from_millis(50) },
        _ => SyncMode::Batch { window: Duration::from_millis(1) },
    };
    // Small memtables and segments so kills land during flushes, rotations and compactions.
    c.memtable_flush_bytes = 64 * 1024;
    c.segment_size = 256 * 1024;
    c.compaction_throughput_mb_per_sec = 0;
    let mut ks = KeyspaceDef::new("ks");
    ks.cf_defs.push(CfDef::new("ks", "cf"));
    c.initial_keyspaces = vec![ks];
    c
}

fn key(thread: u64, seq: u64) -> Vec<u8> {
    format!("t{thread}-{seq}").into_bytes()
}

fn value(thread: u64, seq: u64) -> Vec<u8> {
    format!("value of {thread}/{seq} ").repeat(1 + (seq % 7) as usize).into_bytes()
}

/// The writer process. Does nothing in a normal test run.
#[test]
fn crash_child() {
    let Ok(mode) = std::env::var(CHILD_ENV) else { return };
    let dir = std::env::var(DIR_ENV).unwrap();
    let storage = Storage::open(config(Path::new(&dir), &mode)).unwrap();
    // Continue numbering after what earlier runs wrote: the parent passes the start.
    let start: u64 = std::env::var("SIBYL_ENGINE_CRASH_START").unwrap().parse().unwrap();
    println!("ready");
    std::io::stdout().flush().unwrap();
    let started = Instant::now();
    let threads: Vec<_> = (0..WRITER_THREADS)
        .map(|t| {
            let storage = storage.clone();
            std::thread::spawn(move || {
                for seq in start.. {
                    if started.elapsed() > CHILD_LIFETIME {
                        return;
                    }
                    let mut m = RowMutation::new("ks", key(t, seq));
                    m.row_mut("cf").cells.push(Cell::live("c", value(t, seq), seq as i64));
                    storage.apply(m).unwrap();
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "ack {t} {seq}").unwrap();
                    out.flush().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

fn crash_loop(mode: &str) {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = rand::thread_rng();
    // thread -> acknowledged sequence numbers
    let mut acked: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let mut next_start = 0u64;
    for round in 0..KILLS_PER_MODE {
        let mut child = Command::new(&exe)
            .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, mode)
            .env(DIR_ENV, dir.path())
            .env("SIBYL_ENGINE_CRASH_START", next_start.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut lines = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                lines.push(line);
            }
            lines
        });
        // Wait for the child to be writing, then kill it at a random moment.
        std::thread::sleep(Duration::from_millis(rng.gen_range(150..600)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let lines = reader.join().unwrap();
        let mut max_seq = next_start;
        for line in &lines {
            let mut parts = line.split_whitespace();
            if parts.next() != Some("ack") {
                continue;
            }
            let (Some(t), Some(s)) = (parts.next(), parts.next()) else { continue };
            let (t, s): (u64, u64) = (t.parse().unwrap(), s.parse().unwrap());
            acked.entry(t).or_default().push(s);
            max_seq = max_seq.max(s + 1);
        }
        next_start = max_seq;

        let storage = Storage::open(config(dir.path(), mode)).unwrap();
        let mut checked = 0;
        for (t, seqs) in &acked {
            for s in seqs {
                let cells = storage.read("ks", "cf", &key(*t, *s), &ReadFilter::all()).unwrap();
                assert_eq!(cells.len(), 1, "{mode} round {round}: acknowledged write t{t}-{s} lost");
                assert_eq!(cells[0].value, value(*t, *s), "{mode} round {round}: t{t}-{s} damaged");
                checked += 1;
            }
        }
        storage.shutdown().unwrap();
        drop(storage);
        eprintln!("{mode} round {round}: {checked} acknowledged writes verified");
    }
    let total: usize = acked.values().map(Vec::len).sum();
    assert!(total > 100, "{mode}: the child acknowledged only {total} writes; the test proved little");
}

#[test]
fn acknowledged_writes_survive_sigkill_periodic() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    crash_loop("periodic");
}

#[test]
fn acknowledged_writes_survive_sigkill_batch() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    crash_loop("batch");
}
