//! Writes: every mutation goes to all its live replicas (natural and pending); the coordinator
//! answers once enough acknowledged for the consistency level, or fails with Unavailable (before
//! anything is sent) or Timeout.

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use futures::stream::{FuturesUnordered, StreamExt};
use model::dht::Token;
use model::mutation::RowMutation;
use smallvec::{smallvec, SmallVec};

use super::plan::{check_alive, only_local_meets, quota, write_targets, Quota, Tracker, WriteTargets};
use super::{Coordinator, CoordinatorError, Result};
use crate::consistency::ConsistencyLevel;
use crate::messages;
use crate::replica::LocalWrite;
use crate::trace::trace;
use crate::Endpoint;
use membership::locator::replication::ReplicationStrategy;
use messaging::Verb;

/// One replica's acknowledgement of mutation `.0`.
type Ack<'a> = Pin<Box<dyn Future<Output = (usize, Endpoint, bool)> + Send + 'a>>;

/// A mutation with where it goes and how many must acknowledge it.
pub(super) struct Planned {
    pub mutation: RowMutation,
    /// The key's token, computed once for placement and the local write.
    pub token: Token,
    pub targets: WriteTargets,
    pub quota: Quota,
}

impl Coordinator {
    /// Applies `mutations` and returns once `cl` is met for each of them. Every mutation's
    /// replicas are checked for availability before anything is applied.
    pub async fn mutate(&self, mutations: Vec<RowMutation>, cl: ConsistencyLevel) -> Result<()> {
        cl.validate_for_write().map_err(CoordinatorError::Invalid)?;
        let planned = self.plan_writes(mutations, cl)?;
        let local = self.membership.local();
        if planned.iter().all(|p| p.targets.alive.as_slice() == [local] && p.targets.down.is_empty()) {
            trace(|| format!("Applying {} mutation(s) locally: this node is their only replica", planned.len()));
            self.apply_locally(planned).await?;
            trace(|| "Local write acknowledged".into());
            return Ok(());
        }
        self.write_to_replicas(planned, cl).await
    }

    pub(super) fn plan_writes(&self, mutations: Vec<RowMutation>, cl: ConsistencyLevel) -> Result<Vec<Planned>> {
        let local_dc = self.local_dc();
        // The placement of the previous mutation's keyspace (nearly always every mutation's).
        let mut placement: Option<std::sync::Arc<super::Placement>> = None;
        let mut planned: Vec<Planned> = Vec::with_capacity(mutations.len());
        // Read once per call: a live peer that has not yet said where it stands in the ring.
        let awaiting_placement = self.membership.awaiting_placement();
        for mutation in mutations {
            let same_keyspace = planned.last().is_some_and(|p| p.mutation.keyspace == mutation.keyspace);
            let placement = match &placement {
                Some(p) if same_keyspace => p.clone(),
                _ => placement.insert(self.placement(&mutation.keyspace)?).clone(),
            };
            let (map, strategy) = (&placement.map, &placement.strategy);
            if awaiting_placement && *strategy != ReplicationStrategy::Local {
                return Err(self.unplaceable(cl, &mutation.keyspace));
            }
            let token = self.token_of(&mutation.key)?;
            if placement.local_only {
                let quota = quota(cl, strategy, local_dc, 0);
                if cl != ConsistencyLevel::Any {
                    only_local_meets(cl, &quota)?;
                }
                let targets = WriteTargets { alive: smallvec![self.membership.local()], down: Vec::new(), pending: 0 };
                planned.push(Planned { mutation, token, targets, quota });
                continue;
            }
            let targets = write_targets(map, &token, &self.membership);
            let quota = quota(cl, strategy, local_dc, targets.pending);
            check_alive(cl, &quota, &targets.alive, &self.membership)?;
            if cl == ConsistencyLevel::Any && targets.alive.is_empty() && !self.hinted_handoff_enabled() {
                // ANY is met by a hint, and none may be written.
                return Err(CoordinatorError::Unavailable { cl, required: 1, alive: 0 });
            }
            planned.push(Planned { mutation, token, targets, quota });
        }
        Ok(planned)
    }

    /// A write refused because a live peer has not yet said where it stands in the ring: it may
    /// be taking the key's range, and a write stored without it could be where no reader looks
    /// once it has. Unavailable, which clients retry; the wait is a gossip round or two.
    pub(super) fn unplaceable(&self, cl: ConsistencyLevel, keyspace: &str) -> CoordinatorError {
        tracing::debug!(keyspace, "write refused: a live node's place in the ring is not known yet");
        trace(|| "Unavailable: a live node's place in the ring is not known yet".into());
        CoordinatorError::Unavailable { cl, required: 1, alive: 0 }
    }

