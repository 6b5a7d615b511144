//! BATCH: the statements' mutations applied together at one consistency level, with 3.11's
//! rules on what may share a batch.
//!
//! A LOGGED batch is atomic in 3.11 through the batchlog, which Sibyl does not have yet: a
//! logged batch of one partition is atomic without it (one mutation per replica, as 3.11 also
//! skips the batchlog then), and one across partitions is refused rather than applied without
//! the guarantee it asks for.

use cluster::consistency::ConsistencyLevel;
use std::collections::BTreeSet;

use model::data::{now_micros, CellKind, Row};
use model::filter::add_to_row;
use model::marshal::AbstractType;
use model::mutation::RowMutation;

use super::mutations::Planned;
use super::values::{term_value, Binder, Value};
use super::write;
use super::{invalid, ColumnSpec, Context, CqlError, Outcome};
use crate::ast::{Batch, BatchKind, BatchStatement, Term};
use crate::schema::{Layout, Table};

pub(super) async fn batch(
    ctx: &Context<'_>,
    b: &Batch,
    binder: &mut Binder<'_>,
    cl: ConsistencyLevel,
) -> Result<Outcome, CqlError> {
    if b.attributes.ttl.is_some() {
        return invalid("Global TTL on the BATCH statement is not supported.");
    }
    let timestamp = match &b.attributes.timestamp {
        Some(t) => match term_value(t, &AbstractType::Long, "[timestamp]", binder)? {
            Value::Bytes(v) => Some(i64::from_be_bytes(v.try_into().unwrap_or_default())),
            Value::Null => return invalid("Invalid null value of timestamp"),
            Value::Unset => None,
        },
        None => None,
    };
    // One timestamp for every statement that sets none, as 3.11's batch gives them.
    let shared = Some(timestamp.unwrap_or_else(now_micros));
    let mut mutations: Vec<RowMutation> = Vec::new();
    let mut counters = None;
    for statement in &b.statements {
        let planned = match statement {
            BatchStatement::Insert(s) => write::insert(ctx, s, binder, shared)?,
            BatchStatement::Update(s) => write::update(ctx, s, binder, shared)?,
            BatchStatement::Delete(s) => write::delete(ctx, s, binder, shared)?,
        };
        let Planned::Write { mutations: these, counter, table, reads } = planned else {
            return invalid("conditional statements in a BATCH are not supported yet");
        };
        if !reads.is_empty() {
            return invalid("list operations by index or value in a BATCH are not supported yet");
        }
        if table.is_some_and(|t| !super::view::views_of(ctx, &t).is_empty()) {
            return invalid("a BATCH writing a table with materialized views is not supported yet");
        }
        match (b.kind, counter) {
            (BatchKind::Counter, false) => return invalid("Cannot include non-counter statement in a counter batch"),
            (BatchKind::Logged | BatchKind::Unlogged, true) => {
                return invalid(if b.kind == BatchKind::Logged {
                    "Cannot include a counter statement in a logged batch"
                } else {
                    "Counter and non-counter mutations cannot exist in the same batch"
                })
            }
            _ => {}
        }
        if counters.is_some_and(|c| c != counter) {
            return invalid("Counter and non-counter mutations cannot exist in the same batch");
        }
        counters = Some(counter);
        for m in these {
            merge(ctx, &mut mutations, m)?;
        }
    }
    if mutations.is_empty() {
        return Ok(Outcome::Void);
    }
    verify_batch_size(ctx, &mutations)?;
    if b.kind != BatchKind::Logged {
        verify_unlogged_spread(ctx, &mutations);
    }
    if b.kind == BatchKind::Logged && mutations.len() > 1 {
        return invalid(
            "a LOGGED batch across several partitions is not supported yet (Sibyl has no batchlog): use BEGIN UNLOGGED BATCH, or one batch per partition",
        );
    }
    Planned::Write { mutations, counter: counters.unwrap_or(false), table: None, reads: Vec::new() }.run(ctx, cl).await
}

/// Adds `m` to the batch, into the mutation of the same partition if there is one (cells
/// merged by the table's comparator, as one row's update must be).
fn merge(ctx: &Context<'_>, batch: &mut Vec<RowMutation>, m: RowMutation) -> Result<(), CqlError> {
    let Some(existing) = batch.iter_mut().find(|b| b.keyspace == m.keyspace && b.key == m.key) else {
        batch.push(m);
        return Ok(());
    };
    for (cf, row) in m.updates {
        let meta = ctx.coordinator.cf_metadata(&m.keyspace, &cf)?;
        add_to_row(&meta.cmp, existing.row_mut(&cf), row);
    }
    Ok(())
}

/// The markers of a BATCH: its own, then each statement's in order.
pub(super) fn markers(ctx: &Context<'_>, b: &Batch) -> Result<Vec<ColumnSpec>, CqlError> {
    let mut out = Vec::new();
    if matches!(b.attributes.timestamp, Some(Term::BindMarker(_))) {
        // 3.11 gives the batch's own markers the keyspace and table `[batch]`.
        out.push(ColumnSpec {
            keyspace: "[batch]".into(),
            table: "[batch]".into(),
            name: "[timestamp]".into(),
            ty: AbstractType::Long,
        });
    }
    for s in &b.statements {
        out.extend(match s {
            BatchStatement::Insert(s) => super::markers::insert_markers(ctx, s)?,
            BatchStatement::Update(s) => super::markers::update_markers(ctx, s)?,
            BatchStatement::Delete(s) => super::markers::delete_markers(ctx, s)?,
        });
    }
    Ok(out)
}

