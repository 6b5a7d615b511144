//! What nodetool's run-time compaction commands rest on: background compaction switched off and
//! on per column family (`disableautocompaction`), thresholds changed live
//! (`setcompactionthreshold`), the SSTables holding a key (`getsstables`), and running
//! compactions stopped (`stop`), which give up cleanly.
#![expect(clippy::unwrap_used, reason = "test")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use model::data::Cell;
use model::dht::{Partitioner, Range, Token};
use model::filter::ReadFilter;
use model::mutation::RowMutation;
use model::schema::{CfDef, KeyspaceDef};
use storage::engine::{CompactionInterrupted, Storage, StorageConfig};
use storage::StorageError;

mod common;

fn config(dir: &Path, auto_compaction: bool) -> StorageConfig {
    let mut c = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    c.partitioner = Partitioner::Murmur3;
    c.auto_compaction = auto_compaction;
    let mut ks = KeyspaceDef::new("ks");
    ks.cf_defs.push(CfDef::new("ks", "cf"));
    c.initial_keyspaces = vec![ks];
    c
}

fn put(s: &Storage, key: &str, value: &[u8]) {
    let mut m = RowMutation::new("ks", key.as_bytes().to_vec());
    m.row_mut("cf").cells.push(Cell::live(b"c".to_vec(), value.to_vec(), 1));
    s.apply(m).unwrap();
}

fn get(s: &Storage, key: &str) -> Vec<Vec<u8>> {
    s.read("ks", "cf", key.as_bytes(), &ReadFilter::all()).unwrap().into_iter().map(|c| c.value).collect()
}

/// `sstables` flushes of `rows` rows each (`key<f>-<i>`), values of `value_len` bytes.
fn fill(s: &Storage, sstables: usize, rows: usize, value_len: usize) {
    let value = vec![b'x'; value_len];
    for f in 0..sstables {
        for i in 0..rows {
            put(s, &format!("key{f}-{i}"), &value);
        }
        s.flush("ks", "cf").unwrap();
    }
}

fn sstable_count(s: &Storage) -> usize {
    s.data_files("ks", "cf").unwrap().len()
}

/// Polls `f` every 10 ms for up to 30 s.
fn eventually(mut f: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

#[test]
fn background_compaction_stops_per_column_family_until_enabled_again() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path(), true)).unwrap();
    assert!(s.auto_compaction("ks", "cf").unwrap());
    assert!(s.set_auto_compaction("ks", "cf", false).unwrap(), "it was on");
    assert!(!s.set_auto_compaction("ks", "cf", false).unwrap(), "asked again, nothing changes");
    assert!(!s.auto_compaction("ks", "cf").unwrap());

    // Five flushes: past the minimum threshold (4), but neither the compaction thread (asked
    // after every flush) nor a check run here merges them.
    fill(&s, 5, 10, 10);
    s.compact_due("ks", "cf").unwrap();
    assert_eq!(sstable_count(&s), 5);
    assert_eq!(s.compaction_stats().1, 1, "the merge is still due");

    // Enabling asks for a check at once: the thread merges them with no flush to prompt it.
    assert!(s.set_auto_compaction("ks", "cf", true).unwrap());
    assert!(eventually(|| sstable_count(&s) == 1), "{} SSTables after enabling", sstable_count(&s));

    // Disabled, a major compaction still runs.
    s.set_auto_compaction("ks", "cf", false).unwrap();
    fill(&s, 2, 10, 10);
    assert_eq!(sstable_count(&s), 3);
    s.major_compact("ks", "cf").unwrap();
    assert_eq!(sstable_count(&s), 1);
    assert_eq!(get(&s, "key0-0"), vec![b"x".repeat(10)]);

    assert!(matches!(s.set_auto_compaction("ks", "nope", false), Err(StorageError::UnknownColumnFamily { .. })));
    assert!(matches!(s.set_auto_compaction("nope", "cf", true), Err(StorageError::UnknownKeyspace(_))));
    s.shutdown().unwrap();
}

