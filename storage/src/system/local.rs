//! `system.local`: one row, key `local`, holding this node's own state.
//!
//! Columns (UTF8Type names, values as text):
//! - `tokens`: the node's tokens as a JSON array of strings (several with virtual nodes); older
//!   data has one `token` column instead, read as a one-token list and replaced at the next write;
//! - `host_id`: a UUID made at the node's first start and kept for its life;
//! - `cluster_name`: the cluster the data belongs to, saved at the first start;
//! - `partitioner`: the partitioner's class name the data was written with, saved at the first
//!   start (or the first start of a version that saves it) and checked at every later one;
//! - `generation`: the gossip generation of the latest start (seconds);
//! - `schema_version`: the schema version last computed (for operators: it is recomputed from the
//!   schema tables at every start);
//! - `bootstrapped`: the initial schema from the configuration was written;
//! - `truncated_at:<cf id>`: per truncated column family, the commit log position `segment:offset`
//!   before which its records are never replayed.
//!
//! The row is written whole, with a range tombstone just older than its cells, so a column that
//! is gone (a forgotten truncation point, the old `token`) is deleted by the same write.

use std::collections::BTreeMap;

use uuid::Uuid;

use crate::data::{Cell, DeletionTime, RangeTombstone, Row};
use crate::error::{Result, StorageError};

const BOOTSTRAPPED: &[u8] = b"bootstrapped";
const CLUSTER_NAME: &[u8] = b"cluster_name";
const GENERATION: &[u8] = b"generation";
const PARTITIONER: &[u8] = b"partitioner";
const HOST_ID: &[u8] = b"host_id";
const SCHEMA_VERSION: &[u8] = b"schema_version";
const TOKENS: &[u8] = b"tokens";
/// The single token of data written before virtual nodes (read, never written).
const LEGACY_TOKEN: &[u8] = b"token";
const TRUNCATED_PREFIX: &str = "truncated_at:";

/// This node's identity and saved state, as [`crate::engine::Storage::local_state`] reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocalState {
    /// The node's tokens as the partitioner writes them; empty until the node chose them.
    pub tokens: Vec<String>,
    /// Made at the node's first start and kept (never nil once the engine is open).
    pub host_id: Uuid,
    /// The cluster name saved at the first start, if it was saved yet.
    pub cluster_name: Option<String>,
    /// The class name of the partitioner the data was written with, once saved.
    pub partitioner: Option<String>,
    /// The gossip generation of this start: greater than that of every earlier start.
    pub generation: i32,
    /// The schema version (a digest of the schema, the same on every node that holds it).
    pub schema_version: Uuid,
}

/// What the `local` row says, cached in memory by the engine.
#[derive(Clone, Debug, Default)]
pub struct SystemState {
    pub local: LocalState,
    pub truncated_at: BTreeMap<Uuid, (u64, u64)>,
    /// The initial schema from the configuration has been written.
    pub bootstrapped: bool,
}

/// The `local` row for `state`, written at `timestamp`; `now` is the node's clock in seconds.
pub fn local_row(state: &SystemState, timestamp: i64, now: i32) -> Result<Row> {
    let local = &state.local;
    let tokens = serde_json::to_vec(&local.tokens).map_err(|e| corrupt(TOKENS, e.to_string()))?;
    let mut cells = vec![
        Cell::live(BOOTSTRAPPED, if state.bootstrapped { &b"true"[..] } else { &b"false"[..] }, timestamp),
        Cell::live(GENERATION, local.generation.to_string(), timestamp),
        Cell::live(SCHEMA_VERSION, local.schema_version.to_string(), timestamp),
        Cell::live(TOKENS, tokens, timestamp),
    ];
    if !local.host_id.is_nil() {
        cells.push(Cell::live(HOST_ID, local.host_id.to_string(), timestamp));
    }
    if let Some(name) = &local.cluster_name {
        cells.push(Cell::live(CLUSTER_NAME, name.clone(), timestamp));
    }
    if let Some(class) = &local.partitioner {
        cells.push(Cell::live(PARTITIONER, class.clone(), timestamp));
    }
    for (id, (segment, offset)) in &state.truncated_at {
        cells.push(Cell::live(format!("{TRUNCATED_PREFIX}{id}"), format!("{segment}:{offset}"), timestamp));
    }
    // UTF8Type order is byte order.
    cells.sort_by(|a, b| a.name.cmp(&b.name));
    let everything_older =
        RangeTombstone { start: Vec::new(), end: Vec::new(), deletion: DeletionTime::new(timestamp - 1, now) };
    Ok(Row { cells, range_tombstones: vec![everything_older], ..Row::new() })
}

