//! `server::auth`: who may log in, and what they may read and write.
//!
//! Two authenticators, as in Cassandra 0.6/0.7:
//! - `AllowAllAuthenticator` (the default): no login needed, everything allowed.
//! - `SimpleAuthenticator`: users and passwords in `passwd.properties`, access rights in
//!   `access.properties` (Java properties syntax: `key=value`, `#`/`!` comments, `\ ` to put a
//!   space in a key, trailing `\` to continue a line).
//!
//! `passwd.properties` holds `user=password`. With password mode `PLAIN` (default) the value is
//! the password itself; with `MD5` it is the hex MD5 digest of the password (the client still
//! sends the plain password, which is hashed and compared). 0.6 chose the mode with the JVM
//! property `passwd.mode`; we use the `PasswdMode` element of storage-conf.xml.
//!
//! `access.properties` accepts 0.6's form and 0.7's:
//! - `Keyspace1=jsmith,dilbert` (0.6): read and write access to the keyspace;
//! - `Keyspace1.<rw>=dilbert` and `Keyspace1.<ro>=jsmith` (0.7): read-write or read-only;
//! - `Keyspace1.Standard1.<rw>=...` / `.<ro>` (0.7): access to one column family;
//! - `<modify-keyspaces>=jsmith` (0.7): who may create and drop keyspaces.
//!
//! **Which grant a request needs.** A data call (get, insert, batch_mutate, truncate, ...) reads
//! or writes column families, and each one it touches must be allowed by a grant on that column
//! family *or* on its keyspace: a keyspace grant covers all its column families, a column family
//! grant needs no keyspace grant, and the two add up (`Keyspace1.<ro>` with
//! `Keyspace1.Standard1.<rw>` reads every column family of Keyspace1 and writes Standard1). This
//! is Cassandra 1.2's rule for the same files (`ClientState.ensureHasPermission` walks from the
//! table up to its keyspace and the root, asking the legacy SimpleAuthorizer at each level).
//! 0.7 and 0.8 (`ClientState.hasColumnFamilyAccess`) asked only about the column family, so
//! there a keyspace grant allowed schema changes but no data; we keep the keyspace grant's data
//! access, which 0.6's `Keyspace1=users` form and our sample files rely on. Schema changes to a
//! keyspace's column families need a keyspace grant (`<rw>`), as in 0.7
//! (`hasColumnFamilyListAccess`). `set_keyspace` checks only that the keyspace exists, logged
//! in or not (0.7's `CassandraServer.set_keyspace`; 1.2–3.x's `ClientState.setKeyspace` even
//! skips that before a login, because some clients call it before `login`). 0.6's
//! `login(keyspace, ..)` wants some grant in the keyspace, on it or on one of its column
//! families.
//!
//! User lists are comma-separated; spaces around names are trimmed. 0.6 re-read both files at
//! every login, so edits took effect without a restart; we read them at startup (so a broken
//! file stops startup) and again at a login when a file's modification time changed. Access
//! checks use what the last read found.
//!
//! With `AllowAllAuthenticator` every check returns at its first `match`: no lock, no
//! allocation on the request path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::time::SystemTime;

use md5::{Digest, Md5};
use membership::properties::{self, KeyEnd};

/// How `passwd.properties` stores passwords.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PasswordMode {
    Plain,
    /// Lower- or upper-case hex of the MD5 digest of the password.
    Md5,
}

impl PasswordMode {
    pub fn as_str(&self) -> &'static str {
        match self {
            PasswordMode::Plain => "PLAIN",
            PasswordMode::Md5 => "MD5",
        }
    }
}

/// A user who passed [`Authenticator::login`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthenticatedUser {
    pub username: String,
}

/// A refused login or request. The Thrift layer maps `BadCredentials` to
/// AuthenticationException, `NotAuthorized` to AuthorizationException and `NotLoggedIn` to
/// InvalidRequestException ("You have not logged in"), as 0.7 did.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("{0}")]
    BadCredentials(String),
    #[error("{0}")]
    NotAuthorized(String),
    #[error("You have not logged in")]
    NotLoggedIn,
}

/// Why an authenticator could not be set up at startup.
#[derive(Debug, thiserror::Error)]
pub enum AuthSetupError {
    #[error("unknown authenticator class {class_name}; supported: org.apache.cassandra.auth.AllowAllAuthenticator, org.apache.cassandra.auth.SimpleAuthenticator")]
    UnknownAuthenticator { class_name: String },
    #[error("cannot read {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}:{line}: {reason}", path.display())]
    BadFile { path: PathBuf, line: usize, reason: String },
}

