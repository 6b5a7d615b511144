//! Terms: the values a statement carries (Cassandra's `Term.Raw`).

use std::fmt;

use super::ident::{Comma, Entries, Identifier, QualifiedName};
use super::types::CqlType;

/// A constant as written. Numbers, durations and blobs keep their text: their type, and so
/// their range, is only known once the statement meets the schema.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Constant {
    /// A string, unescaped (`'it''s'` and `$$it's$$` are both `it's`).
    String(String),
    /// An integer, as written (`-42`).
    Integer(String),
    /// A float as written (`1.5e3`), or `NaN`, `Infinity`, `-NaN`, `-Infinity` as written.
    Float(String),
    /// `true` or `false`.
    Boolean(bool),
    /// A duration as written (`1h30m`, `P1DT2H`, `P0001-02-03T04:05:06`).
    Duration(String),
    /// A UUID.
    Uuid(uuid::Uuid),
    /// A blob: the hex digits after `0x`, as written (possibly none).
    Hex(String),
}

impl fmt::Display for Constant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Constant::String(s) => f.write_str(&quote_string(s)),
            Constant::Integer(t) | Constant::Float(t) | Constant::Duration(t) => f.write_str(t),
            Constant::Boolean(b) => write!(f, "{b}"),
            Constant::Uuid(u) => write!(f, "{}", u.hyphenated()),
            Constant::Hex(digits) => write!(f, "0x{digits}"),
        }
    }
}

impl Constant {
    /// The constant's text as Cassandra's `getRawText` gives it (strings without their quotes),
    /// which is how property values reach the schema.
    pub fn raw_text(&self) -> String {
        match self {
            Constant::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

/// `s` as a CQL string constant: between single quotes, with its single quotes doubled.
pub(crate) fn quote_string(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A bind marker of a prepared statement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BindMarker {
    /// `?`
    Anonymous,
    /// `:name`
    Named(Identifier),
}

impl fmt::Display for BindMarker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BindMarker::Anonymous => f.write_str("?"),
            BindMarker::Named(name) => write!(f, ":{name}"),
        }
    }
}

/// A term: a value, written directly or computed by a function.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Term {
    /// A constant.
    Constant(Constant),
    /// `NULL`
    Null,
    /// `?` or `:name`
    BindMarker(BindMarker),
    /// `[a, b]`
    List(Vec<Term>),
    /// `{a, b}`, and `{}`, which Cassandra reads as an empty set and later lets stand for an
    /// empty map when the column is one.
    Set(Vec<Term>),
    /// `{k: v, ...}` (never empty: `{}` is a [`Term::Set`]).
    Map(Vec<(Term, Term)>),
    /// `(a, b)`
    Tuple(Vec<Term>),
    /// A user-defined type literal, `{field: value, ...}`.
    UserType(Vec<(Identifier, Term)>),
    /// `f(a, b)`, `ks.f()`, `token(a)`, `now()`.
    FunctionCall {
        /// The function, maybe keyspace-qualified.
        name: QualifiedName,
        /// Its arguments.
        args: Vec<Term>,
    },
    /// `(type) term`, a hint of the term's type for overloaded functions and bind markers.
    TypeHint {
        /// The hinted type.
        hint: CqlType,
        /// The hinted term.
        term: Box<Term>,
    },
}

impl Term {
    /// A string constant.
    pub fn string(s: &str) -> Term {
        Term::Constant(Constant::String(s.to_string()))
    }

    /// An integer constant.
    pub fn integer(n: i64) -> Term {
        Term::Constant(Constant::Integer(n.to_string()))
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Constant(c) => write!(f, "{c}"),
            Term::Null => f.write_str("NULL"),
            Term::BindMarker(m) => write!(f, "{m}"),
            Term::List(items) => write!(f, "[{}]", Comma(items)),
            Term::Set(items) => write!(f, "{{{}}}", Comma(items)),
            Term::Map(entries) => write!(f, "{}", Entries(entries)),
            Term::Tuple(items) => write!(f, "({})", Comma(items)),
            Term::UserType(fields) => write!(f, "{}", Entries(fields)),
            Term::FunctionCall { name, args } => write!(f, "{name}({})", Comma(args)),
            Term::TypeHint { hint, term } => write!(f, "({hint}){term}"),
        }
    }
}

/// The values of an `IN`: a list, or one bind marker standing for the whole list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum InValues {
    /// `IN (a, b)`; for a multi-column `IN`, every item is a tuple or every item a bind marker.
    List(Vec<Term>),
    /// `IN ?` or `IN :name`
    Marker(BindMarker),
}

impl fmt::Display for InValues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InValues::List(items) => write!(f, "({})", Comma(items)),
            InValues::Marker(m) => write!(f, "{m}"),
        }
    }
}
