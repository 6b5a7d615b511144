//! The compaction strategies a column family may choose, run by the engine on real SSTables:
//! leveled (levels that do not overlap, SSTables of the configured size), time-window (one
//! SSTable per past window, expired SSTables dropped whole), and `enabled = false`.
#![expect(clippy::unwrap_used, reason = "test")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use model::data::{now_seconds, Cell};
use model::dht::Partitioner;
use model::filter::ReadFilter;
use model::mutation::RowMutation;
use model::schema::{CfDef, KeyspaceDef};
use storage::engine::{Storage, StorageConfig};
use storage::sstable::format::{read_metadata, Metadata};

fn config(dir: &Path, strategy: &str, options: &[(&str, &str)]) -> StorageConfig {
    let mut c = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    c.partitioner = Partitioner::Murmur3;
    c.auto_compaction = false;
    let mut cf = CfDef::new("ks", "cf");
    cf.compaction_strategy = format!("org.apache.cassandra.db.compaction.{strategy}");
    cf.compaction_strategy_options = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    cf.gc_grace_seconds = 0;
    let mut ks = KeyspaceDef::new("ks");
    ks.cf_defs.push(cf);
    c.initial_keyspaces = vec![ks];
    c
}

fn put(s: &Storage, key: &str, value: &[u8], timestamp: i64) {
    let mut m = RowMutation::new("ks", key.as_bytes().to_vec());
    m.row_mut("cf").cells.push(Cell::live(b"c".to_vec(), value.to_vec(), timestamp));
    s.apply(m).unwrap();
}

fn value_of(s: &Storage, key: &str) -> Option<Vec<u8>> {
    s.read("ks", "cf", key.as_bytes(), &ReadFilter::all()).unwrap().into_iter().next().map(|c| c.value)
}

/// Each live SSTable's Statistics, by Data file.
fn sstables(s: &Storage) -> Vec<(PathBuf, Metadata)> {
    s.data_files("ks", "cf")
        .unwrap()
        .into_iter()
        .map(|data| {
            let stats = PathBuf::from(data.to_string_lossy().replace("-Data.db", "-Statistics.db"));
            let meta = read_metadata(&stats).unwrap();
            (data, meta)
        })
        .collect()
}

/// Fails if two SSTables of one level above 0 hold overlapping key ranges; returns the
/// SSTables per level.
fn check_levels(s: &Storage) -> BTreeMap<u32, Vec<Metadata>> {
    let mut levels: BTreeMap<u32, Vec<Metadata>> = BTreeMap::new();
    for (_, m) in sstables(s) {
        levels.entry(m.level).or_default().push(m);
    }
    for (level, members) in levels.iter_mut().filter(|(l, _)| **l > 0) {
        members.sort_by(|a, b| a.first_key.cmp(&b.first_key));
        for pair in members.windows(2) {
            assert!(pair[0].last_key < pair[1].first_key, "level {level} overlaps: {:?} and {:?}", pair[0], pair[1]);
        }
    }
    levels
}