/// The configured authenticator.
#[derive(Debug)]
pub enum Authenticator {
    AllowAll,
    Simple(SimpleAuth),
}

fn short_name(class_name: &str) -> &str {
    class_name.trim().rsplit('.').next().unwrap_or(class_name)
}

impl Authenticator {
    /// Builds the authenticator named by `class_name` (full or short class name), reading the
    /// SimpleAuthenticator's files `passwd.properties` and `access.properties` from `conf_dir`
    /// in PLAIN mode. Use [`Authenticator::with_files`] for other paths or MD5 mode.
    pub fn from_config(class_name: &str, conf_dir: &Path) -> Result<Authenticator, AuthSetupError> {
        Self::with_files(
            class_name,
            &conf_dir.join("passwd.properties"),
            &conf_dir.join("access.properties"),
            PasswordMode::Plain,
        )
    }

    /// As [`Authenticator::from_config`] with the settings of a loaded configuration (its
    /// `PasswdProperties`, `AccessProperties` and `PasswdMode` extension elements).
    pub fn for_config(config: &crate::config::Config, conf_dir: &Path) -> Result<Authenticator, AuthSetupError> {
        let (passwd, access) = config.auth_files(conf_dir);
        Self::with_files(&config.authenticator, &passwd, &access, config.passwd_mode)
    }

    pub fn with_files(
        class_name: &str,
        passwd: &Path,
        access: &Path,
        mode: PasswordMode,
    ) -> Result<Authenticator, AuthSetupError> {
        match short_name(class_name) {
            "AllowAllAuthenticator" => Ok(Authenticator::AllowAll),
            "SimpleAuthenticator" => Ok(Authenticator::Simple(SimpleAuth::load(passwd, access, mode)?)),
            _ => Err(AuthSetupError::UnknownAuthenticator { class_name: class_name.to_string() }),
        }
    }

    /// Whether clients must call `login` before using a keyspace.
    pub fn requires_login(&self) -> bool {
        matches!(self, Authenticator::Simple(_))
    }

    /// Checks `credentials` (keys `username` and `password`).
    pub fn login(&self, credentials: &BTreeMap<String, String>) -> Result<AuthenticatedUser, AuthError> {
        match self {
            Authenticator::AllowAll => {
                Ok(AuthenticatedUser { username: credentials.get("username").cloned().unwrap_or_default() })
            }
            Authenticator::Simple(s) => s.login(credentials),
        }
    }

    /// May `user` read (or, with `write`, also write) `keyspace` as a whole? Keyspace grants
    /// only: what schema changes to its column families need.
    pub fn authorize(&self, user: Option<&AuthenticatedUser>, keyspace: &str, write: bool) -> Result<(), AuthError> {
        match self {
            Authenticator::AllowAll => Ok(()),
            Authenticator::Simple(s) => s.authorize(logged_in(user)?, keyspace, write),
        }
    }

    /// May `user` read (or, with `write`, also write) `column_family` of `keyspace`? A grant on
    /// the column family or on the keyspace will do.
    pub fn authorize_column_family(
        &self,
        user: Option<&AuthenticatedUser>,
        keyspace: &str,
        column_family: &str,
        write: bool,
    ) -> Result<(), AuthError> {
        self.authorize_column_families(user, keyspace, std::iter::once(column_family), write)
    }

    /// [`Authenticator::authorize_column_family`] for every column family of one request (a
    /// batch names several); the first one refused is the answer. With no column family at all
    /// only the login is checked.
    pub fn authorize_column_families<'a>(
        &self,
        user: Option<&AuthenticatedUser>,
        keyspace: &str,
        column_families: impl IntoIterator<Item = &'a str>,
        write: bool,
    ) -> Result<(), AuthError> {
        match self {
            Authenticator::AllowAll => Ok(()),
            Authenticator::Simple(s) => s.authorize_column_families(logged_in(user)?, keyspace, column_families, write),
        }
    }

    /// May `user` use `keyspace` at all: some grant on it or on one of its column families?
    /// What 0.6's `login(keyspace, ..)` asks.
    pub fn authorize_keyspace_use(&self, user: Option<&AuthenticatedUser>, keyspace: &str) -> Result<(), AuthError> {
        match self {
            Authenticator::AllowAll => Ok(()),
            Authenticator::Simple(s) => s.authorize_keyspace_use(logged_in(user)?, keyspace),
        }
    }

    /// May `user` create or drop keyspaces (`<modify-keyspaces>`)?
    pub fn authorize_keyspace_list_change(&self, user: Option<&AuthenticatedUser>) -> Result<(), AuthError> {
        match self {
            Authenticator::AllowAll => Ok(()),
            Authenticator::Simple(s) => s.authorize_keyspace_list_change(logged_in(user)?),
        }
    }
}

