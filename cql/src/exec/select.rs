//! SELECT: partitions read by key (`=`, `IN`) or scanned in token order, their cells grouped
//! into CQL rows by clustering prefix, then filtered, ordered, limited and projected.

use std::cmp::Ordering;

use cluster::consistency::ConsistencyLevel;
use cluster::coordinator::{RangeCommand, ReadCommand};
use model::data::{now_seconds, Cell};
use model::dht::{KeyBound, Partitioner};
use model::filter::{CountUnit, ReadFilter};
use model::marshal::{write_elements, AbstractType, CollectionKind};

use super::markers::spec;
use super::paging::{PageState, Resume};
use super::restrict::{restrictions, satisfies, Restriction, Restrictions};
use super::selectors::{self, RowView, Selected};
use super::values::{term_value, Binder, Value};
use super::{invalid, ColumnSpec, Context, CqlError, Outcome, ResultSet};
use crate::ast::{Relation, Select, Selection, Term};
use crate::schema::{CellName, Column, ColumnKind, Layout, Table};

/// Partitions a scan asks for at a time.
const SCAN_PAGE: usize = 1000;
/// Rows a SELECT without LIMIT answers at most over Thrift (which has no paging): 3.11's
/// default LIMIT for Thrift's CQL calls is 10,000; Sibyl lets more through up to this bound.
const MAX_ROWS: usize = 1_000_000;

const FILTERING: &str = "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING";

/// Inclusive slices of cell names, in comparator order (a read filter's ranges).
type Slices = Vec<(Vec<u8>, Vec<u8>)>;

/// One CQL row: its partition, clustering values and cells by column name.
pub(super) struct CqlRow {
    pub partition: usize,
    pub clustering: Vec<Vec<u8>>,
    pub cells: Vec<(Vec<u8>, Cell)>,
}

impl CqlRow {
    pub fn cell(&self, column: &Column, layout: Layout) -> Option<&Cell> {
        match layout {
            Layout::Dense { .. } | Layout::Super => self.cells.first().map(|(_, c)| c),
            Layout::Sparse => self.cells.iter().find(|(n, _)| n == column.name.as_bytes()).map(|(_, c)| c),
            Layout::StaticCompact => self.cells.iter().find(|(n, _)| *n == column.cell_name).map(|(_, c)| c),
        }
    }
}

fn selection(table: &Table, s: &Select, partitioner: Partitioner) -> Result<Vec<(Selected, String)>, CqlError> {
    let selectors = match &s.selection {
        Selection::Wildcard => {
            return Ok(table.columns().map(|c| (Selected::Column(c.clone()), c.name.clone())).collect())
        }
        Selection::Selectors(v) => v,
    };
    let mut out = Vec::new();
    for sel in selectors {
        let (what, default_name) = selectors::resolve(table, &sel.selectable, partitioner)?;
        let name = sel.alias.as_ref().map(|a| a.name().to_string()).unwrap_or(default_name);
        out.push((what, name));
    }
    let aggregates = out.iter().filter(|(s, _)| s.is_aggregate()).count();
    if aggregates > 0 && aggregates < out.len() && s.group_by.is_empty() {
        return invalid("the select clause must either contain only aggregates or no aggregate");
    }
    Ok(out)
}

fn positive_limit(term: &Term, what: &str, binder: &mut Binder) -> Result<Option<usize>, CqlError> {
    match term_value(term, &AbstractType::Int32, what, binder)? {
        Value::Bytes(b) => {
            let n = i32::from_be_bytes(b.try_into().unwrap_or_default());
            if n <= 0 {
                return invalid(format!(
                    "{} must be strictly positive",
                    if what == "[limit]" { "LIMIT" } else { "PER PARTITION LIMIT" }
                ));
            }
            Ok(Some(n as usize))
        }
        Value::Null => invalid(format!(
            "Invalid null value of {}",
            if what == "[limit]" { "limit" } else { "per partition limit" }
        )),
        Value::Unset => Ok(None),
    }
}

