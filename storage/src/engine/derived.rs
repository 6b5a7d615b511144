//! The rows of the derived built-in keyspaces (`system::derived`): `system_schema`, rewritten
//! from the schema at start and after every schema change, and whatever another layer derives
//! (the server's `system_auth`).

use std::collections::BTreeSet;

use super::Storage;
use crate::data::{now_seconds, DeletionTime};
use crate::dht::KeyBound;
use crate::error::{Result, StorageError};
use crate::mutation::RowMutation;
use crate::system::traces::{TraceEvent, TraceSession};
use crate::system::{self, derived};

impl Storage {
    /// Shows `users` (the authenticator's, as this start read them) in `system_auth.roles` and
    /// `role_permissions`, replacing what those tables held.
    pub fn replace_auth_users(&self, users: &[derived::AuthUser]) -> Result<()> {
        for (cf, rows) in derived::auth_rows(users) {
            self.replace_derived_rows(derived::AUTH_KEYSPACE, cf, rows)?;
        }
        Ok(())
    }

    /// Records a traced request: its `session` row and its `events` in `system_traces`, written
    /// at `timestamp` (µs) and expiring a day after now. Blocks on the commit log like
    /// [`Storage::apply`].
    pub fn record_trace(&self, session: &TraceSession, events: &[TraceEvent], timestamp: i64) -> Result<()> {
        self.apply(system::traces::session_mutation(session, events, timestamp, now_seconds()))
    }

    /// Makes `keyspace.cf`, a column family of a derived built-in keyspace, hold exactly `rows`
    /// (cell timestamps are ignored): every row not in `rows` is deleted, and each row of `rows`
    /// replaces what its key held (a row tombstone, then its cells one microsecond later).
    pub fn replace_derived_rows(&self, keyspace: &str, cf: &str, rows: Vec<derived::DerivedRow>) -> Result<()> {
        let derived_ks = [derived::SCHEMA_KEYSPACE, derived::AUTH_KEYSPACE, derived::DISTRIBUTED_KEYSPACE];
        if !derived_ks.contains(&keyspace) {
            return Err(StorageError::InvalidSchema(format!("{keyspace}.{cf} is not a derived system table")));
        }
        let store = self.store(keyspace, cf)?;
        let deleted_at = self.next_system_timestamp();
        let written_at = self.next_system_timestamp();
        let now = now_seconds();
        let wanted: BTreeSet<&[u8]> = rows.iter().map(|(k, _)| k.as_slice()).collect();
        let mut gone = Vec::new();
        for item in store.scan(&KeyBound::Unbounded)? {
            let (key, row) = item?;
            if !wanted.contains(key.key.as_slice()) && !row.cells.is_empty() {
                gone.push(key.key);
            }
        }
        for key in gone {
            let mut m = RowMutation::new(keyspace, key);
            m.row_mut(cf).deletion = DeletionTime::new(written_at, now);
            self.apply(m)?;
        }
        for (key, mut cells) in rows {
            for c in &mut cells {
                c.timestamp = written_at;
            }
            cells.sort_by(|a, b| store.cmp.compare(&a.name, &b.name));
            let mut m = RowMutation::new(keyspace, key);
            let row = m.row_mut(cf);
            row.deletion = DeletionTime::new(deleted_at, now);
            row.cells = cells;
            self.apply(m)?;
        }
        Ok(())
    }

    /// Rewrites `system_schema` from the schema in force.
    pub(super) fn refresh_schema_rows(&self) -> Result<()> {
        let schema = self.schema();
        for (cf, rows) in derived::schema_rows(&schema.keyspaces) {
            self.replace_derived_rows(system::derived::SCHEMA_KEYSPACE, cf, rows)?;
        }
        Ok(())
    }
}
