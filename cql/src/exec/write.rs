//! INSERT, UPDATE and DELETE: cells in the table's layout, one mutation per partition,
//! through the coordinator at the request's consistency level.

use model::data::Cell;
use model::marshal::AbstractType;

use super::mutations::{stamp, Planned, Writes};
use super::restrict::{cartesian, restrictions, Restriction, Restrictions};
use super::values::{key_value, term_value, Binder, Value};
use super::{collections, lwt};
use super::{invalid, Context, CqlError};
use crate::ast::{Assignment, Attributes, Delete, Deletion, Insert, InsertValues, Term, Update};
use crate::schema::{Clustering, Column, ColumnKind, Layout, Table};

fn check_clustering(values: &[Vec<u8>], table: &Table) -> Result<(), CqlError> {
    for (v, c) in values.iter().zip(&table.clustering) {
        // 0xFFFF as a first length is the static marker: clustering values stay below it.
        if v.len() >= u16::MAX as usize {
            return invalid(format!(
                "Key length of {} is longer than maximum of {} (clustering column {})",
                v.len(),
                u16::MAX - 1,
                c.name
            ));
        }
    }
    Ok(())
}

pub(super) fn insert(
    ctx: &Context<'_>,
    s: &Insert,
    binder: &mut Binder<'_>,
    batch: Option<i64>,
) -> Result<Planned, CqlError> {
    let table = ctx.table(&s.table)?;
    if table.counter {
        return invalid("INSERT statements are not allowed on counter tables, use UPDATE instead");
    }
    let mut given: Vec<(Column, Value)> = Vec::new();
    match &s.values {
        InsertValues::Values { columns, values } => {
            if columns.len() != values.len() {
                return invalid("Unmatched column names/values");
            }
            for (name, term) in columns.iter().zip(values) {
                let Some(c) = table.column(name.name()) else {
                    return invalid(format!("Undefined column name {}", name.name()));
                };
                if given.iter().any(|(g, _)| g.name == c.name) {
                    return invalid(format!("Multiple definitions found for column {}", c.name));
                }
                let v = term_value(term, &c.ty, &c.name, binder)?;
                given.push((c.clone(), v));
            }
        }
        InsertValues::Json { value, default_unset } => {
            let text = match term_value(value, &AbstractType::Utf8, "[json]", binder)? {
                Value::Bytes(b) => {
                    String::from_utf8(b).or_else(|_| invalid("INSERT JSON: the JSON text is not UTF-8"))?
                }
                _ => return invalid("Got null for INSERT JSON values"),
            };
            let object = super::json::object(&text)?;
            for (name, j) in &object {
                let Some(c) = table.column(name) else {
                    return invalid(format!("JSON values map contains unrecognized column: {name}"));
                };
                given.push((c.clone(), super::json::from_json(&c.ty, j, &c.name)?));
            }
            // Columns the object leaves out are set to null, unless DEFAULT UNSET.
            for c in table.regular.iter() {
                if !given.iter().any(|(g, _)| g.name == c.name) {
                    given.push((c.clone(), if *default_unset { Value::Unset } else { Value::Null }));
                }
            }
        }
    }
    let meta = ctx.coordinator.cf_metadata(&table.keyspace, &table.name)?;
    let stamp = stamp(&table, &meta, &s.attributes, binder, batch)?;
    if s.if_not_exists && s.attributes.timestamp.is_some() {
        return invalid("Cannot provide custom timestamp for conditional updates");
    }
    let key_part = |c: &Column| -> Result<Vec<u8>, CqlError> {
        match given.iter().find(|(g, _)| g.name == c.name) {
            Some((_, Value::Bytes(b))) => Ok(b.clone()),
            Some(_) => invalid(format!("Invalid null value in condition for column {}", c.name)),
            None => invalid(format!(
                "Some {} are missing: {}",
                if c.kind == ColumnKind::PartitionKey { "partition key parts" } else { "clustering keys" },
                c.name
            )),
        }
    };
    let mut key_values = Vec::new();
    for c in &table.partition_key {
        key_values.push(key_part(c)?);
    }
    // Only the partition key and static columns: a write of the partition's static values,
    // with no row (3.11 allows it).
    let statics_only = table.has_statics()
        && given.iter().any(|(c, _)| c.is_static)
        && given.iter().all(|(c, _)| c.is_static || c.kind == ColumnKind::PartitionKey);
    let mut clustering = Vec::new();
    if !statics_only {
        for c in &table.clustering {
            clustering.push(key_part(c)?);
        }
    }
    check_clustering(&clustering, &table)?;
    let key = table.partition_key_bytes(&key_values);
    check_key(&key)?;
    let mut writes = Writes::new(ctx, &table, vec![key])?;
    match table.layout {
        Layout::Sparse => {
            if !statics_only {
                writes.cell(stamp.cell(table.cell_name(&clustering, None), Value::Bytes(Vec::new())));
            }
            for (c, v) in &given {
                if c.kind == ColumnKind::Regular && c.ty.is_multi_cell() {
                    writes.set_collection(&clustering, c, v, &stamp)?;
                } else if c.kind == ColumnKind::Regular && *v != Value::Unset {
                    writes.cell(stamp.cell(table.cell_name(&clustering, Some(c)), v.clone()));
                }
            }
        }
        Layout::Dense { .. } | Layout::Super => {
            let value = given.iter().find(|(c, _)| c.kind == ColumnKind::Regular).map(|(_, v)| v.clone());
            let value = value.unwrap_or(Value::Bytes(Vec::new()));
            if value != Value::Unset {
                writes.cell(stamp.cell(table.cell_name(&clustering, None), value));
            }
        }
        Layout::StaticCompact => {
            for (c, v) in &given {
                if c.kind == ColumnKind::Regular && *v != Value::Unset {
                    writes.cell(stamp.cell(table.cell_name(&[], Some(c)), v.clone()));
                }
            }
        }
    }
    if s.if_not_exists {
        let (key, update) = writes.into_update();
        return Ok(Planned::Conditional(Box::new(lwt::Conditional {
            table,
            key,
            clustering,
            check: lwt::Check::NotExists,
            update,
        })));
    }
    Ok(writes.finish())
}