pub(super) async fn select(
    ctx: &Context<'_>,
    s: &Select,
    binder: &mut Binder<'_>,
    cl: ConsistencyLevel,
) -> Result<Outcome, CqlError> {
    let table = ctx.table(&s.table)?;
    let group_by = group_columns(&table, s)?;
    let partitioner = ctx.coordinator.partitioner();
    let selected = selection(&table, s, partitioner)?;
    let r = restrictions(&table, &s.where_clause, ctx.coordinator.partitioner(), binder)?;
    let per_partition = match &s.per_partition_limit {
        Some(t) => positive_limit(t, "[per_partition_limit]", binder)?,
        None => None,
    };
    let limit = match &s.limit {
        Some(t) => positive_limit(t, "[limit]", binder)?,
        None => None,
    };
    let keys = r.partition_keys(&table)?;
    let clustering_ranges = check_restrictions(&table, &r, keys.is_some(), s.allow_filtering)?;
    if s.distinct {
        for (what, _) in &selected {
            match what {
                Selected::Column(c) if c.kind != ColumnKind::PartitionKey && !c.is_static => {
                    return invalid(format!(
                    "SELECT DISTINCT queries must only request partition key columns and/or static columns (not {})",
                    c.name
                ))
                }
                _ => {}
            }
        }
        let aggregate_only = selected.iter().all(|(s, _)| s.is_aggregate());
        if let Some(missing) = table
            .partition_key
            .iter()
            .find(|k| !selected.iter().any(|(s, _)| matches!(s, Selected::Column(c) if c.name == k.name)))
        {
            if !aggregate_only {
                return invalid(format!(
                    "SELECT DISTINCT queries must request all the partition key columns (missing {})",
                    missing.name
                ));
            }
        }
    }
    let reverse = order_by(&table, s, keys.is_some())?;
    let is_count = selected.iter().any(|(s, _)| s.is_aggregate());
    if is_count || group_by > 0 {
        warn_aggregation(&table, s);
    }
    // Aggregates and groups answer in one page (3.11 pages them inside the node).
    let paged = ctx.paging.as_ref().filter(|_| !is_count && group_by == 0);
    let resume = match paged.and_then(|p| p.state.as_deref()) {
        Some(bytes) => Some(PageState::decode(bytes)?),
        None => None,
    };
    let sent = resume.as_ref().map_or(0, |r| usize::try_from(r.sent).unwrap_or(usize::MAX));
    // Where a scan takes up again: the last partition, after its last row sent.
    let after = match (&keys, resume.as_ref().map(|r| &r.resume)) {
        (None, Some(Resume::After { key, clustering, in_partition })) => {
            Some((key.clone(), clustering.clone(), *in_partition))
        }
        _ => None,
    };
    let budget = limit.map(|n| n.saturating_sub(sent));
    let mut wanted =
        if is_count || group_by > 0 || !s.order_by.is_empty() { MAX_ROWS } else { limit.unwrap_or(MAX_ROWS) };
    if let (Some(page), None) = (paged, &keys) {
        // One row more than the page, to know whether another page follows.
        wanted = wanted.min(budget.unwrap_or(MAX_ROWS)).min(page.page_size.saturating_add(1));
    }

    let whole_partition = clustering_ranges.len() == 1 && clustering_ranges[0] == (Vec::new(), Vec::new());
    let ranges = match single_row_cells(&table) {
        Some(names) if keys.is_some() && whole_partition => names,
        _ => clustering_ranges,
    };
    let filter = ReadFilter { ranges, reversed: false, count: usize::MAX, count_unit: CountUnit::Cells };
    let mut partitions: Vec<(Vec<u8>, Vec<Cell>)> = Vec::new();
    let mut rows: Vec<CqlRow> = Vec::new();
    let now = now_seconds();
    let take = |key: Vec<u8>, cells: Vec<Cell>, rows: &mut Vec<CqlRow>, partitions: &mut Vec<(Vec<u8>, Vec<Cell>)>| {
        let index = partitions.len();
        let before = rows.len();
        group(&table, index, cells, now, rows);
        rows.retain_mut(|row| row.partition != index || keep(&table, &r, &key, row));
        let mut already = 0;
        if let Some((_, last_clustering, in_partition)) = after.as_ref().filter(|(k, _, _)| *k == key) {
            // The partition the last page ended in: only the rows after its last one.
            if s.distinct {
                rows.truncate(before);
            } else {
                rows.retain(|row| {
                    row.partition != index || clustering_order(&table, &row.clustering, last_clustering).is_gt()
                });
            }
            already = usize::try_from(*in_partition).unwrap_or(usize::MAX);
        }
        if s.distinct && rows.len() > before {
            rows.truncate(before + 1);
        }
        if let Some(n) = per_partition {
            let n = n.saturating_sub(already);
            rows.truncate(before + n.min(rows.len() - before));
        }
        partitions.push((key, Vec::new()));
    };
    let built = super::system_tables::is_virtual(&table);
    if built {
        for (key, cells) in super::system_tables::partitions(ctx, &table) {
            if keys.as_ref().map_or(true, |wanted| wanted.contains(&key)) {
                take(key, cells, &mut rows, &mut partitions);
            }
        }
    }
    match &keys {
        _ if built => {}
        Some(keys) => {
            let meta = ctx.coordinator.cf_metadata(&table.keyspace, &table.name)?;
            let (ks, cf) = meta.shared_names();
            let command =
                |key: Vec<u8>, filter: ReadFilter| ReadCommand { keyspace: ks.clone(), cf: cf.clone(), key, filter };
            // One key (every prepared point read) takes the coordinator's one-partition path.
            let results = match keys.as_slice() {
                [key] => vec![ctx.coordinator.read_partition(command(key.clone(), filter), cl).await?],
                _ => {
                    ctx.coordinator.read(keys.iter().map(|k| command(k.clone(), filter.clone())).collect(), cl).await?
                }
            };
            for (key, cells) in keys.iter().zip(results) {
                take(key.clone(), cells, &mut rows, &mut partitions);
            }
        }
        None => {
            let (mut start, end) = r.token_bounds(partitioner)?;
            if let Some((key, _, _)) = &after {
                start = KeyBound::Key { key: partitioner.decorate(key), inclusive: true };
            }
            loop {
                let command = RangeCommand {
                    keyspace: table.keyspace.clone(),
                    cf: table.name.clone(),
                    pieces: vec![(start.clone(), end.clone())],
                    filter: filter.clone(),
                    max_rows: SCAN_PAGE,
                };
                let page = ctx.coordinator.scan(command, cl).await?;
                let full = page.len() >= SCAN_PAGE;
                let last = page.last().map(|(k, _)| k.clone());
                for (key, cells) in page {
                    take(key.key, cells, &mut rows, &mut partitions);
                }
                if !full || rows.len() >= wanted {
                    break;
                }
                match last {
                    Some(k) => start = KeyBound::Key { key: k, inclusive: false },
                    None => break,
                }
            }
        }
    }

    if !s.order_by.is_empty() {
        // The table's order (a descending column reversed), or its reverse; across the
        // partitions of an IN as well.
        rows.sort_by(|a, b| {
            for (i, c) in table.clustering.iter().enumerate() {
                let (x, y) = (a.clustering.get(i), b.clustering.get(i));
                let o = match (x, y) {
                    (Some(x), Some(y)) => c.ty.compare(x, y),
                    _ => Ordering::Equal,
                };
                let o = if c.reversed { o.reverse() } else { o };
                if o != Ordering::Equal {
                    return if reverse { o.reverse() } else { o };
                }
            }
            Ordering::Equal
        });
    }
    let columns = columns_of(&table, &selected);
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        let key = &partitions[row.partition].0;
        let key_parts = table.split_partition_key(key).unwrap_or_default();
        let cell = |c: &Column| row.cell(c, table.layout);
        let view = RowView { key, key_parts: &key_parts, clustering: &row.clustering, cell: &cell, now, partitioner };
        out.push(selected.iter().map(|(what, _)| what.eval(&view)).collect::<Vec<_>>());
    }
    if group_by > 0 || is_count {
        // Groups of consecutive rows with the same partition and first `group_by` primary key
        // columns (all the rows in one group without GROUP BY); each gives one row, its
        // aggregates folded and its other selectors the group's first row's.
        let clustering_in_group = group_by.saturating_sub(table.partition_key.len());
        let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            let same = group_by > 0
                && groups.last().is_some_and(|g| {
                    let first = &rows[g.start];
                    first.partition == row.partition
                        && first
                            .clustering
                            .iter()
                            .take(clustering_in_group)
                            .eq(row.clustering.iter().take(clustering_in_group))
                });
            match groups.last_mut() {
                Some(g) if same || group_by == 0 => g.end = i + 1,
                _ => groups.push(i..i + 1),
            }
        }
        if groups.is_empty() && group_by == 0 {
            groups.push(0..0);
        }
        let mut folded_rows: Vec<Vec<Option<Vec<u8>>>> = groups
            .into_iter()
            .map(|g| {
                selected
                    .iter()
                    .enumerate()
                    .map(|(i, (what, _))| match what {
                        Selected::Aggregate { function, ty, arg } => {
                            let values: Vec<Option<Vec<u8>>> = out[g.clone()].iter().map(|r| r[i].clone()).collect();
                            let input = arg.as_ref().map(|a| a.ty()).unwrap_or_else(|| ty.clone());
                            selectors::aggregate(*function, &input, &values)
                        }
                        _ => out.get(g.start).and_then(|r| r[i].clone()),
                    })
                    .collect()
            })
            .collect();
        if let Some(n) = limit.filter(|_| group_by > 0) {
            folded_rows.truncate(n);
        }
        if s.json {
            return Ok(Outcome::Rows(super::json::as_json(&table, columns, folded_rows)));
        }
        return Ok(Outcome::Rows(ResultSet { columns, rows: folded_rows, paging_state: None }));
    }
    let mut paging_state = None;
    match paged {
        Some(page) => {
            // A scan read from where the last page ended; named partitions read again, the
            // rows already sent skipped.
            let skip = if keys.is_some() { sent.min(out.len()) } else { 0 };
            let available = out.len() - skip;
            let n = page.page_size.min(budget.unwrap_or(usize::MAX)).min(available);
            if available > n && budget.map_or(true, |b| n < b) && n > 0 {
                let resume = if keys.is_some() {
                    Resume::Skip
                } else {
                    let last = &rows[skip + n - 1];
                    let key = partitions[last.partition].0.clone();
                    let mut in_partition =
                        rows[skip..skip + n].iter().filter(|r| r.partition == last.partition).count() as u64;
                    if let Some((k, _, sent_before)) = &after {
                        if *k == key {
                            in_partition += sent_before;
                        }
                    }
                    Resume::After { key, clustering: last.clustering.clone(), in_partition }
                };
                paging_state = Some(PageState { resume, sent: (sent + n) as u64 }.encode());
            }
            out = out.into_iter().skip(skip).take(n).collect();
        }
        None => {
            if let Some(n) = limit {
                out.truncate(n);
            }
        }
    }
    if s.json {
        return Ok(Outcome::Rows(ResultSet { paging_state, ..super::json::as_json(&table, columns, out) }));
    }
    Ok(Outcome::Rows(ResultSet { columns, rows: out, paging_state }))
}

