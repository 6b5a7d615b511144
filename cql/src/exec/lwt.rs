//! Lightweight transactions: `INSERT ... IF NOT EXISTS`, `UPDATE ... IF`, `DELETE ... IF`, as
//! one Paxos round of the coordinator on the row's partition, answered with 3.11's `[applied]`
//! row.

use std::cmp::Ordering;
use std::sync::Arc;

use cluster::consistency::ConsistencyLevel;
use cluster::coordinator::{CasCommand, CasCondition, CasOutcome};
use model::data::{now_seconds, Cell, Row};
use model::filter::{CountUnit, ReadFilter};
use model::marshal::AbstractType;

use super::markers::spec;
use super::values::{term_value, Binder, Value};
use super::{invalid, ColumnSpec, Context, CqlError, Outcome, ResultSet};
use crate::ast::{Condition, ConditionTarget, Conditions, InValues, Operator, Predicate};
use crate::schema::{Clustering, Column, ColumnKind, Layout, Table};

/// What the IF clause asks.
pub(crate) enum Check {
    /// `IF NOT EXISTS`: the row has no live cell.
    NotExists,
    /// `IF EXISTS`: it has one.
    Exists,
    /// `IF c op v AND ...`
    Columns(Vec<(Column, Operator, Vec<Value>)>),
}

/// Reads an IF clause (its markers take their values here, after the WHERE clause's).
pub(crate) fn check_of(table: &Table, conditions: &Conditions, binder: &mut Binder) -> Result<Check, CqlError> {
    let Conditions::Columns(list) = conditions else { return Ok(Check::Exists) };
    let mut out = Vec::new();
    for Condition { column, target, predicate } in list {
        let Some(c) = table.column(column.name()) else {
            return invalid(format!("Undefined column name {}", column.name()));
        };
        if c.kind != ColumnKind::Regular {
            return invalid(format!("PRIMARY KEY column '{}' cannot have IF conditions", c.name));
        }
        if !matches!(target, ConditionTarget::Column) {
            return invalid(format!("the condition {column}... on an element or field is not supported yet"));
        }
        match predicate {
            Predicate::Compare(op, term) => {
                if matches!(op, Operator::Contains | Operator::ContainsKey | Operator::Like) {
                    return invalid(format!("the {op} operator is not supported in IF conditions"));
                }
                let v = term_value(term, &c.ty, &c.name, binder)?;
                if v == Value::Unset {
                    return invalid(format!("Invalid 'unset' value in condition on {}", c.name));
                }
                out.push((c.clone(), *op, vec![v]));
            }
            Predicate::In(InValues::List(terms)) => {
                let mut vs = Vec::new();
                for t in terms {
                    vs.push(term_value(t, &c.ty, &c.name, binder)?);
                }
                out.push((c.clone(), Operator::Eq, vs));
            }
            // 3.11 binds the marker as a list of the column's type, named `in(c)`.
            Predicate::In(InValues::Marker(m)) => {
                let vs = super::restrict::in_marker_values(c, m, binder)?;
                out.push((c.clone(), Operator::Eq, vs.into_iter().map(Value::Bytes).collect()));
            }
        }
    }
    Ok(Check::Columns(out))
}

/// The current value of `column` among a row's live cells (a non-frozen collection's
/// elements as one value; none at all is null).
fn current(table: &Table, clustering: &Clustering, column: &Column, cells: &[Cell]) -> Option<Vec<u8>> {
    if column.ty.is_multi_cell() {
        let elements: Vec<Cell> = cells
            .iter()
            .filter(|c| {
                table.split_cell_name(&c.name).is_some_and(|n| {
                    n.element.is_some()
                        && n.column.as_deref() == Some(column.name.as_bytes())
                        && (column.is_static || n.clustering == *clustering)
                })
            })
            .cloned()
            .collect();
        let mut rows = Vec::new();
        super::select::group(table, 0, elements, now_seconds(), &mut rows);
        return rows.first().and_then(|r| r.cell(column, table.layout)).map(|c| c.value.clone());
    }
    let name = table.cell_name(clustering, Some(column));
    cells.iter().find(|c| c.name == name).map(|c| c.value.clone())
}

fn holds(table: &Table, clustering: &Clustering, check: &Check, cells: &[Cell], now: i32) -> bool {
    let live: Vec<Cell> = cells.iter().filter(|c| c.is_live(now)).cloned().collect();
    match check {
        Check::NotExists => live.is_empty(),
        Check::Exists => !live.is_empty(),
        Check::Columns(conditions) => conditions.iter().all(|(column, op, values)| {
            let now_value = current(table, clustering, column, &live);
            values.iter().any(|v| compare(column, *op, now_value.as_deref(), v.bytes()))
        }),
    }
}

