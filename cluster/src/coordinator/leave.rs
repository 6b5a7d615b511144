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

use storage::dht::Range;
use storage::system::is_builtin_keyspace;

use super::{Coordinator, CoordinatorError, Result, SyncReport};
use crate::replication::{ReplicaMap, ReplicationStrategy};
use crate::token_metadata::TokenMetadata;
use crate::Endpoint;

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
