//! WHERE clauses: each relation's values computed (in the order written, so bind markers take
//! theirs in order), then sorted into what selects partitions, what selects rows within them,
//! and what is left to filter.

use std::cmp::Ordering;

use model::dht::{KeyBound, Partitioner};
use model::marshal::AbstractType;

use super::values::{key_value, Binder};
use super::{invalid, CqlError};
use crate::ast::{InValues, Operator, Relation, Term};
use crate::schema::{Column, ColumnKind, Table};

/// One bound of a slice: the value and whether it is included.
pub(crate) type Bound = Option<(Vec<u8>, bool)>;

/// What a column is restricted to.
#[derive(Clone, Debug)]
pub(crate) enum Restriction {
    /// `= v` or `IN (...)`: one of these values (sorted by the column's type, no duplicates).
    Values(Vec<Vec<u8>>),
    /// `>`, `>=`, `<`, `<=`, combined.
    Slice { lower: Bound, upper: Bound },
    /// `CONTAINS v` (a collection's element, a map's value) and `CONTAINS KEY k`, each of
    /// them to hold; on regular columns only, as filters.
    Contains { values: Vec<Vec<u8>>, keys: Vec<Vec<u8>> },
}

/// The restrictions of a WHERE clause by column, in the table's column order.
pub(crate) struct Restrictions {
    pub columns: Vec<(Column, Restriction)>,
    /// `token(partition key) > x` and the like: the values given, as the token type encodes them.
    pub token: Option<(Bound, Bound)>,
    /// `(c1, c2) > (x, y)` and `(c1, c2) IN ((..), (..))` on leading clustering columns,
    /// applied to each row read (`=` becomes one restriction per column).
    pub tuples: Vec<(Vec<Column>, TupleRestriction)>,
}

/// A multi-column relation's values, one per column of the tuple.
#[derive(Clone, Debug)]
pub(crate) enum TupleRestriction {
    /// `>`, `>=`, `<`, `<=`, combined: in the values' order, column by column.
    Slice { lower: Option<(Vec<Vec<u8>>, bool)>, upper: Option<(Vec<Vec<u8>>, bool)> },
    /// One of these tuples.
    In(Vec<Vec<Vec<u8>>>),
}

impl TupleRestriction {
    /// Whether the row's clustering values satisfy it.
    pub fn holds(&self, columns: &[Column], row: &[Vec<u8>]) -> bool {
        let cmp = |t: &[Vec<u8>]| -> Option<Ordering> {
            for (c, want) in columns.iter().zip(t) {
                let have = row.get(c.position)?;
                match c.ty.compare(have, want) {
                    Ordering::Equal => continue,
                    o => return Some(o),
                }
            }
            Some(Ordering::Equal)
        };
        match self {
            TupleRestriction::In(tuples) => tuples.iter().any(|t| cmp(t) == Some(Ordering::Equal)),
            TupleRestriction::Slice { lower, upper } => {
                let above = match lower {
                    None => true,
                    Some((t, inclusive)) => {
                        matches!(cmp(t), Some(Ordering::Greater)) || (*inclusive && cmp(t) == Some(Ordering::Equal))
                    }
                };
                let below = match upper {
                    None => true,
                    Some((t, inclusive)) => {
                        matches!(cmp(t), Some(Ordering::Less)) || (*inclusive && cmp(t) == Some(Ordering::Equal))
                    }
                };
                above && below
            }
        }
    }
}

impl Restrictions {
    /// The scan bounds of a token restriction (unbounded without one).
    pub fn token_bounds(&self, partitioner: Partitioner) -> Result<(KeyBound, KeyBound), CqlError> {
        let Some((lower, upper)) = &self.token else { return Ok((KeyBound::Unbounded, KeyBound::Unbounded)) };
        let ty = super::selectors::token_type(partitioner);
        let bound = |b: &Bound| -> Result<KeyBound, CqlError> {
            match b {
                None => Ok(KeyBound::Unbounded),
                Some((v, inclusive)) => {
                    let token =
                        partitioner.token_from_string(&ty.to_display_string(v)).or_else(|e| invalid(e.to_string()))?;
                    Ok(KeyBound::Token { token, inclusive: *inclusive })
                }
            }
        };
        Ok((bound(lower)?, bound(upper)?))
    }

