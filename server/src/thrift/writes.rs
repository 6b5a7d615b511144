//! The write methods over the coordinator, for a keyspace the caller has resolved and
//! authorized for writing: every mutation is converted and validated before any is applied.

use std::collections::BTreeMap;

use cluster::consistency::ConsistencyLevel;
use cluster::coordinator::{CasCommand, CasCondition, CasOutcome, Coordinator, Expected};
use model::data::{now_micros, now_seconds, Cell};
use model::mutation::RowMutation;
use model::schema::CfMetadata;
use thrift_idl as t;

use super::convert::{
    add_deletion, cell_of, consistency_level, counter_cell_of, families_of, row_mutations, sort_cells,
    to_thrift_columns, validate_counter_cf, validate_non_counter_cf, write_consistency, BatchInPlace, InsertArgs,
};
use super::error::{ire, TResult, ThriftError};
use super::validate::{validate_key_type, validate_parent, validate_path_or_parent};

pub async fn insert(c: &Coordinator, ks: &str, args: InsertArgs<'_>) -> TResult<()> {
    let InsertArgs { key, column_family, super_column, column, consistency_level } = args;
    let meta = c.cf_metadata(ks, &column_family)?;
    validate_key_type(&meta, &key)?;
    validate_parent(&meta, super_column.as_deref())?;
    if meta.is_super() && super_column.is_none() {
        return Err(missing_super_column(&meta));
    }
    let cl = write_consistency(consistency_level)?;
    let cell = column.cell(&meta, super_column.as_deref(), now_seconds())?;
    let mut m = RowMutation::new(ks, key);
    m.row_mut(meta.name()).cells.push(cell);
    Ok(c.mutate(vec![m], cl).await?)
}

pub async fn remove(
    c: &Coordinator,
    ks: &str,
    key: Vec<u8>,
    path: t::ColumnPath,
    timestamp: i64,
    cl: t::ConsistencyLevel,
) -> TResult<()> {
    let meta = c.cf_metadata(ks, &path.column_family)?;
    // Counters are removed with remove_counter (3.11's internal_remove, not commutative).
    validate_non_counter_cf(&meta)?;
    validate_key_type(&meta, &key)?;
    let (sc, col) = validate_path_or_parent(&meta, &path)?;
    let cl = write_consistency(cl)?;
    let now = now_seconds();
    let mut m = RowMutation::new(ks, key);
    let row = m.row_mut(meta.name());
    match col {
        Some(name) => {
            let predicate = t::SlicePredicate { column_names: Some(vec![name.to_vec()]), slice_range: None };
            add_deletion(&meta, row, sc, Some(&predicate), timestamp, now)?;
        }
        None => add_deletion(&meta, row, sc, None, timestamp, now)?,
    }
    Ok(c.mutate(vec![m], cl).await?)
}

/// batch_mutate. On one node every row mutation is applied once all are validated, so a
/// validation error leaves nothing half done.
pub async fn batch_mutate(
    c: &Coordinator,
    ks: &str,
    mutation_map: BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>>,
    cl: t::ConsistencyLevel,
) -> TResult<()> {
    let (mutations, cl) = validated_batch(c, ks, mutation_map, cl)?;
    apply_batch(c, mutations, cl).await
}

/// atomic_batch_mutate: as batch_mutate, but nothing may touch a counter column family, not
/// even a deletion (3.11 refuses the whole counter part of such a batch: an increment cannot be
/// replayed from a batch log without counting it twice).
pub async fn atomic_batch_mutate(
    c: &Coordinator,
    ks: &str,
    mutation_map: BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>>,
    cl: t::ConsistencyLevel,
) -> TResult<()> {
    let (mutations, cl) = validated_batch(c, ks, mutation_map, cl)?;
    for m in &mutations {
        for (cf, _) in m.updates.iter() {
            let meta = c.cf_metadata(ks, cf)?;
            if validate_non_counter_cf(&meta).is_err() {
                return Err(ire("Counter mutations are not allowed in atomic batches"));
            }
        }
    }
    apply_batch(c, mutations, cl).await
}

