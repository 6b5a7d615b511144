//! The statement tree: what a CQL 3.4.4 statement says, before it meets the schema.
//!
//! Every node prints back as valid CQL with `Display`, in a canonical form (upper-case
//! keywords, `TABLE` for `COLUMNFAMILY`, `c = c + v` for `c += v`) that parses back to the
//! same tree; DESCRIBE and error messages use it.

mod auth;
mod ddl;
mod dml;
mod function;
mod ident;
mod properties;
mod select;
mod term;
mod types;

use std::fmt;

pub use auth::{
    DropRole, DropUser, ListPermissions, ListRoles, Permission, PermissionChange, Permissions, Resource, RoleChange,
    RoleName, RoleOption, RoleStatement, UserStatement,
};
pub use ddl::{
    AddedColumn, AlterKeyspace, AlterTable, AlterTableAction, AlterType, AlterTypeAction, ColumnDefinition,
    CreateIndex, CreateKeyspace, CreateTable, CreateTrigger, CreateType, CreateView, IndexTarget, IndexTargetKind,
    TableElement,
};
pub use dml::{
    Assignment, Attributes, Batch, BatchKind, BatchStatement, Condition, ConditionTarget, Conditions, Delete, Deletion,
    Insert, InsertValues, Predicate, Update,
};
pub use function::{CreateAggregate, CreateFunction, DropFunction};
pub use ident::{Identifier, QualifiedName};
pub use properties::{PrimaryKey, Property, PropertyValue, TableOption};
pub use select::{Operator, Ordering, Relation, Select, Selectable, Selection, Selector};
pub use term::{BindMarker, Constant, InValues, Term};
pub use types::{CqlType, NativeType};

use ddl::IfExists;
use properties::With;

/// `DROP <kind> [IF EXISTS] name` for tables, indexes, types and views.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DropObject {
    /// `IF EXISTS`
    pub if_exists: bool,
    /// What is dropped.
    pub name: QualifiedName,
}

/// One CQL statement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Statement {
    /// `USE ks`
    Use(Identifier),
    /// `SELECT ...`
    Select(Select),
    /// `INSERT INTO ...`
    Insert(Insert),
    /// `UPDATE ...`
    Update(Update),
    /// `DELETE ...`
    Delete(Delete),
    /// `BEGIN ... BATCH ... APPLY BATCH`
    Batch(Batch),
    /// `TRUNCATE [TABLE] t`
    Truncate(QualifiedName),
    /// `CREATE KEYSPACE ...`
    CreateKeyspace(CreateKeyspace),
    /// `ALTER KEYSPACE ...`
    AlterKeyspace(AlterKeyspace),
    /// `DROP KEYSPACE [IF EXISTS] ks`
    #[allow(missing_docs)]
    DropKeyspace { if_exists: bool, name: Identifier },
    /// `CREATE TABLE ...`
    CreateTable(CreateTable),
    /// `ALTER TABLE ...`
    AlterTable(AlterTable),
    /// `DROP TABLE [IF EXISTS] t`
    DropTable(DropObject),
    /// `CREATE [CUSTOM] INDEX ...`
    CreateIndex(CreateIndex),
    /// `DROP INDEX [IF EXISTS] ks.idx`
    DropIndex(DropObject),
    /// `CREATE TYPE ...`
    CreateType(CreateType),
    /// `ALTER TYPE ...`
    AlterType(AlterType),
    /// `DROP TYPE [IF EXISTS] ks.t`
    DropType(DropObject),
    /// `CREATE MATERIALIZED VIEW ...`
    CreateView(CreateView),
    /// `ALTER MATERIALIZED VIEW v WITH ...`
    #[allow(missing_docs)]
    AlterView { name: QualifiedName, properties: Vec<Property> },
    /// `DROP MATERIALIZED VIEW [IF EXISTS] v`
    DropView(DropObject),
    /// `CREATE TRIGGER ...`
    CreateTrigger(CreateTrigger),
    /// `DROP TRIGGER [IF EXISTS] name ON t`
    #[allow(missing_docs)]
    DropTrigger { if_exists: bool, name: Identifier, table: QualifiedName },
    /// `CREATE [OR REPLACE] FUNCTION ...` (parsed; Sibyl refuses to run user code)
    CreateFunction(CreateFunction),
    /// `DROP FUNCTION ...`
    DropFunction(DropFunction),
    /// `CREATE [OR REPLACE] AGGREGATE ...` (parsed; refused like functions)
    CreateAggregate(CreateAggregate),
    /// `DROP AGGREGATE ...`
    DropAggregate(DropFunction),
    /// `CREATE ROLE ...`
    CreateRole(RoleStatement),
    /// `ALTER ROLE ...`
    AlterRole(RoleStatement),
    /// `DROP ROLE [IF EXISTS] r`
    DropRole(DropRole),
    /// `LIST ROLES ...`
    ListRoles(ListRoles),
    /// `GRANT role TO grantee`
    GrantRole(RoleChange),
    /// `REVOKE role FROM revokee`
    RevokeRole(RoleChange),
    /// `CREATE USER ...` (a role that can log in)
    CreateUser(UserStatement),
    /// `ALTER USER ...`
    AlterUser(UserStatement),
    /// `DROP USER [IF EXISTS] u`
    DropUser(DropUser),
    /// `LIST USERS`
    ListUsers,
    /// `GRANT permission ON resource TO role`
    GrantPermission(PermissionChange),
    /// `REVOKE permission ON resource FROM role`
    RevokePermission(PermissionChange),
    /// `LIST permission [ON resource] [OF role] [NORECURSIVE]`
    ListPermissions(ListPermissions),
}

