//! `system.paxos`: each replica's Paxos state for the partitions it holds (Cassandra's
//! `system.paxos` table), used by compare-and-set. The rules that read and change it live in the
//! cluster crate; this module only says how the state is kept.
//!
//! ```text
//! row key    the partition's key
//! cell name  cf id (16 bytes) ++ field (1 byte); a partition's state in one column family is
//!            the three cells under that column family's id
//! timestamp  the ballot's time in µs (ballot_micros)
//! TTL        max(3 hours, the column family's gc_grace_seconds), as Cassandra's paxos TTL
//! field 1    promise    value: ballot (16 bytes)
//! field 2    proposal   value: version:u8 (1) ballot (16 bytes) update (storage::data row)
//! field 3    commit     value: version:u8 (1) ballot (16 bytes) update
//! ```
//!
//! A write never has to read first: every field keeps the value of its highest ballot by the
//! ordinary reconciliation of cells. Ballots of different microseconds are told apart by the
//! cell timestamp; ballots of one microsecond (whose version 1 UUIDs share their first eight
//! bytes, the time) by the value, which starts with the ballot's bytes. So a late message with
//! an older ballot can never replace a newer promise, proposal or commit, whatever the order the
//! writes reach the replica in. A proposal is never deleted: it counts only while its ballot is
//! newer than the most recent commit's (see [`PaxosRecord::in_progress`]).

use uuid::Uuid;

use crate::data::{decode_row, encode_row, now_seconds, Cell, Reader, Row};
use crate::error::CorruptData;
use crate::filter::{CountUnit, ReadFilter};

const FIELD_PROMISE: u8 = 1;
const FIELD_PROPOSAL: u8 = 2;
const FIELD_COMMIT: u8 = 3;

/// Version of the proposal and commit cell values.
pub const COMMIT_VERSION: u8 = 1;

/// Paxos state outlives a column family's gc_grace_seconds when that is shorter than this:
/// Cassandra keeps it at least 3 hours, so a round left unfinished can still be finished.
pub const MIN_PAXOS_TTL_SECONDS: i32 = 3 * 3600;

/// A proposal or commit as kept: the ballot and the update of the column family's partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredCommit {
    pub ballot: Uuid,
    pub update: Row,
}

/// What a replica keeps of one partition's Paxos rounds in one column family: the highest
/// ballot promised, accepted and committed, each absent until the first one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PaxosRecord {
    pub promised: Option<Uuid>,
    pub accepted: Option<StoredCommit>,
    pub committed: Option<StoredCommit>,
}

impl PaxosRecord {
    /// The accepted proposal if no commit of the same or a newer ballot has happened since
    /// (a round still in progress, as far as this replica knows).
    pub fn in_progress(&self) -> Option<&StoredCommit> {
        let accepted = self.accepted.as_ref()?;
        match &self.committed {
            Some(c) if ballot_order(&c.ballot, &accepted.ballot) != std::cmp::Ordering::Less => None,
            _ => Some(accepted),
        }
    }
}

/// The time of a version 1 (time-based) UUID in µs since the Unix epoch; 0 for any other UUID
/// (the nil "no ballot yet" included), which so sorts before every real ballot.
pub fn ballot_micros(ballot: &Uuid) -> i64 {
    match ballot.get_version_num() {
        1 => ballot.get_timestamp().map_or(0, |ts| {
            let (secs, nanos) = ts.to_unix();
            i64::try_from(secs).unwrap_or(i64::MAX).saturating_mul(1_000_000).saturating_add(i64::from(nanos / 1000))
        }),
        _ => 0,
    }
}

