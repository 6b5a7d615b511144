//! Conversions between Thrift structs and the engine's types (Cassandra's ThriftConversion):
//! results and consistency levels here, writes in [`mutation`], key ranges in [`range`],
//! definitions in [`schema`], the point reads' replies written straight from cells in
//! [`reply`]. Like [`super::validate`], they work on the 20.1.0 structs and a column family's
//! metadata only, so every front end that speaks those structs shares them.

mod batch;
mod in_place;
mod index;
mod insert;
mod mutation;
mod range;
mod reply;
mod schema;
mod slice;

pub use batch::{BatchInPlace, BatchMutateArgs};
pub use index::{index_clause_expressions, index_expressions};
pub use insert::{ColumnParts, InsertArgs};
pub use mutation::{
    add_deletion, add_mutation, cell_of, counter_cell_of, families_of, row_mutations, sort_cells, validate_counter_cf,
    validate_non_counter_cf,
};
pub use range::{key_range_bounds, START_KEY_TOKEN_AFTER_END};
pub use reply::{Columns, ColumnsByKey, Found};
pub use schema::{cf_def_from_thrift, cf_def_to_thrift, full_class_name, ks_def_from_thrift, ks_def_to_thrift};
pub use slice::GetSliceArgs;

use cluster::consistency::ConsistencyLevel;
use cluster::coordinator::RingRange;
use model::data::{split_super, Cell, CellKind};
use model::dht::{DecoratedKey, Partitioner};
use thrift_idl as t;

use super::error::{ire, TResult};

/// A Thrift consistency level as the coordinator's; unknown numbers are refused.
pub fn consistency_level(cl: t::ConsistencyLevel) -> TResult<ConsistencyLevel> {
    use t::ConsistencyLevel as T;
    Ok(match cl {
        T::ONE => ConsistencyLevel::One,
        T::QUORUM => ConsistencyLevel::Quorum,
        T::LOCAL_QUORUM => ConsistencyLevel::LocalQuorum,
        T::EACH_QUORUM => ConsistencyLevel::EachQuorum,
        T::ALL => ConsistencyLevel::All,
        T::ANY => ConsistencyLevel::Any,
        T::TWO => ConsistencyLevel::Two,
        T::THREE => ConsistencyLevel::Three,
        T::SERIAL => ConsistencyLevel::Serial,
        T::LOCAL_SERIAL => ConsistencyLevel::LocalSerial,
        T::LOCAL_ONE => ConsistencyLevel::LocalOne,
        other => return Err(ire(format!("unknown consistency level {}", other.0))),
    })
}

/// A consistency level for a read, refused (with Cassandra's reason) if reads cannot use it.
pub fn read_consistency(cl: t::ConsistencyLevel) -> TResult<ConsistencyLevel> {
    let cl = consistency_level(cl)?;
    cl.validate_for_read().map_err(ire)?;
    Ok(cl)
}

/// A consistency level for a write, refused (with Cassandra's reason) if writes cannot use it.
pub fn write_consistency(cl: t::ConsistencyLevel) -> TResult<ConsistencyLevel> {
    let cl = consistency_level(cl)?;
    cl.validate_for_write().map_err(ire)?;
    Ok(cl)
}

/// Turns the live cells of one row into Thrift results. In a super column family read at the
/// top level, consecutive cells of one super column become one `SuperColumn`; `within_super`
/// strips the super column part (a read inside one super column). Counter cells become
/// `CounterColumn`s (and `CounterSuperColumn`s) whose value is the counter's total.
pub fn to_thrift_columns(cells: Vec<Cell>, is_super: bool, within_super: bool) -> Vec<t::ColumnOrSuperColumn> {
    if !is_super {
        return cells.into_iter().map(|c| cosc_of(c, None)).collect();
    }
    if within_super {
        return cells
            .into_iter()
            .map(|c| {
                let sub = split_super(&c.name).1.to_vec();
                cosc_of(c, Some(sub))
            })
            .collect();
    }
    // Each super column's cells, counted first, then moved out whole.
    let mut lens = Vec::new();
    let mut rest = cells.as_slice();
    while !rest.is_empty() {
        let n = super_column_len(rest);
        lens.push(n);
        rest = rest.get(n..).unwrap_or_default();
    }
    let mut cells = cells.into_iter();
    lens.into_iter().map(|n| super_cosc(cells.by_ref().take(n).collect())).collect()
}

