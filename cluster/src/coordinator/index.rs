//! Secondary index queries across the ring (Thrift's get_indexed_slices, and get_range_slices
//! with a row filter).
//!
//! They run as range scans ([`Coordinator::range_rows`]) whose replicas answer from their own
//! index for the piece of the ring they are asked about (`Storage::search`): each returns the
//! partitions its data says match, sliced by the read filter, with the expressions' columns. A
//! replica's match may be stale where another replica holds newer data (or a replica may hold
//! a match the others do not know yet), so the coordinator completes every matched partition
//! with the versions of the replicas that did not return it, reconciles them, and keeps only
//! what still satisfies every expression.

use std::collections::BTreeMap;
use std::time::Instant;

use futures::future::join_all;
use model::data::{now_seconds, Row};
use model::dht::{DecoratedKey, KeyBound};
use model::filter::{collect_live, merge_rows, CountUnit, ReadFilter};
use storage::index::IndexExpression;

use super::range::{RangeReply, Rows};
use super::{Coordinator, CoordinatorError, Result};
use crate::consistency::ConsistencyLevel;
use crate::Endpoint;

/// An index query: the partitions of `pieces` (non-wrapping bounds scanned in turn) that satisfy
/// every expression of `row_filter`, at most `max_rows`, each with the cells `filter` selects.
#[derive(Clone, Debug)]
pub struct IndexCommand {
    pub keyspace: String,
    pub cf: String,
    pub pieces: Vec<(KeyBound, KeyBound)>,
    pub filter: ReadFilter,
    pub row_filter: Vec<IndexExpression>,
    pub max_rows: usize,
}

impl Coordinator {
    /// The partitions `command` asks for, in token order, with the live cells its filter selects.
    pub async fn search(&self, command: IndexCommand, cl: ConsistencyLevel) -> Result<Rows> {
        cl.validate_for_read().map_err(CoordinatorError::Invalid)?;
        if command.row_filter.is_empty() {
            return Err(CoordinatorError::Invalid("an index query needs at least one expression".into()));
        }
        let meta = self.cf_metadata(&command.keyspace, &command.cf)?;
        let rows = self
            .range_rows(
                &command.keyspace,
                &command.cf,
                &command.pieces,
                &command.filter,
                &command.row_filter,
                command.max_rows,
                cl,
            )
            .await?;
        let now = now_seconds();
        Ok(rows.into_iter().map(|(key, row)| (key, collect_live(&meta.cmp, &row, &command.filter, now))).collect())
    }

    /// Fills in, for every partition some target did not return, that target's version of it:
    /// what `filter` selects and the expressions' columns, so that the reconciled row can be
    /// checked against the expressions again.
    #[expect(clippy::too_many_arguments, reason = "the state of range_rows' loop it completes")]
    pub(super) async fn complete_versions(
        &self,
        keyspace: &str,
        cf: &str,
        targets: &[Endpoint],
        versions: &mut BTreeMap<DecoratedKey, Vec<Option<Row>>>,
        filter: &ReadFilter,
        row_filter: &[IndexExpression],
        started: Instant,
    ) -> Result<()> {
        let meta = self.cf_metadata(keyspace, cf)?;
        let columns =
            ReadFilter::names(&meta.cmp, row_filter.iter().map(|e| e.column.clone()).collect(), CountUnit::Cells);
        let mut wanted: Vec<(DecoratedKey, usize)> = Vec::new();
        let mut replies: Vec<RangeReply<'_>> = Vec::new();
        for (key, per_replica) in versions.iter() {
            for (i, version) in per_replica.iter().enumerate() {
                let (None, Some(ep)) = (version, targets.get(i)) else { continue };
                let bound = |inclusive| KeyBound::Key { key: key.clone(), inclusive };
                for f in [filter, &columns] {
                    wanted.push((key.clone(), i));
                    replies.push(self.fetch_range(*ep, keyspace, cf, &bound(true), &bound(true), f, &[], 1));
                }
            }
        }
        if replies.is_empty() {
            return Ok(());
        }
        let timeout = self.settings.timeouts.range.saturating_sub(started.elapsed());
        let answers = match tokio::time::timeout(timeout, join_all(replies)).await {
            Ok(answers) => answers.into_iter().collect::<Result<Vec<_>>>()?,
            Err(_) => {
                return Err(CoordinatorError::Timeout {
                    operation: "index query",
                    waited: started.elapsed(),
                    received: 0,
                    required: targets.len(),
                })
            }
        };
        for ((key, i), rows) in wanted.into_iter().zip(answers) {
            let Some(slot) = versions.get_mut(&key).and_then(|v| v.get_mut(i)) else { continue };
            let found = rows.into_iter().filter(|(k, _)| *k == key).map(|(_, row)| row);
            let merged = merge_rows(&meta.cmp, slot.take().into_iter().chain(found).collect());
            *slot = Some(merged);
        }
        Ok(())
    }
}
