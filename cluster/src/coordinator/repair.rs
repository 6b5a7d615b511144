//! Anti-entropy repair (`sibyltool repair`, Cassandra's `nodetool repair`): every replica of a
//! range ends up holding what the newest of them holds, deletions included.
//!
//! Cassandra builds a Merkle tree of each replica's data and streams the ranges whose hashes
//! differ. Sibyl does the same with one level of leaves: it cuts the range into 64 sub-ranges
//! (halving it six times) and asks every replica for an MD5 of each sub-range's partitions
//! (verb RANGE_DIGEST, `Storage::digest_range`; each replica reads its own data, nothing else
//! crosses the network). Where the digests agree nothing moves. Where they differ, or a replica
//! cannot digest (an older node), it compares partitions: it reads the sub-range from every
//! replica page by page, as a range read at ALL does, reconciles each partition (cells by
//! timestamp, tombstones included), and writes the reconciled partition to each replica whose
//! version differs, waiting for their acknowledgements.
//!
//! As in Cassandra, a range is repaired only with all its replicas up: a repair that skipped a
//! down replica would be reported done while that replica stayed behind.

use std::time::Instant;

use futures::future::join_all;
use model::data::Row;
use model::dht::{KeyBound, Range};
use model::filter::{merge_rows, ReadFilter};
use model::mutation::RowMutation;
use tracing::info;

use super::range::repairs_for;
use super::read::request_error;
use super::{Coordinator, CoordinatorError, Result};
use crate::messages;
use crate::Endpoint;
use messaging::Verb;

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
    /// Repair only: sub-ranges whose replicas' digests differed, compared partition by partition.
    pub mismatched: u64,
}

/// A replica's MD5 of a piece of a range, and the partitions in it.
type PieceDigest = ([u8; 16], u64);

/// Repair digests a range in 2^this sub-ranges.
const DIGEST_SPLIT_DEPTH: u32 = 6;

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
        let mut report = SyncReport::default();
        for sub in split_range(self.partitioner(), range, DIGEST_SPLIT_DEPTH) {
            let bounds = pieces_of(&sub);
            let asked = replicas.iter().map(|ep| self.range_digests(*ep, keyspace, cf, &bounds));
            let digests: Result<Vec<Vec<PieceDigest>>> = join_all(asked).await.into_iter().collect();
            match digests {
                Ok(digests) if digests.windows(2).all(|pair| pair[0] == pair[1]) => {
                    report.partitions += digests.first().map_or(0, |d| d.iter().map(|(_, n)| n).sum::<u64>());
                    continue;
                }
                Ok(_) => {}
                Err(e) => info!(keyspace, cf, error = %e, "repair: a replica could not digest; comparing partitions"),
            }
            report.mismatched += 1;
            let synced = self.sync_range(keyspace, cf, &sub, replicas, replicas).await?;
            report.partitions += synced.partitions;
            report.writes += synced.writes;
        }
        if report.writes > 0 {
            info!(
                keyspace,
                cf,
                partitions = report.partitions,
                mismatched = report.mismatched,
                writes = report.writes,
                "repaired a range"
            );
        }
        Ok(report)
    }

    /// `ep`'s digest of `keyspace.cf` over each pair of `bounds`.
    async fn range_digests(
        &self,
        ep: Endpoint,
        keyspace: &str,
        cf: &str,
        bounds: &[(KeyBound, KeyBound)],
    ) -> Result<Vec<PieceDigest>> {
        let request =
            messages::RangeDigestRequest { keyspace: keyspace.into(), cf: cf.into(), bounds: bounds.to_vec() };
        if ep == self.membership.local() {
            let storage = self.storage.clone();
            let run = self.executor.run(move || crate::replica::digest_ranges(&storage, &request));
            return Ok(run.await.map_err(|_| CoordinatorError::Storage(storage::StorageError::ShuttingDown))??);
        }
        let reply = self.net()?.send_request(ep, Verb::RangeDigest, messages::encode_range_digest(&request));
        let bytes = reply.await.map_err(|e| request_error("range digest", ep, e))?;
        messages::decode_range_digest_reply(&bytes)
            .map_err(|e| CoordinatorError::Invalid(format!("range digest from {ep}: {e}")))
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
                let payload = messages::encode_mutation(&m);
                self.stream_throttle.pace(payload.len() as u64).await;
                let reply = self.net()?.send_request(ep, Verb::Mutation, payload);
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

/// `range` cut in two at its midpoint, `depth` times over (a piece too narrow to cut stays
/// whole), in ring order.
fn split_range(partitioner: model::dht::Partitioner, range: &Range, depth: u32) -> Vec<Range> {
    let mid = partitioner.midpoint(&range.left, &range.right);
    if depth == 0 || mid == range.left || mid == range.right {
        return vec![range.clone()];
    }
    let mut pieces = split_range(partitioner, &Range::new(range.left.clone(), mid.clone()), depth - 1);
    pieces.extend(split_range(partitioner, &Range::new(mid, range.right.clone()), depth - 1));
    pieces
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
    use model::dht::Token;

    use super::*;

    #[test]
    fn a_wrapping_range_is_read_as_its_two_halves() {
        let (a, b) = (Token::from_bytes(&[10]), Token::from_bytes(&[200]));
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

    #[test]
    fn a_range_splits_into_contiguous_pieces_that_cover_it() {
        let p = model::dht::Partitioner::Murmur3;
        let t = |v: i64| p.token_from_string(&v.to_string()).expect("token");
        for (left, right) in [(t(-100), t(1000)), (t(5000), t(-5000)), (t(7), t(7))] {
            let pieces = split_range(p, &Range::new(left.clone(), right.clone()), DIGEST_SPLIT_DEPTH);
            assert_eq!(pieces.len(), 64);
            assert_eq!(pieces[0].left, left);
            assert_eq!(pieces[63].right, right);
            assert!(pieces.windows(2).all(|w| w[0].right == w[1].left), "contiguous");
        }
        // Adjacent tokens cannot be cut.
        assert_eq!(split_range(p, &Range::new(t(1), t(2)), DIGEST_SPLIT_DEPTH), vec![Range::new(t(1), t(2))]);
    }
}
