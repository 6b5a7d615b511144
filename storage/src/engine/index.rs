//! Secondary indexes in the engine: opening and dropping them as the schema says, building them
//! in the background, their status, and the replica's side of an index query
//! ([`Storage::search`]). The index layout and its maintenance are described in
//! [`crate::index`].

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tracing::{info, warn};

use super::{Inner, Storage};
use crate::cfs::ColumnFamilyStore;
use crate::data::{now_seconds, Row};
use crate::dht::{DecoratedKey, KeyBound};
use crate::error::Result;
use crate::filter::{collect_live, merge_rows, slice_row, CountUnit, ReadFilter};
use crate::index::expression::{live_cell, satisfies_all};
use crate::index::{self, IndexExpression, IndexOperator, SecondaryIndex};
use crate::schema::{CfDef, CfMetadata};

/// One index as `sibyltool indexstatus` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexStatus {
    pub keyspace: String,
    pub cf: String,
    pub index: String,
    pub column: Vec<u8>,
    /// Every row the column family held when the index was added is indexed, durably.
    pub built: bool,
    /// A build is running now.
    pub building: bool,
    /// Base partitions the running (or last) build has read, of about `rows_total`.
    pub rows_done: u64,
    pub rows_total: u64,
}

/// Index entries a build hands to the write side at once.
const BUILD_BATCH: usize = 256;
/// A build that failed (an I/O error, an SSTable compacted away under it) starts over this many
/// times, after [`BUILD_RETRY_PAUSE`].
const BUILD_ATTEMPTS: u32 = 3;
/// Pause before a failed build starts over.
const BUILD_RETRY_PAUSE: Duration = Duration::from_secs(1);

impl Storage {
    /// Makes `store`'s indexes the ones `def` declares: keeps those already open, opens new ones
    /// and drops removed ones (a running build stops, the files go). Returns the indexes not
    /// built yet, for [`Storage::start_index_build`].
    pub(super) fn sync_indexes(&self, store: &Arc<ColumnFamilyStore>, def: &CfDef) -> Result<Vec<Arc<SecondaryIndex>>> {
        sync_indexes(store, def, self.inner.config.partitioner, &self.inner.cache)
    }

    /// Starts building `index` from `base`'s data on a thread of its own; when a build of it is
    /// running, that one builds again once it ends (it may have missed data that came since).
    pub(super) fn start_index_build(&self, base: &Arc<ColumnFamilyStore>, index: Arc<SecondaryIndex>) {
        // Set before `running` is looked at: a build ending now sees it (see the loop below).
        index.progress.again.store(true, Ordering::SeqCst);
        if index.progress.running.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak = Arc::downgrade(&self.inner);
        let base = base.clone();
        let name = format!("{}.{}.{}", base.keyspace, base.name, index.name);
        let spawned = std::thread::Builder::new().name("sibyl-index-build".into()).spawn(move || loop {
            index.progress.again.store(false, Ordering::SeqCst);
            for attempt in 1..=BUILD_ATTEMPTS {
                match build_index(&weak, &base, &index) {
                    Ok(true) => info!(index = %name, rows = index.progress.done.load(Ordering::Relaxed), "index build finished"),
                    Ok(false) => info!(index = %name, "index build stopped (shutdown or drop)"),
                    Err(e) if attempt < BUILD_ATTEMPTS => {
                        warn!(index = %name, error = %e, attempt, "index build failed; starting over");
                        std::thread::sleep(BUILD_RETRY_PAUSE);
                        continue;
                    }
                    Err(e) => warn!(index = %name, error = %e, "index build failed; queries scan instead until a restart builds it"),
                }
                break;
            }
            index.progress.running.store(false, Ordering::SeqCst);
            // Asked for again meanwhile, and nobody else took it on: build again.
            if !index.progress.again.load(Ordering::SeqCst) || index.progress.running.swap(true, Ordering::SeqCst) {
                break;
            }
        });
        match spawned {
            Ok(handle) => self.inner.workers.lock().push(handle),
            Err(e) => warn!(error = %e, "cannot start an index build thread"),
        }
    }

