//! The read methods over the coordinator, for a keyspace the caller has resolved and authorized:
//! convert and validate the request, ask the coordinator, convert the answer.

use cluster::coordinator::{Coordinator, IndexCommand, PagedRangeCommand, RangeCommand, ReadCommand};
use model::data::compose_super;
use model::filter::{CountUnit, ReadFilter};
use model::schema::CfMetadata;
use thrift_idl as t;

use super::convert::{
    index_clause_expressions, index_expressions, key_range_bounds, key_slices, read_consistency, to_thrift_columns,
    Columns, ColumnsByKey, Found, GetSliceArgs,
};
use super::error::{ire, TResult, ThriftError};
use super::validate::{
    check_multi_slice_order, check_slice_order, predicate_filter, validate_column_path, validate_key,
    validate_key_type, validate_parent,
};

/// The column family, and the read filter of a predicate under `parent`.
fn prepare(
    c: &Coordinator,
    ks: &str,
    parent: &t::ColumnParent,
    predicate: t::SlicePredicate,
) -> TResult<(std::sync::Arc<CfMetadata>, ReadFilter)> {
    prepare_parts(c, ks, &parent.column_family, parent.super_column.as_deref(), predicate)
}

/// [`prepare`] of a parent given as its column family and super column.
fn prepare_parts(
    c: &Coordinator,
    ks: &str,
    column_family: &str,
    super_column: Option<&[u8]>,
    predicate: t::SlicePredicate,
) -> TResult<(std::sync::Arc<CfMetadata>, ReadFilter)> {
    let meta = c.cf_metadata(ks, column_family)?;
    validate_parent(&meta, super_column)?;
    let filter = predicate_filter(&meta, super_column, predicate)?;
    Ok((meta, filter))
}

fn command(meta: &CfMetadata, key: Vec<u8>, filter: ReadFilter) -> ReadCommand {
    let (keyspace, cf) = meta.shared_names();
    ReadCommand { keyspace, cf, key, filter }
}

pub async fn get(
    c: &Coordinator,
    ks: &str,
    key: Vec<u8>,
    path: t::ColumnPath,
    cl: t::ConsistencyLevel,
) -> TResult<Found> {
    let meta = c.cf_metadata(ks, &path.column_family)?;
    let (sc, col) = validate_column_path(&meta, &path)?;
    let cl = read_consistency(cl)?;
    validate_key_type(&meta, &key)?;
    let (name, within_super) = match (sc, col) {
        (Some(sc), Some(c)) => (compose_super(sc, c), true),
        (Some(sc), None) => (compose_super(sc, b""), false),
        (None, Some(c)) => (c.to_vec(), false),
        // validate_column_path refused it already.
        (None, None) => {
            return Err(ire(format!("column parameter is not optional for standard CF {}", meta.name())));
        }
    };
    let filter = ReadFilter::names(&meta.cmp, vec![name], CountUnit::Cells);
    let cells = c.read_partition(command(&meta, key, filter), cl).await?;
    Found::new(Columns { cells, is_super: meta.is_super(), within_super }).ok_or(ThriftError::NotFound)
}

pub async fn get_slice(c: &Coordinator, ks: &str, args: GetSliceArgs<'_>) -> TResult<Columns> {
    let GetSliceArgs { key, column_family, super_column, predicate, consistency_level } = args;
    let (meta, filter) = prepare_parts(c, ks, &column_family, super_column.as_deref(), predicate)?;
    let cl = read_consistency(consistency_level)?;
    validate_key_type(&meta, &key)?;
    let cells = c.read_partition(command(&meta, key, filter), cl).await?;
    Ok(Columns { cells, is_super: meta.is_super(), within_super: super_column.is_some() })
}

