//! Range scans: partitions in token order across the ring, limited by rows (get_range_slices)
//! or by columns (get_paged_slice).
//!
//! The requested bounds are cut at the ring's tokens, so that each piece lies in one range
//! with one set of replicas; pieces are read in token order from as many live replicas as the
//! consistency level needs, every replica's answer (tombstones included) reconciled per
//! partition, and replicas found behind repaired in the background. Every partition present in a
//! range is returned, even one whose columns the filter does not select or which holds only
//! tombstones not yet purged (Thrift's "range ghosts", as Cassandra 3.11 returns them).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use futures::future::join_all;
use model::data::{compose_super, now_seconds, split_super, Cell, Row};
use model::dht::{DecoratedKey, KeyBound, Token};
use model::filter::{collect_live, merge_rows, ReadFilter};
use model::mutation::RowMutation;
use storage::index::expression::satisfies_all;
use storage::index::IndexExpression;
use tracing::debug;

use super::plan::{check_alive, quota, read_replicas};
use super::read::{failure, first_meeting, request_error};
use super::{Coordinator, CoordinatorError, PagedRangeCommand, RangeCommand, Result};
use crate::consistency::ConsistencyLevel;
use crate::messages::{self, RangeRequest};
use crate::trace::trace;
use crate::Endpoint;
use messaging::Verb;

/// Partitions with the cells a scan selected (none, for a range ghost).
pub type Rows = Vec<(DecoratedKey, Vec<Cell>)>;

pub(super) type RangeReply<'a> = Pin<Box<dyn Future<Output = Result<Vec<(DecoratedKey, Row)>>> + Send + 'a>>;

impl Coordinator {
    /// Partitions of `command.pieces`, in order, each with the live cells its filter selects,
    /// at most `max_rows` of them.
    pub async fn scan(&self, command: RangeCommand, cl: ConsistencyLevel) -> Result<Rows> {
        cl.validate_for_read().map_err(CoordinatorError::Invalid)?;
        super::cas::refuse_serial_scan(cl)?;
        let meta = self.cf_metadata(&command.keyspace, &command.cf)?;
        trace(|| {
            format!("Scanning {} range piece(s) of {}.{} at {cl}", command.pieces.len(), command.keyspace, command.cf)
        });
        let rows = self
            .range_rows(&command.keyspace, &command.cf, &command.pieces, &command.filter, &[], command.max_rows, cl)
            .await?;
        trace(|| format!("Scan returned {} partition(s)", rows.len()));
        let now = now_seconds();
        Ok(rows.into_iter().map(|(key, row)| (key, collect_live(&meta.cmp, &row, &command.filter, now))).collect())
    }

    /// Every column of the partitions of `command.pieces`, in order, until `max_columns` are
    /// collected; in the range's start partition, only columns from the start column on. In a
    /// super column family, whole super columns, from the start super column on.
    pub async fn scan_paged(&self, command: PagedRangeCommand, cl: ConsistencyLevel) -> Result<Rows> {
        cl.validate_for_read().map_err(CoordinatorError::Invalid)?;
        super::cas::refuse_serial_scan(cl)?;
        let meta = self.cf_metadata(&command.keyspace, &command.cf)?;
        let all = ReadFilter::all();
        let mut budget = command.max_columns;
        let mut pieces = command.pieces.clone();
        let mut out = Vec::new();
        while budget > 0 && !pieces.is_empty() {
            // Every row with a live column uses the budget up; one more covers a first row whose
            // columns all sort before the start column.
            let page = budget.saturating_add(1);
            let rows = self.range_rows(&command.keyspace, &command.cf, &pieces, &all, &[], page, cl).await?;
            let now = now_seconds();
            let full = rows.len() >= page;
            let last = rows.last().map(|(k, _)| k.clone());
            for (key, row) in rows {
                if budget == 0 {
                    break;
                }
                let cells = collect_live(&meta.cmp, &row, &all, now);
                let ghost = cells.is_empty();
                // In a super column family the start column names a super column: the page starts
                // at its first subcolumn.
                let skip_before = command
                    .start
                    .as_ref()
                    .filter(|(first_key, column)| *first_key == key.key && !column.is_empty())
                    .map(|(_, column)| if meta.is_super() { compose_super(column, b"") } else { column.clone() });
                let mut columns: Vec<Cell> = Vec::new();
                for c in cells {
                    if skip_before.as_ref().is_some_and(|s| meta.cmp.compare(&c.name, s) == Ordering::Less) {
                        continue;
                    }
                    // A super column family counts super columns (the unit it answers with): the
                    // subcolumns of one that has begun all come along.
                    let same_super = meta.is_super()
                        && columns.last().is_some_and(|last| split_super(&last.name).0 == split_super(&c.name).0);
                    if !same_super {
                        if budget == 0 {
                            break;
                        }
                        budget -= 1;
                    }
                    columns.push(c);
                }
                if ghost || !columns.is_empty() {
                    out.push((key, columns));
                }
            }
            match (full, last) {
                (true, Some(last)) => pieces = pieces_after(&pieces, &last),
                _ => break,
            }
        }
        Ok(out)
    }