/// The order of two rows' clustering values in a partition, as the table stores them (a
/// descending column reversed); a shorter prefix (a static row) first.
fn clustering_order(table: &Table, a: &[Vec<u8>], b: &[Vec<u8>]) -> Ordering {
    for (i, c) in table.clustering.iter().enumerate() {
        let o = match (a.get(i), b.get(i)) {
            (Some(x), Some(y)) => c.ty.compare(x, y),
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        };
        let o = if c.reversed { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// 3.11's warnings for an aggregate (or GROUP BY) that reads more than one partition: with no
/// partition key restriction (`token()` counts as one), or with an IN on it.
fn warn_aggregation(table: &Table, s: &Select) {
    let is_key = |name: &str| table.partition_key.iter().any(|k| k.name == name);
    let mut restricted = false;
    let mut listed = false;
    for relation in &s.where_clause {
        match relation {
            Relation::Token { .. } => restricted = true,
            Relation::Column { column, .. } if is_key(column.name()) => restricted = true,
            Relation::In { column, .. } if is_key(column.name()) => (restricted, listed) = (true, true),
            _ => {}
        }
    }
    if !restricted {
        super::client_warn::warn("Aggregation query used without partition key".into());
    } else if listed {
        super::client_warn::warn("Aggregation query used on multiple partition keys (IN restriction)".into());
    }
}

/// GROUP BY: how many leading primary key columns group the rows (0: no GROUP BY). They must
/// be the primary key's first columns in order (3.11's rule).
fn group_columns(table: &Table, s: &Select) -> Result<usize, CqlError> {
    let key: Vec<&Column> = table.partition_key.iter().chain(&table.clustering).collect();
    for (i, id) in s.group_by.iter().enumerate() {
        let Some(c) = table.column(id.name()) else {
            return invalid(format!("Undefined column name {}", id.name()));
        };
        if key.get(i).map(|k| k.name.as_str()) != Some(c.name.as_str()) {
            return invalid(
                "Group by currently only support groups of columns following their declared order in the PRIMARY KEY",
            );
        }
    }
    if !s.group_by.is_empty() && s.group_by.len() < table.partition_key.len() {
        return invalid("Group by is not supported on only a part of the partition key");
    }
    Ok(s.group_by.len())
}

fn columns_of(table: &Table, selected: &[(Selected, String)]) -> Vec<ColumnSpec> {
    selected.iter().map(|(what, name)| spec(table, name, &what.ty())).collect()
}

/// The columns a SELECT's rows will have, known before it runs (3.11's result metadata of a
/// prepared SELECT).
pub(super) fn result_columns(ctx: &Context<'_>, s: &Select) -> Result<Vec<ColumnSpec>, CqlError> {
    let table = ctx.table(&s.table)?;
    let selected = selection(&table, s, ctx.coordinator.partitioner())?;
    if s.json {
        return Ok(vec![super::json::json_column(&table)]);
    }
    Ok(columns_of(&table, &selected))
}

/// Groups a partition's live cells into CQL rows. The elements of a non-frozen collection
/// become one cell holding the whole collection, as a frozen one would be written.
pub(super) fn group(table: &Table, partition: usize, cells: Vec<Cell>, now: i32, rows: &mut Vec<CqlRow>) {
    let first = rows.len();
    let mut statics: Vec<(Vec<u8>, Cell)> = Vec::new();
    let mut elements = Elements::default();
    for cell in cells {
        if !cell.is_live(now) {
            continue;
        }
        let Some(CellName { clustering, column, element }) = table.split_cell_name(&cell.name) else {
            tracing::warn!(keyspace = %table.keyspace, table = %table.name, "a cell name that does not fit the table's layout is skipped");
            continue;
        };
        if let Some(key) = element {
            let column = column.unwrap_or_default();
            if is_current(table, Some(&column), cell.timestamp) {
                let is_static = clustering.len() < table.clustering.len();
                let row = if is_static {
                    None
                } else {
                    if !(rows.len() > first && rows.last().is_some_and(|r| r.clustering == clustering)) {
                        rows.push(CqlRow { partition, clustering, cells: Vec::new() });
                    }
                    Some(rows.len() - 1)
                };
                if !elements.belong(row, &column) {
                    elements.flush(table, rows);
                    elements.flush_statics(table, &mut statics);
                }
                elements.push(row, column, key, &cell);
            }
            continue;
        }
        elements.flush(table, rows);
        elements.flush_statics(table, &mut statics);
        if table.layout == Layout::Sparse && !is_current(table, column.as_deref(), cell.timestamp) {
            continue;
        }
        let is_static = table.layout == Layout::Sparse && clustering.len() < table.clustering.len();
        if is_static {
            statics.push((column.unwrap_or_default(), cell));
            continue;
        }
        let same = match table.layout {
            Layout::Sparse => rows.len() > first && rows.last().is_some_and(|r| r.clustering == clustering),
            Layout::StaticCompact => rows.len() > first,
            Layout::Dense { .. } | Layout::Super => false,
        };
        if !same {
            rows.push(CqlRow { partition, clustering, cells: Vec::new() });
        }
        if let Some(row) = rows.last_mut() {
            let name = column.unwrap_or_default();
            if table.layout == Layout::Sparse && name.is_empty() {
                continue; // the row marker: the row exists, with no value of its own
            }
            row.cells.push((name, cell));
        }
    }
    elements.flush(table, rows);
    elements.flush_statics(table, &mut statics);
    // Static values belong to every row of the partition; a partition with static values and
    // no row shows as one row whose clustering columns are null, as in 3.11.
    if !statics.is_empty() {
        if rows.len() == first {
            rows.push(CqlRow { partition, clustering: Vec::new(), cells: statics });
        } else {
            for row in &mut rows[first..] {
                row.cells.extend(statics.iter().cloned());
            }
        }
    }
}

/// The elements of the collection being read: its row (`None`: a static column), column and
/// (key, value) pairs, until the cells move on.
#[derive(Default)]
struct Elements {
    row: Option<usize>,
    column: Vec<u8>,
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    timestamp: i64,
}

impl Elements {
    /// Whether an element of `column` in `row` continues the collection being read.
    fn belong(&self, row: Option<usize>, column: &[u8]) -> bool {
        self.entries.is_empty() || (self.row == row && self.column == column)
    }

    fn push(&mut self, row: Option<usize>, column: Vec<u8>, key: Vec<u8>, cell: &Cell) {
        self.row = row;
        self.column = column;
        self.timestamp = self.timestamp.max(cell.timestamp);
        self.entries.push((key, cell.value.clone()));
    }

    /// The whole collection as one cell, in the protocol's serialization.
    fn take(&mut self, table: &Table) -> Option<(Option<usize>, Vec<u8>, Cell)> {
        if self.entries.is_empty() {
            return None;
        }
        let entries = std::mem::take(&mut self.entries);
        let column = std::mem::take(&mut self.column);
        let kind = std::str::from_utf8(&column).ok().and_then(|n| table.column(n)).and_then(|c| c.ty.collection_kind());
        let value = match kind {
            Some(CollectionKind::List) => write_elements(entries.len(), entries.iter().map(|(_, v)| v.as_slice())),
            Some(CollectionKind::Set) => write_elements(entries.len(), entries.iter().map(|(k, _)| k.as_slice())),
            Some(CollectionKind::Map) => {
                write_elements(entries.len(), entries.iter().flat_map(|(k, v)| [k.as_slice(), v.as_slice()]))
            }
            None => return None,
        };
        let cell = Cell::live(column.clone(), value, std::mem::take(&mut self.timestamp));
        Some((self.row.take(), column, cell))
    }

    /// Ends a row's collection: its cell joins the row.
    fn flush(&mut self, table: &Table, rows: &mut [CqlRow]) {
        if self.row.is_none() {
            return;
        }
        if let Some((Some(row), column, cell)) = self.take(table) {
            if let Some(r) = rows.get_mut(row) {
                r.cells.push((column, cell));
            }
        }
    }

    /// Ends a static collection: its cell joins the static values.
    fn flush_statics(&mut self, table: &Table, statics: &mut Vec<(Vec<u8>, Cell)>) {
        if self.row.is_some() {
            return;
        }
        if let Some((None, column, cell)) = self.take(table) {
            statics.push((column, cell));
        }
    }
}

/// Whether a sparse table's cell belongs to a column it has now: the row marker, or a column
/// that exists and was not dropped after the cell was written.
fn is_current(table: &Table, column: Option<&[u8]>, timestamp: i64) -> bool {
    let name = column.unwrap_or_default();
    if name.is_empty() {
        return true;
    }
    let Ok(name) = std::str::from_utf8(name) else { return false };
    if table.dropped.get(name).is_some_and(|when| timestamp <= *when) {
        return false;
    }
    table.regular.iter().any(|c| c.name == name)
}

/// Whether a row passes the restrictions that the read could not apply.
fn keep(table: &Table, r: &Restrictions, _key: &[u8], row: &CqlRow) -> bool {
    if !r.tuples.iter().all(|(columns, t)| t.holds(columns, &row.clustering)) {
        return false;
    }
    for (c, restriction) in &r.columns {
        let ok = match c.kind {
            ColumnKind::PartitionKey => true,
            ColumnKind::Clustering => satisfies(c, row.clustering.get(c.position).map(Vec::as_slice), restriction),
            ColumnKind::Regular => {
                satisfies(c, row.cell(c, table.layout).map(|cell| cell.value.as_slice()), restriction)
            }
        };
        if !ok {
            return false;
        }
    }
    true
}

/// Every cell a partition of `table` can hold, as name slices, when it holds one row of known
/// cells ([`Table::row_cell_names`]). Read by name, such a partition is a small read, which
/// the coordinator answers where it stands instead of handing it to a reader thread.
fn single_row_cells(table: &Table) -> Option<Slices> {
    Some(table.row_cell_names()?.iter().map(|name| (name.clone(), name.clone())).collect())
}

/// Checks the clustering and regular restrictions as 3.11 does, and gives the slices of cell
/// names to read (a superset of what they select; rows are filtered again after the read).
fn check_restrictions(table: &Table, r: &Restrictions, keyed: bool, allow_filtering: bool) -> Result<Slices, CqlError> {
    let open = vec![(Vec::new(), Vec::new())];
    let mut needs_filtering = false;
    // The clustering prefix that the read can use: `=` restrictions, then one IN or slice.
    let mut prefix: Vec<&Vec<Vec<u8>>> = Vec::new();
    let mut last: Option<(&Column, &Restriction)> = None;
    let mut stopped_at: Option<&Column> = None;
    for c in &table.clustering {
        let restriction = r.of(&c.name);
        match (stopped_at, restriction) {
            (None, Some(Restriction::Values(v))) if v.len() == 1 => prefix.push(v),
            (None, Some(other)) => {
                last = Some((c, other));
                stopped_at = Some(c);
            }
            (None, None) => stopped_at = Some(c),
            (Some(_), None) => {}
            (Some(stop), Some(_)) => {
                if !allow_filtering {
                    return invalid(match last {
                        Some(_) => format!("Clustering column \"{}\" cannot be restricted (preceding column \"{}\" is restricted by a non-EQ relation)", c.name, stop.name),
                        None => format!("PRIMARY KEY column \"{}\" cannot be restricted as preceding column \"{}\" is not restricted", c.name, stop.name),
                    });
                }
                needs_filtering = true;
            }
        }
    }
    if r.columns.iter().any(|(c, _)| c.kind == ColumnKind::Regular) {
        needs_filtering = true;
    }
    if !keyed && (r.columns.iter().any(|(c, _)| c.kind != ColumnKind::PartitionKey) || !r.tuples.is_empty()) {
        needs_filtering = true;
    }
    if needs_filtering && !allow_filtering {
        return invalid(FILTERING);
    }
    if !keyed || table.layout == Layout::StaticCompact {
        return Ok(open);
    }
    let eq: Vec<Vec<u8>> = prefix.iter().map(|v| v[0].clone()).collect();
    let ranges = match last {
        Some((c, Restriction::Values(vs))) => {
            let mut ranges: Vec<(Vec<u8>, Vec<u8>)> = vs
                .iter()
                .map(|v| {
                    let mut p = eq.clone();
                    p.push(v.clone());
                    (table.prefix_bound(&p, false), table.prefix_bound(&p, true))
                })
                .collect();
            if c.reversed {
                ranges.reverse();
            }
            ranges
        }
        Some((c, Restriction::Slice { lower, upper })) => {
            // Raw names of a one-column compact table cannot exclude a value: read it and
            // filter it out after.
            let (lo, hi, _exact) = slice_bounds(table, &eq, c, lower, upper);
            vec![(lo, hi)]
        }
        // CONTAINS restricts regular columns only: it never ends the clustering prefix.
        Some((_, Restriction::Contains { .. })) | None => {
            vec![(table.prefix_bound(&eq, false), table.prefix_bound(&eq, true))]
        }
    };
    Ok(with_statics(table, ranges))
}

/// The cell-name slice (low, high in comparator order) of the rows whose clustering starts
/// with `eq` and whose next column `c` lies between `lower` and `upper`; `exact` is false when
/// the names cannot exclude a bound's own value (a one-column compact table's raw names), so
/// the slice holds more than asked.
pub(super) fn slice_bounds(
    table: &Table,
    eq: &[Vec<u8>],
    c: &Column,
    lower: &super::restrict::Bound,
    upper: &super::restrict::Bound,
) -> (Vec<u8>, Vec<u8>, bool) {
    // Neither a one-column compact table's raw names nor a super column family's can exclude
    // a bound's own value.
    let exact_bounds = !matches!(table.layout, Layout::Dense { compound: false } | Layout::Super);
    let mut exact = true;
    // Bounds in comparator order: a descending column's lower value bounds the high end. A
    // bound that includes its value's cells ends after them (or starts before).
    let mut bound = |b: &super::restrict::Bound, is_upper: bool| -> Vec<u8> {
        let high_end = is_upper != c.reversed;
        match b {
            None => table.prefix_bound(eq, high_end),
            Some((v, inclusive)) if !exact_bounds => {
                exact &= *inclusive;
                let mut p = eq.to_vec();
                p.push(v.clone());
                table.prefix_bound(&p, high_end)
            }
            Some((v, inclusive)) => {
                let mut p = eq.to_vec();
                p.push(v.clone());
                table.prefix_bound(&p, if high_end { *inclusive } else { !*inclusive })
            }
        }
    };
    let (lower_bound, upper_bound) = (bound(lower, false), bound(upper, true));
    if c.reversed {
        (upper_bound, lower_bound, exact)
    } else {
        (lower_bound, upper_bound, exact)
    }
}

/// The slices to read, with the partition's static cells (sorted first) when the table has any.
fn with_statics(table: &Table, mut ranges: Slices) -> Slices {
    let open = ranges.first().is_some_and(|(lo, _)| lo.is_empty());
    if table.has_statics() && !open {
        ranges.insert(0, table.static_slice());
    }
    ranges
}

/// Checks ORDER BY and says whether the rows come in the reverse of the table's order.
fn order_by(table: &Table, s: &Select, keyed: bool) -> Result<bool, CqlError> {
    if s.order_by.is_empty() {
        return Ok(false);
    }
    if !keyed {
        return invalid("ORDER BY is only supported when the partition key is restricted by an EQ or an IN.");
    }
    let mut reversed: Option<bool> = None;
    for (i, o) in s.order_by.iter().enumerate() {
        let Some(c) = table.column(o.column.name()) else {
            return invalid(format!("Order by on unknown column {}", o.column.name()));
        };
        if c.kind != ColumnKind::Clustering {
            return invalid(format!(
                "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got {}",
                c.name
            ));
        }
        if c.position != i {
            return invalid("Order by currently only support the ordering of columns following their declared order in the PRIMARY KEY");
        }
        // Each column is named in its declared order or the reverse of it, and all alike:
        // the rows come in the table's order, or all reversed.
        let this = o.descending != c.reversed;
        match reversed {
            None => reversed = Some(this),
            Some(r) if r != this => return invalid("Unsupported order by relation"),
            _ => {}
        }
    }
    Ok(reversed.unwrap_or(false))
}
