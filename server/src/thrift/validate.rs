//! Request validation, with Cassandra's rules and reasons (Cassandra's ThriftValidation). Every
//! function returns the InvalidRequestException the client must see. They check Thrift
//! structs against a column family's [`CfMetadata`] and know nothing of the engine, so any front
//! end speaking these structs (the 0.6 API converts its own to them) shares them.

use model::data::compose_super;
use model::filter::{CountUnit, ReadFilter};
use model::marshal::AbstractType;
use model::schema::CfMetadata;
use thrift_idl as t;

use super::error::{ire, TResult};

/// Longest key and column name Cassandra accepts.
pub const MAX_NAME_LENGTH: usize = u16::MAX as usize;
/// Longest TTL Cassandra accepts: 20 years.
pub const MAX_TTL: i32 = model::schema_rules::MAX_TTL;

/// Keyspaces Cassandra reserves for itself; clients cannot create, change or write them.
pub use model::schema::is_reserved_keyspace;

pub fn validate_key(key: &[u8]) -> TResult<()> {
    if key.is_empty() {
        return Err(ire("Key may not be empty"));
    }
    if key.len() > MAX_NAME_LENGTH {
        return Err(ire(format!("Key length of {} is longer than maximum of {MAX_NAME_LENGTH}", key.len())));
    }
    Ok(())
}

/// A key, checked against the column family's key validator too (3.11's validateKey, for the
/// reads and writes that name a row). 3.11 answers with the validator's reason alone.
pub fn validate_key_type(meta: &CfMetadata, key: &[u8]) -> TResult<()> {
    validate_key(key)?;
    meta.validators.key.validate(key).map_err(|e| ire(e.to_string()))
}

/// A column name, or a super column named on its own: non-empty, at most 65535 bytes, valid for
/// its comparator `ty` (3.11's validateColumnNames). 3.11 answers an invalid name with the
/// comparator's reason alone, and words the length checks as a column name's even for a super
/// column (see [`check_super_column_name`] for where it does not).
pub fn validate_name(name: &[u8], ty: &AbstractType) -> TResult<()> {
    check_name_length(name, "column")?;
    ty.validate(name).map_err(|e| ire(e.to_string()))
}

/// A super column named as the parent of a column: 3.11 checks its length first, in its own
/// words ("supercolumn"), before the column; its type is checked with [`validate_name`].
pub fn check_super_column_name(super_column: &[u8]) -> TResult<()> {
    check_name_length(super_column, "supercolumn")
}

/// A name's length in 3.11's words, `what` being "column" or "supercolumn".
pub fn check_name_length(name: &[u8], what: &str) -> TResult<()> {
    if name.len() > MAX_NAME_LENGTH {
        return Err(ire(format!("{what} name length must not be greater than {MAX_NAME_LENGTH}")));
    }
    if name.is_empty() {
        return Err(ire(format!("{what} name must not be empty")));
    }
    Ok(())
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
        (true, Some(sc)) => validate_name(sc, meta.cmp.name_type()),
        _ => Ok(()),
    }
}

/// The (super column, column) parts of a ColumnPath.
pub type PathParts<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// Checks a ColumnPath that names what to read (get; 3.11's validateColumnPath): a standard
/// column family needs the column, a super column family the super column.
pub fn validate_column_path<'a>(meta: &CfMetadata, path: &'a t::ColumnPath) -> TResult<PathParts<'a>> {
    let sc = path.super_column.as_deref();
    let col = path.column.as_deref();
    if meta.is_super() {
        if sc.is_none() {
            return Err(ire(format!("supercolumn parameter is not optional for super CF {}", meta.name())));
        }
    } else {
        if sc.is_some() {
            return Err(ire(format!("supercolumn parameter is invalid for standard CF {}", meta.name())));
        }
        if col.is_none() {
            return Err(ire(format!("column parameter is not optional for standard CF {}", meta.name())));
        }
    }
    validate_path_names(meta, sc, col)?;
    Ok((sc, col))
}

