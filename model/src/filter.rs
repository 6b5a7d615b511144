//! Merging partition versions and selecting what a read returns (Cassandra's `db.filter`).
//!
//! A read gathers the versions of a partition from memtables and SSTables, merges them with
//! [`merge_rows`], then [`collect_live`] applies tombstones, TTLs, the requested names or slices
//! and the count limit.

use std::cmp::Ordering;

use smallvec::SmallVec;

use crate::comparator::CellComparator;
use crate::data::{resolve, split_super, Cell, DeletionTime, RangeTombstone, Resolution, Row, Version};

/// What a count limit counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CountUnit {
    /// Cells (columns, or subcolumns within one super column).
    Cells,
    /// Distinct super columns: a super column family read at the top level.
    SuperColumns,
}

/// Which cells of a partition a read wants.
///
/// `ranges` are inclusive `(low, high)` pairs in ascending comparator order, not overlapping,
/// with bounds as [`CellComparator::compare_with_bound`] reads them (empty = open; in a super
/// column family an empty subcolumn part covers the whole super column). A list of names is a
/// list of one-name ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadFilter {
    pub ranges: Vec<(Vec<u8>, Vec<u8>)>,
    pub reversed: bool,
    pub count: usize,
    pub count_unit: CountUnit,
}

impl ReadFilter {
    /// Every cell.
    pub fn all() -> ReadFilter {
        ReadFilter {
            ranges: vec![(Vec::new(), Vec::new())],
            reversed: false,
            count: usize::MAX,
            count_unit: CountUnit::Cells,
        }
    }

    /// The named cells (in a super CF, a name with an empty subcolumn part means the whole super
    /// column). Names are sorted and deduplicated with the comparator.
    pub fn names(cmp: &CellComparator, mut names: Vec<Vec<u8>>, count_unit: CountUnit) -> ReadFilter {
        names.sort_by(|a, b| cmp.compare(a, b));
        names.dedup_by(|a, b| cmp.compare(a, b) == Ordering::Equal);
        ReadFilter {
            ranges: names.into_iter().map(|n| (n.clone(), n)).collect(),
            reversed: false,
            count: usize::MAX,
            count_unit,
        }
    }

    /// A Thrift slice: `start` comes first in iteration order (so for a reversed slice it is the
    /// high end).
    pub fn slice(start: Vec<u8>, finish: Vec<u8>, reversed: bool, count: usize, count_unit: CountUnit) -> ReadFilter {
        let range = if reversed { (finish, start) } else { (start, finish) };
        ReadFilter { ranges: vec![range], reversed, count, count_unit }
    }

    /// Several slices in iteration order (get_multi_slice); the caller checks they are ordered
    /// and do not overlap.
    pub fn slices(slices: Vec<(Vec<u8>, Vec<u8>)>, reversed: bool, count: usize, count_unit: CountUnit) -> ReadFilter {
        let mut ranges: Vec<_> = slices.into_iter().map(|(s, f)| if reversed { (f, s) } else { (s, f) }).collect();
        if reversed {
            ranges.reverse();
        }
        ReadFilter { ranges, reversed, count, count_unit }
    }

    /// True when the whole partition is wanted (no need to consult a column index).
    pub fn is_all(&self) -> bool {
        self.ranges.len() == 1 && self.ranges[0].0.is_empty() && self.ranges[0].1.is_empty()
    }

    /// True when a run of cells whose names span `[first, last]` may hold a wanted cell.
    pub fn may_intersect(&self, cmp: &CellComparator, first: &[u8], last: &[u8]) -> bool {
        self.ranges.iter().any(|(lo, hi)| !cmp.after_end(first, hi) && !cmp.before_start(last, lo))
    }
}

/// Merges `update` into `row`: deletions keep the latest, cells reconcile by name.
pub fn add_to_row(cmp: &CellComparator, row: &mut Row, update: Row) {
    row.deletion = row.deletion.max(update.deletion);
    for rt in update.range_tombstones {
        if !row.range_tombstones.contains(&rt) {
            row.range_tombstones.push(rt);
        }
    }
    if row.cells.is_empty() {
        row.cells = update.cells;
    } else if update.cells.len() <= 8 {
        for cell in update.cells {
            insert_cell(cmp, &mut row.cells, cell);
        }
    } else {
        let existing = std::mem::take(&mut row.cells);
        row.cells = merge_cells(cmp, existing, update.cells);
    }
}

