//! The payloads of the coordinator's verbs (mutations, reads, range reads, truncates), encoded
//! into the internode frames of [`messaging`].
//!
//! ```text
//! every payload: format:u8 (1) then its body; big-endian; strings and keys u16-length-prefixed,
//! values u32-length-prefixed; rows in the engine's row encoding (model::data::encode_row)
//!
//! Mutation / Hint       keyspace key count:u16 (cf row)*
//! Read                  keyspace cf key digest:u8 filter
//! Read reply            0 row | 1 digest[16]
//! RangeSlice            keyspace cf start:bound end:bound filter max_rows:u32 [row_filter]
//! row_filter            count:u16 (column op:u8 value)*   only when not empty: an index query
//! RangeSlice reply      count:u32 (token key row)*
//! Truncate              keyspace cf
//! RangeDigest           keyspace cf count:u32 (start:bound end:bound)*
//! RangeDigest reply     count:u32 (md5[16] partitions:u64)*
//! CounterMutation       consistency-level-name mutation (as above, without its format byte)
//! StoreHint             target-endpoint mutation (as above, without its format byte)
//! SchemaPush / reply of SchemaPull   count:u32 (mutation as above, u32-length-prefixed)*
//! filter                reversed:u8 count:u64 unit:u8 ranges:u32 (low high)*
//! bound                 0 (unbounded) | 1 token key inclusive:u8 | 2 token inclusive:u8
//! ```
//!
//! Decoding never trusts a declared count to size an allocation and never panics on any input.

use md5::{Digest, Md5};
use model::data::{decode_row, encode_row, Reader, Row};
use model::dht::{DecoratedKey, KeyBound, Token};
use model::error::CorruptData;
use model::filter::{CountUnit, ReadFilter};
use model::mutation::RowMutation;
use storage::index::{IndexExpression, IndexOperator};

/// The only payload format so far (Paxos's payloads share it: `paxos::messages`).
pub(crate) const FORMAT: u8 = 1;

/// Why a payload could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    #[error("payload format {0} is not known")]
    UnknownFormat(u8),
    #[error("malformed payload: {0}")]
    Corrupt(#[from] CorruptData),
    #[error("malformed payload: {0}")]
    Invalid(&'static str),
}

fn begin() -> Vec<u8> {
    vec![FORMAT]
}

/// A reader past the payload's format byte, which must be [`FORMAT`].
pub(crate) fn open(bytes: &[u8]) -> Result<Reader<'_>, PayloadError> {
    let mut r = Reader::new(bytes);
    match r.u8()? {
        FORMAT => Ok(r),
        other => Err(PayloadError::UnknownFormat(other)),
    }
}

/// `value`, if the payload held nothing after it.
pub(crate) fn finish<T>(r: &Reader<'_>, value: T) -> Result<T, PayloadError> {
    if r.is_empty() {
        Ok(value)
    } else {
        Err(PayloadError::Invalid("trailing bytes"))
    }
}

fn put_short(out: &mut Vec<u8>, bytes: &[u8]) {
    // Names and keys are limited to 65535 bytes by validation before they get here.
    out.extend_from_slice(&(bytes.len().min(u16::MAX as usize) as u16).to_be_bytes());
    out.extend_from_slice(&bytes[..bytes.len().min(u16::MAX as usize)]);
}