/// 3.11's `verifyBatchSize`: a batch over several partitions (one is never checked) whose
/// data passes the warn threshold warns its client, and past the fail threshold is refused.
fn verify_batch_size(ctx: &Context<'_>, mutations: &[RowMutation]) -> Result<(), CqlError> {
    if mutations.len() <= 1 {
        return Ok(());
    }
    let mut size = 0u64;
    for m in mutations {
        for (cf, row) in &m.updates {
            let table = ctx.coordinator.cf_metadata(&m.keyspace, cf)?.cql_table()?;
            size += data_size(&table, row);
        }
    }
    let limits = ctx.limits;
    if size <= limits.batch_size_warn_bytes {
        return Ok(());
    }
    let tables = table_names(mutations);
    if size > limits.batch_size_fail_bytes {
        let why = format!(
            "Batch for {tables} is of size {size}, exceeding specified threshold of {} by {}. (see batch_size_fail_threshold_in_kb)",
            limits.batch_size_fail_bytes,
            size - limits.batch_size_fail_bytes
        );
        cluster::trace::trace(|| why.clone());
        tracing::error!("{why}");
        return invalid("Batch too large");
    }
    super::client_warn::warn(format!(
        "Batch for {tables} is of size {size}, exceeding specified threshold of {} by {}.",
        limits.batch_size_warn_bytes,
        size - limits.batch_size_warn_bytes
    ));
    Ok(())
}

/// 3.11's `verifyBatchType`: an unlogged (or counter) batch over more partitions than the
/// threshold warns that it buys neither atomicity nor speed.
fn verify_unlogged_spread(ctx: &Context<'_>, mutations: &[RowMutation]) {
    // Partitions as 3.11 counts them: by key, whatever their keyspace.
    let keys: BTreeSet<&[u8]> = mutations.iter().map(|m| m.key.as_slice()).collect();
    if mutations.len() <= 1 || keys.len() <= ctx.limits.unlogged_batch_across_partitions_warn {
        return;
    }
    let count = mutations.iter().flat_map(|m| m.updates.iter().map(move |(cf, _)| (&m.keyspace, cf)));
    let suffix = if count.collect::<BTreeSet<_>>().len() == 1 { "" } else { "s" };
    super::client_warn::warn(format!(
        "Unlogged batch covering {} partitions detected against table{suffix} {}. You should use a logged batch for atomicity, or asynchronous writes for performance.",
        keys.len(),
        table_names(mutations)
    ));
}

/// `[ks.t1, ks.t2]`: the tables a batch writes, as 3.11 lists them (sorted here).
fn table_names(mutations: &[RowMutation]) -> String {
    let names: BTreeSet<String> =
        mutations.iter().flat_map(|m| m.updates.iter().map(move |(cf, _)| format!("{}.{cf}", m.keyspace))).collect();
    format!("[{}]", names.into_iter().collect::<Vec<_>>().join(", "))
}

/// The bytes of a cell besides its value and name: its timestamp, TTL and local deletion
/// time (3.11's `Cell.dataSize`).
const CELL_OVERHEAD: u64 = 8 + 4 + 4;
/// A non-frozen collection's own deletion time (`ComplexColumnData.dataSize`).
const COMPLEX_DELETION: u64 = 12;
/// An increment's value as 3.11 writes it in a batch: a counter context of one local shard
/// (a 4-byte header, then counter id, clock and count).
const COUNTER_UPDATE: u64 = 4 + 16 + 8 + 8;

/// 3.11's `PartitionUpdate.dataSize` of one table's update: for each (non-static) row its
/// clustering values and its cells (each [`CELL_OVERHEAD`], its value and a collection
/// element's key, and a [`COMPLEX_DELETION`] per non-frozen collection written). The row
/// marker (3.11's primary key liveness), static cells and deletions of ranges or partitions
/// count for nothing there, nor here.
fn data_size(table: &Table, row: &Row) -> u64 {
    let sparse = match table.layout {
        Layout::Sparse => true,
        Layout::Dense { .. } | Layout::Super => false,
        // 3.11 holds a static compact table's columns in the static row.
        Layout::StaticCompact => return 0,
    };
    let mut size = 0u64;
    let mut row_clustering: Option<Vec<Vec<u8>>> = None;
    let mut collection: Option<(Vec<Vec<u8>>, Vec<u8>)> = None;
    // Cells are in comparator order: a row's cells, and a collection's elements, follow
    // each other.
    for cell in &row.cells {
        if sparse && cell.name.starts_with(&[0xFF, 0xFF]) {
            continue; // a static cell
        }
        let Some(name) = table.split_cell_name(&cell.name) else { continue };
        if row_clustering.as_ref() != Some(&name.clustering) {
            size += name.clustering.iter().map(|v| v.len() as u64).sum::<u64>();
            row_clustering = Some(name.clustering.clone());
        }
        let column = name.column.unwrap_or_default();
        if sparse && column.is_empty() {
            continue; // the row marker
        }
        let value = match cell.kind {
            CellKind::CounterUpdate { .. } => COUNTER_UPDATE,
            _ => cell.value.len() as u64,
        };
        size += CELL_OVERHEAD + value;
        if let Some(key) = name.element {
            size += key.len() as u64;
            let this = (name.clustering, column);
            if collection.as_ref() != Some(&this) {
                size += COMPLEX_DELETION;
                collection = Some(this);
            }
        }
    }
    size
}