fn check_key(key: &[u8]) -> Result<(), CqlError> {
    if key.is_empty() {
        return invalid("Key may not be empty");
    }
    if key.len() > u16::MAX as usize {
        return invalid(format!("Key length of {} is longer than maximum of {}", key.len(), u16::MAX));
    }
    Ok(())
}

/// The partition keys and full clustering rows a WHERE clause of UPDATE names.
/// A DELETE's slice of one clustering column after the prefix (3.0's range deletions).
type RangeDeletion = Option<(Column, super::restrict::Bound, super::restrict::Bound)>;

/// The partition keys, clustering prefixes and range of a write's WHERE clause.
type WriteScope = (Vec<Vec<u8>>, Vec<Clustering>, RangeDeletion);

fn rows_of(table: &Table, r: &Restrictions, statement: &str) -> Result<(Vec<Vec<u8>>, Vec<Clustering>), CqlError> {
    let (keys, prefixes, slice) = rows_or_range(table, r, statement)?;
    if slice.is_some() {
        return invalid(format!(
            "Slice restrictions are not supported on the clustering columns in {statement} statements"
        ));
    }
    Ok((keys, prefixes))
}

fn rows_or_range(table: &Table, r: &Restrictions, statement: &str) -> Result<WriteScope, CqlError> {
    if r.token.is_some() {
        return invalid(format!("The token function cannot be used in WHERE clauses for {statement} statements"));
    }
    if !r.tuples.is_empty() {
        return invalid(format!("multi-column slices and IN in {statement} statements are not supported yet"));
    }
    if let Some((c, _)) = r.columns.iter().find(|(c, _)| c.kind == ColumnKind::Regular) {
        return invalid(format!("Non PRIMARY KEY columns found in where clause: {}", c.name));
    }
    let Some(keys) = r.partition_keys(table)? else {
        let missing: Vec<&str> = table.partition_key.iter().map(|c| c.name.as_str()).collect();
        return invalid(format!("Some partition key parts are missing: {}", missing.join(", ")));
    };
    let mut lists = Vec::new();
    let mut slice: RangeDeletion = None;
    for c in &table.clustering {
        match r.of(&c.name) {
            Some(Restriction::Values(v)) => lists.push(v),
            Some(Restriction::Slice { lower, upper }) => {
                slice = Some((c.clone(), lower.clone(), upper.clone()));
                break;
            }
            Some(Restriction::Contains { .. }) | None => break,
        }
    }
    let restricted = lists.len() + usize::from(slice.is_some());
    if restricted < table.clustering.len() {
        if let Some(after) = table.clustering[restricted..].iter().find(|c| r.of(&c.name).is_some()) {
            let before = &table.clustering[restricted - usize::from(slice.is_some()).min(restricted)];
            return invalid(if slice.is_some() {
                format!(
                    "Clustering column \"{}\" cannot be restricted (preceding column \"{}\" is restricted by a non-EQ relation)",
                    after.name, before.name
                )
            } else {
                format!(
                    "PRIMARY KEY column \"{}\" cannot be restricted as preceding column \"{}\" is not restricted",
                    after.name,
                    table.clustering[lists.len()].name
                )
            });
        }
    }
    let prefixes = cartesian(&lists)?;
    Ok((keys, prefixes, slice))
}