/// A batch's consistency level and row mutations, every mutation converted and checked.
fn validated_batch(
    c: &Coordinator,
    ks: &str,
    mutation_map: BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>>,
    cl: t::ConsistencyLevel,
) -> TResult<(Vec<RowMutation>, ConsistencyLevel)> {
    let level = batch_consistency(c, ks, families_of(&mutation_map), cl)?;
    let mutations = row_mutations(ks, mutation_map, |cf| Ok(c.cf_metadata(ks, cf)?), now_seconds())?;
    Ok((mutations, level))
}

/// batch_mutate of a batch read in place: the same checks in the same order as
/// [`batch_mutate`].
pub async fn batch_mutate_in_place(c: &Coordinator, ks: &str, batch: BatchInPlace<'_>) -> TResult<()> {
    let level = batch_consistency(c, ks, batch.column_families(), batch.consistency_level)?;
    let mutations = batch.row_mutations(ks, |cf| Ok(c.cf_metadata(ks, cf)?), now_seconds())?;
    apply_batch(c, mutations, level).await
}

/// A batch's consistency level, checked against the column families it writes.
fn batch_consistency<'a>(
    c: &Coordinator,
    ks: &str,
    column_families: impl Iterator<Item = &'a str>,
    cl: t::ConsistencyLevel,
) -> TResult<ConsistencyLevel> {
    let level = consistency_level(cl)?;
    if level == ConsistencyLevel::Any || level.is_serial() {
        // Levels a counter write cannot use, checked per column family first, as 3.11's
        // createMutationList does (only for these levels: the lookups cost every batch).
        for cf in column_families {
            if let Ok(meta) = c.cf_metadata(ks, cf) {
                if validate_counter_cf(&meta).is_ok() {
                    check_counter_level(level, &meta)?;
                }
            }
        }
    }
    level.validate_for_write().map_err(ire)?;
    Ok(level)
}

/// 3.11's `validateCounterForWrite`: the levels an increment or a counter removal cannot use.
fn check_counter_level(level: ConsistencyLevel, meta: &CfMetadata) -> TResult<()> {
    match level {
        ConsistencyLevel::Any => {
            Err(ire(format!("Consistency level ANY is not yet supported for counter table {}", meta.name())))
        }
        level if level.is_serial() => Err(ire("Counter operations are inherently non-serializable")),
        _ => Ok(()),
    }
}

/// A counter write's consistency level, checked as 3.11 checks it.
fn counter_write_consistency(cl: t::ConsistencyLevel, meta: &CfMetadata) -> TResult<ConsistencyLevel> {
    let level = consistency_level(cl)?;
    check_counter_level(level, meta)?;
    Ok(level)
}

/// Cassandra's answer to an insert or add into a super column family without a super column.
fn missing_super_column(meta: &CfMetadata) -> ThriftError {
    ire(format!("missing mandatory super column name for super CF {}", meta.name()))
}

/// Increments go through their leaders, everything else the ordinary way (as Cassandra splits
/// a batch into counter and other mutations).
async fn apply_batch(c: &Coordinator, mutations: Vec<RowMutation>, cl: ConsistencyLevel) -> TResult<()> {
    let has_increments =
        |m: &RowMutation| m.updates.iter().any(|(_, row)| row.cells.iter().any(Cell::is_counter_update));
    if !mutations.iter().any(has_increments) {
        // The common batch: applied as it came, without splitting it into new vectors.
        return Ok(c.mutate(mutations, cl).await?);
    }
    let (counters, others): (Vec<RowMutation>, Vec<RowMutation>) = mutations.into_iter().partition(has_increments);
    if !others.is_empty() {
        c.mutate(others, cl).await?;
    }
    if !counters.is_empty() {
        c.mutate_counters(counters, cl).await?;
    }
    Ok(())
}

pub async fn truncate(c: &Coordinator, ks: &str, cf: &str) -> TResult<()> {
    c.cf_metadata(ks, cf)?;
    Ok(c.truncate(ks, cf).await?)
}