fn logged_in(user: Option<&AuthenticatedUser>) -> Result<&AuthenticatedUser, AuthError> {
    user.ok_or(AuthError::NotLoggedIn)
}

impl Authenticator {
    /// The users and grants `system_auth` shows: none for AllowAllAuthenticator; for the
    /// SimpleAuthenticator each user of passwd.properties, a superuser when it may change
    /// keyspaces (`<modify-keyspaces>`), with its grants of access.properties on `data/<ks>`
    /// and `data/<ks>/<cf>` (read-only: SELECT; read-write: MODIFY and SELECT).
    pub fn system_auth_users(&self) -> Vec<storage::AuthUser> {
        let Authenticator::Simple(simple) = self else { return Vec::new() };
        let tables = simple.tables();
        let access = &tables.access;
        let resources = access.keyspaces.iter().map(|(ks, g)| (format!("data/{ks}"), g)).chain(
            access
                .column_families
                .iter()
                .flat_map(|(ks, cfs)| cfs.iter().map(move |(cf, g)| (format!("data/{ks}/{cf}"), g))),
        );
        let resources: Vec<(String, &Grants)> = resources.collect();
        tables
            .passwords
            .keys()
            .map(|name| {
                let mut grants = BTreeMap::new();
                for (resource, g) in &resources {
                    if g.read_write.contains(name) {
                        grants.insert(resource.clone(), vec!["MODIFY".to_string(), "SELECT".to_string()]);
                    } else if g.read_only.contains(name) {
                        grants.insert(resource.clone(), vec!["SELECT".to_string()]);
                    }
                }
                storage::AuthUser { name: name.clone(), superuser: access.modify_keyspaces.contains(name), grants }
            })
            .collect()
    }
}

/// Read and write grants for one keyspace or column family.
#[derive(Debug, Default, Clone)]
struct Grants {
    read_write: BTreeSet<String>,
    read_only: BTreeSet<String>,
}

impl Grants {
    fn allows(&self, user: &str, write: bool) -> bool {
        self.read_write.contains(user) || (!write && self.read_only.contains(user))
    }
}

/// What `access.properties` says.
#[derive(Debug, Default, Clone)]
struct AccessTable {
    keyspaces: BTreeMap<String, Grants>,
    /// Keyspace, then column family: looked up by `&str` without building a key.
    column_families: BTreeMap<String, BTreeMap<String, Grants>>,
    modify_keyspaces: BTreeSet<String>,
}

impl AccessTable {
    /// Does a grant on `keyspace`, or with `cf` on that column family, let `user` read (or
    /// write)?
    fn allows(&self, user: &str, keyspace: &str, cf: Option<&str>, write: bool) -> bool {
        let by_keyspace = self.keyspaces.get(keyspace).is_some_and(|g| g.allows(user, write));
        by_keyspace
            || cf.is_some_and(|cf| {
                self.column_families.get(keyspace).and_then(|cfs| cfs.get(cf)).is_some_and(|g| g.allows(user, write))
            })
    }
}

struct Tables {
    passwords: BTreeMap<String, String>,
    access: AccessTable,
    passwd_modified: Option<SystemTime>,
    access_modified: Option<SystemTime>,
}

/// The SimpleAuthenticator: tables read from the two properties files. Its `Debug` output
/// leaves the passwords out.
pub struct SimpleAuth {
    passwd_path: PathBuf,
    access_path: PathBuf,
    mode: PasswordMode,
    /// Replaced wholesale by `reload`; readers take a snapshot of what they need.
    tables: RwLock<Tables>,
}

impl std::fmt::Debug for SimpleAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let users = self.tables.read().map_or(0, |t| t.passwords.len());
        f.debug_struct("SimpleAuth")
            .field("passwd_path", &self.passwd_path)
            .field("access_path", &self.access_path)
            .field("mode", &self.mode)
            .field("users", &users)
            .finish_non_exhaustive()
    }
}

