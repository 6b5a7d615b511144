//! How a long operation an operator starts on this node (drain, decommission, move, removenode)
//! tells whoever runs it how far it has got: each step as it begins, and each change of the
//! node's mode (Cassandra's `StorageService.Mode`, which `nodetool info` prints).
//!
//! The mode itself is kept by the caller (the admin interface), which answers `info` with it and
//! refuses what a draining or leaving node must not do; the operation only says when it changes,
//! where Cassandra's sequences call `setMode`. The caller learns of a step synchronously, so it
//! must not block: it forwards the step (to a client, say) and returns.

/// What the node is doing, as far as these operations change it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperationMode {
    Normal,
    /// Flushing before the engine stops taking writes.
    Draining,
    /// The engine refuses writes until the node restarts.
    Drained,
    /// Announced LEAVING, handing its ranges over (decommission).
    Leaving,
    /// Has left the ring; it no longer gossips.
    Decommissioned,
    /// Announced MOVING, taking and handing over ranges (move, loadbalance).
    Moving,
}

/// One step of a long operation: step `done` of `total` begins, as `what` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperationStep {
    pub done: u64,
    pub total: u64,
    pub what: String,
    /// A wait, a flush or a data transfer, which may take long: a caller that must show signs
    /// of life (the admin protocol's heartbeat) repeats it until the next step.
    pub lasts: bool,
}

/// What an operation reports to its caller's callback.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OperationEvent {
    Step(OperationStep),
    Mode(OperationMode),
}

/// The caller's callback, with the two kinds of step named.
pub(super) struct Report<F>(pub F);

impl<F: FnMut(OperationEvent)> Report<F> {
    pub fn mode(&mut self, mode: OperationMode) {
        (self.0)(OperationEvent::Mode(mode))
    }

    /// A step that may take long (see [`OperationStep::lasts`]).
    pub fn lasting(&mut self, done: u64, total: u64, what: String) {
        (self.0)(OperationEvent::Step(OperationStep { done, total, what, lasts: true }))
    }

    /// A step said once, not repeated while it runs (an operation's last, for one).
    pub fn once(&mut self, done: u64, total: u64, what: String) {
        (self.0)(OperationEvent::Step(OperationStep { done, total, what, lasts: false }))
    }
}