pub async fn get_count(
    c: &Coordinator,
    ks: &str,
    key: Vec<u8>,
    parent: t::ColumnParent,
    predicate: t::SlicePredicate,
    cl: t::ConsistencyLevel,
) -> TResult<i32> {
    let names = predicate.column_names.is_some();
    let (meta, filter) = prepare(c, ks, &parent, predicate)?;
    let cl = read_consistency(cl)?;
    // 3.11 checks the key against its validator only when it counts a list of names (through
    // its multiget path); a count over a slice takes the key as it is.
    if names {
        validate_key_type(&meta, &key)?;
    } else {
        validate_key(&key)?;
    }
    let counts = c.count(vec![command(&meta, key, filter)], cl).await?;
    Ok(counts.first().copied().unwrap_or(0) as i32)
}

/// The commands of a multiget, after checking every key.
fn multiget_commands(meta: &CfMetadata, keys: &[Vec<u8>], filter: &ReadFilter) -> TResult<Vec<ReadCommand>> {
    keys.iter()
        .map(|key| {
            validate_key_type(meta, key)?;
            Ok(command(meta, key.clone(), filter.clone()))
        })
        .collect()
}

pub async fn multiget_slice(
    c: &Coordinator,
    ks: &str,
    keys: Vec<Vec<u8>>,
    parent: t::ColumnParent,
    predicate: t::SlicePredicate,
    cl: t::ConsistencyLevel,
) -> TResult<ColumnsByKey> {
    let (meta, filter) = prepare(c, ks, &parent, predicate)?;
    let cl = read_consistency(cl)?;
    let commands = multiget_commands(&meta, &keys, &filter)?;
    let rows = c.read(commands, cl).await?;
    Ok(ColumnsByKey::new(keys, rows, meta.is_super(), parent.super_column.is_some()))
}

pub async fn multiget_count(
    c: &Coordinator,
    ks: &str,
    keys: Vec<Vec<u8>>,
    parent: t::ColumnParent,
    predicate: t::SlicePredicate,
    cl: t::ConsistencyLevel,
) -> TResult<std::collections::BTreeMap<Vec<u8>, i32>> {
    let (meta, filter) = prepare(c, ks, &parent, predicate)?;
    let cl = read_consistency(cl)?;
    let commands = multiget_commands(&meta, &keys, &filter)?;
    let counts = c.count(commands, cl).await?;
    Ok(keys.into_iter().zip(counts).map(|(k, n)| (k, n as i32)).collect())
}

pub async fn get_range_slices(
    c: &Coordinator,
    ks: &str,
    parent: t::ColumnParent,
    predicate: t::SlicePredicate,
    range: t::KeyRange,
    cl: t::ConsistencyLevel,
) -> TResult<Vec<t::KeySlice>> {
    let (meta, filter) = prepare(c, ks, &parent, predicate)?;
    let cl = read_consistency(cl)?;
    let row_filter = index_expressions(&meta, range.row_filter.as_deref().unwrap_or_default())?;
    if !row_filter.is_empty() && parent.super_column.is_some() {
        return Err(ire("super columns are not supported for indexing"));
    }
    let pieces = key_range_bounds(c.partitioner(), &range)?;
    if !row_filter.is_empty() {
        // Rows that satisfy the filter, through an index where one serves an EQ expression,
        // else by checking every row of the range (as Cassandra 3.11 filters one).
        let command = IndexCommand {
            keyspace: ks.to_string(),
            cf: meta.name().to_string(),
            pieces,
            filter,
            row_filter,
            max_rows: range.count as usize,
        };
        let rows = c.search(command, cl).await?;
        return Ok(key_slices(rows, meta.is_super(), parent.super_column.is_some()));
    }
    let command = RangeCommand {
        keyspace: ks.to_string(),
        cf: meta.name().to_string(),
        pieces,
        filter,
        max_rows: range.count as usize,
    };
    let rows = c.scan(command, cl).await?;
    Ok(key_slices(rows, meta.is_super(), parent.super_column.is_some()))
}