/// Checks a ColumnPath that names what to delete (remove; 3.11's validateColumnPathOrParent):
/// the column may be left out, and in a super column family so may the super column, but not
/// the super column alone.
pub fn validate_path_or_parent<'a>(meta: &CfMetadata, path: &'a t::ColumnPath) -> TResult<PathParts<'a>> {
    let sc = path.super_column.as_deref();
    let col = path.column.as_deref();
    if meta.is_super() {
        if sc.is_none() && col.is_some() {
            return Err(ire(format!(
                "A column cannot be specified without specifying a super column for removal on super CF {}",
                meta.name()
            )));
        }
    } else if sc.is_some() {
        return Err(ire(format!("supercolumn may not be specified for standard CF {}", meta.name())));
    }
    validate_path_names(meta, sc, col)?;
    Ok((sc, col))
}

/// The names of a ColumnPath in 3.11's order: with a column, the super column's length (as its
/// parent), then the column; then the super column as a name of its own.
fn validate_path_names(meta: &CfMetadata, sc: Option<&[u8]>, col: Option<&[u8]>) -> TResult<()> {
    if let Some(c) = col {
        if let Some(sc) = sc {
            check_super_column_name(sc)?;
        }
        validate_name(c, name_type(meta, sc))?;
    }
    if let Some(sc) = sc {
        validate_name(sc, meta.cmp.name_type())?;
    }
    Ok(())
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
    })?;
    if value.len() >= MAX_INDEXED_VALUE {
        check_indexable(meta, name, value)?;
    }
    Ok(())
}

/// An indexed value must be shorter than this (3.11: `FBUtilities.MAX_UNSIGNED_SHORT`), as
/// it becomes a key of the index.
const MAX_INDEXED_VALUE: usize = 65535;

/// Refuses a value too long for the index on its column, in 3.11's words (CassandraIndex's
/// validateIndexedValue).
fn check_indexable(meta: &CfMetadata, name: &[u8], value: &[u8]) -> TResult<()> {
    let Some(index) = meta.def.column_metadata.iter().find(|c| c.name == name && c.index_type.is_some()) else {
        return Ok(());
    };
    let shown = meta.cmp.sub_type().unwrap_or(meta.cmp.name_type()).to_display_string(name);
    Err(ire(format!(
        "Cannot index value of size {} for index {} on {}.{}({shown}) (maximum allowed size={MAX_INDEXED_VALUE})",
        value.len(),
        index.index_name.as_deref().unwrap_or_default(),
        meta.keyspace(),
        meta.name()
    )))
}

/// Builds the read filter of a SlicePredicate read under `parent_super` (a super column, for
/// a read inside it).
pub fn predicate_filter(
    meta: &CfMetadata,
    parent_super: Option<&[u8]>,
    predicate: t::SlicePredicate,
) -> TResult<ReadFilter> {
    let cmp = &meta.cmp;
    let (names_type, unit) = match (cmp.is_super(), parent_super) {
        (true, None) => (cmp.name_type(), CountUnit::SuperColumns),
        (true, Some(_)) => (cmp.sub_type().unwrap_or(cmp.name_type()), CountUnit::Cells),
        (false, _) => (cmp.name_type(), CountUnit::Cells),
    };
    // Takes the client's names: a standard column family's are used as they are.
    let encode = |name: Vec<u8>| -> Vec<u8> {
        match (cmp.is_super(), parent_super) {
            (true, None) if name.is_empty() => name,
            (true, None) => compose_super(&name, b""),
            (true, Some(sc)) => compose_super(sc, &name),
            (false, _) => name,
        }
    };
    // A read takes names or a range, never both (3.11's validatePredicate; a Deletion may
    // carry both, see `convert::add_deletion`).
    match (predicate.column_names, predicate.slice_range) {
        (Some(_), Some(_)) => Err(ire("predicate column_names and slice_range may not both be present")),
        (None, None) => Err(ire("predicate column_names and slice_range may not both be null")),
        (Some(names), None) => {
            for n in &names {
                validate_name(n, names_type)?;
            }
            Ok(ReadFilter::names(cmp, names.into_iter().map(encode).collect(), unit))
        }
        (None, Some(range)) => {
            validate_slice_range(names_type, &range)?;
            Ok(ReadFilter::slice(encode(range.start), encode(range.finish), range.reversed, range.count as usize, unit))
        }
    }
}

