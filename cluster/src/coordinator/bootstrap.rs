//! Bootstrap (`AutoBootstrap`): a node joining a ring that holds data takes its ranges' data
//! from their current replicas before it serves them.
//!
//! The node first announces its tokens as bootstrapping, so every coordinator also sends it the
//! writes of the ranges it is taking (its pending ranges). Then, for each such range, it reads
//! the range from every live current replica, page by page, reconciles each partition and
//! writes it locally: the same reads and reconciliation as repair
//! ([`Coordinator::sync_range`]), where Cassandra streams SSTable sections instead. Only then
//! does it announce itself NORMAL and take reads.

use model::dht::Range;
use storage::is_builtin_keyspace;
use tracing::info;

use super::{Coordinator, CoordinatorError, Result, SyncReport};
use crate::Endpoint;

impl Coordinator {
    /// Fetches into this node the data of every range it is taking while it bootstraps (its
    /// pending ranges: its tokens must already be in the ring as bootstrap tokens), from the
    /// live current replicas of each. `progress` hears of each step. Fails, naming the range,
    /// when no current replica of a range is up.
    pub async fn fetch_pending_ranges(&self, mut progress: impl FnMut(String)) -> Result<SyncReport> {
        let local = self.membership.local();
        let partitioner = self.partitioner();
        let mut total = SyncReport::default();
        let schema = self.storage.schema();
        for ks in schema.keyspaces.values().filter(|k| !is_builtin_keyspace(&k.name)) {
            let placement = self.placement(&ks.name)?;
            let ranges: Vec<Range> =
                placement.map.pending_ranges().iter().filter(|(_, ep)| *ep == local).map(|(r, _)| r.clone()).collect();
            for range in &ranges {
                let bounds = partitioner.range_to_string(range);
                let sources: Vec<Endpoint> = placement
                    .map
                    .endpoints_for(&range.right)
                    .iter()
                    .copied()
                    .filter(|ep| *ep != local && self.membership.is_alive(*ep))
                    .collect();
                if sources.is_empty() {
                    return Err(CoordinatorError::Invalid(format!(
                        "bootstrap: no live replica of keyspace {} range {bounds} to take its data from",
                        ks.name
                    )));
                }
                let from: Vec<String> = sources.iter().map(|ep| ep.ip().to_string()).collect();
                for cf in &ks.cf_defs {
                    progress(format!("fetching {}.{} {bounds} from {}", ks.name, cf.name, from.join(", ")));
                    let report = self.sync_range(&ks.name, &cf.name, range, &sources, &[local]).await?;
                    total.partitions += report.partitions;
                    total.writes += report.writes;
                }
            }
        }
        info!(partitions = total.partitions, "bootstrap fetched its ranges' data");
        Ok(total)
    }
}
