//! The rights a CQL statement needs, checked the same way by both front ends (Thrift's CQL
//! calls and the native protocol): a login when the authenticator asks for one, then the
//! grants of `access.properties` for each table or keyspace the statement touches (see
//! [`crate::auth`] for which grant covers what).

use cql::ast::Statement;

use crate::auth::{AuthError, AuthenticatedUser, Authenticator};
use crate::thrift::validate::is_reserved_keyspace;

/// What a statement touches, for the session's rights.
pub enum Access {
    /// Nothing that needs a right (USE checks only that the keyspace exists).
    None,
    /// Reads or writes of one table of a keyspace (`None`: the session's): a grant on the
    /// table or on its keyspace will do, as for the Thrift data calls.
    Data { keyspace: Option<String>, table: String, write: bool },
    /// Creating, altering or dropping a keyspace's tables: a keyspace grant, as the Thrift
    /// `system_*_column_family` calls ask.
    Tables { keyspace: Option<String> },
    /// Creating, altering or dropping keyspaces.
    Keyspaces,
}

/// The rights a statement needs (a batch: each of its statements').
pub fn access(s: &Statement) -> Vec<Access> {
    let ks = |name: &cql::ast::QualifiedName| name.keyspace.as_ref().map(|k| k.name().to_string());
    let data = |name: &cql::ast::QualifiedName, write: bool| Access::Data {
        keyspace: ks(name),
        table: name.name.name().to_string(),
        write,
    };
    let one = match s {
        Statement::Use(_) => Access::None,
        Statement::Select(s) => data(&s.table, false),
        Statement::Insert(s) => data(&s.table, true),
        Statement::Update(s) => data(&s.table, true),
        Statement::Delete(s) => data(&s.table, true),
        Statement::Batch(b) => {
            return b
                .statements
                .iter()
                .map(|s| match s {
                    cql::ast::BatchStatement::Insert(s) => data(&s.table, true),
                    cql::ast::BatchStatement::Update(s) => data(&s.table, true),
                    cql::ast::BatchStatement::Delete(s) => data(&s.table, true),
                })
                .collect()
        }
        Statement::Truncate(t) => data(t, true),
        Statement::CreateTable(s) => Access::Tables { keyspace: ks(&s.name) },
        Statement::AlterTable(s) => Access::Tables { keyspace: ks(&s.name) },
        Statement::DropTable(d) | Statement::DropView(d) => Access::Tables { keyspace: ks(&d.name) },
        Statement::CreateView(v) => {
            return vec![Access::Tables { keyspace: ks(&v.name) }, data(&v.base_table, false)];
        }
        Statement::CreateKeyspace(_) | Statement::AlterKeyspace(_) | Statement::DropKeyspace { .. } => {
            Access::Keyspaces
        }
        _ => Access::None,
    };
    vec![one]
}

/// Why a statement may not run for this user.
#[derive(Debug)]
pub enum Refusal {
    /// Not logged in, or no grant.
    Auth(AuthError),
    /// A write to a built-in keyspace (3.11's words, "... keyspace is not user-modifiable").
    Reserved(String),
}

/// Checks the login and every right `statement` needs; unqualified names are in
/// `session_keyspace` (without one, the statement answers with its own error when it runs).
pub fn authorize(
    auth: &Authenticator,
    user: Option<&AuthenticatedUser>,
    session_keyspace: Option<&str>,
    statement: &Statement,
) -> Result<(), Refusal> {
    if auth.requires_login() && user.is_none() {
        return Err(Refusal::Auth(AuthError::NotLoggedIn));
    }
    let keyspace = |ks: Option<String>| ks.or_else(|| session_keyspace.map(str::to_string));
    for access in access(statement) {
        match access {
            Access::None => {}
            Access::Keyspaces => auth.authorize_keyspace_list_change(user).map_err(Refusal::Auth)?,
            Access::Tables { keyspace: ks } => {
                if let Some(ks) = keyspace(ks) {
                    auth.authorize(user, &ks, true).map_err(Refusal::Auth)?;
                }
            }
            Access::Data { keyspace: ks, table, write } => {
                if let Some(ks) = keyspace(ks) {
                    if write && is_reserved_keyspace(&ks) {
                        return Err(Refusal::Reserved(format!("{ks} keyspace is not user-modifiable")));
                    }
                    auth.authorize_column_families(user, &ks, [table.as_str()], write).map_err(Refusal::Auth)?;
                }
            }
        }
    }
    Ok(())
}