    pub fn of(&self, name: &str) -> Option<&Restriction> {
        self.columns.iter().find(|(c, _)| c.name == name).map(|(_, r)| r)
    }

    /// Every partition key (row key) the clause names; `None` if it names no partition key
    /// column. A clause that names some but not all of them is refused.
    pub fn partition_keys(&self, table: &Table) -> Result<Option<Vec<Vec<u8>>>, CqlError> {
        let mut parts: Vec<&Vec<Vec<u8>>> = Vec::new();
        let mut missing = Vec::new();
        for c in &table.partition_key {
            match self.of(&c.name) {
                Some(Restriction::Values(v)) => parts.push(v),
                Some(Restriction::Slice { .. } | Restriction::Contains { .. }) => return invalid(
                    "Only EQ and IN relation are supported on the partition key (unless you use the token() function)",
                ),
                None => missing.push(c.name.as_str()),
            }
        }
        if parts.is_empty() {
            return Ok(None);
        }
        if !missing.is_empty() {
            return invalid(format!(
                "Partition key parts: {} must be restricted as other parts are",
                missing.join(", ")
            ));
        }
        let keys = cartesian(&parts)?.into_iter().map(|values| table.partition_key_bytes(&values)).collect::<Vec<_>>();
        for k in &keys {
            if k.is_empty() {
                return invalid("Key may not be empty");
            }
            if k.len() > u16::MAX as usize {
                return invalid(format!("Key length of {} is longer than maximum of {}", k.len(), u16::MAX));
            }
        }
        Ok(Some(keys))
    }
}

/// The most combinations IN restrictions may make (a bound on the work and memory one
/// statement can ask for).
pub(crate) const MAX_CARTESIAN_PRODUCT: usize = 65_535;

/// Every combination of one value from each list, in order; refused past
/// [`MAX_CARTESIAN_PRODUCT`].
pub(crate) fn cartesian(lists: &[&Vec<Vec<u8>>]) -> Result<Vec<Vec<Vec<u8>>>, CqlError> {
    let product = lists.iter().try_fold(1usize, |n, l| n.checked_mul(l.len().max(1)));
    match product {
        Some(n) if n <= MAX_CARTESIAN_PRODUCT => {}
        _ => {
            return invalid(format!(
                "IN restrictions make more than {MAX_CARTESIAN_PRODUCT} combinations of key values: split the statement"
            ))
        }
    }
    let mut out: Vec<Vec<Vec<u8>>> = vec![Vec::new()];
    for list in lists {
        let mut next = Vec::with_capacity(out.len() * list.len());
        for prefix in &out {
            for v in list.iter() {
                let mut p = prefix.clone();
                p.push(v.clone());
                next.push(p);
            }
        }
        out = next;
    }
    Ok(out)
}

