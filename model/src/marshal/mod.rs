//! Cassandra's marshal types: the comparators that order column names and the validators that
//! check column values, with ordering and validation identical to Cassandra 3.11.
//!
//! A type is named by a string such as `UTF8Type`, `org.apache.cassandra.db.marshal.LongType`,
//! `CompositeType(UTF8Type,LongType)` or `DynamicCompositeType(a=>UTF8Type,b=>LongType)`;
//! [`AbstractType::parse`] reads those strings and [`AbstractType::class_name`] writes the full
//! form back (what `describe_keyspace` returns).
//!
//! Quirks kept on purpose because data written by Cassandra depends on them:
//! - `DateType` compares its 8 bytes *unsigned*, so pre-1970 dates sort after later ones;
//!   `TimestampType` compares them signed.
//! - `TimeUUIDType` breaks timestamp ties with a *signed* byte comparison of the last 8 bytes,
//!   `UUIDType` with an unsigned one, `LexicalUUIDType` compares like `java.util.UUID`
//!   (two signed longs).
//! - `ReversedType` simply swaps its arguments, so empty values sort *last* (3.x behaviour).
//! - `UTF8Type` validation follows Cassandra's own validator, which accepts modified UTF-8
//!   (`C0 80`) and encoded surrogates.
//! - An empty or blank type string parses as `BytesType`, as in Cassandra's `TypeParser`.
//!
//! Types and composite values are walked recursively, so nesting is bounded
//! ([`MAX_TYPE_NESTING`]): a type string nesting deeper is refused
//! ([`MarshalError::NestedTooDeeply`]), and so is the type text of a `DynamicCompositeType`
//! component that would take a value past that depth. The `*_at` methods carry how deep the
//! type being used sits.
//!
//! Deliberate differences (documented where they live): trailing characters after a type
//! string are an error; `to_display_string` never fails (invalid values come out as `0x` + hex);
//! `TimeUUIDType` accepts `now` in [`AbstractType::from_display_string`]; `CounterColumnType`
//! displays and parses decimal totals; dates without a zone are read as UTC.

mod collection;
mod composite;
mod duration;
mod parse;
mod scalar;
mod text;
mod user;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_nesting;
#[cfg(test)]
mod tests_properties;

pub use collection::{read_elements, read_tuple, write_elements, write_tuple, CollectionKind, MAX_COLLECTION_ELEMENTS};
pub use duration::Duration;
pub use parse::MAX_TYPE_NESTING;
pub use user::UserType;

use std::cmp::Ordering;
use std::fmt;

/// Package of every built-in Cassandra marshal class.
pub(crate) const PACKAGE: &str = "org.apache.cassandra.db.marshal.";

/// Errors from parsing type strings, validating values and parsing human-readable values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MarshalError {
    /// A value's bytes are not valid for the type. `reason` is Cassandra 3.11's MarshalException
    /// message, word for word, and the error displays it alone: it is the text 3.11 puts in the
    /// InvalidRequestException that refuses a key, a column name or a value. `type_name` is the
    /// type whose check refused the bytes; for a composite value with a refused component that
    /// is the component's type, as 3.11 passes the component's exception on unchanged.
    #[error("{reason}")]
    Invalid { type_name: String, reason: String },
    /// The type string names a class Sibyl does not know (full class name).
    #[error("Unknown type {0}")]
    UnknownType(String),
    /// The type string is malformed.
    #[error("Syntax error parsing type '{input}': {reason}")]
    BadTypeString { input: String, reason: String },
    /// The type string nests parameters deeper than [`MAX_TYPE_NESTING`] (counting the composite
    /// values a component's type text sits in); `input` is the start of the string.
    #[error("Syntax error parsing type '{input}': type nested too deeply (more than {limit} levels of parameters)")]
    NestedTooDeeply { input: String, limit: usize },
    /// A human-readable value could not be turned into bytes for the type.
    #[error("Cannot parse '{input}' as {type_name}: {reason}")]
    BadValueString { type_name: String, input: String, reason: String },
}

