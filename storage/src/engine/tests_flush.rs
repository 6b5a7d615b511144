//! When memtables are flushed: by size, by columns written, by age; writers wait when flushes
//! fall behind; a failed flush is retried with its own replay position.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Storage, StorageConfig};
use crate::data::Cell;
use crate::dht::Partitioner;
use crate::filter::ReadFilter;
use crate::mutation::RowMutation;
use crate::schema::{CfDef, KeyspaceDef};
use crate::sstable;

/// An engine's configuration under `dir` (Murmur3, no automatic compaction) whose keyspace
/// `ks` has the column families `cfs`; the engine's unit tests share it.
pub(super) fn config_with(dir: &Path, cfs: &[&str]) -> StorageConfig {
    let mut c = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    c.partitioner = Partitioner::Murmur3;
    c.auto_compaction = false;
    let mut ks = KeyspaceDef::new("ks");
    ks.cf_defs.extend(cfs.iter().map(|cf| CfDef::new("ks", *cf)));
    c.initial_keyspaces = vec![ks];
    c
}

fn config(dir: &Path) -> StorageConfig {
    config_with(dir, &["cf", "idle"])
}

fn put(s: &Storage, key: &str, columns: usize) {
    let mut m = RowMutation::new("ks", key.as_bytes().to_vec());
    for i in 0..columns {
        m.row_mut("cf").cells.push(Cell::live(format!("c{i}"), format!("value of {key}/{i}").into_bytes(), 1));
    }
    s.apply(m).expect("applied");
}

fn columns_of(s: &Storage, key: &str) -> usize {
    s.read("ks", "cf", key.as_bytes(), &ReadFilter::all()).expect("read").len()
}

fn sstables(s: &Storage, cf: &str) -> usize {
    s.store("ks", cf).expect("store").sstables().len()
}

/// Polls `done` for up to ten seconds.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(10), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn columns_written_trigger_a_flush() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = config(dir.path());
    c.memtable_flush_operations = 10;
    let s = Storage::open(c).expect("opens");
    for key in ["a", "b", "c"] {
        put(&s, key, 3);
    }
    let store = s.store("ks", "cf").expect("store");
    assert_eq!(store.active_memtable().operations(), 9, "each column counts");
    assert!(!store.flush_pending.load(Ordering::SeqCst), "nine columns of ten: no flush yet");
    put(&s, "d", 3);
    wait_for("the flush of twelve columns", || sstables(&s, "cf") == 1 && store.active_memtable().is_empty());
    for key in ["a", "b", "c", "d"] {
        assert_eq!(columns_of(&s, key), 3);
    }
    s.shutdown().expect("shutdown");
}

#[test]
fn an_old_memtable_is_flushed_and_an_empty_one_is_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = config(dir.path());
    c.memtable_flush_after = Duration::from_millis(200);
    let s = Storage::open(c).expect("opens");
    put(&s, "a", 1);
    wait_for("the flush of an expired memtable", || sstables(&s, "cf") == 1);
    // Several checks later, nothing more: the column families without data stay as they are.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!((sstables(&s, "cf"), sstables(&s, "idle")), (1, 0));
    assert_eq!(columns_of(&s, "a"), 1);
    s.shutdown().expect("shutdown");
}

