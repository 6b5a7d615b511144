//! Writes: Thrift columns, mutations and deletions as the engine's cells and tombstones, each
//! checked against the column family's metadata as it is converted.

use std::collections::BTreeMap;

use model::data::{compose_super, now_micros, Cell, DeletionTime, RangeTombstone, Row};
use model::filter::insert_cell;
use model::mutation::RowMutation;
use model::schema::CfMetadata;
use thrift_idl as t;

use crate::thrift::error::{ire, TResult};
use crate::thrift::expiry::column_ttl;
use crate::thrift::validate::{
    check_super_column_name, name_type, validate_key, validate_key_type, validate_name, validate_slice_range,
    validate_value,
};

/// The cell a Thrift Column becomes, after validation; `super_column` for a subcolumn.
pub fn cell_of(meta: &CfMetadata, super_column: Option<&[u8]>, c: t::Column, now: i32) -> TResult<Cell> {
    column_cell(meta, super_column, c.name, c.value, c.timestamp, c.ttl, now)
}

/// The cell a column's parts become, after validation: owned, as a decoded `Column` has them,
/// or borrowed from the message ([`super::batch`]).
pub(super) fn column_cell<B: AsRef<[u8]> + Into<Vec<u8>>>(
    meta: &CfMetadata,
    super_column: Option<&[u8]>,
    name: B,
    value: Option<B>,
    timestamp: Option<i64>,
    ttl: Option<i32>,
    now: i32,
) -> TResult<Cell> {
    validate_name(name.as_ref(), name_type(meta, super_column))?;
    let value = value.ok_or_else(|| ire("Column value is required"))?;
    let timestamp = timestamp.ok_or_else(|| ire("Column timestamp is required"))?;
    validate_value(meta, name.as_ref(), value.as_ref())?;
    let name = match super_column {
        Some(sc) => compose_super(sc, name.as_ref()),
        None => name.into(),
    };
    Ok(match column_ttl(meta, ttl, now)? {
        0 => Cell::live(name, value.into(), timestamp),
        ttl => Cell::expiring(name, value.into(), timestamp, ttl, now),
    })
}

/// A plain column needs a standard column family (a super one takes super columns).
pub(super) fn not_super(meta: &CfMetadata) -> TResult<()> {
    if meta.is_super() {
        return Err(ire(format!(
            "Column family {} is a super column family: a mutation must carry a super_column",
            meta.name()
        )));
    }
    Ok(())
}

/// The increment a Thrift CounterColumn becomes (a counter update for the counter's leader),
/// after validation; `super_column` for a subcolumn. Counters carry no client timestamp: the
/// increment is stamped with this node's clock.
pub fn counter_cell_of(meta: &CfMetadata, super_column: Option<&[u8]>, c: t::CounterColumn) -> TResult<Cell> {
    validate_counter_cf(meta)?;
    validate_name(&c.name, name_type(meta, super_column))?;
    let name = match super_column {
        Some(sc) => compose_super(sc, &c.name),
        None => c.name,
    };
    Ok(Cell::counter_update(name, c.value, now_micros()))
}

/// The super column of a mutation's (counter) super column: 3.11 checks it as the parent of each
/// of its columns, so an empty or overlong one is refused in its "supercolumn" words.
fn validate_super_column(meta: &CfMetadata, name: &[u8]) -> TResult<()> {
    check_super_column_name(name)?;
    validate_name(name, meta.cmp.name_type())
}

/// Counter operations need a counter column family (Cassandra's words).
pub fn validate_counter_cf(meta: &CfMetadata) -> TResult<()> {
    if meta.validators.default_value.is_counter() {
        Ok(())
    } else {
        Err(ire(format!("invalid operation for non commutative table {}", meta.name())))
    }
}

/// Operations other than counter ones need a column family that is not a counter one (remove;
/// Cassandra's words).
pub fn validate_non_counter_cf(meta: &CfMetadata) -> TResult<()> {
    if meta.validators.default_value.is_counter() {
        Err(ire(format!("invalid operation for commutative table {}", meta.name())))
    } else {
        Ok(())
    }
}

