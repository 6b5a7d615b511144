//! Snapshots (`sibyltool snapshot`, `clearsnapshot`, `listsnapshots`): hard links to a column
//! family's SSTables, taken after a flush, in Cassandra 1.x's layout: `<cf dir>/snapshots/<tag>/`,
//! with each secondary index's SSTables in `.<index>/` inside it as in the column family's
//! directory. A link costs no space until compaction deletes the original; the files never
//! change, so a snapshot is a consistent copy of what was flushed. Restoring one is copying its
//! files back into the column family's directory while the node is stopped
//! (docs/admin-protocol.md, "Snapshots").
//! Dropping a column family or keyspace keeps its snapshots.
//!
//! With several data directories, hard links cannot leave a file system: each SSTable is linked
//! into the snapshot (or `backups/`) directory of the data directory it lives in, as Cassandra
//! does, so a snapshot is `snapshots/<tag>/` in each data directory of the column family (the
//! primary's always, another's when it held SSTables), listed once and cleared everywhere.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tracing::info;

use super::Storage;
use crate::cfs::ColumnFamilyStore;
use crate::error::{Result, StorageError};
use crate::sstable::{self, Component, SsTableReader};

/// The directory under a column family's directory that holds its snapshots.
pub const SNAPSHOTS_DIR: &str = "snapshots";

/// The directory under a column family's directory where `IncrementalBackups` links each
/// SSTable a flush writes (an index's in `.<index>/` inside it).
pub const BACKUPS_DIR: &str = "backups";

/// Times a snapshot is retried when a compaction deletes an SSTable while it is being linked.
const LINK_ATTEMPTS: usize = 5;

/// What a snapshot of one column family holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotSummary {
    pub files: u64,
    pub bytes: u64,
}

/// One column family's snapshot on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotEntry {
    pub keyspace: String,
    /// The column family's directory name (`<cf>-<id>`): a dropped one's snapshots are listed too.
    pub cf_dir: String,
    pub tag: String,
    pub summary: SnapshotSummary,
    /// The first of `directories`.
    pub directory: PathBuf,
    /// The snapshot's directory in each data directory holding part of it, primary first.
    pub directories: Vec<PathBuf>,
}

/// Refuses a tag that is empty, `.`/`..`, holds a path separator or NUL, or is over 255 bytes.
pub fn check_snapshot_tag(tag: &str) -> Result<()> {
    let problem = if tag.is_empty() {
        "it is empty"
    } else if tag == "." || tag == ".." {
        "it names a directory"
    } else if tag.contains(['/', '\\', '\0']) {
        "it holds a path separator or NUL"
    } else if tag.len() > 255 {
        "it is over 255 bytes"
    } else {
        return Ok(());
    };
    Err(StorageError::InvalidSnapshotTag { tag: tag.to_string(), reason: problem.into() })
}

impl Storage {
    /// The snapshot directory `tag` of a column family (in the primary data directory).
    pub fn snapshot_dir(&self, keyspace: &str, cf: &str, tag: &str) -> Result<PathBuf> {
        check_snapshot_tag(tag)?;
        Ok(snapshot_dir_of(self.store(keyspace, cf)?.sstable_dir(), tag))
    }

    /// Where snapshot `tag` of a column family may be: its snapshot directory in every data
    /// directory, the primary's first.
    pub fn snapshot_dirs_of(&self, keyspace: &str, cf: &str, tag: &str) -> Result<Vec<PathBuf>> {
        check_snapshot_tag(tag)?;
        Ok(store_snapshot_dirs(&*self.store(keyspace, cf)?, tag))
    }

    /// Flushes the column family, then links its SSTables and its indexes' into snapshot `tag`.
    /// Refused when the snapshot exists.
    pub fn snapshot(&self, keyspace: &str, cf: &str, tag: &str) -> Result<SnapshotSummary> {
        check_snapshot_tag(tag)?;
        let store = self.store(keyspace, cf)?;
        self.flush_store(&store)?;
        snapshot_store(&store, tag, true)
    }

