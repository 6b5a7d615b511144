//! CQL types over our marshal types, and the CQL view of a column family, which lives in the
//! data model (`model::cql_table`) so that the engine's `system_schema` rows describe tables as
//! CQL reads them.

pub use model::cql_table::*;

use model::marshal::AbstractType;

use crate::ast::{CqlType, NativeType};
use crate::exec::InvalidRequest;

/// The storage type of a CQL type, checked as 3.11's `CQL3Type.Raw.prepare` checks it; user
/// types are not supported yet.
pub fn storage_type(ty: &CqlType) -> Result<AbstractType, InvalidRequest> {
    storage_type_in(ty, Within::Top)
}

/// Where a type is written: at the top of a column's type, inside `frozen<>` or a tuple
/// (everything frozen), or inside a non-frozen collection.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Within<'t> {
    Top,
    Frozen,
    /// Inside this non-frozen collection.
    Collection(&'t CqlType),
}

fn storage_type_in<'t>(ty: &'t CqlType, within: Within<'t>) -> Result<AbstractType, InvalidRequest> {
    let inner_within = if within == Within::Top { Within::Collection(ty) } else { within };
    let element = |t: &CqlType| -> Result<AbstractType, InvalidRequest> {
        let inner = storage_type_in(t, inner_within)?;
        if inner.is_counter() {
            return Err(InvalidRequest(format!("Counters are not allowed inside collections: {ty}")));
        }
        Ok(inner)
    };
    let collection = |t: AbstractType| -> Result<AbstractType, InvalidRequest> {
        match within {
            Within::Top => Ok(t),
            Within::Frozen => Ok(t.frozen()),
            Within::Collection(outer) => {
                Err(InvalidRequest(format!("Non-frozen collections are not allowed inside collections: {outer}")))
            }
        }
    };
    match ty {
        CqlType::Native(n) => Ok(native(*n)),
        CqlType::List(e) => collection(AbstractType::List { element: Box::new(element(e)?), frozen: false }),
        CqlType::Set(e) => collection(AbstractType::Set { element: Box::new(element(e)?), frozen: false }),
        CqlType::Map(k, v) => {
            collection(AbstractType::Map { key: Box::new(element(k)?), value: Box::new(element(v)?), frozen: false })
        }
        CqlType::Tuple(types) => {
            if types.len() > MAX_TUPLE_COMPONENTS {
                return Err(InvalidRequest(format!("a tuple may have at most {MAX_TUPLE_COMPONENTS} components")));
            }
            let mut parts = Vec::new();
            for t in types {
                let part = storage_type_in(t, Within::Frozen)?;
                if part.is_counter() {
                    return Err(InvalidRequest("Counters are not allowed inside tuples".into()));
                }
                parts.push(part);
            }
            Ok(AbstractType::Tuple(parts))
        }
        CqlType::Frozen(inner) => match inner.as_ref() {
            CqlType::Native(_) => Err(InvalidRequest(format!(
                "frozen<> is only allowed on collections, tuples, and user-defined types (got {ty})"
            ))),
            CqlType::UserDefined(_) => Err(not_supported(ty)),
            other => storage_type_in(other, Within::Frozen),
        },
        CqlType::Custom(class) => match AbstractType::parse(class) {
            Ok(t)
                if !matches!(
                    t,
                    AbstractType::Composite(_) | AbstractType::DynamicComposite(_) | AbstractType::Reversed(_)
                ) =>
            {
                Ok(t)
            }
            Ok(_) => Err(not_supported(ty)),
            Err(e) => Err(InvalidRequest(format!("Error setting type {class}: {e}"))),
        },
        _ => Err(not_supported(ty)),
    }
}

/// Most components a tuple type may have (a bound of Sibyl's: 3.11 has none).
pub const MAX_TUPLE_COMPONENTS: usize = 1024;

fn not_supported(ty: &CqlType) -> InvalidRequest {
    InvalidRequest(format!("type {ty} is not supported yet"))
}

/// The storage type of a native CQL type (3.11's `CQL3Type.Native`).
pub fn native(ty: NativeType) -> AbstractType {
    match ty {
        NativeType::Ascii => AbstractType::Ascii,
        NativeType::Bigint => AbstractType::Long,
        NativeType::Blob => AbstractType::Bytes,
        NativeType::Boolean => AbstractType::Boolean,
        NativeType::Counter => AbstractType::CounterColumn,
        NativeType::Date => AbstractType::SimpleDate,
        NativeType::Decimal => AbstractType::Decimal,
        NativeType::Double => AbstractType::Double,
        // No DurationType in our marshal yet: durations are refused where they are parsed.
        NativeType::Duration => AbstractType::Bytes,
        NativeType::Float => AbstractType::Float,
        NativeType::Inet => AbstractType::InetAddress,
        NativeType::Int => AbstractType::Int32,
        NativeType::Smallint => AbstractType::Short,
        NativeType::Text | NativeType::Varchar => AbstractType::Utf8,
        NativeType::Time => AbstractType::Time,
        NativeType::Timestamp => AbstractType::Timestamp,
        NativeType::Timeuuid => AbstractType::TimeUuid,
        NativeType::Tinyint => AbstractType::Byte,
        NativeType::Uuid => AbstractType::Uuid,
        NativeType::Varint => AbstractType::Integer,
    }
}

/// The native CQL type whose storage type is `ty`, if there is one.
pub fn cql_native_type(ty: &AbstractType) -> Option<NativeType> {
    let base = match ty {
        AbstractType::Reversed(b) => b.as_ref(),
        t => t,
    };
    NativeType::ALL
        .into_iter()
        .filter(|n| *n != NativeType::Duration && *n != NativeType::Varchar)
        .find(|n| native(*n) == *base)
}
