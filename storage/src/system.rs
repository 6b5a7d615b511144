//! The `system` keyspace: where the engine keeps the schema and the node's own state, written
//! through the ordinary write path (commit log, memtable, SSTables) like any other data.
//!
//! - `system.schema_keyspaces`: one row per user keyspace, key = keyspace name, column
//!   `definition` = the keyspace definition (with its column families) as JSON. A dropped
//!   keyspace is a row tombstone.
//! - `system.local`: one row, key `local`: `schema_version`, `token`, `bootstrapped` (the
//!   initial schema from the configuration was written) and one `truncated_at:<cf id>` column per
//!   truncated column family, holding the commit log position `segment:offset` before which its
//!   records are never replayed.
//!
//! Both column families have fixed ids, so the engine can replay their commit log records before
//! it knows any other part of the schema.

use std::collections::BTreeMap;

use uuid::Uuid;

use crate::data::{Cell, DeletionTime, Row};
use crate::error::{Result, StorageError};
use crate::schema::{CfDef, KeyspaceDef, Schema};

pub const KEYSPACE: &str = "system";
pub const SCHEMA_CF: &str = "schema_keyspaces";
pub const LOCAL_CF: &str = "local";
pub const LOCAL_KEY: &[u8] = b"local";

const SCHEMA_CF_ID: Uuid = Uuid::from_u128(0x5bb1_0000_0000_4000_8000_0000_0000_0001);
const LOCAL_CF_ID: Uuid = Uuid::from_u128(0x5bb1_0000_0000_4000_8000_0000_0000_0002);

const DEFINITION: &[u8] = b"definition";
const SCHEMA_VERSION: &[u8] = b"schema_version";
const TOKEN: &[u8] = b"token";
const BOOTSTRAPPED: &[u8] = b"bootstrapped";
const TRUNCATED_PREFIX: &str = "truncated_at:";

/// The definition of the system keyspace (never stored: it is the same on every node).
pub fn keyspace_def() -> KeyspaceDef {
    let mut ks = KeyspaceDef::new(KEYSPACE);
    ks.strategy_class = "org.apache.cassandra.locator.LocalStrategy".into();
    ks.strategy_options = BTreeMap::new();
    for (name, id, comment) in [
        (SCHEMA_CF, SCHEMA_CF_ID, "keyspace definitions, one row per keyspace, as JSON"),
        (LOCAL_CF, LOCAL_CF_ID, "this node's token, schema version and truncation points"),
    ] {
        let mut cf = CfDef::new(KEYSPACE, name);
        cf.id = id;
        cf.thrift_id = crate::schema::thrift_id_of(&id);
        cf.comparator_type = "org.apache.cassandra.db.marshal.UTF8Type".into();
        cf.comment = Some(comment.into());
        // Every schema change rewrites these few rows: let compaction drop what they replace.
        cf.gc_grace_seconds = 0;
        ks.cf_defs.push(cf);
    }
    ks
}

pub fn is_system_cf(id: &Uuid) -> bool {
    *id == SCHEMA_CF_ID || *id == LOCAL_CF_ID
}

/// What the system keyspace says, cached in memory by the engine.
#[derive(Clone, Debug, Default)]
pub struct SystemState {
    /// User keyspaces and the schema version (the system keyspace is added by the engine).
    pub schema: Schema,
    pub truncated_at: BTreeMap<Uuid, (u64, u64)>,
    pub local_token: Option<String>,
    /// The initial schema from the configuration has been written.
    pub bootstrapped: bool,
}

/// Row of `schema_keyspaces` holding `ks`.
pub fn keyspace_row(ks: &KeyspaceDef, timestamp: i64) -> Result<Row> {
    let json = serde_json::to_vec(ks).map_err(|e| StorageError::InvalidSchema(e.to_string()))?;
    let mut row = Row::new();
    row.cells.push(Cell::live(DEFINITION, json, timestamp));
    Ok(row)
}

