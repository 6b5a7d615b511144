//! Schema statements: keyspaces, tables, indexes, user types, materialized views, triggers.

use std::fmt;

use super::ident::{Comma, Identifier, Joined, QualifiedName};
use super::properties::{PrimaryKey, Property, TableOption, With};
use super::select::{Relation, Selection, Where};
use super::types::CqlType;

/// ` IF NOT EXISTS` when true.
pub(crate) struct IfNotExists(pub bool);

impl fmt::Display for IfNotExists {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 {
            f.write_str(" IF NOT EXISTS")?;
        }
        Ok(())
    }
}

/// ` IF EXISTS` when true.
pub(crate) struct IfExists(pub bool);

impl fmt::Display for IfExists {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 {
            f.write_str(" IF EXISTS")?;
        }
        Ok(())
    }
}

/// `CREATE KEYSPACE [IF NOT EXISTS] ks WITH ...`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CreateKeyspace {
    /// `IF NOT EXISTS`
    pub if_not_exists: bool,
    /// The keyspace.
    pub name: Identifier,
    /// `replication = {...} AND durable_writes = ...` (never empty).
    pub properties: Vec<Property>,
}

/// `ALTER KEYSPACE ks WITH ...`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AlterKeyspace {
    /// The keyspace.
    pub name: Identifier,
    /// The new properties (never empty).
    pub properties: Vec<Property>,
}

/// One column of CREATE TABLE.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ColumnDefinition {
    /// The column.
    pub name: Identifier,
    /// Its type.
    pub ty: CqlType,
    /// `STATIC`
    pub is_static: bool,
    /// `PRIMARY KEY` written after the column: the table's key is this column alone.
    pub primary_key: bool,
}

impl fmt::Display for ColumnDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name, self.ty)?;
        if self.is_static {
            f.write_str(" STATIC")?;
        }
        if self.primary_key {
            f.write_str(" PRIMARY KEY")?;
        }
        Ok(())
    }
}

/// What the parentheses of CREATE TABLE hold, in the order written. Cassandra checks later
/// that exactly one primary key is given, inline or as a clause.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TableElement {
    /// A column.
    Column(ColumnDefinition),
    /// `PRIMARY KEY (...)`
    PrimaryKey(PrimaryKey),
}

impl fmt::Display for TableElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableElement::Column(c) => write!(f, "{c}"),
            TableElement::PrimaryKey(pk) => write!(f, "{pk}"),
        }
    }
}

/// `CREATE TABLE [IF NOT EXISTS] t (...) [WITH ...]`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CreateTable {
    /// `IF NOT EXISTS`
    pub if_not_exists: bool,
    /// The table.
    pub name: QualifiedName,
    /// Columns and primary key clauses (never empty).
    pub elements: Vec<TableElement>,
    /// `WITH` options.
    pub options: Vec<TableOption>,
}

impl CreateTable {
    /// The column definitions.
    pub fn columns(&self) -> impl Iterator<Item = &ColumnDefinition> {
        self.elements.iter().filter_map(|e| match e {
            TableElement::Column(c) => Some(c),
            TableElement::PrimaryKey(_) => None,
        })
    }
}

/// One column added by ALTER TABLE ADD.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AddedColumn {
    /// The column.
    pub name: Identifier,
    /// Its type.
    pub ty: CqlType,
    /// `STATIC`
    pub is_static: bool,
}

impl fmt::Display for AddedColumn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name, self.ty)?;
        if self.is_static {
            f.write_str(" STATIC")?;
        }
        Ok(())
    }
}