fn put_long(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

fn string(r: &mut Reader<'_>) -> Result<String, PayloadError> {
    String::from_utf8(r.short_bytes()?.to_vec()).map_err(|_| PayloadError::Invalid("a name is not UTF-8"))
}

// ----- mutations -----

pub fn encode_mutation(m: &RowMutation) -> Vec<u8> {
    let mut out = begin();
    put_short(&mut out, m.keyspace.as_bytes());
    put_short(&mut out, &m.key);
    out.extend_from_slice(&(m.updates.len() as u16).to_be_bytes());
    for (cf, row) in &m.updates {
        put_short(&mut out, cf.as_bytes());
        encode_row(row, &mut out);
    }
    out
}

pub fn decode_mutation(bytes: &[u8]) -> Result<RowMutation, PayloadError> {
    let mut r = open(bytes)?;
    let keyspace = string(&mut r)?;
    let key = r.short_bytes()?.to_vec();
    let n = r.u16()? as usize;
    let mut m = RowMutation { keyspace, key, updates: Vec::with_capacity(n.min(r.remaining() / 20)) };
    for _ in 0..n {
        let cf = string(&mut r)?;
        m.updates.push((cf, decode_row(&mut r)?));
    }
    finish(&r, m)
}

// ----- filters and bounds -----

fn put_filter(out: &mut Vec<u8>, f: &ReadFilter) {
    out.push(f.reversed as u8);
    out.extend_from_slice(&(f.count as u64).to_be_bytes());
    out.push(match f.count_unit {
        CountUnit::Cells => 0,
        CountUnit::SuperColumns => 1,
    });
    out.extend_from_slice(&(f.ranges.len() as u32).to_be_bytes());
    for (low, high) in &f.ranges {
        put_short(out, low);
        put_short(out, high);
    }
}

fn filter(r: &mut Reader<'_>) -> Result<ReadFilter, PayloadError> {
    let reversed = r.u8()? != 0;
    let count = usize::try_from(r.u64()?).unwrap_or(usize::MAX);
    let count_unit = match r.u8()? {
        0 => CountUnit::Cells,
        1 => CountUnit::SuperColumns,
        _ => return Err(PayloadError::Invalid("count unit")),
    };
    let n = r.u32()? as usize;
    let mut ranges = Vec::with_capacity(n.min(r.remaining() / 4));
    for _ in 0..n {
        ranges.push((r.short_bytes()?.to_vec(), r.short_bytes()?.to_vec()));
    }
    Ok(ReadFilter { ranges, reversed, count, count_unit })
}

fn put_bound(out: &mut Vec<u8>, b: &KeyBound) {
    match b {
        KeyBound::Unbounded => out.push(0),
        KeyBound::Key { key, inclusive } => {
            out.push(1);
            put_short(out, &key.token.0);
            put_short(out, &key.key);
            out.push(*inclusive as u8);
        }
        KeyBound::Token { token, inclusive } => {
            out.push(2);
            put_short(out, &token.0);
            out.push(*inclusive as u8);
        }
    }
}

fn bound(r: &mut Reader<'_>) -> Result<KeyBound, PayloadError> {
    Ok(match r.u8()? {
        0 => KeyBound::Unbounded,
        1 => {
            let token = Token::from_bytes(r.short_bytes()?);
            let key = r.short_bytes()?.to_vec();
            KeyBound::Key { key: DecoratedKey::new(token, key), inclusive: r.u8()? != 0 }
        }
        2 => KeyBound::Token { token: Token::from_bytes(r.short_bytes()?), inclusive: r.u8()? != 0 },
        _ => return Err(PayloadError::Invalid("key bound kind")),
    })
}

// ----- point reads -----

/// A read of one partition on a replica: its data, or only a digest of it.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadRequest {
    pub keyspace: String,
    pub cf: String,
    pub key: Vec<u8>,
    pub filter: ReadFilter,
    pub digest: bool,
}

pub fn encode_read(q: &ReadRequest) -> Vec<u8> {
    let mut out = begin();
    put_short(&mut out, q.keyspace.as_bytes());
    put_short(&mut out, q.cf.as_bytes());
    put_short(&mut out, &q.key);
    out.push(q.digest as u8);
    put_filter(&mut out, &q.filter);
    out
}

pub fn decode_read(bytes: &[u8]) -> Result<ReadRequest, PayloadError> {
    let mut r = open(bytes)?;
    let keyspace = string(&mut r)?;
    let cf = string(&mut r)?;
    let key = r.short_bytes()?.to_vec();
    let digest = r.u8()? != 0;
    let filter = filter(&mut r)?;
    finish(&r, ReadRequest { keyspace, cf, key, filter, digest })
}