impl SimpleAuth {
    /// Reads both files; a missing or malformed file is an error.
    pub fn load(passwd_path: &Path, access_path: &Path, mode: PasswordMode) -> Result<SimpleAuth, AuthSetupError> {
        let tables = read_tables(passwd_path, access_path, mode)?;
        Ok(SimpleAuth {
            passwd_path: passwd_path.to_path_buf(),
            access_path: access_path.to_path_buf(),
            mode,
            tables: RwLock::new(tables),
        })
    }

    pub fn mode(&self) -> PasswordMode {
        self.mode
    }

    /// Re-reads both files. On error the previous tables stay in force.
    pub fn reload(&self) -> Result<(), AuthSetupError> {
        let tables = read_tables(&self.passwd_path, &self.access_path, self.mode)?;
        *self.tables.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = tables;
        Ok(())
    }

    /// Reloads when either file's modification time differs from the last read.
    fn reload_if_changed(&self) {
        let changed = {
            let t = self.tables();
            modified(&self.passwd_path) != t.passwd_modified || modified(&self.access_path) != t.access_modified
        };
        if changed {
            if let Err(e) = self.reload() {
                tracing::warn!("keeping the previous authentication tables: {e}");
            }
        }
    }

    fn login(&self, credentials: &BTreeMap<String, String>) -> Result<AuthenticatedUser, AuthError> {
        let username = credentials.get("username").ok_or_else(|| {
            AuthError::BadCredentials("Authentication request was missing the required key 'username'".into())
        })?;
        let password = credentials.get("password").ok_or_else(|| {
            AuthError::BadCredentials("Authentication request was missing the required key 'password'".into())
        })?;
        self.reload_if_changed();
        // The same message for an unknown user and a wrong password, so the answer does not
        // reveal which user names exist.
        let refused = || {
            AuthError::BadCredentials(format!(
                "Given password in password mode {} could not be validated for user {}",
                self.mode.as_str(),
                username
            ))
        };
        let stored = { self.tables().passwords.get(username).cloned() };
        let stored = stored.ok_or_else(refused)?;
        let ok = match self.mode {
            PasswordMode::Plain => constant_time_eq(password.as_bytes(), stored.as_bytes()),
            PasswordMode::Md5 => match decode_hex(&stored) {
                Some(expected) => constant_time_eq(&Md5::digest(password.as_bytes()), &expected),
                None => false,
            },
        };
        if ok {
            Ok(AuthenticatedUser { username: username.clone() })
        } else {
            Err(refused())
        }
    }

    fn tables(&self) -> std::sync::RwLockReadGuard<'_, Tables> {
        self.tables.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Keyspace grants only.
    fn authorize(&self, user: &AuthenticatedUser, keyspace: &str, write: bool) -> Result<(), AuthError> {
        let name = user.username.as_str();
        if self.tables().access.allows(name, keyspace, None, write) {
            Ok(())
        } else {
            Err(refusal(name, keyspace, None, write))
        }
    }

    fn authorize_column_families<'a>(
        &self,
        user: &AuthenticatedUser,
        keyspace: &str,
        column_families: impl IntoIterator<Item = &'a str>,
        write: bool,
    ) -> Result<(), AuthError> {
        let name = user.username.as_str();
        let t = self.tables();
        match column_families.into_iter().find(|cf| !t.access.allows(name, keyspace, Some(cf), write)) {
            Some(cf) => Err(refusal(name, keyspace, Some(cf), write)),
            None => Ok(()),
        }
    }

    fn authorize_keyspace_use(&self, user: &AuthenticatedUser, keyspace: &str) -> Result<(), AuthError> {
        let t = self.tables();
        let name = user.username.as_str();
        let by_cf =
            || t.access.column_families.get(keyspace).is_some_and(|cfs| cfs.values().any(|g| g.allows(name, false)));
        if t.access.allows(name, keyspace, None, false) || by_cf() {
            Ok(())
        } else {
            Err(refusal(name, keyspace, None, false))
        }
    }

    fn authorize_keyspace_list_change(&self, user: &AuthenticatedUser) -> Result<(), AuthError> {
        let t = self.tables();
        if t.access.modify_keyspaces.contains(&user.username) {
            Ok(())
        } else {
            Err(AuthError::NotAuthorized(format!("User {} may not create or drop keyspaces", user.username)))
        }
    }
}

