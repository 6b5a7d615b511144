//! Immutable sorted string tables: Cassandra's SSTable design in our own, checksummed format.
//!
//! An SSTable holds partitions (one [`Row`](crate::data::Row) per [`DecoratedKey`]) in key order,
//! written once by [`SsTableWriter`] and then only read through [`SsTableReader`] until compaction
//! deletes it. It is a set of files (components) in one directory, named
//! `<keyspace>-<cf>-<version>-<generation>-<Component>.db`:
//!
//! | component    | holds                                                                       |
//! |--------------|-----------------------------------------------------------------------------|
//! | `Data`       | the partitions, as a stream of fixed-size chunks each with its own CRC32      |
//! | `Index`      | key → data offset and size, plus a column index for large partitions        |
//! | `Summary`    | the first key of each index block (every Nth entry), kept in memory          |
//! | `Filter`     | a bloom filter over the key bytes                                           |
//! | `Statistics` | [`Metadata`]: counts, key and timestamp ranges, replay position, ancestors  |
//!
//! A point read costs a bloom probe and a binary search in memory, one index block read and the
//! data chunk(s) holding the partition. The byte layouts are drawn in [`format`].
//!
//! Crash safety: components are written under `.tmp` names and fsynced, then renamed, the
//! `Statistics` component last; a `Statistics` file under its final name is the commit point.
//! [`cleanup_leftovers`] removes what an interrupted writer (or an interrupted delete) left
//! behind, and [`list_sstables`] lists only complete SSTables.

mod bloom;
mod chunk;
pub mod format;
mod reader;
mod writer;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::dht::DecoratedKey;
use crate::error::{CorruptData, Result, StorageError};

pub use format::{FormatVersion, Metadata, ReplayPosition};
pub use reader::{SsTableReader, SsTableScanner};
pub use writer::{SsTableWriter, WriterOptions};

/// Suffix of a component that is still being written.
const TMP_SUFFIX: &str = ".tmp";

/// One file of an SSTable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Component {
    Data,
    Index,
    Summary,
    Filter,
    Statistics,
}

impl Component {
    /// Every component, in the order the writer commits them (`Statistics` last: the commit point).
    pub const ALL: [Component; 5] =
        [Component::Data, Component::Index, Component::Summary, Component::Filter, Component::Statistics];

    pub fn name(self) -> &'static str {
        match self {
            Component::Data => "Data",
            Component::Index => "Index",
            Component::Summary => "Summary",
            Component::Filter => "Filter",
            Component::Statistics => "Statistics",
        }
    }

    fn from_name(name: &str) -> Option<Component> {
        Component::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// Names one SSTable: where it lives, whose data it holds, its generation and format version.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Descriptor {
    pub dir: PathBuf,
    pub keyspace: String,
    pub cf: String,
    pub generation: u64,
    pub version: FormatVersion,
}

impl Descriptor {
    /// A descriptor in the current format version.
    pub fn new(dir: impl Into<PathBuf>, keyspace: impl Into<String>, cf: impl Into<String>, generation: u64) -> Self {
        Descriptor {
            dir: dir.into(),
            keyspace: keyspace.into(),
            cf: cf.into(),
            generation,
            version: FormatVersion::CURRENT,
        }
    }

    /// The file name of `component` once the SSTable is complete.
    pub fn file_name(&self, component: Component) -> String {
        format!("{}-{}-{}-{}-{}.db", self.keyspace, self.cf, self.version.tag(), self.generation, component.name())
    }

    pub fn path(&self, component: Component) -> PathBuf {
        self.dir.join(self.file_name(component))
    }

    /// Where the writer puts `component` until the SSTable is committed.
    pub fn tmp_path(&self, component: Component) -> PathBuf {
        self.dir.join(format!("{}{TMP_SUFFIX}", self.file_name(component)))
    }