/// One of Cassandra's marshal types (a comparator or a validator).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AbstractType {
    /// `BytesType`: raw bytes, unsigned lexicographic order.
    Bytes,
    /// `AsciiType`: bytes below 0x80, byte order.
    Ascii,
    /// `UTF8Type`: UTF-8 text, byte order.
    Utf8,
    /// `LongType`: 8-byte signed big-endian integer (or empty).
    Long,
    /// `IntegerType`: two's-complement big-endian varint of any length, numeric order.
    Integer,
    /// `Int32Type`: 4-byte signed integer (or empty).
    Int32,
    /// `LexicalUUIDType`: 16 bytes ordered like `java.util.UUID.compareTo`.
    LexicalUuid,
    /// `TimeUUIDType`: version 1 UUIDs ordered by timestamp.
    TimeUuid,
    /// `UUIDType`: any UUID; version first, then time (v1) or bytes.
    Uuid,
    /// `BooleanType`: one byte, zero is false.
    Boolean,
    /// `DateType`: 8-byte milliseconds since the epoch, *unsigned* byte order (Cassandra's bug).
    Date,
    /// `TimestampType`: 8-byte milliseconds since the epoch, signed order.
    Timestamp,
    /// `DoubleType`: IEEE 754 binary64, ordered as `java.lang.Double.compare`.
    Double,
    /// `FloatType`: IEEE 754 binary32, ordered as `java.lang.Float.compare`.
    Float,
    /// `DecimalType`: 4-byte scale then varint unscaled value, numeric order.
    Decimal,
    /// `InetAddressType`: 4 or 16 address bytes.
    InetAddress,
    /// `CounterColumnType`: the validator of counter column families (8-byte totals).
    CounterColumn,
    /// `ShortType`: 2-byte signed integer.
    Short,
    /// `ByteType`: 1-byte signed integer.
    Byte,
    /// `EmptyType`: only the empty value.
    Empty,
    /// `SimpleDateType`: 4-byte unsigned days with the epoch at 2^31.
    SimpleDate,
    /// `TimeType`: 8-byte nanoseconds since midnight.
    Time,
    /// `DurationType`: months, days and nanoseconds as three signed vints; byte order.
    Duration,
    /// `CompositeType(T1,T2,...)`: components of the given types with end-of-component bytes.
    Composite(Vec<AbstractType>),
    /// `DynamicCompositeType(a=>T,...)`: each component names its own type (alias byte or name).
    DynamicComposite(Vec<(u8, AbstractType)>),
    /// `ReversedType(T)`: T's order reversed.
    Reversed(Box<AbstractType>),
    /// `ListType(T)`; `frozen` when the whole list is one value (`FrozenType(ListType(T))`),
    /// else one cell per element.
    List { element: Box<AbstractType>, frozen: bool },
    /// `SetType(T)`, frozen or not.
    Set { element: Box<AbstractType>, frozen: bool },
    /// `MapType(K,V)`, frozen or not.
    Map { key: Box<AbstractType>, value: Box<AbstractType>, frozen: bool },
    /// `TupleType(T1,T2,...)`: always one value.
    Tuple(Vec<AbstractType>),
    /// `ColumnToCollectionType(hexname:T,...)`: the last component of a CQL table's cell names
    /// when it has non-frozen collections; it orders an element's key by the collection type of
    /// the column named in the component before it.
    ColumnToCollection(Vec<(Vec<u8>, AbstractType)>),
    /// `UserType(ks,hexname,hexfield:T,...)`: a user-defined type, frozen or a cell per field.
    User(Box<UserType>),
}

impl AbstractType {
    /// Parses a Cassandra type string: short (`UTF8Type`) or full
    /// (`org.apache.cassandra.db.marshal.UTF8Type`) names, with parameters for
    /// `CompositeType(...)`, `DynamicCompositeType(a=>...)`, `ReversedType(...)` and
    /// `T(reversed=true)`. Blanks are allowed around names and separators.
    pub fn parse(s: &str) -> Result<AbstractType, MarshalError> {
        parse::parse_type_string(s)
    }

