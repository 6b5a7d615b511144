//! Counter writes (Cassandra 2.1+'s leader-based path, `StorageProxy.mutateCounter`).
//!
//! An increment is a delta, and a delta cannot be applied twice safely; so it is sent to one
//! live replica only, the leader (this node when it is a replica, else the nearest live one),
//! with the CounterMutation verb. The leader, under a per-counter lock, turns the delta into its
//! own new absolute shard and writes that locally as an ordinary mutation
//! ([`storage::engine::Storage::lead_counter_write`]), then sends the resulting counter cells to
//! the other replicas as an ordinary Mutation and answers once the consistency level is met,
//! itself counting as one. Every copy anywhere then holds absolute shards, which merge by clock.
//!
//! Deletions of counters (`remove_counter`) are not increments: they take the ordinary write
//! path ([`Coordinator::mutate`]).
//!
//! The leader's side of the verb, the handler that runs [`Coordinator::lead_counter_write`] for
//! another coordinator, is [`leader`].

pub mod leader;

use std::time::Instant;

use futures::stream::{FuturesUnordered, StreamExt};
use model::mutation::RowMutation;

use super::plan::Tracker;
use super::{Coordinator, CoordinatorError, Result};
use crate::consistency::ConsistencyLevel;
use crate::messages;
use messaging::{RequestError, Verb};

impl Coordinator {
    /// Applies counter increments (mutations whose counter cells are
    /// [`model::data::CellKind::CounterUpdate`]s), each through its leader, and returns once
    /// `cl` is met for each.
    pub async fn mutate_counters(&self, mutations: Vec<RowMutation>, cl: ConsistencyLevel) -> Result<()> {
        if cl == ConsistencyLevel::Any {
            let cf = mutations.first().and_then(|m| m.updates.first()).map_or("", |(cf, _)| cf.as_str());
            return Err(CoordinatorError::Invalid(format!(
                "Consistency level ANY is not yet supported for counter table {cf}"
            )));
        }
        if cl.is_serial() {
            return Err(CoordinatorError::Invalid("Counter operations are inherently non-serializable".into()));
        }
        // Every mutation's replicas are checked before any increment is sent.
        let planned = self.plan_writes(mutations, cl)?;
        let local = self.membership.local();
        let mut writes = FuturesUnordered::new();
        for p in planned {
            let leader = if p.targets.alive.contains(&local) {
                local
            } else {
                let mut alive = p.targets.alive.to_vec();
                self.membership.snitch().sort_by_proximity(local, &mut alive);
                match alive.first() {
                    Some(ep) => *ep,
                    None => return Err(CoordinatorError::Unavailable { cl, required: p.quota.required(), alive: 0 }),
                }
            };
            let required = p.quota.required();
            writes.push(async move {
                if leader == local {
                    return self.lead_counter_write(p.mutation, cl).await;
                }
                let started = Instant::now();
                let reply = self.net()?.send_request(
                    leader,
                    Verb::CounterMutation,
                    messages::encode_counter_mutation(&p.mutation, cl),
                );
                match reply.await {
                    Ok(_) => Ok(()),
                    // Whatever went wrong at the leader, the increment may have been applied:
                    // the client must hear a timeout, never a failure it would retry blindly.
                    Err(e @ (RequestError::Timeout { .. } | RequestError::Failure { .. })) => {
                        tracing::debug!(%leader, error = %e, "counter write not acknowledged by its leader");
                        Err(CoordinatorError::Timeout {
                            operation: "counter write",
                            waited: started.elapsed(),
                            received: 0,
                            required,
                        })
                    }
                    Err(e) => Err(CoordinatorError::ReplicaFailure {
                        operation: "counter write",
                        endpoint: leader,
                        reason: e.to_string(),
                    }),
                }
            });
        }
        while let Some(done) = writes.next().await {
            done?;
        }
        Ok(())
    }

    /// The leader's part: applies `m`'s increments here as absolute shards, then sends the result
    /// to the other replicas and returns once `cl` is met (this node counts as one).
    pub async fn lead_counter_write(&self, m: RowMutation, cl: ConsistencyLevel) -> Result<()> {
        let started = Instant::now();
        let led = if self.storage.writes_may_block() {
            self.blocking(move |storage| Ok(storage.lead_counter_write(m)?)).await?
        } else {
            let (led, durable) = self.storage.lead_counter_write_deferred(m)?;
            durable.await?;
            led
        };
        let local = self.membership.local();
        let mut planned = self.plan_writes(vec![led], cl)?;
        let Some(p) = planned.pop() else { return Ok(()) };
        let mut tracker = Tracker::new(&p.quota, &self.membership);
        if tracker.ack(local) {
            // Still send to the others (they must converge), but do not wait for them: the
            // message is queued when sent, and its reply is of no use.
            for ep in p.targets.alive.iter().filter(|ep| **ep != local) {
                drop(self.net()?.send_request(*ep, Verb::Mutation, messages::encode_mutation(&p.mutation)));
            }
            self.hint(&p.mutation, &p.targets.down).await;
            return Ok(());
        }
        let mut acks = FuturesUnordered::new();
        for ep in p.targets.alive.iter().copied().filter(|ep| *ep != local) {
            let reply = self.net()?.send_request(ep, Verb::Mutation, messages::encode_mutation(&p.mutation));
            acks.push(async move { (ep, reply.await.is_ok()) });
        }
        self.hint(&p.mutation, &p.targets.down).await;
        let deadline = tokio::time::sleep(self.settings.timeouts.write);
        tokio::pin!(deadline);
        while !tracker.is_met() {
            tokio::select! {
                next = acks.next() => match next {
                    Some((from, true)) => {
                        tracker.ack(from);
                    }
                    Some((_, false)) => {}
                    None => break,
                },
                _ = &mut deadline => break,
            }
        }
        if tracker.is_met() {
            // The slower replicas were sent the write; nobody waits for their answers.
            return Ok(());
        }
        Err(CoordinatorError::Timeout {
            operation: "counter write",
            waited: started.elapsed(),
            received: tracker.received(),
            required: p.quota.required(),
        })
    }
}