#[test]
fn leveled_compaction_keeps_each_level_free_of_overlaps_and_every_row_readable() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path(), "LeveledCompactionStrategy", &[("sstable_size_in_mb", "1")])).unwrap();
    // 16 flushes of 900 rows of 1 KiB over 12,000 keys: later flushes overwrite some rows of
    // earlier ones, and the 11 MiB left overflow level 1 (10 SSTables of 1 MiB).
    let mut expected: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for f in 0..16i64 {
        for i in 0..900 {
            let key = format!("key{}", (f * 751 + i * 13) % 12_000);
            let value = format!("flush {f:02} {}", "x".repeat(1000)).into_bytes();
            put(&s, &key, &value, f + 1);
            expected.insert(key, value);
        }
        s.flush("ks", "cf").unwrap();
        s.compact_due("ks", "cf").unwrap();
        check_levels(&s);
    }
    let levels = check_levels(&s);
    let level1 = levels.get(&1).map(Vec::len).unwrap_or(0);
    assert!(level1 >= 5, "level 1 holds {level1} SSTables: {:?}", levels.keys());
    assert!(levels.contains_key(&2), "level 1 never overflowed into level 2: {:?}", levels.keys());
    assert!(levels.get(&0).map_or(0, Vec::len) < 4, "level 0 was left to grow: {levels:?}");
    for m in levels.iter().filter(|(l, _)| **l > 0).flat_map(|(_, m)| m) {
        // One partition past the size at most.
        assert!(m.data_size < (1 << 20) + 4096, "an SSTable of {} bytes in a level", m.data_size);
    }
    let stats = s.cf_stats("ks", "cf").unwrap();
    assert_eq!(stats.sstables_in_each_level.len(), 9);
    assert_eq!(stats.sstables_in_each_level[1], (level1 as u64, 10));
    for (key, value) in &expected {
        assert_eq!(value_of(&s, key).as_ref(), Some(value), "{key}");
    }

    // A major compaction fills level 1 with 10 SSTables of the size, then level 2.
    s.major_compact("ks", "cf").unwrap();
    let levels = check_levels(&s);
    assert_eq!(levels.keys().copied().collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!(levels[&1].len(), 10);

    // What a restart reads back is the same.
    s.shutdown().unwrap();
    let s = Storage::open(config(dir.path(), "LeveledCompactionStrategy", &[("sstable_size_in_mb", "1")])).unwrap();
    assert_eq!(check_levels(&s).get(&1).map(Vec::len), Some(levels[&1].len()));
    for (key, value) in &expected {
        assert_eq!(value_of(&s, key).as_ref(), Some(value), "{key}");
    }
    s.shutdown().unwrap();
}

#[test]
fn time_window_compaction_merges_each_past_window_into_one_sstable() {
    let dir = tempfile::tempdir().unwrap();
    let options = [("compaction_window_unit", "MINUTES"), ("compaction_window_size", "1")];
    let s = Storage::open(config(dir.path(), "TimeWindowCompactionStrategy", &options)).unwrap();
    let minute = 60_000_000i64;
    let base = (now_seconds() as i64 / 60 - 10) * minute;
    // Two SSTables in each of three minutes, the last the newest window.
    for window in 0..3 {
        for part in 0..2 {
            for i in 0..50 {
                put(&s, &format!("w{window}-{part}-{i}"), b"v", base + window * minute + part * 1000 + i);
            }
            s.flush("ks", "cf").unwrap();
        }
    }
    assert_eq!(sstables(&s).len(), 6);
    s.compact_due("ks", "cf").unwrap();
    // Each past window became one SSTable; the newest holds two, under the size-tiered threshold.
    let mut windows: Vec<i64> = sstables(&s).iter().map(|(_, m)| m.max_timestamp.div_euclid(minute)).collect();
    windows.sort();
    let first = base / minute;
    assert_eq!(windows, vec![first, first + 1, first + 2, first + 2]);
    for window in 0..3 {
        assert_eq!(value_of(&s, &format!("w{window}-1-49")).as_deref(), Some(&b"v"[..]));
    }
    s.shutdown().unwrap();
}

#[test]
fn time_window_compaction_drops_an_sstable_whose_data_all_expired() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path(), "TimeWindowCompactionStrategy", &[])).unwrap();
    let now = now_seconds();
    // Newer live data, and one SSTable of cells that live one second.
    put(&s, "kept", b"old", 5_000);
    s.flush("ks", "cf").unwrap();
    for i in 0..20 {
        let mut m = RowMutation::new("ks", format!("short-lived-{i}").into_bytes());
        m.row_mut("cf").cells.push(Cell::expiring(b"c".to_vec(), b"v".to_vec(), 1_000 + i, 1, now as i32));
        s.apply(m).unwrap();
    }
    s.flush("ks", "cf").unwrap();
    assert_eq!(sstables(&s).len(), 2);
    s.compact_due("ks", "cf").unwrap();
    assert_eq!(sstables(&s).len(), 2, "the cells have not expired yet");
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    s.compact_due("ks", "cf").unwrap();
    let left = sstables(&s);
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].1.key_count, 1);
    assert_eq!(value_of(&s, "kept").as_deref(), Some(&b"old"[..]));
    assert_eq!(value_of(&s, "short-lived-3"), None);
    s.shutdown().unwrap();
}