/// A replica's answer to a read.
#[derive(Clone, Debug, PartialEq)]
pub enum ReadReply {
    Data(Row),
    Digest([u8; 16]),
}

/// The digest of a replica's answer: replicas holding the same data give the same digest.
pub fn digest(row: &Row) -> [u8; 16] {
    let mut bytes = Vec::with_capacity(row.size() + 16);
    encode_row(row, &mut bytes);
    Md5::digest(&bytes).into()
}

pub fn encode_read_reply(reply: &ReadReply) -> Vec<u8> {
    let mut out = begin();
    match reply {
        ReadReply::Data(row) => {
            out.push(0);
            encode_row(row, &mut out);
        }
        ReadReply::Digest(d) => {
            out.push(1);
            out.extend_from_slice(d);
        }
    }
    out
}

pub fn decode_read_reply(bytes: &[u8]) -> Result<ReadReply, PayloadError> {
    let mut r = open(bytes)?;
    let reply = match r.u8()? {
        0 => ReadReply::Data(decode_row(&mut r)?),
        1 => {
            let mut d = [0u8; 16];
            d.copy_from_slice(r.bytes(16)?);
            ReadReply::Digest(d)
        }
        _ => return Err(PayloadError::Invalid("read reply kind")),
    };
    finish(&r, reply)
}

// ----- range reads -----

/// A range read on a replica: partitions between two bounds, sliced by a filter; with a row
/// filter, only the partitions that satisfy all of its expressions (an index query).
#[derive(Clone, Debug, PartialEq)]
pub struct RangeRequest {
    pub keyspace: String,
    pub cf: String,
    pub start: KeyBound,
    pub end: KeyBound,
    pub filter: ReadFilter,
    pub max_rows: u32,
    pub row_filter: Vec<IndexExpression>,
}

pub fn encode_range(q: &RangeRequest) -> Vec<u8> {
    let mut out = begin();
    put_short(&mut out, q.keyspace.as_bytes());
    put_short(&mut out, q.cf.as_bytes());
    put_bound(&mut out, &q.start);
    put_bound(&mut out, &q.end);
    put_filter(&mut out, &q.filter);
    out.extend_from_slice(&q.max_rows.to_be_bytes());
    // Absent rather than empty, so a plain range read is the payload it always was.
    if !q.row_filter.is_empty() {
        out.extend_from_slice(&(q.row_filter.len().min(u16::MAX as usize) as u16).to_be_bytes());
        for e in q.row_filter.iter().take(u16::MAX as usize) {
            put_short(&mut out, &e.column);
            out.push(e.op.to_thrift() as u8);
            put_long(&mut out, &e.value);
        }
    }
    out
}

pub fn decode_range(bytes: &[u8]) -> Result<RangeRequest, PayloadError> {
    let mut r = open(bytes)?;
    let keyspace = string(&mut r)?;
    let cf = string(&mut r)?;
    let start = bound(&mut r)?;
    let end = bound(&mut r)?;
    let filter = filter(&mut r)?;
    let max_rows = r.u32()?;
    let mut row_filter = Vec::new();
    if !r.is_empty() {
        let n = r.u16()? as usize;
        for _ in 0..n {
            let column = r.short_bytes()?.to_vec();
            let op = IndexOperator::from_thrift(i32::from(r.u8()?)).ok_or(PayloadError::Invalid("index operator"))?;
            let value = r.long_bytes()?.to_vec();
            row_filter.push(IndexExpression { column, op, value });
        }
    }
    finish(&r, RangeRequest { keyspace, cf, start, end, filter, max_rows, row_filter })
}

pub fn encode_rows(rows: &[(DecoratedKey, Row)]) -> Vec<u8> {
    let mut out = begin();
    out.extend_from_slice(&(rows.len() as u32).to_be_bytes());
    for (key, row) in rows {
        put_short(&mut out, &key.token.0);
        put_long(&mut out, &key.key);
        encode_row(row, &mut out);
    }
    out
}

