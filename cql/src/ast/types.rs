//! CQL types as written in DDL, casts and type hints.

use std::fmt;

use super::ident::{Comma, QualifiedName};
use super::term::quote_string;

/// A native type (CQL 3.4.4 has 21).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum NativeType {
    Ascii,
    Bigint,
    Blob,
    Boolean,
    Counter,
    Date,
    Decimal,
    Double,
    Duration,
    Float,
    Inet,
    Int,
    Smallint,
    Text,
    Time,
    Timestamp,
    Timeuuid,
    Tinyint,
    Uuid,
    Varchar,
    Varint,
}

impl NativeType {
    /// Every native type, in alphabetical order.
    pub const ALL: [NativeType; 21] = [
        NativeType::Ascii,
        NativeType::Bigint,
        NativeType::Blob,
        NativeType::Boolean,
        NativeType::Counter,
        NativeType::Date,
        NativeType::Decimal,
        NativeType::Double,
        NativeType::Duration,
        NativeType::Float,
        NativeType::Inet,
        NativeType::Int,
        NativeType::Smallint,
        NativeType::Text,
        NativeType::Time,
        NativeType::Timestamp,
        NativeType::Timeuuid,
        NativeType::Tinyint,
        NativeType::Uuid,
        NativeType::Varchar,
        NativeType::Varint,
    ];

    /// The type's name, lower case as Cassandra prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            NativeType::Ascii => "ascii",
            NativeType::Bigint => "bigint",
            NativeType::Blob => "blob",
            NativeType::Boolean => "boolean",
            NativeType::Counter => "counter",
            NativeType::Date => "date",
            NativeType::Decimal => "decimal",
            NativeType::Double => "double",
            NativeType::Duration => "duration",
            NativeType::Float => "float",
            NativeType::Inet => "inet",
            NativeType::Int => "int",
            NativeType::Smallint => "smallint",
            NativeType::Text => "text",
            NativeType::Time => "time",
            NativeType::Timestamp => "timestamp",
            NativeType::Timeuuid => "timeuuid",
            NativeType::Tinyint => "tinyint",
            NativeType::Uuid => "uuid",
            NativeType::Varchar => "varchar",
            NativeType::Varint => "varint",
        }
    }
}

impl fmt::Display for NativeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A CQL type (Cassandra's `comparatorType`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CqlType {
    /// `int`, `text`, ...
    Native(NativeType),
    /// `list<t>`
    List(Box<CqlType>),
    /// `set<t>`
    Set(Box<CqlType>),
    /// `map<k, v>`
    Map(Box<CqlType>, Box<CqlType>),
    /// `tuple<a, b, ...>`
    Tuple(Vec<CqlType>),
    /// `frozen<t>`
    Frozen(Box<CqlType>),
    /// A user-defined type, maybe keyspace-qualified.
    UserDefined(QualifiedName),
    /// A custom type named by its Java class, `'org.apache.cassandra.db.marshal.FooType'`.
    Custom(String),
}

impl fmt::Display for CqlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CqlType::Native(t) => write!(f, "{t}"),
            CqlType::List(t) => write!(f, "list<{t}>"),
            CqlType::Set(t) => write!(f, "set<{t}>"),
            CqlType::Map(k, v) => write!(f, "map<{k}, {v}>"),
            CqlType::Tuple(ts) => write!(f, "tuple<{}>", Comma(ts)),
            CqlType::Frozen(t) => write!(f, "frozen<{t}>"),
            CqlType::UserDefined(name) => write!(f, "{name}"),
            CqlType::Custom(class) => f.write_str(&quote_string(class)),
        }
    }
}