pub(super) fn update(
    ctx: &Context<'_>,
    s: &Update,
    binder: &mut Binder<'_>,
    batch: Option<i64>,
) -> Result<Planned, CqlError> {
    let table = ctx.table(&s.table)?;
    let meta = ctx.coordinator.cf_metadata(&table.keyspace, &table.name)?;
    let stamp = stamp(&table, &meta, &s.attributes, binder, batch)?;
    let mut sets: Vec<(Column, Op)> = Vec::new();
    for a in &s.assignments {
        let (column, op) = assignment(&table, a, binder)?;
        let whole = |op: &Op| matches!(op, Op::Set(_));
        if sets.iter().any(|(c, o)| c.name == column.name && (whole(o) || whole(&op))) {
            return invalid(format!("Multiple incompatible setting of column {}", column.name));
        }
        sets.push((column, op));
    }
    let r = restrictions(&table, &s.where_clause, ctx.coordinator.partitioner(), binder)?;
    let (keys, rows) = rows_of(&table, &r, "UPDATE")?;
    let statics_only = !sets.is_empty() && sets.iter().all(|(c, _)| c.is_static);
    if statics_only && rows.iter().any(|p| !p.is_empty()) {
        return invalid(
            "Invalid restrictions on clustering columns since the UPDATE statement modifies only static columns",
        );
    }
    if !statics_only && rows.iter().any(|p| p.len() < table.clustering.len()) {
        let missing = &table.clustering[rows.first().map_or(0, Vec::len)].name;
        return invalid(format!("Some clustering keys are missing: {missing}"));
    }
    for k in &keys {
        check_key(k)?;
    }
    let check = conditional(&table, s.conditions.as_ref(), &s.attributes, keys.len(), rows.len(), binder)?;
    let mut writes = Writes::new(ctx, &table, keys)?;
    for clustering in &rows {
        check_clustering(clustering, &table)?;
        for (c, op) in &sets {
            let name = table.cell_name(clustering, Some(c));
            match op {
                Op::Set(v) if c.ty.is_multi_cell() => writes.set_collection(clustering, c, v, &stamp)?,
                Op::Set(Value::Unset) | Op::Add(Value::Unset) | Op::Prepend(Value::Unset) => {}
                Op::Remove(Value::Unset) | Op::Element(_, Value::Unset) => {}
                Op::Set(v) => writes.cell(stamp.cell(name, v.clone())),
                Op::Counter(delta) => writes.cell(Cell::counter_update(name, *delta, stamp.timestamp)),
                Op::Add(Value::Bytes(b)) => writes.add_elements(clustering, c, b, &stamp, false)?,
                Op::Prepend(Value::Bytes(b)) => writes.add_elements(clustering, c, b, &stamp, true)?,
                Op::Remove(Value::Bytes(b)) => {
                    for key in collections::removed_keys(c, b)? {
                        let name = table.element_cell_name(clustering, c, &key);
                        writes.cell(Cell::tombstone(name, stamp.timestamp, stamp.now));
                    }
                }
                // Adding or prepending null changes nothing (3.11); removing null neither.
                Op::Add(_) | Op::Prepend(_) | Op::Remove(_) => {}
                Op::Element(key, v) => {
                    let name = table.element_cell_name(clustering, c, key);
                    writes.cell(stamp.cell(name, v.clone()));
                }
                Op::List(op) => writes.list_op(clustering, c, op.clone(), &stamp),
            }
        }
    }
    if let Some(check) = check {
        if !writes.reads.is_empty() {
            return invalid("list operations by index or value in a conditional update are not supported yet");
        }
        let (key, update) = writes.into_update();
        let clustering = rows.into_iter().next().unwrap_or_default();
        return Ok(Planned::Conditional(Box::new(lwt::Conditional { table, key, clustering, check, update })));
    }
    Ok(writes.finish())
}