pub fn decode_rows(bytes: &[u8]) -> Result<Vec<(DecoratedKey, Row)>, PayloadError> {
    let mut r = open(bytes)?;
    let n = r.u32()? as usize;
    let mut rows = Vec::with_capacity(n.min(r.remaining() / 24));
    for _ in 0..n {
        let token = Token::from_bytes(r.short_bytes()?);
        let key = r.long_bytes()?.to_vec();
        rows.push((DecoratedKey::new(token, key), decode_row(&mut r)?));
    }
    finish(&r, rows)
}

// ----- range digests (repair) -----

/// Digests of a column family over key bounds (each non-wrapping), as
/// `storage::engine::Storage::digest_range` computes them.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeDigestRequest {
    pub keyspace: String,
    pub cf: String,
    pub bounds: Vec<(KeyBound, KeyBound)>,
}

pub fn encode_range_digest(q: &RangeDigestRequest) -> Vec<u8> {
    let mut out = begin();
    put_short(&mut out, q.keyspace.as_bytes());
    put_short(&mut out, q.cf.as_bytes());
    out.extend_from_slice(&(q.bounds.len() as u32).to_be_bytes());
    for (start, end) in &q.bounds {
        put_bound(&mut out, start);
        put_bound(&mut out, end);
    }
    out
}

pub fn decode_range_digest(bytes: &[u8]) -> Result<RangeDigestRequest, PayloadError> {
    let mut r = open(bytes)?;
    let keyspace = string(&mut r)?;
    let cf = string(&mut r)?;
    let n = r.u32()? as usize;
    let mut bounds = Vec::with_capacity(n.min(r.remaining() / 2));
    for _ in 0..n {
        bounds.push((bound(&mut r)?, bound(&mut r)?));
    }
    finish(&r, RangeDigestRequest { keyspace, cf, bounds })
}

/// One digest and partition count per requested pair of bounds.
pub fn encode_range_digest_reply(digests: &[([u8; 16], u64)]) -> Vec<u8> {
    let mut out = begin();
    out.extend_from_slice(&(digests.len() as u32).to_be_bytes());
    for (digest, partitions) in digests {
        out.extend_from_slice(digest);
        out.extend_from_slice(&partitions.to_be_bytes());
    }
    out
}

pub fn decode_range_digest_reply(bytes: &[u8]) -> Result<Vec<([u8; 16], u64)>, PayloadError> {
    let mut r = open(bytes)?;
    let n = r.u32()? as usize;
    let mut digests = Vec::with_capacity(n.min(r.remaining() / 24));
    for _ in 0..n {
        let mut digest = [0u8; 16];
        digest.copy_from_slice(r.bytes(16)?);
        digests.push((digest, r.u64()?));
    }
    finish(&r, digests)
}

// ----- truncate -----

pub fn encode_truncate(keyspace: &str, cf: &str) -> Vec<u8> {
    let mut out = begin();
    put_short(&mut out, keyspace.as_bytes());
    put_short(&mut out, cf.as_bytes());
    out
}

pub fn decode_truncate(bytes: &[u8]) -> Result<(String, String), PayloadError> {
    let mut r = open(bytes)?;
    let keyspace = string(&mut r)?;
    let cf = string(&mut r)?;
    finish(&r, (keyspace, cf))
}

// ----- schema -----

/// Schema rows (the engine's schema mutations), as pushed or pulled between nodes.
pub fn encode_mutations(mutations: &[RowMutation]) -> Vec<u8> {
    let mut out = begin();
    out.extend_from_slice(&(mutations.len() as u32).to_be_bytes());
    for m in mutations {
        put_long(&mut out, &encode_mutation(m));
    }
    out
}

pub fn decode_mutations(bytes: &[u8]) -> Result<Vec<RowMutation>, PayloadError> {
    let mut r = open(bytes)?;
    let n = r.u32()? as usize;
    let mut out = Vec::with_capacity(n.min(r.remaining() / 8));
    for _ in 0..n {
        out.push(decode_mutation(r.long_bytes()?)?);
    }
    finish(&r, out)
}

// ----- counters -----

