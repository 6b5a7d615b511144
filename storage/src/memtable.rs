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
//! two cache lines of a B-tree node, so nodes stay small and a lookup touches few lines. A
//! partition of a few small cells is kept packed in one buffer ([`packed`]), which the tree
//! points to directly, so a point read follows one pointer past the tree. With the token
//! spreading keys over the shards (random and Murmur3 partitioners) writers rarely meet on a
//! lock, and each lock is held only for one merge.

mod packed;

use std::borrow::Cow;
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::comparator::CellComparator;
use crate::data::{Cell, DeletionTime, Row};
use crate::dht::DecoratedKey;
use crate::filter::{add_to_row, collect_live, ReadFilter};
use packed::Packed;

const SHARDS: usize = 256;

/// Partitions [`Memtable::range`] copies per hold of a shard's lock.
const RANGE_CHUNK: usize = 64;

/// The partitions whose tokens start with the same eight bytes: two words in the tree.
enum Bucket {
    /// One partition, small enough to pack: nearly all of them.
    Packed(Packed),
    Rows(Box<Rows>),
}

/// Partitions kept as rows.
enum Rows {
    /// One partition too large to pack, or with range tombstones.
    One(DecoratedKey, Row),
    /// Several partitions under one token prefix.
    Many(BTreeMap<DecoratedKey, Row>),
}

type Shard = BTreeMap<u64, Bucket>;

/// Whether the partition whose key bytes are `a` and key `b`, found under the same token prefix
/// of one memtable, are the same partition. Only the key bytes are compared: a memtable's keys
/// are all decorated by one partitioner, so equal keys have equal tokens, and the stored token
/// would be one more cache miss on every point read (2% of a memtable read's CPU in
/// bench/redis-vs-sibyl.sh).
fn same_partition(a: &[u8], b: &DecoratedKey) -> bool {
    a == b.key.as_slice()
}

/// A partition as the memtable holds it.
enum Stored<'a> {
    Packed(&'a Packed),
    Row(&'a Row),
}

impl Stored<'_> {
    /// The row: borrowed in place, or unpacked into a copy.
    fn row(&self) -> Cow<'_, Row> {
        match self {
            Stored::Packed(p) => Cow::Owned(p.row()),
            Stored::Row(row) => Cow::Borrowed(row),
        }
    }
}

impl Bucket {
    /// Partition `key` holding `row`, packed if it can be.
    fn of(key: &DecoratedKey, row: Row) -> Bucket {
        match Packed::new(key, &row) {
            Some(p) => Bucket::Packed(p),
            None => Bucket::Rows(Box::new(Rows::One(key.clone(), row))),
        }
    }