/// add: increments (or, negative, decrements) one counter, through its leader.
pub async fn add(
    c: &Coordinator,
    ks: &str,
    key: Vec<u8>,
    parent: t::ColumnParent,
    column: t::CounterColumn,
    cl: t::ConsistencyLevel,
) -> TResult<()> {
    let meta = c.cf_metadata(ks, &parent.column_family)?;
    validate_counter_cf(&meta)?;
    let cl = counter_write_consistency(cl, &meta)?;
    validate_key_type(&meta, &key)?;
    validate_parent(&meta, parent.super_column.as_deref())?;
    if meta.is_super() && parent.super_column.is_none() {
        return Err(missing_super_column(&meta));
    }
    let cell = counter_cell_of(&meta, parent.super_column.as_deref(), column)?;
    let mut m = RowMutation::new(ks, key);
    m.row_mut(meta.name()).cells.push(cell);
    Ok(c.mutate_counters(vec![m], cl).await?)
}

/// remove_counter: a tombstone stamped with this node's clock, through the ordinary write path
/// (a counter removed and then incremented again stays removed until the tombstone is purged;
/// Cassandra calls that case undefined).
pub async fn remove_counter(
    c: &Coordinator,
    ks: &str,
    key: Vec<u8>,
    path: t::ColumnPath,
    cl: t::ConsistencyLevel,
) -> TResult<()> {
    let meta = c.cf_metadata(ks, &path.column_family)?;
    validate_counter_cf(&meta)?;
    let cl = counter_write_consistency(cl, &meta)?;
    validate_key_type(&meta, &key)?;
    let (sc, col) = validate_path_or_parent(&meta, &path)?;
    let now = now_seconds();
    let mut m = RowMutation::new(ks, key);
    let row = m.row_mut(meta.name());
    let timestamp = now_micros();
    match col {
        Some(name) => {
            let predicate = t::SlicePredicate { column_names: Some(vec![name.to_vec()]), slice_range: None };
            add_deletion(&meta, row, sc, Some(&predicate), timestamp, now)?;
        }
        None => add_deletion(&meta, row, sc, None, timestamp, now)?,
    }
    Ok(c.mutate(vec![m], cl).await?)
}

/// cas, with its six arguments as they arrived (3.11's CassandraServer.cas): the updates are
/// validated as an insert's columns (a timestamp is required, as 3.11's validateColumnData
/// wants, though the Paxos ballot's time replaces it), the expected columns are only compared.
/// Answers success, or the current values the comparison saw: the expected columns that are
/// live, or the partition's first cell when nothing was expected.
pub async fn cas(c: &Coordinator, ks: &str, args: t::CassandraCasArgs) -> TResult<t::CASResult> {
    let t::CassandraCasArgs {
        key,
        column_family,
        expected,
        updates,
        serial_consistency_level,
        commit_consistency_level,
    } = args;
    let meta = c.cf_metadata(ks, &column_family)?;
    validate_key_type(&meta, &key)?;
    if meta.is_super() {
        return Err(ire("CAS does not support supercolumns"));
    }
    let now = now_seconds();
    let mut row = model::data::Row::new();
    for column in updates {
        row.cells.push(cell_of(&meta, None, column, now)?);
    }
    sort_cells(&meta, &mut row);
    let expected = expected.into_iter().map(|e| Expected { name: e.name, value: e.value }).collect();
    let serial = consistency_level(serial_consistency_level)?;
    let commit = consistency_level(commit_consistency_level)?;
    let condition = CasCondition::Expected(expected);
    let command = CasCommand { keyspace: ks.to_string(), cf: meta.name().to_string(), key, condition, updates: row };
    Ok(match c.cas(command, serial, commit).await? {
        CasOutcome::Applied => t::CASResult::new(true, None),
        CasOutcome::NotApplied { current } => {
            let columns = to_thrift_columns(current, false, false).into_iter().filter_map(|c| c.column).collect();
            t::CASResult::new(false, Some(columns))
        }
    })
}
