//! A node leaving the ring: the data of every range it replicates goes to the node that takes
//! that range over. Decommission (`sibyltool decommission`): the node leaves by itself and
//! sends its own data. Removenode (`sibyltool removenode`): another node removes a dead one, and
//! the data comes from the range's other live replicas.
//!
//! The ranges and their new replicas are the pending ranges of the ring with the node marked
//! leaving (Cassandra's `calculatePendingRanges`). Each range's partitions are read and written
//! to its new replica page by page ([`Coordinator::sync_range`]); Cassandra streams SSTable
//! sections instead. Writes made meanwhile reach the new replicas as pending writes, since every
//! node has heard that the node is leaving (LEAVING, or REMOVING for a dead one) before the
//! handover starts.
//!
//! The two sequences, [`Coordinator::decommission`] and [`Coordinator::remove_node`], are here
//! too, next to the data movement they drive; what they share with move is in
//! [`super::ring_change`].

use model::dht::Range;
use storage::is_builtin_keyspace;
use tracing::{info, warn};

use super::operation::{OperationEvent, OperationMode, Report};
use super::ring_change::{back_to_normal, check_gossiping, wait_for_the_ring, RingChangeError, StepFailure};
use super::{Coordinator, CoordinatorError, Result, SyncReport};
use crate::hints::{hand_over_hints, HintHandover};
use crate::storage_service::StorageService;
use crate::Endpoint;
use membership::locator::replication::{ReplicaMap, ReplicationStrategy};
use membership::locator::token_metadata::TokenMetadata;

/// A range of a keyspace, a node that will replicate it once a node has left or moved, and where
/// its data is read from: the leaving or moving node itself when it replicates the range and is
/// this one (decommission, move), else the range's other live replicas (removenode, or a range a
/// moving node takes; none when the leaving node was the only replica, and its data is lost).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub keyspace: String,
    pub range: Range,
    pub to: Endpoint,
    pub from: Vec<Endpoint>,
}

/// A pending range of one keyspace: who takes it, and who replicates it now.
pub(super) struct PendingChange {
    pub keyspace: String,
    pub range: Range,
    pub to: Endpoint,
    pub replicas: Vec<Endpoint>,
}

impl Coordinator {
    /// What must move for `leaving` to leave the ring, for every non-system keyspace: the
    /// pending ranges of the ring with `leaving` marked leaving (Cassandra's
    /// `calculatePendingRanges`) that it replicates now.
    pub fn transfers_for_leaving(&self, leaving: Endpoint) -> Result<Vec<Transfer>> {
        let local = self.membership.local();
        let mut ring = (*self.membership.ring()).clone();
        ring.add_leaving_endpoint(leaving);
        let mut transfers = Vec::new();
        for pending in self.pending_changes(&ring)? {
            // Only what the leaving node holds: another node's join may be pending too.
            if !pending.replicas.contains(&leaving) {
                continue;
            }
            let from = if leaving == local {
                vec![local]
            } else {
                pending.replicas.iter().copied().filter(|ep| *ep != leaving && self.membership.is_alive(*ep)).collect()
            };
            transfers.push(Transfer { keyspace: pending.keyspace, range: pending.range, to: pending.to, from });
        }
        Ok(transfers)
    }

    /// Every pending range of `ring` (the ring now, with a join, leave or move marked) in every
    /// non-system keyspace, with the node taking it and the range's replicas now.
    pub(super) fn pending_changes(&self, ring: &TokenMetadata) -> Result<Vec<PendingChange>> {
        let local = self.membership.local();
        let snitch = self.membership.snitch().clone();
        let mut changes = Vec::new();
        for ks in self.storage.schema().keyspaces.values().filter(|k| !is_builtin_keyspace(&k.name)) {
            let strategy =
                ReplicationStrategy::from_keyspace(ks).map_err(|e| CoordinatorError::Invalid(e.to_string()))?;
            let now = self.placement(&ks.name)?;
            let during = ReplicaMap::build(&strategy, ring, &*snitch, local);
            for (range, to) in during.pending_ranges() {
                changes.push(PendingChange {
                    keyspace: ks.name.clone(),
                    range: range.clone(),
                    to: *to,
                    replicas: now.map.endpoints_for(&range.right).to_vec(),
                });
            }
        }
        Ok(changes)
    }

