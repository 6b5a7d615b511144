//! Paxos for compare-and-set, the replica's side (Cassandra's `service.paxos`: Commit,
//! PaxosState and the three verb handlers): ballots, proposals, the promise and accept rules,
//! and the handlers of PaxosPrepare, PaxosPropose and PaxosCommit. The coordinator's side (the
//! rounds) is [`crate::coordinator`]'s `cas`; the payloads of the three verbs are [`messages`].
//!
//! Each partition of each column family is its own Paxos instance, run again for every cas:
//! a round prepares a ballot, proposes an update and commits it; the commit is what the next
//! round learns as the replica's most recent commit. A replica's state ([`PaxosState`]) is the
//! highest ballot it promised, the proposal it accepted and its most recent commit, kept
//! durably in `system.paxos` before it answers, so a restart cannot make it break a promise.
//!
//! Rules (classic Paxos, with Cassandra's commit):
//! - prepare(b) is promised iff b is newer than every ballot the replica promised, accepted or
//!   committed; the answer carries the proposal still in progress and the most recent commit.
//!   A refusal carries the newest ballot it knows, so the coordinator's next ballot is newer.
//! - propose(p) is accepted iff p's ballot is at least the promised and accepted ones and newer
//!   than the most recent commit.
//! - commit(c) applies c's update to the column family (always: its cells carry the ballot's
//!   time, so an old commit arriving late loses to newer data) and records c as the most
//!   recent commit if it is the newest.
//!
//! The rounds of one partition on a replica are serialised by a lock ([`LOCKS`]): a decision
//! reads the state and writes its outcome before another decision reads it.

pub mod messages;

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicI64, Ordering as AtomicOrdering};
use std::sync::Arc;

use model::data::{now_micros, Row};
use model::mutation::RowMutation;
use parking_lot::Mutex;
use storage::engine::Storage;
use storage::StorageError;
use storage::{ballot_micros, ballot_order, PaxosRecord, StoredCommit};
use tracing::debug;
use uuid::Uuid;

use self::messages::{PaxosRequest, PrepareResponse};
use crate::executor::Executor;
use crate::Endpoint;
use messaging::{MessagingService, Responder, Verb, VerbHandler};

/// A Paxos ballot: a version 1 (time-based) UUID, ordered by its time in µs, then by its bytes
/// (Cassandra's TimeUUID ballots). [`Ballot::NONE`] comes before every real ballot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ballot(Uuid);

/// The last ballot time this process handed out: ballots are strictly increasing per node.
static LAST_BALLOT_MICROS: AtomicI64 = AtomicI64::new(0);

/// Gregorian ticks (100 ns) between 1582-10-15 and the Unix epoch, as version 1 UUIDs count.
const UUID_TICKS_AT_UNIX_EPOCH: u64 = 0x01B2_1DD2_1381_4000;

impl Ballot {
    pub const NONE: Ballot = Ballot(Uuid::nil());

    pub fn from_uuid(uuid: Uuid) -> Ballot {
        Ballot(uuid)
    }

    pub fn uuid(&self) -> Uuid {
        self.0
    }

    /// The ballot's time in µs since the Unix epoch: the timestamp of the cells it commits.
    pub fn micros(&self) -> i64 {
        ballot_micros(&self.0)
    }

    /// A ballot of exactly `micros` with random clock sequence and node bits (so ballots of
    /// different coordinators in the same µs differ). Whole microseconds only: two ballots of
    /// one µs then share their time bytes, which `system.paxos` relies on.
    pub fn at_micros(micros: i64) -> Ballot {
        let ticks = UUID_TICKS_AT_UNIX_EPOCH.wrapping_add((micros.max(0) as u64).wrapping_mul(10));
        let random: [u8; 8] = rand::random();
        let counter = u16::from_be_bytes([random[0], random[1]]) & 0x3fff;
        // A random node id has the multicast bit set (RFC 4122 §4.5).
        let node = [random[2] | 1, random[3], random[4], random[5], random[6], random[7]];
        Ballot(uuid::Builder::from_gregorian_timestamp(ticks, counter, &node).into_uuid())
    }

    /// A fresh ballot: now, but later than every ballot this node made before and than
    /// `min_micros` (a newer ballot seen elsewhere, so a coordinator whose clock is behind
    /// still gets ahead of it).
    pub fn next(min_micros: i64) -> Ballot {
        let mut last = LAST_BALLOT_MICROS.load(AtomicOrdering::Relaxed);
        loop {
            let micros = now_micros().max(last.saturating_add(1)).max(min_micros);
            match LAST_BALLOT_MICROS.compare_exchange_weak(
                last,
                micros,
                AtomicOrdering::Relaxed,
                AtomicOrdering::Relaxed,
            ) {
                Ok(_) => return Ballot::at_micros(micros),
                Err(seen) => last = seen,
            }
        }
    }
}

