//! Decommission (`sibyltool decommission`): before a node leaves the ring, the data of every
//! range it replicates goes to the node that takes that range over.
//!
//! The ranges and their new replicas are the pending ranges of the ring with this node marked
//! leaving (Cassandra's `calculatePendingRanges`). Each is read from this node alone and written
//! to its new replica, page by page ([`Coordinator::sync_range`]); Cassandra streams SSTable
//! sections instead. Writes made meanwhile reach the new replicas as pending writes, since every
//! node has heard that this one is leaving before the handover starts.

use storage::dht::Range;
use storage::system::is_builtin_keyspace;

use super::{Coordinator, CoordinatorError, RepairReport, Result};
use crate::replication::{ReplicaMap, ReplicationStrategy};
use crate::Endpoint;

/// A range of a keyspace this node replicates, and a node that will replicate it once this one
/// has left.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub keyspace: String,
    pub range: Range,
    pub to: Endpoint,
}

impl Coordinator {
    /// What this node must hand over to leave the ring, for every non-system keyspace.
    pub fn leaving_transfers(&self) -> Result<Vec<Transfer>> {
        let local = self.membership.local();
        let mut ring = (*self.membership.ring()).clone();
        ring.add_leaving_endpoint(local);
        let snitch = self.membership.snitch().clone();
        let mut transfers = Vec::new();
        for ks in self.storage.schema().keyspaces.values().filter(|k| !is_builtin_keyspace(&k.name)) {
            let strategy =
                ReplicationStrategy::from_keyspace(ks).map_err(|e| CoordinatorError::Invalid(e.to_string()))?;
            let now = self.placement(&ks.name)?;
            let leaving = ReplicaMap::build(&strategy, &ring, &*snitch, local);
            for (range, to) in leaving.pending_ranges() {
                // Only what this node holds: another node's join may be pending at the same time.
                if now.map.endpoints_for(&range.right).contains(&local) {
                    transfers.push(Transfer { keyspace: ks.name.clone(), range: range.clone(), to: *to });
                }
            }
        }
        Ok(transfers)
    }

    /// Writes this node's data of `transfer.range` (every column family of its keyspace) to
    /// `transfer.to`; `progress` hears of each column family.
    pub async fn hand_over(&self, transfer: &Transfer, mut progress: impl FnMut(String)) -> Result<RepairReport> {
        let local = self.membership.local();
        let partitioner = self.partitioner();
        let ks = self.storage.keyspace(&transfer.keyspace).ok_or_else(|| {
            CoordinatorError::Invalid(format!("keyspace {} was dropped during the handover", transfer.keyspace))
        })?;
        let mut total = RepairReport::default();
        for cf in &ks.cf_defs {
            progress(format!(
                "sending {}.{} ({}, {}] to {}",
                ks.name,
                cf.name,
                partitioner.token_to_string(&transfer.range.left),
                partitioner.token_to_string(&transfer.range.right),
                transfer.to.ip()
            ));
            let report = self.sync_range(&ks.name, &cf.name, &transfer.range, &[local], &[transfer.to]).await?;
            total.partitions += report.partitions;
            total.writes += report.writes;
        }
        Ok(total)
    }
}