fn drop(f: &mut fmt::Formatter<'_>, what: &str, d: &DropObject) -> fmt::Result {
    write!(f, "DROP {what}{} {}", IfExists(d.if_exists), d.name)
}

impl fmt::Display for Statement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Statement::Use(ks) => write!(f, "USE {ks}"),
            Statement::Select(s) => write!(f, "{s}"),
            Statement::Insert(s) => write!(f, "{s}"),
            Statement::Update(s) => write!(f, "{s}"),
            Statement::Delete(s) => write!(f, "{s}"),
            Statement::Batch(s) => write!(f, "{s}"),
            Statement::Truncate(t) => write!(f, "TRUNCATE TABLE {t}"),
            Statement::CreateKeyspace(s) => write!(f, "{s}"),
            Statement::AlterKeyspace(s) => write!(f, "{s}"),
            Statement::DropKeyspace { if_exists, name } => write!(f, "DROP KEYSPACE{} {name}", IfExists(*if_exists)),
            Statement::CreateTable(s) => write!(f, "{s}"),
            Statement::AlterTable(s) => write!(f, "{s}"),
            Statement::DropTable(d) => drop(f, "TABLE", d),
            Statement::CreateIndex(s) => write!(f, "{s}"),
            Statement::DropIndex(d) => drop(f, "INDEX", d),
            Statement::CreateType(s) => write!(f, "{s}"),
            Statement::AlterType(s) => write!(f, "{s}"),
            Statement::DropType(d) => drop(f, "TYPE", d),
            Statement::CreateView(s) => write!(f, "{s}"),
            Statement::AlterView { name, properties } => {
                write!(f, "ALTER MATERIALIZED VIEW {name}{}", With(properties))
            }
            Statement::DropView(d) => drop(f, "MATERIALIZED VIEW", d),
            Statement::CreateTrigger(s) => write!(f, "{s}"),
            Statement::DropTrigger { if_exists, name, table } => {
                write!(f, "DROP TRIGGER{} {name} ON {table}", IfExists(*if_exists))
            }
            Statement::CreateFunction(s) => write!(f, "{s}"),
            Statement::DropFunction(s) => s.write(f, "FUNCTION"),
            Statement::CreateAggregate(s) => write!(f, "{s}"),
            Statement::DropAggregate(s) => s.write(f, "AGGREGATE"),
            Statement::CreateRole(s) => s.write(f, "CREATE"),
            Statement::AlterRole(s) => s.write(f, "ALTER"),
            Statement::DropRole(s) => write!(f, "{s}"),
            Statement::ListRoles(s) => write!(f, "{s}"),
            Statement::GrantRole(s) => write!(f, "GRANT {} TO {}", s.role, s.grantee),
            Statement::RevokeRole(s) => write!(f, "REVOKE {} FROM {}", s.role, s.grantee),
            Statement::CreateUser(s) => s.write(f, "CREATE"),
            Statement::AlterUser(s) => s.write(f, "ALTER"),
            Statement::DropUser(s) => write!(f, "{s}"),
            Statement::ListUsers => f.write_str("LIST USERS"),
            Statement::GrantPermission(s) => write!(f, "GRANT {} ON {} TO {}", s.permissions, s.resource, s.role),
            Statement::RevokePermission(s) => write!(f, "REVOKE {} ON {} FROM {}", s.permissions, s.resource, s.role),
            Statement::ListPermissions(s) => write!(f, "{s}"),
        }
    }
}
