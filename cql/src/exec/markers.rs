//! Bind markers: for each `?` or `:name` of a statement, in the order written, the
//! specification 3.11 gives it (the column it binds, or `[limit]`, `[ttl]`, `in(k)`,
//! `value(m)`, ...), which PREPARED sends and bound values are checked against.

use model::marshal::AbstractType;

use super::values::is_marker;
use super::write::{regular_column, removed_keys_type};
use super::{invalid, ColumnSpec, Context, CqlError};
use crate::ast::{
    Assignment, Attributes, Delete, Deletion, Insert, InsertValues, Operator, Relation, Select, Term, Update,
};
use crate::schema::{Column, Table};

/// The markers of an INSERT, in order.
pub(super) fn insert_markers(ctx: &Context<'_>, s: &Insert) -> Result<Vec<ColumnSpec>, CqlError> {
    let table = ctx.table(&s.table)?;
    let mut out = Vec::new();
    match &s.values {
        InsertValues::Values { columns, values } => {
            for (name, term) in columns.iter().zip(values) {
                if is_marker(term).is_some() {
                    let c = table
                        .column(name.name())
                        .ok_or_else(|| CqlError::Invalid(format!("Undefined column name {}", name.name())))?;
                    out.push(spec(&table, &c.name, &c.ty));
                }
            }
        }
        InsertValues::Json { value, .. } => {
            if is_marker(value).is_some() {
                out.push(spec(&table, "[json]", &AbstractType::Utf8));
            }
        }
    }
    attribute_markers(&table, &s.attributes, &mut out);
    Ok(out)
}

pub(super) fn update_markers(ctx: &Context<'_>, s: &Update) -> Result<Vec<ColumnSpec>, CqlError> {
    let table = ctx.table(&s.table)?;
    let mut out = Vec::new();
    attribute_markers(&table, &s.attributes, &mut out);
    for a in &s.assignments {
        let (column, value) = match a {
            Assignment::Set { column, value }
            | Assignment::Add { column, value }
            | Assignment::Subtract { column, value }
            | Assignment::Prepend { column, value } => (column, value),
            Assignment::SetElement { column, key, value } => {
                let c = regular_column(&table, column.name())?;
                let (key_spec, value_spec) = match &c.ty {
                    AbstractType::Map { key: k, value: v, .. } => (("key", k.as_ref().clone()), v.as_ref().clone()),
                    AbstractType::List { element, .. } => (("idx", AbstractType::Int32), element.as_ref().clone()),
                    _ => continue,
                };
                if is_marker(key).is_some() {
                    out.push(spec(&table, &format!("{}({})", key_spec.0, c.name), &key_spec.1));
                }
                if is_marker(value).is_some() {
                    out.push(spec(&table, &format!("value({})", c.name), &value_spec));
                }
                continue;
            }
            _ => continue,
        };
        if is_marker(value).is_some() {
            let c = regular_column(&table, column.name())?;
            let ty = match a {
                _ if c.ty.is_counter() => AbstractType::Long,
                Assignment::Subtract { .. } => removed_keys_type(&c.ty),
                _ => c.ty.clone(),
            };
            out.push(spec(&table, &c.name, &ty));
        }
    }
    where_markers(ctx, &table, &s.where_clause, &mut out)?;
    condition_markers(&table, s.conditions.as_ref(), &mut out);
    Ok(out)
}