    fn get(&self, key: &DecoratedKey) -> Option<Stored<'_>> {
        match self {
            Bucket::Packed(p) => {
                p.prefetch();
                same_partition(p.key(), key).then_some(Stored::Packed(p))
            }
            Bucket::Rows(rows) => match &**rows {
                Rows::One(k, row) => same_partition(&k.key, key).then_some(Stored::Row(row)),
                Rows::Many(rows) => rows.get(key).map(Stored::Row),
            },
        }
    }

    /// Its partitions within `from`, in key order, each copied and handed to `take` until `take`
    /// answers false; false if it did.
    fn copy_from(&self, from: &Bound<DecoratedKey>, take: &mut impl FnMut((DecoratedKey, Row)) -> bool) -> bool {
        let inside = |k: &DecoratedKey| match from {
            Bound::Included(f) => k >= f,
            Bound::Excluded(f) => k > f,
            Bound::Unbounded => true,
        };
        match self {
            Bucket::Packed(p) => {
                let k = p.decorated_key();
                !inside(&k) || take((k, p.row()))
            }
            Bucket::Rows(rows) => match &**rows {
                Rows::One(k, row) => !inside(k) || take((k.clone(), row.clone())),
                Rows::Many(rows) => rows
                    .range::<DecoratedKey, _>((from.as_ref(), Bound::Unbounded))
                    .all(|(k, r)| take((k.clone(), r.clone()))),
            },
        }
    }

    /// Merges `update` into partition `key`; true if that partition is new here.
    fn apply(&mut self, cmp: &CellComparator, key: &DecoratedKey, update: Row) -> bool {
        if let Bucket::Packed(p) = self {
            p.prefetch(); // the stored cells are compared with the update's below
        }
        match self {
            Bucket::Packed(p) if same_partition(p.key(), key) => {
                let row = if p.superseded_by(&update) {
                    // What `new_row` would make of it, without its merge: an update that
                    // supersedes has a live deletion (which `new_row` makes `LIVE`), no range
                    // tombstones, and cells sorted and distinct (the stored ones' names, in order).
                    Row { deletion: DeletionTime::LIVE, ..update }
                } else {
                    let mut row = p.row();
                    add_to_row(cmp, &mut row, update);
                    row
                };
                *self = Bucket::of(key, row);
                false
            }
            Bucket::Packed(p) => {
                // A second partition under this prefix.
                let rows = BTreeMap::from([(p.decorated_key(), p.row()), (key.clone(), new_row(cmp, update))]);
                *self = Bucket::Rows(Box::new(Rows::Many(rows)));
                true
            }
            Bucket::Rows(rows) => match &mut **rows {
                Rows::One(k, row) if same_partition(&k.key, key) => {
                    add_to_row(cmp, row, update);
                    false
                }
                Rows::One(..) => {
                    let Rows::One(k, row) = std::mem::replace(&mut **rows, Rows::Many(BTreeMap::new())) else {
                        unreachable!("matched as One above")
                    };
                    **rows = Rows::Many(BTreeMap::from([(k, row), (key.clone(), new_row(cmp, update))]));
                    true
                }
                Rows::Many(rows) => match rows.get_mut(key) {
                    Some(row) => {
                        add_to_row(cmp, row, update);
                        false
                    }
                    None => {
                        rows.insert(key.clone(), new_row(cmp, update));
                        true
                    }
                },
            },
        }
    }
}

/// A partition's row made of its first update.
fn new_row(cmp: &CellComparator, update: Row) -> Row {
    let mut row = Row::new();
    add_to_row(cmp, &mut row, update);
    row
}

/// The partitions of `shard` within `from`, in key order, each copied and handed to `take`
/// until `take` answers false.
fn copy_in(shard: &Shard, from: &Bound<DecoratedKey>, mut take: impl FnMut((DecoratedKey, Row)) -> bool) {
    let start = match from {
        Bound::Included(k) | Bound::Excluded(k) => k.token_prefix(),
        Bound::Unbounded => 0,
    };
    // Only the bucket of `from`'s own prefix can hold partitions before it.
    for (_, bucket) in shard.range(start..) {
        if !bucket.copy_from(from, &mut take) {
            break;
        }
    }
}

/// The first partition of `shard` within `from`, copied.
fn first_in(shard: &Shard, from: &Bound<DecoratedKey>) -> Option<(DecoratedKey, Row)> {
    let mut first = None;
    copy_in(shard, from, |p| {
        first = Some(p);
        false
    });
    first
}

