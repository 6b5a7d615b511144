//! Compare-and-set and serial reads: the coordinator's side of Paxos (Cassandra 3.11's
//! `StorageProxy.cas`, `beginAndRepairPaxos`, `readWithPaxos` and the prepare and propose
//! callbacks). The replica's side, and the rules it follows, are in [`crate::paxos`].
//!
//! A cas is one Paxos round on the partition, with its participants the partition's replicas
//! (natural and pending; only the local data centre's at LOCAL_SERIAL):
//! 1. prepare a fresh ballot at a quorum of the participants; a refusal means contention: wait a
//!    random moment (up to 100 ms) and start again with a newer ballot;
//! 2. if a promise reports an accepted proposal newer than the most recent commit, finish that
//!    round first (propose it again under our ballot, commit it) and start again; if some
//!    promises lack the most recent commit, send it to them and start again;
//! 3. read the current values at QUORUM (LOCAL_QUORUM) and compare them with the expected ones:
//!    if they differ, answer them and stop (nothing was proposed);
//! 4. propose the update at our ballot; if a quorum accepts, commit it at the commit level.
//!
//! Contention is bounded: past [`CAS_CONTENTION_TIMEOUT`] the client hears a timeout. A proposal
//! that some but not enough participants accepted (or may have: no answer) also ends in a
//! timeout: it may still be finished by a later round, so its outcome is unknown. Only a proposal
//! every participant refused is retried.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt};
use model::data::{Cell, Row};
use model::filter::{CountUnit, ReadFilter};
use model::mutation::RowMutation;
use rand::Rng;
use tracing::debug;

use super::plan::{quota, Tracker};
use super::read::request_error;
use super::{Coordinator, CoordinatorError, ReadCommand, Result};
use crate::consistency::ConsistencyLevel;
use crate::paxos::messages::{self as messages_paxos, PaxosRequest, PrepareResponse};
use crate::paxos::{self, Ballot, Commit};
use crate::Endpoint;
use membership::locator::replication::ReplicationStrategy;
use messaging::Verb;

/// How long a cas or serial read may keep retrying under contention (Cassandra's
/// cas_contention_timeout_in_ms default).
pub const CAS_CONTENTION_TIMEOUT: Duration = Duration::from_secs(1);

/// The longest random pause after losing to another coordinator.
const MAX_CONTENTION_PAUSE_MS: u64 = 100;

/// What a cas expects of one column: its value, or (no value) that it has no live cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    pub name: Vec<u8>,
    pub value: Option<Vec<u8>>,
}

/// A test of the current cells of a CQL condition.
pub type CellTest = Arc<dyn Fn(&[Cell]) -> bool + Send + Sync>;

/// What a cas compares the current values with.
#[derive(Clone)]
pub enum CasCondition {
    /// Thrift's: these columns' values (3.11's ThriftCASRequest: an empty list means "the
    /// partition has no live cell").
    Expected(Vec<Expected>),
    /// CQL's IF clauses: a test of the live cells `filter` reads (3.11's CQLCASRequest).
    Cells { filter: ReadFilter, holds: CellTest },
}

impl std::fmt::Debug for CasCondition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CasCondition::Expected(e) => f.debug_tuple("Expected").field(e).finish(),
            CasCondition::Cells { filter, .. } => {
                f.debug_struct("Cells").field("filter", filter).finish_non_exhaustive()
            }
        }
    }
}

/// A compare-and-set of one partition: apply `updates` if the current values meet `condition`.
#[derive(Clone, Debug)]
pub struct CasCommand {
    pub keyspace: String,
    pub cf: String,
    pub key: Vec<u8>,
    pub condition: CasCondition,
    pub updates: Row,
}

/// A cas's answer: applied, or not, with the current values it compared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CasOutcome {
    Applied,
    NotApplied { current: Vec<Cell> },
}

/// The partition's Paxos participants and how many must answer.
struct Participants {
    /// The live natural and pending replicas at the serial level (the local node first).
    live: Vec<Endpoint>,
    required: usize,
    pending: usize,
    /// Every natural and pending replica, in every data centre: where a commit goes.
    commit_targets: Vec<Endpoint>,
}

