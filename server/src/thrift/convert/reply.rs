//! The successful replies of `get`, `get_slice` and `multiget_slice`, written straight from the
//! coordinator's cells into the output buffer.
//!
//! Why it exists: going through [`to_thrift_columns`] and the generated `*Result` writers built a
//! `ColumnOrSuperColumn` per cell only to walk it once and drop it. For a one-column `get_slice`
//! that was about 700 of the 8,227 instructions the server spent per request
//! (`bench/instructions-sibyl.sh`, callgrind: conversion 225, writing 328, dropping 151). Here the
//! same bytes come from the cells without the structs in between. The tests below hold every
//! reply to the bytes of the generated path; errors still take that path (`dispatch`).
//!
//! The layout, Thrift's strict binary protocol (big-endian throughout, as every Thrift integer):
//!
//! ```text
//! field     type:u8 id:i16 value          a struct is its fields, then STOP (a 0 byte)
//! binary    len:i32 bytes
//! list      element-type:u8 count:i32 elements
//! map       key-type:u8 value-type:u8 count:i32 (key value)*
//!
//! get_slice result      field 0 list<ColumnOrSuperColumn>, STOP
//! get result            field 0 ColumnOrSuperColumn, STOP
//! multiget_slice result field 0 map<binary, list<ColumnOrSuperColumn>>, STOP
//! ColumnOrSuperColumn   one of: 1 Column, 2 SuperColumn, 3 CounterColumn, 4 CounterSuperColumn
//! Column                1 name, 2 value, 3 timestamp:i64, [4 ttl:i32]
//! CounterColumn         1 name, 2 value:i64 (the counter's total)
//! (Counter)SuperColumn  1 name, 2 list<(Counter)Column>
//! ```

use std::collections::BTreeMap;

use model::data::{split_super, Cell, CellKind};
use thrift_idl as t;

use super::{super_column_len, to_thrift_columns};
use crate::thrift::wire::ttype::{I32, I64, LIST, MAP, STOP, STRING, STRUCT};

/// The live cells of one row as a read found them, and how the client asked to see them.
#[derive(Debug)]
pub struct Columns {
    pub cells: Vec<Cell>,
    /// The column family is a super column family.
    pub is_super: bool,
    /// The read was inside one super column: names lose their super column part.
    pub within_super: bool,
}

impl Columns {
    /// As Thrift structs, for the callers that need them (the 0.6 API).
    pub fn into_thrift(self) -> Vec<t::ColumnOrSuperColumn> {
        to_thrift_columns(self.cells, self.is_super, self.within_super)
    }

    /// Writes the body of a `CassandraGetSliceResult` holding these columns.
    pub fn write_get_slice_result(&self, out: &mut Vec<u8>) {
        field(out, LIST, 0);
        write_list(out, &self.cells, self.is_super, self.within_super);
        out.push(STOP);
    }
}

/// What `get` found: the first `ColumnOrSuperColumn` of a row that has at least one cell.
#[derive(Debug)]
pub struct Found(Columns);

impl Found {
    /// None when the row has no cells: the caller answers NotFoundException.
    pub fn new(columns: Columns) -> Option<Found> {
        (!columns.cells.is_empty()).then_some(Found(columns))
    }

    pub fn into_thrift(self) -> t::ColumnOrSuperColumn {
        // Never empty: `new` refuses a row without cells, and every cell makes one element.
        self.0.into_thrift().into_iter().next().unwrap_or_default()
    }

    /// Writes the body of a `CassandraGetResult` holding this column.
    pub fn write_get_result(&self, out: &mut Vec<u8>) {
        let Columns { cells, is_super, within_super } = &self.0;
        let first = cells.get(..first_group_len(cells, *is_super, *within_super)).unwrap_or_default();
        field(out, STRUCT, 0);
        write_elements(out, first, *is_super, *within_super);
        out.push(STOP);
    }
}

/// What `multiget_slice` found, by key (a key asked for twice answers once, as a map must).
#[derive(Debug)]
pub struct ColumnsByKey {
    pub rows: BTreeMap<Vec<u8>, Vec<Cell>>,
    pub is_super: bool,
    pub within_super: bool,
}

