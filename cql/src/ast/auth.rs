//! Roles, users and permissions.

use std::fmt;

use super::ddl::{IfExists, IfNotExists};
use super::ident::{Comma, Entries, Identifier, Joined, QualifiedName};
use super::term::{quote_string, Constant};
use super::types::CqlType;

/// A role's name: an identifier (case-insensitive unless quoted) or a string constant (whose
/// case is kept, as for a quoted identifier).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RoleName {
    /// `alice`, `"Alice"`
    Identifier(Identifier),
    /// `'Alice'`
    String(String),
}

impl RoleName {
    /// The name the role is known by.
    pub fn name(&self) -> &str {
        match self {
            RoleName::Identifier(id) => id.name(),
            RoleName::String(s) => s,
        }
    }
}

impl fmt::Display for RoleName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RoleName::Identifier(id) => write!(f, "{id}"),
            RoleName::String(s) => f.write_str(&quote_string(s)),
        }
    }
}

/// One option of CREATE ROLE and ALTER ROLE.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RoleOption {
    /// `PASSWORD = '...'`
    Password(String),
    /// `LOGIN = true`
    Login(bool),
    /// `SUPERUSER = true`
    Superuser(bool),
    /// `OPTIONS = {...}`, a map of constants.
    Options(Vec<(Constant, Constant)>),
}

impl fmt::Display for RoleOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RoleOption::Password(p) => write!(f, "PASSWORD = {}", quote_string(p)),
            RoleOption::Login(b) => write!(f, "LOGIN = {b}"),
            RoleOption::Superuser(b) => write!(f, "SUPERUSER = {b}"),
            RoleOption::Options(entries) => write!(f, "OPTIONS = {}", Entries(entries)),
        }
    }
}

/// `CREATE ROLE [IF NOT EXISTS] r [WITH ...]` and `ALTER ROLE r [WITH ...]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RoleStatement {
    /// `IF NOT EXISTS` (always false for ALTER).
    pub if_not_exists: bool,
    /// The role.
    pub name: RoleName,
    /// The options, each at most once.
    pub options: Vec<RoleOption>,
}

impl RoleStatement {
    pub(crate) fn write(&self, f: &mut fmt::Formatter<'_>, verb: &str) -> fmt::Result {
        write!(f, "{verb} ROLE{} {}", IfNotExists(self.if_not_exists), self.name)?;
        if !self.options.is_empty() {
            write!(f, " WITH {}", Joined(&self.options, " AND "))?;
        }
        Ok(())
    }
}

/// `CREATE USER [IF NOT EXISTS] u [WITH PASSWORD '...'] [SUPERUSER | NOSUPERUSER]` and
/// `ALTER USER` alike. User names keep their case, written bare or as strings, as in Cassandra.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UserStatement {
    /// `IF NOT EXISTS` (always false for ALTER).
    pub if_not_exists: bool,
    /// The user, case kept.
    pub name: String,
    /// `WITH PASSWORD '...'`
    pub password: Option<String>,
    /// `SUPERUSER` (true) or `NOSUPERUSER` (false).
    pub superuser: Option<bool>,
}

impl UserStatement {
    pub(crate) fn write(&self, f: &mut fmt::Formatter<'_>, verb: &str) -> fmt::Result {
        write!(f, "{verb} USER{} {}", IfNotExists(self.if_not_exists), quote_string(&self.name))?;
        if let Some(p) = &self.password {
            write!(f, " WITH PASSWORD {}", quote_string(p))?;
        }
        match self.superuser {
            Some(true) => f.write_str(" SUPERUSER"),
            Some(false) => f.write_str(" NOSUPERUSER"),
            None => Ok(()),
        }
    }
}

/// `DROP USER [IF EXISTS] u`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DropUser {
    /// `IF EXISTS`
    pub if_exists: bool,
    /// The user, case kept.
    pub name: String,
}

/// `DROP ROLE [IF EXISTS] r`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DropRole {
    /// `IF EXISTS`
    pub if_exists: bool,
    /// The role.
    pub name: RoleName,
}

/// A permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Permission {
    Create,
    Alter,
    Drop,
    Select,
    Modify,
    Authorize,
    Describe,
    Execute,
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Permission::Create => "CREATE",
            Permission::Alter => "ALTER",
            Permission::Drop => "DROP",
            Permission::Select => "SELECT",
            Permission::Modify => "MODIFY",
            Permission::Authorize => "AUTHORIZE",
            Permission::Describe => "DESCRIBE",
            Permission::Execute => "EXECUTE",
        })
    }
}