/// What the promises of one prepare said (Cassandra's PrepareCallback summary).
struct PrepareSummary {
    promised: bool,
    most_recent_commit: Commit,
    /// The newest accepted proposal with an update, if any.
    in_progress: Option<Commit>,
    /// The newest ballot any answer named (to start the next ballot after it).
    newest_seen: Ballot,
    /// Responders whose most recent commit is older than `most_recent_commit`.
    missing_commit: Vec<Endpoint>,
}

type Answer<'a> = Pin<Box<dyn Future<Output = (Endpoint, Result<Vec<u8>>)> + Send + 'a>>;

/// Refuses levels that cannot lead a cas (3.11's validateForCas).
pub fn validate_for_cas(cl: ConsistencyLevel) -> Result<()> {
    match cl {
        ConsistencyLevel::Serial | ConsistencyLevel::LocalSerial => Ok(()),
        _ => Err(CoordinatorError::Invalid(
            "Invalid consistency for conditional update. Must be one of SERIAL or LOCAL_SERIAL".into(),
        )),
    }
}

/// Refuses levels a cas cannot commit at (3.11's validateForCasCommit).
pub fn validate_for_cas_commit(cl: ConsistencyLevel) -> Result<()> {
    match cl {
        ConsistencyLevel::Serial | ConsistencyLevel::LocalSerial => Err(CoordinatorError::Invalid(format!(
            "{cl} is not supported as conditional update commit consistency. Use ANY if you mean \"make sure it is \
             accepted but I don't care how many replicas commit it for non-SERIAL reads\""
        ))),
        _ => Ok(()),
    }
}

/// Whether `current` (the live cells read for the expected names, or the partition's first
/// cell when nothing is expected) meets `expected`.
pub fn applies_to(expected: &[Expected], current: &[Cell]) -> bool {
    if expected.iter().all(|e| e.value.is_none()) {
        // Nothing live expected: the columns asked about (or the whole partition) must be empty.
        return current.is_empty();
    }
    expected.iter().all(|e| {
        let found = current.iter().find(|c| c.name == e.name);
        match (&e.value, found) {
            (Some(want), Some(cell)) => cell.value == *want,
            (Some(_), None) => false,
            (None, found) => found.is_none(),
        }
    })
}

/// The level current values are read at for a serial level.
fn read_level(serial: ConsistencyLevel) -> ConsistencyLevel {
    if serial == ConsistencyLevel::LocalSerial {
        ConsistencyLevel::LocalQuorum
    } else {
        ConsistencyLevel::Quorum
    }
}