    /// Up to `max_rows` partitions of `pieces`, in order, each reconciled from the replicas the
    /// level needs (tombstones included); with a row filter, only those whose reconciled data
    /// satisfies it (see [`Coordinator::search`]).
    #[expect(clippy::too_many_arguments, reason = "a range read's parameters, one per field of RangeRequest")]
    pub(super) async fn range_rows(
        &self,
        keyspace: &str,
        cf: &str,
        pieces: &[(KeyBound, KeyBound)],
        filter: &ReadFilter,
        row_filter: &[IndexExpression],
        max_rows: usize,
        cl: ConsistencyLevel,
    ) -> Result<Vec<(DecoratedKey, Row)>> {
        let placement = self.placement(keyspace)?;
        let (strategy, map) = (&placement.strategy, &placement.map);
        let quota = quota(cl, strategy, self.local_dc(), 0);
        let meta = self.cf_metadata(keyspace, cf)?;
        let ring = self.membership.ring();
        let started = Instant::now();
        let mut out = Vec::new();
        for (start, end) in pieces {
            for (sub_start, sub_end, lookup) in split_by_ring(start, end, ring.sorted_tokens()) {
                if out.len() >= max_rows {
                    return Ok(out);
                }
                let alive = read_replicas(map, &lookup, &self.membership, cl);
                check_alive(cl, &quota, &alive, &self.membership)?;
                let targets = first_meeting(&quota, &alive, &self.membership);
                let mut cursor = sub_start;
                loop {
                    let remaining = max_rows - out.len();
                    if remaining == 0 {
                        break;
                    }
                    let mut page = self
                        .read_page(keyspace, cf, &targets, &cursor, &sub_end, filter, row_filter, remaining, started)
                        .await?;
                    if !row_filter.is_empty() {
                        self.complete_versions(keyspace, cf, &targets, &mut page.versions, filter, row_filter, started)
                            .await?;
                    }
                    let now = now_seconds();
                    for (key, per_replica) in page.versions {
                        if out.len() >= max_rows {
                            break;
                        }
                        let rows: Vec<Row> = per_replica.iter().map(|r| r.clone().unwrap_or_default()).collect();
                        let resolved = merge_rows(&meta.cmp, rows.clone());
                        // Replicas found behind are repaired in the background.
                        let repairs = repairs_for(keyspace, cf, &key, &resolved, targets.iter().copied().zip(rows));
                        self.send_repairs_in_background(repairs);
                        // A replica's match may be stale where another holds newer data.
                        if !row_filter.is_empty() && !satisfies_all(&meta, &resolved, row_filter, now) {
                            continue;
                        }
                        out.push((key, resolved));
                    }
                    match page.next {
                        Some(last) => cursor = KeyBound::Key { key: last, inclusive: false },
                        None => break,
                    }
                }
            }
        }
        Ok(out)
    }

    /// One page of a range read from each of `targets`: their partitions from `cursor` to `end`,
    /// at most `max_rows` each, with every target's version of each partition.
    #[expect(clippy::too_many_arguments, reason = "a range read's parameters, one per field of RangeRequest")]
    pub(super) async fn read_page(
        &self,
        keyspace: &str,
        cf: &str,
        targets: &[Endpoint],
        cursor: &KeyBound,
        end: &KeyBound,
        filter: &ReadFilter,
        row_filter: &[IndexExpression],
        max_rows: usize,
        started: Instant,
    ) -> Result<Page> {
        let replies: Vec<RangeReply<'_>> = targets
            .iter()
            .map(|ep| self.fetch_range(*ep, keyspace, cf, cursor, end, filter, row_filter, max_rows))
            .collect();
        let timeout = self.settings.timeouts.range.saturating_sub(started.elapsed());
        let answers = match tokio::time::timeout(timeout, join_all(replies)).await {
            Ok(answers) => answers.into_iter().collect::<Result<Vec<_>>>()?,
            Err(_) => {
                return Err(CoordinatorError::Timeout {
                    operation: "range read",
                    waited: started.elapsed(),
                    received: 0,
                    required: targets.len(),
                })
            }
        };
        // A replica that filled its page may hold more after its last key: only keys up to the
        // smallest such last key are known on every replica.
        let next: Option<DecoratedKey> = answers
            .iter()
            .filter(|rows| rows.len() >= max_rows)
            .filter_map(|rows| rows.last().map(|(k, _)| k.clone()))
            .min();
        let mut versions: BTreeMap<DecoratedKey, Vec<Option<Row>>> = BTreeMap::new();
        for (i, rows) in answers.into_iter().enumerate() {
            for (key, row) in rows {
                if next.as_ref().is_some_and(|c| key > *c) {
                    continue;
                }
                versions.entry(key).or_insert_with(|| vec![None; targets.len()])[i] = Some(row);
            }
        }
        Ok(Page { versions, next })
    }