    /// Parses an SSTable file name: `Ok(None)` when the name is not an SSTable component at all,
    /// an error when it is one in a format version this build does not know.
    fn parse(dir: &Path, file_name: &str) -> Result<Option<ParsedName>> {
        let (name, tmp) = match file_name.strip_suffix(TMP_SUFFIX) {
            Some(n) => (n, true),
            None => (file_name, false),
        };
        let Some(name) = name.strip_suffix(".db") else { return Ok(None) };
        // Keyspace names cannot hold '-' (Cassandra allows only word characters), so splitting
        // from the right leaves "<keyspace>-<cf>" and the first '-' of that separates the two.
        let mut parts = name.rsplitn(4, '-');
        let (Some(component), Some(generation), Some(version), Some(ks_cf)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Ok(None);
        };
        let Some(component) = Component::from_name(component) else { return Ok(None) };
        let Ok(generation) = generation.parse::<u64>() else { return Ok(None) };
        let Some((keyspace, cf)) = ks_cf.split_once('-') else { return Ok(None) };
        if keyspace.is_empty() || cf.is_empty() {
            return Ok(None);
        }
        let version = match FormatVersion::from_tag(version) {
            Some(v) => v?,
            None => return Ok(None),
        };
        let desc = Descriptor { dir: dir.to_path_buf(), keyspace: keyspace.into(), cf: cf.into(), generation, version };
        Ok(Some(ParsedName { desc, component, tmp }))
    }
}

struct ParsedName {
    desc: Descriptor,
    component: Component,
    tmp: bool,
}

/// Errors of SSTable writing that are the caller's mistake, not the disk's.
///
/// `StorageError` has no variant for these yet, so they travel inside
/// `StorageError::Io { source }` as an `io::ErrorKind::InvalidInput` whose inner error is this
/// type; [`SsTableError::of`] gets it back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SsTableError {
    #[error("keys must be appended in increasing order: {key:?} after {previous:?}")]
    KeyOutOfOrder { previous: DecoratedKey, key: DecoratedKey },
    #[error("{what} is {len} bytes, more than the format allows ({max})")]
    TooLong { what: &'static str, len: usize, max: usize },
    #[error("invalid writer option {name}: {value}")]
    InvalidOption { name: &'static str, value: String },
    #[error("an SSTable needs at least one partition; abort the writer instead")]
    Empty,
    #[error("SSTable {0} already exists")]
    AlreadyExists(PathBuf),
}

impl SsTableError {
    fn into_storage(self, path: &Path) -> StorageError {
        StorageError::io(path, std::io::Error::new(std::io::ErrorKind::InvalidInput, self))
    }

    /// The SSTable error inside `err`, if it carries one.
    pub fn of(err: &StorageError) -> Option<&SsTableError> {
        match err {
            StorageError::Io { source, .. } => source.get_ref().and_then(|e| e.downcast_ref::<SsTableError>()),
            _ => None,
        }
    }
}

fn corrupt(path: &Path, detail: CorruptData) -> StorageError {
    StorageError::Corrupt { file: Some(path.to_path_buf()), detail }
}

/// Every SSTable file in `dir`, grouped by SSTable.
fn scan_dir(dir: &Path) -> Result<BTreeMap<DescKey, Vec<ParsedName>>> {
    let mut found: BTreeMap<DescKey, Vec<ParsedName>> = BTreeMap::new();
    let entries = fs::read_dir(dir).map_err(|e| StorageError::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| StorageError::io(dir, e))?;
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else { continue };
        let parsed = Descriptor::parse(dir, file_name).map_err(|e| e.in_file(entry.path()))?;
        if let Some(parsed) = parsed {
            found.entry(DescKey::of(&parsed.desc)).or_default().push(parsed);
        }
    }
    Ok(found)
}

/// Sort key for descriptors: keyspace, column family, generation.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct DescKey(String, String, u64, u8);

impl DescKey {
    fn of(d: &Descriptor) -> DescKey {
        DescKey(d.keyspace.clone(), d.cf.clone(), d.generation, d.version as u8)
    }
}

