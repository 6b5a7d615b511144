//! The mutations of a write statement: when its cells live ([`Stamp`], from USING TIMESTAMP
//! and TTL), the cells and tombstones of each partition ([`Writes`]), and what runs them
//! ([`Planned`]: plain, counter, with view upkeep, or conditional).

use std::sync::Arc;

use cluster::consistency::ConsistencyLevel;
use model::data::{now_micros, now_seconds, Cell, DeletionTime, RangeTombstone};
use model::filter::insert_cell;
use model::marshal::AbstractType;
use model::mutation::RowMutation;
use model::schema::CfMetadata;

use super::values::{term_value, Binder, Value};
use super::{collections, lwt};
use super::{invalid, Context, CqlError, Outcome};
use crate::ast::Attributes;
use crate::schema::{Column, Table};

/// When and for how long the written cells live.
pub(super) struct Stamp {
    pub(super) timestamp: i64,
    pub(super) ttl: i32,
    pub(super) now: i32,
}

pub(super) fn stamp(
    table: &Table,
    meta: &CfMetadata,
    attributes: &Attributes,
    binder: &mut Binder,
    batch: Option<i64>,
) -> Result<Stamp, CqlError> {
    // USING TIMESTAMP ? AND TTL ?: markers take their values in the order written.
    let ttl_first = attributes.ttl_first;
    let mut timestamp = None;
    let mut ttl = None;
    let order: [&str; 2] = if ttl_first { ["ttl", "timestamp"] } else { ["timestamp", "ttl"] };
    for which in order {
        match which {
            "timestamp" => {
                if let Some(t) = &attributes.timestamp {
                    timestamp = match term_value(t, &AbstractType::Long, "[timestamp]", binder)? {
                        Value::Bytes(b) => Some(i64::from_be_bytes(b.try_into().unwrap_or_default())),
                        Value::Null => return invalid("Invalid null value of timestamp"),
                        Value::Unset => None,
                    };
                }
            }
            _ => {
                if let Some(t) = &attributes.ttl {
                    ttl = match term_value(t, &AbstractType::Int32, "[ttl]", binder)? {
                        Value::Bytes(b) => Some(i32::from_be_bytes(b.try_into().unwrap_or_default())),
                        Value::Null => return invalid("Invalid null value of TTL"),
                        Value::Unset => None,
                    };
                }
            }
        }
    }
    let ttl = ttl.unwrap_or(meta.def.default_time_to_live);
    if ttl < 0 {
        return invalid(format!("A TTL must be greater or equal to 0, but was {ttl}"));
    }
    if ttl > model::schema_rules::MAX_TTL {
        return invalid(format!("ttl is too large. requested ({ttl}) maximum ({})", model::schema_rules::MAX_TTL));
    }
    if ttl > 0 && table.counter {
        return invalid("Cannot set TTL on counter update");
    }
    if batch.is_some() && attributes.timestamp.is_some() {
        return invalid("Timestamp must be set either on BATCH or individual statements");
    }
    Ok(Stamp { timestamp: timestamp.or(batch).unwrap_or_else(now_micros), ttl, now: now_seconds() })
}

impl Stamp {
    pub(super) fn cell(&self, name: Vec<u8>, value: Value) -> Cell {
        match value {
            Value::Bytes(v) if self.ttl > 0 => Cell::expiring(name, v, self.timestamp, self.ttl, self.now),
            Value::Bytes(v) => Cell::live(name, v, self.timestamp),
            Value::Null | Value::Unset => Cell::tombstone(name, self.timestamp, self.now),
        }
    }

    pub(super) fn deletion(&self) -> DeletionTime {
        DeletionTime::new(self.timestamp, self.now)
    }
}

/// The mutations of a statement, one per partition key, sharing each row's cells.
pub(super) struct Writes<'a> {
    pub(super) table: &'a Arc<Table>,
    pub(super) meta: std::sync::Arc<CfMetadata>,
    pub(super) mutations: Vec<RowMutation>,
    /// List operations that read the list before they write.
    pub(super) reads: Vec<collections::ListRead>,
}