/// What ALTER TABLE changes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AlterTableAction {
    /// `ALTER c TYPE t` (parsed; Cassandra 3.11 refuses it when executing).
    AlterType {
        /// The column.
        column: Identifier,
        /// The new type.
        ty: CqlType,
    },
    /// `ADD c t` or `ADD (c t, d u)`
    Add(Vec<AddedColumn>),
    /// `DROP c` or `DROP (c, d)`, maybe `USING TIMESTAMP n` (an integer, as written).
    Drop {
        /// The columns.
        columns: Vec<Identifier>,
        /// When the columns were dropped.
        timestamp: Option<String>,
    },
    /// `DROP COMPACT STORAGE` (Cassandra 3.11.2 and later).
    DropCompactStorage,
    /// `RENAME a TO b AND c TO d`
    Rename(Vec<(Identifier, Identifier)>),
    /// `WITH ...` (never empty).
    With(Vec<Property>),
}

/// `ALTER TABLE t ...`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AlterTable {
    /// The table.
    pub name: QualifiedName,
    /// The change.
    pub action: AlterTableAction,
}

/// Writes `a TO b AND c TO d`.
pub(crate) struct Renames<'a>(pub &'a [(Identifier, Identifier)]);

impl fmt::Display for Renames<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (from, to)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" AND ")?;
            }
            write!(f, "{from} TO {to}")?;
        }
        Ok(())
    }
}

impl fmt::Display for AlterTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ALTER TABLE {} ", self.name)?;
        match &self.action {
            AlterTableAction::AlterType { column, ty } => write!(f, "ALTER {column} TYPE {ty}"),
            AlterTableAction::Add(cols) => match cols.as_slice() {
                [one] => write!(f, "ADD {one}"),
                many => write!(f, "ADD ({})", Comma(many)),
            },
            AlterTableAction::Drop { columns, timestamp } => {
                match columns.as_slice() {
                    [one] => write!(f, "DROP {one}")?,
                    many => write!(f, "DROP ({})", Comma(many))?,
                }
                if let Some(ts) = timestamp {
                    write!(f, " USING TIMESTAMP {ts}")?;
                }
                Ok(())
            }
            AlterTableAction::DropCompactStorage => f.write_str("DROP COMPACT STORAGE"),
            AlterTableAction::Rename(pairs) => write!(f, "RENAME {}", Renames(pairs)),
            AlterTableAction::With(props) => write!(f, "WITH {}", Joined(props, " AND ")),
        }
    }
}

/// What an index indexes in its column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IndexTargetKind {
    /// `c`: the value, or a collection's values.
    Simple,
    /// `keys(m)`
    Keys,
    /// `values(c)`
    Values,
    /// `entries(m)`
    Entries,
    /// `full(c)`: a frozen collection as a whole.
    Full,
}

/// One column of CREATE INDEX.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IndexTarget {
    /// The column.
    pub column: Identifier,
    /// What of it is indexed.
    pub kind: IndexTargetKind,
}

impl fmt::Display for IndexTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.column;
        match self.kind {
            IndexTargetKind::Simple => write!(f, "{c}"),
            IndexTargetKind::Keys => write!(f, "KEYS({c})"),
            IndexTargetKind::Values => write!(f, "VALUES({c})"),
            IndexTargetKind::Entries => write!(f, "ENTRIES({c})"),
            IndexTargetKind::Full => write!(f, "FULL({c})"),
        }
    }
}

/// `CREATE [CUSTOM] INDEX [IF NOT EXISTS] [name] ON t (targets) [USING 'class'] [WITH ...]`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CreateIndex {
    /// `CUSTOM`
    pub custom: bool,
    /// `IF NOT EXISTS`
    pub if_not_exists: bool,
    /// The index name, when given.
    pub name: Option<Identifier>,
    /// The table.
    pub table: QualifiedName,
    /// The indexed columns (the grammar allows none or several).
    pub targets: Vec<IndexTarget>,
    /// `USING 'class'`
    pub class: Option<String>,
    /// `WITH OPTIONS = {...}` and other properties.
    pub properties: Vec<Property>,
}

/// `CREATE TYPE [IF NOT EXISTS] ks.t (field type, ...)`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CreateType {
    /// `IF NOT EXISTS`
    pub if_not_exists: bool,
    /// The type.
    pub name: QualifiedName,
    /// The fields (never empty).
    pub fields: Vec<(Identifier, CqlType)>,
}

