//! BATCH: the statements' mutations applied together at one consistency level, with 3.11's
//! rules on what may share a batch.
//!
//! A LOGGED batch is atomic in 3.11 through the batchlog, which Sibyl does not have yet: a
//! logged batch of one partition is atomic without it (one mutation per replica, as 3.11 also
//! skips the batchlog then), and one across partitions is refused rather than applied without
//! the guarantee it asks for.

use cluster::consistency::ConsistencyLevel;
use model::data::now_micros;
use model::filter::add_to_row;
use model::marshal::AbstractType;
use model::mutation::RowMutation;

use super::mutations::Planned;
use super::values::{term_value, Binder, Value};
use super::write;
use super::{invalid, ColumnSpec, Context, CqlError, Outcome};
use crate::ast::{Batch, BatchKind, BatchStatement, Term};

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
        out.push(ColumnSpec {
            keyspace: String::new(),
            table: String::new(),
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
