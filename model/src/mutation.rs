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
// The keyspace is implied by the column family ids. Version 2 rows may hold expiries past 2038
// and counter cells (cell flags 3 to 5 of `crate::data`'s codec); version 1 records are still read.
pub const RECORD_VERSION: u8 = 2;
/// The oldest record version this build reads.
const OLDEST_RECORD_VERSION: u8 = 1;

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
    if !(OLDEST_RECORD_VERSION..=RECORD_VERSION).contains(&version) {
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

    /// The exact bytes of a version 2 record holding a counter cell, and of a version 1 record
    /// as earlier builds wrote it: both must keep reading the same.
    #[test]
    fn golden_records_decode() {
        let id = Uuid::from_bytes([0xcf; 16]);
        let node = Uuid::from_bytes([0x11; 16]);
        let mut row = Row::new();
        row.cells.push(Cell::counter("n", crate::counter::single(node, 2, -5), 7));
        let bytes = encode_record(b"k", &[(id, &row)]);
        let golden = concat!(
            "02",
            "0001",
            "6b",
            "00000001",
            "cfcfcfcfcfcfcfcfcfcfcfcfcfcfcfcf", // version, key, one cf id
            "8000000000000000",
            "7fffffff",
            "00000000", // live row, no range tombstones
            "00000001",
            "04",
            "0001",
            "6e",
            "00000020", // one cell: counter "n", 32 bytes
            "11111111111111111111111111111111",
            "0000000000000002",
            "fffffffffffffffb", // shard
            "0000000000000007", // timestamp
        );
        assert_eq!(hex(&bytes), golden);
        let d = decode_record(&bytes).expect("decodes");
        assert_eq!(d.updates, vec![(id, row)]);

        let v1 = concat!(
            "01",
            "0001",
            "6b",
            "00000001",
            "cfcfcfcfcfcfcfcfcfcfcfcfcfcfcfcf",
            "8000000000000000",
            "7fffffff",
            "00000000",
            "00000001",
            "00",
            "0001",
            "63",
            "00000001",
            "76",
            "0000000000000003",
        );
        let d = decode_record(&unhex(v1)).expect("a version 1 record decodes");
        assert_eq!(d.updates[0].1.cells, vec![Cell::live("c", "v", 3)]);
        let mut future = unhex(v1);
        future[0] = 3;
        assert!(matches!(decode_record(&future), Err(CorruptData::InvalidFormatVersion(3))));
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
    }
}