    /// With `AutoSnapshot`, flushes the column family and links its SSTables into snapshot
    /// `<ms>-<what>-<cf>` before it is truncated or dropped (`what`: `truncated`, `dropped`).
    pub(super) fn auto_snapshot(&self, store: &Arc<ColumnFamilyStore>, what: &str) -> Result<()> {
        if !self.inner.config.auto_snapshot {
            return Ok(());
        }
        let millis = crate::data::now_micros() / 1000;
        self.flush_store(store)?;
        // Two truncations within a millisecond still get a snapshot each.
        let mut tag = format!("{millis}-{what}-{}", store.name);
        let mut n = 1;
        while store_snapshot_dirs(store, &tag).iter().any(|d| d.exists()) {
            n += 1;
            tag = format!("{millis}-{what}-{}-{n}", store.name);
        }
        snapshot_store(store, &tag, true).map(|_| ())
    }

    /// Every snapshot on disk, of `keyspace` or of all keyspaces, ordered by keyspace, column
    /// family directory and tag.
    /// A snapshot spread over several data directories is one entry: its files and bytes
    /// summed, its `directory` the first found (the primary data directory's when there).
    pub fn list_snapshots(&self, keyspace: Option<&str>) -> Result<Vec<SnapshotEntry>> {
        let mut entries: std::collections::BTreeMap<(String, String, String), SnapshotEntry> = Default::default();
        for (ks, cf_dir, snapshots) in self.snapshot_dirs(keyspace)? {
            for tag_dir in sorted_entries(&snapshots)? {
                let tag = file_name(&tag_dir);
                let summary = sum_files(&tag_dir)?;
                let entry = entries.entry((ks.clone(), cf_dir.clone(), tag.clone())).or_insert_with(|| SnapshotEntry {
                    keyspace: ks.clone(),
                    cf_dir: cf_dir.clone(),
                    tag,
                    summary: SnapshotSummary::default(),
                    directory: tag_dir.clone(),
                    directories: Vec::new(),
                });
                entry.summary.files += summary.files;
                entry.summary.bytes += summary.bytes;
                entry.directories.push(tag_dir);
            }
        }
        Ok(entries.into_values().collect())
    }

    /// Removes snapshot `tag` (every snapshot without one) of `keyspace` (of all keyspaces
    /// without one); the directories removed.
    pub fn clear_snapshots(&self, keyspace: Option<&str>, tag: Option<&str>) -> Result<Vec<PathBuf>> {
        if let Some(tag) = tag {
            check_snapshot_tag(tag)?;
        }
        let mut removed = Vec::new();
        for (_, _, snapshots) in self.snapshot_dirs(keyspace)? {
            for tag_dir in sorted_entries(&snapshots)? {
                if tag.is_none_or(|t| file_name(&tag_dir) == t) {
                    remove_dir(&tag_dir)?;
                    removed.push(tag_dir);
                }
            }
            // The snapshots directory goes too once empty; a failure here only leaves it.
            let _ = fs::remove_dir(&snapshots);
        }
        info!(
            keyspace = keyspace.unwrap_or("(all)"),
            tag = tag.unwrap_or("(all)"),
            removed = removed.len(),
            "cleared snapshots"
        );
        Ok(removed)
    }

    /// (keyspace, column family directory name, its snapshots directory) for each column family
    /// directory of `keyspace` (of every keyspace) that has one, dropped column families included,
    /// in every data directory (the primary first).
    fn snapshot_dirs(&self, keyspace: Option<&str>) -> Result<Vec<(String, String, PathBuf)>> {
        let data_dirs = self.inner.config.data_dirs();
        if let Some(ks) = keyspace {
            // A dropped keyspace's directory may still hold snapshots; only a plain name (word
            // characters, as keyspace names are) is looked up on disk, never a path.
            let plain = !ks.is_empty() && ks.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if self.keyspace(ks).is_none() && !(plain && data_dirs.iter().any(|d| d.join(ks).is_dir())) {
                return Err(StorageError::UnknownKeyspace(ks.to_string()));
            }
        }
        let mut found = Vec::new();
        for data_dir in &data_dirs {
            let keyspaces = match keyspace {
                Some(ks) => vec![data_dir.join(ks)],
                None => sorted_entries(data_dir)?,
            };
            for ks_dir in keyspaces.into_iter().filter(|d| d.is_dir()) {
                for cf_dir in sorted_entries(&ks_dir)? {
                    let snapshots = cf_dir.join(SNAPSHOTS_DIR);
                    if snapshots.is_dir() {
                        found.push((file_name(&ks_dir), file_name(&cf_dir), snapshots));
                    }
                }
            }
        }
        Ok(found)
    }
}