/// Rebuilds the state from the live cells of the `local` row.
pub fn decode_local(cells: Vec<Cell>) -> Result<SystemState> {
    let mut state = SystemState::default();
    let mut legacy_token = None;
    for c in cells {
        let value = String::from_utf8_lossy(&c.value).into_owned();
        match c.name.as_slice() {
            BOOTSTRAPPED => state.bootstrapped = value == "true",
            CLUSTER_NAME => state.local.cluster_name = Some(value),
            PARTITIONER => state.local.partitioner = Some(value),
            GENERATION => state.local.generation = value.parse().map_err(|_| corrupt(GENERATION, value))?,
            HOST_ID => state.local.host_id = Uuid::parse_str(&value).map_err(|_| corrupt(HOST_ID, value))?,
            SCHEMA_VERSION => {
                state.local.schema_version =
                    Uuid::parse_str(&value).map_err(|_| corrupt(SCHEMA_VERSION, value.clone()))?
            }
            TOKENS => state.local.tokens = serde_json::from_slice(&c.value).map_err(|_| corrupt(TOKENS, value))?,
            LEGACY_TOKEN => legacy_token = Some(value),
            name => {
                let name = String::from_utf8_lossy(name).into_owned();
                let Some(id) = name.strip_prefix(TRUNCATED_PREFIX) else { continue };
                let bad = || corrupt(name.as_bytes(), value.clone());
                let id = Uuid::parse_str(id).map_err(|_| bad())?;
                let (segment, offset) = value.split_once(':').ok_or_else(bad)?;
                let segment = segment.parse().map_err(|_| bad())?;
                let offset = offset.parse().map_err(|_| bad())?;
                state.truncated_at.insert(id, (segment, offset));
            }
        }
    }
    if state.local.tokens.is_empty() {
        state.local.tokens.extend(legacy_token);
    }
    Ok(state)
}

fn corrupt(column: &[u8], value: String) -> StorageError {
    StorageError::CorruptSystemRow {
        cf: super::LOCAL_CF,
        key: String::from_utf8_lossy(super::LOCAL_KEY).into_owned(),
        detail: format!("column {}: {value:?}", String::from_utf8_lossy(column)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::{add_to_row, collect_live, ReadFilter};

    fn live_cells(rows: Vec<Row>) -> Vec<Cell> {
        let cmp = crate::comparator::CellComparator::standard(crate::marshal::AbstractType::Utf8);
        let mut merged = Row::new();
        for r in rows {
            add_to_row(&cmp, &mut merged, r);
        }
        collect_live(&cmp, &merged, &ReadFilter::all(), 0)
    }

    #[test]
    fn state_round_trips_through_the_row() {
        let mut state = SystemState { bootstrapped: true, ..Default::default() };
        state.local = LocalState {
            tokens: vec!["42".into(), "-7".into()],
            host_id: Uuid::new_v4(),
            cluster_name: Some("Test Cluster".into()),
            partitioner: Some("org.apache.cassandra.dht.RandomPartitioner".into()),
            generation: 1_700_000_000,
            schema_version: Uuid::new_v4(),
        };
        state.truncated_at.insert(Uuid::new_v4(), (7, 99));
        let row = local_row(&state, 10, 1).expect("row");
        let back = decode_local(live_cells(vec![row])).expect("decode");
        assert_eq!(back.local, state.local);
        assert_eq!(back.truncated_at, state.truncated_at);
        assert!(back.bootstrapped);
    }

    #[test]
    fn the_old_single_token_is_read_and_replaced_by_the_next_write() {
        let old =
            Row { cells: vec![Cell::live("bootstrapped", "true", 5), Cell::live("token", "1234", 5)], ..Row::new() };
        let state = decode_local(live_cells(vec![old.clone()])).expect("decode");
        assert_eq!(state.local.tokens, vec!["1234".to_string()]);
        let rewritten = local_row(&state, 6, 1).expect("row");
        let cells = live_cells(vec![old, rewritten]);
        assert!(cells.iter().all(|c| c.name != b"token"), "the old token column survived the rewrite");
        assert_eq!(decode_local(cells).expect("decode").local.tokens, vec!["1234".to_string()]);
    }

    #[test]
    fn a_bad_value_names_the_column() {
        let err = decode_local(vec![Cell::live("generation", "soon", 1)]).expect_err("bad generation");
        assert!(
            matches!(&err, StorageError::CorruptSystemRow { detail, .. } if detail.contains("generation")),
            "{err}"
        );
    }
}
