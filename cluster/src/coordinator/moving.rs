//! A node moving to another token (`sibyltool move`, `sibyltool loadbalance`): it takes the
//! data of the ranges it will replicate at its new place, and hands the ranges it gives up to
//! the nodes taking them.
//!
//! The ranges and their new replicas are the pending ranges of the ring with the node marked
//! moving (Cassandra's `calculatePendingRanges`, see [`membership::locator::replication::ReplicaMap`]). A range
//! the moving node replicates now is sent from it; a range it takes is read from its current live
//! replicas, as bootstrap does. Writes made meanwhile reach the new replicas as pending writes,
//! since every node has heard MOVING before the data moves. The moving node keeps the data of
//! the ranges it gave up until `sibyltool cleanup`, as in Cassandra.
//!
//! The sequence itself, [`Coordinator::move_node`], is here too; what it shares with
//! decommission and removenode is in [`super::ring_change`].

use model::dht::Token;
use tracing::info;

use super::operation::{OperationEvent, OperationMode, Report};
use super::ring_change::{
    back_to_normal, check_gossiping, check_ring_settled, wait_for_the_ring, RingChangeError, StepFailure,
};
use super::{Coordinator, CoordinatorError, Result, Transfer};
use crate::storage_service::StorageService;
use crate::Endpoint;
use membership::locator::token_metadata::choose_token;

/// Where a move goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveTarget<'a> {
    /// `sibyltool move TOKEN`: the token as the partitioner writes it.
    Token(&'a str),
    /// `sibyltool loadbalance` (as in 0.6): the middle of the largest range of the member
    /// owning the most of the ring without this node.
    Balance,
}

impl MoveTarget<'_> {
    /// The operator's name of the operation, as messages say it.
    fn op(&self) -> &'static str {
        match self {
            MoveTarget::Token(_) => "move",
            MoveTarget::Balance => "loadbalance",
        }
    }
}

/// What a move did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveOutcome {
    pub from: Token,
    pub to: Token,
    /// Ranges taken or handed over, one per keyspace and range.
    pub transfers: usize,
    pub partitions: u64,
}

impl Coordinator {
    /// What must move for `mover` to move to `token`, for every non-system keyspace. Fails when
    /// `mover` cannot move there (it has several tokens, or another node holds `token`).
    pub fn transfers_for_moving(&self, mover: Endpoint, token: &Token) -> Result<Vec<Transfer>> {
        let mut ring = (*self.membership.ring()).clone();
        ring.add_moving_endpoint(mover, token.clone()).map_err(|e| CoordinatorError::Invalid(e.to_string()))?;
        let transfers = self.pending_changes(&ring)?.into_iter().map(|pending| {
            let from = if pending.replicas.contains(&mover) {
                vec![mover]
            } else {
                let live = |ep: &&Endpoint| **ep != pending.to && self.membership.is_alive(**ep);
                pending.replicas.iter().filter(live).copied().collect()
            };
            Transfer { keyspace: pending.keyspace, range: pending.range, to: pending.to, from }
        });
        Ok(transfers.collect())
    }

    /// Moves this node to `target` (Cassandra's `nodetool move`). Refused for a node with
    /// several tokens, a token another node holds, while another node joins, leaves or moves,
    /// or when a node that would take a range, or every node that could give one, is down.
    /// Announces MOVING and waits `RingDelayInMillis` (from then on every coordinator also
    /// writes the ranges changing hands to their new replicas), moves each range's data, then
    /// saves the new token, announces NORMAL at it and waits again for the ring to hear it.
    /// `progress` hears of each step and mode. A failed transfer announces NORMAL at the old
    /// token again. The node keeps the data of the ranges it gave up until cleanup.
    pub async fn move_node(
        &self,
        service: &StorageService,
        target: MoveTarget<'_>,
        progress: impl FnMut(OperationEvent),
    ) -> Result<MoveOutcome, RingChangeError> {
        let op = target.op();
        let mut report = Report(progress);
        check_gossiping(service, op)?;
        let partitioner = self.partitioner();
        let membership = &self.membership;
        let local = membership.local();
        let ring = membership.ring();
        let old = match ring.tokens_of(local) {
            [old] => old.clone(),
            tokens => return Err(RingChangeError::VirtualNodes { op, tokens: tokens.len() }),
        };
        check_ring_settled(op, &ring, local)?;
        let new = match target {
            MoveTarget::Token(t) => partitioner.token_from_string(t).map_err(RingChangeError::BadToken)?,
            MoveTarget::Balance => {
                let mut others = ring.normal_ring();
                others.remove_endpoint(local);
                if others.member_count() == 0 {
                    return Err(RingChangeError::NoOtherNode);
                }
                choose_token(partitioner, &others)
            }
        };
        let (old_text, new_text) = (partitioner.token_to_string(&old), partitioner.token_to_string(&new));
        if new == old {
            return Err(RingChangeError::AlreadyAtToken { op, token: new_text });
        }
        let transfers =
            self.transfers_for_moving(local, &new).map_err(|source| RingChangeError::CannotMoveThere { op, source })?;
        for t in &transfers {
            let (keyspace, range) = (t.keyspace.clone(), partitioner.range_to_string(&t.range));
            if !membership.is_alive(t.to) {
                return Err(RingChangeError::RangeTakerDown { op, taker: t.to, keyspace, range });
            }
            if t.from.is_empty() {
                return Err(RingChangeError::NoSource { op, keyspace, range });
            }
        }
        report.mode(OperationMode::Moving);
        if let Err(source) = service.announce_moving(&new) {
            report.mode(OperationMode::Normal);
            return Err(RingChangeError::AnnounceMoving { op, source });
        }
        let total = transfers.len() as u64 + 2;
        let announced = format!("announced MOVING from {old_text} to {new_text}");
        wait_for_the_ring(service, &mut report, 0, total, &announced).await;
        let stopped = |failure| RingChangeError::MoveStopped { op, token: old_text.clone(), source: Box::new(failure) };
        let mut partitions = 0;
        for (i, transfer) in transfers.iter().enumerate() {
            let range = format!("{} {}", transfer.keyspace, partitioner.range_to_string(&transfer.range));
            let what = if transfer.to == local {
                let from: Vec<String> = transfer.from.iter().map(|ep| ep.ip().to_string()).collect();
                format!("fetching {range} from {}", from.join(", "))
            } else {
                format!("sending {range} to {}", transfer.to.ip())
            };
            match self.hand_over_step(op, transfer, &mut report, (i as u64 + 1, total), what).await {
                Ok(done) => partitions += done.partitions,
                Err(e) => return Err(back_to_normal(service, &mut report, stopped(StepFailure::Transfer(e)))),
            }
        }
        if let Err(e) = self.storage.save_tokens(vec![new_text.clone()]) {
            return Err(back_to_normal(service, &mut report, stopped(StepFailure::Storage(e))));
        }
        service.join(vec![new.clone()]);
        let announced = format!("announced NORMAL at {new_text}");
        wait_for_the_ring(service, &mut report, total - 1, total, &announced).await;
        report.mode(OperationMode::Normal);
        report.once(total, total, format!("moved to {new_text}"));
        info!(from = %old_text, to = %new_text, transfers = transfers.len(), partitions, "{op}: moved");
        Ok(MoveOutcome { from: old, to: new, transfers: transfers.len(), partitions })
    }
}