    /// Starts the builds of every index that is not built (at start-up).
    pub(super) fn start_pending_index_builds(&self) {
        for store in self.all_stores() {
            for index in store.indexes().iter().filter(|i| !i.is_built()) {
                self.start_index_build(&store, index.clone());
            }
        }
    }

    /// Writes an index's memtable to an SSTable on its own (a build's progress).
    fn flush_index(&self, index: &SecondaryIndex) -> Result<()> {
        let _flushing = index.store.flush_lock.lock();
        {
            let _switch = self.inner.switch_lock.write();
            if index.store.active_memtable().is_empty() {
                return Ok(());
            }
            self.switch_memtable(&index.store, self.inner.commitlog.current_position());
        }
        self.write_switched(&index.store)?;
        self.request_compaction(&index.store);
        Ok(())
    }

    /// Applies index rows (a build's, or a stale entry's tombstone) to the index's memtable.
    fn apply_to_index(&self, index: &SecondaryIndex, rows: impl IntoIterator<Item = (DecoratedKey, Row)>) {
        let _switch = self.inner.switch_lock.read();
        let memtable = index.store.active_memtable();
        for (key, row) in rows {
            memtable.apply(&index.store.cmp, &key, row);
        }
    }

    /// Every index of every column family (of `keyspace`, if given), by keyspace, column family
    /// and index name.
    pub fn index_status(&self, keyspace: Option<&str>) -> Vec<IndexStatus> {
        let mut out = Vec::new();
        for store in self.all_stores().iter().filter(|s| keyspace.is_none_or(|k| k == s.keyspace)) {
            for index in store.indexes().iter() {
                out.push(IndexStatus {
                    keyspace: store.keyspace.clone(),
                    cf: store.name.clone(),
                    index: index.name.clone(),
                    column: index.column.clone(),
                    built: index.is_built(),
                    building: index.progress.running.load(Ordering::SeqCst),
                    rows_done: index.progress.done.load(Ordering::Relaxed),
                    rows_total: index.progress.total.load(Ordering::Relaxed),
                });
            }
        }
        out.sort_by(|a, b| (&a.keyspace, &a.cf, &a.index).cmp(&(&b.keyspace, &b.cf, &b.index)));
        out
    }

