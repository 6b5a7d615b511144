//! Snapshots: hard links to a column family's SSTables and its indexes', which survive
//! compaction, restore by copying back, are listed and cleared by tag, and outlive a drop;
//! taken on their own before a truncate or drop (AutoSnapshot). Incremental backups: a link to
//! each SSTable a flush writes.
#![expect(clippy::unwrap_used, reason = "test")]

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use storage::engine::{Storage, StorageConfig, BACKUPS_DIR, SNAPSHOTS_DIR};
use storage::StorageError;

mod common;

use common::{name_of, put_name as put, users_config as config};

/// An engine opened with `c`, holding rows `a` and `b` in two SSTables.
fn two_flushed_sstables(c: StorageConfig) -> Storage {
    let s = Storage::open(c).unwrap();
    for key in ["a", "b"] {
        put(&s, key, key);
        s.flush("ks", "users").unwrap();
    }
    s
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

    // A dropped column family's SSTables go, its snapshots stay (and stay listed), with the
    // one AutoSnapshot took of it.
    let cf_dir = s.cf_directory("ks", "users").unwrap();
    s.drop_column_family("ks", "users").unwrap();
    assert_eq!(files_under(&cf_dir).iter().filter(|f| !f.starts_with(SNAPSHOTS_DIR)).count(), 0);
    let after_drop = tags(&s);
    assert_eq!(after_drop.len(), 2, "{after_drop:?}");
    assert!(after_drop[0].ends_with("-dropped-users") && after_drop[1] == "two", "{after_drop:?}");
    s.drop_keyspace("ks").unwrap();
    assert_eq!(s.list_snapshots(None).unwrap().len(), 2, "kept after the keyspace is dropped too");
    assert_eq!(s.clear_snapshots(None, None).unwrap().len(), 2);
    assert!(s.list_snapshots(None).unwrap().is_empty());
    s.shutdown().unwrap();
}

#[test]
fn snapshot_before_compaction_links_the_sstables_each_compaction_merges() {
    for wanted in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let s = two_flushed_sstables(StorageConfig { snapshot_before_compaction: wanted, ..config(dir.path()) });
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

#[test]
fn auto_snapshot_keeps_what_truncate_and_drop_remove() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path())).unwrap();
    put(&s, "a", "alice");
    s.flush("ks", "users").unwrap();
    put(&s, "b", "bob"); // in the memtable: flushed into the snapshot too
    s.truncate("ks", "users").unwrap();
    assert_eq!((name_of(&s, "a"), name_of(&s, "b")), (None, None));
    let snapshots = s.list_snapshots(Some("ks")).unwrap();
    assert_eq!(snapshots.len(), 1, "{snapshots:?}");
    assert!(snapshots[0].tag.ends_with("-truncated-users"), "{snapshots:?}");
    // Two SSTables of five components, and the index's two.
    assert_eq!(snapshots[0].summary.files, 20, "{snapshots:?}");

    // A second truncation at once gets a snapshot of its own (of nothing).
    s.truncate("ks", "users").unwrap();
    assert_eq!(s.list_snapshots(Some("ks")).unwrap().len(), 2);

    // What the truncation snapshot holds comes back by copying it in while the node is stopped.
    let cf_dir = s.cf_directory("ks", "users").unwrap();
    let snap = snapshots[0].directory.clone();
    s.shutdown().unwrap();
    std::fs::remove_dir_all(dir.path().join("commitlog")).unwrap();
    for file in files_under(&snap) {
        let to = cf_dir.join(&file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(snap.join(&file), to).unwrap();
    }
    let s = Storage::open(config(dir.path())).unwrap();
    assert_eq!(name_of(&s, "a"), Some(b"alice".to_vec()));
    assert_eq!(name_of(&s, "b"), Some(b"bob".to_vec()));
    s.shutdown().unwrap();

    // Turned off, nothing is kept.
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.auto_snapshot = false;
    let s = Storage::open(c).unwrap();
    put(&s, "a", "alice");
    s.truncate("ks", "users").unwrap();
    s.drop_column_family("ks", "users").unwrap();
    assert!(s.list_snapshots(None).unwrap().is_empty());
    s.shutdown().unwrap();
}

#[test]
fn incremental_backups_link_each_flushed_sstable() {
    for wanted in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let s = two_flushed_sstables(StorageConfig { incremental_backups: wanted, ..config(dir.path()) });
        let cf_dir = s.cf_directory("ks", "users").unwrap();
        let backups = cf_dir.join(BACKUPS_DIR);
        if !wanted {
            assert!(!backups.exists());
            s.shutdown().unwrap();
            continue;
        }
        // Two SSTables of five components, and the index's two in `.<index>/`.
        let files = files_under(&backups);
        assert_eq!(files.len(), 20, "{files:?}");
        assert_eq!(files.iter().filter(|f| f.to_string_lossy().starts_with('.')).count(), 10, "{files:?}");
        // A compaction's output is no flush: not backed up. Its inputs' links stay.
        s.major_compact("ks", "users").unwrap();
        assert_eq!(files_under(&backups).len(), 20);
        assert!(std::fs::metadata(backups.join(&files[files.len() - 1])).unwrap().nlink() == 1, "the original is gone");
        // Startup ignores the directory; a drop keeps it.
        s.shutdown().unwrap();
        let mut c = config(dir.path());
        c.incremental_backups = true;
        let s = Storage::open(c).unwrap();
        assert_eq!(name_of(&s, "a"), Some(b"a".to_vec()));
        s.drop_column_family("ks", "users").unwrap();
        assert_eq!(files_under(&backups).len(), 20);
        s.shutdown().unwrap();
    }
}