/// With the flush thread stuck behind the column family's flush lock, a writer stops once the
/// memtable reaches twice its threshold, and goes on when the flush can run.
#[test]
fn writers_wait_when_the_memtable_reaches_twice_its_threshold() {
    const THRESHOLD: usize = 16 << 10;
    const WRITES: usize = 1_000;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = config(dir.path());
    c.memtable_flush_bytes = THRESHOLD;
    let s = Storage::open(c).expect("opens");
    let store = s.store("ks", "cf").expect("store");
    let stalled = store.flush_lock.lock();
    let done = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (s, done) = (s.clone(), done.clone());
        std::thread::spawn(move || {
            for i in 0..WRITES {
                put(&s, &format!("key{i}"), 1);
                done.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    // Wait until the writer has made no progress for a while.
    let mut last = usize::MAX;
    wait_for("the writer to stop", || {
        let now = done.load(Ordering::SeqCst);
        let still = now == last;
        last = now;
        std::thread::sleep(Duration::from_millis(200));
        still
    });
    let held = store.active_memtable().size();
    assert!(!writer.is_finished(), "the writer did all {WRITES} writes with the flush stalled");
    assert!(held < 2 * THRESHOLD + 1024, "the memtable grew to {held} bytes, over twice {THRESHOLD}");
    assert!(done.load(Ordering::SeqCst) < WRITES);
    drop(stalled);
    writer.join().expect("writer");
    for i in (0..WRITES).step_by(97) {
        assert_eq!(columns_of(&s, &format!("key{i}")), 1, "key{i}");
    }
    assert!(store.active_memtable().size() < 2 * THRESHOLD + 1024);
    s.shutdown().expect("shutdown");
}

/// The column family's SSTable directory moved away, so that writing an SSTable fails.
struct Unwritable {
    dir: PathBuf,
    aside: PathBuf,
}

impl Unwritable {
    fn new(s: &Storage) -> Unwritable {
        let dir = s.store("ks", "cf").expect("store").dir.clone();
        let aside = dir.with_extension("aside");
        std::fs::rename(&dir, &aside).expect("moved aside");
        Unwritable { dir, aside }
    }

    fn restore(self) {
        std::fs::rename(&self.aside, &self.dir).expect("moved back");
    }
}

/// A memtable whose flush failed is written by the next flush, before the newer memtable and
/// with its own replay position: after a crash, replay neither skips its writes (as it would if
/// the newer SSTable's position covered them while they were only in memory) nor loses them.
#[test]
fn a_failed_flush_is_written_first_by_the_next_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Storage::open(config(dir.path())).expect("opens");
    put(&s, "before the failure", 2);
    let unwritable = Unwritable::new(&s);
    assert!(s.flush("ks", "cf").is_err(), "the SSTable directory is gone");
    assert_eq!(columns_of(&s, "before the failure"), 2, "still readable from the switched-out memtable");
    unwritable.restore();
    put(&s, "after the failure", 2);
    s.flush("ks", "cf").expect("flushed");
    assert_eq!(sstables(&s, "cf"), 2);
    assert!(s.store("ks", "cf").expect("store").switched().is_empty());
    s.abandon();
    let s = Storage::open(config(dir.path())).expect("reopens");
    assert_eq!(columns_of(&s, "before the failure"), 2);
    assert_eq!(columns_of(&s, "after the failure"), 2);
    s.shutdown().expect("shutdown");
}

/// The flush thread retries a failed flush by itself.
#[test]
fn the_flush_thread_retries_a_failed_flush() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = config(dir.path());
    c.memtable_flush_after = Duration::from_millis(200);
    let s = Storage::open(c.clone()).expect("opens");
    let unwritable = Unwritable::new(&s);
    put(&s, "a", 1);
    let store = s.store("ks", "cf").expect("store");
    wait_for("a failed flush", || !store.switched().is_empty());
    unwritable.restore();
    wait_for("the retry", || store.switched().is_empty() && sstables(&s, "cf") == 1);
    s.abandon();
    let s = Storage::open(c).expect("reopens");
    assert_eq!(columns_of(&s, "a"), 1);
    s.shutdown().expect("shutdown");
}

/// On a data directory that stays unwritable, memtables do not pile up: the failed one waits,
/// the active one takes writes up to twice the threshold, then writes are refused with the
/// reason. Once the directory is back, the flush thread writes both and writes are taken again;
/// every acknowledged write survives a crash.
#[test]
fn an_unwritable_disk_bounds_the_memtables_and_refuses_writes() {
    const THRESHOLD: usize = 16 << 10;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = config(dir.path());
    c.memtable_flush_bytes = THRESHOLD;
    c.memtable_flush_after = Duration::from_millis(200);
    let s = Storage::open(c.clone()).expect("opens");
    let store = s.store("ks", "cf").expect("store");
    let unwritable = Unwritable::new(&s);
    let mut acknowledged = 0;
    let refusal = loop {
        assert!(acknowledged < 10_000, "10,000 writes taken with no flush possible");
        let mut m = RowMutation::new("ks", format!("key{acknowledged}").into_bytes());
        m.row_mut("cf").cells.push(Cell::live("c", vec![7; 100], 1));
        match s.apply(m) {
            Ok(()) => acknowledged += 1,
            Err(e) => break e.to_string(),
        }
    };
    assert!(refusal.contains("writes to ks.cf are refused"), "{refusal}");
    assert!(refusal.contains(&unwritable.dir.display().to_string()), "the reason names the directory: {refusal}");
    assert_eq!(store.switched().len(), 1, "one failed memtable waits; no more are switched out");
    let held = store.active_memtable().size();
    assert!((2 * THRESHOLD..2 * THRESHOLD + 1024).contains(&held), "the active memtable holds {held} bytes");
    // Still refused a while later: nothing was written meanwhile.
    std::thread::sleep(Duration::from_millis(300));
    let mut late = RowMutation::new("ks", b"late".to_vec());
    late.row_mut("cf").cells.push(Cell::live("c", b"v".to_vec(), 1));
    assert!(s.apply(late).is_err());
    unwritable.restore();
    wait_for("the flush thread's retry", || store.flush_failure().is_none() && store.switched().is_empty());
    put(&s, "after the disk came back", 1);
    s.abandon();
    let s = Storage::open(c).expect("reopens");
    for i in (0..acknowledged).step_by(7).chain([acknowledged - 1]) {
        assert_eq!(columns_of(&s, &format!("key{i}")), 1, "key{i}");
    }
    assert_eq!(columns_of(&s, "after the disk came back"), 1);
    s.shutdown().expect("shutdown");
}

/// Writes one column to `idle`, then enough to `cf` to fill about twenty 4 KiB segments; the
/// commit log segments left and whether `idle` was flushed.
fn fill_the_log_past_an_idle_column_family(dir: &Path, total_space: u64) -> (usize, usize) {
    let mut c = config(dir);
    c.segment_size = 4096;
    c.commitlog_total_space = total_space;
    let s = Storage::open(c).expect("opens");
    let mut m = RowMutation::new("ks", b"rare".to_vec());
    m.row_mut("idle").cells.push(Cell::live("c", b"written once".to_vec(), 1));
    s.apply(m).expect("applied");
    for i in 0..400 {
        put(&s, &format!("k{i}"), 4);
    }
    // The segments fill on writers' threads; the flush thread frees them afterwards.
    let segments = || s.inner.commitlog.segment_paths().len();
    if total_space < u64::MAX {
        wait_for("the log to shrink to its limit", || s.inner.commitlog.live_bytes() <= total_space);
    }
    let left = (segments(), sstables(&s, "idle"));
    assert_eq!(s.read("ks", "idle", b"rare", &ReadFilter::all()).expect("read").len(), 1);
    assert_eq!(columns_of(&s, "k399"), 4);
    s.shutdown().expect("shutdown");
    left
}

#[test]
fn a_full_commit_log_flushes_the_column_families_holding_its_oldest_segment() {
    let unbounded = tempfile::tempdir().expect("tempdir");
    let (segments, idle_sstables) = fill_the_log_past_an_idle_column_family(unbounded.path(), u64::MAX);
    assert!(segments > 10, "without a limit every segment stays: {segments}");
    assert_eq!(idle_sstables, 0);

    let bounded = tempfile::tempdir().expect("tempdir");
    let (segments, idle_sstables) = fill_the_log_past_an_idle_column_family(bounded.path(), 3 * 4096);
    assert!(segments <= 3, "{segments} segments left over a limit of three");
    assert_eq!(idle_sstables, 1, "the idle column family pinned the oldest segment");
}

/// Copies the files of `from` (a commit log directory) into a new directory `to`.
fn copy_files(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let path = entry.expect("entry").path();
        std::fs::copy(&path, to.join(path.file_name().expect("name"))).expect("copy");
    }
}