/// A counter write for its leader: the increments (counter update cells) and the consistency
/// level the leader must reach among the replicas before it answers.
pub fn encode_counter_mutation(m: &RowMutation, cl: crate::consistency::ConsistencyLevel) -> Vec<u8> {
    let mut out = begin();
    put_short(&mut out, cl.name().as_bytes());
    out.extend_from_slice(encode_mutation(m).get(1..).unwrap_or_default());
    out
}

pub fn decode_counter_mutation(
    bytes: &[u8],
) -> Result<(RowMutation, crate::consistency::ConsistencyLevel), PayloadError> {
    let mut r = open(bytes)?;
    let name = string(&mut r)?;
    let cl = crate::consistency::ConsistencyLevel::from_name(&name)
        .ok_or(PayloadError::Invalid("unknown consistency level"))?;
    let rest = r.bytes(r.remaining())?;
    let mut framed = begin();
    framed.extend_from_slice(rest);
    Ok((decode_mutation(&framed)?, cl))
}

// ----- hints handed over -----

/// A hint for `target` that a leaving node hands to another node to keep and replay.
pub fn encode_store_hint(target: crate::Endpoint, m: &RowMutation) -> Vec<u8> {
    let mut out = begin();
    put_short(&mut out, target.to_string().as_bytes());
    out.extend_from_slice(encode_mutation(m).get(1..).unwrap_or_default());
    out
}

