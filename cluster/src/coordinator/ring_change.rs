//! What the three ring changes an operator runs share (decommission and removenode in
//! [`super::leave`], move in [`super::moving`]): their refusals and failures
//! ([`RingChangeError`]), one ring change at a time, takers that are up, the wait after each
//! status announcement, and a transfer as one step.
//!
//! Each runs as Cassandra's StorageService runs it: refuse what cannot be done before anything
//! changes, announce the new status, wait `RingDelayInMillis` for every node to hear it (from
//! then on every coordinator also writes the ranges changing hands to their new replicas), move
//! the data, then announce the end. A change that cannot finish announces NORMAL again where it
//! can (decommission, move), or leaves the dead node REMOVING for a removenode run again.

use model::dht::DhtError;
use storage::StorageError;

use super::drain::DrainError;
use super::operation::{OperationEvent, OperationMode, Report};
use super::{Coordinator, CoordinatorError, SyncReport, Transfer};
use crate::storage_service::StorageService;
use crate::Endpoint;
use membership::locator::token_metadata::{RingError, TokenMetadata};

/// Why a decommission, move or removenode was refused (nothing changed) or stopped. `op` is
/// the operator's name of what ran: `decommission`, `move`, `loadbalance` or `removenode`.
#[derive(Debug, thiserror::Error)]
pub enum RingChangeError {
    #[error("{op}: gossip is stopped (disablegossip), so no other node would hear of it; run enablegossip first")]
    GossipStopped { op: &'static str },
    /// The transfers of a ring change are computed on the ring as it is, so two at once could
    /// miss a range.
    #[error("{op}: another node is joining, leaving or moving; wait until it is done (one ring change at a time)")]
    AnotherRingChange { op: &'static str },
    /// A node that would take ranges of a leaving node is down.
    #[error("{op}: {} would take ranges of keyspace {keyspace} but is down", taker.ip())]
    TakerDown { op: &'static str, taker: Endpoint, keyspace: String },
    /// Listing what must move failed.
    #[error(transparent)]
    Transfers(CoordinatorError),
    /// This coordinator has no messaging to hand the hints over with; found after the ranges
    /// were handed over, the node stays LEAVING, as it announced.
    #[error("{op}: no messaging")]
    NoMessaging { op: &'static str },
    /// Forgetting the tokens of a node that has left the ring failed: it stays decommissioned.
    #[error(transparent)]
    Storage(StorageError),
    /// A decommissioned node's last flush, as a drain's.
    #[error(transparent)]
    Drain(#[from] DrainError),

    // decommission
    #[error("decommission: this node is the only one in the ring; its data would have nowhere to go")]
    LastNode,
    /// A step after LEAVING failed; the node announced NORMAL again.
    #[error("decommission stopped, the node is NORMAL again: {0}")]
    DecommissionStopped(StepFailure),

    // removenode
    /// `which` names no node of the ring, by address, host id or token.
    #[error("removenode: no node {which} in the ring")]
    NoSuchNode { which: String },
    #[error("removenode: {which} is this node; use decommission")]
    ThisNode { which: String },
    #[error("removenode: {} is up; removenode is for dead nodes (decommission a live one)", node.ip())]
    NodeUp { node: Endpoint },
    #[error("removenode: {} is not a dead node gossip knows of", node.ip())]
    NotADeadPeer { node: Endpoint },
    /// A transfer failed; the dead node stays REMOVING, and removenode may run again.
    #[error("removenode stopped; {} stays REMOVING, run it again: {source}", node.ip())]
    RemovalStopped { node: Endpoint, source: Box<CoordinatorError> },

    // move, loadbalance
    #[error(
        "{op}: this node has {tokens} tokens; only a node with one token moves (a node with virtual nodes cannot)"
    )]
    VirtualNodes { op: &'static str, tokens: usize },
    #[error("move: {0}")]
    BadToken(DhtError),
    #[error("loadbalance: this node is the only one in the ring")]
    NoOtherNode,
    #[error("{op}: this node is already at token {token}")]
    AlreadyAtToken { op: &'static str, token: String },
    /// The node cannot move to the token (another node holds it, say).
    #[error("{op}: {source}")]
    CannotMoveThere { op: &'static str, source: CoordinatorError },
    /// A node that would take a range of the move is down; `range` as the partitioner writes it.
    #[error("{op}: {} would take keyspace {keyspace} range {range} but is down", taker.ip())]
    RangeTakerDown { op: &'static str, taker: Endpoint, keyspace: String, range: String },
    /// Every replica a range taken by the moving node could come from is down.
    #[error("{op}: no live replica of keyspace {keyspace} range {range} to take its data from")]
    NoSource { op: &'static str, keyspace: String, range: String },
    #[error("{op}: {source}")]
    AnnounceMoving { op: &'static str, source: RingError },
    /// A step after MOVING failed; the node announced NORMAL at its old token again.
    #[error("{op} stopped, the node is NORMAL at token {token} again: {source}")]
    MoveStopped { op: &'static str, token: String, source: Box<StepFailure> },
}

/// The step of a decommission or move that failed, after its announcement.
#[derive(Debug, thiserror::Error)]
pub enum StepFailure {
    /// Moving a range's data.
    #[error(transparent)]
    Transfer(CoordinatorError),
    /// Handing the kept hints over (decommission).
    #[error("{0}")]
    Hints(String),
    /// Saving the new tokens (move).
    #[error(transparent)]
    Storage(StorageError),
}

/// Refuses `op` while a node other than `except` joins, leaves or moves. (`except` is the node
/// the operation is about: a removenode run again finds its node still REMOVING.)
pub(super) fn check_ring_settled(
    op: &'static str,
    ring: &TokenMetadata,
    except: Endpoint,
) -> Result<(), RingChangeError> {
    let other = |ep: &Endpoint| *ep != except;
    if ring.bootstrap_tokens().values().any(other)
        || ring.leaving_endpoints().iter().any(other)
        || ring.moving_endpoints().keys().any(other)
    {
        return Err(RingChangeError::AnotherRingChange { op });
    }
    Ok(())
}

/// Refuses `op` while gossip is stopped: the ring change it announces would reach nobody.
pub(super) fn check_gossiping(service: &StorageService, op: &'static str) -> Result<(), RingChangeError> {
    match service.is_gossip_running() {
        true => Ok(()),
        false => Err(RingChangeError::GossipStopped { op }),
    }
}

/// After a status announcement (`announced` says which, as step `done` of `total`), waits
/// `RingDelayInMillis` for every node to hear it.
pub(super) async fn wait_for_the_ring<F: FnMut(OperationEvent)>(
    service: &StorageService,
    report: &mut Report<F>,
    done: u64,
    total: u64,
    announced: &str,
) {
    let delay = service.ring_delay();
    report.lasting(done, total, format!("{announced}; waiting {delay:?} for the ring to hear it"));
    tokio::time::sleep(delay).await;
}

/// Ends a decommission or move that failed after its announcement: announces NORMAL at the
/// node's tokens again, and gives back `error` to answer with.
pub(super) fn back_to_normal<F: FnMut(OperationEvent)>(
    service: &StorageService,
    report: &mut Report<F>,
    error: RingChangeError,
) -> RingChangeError {
    service.rejoin();
    report.mode(OperationMode::Normal);
    error
}

impl Coordinator {
    /// What must move for `leaving` to leave the ring; refused (for `op`) while another node
    /// joins, leaves or moves, or when a node that would take a range is down.
    pub(super) fn transfers_with_takers_up(
        &self,
        op: &'static str,
        leaving: Endpoint,
    ) -> Result<Vec<Transfer>, RingChangeError> {
        check_ring_settled(op, &self.membership.ring(), leaving)?;
        let transfers = self.transfers_for_leaving(leaving).map_err(RingChangeError::Transfers)?;
        if let Some(t) = transfers.iter().find(|t| !self.membership.is_alive(t.to)) {
            return Err(RingChangeError::TakerDown { op, taker: t.to, keyspace: t.keyspace.clone() });
        }
        Ok(transfers)
    }

    /// Moves one transfer's data (for `op`) as step `done` of `total`, which `what` describes;
    /// each column family it sends is logged.
    pub(super) async fn hand_over_step<F: FnMut(OperationEvent)>(
        &self,
        op: &'static str,
        transfer: &Transfer,
        report: &mut Report<F>,
        (done, total): (u64, u64),
        what: String,
    ) -> Result<SyncReport, CoordinatorError> {
        report.lasting(done, total, what);
        self.hand_over(transfer, |step| tracing::info!("{op}: {step}")).await
    }
}

#[cfg(test)]
mod tests {
    use model::dht::Partitioner;

    use super::check_ring_settled;
    use membership::locator::token_metadata::TokenMetadata;

    /// Decommission, removenode and move wait for any other node's join, leave or move; the node
    /// an operation is about may itself be leaving (a removenode run again).
    #[test]
    fn one_ring_change_at_a_time() {
        let ep = |n: u8| crate::Endpoint::from(([127, 0, 0, n], 7000));
        let t = |v: i64| Partitioner::Murmur3.token_from_string(&v.to_string()).expect("token");
        let mut ring = TokenMetadata::new(Partitioner::Murmur3);
        for (n, token) in [(1, 10), (2, 20), (3, 30)] {
            ring.update_normal_tokens(ep(n), [t(token)]).expect("ring");
        }
        assert!(check_ring_settled("move", &ring, ep(1)).is_ok());
        let mut leaving = ring.clone();
        leaving.add_leaving_endpoint(ep(3));
        assert!(check_ring_settled("removenode", &leaving, ep(3)).is_ok(), "its own removal");
        let refused = check_ring_settled("decommission", &leaving, ep(1)).expect_err("another leaves");
        assert!(
            refused.to_string().starts_with("decommission: another node is joining, leaving or moving"),
            "{refused}"
        );
        let mut moving = ring.clone();
        moving.add_moving_endpoint(ep(2), t(25)).expect("move");
        assert!(check_ring_settled("removenode", &moving, ep(3)).is_err());
        let mut joining = ring;
        joining.add_bootstrap_tokens(ep(4), [t(40)]).expect("join");
        assert!(check_ring_settled("move", &joining, ep(1)).is_err());
    }
}