/// The complete SSTables in `dir` (those whose `Statistics` component is committed), ordered by
/// keyspace, column family and generation.
pub fn list_sstables(dir: &Path) -> Result<Vec<Descriptor>> {
    let found = scan_dir(dir)?;
    Ok(found
        .into_values()
        .filter_map(|files| files.into_iter().find(|f| !f.tmp && f.component == Component::Statistics).map(|f| f.desc))
        .collect())
}

/// Run at startup, before opening SSTables: removes what interrupted writers, deletes and
/// compactions left in `dir`.
///
/// - temporary (`.tmp`) components of unfinished writers;
/// - components of SSTables whose `Statistics` (the commit point) is missing: a writer that
///   crashed while renaming, or a delete that crashed after removing `Statistics`;
/// - complete SSTables listed as ancestors of another complete SSTable of the same column family:
///   a compaction whose result was committed but whose inputs were not yet deleted.
pub fn cleanup_leftovers(dir: &Path) -> Result<()> {
    cleanup_leftovers_in(&[dir.to_path_buf()])
}

/// [`cleanup_leftovers`] over the directories of one column family in every data directory,
/// taken as one set: a compaction's output in one may name as ancestors inputs in another
/// (each SSTable's files are all in one directory; generations are unique over all of them).
pub fn cleanup_leftovers_in(dirs: &[PathBuf]) -> Result<()> {
    let mut complete = Vec::new();
    for dir in dirs {
        for files in scan_dir(dir)?.values() {
            let committed = files.iter().any(|f| !f.tmp && f.component == Component::Statistics);
            for f in files {
                if f.tmp || !committed {
                    let path = if f.tmp { f.desc.tmp_path(f.component) } else { f.desc.path(f.component) };
                    tracing::info!(path = %path.display(), "removing leftover SSTable file");
                    remove_file_if_exists(&path)?;
                }
            }
            if committed {
                if let Some(f) = files.first() {
                    complete.push(f.desc.clone());
                }
            }
        }
    }

    // A compaction's inputs are redundant once its output is committed.
    let mut replaced: HashSet<(String, String, u64)> = HashSet::new();
    for desc in &complete {
        match format::read_metadata(&desc.path(Component::Statistics)) {
            Ok(meta) => {
                for generation in meta.ancestors {
                    replaced.insert((desc.keyspace.clone(), desc.cf.clone(), generation));
                }
            }
            // Left for open() to report: cleanup must not destroy evidence or refuse to start.
            Err(e) => tracing::warn!(error = %e, "cannot read SSTable statistics during cleanup"),
        }
    }
    for desc in &complete {
        if replaced.contains(&(desc.keyspace.clone(), desc.cf.clone(), desc.generation)) {
            tracing::info!(generation = desc.generation, dir = %desc.dir.display(),
                           "removing SSTable replaced by a finished compaction");
            delete_components(desc)?;
        }
    }
    for dir in dirs {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Removes an SSTable's files, `Statistics` first so that a crash half-way leaves an incomplete
/// SSTable that [`cleanup_leftovers`] finishes removing, never a committed one with missing data.
fn delete_components(desc: &Descriptor) -> Result<()> {
    remove_file_if_exists(&desc.path(Component::Statistics))?;
    sync_dir(&desc.dir)?;
    for c in Component::ALL {
        remove_file_if_exists(&desc.path(c))?;
    }
    Ok(())
}

fn remove_file_if_exists(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StorageError::io(path, e)),
    }
}

/// Makes renames and removals in `dir` durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    let d = fs::File::open(dir).map_err(|e| StorageError::io(dir, e))?;
    d.sync_all().map_err(|e| StorageError::io(dir, e))
}

/// Lets a read skip column-index blocks it does not need.
pub trait CellFilter {
    /// True when the block holding cells `first_name..=last_name` (comparator order) may hold
    /// cells the read wants.
    fn wants_block(&self, first_name: &[u8], last_name: &[u8]) -> bool;
}

/// Wants every block.
pub struct AllCells;

impl CellFilter for AllCells {
    fn wants_block(&self, _first_name: &[u8], _last_name: &[u8]) -> bool {
        true
    }
}