/// What an UPDATE's assignment does to its column.
enum Op {
    /// `c = v`.
    Set(Value),
    /// `c = c + n` on a counter.
    Counter(i64),
    /// `c = c + v` on a collection: append, union, put.
    Add(Value),
    /// `c = v + c` on a list.
    Prepend(Value),
    /// `c = c - v` on a set (its elements) or a map (a set of keys).
    Remove(Value),
    /// `m[k] = v` on a map.
    Element(Vec<u8>, Value),
    /// `l[i] = v` or `l = l - [...]` on a list: done once the list is read.
    List(collections::ListOp),
}

/// An assignment checked against its column as 3.11's `Operation.RawUpdate.prepare` checks it.
fn assignment(table: &Table, a: &Assignment, binder: &mut Binder) -> Result<(Column, Op), CqlError> {
    use model::marshal::CollectionKind as K;
    let c = match a {
        Assignment::Set { column, .. }
        | Assignment::Add { column, .. }
        | Assignment::Subtract { column, .. }
        | Assignment::Prepend { column, .. }
        | Assignment::SetElement { column, .. } => regular_column(table, column.name())?,
        other => return invalid(format!("the operation {other} is not supported yet")),
    };
    let kind = c.ty.collection_kind();
    let frozen = kind.is_some() && !c.ty.is_multi_cell();
    let refuse = |what: &str| invalid(format!("Invalid operation ({a}) for {what} column {}", c.name));
    let op = match a {
        Assignment::Set { value, .. } => {
            if table.counter {
                return invalid(format!(
                    "Cannot set the value of counter column {} (counters can only be incremented/decremented, not set)",
                    c.name
                ));
            }
            Op::Set(term_value(value, &c.ty, &c.name, binder)?)
        }
        Assignment::Add { value, .. } | Assignment::Subtract { value, .. } if c.ty.is_counter() => {
            let v = key_value(value, &AbstractType::Long, &c.name, binder)?;
            let n = i64::from_be_bytes(v.try_into().unwrap_or_default());
            let n = if matches!(a, Assignment::Subtract { .. }) { n.checked_neg().unwrap_or(i64::MAX) } else { n };
            Op::Counter(n)
        }
        _ if kind.is_none() => return refuse("non collection"),
        _ if frozen => return refuse("frozen collection"),
        Assignment::Add { value, .. } => Op::Add(term_value(value, &c.ty, &c.name, binder)?),
        Assignment::Prepend { value, .. } => {
            if kind != Some(K::List) {
                return refuse("non list");
            }
            Op::Prepend(term_value(value, &c.ty, &c.name, binder)?)
        }
        Assignment::Subtract { value, .. } => match kind {
            Some(K::List) => match term_value(value, &c.ty, &c.name, binder)? {
                Value::Bytes(b) => Op::List(collections::ListOp::Discard(collections::list_values(&c, &b)?)),
                _ => Op::Remove(Value::Unset),
            },
            Some(K::Map) => Op::Remove(term_value(value, &removed_keys_type(&c.ty), &c.name, binder)?),
            _ => Op::Remove(term_value(value, &c.ty, &c.name, binder)?),
        },
        Assignment::SetElement { key, value, .. } => match (&c.ty, kind) {
            (AbstractType::Map { key: key_type, value: value_type, .. }, _) => {
                let k = key_value(key, key_type, &format!("key({})", c.name), binder)?;
                Op::Element(k, term_value(value, value_type, &format!("value({})", c.name), binder)?)
            }
            (AbstractType::List { element, .. }, _) => {
                let index = list_index(key, &c.name, binder)?;
                Op::List(collections::ListOp::Set(
                    index,
                    term_value(value, element, &format!("value({})", c.name), binder)?,
                ))
            }
            _ => return refuse("set"),
        },
        _ => return invalid(format!("the operation {a} is not supported yet")),
    };
    Ok((c, op))
}