/// Inserts one cell into a sorted list, reconciling with an existing version.
pub fn insert_cell(cmp: &CellComparator, cells: &mut Vec<Cell>, cell: Cell) {
    // Appends in order are the common case (time-ordered names): check the end first.
    if let Some(last) = cells.last() {
        if cmp.compare(&last.name, &cell.name) == Ordering::Less {
            cells.push(cell);
            return;
        }
    }
    match cells.binary_search_by(|c| cmp.compare(&c.name, &cell.name)) {
        Ok(i) => match resolve(&cells[i], &cell) {
            Resolution::First => {}
            Resolution::Second => cells[i] = cell,
            Resolution::Merged(merged) => cells[i] = merged,
        },
        Err(i) => cells.insert(i, cell),
    }
}

/// Merges two sorted cell lists, reconciling cells of the same name.
pub fn merge_cells(cmp: &CellComparator, a: Vec<Cell>, b: Vec<Cell>) -> Vec<Cell> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut a = a.into_iter().peekable();
    let mut b = b.into_iter().peekable();
    loop {
        let order = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => cmp.compare(&x.name, &y.name),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => break,
        };
        match order {
            Ordering::Less => out.extend(a.next()),
            Ordering::Greater => out.extend(b.next()),
            Ordering::Equal => {
                if let (Some(x), Some(y)) = (a.next(), b.next()) {
                    out.push(crate::data::reconcile(x, y));
                }
            }
        }
    }
    out
}

/// Merges several versions of one partition into one.
pub fn merge_rows(cmp: &CellComparator, mut versions: Vec<Row>) -> Row {
    match versions.len() {
        0 => Row::new(),
        1 => versions.pop().unwrap_or_default(),
        _ => {
            let mut merged = Row::new();
            for v in versions {
                merged.deletion = merged.deletion.max(v.deletion);
                for rt in v.range_tombstones {
                    if !merged.range_tombstones.contains(&rt) {
                        merged.range_tombstones.push(rt);
                    }
                }
                let existing = std::mem::take(&mut merged.cells);
                merged.cells = merge_cells(cmp, existing, v.cells);
            }
            merged
        }
    }
}

/// True when a tombstone in `row` (row deletion or range tombstone) shadows `cell`.
pub fn is_shadowed(cmp: &CellComparator, row: &Row, cell: &Cell) -> bool {
    Tombstones::of(row).shadow(cmp, cell)
}

/// What a read reads of one cell, wherever the cell is kept: a [`Cell`] of a row, or a
/// [`CellRef`] borrowed from encoded bytes.
pub trait CellView {
    fn name(&self) -> &[u8];
    fn timestamp(&self) -> i64;
    fn is_live(&self, now: i32) -> bool;
    /// The cell, owned.
    fn to_cell(&self) -> Cell;
}

impl CellView for Cell {
    fn name(&self) -> &[u8] {
        &self.name
    }
    fn timestamp(&self) -> i64 {
        self.timestamp
    }
    fn is_live(&self, now: i32) -> bool {
        Cell::is_live(self, now)
    }
    fn to_cell(&self) -> Cell {
        self.clone()
    }
}

/// A cell borrowed from encoded bytes ([`crate::data::decode_cell_version`]): a packed memtable
/// partition is read through these, and only the cells a read returns are copied.
#[derive(Clone, Copy, Debug)]
pub struct CellRef<'a> {
    pub name: &'a [u8],
    pub version: Version<'a>,
}

impl CellView for CellRef<'_> {
    fn name(&self) -> &[u8] {
        self.name
    }
    fn timestamp(&self) -> i64 {
        self.version.timestamp
    }
    fn is_live(&self, now: i32) -> bool {
        self.version.kind.is_live(now)
    }
    fn to_cell(&self) -> Cell {
        Cell {
            name: self.name.to_vec(),
            value: self.version.value.to_vec(),
            timestamp: self.version.timestamp,
            kind: self.version.kind,
        }
    }
}