    /// `ep`'s partitions between `start` and `end`, at most `max_rows`; with a row filter, those
    /// its data says satisfy it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fetch_range(
        &self,
        ep: Endpoint,
        keyspace: &str,
        cf: &str,
        start: &KeyBound,
        end: &KeyBound,
        filter: &ReadFilter,
        row_filter: &[IndexExpression],
        max_rows: usize,
    ) -> RangeReply<'_> {
        let request = RangeRequest {
            keyspace: keyspace.to_string(),
            cf: cf.to_string(),
            start: start.clone(),
            end: end.clone(),
            filter: filter.clone(),
            max_rows: u32::try_from(max_rows).unwrap_or(u32::MAX),
            row_filter: row_filter.to_vec(),
        };
        if ep == self.membership.local() {
            let storage = self.storage.clone();
            let run = self.executor.run(move || crate::replica::read_range(&storage, &request));
            return Box::pin(async move {
                Ok(run.await.map_err(|_| CoordinatorError::Storage(storage::StorageError::ShuttingDown))??)
            });
        }
        match self.net() {
            Ok(net) => {
                let reply = net.send_request(ep, Verb::RangeSlice, messages::encode_range(&request));
                Box::pin(async move {
                    let bytes = reply.await.map_err(|e| request_error("range read", ep, e))?;
                    messages::decode_rows(&bytes).map_err(|e| failure("range read", ep, &e.to_string()))
                })
            }
            Err(e) => Box::pin(async move { Err(e) }),
        }
    }

    /// Sends repair writes without waiting for them (a scan does not wait for its repairs).
    fn send_repairs_in_background(&self, repairs: Vec<(Endpoint, RowMutation)>) {
        for (ep, m) in repairs {
            debug!(%ep, keyspace = %m.keyspace, "range read repair");
            if ep == self.membership.local() {
                let storage = self.storage.clone();
                let _ = self.executor.submit(Box::new(move || {
                    let _ = storage.apply(m);
                }));
            } else if let Ok(net) = self.net() {
                let _ = net.send_one_way(ep, Verb::Mutation, messages::encode_mutation(&m));
            }
        }
    }
}

/// One page of a range read: each partition with every target's version of it (`None` where a
/// target has none), and the key after which the next page starts, when some target filled its
/// page.
pub(super) struct Page {
    pub versions: BTreeMap<DecoratedKey, Vec<Option<Row>>>,
    pub next: Option<DecoratedKey>,
}

/// The writes that bring each replica whose version of `key` differs from `resolved` up to it.
pub(super) fn repairs_for(
    keyspace: &str,
    cf: &str,
    key: &DecoratedKey,
    resolved: &Row,
    versions: impl Iterator<Item = (Endpoint, Row)>,
) -> Vec<(Endpoint, RowMutation)> {
    let want = messages::digest(resolved);
    let mut repairs = Vec::new();
    let mut mutation: Option<RowMutation> = None;
    for (ep, row) in versions {
        if messages::digest(&row) == want {
            continue;
        }
        let m = mutation.get_or_insert_with(|| {
            let mut m = RowMutation::new(keyspace, key.key.clone());
            *m.row_mut(cf) = resolved.clone();
            m
        });
        repairs.push((ep, m.clone()));
    }
    repairs
}