    /// The class name without package, e.g. `LongType`.
    pub fn short_name(&self) -> &'static str {
        match self {
            AbstractType::Bytes => "BytesType",
            AbstractType::Ascii => "AsciiType",
            AbstractType::Utf8 => "UTF8Type",
            AbstractType::Long => "LongType",
            AbstractType::Integer => "IntegerType",
            AbstractType::Int32 => "Int32Type",
            AbstractType::LexicalUuid => "LexicalUUIDType",
            AbstractType::TimeUuid => "TimeUUIDType",
            AbstractType::Uuid => "UUIDType",
            AbstractType::Boolean => "BooleanType",
            AbstractType::Date => "DateType",
            AbstractType::Timestamp => "TimestampType",
            AbstractType::Double => "DoubleType",
            AbstractType::Float => "FloatType",
            AbstractType::Decimal => "DecimalType",
            AbstractType::InetAddress => "InetAddressType",
            AbstractType::CounterColumn => "CounterColumnType",
            AbstractType::Short => "ShortType",
            AbstractType::Byte => "ByteType",
            AbstractType::Empty => "EmptyType",
            AbstractType::SimpleDate => "SimpleDateType",
            AbstractType::Time => "TimeType",
            AbstractType::Duration => "DurationType",
            AbstractType::Composite(_) => "CompositeType",
            AbstractType::DynamicComposite(_) => "DynamicCompositeType",
            AbstractType::Reversed(_) => "ReversedType",
            AbstractType::List { .. } => "ListType",
            AbstractType::Set { .. } => "SetType",
            AbstractType::Map { .. } => "MapType",
            AbstractType::Tuple(_) => "TupleType",
            AbstractType::ColumnToCollection(_) => "ColumnToCollectionType",
            AbstractType::User(_) => "UserType",
        }
    }

    /// Every type without parameters.
    pub(crate) const SIMPLE: [AbstractType; 23] = [
        AbstractType::Bytes,
        AbstractType::Ascii,
        AbstractType::Utf8,
        AbstractType::Long,
        AbstractType::Integer,
        AbstractType::Int32,
        AbstractType::LexicalUuid,
        AbstractType::TimeUuid,
        AbstractType::Uuid,
        AbstractType::Boolean,
        AbstractType::Date,
        AbstractType::Timestamp,
        AbstractType::Double,
        AbstractType::Float,
        AbstractType::Decimal,
        AbstractType::InetAddress,
        AbstractType::CounterColumn,
        AbstractType::Short,
        AbstractType::Byte,
        AbstractType::Empty,
        AbstractType::SimpleDate,
        AbstractType::Time,
        AbstractType::Duration,
    ];

    /// The non-parameterised type with this short class name.
    pub(crate) fn simple_from_short_name(name: &str) -> Option<AbstractType> {
        Self::SIMPLE.into_iter().find(|t| t.short_name() == name)
    }

    /// Full Cassandra class name with parameters, as Cassandra's `toString` writes it, e.g.
    /// `org.apache.cassandra.db.marshal.CompositeType(org.apache.cassandra.db.marshal.UTF8Type,org.apache.cassandra.db.marshal.LongType)`.
    pub fn class_name(&self) -> String {
        self.type_string(false)
    }

    /// 3.11's `toString(ignoreFreezing)`: the class name, without the outer `FrozenType` when
    /// `ignore_freezing` (how a frozen user type writes its fields).
    pub(crate) fn type_string(&self, ignore_freezing: bool) -> String {
        if let AbstractType::User(u) = self {
            return u.type_string(ignore_freezing);
        }
        let mut out = format!("{PACKAGE}{}", self.short_name());
        let params = |out: &mut String, types: &[&AbstractType]| {
            let inner: Vec<String> = types.iter().map(|t| t.class_name()).collect();
            out.push('(');
            out.push_str(&inner.join(","));
            out.push(')');
        };
        match self {
            AbstractType::List { element, .. } | AbstractType::Set { element, .. } => params(&mut out, &[element]),
            AbstractType::Map { key, value, .. } => params(&mut out, &[key, value]),
            AbstractType::Tuple(types) => params(&mut out, &types.iter().collect::<Vec<_>>()),
            AbstractType::ColumnToCollection(columns) => {
                let inner: Vec<String> =
                    columns.iter().map(|(name, t)| format!("{}:{}", hex::encode(name), t.class_name())).collect();
                out.push('(');
                out.push_str(&inner.join(","));
                out.push(')');
            }
            AbstractType::Composite(types) => {
                let inner: Vec<String> = types.iter().map(AbstractType::class_name).collect();
                out.push('(');
                out.push_str(&inner.join(","));
                out.push(')');
            }
            AbstractType::DynamicComposite(aliases) => {
                let inner: Vec<String> =
                    aliases.iter().map(|(alias, t)| format!("{}=>{}", char::from(*alias), t.class_name())).collect();
                out.push('(');
                out.push_str(&inner.join(","));
                out.push(')');
            }
            AbstractType::Reversed(base) => {
                out.push('(');
                out.push_str(&base.class_name());
                out.push(')');
            }
            _ => {}
        }
        if self.is_frozen_collection() && !ignore_freezing {
            return format!("{PACKAGE}FrozenType({out})");
        }
        out
    }

    /// Orders two values as Cassandra 3.11 does. Total on any bytes: malformed values (which
    /// validation rejects) fall back to a byte comparison instead of failing.
    pub fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.compare_at(0, a, b)
    }

    /// [`AbstractType::compare`] for a type nested `depth` levels deep.
    pub(super) fn compare_at(&self, depth: usize, a: &[u8], b: &[u8]) -> Ordering {
        use AbstractType as T;
        match self {
            T::Bytes | T::Ascii | T::Utf8 | T::InetAddress | T::Date | T::SimpleDate | T::Time | T::Duration => {
                a.cmp(b)
            }
            T::Long | T::Int32 | T::Timestamp | T::CounterColumn | T::Short | T::Byte => {
                scalar::compare_signed_first_byte(a, b)
            }
            T::Integer => scalar::compare_varint(a, b),
            T::Decimal => scalar::compare_decimal(a, b),
            T::LexicalUuid => scalar::compare_lexical_uuid(a, b),
            T::TimeUuid => scalar::compare_time_uuid(a, b),
            T::Uuid => scalar::compare_uuid(a, b),
            T::Boolean => scalar::compare_boolean(a, b),
            T::Double => scalar::compare_double(a, b),
            T::Float => scalar::compare_float(a, b),
            // EmptyType's compareCustom returns 0 for everything.
            T::Empty => Ordering::Equal,
            T::Composite(types) => composite::compare(composite::Kind::Static(types), depth, a, b),
            T::DynamicComposite(aliases) => composite::compare(composite::Kind::Dynamic(aliases), depth, a, b),
            T::Reversed(base) => base.compare_at(depth + 1, b, a),
            T::List { element, .. } => collection::compare(CollectionKind::List, (element, None), depth, a, b),
            T::Set { element, .. } => collection::compare(CollectionKind::Set, (element, None), depth, a, b),
            T::Map { key, value, .. } => collection::compare(CollectionKind::Map, (key, Some(value)), depth, a, b),
            T::Tuple(types) => collection::compare_tuple(types, depth, a, b),
            // Only meaningful inside a composite, which resolves the column first.
            T::ColumnToCollection(_) => a.cmp(b),
            T::User(u) => u.compare(depth, a, b),
        }
    }

    /// Checks that `v` is a valid value of this type; the error says why in 3.11's words (see
    /// [`MarshalError::Invalid`]).
    pub fn validate(&self, v: &[u8]) -> Result<(), MarshalError> {
        self.validate_at(0, v)
    }

    /// [`AbstractType::validate`] for a type nested `depth` levels deep.
    pub(super) fn validate_at(&self, depth: usize, v: &[u8]) -> Result<(), MarshalError> {
        use AbstractType as T;
        let reason = match self {
            T::Bytes | T::Integer => None,
            T::Ascii => scalar::check_ascii(v),
            T::Utf8 => scalar::check_utf8(v),
            T::Long | T::CounterColumn => scalar::check_len(v, &[8, 0], "Expected 8 or 0 byte long"),
            T::Date | T::Timestamp => scalar::check_len(v, &[8, 0], "Expected 8 or 0 byte long for date"),
            T::Double => scalar::check_len(v, &[8, 0], "Expected 8 or 0 byte value for a double"),
            T::Int32 => scalar::check_len(v, &[4, 0], "Expected 4 or 0 byte int"),
            T::Float => scalar::check_len(v, &[4, 0], "Expected 4 or 0 byte value for a float"),
            T::LexicalUuid | T::Uuid => scalar::check_uuid(v),
            T::TimeUuid => scalar::check_time_uuid(v),
            T::Boolean => scalar::check_len(v, &[1, 0], "Expected 1 or 0 byte value"),
            T::Decimal => scalar::check_decimal(v),
            T::InetAddress => scalar::check_inet_address(v),
            T::Short => scalar::check_len(v, &[2], "Expected 2 bytes for a smallint"),
            T::Byte => scalar::check_len(v, &[1], "Expected 1 byte for a tinyint"),
            T::Empty => scalar::check_empty(v),
            T::SimpleDate => scalar::check_len(v, &[4], "Expected 4 byte long for date"),
            T::Time => scalar::check_len(v, &[8], "Expected 8 byte long for time"),
            T::Duration => Duration::from_bytes(v).err(),
            // A refused component's error is passed on as it is; the composite's own reasons
            // (its layout) come back as a reason.
            T::Composite(types) => composite::validate(composite::Kind::Static(types), depth, v)?,
            T::DynamicComposite(aliases) => composite::validate(composite::Kind::Dynamic(aliases), depth, v)?,
            T::Reversed(base) => return base.validate_at(depth + 1, v),
            T::List { element, .. } => collection::validate(CollectionKind::List, (element, None), depth, v)?,
            T::Set { element, .. } => collection::validate(CollectionKind::Set, (element, None), depth, v)?,
            T::Map { key, value, .. } => collection::validate(CollectionKind::Map, (key, Some(value)), depth, v)?,
            T::Tuple(types) => collection::validate_tuple(types, depth, v)?,
            T::ColumnToCollection(_) => None,
            T::User(u) => u.validate(depth, v)?,
        };
        match reason {
            None => Ok(()),
            Some(reason) => Err(self.invalid(reason)),
        }
    }

    /// Human-readable form (Cassandra's `getString`): text for ASCII/UTF-8, decimal numbers,
    /// UUID strings, hex for bytes, ISO-8601 UTC for dates. Empty values give "". Never fails:
    /// a value that does not validate comes out as `0x` followed by its hex.
    pub fn to_display_string(&self, v: &[u8]) -> String {
        self.to_display_string_at(0, v)
    }

    /// [`AbstractType::to_display_string`] for a type nested `depth` levels deep.
    pub(super) fn to_display_string_at(&self, depth: usize, v: &[u8]) -> String {
        if v.is_empty() {
            return String::new();
        }
        if self.validate_at(depth, v).is_err() {
            return format!("0x{}", hex::encode(v));
        }
        let shown = match self {
            AbstractType::Composite(types) => composite::display(composite::Kind::Static(types), depth, v),
            AbstractType::DynamicComposite(aliases) => composite::display(composite::Kind::Dynamic(aliases), depth, v),
            AbstractType::Reversed(base) => Some(base.to_display_string_at(depth + 1, v)),
            AbstractType::List { element, .. } => collection::display(CollectionKind::List, (element, None), depth, v),
            AbstractType::Set { element, .. } => collection::display(CollectionKind::Set, (element, None), depth, v),
            AbstractType::Map { key, value, .. } => {
                collection::display(CollectionKind::Map, (key, Some(value)), depth, v)
            }
            AbstractType::Tuple(types) => collection::display_tuple(types, depth, v),
            AbstractType::ColumnToCollection(_) => None,
            AbstractType::User(u) => u.display(depth, v),
            AbstractType::Duration => Duration::from_bytes(v).ok().map(|d| d.to_string()),
            _ => scalar::display(self, v),
        };
        shown.unwrap_or_else(|| format!("0x{}", hex::encode(v)))
    }

    /// Parses a human string into bytes (Cassandra's `fromString`): "123" for `LongType`, UUID
    /// text for the UUID types, hex for `BytesType`, `a:b` for composites, ISO dates or
    /// milliseconds for dates. `TimeUUIDType` also accepts `now` (a fresh version 1 UUID with a
    /// random node id) as a convenience for sibyl-cli. "" gives the empty value where the type
    /// allows it. The result always passes [`AbstractType::validate`].
    pub fn from_display_string(&self, s: &str) -> Result<Vec<u8>, MarshalError> {
        self.value_from_display_string_at(0, s)
    }

    /// [`AbstractType::from_display_string`] for a type nested `depth` levels deep.
    pub(super) fn value_from_display_string_at(&self, depth: usize, s: &str) -> Result<Vec<u8>, MarshalError> {
        let bytes = if s.is_empty() {
            Vec::new()
        } else {
            let parsed = match self {
                AbstractType::Composite(types) => composite::from_string(composite::Kind::Static(types), depth, s),
                AbstractType::DynamicComposite(aliases) => {
                    composite::from_string(composite::Kind::Dynamic(aliases), depth, s)
                }
                AbstractType::Reversed(base) => return base.value_from_display_string_at(depth + 1, s),
                AbstractType::List { .. }
                | AbstractType::Set { .. }
                | AbstractType::Map { .. }
                | AbstractType::Tuple(_)
                | AbstractType::User(_)
                | AbstractType::ColumnToCollection(_) => {
                    Err("collections and tuples are written as CQL literals, not parsed from strings".to_string())
                }
                AbstractType::Duration => Duration::parse(s).map(Duration::to_bytes),
                _ => scalar::from_string(self, s),
            };
            parsed.map_err(|reason| self.bad_value(s, reason))?
        };
        self.validate_at(depth, &bytes).map_err(|e| self.bad_value(s, e.to_string()))?;
        Ok(bytes)
    }

    /// True for `CounterColumnType`, the validator of counter column families.
    pub fn is_counter(&self) -> bool {
        matches!(self, AbstractType::CounterColumn)
    }

    /// True for `ReversedType(...)`.
    pub fn is_reversed(&self) -> bool {
        matches!(self, AbstractType::Reversed(_))
    }

    /// The collection this is (a descending one's base included), if any.
    pub fn collection_kind(&self) -> Option<CollectionKind> {
        match self {
            AbstractType::List { .. } => Some(CollectionKind::List),
            AbstractType::Set { .. } => Some(CollectionKind::Set),
            AbstractType::Map { .. } => Some(CollectionKind::Map),
            AbstractType::Reversed(base) => base.collection_kind(),
            _ => None,
        }
    }

    /// True for a collection kept one cell per element (not frozen).
    pub fn is_multi_cell(&self) -> bool {
        match self {
            AbstractType::List { frozen, .. } | AbstractType::Set { frozen, .. } | AbstractType::Map { frozen, .. } => {
                !frozen
            }
            _ => false,
        }
    }

    fn is_frozen_collection(&self) -> bool {
        match self {
            AbstractType::List { frozen, .. } | AbstractType::Set { frozen, .. } | AbstractType::Map { frozen, .. } => {
                *frozen
            }
            _ => false,
        }
    }

    /// This type frozen: a collection written whole, its elements frozen too (3.11's
    /// `freeze`); other types as they are.
    pub fn frozen(&self) -> AbstractType {
        match self {
            AbstractType::List { element, .. } => {
                AbstractType::List { element: Box::new(element.frozen()), frozen: true }
            }
            AbstractType::Set { element, .. } => {
                AbstractType::Set { element: Box::new(element.frozen()), frozen: true }
            }
            AbstractType::Map { key, value, .. } => {
                AbstractType::Map { key: Box::new(key.frozen()), value: Box::new(value.frozen()), frozen: true }
            }
            AbstractType::Tuple(types) => AbstractType::Tuple(types.iter().map(AbstractType::frozen).collect()),
            AbstractType::User(u) => AbstractType::User(Box::new(UserType {
                fields: u.fields.iter().map(|(n, t)| (n.clone(), t.frozen())).collect(),
                frozen: true,
                ..u.as_ref().clone()
            })),
            other => other.clone(),
        }
    }

    /// The type of an element's cell key in a multi-cell collection: a time UUID for a list,
    /// the element for a set, the key for a map.
    pub fn collection_key_type(&self) -> Option<&AbstractType> {
        const TIME_UUID: &AbstractType = &AbstractType::TimeUuid;
        match self {
            AbstractType::List { .. } => Some(TIME_UUID),
            AbstractType::Set { element, .. } => Some(element),
            AbstractType::Map { key, .. } => Some(key),
            _ => None,
        }
    }

    /// The type of an element's cell value in a multi-cell collection: a list's element, a
    /// map's value; a set's cells hold nothing.
    pub fn collection_value_type(&self) -> Option<&AbstractType> {
        const EMPTY: &AbstractType = &AbstractType::Empty;
        match self {
            AbstractType::List { element, .. } => Some(element),
            AbstractType::Set { .. } => Some(EMPTY),
            AbstractType::Map { value, .. } => Some(value),
            _ => None,
        }
    }

    fn invalid(&self, reason: impl Into<String>) -> MarshalError {
        MarshalError::Invalid { type_name: self.short_name().to_string(), reason: reason.into() }
    }

    fn bad_value(&self, input: &str, reason: impl Into<String>) -> MarshalError {
        MarshalError::BadValueString {
            type_name: self.short_name().to_string(),
            input: input.to_string(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for AbstractType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.class_name())
    }
}