/// A partition's row deletion and range tombstones: what may shadow its cells.
#[derive(Clone, Copy)]
pub struct Tombstones<'r> {
    pub deletion: DeletionTime,
    pub ranges: &'r [RangeTombstone],
}

impl<'r> Tombstones<'r> {
    pub fn of(row: &'r Row) -> Tombstones<'r> {
        Tombstones { deletion: row.deletion, ranges: &row.range_tombstones }
    }

    /// True when one of these shadows `cell`.
    fn shadow(&self, cmp: &CellComparator, cell: &impl CellView) -> bool {
        let ts = cell.timestamp();
        self.deletion.deletes(ts)
            || self.ranges.iter().any(|rt| rt.deletion.deletes(ts) && cmp.in_range(cell.name(), &rt.start, &rt.end))
    }
}

/// Walks the cells of a partition (`cells`, sorted) that `filter`'s ranges hold, in iteration
/// order, handing each to `f` (with its position in `cells`) with whether it is live (not
/// expired, not shadowed by `tombstones`), until the filter's count of live cells (or super columns) is reached: with cells, the walk ends with the
/// cell that completes the count; with super columns, at the first live cell of one more super
/// column than the count allows.
/// For a range that names one cell (`lo == hi`), the position of that cell when it is the
/// next one at `floor` byte for byte: a read by names usually finds its cells in order, and so
/// checks each with one comparison of the cell after it instead of two binary searches.
/// `None` sends the range the general way.
fn named_at<C: CellView>(cmp: &CellComparator, cells: &[C], floor: usize, lo: &[u8], hi: &[u8]) -> Option<usize> {
    if lo.is_empty() || lo != hi || cells.get(floor)?.name() != lo {
        return None;
    }
    // A name is Equal to itself, and the cells before `floor` sort before earlier ranges.
    // Cells are one per name under the comparator, so no other cell is Equal to `lo`; only a
    // super column's name selects a run of cells, which the general way finds.
    if !cmp.is_super() {
        return Some(floor);
    }
    match cells.get(floor + 1) {
        Some(next) if !cmp.after_end(next.name(), hi) => None,
        _ => Some(floor),
    }
}

fn for_each_selected<'r, C: CellView>(
    cmp: &CellComparator,
    cells: &'r [C],
    tombstones: Tombstones<'_>,
    filter: &ReadFilter,
    now: i32,
    mut f: impl FnMut(usize, &'r C, bool),
) {
    // Inline for the usual one range (a slice) or a few names: a point read allocates only
    // the cells it returns.
    let mut spans: SmallVec<[(usize, usize); 4]> = SmallVec::with_capacity(filter.ranges.len());
    let mut floor = 0;
    for (lo, hi) in &filter.ranges {
        if let Some(at) = named_at(cmp, cells, floor, lo, hi) {
            spans.push((at, at + 1));
            floor = at + 1;
            continue;
        }
        let start = floor + cells[floor..].partition_point(|c| cmp.before_start(c.name(), lo));
        let end = start + cells[start..].partition_point(|c| !cmp.after_end(c.name(), hi));
        if end > start {
            spans.push((start, end));
        }
        floor = end.max(floor);
    }
    let mut counted = 0usize;
    let mut last_super: Option<&[u8]> = None;
    let mut visit = |at: usize| -> bool {
        let cell = &cells[at];
        let live = cell.is_live(now) && !tombstones.shadow(cmp, cell);
        if live {
            match filter.count_unit {
                CountUnit::Cells => {
                    if counted >= filter.count {
                        return false;
                    }
                    counted += 1;
                    f(at, cell, true);
                    return counted < filter.count;
                }
                CountUnit::SuperColumns => {
                    // The last super column's later cells still belong to the answer.
                    let (sc, _) = split_super(cell.name());
                    if last_super != Some(sc) {
                        if counted >= filter.count {
                            return false;
                        }
                        counted += 1;
                        last_super = Some(sc);
                    }
                }
            }
        }
        f(at, cell, live);
        true
    };
    if filter.reversed {
        'outer: for &(s, e) in spans.iter().rev() {
            for at in (s..e).rev() {
                if !visit(at) {
                    break 'outer;
                }
            }
        }
    } else {
        'outer: for &(s, e) in &spans {
            for at in s..e {
                if !visit(at) {
                    break 'outer;
                }
            }
        }
    }
}