#[test]
fn thresholds_set_at_run_time_hold_until_the_definition_changes() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path(), false)).unwrap();
    assert_eq!(s.compaction_thresholds("ks", "cf").unwrap(), (4, 32));

    // Two SSTables: not enough for the defined minimum of 4, enough for 2.
    fill(&s, 2, 10, 10);
    s.compact_due("ks", "cf").unwrap();
    assert_eq!(sstable_count(&s), 2);
    s.set_compaction_thresholds("ks", "cf", 2, 8).unwrap();
    assert_eq!(s.compaction_thresholds("ks", "cf").unwrap(), (2, 8));
    assert_eq!(s.cf_metadata("ks", "cf").unwrap().def.min_compaction_threshold, 4, "the definition is unchanged");
    assert_eq!(s.compaction_stats().1, 1);
    s.compact_due("ks", "cf").unwrap();
    assert_eq!(sstable_count(&s), 1);

    // Cassandra's rule, in its words, naming the column family; nothing changes.
    let refused = s.set_compaction_thresholds("ks", "cf", 5, 4).unwrap_err().to_string();
    assert!(
        refused.contains(
            "ks.cf: The min_compaction_threshold cannot be larger than the max_compaction_threshold. Min is '5', Max is '4'."
        ),
        "{refused}"
    );
    for (min, max) in [(1, 4), (-1, 4), (2, -3)] {
        assert!(s.set_compaction_thresholds("ks", "cf", min, max).is_err(), "{min} {max} accepted");
    }
    assert_eq!(s.compaction_thresholds("ks", "cf").unwrap(), (2, 8));
    assert!(matches!(
        s.set_compaction_thresholds("ks", "nope", 2, 4),
        Err(StorageError::UnknownColumnFamily { keyspace, cf }) if keyspace == "ks" && cf == "nope"
    ));

    // 0 turns background compaction off.
    s.set_compaction_thresholds("ks", "cf", 0, 0).unwrap();
    fill(&s, 2, 10, 10);
    s.compact_due("ks", "cf").unwrap();
    assert_eq!(sstable_count(&s), 3);
    assert_eq!(s.compaction_stats().1, 0);

    // A change of the definition brings its own thresholds back (as Cassandra's reload does).
    let mut def = s.cf_metadata("ks", "cf").unwrap().def.clone();
    def.comment = Some("changed".into());
    s.update_column_family(def).unwrap();
    assert_eq!(s.compaction_thresholds("ks", "cf").unwrap(), (4, 32));
    s.shutdown().unwrap();

    // So does a restart.
    let s = Storage::open(config(dir.path(), false)).unwrap();
    s.set_compaction_thresholds("ks", "cf", 2, 2).unwrap();
    s.shutdown().unwrap();
    let s = Storage::open(config(dir.path(), false)).unwrap();
    assert_eq!(s.compaction_thresholds("ks", "cf").unwrap(), (4, 32));
    s.shutdown().unwrap();
}

#[test]
fn getsstables_lists_the_sstables_whose_index_holds_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path(), false)).unwrap();
    let mut files: Vec<PathBuf> = Vec::new();
    let mut flush = |s: &Storage| {
        s.flush("ks", "cf").unwrap();
        let new = s.data_files("ks", "cf").unwrap().into_iter().find(|f| !files.contains(f)).unwrap();
        files.push(new.clone());
        new
    };
    for i in 0..100 {
        put(&s, &format!("a{i}"), b"first");
    }
    let first = flush(&s);
    for i in 0..100 {
        put(&s, &format!("b{i}"), b"second");
    }
    let second = flush(&s);
    put(&s, "a7", b"again");
    let third = flush(&s);
    put(&s, "a8", b"only in the memtable");

    let found = |key: &str| s.sstables_for_key("ks", "cf", key.as_bytes()).unwrap();
    assert_eq!(found("a7"), vec![first.clone(), third.clone()]);
    assert_eq!(found("a8"), vec![first.clone()], "memtables are not listed");
    assert_eq!(found("b99"), vec![second.clone()]);
    assert!(first.is_absolute() && first.to_string_lossy().ends_with("-Data.db"), "{first:?}");
    // Thousands of absent keys: some pass a bloom filter (1% of false positives), none is in an
    // index.
    let listed: Vec<String> = (0..5000).map(|i| format!("absent{i}")).filter(|k| !found(k).is_empty()).collect();
    assert!(listed.is_empty(), "absent keys listed: {listed:?}");

    assert!(matches!(
        s.sstables_for_key("ks", "nope", b"a7"),
        Err(StorageError::UnknownColumnFamily { keyspace, cf }) if keyspace == "ks" && cf == "nope"
    ));
    assert!(matches!(s.sstables_for_key("nope", "cf", b"a7"), Err(StorageError::UnknownKeyspace(k)) if k == "nope"));
    s.shutdown().unwrap();
}

