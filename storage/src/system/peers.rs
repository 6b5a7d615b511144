//! `system.peers`: what this node knows of each other node, one row per peer keyed by its
//! endpoint (`ip:port`), so a restarted node knows the ring before gossip tells it again.
//!
//! Columns (UTF8Type names, values as text): `data_center`, `host_id`, `rack`,
//! `release_version`, `rpc_address`, `schema_version`, and `tokens` as a JSON array of strings.
//! A peer's row is written whole, with a row tombstone just older than its cells, so a field
//! saved as `None` is gone after the write.

use uuid::Uuid;

use crate::data::{Cell, DeletionTime, Row};
use crate::error::{Result, StorageError};

const DATA_CENTER: &[u8] = b"data_center";
const HOST_ID: &[u8] = b"host_id";
const RACK: &[u8] = b"rack";
const RELEASE_VERSION: &[u8] = b"release_version";
const RPC_ADDRESS: &[u8] = b"rpc_address";
const SCHEMA_VERSION: &[u8] = b"schema_version";
const TOKENS: &[u8] = b"tokens";

/// One peer as this node last saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeerInfo {
    /// Its tokens as the partitioner writes them.
    pub tokens: Vec<String>,
    pub data_center: Option<String>,
    pub rack: Option<String>,
    /// Where clients reach it (Thrift).
    pub rpc_address: Option<String>,
    pub host_id: Option<Uuid>,
    pub schema_version: Option<Uuid>,
    pub release_version: Option<String>,
}

/// The row for `info`, written at `timestamp` (`now`: node seconds, for the tombstone).
pub fn peer_row(info: &PeerInfo, timestamp: i64, now: i32) -> Result<Row> {
    let tokens = serde_json::to_vec(&info.tokens).map_err(|e| StorageError::CorruptSystemRow {
        cf: super::PEERS_CF,
        key: String::new(),
        detail: format!("tokens: {e}"),
    })?;
    let mut cells = vec![Cell::live(TOKENS, tokens, timestamp)];
    let texts = [
        (DATA_CENTER, info.data_center.clone()),
        (HOST_ID, info.host_id.map(|u| u.to_string())),
        (RACK, info.rack.clone()),
        (RELEASE_VERSION, info.release_version.clone()),
        (RPC_ADDRESS, info.rpc_address.clone()),
        (SCHEMA_VERSION, info.schema_version.map(|u| u.to_string())),
    ];
    for (name, value) in texts {
        if let Some(v) = value {
            cells.push(Cell::live(name, v, timestamp));
        }
    }
    // UTF8Type order is byte order.
    cells.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Row { deletion: DeletionTime::new(timestamp - 1, now), cells, ..Row::new() })
}

/// Reads a peer back from the live cells of its row.
pub fn decode_peer(endpoint: &str, cells: Vec<Cell>) -> Result<PeerInfo> {
    let corrupt = |column: &[u8], value: &[u8]| StorageError::CorruptSystemRow {
        cf: super::PEERS_CF,
        key: endpoint.to_string(),
        detail: format!("column {}: {:?}", String::from_utf8_lossy(column), String::from_utf8_lossy(value)),
    };
    let mut info = PeerInfo::default();
    for c in cells {
        let text = || String::from_utf8(c.value.clone()).map_err(|_| corrupt(&c.name, &c.value));
        let uuid = || Uuid::parse_str(&text()?).map_err(|_| corrupt(&c.name, &c.value));
        match c.name.as_slice() {
            DATA_CENTER => info.data_center = Some(text()?),
            HOST_ID => info.host_id = Some(uuid()?),
            RACK => info.rack = Some(text()?),
            RELEASE_VERSION => info.release_version = Some(text()?),
            RPC_ADDRESS => info.rpc_address = Some(text()?),
            SCHEMA_VERSION => info.schema_version = Some(uuid()?),
            TOKENS => info.tokens = serde_json::from_slice(&c.value).map_err(|_| corrupt(&c.name, &c.value))?,
            _ => {}
        }
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_round_trips_and_none_means_absent() {
        let full = PeerInfo {
            tokens: vec!["1".into(), "2".into()],
            data_center: Some("dc1".into()),
            rack: Some("r1".into()),
            rpc_address: Some("127.0.0.2".into()),
            host_id: Some(Uuid::new_v4()),
            schema_version: Some(Uuid::new_v4()),
            release_version: Some("0.1.0".into()),
        };
        let row = peer_row(&full, 5, 1).expect("row");
        assert_eq!(row.deletion.marked_at, 4);
        assert_eq!(decode_peer("127.0.0.2:7000", row.cells).expect("decode"), full);
        let bare = PeerInfo::default();
        let row = peer_row(&bare, 5, 1).expect("row");
        assert_eq!(row.cells.len(), 1);
        assert_eq!(decode_peer("127.0.0.2:7000", row.cells).expect("decode"), bare);
    }

    #[test]
    fn a_bad_value_names_the_peer_and_column() {
        let err = decode_peer("10.0.0.1:7000", vec![Cell::live("host_id", "nope", 1)]).expect_err("bad uuid");
        let text = err.to_string();
        assert!(text.contains("10.0.0.1:7000") && text.contains("host_id"), "{text}");
    }
}
