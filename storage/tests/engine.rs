//! Engine-level behaviour: truncate and drop are durable, corruption is reported with the file
//! name, a torn commit log tail keeps what came before it, durable_writes, super column slices.
#![expect(clippy::unwrap_used, reason = "test")]

use std::fs::OpenOptions;
use std::path::Path;

use model::data::{compose_super, Cell, DeletionTime, RangeTombstone};
use model::dht::{Partitioner, Range, Token};
use model::filter::{CountUnit, ReadFilter};
use model::mutation::RowMutation;
use model::schema::{CfDef, ColumnType, KeyspaceDef};
use storage::engine::{Storage, StorageConfig};
use storage::StorageError;

mod common;

fn config(dir: &Path) -> StorageConfig {
    let mut c = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    c.partitioner = Partitioner::Murmur3;
    c.auto_compaction = false;
    let mut ks = KeyspaceDef::new("ks");
    ks.cf_defs.push(CfDef::new("ks", "cf"));
    let mut sup = CfDef::new("ks", "sup");
    sup.column_type = ColumnType::Super;
    sup.comparator_type = "UTF8Type".into();
    sup.subcomparator_type = Some("UTF8Type".into());
    ks.cf_defs.push(sup);
    c.initial_keyspaces = vec![ks];
    c
}

fn put(s: &Storage, cf: &str, key: &str, name: &[u8], value: &str) {
    let mut m = RowMutation::new("ks", key.as_bytes().to_vec());
    m.row_mut(cf).cells.push(Cell::live(name.to_vec(), value.as_bytes().to_vec(), 1));
    s.apply(m).unwrap();
}

/// Rows `key0` … `key1999` of `cf`, about 220 KB, flushed into one SSTable of several chunks.
fn put_2000_rows(s: &Storage) {
    for i in 0..2000 {
        put(s, "cf", &format!("key{i}"), b"c", &format!("value {i} {}", "x".repeat(100)));
    }
    s.flush("ks", "cf").unwrap();
}

fn get(s: &Storage, key: &str) -> Vec<Vec<u8>> {
    s.read("ks", "cf", key.as_bytes(), &ReadFilter::all()).unwrap().into_iter().map(|c| c.value).collect()
}

#[test]
fn truncate_is_durable_across_restart() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    put(&s, "cf", "a", b"c", "flushed");
    s.flush("ks", "cf").unwrap();
    put(&s, "cf", "b", b"c", "in commit log only");
    s.truncate("ks", "cf").unwrap();
    put(&s, "cf", "c", b"c", "after truncate");
    assert!(get(&s, "a").is_empty() && get(&s, "b").is_empty());
    s.abandon(); // no clean shutdown: the commit log is replayed
    let s = Storage::open(config(dir.path())).unwrap();
    assert!(get(&s, "a").is_empty(), "flushed data came back after truncate");
    assert!(get(&s, "b").is_empty(), "commit log data from before the truncate was replayed");
    assert_eq!(get(&s, "c"), vec![b"after truncate".to_vec()]);
    s.shutdown().unwrap();
}

#[test]
fn dropping_removes_files_and_recreating_starts_empty() {
    let dir = tempfile::tempdir().unwrap();
    // Without AutoSnapshot (tests/snapshots.rs has it), nothing of a dropped column family stays.
    let config = |dir: &std::path::Path| StorageConfig { auto_snapshot: false, ..config(dir) };
    let s = Storage::open(config(dir.path())).unwrap();
    put(&s, "cf", "a", b"c", "v");
    s.flush("ks", "cf").unwrap();
    let cf_dir = s.cf_directory("ks", "cf").unwrap();
    assert!(cf_dir.exists());
    s.drop_column_family("ks", "cf").unwrap();
    assert!(!cf_dir.exists(), "dropped column family's directory still exists");
    assert!(matches!(s.read("ks", "cf", b"a", &ReadFilter::all()), Err(StorageError::UnknownColumnFamily { .. })));
    s.add_column_family(CfDef::new("ks", "cf")).unwrap();
    assert!(get(&s, "a").is_empty());
    s.abandon();
    // The old commit log records belong to the old id and are not replayed into the new CF.
    let s = Storage::open(config(dir.path())).unwrap();
    assert!(get(&s, "a").is_empty());
    s.drop_keyspace("ks").unwrap();
    assert!(!dir.path().join("data").join("ks").exists());
    s.shutdown().unwrap();
}