    /// Every replica is this node: apply here, acknowledged once the commit log holds it as its
    /// sync mode promises. (Takes the plans whole: collecting (mutation, token) pairs out of them
    /// reallocated the vector on every request.)
    async fn apply_locally(&self, planned: Vec<Planned>) -> Result<()> {
        // Inline for the usual batch of one row: no list is allocated for its acknowledgement.
        let mut pending: SmallVec<[LocalWrite; 1]> = SmallVec::with_capacity(planned.len());
        for p in planned {
            pending.push(LocalWrite::start(&self.storage, &self.executor, p.mutation, p.token)?);
        }
        if pending.iter().any(LocalWrite::is_pending) {
            // Let the loop's other connections queue their records first: the first of them to
            // await its acknowledgement then writes them all with one write(2).
            crate::turn::yield_to_ready_tasks().await;
            for write in pending {
                write.finish().await?;
            }
        }
        Ok(())
    }

    /// Sends each mutation to its live replicas and waits until each one's quota is met. A
    /// remote replica that fails to acknowledge, or has not answered by the write timeout, gets
    /// a hint, as Cassandra 1.0+ hints on an expired write callback: the write's answer does not
    /// wait for that (it comes once the level is met), the hint is kept in the background.
    async fn write_to_replicas(&self, planned: Vec<Planned>, cl: ConsistencyLevel) -> Result<()> {
        let started = Instant::now();
        let local = self.membership.local();
        let mut acks: FuturesUnordered<Ack<'_>> = FuturesUnordered::new();
        // Remote acknowledgements own their futures, so they can be waited for after the
        // answer, to hint the replicas that never acknowledge.
        let mut remote: FuturesUnordered<Ack<'static>> = FuturesUnordered::new();
        let mut unanswered: Vec<(usize, Endpoint)> = Vec::new();
        for (i, p) in planned.iter().enumerate() {
            for ep in &p.targets.alive {
                if *ep == local {
                    acks.push(self.local_ack(i, p.mutation.clone(), p.token.clone()));
                } else {
                    let reply = self.net()?.send_request(*ep, Verb::Mutation, messages::encode_mutation(&p.mutation));
                    let ep = *ep;
                    remote.push(Box::pin(async move { (i, ep, reply.await.is_ok()) }));
                    unanswered.push((i, ep));
                }
            }
        }
        let mut trackers: Vec<Tracker<'_>> = planned.iter().map(|p| Tracker::new(&p.quota, &self.membership)).collect();
        for (i, p) in planned.iter().enumerate() {
            let hinted = self.hint(&p.mutation, &p.targets.down).await;
            if hinted && cl == ConsistencyLevel::Any {
                if let Some(t) = trackers.get_mut(i) {
                    t.ack(local);
                }
            }
        }
        trace(|| {
            let replicas: std::collections::BTreeSet<&Endpoint> =
                planned.iter().flat_map(|p| &p.targets.alive).collect();
            format!("Sent {} mutation(s) to replicas {replicas:?}", planned.len())
        });
        let mut unmet = trackers.iter().filter(|t| !t.is_met()).count();
        if planned.iter().any(|p| p.targets.alive.contains(&local)) {
            // As in apply_locally: let the loop's other connections queue their commit log
            // records before ours is awaited, so one write(2) carries them all. Without this every
            // coordinated write cost a write(2) of its own (measured: one 178-byte write per op).
            crate::turn::yield_to_ready_tasks().await;
        }
        let mut failed: Vec<(usize, Endpoint)> = Vec::new();
        let deadline = tokio::time::sleep(self.settings.timeouts.write);
        tokio::pin!(deadline);
        while unmet > 0 && !(acks.is_empty() && remote.is_empty()) {
            let next = tokio::select! {
                next = acks.next(), if !acks.is_empty() => next,
                next = remote.next(), if !remote.is_empty() => {
                    if let Some((i, from, _)) = next {
                        unanswered.retain(|u| *u != (i, from));
                    }
                    next
                }
                _ = &mut deadline => break,
            };
            match next {
                Some((i, from, true)) => {
                    if let Some(t) = trackers.get_mut(i) {
                        let was_met = t.is_met();
                        if t.ack(from) && !was_met {
                            unmet -= 1;
                        }
                    }
                }
                Some((i, from, false)) if from != local => failed.push((i, from)),
                Some(_) | None => {}
            }
        }
        let outcome = if unmet == 0 {
            trace(|| format!("Consistency level {cl} met for every mutation"));
            Ok(())
        } else {
            trace(|| format!("Write timed out: {unmet} mutation(s) short of consistency level {cl}"));
            // The worst-off mutation decides what the client hears.
            let (received, required) = trackers
                .iter()
                .zip(&planned)
                .filter(|(t, _)| !t.is_met())
                .map(|(t, p)| (t.received(), p.quota.required()))
                .min()
                .unwrap_or((0, 0));
            Err(CoordinatorError::Timeout { operation: "write", waited: started.elapsed(), received, required })
        };
        drop(trackers);
        if (!failed.is_empty() || !unanswered.is_empty()) && self.hinted_handoff_enabled() {
            let left = self.settings.timeouts.write.saturating_sub(started.elapsed());
            let mutations: Vec<RowMutation> = planned.into_iter().map(|p| p.mutation).collect();
            tokio::spawn(hint_unacknowledged(self.storage.clone(), mutations, failed, unanswered, remote, left));
        }
        outcome
    }