/// `ALL [PERMISSIONS]` or one permission (CQL 3.4.4 grants one at a time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Permissions {
    /// `ALL PERMISSIONS`
    All,
    /// `SELECT [PERMISSION]`
    One(Permission),
}

impl fmt::Display for Permissions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Permissions::All => f.write_str("ALL PERMISSIONS"),
            Permissions::One(p) => write!(f, "{p}"),
        }
    }
}

/// What a permission applies to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Resource {
    /// `ALL KEYSPACES`
    AllKeyspaces,
    /// `KEYSPACE ks`
    Keyspace(Identifier),
    /// `[TABLE] ks.t`
    Table(QualifiedName),
    /// `ALL ROLES`
    AllRoles,
    /// `ROLE r`
    Role(RoleName),
    /// `ALL FUNCTIONS`
    AllFunctions,
    /// `ALL FUNCTIONS IN KEYSPACE ks`
    AllFunctionsInKeyspace(Identifier),
    /// `FUNCTION ks.f(type, ...)`
    Function {
        /// The function.
        name: QualifiedName,
        /// Its signature.
        arguments: Vec<CqlType>,
    },
    /// `ALL MBEANS`
    AllMbeans,
    /// `MBEAN 'name'`
    Mbean(String),
    /// `MBEANS 'pattern'`
    Mbeans(String),
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resource::AllKeyspaces => f.write_str("ALL KEYSPACES"),
            Resource::Keyspace(ks) => write!(f, "KEYSPACE {ks}"),
            Resource::Table(t) => write!(f, "TABLE {t}"),
            Resource::AllRoles => f.write_str("ALL ROLES"),
            Resource::Role(r) => write!(f, "ROLE {r}"),
            Resource::AllFunctions => f.write_str("ALL FUNCTIONS"),
            Resource::AllFunctionsInKeyspace(ks) => write!(f, "ALL FUNCTIONS IN KEYSPACE {ks}"),
            Resource::Function { name, arguments } => write!(f, "FUNCTION {name}({})", Comma(arguments)),
            Resource::AllMbeans => f.write_str("ALL MBEANS"),
            Resource::Mbean(name) => write!(f, "MBEAN {}", quote_string(name)),
            Resource::Mbeans(pattern) => write!(f, "MBEANS {}", quote_string(pattern)),
        }
    }
}

/// `GRANT p ON resource TO role` and `REVOKE p ON resource FROM role`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PermissionChange {
    /// The permissions.
    pub permissions: Permissions,
    /// On what.
    pub resource: Resource,
    /// The grantee or revokee.
    pub role: RoleName,
}

/// `GRANT role TO grantee` and `REVOKE role FROM revokee`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RoleChange {
    /// The role granted or revoked.
    pub role: RoleName,
    /// Who gets or loses it.
    pub grantee: RoleName,
}

/// `LIST permissions [ON resource] [OF role] [NORECURSIVE]`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ListPermissions {
    /// Which permissions.
    pub permissions: Permissions,
    /// On what, if restricted.
    pub resource: Option<Resource>,
    /// Of whom, if restricted.
    pub of: Option<RoleName>,
    /// Without `NORECURSIVE`: include permissions inherited from granted roles.
    pub recursive: bool,
}

/// `LIST ROLES [OF role] [NORECURSIVE]`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ListRoles {
    /// Of whom, if restricted.
    pub of: Option<RoleName>,
    /// Without `NORECURSIVE`: include roles granted through other roles.
    pub recursive: bool,
}

impl fmt::Display for ListPermissions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LIST {}", self.permissions)?;
        if let Some(r) = &self.resource {
            write!(f, " ON {r}")?;
        }
        if let Some(of) = &self.of {
            write!(f, " OF {of}")?;
        }
        if !self.recursive {
            f.write_str(" NORECURSIVE")?;
        }
        Ok(())
    }
}

impl fmt::Display for ListRoles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LIST ROLES")?;
        if let Some(of) = &self.of {
            write!(f, " OF {of}")?;
        }
        if !self.recursive {
            f.write_str(" NORECURSIVE")?;
        }
        Ok(())
    }
}

impl fmt::Display for DropUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DROP USER{} {}", IfExists(self.if_exists), quote_string(&self.name))
    }
}

impl fmt::Display for DropRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DROP ROLE{} {}", IfExists(self.if_exists), self.name)
    }
}