#[test]
fn corrupt_sstable_chunk_is_reported_with_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    put_2000_rows(&s);
    let data = s.data_files("ks", "cf").unwrap()[0].clone();
    s.shutdown().unwrap();
    s.abandon();
    common::damage_middle_of(&data);

    let s = Storage::open(config(dir.path())).unwrap();
    let mut corrupt = 0;
    let mut good = 0;
    for i in 0..2000 {
        match s.read("ks", "cf", format!("key{i}").as_bytes(), &ReadFilter::all()) {
            Ok(cells) => {
                assert_eq!(cells.len(), 1);
                good += 1;
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.contains(&data.file_name().unwrap().to_string_lossy().to_string()), "{msg}");
                corrupt += 1;
            }
        }
    }
    assert!(corrupt > 0, "corruption went unnoticed");
    assert!(good > 1900, "only {good} rows readable: corruption should stay local to one chunk");
    s.shutdown().unwrap();
}

#[test]
fn torn_commit_log_tail_keeps_earlier_writes() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    for i in 0..100 {
        put(&s, "cf", &format!("key{i}"), b"c", "v");
    }
    s.abandon(); // crash: nothing flushed
    let mut segments: Vec<_> =
        std::fs::read_dir(dir.path().join("commitlog")).unwrap().map(|e| e.unwrap().path()).collect();
    segments.sort();
    let last = segments.last().unwrap();
    // Cut the last record in half.
    let len = std::fs::metadata(last).unwrap().len();
    OpenOptions::new().write(true).open(last).unwrap().set_len(len - 20).unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    let present = (0..100).filter(|i| !get(&s, &format!("key{i}")).is_empty()).count();
    assert_eq!(present, 99, "everything before the torn record must be replayed");
    s.shutdown().unwrap();
}

/// `durable_writes` decides whether a write reaches the commit log, and a change of it counts
/// from the next write: a crash loses only what was written while it was off.
#[test]
fn durable_writes_off_skips_the_commit_log_until_turned_back_on() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    let mut attributes = KeyspaceDef::new("ks");
    attributes.durable_writes = false;
    s.update_keyspace(attributes.clone()).unwrap();
    put(&s, "cf", "a", b"c", "not logged");
    // Turned back on by another thread, as a schema change from another node would be: this
    // thread's own memory of the column family must not outlive it.
    attributes.durable_writes = true;
    std::thread::scope(|t| t.spawn(|| s.update_keyspace(attributes)).join().unwrap()).unwrap();
    put(&s, "cf", "b", b"c", "logged");
    assert_eq!(get(&s, "a"), vec![b"not logged".to_vec()]);
    s.abandon(); // crash: nothing flushed
    let s = Storage::open(config(dir.path())).unwrap();
    assert!(get(&s, "a").is_empty(), "a write made with durable_writes off was replayed");
    assert_eq!(get(&s, "b"), vec![b"logged".to_vec()], "a write made after turning it back on was lost");
    s.shutdown().unwrap();
}

#[test]
fn super_column_slices_and_deletions() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    for sc in ["a", "b", "c"] {
        for sub in ["x", "y"] {
            put(&s, "sup", "row", &compose_super(sc.as_bytes(), sub.as_bytes()), &format!("{sc}{sub}"));
        }
    }
    s.flush("ks", "sup").unwrap();
    let read = |f: &ReadFilter| -> Vec<Vec<u8>> {
        s.read("ks", "sup", b"row", f).unwrap().into_iter().map(|c| c.value).collect()
    };
    // Two super columns, newest first.
    let f = ReadFilter::slice(Vec::new(), Vec::new(), true, 2, CountUnit::SuperColumns);
    assert_eq!(read(&f), vec![b"cy".to_vec(), b"cx".to_vec(), b"by".to_vec(), b"bx".to_vec()]);
    // Subcolumns of one super column.
    let f = ReadFilter::slice(compose_super(b"b", b""), compose_super(b"b", b""), false, 10, CountUnit::Cells);
    assert_eq!(read(&f), vec![b"bx".to_vec(), b"by".to_vec()]);
    // Delete super column b.
    let mut m = RowMutation::new("ks", b"row".to_vec());
    m.row_mut("sup").range_tombstones.push(RangeTombstone {
        start: compose_super(b"b", b""),
        end: compose_super(b"b", b""),
        deletion: DeletionTime::new(2, model::data::now_seconds()),
    });
    s.apply(m).unwrap();
    assert_eq!(read(&ReadFilter::all()), vec![b"ax".to_vec(), b"ay".to_vec(), b"cx".to_vec(), b"cy".to_vec()]);
    s.major_compact("ks", "sup").unwrap();
    assert_eq!(read(&ReadFilter::all()), vec![b"ax".to_vec(), b"ay".to_vec(), b"cx".to_vec(), b"cy".to_vec()]);
    s.shutdown().unwrap();
}