pub(super) fn delete_markers(ctx: &Context<'_>, s: &Delete) -> Result<Vec<ColumnSpec>, CqlError> {
    let table = ctx.table(&s.table)?;
    let mut out = Vec::new();
    if s.timestamp.as_ref().is_some_and(|t| is_marker(t).is_some()) {
        out.push(spec(&table, "[timestamp]", &AbstractType::Long));
    }
    for d in &s.deletions {
        if let Deletion::Element(name, key) = d {
            let column = table.column(name.name());
            let key_type = match column.map(|c| &c.ty) {
                Some(AbstractType::List { .. }) => Some(("idx", AbstractType::Int32)),
                Some(t) => t.collection_key_type().cloned().map(|t| ("key", t)),
                None => None,
            };
            if let (Some((what, ty)), Some(_)) = (key_type, is_marker(key)) {
                out.push(spec(&table, &format!("{what}({})", name.name()), &ty));
            }
        }
    }
    where_markers(ctx, &table, &s.where_clause, &mut out)?;
    condition_markers(&table, s.conditions.as_ref(), &mut out);
    Ok(out)
}

/// The markers of an IF clause, in order.
fn condition_markers(table: &Table, conditions: Option<&crate::ast::Conditions>, out: &mut Vec<ColumnSpec>) {
    use crate::ast::{Conditions, InValues, Predicate};
    let Some(Conditions::Columns(list)) = conditions else { return };
    for condition in list {
        let Some(c) = table.column(condition.column.name()) else { continue };
        let terms: Vec<&Term> = match &condition.predicate {
            Predicate::Compare(_, t) => vec![t],
            Predicate::In(InValues::List(ts)) => ts.iter().collect(),
            Predicate::In(InValues::Marker(_)) => {
                out.push(in_spec(table, c));
                continue;
            }
        };
        for t in terms {
            if is_marker(t).is_some() {
                out.push(spec(table, &c.name, &c.ty));
            }
        }
    }
}

/// The marker of `c IN ?`, in a WHERE clause or an IF condition: a list of c's type named `in(c)`.
fn in_spec(table: &Table, c: &Column) -> ColumnSpec {
    let list = AbstractType::List { element: Box::new(c.ty.clone()), frozen: false };
    spec(table, &format!("in({})", c.name), &list)
}

fn attribute_markers(table: &Table, a: &Attributes, out: &mut Vec<ColumnSpec>) {
    let timestamp = a
        .timestamp
        .as_ref()
        .filter(|t| is_marker(t).is_some())
        .map(|_| spec(table, "[timestamp]", &AbstractType::Long));
    let ttl = a.ttl.as_ref().filter(|t| is_marker(t).is_some()).map(|_| spec(table, "[ttl]", &AbstractType::Int32));
    let (first, second) = if a.ttl_first { (ttl, timestamp) } else { (timestamp, ttl) };
    out.extend(first.into_iter().chain(second));
}