    /// What a replica answers for an index query (get_indexed_slices, or get_range_slices with a
    /// row filter): the partitions between `start` and `end` (non-wrapping) whose data here
    /// satisfies every expression, in key order, at most `max_rows`. Each comes sliced by
    /// `filter` with its tombstones ([`crate::filter::slice_row`]), plus the expressions'
    /// columns, so that a coordinator can reconcile several replicas' answers and check the
    /// expressions again on the result.
    ///
    /// The rows are found through the index of an EQ expression's column when one is built;
    /// otherwise (no such index, or it is still building) by reading the whole range, which is
    /// complete but slower. Entries found stale on the way are deleted.
    #[expect(
        clippy::too_many_arguments,
        reason = "the range read's parameters plus the row filter, as scan_slices takes them"
    )]
    pub fn search(
        &self,
        keyspace: &str,
        cf: &str,
        start: &KeyBound,
        end: &KeyBound,
        expressions: &[IndexExpression],
        filter: &ReadFilter,
        max_rows: usize,
    ) -> Result<Vec<(DecoratedKey, Row)>> {
        let store = self.store(keyspace, cf)?;
        let query = Query::new(store.metadata(), expressions, filter);
        if max_rows == 0 {
            return Ok(Vec::new());
        }
        match choose_index(&store, expressions) {
            Some((index, value)) => self.search_index(&store, &index, value, start, end, &query, max_rows),
            None => search_scan(&store, start, end, &query, max_rows),
        }
    }

    /// [`Storage::search`] through `index`, for the rows whose indexed column holds `value`.
    #[expect(clippy::too_many_arguments, reason = "search's parameters, resolved")]
    fn search_index(
        &self,
        store: &ColumnFamilyStore,
        index: &SecondaryIndex,
        value: &[u8],
        start: &KeyBound,
        end: &KeyBound,
        query: &Query<'_>,
        max_rows: usize,
    ) -> Result<Vec<(DecoratedKey, Row)>> {
        let mut out = Vec::new();
        let value_key = index.value_key(value);
        let (mut from, high) = index::entry_bounds(start, end);
        // Entries are read a page at a time: an index row may hold millions.
        let page_size = max_rows.saturating_add(1).clamp(64, 4096);
        let mut last: Option<Vec<u8>> = None;
        loop {
            let page = ReadFilter::slice(from.clone(), high.clone(), false, page_size, CountUnit::Cells);
            let index_row = index.store.read_row(&value_key, &page)?;
            let entries = collect_live(&index.store.cmp, &index_row, &page, query.now);
            let mut stale: Vec<(DecoratedKey, Row)> = Vec::new();
            for entry in &entries {
                if last.as_deref() == Some(entry.name.as_slice()) {
                    continue; // where the previous page ended
                }
                let Some(key) = index::decode_entry_name(&entry.name) else {
                    warn!(index = %index.name, "skipping an index entry whose name is not a row key");
                    continue;
                };
                if !start.admits_from_below(&key) {
                    continue;
                }
                if !end.admits_from_above(&key) {
                    self.apply_to_index(index, stale);
                    return Ok(out);
                }
                let row = store.read_row(&key, &query.lookup)?;
                if live_cell(&query.meta, &row, &index.column, query.now).is_none_or(|c| c.value != value) {
                    stale.push((value_key.clone(), index::stale_entry_tombstone(entry, query.now)));
                    continue;
                }
                if let Some(answer) = query.answer(&row) {
                    out.push((key, answer));
                    if out.len() >= max_rows {
                        self.apply_to_index(index, stale);
                        return Ok(out);
                    }
                }
            }
            self.apply_to_index(index, stale);
            match entries.last() {
                Some(e) if entries.len() >= page_size => {
                    from = e.name.clone();
                    last = Some(e.name.clone());
                }
                _ => return Ok(out),
            }
        }
    }
}

/// [`Storage::search`] without an index: every partition of the range, checked.
fn search_scan(
    store: &ColumnFamilyStore,
    start: &KeyBound,
    end: &KeyBound,
    query: &Query<'_>,
    max_rows: usize,
) -> Result<Vec<(DecoratedKey, Row)>> {
    let mut out = Vec::new();
    for item in store.scan(start)? {
        let (key, row) = item?;
        if !start.admits_from_below(&key) {
            continue;
        }
        if !end.admits_from_above(&key) {
            break;
        }
        if let Some(answer) = query.answer(&row) {
            out.push((key, answer));
            if out.len() >= max_rows {
                break;
            }
        }
    }
    Ok(out)
}

/// One index query's parts, worked out once.
struct Query<'a> {
    meta: Arc<CfMetadata>,
    expressions: &'a [IndexExpression],
    filter: &'a ReadFilter,
    /// The expressions' columns, which every answer carries besides what `filter` selects.
    columns: ReadFilter,
    /// What a base row read must fetch: `filter`'s ranges and the expressions' columns (used
    /// only to choose the SSTable blocks to read).
    lookup: ReadFilter,
    now: i32,
}

impl<'a> Query<'a> {
    fn new(meta: Arc<CfMetadata>, expressions: &'a [IndexExpression], filter: &'a ReadFilter) -> Query<'a> {
        let names = expressions.iter().map(|e| e.column.clone()).collect();
        let columns = ReadFilter::names(&meta.cmp, names, CountUnit::Cells);
        let lookup = if filter.is_all() {
            ReadFilter::all()
        } else {
            let mut ranges = filter.ranges.clone();
            ranges.extend(columns.ranges.iter().cloned());
            ReadFilter { ranges, reversed: false, count: usize::MAX, count_unit: CountUnit::Cells }
        };
        Query { meta, expressions, filter, columns, lookup, now: now_seconds() }
    }

    /// The answer for a merged base row, if it satisfies every expression.
    fn answer(&self, row: &Row) -> Option<Row> {
        if !satisfies_all(&self.meta, row, self.expressions, self.now) {
            return None;
        }
        let sliced = slice_row(&self.meta.cmp, row, self.filter, self.now);
        if self.filter.is_all() {
            return Some(sliced);
        }
        let columns = slice_row(&self.meta.cmp, row, &self.columns, self.now);
        Some(merge_rows(&self.meta.cmp, vec![sliced, columns]))
    }
}