/// What ALTER TYPE changes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AlterTypeAction {
    /// `ALTER f TYPE t` (parsed; Cassandra 3.11 refuses it when executing).
    AlterField(Identifier, CqlType),
    /// `ADD f t`
    Add(Identifier, CqlType),
    /// `RENAME a TO b AND c TO d`
    Rename(Vec<(Identifier, Identifier)>),
}

/// `ALTER TYPE ks.t ...`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AlterType {
    /// The type.
    pub name: QualifiedName,
    /// The change.
    pub action: AlterTypeAction,
}

/// `CREATE MATERIALIZED VIEW [IF NOT EXISTS] v AS SELECT ... FROM t WHERE ... PRIMARY KEY (...)`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CreateView {
    /// `IF NOT EXISTS`
    pub if_not_exists: bool,
    /// The view.
    pub name: QualifiedName,
    /// The selected columns.
    pub selection: Selection,
    /// The base table.
    pub base_table: QualifiedName,
    /// The WHERE relations (`IS NOT NULL` on the key columns, usually).
    pub where_clause: Vec<Relation>,
    /// The view's primary key.
    pub primary_key: PrimaryKey,
    /// `WITH` options.
    pub options: Vec<TableOption>,
}

/// `CREATE TRIGGER [IF NOT EXISTS] name ON t USING 'class'`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CreateTrigger {
    /// `IF NOT EXISTS`
    pub if_not_exists: bool,
    /// The trigger.
    pub name: Identifier,
    /// The table.
    pub table: QualifiedName,
    /// The trigger's Java class.
    pub class: String,
}

impl fmt::Display for CreateKeyspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CREATE KEYSPACE{} {}{}", IfNotExists(self.if_not_exists), self.name, With(&self.properties))
    }
}

impl fmt::Display for AlterKeyspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ALTER KEYSPACE {}{}", self.name, With(&self.properties))
    }
}

impl fmt::Display for CreateTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CREATE TABLE{} {} ({}){}",
            IfNotExists(self.if_not_exists),
            self.name,
            Comma(&self.elements),
            With(&self.options)
        )
    }
}

impl fmt::Display for CreateIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.custom { "CREATE CUSTOM INDEX" } else { "CREATE INDEX" })?;
        write!(f, "{}", IfNotExists(self.if_not_exists))?;
        if let Some(name) = &self.name {
            write!(f, " {name}")?;
        }
        write!(f, " ON {} ({})", self.table, Comma(&self.targets))?;
        if let Some(class) = &self.class {
            write!(f, " USING {}", super::term::quote_string(class))?;
        }
        write!(f, "{}", With(&self.properties))
    }
}

impl fmt::Display for CreateType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CREATE TYPE{} {} (", IfNotExists(self.if_not_exists), self.name)?;
        for (i, (name, ty)) in self.fields.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{name} {ty}")?;
        }
        f.write_str(")")
    }
}

impl fmt::Display for AlterType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ALTER TYPE {} ", self.name)?;
        match &self.action {
            AlterTypeAction::AlterField(field, ty) => write!(f, "ALTER {field} TYPE {ty}"),
            AlterTypeAction::Add(field, ty) => write!(f, "ADD {field} {ty}"),
            AlterTypeAction::Rename(pairs) => write!(f, "RENAME {}", Renames(pairs)),
        }
    }
}

impl fmt::Display for CreateView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CREATE MATERIALIZED VIEW{} {} AS SELECT {}",
            IfNotExists(self.if_not_exists),
            self.name,
            self.selection
        )?;
        write!(f, " FROM {}{} {}{}", self.base_table, Where(&self.where_clause), self.primary_key, With(&self.options))
    }
}

impl fmt::Display for CreateTrigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let class = super::term::quote_string(&self.class);
        write!(f, "CREATE TRIGGER{} {} ON {} USING {class}", IfNotExists(self.if_not_exists), self.name, self.table)
    }
}