    /// Writes the data of `transfer.range` (every column family of its keyspace), read from
    /// `transfer.from`, to `transfer.to`; `progress` hears of each column family.
    pub async fn hand_over(&self, transfer: &Transfer, mut progress: impl FnMut(String)) -> Result<SyncReport> {
        let partitioner = self.partitioner();
        let ks = self.storage.keyspace(&transfer.keyspace).ok_or_else(|| {
            CoordinatorError::Invalid(format!("keyspace {} was dropped during the handover", transfer.keyspace))
        })?;
        let mut total = SyncReport::default();
        for cf in &ks.cf_defs {
            progress(format!(
                "sending {}.{} {} to {}",
                ks.name,
                cf.name,
                partitioner.range_to_string(&transfer.range),
                transfer.to.ip()
            ));
            let report = self.sync_range(&ks.name, &cf.name, &transfer.range, &transfer.from, &[transfer.to]).await?;
            total.partitions += report.partitions;
            total.writes += report.writes;
        }
        Ok(total)
    }
}

/// What a decommission did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecommissionOutcome {
    /// Ranges handed over, one per keyspace and range.
    pub transfers: usize,
    pub partitions: u64,
    pub hints: HintHandover,
}

/// What a removenode did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemovalOutcome {
    pub removed: Endpoint,
    /// Ranges restored on their new replicas, or lost.
    pub transfers: usize,
    pub partitions: u64,
    /// Ranges whose only replica was the dead node: their data is gone.
    pub lost_ranges: u64,
}

impl Coordinator {
    /// Hands this node's ranges over and leaves the ring (Cassandra's `nodetool decommission`):
    /// announces LEAVING and waits `RingDelayInMillis` (from then on every coordinator also
    /// writes these ranges to the nodes taking them), sends each range's data to its new
    /// replica, hands the hints it keeps over, announces LEFT and waits again for the ring to
    /// hear it, stops gossiping, forgets its tokens and stops the engine as drain does.
    /// `progress` hears of each step and mode. Refused alone in the ring, while another node
    /// joins, leaves or moves, or when a node that would take a range is down; a failed
    /// handover announces NORMAL again.
    pub async fn decommission(
        &self,
        service: &StorageService,
        progress: impl FnMut(OperationEvent),
    ) -> Result<DecommissionOutcome, RingChangeError> {
        const OP: &str = "decommission";
        let mut report = Report(progress);
        check_gossiping(service, OP)?;
        let partitioner = self.partitioner();
        let local = self.membership.local();
        if !self.membership.ring().sorted_owners().iter().any(|ep| *ep != local) {
            return Err(RingChangeError::LastNode);
        }
        let transfers = self.transfers_with_takers_up(OP, local)?;
        report.mode(OperationMode::Leaving);
        service.announce_leaving();
        let total = transfers.len() as u64 + 3;
        wait_for_the_ring(service, &mut report, 0, total, "announced LEAVING").await;
        let mut partitions = 0;
        for (i, transfer) in transfers.iter().enumerate() {
            let range = partitioner.range_to_string(&transfer.range);
            let what = format!("sending {} {range} to {}", transfer.keyspace, transfer.to.ip());
            match self.hand_over_step(OP, transfer, &mut report, (i as u64 + 1, total), what).await {
                Ok(done) => partitions += done.partitions,
                Err(e) => {
                    let stopped = RingChangeError::DecommissionStopped(StepFailure::Transfer(e));
                    return Err(back_to_normal(service, &mut report, stopped));
                }
            }
        }
        // The hints this node keeps go too: some are a write's only copy (consistency ANY).
        report.once(total - 2, total, "handing over hints".into());
        let messaging = self.messaging().ok_or(RingChangeError::NoMessaging { op: OP })?;
        let handed = hand_over_hints(&self.storage, messaging, &self.membership, |what| info!("{OP}: {what}")).await;
        let hints = match handed {
            Ok(hints) => hints,
            Err(e) => {
                let stopped = RingChangeError::DecommissionStopped(StepFailure::Hints(e));
                return Err(back_to_normal(service, &mut report, stopped));
            }
        };
        service.announce_left();
        wait_for_the_ring(service, &mut report, total - 1, total, "announced LEFT").await;
        service.stop_after_leaving();
        report.mode(OperationMode::Decommissioned);
        self.storage.save_tokens(Vec::new()).map_err(RingChangeError::Storage)?;
        let flushed = self.flush_all(&mut report).await?;
        self.stop_engine(&mut report, flushed.len() as u64).await?;
        report.once(total, total, "decommissioned".into());
        info!(transfers = transfers.len(), partitions, "decommissioned: this node left the ring");
        Ok(DecommissionOutcome { transfers: transfers.len(), partitions, hints })
    }

