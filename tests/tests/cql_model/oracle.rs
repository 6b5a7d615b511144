//! The model: 3.11's rules over an in-memory copy of each table (row markers, deletions
//! by timestamp, one cell per set element).

use super::*;

#[derive(Clone, Debug, Default)]
pub(crate) struct RowState {
    /// Timestamp of the newest row marker (0: none).
    pub(crate) marker: i64,
    /// Per regular column: the newest write's timestamp and value (`None`: a tombstone).
    pub(crate) cells: BTreeMap<usize, (i64, Option<V>)>,
    /// Per `set<int>` column: its elements, one cell each.
    pub(crate) sets: BTreeMap<usize, SetState>,
}

/// A non-frozen set as 3.11 keeps it: a deletion of the whole collection (a write of the
/// whole set deletes what was there one microsecond before it), and one cell per element.
#[derive(Clone, Debug, Default)]
pub(crate) struct SetState {
    pub(crate) cleared: i64,
    /// Element → (timestamp, live); of a live cell and a tombstone of one timestamp, the
    /// tombstone wins.
    pub(crate) elements: BTreeMap<i32, (i64, bool)>,
}

impl SetState {
    pub(crate) fn put(&mut self, element: i32, ts: i64, live: bool) {
        let cell = self.elements.entry(element).or_insert((0, false));
        if ts > cell.0 || (ts == cell.0 && !live) {
            *cell = (ts, live);
        }
    }

    /// The live elements, once row deletions up to `deleted` are applied.
    pub(crate) fn visible(&self, deleted: i64) -> Option<V> {
        let live: Vec<i32> = self
            .elements
            .iter()
            .filter(|(_, (ts, live))| *live && *ts > self.cleared && *ts > deleted)
            .map(|(e, _)| *e)
            .collect();
        (!live.is_empty()).then(|| int_set(&live))
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct PartitionState {
    /// Deletions of rows (the partition's included) and their timestamps.
    pub(crate) deletions: Vec<(Slice, i64)>,
    pub(crate) rows: BTreeMap<Vec<V>, RowState>,
}

pub(crate) struct Model {
    pub(crate) schema: Schema,
    pub(crate) partitions: BTreeMap<Vec<V>, PartitionState>,
}

impl Model {
    pub(crate) fn apply(&mut self, op: &Op, ts: i64) {
        let types = self.schema.regular.clone();
        let write = |row: &mut RowState, values: &[Option<Option<V>>]| {
            for (i, v) in values.iter().enumerate() {
                if types[i] == Ty::IntSet {
                    let Some(v) = v else { continue };
                    let set = row.sets.entry(i).or_default();
                    set.cleared = set.cleared.max(ts - 1);
                    for e in v.as_ref().map(|v| set_elements(v).unwrap()).unwrap_or_default() {
                        set.put(e, ts, true);
                    }
                    continue;
                }
                if let Some(v) = v {
                    let cell = row.cells.entry(i).or_insert((0, None));
                    if ts > cell.0 {
                        *cell = (ts, v.clone());
                    }
                }
            }
        };
        match op {
            Op::Insert { pk, ck, values, .. } => {
                let row = self.partitions.entry(pk.clone()).or_default().rows.entry(ck.clone()).or_default();
                row.marker = row.marker.max(ts);
                write(row, values);
            }
            Op::Update { pk, ck, values, .. } => {
                let row = self.partitions.entry(pk.clone()).or_default().rows.entry(ck.clone()).or_default();
                write(row, values);
            }
            Op::Delete { pk, rows, .. } => {
                self.partitions.entry(pk.clone()).or_default().deletions.push((rows.clone(), ts));
            }
            Op::DeleteColumns { pk, ck, columns, .. } => {
                let row = self.partitions.entry(pk.clone()).or_default().rows.entry(ck.clone()).or_default();
                let tombstones: Vec<Option<Option<V>>> = (0..self.schema.regular.len())
                    .map(|i| (columns.contains(&i) && types[i] != Ty::IntSet).then_some(None))
                    .collect();
                write(row, &tombstones);
                // DELETE of a whole collection: a deletion at the statement's timestamp.
                for i in columns.iter().filter(|i| types[**i] == Ty::IntSet) {
                    let set = row.sets.entry(*i).or_default();
                    set.cleared = set.cleared.max(ts);
                }
            }
            Op::SetElements { pk, ck, column, add, remove, .. } => {
                let row = self.partitions.entry(pk.clone()).or_default().rows.entry(ck.clone()).or_default();
                let set = row.sets.entry(*column).or_default();
                for e in add {
                    set.put(*e, ts, true);
                }
                for e in remove {
                    set.put(*e, ts, false);
                }
            }
            Op::Flush { .. } => {}
        }
    }

    /// The live rows of a partition as `SELECT *` shows them, in the table's order, with
    /// their clustering values.
    pub(crate) fn rows(&self, pk: &[V]) -> Vec<(Vec<V>, Row)> {
        let Some(p) = self.partitions.get(pk) else { return Vec::new() };
        let mut out = Vec::new();
        for (ck, row) in &p.rows {
            let deleted = p
                .deletions
                .iter()
                .filter(|(rows, _)| rows.matches(&self.schema, ck))
                .map(|(_, ts)| *ts)
                .max()
                .unwrap_or(0);
            let regular: Row = (0..self.schema.regular.len())
                .map(|i| match (self.schema.regular[i], row.cells.get(&i)) {
                    (Ty::IntSet, _) => row.sets.get(&i).and_then(|set| set.visible(deleted)),
                    (_, Some((ts, v))) if *ts > deleted => v.clone(),
                    _ => None,
                })
                .collect();
            if row.marker > deleted || regular.iter().any(Option::is_some) {
                let mut values: Row = pk.iter().cloned().map(Some).collect();
                values.extend(ck.iter().cloned().map(Some));
                values.extend(regular);
                out.push((ck.clone(), values));
            }
        }
        out.sort_by(|a, b| self.schema.compare_clustering(&a.0, &b.0));
        out
    }

    pub(crate) fn all_rows(&self) -> Vec<Row> {
        self.partitions.keys().flat_map(|pk| self.rows(pk)).map(|(_, r)| r).collect()
    }
}

pub(crate) fn in_bounds(ty: Ty, v: &[u8], lower: &Bound, upper: &Bound) -> bool {
    let above = lower.as_ref().is_none_or(|(l, inclusive)| match ty.compare(v, l) {
        Ordering::Greater => true,
        Ordering::Equal => *inclusive,
        Ordering::Less => false,
    });
    let below = upper.as_ref().is_none_or(|(u, inclusive)| match ty.compare(v, u) {
        Ordering::Less => true,
        Ordering::Equal => *inclusive,
        Ordering::Greater => false,
    });
    above && below
}

pub(crate) fn bound_clauses(column: &str, ty: Ty, lower: &Bound, upper: &Bound) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((v, inclusive)) = lower {
        out.push(format!("{column} {} {}", if *inclusive { ">=" } else { ">" }, ty.literal(v)));
    }
    if let Some((v, inclusive)) = upper {
        out.push(format!("{column} {} {}", if *inclusive { "<=" } else { "<" }, ty.literal(v)));
    }
    out
}
