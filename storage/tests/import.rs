//! Importing SSTables into a live column family: a snapshot restored without a restart, and
//! SSTables another node wrote, whose commit log positions and ancestors must not leak into
//! this node (they would skip its commit log at the next start, or delete its SSTables).
#![expect(clippy::unwrap_used, reason = "test")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use model::dht::KeyBound;
use model::filter::ReadFilter;
use storage::engine::Storage;
use storage::index::{IndexExpression, IndexOperator};
use storage::StorageError;

mod common;

use common::{damage_data_file_in, name_of, put_name as put, users_config as config};

/// The keys the index finds for `name = value`, once the index is built again.
fn by_name(s: &Storage, value: &str) -> Vec<String> {
    let started = Instant::now();
    while !s.index_status(Some("ks")).iter().all(|i| i.built) {
        assert!(started.elapsed() < Duration::from_secs(30), "index not built: {:?}", s.index_status(Some("ks")));
        std::thread::sleep(Duration::from_millis(20));
    }
    let expressions = [IndexExpression::new("name", IndexOperator::Eq, value)];
    let rows =
        s.search("ks", "users", &KeyBound::Unbounded, &KeyBound::Unbounded, &expressions, &ReadFilter::all(), 100);
    let mut keys: Vec<String> = rows.unwrap().into_iter().map(|(k, _)| String::from_utf8(k.key).unwrap()).collect();
    keys.sort();
    keys
}

/// An SSTable written by another node (its own directories), after `writes` rows and a
/// compaction of two flushes: its commit log position lies beyond anything this test's node
/// writes, and it names generations 1 and 2 as its ancestors. Returns the directory holding it.
fn other_nodes_sstable(root: &Path, writes: usize) -> PathBuf {
    let s = Storage::open(config(root)).unwrap();
    for i in 0..writes {
        put(&s, &format!("other{i}"), &"x".repeat(200));
    }
    s.flush("ks", "users").unwrap();
    put(&s, "imported", "carol");
    s.flush("ks", "users").unwrap();
    s.major_compact("ks", "users").unwrap();
    s.snapshot("ks", "users", "out").unwrap();
    let dir = s.snapshot_dir("ks", "users", "out").unwrap();
    s.shutdown().unwrap();
    dir
}

#[test]
fn an_import_loads_sstables_live_and_keeps_this_nodes_commit_log_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    // Generations 1 and 2 here, which the imported SSTable will name as its ancestors; after a
    // clean restart they are the only copy of "a" and "b" (the commit log no longer has them).
    put(&s, "a", "alice");
    s.flush("ks", "users").unwrap();
    put(&s, "b", "bob");
    s.flush("ks", "users").unwrap();
    s.shutdown().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    // In the commit log only, at a position before any of the other node's (segment ids are
    // creation times).
    put(&s, "c", "carol");

    let other = tempfile::tempdir().unwrap();
    let source = other_nodes_sstable(other.path(), 2000);
    let files_in_source = std::fs::read_dir(&source).unwrap().count();
    let summary = s.import_sstables("ks", "users", &source).unwrap();
    assert_eq!(summary.files.len(), 1, "{summary:?}");
    assert_eq!(summary.partitions, 2001);
    assert_eq!(name_of(&s, "imported"), Some(b"carol".to_vec()));
    assert_eq!(by_name(&s, "carol"), ["c", "imported"], "the index was rebuilt over the imported rows");
    assert_eq!(std::fs::read_dir(&source).unwrap().count(), files_in_source, "the source is left as it was");

    // A crash: the next start replays "c" and keeps generations 1 and 2.
    s.abandon();
    let s = Storage::open(config(dir.path())).unwrap();
    assert_eq!(name_of(&s, "a"), Some(b"alice".to_vec()), "an SSTable named as an ancestor was deleted");
    assert_eq!(name_of(&s, "b"), Some(b"bob".to_vec()), "an SSTable named as an ancestor was deleted");
    assert_eq!(name_of(&s, "c"), Some(b"carol".to_vec()), "the commit log was skipped");
    assert_eq!(name_of(&s, "imported"), Some(b"carol".to_vec()));
    s.shutdown().unwrap();
}

#[test]
fn a_snapshot_comes_back_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    put(&s, "a", "alice");
    s.truncate("ks", "users").unwrap(); // AutoSnapshot keeps it
    assert_eq!(name_of(&s, "a"), None);
    let snapshot = s.list_snapshots(Some("ks")).unwrap().remove(0).directory;
    s.import_sstables("ks", "users", &snapshot).unwrap();
    assert_eq!(name_of(&s, "a"), Some(b"alice".to_vec()));
    assert_eq!(by_name(&s, "alice"), ["a"]);
    s.shutdown().unwrap();
}

#[test]
fn bad_sources_are_refused_and_load_nothing() {
    let other = tempfile::tempdir().unwrap();
    let source = other_nodes_sstable(other.path(), 10);
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    let refused = |path: &Path, needle: &str| match s.import_sstables("ks", "users", path) {
        Err(StorageError::InvalidImport { reason, .. }) => assert!(reason.contains(needle), "{reason}"),
        other => panic!("{}: {other:?}", path.display()),
    };
    refused(&dir.path().join("nope"), "not a directory");
    refused(&s.cf_directory("ks", "users").unwrap(), "the directory of ks.users itself");
    let empty = tempfile::tempdir().unwrap();
    refused(empty.path(), "holds no SSTable of ks.users");
    assert!(matches!(s.import_sstables("ks", "nope", &source), Err(StorageError::UnknownColumnFamily { .. })));

    // Another column family's SSTable.
    let renamed = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&source).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue; // the index's SSTables
        }
        let name = path.file_name().unwrap().to_string_lossy().replace("ks-users-", "ks-others-");
        std::fs::copy(&path, renamed.path().join(name)).unwrap();
    }
    refused(renamed.path(), "is an SSTable of ks.others, not of ks.users");

    // A damaged Data file: refused, naming it, and nothing is loaded.
    let damaged = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&source).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue;
        }
        std::fs::copy(&path, damaged.path().join(path.file_name().unwrap())).unwrap();
    }
    let data = damage_data_file_in(damaged.path());
    match s.import_sstables("ks", "users", damaged.path()) {
        Err(e) => assert!(e.to_string().contains(&*data.file_name().unwrap().to_string_lossy()), "{e}"),
        Ok(summary) => panic!("a damaged SSTable was imported: {summary:?}"),
    }
    assert_eq!(name_of(&s, "imported"), None);
    assert!(s.data_files("ks", "users").unwrap().is_empty());
    s.shutdown().unwrap();
}
