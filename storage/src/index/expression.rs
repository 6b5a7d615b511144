//! Index expressions (Thrift's `IndexExpression`, Cassandra's `IndexExpression`/`RowFilter`): what
//! a row must hold to be returned by an index query, and the check of one row against them.
//!
//! A row satisfies an expression when it holds a live column of that name whose value compares
//! to the expression's value as the operator asks, by the column's validator (so `LongType`
//! values compare as numbers). A row without the column satisfies no expression on it.

use std::cmp::Ordering;

use crate::data::{Cell, Row};
use crate::filter::is_shadowed;
use crate::schema::CfMetadata;

/// Thrift's `IndexOperator`, with its wire numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexOperator {
    Eq,
    Gte,
    Gt,
    Lte,
    Lt,
}

impl IndexOperator {
    /// The operator of Thrift's enum value (EQ 0, GTE 1, GT 2, LTE 3, LT 4).
    pub fn from_thrift(value: i32) -> Option<IndexOperator> {
        Some(match value {
            0 => IndexOperator::Eq,
            1 => IndexOperator::Gte,
            2 => IndexOperator::Gt,
            3 => IndexOperator::Lte,
            4 => IndexOperator::Lt,
            _ => return None,
        })
    }

    pub fn to_thrift(self) -> i32 {
        match self {
            IndexOperator::Eq => 0,
            IndexOperator::Gte => 1,
            IndexOperator::Gt => 2,
            IndexOperator::Lte => 3,
            IndexOperator::Lt => 4,
        }
    }

    /// True when a column value that compares to the expression's value as `order` satisfies
    /// this operator.
    pub fn accepts(self, order: Ordering) -> bool {
        match self {
            IndexOperator::Eq => order == Ordering::Equal,
            IndexOperator::Gte => order != Ordering::Less,
            IndexOperator::Gt => order == Ordering::Greater,
            IndexOperator::Lte => order != Ordering::Greater,
            IndexOperator::Lt => order == Ordering::Less,
        }
    }
}

/// `column op value`: one condition of an index clause or a row filter.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IndexExpression {
    pub column: Vec<u8>,
    pub op: IndexOperator,
    pub value: Vec<u8>,
}

impl IndexExpression {
    pub fn new(column: impl Into<Vec<u8>>, op: IndexOperator, value: impl Into<Vec<u8>>) -> IndexExpression {
        IndexExpression { column: column.into(), op, value: value.into() }
    }
}

/// The live version of column `name` in a merged row, if any: present, not expired and not
/// shadowed by the row's tombstones. Standard column families only (the cells are sorted by
/// the comparator, which `meta` carries).
pub fn live_cell<'r>(meta: &CfMetadata, row: &'r Row, name: &[u8], now: i32) -> Option<&'r Cell> {
    let i = row.cells.binary_search_by(|c| meta.cmp.compare(&c.name, name)).ok()?;
    let cell = row.cells.get(i)?;
    (cell.is_live(now) && !is_shadowed(&meta.cmp, row, cell)).then_some(cell)
}

/// True when the row satisfies `expression`.
pub fn satisfies(meta: &CfMetadata, row: &Row, expression: &IndexExpression, now: i32) -> bool {
    live_cell(meta, row, &expression.column, now).is_some_and(|cell| {
        let order = meta.validators.value(&expression.column).compare(&cell.value, &expression.value);
        expression.op.accepts(order)
    })
}

/// True when the row satisfies every expression (an empty list accepts every row).
pub fn satisfies_all(meta: &CfMetadata, row: &Row, expressions: &[IndexExpression], now: i32) -> bool {
    expressions.iter().all(|e| satisfies(meta, row, e, now))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Cell, DeletionTime};
    use crate::schema::{CfDef, ColumnDef};

    fn meta() -> CfMetadata {
        let mut def = CfDef::new("ks", "cf");
        def.comparator_type = "org.apache.cassandra.db.marshal.UTF8Type".into();
        def.column_metadata.push(ColumnDef {
            name: b"age".to_vec(),
            validation_class: "org.apache.cassandra.db.marshal.LongType".into(),
            index_type: None,
            index_name: None,
            index_options: Default::default(),
        });
        CfMetadata::new(def).expect("valid definition")
    }

    fn long(v: i64) -> Vec<u8> {
        v.to_be_bytes().to_vec()
    }

    fn row(age: i64, name: &str) -> Row {
        Row { cells: vec![Cell::live("age", long(age), 10), Cell::live("name", name.as_bytes(), 10)], ..Row::default() }
    }

    #[test]
    fn operators_compare_by_the_column_validator() {
        let m = meta();
        // -1 sorts after 5 as bytes but before it as a long.
        let r = row(-1, "ann");
        let e = |op, v: i64| IndexExpression::new("age", op, long(v));
        assert!(satisfies(&m, &r, &e(IndexOperator::Lt, 5), 0));
        assert!(satisfies(&m, &r, &e(IndexOperator::Lte, -1), 0));
        assert!(satisfies(&m, &r, &e(IndexOperator::Eq, -1), 0));
        assert!(!satisfies(&m, &r, &e(IndexOperator::Gt, -1), 0));
        assert!(satisfies(&m, &r, &e(IndexOperator::Gte, -1), 0));
        assert!(!satisfies(&m, &r, &e(IndexOperator::Gt, 5), 0));
        assert!(satisfies_all(
            &m,
            &r,
            &[e(IndexOperator::Gt, -5), IndexExpression::new("name", IndexOperator::Eq, "ann")],
            0
        ));
        assert!(!satisfies_all(
            &m,
            &r,
            &[e(IndexOperator::Gt, -5), IndexExpression::new("name", IndexOperator::Eq, "bob")],
            0
        ));
        assert!(satisfies_all(&m, &r, &[], 0));
    }

    #[test]
    fn missing_expired_and_deleted_columns_satisfy_nothing() {
        let m = meta();
        let eq = IndexExpression::new("name", IndexOperator::Eq, "ann");
        assert!(!satisfies(&m, &Row::default(), &eq, 0));
        let expiring = Row { cells: vec![Cell::expiring("name", "ann", 10, 5, 100)], ..Row::default() };
        assert!(satisfies(&m, &expiring, &eq, 104));
        assert!(!satisfies(&m, &expiring, &eq, 105));
        let mut deleted = row(1, "ann");
        deleted.deletion = DeletionTime::new(10, 0);
        assert!(!satisfies(&m, &deleted, &eq, 0), "a row deletion at the same timestamp wins");
        let tombstone = Row { cells: vec![Cell::tombstone("name", 10, 0)], ..Row::default() };
        assert!(!satisfies(&m, &tombstone, &eq, 0));
    }

    #[test]
    fn thrift_operator_numbers_round_trip() {
        for op in [IndexOperator::Eq, IndexOperator::Gte, IndexOperator::Gt, IndexOperator::Lte, IndexOperator::Lt] {
            assert_eq!(IndexOperator::from_thrift(op.to_thrift()), Some(op));
        }
        assert_eq!(IndexOperator::from_thrift(5), None);
        assert_eq!(IndexOperator::from_thrift(-1), None);
    }
}
