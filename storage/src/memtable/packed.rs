//! One small memtable partition in a single allocation.
//!
//! A `Row` spreads one partition over many allocations: the key, the cell list, and each cell's
//! name and value. A point read of such a partition waited on each of them in turn, and at a
//! few hundred thousand partitions every one is a cache miss (about a fifth of a point read's
//! CPU in bench/profile-vs-redis.sh). Most partitions are a few small cells, so the memtable
//! keeps those packed: the key, token, deletion time and cells laid end to end in one buffer
//! that a read finds behind a single pointer from the tree.
//!
//! A write to a packed partition unpacks it, merges and packs it again, which costs little for
//! the few cells allowed here and would grow with every append to a wide row; rows past the
//! limits, and rows with range tombstones, stay as rows.
//!
//! Layout, little-endian, every length a u16 (the whole buffer is at most [`MAX_BYTES`]):
//! `key_len key token_len token marked_at:i64 local_deletion_time:i32 cell_count:u16` then per
//! cell `name_len name value_len value timestamp:i64 kind:u8` and the kind's fields
//! (expiring: `ttl:i32 expires_at:i64`; tombstone: `local_deletion_time:i32`).

use crate::data::{second_version_wins, Cell, CellKind, DeletionTime, Row, Version};
use crate::dht::{DecoratedKey, Token};

/// At most this many cells are packed.
const MAX_CELLS: usize = 8;
/// At most this many bytes in all.
const MAX_BYTES: usize = 1024;

const LIVE: u8 = 0;
const EXPIRING: u8 = 1;
const TOMBSTONE: u8 = 2;
const COUNTER: u8 = 3;

/// A partition packed by [`Packed::new`].
pub(super) struct Packed(Box<[u8]>);

/// Bytes a cell takes packed, or `None` for a kind that is never stored (a counter increment
/// waiting for its leader).
fn cell_bytes(cell: &Cell) -> Option<usize> {
    let fields = match cell.kind {
        CellKind::Live | CellKind::Counter => 0,
        CellKind::Expiring { .. } => 12,
        CellKind::Tombstone { .. } => 4,
        CellKind::CounterUpdate { .. } => return None,
    };
    Some(2 + cell.name.len() + 2 + cell.value.len() + 8 + 1 + fields)
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    // Every length is below MAX_BYTES, checked before packing.
    out.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Reads a buffer written by [`Packed::new`] front to back.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let (head, rest) = self.0.split_at(N);
        self.0 = rest;
        let mut out = [0; N];
        out.copy_from_slice(head);
        out
    }

    fn bytes(&mut self) -> &'a [u8] {
        let n = u16::from_le_bytes(self.take()) as usize;
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        head
    }

    fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.take())
    }

    fn i32(&mut self) -> i32 {
        i32::from_le_bytes(self.take())
    }

    fn u16(&mut self) -> usize {
        u16::from_le_bytes(self.take()) as usize
    }

    fn kind(&mut self) -> CellKind {
        match self.take::<1>()[0] {
            LIVE => CellKind::Live,
            COUNTER => CellKind::Counter,
            EXPIRING => CellKind::Expiring { ttl: self.i32(), expires_at: self.i64() },
            TOMBSTONE => CellKind::Tombstone { local_deletion_time: self.i32() },
            other => unreachable!("cell kind {other} is never packed"),
        }
    }

    /// The deletion time, past the key and token.
    fn deletion(&mut self) -> DeletionTime {
        self.bytes();
        self.bytes();
        DeletionTime { marked_at: self.i64(), local_deletion_time: self.i32() }
    }
}