/// The index to answer through, and the value to look up: of the EQ expressions on a built
/// index, the one whose index rows are smallest on average (Cassandra picks the most selective
/// index the same way).
fn choose_index<'e>(
    store: &ColumnFamilyStore,
    expressions: &'e [IndexExpression],
) -> Option<(Arc<SecondaryIndex>, &'e [u8])> {
    let indexes = store.indexes();
    expressions
        .iter()
        .filter(|e| e.op == IndexOperator::Eq && e.value.len() <= index::MAX_INDEXED_VALUE)
        .filter_map(|e| {
            indexes.iter().find(|i| i.column == e.column && i.is_built()).map(|i| (i.clone(), e.value.as_slice()))
        })
        .min_by_key(|(i, _)| mean_entries_per_value(i))
}

/// About how many entries an index row holds, from its SSTables' statistics.
fn mean_entries_per_value(index: &SecondaryIndex) -> u64 {
    let (cells, keys) = index
        .store
        .sstables()
        .iter()
        .fold((0u64, 0u64), |(c, k), s| (c + s.metadata().cell_count, k + s.metadata().key_count));
    cells.checked_div(keys).unwrap_or(0)
}

/// See [`Storage::sync_indexes`].
pub(super) fn sync_indexes(
    store: &Arc<ColumnFamilyStore>,
    def: &CfDef,
    partitioner: crate::dht::Partitioner,
    cache: &Arc<crate::block_cache::BlockCache>,
) -> Result<Vec<Arc<SecondaryIndex>>> {
    let declared = index::declared(def);
    let current = store.indexes();
    let mut kept = Vec::with_capacity(declared.len());
    let mut to_build = Vec::new();
    for (name, column) in &declared {
        match current.iter().find(|i| i.name == *name && i.column == *column) {
            Some(open) => kept.push(open.clone()),
            None => {
                let opened = Arc::new(SecondaryIndex::open(&store.dir, def, name, column, partitioner, cache)?);
                if !opened.is_built() {
                    to_build.push(opened.clone());
                }
                kept.push(opened);
            }
        }
    }
    let dropped: Vec<Arc<SecondaryIndex>> =
        current.iter().filter(|i| !kept.iter().any(|k| Arc::ptr_eq(k, i))).cloned().collect();
    store.set_indexes(kept);
    for index in dropped {
        index.mark_dropped();
        // A flush writing into its directory finishes first.
        let _flushing = index.store.flush_lock.lock();
        info!(keyspace = %store.keyspace, cf = %store.name, index = %index.name, "dropped index");
        index.remove_files();
    }
    index::remove_stray_dirs(&store.dir, &declared)?;
    Ok(to_build)
}