/// Cuts `[start, end]` at the ring's tokens: each piece lies within one range of the ring, and
/// comes with a token of that range to look its replicas up by.
fn split_by_ring(start: &KeyBound, end: &KeyBound, ring: &[Token]) -> Vec<(KeyBound, KeyBound, Token)> {
    let after_start = |t: &Token| match start {
        KeyBound::Unbounded => true,
        KeyBound::Key { key, .. } => *t >= key.token,
        KeyBound::Token { token, inclusive: true } => t >= token,
        KeyBound::Token { token, inclusive: false } => t > token,
    };
    let before_end = |t: &Token| match end {
        KeyBound::Unbounded => true,
        KeyBound::Key { key, .. } => *t < key.token,
        KeyBound::Token { token, .. } => t < token,
    };
    let mut pieces = Vec::new();
    let mut cursor = start.clone();
    for t in ring.iter().filter(|t| after_start(t) && before_end(t)) {
        pieces.push((cursor, KeyBound::Token { token: t.clone(), inclusive: true }, t.clone()));
        cursor = KeyBound::Token { token: t.clone(), inclusive: false };
    }
    // The last piece runs to `end`: in the range holding the end's token, or, for the end of the
    // ring, the range that wraps around it (the first token's).
    let lookup = match end {
        KeyBound::Unbounded => ring.first().cloned(),
        KeyBound::Key { key, .. } => Some(key.token.clone()),
        KeyBound::Token { token, .. } => Some(token.clone()),
    };
    if let Some(lookup) = lookup {
        pieces.push((cursor, end.clone(), lookup));
    }
    pieces
}

/// What is left of `pieces` after `key`: the piece holding it starts just after it, earlier
/// pieces are done.
fn pieces_after(pieces: &[(KeyBound, KeyBound)], key: &DecoratedKey) -> Vec<(KeyBound, KeyBound)> {
    let mut rest = Vec::new();
    let mut found = false;
    for (start, end) in pieces {
        if found {
            rest.push((start.clone(), end.clone()));
        } else if start.admits_from_below(key) && end.admits_from_above(key) {
            found = true;
            rest.push((KeyBound::Key { key: key.clone(), inclusive: false }, end.clone()));
        }
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(b: u8) -> Token {
        Token::from_bytes(&[b])
    }

    fn key(b: u8) -> DecoratedKey {
        DecoratedKey::new(t(b), vec![b])
    }

    #[test]
    fn a_whole_ring_scan_is_cut_at_every_token() {
        let ring = [t(10), t(20), t(30)];
        let pieces = split_by_ring(&KeyBound::Unbounded, &KeyBound::Unbounded, &ring);
        let lookups: Vec<Token> = pieces.iter().map(|p| p.2.clone()).collect();
        assert_eq!(lookups, vec![t(10), t(20), t(30), t(10)], "the tail wraps into the first token's range");
        assert_eq!(pieces[0].0, KeyBound::Unbounded);
        assert_eq!(pieces[0].1, KeyBound::Token { token: t(10), inclusive: true });
        assert_eq!(pieces[1].0, KeyBound::Token { token: t(10), inclusive: false });
        assert_eq!(pieces[3].1, KeyBound::Unbounded);
    }

    #[test]
    fn a_key_range_inside_one_range_is_one_piece() {
        let ring = [t(10), t(20), t(30)];
        let start = KeyBound::Key { key: key(12), inclusive: true };
        let end = KeyBound::Key { key: key(18), inclusive: true };
        let pieces = split_by_ring(&start, &end, &ring);
        assert_eq!(pieces, vec![(start, end, t(18))]);
        // Starting exactly at a ring token: the keys of that token belong to the range it ends.
        let start = KeyBound::Key { key: key(20), inclusive: true };
        let end = KeyBound::Key { key: key(25), inclusive: true };
        let pieces = split_by_ring(&start, &end, &ring);
        assert_eq!(pieces.len(), 2);
        assert_eq!(pieces[0].2, t(20));
        assert_eq!(pieces[1].2, t(25));
    }

    #[test]
    fn paging_resumes_after_the_last_key() {
        let pieces = vec![
            (KeyBound::Token { token: t(50), inclusive: false }, KeyBound::Unbounded),
            (KeyBound::Unbounded, KeyBound::Token { token: t(5), inclusive: true }),
        ];
        let rest = pieces_after(&pieces, &key(60));
        assert_eq!(rest[0].0, KeyBound::Key { key: key(60), inclusive: false });
        assert_eq!(rest.len(), 2);
        let rest = pieces_after(&pieces, &key(3));
        assert_eq!(
            rest,
            vec![(KeyBound::Key { key: key(3), inclusive: false }, KeyBound::Token { token: t(5), inclusive: true })]
        );
    }
}
