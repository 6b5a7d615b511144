//! Writes to non-frozen collections, one cell per element as 3.11's legacy layout keeps them:
//! a list's element is named by a fresh time UUID (in insertion order; a prepended one by a
//! time before every append), a set's by the element with an empty value, a map's by the key.
//! Setting a whole collection first deletes the old one with a range tombstone one
//! microsecond older than the new elements, as 3.11's `setComplexDeletionTimeForOverwrite`.
//! The list operations by index or value (`l[i] = v`, `DELETE l[i]`, `l = l - [...]`) read the
//! list first, at the statement's consistency level, as 3.11 does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use cluster::consistency::ConsistencyLevel;
use cluster::coordinator::ReadCommand;
use model::data::Cell;
use model::filter::{insert_cell, CountUnit, ReadFilter};
use model::marshal::{read_elements, CollectionKind};
use model::mutation::RowMutation;

use super::values::Value;
use super::{invalid, Context, CqlError};
use crate::schema::{Clustering, Column, Table};

/// 100-ns intervals between the UUID epoch (1582-10-15) and the Unix epoch.
const GREGORIAN_OFFSET: u64 = 0x01B2_1DD2_1381_4000;

/// 3.11's `Lists.PrecisionTime.REFERENCE_TIME` (2010-01-01, in ms): prepended elements are
/// named by times mirrored before it, so that each prepend goes before the last.
const PREPEND_REFERENCE_MS: u64 = 1_262_304_000_000;

/// The last time UUID tick handed out for an append, so that two appends never share one.
static LAST_APPEND: AtomicU64 = AtomicU64::new(0);
/// The same for prepends, going down.
static LAST_PREPEND: AtomicU64 = AtomicU64::new(u64::MAX);

/// This process's clock sequence and node: random, so that two coordinators appending at the
/// same tick still name their elements apart.
fn node_part() -> &'static [u8; 8] {
    static NODE: OnceLock<[u8; 8]> = OnceLock::new();
    NODE.get_or_init(|| {
        let random = uuid::Uuid::new_v4();
        let mut out = [0u8; 8];
        out.copy_from_slice(&random.as_bytes()[8..]);
        out[0] = (out[0] & 0x3F) | 0x80; // the RFC 4122 variant
        out[2] |= 0x01; // a multicast node id, as RFC 4122 asks of random ones
        out
    })
}

fn time_uuid(ticks: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[0..4].copy_from_slice(&((ticks & 0xFFFF_FFFF) as u32).to_be_bytes());
    out[4..6].copy_from_slice(&(((ticks >> 32) & 0xFFFF) as u16).to_be_bytes());
    out[6..8].copy_from_slice(&((((ticks >> 48) & 0x0FFF) as u16) | 0x1000).to_be_bytes());
    out[8..].copy_from_slice(node_part());
    out
}

fn now_ticks() -> u64 {
    let micros = u64::try_from(model::data::now_micros()).unwrap_or(0);
    micros * 10 + GREGORIAN_OFFSET
}

/// `n` fresh keys for appended list elements, increasing, after every key given before.
pub(super) fn append_keys(n: usize) -> Vec<[u8; 16]> {
    let n = n as u64;
    let mut start = 0;
    let _ = LAST_APPEND.fetch_update(Ordering::AcqRel, Ordering::Acquire, |last| {
        start = now_ticks().max(last + 1);
        Some(start + n)
    });
    (0..n).map(|i| time_uuid(start + i)).collect()
}

/// `n` fresh keys for prepended list elements, increasing among themselves, all before every
/// key handed out earlier (appended or prepended).
pub(super) fn prepend_keys(n: usize) -> Vec<[u8; 16]> {
    let n = n as u64;
    let reference = PREPEND_REFERENCE_MS * 10_000 + GREGORIAN_OFFSET;
    let mirrored = reference.saturating_sub(now_ticks().saturating_sub(reference));
    let mut end = 0;
    let _ = LAST_PREPEND.fetch_update(Ordering::AcqRel, Ordering::Acquire, |last| {
        end = mirrored.min(last.saturating_sub(1));
        Some(end.saturating_sub(n))
    });
    (0..n).map(|i| time_uuid(end.saturating_sub(n) + i)).collect()
}

/// One element's cell: its key (the end of its name) and its value.
pub(super) type ElementCell = (Vec<u8>, Vec<u8>);

/// The element cells of a whole collection value for column `c`.
pub(super) fn cells_of(c: &Column, value: &[u8], prepend: bool) -> Result<Vec<ElementCell>, CqlError> {
    let Some(kind) = c.ty.collection_kind() else {
        return invalid(format!("column {} is not a collection", c.name));
    };
    let elements = read_elements(kind, value).or_else(|e| invalid(format!("Invalid value for {}: {e}", c.name)))?;
    Ok(match kind {
        CollectionKind::List => {
            let keys = if prepend { prepend_keys(elements.len()) } else { append_keys(elements.len()) };
            keys.into_iter().zip(elements).map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
        }
        CollectionKind::Set => elements.into_iter().map(|e| (e.to_vec(), Vec::new())).collect(),
        CollectionKind::Map => elements.chunks(2).map(|kv| (kv[0].to_vec(), kv[1].to_vec())).collect(),
    })
}

