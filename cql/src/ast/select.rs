//! SELECT, and the WHERE clause shared by SELECT, UPDATE, DELETE and materialized views.

use std::fmt;

use super::ident::{Comma, Identifier, Joined, QualifiedName};
use super::term::{InValues, Term};
use super::types::NativeType;

/// What a SELECT returns: `*` or a list of selectors.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Selection {
    /// `*`
    Wildcard,
    /// `a, f(b) AS x, ...` (never empty).
    Selectors(Vec<Selector>),
}

impl fmt::Display for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selection::Wildcard => f.write_str("*"),
            Selection::Selectors(s) => write!(f, "{}", Comma(s)),
        }
    }
}

/// One selector, maybe aliased.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Selector {
    /// What is selected.
    pub selectable: Selectable,
    /// `AS alias`
    pub alias: Option<Identifier>,
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.selectable)?;
        if let Some(alias) = &self.alias {
            write!(f, " AS {alias}")?;
        }
        Ok(())
    }
}

/// What a selector computes (Cassandra 3.11's `unaliasedSelector`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Selectable {
    /// A column.
    Column(Identifier),
    /// A term: a constant, `NULL`, a bind marker, a collection or tuple literal, or a type
    /// hint on one of those (`(int)?`). Function calls are [`Selectable::Function`].
    Term(Term),
    /// `COUNT(*)`; `COUNT(1)` is the function `count` on the constant 1.
    CountRows,
    /// `WRITETIME(column)`
    WriteTime(Identifier),
    /// `TTL(column)`
    Ttl(Identifier),
    /// `CAST(selector AS type)`
    Cast {
        /// What is cast.
        selector: Box<Selectable>,
        /// To which native type.
        to: NativeType,
    },
    /// `f(selector, ...)`, maybe keyspace-qualified.
    Function {
        /// The function.
        name: QualifiedName,
        /// Its arguments.
        args: Vec<Selectable>,
    },
    /// `selector.field`, a field of a user-defined type.
    Field {
        /// The selector of the UDT value.
        selector: Box<Selectable>,
        /// The field.
        field: Identifier,
    },
}

impl fmt::Display for Selectable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selectable::Column(c) => write!(f, "{c}"),
            Selectable::Term(t) => write!(f, "{t}"),
            Selectable::CountRows => f.write_str("COUNT(*)"),
            Selectable::WriteTime(c) => write!(f, "WRITETIME({c})"),
            Selectable::Ttl(c) => write!(f, "TTL({c})"),
            Selectable::Cast { selector, to } => write!(f, "CAST({selector} AS {to})"),
            Selectable::Function { name, args } => write!(f, "{name}({})", Comma(args)),
            Selectable::Field { selector, field } => write!(f, "{selector}.{field}"),
        }
    }
}

/// A comparison operator of a relation or condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `=`
    Eq,
    /// `<`
    Lt,
    /// `<=`
    Lte,
    /// `>`
    Gt,
    /// `>=`
    Gte,
    /// `!=`
    Neq,
    /// `CONTAINS`
    Contains,
    /// `CONTAINS KEY`
    ContainsKey,
    /// `LIKE` (SASI indexes)
    Like,
}

impl Operator {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::Eq => "=",
            Operator::Lt => "<",
            Operator::Lte => "<=",
            Operator::Gt => ">",
            Operator::Gte => ">=",
            Operator::Neq => "!=",
            Operator::Contains => "CONTAINS",
            Operator::ContainsKey => "CONTAINS KEY",
            Operator::Like => "LIKE",
        }
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One restriction of a WHERE clause (Cassandra 3.11's `relation` and `customIndexExpression`).
/// Parentheses around a relation are dropped, as Cassandra drops them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Relation {
    /// `c op term`, with op one of `= < <= > >= != CONTAINS, CONTAINS KEY, LIKE`.
    Column {
        /// The column.
        column: Identifier,
        /// The operator.
        op: Operator,
        /// The value.
        value: Term,
    },
    /// `m[key] op term` (op a comparison).
    MapElement {
        /// The map column.
        column: Identifier,
        /// The key.
        key: Term,
        /// The operator.
        op: Operator,
        /// The value.
        value: Term,
    },
    /// `c IN (...)` or `c IN ?`
    In {
        /// The column.
        column: Identifier,
        /// The values.
        values: InValues,
    },
    /// `c IS NOT NULL` (materialized views).
    IsNotNull(Identifier),
    /// `token(a, b) op term`
    Token {
        /// The partition key columns.
        columns: Vec<Identifier>,
        /// The operator (a comparison).
        op: Operator,
        /// The value, usually `token(...)` or a bind marker.
        value: Term,
    },
    /// `(a, b) op (1, 2)` or `(a, b) op ?`; `value` is a [`Term::Tuple`] or a [`Term::BindMarker`].
    MultiColumn {
        /// The clustering columns.
        columns: Vec<Identifier>,
        /// The operator (a comparison).
        op: Operator,
        /// The tuple.
        value: Term,
    },
    /// `(a, b) IN ((1, 2), (3, 4))`, `(a, b) IN (?, ?)`, `(a, b) IN ()` or `(a, b) IN ?`.
    MultiColumnIn {
        /// The clustering columns.
        columns: Vec<Identifier>,
        /// The tuples.
        values: InValues,
    },
    /// `expr(index_name, term)`, a custom index expression.
    CustomIndex {
        /// The index, maybe keyspace-qualified.
        index: QualifiedName,
        /// The expression given to the index.
        expression: Term,
    },
}