#[test]
fn schema_changes_stay_ordered_when_the_clock_goes_back() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    // A keyspace dropped while the clock ran an hour ahead: its tombstone is "in the future".
    let ahead = model::data::now_micros() + 3_600_000_000;
    let mut m = RowMutation::new("system", b"Later".to_vec());
    m.row_mut("schema_keyspaces").deletion = DeletionTime::new(ahead, model::data::now_seconds());
    s.apply(m).unwrap();
    s.shutdown().unwrap();
    s.abandon();
    // After a restart (clock back to normal), creating that keyspace must still stick.
    let s = Storage::open(config(dir.path())).unwrap();
    s.add_keyspace(KeyspaceDef::new("Later")).unwrap();
    s.shutdown().unwrap();
    s.abandon();
    let s = Storage::open(config(dir.path())).unwrap();
    assert!(s.keyspace("Later").is_some(), "a keyspace created after a clock step back was lost at restart");
    s.shutdown().unwrap();
}

#[test]
fn cleanup_rewrites_only_the_sstables_holding_unowned_keys() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    let p = Partitioner::Murmur3;
    let mut keys: Vec<(Token, String)> =
        (0..300).map(|i| format!("k{i}")).map(|k| (p.token_for_key(k.as_bytes()), k)).collect();
    keys.sort();
    // This node keeps (min, split]: the lower half of the keys.
    let split = keys[149].0.clone();
    let owned = vec![Range::new(Token::minimum(), split.clone())];
    let is_owned = |k: &str| owned[0].contains(&p.token_for_key(k.as_bytes()));
    // Two SSTables spanning the whole ring, and one holding only owned keys.
    let (lower, upper) = keys.split_at(150);
    let batches: [Vec<&String>; 3] = [
        lower.iter().step_by(2).chain(upper.iter().step_by(2)).map(|(_, k)| k).collect(),
        lower.iter().skip(1).step_by(2).chain(upper.iter().skip(1).step_by(2)).map(|(_, k)| k).collect(),
        lower.iter().step_by(3).map(|(_, k)| k).collect(),
    ];
    for batch in &batches {
        for k in batch {
            put(&s, "cf", k, b"c", &format!("value of {k}"));
        }
        s.flush("ks", "cf").unwrap();
    }
    let before = s.data_files("ks", "cf").unwrap();
    assert_eq!(before.len(), 3);

    let summary = s.cleanup("ks", "cf", &owned).unwrap();
    assert_eq!((summary.rewritten, summary.untouched), (2, 1));
    let after = s.data_files("ks", "cf").unwrap();
    assert_eq!(after.len(), 3, "each SSTable is rewritten on its own, not merged: {after:?}");
    assert!(after.contains(&before[2]), "the SSTable holding only owned keys was rewritten: {after:?}");
    for (_, k) in &keys {
        let want = if is_owned(k) { vec![format!("value of {k}").into_bytes()] } else { vec![] };
        assert_eq!(get(&s, k), want, "{k} (owned: {})", is_owned(k));
    }
    // Nothing left to drop: a second cleanup rewrites nothing.
    let again = s.cleanup("ks", "cf", &owned).unwrap();
    assert_eq!((again.rewritten, again.untouched), (0, 3));
    assert_eq!(s.data_files("ks", "cf").unwrap(), after);
    s.shutdown().unwrap();
}

#[test]
fn range_digests_depend_on_the_data_not_on_where_it_lives() {
    use model::dht::KeyBound;
    let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b) = (Storage::open(config(da.path())).unwrap(), Storage::open(config(db.path())).unwrap());
    for i in 0..20 {
        let key = format!("k{i}");
        put(&a, "cf", &key, b"c", "v");
        put(&b, "cf", &key, b"c", "v");
        if i == 9 {
            a.flush("ks", "cf").unwrap(); // half of a's rows in an SSTable, all of b's in memory
        }
    }
    let all = |s: &Storage| s.digest_range("ks", "cf", &KeyBound::Unbounded, &KeyBound::Unbounded).unwrap();
    assert_eq!(all(&a), all(&b));
    assert_eq!(all(&a).1, 20);
    // A deletion only one of them holds tells them apart, and so does a newer timestamp.
    let mut m = RowMutation::new("ks", b"k3".to_vec());
    m.row_mut("cf").deletion = DeletionTime { marked_at: 2, local_deletion_time: 0 };
    b.apply(m).unwrap();
    assert_ne!(all(&a), all(&b));
    let mut m = RowMutation::new("ks", b"k3".to_vec());
    m.row_mut("cf").deletion = DeletionTime { marked_at: 2, local_deletion_time: 0 };
    a.apply(m).unwrap();
    assert_eq!(all(&a), all(&b));
    let mut m = RowMutation::new("ks", b"k4".to_vec());
    m.row_mut("cf").cells.push(Cell::live(b"c".to_vec(), b"v".to_vec(), 5));
    a.apply(m).unwrap();
    assert_ne!(all(&a), all(&b), "same value, newer timestamp");
    a.shutdown().unwrap();
    b.shutdown().unwrap();
}

