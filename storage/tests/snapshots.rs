//! Snapshots: hard links to a column family's SSTables and its indexes', which survive
//! compaction, restore by copying back, are listed and cleared by tag, and outlive a drop.
#![expect(clippy::unwrap_used, reason = "test")]

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use storage::data::Cell;
use storage::dht::Partitioner;
use storage::engine::{Storage, StorageConfig, SNAPSHOTS_DIR};
use storage::filter::ReadFilter;
use storage::mutation::RowMutation;
use storage::schema::{CfDef, ColumnDef, IndexType, KeyspaceDef};
use storage::StorageError;

const UTF8: &str = "org.apache.cassandra.db.marshal.UTF8Type";

fn config(dir: &Path) -> StorageConfig {
    let mut c = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    c.partitioner = Partitioner::Murmur3;
    c.auto_compaction = false;
    let mut users = CfDef::new("ks", "users");
    users.comparator_type = UTF8.into();
    users.column_metadata = vec![ColumnDef {
        name: b"name".to_vec(),
        validation_class: UTF8.into(),
        index_type: Some(IndexType::Keys),
        index_name: None,
        index_options: Default::default(),
    }];
    let mut ks = KeyspaceDef::new("ks");
    ks.cf_defs.push(users);
    c.initial_keyspaces = vec![ks];
    c
}

fn put(s: &Storage, key: &str, value: &str) {
    let mut m = RowMutation::new("ks", key.as_bytes().to_vec());
    m.row_mut("users").cells.push(Cell::live("name", value, 1));
    s.apply(m).unwrap();
}

fn name_of(s: &Storage, key: &str) -> Option<Vec<u8>> {
    s.read("ks", "users", key.as_bytes(), &ReadFilter::all()).unwrap().into_iter().next().map(|c| c.value)
}

/// Every file under `dir`, recursively, relative to it.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path).into_iter().map(|p| Path::new(path.file_name().unwrap()).join(p)));
        } else {
            out.push(path.file_name().unwrap().into());
        }
    }
    out.sort();
    out
}

#[test]
fn a_snapshot_survives_compaction_and_restores_by_copying_its_files_back() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    put(&s, "a", "alice");
    s.flush("ks", "users").unwrap();
    put(&s, "b", "bob"); // in the memtable: the snapshot flushes it first
    let summary = s.snapshot("ks", "users", "before").unwrap();
    let snap = s.snapshot_dir("ks", "users", "before").unwrap();
    let files = files_under(&snap);
    // Two SSTables of five components, and the index's two.
    assert_eq!(summary.files, 20, "{files:?}");
    assert_eq!(files.len(), 20);
    assert!(files.iter().any(|f| f.to_string_lossy().starts_with('.')), "the index's files: {files:?}");
    assert!(std::fs::metadata(snap.join(&files[files.len() - 1])).unwrap().nlink() >= 2, "a hard link");

    // Refused: the same tag again, and tags that are not a plain name.
    assert!(matches!(s.snapshot("ks", "users", "before"), Err(StorageError::SnapshotExists { .. })));
    for bad in ["", "..", "a/b", "a\0b"] {
        assert!(matches!(s.snapshot("ks", "users", bad), Err(StorageError::InvalidSnapshotTag { .. })), "{bad:?}");
    }

    // Later writes, then a compaction that deletes the snapshotted SSTables.
    put(&s, "a", "changed");
    put(&s, "c", "carol");
    s.major_compact("ks", "users").unwrap();
    assert_eq!(files_under(&snap).len(), 20, "the snapshot outlives the files it links");
    let cf_dir = s.cf_directory("ks", "users").unwrap();
    s.shutdown().unwrap();

    // Restore: with the node stopped, the column family's SSTables replaced by the snapshot's,
    // and the commit log cleared (its records of later writes would be replayed on top).
    std::fs::remove_dir_all(dir.path().join("commitlog")).unwrap();
    for entry in std::fs::read_dir(&cf_dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap() == SNAPSHOTS_DIR {
            continue;
        }
        if path.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
    }
    for file in files_under(&snap) {
        let to = cf_dir.join(&file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(snap.join(&file), to).unwrap();
    }
    let s = Storage::open(config(dir.path())).unwrap();
    assert_eq!(name_of(&s, "a"), Some(b"alice".to_vec()));
    assert_eq!(name_of(&s, "b"), Some(b"bob".to_vec()));
    assert_eq!(name_of(&s, "c"), None, "written after the snapshot");
    s.shutdown().unwrap();
}

#[test]
fn snapshots_are_listed_cleared_by_tag_and_kept_when_their_column_family_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    put(&s, "a", "alice");
    s.snapshot("ks", "users", "one").unwrap();
    s.snapshot("ks", "users", "two").unwrap();
    let tags = |s: &Storage| s.list_snapshots(Some("ks")).unwrap().into_iter().map(|e| e.tag).collect::<Vec<_>>();
    assert_eq!(tags(&s), ["one", "two"]);
    let listed = s.list_snapshots(None).unwrap();
    assert!(listed.iter().all(|e| e.keyspace == "ks" && e.cf_dir.starts_with("users-") && e.summary.files == 10));

    let removed = s.clear_snapshots(Some("ks"), Some("one")).unwrap();
    assert_eq!(removed.len(), 1);
    assert_eq!(tags(&s), ["two"]);
    assert!(matches!(s.list_snapshots(Some("nope")), Err(StorageError::UnknownKeyspace(_))));
    // A path is not a keyspace, even one that leads to a directory.
    for path in ["..", "ks/..", "../data"] {
        assert!(matches!(s.clear_snapshots(Some(path), None), Err(StorageError::UnknownKeyspace(_))), "{path}");
    }

    // A dropped column family's SSTables go, its snapshots stay (and stay listed).
    let cf_dir = s.cf_directory("ks", "users").unwrap();
    s.drop_column_family("ks", "users").unwrap();
    assert_eq!(files_under(&cf_dir).iter().filter(|f| !f.starts_with(SNAPSHOTS_DIR)).count(), 0);
    assert_eq!(tags(&s), ["two"]);
    s.drop_keyspace("ks").unwrap();
    assert_eq!(s.list_snapshots(None).unwrap().len(), 1, "kept after the keyspace is dropped too");
    assert_eq!(s.clear_snapshots(None, None).unwrap().len(), 1);
    assert!(s.list_snapshots(None).unwrap().is_empty());
    s.shutdown().unwrap();
}

#[test]
fn snapshot_before_compaction_links_the_sstables_each_compaction_merges() {
    for wanted in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = config(dir.path());
        c.snapshot_before_compaction = wanted;
        let s = Storage::open(c).unwrap();
        for key in ["a", "b"] {
            put(&s, key, key);
            s.flush("ks", "users").unwrap();
        }
        s.major_compact("ks", "users").unwrap();
        let snapshots = s.list_snapshots(Some("ks")).unwrap();
        if wanted {
            // The column family's and its index's, each of the two SSTables merged; the
            // index's lies in the base's snapshots directory, so it is listed (and cleared).
            assert_eq!(snapshots.len(), 2, "{snapshots:?}");
            assert!(snapshots.iter().all(|e| e.tag.contains("-compact-users")), "{snapshots:?}");
            assert!(snapshots.iter().all(|e| e.summary.files == 10), "{snapshots:?}");
            assert_eq!(s.clear_snapshots(None, None).unwrap().len(), 2);
        } else {
            assert!(snapshots.is_empty(), "{snapshots:?}");
        }
        s.shutdown().unwrap();
    }
}