#[test]
fn replay_flushes_memtables_at_their_threshold_and_a_replay_after_a_crash_resumes_after_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let keys: Vec<String> = (0..301).map(|i| format!("key{i:03}")).collect();
    let s = Storage::open(config(dir.path())).expect("opens");
    for key in &keys {
        put(&s, key, 3);
    }
    s.abandon(); // the rows live in the commit log only
    let saved_log = dir.path().join("saved-commitlog");
    copy_files(&dir.path().join("commitlog"), &saved_log);

    // 903 columns replayed with a threshold of 100: eight flushes of 102 during the replay,
    // and the rest at the end of the start.
    let mut c = config(dir.path());
    c.memtable_flush_operations = 100;
    let s = Storage::open(c.clone()).expect("replays");
    let store = s.store("ks", "cf").expect("store");
    let tables = store.sstables();
    assert_eq!(tables.len(), 9);
    assert!(keys.iter().all(|k| columns_of(&s, k) == 3));
    let last = tables.iter().max_by_key(|t| t.descriptor().generation).expect("an SSTable").descriptor().clone();
    s.abandon();

    // As if the node had crashed before the replay ended: the SSTables written during it are
    // there, the last one and the commit log's deletion are not. The next replay starts after
    // the newest of them and must find every row.
    for component in sstable::Component::ALL {
        std::fs::remove_file(last.path(component)).expect("remove");
    }
    std::fs::remove_dir_all(dir.path().join("commitlog")).expect("rm commitlog");
    copy_files(&saved_log, &dir.path().join("commitlog"));
    let s = Storage::open(c).expect("replays again");
    let missing: Vec<&String> = keys.iter().filter(|k| columns_of(&s, k) != 3).collect();
    assert!(missing.is_empty(), "rows lost by the second replay: {missing:?}");
    assert_eq!(sstables(&s, "cf"), 9, "eight kept, and the rest flushed again");
    s.shutdown().expect("shutdown");
}