/// A list index: an int, not null.
fn list_index(term: &Term, column: &str, binder: &mut Binder) -> Result<i32, CqlError> {
    match term_value(term, &AbstractType::Int32, &format!("idx({column})"), binder)? {
        Value::Bytes(b) => Ok(i32::from_be_bytes(b.try_into().unwrap_or_default())),
        Value::Null => invalid("Invalid null value for list index"),
        Value::Unset => invalid("Invalid unset value for list index"),
    }
}

/// The type of what `m = m - v` removes from a map: a set of its keys.
pub(super) fn removed_keys_type(map: &AbstractType) -> AbstractType {
    match map {
        AbstractType::Map { key, .. } => AbstractType::Set { element: key.clone(), frozen: false },
        other => other.clone(),
    }
}

/// The IF clause of an UPDATE or DELETE, checked as 3.11 checks it: one partition, one row,
/// the server's timestamp.
fn conditional(
    table: &Table,
    conditions: Option<&crate::ast::Conditions>,
    attributes: &Attributes,
    partitions: usize,
    rows: usize,
    binder: &mut Binder,
) -> Result<Option<lwt::Check>, CqlError> {
    let Some(conditions) = conditions else { return Ok(None) };
    if partitions != 1 {
        return invalid("IN on the partition key is not supported with conditional updates");
    }
    if rows != 1 {
        return invalid("IN on the clustering key columns is not supported with conditional updates");
    }
    if attributes.timestamp.is_some() {
        return invalid("Cannot provide custom timestamp for conditional updates");
    }
    Ok(Some(lwt::check_of(table, conditions, binder)?))
}

pub(super) fn regular_column(table: &Table, name: &str) -> Result<Column, CqlError> {
    match table.column(name) {
        None => invalid(format!("Undefined column name {name}")),
        Some(c) if c.kind != ColumnKind::Regular => invalid(format!("PRIMARY KEY part {name} found in SET part")),
        Some(c) => Ok(c.clone()),
    }
}

