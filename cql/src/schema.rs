//! CQL types over our marshal types, and the CQL view of a column family, which lives in the
//! data model (`model::cql_table`) so that the engine's `system_schema` rows describe tables as
//! CQL reads them.

pub use model::cql_table::*;

use model::marshal::AbstractType;

use model::schema::UserTypeDef;

use crate::ast::{CqlType, NativeType, QualifiedName};
use crate::exec::InvalidRequest;

/// The user types a statement may name: those of its keyspace (3.11 allows no other).
#[derive(Clone, Copy)]
pub struct TypeScope<'a> {
    /// The statement's keyspace.
    pub keyspace: &'a str,
    /// Its user types.
    pub types: &'a [UserTypeDef],
}

impl<'a> TypeScope<'a> {
    /// No user types (a statement outside any keyspace).
    pub const NONE: TypeScope<'static> = TypeScope { keyspace: "", types: &[] };

    /// The user type `name` names, frozen or not, with 3.11's errors for a type of another
    /// keyspace or none.
    pub fn user_type(&self, name: &QualifiedName, frozen: bool) -> Result<AbstractType, InvalidRequest> {
        let keyspace = name.keyspace.as_ref().map_or(self.keyspace, |k| k.name());
        if keyspace != self.keyspace && !self.keyspace.is_empty() {
            return Err(InvalidRequest(format!(
                "Statement on keyspace {} cannot refer to a user type in keyspace {keyspace}; user types can only be used in the keyspace they are defined in",
                self.keyspace
            )));
        }
        let type_name = name.name.name();
        let Some(def) = self.types.iter().find(|t| t.name == type_name) else {
            return Err(InvalidRequest(format!("Unknown type {keyspace}.{type_name}")));
        };
        def.to_type(keyspace, frozen).map_err(|e| InvalidRequest(format!("type {type_name}: {e}")))
    }
}

/// The storage type of a CQL type, checked as 3.11's `CQL3Type.Raw.prepare` checks it.
pub fn storage_type(ty: &CqlType, scope: &TypeScope<'_>) -> Result<AbstractType, InvalidRequest> {
    storage_type_in(ty, Within::Top, scope)
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

fn storage_type_in<'t>(
    ty: &'t CqlType,
    within: Within<'t>,
    scope: &TypeScope<'_>,
) -> Result<AbstractType, InvalidRequest> {
    let inner_within = if within == Within::Top { Within::Collection(ty) } else { within };
    let element = |t: &CqlType| -> Result<AbstractType, InvalidRequest> {
        let inner = storage_type_in(t, inner_within, scope)?;
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
        CqlType::Set(e) if **e == CqlType::Native(NativeType::Duration) => {
            Err(InvalidRequest(format!("Durations are not allowed inside sets: {}", written(ty, within))))
        }
        CqlType::Map(k, _) if **k == CqlType::Native(NativeType::Duration) => {
            Err(InvalidRequest(format!("Durations are not allowed as map keys: {}", written(ty, within))))
        }
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
                let part = storage_type_in(t, Within::Frozen, scope)?;
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
            CqlType::UserDefined(name) => scope.user_type(name, true),
            other => storage_type_in(other, Within::Frozen, scope),
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
        CqlType::UserDefined(name) => match within {
            Within::Top => scope.user_type(name, false),
            Within::Frozen => scope.user_type(name, true),
            Within::Collection(outer) => {
                Err(InvalidRequest(format!("Non-frozen UDTs are not allowed inside collections: {outer}")))
            }
        },
    }
}

/// A collection type as 3.11 prints it in errors: `frozen<...>` when it is frozen.
fn written(ty: &CqlType, within: Within<'_>) -> String {
    if within == Within::Frozen {
        format!("frozen<{ty}>")
    } else {
        ty.to_string()
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
        NativeType::Duration => AbstractType::Duration,
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
    NativeType::ALL.into_iter().filter(|n| *n != NativeType::Varchar).find(|n| native(*n) == *base)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column_type(text: &str) -> CqlType {
        let statement = format!("CREATE TABLE t (k int PRIMARY KEY, v {text})");
        match crate::parse(&statement).expect("parses") {
            crate::ast::Statement::CreateTable(t) => match &t.elements[1] {
                crate::ast::TableElement::Column(c) => c.ty.clone(),
                other => panic!("a column: {other:?}"),
            },
            other => panic!("a table: {other:?}"),
        }
    }

    fn resolve(text: &str) -> Result<AbstractType, String> {
        let types = [UserTypeDef {
            name: "address".into(),
            field_names: vec!["street".into(), "zip".into()],
            field_types: vec!["UTF8Type".into(), "Int32Type".into()],
        }];
        storage_type(&column_type(text), &TypeScope { keyspace: "ks", types: &types }).map_err(|e| e.0)
    }

    #[test]
    fn user_types_resolve_in_their_keyspace_frozen_where_written() {
        let frozen = resolve("frozen<address>").expect("known");
        assert!(matches!(&frozen, AbstractType::User(u) if u.frozen && u.keyspace == "ks"));
        assert_eq!(
            frozen.class_name(),
            "org.apache.cassandra.db.marshal.FrozenType(org.apache.cassandra.db.marshal.UserType(ks,61646472657373,\
             737472656574:org.apache.cassandra.db.marshal.UTF8Type,7a6970:org.apache.cassandra.db.marshal.Int32Type))"
        );
        assert!(matches!(resolve("address"), Ok(AbstractType::User(u)) if !u.frozen));
        assert!(matches!(resolve("ks.address"), Ok(AbstractType::User(_))));
        // Inside a tuple or a frozen collection a user type is frozen; inside a collection that
        // is not, it must be written frozen.
        let AbstractType::Tuple(parts) = resolve("tuple<int, address>").expect("a tuple") else { panic!() };
        assert!(matches!(&parts[1], AbstractType::User(u) if u.frozen));
        assert!(resolve("map<text, frozen<address>>").is_ok());
        assert_eq!(
            resolve("set<address>"),
            Err("Non-frozen UDTs are not allowed inside collections: set<address>".into())
        );
        assert_eq!(resolve("frozen<nope>"), Err("Unknown type ks.nope".into()));
        assert_eq!(
            resolve("frozen<other.address>"),
            Err("Statement on keyspace ks cannot refer to a user type in keyspace other; user types can only be used in the keyspace they are defined in".into())
        );
    }

    #[test]
    fn durations_are_refused_where_3_11_refuses_them() {
        assert_eq!(resolve("duration"), Ok(AbstractType::Duration));
        assert!(resolve("list<duration>").is_ok());
        assert_eq!(resolve("set<duration>"), Err("Durations are not allowed inside sets: set<duration>".into()));
        assert_eq!(
            resolve("frozen<set<duration>>"),
            Err("Durations are not allowed inside sets: frozen<set<duration>>".into())
        );
        assert_eq!(
            resolve("map<duration, text>"),
            Err("Durations are not allowed as map keys: map<duration, text>".into())
        );
        assert_eq!(cql_native_type(&AbstractType::Duration), Some(NativeType::Duration));
        assert_eq!(cql_name(&AbstractType::Duration), "duration");
    }
}