#[test]
fn an_expired_sstable_that_may_hide_older_data_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path(), "TimeWindowCompactionStrategy", &[])).unwrap();
    let now = now_seconds();
    // The expiring cell overwrites an older live value of the same column in another SSTable:
    // dropping the newer SSTable alone would bring the old value back.
    put(&s, "k", b"old", 1);
    s.flush("ks", "cf").unwrap();
    let mut m = RowMutation::new("ks", b"k".to_vec());
    m.row_mut("cf").cells.push(Cell::expiring(b"c".to_vec(), b"new".to_vec(), 2, 1, now as i32));
    s.apply(m).unwrap();
    s.flush("ks", "cf").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    s.compact_due("ks", "cf").unwrap();
    assert_eq!(value_of(&s, "k"), None, "the old value came back");
    s.shutdown().unwrap();
}

#[test]
fn background_compaction_can_be_disabled_per_column_family() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path(), "SizeTieredCompactionStrategy", &[("enabled", "false")])).unwrap();
    for f in 0..5 {
        put(&s, &format!("k{f}"), b"v", 1);
        s.flush("ks", "cf").unwrap();
    }
    s.compact_due("ks", "cf").unwrap();
    assert_eq!(sstables(&s).len(), 5);
    // A major compaction is an operator's request: it runs regardless.
    s.major_compact("ks", "cf").unwrap();
    assert_eq!(sstables(&s).len(), 1);
    s.shutdown().unwrap();
}

/// Copies every file of the column family's directory (which holds `data`) into `to`.
fn copy_dir_files(data: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(data.parent().unwrap()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
}

#[test]
fn a_crash_between_the_outputs_of_a_leveled_compaction_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let open =
        || Storage::open(config(dir.path(), "LeveledCompactionStrategy", &[("sstable_size_in_mb", "1")])).unwrap();
    let s = open();
    let mut expected: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for f in 0..3i64 {
        for i in 0..1000 {
            let key = format!("key{}", (f * 577 + i * 3) % 2500);
            let value = format!("flush {f} {}", "y".repeat(1000)).into_bytes();
            put(&s, &key, &value, f + 1);
            expected.insert(key, value);
        }
        s.flush("ks", "cf").unwrap();
    }
    let inputs = sstables(&s);
    let cf_dir = inputs[0].0.parent().unwrap().to_path_buf();
    let saved = dir.path().join("saved");
    copy_dir_files(&inputs[0].0, &saved);
    s.major_compact("ks", "cf").unwrap();
    let outputs = sstables(&s);
    assert!(outputs.len() >= 2, "one output only: {outputs:?}");
    s.shutdown().unwrap();

    // As if the node died after every output but the last was complete: the inputs are back,
    // and the last output (the one naming them as ancestors) never committed.
    let (last, _) = outputs.iter().find(|(_, m)| !m.ancestors.is_empty()).unwrap();
    let last_prefix = last.to_string_lossy().replace("-Data.db", "-");
    for entry in std::fs::read_dir(&cf_dir).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().starts_with(&last_prefix) {
            std::fs::remove_file(path).unwrap();
        }
    }
    for entry in std::fs::read_dir(&saved).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, cf_dir.join(path.file_name().unwrap())).unwrap();
    }

    let s = open();
    assert_eq!(sstables(&s).len(), inputs.len() + outputs.len() - 1, "inputs and the complete outputs are kept");
    for (key, value) in &expected {
        assert_eq!(value_of(&s, key).as_ref(), Some(value), "{key}");
    }
    // Compaction sorts the duplicates out: levels without overlaps, every row as it was.
    s.compact_due("ks", "cf").unwrap();
    let levels = check_levels(&s);
    assert!(levels.get(&0).map_or(0, Vec::len) < 4, "{levels:?}");
    for (key, value) in &expected {
        assert_eq!(value_of(&s, key).as_ref(), Some(value), "{key}");
    }
    s.shutdown().unwrap();
}

