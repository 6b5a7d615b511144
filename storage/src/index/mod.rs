//! Secondary indexes of the KEYS kind (Cassandra's `db.index.keys`): for one column of a
//! standard column family, which rows hold which value.
//!
//! ```text
//! base column family users:   row jsmith: user_name = "John", ...     (token t1)
//!                             row bob:    user_name = "Bob",  ...     (token t2)
//! index users.users_user_name_idx (a hidden column family of its own):
//!                             row "John": cell [t1 | jsmith] (empty value, timestamp and TTL of
//!                             row "Bob":  cell [t2 | bob]     the base cell it was made from)
//! ```
//!
//! Each index is a [`ColumnFamilyStore`] that no schema lists: its own memtables and SSTables in
//! `.<index name>/` inside the base column family's directory, flushed with the base (see
//! `engine::maintenance`) and compacted like any other store. A row key is an indexed value;
//! its cells are named by the base rows' decorated keys in an order-preserving byte encoding
//! ([`entry_name`]), so an index row lists its base rows in token order and a page can start at
//! any key.
//!
//! Maintenance: the write path adds an entry for every live indexed cell it applies
//! ([`ColumnFamilyStore::apply`]), after the cell itself. Overwrites and deletions add nothing:
//! the entries they leave behind are found stale when a query reads the base row, skipped, and
//! deleted then (Cassandra's lazy clean-up); an entry of a TTL cell expires with it. The index is
//! not in the commit log: replaying the base column family's records re-derives its entries, and
//! a base flush writes the index SSTables first, so index SSTables always cover what the base
//! SSTables cover. An index added to a column family with data is built in the background
//! ([`crate::engine::Storage`]'s `build_index`), and a `Built` marker file in its directory says
//! the build finished and is on disk.

pub mod expression;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use md5::{Digest, Md5};

use crate::block_cache::BlockCache;
use crate::cfs::ColumnFamilyStore;
use crate::comparator::CellComparator;
use crate::data::{Cell, Row};
use crate::dht::{DecoratedKey, KeyBound, Partitioner, Token, TokenBytes};
use crate::error::{Result, StorageError};
use crate::filter::is_shadowed;
use crate::schema::{thrift_id_of, CfDef, IndexType};
use crate::sstable::{self, SsTableReader};

pub use expression::{IndexExpression, IndexOperator};

/// Name of the file that marks an index as completely built (content: [`BUILT_MARKER`]).
const BUILT_FILE: &str = "Built";
/// Magic and format version of the marker file.
const BUILT_MARKER: &[u8] = b"SIBYL-INDEX-BUILT 1\n";
/// Values longer than this are not indexed: they cannot be an SSTable's row key (u16 length).
pub const MAX_INDEXED_VALUE: usize = u16::MAX as usize;

/// How far a background build has got.
#[derive(Default)]
pub(crate) struct BuildProgress {
    /// Base partitions read so far.
    pub done: AtomicU64,
    /// Base partitions to read, estimated when the build started.
    pub total: AtomicU64,
    /// A build thread is working on the index.
    pub running: AtomicBool,
    /// A build was asked for while one ran (an import brought data it may have missed): the
    /// running one must not mark the index built, and builds again.
    pub again: AtomicBool,
}

/// One KEYS index of a column family.
pub struct SecondaryIndex {
    pub name: String,
    /// The indexed column's name.
    pub column: Vec<u8>,
    pub(crate) store: Arc<ColumnFamilyStore>,
    /// Decorates indexed values into the index store's row keys (any deterministic order works
    /// for point lookups; the node's partitioner is at hand).
    partitioner: Partitioner,
    built: AtomicBool,
    /// Set when a schema change removes the index: a running build stops.
    dropped: AtomicBool,
    pub(crate) progress: BuildProgress,
}

/// The KEYS indexes a definition declares, as (index name, column). Names are assigned by
/// [`crate::schema::assign_index_names`] before a definition is stored; an unnamed one here is
/// skipped.
pub(crate) fn declared(def: &CfDef) -> Vec<(String, Vec<u8>)> {
    if def.is_super() {
        return Vec::new();
    }
    def.column_metadata
        .iter()
        .filter(|c| c.index_type == Some(IndexType::Keys))
        .filter_map(|c| c.index_name.clone().map(|n| (n, c.name.clone())))
        .collect()
}

/// The hidden column family definition of index `name` of `base`.
fn index_cf_def(base: &CfDef, name: &str) -> CfDef {
    let mut def = CfDef::new(base.keyspace.clone(), format!("{}.{name}", base.name));
    let mut md5 = Md5::new();
    md5.update(base.id.as_bytes());
    md5.update(name.as_bytes());
    def.id = uuid::Builder::from_md5_bytes(md5.finalize().into()).into_uuid();
    def.thrift_id = thrift_id_of(&def.id);
    // Index tombstones (lazy clean-up) and expired entries go when the base's would.
    def.gc_grace_seconds = base.gc_grace_seconds;
    def.min_compaction_threshold = base.min_compaction_threshold;
    def.max_compaction_threshold = base.max_compaction_threshold;
    def
}

