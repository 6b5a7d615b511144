//! The in-memory, sorted write buffer of one column family.
//!
//! Partitions live in 256 B-trees, one per value of the token's first byte, each behind its own
//! mutex. Shard order is key order, so a scan walks the shards in turn. Each tree is keyed by
//! the token's first eight bytes as an integer, and holds the partitions sharing them: almost
//! always one, more under the order-preserving partitioners, where keys may share a prefix.
//!
//! Why not one concurrent skip list: at a few hundred thousand partitions, a skip-list insert
//! follows some twenty pointers to cold cache lines, and it was the largest single cost of a
//! write in the server (13% of its CPU under `bench/redis-vs-sibyl.sh`). Eleven integer keys fill
//! two cache lines of a B-tree node and the buckets are boxed, so nodes stay small and a lookup
//! touches few lines (with whole decorated keys and rows in the nodes it was still 9-11%; now
//! 5%). With the token spreading keys over the shards (random and Murmur3 partitioners) writers
//! rarely meet on a lock, and each lock is held only for one merge.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::comparator::CellComparator;
use crate::data::{Cell, Row};
use crate::dht::DecoratedKey;
use crate::filter::add_to_row;

const SHARDS: usize = 256;

/// The partitions whose tokens start with the same eight bytes (boxed in the tree).
enum Bucket {
    One(DecoratedKey, Row),
    Many(BTreeMap<DecoratedKey, Row>),
}

type Shard = BTreeMap<u64, Box<Bucket>>;

/// Whether `a` and `b`, found under the same token prefix of one memtable, are the same
/// partition. Only the key bytes are compared: a memtable's keys are all decorated by one
/// partitioner, so equal keys have equal tokens, and the stored token would be one more cache
/// miss on every point read (2% of a memtable read's CPU in bench/redis-vs-sibyl.sh).
fn same_partition(a: &DecoratedKey, b: &DecoratedKey) -> bool {
    a.key == b.key
}

impl Bucket {
    fn get(&self, key: &DecoratedKey) -> Option<&Row> {
        match self {
            Bucket::One(k, row) => same_partition(k, key).then_some(row),
            Bucket::Many(rows) => rows.get(key),
        }
    }

    /// Its first partition within `from`, if any.
    fn first_from(&self, from: &Bound<DecoratedKey>) -> Option<(&DecoratedKey, &Row)> {
        match self {
            Bucket::One(k, row) => {
                let inside = match from {
                    Bound::Included(f) => k >= f,
                    Bound::Excluded(f) => k > f,
                    Bound::Unbounded => true,
                };
                inside.then_some((k, row))
            }
            Bucket::Many(rows) => rows.range::<DecoratedKey, _>((from.as_ref(), Bound::Unbounded)).next(),
        }
    }
}

/// The first partition of `shard` within `from`.
fn first_in(shard: &Shard, from: &Bound<DecoratedKey>) -> Option<(DecoratedKey, Row)> {
    let start = match from {
        Bound::Included(k) | Bound::Excluded(k) => k.token_prefix(),
        Bound::Unbounded => 0,
    };
    // Only the bucket of `from`'s own prefix can hold partitions before it.
    shard.range(start..).find_map(|(_, bucket)| bucket.first_from(from)).map(|(k, r)| (k.clone(), r.clone()))
}

pub struct Memtable {
    shards: Box<[Mutex<Shard>]>,
    partitions: AtomicUsize,
    /// Approximate bytes held, for the flush threshold.
    size: AtomicUsize,
    /// Columns written, as Cassandra counts for `MemtableOperationsInMillions`: each cell of an
    /// update, or one for an update that only deletes.
    operations: AtomicUsize,
    /// Smallest cell timestamp written (for compaction's purge decisions).
    min_timestamp: AtomicI64,
    /// For `MemtableFlushAfterMinutes`, counted from creation as Cassandra does.
    created: Instant,
}

impl Default for Memtable {
    fn default() -> Self {
        Memtable::new()
    }
}

fn shard_of(key: &DecoratedKey) -> usize {
    (key.token_prefix() >> 56) as usize
}