/// Reads a WHERE clause. Relations on columns not in the primary key are kept as filters
/// (the caller decides whether they are allowed).
pub(crate) fn restrictions(
    table: &Table,
    clause: &[Relation],
    partitioner: Partitioner,
    binder: &mut Binder,
) -> Result<Restrictions, CqlError> {
    let mut found: Vec<(Column, Restriction)> = Vec::new();
    let mut token: Option<(Bound, Bound)> = None;
    let mut tuples: Vec<(Vec<Column>, TupleRestriction)> = Vec::new();
    for relation in clause {
        let (column, restriction) = match relation {
            Relation::Column { column, op: op @ (Operator::Contains | Operator::ContainsKey), value } => {
                let c = lookup(table, column.name())?;
                let kind = c.ty.collection_kind();
                let key = *op == Operator::ContainsKey;
                let ty = match (&c.ty, kind) {
                    (_, None) => return invalid(format!("Cannot use CONTAINS on non-collection column {}", c.name)),
                    (AbstractType::Map { key: k, .. }, _) if key => k.as_ref().clone(),
                    (_, _) if key => return invalid(format!("Cannot use CONTAINS KEY on non-map column {}", c.name)),
                    (t, _) => t.collection_value_type().cloned().unwrap_or(AbstractType::Bytes),
                };
                let ty = if kind == Some(model::marshal::CollectionKind::Set) {
                    c.ty.collection_key_type().cloned().unwrap_or(AbstractType::Bytes)
                } else {
                    ty
                };
                if c.kind != ColumnKind::Regular {
                    return invalid(format!("CONTAINS on the PRIMARY KEY column {} is not supported yet", c.name));
                }
                let v = key_value(value, &ty, &c.name, binder)?;
                let r = if key {
                    Restriction::Contains { values: Vec::new(), keys: vec![v] }
                } else {
                    Restriction::Contains { values: vec![v], keys: Vec::new() }
                };
                (c, r)
            }
            Relation::Column { column, op, value } => {
                let c = lookup(table, column.name())?;
                if c.ty.is_multi_cell() {
                    return invalid(format!(
                        "Collection column '{}' ({}) cannot be restricted by a '{op}' relation",
                        c.name,
                        crate::schema::cql_name(&c.ty)
                    ));
                }
                if *op != Operator::Eq && c.ty.references_duration() {
                    return invalid(if matches!(c.ty, model::marshal::AbstractType::User(_)) {
                        "Slice restrictions are not supported on UDTs containing durations"
                    } else {
                        "Slice restrictions are not supported on duration columns"
                    });
                }
                let v = key_value(value, &c.ty, &c.name, binder)?;
                let r = match op {
                    Operator::Eq => Restriction::Values(vec![v]),
                    Operator::Lt => Restriction::Slice { lower: None, upper: Some((v, false)) },
                    Operator::Lte => Restriction::Slice { lower: None, upper: Some((v, true)) },
                    Operator::Gt => Restriction::Slice { lower: Some((v, false)), upper: None },
                    Operator::Gte => Restriction::Slice { lower: Some((v, true)), upper: None },
                    other => return invalid(format!("the {other} operator is not supported yet")),
                };
                (c, r)
            }
            Relation::In { column, values } => {
                let c = lookup(table, column.name())?;
                let mut vs = match values {
                    InValues::List(terms) => {
                        let mut vs = Vec::with_capacity(terms.len());
                        for t in terms {
                            vs.push(key_value(t, &c.ty, &c.name, binder)?);
                        }
                        vs
                    }
                    InValues::Marker(m) => in_marker_values(&c, m, binder)?,
                };
                vs.sort_by(|a, b| c.ty.compare(a, b));
                vs.dedup();
                (c, Restriction::Values(vs))
            }
            Relation::MultiColumn { columns, op, value } => {
                let cols = tuple_columns(table, columns)?;
                let Term::Tuple(terms) = value else {
                    return invalid("a bind marker for a whole tuple is not supported yet: bind each value");
                };
                let values = tuple_values(&cols, terms, binder)?;
                let restriction = match op {
                    Operator::Eq => {
                        for (c, v) in cols.into_iter().zip(values) {
                            found.push((c, Restriction::Values(vec![v])));
                        }
                        continue;
                    }
                    Operator::Gt => TupleRestriction::Slice { lower: Some((values, false)), upper: None },
                    Operator::Gte => TupleRestriction::Slice { lower: Some((values, true)), upper: None },
                    Operator::Lt => TupleRestriction::Slice { lower: None, upper: Some((values, false)) },
                    Operator::Lte => TupleRestriction::Slice { lower: None, upper: Some((values, true)) },
                    other => {
                        return invalid(format!("the {other} operator on a tuple of columns is not supported yet"))
                    }
                };
                match tuples.iter_mut().find(|(c, _)| c.len() == cols.len()) {
                    Some((_, TupleRestriction::Slice { lower, upper })) => {
                        if let TupleRestriction::Slice { lower: l2, upper: u2 } = restriction {
                            if (l2.is_some() && lower.is_some()) || (u2.is_some() && upper.is_some()) {
                                return invalid(
                                    "More than one restriction was found for the same bound of a multi-column relation",
                                );
                            }
                            *lower = lower.take().or(l2);
                            *upper = upper.take().or(u2);
                        }
                    }
                    Some(_) => return invalid("a tuple of clustering columns restricted twice is not supported"),
                    None => tuples.push((cols, restriction)),
                }
                continue;
            }
            Relation::MultiColumnIn { columns, values } => {
                let cols = tuple_columns(table, columns)?;
                let InValues::List(list) = values else {
                    return invalid("IN ? on a tuple of columns is not supported yet: bind each value");
                };
                let mut all = Vec::new();
                for t in list {
                    let Term::Tuple(terms) = t else {
                        return invalid("a bind marker for a whole tuple is not supported yet: bind each value");
                    };
                    all.push(tuple_values(&cols, terms, binder)?);
                }
                tuples.push((cols, TupleRestriction::In(all)));
                continue;
            }
            Relation::Token { columns, op, value } => {
                let names: Vec<&str> = columns.iter().map(|c| c.name()).collect();
                let key: Vec<&str> = table.partition_key.iter().map(|c| c.name.as_str()).collect();
                if names != key {
                    return invalid(format!(
                        "The token() function must be applied to all partition key components or none of them ({})",
                        key.join(", ")
                    ));
                }
                let ty = super::selectors::token_type(partitioner);
                let v = key_value(value, &ty, "partition key token", binder)?;
                let (lower, upper) = token.get_or_insert((None, None));
                let (slot, bound) = match op {
                    Operator::Gt => (lower, (v, false)),
                    Operator::Gte => (lower, (v, true)),
                    Operator::Lt => (upper, (v, false)),
                    Operator::Lte => (upper, (v, true)),
                    other => return invalid(format!("the {other} operator on token() is not supported yet")),
                };
                if slot.is_some() {
                    return invalid("More than one restriction was found for the start bound on token");
                }
                *slot = Some(bound);
                continue;
            }
            other => return invalid(format!("the relation {other} is not supported yet")),
        };
        match found.iter_mut().find(|(c, _)| c.name == column.name) {
            None => found.push((column, restriction)),
            Some((c, existing)) => merge(c, existing, restriction)?,
        }
    }
    found.sort_by_key(|(c, _)| {
        let kind = match c.kind {
            ColumnKind::PartitionKey => 0,
            ColumnKind::Clustering => 1,
            ColumnKind::Regular => 2,
        };
        (kind, c.position)
    });
    if token.is_some() && found.iter().any(|(c, _)| c.kind == ColumnKind::PartitionKey) {
        let key: Vec<&str> = table.partition_key.iter().map(|c| c.name.as_str()).collect();
        return invalid(format!(
            "Columns \"{}\" cannot be restricted by both a normal relation and a token relation",
            key.join(", ")
        ));
    }
    if !tuples.is_empty() && found.iter().any(|(c, _)| c.kind == ColumnKind::Clustering) {
        return invalid(
            "Mixing single column relations and multi column relations on clustering columns is not allowed",
        );
    }
    Ok(Restrictions { columns: found, token, tuples })
}