/// The markers of a WHERE clause, in order.
pub(super) fn where_markers(
    ctx: &Context<'_>,
    table: &Table,
    clause: &[Relation],
    out: &mut Vec<ColumnSpec>,
) -> Result<(), CqlError> {
    for relation in clause {
        let (column, terms): (&str, Vec<&Term>) = match relation {
            Relation::MultiColumn { columns, value: Term::Tuple(terms), .. } => {
                tuple_markers(table, columns, terms, out);
                continue;
            }
            Relation::MultiColumn { columns, value, .. } => {
                if is_marker(value).is_some() {
                    out.push(whole_tuple_spec(table, columns, false));
                }
                continue;
            }
            Relation::MultiColumnIn { columns, values: crate::ast::InValues::List(tuples) } => {
                for t in tuples {
                    match t {
                        Term::Tuple(terms) => tuple_markers(table, columns, terms, out),
                        t if is_marker(t).is_some() => out.push(whole_tuple_spec(table, columns, false)),
                        _ => {}
                    }
                }
                continue;
            }
            Relation::MultiColumnIn { columns, values: crate::ast::InValues::Marker(_) } => {
                out.push(whole_tuple_spec(table, columns, true));
                continue;
            }
            Relation::In { column, values: crate::ast::InValues::Marker(_) } => {
                let Some(c) = table.column(column.name()) else {
                    return invalid(format!("Undefined column name {}", column.name()));
                };
                out.push(in_spec(table, c));
                continue;
            }
            Relation::Column { column, op: op @ (Operator::Contains | Operator::ContainsKey), value } => {
                // 3.11's collection receivers: a list's or set's element, a map's key or value.
                let Some(c) = table.column(column.name()) else {
                    return invalid(format!("Undefined column name {}", column.name()));
                };
                if is_marker(value).is_some() {
                    let key = *op == Operator::ContainsKey;
                    let element = match &c.ty {
                        AbstractType::Map { key: k, .. } if key => Some(("key", k.as_ref())),
                        AbstractType::Map { value: v, .. } => Some(("value", v.as_ref())),
                        AbstractType::List { element, .. } | AbstractType::Set { element, .. } => {
                            Some(("value", element.as_ref()))
                        }
                        _ => None,
                    };
                    match element {
                        Some((what, ty)) => out.push(spec(table, &format!("{what}({})", c.name), ty)),
                        None => out.push(spec(table, &c.name, &c.ty)),
                    }
                }
                continue;
            }
            Relation::Token { value, .. } => {
                if is_marker(value).is_some() {
                    let ty = super::selectors::token_type(ctx.coordinator.partitioner());
                    out.push(spec(table, "partition key token", &ty));
                }
                continue;
            }
            Relation::Column { column, value, .. } => (column.name(), vec![value]),
            Relation::In { column, values: crate::ast::InValues::List(ts) } => (column.name(), ts.iter().collect()),
            _ => continue,
        };
        let Some(c) = table.column(column) else {
            return invalid(format!("Undefined column name {column}"));
        };
        for t in terms {
            if is_marker(t).is_some() {
                out.push(spec(table, &c.name, &c.ty));
            }
        }
    }
    Ok(())
}

fn tuple_markers(table: &Table, columns: &[crate::ast::Identifier], terms: &[Term], out: &mut Vec<ColumnSpec>) {
    for (id, t) in columns.iter().zip(terms) {
        if let (Some(c), Some(_)) = (table.column(id.name()), is_marker(t)) {
            out.push(spec(table, &c.name, &c.ty));
        }
    }
}

pub(super) fn spec(table: &Table, name: &str, ty: &AbstractType) -> ColumnSpec {
    ColumnSpec { keyspace: table.keyspace.clone(), table: table.name.clone(), name: name.to_string(), ty: ty.clone() }
}

/// The marker of a whole tuple of columns, `(a,b) = ?` (or each of `(a,b) IN (?, ?)`), or of
/// their list, `(a,b) IN ?`: named as 3.11 names them, `(a,b)` and `in(a,b)`.
fn whole_tuple_spec(table: &Table, columns: &[crate::ast::Identifier], list: bool) -> ColumnSpec {
    let names: Vec<&str> = columns.iter().map(|c| c.name()).collect();
    let types: Vec<AbstractType> =
        columns.iter().map(|id| table.column(id.name()).map_or(AbstractType::Bytes, |c| c.ty.clone())).collect();
    let tuple = AbstractType::Tuple(types);
    if list {
        let ty = AbstractType::List { element: Box::new(tuple), frozen: false };
        spec(table, &format!("in({})", names.join(",")), &ty)
    } else {
        spec(table, &format!("({})", names.join(",")), &tuple)
    }
}

/// The markers of a SELECT, in order.
pub(super) fn select_markers(ctx: &Context<'_>, s: &Select) -> Result<Vec<ColumnSpec>, CqlError> {
    let table = ctx.table(&s.table)?;
    let mut out = Vec::new();
    where_markers(ctx, &table, &s.where_clause, &mut out)?;
    if s.per_partition_limit.as_ref().is_some_and(|t| matches!(t, Term::BindMarker(_))) {
        out.push(spec(&table, "[per_partition_limit]", &AbstractType::Int32));
    }
    if s.limit.as_ref().is_some_and(|t| matches!(t, Term::BindMarker(_))) {
        out.push(spec(&table, "[limit]", &AbstractType::Int32));
    }
    Ok(out)
}