pub fn decode_store_hint(bytes: &[u8]) -> Result<(crate::Endpoint, RowMutation), PayloadError> {
    let mut r = open(bytes)?;
    let target = string(&mut r)?.parse().map_err(|_| PayloadError::Invalid("a hint's target is not an endpoint"))?;
    let rest = r.bytes(r.remaining())?;
    let mut framed = begin();
    framed.extend_from_slice(rest);
    Ok((target, decode_mutation(&framed)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::data::{Cell, DeletionTime, RangeTombstone};
    use proptest::prelude::*;

    fn row() -> Row {
        Row {
            deletion: DeletionTime::new(7, 8),
            range_tombstones: vec![RangeTombstone {
                start: b"a".to_vec(),
                end: b"c".to_vec(),
                deletion: DeletionTime::new(3, 4),
            }],
            cells: vec![Cell::live("x", "1", 10), Cell::tombstone("y", 11, 12), Cell::expiring("z", "v", 5, 60, 100)],
        }
    }

    #[test]
    fn every_payload_round_trips() {
        let mut m = RowMutation::new("ks", b"key".to_vec());
        *m.row_mut("cf") = row();
        *m.row_mut("other") = Row::new();
        assert_eq!(decode_mutation(&encode_mutation(&m)), Ok(m.clone()));
        let cl = crate::consistency::ConsistencyLevel::LocalQuorum;
        assert_eq!(decode_counter_mutation(&encode_counter_mutation(&m, cl)), Ok((m.clone(), cl)));
        let target: crate::Endpoint = "127.0.0.2:7000".parse().expect("endpoint");
        let hint = encode_store_hint(target, &m);
        assert_eq!(decode_store_hint(&hint), Ok((target, m.clone())));
        let mut not_an_endpoint = begin();
        put_short(&mut not_an_endpoint, b"node two");
        not_an_endpoint.extend_from_slice(&hint[1 + 2 + "127.0.0.2:7000".len()..]);
        assert_eq!(
            decode_store_hint(&not_an_endpoint),
            Err(PayloadError::Invalid("a hint's target is not an endpoint"))
        );

        let filter = ReadFilter {
            ranges: vec![(b"a".to_vec(), Vec::new())],
            reversed: true,
            count: 5,
            count_unit: CountUnit::SuperColumns,
        };
        let q = ReadRequest {
            keyspace: "ks".into(),
            cf: "cf".into(),
            key: b"k".to_vec(),
            filter: filter.clone(),
            digest: true,
        };
        assert_eq!(decode_read(&encode_read(&q)), Ok(q));
        for reply in [ReadReply::Data(row()), ReadReply::Digest(digest(&row()))] {
            assert_eq!(decode_read_reply(&encode_read_reply(&reply)), Ok(reply));
        }

        let key = DecoratedKey::new(Token::from_bytes(&[1, 2]), b"k".to_vec());
        let q = RangeRequest {
            keyspace: "ks".into(),
            cf: "cf".into(),
            start: KeyBound::Key { key: key.clone(), inclusive: true },
            end: KeyBound::Token { token: Token::from_bytes(&[9]), inclusive: false },
            filter: ReadFilter::all(),
            max_rows: 100,
            row_filter: Vec::new(),
        };
        assert_eq!(decode_range(&encode_range(&q)), Ok(q.clone()));
        let indexed = RangeRequest {
            row_filter: vec![
                IndexExpression::new("user_name", IndexOperator::Eq, "alice"),
                IndexExpression::new("age", IndexOperator::Gte, vec![0u8; 8]),
            ],
            ..q.clone()
        };
        let bytes = encode_range(&indexed);
        assert_eq!(bytes.len(), encode_range(&q).len() + 2 + (2 + 9 + 1 + 4 + 5) + (2 + 3 + 1 + 4 + 8));
        assert_eq!(decode_range(&bytes), Ok(indexed));
        for cut in encode_range(&q).len() + 1..bytes.len() {
            assert!(decode_range(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let rows = vec![(key, row()), (DecoratedKey::new(Token::from_bytes(&[3]), b"j".to_vec()), Row::new())];
        assert_eq!(decode_rows(&encode_rows(&rows)), Ok(rows));
        assert_eq!(decode_truncate(&encode_truncate("ks", "cf")), Ok(("ks".to_string(), "cf".to_string())));
        let schema = vec![m.clone(), RowMutation::new("system", b"other".to_vec())];
        assert_eq!(decode_mutations(&encode_mutations(&schema)), Ok(schema));
    }

    #[test]
    fn range_digest_requests_and_replies_round_trip() {
        let q = RangeDigestRequest {
            keyspace: "ks".into(),
            cf: "cf".into(),
            bounds: vec![
                (KeyBound::Token { token: Token::from_bytes(&[1]), inclusive: false }, KeyBound::Unbounded),
                (KeyBound::Unbounded, KeyBound::Token { token: Token::from_bytes(&[9]), inclusive: true }),
            ],
        };
        let bytes = encode_range_digest(&q);
        assert_eq!(decode_range_digest(&bytes), Ok(q));
        for cut in 0..bytes.len() {
            assert!(decode_range_digest(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let digests = vec![([7u8; 16], 3), ([0u8; 16], 0)];
        let reply = encode_range_digest_reply(&digests);
        assert_eq!(decode_range_digest_reply(&reply), Ok(digests));
        assert!(decode_range_digest_reply(&reply[..reply.len() - 1]).is_err());
    }

    #[test]
    fn digests_tell_different_data_apart() {
        let mut other = row();
        other.cells[0].timestamp += 1;
        assert_eq!(digest(&row()), digest(&row()));
        assert_ne!(digest(&row()), digest(&other));
    }

    #[test]
    fn truncated_unknown_and_trailing_payloads_are_errors() {
        let bytes = encode_read(&ReadRequest {
            keyspace: "ks".into(),
            cf: "cf".into(),
            key: b"k".to_vec(),
            filter: ReadFilter::all(),
            digest: false,
        });
        for cut in 0..bytes.len() {
            assert!(decode_read(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert_eq!(decode_read(&extra), Err(PayloadError::Invalid("trailing bytes")));
        let mut future = bytes;
        future[0] = 9;
        assert_eq!(decode_read(&future), Err(PayloadError::UnknownFormat(9)));
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = decode_mutation(&bytes);
            let _ = decode_read(&bytes);
            let _ = decode_read_reply(&bytes);
            let _ = decode_range(&bytes);
            let _ = decode_rows(&bytes);
            let _ = decode_truncate(&bytes);
            let _ = decode_mutations(&bytes);
            let _ = decode_range_digest(&bytes);
            let _ = decode_range_digest_reply(&bytes);
        }
    }
}