struct Columns<'a>(&'a [Identifier]);

impl fmt::Display for Columns<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({})", Comma(self.0))
    }
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Relation::Column { column, op, value } => write!(f, "{column} {op} {value}"),
            Relation::MapElement { column, key, op, value } => write!(f, "{column}[{key}] {op} {value}"),
            Relation::In { column, values } => write!(f, "{column} IN {values}"),
            Relation::IsNotNull(column) => write!(f, "{column} IS NOT NULL"),
            Relation::Token { columns, op, value } => write!(f, "TOKEN{} {op} {value}", Columns(columns)),
            Relation::MultiColumn { columns, op, value } => write!(f, "{} {op} {value}", Columns(columns)),
            Relation::MultiColumnIn { columns, values } => write!(f, "{} IN {values}", Columns(columns)),
            Relation::CustomIndex { index, expression } => write!(f, "expr({index}, {expression})"),
        }
    }
}

/// Writes ` WHERE a AND b` when there are relations.
pub(crate) struct Where<'a>(pub &'a [Relation]);

impl fmt::Display for Where<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return Ok(());
        }
        write!(f, " WHERE {}", Joined(self.0, " AND "))
    }
}

/// One column of ORDER BY.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ordering {
    /// The clustering column.
    pub column: Identifier,
    /// `DESC` (`ASC` when false, written or not).
    pub descending: bool,
}

impl fmt::Display for Ordering {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.column, if self.descending { "DESC" } else { "ASC" })
    }
}

/// `SELECT ...`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Select {
    /// `SELECT JSON`
    pub json: bool,
    /// `SELECT DISTINCT`
    pub distinct: bool,
    /// What is returned.
    pub selection: Selection,
    /// `FROM table`
    pub table: QualifiedName,
    /// The WHERE relations, joined by AND.
    pub where_clause: Vec<Relation>,
    /// `GROUP BY` columns.
    pub group_by: Vec<Identifier>,
    /// `ORDER BY` columns.
    pub order_by: Vec<Ordering>,
    /// `PER PARTITION LIMIT n`: an integer constant or a bind marker.
    pub per_partition_limit: Option<Term>,
    /// `LIMIT n`: an integer constant or a bind marker.
    pub limit: Option<Term>,
    /// `ALLOW FILTERING`
    pub allow_filtering: bool,
}

impl fmt::Display for Select {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SELECT ")?;
        if self.json {
            f.write_str("JSON ")?;
        }
        if self.distinct {
            f.write_str("DISTINCT ")?;
        }
        write!(f, "{} FROM {}{}", self.selection, self.table, Where(&self.where_clause))?;
        if !self.group_by.is_empty() {
            write!(f, " GROUP BY {}", Comma(&self.group_by))?;
        }
        if !self.order_by.is_empty() {
            write!(f, " ORDER BY {}", Comma(&self.order_by))?;
        }
        if let Some(n) = &self.per_partition_limit {
            write!(f, " PER PARTITION LIMIT {n}")?;
        }
        if let Some(n) = &self.limit {
            write!(f, " LIMIT {n}")?;
        }
        if self.allow_filtering {
            f.write_str(" ALLOW FILTERING")?;
        }
        Ok(())
    }
}