/// Adds a Thrift Mutation (from batch_mutate) to `row`.
pub fn add_mutation(meta: &CfMetadata, row: &mut Row, m: t::Mutation, now: i32) -> TResult<()> {
    // Matched in place: a tuple of the two parts cost one more copy of them (some 300 bytes)
    // on every mutation.
    match m {
        t::Mutation { column_or_supercolumn: Some(cosc), deletion: None } => {
            let set = [
                cosc.column.is_some(),
                cosc.super_column.is_some(),
                cosc.counter_column.is_some(),
                cosc.counter_super_column.is_some(),
            ];
            if set.iter().filter(|b| **b).count() != 1 {
                return Err(ire("ColumnOrSuperColumn must have one (and only one) of column, super_column, counter and counter_super_column"));
            }
            if let Some(c) = cosc.counter_column {
                if meta.is_super() {
                    return Err(ire(format!(
                        "Column family {} is a super column family: a mutation must carry a counter_super_column",
                        meta.name()
                    )));
                }
                row.cells.push(counter_cell_of(meta, None, c)?);
            }
            if let Some(sc) = cosc.counter_super_column {
                if !meta.is_super() {
                    return Err(ire(format!(
                        "Column family {} is not a super column family: counter_super_column is invalid",
                        meta.name()
                    )));
                }
                validate_super_column(meta, &sc.name)?;
                for c in sc.columns {
                    row.cells.push(counter_cell_of(meta, Some(&sc.name), c)?);
                }
            }
            if let Some(c) = cosc.column {
                not_super(meta)?;
                row.cells.push(cell_of(meta, None, c, now)?);
            }
            if let Some(sc) = cosc.super_column {
                if !meta.is_super() {
                    return Err(ire(format!(
                        "Column family {} is not a super column family: super_column is invalid",
                        meta.name()
                    )));
                }
                validate_super_column(meta, &sc.name)?;
                for c in sc.columns {
                    row.cells.push(cell_of(meta, Some(&sc.name), c, now)?);
                }
            }
            Ok(())
        }
        t::Mutation { column_or_supercolumn: None, deletion: Some(d) } => {
            // A counter deletion is stamped with this node's clock whatever the client sent, as
            // every other counter operation (3.11's validateDeletion).
            let timestamp = match d.timestamp {
                _ if meta.validators.default_value.is_counter() => now_micros(),
                Some(ts) => ts,
                None => {
                    return Err(ire(format!(
                        "Deletion timestamp is not optional for non commutative table {}",
                        meta.name()
                    )))
                }
            };
            if d.super_column.is_some() && !meta.is_super() {
                return Err(ire(format!(
                    "Deletion of super columns is not possible on a standard table (KeySpace={}, table={})",
                    meta.keyspace(),
                    meta.name()
                )));
            }
            add_deletion(meta, row, d.super_column.as_deref(), d.predicate.as_ref(), timestamp, now)
        }
        _ => Err(ire("Mutation must have one and only one of column_or_supercolumn or deletion")),
    }
}