/// The clustering columns of a multi-column relation: leading ones, in the table's order.
fn tuple_columns(table: &Table, names: &[crate::ast::Identifier]) -> Result<Vec<Column>, CqlError> {
    let mut out = Vec::new();
    for (i, id) in names.iter().enumerate() {
        let c = lookup(table, id.name())?;
        if c.kind != ColumnKind::Clustering {
            return invalid(format!(
                "Multi-column relations can only be applied to clustering columns but was applied to: {}",
                c.name
            ));
        }
        if c.position != i {
            return invalid("Clustering columns must appear in the PRIMARY KEY order in multi-column relations");
        }
        out.push(c);
    }
    Ok(out)
}

fn tuple_values(columns: &[Column], terms: &[Term], binder: &mut Binder) -> Result<Vec<Vec<u8>>, CqlError> {
    if terms.len() != columns.len() {
        return invalid(format!("Expected {} elements in value tuple, but got {}", columns.len(), terms.len()));
    }
    columns.iter().zip(terms).map(|(c, t)| key_value(t, &c.ty, &c.name, binder)).collect()
}

fn lookup(table: &Table, name: &str) -> Result<Column, CqlError> {
    match table.column(name) {
        Some(c) => Ok(c.clone()),
        None => invalid(format!("Undefined column name {name}")),
    }
}

