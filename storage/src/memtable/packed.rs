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
//! Layout: `key_len:u16 key token_len:u16 token` and then the row in the codec the commit log
//! and SSTables share ([`crate::data::encode_row`]).

use smallvec::SmallVec;

use crate::comparator::CellComparator;
use crate::counter;
use crate::data::{
    decode_cell_version, decode_deletion, decode_row, encode_row, encoded_row_len, second_version_wins, Cell, CellKind,
    DeletionTime, Reader, Row,
};
use crate::dht::{DecoratedKey, Token};
use crate::error::CorruptData;
use crate::filter::{collect_live_cells, CellRef, ReadFilter, Tombstones};

/// At most this many cells are packed.
const MAX_CELLS: usize = 8;
/// At most this many bytes in all.
const MAX_BYTES: usize = 1024;
/// Lines [`Packed::prefetch`] asks for past the first: a few small cells.
const PREFETCHED_LINES: usize = 3;

/// A partition packed by [`Packed::new`].
pub(super) struct Packed(Box<[u8]>);

/// A packed buffer that does not read back: only a bug in this module can make one.
fn unreadable(e: CorruptData) -> ! {
    unreachable!("a packed memtable partition does not read back: {e}")
}

impl Packed {
    /// `row` of partition `key` packed, or `None` when the row is too large for it, has range
    /// tombstones, or holds a cell the memtable never stores (an increment, a bad counter).
    pub(super) fn new(key: &DecoratedKey, row: &Row) -> Option<Packed> {
        if !row.range_tombstones.is_empty()
            || row.cells.len() > MAX_CELLS
            || row.cells.iter().any(|c| match c.kind {
                CellKind::CounterUpdate { .. } => true,
                // Decoding checks a counter context; one that fails stays a row rather than
                // stop a later read.
                CellKind::Counter => counter::validate(&c.value).is_err(),
                _ => false,
            })
        {
            return None;
        }
        // Counted before anything is copied, so a row of large values is refused at no cost;
        // and exactly: a larger capacity made `into_boxed_slice` shrink the buffer with a
        // reallocation on every write (about 3% of an insert's instructions).
        let len = 2 + key.key.len() + 2 + key.token.0.len() + encoded_row_len(row);
        if len > MAX_BYTES {
            return None;
        }
        let mut out = Vec::with_capacity(len);
        for part in [key.key.as_slice(), key.token.as_bytes()] {
            // Each below MAX_BYTES, checked above.
            out.extend_from_slice(&(part.len() as u16).to_be_bytes());
            out.extend_from_slice(part);
        }
        encode_row(row, &mut out);
        debug_assert_eq!(out.len(), len, "encoded_row_len disagrees with encode_row");
        Some(Packed(out.into_boxed_slice()))
    }

