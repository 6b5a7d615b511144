//! The payloads of the Paxos verbs (compare-and-set), beside [`crate::messages`]'s.
//!
//! ```text
//! every payload: format:u8 (1) then its body; big-endian; strings and keys u16-length-prefixed
//! PaxosPrepare / PaxosPropose / PaxosCommit   keyspace cf key commit
//! PaxosPrepare reply                          promised:u8 in_progress:commit most_recent:commit
//! PaxosPropose reply                          accepted:u8
//! PaxosCommit reply                           (empty)
//! commit                                      ballot (16 bytes) row (model::data::encode_row)
//! ```
//!
//! A prepare carries an empty update: only its ballot counts. Decoding never panics.

use model::data::{decode_row, encode_row, Reader};
use uuid::Uuid;

use super::{Ballot, Commit};
use crate::messages::{finish, open, PayloadError, FORMAT};

/// A Paxos message to a replica: the partition and the commit (or ballot) it is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaxosRequest {
    pub keyspace: String,
    pub cf: String,
    pub key: Vec<u8>,
    pub commit: Commit,
}

/// A replica's answer to a prepare (Cassandra's PrepareResponse). When refused, `in_progress`
/// carries the newest ballot the replica knows, with no update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrepareResponse {
    pub promised: bool,
    pub in_progress: Commit,
    pub most_recent_commit: Commit,
}

fn put_short(out: &mut Vec<u8>, bytes: &[u8]) {
    // Names and keys are limited to 65535 bytes by validation before they get here.
    let n = bytes.len().min(u16::MAX as usize);
    out.extend_from_slice(&(n as u16).to_be_bytes());
    out.extend_from_slice(bytes.get(..n).unwrap_or_default());
}

fn put_commit(out: &mut Vec<u8>, c: &Commit) {
    out.extend_from_slice(c.ballot.uuid().as_bytes());
    encode_row(&c.update, out);
}

fn string(r: &mut Reader<'_>) -> Result<String, PayloadError> {
    String::from_utf8(r.short_bytes()?.to_vec()).map_err(|_| PayloadError::Invalid("a name is not UTF-8"))
}

fn commit(r: &mut Reader<'_>) -> Result<Commit, PayloadError> {
    let ballot = Uuid::from_slice(r.bytes(16)?).map_err(|_| PayloadError::Invalid("ballot"))?;
    Ok(Commit { ballot: Ballot::from_uuid(ballot), update: decode_row(r)? })
}

pub fn encode_request(q: &PaxosRequest) -> Vec<u8> {
    let mut out = vec![FORMAT];
    put_short(&mut out, q.keyspace.as_bytes());
    put_short(&mut out, q.cf.as_bytes());
    put_short(&mut out, &q.key);
    put_commit(&mut out, &q.commit);
    out
}

pub fn decode_request(bytes: &[u8]) -> Result<PaxosRequest, PayloadError> {
    let mut r = open(bytes)?;
    let keyspace = string(&mut r)?;
    let cf = string(&mut r)?;
    let key = r.short_bytes()?.to_vec();
    let commit = commit(&mut r)?;
    finish(&r, PaxosRequest { keyspace, cf, key, commit })
}

pub fn encode_prepare_response(p: &PrepareResponse) -> Vec<u8> {
    let mut out = vec![FORMAT, p.promised as u8];
    put_commit(&mut out, &p.in_progress);
    put_commit(&mut out, &p.most_recent_commit);
    out
}

pub fn decode_prepare_response(bytes: &[u8]) -> Result<PrepareResponse, PayloadError> {
    let mut r = open(bytes)?;
    let promised = r.u8()? != 0;
    let in_progress = commit(&mut r)?;
    let most_recent_commit = commit(&mut r)?;
    finish(&r, PrepareResponse { promised, in_progress, most_recent_commit })
}

pub fn encode_propose_response(accepted: bool) -> Vec<u8> {
    vec![FORMAT, accepted as u8]
}

pub fn decode_propose_response(bytes: &[u8]) -> Result<bool, PayloadError> {
    let mut r = open(bytes)?;
    let accepted = r.u8()? != 0;
    finish(&r, accepted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::data::{Cell, Row};

    fn commit_of(micros: i64, value: &str) -> Commit {
        let mut row = Row::new();
        row.cells.push(Cell::live("c", value, micros));
        Commit { ballot: Ballot::at_micros(micros), update: row }
    }

    #[test]
    fn payloads_round_trip_and_damage_is_an_error() {
        let q = PaxosRequest { keyspace: "ks".into(), cf: "cf".into(), key: b"k".to_vec(), commit: commit_of(5, "v") };
        let bytes = encode_request(&q);
        assert_eq!(decode_request(&bytes), Ok(q));
        for cut in 0..bytes.len() {
            assert!(decode_request(bytes.get(..cut).unwrap_or_default()).is_err(), "cut at {cut}");
        }
        let p = PrepareResponse {
            promised: true,
            in_progress: commit_of(7, "a"),
            most_recent_commit: Commit::empty(Ballot::NONE),
        };
        let bytes = encode_prepare_response(&p);
        assert_eq!(decode_prepare_response(&bytes), Ok(p));
        for cut in 0..bytes.len() {
            assert!(decode_prepare_response(bytes.get(..cut).unwrap_or_default()).is_err(), "cut at {cut}");
        }
        assert_eq!(decode_propose_response(&encode_propose_response(true)), Ok(true));
        assert_eq!(decode_propose_response(&encode_propose_response(false)), Ok(false));
        assert!(decode_propose_response(&[FORMAT, 1, 0]).is_err());
    }
}
