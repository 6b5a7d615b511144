//! A node moving to another token (`sibyltool move`, `sibyltool loadbalance`): it takes the
//! data of the ranges it will replicate at its new place, and hands the ranges it gives up to
//! the nodes taking them.
//!
//! The ranges and their new replicas are the pending ranges of the ring with the node marked
//! moving (Cassandra's `calculatePendingRanges`, see [`crate::replication::ReplicaMap`]). A range
//! the moving node replicates now is sent from it; a range it takes is read from its current live
//! replicas, as bootstrap does. Writes made meanwhile reach the new replicas as pending writes,
//! since every node has heard MOVING before the data moves. The moving node keeps the data of
//! the ranges it gave up until `sibyltool cleanup`, as in Cassandra.

use storage::dht::Token;

use super::{Coordinator, CoordinatorError, Result, Transfer};
use crate::Endpoint;

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
}