#[test]
fn getsstables_lists_an_sstable_whose_data_for_the_key_is_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path(), false)).unwrap();
    fill(&s, 1, 2000, 100);
    let data = s.data_files("ks", "cf").unwrap();
    s.shutdown().unwrap();
    common::damage_middle_of(&data[0]);

    let s = Storage::open(config(dir.path(), false)).unwrap();
    let damaged = (0..2000)
        .map(|i| format!("key0-{i}"))
        .find(|k| s.read("ks", "cf", k.as_bytes(), &ReadFilter::all()).is_err())
        .expect("a key in the damaged chunk");
    assert_eq!(s.sstables_for_key("ks", "cf", damaged.as_bytes()).unwrap(), data, "{damaged}");
    s.shutdown().unwrap();
}

/// Starts `work` on another thread and waits until a compaction of kind `kind` is listed with
/// some progress.
fn running<T: Send + 'static>(
    s: &Storage,
    kind: &str,
    work: impl FnOnce(Storage) -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    let handle = {
        let s = s.clone();
        std::thread::spawn(move || work(s))
    };
    let listed = eventually(|| s.compaction_stats().0.iter().any(|c| c.kind == kind && c.bytes_done > 0));
    assert!(listed, "no {kind} listed: {:?}", s.compaction_stats());
    handle
}

/// The files of the column family's directory (SSTable components, nothing else).
fn cf_dir_files(s: &Storage) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(s.cf_directory("ks", "cf").unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn stop_interrupts_running_compactions_of_its_kind_and_keeps_their_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), false);
    // At 1 MiB/s the 8 MiB below would take some 8 seconds to merge.
    c.compaction_throughput_mb_per_sec = 1;
    let s = Storage::open(c).unwrap();
    fill(&s, 4, 2000, 1024);
    let before = cf_dir_files(&s);
    assert_eq!(sstable_count(&s), 4);

    let compacting = running(&s, "Compaction", |s| s.major_compact("ks", "cf"));
    assert_eq!(s.stop_compactions("Cleanup"), Vec::new(), "no cleanup runs");
    assert_eq!(s.stop_compactions("Scrub"), Vec::new(), "no scrub runs");
    let stopped = s.stop_compactions("Compaction");
    assert_eq!(stopped.len(), 1, "{stopped:?}");
    assert_eq!((stopped[0].keyspace.as_str(), stopped[0].cf.as_str()), ("ks", "cf"));

    let err = compacting.join().unwrap().unwrap_err();
    let interrupted = CompactionInterrupted::of(&err).unwrap_or_else(|| panic!("not an interruption: {err:?}"));
    assert_eq!((interrupted.kind, interrupted.keyspace.as_str(), interrupted.cf.as_str()), ("Compaction", "ks", "cf"));
    assert!(interrupted.bytes_done < interrupted.bytes_total, "{interrupted:?}");
    let id = s.cf_metadata("ks", "cf").unwrap().def.id;
    let message = interrupted.to_string();
    assert!(message.starts_with(&format!("Compaction interrupted: Compaction@{id}(ks, cf, ")), "{message}");
    assert!(message.ends_with(&format!("/{})bytes", interrupted.bytes_total)), "{message}");

    // Its output is gone, its inputs are there, and the data with them.
    assert_eq!(s.compaction_stats().0, Vec::new());
    assert_eq!(cf_dir_files(&s), before);
    assert_eq!(get(&s, "key3-1999"), vec![vec![b'x'; 1024]]);

    // A cleanup is stopped the same way (and as "Cleanup", not "Compaction").
    let p = Partitioner::Murmur3;
    let half = Range::new(Token::minimum(), p.midpoint(&Token::minimum(), &Token::minimum()));
    let cleaning = running(&s, "Cleanup", move |s| s.cleanup("ks", "cf", &[half]));
    assert_eq!(s.stop_compactions("Compaction"), Vec::new());
    assert_eq!(s.stop_compactions("Cleanup").len(), 1);
    let err = cleaning.join().unwrap().unwrap_err();
    assert!(matches!(CompactionInterrupted::of(&err), Some(i) if i.kind == "Cleanup"), "{err:?}");
    assert_eq!(cf_dir_files(&s), before);

    // Nothing stopped for good: the next compaction runs to its end.
    s.set_compaction_throughput(0);
    s.major_compact("ks", "cf").unwrap();
    assert_eq!(sstable_count(&s), 1);
    assert_eq!(get(&s, "key0-0"), vec![vec![b'x'; 1024]]);
    s.shutdown().unwrap();
}