    /// Starts loading the buffer's cache lines past its first, so that they arrive while the
    /// first is waited for. A read or a write compares the key on the first line and then the
    /// cells on the next two or three; at a few hundred thousand partitions each line is a
    /// cache miss, and the cells' line, waited for after the key's, cost a read 0.13-0.16 µs
    /// (bench/profile-vs-redis.sh; 0.02 µs prefetched). The length is known from the tree's
    /// pointer, without touching the buffer.
    #[inline]
    pub(super) fn prefetch(&self) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let start = self.0.as_ptr() as usize;
            let last_line = (start + self.0.len().saturating_sub(1)) & !63;
            let mut line = (start & !63) + 64;
            for _ in 0..PREFETCHED_LINES {
                if line > last_line {
                    break;
                }
                // SAFETY: a prefetch is a hint that never faults or reads into the program, and
                // SSE, which it needs, is part of every x86-64 CPU. The address is in the buffer.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(self.0.as_ptr().wrapping_add(line - start).cast()) };
                line += 64;
            }
        }
    }

    /// A reader past the key and token, and the two.
    fn parts(&self) -> (&[u8], &[u8], Reader<'_>) {
        let mut r = Reader::new(&self.0);
        let key = r.short_bytes().unwrap_or_else(|e| unreadable(e));
        let token = r.short_bytes().unwrap_or_else(|e| unreadable(e));
        (key, token, r)
    }

    /// The partition key's bytes.
    pub(super) fn key(&self) -> &[u8] {
        self.parts().0
    }

    /// The partition key with its token.
    pub(super) fn decorated_key(&self) -> DecoratedKey {
        let (key, token, _) = self.parts();
        DecoratedKey::new(Token::from_bytes(token), key.to_vec())
    }

    /// The partition's data, unpacked.
    pub(super) fn row(&self) -> Row {
        decode_row(&mut self.parts().2).unwrap_or_else(|e| unreadable(e))
    }

    /// The live cells `filter` selects, read where they are packed: only those returned are
    /// copied out (a point read of an unpacked copy allocated every cell and then the list).
    pub(super) fn live_cells(&self, cmp: &CellComparator, filter: &ReadFilter, now: i32) -> Vec<Cell> {
        let mut r = self.parts().2;
        let mut cells: SmallVec<[CellRef<'_>; MAX_CELLS]> = SmallVec::new();
        let mut read = || -> Result<DeletionTime, CorruptData> {
            let deletion = decode_deletion(&mut r)?;
            // No range tombstones: a row with any is never packed.
            match r.u32()? {
                0 => {}
                n => return Err(CorruptData::BadValue { what: "packed range tombstone count", value: n.into() }),
            }
            for _ in 0..r.u32()? {
                let (name, version) = decode_cell_version(&mut r)?;
                cells.push(CellRef { name, version });
            }
            Ok(deletion)
        };
        let deletion = read().unwrap_or_else(|e| unreadable(e));
        collect_live_cells(cmp, &cells, Tombstones { deletion, ranges: &[] }, filter, now)
    }

    /// Whether merging `update` into this partition gives `update` itself: neither has a
    /// deletion, the update names exactly the stored cells (byte for byte, in order), and each
    /// of its cells wins over the stored one by the rules of plain columns (no counters). It is
    /// the usual overwrite of a row's columns, which then needs no unpacking.
    pub(super) fn superseded_by(&self, update: &Row) -> bool {
        if !update.deletion.is_live() || !update.range_tombstones.is_empty() {
            return false;
        }
        let plain = |kind: CellKind| !matches!(kind, CellKind::Counter | CellKind::CounterUpdate { .. });
        let mut r = self.parts().2;
        let mut stored = || -> Result<bool, CorruptData> {
            // The row's deletion, its range tombstone count (always 0 here), its cell count.
            let live = decode_deletion(&mut r)?.is_live();
            if !live || r.u32()? != 0 || r.u32()? as usize != update.cells.len() {
                return Ok(false);
            }
            for new in &update.cells {
                let (name, old) = decode_cell_version(&mut r)?;
                if name != new.name || !plain(old.kind) || !plain(new.kind) || !second_version_wins(old, new.version())
                {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        stored().unwrap_or_else(|e| unreadable(e))
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::data::RangeTombstone;
    use crate::filter::{collect_live, CountUnit};
    use crate::marshal::AbstractType;

    fn cell_strategy() -> impl Strategy<Value = Cell> {
        let kind = prop_oneof![
            Just(CellKind::Live),
            Just(CellKind::Counter), // its value made a counter context below
            (any::<i32>(), any::<i64>()).prop_map(|(ttl, expires_at)| CellKind::Expiring { ttl, expires_at }),
            any::<i32>().prop_map(|local_deletion_time| CellKind::Tombstone { local_deletion_time }),
        ];
        (prop::collection::vec(any::<u8>(), 0..40), prop::collection::vec(any::<u8>(), 0..150), any::<i64>(), kind)
            .prop_map(|(name, value, timestamp, kind)| {
                let value = match kind {
                    CellKind::Counter => counter::single(uuid::Uuid::from_u128(value.len() as u128), timestamp, 7),
                    _ => value,
                };
                Cell { name, value, timestamp, kind }
            })
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
            let key = DecoratedKey::new(Token(token.into()), key);
            let row = Row { deletion: DeletionTime { marked_at, local_deletion_time }, range_tombstones: Vec::new(), cells };
            match Packed::new(&key, &row) {
                Some(p) => {
                    prop_assert!(p.0.len() <= MAX_BYTES && row.cells.len() <= MAX_CELLS);
                    prop_assert_eq!(p.key(), key.key.as_slice());
                    prop_assert_eq!(p.decorated_key(), key);
                    prop_assert_eq!(p.row(), row);
                }
                None => {
                    let size = 24 + key.key.len() + key.token.0.len() + row.cells.iter().map(Cell::size).sum::<usize>();
                    prop_assert!(row.cells.len() > MAX_CELLS || size > MAX_BYTES, "{size} bytes refused");
                }
            }
        }
    }

    fn filter_strategy() -> impl Strategy<Value = ReadFilter> {
        let name = || prop::collection::vec(any::<u8>(), 0..3);
        prop_oneof![
            (name(), name(), any::<bool>(), 1..12usize).prop_map(|(start, finish, reversed, count)| {
                ReadFilter::slice(start, finish, reversed, count, CountUnit::Cells)
            }),
            prop::collection::vec(name(), 0..5).prop_map(|names| ReadFilter::names(
                &bytes_cmp(),
                names,
                CountUnit::Cells
            )),
        ]
    }

    fn bytes_cmp() -> CellComparator {
        CellComparator::standard(AbstractType::Bytes)
    }

    proptest! {
        /// A read of the cells where they are packed returns what the same read of the row
        /// returns: the same cells, order, count limit, expiry and row deletion.
        #[test]
        fn live_cells_read_in_place_are_those_of_the_row(
            cells in prop::collection::vec(cell_strategy(), 0..10),
            deleted_at in prop_oneof![Just(None), (0i64..40).prop_map(Some)],
            filter in filter_strategy(),
            now in 0i32..3,
        ) {
            let cmp = bytes_cmp();
            let mut row = Row::new();
            for mut c in cells {
                c.name.truncate(2);
                c.timestamp = c.timestamp.rem_euclid(50);
                if let CellKind::Expiring { ttl, .. } = c.kind {
                    c.kind = CellKind::Expiring { ttl, expires_at: i64::from(ttl.rem_euclid(4)) };
                }
                crate::filter::insert_cell(&cmp, &mut row.cells, c);
            }
            if let Some(at) = deleted_at {
                row.deletion = DeletionTime::new(at, 1);
            }
            let key = DecoratedKey::new(Token::from_bytes(&[7]), b"k".to_vec());
            if let Some(p) = Packed::new(&key, &row) {
                prop_assert_eq!(p.live_cells(&cmp, &filter, now), collect_live(&cmp, &row, &filter, now));
            }
        }
    }

    #[test]
    fn an_update_supersedes_only_by_winning_every_stored_cell() {
        let key = DecoratedKey::new(Token::from_bytes(&[1]), b"k".to_vec());
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
        let key = DecoratedKey::new(Token::from_bytes(&[1]), b"k".to_vec());
        let mut row = Row::new();
        row.range_tombstones.push(RangeTombstone { start: vec![], end: vec![], deletion: DeletionTime::new(1, 1) });
        assert!(Packed::new(&key, &row).is_none());
        let row = Row { cells: vec![Cell::counter_update(b"c".to_vec(), 3, 1)], ..Row::new() };
        assert!(Packed::new(&key, &row).is_none());
        assert!(Packed::new(&key, &Row::new()).is_some(), "an empty row packs");
    }
}