/// The refusal naming the user and what was refused: one message whether or not the keyspace
/// or column family exists, as in 0.6.
fn refusal(user: &str, keyspace: &str, cf: Option<&str>, write: bool) -> AuthError {
    let what = match cf {
        Some(cf) => format!("column family {keyspace}.{cf}"),
        None => format!("keyspace {keyspace}"),
    };
    let access = if write { "write to" } else { "use" };
    AuthError::NotAuthorized(format!("User {user} could not be authorized to {access} {what}"))
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn read_tables(passwd_path: &Path, access_path: &Path, mode: PasswordMode) -> Result<Tables, AuthSetupError> {
    let passwd_modified = modified(passwd_path);
    let access_modified = modified(access_path);
    let mut passwords = BTreeMap::new();
    for (key, value, line) in read_properties(passwd_path)? {
        if mode == PasswordMode::Md5 && !matches!(decode_hex(&value), Some(d) if d.len() == 16) {
            return Err(AuthSetupError::BadFile {
                path: passwd_path.to_path_buf(),
                line,
                reason: format!("password of user {key} is not a 32-digit hex MD5 digest (password mode MD5)"),
            });
        }
        passwords.insert(key, value);
    }
    let access = parse_access(access_path, read_properties(access_path)?)?;
    Ok(Tables { passwords, access, passwd_modified, access_modified })
}

fn parse_access(path: &Path, entries: Vec<Property>) -> Result<AccessTable, AuthSetupError> {
    let mut table = AccessTable::default();
    for (key, value, line) in entries {
        let users = value.split(',').map(str::trim).filter(|u| !u.is_empty()).map(str::to_string);
        if key == "<modify-keyspaces>" {
            table.modify_keyspaces.extend(users);
            continue;
        }
        let (resource, read_write) = if let Some(r) = key.strip_suffix(".<rw>") {
            (r, true)
        } else if let Some(r) = key.strip_suffix(".<ro>") {
            (r, false)
        } else if key.contains('<') || key.contains('>') {
            return Err(AuthSetupError::BadFile {
                path: path.to_path_buf(),
                line,
                reason: format!("unknown permission in {key:?}; use <Keyspace>=, <Keyspace>.<rw>=, <Keyspace>.<ro>= or <modify-keyspaces>="),
            });
        } else {
            // 0.6 form: the keyspace alone means full access.
            (key.as_str(), true)
        };
        // Keyspace names cannot contain dots, so the first dot separates keyspace and CF.
        let grants = match resource.split_once('.') {
            Some((ks, cf)) => {
                table.column_families.entry(ks.to_string()).or_default().entry(cf.to_string()).or_default()
            }
            None => table.keyspaces.entry(resource.to_string()).or_default(),
        };
        if read_write {
            grants.read_write.extend(users);
        } else {
            grants.read_only.extend(users);
        }
    }
    Ok(table)
}

/// One `key=value` entry, with the line it starts on.
type Property = (String, String, usize);

fn read_properties(path: &Path) -> Result<Vec<Property>, AuthSetupError> {
    let bytes = std::fs::read(path).map_err(|source| AuthSetupError::Io { path: path.to_path_buf(), source })?;
    parse_properties(&properties::decode(bytes)).map_err(|(line, reason)| AuthSetupError::BadFile {
        path: path.to_path_buf(),
        line,
        reason,
    })
}

/// Parses Java properties text into (key, value, first line) in file order, by Java's rules
/// ([`membership::properties`]); a key given twice keeps its last value, as
/// `java.util.Properties` does. Errors give the line and the reason.
pub(crate) fn parse_properties(text: &str) -> Result<Vec<Property>, (usize, String)> {
    let entries = properties::parse(text, KeyEnd::Java).map_err(|e| (e.line, e.reason))?;
    Ok(properties::last_wins(entries).into_iter().map(|p| (p.key, p.value, p.line)).collect())
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    let pairs = s.trim().as_bytes().chunks_exact(2);
    if !pairs.remainder().is_empty() {
        return None;
    }
    let digit = |b: u8| char::from(b).to_digit(16);
    pairs
        .map(|pair| match pair {
            [hi, lo] => u8::try_from(digit(*hi)? * 16 + digit(*lo)?).ok(),
            _ => None,
        })
        .collect()
}

/// Compares without stopping at the first difference, so timing does not reveal how much of a
/// guess was right. (Length still shows.)
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests;