/// Links the SSTables of `store` (and of its indexes, `with_indexes`) into its snapshot `tag`,
/// without a flush; refused when that snapshot exists. `SnapshotBeforeCompaction` takes its
/// snapshots this way.
pub(crate) fn snapshot_store(store: &ColumnFamilyStore, tag: &str, with_indexes: bool) -> Result<SnapshotSummary> {
    check_snapshot_tag(tag)?;
    let dirs = store_snapshot_dirs(store, tag);
    if let Some(existing) = dirs.iter().find(|d| d.exists()) {
        return Err(StorageError::SnapshotExists { path: existing.clone() });
    }
    // The primary's, where the log line and callers point.
    let dir = snapshot_dir_of(store.sstable_dir(), tag);
    let remove_all = || -> Result<()> {
        for d in &dirs {
            remove_dir(d)?;
        }
        Ok(())
    };
    let mut attempt = 0;
    loop {
        attempt += 1;
        match link_all(store, tag, with_indexes) {
            Ok(summary) => {
                info!(keyspace = %store.keyspace, cf = %store.name, tag, files = summary.files, bytes = summary.bytes,
                      dir = %dir.display(), "snapshot taken");
                return Ok(summary);
            }
            // A compaction replaced an SSTable between the listing and its link: the new one
            // holds the same data, so start over with the current list.
            Err(StorageError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound && attempt < LINK_ATTEMPTS =>
            {
                remove_all()?;
            }
            Err(e) => {
                let _ = remove_all();
                return Err(e);
            }
        }
    }
}

/// Links the components of `table`, just flushed, into the `backups/` directory beside it, in
/// its own data directory (`IncrementalBackups`), or `backups/.<index>/` for an index's.
pub(super) fn back_up(table: &SsTableReader) -> Result<()> {
    let sstable_dir = table.descriptor().dir.as_path();
    let name = file_name(sstable_dir);
    let dir = match sstable_dir.parent() {
        Some(base) if name.starts_with('.') => base.join(BACKUPS_DIR).join(name),
        _ => sstable_dir.join(BACKUPS_DIR),
    };
    fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
    let desc = table.descriptor();
    for component in Component::ALL {
        let from = desc.path(component);
        let Some(file) = from.file_name() else { continue };
        fs::hard_link(&from, dir.join(file)).map_err(|e| StorageError::io(&from, e))?;
    }
    sstable::sync_dir(&dir)
}

/// Where snapshot `tag` of the SSTables in `sstable_dir` goes: `snapshots/<tag>/` in it, or for
/// an index's directory (`.<index>` inside its base's), `.<index>/` inside the base's snapshot,
/// so that every snapshot is listed and cleared with its column family's.
fn snapshot_dir_of(sstable_dir: &Path, tag: &str) -> PathBuf {
    let name = sstable_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match sstable_dir.parent() {
        Some(base) if name.starts_with('.') => base.join(SNAPSHOTS_DIR).join(tag).join(name),
        _ => sstable_dir.join(SNAPSHOTS_DIR).join(tag),
    }
}

/// Snapshot `tag`'s directory in each data directory of `store`, the primary's first.
fn store_snapshot_dirs(store: &ColumnFamilyStore, tag: &str) -> Vec<PathBuf> {
    store.sstable_dirs().iter().map(|d| snapshot_dir_of(d, tag)).collect()
}

/// Links every SSTable of `store`, and of its indexes with `with_indexes`, into snapshot `tag`
/// of the data directory it lives in. Creates the primary's snapshot directory always (an
/// empty column family has an empty snapshot), another only for what it links there.
fn link_all(store: &ColumnFamilyStore, tag: &str, with_indexes: bool) -> Result<SnapshotSummary> {
    let mut summary = SnapshotSummary::default();
    let primary = snapshot_dir_of(store.sstable_dir(), tag);
    fs::create_dir_all(&primary).map_err(|e| StorageError::io(&primary, e))?;
    let mut touched = vec![primary];
    link_sstables(store, tag, &mut touched, &mut summary)?;
    let indexes = if with_indexes { store.indexes() } else { Default::default() };
    for index in indexes.iter() {
        // An index's directory is inside its base's primary one, so its snapshot is too.
        let index_dir = snapshot_dir_of(index.store.sstable_dir(), tag);
        fs::create_dir_all(&index_dir).map_err(|e| StorageError::io(&index_dir, e))?;
        link_sstables(&index.store, tag, &mut touched, &mut summary)?;
    }
    for dir in touched.iter().rev() {
        sstable::sync_dir(dir)?;
    }
    Ok(summary)
}

/// Links each SSTable of `store` into snapshot `tag` beside it (same file system); adds the
/// directories it links into to `touched`.
fn link_sstables(
    store: &ColumnFamilyStore,
    tag: &str,
    touched: &mut Vec<PathBuf>,
    summary: &mut SnapshotSummary,
) -> Result<()> {
    for table in store.sstables() {
        let desc = table.descriptor();
        let dir = snapshot_dir_of(&desc.dir, tag);
        if !touched.contains(&dir) {
            fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
            touched.push(dir.clone());
        }
        for component in Component::ALL {
            let from = desc.path(component);
            let Some(name) = from.file_name() else { continue };
            let to = dir.join(name);
            fs::hard_link(&from, &to).map_err(|e| StorageError::io(&from, e))?;
            summary.files += 1;
            summary.bytes += fs::metadata(&to).map_err(|e| StorageError::io(&to, e))?.len();
        }
    }
    Ok(())
}

/// The entries of `dir`, sorted; none when it does not exist.
fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let read = match fs::read_dir(dir) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StorageError::io(dir, e)),
    };
    let mut paths =
        read.map(|e| e.map(|e| e.path())).collect::<std::io::Result<Vec<_>>>().map_err(|e| StorageError::io(dir, e))?;
    paths.sort();
    Ok(paths)
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Files and bytes under `dir`, subdirectories included.
fn sum_files(dir: &Path) -> Result<SnapshotSummary> {
    let mut summary = SnapshotSummary::default();
    for path in sorted_entries(dir)? {
        let meta = fs::metadata(&path).map_err(|e| StorageError::io(&path, e))?;
        if meta.is_dir() {
            let inner = sum_files(&path)?;
            summary.files += inner.files;
            summary.bytes += inner.bytes;
        } else {
            summary.files += 1;
            summary.bytes += meta.len();
        }
    }
    Ok(summary)
}

/// Removes `dir` (a dropped column family's or keyspace's directory) but for the `snapshots`
/// and `backups` directories in it, as Cassandra keeps the snapshots and backups of what is
/// dropped. Directories left empty go too.
pub(super) fn remove_keeping_snapshots(dir: &Path) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            if entry.file_name() != SNAPSHOTS_DIR && entry.file_name() != BACKUPS_DIR {
                remove_keeping_snapshots(&path)?;
            }
        } else {
            fs::remove_file(&path)?;
        }
    }
    match fs::remove_dir(dir) {
        Ok(()) => Ok(()),
        // Snapshots or backups are left in it.
        Err(_) if fs::read_dir(dir).map(|mut d| d.next().is_some()).unwrap_or(false) => Ok(()),
        Err(e) => Err(e),
    }
}

fn remove_dir(dir: &Path) -> Result<()> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StorageError::io(dir, e)),
    }
}
