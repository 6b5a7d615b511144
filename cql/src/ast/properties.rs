//! `WITH` options of schema statements, and primary keys.

use std::fmt;

use super::ident::{Comma, Entries, Identifier, Joined};
use super::term::Constant;

/// The value of a property.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PropertyValue {
    /// A constant: `'a comment'`, `0.01`, `true`.
    Constant(Constant),
    /// An unreserved keyword, kept as written (`WITH x = KEYS`).
    Keyword(String),
    /// A map of constants: `{'class': 'SimpleStrategy', 'replication_factor': 3}`; Cassandra
    /// keeps each key and value as its text.
    Map(Vec<(Constant, Constant)>),
}

impl fmt::Display for PropertyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PropertyValue::Constant(c) => write!(f, "{c}"),
            PropertyValue::Keyword(k) => f.write_str(k),
            PropertyValue::Map(entries) => write!(f, "{}", Entries(entries)),
        }
    }
}

/// `name = value`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Property {
    /// The property's name.
    pub name: Identifier,
    /// Its value.
    pub value: PropertyValue,
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {}", self.name, self.value)
    }
}

/// Writes ` WITH a = 1 AND b = 2` when there are properties.
pub(crate) struct With<'a, T>(pub &'a [T]);

impl<T: fmt::Display> fmt::Display for With<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return Ok(());
        }
        write!(f, " WITH {}", Joined(self.0, " AND "))
    }
}

/// One option of CREATE TABLE and CREATE MATERIALIZED VIEW.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TableOption {
    /// `name = value`
    Property(Property),
    /// `COMPACT STORAGE`
    CompactStorage,
    /// `CLUSTERING ORDER BY (c DESC, d ASC)`; `true` is descending.
    ClusteringOrder(Vec<(Identifier, bool)>),
}

impl fmt::Display for TableOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableOption::Property(p) => write!(f, "{p}"),
            TableOption::CompactStorage => f.write_str("COMPACT STORAGE"),
            TableOption::ClusteringOrder(order) => {
                f.write_str("CLUSTERING ORDER BY (")?;
                for (i, (c, desc)) in order.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{c} {}", if *desc { "DESC" } else { "ASC" })?;
                }
                f.write_str(")")
            }
        }
    }
}

/// `PRIMARY KEY ((a, b), c, d)`: the partition key columns and the clustering columns.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PrimaryKey {
    /// The partition key (one or more columns).
    pub partition_key: Vec<Identifier>,
    /// The clustering columns, in order.
    pub clustering: Vec<Identifier>,
}

impl fmt::Display for PrimaryKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PRIMARY KEY (")?;
        match self.partition_key.as_slice() {
            [one] => write!(f, "{one}")?,
            many => write!(f, "({})", Comma(many))?,
        }
        for c in &self.clustering {
            write!(f, ", {c}")?;
        }
        f.write_str(")")
    }
}
