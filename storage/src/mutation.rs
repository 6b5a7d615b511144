//! Row mutations: the unit of a write, and of a commit log record.

use uuid::Uuid;

use crate::data::{decode_row, encode_row, Reader, Row};
use crate::error::CorruptData;

/// Changes to one row key in several column families of one keyspace (Cassandra's
/// RowMutation). Column families are named; the engine resolves them to ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowMutation {
    pub keyspace: String,
    pub key: Vec<u8>,
    pub updates: Vec<(String, Row)>,
}

impl RowMutation {
    pub fn new(keyspace: impl Into<String>, key: impl Into<Vec<u8>>) -> RowMutation {
        RowMutation { keyspace: keyspace.into(), key: key.into(), updates: Vec::new() }
    }

    /// The update for column family `cf`, created empty on first use.
    pub fn row_mut(&mut self, cf: &str) -> &mut Row {
        let i = match self.updates.iter().position(|(name, _)| name == cf) {
            Some(i) => i,
            None => {
                self.updates.push((cf.to_string(), Row::new()));
                self.updates.len() - 1
            }
        };
        &mut self.updates[i].1
    }
}

/// A commit log record: the key and each column family's update, by id.
//
// Layout (big-endian): version:u8 key_len:u16 key count:u32 (cf_id:16 bytes row)*
// The keyspace is implied by the column family ids.
pub const RECORD_VERSION: u8 = 1;

pub fn encode_record(key: &[u8], updates: &[(Uuid, &Row)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + updates.iter().map(|(_, r)| r.size()).sum::<usize>());
    out.push(RECORD_VERSION);
    out.extend_from_slice(&(key.len() as u16).to_be_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&(updates.len() as u32).to_be_bytes());
    for (id, row) in updates {
        out.extend_from_slice(id.as_bytes());
        encode_row(row, &mut out);
    }
    out
}

pub struct DecodedRecord {
    pub key: Vec<u8>,
    pub updates: Vec<(Uuid, Row)>,
}

pub fn decode_record(bytes: &[u8]) -> Result<DecodedRecord, CorruptData> {
    let mut r = Reader::new(bytes);
    let version = r.u8()?;
    if version != RECORD_VERSION {
        return Err(CorruptData::InvalidFormatVersion(version));
    }
    let key = r.short_bytes()?.to_vec();
    let n = r.u32()? as usize;
    let mut updates = Vec::with_capacity(n.min(64));
    for _ in 0..n {
        let id = Uuid::from_slice(r.bytes(16)?).map_err(|_| CorruptData::BadValue { what: "cf id", value: 0 })?;
        updates.push((id, decode_row(&mut r)?));
    }
    Ok(DecodedRecord { key, updates })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Cell;

    #[test]
    fn record_round_trip() {
        let id = Uuid::new_v4();
        let mut row = Row::new();
        row.cells.push(Cell::live("c", "v", 3));
        let bytes = encode_record(b"key", &[(id, &row)]);
        let d = decode_record(&bytes).expect("decodes");
        assert_eq!(d.key, b"key");
        assert_eq!(d.updates, vec![(id, row)]);
        assert!(decode_record(&bytes[..bytes.len() - 1]).is_err());
    }
}
