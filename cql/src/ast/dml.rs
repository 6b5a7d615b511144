//! INSERT, UPDATE, DELETE and BATCH.

use std::fmt;

use super::ident::{Comma, Identifier, Joined, QualifiedName};
use super::select::{Operator, Relation, Where};
use super::term::{InValues, Term};

/// `USING TIMESTAMP t AND TTL n`: each an integer constant or a bind marker (and `TTL NULL`,
/// which Cassandra reads as 0, is not accepted by the 3.11 grammar either).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Attributes {
    /// `TIMESTAMP t`
    pub timestamp: Option<Term>,
    /// `TTL n`
    pub ttl: Option<Term>,
    /// `TTL` was written before `TIMESTAMP` (bind markers take their values in the order
    /// written).
    pub ttl_first: bool,
}

impl Attributes {
    /// True if no USING clause was written.
    pub fn is_empty(&self) -> bool {
        self.timestamp.is_none() && self.ttl.is_none()
    }
}

impl fmt::Display for Attributes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.timestamp, &self.ttl) {
            (None, None) => Ok(()),
            (Some(ts), None) => write!(f, " USING TIMESTAMP {ts}"),
            (None, Some(ttl)) => write!(f, " USING TTL {ttl}"),
            (Some(ts), Some(ttl)) if self.ttl_first => write!(f, " USING TTL {ttl} AND TIMESTAMP {ts}"),
            (Some(ts), Some(ttl)) => write!(f, " USING TIMESTAMP {ts} AND TTL {ttl}"),
        }
    }
}

/// What an INSERT writes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum InsertValues {
    /// `(a, b) VALUES (1, 2)`
    Values {
        /// The columns.
        columns: Vec<Identifier>,
        /// Their values, in the same order.
        values: Vec<Term>,
    },
    /// `JSON '{...}'` (a string constant or a bind marker).
    Json {
        /// The JSON document.
        value: Term,
        /// `DEFAULT UNSET`: leave omitted columns alone instead of writing null
        /// (`DEFAULT NULL`, the default, is false).
        default_unset: bool,
    },
}

/// `INSERT INTO ...`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Insert {
    /// The table.
    pub table: QualifiedName,
    /// What is written.
    pub values: InsertValues,
    /// `IF NOT EXISTS`
    pub if_not_exists: bool,
    /// `USING ...`
    pub attributes: Attributes,
}

impl fmt::Display for Insert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "INSERT INTO {} ", self.table)?;
        match &self.values {
            InsertValues::Values { columns, values } => write!(f, "({}) VALUES ({})", Comma(columns), Comma(values))?,
            InsertValues::Json { value, default_unset } => {
                write!(f, "JSON {value}")?;
                if *default_unset {
                    f.write_str(" DEFAULT UNSET")?;
                }
            }
        }
        if self.if_not_exists {
            f.write_str(" IF NOT EXISTS")?;
        }
        write!(f, "{}", self.attributes)
    }
}

/// One `SET` assignment of an UPDATE.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Assignment {
    /// `c = v`
    Set {
        /// The column.
        column: Identifier,
        /// Its new value.
        value: Term,
    },
    /// `c = c + v` or `c += v`: counter increment, collection append or union.
    Add {
        /// The column.
        column: Identifier,
        /// What is added.
        value: Term,
    },
    /// `c = c - v` or `c -= v`: counter decrement, collection removal.
    Subtract {
        /// The column.
        column: Identifier,
        /// What is removed.
        value: Term,
    },
    /// `c = v + c`: list prepend.
    Prepend {
        /// The list column.
        column: Identifier,
        /// What is prepended.
        value: Term,
    },
    /// `c[k] = v`: a map entry or a list element.
    SetElement {
        /// The collection column.
        column: Identifier,
        /// The map key or list index.
        key: Term,
        /// The new value.
        value: Term,
    },
    /// `c.f = v`: a field of a non-frozen user-defined type.
    SetField {
        /// The UDT column.
        column: Identifier,
        /// The field.
        field: Identifier,
        /// The new value.
        value: Term,
    },
}

impl fmt::Display for Assignment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Assignment::Set { column, value } => write!(f, "{column} = {value}"),
            Assignment::Add { column, value } => write!(f, "{column} = {column} + {value}"),
            Assignment::Subtract { column, value } => write!(f, "{column} = {column} - {value}"),
            Assignment::Prepend { column, value } => write!(f, "{column} = {value} + {column}"),
            Assignment::SetElement { column, key, value } => write!(f, "{column}[{key}] = {value}"),
            Assignment::SetField { column, field, value } => write!(f, "{column}.{field} = {value}"),
        }
    }
}

/// What a condition of a lightweight transaction looks at.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ConditionTarget {
    /// The whole column.
    Column,
    /// `c[k]`: a map entry or list element.
    Element(Term),
    /// `c.f`: a field of a user-defined type.
    Field(Identifier),
}

/// What a condition requires of its target.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Predicate {
    /// `op term`, op one of `= < <= > >= !=`.
    Compare(Operator, Term),
    /// `IN (...)` or `IN ?`
    In(InValues),
}