/// Row of `schema_keyspaces` deleting a keyspace.
pub fn keyspace_tombstone(timestamp: i64, now: i32) -> Row {
    Row { deletion: DeletionTime::new(timestamp, now), ..Row::new() }
}

/// Columns of the `local` row, sorted by name (UTF8Type order is byte order).
pub fn local_row(state: &SystemState, timestamp: i64) -> Row {
    let mut cells = vec![
        Cell::live(BOOTSTRAPPED, if state.bootstrapped { &b"true"[..] } else { &b"false"[..] }, timestamp),
        Cell::live(SCHEMA_VERSION, state.schema.version.to_string(), timestamp),
    ];
    if let Some(t) = &state.local_token {
        cells.push(Cell::live(TOKEN, t.clone(), timestamp));
    }
    for (id, (segment, offset)) in &state.truncated_at {
        cells.push(Cell::live(format!("{TRUNCATED_PREFIX}{id}"), format!("{segment}:{offset}"), timestamp));
    }
    cells.sort_by(|a, b| a.name.cmp(&b.name));
    Row { cells, ..Row::new() }
}

/// Rebuilds the state from the live cells of `schema_keyspaces` rows and of the `local` row.
pub fn decode_state(keyspace_rows: Vec<(Vec<u8>, Vec<Cell>)>, local: Vec<Cell>) -> Result<SystemState> {
    let corrupt = |what: String| StorageError::InvalidSchema(format!("system keyspace: {what}"));
    let mut state = SystemState::default();
    for (key, cells) in keyspace_rows {
        let Some(def) = cells.iter().find(|c| c.name == DEFINITION) else { continue };
        let ks: KeyspaceDef = serde_json::from_slice(&def.value)
            .map_err(|e| corrupt(format!("keyspace row {}: {e}", String::from_utf8_lossy(&key))))?;
        state.schema.keyspaces.insert(ks.name.clone(), ks);
    }
    for c in local {
        let value = String::from_utf8_lossy(&c.value).into_owned();
        match c.name.as_slice() {
            BOOTSTRAPPED => state.bootstrapped = value == "true",
            SCHEMA_VERSION => {
                state.schema.version = Uuid::parse_str(&value).map_err(|e| corrupt(format!("schema_version: {e}")))?
            }
            TOKEN => state.local_token = Some(value),
            name => {
                let name = String::from_utf8_lossy(name);
                let Some(id) = name.strip_prefix(TRUNCATED_PREFIX) else { continue };
                let id = Uuid::parse_str(id).map_err(|e| corrupt(format!("{name}: {e}")))?;
                let (segment, offset) = value.split_once(':').ok_or_else(|| corrupt(format!("{name}: {value}")))?;
                let segment = segment.parse().map_err(|_| corrupt(format!("{name}: {value}")))?;
                let offset = offset.parse().map_err(|_| corrupt(format!("{name}: {value}")))?;
                state.truncated_at.insert(id, (segment, offset));
            }
        }
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_through_rows() {
        let mut state = SystemState { bootstrapped: true, local_token: Some("42".into()), ..Default::default() };
        state.schema.version = Uuid::new_v4();
        let mut ks = KeyspaceDef::new("ks");
        ks.cf_defs.push(CfDef::new("ks", "cf"));
        state.truncated_at.insert(ks.cf_defs[0].id, (7, 99));
        let row = keyspace_row(&ks, 1).expect("row");
        let local = local_row(&state, 1);
        let back = decode_state(vec![(b"ks".to_vec(), row.cells)], local.cells).expect("decode");
        assert_eq!(back.schema.keyspaces.get("ks"), Some(&ks));
        assert_eq!(back.schema.version, state.schema.version);
        assert_eq!(back.truncated_at, state.truncated_at);
        assert_eq!(back.local_token.as_deref(), Some("42"));
        assert!(back.bootstrapped);
    }

    #[test]
    fn system_keyspace_is_valid() {
        keyspace_def().validate().expect("valid");
        assert!(keyspace_def().cf_defs.iter().all(|c| is_system_cf(&c.id)));
    }
}