/// The keys a `c = c - v` removes: a set's elements, or a map's keys (`v` a set of keys).
pub(super) fn removed_keys(c: &Column, value: &[u8]) -> Result<Vec<Vec<u8>>, CqlError> {
    let kind = match c.ty.collection_kind() {
        Some(CollectionKind::Set | CollectionKind::Map) => CollectionKind::Set,
        _ => return invalid(format!("column {} has no keys to remove", c.name)),
    };
    let elements = read_elements(kind, value).or_else(|e| invalid(format!("Invalid value for {}: {e}", c.name)))?;
    Ok(elements.into_iter().map(<[u8]>::to_vec).collect())
}

/// A list operation that needs the list as it is.
#[derive(Clone, Debug)]
pub(super) enum ListOp {
    /// `l[i] = v` (null: the element deleted).
    Set(i32, Value),
    /// `DELETE l[i]`.
    Delete(i32),
    /// `l = l - [...]`: every element equal to one of these deleted.
    Discard(Vec<Vec<u8>>),
}

/// A list operation on one partition's row, with its write's time and TTL.
#[derive(Clone, Debug)]
pub(super) struct ListRead {
    pub key: Vec<u8>,
    pub clustering: Clustering,
    pub column: Column,
    pub op: ListOp,
    pub timestamp: i64,
    pub ttl: i32,
    pub now: i32,
}

/// The elements of a whole list value.
pub(super) fn list_values(c: &Column, value: &[u8]) -> Result<Vec<Vec<u8>>, CqlError> {
    let elements = read_elements(CollectionKind::List, value)
        .or_else(|e| invalid(format!("Invalid value for {}: {e}", c.name)))?;
    Ok(elements.into_iter().map(<[u8]>::to_vec).collect())
}

/// Reads each list at `cl` (3.11 reads it as the statement's consistency level asks) and adds
/// the cells its operation writes to the mutation of its partition.
pub(super) async fn resolve(
    ctx: &Context<'_>,
    table: &Table,
    reads: Vec<ListRead>,
    mutations: &mut Vec<RowMutation>,
    cl: ConsistencyLevel,
) -> Result<(), CqlError> {
    let meta = ctx.coordinator.cf_metadata(&table.keyspace, &table.name)?;
    let (ks, cf) = meta.shared_names();
    let commands: Vec<ReadCommand> = reads
        .iter()
        .map(|r| {
            let (start, end) = table.collection_bounds(&r.clustering, &r.column);
            ReadCommand {
                keyspace: ks.clone(),
                cf: cf.clone(),
                key: r.key.clone(),
                filter: ReadFilter::slice(start, end, false, usize::MAX, CountUnit::Cells),
            }
        })
        .collect();
    let results = ctx.coordinator.read(commands, cl).await?;
    for (r, cells) in reads.into_iter().zip(results) {
        let elements: Vec<Cell> = cells.into_iter().filter(|c| c.is_live(r.now)).collect();
        let size = elements.len();
        let written = |name: Vec<u8>, value: Option<Vec<u8>>| match value {
            Some(v) if r.ttl > 0 => Cell::expiring(name, v, r.timestamp, r.ttl, r.now),
            Some(v) => Cell::live(name, v, r.timestamp),
            None => Cell::tombstone(name, r.timestamp, r.now),
        };
        let at = |index: i32, if_null: &str| -> Result<&Cell, CqlError> {
            if elements.is_empty() {
                return invalid(if_null);
            }
            match usize::try_from(index).ok().and_then(|i| elements.get(i)) {
                Some(cell) => Ok(cell),
                None => invalid(format!("List index {index} out of bound, list has size {size}")),
            }
        };
        let new_cells: Vec<Cell> = match &r.op {
            ListOp::Set(index, value) => {
                let name = at(*index, "Attempted to set an element on a list which is null")?.name.clone();
                match value {
                    Value::Unset => Vec::new(),
                    v => vec![written(name, v.bytes().map(<[u8]>::to_vec))],
                }
            }
            ListOp::Delete(index) => {
                vec![written(
                    at(*index, "Attempted to delete an element from a list which is null")?.name.clone(),
                    None,
                )]
            }
            ListOp::Discard(values) => {
                let element = match &r.column.ty {
                    model::marshal::AbstractType::List { element, .. } => element.as_ref().clone(),
                    other => other.clone(),
                };
                elements
                    .iter()
                    .filter(|e| values.iter().any(|v| element.compare(v, &e.value).is_eq()))
                    .map(|e| written(e.name.clone(), None))
                    .collect()
            }
        };
        if new_cells.is_empty() {
            continue;
        }
        let index = match mutations.iter().position(|m| m.key == r.key) {
            Some(i) => i,
            None => {
                mutations.push(RowMutation::new(table.keyspace.clone(), r.key.clone()));
                mutations.len() - 1
            }
        };
        let row = mutations[index].row_mut(&table.name);
        for cell in new_cells {
            insert_cell(&meta.cmp, &mut row.cells, cell);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::marshal::AbstractType;

    #[test]
    fn list_keys_keep_insertion_order_with_prepends_first() {
        let t = AbstractType::TimeUuid;
        let first = append_keys(3);
        let later = append_keys(2);
        let front = prepend_keys(2);
        let fronter = prepend_keys(1);
        let order = [&fronter[..], &front[..], &first[..], &later[..]].concat();
        for pair in order.windows(2) {
            assert_eq!(t.compare(&pair[0], &pair[1]), std::cmp::Ordering::Less);
        }
        for k in &order {
            assert_eq!(t.validate(k), Ok(()));
        }
    }
}
