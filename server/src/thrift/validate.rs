//! Request validation, with Cassandra's rules and reasons (Cassandra's ThriftValidation). Every
//! function returns the InvalidRequestException the client must see. They check Thrift
//! structs against a column family's [`CfMetadata`] and know nothing of the engine, so any front
//! end speaking these structs (the 0.6 API converts its own to them) shares them.

use storage::data::compose_super;
use storage::filter::{CountUnit, ReadFilter};
use storage::marshal::AbstractType;
use storage::schema::CfMetadata;
use thrift_idl as t;

use super::error::{ire, TResult};

/// Longest key and column name Cassandra accepts.
pub const MAX_NAME_LENGTH: usize = u16::MAX as usize;
/// Longest TTL Cassandra accepts: 20 years.
pub const MAX_TTL: i32 = storage::schema_rules::MAX_TTL;

/// Keyspaces Cassandra reserves for itself; clients cannot create, change or write them.
pub fn is_reserved_keyspace(name: &str) -> bool {
    ["system", "system_auth", "system_traces", "system_distributed", "system_schema"]
        .iter()
        .any(|r| r.eq_ignore_ascii_case(name))
}

pub fn validate_key(key: &[u8]) -> TResult<()> {
    if key.is_empty() {
        return Err(ire("Key may not be empty"));
    }
    if key.len() > MAX_NAME_LENGTH {
        return Err(ire(format!("Key length of {} is longer than maximum of {MAX_NAME_LENGTH}", key.len())));
    }
    Ok(())
}

/// A key, checked against the column family's key validator too (writes).
pub fn validate_key_type(meta: &CfMetadata, key: &[u8]) -> TResult<()> {
    validate_key(key)?;
    meta.validators.key.validate(key).map_err(|e| ire(format!("Key failed validation: {e}")))
}

/// A column (or super column) name: non-empty, at most 65535 bytes, valid for its comparator.
pub fn validate_name(name: &[u8], ty: &AbstractType, what: &str) -> TResult<()> {
    if name.is_empty() {
        return Err(ire(format!("{what} name must not be empty")));
    }
    if name.len() > MAX_NAME_LENGTH {
        return Err(ire(format!("{what} name length must not be greater than {MAX_NAME_LENGTH} (got {})", name.len())));
    }
    ty.validate(name).map_err(|e| ire(format!("{what} name is invalid: {e}")))
}

/// The comparator of names under `super_column`: the subcomparator inside a super column, the
/// comparator otherwise.
pub fn name_type<'a>(meta: &'a CfMetadata, super_column: Option<&[u8]>) -> &'a AbstractType {
    match super_column {
        Some(_) => meta.cmp.sub_type().unwrap_or(meta.cmp.name_type()),
        None => meta.cmp.name_type(),
    }
}

/// Checks a ColumnParent against the column family's kind.
pub fn validate_parent(meta: &CfMetadata, super_column: Option<&[u8]>) -> TResult<()> {
    match (meta.is_super(), super_column) {
        (false, Some(_)) => {
            Err(ire(format!("ColumnFamily {} is not a super column family: super_column is invalid", meta.name())))
        }
        (true, Some(sc)) => validate_name(sc, meta.cmp.name_type(), "super column"),
        _ => Ok(()),
    }
}

/// The (super column, column) parts of a ColumnPath.
pub type PathParts<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// Checks a ColumnPath: returns (super column, column) for the kind of column family.
pub fn validate_path<'a>(meta: &CfMetadata, path: &'a t::ColumnPath) -> TResult<PathParts<'a>> {
    let sc = path.super_column.as_deref();
    let col = path.column.as_deref();
    if meta.is_super() {
        if sc.is_none() && col.is_some() {
            return Err(ire(format!(
                "A column cannot be specified without specifying a super column for removal on super CF {}",
                meta.name()
            )));
        }
        if let Some(sc) = sc {
            validate_name(sc, meta.cmp.name_type(), "super column")?;
        }
        if let (Some(c), Some(sub)) = (col, meta.cmp.sub_type()) {
            validate_name(c, sub, "column")?;
        }
    } else {
        if sc.is_some() {
            return Err(ire(format!("supercolumn parameter is invalid for standard CF {}", meta.name())));
        }
        if let Some(c) = col {
            validate_name(c, meta.cmp.name_type(), "column")?;
        }
    }
    Ok((sc, col))
}

