//! Anti-entropy repair (`sibyltool repair`, Cassandra's `nodetool repair`): every replica of a
//! range ends up holding what the newest of them holds, deletions included.
//!
//! Cassandra builds a Merkle tree of each replica's data and streams the ranges whose hashes
//! differ. Sibyl compares partitions instead: it reads the range from every replica page by page,
//! as a range read at ALL does, reconciles each partition (cells by timestamp, tombstones
//! included), and writes the reconciled partition to each replica whose version differs, waiting
//! for their acknowledgements. So every partition crosses the network once per replica, not only
//! the differing ones: the price of having no Merkle trees yet. The outcome is the same.
//!
//! As in Cassandra, a range is repaired only with all its replicas up: a repair that skipped a
//! down replica would be reported done while that replica stayed behind.

use std::time::Instant;

use futures::future::join_all;
use storage::data::Row;
use storage::dht::{KeyBound, Range};
use storage::filter::{merge_rows, ReadFilter};
use storage::mutation::RowMutation;
use tracing::info;

use super::range::repairs_for;
use super::read::request_error;
use super::{Coordinator, CoordinatorError, Result};
use crate::messages;
use crate::net::Verb;
use crate::Endpoint;

/// Partitions read from each replica per page.
const PAGE_ROWS: usize = 256;

/// What bringing one column family up to date over one range did (repair, bootstrap, a
/// handover).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Partitions found on any replica read.
    pub partitions: u64,
    /// Writes made to bring a replica up to date (one per partition and replica behind).
    pub writes: u64,
}

impl Coordinator {
    /// The ranges of `keyspace` this node replicates, each with all its replicas, in ring order;
    /// with `primary_only` (`-pr`), only those it is the first replica of, so that running repair
    /// on every node repairs each range once.
    pub fn repair_ranges(&self, keyspace: &str, primary_only: bool) -> Result<Vec<(Range, Vec<Endpoint>)>> {
        let placement = self.placement(keyspace)?;
        let local = self.membership.local();
        Ok(placement
            .map
            .ranges()
            .filter(|(_, eps)| if primary_only { eps.first() == Some(&local) } else { eps.contains(&local) })
            .map(|(range, eps)| (range, eps.to_vec()))
            .collect())
    }

    /// The ranges of `keyspace` whose data this node keeps: those it replicates and those it is
    /// taking over (pending). Cleanup drops what lies outside them. `None` when it replicates
    /// every range (alone, or with as many replicas as nodes): all its data is its own.
    pub fn owned_ranges(&self, keyspace: &str) -> Result<Option<Vec<Range>>> {
        let placement = self.placement(keyspace)?;
        let local = self.membership.local();
        let mut ranges = placement.map.ranges_of(local);
        if ranges.len() == placement.map.len() || ranges.iter().any(Range::is_full_ring) {
            return Ok(None);
        }
        ranges.extend(placement.map.pending_ranges().iter().filter(|(_, ep)| *ep == local).map(|(r, _)| r.clone()));
        Ok(Some(ranges))
    }

    /// Repairs `keyspace.cf` over `range` among `replicas` (from [`Coordinator::repair_ranges`]).
    /// Fails, naming the node, when a replica is down; nothing to do with one replica.
    pub async fn repair_range(
        &self,
        keyspace: &str,
        cf: &str,
        range: &Range,
        replicas: &[Endpoint],
    ) -> Result<SyncReport> {
        self.cf_metadata(keyspace, cf)?;
        if replicas.len() < 2 {
            return Ok(SyncReport::default());
        }
        if let Some(down) = replicas.iter().find(|ep| !self.membership.is_alive(**ep)) {
            return Err(CoordinatorError::Invalid(format!(
                "cannot repair {keyspace}.{cf} over {}: replica {down} is down",
                self.partitioner().range_to_string(range)
            )));
        }
        let report = self.sync_range(keyspace, cf, range, replicas, replicas).await?;
        if report.writes > 0 {
            info!(keyspace, cf, partitions = report.partitions, writes = report.writes, "repaired a range");
        }
        Ok(report)
    }

