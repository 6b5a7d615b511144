//! The in-memory, sorted write buffer of one column family.
//!
//! Partitions live in a lock-free skip list ordered by decorated key, so concurrent writers to
//! different rows never wait on each other; each partition has its own mutex for the merge of
//! an update into it.

use std::ops::Bound;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;

use crossbeam_skiplist::SkipMap;
use parking_lot::Mutex;

use crate::comparator::CellComparator;
use crate::data::Row;
use crate::dht::DecoratedKey;
use crate::filter::add_to_row;

pub struct Memtable {
    rows: SkipMap<DecoratedKey, Mutex<Row>>,
    /// Approximate bytes held, for the flush threshold.
    size: AtomicUsize,
    operations: AtomicUsize,
    /// Smallest cell timestamp written (for compaction's purge decisions).
    min_timestamp: AtomicI64,
}

impl Default for Memtable {
    fn default() -> Self {
        Memtable::new()
    }
}

impl Memtable {
    pub fn new() -> Memtable {
        Memtable {
            rows: SkipMap::new(),
            size: AtomicUsize::new(0),
            operations: AtomicUsize::new(0),
            min_timestamp: AtomicI64::new(i64::MAX),
        }
    }

    /// Merges `update` into the partition `key`.
    pub fn apply(&self, cmp: &CellComparator, key: &DecoratedKey, update: Row) {
        let added = update.size() + key.key.len() + key.token.0.len();
        if let Some(ts) = update.cells.iter().map(|c| c.timestamp).min() {
            self.min_timestamp.fetch_min(ts, Ordering::Relaxed);
        }
        let entry = self.rows.get_or_insert_with(key.clone(), || Mutex::new(Row::new()));
        add_to_row(cmp, &mut entry.value().lock(), update);
        self.size.fetch_add(added, Ordering::Relaxed);
        self.operations.fetch_add(1, Ordering::Relaxed);
    }

    /// A copy of the partition `key`, if this memtable has it.
    pub fn get(&self, key: &DecoratedKey) -> Option<Row> {
        self.rows.get(key).map(|e| e.value().lock().clone())
    }

    pub fn contains(&self, key: &DecoratedKey) -> bool {
        self.rows.contains_key(key)
    }

    /// Partitions from `start` on, in key order, copied one at a time.
    pub fn range(&self, start: Bound<DecoratedKey>) -> impl Iterator<Item = (DecoratedKey, Row)> + '_ {
        self.rows.range((start, Bound::Unbounded)).map(|e| (e.key().clone(), e.value().lock().clone()))
    }

    /// The first partition after `from`, copied.
    pub fn next_after(&self, from: &Bound<DecoratedKey>) -> Option<(DecoratedKey, Row)> {
        let bounds = (from.as_ref(), Bound::Unbounded);
        self.rows.range::<DecoratedKey, _>(bounds).next().map(|e| (e.key().clone(), e.value().lock().clone()))
    }

    pub fn size(&self) -> usize {
        self.size.load(Ordering::Relaxed)
    }

    pub fn operations(&self) -> usize {
        self.operations.load(Ordering::Relaxed)
    }

    pub fn partitions(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn min_timestamp(&self) -> i64 {
        self.min_timestamp.load(Ordering::Relaxed)
    }
}

/// Partitions of a memtable in key order, copied one at a time as the caller asks for them; it
/// holds the memtable, so it lives as long as a scan needs.
pub struct MemtableScan {
    memtable: Arc<Memtable>,
    from: Bound<DecoratedKey>,
}

impl MemtableScan {
    pub fn new(memtable: Arc<Memtable>, start: Bound<DecoratedKey>) -> MemtableScan {
        MemtableScan { memtable, from: start }
    }
}

impl Iterator for MemtableScan {
    type Item = (DecoratedKey, Row);

    fn next(&mut self) -> Option<Self::Item> {
        let (key, row) = self.memtable.next_after(&self.from)?;
        self.from = Bound::Excluded(key.clone());
        Some((key, row))
    }
}