impl ColumnsByKey {
    /// The rows of `keys`, one per key in order (the coordinator answers in the order asked).
    pub fn new(keys: Vec<Vec<u8>>, rows: Vec<Vec<Cell>>, is_super: bool, within_super: bool) -> ColumnsByKey {
        ColumnsByKey { rows: keys.into_iter().zip(rows).collect(), is_super, within_super }
    }

    pub fn into_thrift(self) -> BTreeMap<Vec<u8>, Vec<t::ColumnOrSuperColumn>> {
        let (is_super, within_super) = (self.is_super, self.within_super);
        self.rows.into_iter().map(|(k, cells)| (k, to_thrift_columns(cells, is_super, within_super))).collect()
    }

    /// Writes the body of a `CassandraMultigetSliceResult` holding these rows.
    pub fn write_multiget_slice_result(&self, out: &mut Vec<u8>) {
        field(out, MAP, 0);
        out.extend_from_slice(&[STRING, LIST]);
        out.extend_from_slice(&(self.rows.len() as i32).to_be_bytes());
        for (key, cells) in &self.rows {
            binary(out, key);
            write_list(out, cells, self.is_super, self.within_super);
        }
        out.push(STOP);
    }
}

// Each append checks the vector's capacity and moves its length: the writers below put what
// they can of a struct's fixed bytes in one array, which made a column's writing half as long.
// Every field id here is below 256, so the first byte of its i16 is 0.

fn field(out: &mut Vec<u8>, ttype: u8, id: u8) {
    out.extend_from_slice(&[ttype, 0, id]);
}