/// Turns a deletion (remove, or a batch Deletion) into tombstones in `row`.
pub fn add_deletion(
    meta: &CfMetadata,
    row: &mut Row,
    super_column: Option<&[u8]>,
    predicate: Option<&t::SlicePredicate>,
    timestamp: i64,
    now: i32,
) -> TResult<()> {
    let deletion = DeletionTime::new(timestamp, now);
    let whole_super =
        |sc: &[u8]| RangeTombstone { start: compose_super(sc, b""), end: compose_super(sc, b""), deletion };
    if let Some(sc) = super_column {
        validate_name(sc, meta.cmp.name_type())?;
    }
    let Some(p) = predicate else {
        match super_column {
            Some(sc) => row.range_tombstones.push(whole_super(sc)),
            None => row.deletion = row.deletion.max(deletion),
        }
        return Ok(());
    };
    // A Deletion's predicate may hold names, a range or both (3.11's validateSlicePredicate):
    // with both, the range is checked and the names are deleted.
    let names_type = name_type(meta, super_column);
    if p.column_names.is_none() && p.slice_range.is_none() {
        return Err(ire("A SlicePredicate must be given a list of Columns, a SliceRange, or both"));
    }
    if let Some(r) = &p.slice_range {
        validate_slice_range(names_type, r)?;
    }
    if let Some(names) = &p.column_names {
        for n in names {
            match (meta.is_super(), super_column) {
                (true, Some(sc)) => {
                    validate_name(n, names_type)?;
                    row.cells.push(Cell::tombstone(compose_super(sc, n), timestamp, now));
                }
                (true, None) => {
                    validate_name(n, names_type)?;
                    row.range_tombstones.push(whole_super(n));
                }
                (false, _) => {
                    validate_name(n, names_type)?;
                    row.cells.push(Cell::tombstone(n.clone(), timestamp, now));
                }
            }
        }
        return Ok(());
    }
    let Some(r) = &p.slice_range else {
        return Ok(());
    };
    if super_column.is_some() {
        // 3.11 keeps a super column's subcolumns as one map and has no range tombstone inside it:
        // it refuses the range (CassandraServer.deleteColumnOrSuperColumn), in these words.
        return Err(ire("Cannot delete a range of subcolumns in a super column"));
    }
    // 3.11 deletes from `start` to `finish` as given, whatever `reversed` says: a reversed
    // range (finish before start) covers no column, and deletes nothing.
    if r.reversed && !r.start.is_empty() && !r.finish.is_empty() && names_type.compare(&r.start, &r.finish).is_gt() {
        return Ok(());
    }
    let (start, end) = match (meta.is_super(), super_column) {
        (true, _) => (
            if r.start.is_empty() { Vec::new() } else { compose_super(&r.start, b"") },
            if r.finish.is_empty() { Vec::new() } else { compose_super(&r.finish, b"") },
        ),
        (false, _) => (r.start.clone(), r.finish.clone()),
    };
    row.range_tombstones.push(RangeTombstone { start, end, deletion });
    Ok(())
}

/// Cells of one update must be sorted by the comparator; a client may send them in any order.
pub fn sort_cells(meta: &CfMetadata, row: &mut Row) {
    // Names already strictly ascending (one cell, or a client that sends them in order) are
    // what the insertions below would leave: no new list is built for them.
    if row.cells.windows(2).all(|w| meta.cmp.compare(&w[0].name, &w[1].name).is_lt()) {
        return;
    }
    let cells = std::mem::take(&mut row.cells);
    row.cells.reserve(cells.len());
    for c in cells {
        insert_cell(&meta.cmp, &mut row.cells, c);
    }
}

/// Every column family a decoded batch_mutate map names, row by row.
pub fn families_of(mutation_map: &BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>>) -> impl Iterator<Item = &str> {
    mutation_map.values().flat_map(|by_cf| by_cf.keys().map(String::as_str))
}

/// A batch_mutate's map (key → column family → mutations) as row mutations of `keyspace`, every
/// one validated before any is returned; `metadata` looks a column family up.
pub fn row_mutations(
    keyspace: &str,
    mutation_map: BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>>,
    metadata: impl Fn(&str) -> TResult<std::sync::Arc<CfMetadata>>,
    now: i32,
) -> TResult<Vec<RowMutation>> {
    let mut mutations = Vec::with_capacity(mutation_map.len());
    for (key, by_cf) in mutation_map {
        validate_key(&key)?;
        // The map's column families are distinct: each gets one update, pushed as it comes.
        let mut rm = RowMutation { keyspace: keyspace.to_string(), key, updates: Vec::with_capacity(by_cf.len()) };
        for (cf, list) in by_cf {
            let meta = metadata(&cf)?;
            validate_key_type(&meta, &rm.key)?;
            let mut row = Row { cells: Vec::with_capacity(list.len()), ..Row::new() };
            for m in list {
                add_mutation(&meta, &mut row, m, now)?;
            }
            sort_cells(&meta, &mut row);
            rm.updates.push((cf, row));
        }
        mutations.push(rm);
    }
    Ok(mutations)
}