/// The shard holding the first partitions within `from`.
fn first_shard(from: &Bound<DecoratedKey>) -> usize {
    match from {
        Bound::Included(k) | Bound::Excluded(k) => shard_of(k),
        Bound::Unbounded => 0,
    }
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
            // Timestamps mostly grow, so the minimum rarely moves: a plain load first spares
            // most writes a locked update (the minimum only falls, so skipping is safe).
            if ts < self.min_timestamp.load(Ordering::Relaxed) {
                self.min_timestamp.fetch_min(ts, Ordering::Relaxed);
            }
        }
        let created = {
            let mut shard = self.shards[shard_of(key)].lock();
            match shard.entry(key.token_prefix()) {
                Entry::Vacant(slot) => {
                    slot.insert(Bucket::of(key, new_row(cmp, update)));
                    true
                }
                Entry::Occupied(mut slot) => slot.get_mut().apply(cmp, key, update),
            }
        };
        if created {
            self.partitions.fetch_add(1, Ordering::Relaxed);
        }
        self.size.fetch_add(added, Ordering::Relaxed);
        self.operations.fetch_add(columns, Ordering::Relaxed);
    }

    /// What `f` makes of partition `key` (under its shard's lock, so `f` should be short):
    /// the row borrowed in place, or an unpacked copy that `f` may take apart. `None` when the
    /// partition is absent.
    pub fn with_row<R>(&self, key: &DecoratedKey, f: impl FnOnce(Cow<'_, Row>) -> R) -> Option<R> {
        self.with_stored(key, |stored| f(stored.row()))
    }

    /// What `f` makes of partition `key` as it is stored, under its shard's lock.
    fn with_stored<R>(&self, key: &DecoratedKey, f: impl FnOnce(Stored<'_>) -> R) -> Option<R> {
        let shard = self.shards[shard_of(key)].lock();
        shard.get(&key.token_prefix()).and_then(|b| b.get(key)).map(f)
    }

    /// The live cells of partition `key` that `filter` selects, copied out under its shard's
    /// lock; `None` when the partition is absent. A point read served by this memtable alone.
    pub fn read_live(
        &self,
        cmp: &CellComparator,
        key: &DecoratedKey,
        filter: &ReadFilter,
        now: i32,
    ) -> Option<Vec<Cell>> {
        self.with_stored(key, |stored| match stored {
            Stored::Packed(p) => p.live_cells(cmp, filter, now),
            Stored::Row(row) => collect_live(cmp, row, filter, now),
        })
    }

    /// A copy of the partition `key`, if this memtable has it.
    pub fn get(&self, key: &DecoratedKey) -> Option<Row> {
        self.with_row(key, |row| row.into_owned())
    }

    /// A copy of the partition `key` holding only the cells `keep` accepts (its deletion and
    /// range tombstones whole): a read of a few columns of a wide row copies only those.
    pub fn get_cells(&self, key: &DecoratedKey, keep: impl Fn(&Cell) -> bool) -> Option<Row> {
        self.with_row(key, |row| match row {
            Cow::Owned(mut row) => {
                row.cells.retain(keep);
                row
            }
            Cow::Borrowed(row) => Row {
                deletion: row.deletion,
                range_tombstones: row.range_tombstones.clone(),
                cells: row.cells.iter().filter(|c| keep(c)).cloned().collect(),
            },
        })
    }

    pub fn contains(&self, key: &DecoratedKey) -> bool {
        self.with_stored(key, |_| ()).is_some()
    }

    /// Partitions from `start` on, in key order, copied [`RANGE_CHUNK`] at a time: one descent
    /// of a shard's tree and one hold of its lock serve a chunk (a flush walks every partition,
    /// and a descent per partition was a third of its CPU).
    pub fn range(&self, start: Bound<DecoratedKey>) -> impl Iterator<Item = (DecoratedKey, Row)> + '_ {
        let mut shard = first_shard(&start);
        let mut from = start;
        let mut chunk = Vec::new().into_iter();
        std::iter::from_fn(move || loop {
            if let Some(next) = chunk.next() {
                return Some(next);
            }
            if shard == SHARDS {
                return None;
            }
            let mut copied = Vec::with_capacity(RANGE_CHUNK);
            copy_in(&self.shards[shard].lock(), &from, |p| {
                copied.push(p);
                copied.len() < RANGE_CHUNK
            });
            match copied.last() {
                Some((last, _)) if copied.len() == RANGE_CHUNK => from = Bound::Excluded(last.clone()),
                // Fewer than asked for: the shard has no more.
                _ => {
                    shard += 1;
                    from = Bound::Unbounded;
                }
            }
            chunk = copied.into_iter();
        })
    }

    /// The first partition after `from`, copied.
    pub fn next_after(&self, from: &Bound<DecoratedKey>) -> Option<(DecoratedKey, Row)> {
        let first = first_shard(from);
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
        DecoratedKey::new(Token::from_bytes(token), k.as_bytes().to_vec())
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

    /// A range copies partitions a chunk at a time: shards holding several chunks, a bucket of
    /// partitions sharing a token prefix cut by a chunk's end, and empty shards between them.
    #[test]
    fn a_range_in_chunks_misses_and_repeats_nothing() {
        let m = Memtable::new();
        let cmp = CellComparator::standard(crate::marshal::AbstractType::Bytes);
        let mut keys = Vec::new();
        for i in 0..3 * RANGE_CHUNK as u16 {
            // Shard 0x10 gets three chunks of distinct prefixes; shard 0x11 a run of keys under one
            // prefix, longer than a chunk; shard 0x90 one key.
            keys.push(key(&[0x10, (i >> 8) as u8, i as u8], &format!("a{i}")));
            if i < RANGE_CHUNK as u16 + 7 {
                keys.push(key(&[0x11, 5], &format!("b{i:03}")));
            }
        }
        keys.push(key(&[0x90], "c"));
        for k in &keys {
            m.apply(&cmp, k, row("c", 1));
        }
        keys.sort();
        let all: Vec<_> = m.range(Bound::Unbounded).map(|(k, _)| k).collect();
        assert_eq!(all, keys);
        for from in [RANGE_CHUNK - 1, RANGE_CHUNK, 3 * RANGE_CHUNK + 20, keys.len() - 1] {
            let included: Vec<_> = m.range(Bound::Included(keys[from].clone())).map(|(k, _)| k).collect();
            assert_eq!(included, keys[from..], "from {from} included");
            let excluded: Vec<_> = m.range(Bound::Excluded(keys[from].clone())).map(|(k, _)| k).collect();
            assert_eq!(excluded, keys[from + 1..], "from {from} excluded");
        }
    }

    proptest::proptest! {
        /// Whatever mix of small, large, deleted and range-deleted updates reaches whichever
        /// partitions, sharing token prefixes or not, the memtable reads back what merging them
        /// in plain rows gives: packing, unpacking and moving between bucket kinds lose nothing.
        #[test]
        fn reads_back_what_plain_rows_merge_to(
            writes in proptest::collection::vec((0u8..6, 0u8..30, 0usize..4, proptest::prelude::any::<bool>()), 1..60)
        ) {
            let cmp = CellComparator::standard(crate::marshal::AbstractType::Bytes);
            let m = Memtable::new();
            let mut model: BTreeMap<DecoratedKey, Row> = BTreeMap::new();
            for (i, (k, name, size, deletes)) in writes.into_iter().enumerate() {
                // Keys 0-2 share one token prefix, 3-5 have their own.
                let token = if k < 3 { vec![0x40, 1] } else { vec![0x80 + k] };
                let key = key(&token, &format!("key{k}"));
                let mut update = Row::new();
                let value = vec![b'v'; [1, 90, 300, 700][size]];
                update.cells.push(Cell::live(vec![b'a' + name % 26, name], value, i as i64));
                if deletes && name % 3 == 0 {
                    update.range_tombstones.push(crate::data::RangeTombstone {
                        start: vec![b'a'],
                        end: vec![b'c'],
                        deletion: crate::data::DeletionTime::new(i as i64 - 1, 1),
                    });
                } else if deletes {
                    update.deletion = crate::data::DeletionTime::new(i as i64 - 2, 1);
                }
                m.apply(&cmp, &key, update.clone());
                add_to_row(&cmp, model.entry(key).or_default(), update);
            }
            proptest::prop_assert_eq!(m.partitions(), model.len());
            for (k, row) in &model {
                proptest::prop_assert_eq!(m.get(k), Some(row.clone()));
                proptest::prop_assert!(m.contains(k));
            }
            let scanned: Vec<(DecoratedKey, Row)> = m.range(Bound::Unbounded).collect();
            proptest::prop_assert_eq!(scanned, model.into_iter().collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_bucket_is_two_words_in_its_tree() {
        assert_eq!(std::mem::size_of::<Bucket>(), 16);
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

    /// An overwrite of a packed partition's every cell skips the merge: it must still store
    /// what the merge gives, down to a live deletion's form.
    #[test]
    fn an_overwrite_stores_what_a_merge_would() {
        let m = Memtable::new();
        let cmp = CellComparator::standard(crate::marshal::AbstractType::Bytes);
        let k = key(&[0x30], "k");
        m.apply(&cmp, &k, row("a", 1));
        let mut update = row("a", 2);
        // Live (marked at i64::MIN), though not `DeletionTime::LIVE` itself.
        update.deletion = DeletionTime::new(i64::MIN, 5);
        let mut merged = Row::new();
        add_to_row(&cmp, &mut merged, row("a", 1));
        add_to_row(&cmp, &mut merged, update.clone());
        m.apply(&cmp, &k, update);
        assert_eq!(m.get(&k), Some(merged));
        assert_eq!(m.get(&k).map(|r| r.deletion), Some(DeletionTime::LIVE));
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