/// The directory of index `name` inside its base column family's directory.
pub(crate) fn index_dir(base_dir: &Path, name: &str) -> PathBuf {
    base_dir.join(index_dir_name(name))
}

/// The name of index `name`'s directory (and of its directory in a snapshot).
pub(crate) fn index_dir_name(name: &str) -> String {
    format!(".{name}")
}

impl SecondaryIndex {
    /// Opens (or creates) the index's store in the base's directory.
    pub(crate) fn open(
        base_dir: &Path,
        base: &CfDef,
        name: &str,
        column: &[u8],
        partitioner: Partitioner,
        cache: &Arc<BlockCache>,
    ) -> Result<SecondaryIndex> {
        let dir = index_dir(base_dir, name);
        std::fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
        sstable::cleanup_leftovers(&dir)?;
        let mut readers = Vec::new();
        for desc in sstable::list_sstables(&dir)? {
            readers.push(Arc::new(SsTableReader::open(desc, cache)?));
        }
        let built = match std::fs::read(dir.join(BUILT_FILE)) {
            Ok(bytes) if bytes == BUILT_MARKER => true,
            Ok(_) => {
                tracing::warn!(dir = %dir.display(), "unknown index marker file: the index is built again");
                false
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(StorageError::io(dir.join(BUILT_FILE), e)),
        };
        let store = ColumnFamilyStore::open(index_cf_def(base, name), dir, readers)?;
        Ok(SecondaryIndex {
            name: name.to_string(),
            column: column.to_vec(),
            store: Arc::new(store),
            partitioner,
            built: AtomicBool::new(built),
            dropped: AtomicBool::new(false),
            progress: BuildProgress::default(),
        })
    }

    /// True once every row the base held when the index was added is indexed, durably.
    pub fn is_built(&self) -> bool {
        self.built.load(Ordering::Acquire)
    }

    pub(crate) fn is_dropped(&self) -> bool {
        self.dropped.load(Ordering::Acquire)
    }

    pub(crate) fn mark_dropped(&self) {
        self.dropped.store(true, Ordering::Release);
    }

    /// Records that the build finished. The caller has flushed the index store first.
    pub(crate) fn mark_built(&self) -> Result<()> {
        let dir = self.store.sstable_dir();
        let tmp = dir.join(format!("{BUILT_FILE}.tmp"));
        let path = dir.join(BUILT_FILE);
        write_synced(&tmp, BUILT_MARKER)?;
        std::fs::rename(&tmp, &path).map_err(|e| StorageError::io(&path, e))?;
        sync_dir(dir)?;
        self.built.store(true, Ordering::Release);
        Ok(())
    }

    /// Marks the index as not completely built (its base received data it has no entries for),
    /// durably: queries scan the base until a build marks it built again.
    pub(crate) fn mark_unbuilt(&self) -> Result<()> {
        self.built.store(false, Ordering::Release);
        let dir = self.store.sstable_dir();
        let path = dir.join(BUILT_FILE);
        match std::fs::remove_file(&path) {
            Ok(()) => sync_dir(dir),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StorageError::io(&path, e)),
        }
    }

    /// The index row key of an indexed value.
    pub(crate) fn value_key(&self, value: &[u8]) -> DecoratedKey {
        self.partitioner.decorate(value)
    }

    pub fn store_cmp(&self) -> &CellComparator {
        &self.store.cmp
    }

    /// The index entry that applying `update` to base row `key` calls for: the indexed cell of
    /// the update if it is live (a tombstone or an overwrite adds nothing; see the module
    /// documentation), as (index row key, index row).
    pub(crate) fn entry_for(
        &self,
        cmp: &CellComparator,
        key: &DecoratedKey,
        update: &Row,
        now: i32,
    ) -> Option<(DecoratedKey, Row)> {
        // An update's cells need not be sorted, nor unique (the memtable reconciles them): the
        // winning version is the newest, a tombstone winning a tie.
        let cell = update
            .cells
            .iter()
            .filter(|c| c.name == self.column)
            .max_by_key(|c| (c.timestamp, matches!(c.kind, crate::data::CellKind::Tombstone { .. })))?;
        if !cell.is_live(now) || is_shadowed(cmp, update, cell) || cell.value.len() > MAX_INDEXED_VALUE {
            return None;
        }
        let entry = Cell { name: entry_name(key), value: Vec::new(), timestamp: cell.timestamp, kind: cell.kind };
        Some((self.value_key(&cell.value), Row { cells: vec![entry], ..Row::default() }))
    }

