//! Request validation, with Cassandra's rules and reasons (Cassandra's ThriftValidation).
//! Every function returns the `InvalidRequestException` (or `UnavailableException`) the client
//! must see.

use storage::cfs::ColumnFamilyStore;
use storage::comparator::CellComparator;
use storage::data::compose_super;
use storage::filter::{CountUnit, ReadFilter};
use storage::marshal::AbstractType;
use storage::schema::KeyspaceDef;
use storage::StorageError;
use thrift_idl as t;

use super::convert::replication_factor;

pub type TResult<T> = thrift::Result<T>;

pub fn ire(why: impl Into<String>) -> thrift::Error {
    thrift_idl::invalid_request(why)
}

/// Longest key and column name Cassandra accepts.
pub const MAX_NAME_LENGTH: usize = u16::MAX as usize;
/// Longest TTL Cassandra accepts: 20 years.
pub const MAX_TTL: i32 = 20 * 365 * 24 * 60 * 60;

/// Maps an engine error to what the client sees.
pub fn storage_error(e: StorageError) -> thrift::Error {
    match e {
        StorageError::UnknownKeyspace(k) => ire(format!("Keyspace '{k}' does not exist")),
        StorageError::UnknownColumnFamily { cf, .. } => ire(format!("unconfigured table {cf}")),
        StorageError::KeyspaceExists(k) => ire(format!("Cannot add existing keyspace \"{k}\"")),
        StorageError::ColumnFamilyExists { keyspace, cf } => {
            ire(format!("Cannot add already existing table \"{cf}\" to keyspace \"{keyspace}\""))
        }
        StorageError::InvalidSchema(m) => ire(m),
        StorageError::Marshal(m) => ire(m.to_string()),
        StorageError::Dht(d) => ire(d.to_string()),
        other => {
            tracing::error!(error = %other, "request failed in the storage engine");
            thrift::Error::Application(thrift::ApplicationError::new(
                thrift::ApplicationErrorKind::InternalError,
                other.to_string(),
            ))
        }
    }
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

pub fn validate_key_type(store: &ColumnFamilyStore, key: &[u8]) -> TResult<()> {
    validate_key(key)?;
    store.validators().key.validate(key).map_err(|e| ire(format!("Key failed validation: {e}")))
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

/// Checks a ColumnParent against the column family's kind.
pub fn validate_parent(store: &ColumnFamilyStore, super_column: Option<&[u8]>) -> TResult<()> {
    match (store.cmp.is_super(), super_column) {
        (false, Some(_)) => {
            Err(ire(format!("ColumnFamily {} is not a super column family: super_column is invalid", store.name)))
        }
        (true, Some(sc)) => validate_name(sc, store.cmp.name_type(), "super column"),
        _ => Ok(()),
    }
}

/// The (super column, column) parts of a ColumnPath.
pub type PathParts<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// Checks a ColumnPath: returns (super column, column) for the kind of column family.
pub fn validate_path<'a>(store: &ColumnFamilyStore, path: &'a t::ColumnPath) -> TResult<PathParts<'a>> {
    let sc = path.super_column.as_deref();
    let col = path.column.as_deref();
    if store.cmp.is_super() {
        if sc.is_none() && col.is_some() {
            return Err(ire(format!(
                "A column cannot be specified without specifying a super column for removal on super CF {}",
                store.name
            )));
        }
        if let Some(sc) = sc {
            validate_name(sc, store.cmp.name_type(), "super column")?;
        }
        if let (Some(c), Some(sub)) = (col, store.cmp.sub_type()) {
            validate_name(c, sub, "column")?;
        }
    } else {
        if sc.is_some() {
            return Err(ire(format!("supercolumn parameter is invalid for standard CF {}", store.name)));
        }
        if let Some(c) = col {
            validate_name(c, store.cmp.name_type(), "column")?;
        }
    }
    Ok((sc, col))
}

/// A column value against its validator.
pub fn validate_value(store: &ColumnFamilyStore, name: &[u8], value: &[u8]) -> TResult<()> {
    let validators = store.validators();
    let ty = validators.value(name);
    if ty.is_counter() {
        return Err(ire(format!(
            "Column family {} holds counters: counter columns are not supported yet (use add once counters land)",
            store.name
        )));
    }
    ty.validate(value).map_err(|e| {
        let shown = store.cmp.sub_type().unwrap_or(store.cmp.name_type()).to_display_string(name);
        ire(format!("({e}) [{}][{}][{shown}] failed validation", store.keyspace, store.name))
    })
}

pub fn validate_ttl(ttl: i32) -> TResult<()> {
    if ttl <= 0 {
        return Err(ire(format!("ttl must be greater than zero, got {ttl}")));
    }
    if ttl > MAX_TTL {
        return Err(ire(format!("ttl is too large. requested ({ttl}) maximum ({MAX_TTL})")));
    }
    Ok(())
}

/// Builds the read filter of a SlicePredicate read under `parent_super` (a super column, for
/// a read inside it).
pub fn predicate_filter(
    store: &ColumnFamilyStore,
    parent_super: Option<&[u8]>,
    predicate: &t::SlicePredicate,
) -> TResult<ReadFilter> {
    let cmp = &store.cmp;
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

/// Checks a consistency level for this single node: every level that needs more replicas than
/// the one live node answers UnavailableException, as Cassandra does.
pub fn check_consistency(ks: &KeyspaceDef, cl: t::ConsistencyLevel, write: bool) -> TResult<()> {
    use t::ConsistencyLevel as CL;
    let rf = replication_factor(ks);
    let live = rf.min(1);
    let needed = match cl {
        CL::ANY => {
            if !write {
                return Err(ire("ANY ConsistencyLevel is only supported for writes"));
            }
            return Ok(());
        }
        CL::ONE | CL::LOCAL_ONE => 1,
        CL::TWO => 2,
        CL::THREE => 3,
        CL::QUORUM | CL::LOCAL_QUORUM => rf / 2 + 1,
        CL::ALL => rf,
        CL::EACH_QUORUM => {
            if !write {
                return Err(ire("EACH_QUORUM ConsistencyLevel is only supported for writes"));
            }
            rf / 2 + 1
        }
        CL::SERIAL | CL::LOCAL_SERIAL => {
            return Err(ire(if write {
                "You must use conditional updates for serializable writes"
            } else {
                "SERIAL/LOCAL_SERIAL consistency may only be requested for cas reads, which are not supported yet"
            }))
        }
        other => return Err(ire(format!("unknown consistency level {}", other.0))),
    };
    if needed > live {
        return Err(thrift_idl::user_error(t::UnavailableException::new()));
    }
    Ok(())
}

/// The comparator's name type for error messages and bound checks.
pub fn top_type(cmp: &CellComparator) -> &AbstractType {
    cmp.name_type()
}