/// 3.11's `ColumnCondition`: `=` and `!=` treat null as a value; an order against null is false.
fn compare(column: &Column, op: Operator, current: Option<&[u8]>, wanted: Option<&[u8]>) -> bool {
    match (op, current, wanted) {
        (Operator::Eq, a, b) => match (a, b) {
            (Some(a), Some(b)) => column.ty.compare(a, b) == Ordering::Equal,
            (a, b) => a.is_none() && b.is_none(),
        },
        (Operator::Neq, a, b) => !compare(column, Operator::Eq, a, b),
        (_, Some(a), Some(b)) => {
            let o = column.ty.compare(a, b);
            match op {
                Operator::Lt => o == Ordering::Less,
                Operator::Lte => o != Ordering::Greater,
                Operator::Gt => o == Ordering::Greater,
                Operator::Gte => o != Ordering::Less,
                _ => false,
            }
        }
        _ => false,
    }
}

/// A conditional write: `update` (one partition's row) if `check` holds for the row at
/// `clustering`.
pub(crate) struct Conditional {
    pub table: Arc<Table>,
    pub key: Vec<u8>,
    pub clustering: Clustering,
    pub check: Check,
    pub update: Row,
}

impl Conditional {
    pub async fn apply(self, ctx: &Context<'_>, cl: ConsistencyLevel) -> Result<Outcome, CqlError> {
        let Conditional { table, key, clustering, check, update } = self;
        apply(ctx, &table, key, clustering, check, update, cl).await
    }
}

async fn apply(
    ctx: &Context<'_>,
    table: &Table,
    key: Vec<u8>,
    clustering: Clustering,
    check: Check,
    update: Row,
    cl: ConsistencyLevel,
) -> Result<Outcome, CqlError> {
    if table.counter {
        return invalid("Conditional updates are not supported on counter tables");
    }
    let filter = match table.layout {
        Layout::Sparse if !clustering.is_empty() => ReadFilter::slice(
            table.prefix_bound(&clustering, false),
            table.prefix_bound(&clustering, true),
            false,
            usize::MAX,
            CountUnit::Cells,
        ),
        Layout::Dense { .. } | Layout::Super => {
            let name = table.cell_name(&clustering, None);
            ReadFilter::slice(name.clone(), name, false, usize::MAX, CountUnit::Cells)
        }
        _ => ReadFilter::all(),
    };
    let shared = Arc::new((table.clone(), clustering.clone(), check));
    let test = shared.clone();
    let condition = CasCondition::Cells {
        filter,
        holds: Arc::new(move |cells: &[Cell]| {
            let (table, clustering, check) = &*test;
            holds(table, clustering, check, cells, now_seconds())
        }),
    };
    let command = CasCommand {
        keyspace: table.keyspace.clone(),
        cf: table.name.clone(),
        key: key.clone(),
        condition,
        updates: update,
    };
    let outcome = ctx.coordinator.cas(command, ctx.serial, cl).await?;
    let applied_spec = spec(table, "[applied]", &AbstractType::Boolean);
    let (table, clustering, check) = &*shared;
    match outcome {
        CasOutcome::Applied => Ok(Outcome::Rows(ResultSet {
            columns: vec![applied_spec],
            rows: vec![vec![Some(vec![1])]],
            paging_state: None,
        })),
        CasOutcome::NotApplied { current: cells } => {
            let now = now_seconds();
            let live: Vec<Cell> = cells.into_iter().filter(|c| c.is_live(now)).collect();
            let mut columns: Vec<ColumnSpec> = vec![applied_spec];
            let mut row: Vec<Option<Vec<u8>>> = vec![Some(vec![0])];
            let shown: Vec<Column> = match check {
                Check::Columns(conditions) => {
                    let mut v: Vec<Column> = Vec::new();
                    for (c, _, _) in conditions {
                        if !v.iter().any(|x| x.name == c.name) {
                            v.push(c.clone());
                        }
                    }
                    v
                }
                _ if live.is_empty() => Vec::new(),
                _ => table.columns().cloned().collect(),
            };
            let key_parts = table.split_partition_key(&key).unwrap_or_default();
            for c in &shown {
                columns.push(spec(table, &c.name, &c.ty));
                row.push(match c.kind {
                    ColumnKind::PartitionKey => key_parts.get(c.position).cloned(),
                    ColumnKind::Clustering => clustering.get(c.position).cloned(),
                    ColumnKind::Regular => current(table, clustering, c, &live),
                });
            }
            Ok(Outcome::Rows(ResultSet { columns, rows: vec![row], paging_state: None }))
        }
    }
}