async fn contention_pause() {
    let ms = rand::thread_rng().gen_range(0..MAX_CONTENTION_PAUSE_MS);
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

impl Coordinator {
    /// Compare-and-set: applies `command.updates` if the current values match
    /// `command.expected`, as one Paxos round at `serial`, committed at `commit`.
    pub async fn cas(
        &self,
        command: CasCommand,
        serial: ConsistencyLevel,
        commit: ConsistencyLevel,
    ) -> Result<CasOutcome> {
        validate_for_cas(serial)?;
        validate_for_cas_commit(commit)?;
        let meta = self.cf_metadata(&command.keyspace, &command.cf)?;
        let started = Instant::now();
        let participants = self.participants(&command.keyspace, &command.key, serial)?;
        let filter = match &command.condition {
            // Whether the partition has anything: one cell is enough.
            CasCondition::Expected(expected) if expected.is_empty() => {
                ReadFilter::slice(Vec::new(), Vec::new(), false, 1, CountUnit::Cells)
            }
            CasCondition::Expected(expected) => {
                ReadFilter::names(&meta.cmp, expected.iter().map(|e| e.name.clone()).collect(), CountUnit::Cells)
            }
            CasCondition::Cells { filter, .. } => filter.clone(),
        };
        let read = ReadCommand {
            keyspace: command.keyspace.as_str().into(),
            cf: command.cf.as_str().into(),
            key: command.key.clone(),
            filter,
        };
        while started.elapsed() < CAS_CONTENTION_TIMEOUT {
            let ballot = self
                .begin_and_repair(&command.keyspace, &command.cf, &command.key, &participants, commit, started)
                .await?;
            let current =
                self.read(vec![read.clone()], read_level(serial)).await?.into_iter().next().unwrap_or_default();
            let holds = match &command.condition {
                CasCondition::Expected(expected) => applies_to(expected, &current),
                CasCondition::Cells { holds, .. } => holds(&current),
            };
            if !holds {
                debug!(keyspace = %command.keyspace, cf = %command.cf, "cas: the current values differ");
                return Ok(CasOutcome::NotApplied { current });
            }
            let proposal = Commit::proposal(ballot, command.updates.clone());
            if self.propose(&command.keyspace, &command.cf, &command.key, &participants, &proposal, true).await? {
                self.commit(&command.keyspace, &command.cf, &command.key, &participants, &proposal, commit).await?;
                return Ok(CasOutcome::Applied);
            }
            contention_pause().await;
        }
        Err(self.cas_timeout(serial, &participants, started))
    }

    /// A read of one partition at SERIAL or LOCAL_SERIAL: finishes any round in progress on it
    /// first, so the answer includes every cas that may have been applied (3.11's
    /// readWithPaxos).
    pub(super) async fn read_serial(&self, commands: Vec<ReadCommand>, cl: ConsistencyLevel) -> Result<Vec<Vec<Cell>>> {
        let [command] = commands.as_slice() else {
            return Err(CoordinatorError::Invalid(
                "SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time".into(),
            ));
        };
        self.cf_metadata(&command.keyspace, &command.cf)?;
        let started = Instant::now();
        let participants = self.participants(&command.keyspace, &command.key, cl)?;
        let commit_level = read_level(cl);
        self.begin_and_repair(&command.keyspace, &command.cf, &command.key, &participants, commit_level, started)
            .await
            .map_err(|e| match e {
                // A read's timeout, as 3.11's readWithPaxos turns its rounds' timeouts into one.
                CoordinatorError::Timeout { waited, received, required, .. } => {
                    CoordinatorError::Timeout { operation: "serial read", waited, received, required }
                }
                other => other,
            })?;
        self.read(commands, commit_level).await
    }

    /// The live participants of `key`'s Paxos rounds, or Unavailable.
    fn participants(&self, keyspace: &str, key: &[u8], cl: ConsistencyLevel) -> Result<Participants> {
        let (_, map) = self.replicas_of(keyspace)?;
        if self.membership.awaiting_placement() {
            return Err(self.unplaceable(cl, keyspace));
        }
        let token = self.token_of(key)?;
        let local_dc = self.local_dc();
        let snitch = self.membership.snitch();
        let in_scope = |ep: &Endpoint| cl != ConsistencyLevel::LocalSerial || snitch.datacenter(*ep) == local_dc;
        let natural: Vec<Endpoint> = map.endpoints_for(&token).iter().copied().filter(in_scope).collect();
        let all: Vec<Endpoint> = map.write_endpoints(&token).iter().copied().filter(in_scope).collect();
        let pending = all.len().saturating_sub(natural.len());
        let required = pending + 1 + natural.len() / 2;
        let local = self.membership.local();
        let mut live: Vec<Endpoint> = all.iter().copied().filter(|ep| self.membership.is_alive(*ep)).collect();
        // The local replica first: it answers fastest.
        live.sort_by_key(|ep| *ep != local);
        if live.len() < required {
            return Err(CoordinatorError::Unavailable { cl, required, alive: live.len() });
        }
        if pending > 1 {
            // Cassandra refuses too: two range movements at once could break the quorums.
            return Err(CoordinatorError::Unavailable { cl, required: required + 1, alive: live.len() });
        }
        let commit_targets = map.write_endpoints(&token).to_vec();
        Ok(Participants { live, required, pending, commit_targets })
    }

    /// Prepares a ballot that a quorum promised, after finishing any round left in progress;
    /// returns it. Retries under contention until the cas's time is up.
    async fn begin_and_repair(
        &self,
        keyspace: &str,
        cf: &str,
        key: &[u8],
        participants: &Participants,
        commit_level: ConsistencyLevel,
        started: Instant,
    ) -> Result<Ballot> {
        let mut min_micros = 0;
        while started.elapsed() < CAS_CONTENTION_TIMEOUT {
            let ballot = Ballot::next(min_micros);
            let summary = self.prepare(keyspace, cf, key, participants, ballot).await?;
            min_micros = summary.newest_seen.micros().saturating_add(1);
            if !summary.promised {
                debug!(%ballot, "paxos prepare refused: contention");
                contention_pause().await;
                continue;
            }
            if let Some(in_progress) = summary.in_progress.filter(|c| c.is_after(&summary.most_recent_commit)) {
                debug!(ballot = %in_progress.ballot, "finishing a paxos round left in progress");
                let refreshed = Commit::proposal(ballot, in_progress.update);
                if self.propose(keyspace, cf, key, participants, &refreshed, false).await? {
                    self.commit(keyspace, cf, key, participants, &refreshed, commit_level).await?;
                } else {
                    contention_pause().await;
                }
                continue;
            }
            if !summary.missing_commit.is_empty() {
                // A new round needs a quorum that learnt the previous one.
                let request = paxos_request(keyspace, cf, key, summary.most_recent_commit);
                let payload = messages_paxos::encode_request(&request);
                let mut answers = self.send(&summary.missing_commit, Verb::PaxosCommit, &payload);
                let _ = tokio::time::timeout(self.settings.timeouts.write, async {
                    while answers.next().await.is_some() {}
                })
                .await;
                continue;
            }
            return Ok(ballot);
        }
        Err(CoordinatorError::Timeout {
            operation: "cas",
            waited: started.elapsed(),
            received: 0,
            required: participants.required,
        })
    }

    /// Phase 1 at the live participants, until a quorum answered or one refused.
    async fn prepare(
        &self,
        keyspace: &str,
        cf: &str,
        key: &[u8],
        participants: &Participants,
        ballot: Ballot,
    ) -> Result<PrepareSummary> {
        let started = Instant::now();
        let payload = messages_paxos::encode_request(&paxos_request(keyspace, cf, key, Commit::empty(ballot)));
        let mut answers = self.send(&participants.live, Verb::PaxosPrepare, &payload);
        let mut responses: Vec<(Endpoint, PrepareResponse)> = Vec::new();
        let mut summary = PrepareSummary {
            promised: true,
            most_recent_commit: Commit::empty(Ballot::NONE),
            in_progress: None,
            newest_seen: ballot,
            missing_commit: Vec::new(),
        };
        let deadline = tokio::time::sleep(self.settings.timeouts.write);
        tokio::pin!(deadline);
        while responses.len() < participants.required && summary.promised {
            tokio::select! {
                next = answers.next() => match next {
                    Some((ep, Ok(bytes))) => match messages_paxos::decode_prepare_response(&bytes) {
                        Ok(r) => responses.push((ep, r)),
                        Err(e) => debug!(%ep, error = %e, "bad paxos prepare answer"),
                    },
                    Some((ep, Err(e))) => debug!(%ep, error = %e, "paxos prepare failed"),
                    None => break,
                },
                _ = &mut deadline => break,
            }
            if let Some((_, r)) = responses.last() {
                summary.promised &= r.promised;
            }
        }
        if summary.promised && responses.len() < participants.required {
            return Err(CoordinatorError::Timeout {
                operation: "cas prepare",
                waited: started.elapsed(),
                received: responses.len(),
                required: participants.required,
            });
        }
        for (_, r) in &responses {
            summary.newest_seen = summary.newest_seen.max(r.in_progress.ballot).max(r.most_recent_commit.ballot);
            if r.most_recent_commit.is_after(&summary.most_recent_commit) {
                summary.most_recent_commit = r.most_recent_commit.clone();
            }
            if !r.in_progress.update.is_empty()
                && summary.in_progress.as_ref().is_none_or(|c| r.in_progress.is_after(c))
            {
                summary.in_progress = Some(r.in_progress.clone());
            }
        }
        let newest_commit = summary.most_recent_commit.ballot;
        summary.missing_commit =
            responses.iter().filter(|(_, r)| r.most_recent_commit.ballot < newest_commit).map(|(ep, _)| *ep).collect();
        Ok(summary)
    }

    /// Phase 2: true if a quorum accepted `proposal`, false if it was refused. For the cas's own
    /// proposal (`timeout_if_partial`), "refused" must be certain: a participant that accepted
    /// it, or may have (no answer, a failure), could let a later round finish it, so anything
    /// but a quorum of acceptances or a refusal by every participant is a timeout (the outcome is
    /// unknown). Cassandra answers some of those "not applied"; that could hide an applied cas.
    async fn propose(
        &self,
        keyspace: &str,
        cf: &str,
        key: &[u8],
        participants: &Participants,
        proposal: &Commit,
        timeout_if_partial: bool,
    ) -> Result<bool> {
        let started = Instant::now();
        let payload = messages_paxos::encode_request(&paxos_request(keyspace, cf, key, proposal.clone()));
        let mut answers = self.send(&participants.live, Verb::PaxosPropose, &payload);
        let (mut accepted, mut refused) = (0usize, 0usize);
        let total = participants.live.len();
        let quorum_impossible = |refused: usize| total.saturating_sub(refused) < participants.required;
        let deadline = tokio::time::sleep(self.settings.timeouts.write);
        tokio::pin!(deadline);
        while accepted < participants.required {
            // Without a quorum possible, only a repair (whose value is not ours) may stop early;
            // a cas waits to know whether anyone accepted.
            if quorum_impossible(refused) && (!timeout_if_partial || accepted > 0) {
                break;
            }
            tokio::select! {
                next = answers.next() => match next {
                    Some((ep, reply)) => match reply.map(|b| messages_paxos::decode_propose_response(&b)) {
                        Ok(Ok(true)) => accepted += 1,
                        Ok(Ok(false)) => refused += 1,
                        Ok(Err(e)) => debug!(%ep, error = %e, "bad paxos propose answer"),
                        Err(e) => debug!(%ep, error = %e, "paxos propose failed"),
                    },
                    None => break,
                },
                _ = &mut deadline => break,
            }
        }
        if accepted >= participants.required {
            return Ok(true);
        }
        if timeout_if_partial && refused < total {
            return Err(CoordinatorError::Timeout {
                operation: "cas",
                waited: started.elapsed(),
                received: accepted,
                required: participants.required,
            });
        }
        Ok(false)
    }

    /// Commits `commit` at every live replica (hints for the others) and waits for `level`
    /// (not at all for ANY).
    async fn commit(
        &self,
        keyspace: &str,
        cf: &str,
        key: &[u8],
        participants: &Participants,
        commit: &Commit,
        level: ConsistencyLevel,
    ) -> Result<()> {
        let started = Instant::now();
        let payload = messages_paxos::encode_request(&paxos_request(keyspace, cf, key, commit.clone()));
        let (live, down): (Vec<Endpoint>, Vec<Endpoint>) =
            participants.commit_targets.iter().partition(|ep| self.membership.is_alive(**ep));
        let mut answers = self.send(&live, Verb::PaxosCommit, &payload);
        if !down.is_empty() && !commit.update.is_empty() {
            let mut m = RowMutation::new(keyspace, key.to_vec());
            *m.row_mut(cf) = commit.update.clone();
            self.hint(&m, &down).await;
        }
        if level == ConsistencyLevel::Any {
            // Nobody waits; the answers arrive (or not) on their own.
            tokio::spawn(async move { while answers.next().await.is_some() {} });
            return Ok(());
        }
        let (def, _) = self.replicas_of(keyspace)?;
        let strategy =
            ReplicationStrategy::from_keyspace(&def).map_err(|e| CoordinatorError::Invalid(e.to_string()))?;
        let quota = quota(level, &strategy, self.local_dc(), participants.pending);
        let mut tracker = Tracker::new(&quota, &self.membership);
        let deadline = tokio::time::sleep(self.settings.timeouts.write);
        tokio::pin!(deadline);
        while !tracker.is_met() {
            tokio::select! {
                next = answers.next() => match next {
                    Some((ep, Ok(_))) => { tracker.ack(ep); }
                    Some((ep, Err(e))) => debug!(%ep, error = %e, "paxos commit failed"),
                    None => break,
                },
                _ = &mut deadline => break,
            }
        }
        if tracker.is_met() {
            return Ok(());
        }
        Err(CoordinatorError::Timeout {
            operation: "cas commit",
            waited: started.elapsed(),
            received: tracker.received(),
            required: quota.required(),
        })
    }

    /// Sends one Paxos verb to `targets`: the local replica is served by this node's engine on
    /// the executor, the others through messaging.
    fn send(&self, targets: &[Endpoint], verb: Verb, payload: &[u8]) -> FuturesUnordered<Answer<'static>> {
        let answers: FuturesUnordered<Answer<'static>> = FuturesUnordered::new();
        let local = self.membership.local();
        for ep in targets.iter().copied() {
            if ep == local {
                let storage = self.storage.clone();
                let payload = payload.to_vec();
                let executor = self.executor.clone();
                answers.push(Box::pin(async move {
                    let answer = match executor.run(move || paxos::serve(&storage, verb, &payload)).await {
                        Ok(Ok(bytes)) => Ok(bytes),
                        Ok(Err(reason)) => Err(super::read::failure("paxos", ep, &reason)),
                        Err(_) => Err(CoordinatorError::Storage(storage::StorageError::ShuttingDown)),
                    };
                    (ep, answer)
                }));
                continue;
            }
            match self.net() {
                Ok(net) => {
                    let reply = net.send_request(ep, verb, payload.to_vec());
                    answers.push(Box::pin(async move { (ep, reply.await.map_err(|e| request_error("paxos", ep, e))) }));
                }
                Err(e) => {
                    let reason = e.to_string();
                    answers.push(Box::pin(async move { (ep, Err(super::read::failure("paxos", ep, &reason))) }));
                }
            }
        }
        answers
    }

    fn cas_timeout(&self, serial: ConsistencyLevel, participants: &Participants, started: Instant) -> CoordinatorError {
        debug!(%serial, "cas: contention timeout");
        CoordinatorError::Timeout {
            operation: "cas",
            waited: started.elapsed(),
            received: 0,
            required: participants.required,
        }
    }
}