/// Room for the cells a read of `cells` will select, reserved at once (a point read then grows
/// no vector): no more than there are or the filter counts, and at most 16, as a slice's count
/// is often far above what it finds and the vector grows as usual past that.
fn first_capacity(cells: usize, filter: &ReadFilter) -> usize {
    cells.min(filter.count).min(16)
}

/// The live cells of a merged partition that `filter` selects, in iteration order, cut at the
/// filter's count.
pub fn collect_live(cmp: &CellComparator, row: &Row, filter: &ReadFilter, now: i32) -> Vec<Cell> {
    collect_live_cells(cmp, &row.cells, Tombstones::of(row), filter, now)
}

/// [`collect_live`] of a partition given as its sorted cells and its tombstones, wherever they
/// are kept: only the cells returned are copied.
pub fn collect_live_cells<C: CellView>(
    cmp: &CellComparator,
    cells: &[C],
    tombstones: Tombstones<'_>,
    filter: &ReadFilter,
    now: i32,
) -> Vec<Cell> {
    let mut out = Vec::with_capacity(first_capacity(cells.len(), filter));
    for_each_selected(cmp, cells, tombstones, filter, now, |_, cell, live| {
        if live {
            out.push(cell.to_cell());
        }
    });
    out
}

/// As [`collect_live`], for a row its caller is done with: the selected cells are moved out of
/// it, not copied (a point read's row was already copied out of its memtable).
pub fn take_live(cmp: &CellComparator, mut row: Row, filter: &ReadFilter, now: i32) -> Vec<Cell> {
    let mut picked: SmallVec<[usize; 16]> = SmallVec::new();
    for_each_selected(cmp, &row.cells, Tombstones::of(&row), filter, now, |at, _, live| {
        if live {
            picked.push(at);
        }
    });
    if picked.len() == row.cells.len() && !filter.reversed {
        return row.cells; // every cell, in order (positions only grow when not reversed)
    }
    picked.into_iter().map(|at| std::mem::replace(&mut row.cells[at], Cell::tombstone(Vec::new(), 0, 0))).collect()
}

/// What a replica answers for a read: the part of a merged partition that `filter` selects,
/// tombstones included, so that a coordinator can reconcile it with other replicas' answers
/// (Cassandra's filtered ColumnFamily). Keeps the row deletion and the range tombstones, and the
/// cells of the filter's ranges in iteration order up to the one that completes its count of
/// live cells (or super columns); tombstones and dead cells met before that are kept too, so
/// that they can shadow other replicas' data. [`collect_live`] on the merged answers gives the
/// client's result.
pub fn slice_row(cmp: &CellComparator, row: &Row, filter: &ReadFilter, now: i32) -> Row {
    let mut cells: Vec<Cell> = Vec::with_capacity(first_capacity(row.cells.len(), filter));
    for_each_selected(cmp, &row.cells, Tombstones::of(row), filter, now, |_, cell, _| cells.push(cell.clone()));
    if filter.reversed {
        cells.reverse();
    }
    Row { deletion: row.deletion, range_tombstones: row.range_tombstones.clone(), cells }
}