fn binary(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// A binary field: its header and length in one append, then its bytes.
fn binary_field(out: &mut Vec<u8>, id: u8, bytes: &[u8]) {
    let [a, b, c, d] = (bytes.len() as i32).to_be_bytes();
    out.extend_from_slice(&[STRING, 0, id, a, b, c, d]);
    out.extend_from_slice(bytes);
}

/// Starts a list of structs whose length is not known yet; [`end_list`] fills it in.
fn begin_list(out: &mut Vec<u8>) -> usize {
    out.push(STRUCT);
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    at
}

fn end_list(out: &mut [u8], at: usize, len: i32) {
    if let Some(slot) = out.get_mut(at..at + 4) {
        slot.copy_from_slice(&len.to_be_bytes());
    }
}

/// A `list<ColumnOrSuperColumn>` of `cells`.
fn write_list(out: &mut Vec<u8>, cells: &[Cell], is_super: bool, within_super: bool) {
    let at = begin_list(out);
    let len = write_elements(out, cells, is_super, within_super);
    end_list(out, at, len);
}

/// How many cells from the first make up the first `ColumnOrSuperColumn` of a row.
fn first_group_len(cells: &[Cell], is_super: bool, within_super: bool) -> usize {
    if is_super && !within_super {
        super_column_len(cells)
    } else {
        cells.len().min(1)
    }
}

/// Writes the `ColumnOrSuperColumn` structs of `cells`, as [`to_thrift_columns`] would make
/// them, and returns how many there are.
fn write_elements(out: &mut Vec<u8>, cells: &[Cell], is_super: bool, within_super: bool) -> i32 {
    if !is_super || within_super {
        for c in cells {
            let name = if is_super { split_super(&c.name).1 } else { &c.name };
            let id = if c.kind == CellKind::Counter { 3 } else { 1 };
            field(out, STRUCT, id);
            write_column(out, c, name);
            out.push(STOP);
        }
        return cells.len() as i32;
    }
    let mut len = 0;
    let mut rest = cells;
    while let Some(first) = rest.first() {
        let (sc, _) = split_super(&first.name);
        let counter = first.kind == CellKind::Counter;
        let (group, after) = rest.split_at(super_column_len(rest));
        field(out, STRUCT, if counter { 4 } else { 2 });
        binary_field(out, 1, sc);
        let [a, b, c, d] = (group.len() as i32).to_be_bytes();
        out.extend_from_slice(&[LIST, 0, 2, STRUCT, a, b, c, d]);
        for c in group {
            write_column(out, c, split_super(&c.name).1);
        }
        out.extend_from_slice(&[STOP, STOP]);
        len += 1;
        rest = after;
    }
    len
}

/// One cell as a `Column`, or a `CounterColumn` for a counter, named `name`.
fn write_column(out: &mut Vec<u8>, c: &Cell, name: &[u8]) {
    binary_field(out, 1, name);
    if c.kind == CellKind::Counter {
        let [v0, v1, v2, v3, v4, v5, v6, v7] = model::counter::total(&c.value).to_be_bytes();
        out.extend_from_slice(&[I64, 0, 2, v0, v1, v2, v3, v4, v5, v6, v7, STOP]);
        return;
    }
    binary_field(out, 2, &c.value);
    let [t0, t1, t2, t3, t4, t5, t6, t7] = c.timestamp.to_be_bytes();
    match c.kind {
        CellKind::Expiring { ttl, .. } => {
            let [l0, l1, l2, l3] = ttl.to_be_bytes();
            let tail = [I64, 0, 3, t0, t1, t2, t3, t4, t5, t6, t7, I32, 0, 4, l0, l1, l2, l3, STOP];
            out.extend_from_slice(&tail);
        }
        _ => out.extend_from_slice(&[I64, 0, 3, t0, t1, t2, t3, t4, t5, t6, t7, STOP]),
    }
}

#[cfg(test)]
mod tests {
    use model::data::compose_super;
    use proptest::prelude::*;
    use thrift::protocol::TMessageType;

    use super::*;
    use crate::thrift::dispatch::write_message;

    /// A whole reply message as the generated path writes it.
    fn generated(write: impl FnOnce(&mut crate::thrift::dispatch::Output<'_>) -> thrift::Result<()>) -> Vec<u8> {
        let mut out = Vec::new();
        write_message("m", TMessageType::Reply, 9, &mut out, write);
        out
    }

    /// A whole reply message with a body written here.
    fn direct(write: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut out = Vec::new();
        write_message("m", TMessageType::Reply, 9, &mut out, |o| {
            write(o.buffer());
            Ok(())
        });
        out
    }

    fn get_slice_both(cells: Vec<Cell>, is_super: bool, within_super: bool) -> (Vec<u8>, Vec<u8>) {
        let old = t::CassandraGetSliceResult {
            result_value: Some(to_thrift_columns(cells.clone(), is_super, within_super)),
            ..Default::default()
        };
        let columns = Columns { cells, is_super, within_super };
        (generated(|o| old.write_to_out_protocol(o)), direct(|out| columns.write_get_slice_result(out)))
    }

    fn get_both(cells: Vec<Cell>, is_super: bool, within_super: bool) -> Option<(Vec<u8>, Vec<u8>)> {
        let old = to_thrift_columns(cells.clone(), is_super, within_super).into_iter().next();
        let found = Found::new(Columns { cells: cells.clone(), is_super, within_super });
        assert_eq!(old.is_some(), found.is_some(), "NotFound exactly when the generated path finds nothing");
        let (old, found) = (old?, found?);
        let old_reply = t::CassandraGetResult { result_value: Some(old.clone()), ..Default::default() };
        let bytes = (generated(|o| old_reply.write_to_out_protocol(o)), direct(|out| found.write_get_result(out)));
        let again = Found::new(Columns { cells, is_super, within_super }).map(Found::into_thrift);
        assert_eq!(again, Some(old), "the 0.6 API's struct is the generated path's");
        Some(bytes)
    }

    fn cell(name: Vec<u8>, value: Vec<u8>, timestamp: i64, kind: CellKind) -> Cell {
        Cell { name, value, timestamp, kind }
    }

    fn kind() -> impl Strategy<Value = CellKind> {
        prop_oneof![
            Just(CellKind::Live),
            (any::<i32>(), any::<i64>()).prop_map(|(ttl, expires_at)| CellKind::Expiring { ttl, expires_at }),
            any::<i32>().prop_map(|local_deletion_time| CellKind::Tombstone { local_deletion_time }),
            Just(CellKind::Counter),
            any::<i64>().prop_map(|delta| CellKind::CounterUpdate { delta }),
        ]
    }

    /// Names of super columns from a small set, so that neighbours share one; and now and then a
    /// name too short or too long for its length prefix.
    fn name() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            4 => (prop::sample::select(vec![&b""[..], b"a", b"sc"]), prop::collection::vec(any::<u8>(), 0..4))
                .prop_map(|(sc, sub)| compose_super(sc, &sub)),
            1 => prop::collection::vec(any::<u8>(), 0..5),
        ]
    }

    /// Values of any length, and counter contexts of one or two whole shards.
    fn value() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..40),
            prop::collection::vec(any::<u8>(), 32..=32),
            prop::collection::vec(any::<u8>(), 64..=64),
        ]
    }

    fn cells() -> impl Strategy<Value = Vec<Cell>> {
        prop::collection::vec((name(), value(), any::<i64>(), kind()).prop_map(|(n, v, ts, k)| cell(n, v, ts, k)), 0..8)
    }

    proptest! {
        #[test]
        fn get_slice_replies_are_the_generated_bytes(cells in cells(), is_super: bool, within_super: bool) {
            let (old, new) = get_slice_both(cells, is_super, within_super);
            prop_assert_eq!(old, new);
        }

        #[test]
        fn get_replies_are_the_generated_bytes(cells in cells(), is_super: bool, within_super: bool) {
            if let Some((old, new)) = get_both(cells, is_super, within_super) {
                prop_assert_eq!(old, new);
            }
        }

        #[test]
        fn multiget_slice_replies_are_the_generated_bytes(
            keys in prop::collection::vec(prop::sample::select(vec![&b""[..], b"k1", b"k2", b"k3"]), 0..6),
            rows in prop::collection::vec(cells(), 0..6),
            is_super: bool,
            within_super: bool,
        ) {
            let keys: Vec<Vec<u8>> = keys.into_iter().map(<[u8]>::to_vec).collect();
            let old: BTreeMap<Vec<u8>, Vec<t::ColumnOrSuperColumn>> = keys
                .iter()
                .cloned()
                .zip(rows.iter().cloned())
                .map(|(k, cells)| (k, to_thrift_columns(cells, is_super, within_super)))
                .collect();
            let old = t::CassandraMultigetSliceResult { result_value: Some(old), ..Default::default() };
            let new = ColumnsByKey::new(keys, rows, is_super, within_super);
            prop_assert_eq!(
                generated(|o| old.write_to_out_protocol(o)),
                direct(|out| new.write_multiget_slice_result(out))
            );
        }
    }

    #[test]
    fn counter_and_plain_cells_of_one_super_column_answer_apart() {
        let shard = vec![7; 32];
        let cells = vec![
            cell(compose_super(b"sc", b"a"), b"v".to_vec(), 1, CellKind::Live),
            cell(compose_super(b"sc", b"b"), shard.clone(), 2, CellKind::Counter),
            cell(compose_super(b"sc", b"c"), shard, 3, CellKind::Counter),
            cell(compose_super(b"sc", b"d"), b"w".to_vec(), 4, CellKind::Expiring { ttl: 60, expires_at: 99 }),
        ];
        assert_eq!(to_thrift_columns(cells.clone(), true, false).len(), 3);
        let (old, new) = get_slice_both(cells.clone(), true, false);
        assert_eq!(old, new);
        let (old, new) = get_both(cells, true, false).expect("a row with cells is found");
        assert_eq!(old, new);
    }

    #[test]
    fn an_empty_row_is_not_found_and_an_empty_slice() {
        assert!(get_both(Vec::new(), false, false).is_none());
        let (old, new) = get_slice_both(Vec::new(), false, false);
        assert_eq!(old, new);
    }
}