/// Scans cannot be serial: Paxos orders the rounds of one partition only.
pub(super) fn refuse_serial_scan(cl: ConsistencyLevel) -> Result<()> {
    if cl.is_serial() {
        return Err(CoordinatorError::Invalid(
            "SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time".into(),
        ));
    }
    Ok(())
}

fn paxos_request(keyspace: &str, cf: &str, key: &[u8], commit: Commit) -> PaxosRequest {
    PaxosRequest { keyspace: keyspace.to_string(), cf: cf.to_string(), key: key.to_vec(), commit }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::tests::single_node;

    fn cell(name: &str, value: &str) -> Cell {
        Cell::live(name, value, 1)
    }

    fn expect(name: &str, value: Option<&str>) -> Expected {
        Expected { name: name.into(), value: value.map(Into::into) }
    }

    #[test]
    fn comparison_follows_cassandra() {
        // Nothing expected: applies only to an empty partition.
        assert!(applies_to(&[], &[]));
        assert!(!applies_to(&[], &[cell("a", "1")]));
        // Values must match exactly and be present.
        let e = [expect("a", Some("1")), expect("b", Some("2"))];
        assert!(applies_to(&e, &[cell("a", "1"), cell("b", "2")]));
        assert!(!applies_to(&e, &[cell("a", "1")]));
        assert!(!applies_to(&e, &[cell("a", "1"), cell("b", "3")]));
        assert!(!applies_to(&e, &[]));
        // A column expected without a value must be absent.
        let e = [expect("a", Some("1")), expect("b", None)];
        assert!(applies_to(&e, &[cell("a", "1")]));
        assert!(!applies_to(&e, &[cell("a", "1"), cell("b", "2")]));
        assert!(applies_to(&[expect("b", None)], &[]));
        assert!(!applies_to(&[expect("b", None)], &[cell("b", "")]));
    }

    fn command(expected: Vec<Expected>, name: &str, value: &str) -> CasCommand {
        let mut updates = Row::new();
        updates.cells.push(cell(name, value));
        let condition = CasCondition::Expected(expected);
        CasCommand { keyspace: "ks".into(), cf: "cf".into(), key: b"k".to_vec(), condition, updates }
    }

    fn serial_read(name: &str) -> ReadCommand {
        ReadCommand {
            keyspace: "ks".into(),
            cf: "cf".into(),
            key: b"k".to_vec(),
            filter: ReadFilter::slice(name.into(), name.into(), false, 10, CountUnit::Cells),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rounds_on_one_node_compare_apply_and_finish_what_was_left() {
        use ConsistencyLevel::{LocalSerial, One, Quorum, Serial};
        let dir = tempfile::tempdir().expect("tempdir");
        let (storage, c) = single_node(dir.path());
        assert_eq!(c.cas(command(vec![], "a", "1"), Serial, Quorum).await.expect("cas"), CasOutcome::Applied);
        let refused = c.cas(command(vec![], "a", "2"), Serial, Quorum).await.expect("cas");
        assert_eq!(refused, CasOutcome::NotApplied { current: vec![cell_at("a", "1", &refused)] });
        let e = vec![expect("a", Some("1"))];
        assert_eq!(c.cas(command(e, "a", "3"), LocalSerial, One).await.expect("cas"), CasOutcome::Applied);
        assert!(matches!(c.cas(command(vec![], "a", "4"), Quorum, Quorum).await, Err(CoordinatorError::Invalid(_))));

        // A proposal a quorum accepted but whose commit never came: the next round finishes it
        // before its own, so a serial read sees it and a cas compares with it.
        let left = Commit::proposal(Ballot::next(0), command(vec![], "a", "left").updates);
        let request = paxos_request("ks", "cf", b"k", left.clone());
        assert!(crate::paxos::propose(&storage, &request).expect("accepted"));
        let seen = c.read(vec![serial_read("a")], Serial).await.expect("serial read");
        assert_eq!(seen.first().and_then(|cells| cells.first()).map(|c| c.value.clone()), Some(b"left".to_vec()));
        let e = vec![expect("a", Some("left"))];
        assert_eq!(c.cas(command(e, "a", "5"), Serial, Quorum).await.expect("cas"), CasOutcome::Applied);
        let record = storage.paxos_state("ks", "cf", b"k").expect("state");
        assert!(record.in_progress().is_none(), "every round is committed");
        let two = vec![serial_read("a"), serial_read("b")];
        assert!(matches!(c.read(two, Serial).await, Err(CoordinatorError::Invalid(_))));
    }

    /// `name` = `value` with the timestamp the answer carries (the ballot's time).
    fn cell_at(name: &str, value: &str, outcome: &CasOutcome) -> Cell {
        let timestamp = match outcome {
            CasOutcome::NotApplied { current } => current.first().map_or(0, |c| c.timestamp),
            CasOutcome::Applied => 0,
        };
        Cell::live(name, value, timestamp)
    }

    #[test]
    fn levels_are_checked_as_cassandra_does() {
        assert!(validate_for_cas(ConsistencyLevel::Serial).is_ok());
        assert!(validate_for_cas(ConsistencyLevel::LocalSerial).is_ok());
        assert!(validate_for_cas(ConsistencyLevel::Quorum).is_err());
        assert!(validate_for_cas_commit(ConsistencyLevel::Serial).is_err());
        assert!(validate_for_cas_commit(ConsistencyLevel::Any).is_ok());
        assert!(validate_for_cas_commit(ConsistencyLevel::Quorum).is_ok());
        assert_eq!(read_level(ConsistencyLevel::LocalSerial), ConsistencyLevel::LocalQuorum);
        assert_eq!(read_level(ConsistencyLevel::Serial), ConsistencyLevel::Quorum);
    }
}