/// Ballot order: by time in µs, then by the UUID's bytes. This is the order reconciliation
/// keeps them in (see the module comment), so what is stored is always the highest.
pub fn ballot_order(a: &Uuid, b: &Uuid) -> std::cmp::Ordering {
    ballot_micros(a).cmp(&ballot_micros(b)).then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

fn cell_name(cf_id: &Uuid, field: u8) -> Vec<u8> {
    let mut name = Vec::with_capacity(17);
    name.extend_from_slice(cf_id.as_bytes());
    name.push(field);
    name
}

/// The read filter selecting a column family's three cells.
pub fn state_filter(cf_id: &Uuid) -> ReadFilter {
    ReadFilter::slice(cell_name(cf_id, 0), cell_name(cf_id, u8::MAX), false, usize::MAX, CountUnit::Cells)
}

/// How long Paxos cells live for a column family with `gc_grace_seconds`.
pub fn ttl_for(gc_grace_seconds: i32) -> i32 {
    gc_grace_seconds.max(MIN_PAXOS_TTL_SECONDS)
}

/// The promise cell for `ballot`.
pub fn promise_cell(cf_id: &Uuid, ballot: &Uuid, ttl: i32) -> Cell {
    Cell::expiring(
        cell_name(cf_id, FIELD_PROMISE),
        ballot.as_bytes().to_vec(),
        ballot_micros(ballot),
        ttl,
        now_seconds(),
    )
}

/// The proposal cell for an accepted proposal.
pub fn proposal_cell(cf_id: &Uuid, proposal: &StoredCommit, ttl: i32) -> Cell {
    commit_like_cell(cf_id, FIELD_PROPOSAL, proposal, ttl)
}

/// The commit cell for a commit (the replica's most recent one, if its ballot is the newest).
pub fn commit_cell(cf_id: &Uuid, commit: &StoredCommit, ttl: i32) -> Cell {
    commit_like_cell(cf_id, FIELD_COMMIT, commit, ttl)
}

fn commit_like_cell(cf_id: &Uuid, field: u8, commit: &StoredCommit, ttl: i32) -> Cell {
    let mut value = Vec::with_capacity(17 + commit.update.size());
    value.push(COMMIT_VERSION);
    value.extend_from_slice(commit.ballot.as_bytes());
    encode_row(&commit.update, &mut value);
    Cell::expiring(cell_name(cf_id, field), value, ballot_micros(&commit.ballot), ttl, now_seconds())
}

fn decode_commit(value: &[u8]) -> Result<StoredCommit, CorruptData> {
    let mut r = Reader::new(value);
    let version = r.u8()?;
    if version != COMMIT_VERSION {
        return Err(CorruptData::InvalidFormatVersion(version));
    }
    let ballot = decode_ballot(r.bytes(16)?)?;
    let update = decode_row(&mut r)?;
    if !r.is_empty() {
        return Err(CorruptData::BadValue { what: "bytes after a paxos commit", value: r.remaining() as u64 });
    }
    Ok(StoredCommit { ballot, update })
}

fn decode_ballot(bytes: &[u8]) -> Result<Uuid, CorruptData> {
    Uuid::from_slice(bytes).map_err(|_| CorruptData::BadValue { what: "ballot length", value: bytes.len() as u64 })
}

/// The state held by `cells`, the live cells [`state_filter`] selected for column family
/// `cf_id`. Cells of other column families are ignored.
pub fn decode_state(cf_id: &Uuid, cells: &[Cell]) -> Result<PaxosRecord, CorruptData> {
    let mut record = PaxosRecord::default();
    for cell in cells {
        let Some((field, id)) = cell.name.split_last() else { continue };
        if id != cf_id.as_bytes() {
            continue;
        }
        match *field {
            FIELD_PROMISE => record.promised = Some(decode_ballot(&cell.value)?),
            FIELD_PROPOSAL => record.accepted = Some(decode_commit(&cell.value)?),
            FIELD_COMMIT => record.committed = Some(decode_commit(&cell.value)?),
            other => return Err(CorruptData::BadValue { what: "paxos field", value: u64::from(other) }),
        }
    }
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::prefer_second;

    fn ballot(micros: i64, tail: u64) -> Uuid {
        let ticks = 0x01B2_1DD2_1381_4000u64 + (micros as u64) * 10;
        let node = tail.to_be_bytes();
        uuid::Builder::from_gregorian_timestamp(
            ticks,
            (tail >> 48) as u16 & 0x3fff,
            &[node[2], node[3], node[4], node[5], node[6], node[7]],
        )
        .into_uuid()
    }

    fn update(value: &str) -> Row {
        let mut row = Row::new();
        row.cells.push(Cell::live("c", value, 5));
        row
    }

    #[test]
    fn micros_come_from_the_uuid_time() {
        assert_eq!(ballot_micros(&ballot(1_700_000_000_123_456, 9)), 1_700_000_000_123_456);
        assert_eq!(ballot_micros(&Uuid::nil()), 0);
        assert_eq!(ballot_micros(&Uuid::new_v4()), 0);
    }

    #[test]
    fn reconciliation_keeps_the_highest_ballot_even_within_one_microsecond() {
        let id = Uuid::new_v4();
        let ballots = [ballot(10, 1), ballot(10, 2), ballot(11, 0), ballot(9, u64::MAX)];
        for a in &ballots {
            for b in &ballots {
                let (ca, cb) = (promise_cell(&id, a, 60), promise_cell(&id, b, 60));
                let second_wins = prefer_second(&ca, &cb);
                assert_eq!(second_wins, ballot_order(a, b) == std::cmp::Ordering::Less, "{a} vs {b}");
                let (pa, pb) = (
                    proposal_cell(&id, &StoredCommit { ballot: *a, update: update("x") }, 60),
                    proposal_cell(&id, &StoredCommit { ballot: *b, update: update("y") }, 60),
                );
                if a != b {
                    assert_eq!(prefer_second(&pa, &pb), ballot_order(a, b) == std::cmp::Ordering::Less);
                }
            }
        }
    }

    #[test]
    fn state_round_trips_and_a_commit_ends_the_round_in_progress() {
        let id = Uuid::new_v4();
        let other = Uuid::new_v4();
        let accepted = StoredCommit { ballot: ballot(20, 1), update: update("a") };
        let committed = StoredCommit { ballot: ballot(10, 1), update: update("c") };
        let cells = vec![
            promise_cell(&id, &ballot(30, 0), 60),
            proposal_cell(&id, &accepted, 60),
            commit_cell(&id, &committed, 60),
            promise_cell(&other, &ballot(99, 0), 60),
        ];
        let record = decode_state(&id, &cells).expect("decodes");
        assert_eq!(record.promised, Some(ballot(30, 0)));
        assert_eq!(record.accepted.as_ref(), Some(&accepted));
        assert_eq!(record.committed.as_ref(), Some(&committed));
        assert_eq!(record.in_progress(), Some(&accepted));
        let later = StoredCommit { ballot: ballot(20, 1), update: update("a") };
        let done = PaxosRecord { committed: Some(later), ..record };
        assert_eq!(done.in_progress(), None);
    }

    #[test]
    fn damaged_cells_are_errors() {
        let id = Uuid::new_v4();
        let good = proposal_cell(&id, &StoredCommit { ballot: ballot(1, 1), update: update("v") }, 60);
        for cut in 0..good.value.len() {
            let mut bad = good.clone();
            bad.value.truncate(cut);
            assert!(decode_state(&id, &[bad]).is_err(), "cut at {cut}");
        }
        let mut longer = good.clone();
        longer.value.push(0);
        assert!(decode_state(&id, &[longer]).is_err());
        let mut version = good;
        version.value[0] = 7;
        assert_eq!(decode_state(&id, &[version]), Err(CorruptData::InvalidFormatVersion(7)));
    }
}