impl Packed {
    /// `row` of partition `key` packed, or `None` when the row is too large for it, has range
    /// tombstones, or holds a cell kind the memtable never stores.
    pub(super) fn new(key: &DecoratedKey, row: &Row) -> Option<Packed> {
        if !row.range_tombstones.is_empty() || row.cells.len() > MAX_CELLS {
            return None;
        }
        let mut size = 2 + key.key.len() + 2 + key.token.0.len() + 8 + 4 + 2;
        for cell in &row.cells {
            size += cell_bytes(cell)?;
        }
        if size > MAX_BYTES {
            return None;
        }
        let mut out = Vec::with_capacity(size);
        put_bytes(&mut out, &key.key);
        put_bytes(&mut out, &key.token.0);
        out.extend_from_slice(&row.deletion.marked_at.to_le_bytes());
        out.extend_from_slice(&row.deletion.local_deletion_time.to_le_bytes());
        out.extend_from_slice(&(row.cells.len() as u16).to_le_bytes());
        for cell in &row.cells {
            put_bytes(&mut out, &cell.name);
            put_bytes(&mut out, &cell.value);
            out.extend_from_slice(&cell.timestamp.to_le_bytes());
            match cell.kind {
                CellKind::Live => out.push(LIVE),
                CellKind::Counter => out.push(COUNTER),
                CellKind::Expiring { ttl, expires_at } => {
                    out.push(EXPIRING);
                    out.extend_from_slice(&ttl.to_le_bytes());
                    out.extend_from_slice(&expires_at.to_le_bytes());
                }
                CellKind::Tombstone { local_deletion_time } => {
                    out.push(TOMBSTONE);
                    out.extend_from_slice(&local_deletion_time.to_le_bytes());
                }
                CellKind::CounterUpdate { .. } => unreachable!("cell_bytes refused it above"),
            }
        }
        debug_assert_eq!(out.len(), size);
        Some(Packed(out.into_boxed_slice()))
    }

    /// The partition key's bytes.
    pub(super) fn key(&self) -> &[u8] {
        Reader(&self.0).bytes()
    }

    /// The partition key with its token.
    pub(super) fn decorated_key(&self) -> DecoratedKey {
        let mut r = Reader(&self.0);
        let key = r.bytes().to_vec();
        DecoratedKey::new(Token(r.bytes().to_vec()), key)
    }

    /// The partition's data, unpacked.
    pub(super) fn row(&self) -> Row {
        let mut r = Reader(&self.0);
        let deletion = r.deletion();
        let count = r.u16();
        let mut cells = Vec::with_capacity(count);
        for _ in 0..count {
            let name = r.bytes().to_vec();
            let value = r.bytes().to_vec();
            let timestamp = r.i64();
            let kind = r.kind();
            cells.push(Cell { name, value, timestamp, kind });
        }
        Row { deletion, range_tombstones: Vec::new(), cells }
    }

