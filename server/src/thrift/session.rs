//! A connection's state (its keyspace, login and pending trace) and the access checks made
//! against it before a request runs.

use std::net::IpAddr;
use std::sync::Arc;

use uuid::Uuid;

use super::error::{ire, TResult, ThriftError};
use super::validate::is_reserved_keyspace;
use crate::auth::{AuthError, AuthenticatedUser, Authenticator};

/// What a client sees for a refused login or request. Only `login` declares the
/// authentication and authorization exceptions; every other method reports a refusal as
/// InvalidRequestException, as Cassandra does.
pub fn auth_error(e: AuthError) -> ThriftError {
    match e {
        AuthError::BadCredentials(m) => ThriftError::Authentication(m),
        AuthError::NotAuthorized(m) => ire(m),
        AuthError::NotLoggedIn => ire("You have not logged in"),
    }
}

/// Per-connection state.
#[derive(Default)]
pub struct Session {
    /// Shared: every request takes it, and a clone is a count, not a copy.
    keyspace: Option<Arc<str>>,
    user: Option<AuthenticatedUser>,
    /// Set by trace_next_query: the session id under which the next request is traced.
    trace_next: Option<Uuid>,
    /// The client's address, as trace sessions record it.
    client: Option<IpAddr>,
}

impl Session {
    /// The session's keyspace, after checking the login and the right to read (or write) each of
    /// `column_families` in it: what a data call needs. A grant on the column family or on the
    /// keyspace will do (see [`crate::auth`]).
    pub fn keyspace_for<'a>(
        &self,
        auth: &Authenticator,
        column_families: impl IntoIterator<Item = &'a str>,
        write: bool,
    ) -> TResult<Arc<str>> {
        let ks = self.current_keyspace(write)?;
        auth.authorize_column_families(self.user.as_ref(), &ks, column_families, write).map_err(auth_error)?;
        Ok(ks)
    }

    /// The session's keyspace, after checking the login and the right to read (or write) the
    /// keyspace as a whole: what changes to its column families need.
    pub fn keyspace(&self, auth: &Authenticator, write: bool) -> TResult<Arc<str>> {
        let ks = self.current_keyspace(write)?;
        self.authorize(auth, &ks, write)?;
        Ok(ks)
    }

    fn current_keyspace(&self, write: bool) -> TResult<Arc<str>> {
        let ks = self.keyspace.clone().ok_or_else(|| ire("You have not set a keyspace for this session"))?;
        if write && is_reserved_keyspace(&ks) {
            return Err(ire(format!("{ks} keyspace is not user-modifiable")));
        }
        Ok(ks)
    }

    /// The right to read (or write) `column_families` of `ks`: a grant on each or on the
    /// keyspace (CQL statements name their keyspace themselves).
    pub fn authorize_tables<'a>(
        &self,
        auth: &Authenticator,
        ks: &str,
        column_families: impl IntoIterator<Item = &'a str>,
        write: bool,
    ) -> TResult<()> {
        if write && is_reserved_keyspace(ks) {
            return Err(ire(format!("{ks} keyspace is not user-modifiable")));
        }
        auth.authorize_column_families(self.user.as_ref(), ks, column_families, write).map_err(auth_error)
    }

    /// Keyspace grants only.
    pub fn authorize(&self, auth: &Authenticator, ks: &str, write: bool) -> TResult<()> {
        auth.authorize(self.user.as_ref(), ks, write).map_err(auth_error)
    }

    /// Creating, changing or dropping keyspaces (`<modify-keyspaces>` in access.properties).
    pub fn authorize_keyspace_change(&self, auth: &Authenticator) -> TResult<()> {
        auth.authorize_keyspace_list_change(self.user.as_ref()).map_err(auth_error)
    }

    /// Refuses a client that must log in first and has not.
    pub fn require_login(&self, auth: &Authenticator) -> TResult<()> {
        if auth.requires_login() && self.user.is_none() {
            return Err(auth_error(AuthError::NotLoggedIn));
        }
        Ok(())
    }

    /// Who logged in, if anyone did.
    pub fn user(&self) -> Option<&AuthenticatedUser> {
        self.user.as_ref()
    }

    pub fn set_user(&mut self, user: AuthenticatedUser) {
        self.user = Some(user);
    }

    /// Sets the keyspace without checking the login or any right: as in Cassandra, the data
    /// calls that use it check both.
    pub fn set_keyspace(&mut self, keyspace: String) {
        self.keyspace = Some(keyspace.into());
    }

    /// The keyspace set by set_keyspace or USE, unchecked.
    pub fn current_keyspace_name(&self) -> Option<&str> {
        self.keyspace.as_deref()
    }

    /// Asks for the next request to be traced under `id`.
    pub fn trace_next(&mut self, id: Uuid) {
        self.trace_next = Some(id);
    }

    pub fn set_client(&mut self, client: IpAddr) {
        self.client = Some(client);
    }

    pub fn client(&self) -> Option<IpAddr> {
        self.client
    }

    /// The trace session id for the request about to run, if one was asked for.
    pub fn take_trace(&mut self) -> Option<Uuid> {
        self.trace_next.take()
    }
}