#[cfg(test)]
mod tests {
    use model::schema::CfDef;

    use super::*;
    use crate::thrift::error::ThriftError;

    fn meta(default_validation_class: &str) -> CfMetadata {
        let mut def = CfDef::new("KS", "Cf");
        def.comparator_type = "org.apache.cassandra.db.marshal.UTF8Type".into();
        def.default_validation_class = format!("org.apache.cassandra.db.marshal.{default_validation_class}");
        CfMetadata::new(def).expect("valid definition")
    }

    fn why<T: std::fmt::Debug>(r: TResult<T>) -> String {
        match r {
            Err(ThriftError::Invalid(why)) => why,
            other => panic!("expected InvalidRequestException, got {other:?}"),
        }
    }

    fn range(start: &str, finish: &str, reversed: bool) -> t::SliceRange {
        t::SliceRange::new(start.as_bytes().to_vec(), finish.as_bytes().to_vec(), reversed, 100)
    }

    fn delete(meta: &CfMetadata, predicate: t::SlicePredicate) -> TResult<Row> {
        let mut row = Row::new();
        add_deletion(meta, &mut row, None, Some(&predicate), 10, 1)?;
        Ok(row)
    }

    #[test]
    fn a_deletion_with_names_and_a_range_deletes_the_names() {
        let row = delete(&meta("BytesType"), t::SlicePredicate::new(vec![b"b".to_vec()], range("a", "z", false)))
            .expect("names and a range together");
        assert_eq!(row.cells.iter().map(|c| c.name.clone()).collect::<Vec<_>>(), [b"b".to_vec()]);
        assert!(row.range_tombstones.is_empty());
        // The range is still checked.
        let bad = t::SlicePredicate::new(vec![b"b".to_vec()], range("z", "a", false));
        assert_eq!(
            why(delete(&meta("BytesType"), bad)),
            "range finish must come after start in the order of traversal"
        );
        assert_eq!(
            why(delete(&meta("BytesType"), t::SlicePredicate::new(None, None))),
            "A SlicePredicate must be given a list of Columns, a SliceRange, or both"
        );
    }

    #[test]
    fn a_reversed_deletion_range_covers_from_start_to_finish_as_given() {
        let m = meta("BytesType");
        // Finish before start, as a reversed read would take it: accepted, deletes nothing.
        let row = delete(&m, t::SlicePredicate::new(None, range("c", "a", true))).expect("reversed range");
        assert!(row.range_tombstones.is_empty() && row.cells.is_empty());
        assert_eq!(
            why(delete(&m, t::SlicePredicate::new(None, range("a", "c", true)))),
            "range finish must come after start in the order of traversal"
        );
        // An open bound still reaches the end it names.
        let row = delete(&m, t::SlicePredicate::new(None, range("c", "", true))).expect("open finish");
        assert_eq!(row.range_tombstones.len(), 1);
        let row = delete(&m, t::SlicePredicate::new(None, range("a", "c", false))).expect("forward range");
        assert_eq!(
            (row.range_tombstones[0].start.as_slice(), row.range_tombstones[0].end.as_slice()),
            (&b"a"[..], &b"c"[..])
        );
    }

    fn super_meta() -> CfMetadata {
        let mut def = CfDef::new("KS", "Sup");
        def.column_type = model::schema::ColumnType::Super;
        def.comparator_type = "org.apache.cassandra.db.marshal.UTF8Type".into();
        def.subcomparator_type = Some("org.apache.cassandra.db.marshal.UTF8Type".into());
        CfMetadata::new(def).expect("valid definition")
    }