impl Ord for Ballot {
    fn cmp(&self, other: &Ballot) -> Ordering {
        ballot_order(&self.0, &other.0)
    }
}

impl PartialOrd for Ballot {
    fn partial_cmp(&self, other: &Ballot) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for Ballot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A proposal or a commit: an update of one partition of one column family, at a ballot
/// (Cassandra's Commit; the partition travels beside it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    pub ballot: Ballot,
    pub update: Row,
}

impl Commit {
    /// Nothing, at `ballot` (a prepare, or a refusal naming the ballot it promised).
    pub fn empty(ballot: Ballot) -> Commit {
        Commit { ballot, update: Row::new() }
    }

    /// The proposal of `update` at `ballot`. Every timestamp in it becomes the ballot's time
    /// (Cassandra's Commit.newProposal): rounds commit in ballot order, so each committed update
    /// is newer than the ones before it, whatever timestamps the client gave.
    pub fn proposal(ballot: Ballot, mut update: Row) -> Commit {
        let at = ballot.micros();
        for cell in &mut update.cells {
            cell.timestamp = at;
        }
        for rt in &mut update.range_tombstones {
            rt.deletion.marked_at = at;
        }
        if !update.deletion.is_live() {
            update.deletion.marked_at = at;
        }
        Commit { ballot, update }
    }

    pub fn is_after(&self, other: &Commit) -> bool {
        self.ballot > other.ballot
    }

    fn from_stored(c: StoredCommit) -> Commit {
        Commit { ballot: Ballot(c.ballot), update: c.update }
    }

    fn to_stored(&self) -> StoredCommit {
        StoredCommit { ballot: self.ballot.0, update: self.update.clone() }
    }
}

/// A replica's Paxos state of one partition: the highest ballot promised, accepted and
/// committed (what `system.paxos` keeps). The decisions are pure functions of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaxosState {
    pub promised: Ballot,
    pub accepted: Option<Commit>,
    pub committed: Option<Commit>,
}

impl Default for PaxosState {
    fn default() -> PaxosState {
        PaxosState { promised: Ballot::NONE, accepted: None, committed: None }
    }
}

impl PaxosState {
    pub fn from_record(record: PaxosRecord) -> PaxosState {
        PaxosState {
            promised: record.promised.map_or(Ballot::NONE, Ballot),
            accepted: record.accepted.map(Commit::from_stored),
            committed: record.committed.map(Commit::from_stored),
        }
    }

    fn accepted_ballot(&self) -> Ballot {
        self.accepted.as_ref().map_or(Ballot::NONE, |c| c.ballot)
    }

    fn committed_ballot(&self) -> Ballot {
        self.committed.as_ref().map_or(Ballot::NONE, |c| c.ballot)
    }

    /// The newest ballot this replica has taken part in: a prepare must beat it.
    pub fn newest_ballot(&self) -> Ballot {
        self.promised.max(self.accepted_ballot()).max(self.committed_ballot())
    }

    /// The accepted proposal, unless a commit of its ballot or a newer one happened since.
    pub fn in_progress(&self) -> Option<&Commit> {
        self.accepted.as_ref().filter(|a| a.ballot > self.committed_ballot())
    }

    pub fn most_recent_commit(&self) -> Commit {
        self.committed.clone().unwrap_or_else(|| Commit::empty(Ballot::NONE))
    }

    /// Phase 1: the answer to prepare(`ballot`); when promised, the caller records the promise.
    pub fn prepare(&self, ballot: Ballot) -> PrepareResponse {
        let newest = self.newest_ballot();
        if ballot > newest {
            PrepareResponse {
                promised: true,
                in_progress: self.in_progress().cloned().unwrap_or_else(|| Commit::empty(Ballot::NONE)),
                most_recent_commit: self.most_recent_commit(),
            }
        } else {
            PrepareResponse {
                promised: false,
                in_progress: Commit::empty(newest),
                most_recent_commit: self.most_recent_commit(),
            }
        }
    }

    /// Phase 2: whether `proposal` is accepted; when it is, the caller records it.
    pub fn accepts(&self, proposal: &Commit) -> bool {
        proposal.ballot >= self.promised.max(self.accepted_ballot()) && proposal.ballot > self.committed_ballot()
    }

    // What recording leaves. The replica records through the engine (`save_paxos_*` into
    // `system.paxos`); these are the same rules on a state alone, for the model tests.

    /// What recording a promise of `ballot` leaves (the highest is kept).
    #[cfg(test)]
    pub fn with_promise(mut self, ballot: Ballot) -> PaxosState {
        self.promised = self.promised.max(ballot);
        self
    }

    /// What recording the acceptance of `proposal` leaves (the highest ballot is kept).
    #[cfg(test)]
    pub fn with_proposal(mut self, proposal: Commit) -> PaxosState {
        if proposal.ballot >= self.accepted_ballot() {
            self.accepted = Some(proposal);
        }
        self
    }

