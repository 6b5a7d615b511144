//! Roles, users and permissions (Cassandra's `createRoleStatement`, `createUserStatement`,
//! `grantPermissionsStatement`, `listPermissionsStatement`, `resource`, ...).

use super::{PResult, Parser};
use crate::ast::{
    DropRole, DropUser, ListPermissions, ListRoles, Permission, PermissionChange, Permissions, Resource, RoleChange,
    RoleOption, RoleStatement, Statement, UserStatement,
};
use crate::lexer::{Keyword, Punct, TokenKind};

fn permission_of(k: Keyword) -> Option<Permission> {
    Some(match k {
        Keyword::Create => Permission::Create,
        Keyword::Alter => Permission::Alter,
        Keyword::Drop => Permission::Drop,
        Keyword::Select => Permission::Select,
        Keyword::Modify => Permission::Modify,
        Keyword::Authorize => Permission::Authorize,
        Keyword::Describe => Permission::Describe,
        Keyword::Execute => Permission::Execute,
        _ => return None,
    })
}

impl Parser<'_> {
    /// `CREATE ROLE [IF NOT EXISTS] r [WITH options]` or `ALTER ROLE r [WITH options]`, at ROLE.
    pub(crate) fn create_or_alter_role(&mut self, create: bool) -> PResult<RoleStatement> {
        self.expect_kw(Keyword::Role)?;
        let if_not_exists = create && self.if_not_exists()?;
        let name = self.role_name()?;
        let mut options: Vec<RoleOption> = Vec::new();
        if self.eat_kw(Keyword::With) {
            loop {
                let option = self.role_option()?;
                if options.iter().any(|o| std::mem::discriminant(o) == std::mem::discriminant(&option)) {
                    self.defer(format!("Multiple definition for property {}", option_name(&option)));
                }
                options.push(option);
                if !self.eat_kw(Keyword::And) {
                    break;
                }
            }
        }
        Ok(RoleStatement { if_not_exists, name, options })
    }

    fn role_option(&mut self) -> PResult<RoleOption> {
        let which = self.kind(0).clone();
        let option = match which {
            TokenKind::Keyword(k @ (Keyword::Password | Keyword::Options | Keyword::Superuser | Keyword::Login)) => k,
            _ => return Err(self.no_viable()),
        };
        self.advance();
        self.expect_punct(Punct::Eq)?;
        match option {
            Keyword::Password => match self.kind(0).clone() {
                TokenKind::String(s) => {
                    self.advance();
                    Ok(RoleOption::Password(s))
                }
                _ => Err(self.mismatched("STRING_LITERAL")),
            },
            Keyword::Options => self.constant_map().map(RoleOption::Options),
            _ => {
                let TokenKind::Boolean(b) = *self.kind(0) else {
                    return Err(self.mismatched("BOOLEAN"));
                };
                self.advance();
                Ok(if option == Keyword::Login { RoleOption::Login(b) } else { RoleOption::Superuser(b) })
            }
        }
    }

    /// `CREATE USER [IF NOT EXISTS] u [WITH PASSWORD 'p'] [SUPERUSER|NOSUPERUSER]` or ALTER USER.
    pub(crate) fn create_or_alter_user(&mut self, create: bool) -> PResult<UserStatement> {
        self.expect_kw(Keyword::User)?;
        let if_not_exists = create && self.if_not_exists()?;
        let name = self.user_name()?;
        let mut password = None;
        if self.eat_kw(Keyword::With) {
            self.expect_kw(Keyword::Password)?;
            let TokenKind::String(p) = self.kind(0).clone() else {
                return Err(self.mismatched("STRING_LITERAL"));
            };
            self.advance();
            password = Some(p);
        }
        let superuser = if self.eat_kw(Keyword::Superuser) {
            Some(true)
        } else if self.eat_kw(Keyword::Nosuperuser) {
            Some(false)
        } else {
            None
        };
        Ok(UserStatement { if_not_exists, name, password, superuser })
    }

    /// `DROP USER [IF EXISTS] u`, after USER.
    pub(crate) fn drop_user(&mut self) -> PResult<Statement> {
        let if_exists = self.if_exists()?;
        let name = self.user_name()?;
        Ok(Statement::DropUser(DropUser { if_exists, name }))
    }

    /// `DROP ROLE [IF EXISTS] r`, after ROLE.
    pub(crate) fn drop_role(&mut self) -> PResult<Statement> {
        let if_exists = self.if_exists()?;
        let name = self.role_name()?;
        Ok(Statement::DropRole(DropRole { if_exists, name }))
    }

    /// True if the tokens from `n` start a permission list rather than a role name: a
    /// permission keyword, or `ALL` followed by `PERMISSIONS` or by what follows permissions.
    fn starts_permissions(&self, n: usize, after: Keyword) -> bool {
        match self.kind(n) {
            TokenKind::Keyword(Keyword::All) => {
                self.is_kw(n + 1, Keyword::Permissions)
                    || self.is_kw(n + 1, after)
                    || self.is_kw(n + 1, Keyword::Of)
                    || self.is_kw(n + 1, Keyword::Norecursive)
                    || *self.kind(n + 1) == TokenKind::Eof
                    || self.is_punct(n + 1, Punct::Semicolon)
            }
            TokenKind::Keyword(k) => permission_of(*k).is_some(),
            _ => false,
        }
    }

    /// `permissionOrAll`: `ALL [PERMISSIONS]` or `p [PERMISSION]`.
    fn permissions(&mut self) -> PResult<Permissions> {
        if self.eat_kw(Keyword::All) {
            self.eat_kw(Keyword::Permissions);
            return Ok(Permissions::All);
        }
        let TokenKind::Keyword(k) = *self.kind(0) else {
            return Err(self.no_viable());
        };
        let Some(p) = permission_of(k) else {
            return Err(self.no_viable());
        };
        self.advance();
        self.eat_kw(Keyword::Permission);
        Ok(Permissions::One(p))
    }

    /// `GRANT ...` or `REVOKE ...`: of permissions on a resource, or of a role.
    pub(crate) fn grant_or_revoke(&mut self) -> PResult<Statement> {
        let grant = self.eat_kw(Keyword::Grant);
        if !grant {
            self.expect_kw(Keyword::Revoke)?;
        }
        let to = if grant { Keyword::To } else { Keyword::From };
        if self.starts_permissions(0, Keyword::On) {
            let permissions = self.permissions()?;
            self.expect_kw(Keyword::On)?;
            let resource = self.resource()?;
            self.expect_kw(to)?;
            let role = self.role_name()?;
            let change = PermissionChange { permissions, resource, role };
            return Ok(if grant { Statement::GrantPermission(change) } else { Statement::RevokePermission(change) });
        }
        if !self.is_role_name(0) {
            return Err(self.no_viable());
        }
        let role = self.role_name()?;
        self.expect_kw(to)?;
        let grantee = self.role_name()?;
        let change = RoleChange { role, grantee };
        Ok(if grant { Statement::GrantRole(change) } else { Statement::RevokeRole(change) })
    }

    /// `resource`: data, role, function or JMX resources.
    fn resource(&mut self) -> PResult<Resource> {
        use Keyword as K;
        if self.is_kw(0, K::All) {
            let root = match self.kind(1) {
                TokenKind::Keyword(K::Keyspaces) => Some(Resource::AllKeyspaces),
                TokenKind::Keyword(K::Roles) => Some(Resource::AllRoles),
                TokenKind::Keyword(K::Mbeans) => Some(Resource::AllMbeans),
                TokenKind::Keyword(K::Functions) => Some(Resource::AllFunctions),
                _ => None,
            };
            if let Some(root) = root {
                self.advance();
                self.advance();
                if root == Resource::AllFunctions && self.eat_kw(K::In) {
                    self.expect_kw(K::Keyspace)?;
                    return Ok(Resource::AllFunctionsInKeyspace(self.keyspace_name()?));
                }
                return Ok(root);
            }
        }
        if self.eat_kw(K::Keyspace) {
            return Ok(Resource::Keyspace(self.keyspace_name()?));
        }
        // `ROLE r` names a role; `role` alone, or `role.t`, names a table.
        if self.is_kw(0, K::Role) && self.is_role_name(1) {
            self.advance();
            return Ok(Resource::Role(self.role_name()?));
        }
        if self.is_kw(0, K::Function) && (self.is_function_name(1) || self.is_ident(1)) && !self.is_punct(1, Punct::Dot)
        {
            self.advance();
            let name = self.function_name()?;
            let arguments = self.parenthesized_types()?;
            return Ok(Resource::Function { name, arguments });
        }
        if let TokenKind::Keyword(k @ (K::Mbean | K::Mbeans)) = *self.kind(0) {
            self.advance();
            let TokenKind::String(name) = self.kind(0).clone() else {
                return Err(self.mismatched("STRING_LITERAL"));
            };
            self.advance();
            return Ok(if k == K::Mbean { Resource::Mbean(name) } else { Resource::Mbeans(name) });
        }
        self.eat_kw(K::Columnfamily);
        Ok(Resource::Table(self.table_name()?))
    }

    /// `LIST ROLES ...`, `LIST USERS` or `LIST permissions ...`.
    pub(crate) fn list_statement(&mut self) -> PResult<Statement> {
        self.expect_kw(Keyword::List)?;
        if self.eat_kw(Keyword::Users) {
            return Ok(Statement::ListUsers);
        }
        if self.eat_kw(Keyword::Roles) {
            let of = if self.eat_kw(Keyword::Of) { Some(self.role_name()?) } else { None };
            let recursive = !self.eat_kw(Keyword::Norecursive);
            return Ok(Statement::ListRoles(ListRoles { of, recursive }));
        }
        let permissions = self.permissions()?;
        let resource = if self.eat_kw(Keyword::On) { Some(self.resource()?) } else { None };
        let of = if self.eat_kw(Keyword::Of) { Some(self.role_name()?) } else { None };
        let recursive = !self.eat_kw(Keyword::Norecursive);
        Ok(Statement::ListPermissions(ListPermissions { permissions, resource, of, recursive }))
    }
}

fn option_name(option: &RoleOption) -> &'static str {
    match option {
        RoleOption::Password(_) => "PASSWORD",
        RoleOption::Login(_) => "LOGIN",
        RoleOption::Superuser(_) => "SUPERUSER",
        RoleOption::Options(_) => "OPTIONS",
    }
}