pub(super) fn delete(
    ctx: &Context<'_>,
    s: &Delete,
    binder: &mut Binder<'_>,
    batch: Option<i64>,
) -> Result<Planned, CqlError> {
    let table = ctx.table(&s.table)?;
    let mut columns = Vec::new();
    let mut elements: Vec<(Column, Vec<u8>)> = Vec::new();
    let mut list_deletions: Vec<(Column, i32)> = Vec::new();
    let deleted = |name: &str| {
        regular_column(&table, name).map_err(|e| match e {
            CqlError::Invalid(m) if m.starts_with("PRIMARY KEY part") => {
                CqlError::Invalid(format!("Invalid identifier {name} for deletion (should not be a PRIMARY KEY part)"))
            }
            other => other,
        })
    };
    for d in &s.deletions {
        match d {
            Deletion::Column(name) => columns.push(deleted(name.name())?),
            Deletion::Element(name, key) => {
                let c = deleted(name.name())?;
                let key_type = match (&c.ty, c.ty.collection_kind()) {
                    (_, None) => {
                        return invalid(format!("Invalid deletion operation for non collection column {}", c.name))
                    }
                    (_, Some(_)) if !c.ty.is_multi_cell() => {
                        return invalid(format!("Invalid deletion operation for frozen collection column {}", c.name))
                    }
                    (_, Some(model::marshal::CollectionKind::List)) => {
                        let index = list_index(key, &c.name, binder)?;
                        list_deletions.push((c, index));
                        continue;
                    }
                    (ty, _) => ty.collection_key_type().cloned().unwrap_or(AbstractType::Bytes),
                };
                let k = key_value(key, &key_type, &format!("key({})", c.name), binder)?;
                elements.push((c, k));
            }
            other => return invalid(format!("deleting {other} is not supported yet")),
        }
    }
    let meta = ctx.coordinator.cf_metadata(&table.keyspace, &table.name)?;
    let attributes = Attributes { timestamp: s.timestamp.clone(), ..Attributes::default() };
    let stamp = stamp(&table, &meta, &attributes, binder, batch)?;
    let r = restrictions(&table, &s.where_clause, ctx.coordinator.partitioner(), binder)?;
    let (keys, prefixes, slice) = rows_or_range(&table, &r, "DELETE")?;
    if slice.is_some() {
        if !columns.is_empty() || !elements.is_empty() || !list_deletions.is_empty() {
            return invalid("Range deletions are not supported for specific columns");
        }
        if s.conditions.is_some() {
            return invalid("DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use IF conditions");
        }
    }
    for k in &keys {
        check_key(k)?;
    }
    if s.conditions.is_some() && prefixes.iter().any(|p| p.len() < table.clustering.len()) {
        return invalid("DELETE statements must restrict all PRIMARY KEY columns with equality relations in order to use IF conditions");
    }
    let check = conditional(&table, s.conditions.as_ref(), &attributes, keys.len(), prefixes.len(), binder)?;
    let mut writes = Writes::new(ctx, &table, keys)?;
    for prefix in &prefixes {
        check_clustering(prefix, &table)?;
        let full = prefix.len() == table.clustering.len();
        if let Some((c, lower, upper)) = &slice {
            let (start, end, exact) = super::select::slice_bounds(&table, prefix, c, lower, upper);
            if !exact {
                return invalid(format!(
                    "a range deletion excluding its bound on {} of a COMPACT STORAGE table is not supported yet",
                    c.name
                ));
            }
            writes.range_tombstone(start, end, stamp.deletion());
            continue;
        }
        if columns.is_empty() && elements.is_empty() && list_deletions.is_empty() {
            if prefix.is_empty() {
                writes.partition_deletion(stamp.deletion());
            } else {
                writes.range_tombstone(
                    table.prefix_bound(prefix, false),
                    table.prefix_bound(prefix, true),
                    stamp.deletion(),
                );
            }
            continue;
        }
        let statics_only = columns
            .iter()
            .chain(elements.iter().map(|(c, _)| c))
            .chain(list_deletions.iter().map(|(c, _)| c))
            .all(|c| c.is_static);
        if statics_only && !prefix.is_empty() {
            return invalid(
                "Invalid restrictions on clustering columns since the DELETE statement modifies only static columns",
            );
        }
        if !full && !statics_only {
            let missing = &table.clustering[prefix.len()].name;
            return invalid(format!("Some clustering keys are missing: {missing}"));
        }
        for c in &columns {
            if c.ty.is_multi_cell() {
                writes.delete_collection(prefix, c, &stamp);
                continue;
            }
            let name = table.cell_name(prefix, Some(c));
            writes.cell(Cell::tombstone(name, stamp.timestamp, stamp.now));
        }
        for (c, key) in &elements {
            let name = table.element_cell_name(prefix, c, key);
            writes.cell(Cell::tombstone(name, stamp.timestamp, stamp.now));
        }
        for (c, index) in &list_deletions {
            writes.list_op(prefix, c, collections::ListOp::Delete(*index), &stamp);
        }
    }
    if let Some(check) = check {
        if !writes.reads.is_empty() {
            return invalid("list operations by index or value in a conditional delete are not supported yet");
        }
        let (key, update) = writes.into_update();
        let clustering = prefixes.into_iter().next().unwrap_or_default();
        return Ok(Planned::Conditional(Box::new(lwt::Conditional { table, key, clustering, check, update })));
    }
    Ok(writes.finish())
}