    /// Removes the index's files (it was dropped). The caller holds its flush lock.
    pub(crate) fn remove_files(&self) {
        let dir = self.store.sstable_dir();
        if let Err(e) = std::fs::remove_dir_all(dir) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot remove a dropped index's files");
            }
        }
    }
}

/// The tombstone that removes a stale entry: at the entry's own timestamp, so a newer entry
/// for the same row (the value came back) stays.
pub(crate) fn stale_entry_tombstone(entry: &Cell, now: i32) -> Row {
    Row { cells: vec![Cell::tombstone(entry.name.clone(), entry.timestamp, now)], ..Row::default() }
}

// ---------------------------------------------------------------------------------------------
// Entry names: a base row's decorated key as bytes whose plain order is the keys' order.
//
//   name := escape(token) 0x00 0x00 key        escape: every 0x00 byte becomes 0x00 0x01
//
// The escaped token with its terminator is prefix-free and orders as the token does, so the
// key bytes that follow decide only between equal tokens: (token, key) order, as DecoratedKey.
// ---------------------------------------------------------------------------------------------

fn push_escaped_token(token: &Token, out: &mut Vec<u8>) {
    for &b in token.as_bytes() {
        out.push(b);
        if b == 0 {
            out.push(1);
        }
    }
}

/// The name of `key`'s entry in an index row.
pub fn entry_name(key: &DecoratedKey) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.token.as_bytes().len() + key.key.len() + 3);
    push_escaped_token(&key.token, &mut out);
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&key.key);
    out
}

/// The decorated key an entry name stands for; `None` for bytes no [`entry_name`] makes.
pub fn decode_entry_name(name: &[u8]) -> Option<DecoratedKey> {
    let mut token = TokenBytes::new();
    let mut i = 0;
    loop {
        let b = *name.get(i)?;
        if b != 0 {
            token.push(b);
            i += 1;
            continue;
        }
        match name.get(i + 1)? {
            0 => break,
            1 => {
                token.push(0);
                i += 2;
            }
            _ => return None,
        }
    }
    let key = name.get(i + 2..)?.to_vec();
    Some(DecoratedKey::new(Token(token), key))
}

/// Slice bounds (inclusive, empty = open) of an index row that cover every entry between two
/// key bounds; they may cover a few more (same token), which the caller filters out exactly.
pub(crate) fn entry_bounds(start: &KeyBound, end: &KeyBound) -> (Vec<u8>, Vec<u8>) {
    let low = match start {
        KeyBound::Unbounded => Vec::new(),
        KeyBound::Key { key, .. } => {
            let mut v = Vec::new();
            push_escaped_token(&key.token, &mut v);
            v.extend_from_slice(&[0, 0]);
            v
        }
        KeyBound::Token { token, .. } => {
            let mut v = Vec::new();
            push_escaped_token(token, &mut v);
            v.extend_from_slice(&[0, 0]);
            v
        }
    };
    let high = match end {
        KeyBound::Unbounded => Vec::new(),
        // Above every name with this token: after the escaped token, 0x00 0x01 sorts after the
        // terminator 0x00 0x00 and before any longer token's next byte.
        KeyBound::Key { key: DecoratedKey { token, .. }, .. } | KeyBound::Token { token, .. } => {
            let mut v = Vec::new();
            push_escaped_token(token, &mut v);
            v.extend_from_slice(&[0, 1]);
            v
        }
    };
    (low, high)
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut f = std::fs::File::create(path).map_err(|e| StorageError::io(path, e))?;
    f.write_all(bytes).map_err(|e| StorageError::io(path, e))?;
    f.sync_all().map_err(|e| StorageError::io(path, e))
}

fn sync_dir(dir: &Path) -> Result<()> {
    let d = std::fs::File::open(dir).map_err(|e| StorageError::io(dir, e))?;
    d.sync_all().map_err(|e| StorageError::io(dir, e))
}

/// Removes index directories in `base_dir` that no declared index owns (left by a drop that
/// did not finish before a crash).
pub(crate) fn remove_stray_dirs(base_dir: &Path, wanted: &[(String, Vec<u8>)]) -> Result<()> {
    let entries = match std::fs::read_dir(base_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(StorageError::io(base_dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| StorageError::io(base_dir, e))?;
        let name = entry.file_name();
        let Some(index) = name.to_str().and_then(|n| n.strip_prefix('.')) else { continue };
        let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
        if is_dir && !wanted.iter().any(|(n, _)| n == index) {
            tracing::info!(dir = %entry.path().display(), "removing the files of an index that was dropped");
            if let Err(e) = std::fs::remove_dir_all(entry.path()) {
                tracing::warn!(dir = %entry.path().display(), error = %e, "cannot remove a dropped index's files");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
