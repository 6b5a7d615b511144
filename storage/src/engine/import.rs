//! Importing SSTables into a live column family (`sibyltool import`, Cassandra 4's `nodetool
//! import`; 1.1's `nodetool refresh` loaded them from the column family's own directory, which
//! races with flushes and compactions writing there): restoring a snapshot without stopping the
//! node, or loading SSTables another node wrote.
//!
//! Each SSTable found in the source directory is checked whole (every component's checksum, every
//! partition read back in order under this node's partitioner), then linked (copied across file
//! systems) into the column family's directory under a new generation, with the same commit
//! protocol as a flush: temporary names, Statistics renamed last. Its Statistics is rewritten
//! with neither a commit log position nor ancestors: those describe the node and directory it
//! came from, and here they would make a restart skip this node's commit log, or delete this
//! node's SSTables of the same generations as compacted away. The source files are left as they
//! are. Secondary indexes are then rebuilt (queries scan meanwhile).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tracing::info;

use super::Storage;
use crate::error::{Result, StorageError};
use crate::sstable::format::{self, ReplayPosition};
use crate::sstable::{self, Component, Descriptor, SsTableReader};

/// What an import loaded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// The new Data files, one per SSTable loaded.
    pub files: Vec<PathBuf>,
    pub partitions: u64,
    pub bytes: u64,
}

impl Storage {
    /// Loads every SSTable of `keyspace.cf` in `source` into the column family. Refused, with
    /// nothing loaded, when `source` is not a directory, is the column family's own directory,
    /// holds no SSTable of it, holds SSTables of another column family, or one of its SSTables
    /// fails its checks.
    pub fn import_sstables(&self, keyspace: &str, cf: &str, source: &Path) -> Result<ImportSummary> {
        let store = self.store(keyspace, cf)?;
        let refuse = |reason: String| StorageError::InvalidImport { path: source.to_path_buf(), reason };
        if !source.is_dir() {
            return Err(refuse("it is not a directory".into()));
        }
        let canonical = |p: &Path| fs::canonicalize(p).map_err(|e| StorageError::io(p, e));
        let source_canonical = canonical(source)?;
        for dir in store.sstable_dirs() {
            if source_canonical == canonical(dir)? {
                return Err(refuse(format!("it is the directory of {keyspace}.{cf} itself")));
            }
        }
        let found = sstable::list_sstables(source)?;
        if let Some(other) = found.iter().find(|d| d.keyspace != keyspace || d.cf != cf) {
            let name = other.path(Component::Data);
            return Err(refuse(format!(
                "{} is an SSTable of {}.{}, not of {keyspace}.{cf}",
                name.display(),
                other.keyspace,
                other.cf
            )));
        }
        if found.is_empty() {
            return Err(refuse(format!("it holds no SSTable of {keyspace}.{cf}")));
        }

        // Every SSTable is checked before any is loaded: none is loaded unless all pass.
        let mut checked = BTreeMap::new();
        for desc in found {
            let partitions = self.check_importable(&desc)?;
            checked.insert(desc.generation, (desc, partitions));
        }

        let mut summary = ImportSummary::default();
        for (desc, partitions) in checked.into_values() {
            let target = Descriptor { version: desc.version, ..store.new_descriptor() };
            let reader =
                match place(&desc, &target).and_then(|()| SsTableReader::open(target.clone(), &self.inner.cache)) {
                    Ok(reader) => reader,
                    Err(e) => {
                        remove_placed(&target);
                        return Err(e);
                    }
                };
            summary.bytes += reader.disk_size();
            summary.partitions += partitions;
            summary.files.push(target.path(Component::Data));
            info!(keyspace, cf, from = %desc.path(Component::Data).display(), to = %target.path(Component::Data).display(),
                  partitions, "imported an SSTable");
            store.sstables.write().push(Arc::new(reader));
        }
        for index in store.indexes().iter() {
            index.mark_unbuilt()?;
            self.start_index_build(&store, index.clone());
        }
        self.request_compaction(&store);
        Ok(summary)
    }

    /// Opens the SSTable (every component's checksum) and reads every partition, which must come
    /// in strictly increasing order under this node's partitioner; returns how many there are.
    fn check_importable(&self, desc: &Descriptor) -> Result<u64> {
        let data = desc.path(Component::Data);
        let reader = SsTableReader::open(desc.clone(), &self.inner.cache)?;
        let partitioner = self.inner.config.partitioner;
        let mut previous = None;
        let mut partitions = 0u64;
        for item in reader.scan(None)? {
            let (key, _row) = item?;
            let expected = partitioner.decorate(&key.key);
            if expected.token != key.token {
                return Err(StorageError::InvalidImport {
                    path: data,
                    reason: format!("its keys were placed by another partitioner than {}", partitioner.class_name()),
                });
            }
            if previous.as_ref().is_some_and(|p| *p >= key) {
                return Err(StorageError::InvalidImport {
                    path: data,
                    reason: "its partitions are out of order".into(),
                });
            }
            previous = Some(key);
            partitions += 1;
        }
        Ok(partitions)
    }
}

/// Puts the components of `from` into `to`'s place: linked (or copied) under temporary names,
/// Statistics rewritten without commit log position and ancestors, then renamed, Statistics last.
fn place(from: &Descriptor, to: &Descriptor) -> Result<()> {
    for c in Component::ALL {
        let tmp = to.tmp_path(c);
        if c == Component::Statistics {
            let mut meta = format::read_metadata(&from.path(c))?;
            meta.replay_position = ReplayPosition { segment_id: 0, offset: 0 };
            meta.ancestors.clear();
            write_synced(&tmp, &format::encode_metadata(&meta, from.version))?;
        } else {
            link_or_copy(&from.path(c), &tmp)?;
        }
    }
    // As a flush commits: Statistics under its final name means the SSTable is complete.
    for c in Component::ALL.into_iter().filter(|c| *c != Component::Statistics) {
        rename_tmp(to, c)?;
    }
    sstable::sync_dir(&to.dir)?;
    rename_tmp(to, Component::Statistics)?;
    sstable::sync_dir(&to.dir)
}

fn rename_tmp(desc: &Descriptor, c: Component) -> Result<()> {
    let (tmp, path) = (desc.tmp_path(c), desc.path(c));
    fs::rename(&tmp, &path).map_err(|e| StorageError::io(&path, e))
}

fn link_or_copy(from: &Path, to: &Path) -> Result<()> {
    match fs::hard_link(from, to) {
        Ok(()) => Ok(()),
        // Another file system: copy, and make the copy durable.
        Err(_) => {
            fs::copy(from, to).map_err(|e| StorageError::io(from, e))?;
            fs::File::open(to).and_then(|f| f.sync_all()).map_err(|e| StorageError::io(to, e))
        }
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut f = fs::File::create(path).map_err(|e| StorageError::io(path, e))?;
    f.write_all(bytes).map_err(|e| StorageError::io(path, e))?;
    f.sync_all().map_err(|e| StorageError::io(path, e))
}

/// Removes what [`place`] put down for `desc`, under either name (an import that failed).
fn remove_placed(desc: &Descriptor) {
    // Statistics first: without it the rest is a leftover the next start removes anyway.
    for c in
        [Component::Statistics].into_iter().chain(Component::ALL.into_iter().filter(|c| *c != Component::Statistics))
    {
        let _ = fs::remove_file(desc.path(c));
        let _ = fs::remove_file(desc.tmp_path(c));
    }
}