/// Builds `index` from `base`'s data: every partition's indexed cell, as the write path would
/// have indexed it, then a flush and the marker. True when done; false when the engine shut
/// down or the index was dropped first (it stays unbuilt, and a restart builds it again).
fn build_index(weak: &Weak<Inner>, base: &Arc<ColumnFamilyStore>, index: &Arc<SecondaryIndex>) -> Result<bool> {
    let estimate: u64 = base.sstables().iter().map(|s| s.metadata().key_count).sum::<u64>()
        + base.active_memtable().partitions() as u64;
    index.progress.done.store(0, Ordering::Relaxed);
    index.progress.total.store(estimate, Ordering::Relaxed);
    let mut batch: Vec<(DecoratedKey, Row)> = Vec::with_capacity(BUILD_BATCH);
    let mut done = 0u64;
    // Hands the batch to the index memtable; None when the build must stop.
    let deliver = |batch: &mut Vec<(DecoratedKey, Row)>, last: bool| -> Result<Option<()>> {
        let Some(inner) = weak.upgrade() else { return Ok(None) };
        let storage = Storage { inner };
        if storage.is_shutting_down() || index.is_dropped() {
            return Ok(None);
        }
        storage.apply_to_index(index, batch.drain(..));
        if last || index.store.active_memtable().size() >= storage.inner.config.memtable_flush_bytes {
            storage.flush_index(index)?;
        }
        Ok(Some(()))
    };
    let mut now = now_seconds();
    for item in base.scan(&KeyBound::Unbounded)? {
        let (key, row) = item?;
        if let Some(entry) = index.entry_for(&base.cmp, &key, &row, now) {
            batch.push(entry);
        }
        done += 1;
        if batch.len() >= BUILD_BATCH || done.is_multiple_of(1024) {
            if deliver(&mut batch, false)?.is_none() {
                return Ok(false);
            }
            index.progress.done.store(done, Ordering::Relaxed);
            index.progress.total.fetch_max(done, Ordering::Relaxed);
            now = now_seconds();
        }
    }
    if deliver(&mut batch, true)?.is_none() {
        return Ok(false);
    }
    index.progress.done.store(done, Ordering::Relaxed);
    index.progress.total.store(done, Ordering::Relaxed);
    if index.is_dropped() {
        return Ok(false);
    }
    // Data came that this build may have missed: the next build marks the index built.
    if !index.progress.again.load(Ordering::SeqCst) {
        index.mark_built()?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Cell;
    use crate::dht::Partitioner;
    use crate::engine::StorageConfig;
    use crate::mutation::RowMutation;
    use crate::schema::{ColumnDef, IndexType, KeyspaceDef};

    /// The cells of index row `value` of `ks.users`' index, tombstones included.
    fn entry_cells(storage: &Storage, value: &[u8]) -> Vec<Cell> {
        let Ok(store) = storage.store("ks", "users") else { return Vec::new() };
        let indexes = store.indexes();
        let Some(index) = indexes.first() else { return Vec::new() };
        index.store.read_row(&index.value_key(value), &ReadFilter::all()).map(|r| r.cells).unwrap_or_default()
    }

    #[test]
    fn a_search_deletes_the_stale_entries_it_meets() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| crate::error::StorageError::io("tempdir", e))?;
        let mut config = StorageConfig::new(dir.path().join("data"), dir.path().join("commitlog"));
        config.partitioner = Partitioner::Murmur3;
        let mut cf = CfDef::new("ks", "users");
        cf.column_metadata.push(ColumnDef {
            name: b"name".to_vec(),
            validation_class: "BytesType".into(),
            index_type: Some(IndexType::Keys),
            index_name: None,
            index_options: Default::default(),
        });
        let mut ks = KeyspaceDef::new("ks");
        ks.cf_defs.push(cf);
        config.initial_keyspaces = vec![ks];
        let s = Storage::open(config)?;
        for (value, ts) in [("old", 1), ("new", 2)] {
            let mut m = RowMutation::new("ks", b"k".to_vec());
            m.row_mut("users").cells.push(Cell::live("name", value, ts));
            s.apply(m)?;
        }
        let live = |cells: &[Cell]| cells.iter().filter(|c| c.is_live(now_seconds())).count();
        assert_eq!(live(&entry_cells(&s, b"old")), 1, "the overwrite leaves the old entry");
        let found = s.search(
            "ks",
            "users",
            &KeyBound::Unbounded,
            &KeyBound::Unbounded,
            &[IndexExpression::new("name", IndexOperator::Eq, "old")],
            &ReadFilter::all(),
            10,
        )?;
        assert!(found.is_empty());
        let cells = entry_cells(&s, b"old");
        assert_eq!(live(&cells), 0, "the stale entry is still live: {cells:?}");
        assert_eq!(cells.len(), 1, "its tombstone is kept");
        assert_eq!(live(&entry_cells(&s, b"new")), 1);
        s.shutdown()
    }
}