    /// Removes a dead node from the ring (Cassandra's `nodetool removenode`, 0.6's
    /// removetoken): `which` is its address, host id or one of its tokens. Announces it
    /// REMOVING and waits `RingDelayInMillis` (from then on every coordinator also writes its
    /// ranges to the nodes taking them), writes each range it replicated, read from the range's
    /// other live replicas, to its new replica, then announces it REMOVED: every node drops it.
    /// `progress` hears of each step. Refused for this node, a live node, while another node
    /// joins, leaves or moves, or when a node that would take a range is down; a range whose
    /// only replica was the dead node is counted as lost. A failed transfer leaves it REMOVING:
    /// run removenode again.
    pub async fn remove_node(
        &self,
        service: &StorageService,
        which: &str,
        progress: impl FnMut(OperationEvent),
    ) -> Result<RemovalOutcome, RingChangeError> {
        const OP: &str = "removenode";
        let mut report = Report(progress);
        check_gossiping(service, OP)?;
        let membership = &self.membership;
        let partitioner = self.partitioner();
        let ring = membership.ring();
        let matches = |ep: &Endpoint| {
            ep.ip().to_string() == which
                || ep.to_string() == which
                || membership.peer(*ep).and_then(|p| p.host_id).is_some_and(|id| id == which)
                || ring.tokens_of(*ep).iter().any(|t| partitioner.token_to_string(t) == which)
        };
        let Some(dead) = ring.sorted_owners().iter().copied().find(matches) else {
            return Err(RingChangeError::NoSuchNode { which: which.into() });
        };
        if dead == membership.local() {
            return Err(RingChangeError::ThisNode { which: which.into() });
        }
        if membership.is_alive(dead) {
            return Err(RingChangeError::NodeUp { node: dead });
        }
        let transfers = self.transfers_with_takers_up(OP, dead)?;
        if !service.advertise_removal(dead, false) {
            return Err(RingChangeError::NotADeadPeer { node: dead });
        }
        let total = transfers.len() as u64 + 2;
        wait_for_the_ring(service, &mut report, 0, total, &format!("announced {} REMOVING", dead.ip())).await;
        let (mut partitions, mut lost) = (0, 0);
        for (i, transfer) in transfers.iter().enumerate() {
            let range = format!("{} {}", transfer.keyspace, partitioner.range_to_string(&transfer.range));
            if transfer.from.is_empty() {
                warn!("{OP}: {range} had no replica but {}: its data is lost", dead.ip());
                lost += 1;
                continue;
            }
            let what = format!("restoring {range} on {}", transfer.to.ip());
            let done = self
                .hand_over_step(OP, transfer, &mut report, (i as u64 + 1, total), what)
                .await
                .map_err(|e| RingChangeError::RemovalStopped { node: dead, source: Box::new(e) })?;
            partitions += done.partitions;
        }
        service.advertise_removal(dead, true);
        report.once(total, total, format!("removed {}", dead.ip()));
        Ok(RemovalOutcome { removed: dead, transfers: transfers.len(), partitions, lost_ranges: lost })
    }
}