/// A SliceRange over names of type `ty` (3.11's validateRange, in its order and words): a
/// non-negative count, bounds of at most 65535 bytes and valid for `ty` (an empty bound is
/// open), and a finish that does not come before the start in the order of traversal
/// (`reversed` counts).
pub fn validate_slice_range(ty: &AbstractType, range: &t::SliceRange) -> TResult<()> {
    if range.count < 0 {
        return Err(ire("get_slice requires non-negative count"));
    }
    for (b, what) in [(&range.start, "start"), (&range.finish, "finish")] {
        if b.len() > MAX_NAME_LENGTH {
            return Err(ire(format!("range {what} length cannot be larger than {MAX_NAME_LENGTH}")));
        }
    }
    for b in [&range.start, &range.finish] {
        if !b.is_empty() {
            ty.validate(b).map_err(|e| ire(e.to_string()))?;
        }
    }
    check_slice_order(ty, &range.start, &range.finish, range.reversed)
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

#[cfg(test)]
mod tests {
    use model::schema::{CfDef, ColumnType};

    use super::*;
    use crate::thrift::error::ThriftError;

    const MARSHAL: &str = "org.apache.cassandra.db.marshal";

    fn standard() -> CfMetadata {
        let mut def = CfDef::new("KS", "Std");
        def.comparator_type = format!("{MARSHAL}.UTF8Type");
        def.key_validation_class = format!("{MARSHAL}.LongType");
        CfMetadata::new(def).expect("valid definition")
    }

    fn super_cf() -> CfMetadata {
        let mut def = CfDef::new("KS", "Sup");
        def.column_type = ColumnType::Super;
        def.comparator_type = format!("{MARSHAL}.UTF8Type");
        def.subcomparator_type = Some(format!("{MARSHAL}.UTF8Type"));
        CfMetadata::new(def).expect("valid definition")
    }

    fn why<T: std::fmt::Debug>(r: TResult<T>) -> String {
        match r {
            Err(ThriftError::Invalid(why)) => why,
            other => panic!("expected InvalidRequestException, got {other:?}"),
        }
    }

    fn path(cf: &str, sc: Option<&str>, col: Option<&str>) -> t::ColumnPath {
        t::ColumnPath::new(cf.to_string(), sc.map(|s| s.as_bytes().to_vec()), col.map(|c| c.as_bytes().to_vec()))
    }

    #[test]
    fn a_read_path_names_what_its_kind_of_column_family_needs() {
        assert_eq!(
            why(validate_column_path(&super_cf(), &path("Sup", None, Some("c")))),
            "supercolumn parameter is not optional for super CF Sup"
        );
        assert_eq!(
            why(validate_column_path(&standard(), &path("Std", None, None))),
            "column parameter is not optional for standard CF Std"
        );
        assert_eq!(
            why(validate_column_path(&standard(), &path("Std", Some("s"), Some("c")))),
            "supercolumn parameter is invalid for standard CF Std"
        );
        assert!(validate_column_path(&super_cf(), &path("Sup", Some("s"), None)).is_ok());
        assert!(validate_column_path(&standard(), &path("Std", None, Some("c"))).is_ok());
    }

    #[test]
    fn a_removal_path_may_stop_at_the_row_or_the_super_column() {
        assert!(validate_path_or_parent(&standard(), &path("Std", None, None)).is_ok());
        assert!(validate_path_or_parent(&super_cf(), &path("Sup", None, None)).is_ok());
        assert!(validate_path_or_parent(&super_cf(), &path("Sup", Some("s"), None)).is_ok());
        assert_eq!(
            why(validate_path_or_parent(&standard(), &path("Std", Some("s"), None))),
            "supercolumn may not be specified for standard CF Std"
        );
        assert!(why(validate_path_or_parent(&super_cf(), &path("Sup", None, Some("c"))))
            .starts_with("A column cannot be specified without specifying a super column for removal on super CF Sup"));
    }

    #[test]
    fn keys_are_checked_against_the_key_validator() {
        let meta = standard();
        // 3.11 answers with the validator's reason alone.
        assert_eq!(why(validate_key_type(&meta, b"abc")), "Expected 8 or 0 byte long (3)");
        assert_eq!(why(validate_key_type(&meta, b"")), "Key may not be empty");
        let long = vec![0u8; MAX_NAME_LENGTH + 1];
        assert_eq!(why(validate_key_type(&meta, &long)), "Key length of 65536 is longer than maximum of 65535");
        assert!(validate_key_type(&meta, &7i64.to_be_bytes()).is_ok());
    }

    /// A standard column family named `name` with these marshal types (short names).
    fn typed_cf(name: &str, comparator: &str, key: &str, value: &str) -> CfMetadata {
        let mut def = CfDef::new("KS", name);
        def.comparator_type = format!("{MARSHAL}.{comparator}");
        def.key_validation_class = format!("{MARSHAL}.{key}");
        def.default_validation_class = format!("{MARSHAL}.{value}");
        CfMetadata::new(def).expect("valid definition")
    }

    fn bytes_path(cf: &str, sc: Option<&[u8]>, col: Option<&[u8]>) -> t::ColumnPath {
        t::ColumnPath::new(cf.to_string(), sc.map(<[u8]>::to_vec), col.map(<[u8]>::to_vec))
    }

    #[test]
    fn keys_and_values_are_refused_in_the_validators_3_11_words() {
        let meta = typed_cf("Vals", "UTF8Type", "TimeUUIDType", "AsciiType");
        assert_eq!(why(validate_key_type(&meta, &[0u8; 16])), "Invalid version for TimeUUID type.");
        assert_eq!(why(validate_key_type(&meta, b"abc")), "UUID should be 16 or 0 bytes (3)");
        let meta = typed_cf("Vals", "UTF8Type", "ReversedType(LongType)", "AsciiType");
        assert_eq!(why(validate_key_type(&meta, b"abc")), "Expected 8 or 0 byte long (3)");
        // A value: 3.11's "(reason) [keyspace][column family][column] failed validation".
        assert_eq!(
            why(validate_value(&meta, b"c", b"a\xc3\xa9")),
            "(Invalid byte for ascii: -61) [KS][Vals][c] failed validation"
        );
        let meta = typed_cf("Longs", "LongType", "BytesType", "LongType");
        assert_eq!(
            why(validate_value(&meta, &7i64.to_be_bytes(), b"abc")),
            "(Expected 8 or 0 byte long (3)) [KS][Longs][7] failed validation"
        );
        assert!(validate_value(&meta, &7i64.to_be_bytes(), &[]).is_ok());
    }

    #[test]
    fn an_invalid_name_is_refused_with_the_comparators_reason_alone() {
        // 3.11's validateColumnNames passes the comparator's MarshalException message on as it is.
        let meta = typed_cf("Longs", "LongType", "BytesType", "BytesType");
        let bad: &[u8] = &[1, 2, 3];
        let expected = "Expected 8 or 0 byte long (3)";
        assert_eq!(why(validate_column_path(&meta, &bytes_path("Longs", None, Some(bad)))), expected);
        assert_eq!(why(validate_path_or_parent(&meta, &bytes_path("Longs", None, Some(bad)))), expected);
        let names = t::SlicePredicate::new(vec![7i64.to_be_bytes().to_vec(), bad.to_vec()], None);
        assert_eq!(why(predicate_filter(&meta, None, names)), expected);
        assert!(validate_column_path(&meta, &bytes_path("Longs", None, Some(&7i64.to_be_bytes()))).is_ok());
    }

    #[test]
    fn empty_and_overlong_names_are_refused_in_3_11_words() {
        let meta = standard();
        let long = vec![b'x'; MAX_NAME_LENGTH + 1];
        assert_eq!(
            why(validate_column_path(&meta, &bytes_path("Std", None, Some(b"")))),
            "column name must not be empty"
        );
        assert_eq!(
            why(validate_column_path(&meta, &bytes_path("Std", None, Some(&long)))),
            "column name length must not be greater than 65535"
        );
        // A super column is a "supercolumn" where 3.11 checks it as a column's parent, and a
        // column where it is named on its own.
        let sup = super_cf();
        assert_eq!(
            why(validate_column_path(&sup, &bytes_path("Sup", Some(b""), Some(b"c")))),
            "supercolumn name must not be empty"
        );
        assert_eq!(
            why(validate_column_path(&sup, &bytes_path("Sup", Some(&long), Some(b"c")))),
            "supercolumn name length must not be greater than 65535"
        );
        assert_eq!(
            why(validate_column_path(&sup, &bytes_path("Sup", Some(b""), None))),
            "column name must not be empty"
        );
        assert_eq!(why(validate_parent(&sup, Some(b""))), "column name must not be empty");
        assert_eq!(
            why(validate_column_path(&sup, &bytes_path("Sup", Some(&[0xFF]), Some(b"c")))),
            "String didn't validate."
        );
        // Slice bounds: 3.11's validateRange words.
        let ty = meta.cmp.name_type();
        let range = |start: Vec<u8>, finish: Vec<u8>| t::SliceRange::new(start, finish, false, 10);
        assert_eq!(
            why(validate_slice_range(ty, &range(long.clone(), Vec::new()))),
            "range start length cannot be larger than 65535"
        );
        assert_eq!(
            why(validate_slice_range(ty, &range(Vec::new(), long.clone()))),
            "range finish length cannot be larger than 65535"
        );
        assert_eq!(why(validate_slice_range(ty, &range(vec![0xFF], Vec::new()))), "String didn't validate.");
    }

    #[test]
    fn a_read_predicate_takes_names_or_a_range_not_both() {
        let meta = standard();
        let range = t::SliceRange::new(Vec::new(), Vec::new(), false, 10);
        let both = t::SlicePredicate::new(vec![b"a".to_vec()], range);
        assert_eq!(
            why(predicate_filter(&meta, None, both)),
            "predicate column_names and slice_range may not both be present"
        );
        let neither = t::SlicePredicate::new(None, None);
        assert_eq!(
            why(predicate_filter(&meta, None, neither)),
            "predicate column_names and slice_range may not both be null"
        );
    }

    #[test]
    fn a_slice_range_is_ordered_in_its_direction_of_traversal() {
        let meta = standard();
        let ty = meta.cmp.name_type();
        let range = |start: &str, finish: &str, reversed: bool, count: i32| {
            t::SliceRange::new(start.as_bytes().to_vec(), finish.as_bytes().to_vec(), reversed, count)
        };
        assert!(validate_slice_range(ty, &range("a", "c", false, 10)).is_ok());
        assert!(validate_slice_range(ty, &range("c", "a", true, 10)).is_ok());
        assert!(validate_slice_range(ty, &range("c", "", false, 10)).is_ok());
        let wrong = "range finish must come after start in the order of traversal";
        assert_eq!(why(validate_slice_range(ty, &range("c", "a", false, 10))), wrong);
        assert_eq!(why(validate_slice_range(ty, &range("a", "c", true, 10))), wrong);
        assert_eq!(why(validate_slice_range(ty, &range("a", "c", false, -1))), "get_slice requires non-negative count");
    }
}
