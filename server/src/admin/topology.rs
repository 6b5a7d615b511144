//! The operations that change the ring: `move` (and `load_balance`), `decommission` and
//! `remove_node`; and `join`, which a started node has always done already.
//!
//! Their sequences belong to the cluster layer, which owns the ring
//! ([`Coordinator::decommission`], [`Coordinator::move_node`], [`Coordinator::remove_node`]).
//! Here each request only takes the operations lock, checks the node's mode, runs its sequence
//! with [`follow`] (the steps become progress lines, the modes the node's), and answers with its
//! outcome, or with its error as the [`ErrorKind`](admin_protocol::ErrorKind) a client tells
//! apart.

use admin_protocol::{DecommissionResult, MoveResult, RemoveNodeResult};
use cluster::coordinator::{Coordinator, MoveTarget, RingChangeError};
use tokio::io::AsyncWrite;

use super::reply::ReplyWriter;
use super::state::{cluster_service, follow, AdminState, OpError};

/// What to do after a move, as Cassandra's documentation says.
const MOVED_EFFECT: &str = "the data of the ranges this node gave up stays on it until \
     `sibyltool cleanup`; once every node's `sibyltool ring` shows the new token, run cleanup on \
     this node, and on the nodes whose ranges it took, to reclaim the space.";

/// What a client sees after a decommission.
const DECOMMISSIONED_EFFECT: &str = "this node has left the ring and handed its ranges over; \
     it no longer gossips and refuses writes. Stop it. Started again, it forgets its old tokens \
     and joins as a new node.";

/// Hands this node's ranges over and leaves the ring. It holds the operations lock
/// exclusively: nothing else runs on the node while it leaves.
pub(super) async fn decommission<W: AsyncWrite + Unpin>(
    state: &AdminState,
    out: &mut ReplyWriter<W>,
) -> Result<DecommissionResult, OpError> {
    let _exclusive = state.ops_lock.write().await;
    state.check_not_drained("decommission")?;
    let node = &state.node;
    let service = cluster_service(node, "decommission")?;
    let done = follow(state, out, |progress| node.coordinator.decommission(service, progress)).await?;
    Ok(DecommissionResult {
        transfers: done.transfers as u64,
        partitions: done.partitions,
        hints_delivered: done.hints.delivered as u64,
        hints_handed_over: done.hints.handed_over as u64,
        effect: DECOMMISSIONED_EFFECT.into(),
    })
}

/// Moves this node to `token`, or with `None` (loadbalance) to where it balances the ring best.
/// It holds the operations lock exclusively until the move ends.
pub(super) async fn move_node<W: AsyncWrite + Unpin>(
    state: &AdminState,
    token: Option<&str>,
    out: &mut ReplyWriter<W>,
) -> Result<MoveResult, OpError> {
    let target = match token {
        Some(t) => MoveTarget::Token(t),
        None => MoveTarget::Balance,
    };
    let op = if token.is_some() { "move" } else { "loadbalance" };
    let _exclusive = state.ops_lock.write().await;
    state.check_not_drained(op)?;
    let node = &state.node;
    let service = cluster_service(node, op)?;
    let coordinator: &Coordinator = &node.coordinator;
    let done = follow(state, out, |progress| coordinator.move_node(service, target, progress)).await?;
    let partitioner = coordinator.partitioner();
    Ok(MoveResult {
        from_token: partitioner.token_to_string(&done.from),
        token: partitioner.token_to_string(&done.to),
        transfers: done.transfers as u64,
        partitions: done.partitions,
        effect: MOVED_EFFECT.into(),
    })
}

/// Removes the dead node `which` (its address, host id or one of its tokens) from the ring. It
/// holds the operations lock shared: a drain waits for it, and it runs beside flushes and
/// compactions.
pub(super) async fn remove_node<W: AsyncWrite + Unpin>(
    state: &AdminState,
    which: &str,
    out: &mut ReplyWriter<W>,
) -> Result<RemoveNodeResult, OpError> {
    let _shared = state.ops_lock.read().await;
    state.check_not_drained("removenode")?;
    let node = &state.node;
    let service = cluster_service(node, "removenode")?;
    let done = follow(state, out, |progress| node.coordinator.remove_node(service, which, progress)).await?;
    Ok(RemoveNodeResult {
        removed: done.removed.ip().to_string(),
        transfers: done.transfers as u64,
        partitions: done.partitions,
        lost_ranges: done.lost_ranges,
    })
}

/// A node joins the ring as it starts (there is no join_ring=false start, nor write survey
/// mode), so this is nodetool's answer on a node that has joined.
pub(super) fn join(state: &AdminState) -> Result<serde_json::Value, OpError> {
    state.check_not_drained("join")?;
    Err(OpError::BadRequest("This node has already joined the ring.".into()))
}

/// The kind of each refusal and failure: what the operator got wrong (`bad_request`), what
/// cannot be done until the cluster changes (`unavailable`), and the engine's own errors as
/// every operation reports them.
impl From<RingChangeError> for OpError {
    fn from(e: RingChangeError) -> OpError {
        match e {
            RingChangeError::Transfers(e) => OpError::from(e),
            RingChangeError::Storage(e) => OpError::from(e),
            RingChangeError::Drain(e) => OpError::from(e),
            RingChangeError::NoMessaging { .. } => OpError::NotBuilt(e.to_string()),
            RingChangeError::AnotherRingChange { .. }
            | RingChangeError::TakerDown { .. }
            | RingChangeError::RangeTakerDown { .. }
            | RingChangeError::NoSource { .. }
            | RingChangeError::DecommissionStopped(_)
            | RingChangeError::RemovalStopped { .. }
            | RingChangeError::MoveStopped { .. } => OpError::Unavailable(e.to_string()),
            RingChangeError::GossipStopped { .. }
            | RingChangeError::LastNode
            | RingChangeError::NoSuchNode { .. }
            | RingChangeError::ThisNode { .. }
            | RingChangeError::NodeUp { .. }
            | RingChangeError::NotADeadPeer { .. }
            | RingChangeError::VirtualNodes { .. }
            | RingChangeError::BadToken(_)
            | RingChangeError::NoOtherNode
            | RingChangeError::AlreadyAtToken { .. }
            | RingChangeError::CannotMoveThere { .. }
            | RingChangeError::AnnounceMoving { .. } => OpError::BadRequest(e.to_string()),
        }
    }
}