fn merge(column: &Column, existing: &mut Restriction, new: Restriction) -> Result<(), CqlError> {
    match (existing, new) {
        (Restriction::Slice { lower, upper }, Restriction::Slice { lower: l2, upper: u2 }) => {
            if l2.is_some() {
                if lower.is_some() {
                    return invalid(format!(
                        "More than one restriction was found for the start bound on {}",
                        column.name
                    ));
                }
                *lower = l2;
            }
            if u2.is_some() {
                if upper.is_some() {
                    return invalid(format!(
                        "More than one restriction was found for the end bound on {}",
                        column.name
                    ));
                }
                *upper = u2;
            }
            Ok(())
        }
        (Restriction::Contains { values, keys }, Restriction::Contains { values: v2, keys: k2 }) => {
            values.extend(v2);
            keys.extend(k2);
            Ok(())
        }
        (Restriction::Values(_), _) | (_, Restriction::Values(_)) => {
            invalid(format!("{} cannot be restricted by more than one relation if it includes an Equal", column.name))
        }
        (Restriction::Contains { .. }, _) | (_, Restriction::Contains { .. }) => invalid(format!(
            "Collection column {} can only be restricted by CONTAINS, CONTAINS KEY, or map-entry equality",
            column.name
        )),
    }
}

/// Whether a whole collection value holds every element (or map value) and key asked for.
fn contains(column: &Column, value: &[u8], values: &[Vec<u8>], keys: &[Vec<u8>]) -> bool {
    use model::marshal::CollectionKind as K;
    let Some(kind) = column.ty.collection_kind() else { return false };
    let Ok(elements) = model::marshal::read_elements(kind, value) else { return false };
    let (key_type, value_type) = (column.ty.collection_key_type(), column.ty.collection_value_type());
    let equal = |t: Option<&AbstractType>, a: &[u8], b: &[u8]| t.map_or(a == b, |t| t.compare(a, b).is_eq());
    let (held_keys, held_values): (Vec<&[u8]>, Vec<&[u8]>) = match kind {
        K::Map => {
            (elements.iter().step_by(2).copied().collect(), elements.iter().skip(1).step_by(2).copied().collect())
        }
        K::Set => (Vec::new(), elements.clone()),
        K::List => (Vec::new(), elements.clone()),
    };
    let element_type = if kind == K::Set { key_type } else { value_type };
    values.iter().all(|v| held_values.iter().any(|h| equal(element_type, h, v)))
        && keys.iter().all(|k| held_keys.iter().any(|h| equal(key_type, h, k)))
}

/// True when `value` lies within the slice, by `column`'s type.
pub(crate) fn in_slice(column: &Column, value: &[u8], lower: &Bound, upper: &Bound) -> bool {
    let above = match lower {
        None => true,
        Some((l, inclusive)) => match column.ty.compare(value, l) {
            Ordering::Greater => true,
            Ordering::Equal => *inclusive,
            Ordering::Less => false,
        },
    };
    let below = match upper {
        None => true,
        Some((u, inclusive)) => match column.ty.compare(value, u) {
            Ordering::Less => true,
            Ordering::Equal => *inclusive,
            Ordering::Greater => false,
        },
    };
    above && below
}

/// True when `value` satisfies the restriction.
pub(crate) fn satisfies(column: &Column, value: Option<&[u8]>, r: &Restriction) -> bool {
    let Some(value) = value else { return false };
    match r {
        Restriction::Values(vs) => vs.iter().any(|v| column.ty.compare(v, value) == Ordering::Equal),
        Restriction::Slice { lower, upper } => in_slice(column, value, lower, upper),
        Restriction::Contains { values, keys } => contains(column, value, values, keys),
    }
}

/// The values bound to `c IN ?`: a list of the column's type (3.11's receiver `in(c)`).
pub(crate) fn in_marker_values(
    c: &Column,
    marker: &crate::ast::BindMarker,
    binder: &mut Binder,
) -> Result<Vec<Vec<u8>>, CqlError> {
    let list = AbstractType::List { element: Box::new(c.ty.clone()), frozen: false };
    let term = crate::ast::Term::BindMarker(marker.clone());
    match super::values::term_value(&term, &list, &format!("in({})", c.name), binder)? {
        super::values::Value::Bytes(v) => {
            let elements = model::marshal::read_elements(model::marshal::CollectionKind::List, &v)
                .map_err(|e| CqlError::Invalid(format!("Exception while validating value for in({}): {e}", c.name)))?;
            Ok(elements.into_iter().map(<[u8]>::to_vec).collect())
        }
        super::values::Value::Null => invalid(format!("Invalid null value for column {}", c.name)),
        super::values::Value::Unset => invalid(format!("Invalid unset value for column {}", c.name)),
    }
}