/// Rewrites a merged partition for compaction: drops cells shadowed by tombstones and, when
/// `purge` allows it, tombstones and expired cells whose local deletion time is before
/// `gc_before`.
pub fn compact_row(cmp: &CellComparator, mut row: Row, now: i32, gc_before: i32, purge: bool) -> Row {
    let shadow_source =
        Row { deletion: row.deletion, range_tombstones: std::mem::take(&mut row.range_tombstones), cells: Vec::new() };
    let cells = std::mem::take(&mut row.cells);
    row.cells = cells
        .into_iter()
        .filter(|c| !is_shadowed(cmp, &shadow_source, c) && (!purge || !c.purgeable(now, gc_before)))
        .collect();
    row.range_tombstones = shadow_source.range_tombstones;
    if purge {
        row.range_tombstones.retain(|rt| !rt.deletion.purgeable(gc_before));
        if row.deletion.purgeable(gc_before) {
            row.deletion = crate::data::DeletionTime::LIVE;
        }
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{compose_super, DeletionTime, RangeTombstone};
    use crate::marshal::AbstractType;

    fn cmp() -> CellComparator {
        CellComparator::standard(AbstractType::Bytes)
    }

    fn names(cells: &[Cell]) -> Vec<&[u8]> {
        cells.iter().map(|c| c.name.as_slice()).collect()
    }

    /// The live cells `f` selects, by `collect_live`, checked against `take_live` on a copy.
    fn live_cells(c: &CellComparator, r: &Row, f: &ReadFilter, now: i32) -> Vec<Cell> {
        let copied = collect_live(c, r, f, now);
        assert_eq!(take_live(c, r.clone(), f, now), copied, "take_live differs from collect_live");
        copied
    }

    fn row(cells: &[(&str, i64)]) -> Row {
        let mut r = Row::new();
        for (n, ts) in cells {
            insert_cell(&cmp(), &mut r.cells, Cell::live(n.as_bytes(), "v", *ts));
        }
        r
    }

    #[test]
    fn slices_forward_reversed_and_counted() {
        let r = row(&[("a", 1), ("b", 1), ("c", 1), ("d", 1)]);
        let f = ReadFilter::slice(b"b".to_vec(), b"".to_vec(), false, 2, CountUnit::Cells);
        assert_eq!(names(&live_cells(&cmp(), &r, &f, 0)), vec![b"b", b"c"]);
        let f = ReadFilter::slice(b"c".to_vec(), b"a".to_vec(), true, 10, CountUnit::Cells);
        assert_eq!(names(&live_cells(&cmp(), &r, &f, 0)), vec![b"c", b"b", b"a"]);
        let f = ReadFilter::slice(Vec::new(), Vec::new(), true, 10, CountUnit::Cells);
        assert_eq!(names(&live_cells(&cmp(), &r, &f, 0)), vec![b"d", b"c", b"b", b"a"]);
        let f = ReadFilter::names(&cmp(), vec![b"d".to_vec(), b"a".to_vec(), b"z".to_vec()], CountUnit::Cells);
        assert_eq!(names(&live_cells(&cmp(), &r, &f, 0)), vec![b"a", b"d"]);
    }

    #[test]
    fn tombstones_shadow_only_older_cells() {
        let mut r = row(&[("a", 1), ("b", 5), ("c", 1)]);
        r.range_tombstones.push(RangeTombstone {
            start: b"b".to_vec(),
            end: b"c".to_vec(),
            deletion: DeletionTime::new(3, 0),
        });
        assert_eq!(names(&live_cells(&cmp(), &r, &ReadFilter::all(), 0)), vec![b"a", b"b"]);
        r.deletion = DeletionTime::new(2, 0);
        assert_eq!(names(&live_cells(&cmp(), &r, &ReadFilter::all(), 0)), vec![b"b"]);
    }

    #[test]
    fn super_column_count_counts_super_columns() {
        let c = CellComparator::super_cf(AbstractType::Bytes, AbstractType::Bytes);
        let mut r = Row::new();
        for (sc, sub) in [("a", "1"), ("a", "2"), ("b", "1"), ("c", "1")] {
            insert_cell(&c, &mut r.cells, Cell::live(compose_super(sc.as_bytes(), sub.as_bytes()), "v", 1));
        }
        let f = ReadFilter::slice(Vec::new(), Vec::new(), false, 2, CountUnit::SuperColumns);
        assert_eq!(live_cells(&c, &r, &f, 0).len(), 3);
        let f = ReadFilter::names(&c, vec![compose_super(b"b", b"")], CountUnit::SuperColumns);
        assert_eq!(live_cells(&c, &r, &f, 0).len(), 1);
    }

    #[test]
    fn names_find_their_cells_however_they_fall() {
        let r = row(&[("b", 1), ("c", 1), ("d", 1), ("f", 1)]);
        for (asked, found) in [
            (&["b", "c", "d", "f"][..], &["b", "c", "d", "f"][..]),
            (&["a", "b", "e", "f", "g"], &["b", "f"]),
            (&["c", "f"], &["c", "f"]),
            (&["a", "e", "g"], &[]),
            (&["d"], &["d"]),
        ] {
            let wanted = asked.iter().map(|n| n.as_bytes().to_vec()).collect();
            let f = ReadFilter::names(&cmp(), wanted, CountUnit::Cells);
            let found: Vec<&[u8]> = found.iter().map(|n| n.as_bytes()).collect();
            assert_eq!(names(&live_cells(&cmp(), &r, &f, 0)), found, "names {asked:?}");
        }
        // A super column's name selects all of its subcolumns, the next one included.
        let c = CellComparator::super_cf(AbstractType::Bytes, AbstractType::Bytes);
        let mut r = Row::new();
        for (sc, sub) in [("a", "1"), ("a", "2"), ("b", "1"), ("c", "1"), ("c", "2")] {
            insert_cell(&c, &mut r.cells, Cell::live(compose_super(sc.as_bytes(), sub.as_bytes()), "v", 1));
        }
        let f = ReadFilter::names(&c, vec![compose_super(b"a", b""), compose_super(b"c", b"")], CountUnit::Cells);
        assert_eq!(live_cells(&c, &r, &f, 0).len(), 4);
        let f = ReadFilter::names(&c, vec![compose_super(b"a", b"2"), compose_super(b"b", b"1")], CountUnit::Cells);
        assert_eq!(names(&live_cells(&c, &r, &f, 0)), vec![compose_super(b"a", b"2"), compose_super(b"b", b"1")]);
    }

    #[test]
    fn a_sliced_row_keeps_tombstones_and_gives_the_same_live_cells() {
        let mut r = row(&[("a", 1), ("c", 1), ("d", 1), ("e", 1)]);
        insert_cell(&cmp(), &mut r.cells, Cell::tombstone("b", 5, 0));
        r.range_tombstones.push(RangeTombstone {
            start: b"d".to_vec(),
            end: b"d".to_vec(),
            deletion: DeletionTime::new(3, 0),
        });
        let f = ReadFilter::slice(Vec::new(), Vec::new(), false, 2, CountUnit::Cells);
        let sliced = slice_row(&cmp(), &r, &f, 0);
        // a (live), b (tombstone), c (live, completes the count): d and e are not needed.
        assert_eq!(names(&sliced.cells), vec![b"a", b"b", b"c"]);
        assert_eq!(sliced.range_tombstones, r.range_tombstones);
        assert_eq!(live_cells(&cmp(), &sliced, &f, 0), live_cells(&cmp(), &r, &f, 0));
        let rev = ReadFilter::slice(Vec::new(), Vec::new(), true, 1, CountUnit::Cells);
        let sliced = slice_row(&cmp(), &r, &rev, 0);
        // Iterating backwards: e completes the count; cells come back in comparator order.
        assert_eq!(names(&sliced.cells), vec![b"e"]);
        // Another replica's newer "b" is shadowed once the answers are merged.
        let other = row(&[("b", 4)]);
        let merged = merge_rows(&cmp(), vec![slice_row(&cmp(), &r, &f, 0), other]);
        assert_eq!(names(&live_cells(&cmp(), &merged, &f, 0)), vec![b"a", b"c"]);
    }

    #[test]
    fn merge_reconciles() {
        let a = row(&[("a", 1), ("b", 1)]);
        let mut b = row(&[("b", 2), ("c", 1)]);
        b.cells[0].value = b"new".to_vec();
        let m = merge_rows(&cmp(), vec![a, b]);
        assert_eq!(names(&m.cells), vec![b"a", b"b", b"c"]);
        assert_eq!(m.cells[1].value, b"new");
    }

    #[test]
    fn compaction_purges_only_after_gc_grace() {
        let mut r = row(&[("a", 1)]);
        r.cells.push(Cell::tombstone("b", 2, 100));
        let kept = compact_row(&cmp(), r.clone(), 200, 100, true);
        assert_eq!(kept.cells.len(), 2);
        let purged = compact_row(&cmp(), r, 200, 101, true);
        assert_eq!(names(&purged.cells), vec![b"a"]);
    }
}