    /// Reads `range` of `keyspace.cf` from all of `sources` page by page, reconciles each
    /// partition, and writes it to each of `targets` whose version differs (a target that is
    /// not a source has none), waiting for their acknowledgements page by page.
    pub(super) async fn sync_range(
        &self,
        keyspace: &str,
        cf: &str,
        range: &Range,
        sources: &[Endpoint],
        targets: &[Endpoint],
    ) -> Result<SyncReport> {
        let meta = self.cf_metadata(keyspace, cf)?;
        let all = ReadFilter::all();
        let mut report = SyncReport::default();
        for (start, end) in pieces_of(range) {
            let mut cursor = start;
            loop {
                let page =
                    self.read_page(keyspace, cf, sources, &cursor, &end, &all, &[], PAGE_ROWS, Instant::now()).await?;
                let mut writes = Vec::new();
                for (key, per_source) in page.versions {
                    report.partitions += 1;
                    let rows: Vec<Row> = per_source.into_iter().map(Option::unwrap_or_default).collect();
                    let version_of = |target: &Endpoint| {
                        sources.iter().position(|s| s == target).map(|i| rows[i].clone()).unwrap_or_default()
                    };
                    let versions: Vec<(Endpoint, Row)> = targets.iter().map(|t| (*t, version_of(t))).collect();
                    let resolved = merge_rows(&meta.cmp, rows.clone());
                    writes.extend(repairs_for(keyspace, cf, &key, &resolved, versions.into_iter()));
                }
                report.writes += writes.len() as u64;
                self.write_repairs(writes).await?;
                match page.next {
                    Some(last) => cursor = KeyBound::Key { key: last, inclusive: false },
                    None => break,
                }
            }
        }
        Ok(report)
    }

    /// Applies each repair write on its replica and waits for every acknowledgement.
    async fn write_repairs(&self, writes: Vec<(Endpoint, RowMutation)>) -> Result<()> {
        let started = Instant::now();
        let local = self.membership.local();
        let mut pending = Vec::with_capacity(writes.len());
        for (ep, m) in writes {
            if ep == local {
                let storage = self.storage.clone();
                let run = self.executor.run(move || storage.apply(m));
                pending.push(Box::pin(async move {
                    match run.await {
                        Ok(applied) => applied.map_err(CoordinatorError::from),
                        Err(_) => Err(CoordinatorError::Storage(storage::StorageError::ShuttingDown)),
                    }
                })
                    as std::pin::Pin<Box<dyn std::future::Future<Output = Result<()>> + Send>>);
            } else {
                let reply = self.net()?.send_request(ep, Verb::Mutation, messages::encode_mutation(&m));
                // The acknowledgement is an empty payload; a failure comes back as an error.
                pending.push(Box::pin(async move {
                    reply.await.map(|_| ()).map_err(|e| request_error("repair write", ep, e))
                }));
            }
        }
        let required = pending.len();
        match tokio::time::timeout(self.settings.timeouts.write, join_all(pending)).await {
            Ok(results) => results.into_iter().collect(),
            Err(_) => Err(CoordinatorError::Timeout {
                operation: "repair write",
                waited: started.elapsed(),
                received: 0,
                required,
            }),
        }
    }
}

/// `range` as non-wrapping bounds: `(left, right]` itself, or, when it wraps past the end of the
/// ring (or is the whole ring, `(t, t]`), its part after `left` and its part up to `right`.
fn pieces_of(range: &Range) -> Vec<(KeyBound, KeyBound)> {
    let after_left = KeyBound::Token { token: range.left.clone(), inclusive: false };
    let to_right = KeyBound::Token { token: range.right.clone(), inclusive: true };
    if range.left < range.right {
        vec![(after_left, to_right)]
    } else {
        vec![(after_left, KeyBound::Unbounded), (KeyBound::Unbounded, to_right)]
    }
}

#[cfg(test)]
mod tests {
    use storage::dht::Token;

    use super::*;

    #[test]
    fn a_wrapping_range_is_read_as_its_two_halves() {
        let (a, b) = (Token(vec![10]), Token(vec![200]));
        let inside = pieces_of(&Range::new(a.clone(), b.clone()));
        assert_eq!(
            inside,
            vec![(
                KeyBound::Token { token: a.clone(), inclusive: false },
                KeyBound::Token { token: b.clone(), inclusive: true }
            )]
        );
        let wrapping = pieces_of(&Range::new(b.clone(), a.clone()));
        assert_eq!(wrapping[0], (KeyBound::Token { token: b.clone(), inclusive: false }, KeyBound::Unbounded));
        assert_eq!(wrapping[1], (KeyBound::Unbounded, KeyBound::Token { token: a.clone(), inclusive: true }));
        assert_eq!(pieces_of(&Range::new(a.clone(), a.clone())).len(), 2, "(t, t] is the whole ring");
    }
}