impl Memtable {
    pub fn new() -> Memtable {
        Memtable {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::new())).collect(),
            partitions: AtomicUsize::new(0),
            size: AtomicUsize::new(0),
            operations: AtomicUsize::new(0),
            min_timestamp: AtomicI64::new(i64::MAX),
            created: Instant::now(),
        }
    }

    /// Merges `update` into the partition `key`.
    pub fn apply(&self, cmp: &CellComparator, key: &DecoratedKey, update: Row) {
        let added = update.size() + key.key.len() + key.token.0.len();
        let columns = update.cells.len().max(1);
        if let Some(ts) = update.cells.iter().map(|c| c.timestamp).min() {
            self.min_timestamp.fetch_min(ts, Ordering::Relaxed);
        }
        let new_row = |update| {
            let mut row = Row::new();
            add_to_row(cmp, &mut row, update);
            row
        };
        let created = {
            let mut shard = self.shards[shard_of(key)].lock();
            match shard.entry(key.token_prefix()) {
                Entry::Vacant(slot) => {
                    slot.insert(Box::new(Bucket::One(key.clone(), new_row(update))));
                    true
                }
                Entry::Occupied(mut slot) => match &mut **slot.get_mut() {
                    Bucket::One(k, row) if same_partition(k, key) => {
                        add_to_row(cmp, row, update);
                        false
                    }
                    bucket @ Bucket::One(..) => {
                        let Bucket::One(k, row) = std::mem::replace(bucket, Bucket::Many(BTreeMap::new())) else {
                            unreachable!("matched as One above")
                        };
                        let rows = BTreeMap::from([(k, row), (key.clone(), new_row(update))]);
                        *bucket = Bucket::Many(rows);
                        true
                    }
                    Bucket::Many(rows) => match rows.get_mut(key) {
                        Some(row) => {
                            add_to_row(cmp, row, update);
                            false
                        }
                        None => {
                            rows.insert(key.clone(), new_row(update));
                            true
                        }
                    },
                },
            }
        };
        if created {
            self.partitions.fetch_add(1, Ordering::Relaxed);
        }
        self.size.fetch_add(added, Ordering::Relaxed);
        self.operations.fetch_add(columns, Ordering::Relaxed);
    }

    /// What `f` makes of partition `key`, read in place (under its shard's lock, so `f` should
    /// be short); `None` when the partition is absent. Every point lookup goes through here.
    pub fn with_row<R>(&self, key: &DecoratedKey, f: impl FnOnce(&Row) -> R) -> Option<R> {
        let shard = self.shards[shard_of(key)].lock();
        shard.get(&key.token_prefix()).and_then(|b| b.get(key)).map(f)
    }

    /// A copy of the partition `key`, if this memtable has it.
    pub fn get(&self, key: &DecoratedKey) -> Option<Row> {
        self.with_row(key, Row::clone)
    }

    /// A copy of the partition `key` holding only the cells `keep` accepts (its deletion and
    /// range tombstones whole): a read of a few columns of a wide row copies only those.
    pub fn get_cells(&self, key: &DecoratedKey, keep: impl Fn(&Cell) -> bool) -> Option<Row> {
        self.with_row(key, |row| Row {
            deletion: row.deletion,
            range_tombstones: row.range_tombstones.clone(),
            cells: row.cells.iter().filter(|c| keep(c)).cloned().collect(),
        })
    }

    pub fn contains(&self, key: &DecoratedKey) -> bool {
        self.with_row(key, |_| ()).is_some()
    }

    /// Partitions from `start` on, in key order, copied one at a time.
    pub fn range(&self, start: Bound<DecoratedKey>) -> impl Iterator<Item = (DecoratedKey, Row)> + '_ {
        let mut from = start;
        std::iter::from_fn(move || {
            let (key, row) = self.next_after(&from)?;
            from = Bound::Excluded(key.clone());
            Some((key, row))
        })
    }

    /// The first partition after `from`, copied.
    pub fn next_after(&self, from: &Bound<DecoratedKey>) -> Option<(DecoratedKey, Row)> {
        let first = match from {
            Bound::Included(k) | Bound::Excluded(k) => shard_of(k),
            Bound::Unbounded => 0,
        };
        if let Some(found) = first_in(&self.shards[first].lock(), from) {
            return Some(found);
        }
        self.shards[first + 1..].iter().find_map(|shard| first_in(&shard.lock(), &Bound::Unbounded))
    }

    pub fn size(&self) -> usize {
        self.size.load(Ordering::Relaxed)
    }

    pub fn operations(&self) -> usize {
        self.operations.load(Ordering::Relaxed)
    }

    pub fn partitions(&self) -> usize {
        self.partitions.load(Ordering::Relaxed)
    }

    /// How long ago this memtable was made.
    pub fn age(&self) -> Duration {
        self.created.elapsed()
    }

    pub fn is_empty(&self) -> bool {
        self.partitions() == 0
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

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;
    use crate::data::Cell;
    use crate::dht::Token;

    fn key(token: &[u8], k: &str) -> DecoratedKey {
        DecoratedKey::new(Token(token.to_vec()), k.as_bytes().to_vec())
    }

    fn row(name: &str, ts: i64) -> Row {
        let mut r = Row::new();
        r.cells.push(Cell::live(name.as_bytes().to_vec(), b"v".to_vec(), ts));
        r
    }

    #[test]
    fn scans_in_key_order_across_shards() {
        let m = Memtable::new();
        let cmp = CellComparator::standard(crate::marshal::AbstractType::Bytes);
        // Keys sharing a token prefix (as the order-preserving partitioners give) share a bucket.
        let keys = [
            key(&[0xff, 1], "z"),
            key(&[], "empty"),
            key(&[0x00, 9], "a"),
            key(&[0x7f], "m"),
            key(&[0x7f], "n"),
            key(&[0x7f], "l"),
            key(&[0x7f, 0, 0, 0, 0, 0, 0, 0, 5], "x"),
        ];
        for k in &keys {
            m.apply(&cmp, k, row("c", 1));
        }
        m.apply(&cmp, &keys[3], row("d", 2));
        assert_eq!(m.partitions(), 7);
        assert!(keys.iter().all(|k| m.contains(k)) && !m.contains(&key(&[0x7f], "o")));
        assert_eq!(m.get(&keys[3]).unwrap().cells.len(), 2);
        let mut sorted = keys.to_vec();
        sorted.sort();
        let all: Vec<_> = m.range(Bound::Unbounded).map(|(k, _)| k).collect();
        assert_eq!(all, sorted);
        let after: Vec<_> =
            MemtableScan::new(Arc::new(m), Bound::Excluded(key(&[0x7f], "m"))).map(|(k, _)| k).collect();
        assert_eq!(after, vec![key(&[0x7f], "n"), key(&[0x7f, 0, 0, 0, 0, 0, 0, 0, 5], "x"), key(&[0xff, 1], "z")]);
        let m = Memtable::new();
        for k in &keys {
            m.apply(&cmp, k, row("c", 1));
        }
        let from_included: Vec<_> = m.range(Bound::Included(key(&[0x7f], "m"))).map(|(k, _)| k).collect();
        assert_eq!(from_included.len(), 4, "{from_included:?}");
    }

    #[test]
    fn merges_updates_into_one_partition() {
        let m = Memtable::new();
        let cmp = CellComparator::standard(crate::marshal::AbstractType::Bytes);
        let k = key(&[0x10], "k");
        m.apply(&cmp, &k, row("a", 1));
        m.apply(&cmp, &k, row("b", 1));
        m.apply(&cmp, &k, row("a", 2));
        let r = m.get(&k).unwrap();
        assert_eq!(r.cells.len(), 2);
        assert_eq!(r.cells[0].timestamp, 2);
        assert!(m.contains(&k) && !m.contains(&key(&[0x10], "j")));
        assert_eq!(m.partitions(), 1);
    }

    #[test]
    fn a_filtered_copy_keeps_the_wanted_cells_and_every_tombstone() {
        let m = Memtable::new();
        let cmp = CellComparator::standard(crate::marshal::AbstractType::Bytes);
        let k = key(&[0x20], "wide");
        let mut wide = Row::new();
        wide.deletion = crate::data::DeletionTime { marked_at: 5, local_deletion_time: 7 };
        for i in 0..1000 {
            wide.cells.push(Cell::live(format!("c{i:04}").into_bytes(), b"v".to_vec(), 10));
        }
        m.apply(&cmp, &k, wide);
        let names = vec![b"c0007".to_vec(), b"c0500".to_vec(), b"nope".to_vec()];
        let filter = crate::filter::ReadFilter::names(&cmp, names, crate::filter::CountUnit::Cells);
        let part = m.get_cells(&k, |c| filter.may_intersect(&cmp, &c.name, &c.name)).unwrap();
        let names: Vec<&[u8]> = part.cells.iter().map(|c| c.name.as_slice()).collect();
        assert_eq!(names, vec![b"c0007".as_slice(), b"c0500".as_slice()]);
        assert_eq!(part.deletion, m.get(&k).unwrap().deletion);
        assert!(m.get_cells(&key(&[0x20], "other"), |_| true).is_none());
    }
}