    /// Keeps `mutation` as a hint for each replica of `down` that may still get one (hinted
    /// handoff on, and down for less than the hint window); true if one was kept.
    pub(super) async fn hint(&self, mutation: &RowMutation, down: &[Endpoint]) -> bool {
        if !self.hinted_handoff_enabled() {
            return false;
        }
        let mut hinted = false;
        for ep in down {
            if self.membership.down_for(*ep).is_some_and(|d| d > self.settings.max_hint_window) {
                continue;
            }
            let (target, m) = (crate::hints::target_key(*ep), mutation.clone());
            match self.blocking(move |storage| Ok(storage.store_hint(&target, &m)?)).await {
                Ok(()) => hinted = true,
                Err(e) => tracing::warn!(%ep, error = %e, "cannot keep a hint"),
            }
        }
        hinted
    }

    /// This node's acknowledgement of mutation `i`.
    fn local_ack(&self, i: usize, mutation: RowMutation, token: Token) -> Ack<'static> {
        let local = self.membership.local();
        let write = LocalWrite::start(&self.storage, &self.executor, mutation, token);
        Box::pin(async move {
            let result = match write {
                Ok(write) => write.finish().await,
                Err(e) => Err(e),
            };
            match result {
                Ok(()) => (i, local, true),
                // Refusals while flushes fail come once per write; the flush's own error is logged.
                Err(e @ storage::StorageError::FlushFailing { .. }) => {
                    tracing::debug!(error = %e, "local write refused");
                    (i, local, false)
                }
                Err(e) => {
                    tracing::warn!(error = %e, "local write failed");
                    (i, local, false)
                }
            }
        })
    }

    /// Removes every row of a column family on every node of the ring; all must be up.
    pub async fn truncate(&self, keyspace: &str, cf: &str) -> Result<()> {
        let started = Instant::now();
        let local = self.membership.local();
        let members: Vec<Endpoint> = self.membership.ring().endpoints().collect();
        let down: Vec<Endpoint> = members.iter().copied().filter(|ep| !self.membership.is_alive(*ep)).collect();
        if !down.is_empty() {
            return Err(CoordinatorError::Unavailable {
                cl: ConsistencyLevel::All,
                required: members.len(),
                alive: members.len() - down.len(),
            });
        }
        let mut acks: FuturesUnordered<Pin<Box<dyn Future<Output = bool> + Send>>> = FuturesUnordered::new();
        for ep in members.iter().copied().filter(|ep| *ep != local) {
            let reply = self.net()?.send_request(ep, Verb::Truncate, messages::encode_truncate(keyspace, cf));
            acks.push(Box::pin(async move { reply.await.is_ok() }));
        }
        let (ks, name) = (keyspace.to_string(), cf.to_string());
        self.blocking(move |storage| Ok(storage.truncate(&ks, &name)?)).await?;
        let mut received = 1;
        let deadline = tokio::time::sleep(self.settings.timeouts.truncate);
        tokio::pin!(deadline);
        while received < members.len().max(1) {
            tokio::select! {
                next = acks.next() => match next {
                    Some(true) => received += 1,
                    Some(false) | None => break,
                },
                _ = &mut deadline => break,
            }
        }
        if received >= members.len().max(1) {
            return Ok(());
        }
        Err(CoordinatorError::Timeout {
            operation: "truncate",
            waited: started.elapsed(),
            received,
            required: members.len(),
        })
    }
}

/// After a write answered: waits, at most `left`, for the remote acknowledgements still
/// outstanding (`unanswered`), and keeps a hint of its mutation for every replica that failed
/// to acknowledge (`failed`, and those answering with a failure) or did not answer in time.
async fn hint_unacknowledged(
    storage: storage::engine::Storage,
    mutations: Vec<RowMutation>,
    mut failed: Vec<(usize, Endpoint)>,
    mut unanswered: Vec<(usize, Endpoint)>,
    mut remote: FuturesUnordered<Ack<'static>>,
    left: std::time::Duration,
) {
    let deadline = tokio::time::sleep(left);
    tokio::pin!(deadline);
    while !unanswered.is_empty() {
        tokio::select! {
            next = remote.next() => match next {
                Some((i, ep, ok)) => {
                    unanswered.retain(|u| *u != (i, ep));
                    if !ok {
                        failed.push((i, ep));
                    }
                }
                None => break,
            },
            _ = &mut deadline => break,
        }
    }
    failed.append(&mut unanswered);
    let kept = tokio::task::spawn_blocking(move || {
        let mut kept = 0usize;
        for (i, ep) in failed {
            let Some(mutation) = mutations.get(i) else { continue };
            match storage.store_hint(&crate::hints::target_key(ep), mutation) {
                Ok(()) => kept += 1,
                Err(e) => tracing::warn!(%ep, error = %e, "cannot keep a hint for a replica that did not acknowledge"),
            }
        }
        kept
    })
    .await
    .unwrap_or(0);
    if kept > 0 {
        tracing::debug!(hints = kept, "kept hints for replicas that did not acknowledge a write");
    }
}