/// How many cells from the first belong to its super column: the neighbours with its super
/// column name and of its sort (a counter cell goes only in a counter super column, every other
/// kind only in a plain one, so mixed neighbours under one name answer as two elements).
pub(crate) fn super_column_len(cells: &[Cell]) -> usize {
    let Some((first, rest)) = cells.split_first() else { return 0 };
    let (sc, _) = split_super(&first.name);
    let counter = first.kind == CellKind::Counter;
    1 + rest.iter().take_while(|c| (c.kind == CellKind::Counter) == counter && split_super(&c.name).0 == sc).count()
}

/// One super column of a super column family read at the top level, from its cells (at least
/// one, all of one super column and sort: [`super_column_len`]).
fn super_cosc(group: Vec<Cell>) -> t::ColumnOrSuperColumn {
    let name = group.first().map(|c| split_super(&c.name).0.to_vec()).unwrap_or_default();
    let counter = group.first().is_some_and(|c| c.kind == CellKind::Counter);
    let sub = |c: &Cell| split_super(&c.name).1.to_vec();
    let mut cosc = t::ColumnOrSuperColumn::default();
    if counter {
        let columns = group.iter().map(|c| counter_column_of(c, Some(sub(c)))).collect();
        cosc.counter_super_column = Some(t::CounterSuperColumn { name, columns });
    } else {
        let columns = group
            .into_iter()
            .map(|c| {
                let name = sub(&c);
                column_of(c, Some(name))
            })
            .collect();
        cosc.super_column = Some(t::SuperColumn { name, columns });
    }
    cosc
}

/// One cell as a (counter) column named `name` (its own name when None).
fn cosc_of(c: Cell, name: Option<Vec<u8>>) -> t::ColumnOrSuperColumn {
    if c.kind == CellKind::Counter {
        let column = counter_column_of(&c, name);
        return t::ColumnOrSuperColumn {
            column: None,
            super_column: None,
            counter_column: Some(column),
            counter_super_column: None,
        };
    }
    let c = column_of(c, name);
    t::ColumnOrSuperColumn { column: Some(c), super_column: None, counter_column: None, counter_super_column: None }
}

fn counter_column_of(c: &Cell, name: Option<Vec<u8>>) -> t::CounterColumn {
    t::CounterColumn { name: name.unwrap_or_else(|| c.name.clone()), value: model::counter::total(&c.value) }
}

fn column_of(c: Cell, name: Option<Vec<u8>>) -> t::Column {
    let ttl = match c.kind {
        CellKind::Expiring { ttl, .. } => Some(ttl),
        _ => None,
    };
    t::Column { name: name.unwrap_or(c.name), value: Some(c.value), timestamp: Some(c.timestamp), ttl }
}

/// Scanned rows as KeySlices.
pub fn key_slices(rows: Vec<(DecoratedKey, Vec<Cell>)>, is_super: bool, within_super: bool) -> Vec<t::KeySlice> {
    rows.into_iter()
        .map(|(key, cells)| t::KeySlice { key: key.key, columns: to_thrift_columns(cells, is_super, within_super) })
        .collect()
}

/// A range of the ring and its replicas, as describe_ring answers.
pub fn token_range(partitioner: Partitioner, range: RingRange) -> t::TokenRange {
    t::TokenRange {
        start_token: partitioner.token_to_string(&range.start),
        end_token: partitioner.token_to_string(&range.end),
        endpoints: range.endpoints.iter().map(|e| e.address.clone()).collect(),
        rpc_endpoints: Some(range.endpoints.iter().map(|e| e.rpc_address.clone()).collect()),
        endpoint_details: Some(
            range
                .endpoints
                .into_iter()
                .map(|e| t::EndpointDetails {
                    host: Some(e.address),
                    datacenter: Some(e.datacenter),
                    rack: Some(e.rack),
                })
                .collect(),
        ),
    }
}