/// One `IF` condition: `c = 1`, `m['k'] IN (1, 2)`, `u.f > 3`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Condition {
    /// The column.
    pub column: Identifier,
    /// The part of the column looked at.
    pub target: ConditionTarget,
    /// What it must satisfy.
    pub predicate: Predicate,
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.column)?;
        match &self.target {
            ConditionTarget::Column => {}
            ConditionTarget::Element(k) => write!(f, "[{k}]")?,
            ConditionTarget::Field(field) => write!(f, ".{field}")?,
        }
        match &self.predicate {
            Predicate::Compare(op, value) => write!(f, " {op} {value}"),
            Predicate::In(values) => write!(f, " IN {values}"),
        }
    }
}

/// The `IF` clause of an UPDATE or DELETE.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Conditions {
    /// `IF EXISTS`
    Exists,
    /// `IF a = 1 AND ...`
    Columns(Vec<Condition>),
}

/// Writes the optional ` IF ...` clause.
struct If<'a>(&'a Option<Conditions>);

impl fmt::Display for If<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => Ok(()),
            Some(Conditions::Exists) => f.write_str(" IF EXISTS"),
            Some(Conditions::Columns(c)) => write!(f, " IF {}", Joined(c, " AND ")),
        }
    }
}

/// `UPDATE ...`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Update {
    /// The table.
    pub table: QualifiedName,
    /// `USING ...`
    pub attributes: Attributes,
    /// The `SET` assignments (never empty).
    pub assignments: Vec<Assignment>,
    /// The WHERE relations (never empty).
    pub where_clause: Vec<Relation>,
    /// `IF EXISTS` or `IF` conditions.
    pub conditions: Option<Conditions>,
}

impl fmt::Display for Update {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UPDATE {}{} SET {}", self.table, self.attributes, Comma(&self.assignments))?;
        write!(f, "{}{}", Where(&self.where_clause), If(&self.conditions))
    }
}

/// What a DELETE removes from the selected rows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Deletion {
    /// A whole column.
    Column(Identifier),
    /// `c[k]`: a map entry or list element.
    Element(Identifier, Term),
    /// `c.f`: a field of a user-defined type.
    Field(Identifier, Identifier),
}

impl fmt::Display for Deletion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Deletion::Column(c) => write!(f, "{c}"),
            Deletion::Element(c, k) => write!(f, "{c}[{k}]"),
            Deletion::Field(c, field) => write!(f, "{c}.{field}"),
        }
    }
}

/// `DELETE ...`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Delete {
    /// What is deleted; empty deletes whole rows.
    pub deletions: Vec<Deletion>,
    /// The table.
    pub table: QualifiedName,
    /// `USING TIMESTAMP t`
    pub timestamp: Option<Term>,
    /// The WHERE relations (never empty).
    pub where_clause: Vec<Relation>,
    /// `IF EXISTS` or `IF` conditions.
    pub conditions: Option<Conditions>,
}

impl fmt::Display for Delete {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DELETE ")?;
        if !self.deletions.is_empty() {
            write!(f, "{} ", Comma(&self.deletions))?;
        }
        write!(f, "FROM {}", self.table)?;
        if let Some(ts) = &self.timestamp {
            write!(f, " USING TIMESTAMP {ts}")?;
        }
        write!(f, "{}{}", Where(&self.where_clause), If(&self.conditions))
    }
}

/// `LOGGED` (the default), `UNLOGGED` or `COUNTER`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BatchKind {
    /// `BEGIN BATCH`
    Logged,
    /// `BEGIN UNLOGGED BATCH`
    Unlogged,
    /// `BEGIN COUNTER BATCH`
    Counter,
}

/// A statement inside a batch.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BatchStatement {
    /// An INSERT.
    Insert(Insert),
    /// An UPDATE.
    Update(Update),
    /// A DELETE.
    Delete(Delete),
}

impl BatchStatement {
    /// The table it writes.
    pub fn table(&self) -> &QualifiedName {
        match self {
            BatchStatement::Insert(s) => &s.table,
            BatchStatement::Update(s) => &s.table,
            BatchStatement::Delete(s) => &s.table,
        }
    }
}

impl fmt::Display for BatchStatement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BatchStatement::Insert(s) => write!(f, "{s}"),
            BatchStatement::Update(s) => write!(f, "{s}"),
            BatchStatement::Delete(s) => write!(f, "{s}"),
        }
    }
}

/// `BEGIN [UNLOGGED | COUNTER] BATCH [USING ...] ... APPLY BATCH`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Batch {
    /// Which kind of batch.
    pub kind: BatchKind,
    /// `USING TIMESTAMP t` (the grammar accepts TTL too; Cassandra refuses it later).
    pub attributes: Attributes,
    /// The statements, maybe none.
    pub statements: Vec<BatchStatement>,
}

impl fmt::Display for Batch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            BatchKind::Logged => "BEGIN BATCH",
            BatchKind::Unlogged => "BEGIN UNLOGGED BATCH",
            BatchKind::Counter => "BEGIN COUNTER BATCH",
        })?;
        write!(f, "{}", self.attributes)?;
        for s in &self.statements {
            write!(f, " {s};")?;
        }
        f.write_str(" APPLY BATCH")
    }
}