    /// What recording `commit` leaves (the highest ballot is kept).
    #[cfg(test)]
    pub fn with_commit(mut self, commit: Commit) -> PaxosState {
        if commit.ballot >= self.committed_ballot() {
            self.committed = Some(commit);
        }
        self
    }
}

// ----- the replica's operations, on its engine -----

/// Stripes serialising the decisions of one partition (Cassandra's striped paxos locks). Held
/// only by blocking code on executor threads, never across an await; a leaf lock.
static LOCKS: [Mutex<()>; 1024] = [const { parking_lot::const_mutex(()) }; 1024];

fn lock_for(keyspace: &str, cf: &str, key: &[u8]) -> &'static Mutex<()> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (keyspace, cf, key).hash(&mut h);
    let i = (h.finish() % LOCKS.len() as u64) as usize;
    // `i` is below the length by construction.
    LOCKS.get(i).unwrap_or(&LOCKS[0])
}

fn state_of(storage: &Storage, r: &PaxosRequest) -> Result<PaxosState, StorageError> {
    Ok(PaxosState::from_record(storage.paxos_state(&r.keyspace, &r.cf, &r.key)?))
}

/// Answers a prepare of `r.commit.ballot`, recording the promise first. Blocks.
pub fn prepare(storage: &Storage, r: &PaxosRequest) -> Result<PrepareResponse, StorageError> {
    let _decision = lock_for(&r.keyspace, &r.cf, &r.key).lock();
    let response = state_of(storage, r)?.prepare(r.commit.ballot);
    if response.promised {
        storage.save_paxos_promise(&r.keyspace, &r.cf, &r.key, &r.commit.ballot.uuid())?;
    }
    Ok(response)
}

/// Answers a proposal, recording it first when accepted. Blocks.
pub fn propose(storage: &Storage, r: &PaxosRequest) -> Result<bool, StorageError> {
    let _decision = lock_for(&r.keyspace, &r.cf, &r.key).lock();
    let accepted = state_of(storage, r)?.accepts(&r.commit);
    if accepted {
        storage.save_paxos_proposal(&r.keyspace, &r.cf, &r.key, &r.commit.to_stored())?;
    }
    Ok(accepted)
}

/// Applies a commit's update, then records the commit. Blocks.
pub fn commit(storage: &Storage, r: &PaxosRequest) -> Result<(), StorageError> {
    // No lock: both writes keep the newest version by reconciliation whatever the order.
    // IMPORTANT: the data goes first, so a replica that records a commit holds its update.
    if !r.commit.update.is_empty() {
        let mut m = RowMutation::new(r.keyspace.clone(), r.key.clone());
        *m.row_mut(&r.cf) = r.commit.update.clone();
        storage.apply(m)?;
    }
    storage.save_paxos_commit(&r.keyspace, &r.cf, &r.key, &r.commit.to_stored())
}

/// Serves one Paxos verb on this node's engine: the reply payload, or why it failed. The
/// coordinator calls it directly for the local replica, the handler for other nodes'.
pub fn serve(storage: &Storage, verb: Verb, payload: &[u8]) -> Result<Vec<u8>, String> {
    let request = messages::decode_request(payload).map_err(|e| e.to_string())?;
    match verb {
        Verb::PaxosPrepare => prepare(storage, &request).map(|r| messages::encode_prepare_response(&r)),
        Verb::PaxosPropose => propose(storage, &request).map(messages::encode_propose_response),
        Verb::PaxosCommit => commit(storage, &request).map(|()| Vec::new()),
        other => return Err(format!("{other} is not a Paxos verb")),
    }
    .map_err(|e| e.to_string())
}

/// Serves PaxosPrepare, PaxosPropose and PaxosCommit for other coordinators, on the executor
/// (each reads and writes the engine).
pub struct PaxosHandler {
    storage: Storage,
    executor: Executor,
}

impl PaxosHandler {
    pub fn register(storage: Storage, executor: Executor, messaging: &MessagingService) {
        let handler = Arc::new(PaxosHandler { storage, executor });
        for verb in [Verb::PaxosPrepare, Verb::PaxosPropose, Verb::PaxosCommit] {
            messaging.register(verb, handler.clone());
        }
    }
}

impl VerbHandler for PaxosHandler {
    fn handle(&self, from: Endpoint, verb: Verb, payload: Vec<u8>, reply: Responder) {
        let storage = self.storage.clone();
        let job = move || match serve(&storage, verb, &payload) {
            Ok(answer) => reply.respond(answer),
            Err(reason) => {
                debug!(%from, %verb, %reason, "paxos request failed");
                reply.fail(reason);
            }
        };
        // If the pool refuses the job (shutdown), the requester times out.
        if self.executor.submit(Box::new(job)).is_err() {
            debug!(%from, %verb, "paxos request not run: the executor is stopping");
        }
    }
}

#[cfg(test)]
mod tests;