impl<'a> Writes<'a> {
    pub(super) fn new(ctx: &Context<'_>, table: &'a Arc<Table>, keys: Vec<Vec<u8>>) -> Result<Writes<'a>, CqlError> {
        if table.view_of.is_some() {
            return invalid(format!("Cannot directly modify a materialized view ({})", table.name));
        }
        if model::schema::is_reserved_keyspace(&table.keyspace) {
            return invalid(format!("{} keyspace is not user-modifiable", table.keyspace));
        }
        let meta = ctx.coordinator.cf_metadata(&table.keyspace, &table.name)?;
        let mutations = keys.into_iter().map(|k| RowMutation::new(table.keyspace.clone(), k)).collect();
        Ok(Writes { table, meta, mutations, reads: Vec::new() })
    }

    pub(super) fn cell(&mut self, cell: Cell) {
        for m in &mut self.mutations {
            insert_cell(&self.meta.cmp, &mut m.row_mut(&self.table.name).cells, cell.clone());
        }
    }

    pub(super) fn range_tombstone(&mut self, start: Vec<u8>, end: Vec<u8>, deletion: DeletionTime) {
        for m in &mut self.mutations {
            m.row_mut(&self.table.name).range_tombstones.push(RangeTombstone {
                start: start.clone(),
                end: end.clone(),
                deletion,
            });
        }
    }

    /// `c = value` on a non-frozen collection: the old elements deleted one microsecond
    /// before the new ones are written (null or empty: deleted only).
    pub(super) fn set_collection(
        &mut self,
        clustering: &[Vec<u8>],
        c: &Column,
        value: &Value,
        stamp: &Stamp,
    ) -> Result<(), CqlError> {
        if *value == Value::Unset {
            return Ok(());
        }
        let (start, end) = self.table.collection_bounds(clustering, c);
        self.range_tombstone(start, end, DeletionTime::new(stamp.timestamp - 1, stamp.now));
        if let Value::Bytes(b) = value {
            self.add_elements(clustering, c, b, stamp, false)?;
        }
        Ok(())
    }

    /// Appends (or prepends) a whole collection value's elements to column `c`.
    pub(super) fn add_elements(
        &mut self,
        clustering: &[Vec<u8>],
        c: &Column,
        value: &[u8],
        stamp: &Stamp,
        prepend: bool,
    ) -> Result<(), CqlError> {
        for (key, v) in collections::cells_of(c, value, prepend)? {
            let name = self.table.element_cell_name(clustering, c, &key);
            self.cell(stamp.cell(name, Value::Bytes(v)));
        }
        Ok(())
    }

    /// A list operation by index or value in every partition's row `clustering`: done once the
    /// list is read.
    pub(super) fn list_op(&mut self, clustering: &[Vec<u8>], c: &Column, op: collections::ListOp, stamp: &Stamp) {
        for m in &self.mutations {
            self.reads.push(collections::ListRead {
                key: m.key.clone(),
                clustering: clustering.to_vec(),
                column: c.clone(),
                op: op.clone(),
                timestamp: stamp.timestamp,
                ttl: stamp.ttl,
                now: stamp.now,
            });
        }
    }

    /// Deletes the whole of collection `c` in a row.
    pub(super) fn delete_collection(&mut self, clustering: &[Vec<u8>], c: &Column, stamp: &Stamp) {
        let (start, end) = self.table.collection_bounds(clustering, c);
        self.range_tombstone(start, end, stamp.deletion());
    }

    pub(super) fn partition_deletion(&mut self, deletion: DeletionTime) {
        for m in &mut self.mutations {
            m.row_mut(&self.table.name).deletion = deletion;
        }
    }

    /// The one partition's update, for a conditional write.
    pub(super) fn into_update(self) -> (Vec<u8>, model::data::Row) {
        let name = self.table.name.clone();
        let mut m = self.mutations.into_iter().next().unwrap_or_else(|| RowMutation::new(String::new(), Vec::new()));
        let row = std::mem::take(m.row_mut(&name));
        (m.key, row)
    }

    /// The statement's mutations, for the caller to apply (alone or in a batch).
    pub(super) fn finish(self) -> Planned {
        let name = self.table.name.clone();
        let mutations: Vec<RowMutation> = self
            .mutations
            .into_iter()
            .filter(|m| m.updates.iter().any(|(cf, row)| *cf == name && !row.is_empty()))
            .collect();
        Planned::Write {
            mutations,
            counter: self.table.counter,
            // Shared, not copied: a copy of the table cost a fifth of an INSERT.
            table: Some(self.table.clone()),
            reads: self.reads,
        }
    }
}

/// What a write statement does once its values are known.
pub(super) enum Planned {
    /// These mutations (increments when `counter`) of `table` (`None`: several tables, none
    /// with views), and the list operations to add once their lists are read.
    Write { mutations: Vec<RowMutation>, counter: bool, table: Option<Arc<Table>>, reads: Vec<collections::ListRead> },
    /// A conditional write.
    Conditional(Box<lwt::Conditional>),
}

impl Planned {
    /// Applies it at `cl`.
    pub async fn run(self, ctx: &Context<'_>, cl: ConsistencyLevel) -> Result<Outcome, CqlError> {
        match self {
            Planned::Write { mut mutations, counter, table, reads } if !reads.is_empty() => {
                let Some(t) = table else { return invalid("list operations by index or value need their table") };
                collections::resolve(ctx, &t, reads, &mut mutations, cl).await?;
                Box::pin(Planned::Write { mutations, counter, table: Some(t), reads: Vec::new() }.run(ctx, cl)).await
            }
            Planned::Write { mutations, .. } if mutations.is_empty() => Ok(Outcome::Void),
            Planned::Write { mutations, counter: true, .. } => {
                ctx.coordinator.mutate_counters(mutations, cl).await?;
                Ok(Outcome::Void)
            }
            Planned::Write { mutations, counter: false, table, .. } => {
                let before = match &table {
                    Some(t) => super::view::before_base_write(ctx, t, &mutations, cl).await?,
                    None => None,
                };
                let timestamp = super::view::write_timestamp(&mutations);
                ctx.coordinator.mutate(mutations, cl).await?;
                if let (Some(t), Some(before)) = (table, before) {
                    super::view::after_base_write(ctx, &t, before, timestamp, cl).await?;
                }
                Ok(Outcome::Void)
            }
            Planned::Conditional(c) => {
                if !super::view::views_of(ctx, &c.table).is_empty() {
                    return invalid("conditional writes to a table with materialized views are not supported yet");
                }
                c.apply(ctx, cl).await
            }
        }
    }
}