#[test]
fn scrub_replaces_a_damaged_sstable_by_what_can_be_read() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    put_2000_rows(&s);
    put(&s, "cf", "other", b"c", "in a healthy SSTable");
    s.flush("ks", "cf").unwrap();
    let damaged =
        s.data_files("ks", "cf").unwrap().into_iter().find(|f| std::fs::metadata(f).unwrap().len() > 100_000).unwrap();
    s.shutdown().unwrap();
    common::damage_middle_of(&damaged);

    let s = Storage::open(config(dir.path())).unwrap();
    let failing =
        (0..2000).filter(|i| s.read("ks", "cf", format!("key{i}").as_bytes(), &ReadFilter::all()).is_err()).count();
    assert!(failing > 0, "the damage went unnoticed");
    assert!(s.major_compact("ks", "cf").is_err(), "a compaction reads the damaged chunk too");

    let summary = s.scrub("ks", "cf").unwrap();
    assert_eq!((summary.checked, summary.rewritten), (2, 1), "{summary:?}");
    assert_eq!(summary.lost.len(), failing, "exactly the unreadable partitions are left out");
    assert_eq!(summary.partitions, 2001 - failing as u64);
    // Every read answers now: the lost keys as absent, the rest as written.
    for i in 0..2000 {
        let cells = get(&s, &format!("key{i}"));
        let lost = summary.lost.iter().any(|k| k.key == format!("key{i}").as_bytes());
        assert_eq!(cells.is_empty(), lost, "key{i}");
    }
    assert_eq!(get(&s, "other"), vec![b"in a healthy SSTable".to_vec()]);
    s.major_compact("ks", "cf").unwrap();
    // The damaged files stay in a snapshot; the column family no longer has them.
    let kept = s.list_snapshots(Some("ks")).unwrap();
    assert!(kept.len() == 1 && kept[0].tag.contains("-pre-scrub-cf-"), "{kept:?}");
    assert!(!damaged.exists());
    // A scrub of healthy SSTables changes nothing.
    let again = s.scrub("ks", "cf").unwrap();
    assert_eq!((again.checked, again.rewritten, again.lost.len()), (1, 0, 0), "{again:?}");
    s.shutdown().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    assert_eq!(get(&s, "key0").len() + get(&s, "key1999").len(), 2);
    s.shutdown().unwrap();
}

#[test]
fn cfstats_counts_every_operation_and_times_one_in_sixteen() {
    use storage::engine::LATENCY_SAMPLE_EVERY;
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    let stats = s.cf_stats("ks", "cf").unwrap();
    assert_eq!((stats.reads, stats.writes), (0, 0));
    assert_eq!(stats.read_latency.mean_ms(), None, "no read yet");
    assert_eq!(stats.write_latency.mean_ms(), None, "no write yet");
    // The first write and the first read are timed, so a column family used once shows both.
    put(&s, "cf", "k0", b"c", "v");
    assert_eq!(get(&s, "k0"), vec![b"v".to_vec()]);
    let stats = s.cf_stats("ks", "cf").unwrap();
    assert_eq!((stats.reads, stats.writes), (1, 1));
    assert_eq!((stats.read_latency.count, stats.write_latency.count), (1, 1));
    assert!(stats.read_latency.mean_ms().is_some_and(|ms| ms > 0.0), "{stats:?}");
    assert!(stats.write_latency.mean_ms().is_some_and(|ms| ms > 0.0), "{stats:?}");
    for i in 1..100 {
        put(&s, "cf", &format!("k{i}"), b"c", "v");
        get(&s, &format!("k{i}"));
    }
    let stats = s.cf_stats("ks", "cf").unwrap();
    assert_eq!((stats.reads, stats.writes), (100, 100), "every operation is counted");
    let timed = 100u64.div_ceil(LATENCY_SAMPLE_EVERY);
    assert_eq!((stats.read_latency.count, stats.write_latency.count), (timed, timed), "one in sixteen is timed");
    // Another column family samples on its own count.
    put(&s, "sup", "k0", &model::data::compose_super(b"sc", b"c"), "v");
    assert_eq!(s.cf_stats("ks", "sup").unwrap().write_latency.count, 1);
}