    /// Whether merging `update` into this partition gives `update` itself: neither has a
    /// deletion, the update names exactly the stored cells (byte for byte, in order), and each
    /// of its cells wins over the stored one by the rules of plain columns (no counters). It is
    /// the usual overwrite of a row's columns, which then needs no unpacking.
    pub(super) fn superseded_by(&self, update: &Row) -> bool {
        if !update.deletion.is_live() || !update.range_tombstones.is_empty() {
            return false;
        }
        let mut r = Reader(&self.0);
        if !r.deletion().is_live() || r.u16() != update.cells.len() {
            return false;
        }
        let plain = |kind: CellKind| !matches!(kind, CellKind::Counter | CellKind::CounterUpdate { .. });
        update.cells.iter().all(|new| {
            let name = r.bytes();
            let stored = Version { value: r.bytes(), timestamp: r.i64(), kind: r.kind() };
            name == new.name && plain(stored.kind) && plain(new.kind) && second_version_wins(stored, new.version())
        })
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::data::RangeTombstone;

    fn cell_strategy() -> impl Strategy<Value = Cell> {
        let kind = prop_oneof![
            Just(CellKind::Live),
            Just(CellKind::Counter),
            (any::<i32>(), any::<i64>()).prop_map(|(ttl, expires_at)| CellKind::Expiring { ttl, expires_at }),
            any::<i32>().prop_map(|local_deletion_time| CellKind::Tombstone { local_deletion_time }),
        ];
        (prop::collection::vec(any::<u8>(), 0..40), prop::collection::vec(any::<u8>(), 0..150), any::<i64>(), kind)
            .prop_map(|(name, value, timestamp, kind)| Cell { name, value, timestamp, kind })
    }

    proptest! {
        #[test]
        fn what_is_packed_unpacks_the_same(
            key in prop::collection::vec(any::<u8>(), 0..300),
            token in prop::collection::vec(any::<u8>(), 0..20),
            marked_at in any::<i64>(),
            local_deletion_time in any::<i32>(),
            cells in prop::collection::vec(cell_strategy(), 0..10),
        ) {
            let key = DecoratedKey::new(Token(token), key);
            let row = Row { deletion: DeletionTime { marked_at, local_deletion_time }, range_tombstones: Vec::new(), cells };
            match Packed::new(&key, &row) {
                Some(p) => {
                    prop_assert!(p.0.len() <= MAX_BYTES && row.cells.len() <= MAX_CELLS);
                    prop_assert_eq!(p.key(), key.key.as_slice());
                    prop_assert_eq!(p.decorated_key(), key);
                    prop_assert_eq!(p.row(), row);
                }
                None => {
                    let size = 18 + key.key.len() + key.token.0.len()
                        + row.cells.iter().map(|c| cell_bytes(c).unwrap()).sum::<usize>();
                    prop_assert!(row.cells.len() > MAX_CELLS || size > MAX_BYTES, "{size} bytes refused");
                }
            }
        }
    }

    #[test]
    fn an_update_supersedes_only_by_winning_every_stored_cell() {
        let key = DecoratedKey::new(Token(vec![1]), b"k".to_vec());
        let cells = |specs: &[(&str, i64)]| Row {
            cells: specs.iter().map(|&(n, ts)| Cell::live(n.as_bytes().to_vec(), b"v".to_vec(), ts)).collect(),
            ..Row::new()
        };
        let stored = Packed::new(&key, &cells(&[("a", 5), ("b", 5)])).unwrap();
        assert!(stored.superseded_by(&cells(&[("a", 6), ("b", 6)])));
        assert!(!stored.superseded_by(&cells(&[("a", 6), ("b", 4)])), "an older cell loses");
        assert!(!stored.superseded_by(&cells(&[("a", 5), ("b", 6)])), "a tie on equal values keeps the stored one");
        assert!(!stored.superseded_by(&cells(&[("a", 6)])), "a cell left over");
        assert!(!stored.superseded_by(&cells(&[("a", 6), ("c", 6)])), "another name");
        let mut deleting = cells(&[("a", 6), ("b", 6)]);
        deleting.deletion = DeletionTime::new(1, 1);
        assert!(!stored.superseded_by(&deleting), "a row deletion to merge");
        let counters = Row { cells: vec![Cell::counter(b"a".to_vec(), vec![], 9)], ..Row::new() };
        let stored_counter = Packed::new(&key, &counters).unwrap();
        assert!(!stored_counter.superseded_by(&counters), "counters merge, never replace");
        let mut tombstoned = cells(&[("a", 5)]);
        tombstoned.cells[0] = Cell::tombstone(b"a".to_vec(), 5, 100);
        let stored_tombstone = Packed::new(&key, &tombstoned).unwrap();
        assert!(!stored_tombstone.superseded_by(&cells(&[("a", 5)])), "a tombstone wins a tie");
        assert!(stored_tombstone.superseded_by(&cells(&[("a", 7)])));
    }

    #[test]
    fn range_tombstones_and_increments_are_never_packed() {
        let key = DecoratedKey::new(Token(vec![1]), b"k".to_vec());
        let mut row = Row::new();
        row.range_tombstones.push(RangeTombstone { start: vec![], end: vec![], deletion: DeletionTime::new(1, 1) });
        assert!(Packed::new(&key, &row).is_none());
        let row = Row { cells: vec![Cell::counter_update(b"c".to_vec(), 3, 1)], ..Row::new() };
        assert!(Packed::new(&key, &row).is_none());
        assert!(Packed::new(&key, &Row::new()).is_some(), "an empty row packs");
    }
}
