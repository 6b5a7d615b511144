//! Several data directories (0.6's `DataFileDirectory` entries): new SSTables go to the one with
//! the most free space, a restart reads them all, a compaction's crash recovery spans them,
//! snapshots and backups link within each one, and a drop removes the column family from all.
//!
//! Both directories are on one file system here, so statvfs would see them equally free: the
//! engine's free-space function is replaced by one that counts the Data files of a directory
//! (each as a GiB used), which makes the choice deterministic: the primary on a tie, so flushes
//! alternate primary, second, primary, ...
#![expect(clippy::unwrap_used, reason = "test")]

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use model::data::Cell;
use model::filter::ReadFilter;
use model::mutation::RowMutation;
use model::schema::{CfDef, KeyspaceDef};
use storage::engine::{Storage, StorageConfig, SNAPSHOTS_DIR};
use storage::StorageError;

/// One TiB less a GiB per Data file directly in `dir`.
fn free_by_data_files(dir: &Path) -> std::io::Result<u64> {
    let data_files = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with("-Data.db"))
        .count() as u64;
    Ok((1 << 40) - data_files * (1 << 30))
}

/// The data directories of a test: `<dir>/a` (primary) and `<dir>/b`.
fn data_dirs(dir: &Path) -> [PathBuf; 2] {
    [dir.join("a"), dir.join("b")]
}

fn config(dir: &Path) -> StorageConfig {
    let [a, b] = data_dirs(dir);
    let mut c = StorageConfig::new(a, dir.join("commitlog"));
    c.extra_data_dirs = vec![b];
    c.free_space = free_by_data_files;
    c.auto_compaction = false;
    let mut ks = KeyspaceDef::new("ks");
    ks.cf_defs.push(CfDef::new("ks", "cf"));
    c.initial_keyspaces = vec![ks];
    c
}

fn put(s: &Storage, key: &str, value: &str, timestamp: i64) {
    let mut m = RowMutation::new("ks", key.as_bytes().to_vec());
    m.row_mut("cf").cells.push(Cell::live(b"c".to_vec(), value.as_bytes().to_vec(), timestamp));
    s.apply(m).unwrap();
}

fn value_of(s: &Storage, key: &str) -> Option<String> {
    let cells = s.read("ks", "cf", key.as_bytes(), &ReadFilter::all()).unwrap();
    cells.into_iter().next().map(|c| String::from_utf8(c.value).unwrap())
}

/// `flushes` flushes of 50 rows each, overwriting half of the previous flush's rows; what each
/// key holds at the end.
fn write_flushes(s: &Storage, flushes: i64) -> BTreeMap<String, String> {
    let mut expected = BTreeMap::new();
    for f in 0..flushes {
        for i in 0..50 {
            let key = format!("key{}", f * 25 + i);
            let value = format!("flush {f} row {i}");
            put(s, &key, &value, f + 1);
            expected.insert(key, value);
        }
        s.flush("ks", "cf").unwrap();
    }
    expected
}

fn check_reads(s: &Storage, expected: &BTreeMap<String, String>) {
    for (key, value) in expected {
        assert_eq!(value_of(s, key).as_ref(), Some(value), "{key}");
    }
}

/// The data directory (`a` or `b`) holding each live SSTable, by generation.
fn placement(s: &Storage, dir: &Path) -> BTreeMap<u64, String> {
    s.data_files("ks", "cf")
        .unwrap()
        .into_iter()
        .map(|data| {
            let rel = data.strip_prefix(dir).unwrap();
            let data_dir = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
            let name = data.file_name().unwrap().to_string_lossy().into_owned();
            let generation = name.rsplit('-').nth(1).unwrap().parse().unwrap();
            (generation, data_dir)
        })
        .collect()
}

/// Every file directly in `dir` (none when it does not exist).
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = read.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    files.sort();
    files
}

#[test]
fn sstables_go_where_there_is_most_room_and_a_restart_reads_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    assert_eq!(s.data_dirs(), data_dirs(dir.path()).to_vec());
    let expected = write_flushes(&s, 4);
    let placed = placement(&s, dir.path());
    let want: BTreeMap<u64, String> = [(1, "a"), (2, "b"), (3, "a"), (4, "b")].map(|(g, d)| (g, d.to_string())).into();
    assert_eq!(placed, want, "the primary on a tie, then the roomier one");
    s.shutdown().unwrap();

    let s = Storage::open(config(dir.path())).unwrap();
    assert_eq!(placement(&s, dir.path()), want, "a restart opens the SSTables of both directories");
    check_reads(&s, &expected);
    // Generations go on after the highest of both directories.
    put(&s, "late", "row", 10);
    s.flush("ks", "cf").unwrap();
    assert_eq!(placement(&s, dir.path()).get(&5).map(String::as_str), Some("a"));
    assert_eq!(value_of(&s, "late").as_deref(), Some("row"));
    s.shutdown().unwrap();
}

