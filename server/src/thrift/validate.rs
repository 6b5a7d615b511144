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

/// A key, checked against the column family's key validator too (3.11's validateKey, for the
/// reads and writes that name a row). 3.11 answers with the validator's reason alone.
pub fn validate_key_type(meta: &CfMetadata, key: &[u8]) -> TResult<()> {
    validate_key(key)?;
    match marshal_error(&meta.validators.key, key) {
        Some(reason) => Err(ire(reason)),
        None => Ok(()),
    }
}

/// Why `ty` refuses `v`, in the words of 3.11's serializers (their MarshalException), or None
/// when the value is valid. Composite types keep Sibyl's own reason.
pub fn marshal_error(ty: &AbstractType, v: &[u8]) -> Option<String> {
    use AbstractType as T;
    let err = ty.validate(v).err()?;
    let n = v.len();
    Some(match ty {
        T::Reversed(base) => return marshal_error(base, v),
        T::Long | T::CounterColumn => format!("Expected 8 or 0 byte long ({n})"),
        T::Date | T::Timestamp => format!("Expected 8 or 0 byte long for date ({n})"),
        T::Int32 => format!("Expected 4 or 0 byte int ({n})"),
        T::Double => format!("Expected 8 or 0 byte value for a double ({n})"),
        T::Float => format!("Expected 4 or 0 byte value for a float ({n})"),
        T::Boolean => format!("Expected 1 or 0 byte value ({n})"),
        T::Uuid | T::LexicalUuid => format!("UUID should be 16 or 0 bytes ({n})"),
        T::TimeUuid if n != 16 => format!("UUID should be 16 or 0 bytes ({n})"),
        T::TimeUuid => "Invalid version for TimeUUID type.".to_string(),
        T::Decimal => format!("Expected 0 or at least 4 bytes ({n})"),
        T::InetAddress => {
            let hex: String = v.iter().map(|b| format!("{b:02x}")).collect();
            format!("Expected 4 or 16 byte inetaddress; got {hex}")
        }
        T::Short => format!("Expected 2 bytes for a smallint ({n})"),
        T::Byte => format!("Expected 1 byte for a tinyint ({n})"),
        T::SimpleDate => format!("Expected 4 byte long for date ({n})"),
        T::Time => format!("Expected 8 byte long for time ({n})"),
        T::Empty => "EmptyType only accept empty values".to_string(),
        T::Utf8 => "String didn't validate.".to_string(),
        // Java prints the first byte above 127 as a signed byte.
        T::Ascii => match v.iter().find(|b| **b >= 0x80) {
            Some(b) => format!("Invalid byte for ascii: {}", *b as i8),
            None => err.to_string(),
        },
        T::Bytes | T::Integer | T::Composite(_) | T::DynamicComposite(_) => err.to_string(),
    })
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

fn validate_path_names(meta: &CfMetadata, sc: Option<&[u8]>, col: Option<&[u8]>) -> TResult<()> {
    if let Some(sc) = sc {
        validate_name(sc, meta.cmp.name_type(), "super column")?;
    }
    if let Some(c) = col {
        validate_name(c, name_type(meta, sc), "column")?;
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
    match marshal_error(ty, value) {
        None => Ok(()),
        Some(e) => {
            let shown = meta.cmp.sub_type().unwrap_or(meta.cmp.name_type()).to_display_string(name);
            Err(ire(format!("({e}) [{}][{}][{shown}] failed validation", meta.keyspace(), meta.name())))
        }
    }
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
                validate_name(n, names_type, "column")?;
            }
            Ok(ReadFilter::names(cmp, names.into_iter().map(encode).collect(), unit))
        }
        (None, Some(range)) => {
            validate_slice_range(names_type, &range)?;
            Ok(ReadFilter::slice(encode(range.start), encode(range.finish), range.reversed, range.count as usize, unit))
        }
    }
}

/// A SliceRange over names of type `ty` (3.11's validateRange): a non-negative count, bounds
/// valid for `ty`, and a finish that does not come before the start in the order of traversal
/// (`reversed` counts).
pub fn validate_slice_range(ty: &AbstractType, range: &t::SliceRange) -> TResult<()> {
    if range.count < 0 {
        return Err(ire("get_slice requires non-negative count"));
    }
    for b in [&range.start, &range.finish] {
        if !b.is_empty() {
            validate_name(b, ty, "slice bound")?;
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
    use storage::schema::{CfDef, ColumnType};

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

    #[test]
    fn marshal_errors_are_in_3_11_words() {
        use AbstractType as T;
        let cases: [(T, &[u8], &str); 10] = [
            (T::Int32, b"abc", "Expected 4 or 0 byte int (3)"),
            (T::Uuid, b"abc", "UUID should be 16 or 0 bytes (3)"),
            (T::TimeUuid, &[0u8; 16], "Invalid version for TimeUUID type."),
            (T::Utf8, &[0xff], "String didn't validate."),
            (T::Ascii, b"a\xc3\xa9", "Invalid byte for ascii: -61"),
            (T::Boolean, b"ab", "Expected 1 or 0 byte value (2)"),
            (T::Timestamp, b"abc", "Expected 8 or 0 byte long for date (3)"),
            (T::Double, b"abc", "Expected 8 or 0 byte value for a double (3)"),
            (T::InetAddress, &[1, 2, 3], "Expected 4 or 16 byte inetaddress; got 010203"),
            (T::Reversed(Box::new(T::Long)), b"abc", "Expected 8 or 0 byte long (3)"),
        ];
        for (ty, v, expected) in cases {
            assert_eq!(marshal_error(&ty, v).as_deref(), Some(expected), "{ty:?}");
        }
        assert_eq!(marshal_error(&T::Long, &7i64.to_be_bytes()), None);
        assert_eq!(marshal_error(&T::Bytes, b"anything"), None);
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