pub async fn get_paged_slice(
    c: &Coordinator,
    ks: &str,
    column_family: String,
    range: t::KeyRange,
    start_column: Vec<u8>,
    cl: t::ConsistencyLevel,
) -> TResult<Vec<t::KeySlice>> {
    let meta = c.cf_metadata(ks, &column_family)?;
    let pieces = key_range_bounds(c.partitioner(), &range)?;
    let cl = read_consistency(cl)?;
    if range.row_filter.as_ref().is_some_and(|f| !f.is_empty()) {
        return Err(ire("Cross-row paging is not supported along with index clauses"));
    }
    let start = range.start_key.clone().filter(|k| !k.is_empty()).map(|k| (k, start_column));
    let command = PagedRangeCommand {
        keyspace: ks.to_string(),
        cf: column_family,
        pieces,
        start,
        max_columns: range.count as usize,
    };
    let rows = c.scan_paged(command, cl).await?;
    // A super column family answers with whole super columns, as 3.11 does.
    Ok(key_slices(rows, meta.is_super(), false))
}

/// The rows from `clause.start_key` (inclusive) to the end of the ring that satisfy every
/// expression of the clause, in token order, at most `clause.count` of them.
pub async fn get_indexed_slices(
    c: &Coordinator,
    ks: &str,
    parent: t::ColumnParent,
    clause: t::IndexClause,
    predicate: t::SlicePredicate,
    cl: t::ConsistencyLevel,
) -> TResult<Vec<t::KeySlice>> {
    let (meta, filter) = prepare(c, ks, &parent, predicate)?;
    let row_filter = index_clause_expressions(&meta, &clause)?;
    let cl = read_consistency(cl)?;
    if clause.count <= 0 {
        return Ok(Vec::new());
    }
    let start = if clause.start_key.is_empty() {
        model::dht::KeyBound::Unbounded
    } else {
        validate_key(&clause.start_key)?;
        model::dht::KeyBound::Key { key: c.partitioner().decorate(&clause.start_key), inclusive: true }
    };
    let command = IndexCommand {
        keyspace: ks.to_string(),
        cf: meta.name().to_string(),
        pieces: vec![(start, model::dht::KeyBound::Unbounded)],
        filter,
        row_filter,
        max_rows: clause.count as usize,
    };
    let rows = c.search(command, cl).await?;
    Ok(key_slices(rows, meta.is_super(), parent.super_column.is_some()))
}

pub async fn get_multi_slice(
    c: &Coordinator,
    ks: &str,
    request: t::MultiSliceRequest,
) -> TResult<Vec<t::ColumnOrSuperColumn>> {
    let key = request.key.ok_or_else(|| ire("MultiSliceRequest.key is required"))?;
    let parent = request.column_parent.ok_or_else(|| ire("MultiSliceRequest.column_parent is required"))?;
    let meta = c.cf_metadata(ks, &parent.column_family)?;
    validate_key_type(&meta, &key)?;
    validate_parent(&meta, parent.super_column.as_deref())?;
    if meta.is_super() {
        return Err(ire("get_multi_slice does not support super column families"));
    }
    let reversed = request.reversed.unwrap_or(false);
    let count = request.count.unwrap_or(1000);
    if count < 0 {
        return Err(ire("get_multi_slice requires non-negative count"));
    }
    let cl = read_consistency(request.consistency_level.unwrap_or(t::ConsistencyLevel::ONE))?;
    let ty = meta.cmp.name_type();
    let mut slices = Vec::new();
    for s in request.column_slices.unwrap_or_default() {
        let (start, finish) = (s.start.unwrap_or_default(), s.finish.unwrap_or_default());
        check_slice_order(ty, &start, &finish, reversed)?;
        slices.push((start, finish));
    }
    if slices.is_empty() {
        slices.push((Vec::new(), Vec::new()));
    }
    check_multi_slice_order(ty, &slices, reversed)?;
    let filter = ReadFilter::slices(slices, reversed, count as usize, CountUnit::Cells);
    let cells = c.read_partition(command(&meta, key, filter), cl).await?;
    Ok(to_thrift_columns(cells, false, false))
}