#[test]
fn a_compaction_of_both_directories_interrupted_before_deleting_its_inputs_leaves_none() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    let expected = write_flushes(&s, 4);
    let inputs = placement(&s, dir.path());
    assert_eq!(inputs.values().filter(|d| *d == "b").count(), 2, "{inputs:?}");
    // Every input file, kept aside by data directory.
    let [a, b] = data_dirs(dir.path());
    let rel = s.cf_directory("ks", "cf").unwrap().strip_prefix(&a).unwrap().to_path_buf();
    let saved: Vec<(PathBuf, PathBuf)> = [&a, &b]
        .into_iter()
        .flat_map(|d| files_in(&d.join(&rel)))
        .map(|f| {
            let copy = dir.path().join("saved").join(f.strip_prefix(dir.path()).unwrap());
            std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
            std::fs::copy(&f, &copy).unwrap();
            (f, copy)
        })
        .collect();
    assert_eq!(saved.len(), 4 * 5, "four SSTables of five components");
    s.major_compact("ks", "cf").unwrap();
    let outputs = placement(&s, dir.path());
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    s.shutdown().unwrap();

    // As if the node died after committing the output and before deleting the inputs.
    for (original, copy) in &saved {
        std::fs::copy(copy, original).unwrap();
    }
    let s = Storage::open(config(dir.path())).unwrap();
    assert_eq!(placement(&s, dir.path()), outputs, "the inputs in both directories are gone");
    for (original, _) in &saved {
        assert!(!original.exists(), "{} is left", original.display());
    }
    check_reads(&s, &expected);
    s.shutdown().unwrap();
}

#[test]
fn snapshots_and_backups_link_within_each_directory_and_clearsnapshot_removes_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.incremental_backups = true;
    let s = Storage::open(c).unwrap();
    write_flushes(&s, 2);
    let [a, b] = data_dirs(dir.path());
    let rel = s.cf_directory("ks", "cf").unwrap().strip_prefix(&a).unwrap().to_path_buf();
    let cf_dirs = [a.join(&rel), b.join(&rel)];

    let summary = s.snapshot("ks", "cf", "t1").unwrap();
    assert_eq!(summary.files, 10, "{summary:?}");
    for cf_dir in &cf_dirs {
        let snapshot = cf_dir.join(SNAPSHOTS_DIR).join("t1");
        let backups = cf_dir.join("backups");
        let linked = files_in(&snapshot);
        assert_eq!(linked.len(), 5, "one SSTable's components in {}", snapshot.display());
        assert_eq!(files_in(&backups).len(), 5, "one SSTable's components in {}", backups.display());
        for link in linked.iter().chain(&files_in(&backups)) {
            let original = cf_dir.join(link.file_name().unwrap());
            assert_eq!(
                std::fs::metadata(link).unwrap().ino(),
                std::fs::metadata(&original).unwrap().ino(),
                "a hard link"
            );
        }
    }
    let listed = s.list_snapshots(Some("ks")).unwrap();
    assert_eq!(listed.len(), 1, "one snapshot over both directories: {listed:?}");
    assert_eq!((listed[0].summary.files, listed[0].directories.len()), (10, 2), "{listed:?}");
    assert_eq!(listed[0].directory, cf_dirs[0].join(SNAPSHOTS_DIR).join("t1"));
    assert!(matches!(s.snapshot("ks", "cf", "t1"), Err(StorageError::SnapshotExists { .. })));

    // A tag already taken in the second directory only is refused too.
    std::fs::create_dir_all(cf_dirs[1].join(SNAPSHOTS_DIR).join("t2")).unwrap();
    assert!(matches!(s.snapshot("ks", "cf", "t2"), Err(StorageError::SnapshotExists { .. })));
    assert!(!cf_dirs[0].join(SNAPSHOTS_DIR).join("t2").exists(), "nothing linked for a refused snapshot");

    let removed = s.clear_snapshots(Some("ks"), None).unwrap();
    assert_eq!(removed.len(), 3, "{removed:?}");
    for cf_dir in &cf_dirs {
        assert!(!cf_dir.join(SNAPSHOTS_DIR).exists(), "{}", cf_dir.display());
    }
    assert!(s.list_snapshots(None).unwrap().is_empty());
    s.shutdown().unwrap();
}

#[test]
fn dropping_the_column_family_removes_it_from_both_directories_and_keeps_its_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    write_flushes(&s, 2);
    let [a, b] = data_dirs(dir.path());
    let rel = s.cf_directory("ks", "cf").unwrap().strip_prefix(&a).unwrap().to_path_buf();
    let cf_dirs = [a.join(&rel), b.join(&rel)];
    assert!(cf_dirs.iter().all(|d| files_in(d).len() == 5));

    s.drop_column_family("ks", "cf").unwrap();
    let kept = s.list_snapshots(Some("ks")).unwrap();
    assert!(kept.len() == 1 && kept[0].tag.contains("-dropped-cf") && kept[0].summary.files == 10, "{kept:?}");
    for cf_dir in &cf_dirs {
        assert!(files_in(cf_dir).is_empty(), "SSTables left in {}", cf_dir.display());
    }
    s.clear_snapshots(None, None).unwrap();
    s.drop_keyspace("ks").unwrap();
    for data_dir in [&a, &b] {
        assert!(!data_dir.join("ks").exists(), "the keyspace is left in {}", data_dir.display());
    }
    s.shutdown().unwrap();
}