/// A column value against its validator.
pub fn validate_value(meta: &CfMetadata, name: &[u8], value: &[u8]) -> TResult<()> {
    let ty = meta.validators.value(name);
    if ty.is_counter() {
        // Counters are written with add (or CounterColumns in batch_mutate), never as values.
        return Err(ire(format!("invalid operation for commutative table {}", meta.name())));
    }
    ty.validate(value).map_err(|e| {
        let shown = meta.cmp.sub_type().unwrap_or(meta.cmp.name_type()).to_display_string(name);
        ire(format!("({e}) [{}][{}][{shown}] failed validation", meta.keyspace(), meta.name()))
    })
}

/// Builds the read filter of a SlicePredicate read under `parent_super` (a super column, for
/// a read inside it).
pub fn predicate_filter(
    meta: &CfMetadata,
    parent_super: Option<&[u8]>,
    predicate: &t::SlicePredicate,
) -> TResult<ReadFilter> {
    let cmp = &meta.cmp;
    let (names_type, unit) = match (cmp.is_super(), parent_super) {
        (true, None) => (cmp.name_type(), CountUnit::SuperColumns),
        (true, Some(_)) => (cmp.sub_type().unwrap_or(cmp.name_type()), CountUnit::Cells),
        (false, _) => (cmp.name_type(), CountUnit::Cells),
    };
    let encode = |name: &[u8]| -> Vec<u8> {
        match (cmp.is_super(), parent_super) {
            (true, None) if name.is_empty() => Vec::new(),
            (true, None) => compose_super(name, b""),
            (true, Some(sc)) => compose_super(sc, name),
            (false, _) => name.to_vec(),
        }
    };
    match (&predicate.column_names, &predicate.slice_range) {
        (Some(_), Some(_)) => Err(ire("SlicePredicate column_names and slice_range may not both be present")),
        (None, None) => Err(ire("A SlicePredicate must be given a list of Columns, a SliceRange, or both")),
        (Some(names), None) => {
            for n in names {
                validate_name(n, names_type, "column")?;
            }
            Ok(ReadFilter::names(cmp, names.iter().map(|n| encode(n)).collect(), unit))
        }
        (None, Some(range)) => {
            if range.count < 0 {
                return Err(ire("get_slice requires non-negative count"));
            }
            for b in [&range.start, &range.finish] {
                if !b.is_empty() {
                    validate_name(b, names_type, "slice bound")?;
                }
            }
            check_slice_order(names_type, &range.start, &range.finish, range.reversed)?;
            Ok(ReadFilter::slice(
                encode(&range.start),
                encode(&range.finish),
                range.reversed,
                range.count as usize,
                unit,
            ))
        }
    }
}

/// A slice's finish must not come before its start in the order of traversal.
pub fn check_slice_order(ty: &AbstractType, start: &[u8], finish: &[u8], reversed: bool) -> TResult<()> {
    if start.is_empty() || finish.is_empty() {
        return Ok(());
    }
    let order = ty.compare(start, finish);
    let bad = if reversed { order == std::cmp::Ordering::Less } else { order == std::cmp::Ordering::Greater };
    if bad {
        return Err(ire("range finish must come after start in the order of traversal"));
    }
    Ok(())
}

/// Slices of get_multi_slice must be in traversal order and must not overlap.
pub fn check_multi_slice_order(ty: &AbstractType, slices: &[(Vec<u8>, Vec<u8>)], reversed: bool) -> TResult<()> {
    for w in slices.windows(2) {
        let (prev_finish, next_start) = (&w[0].1, &w[1].0);
        let bad = prev_finish.is_empty() || next_start.is_empty() || {
            let o = ty.compare(prev_finish, next_start);
            if reversed {
                o != std::cmp::Ordering::Greater
            } else {
                o != std::cmp::Ordering::Less
            }
        };
        if bad {
            return Err(ire("column slices must be in order of traversal and must not overlap"));
        }
    }
    Ok(())
}
