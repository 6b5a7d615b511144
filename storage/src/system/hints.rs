//! `system.hints`: mutations kept for a replica that was down, replayed when it returns
//! (Cassandra's hinted handoff).
//!
//! Row key = the target's endpoint (`ip:port`); one cell per hint, named by the hint's id and
//! holding the mutation (layout below). Cells expire after the smallest gc_grace_seconds of the
//! column families the mutation touches: a hint older than that could bring back data a
//! tombstone already purged elsewhere has shadowed.
//!
//! A hint id is 16 bytes: the microsecond it was written (big-endian, strictly increasing on a
//! node) then 8 random bytes, so ids are unique and byte order (the column family's BytesType
//! comparator) is time order.

use uuid::Uuid;

use crate::data::{decode_row, encode_row, Reader, Row};
use crate::error::CorruptData;

/// The value of a hint cell.
//
// Layout (big-endian): version:u8 keyspace_len:u16 keyspace key_len:u32 key count:u32
//   (cf_id:16 bytes cf_name_len:u16 cf_name row)*
// Column families are kept by id as well as name: a hint must not reach a column family dropped
// and re-created under the same name since.
pub const HINT_VERSION: u8 = 1;

/// A hint's mutation as stored: each column family's update with the id it had when hinted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HintRecord {
    pub keyspace: String,
    pub key: Vec<u8>,
    pub updates: Vec<(Uuid, String, Row)>,
}

pub fn hint_id(written_at_micros: i64, random: u64) -> Uuid {
    Uuid::from_u128((u128::from(written_at_micros.max(0) as u64) << 64) | u128::from(random))
}

/// When a hint was written (client-style microseconds); also its cell's timestamp.
pub fn hint_written_at(id: &Uuid) -> i64 {
    ((id.as_u128() >> 64) as u64).min(i64::MAX as u64) as i64
}

pub fn encode_hint(record: &HintRecord) -> Vec<u8> {
    let rows: usize = record.updates.iter().map(|(_, name, row)| name.len() + row.size()).sum();
    let mut out = Vec::with_capacity(32 + record.keyspace.len() + record.key.len() + rows);
    out.push(HINT_VERSION);
    put_short(&mut out, record.keyspace.as_bytes());
    out.extend_from_slice(&(record.key.len() as u32).to_be_bytes());
    out.extend_from_slice(&record.key);
    out.extend_from_slice(&(record.updates.len() as u32).to_be_bytes());
    for (id, name, row) in &record.updates {
        out.extend_from_slice(id.as_bytes());
        put_short(&mut out, name.as_bytes());
        encode_row(row, &mut out);
    }
    out
}

/// Keyspace and column family names are at most 48 bytes (schema validation), far below u16.
fn put_short(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = bytes.len().min(u16::MAX as usize);
    out.extend_from_slice(&(len as u16).to_be_bytes());
    out.extend_from_slice(&bytes[..len]);
}

pub fn decode_hint(bytes: &[u8]) -> Result<HintRecord, CorruptData> {
    let mut r = Reader::new(bytes);
    let version = r.u8()?;
    if version != HINT_VERSION {
        return Err(CorruptData::InvalidFormatVersion(version));
    }
    let text = |b: &[u8], what| String::from_utf8(b.to_vec()).map_err(|_| CorruptData::BadValue { what, value: 0 });
    let keyspace = text(r.short_bytes()?, "hint keyspace name")?;
    let key = r.long_bytes()?.to_vec();
    let n = r.u32()? as usize;
    let mut updates = Vec::with_capacity(n.min(64));
    for _ in 0..n {
        let id = Uuid::from_slice(r.bytes(16)?).map_err(|_| CorruptData::BadValue { what: "cf id", value: 0 })?;
        let name = text(r.short_bytes()?, "hint column family name")?;
        updates.push((id, name, decode_row(&mut r)?));
    }
    if !r.is_empty() {
        return Err(CorruptData::BadValue { what: "bytes after hint", value: r.remaining() as u64 });
    }
    Ok(HintRecord { keyspace, key, updates })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Cell;

    #[test]
    fn record_round_trips_and_refuses_damage() {
        let mut row = Row::new();
        row.cells.push(Cell::live("c", "v", 3));
        let record = HintRecord {
            keyspace: "ks".into(),
            key: b"key".to_vec(),
            updates: vec![(Uuid::new_v4(), "cf".into(), row), (Uuid::new_v4(), "other".into(), Row::new())],
        };
        let bytes = encode_hint(&record);
        assert_eq!(decode_hint(&bytes).expect("decodes"), record);
        for cut in 0..bytes.len() {
            assert!(decode_hint(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_hint(&longer).is_err());
        let mut other_version = bytes;
        other_version[0] = 9;
        assert_eq!(decode_hint(&other_version), Err(CorruptData::InvalidFormatVersion(9)));
    }

    #[test]
    fn ids_sort_by_time_and_carry_it() {
        let early = hint_id(1_000, u64::MAX);
        let late = hint_id(1_001, 0);
        assert!(early.as_bytes() < late.as_bytes());
        assert_eq!(hint_written_at(&late), 1_001);
    }
}