#[test]
fn bloom_filters_follow_each_column_familys_false_positive_chance() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = StorageConfig::new(dir.path().join("data"), dir.path().join("commitlog"));
    c.partitioner = Partitioner::Murmur3;
    c.auto_compaction = false;
    let mut ks = KeyspaceDef::new("ks");
    let cf = |name: &str, chance: Option<f64>, strategy: &str| {
        let mut def = CfDef::new("ks", name);
        def.bloom_filter_fp_chance = chance;
        def.compaction_strategy = format!("org.apache.cassandra.db.compaction.{strategy}");
        def
    };
    ks.cf_defs = vec![
        cf("none", Some(1.0), "SizeTieredCompactionStrategy"),
        cf("leveled", None, "LeveledCompactionStrategy"),
        cf("default", None, "SizeTieredCompactionStrategy"),
        cf("precise", Some(0.001), "SizeTieredCompactionStrategy"),
    ];
    c.initial_keyspaces = vec![ks];
    let s = Storage::open(c).unwrap();
    let mut sizes = Vec::new();
    for name in ["none", "leveled", "default", "precise"] {
        for i in 0..2000 {
            let mut m = RowMutation::new("ks", format!("key{i}").into_bytes());
            m.row_mut(name).cells.push(Cell::live(b"c".to_vec(), b"v".to_vec(), 1));
            s.apply(m).unwrap();
        }
        s.flush("ks", name).unwrap();
        let data = s.data_files("ks", name).unwrap().remove(0);
        let filter = PathBuf::from(data.to_string_lossy().replace("-Data.db", "-Filter.db"));
        sizes.push(std::fs::metadata(&filter).unwrap().len());
        let read = |key: &str| s.read("ks", name, key.as_bytes(), &ReadFilter::all()).unwrap().len();
        assert_eq!((read("key7"), read("absent")), (1, 0), "{name}");
    }
    // 1.0 keeps one word; then 0.1 (leveled's default), 0.01, 0.001 take more bits per key.
    assert!(sizes[0] < 64, "{sizes:?}");
    assert!(sizes[0] < sizes[1] && sizes[1] < sizes[2] && sizes[2] < sizes[3], "{sizes:?}");
    s.shutdown().unwrap();
}

#[test]
fn date_tiered_compaction_merges_the_newest_window_and_older_windows_apart() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path(), "DateTieredCompactionStrategy", &[("base_time_seconds", "60")])).unwrap();
    let minute = 60_000_000i64;
    let now = (now_seconds() as i64 / 60) * minute + 30_000_000;
    // Two SSTables written an hour ago (one 4-minute window of the third tier there), and four
    // in the newest minute.
    let flush = |name: &str, timestamp: i64| {
        put(&s, name, b"v", timestamp);
        s.flush("ks", "cf").unwrap();
    };
    flush("old-1", now - 60 * minute);
    flush("old-2", now - 60 * minute + 1);
    s.compact_due("ks", "cf").unwrap();
    // "Now" is the newest cell's time: alone, the old ones are the newest window.
    assert_eq!(sstables(&s).len(), 2, "two SSTables in the newest window are under min_threshold");
    for i in 0..3 {
        flush(&format!("new-{i}"), now + i);
    }
    s.compact_due("ks", "cf").unwrap();
    assert_eq!(sstables(&s).len(), 4, "the old pair merges; three in the newest window wait");
    flush("new-3", now + 3);
    s.compact_due("ks", "cf").unwrap();
    let mut spans: Vec<(i64, i64)> = sstables(&s).iter().map(|(_, m)| (m.min_timestamp, m.max_timestamp)).collect();
    spans.sort();
    assert_eq!(spans, vec![(now - 60 * minute, now - 60 * minute + 1), (now, now + 3)], "the windows never mix");
    for key in ["old-1", "old-2", "new-0", "new-3"] {
        assert_eq!(value_of(&s, key).as_deref(), Some(&b"v"[..]), "{key}");
    }
    s.shutdown().unwrap();
}