    #[test]
    fn a_range_of_subcolumns_is_not_deleted() {
        let m = super_meta();
        let mut row = Row::new();
        let range_in_sc = t::SlicePredicate::new(None, range("a", "c", false));
        assert_eq!(
            why(add_deletion(&m, &mut row, Some(b"sc"), Some(&range_in_sc), 10, 1)),
            "Cannot delete a range of subcolumns in a super column"
        );
        // The range is checked first, as 3.11 validates the Deletion before converting it.
        let backwards = t::SlicePredicate::new(None, range("c", "a", false));
        assert_eq!(
            why(add_deletion(&m, &mut row, Some(b"sc"), Some(&backwards), 10, 1)),
            "range finish must come after start in the order of traversal"
        );
        // Names within the super column, with or without a range beside them, and a range of
        // whole super columns, are deleted.
        let names_and_range = t::SlicePredicate::new(vec![b"x".to_vec()], range("a", "c", false));
        add_deletion(&m, &mut row, Some(b"sc"), Some(&names_and_range), 10, 1).expect("names in a super column");
        assert_eq!(row.cells.len(), 1);
        add_deletion(&m, &mut row, None, Some(&range_in_sc), 10, 1).expect("a range of super columns");
        assert_eq!(row.range_tombstones.len(), 1);
    }

    #[test]
    fn a_counter_deletion_takes_this_nodes_clock() {
        let before = now_micros();
        let mut row = Row::new();
        let deletion = t::Mutation::new(None, t::Deletion::new(5, None::<Vec<u8>>, None::<t::SlicePredicate>));
        add_mutation(&meta("CounterColumnType"), &mut row, deletion, 1).expect("counter row deletion");
        assert!(row.deletion.marked_at >= before, "{:?}", row.deletion);
    }

    #[test]
    fn only_counter_operations_touch_counter_column_families() {
        assert_eq!(
            why(validate_non_counter_cf(&meta("CounterColumnType"))),
            "invalid operation for commutative table Cf"
        );
        assert!(validate_non_counter_cf(&meta("BytesType")).is_ok());
        assert_eq!(why(validate_counter_cf(&meta("BytesType"))), "invalid operation for non commutative table Cf");
    }

    #[test]
    fn a_batch_super_column_name_is_checked_as_its_columns_parent() {
        let mut def = CfDef::new("KS", "Sup");
        def.column_type = model::schema::ColumnType::Super;
        def.comparator_type = "org.apache.cassandra.db.marshal.LongType".into();
        def.subcomparator_type = Some("org.apache.cassandra.db.marshal.UTF8Type".into());
        let sup = CfMetadata::new(def).expect("valid definition");
        let insert = |sc: Vec<u8>, column: &[u8]| {
            let c = t::Column::new(column.to_vec(), b"v".to_vec(), 1i64, None::<i32>);
            let sc = t::SuperColumn::new(sc, vec![c]);
            let cosc = t::ColumnOrSuperColumn::new(
                None::<t::Column>,
                sc,
                None::<t::CounterColumn>,
                None::<t::CounterSuperColumn>,
            );
            add_mutation(&sup, &mut Row::new(), t::Mutation::new(cosc, None::<t::Deletion>), 1)
        };
        // 3.11's words: "supercolumn" for the parent's length, the comparator's reason alone for
        // a name it refuses, "column" for the column's own length.
        assert_eq!(why(insert(Vec::new(), b"c")), "supercolumn name must not be empty");
        assert_eq!(why(insert(vec![0; 65536], b"c")), "supercolumn name length must not be greater than 65535");
        assert_eq!(why(insert(vec![1, 2, 3], b"c")), "Expected 8 or 0 byte long (3)");
        assert_eq!(why(insert(vec![0; 8], b"")), "column name must not be empty");
        assert_eq!(why(insert(vec![0; 8], &[0xFF])), "String didn't validate.");
        assert!(insert(vec![0; 8], b"c").is_ok());
    }
}
