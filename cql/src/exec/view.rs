//! Materialized views (experimental, as in Cassandra): a view is a CQL table of its own whose
//! rows the coordinator derives from its base table's.
//!
//! Unlike 3.11, which updates a view on each base replica (paired with one view replica, under
//! the partition's lock, through the batchlog), Sibyl's coordinator does it: around each base
//! write it reads the base partition before and after, and writes the view rows that changed
//! (a view row whose key changed or whose base row went is deleted). So a view is exact for
//! writes that do not race on the same base partition through two coordinators, and a
//! coordinator that dies between the base write and the view's leaves the view behind until
//! the row is written again. CREATE MATERIALIZED VIEW builds the view from the existing rows
//! before it returns.

use std::collections::BTreeMap;
use std::sync::Arc;

use cluster::consistency::ConsistencyLevel;
use cluster::coordinator::{RangeCommand, ReadCommand};
use model::data::{now_seconds, Cell, DeletionTime, RangeTombstone};
use model::dht::KeyBound;
use model::filter::{insert_cell, ReadFilter};
use model::mutation::RowMutation;
use model::schema::{CfDef, CqlView};

use super::select::{group, CqlRow};
use super::{invalid, Context, CqlError, Outcome, SchemaChange};
use crate::ast::{
    ColumnDefinition, CqlType, CreateTable, CreateView, PrimaryKey, Relation, Selectable, Selection, TableElement,
    TableOption,
};
use crate::schema::{cql_native_type, Column, ColumnKind, Table};

/// The partitions a view build reads at a time.
const BUILD_PAGE: usize = 500;

/// One base row's values by column name, with the cell each regular value came from.
struct BaseRow {
    values: BTreeMap<String, Vec<u8>>,
    cells: BTreeMap<String, Cell>,
}

fn base_rows(table: &Table, key: &[u8], cells: &[Cell], now: i32) -> Vec<BaseRow> {
    let mut rows: Vec<CqlRow> = Vec::new();
    group(table, 0, cells.to_vec(), now, &mut rows);
    let key_parts = table.split_partition_key(key).unwrap_or_default();
    rows.into_iter()
        .filter(|r| r.clustering.len() == table.clustering.len())
        .map(|r| {
            let mut values = BTreeMap::new();
            let mut by_cell = BTreeMap::new();
            for c in table.columns() {
                let v = match c.kind {
                    ColumnKind::PartitionKey => key_parts.get(c.position).cloned(),
                    ColumnKind::Clustering => r.clustering.get(c.position).cloned(),
                    ColumnKind::Regular => r.cell(c, table.layout).map(|cell| {
                        by_cell.insert(c.name.clone(), cell.clone());
                        cell.value.clone()
                    }),
                };
                if let Some(v) = v {
                    values.insert(c.name.clone(), v);
                }
            }
            BaseRow { values, cells: by_cell }
        })
        .collect()
}

/// A view row's key: its partition key and clustering values.
type ViewKey = (Vec<u8>, Vec<Vec<u8>>);

/// A view row's key, if every one of its columns is set in the base row.
fn view_key(view: &Table, row: &BaseRow) -> Option<ViewKey> {
    let pk: Option<Vec<Vec<u8>>> = view.partition_key.iter().map(|c| row.values.get(&c.name).cloned()).collect();
    let clustering: Option<Vec<Vec<u8>>> = view.clustering.iter().map(|c| row.values.get(&c.name).cloned()).collect();
    let pk = pk?;
    let key = view.partition_key_bytes(&pk);
    (!key.is_empty()).then_some((key, clustering?))
}

/// Writes `row` into `view` at `timestamp`, or deletes the view row with key `old`.
struct ViewWrites<'a> {
    view: &'a Table,
    cmp: std::sync::Arc<model::schema::CfMetadata>,
    mutations: Vec<RowMutation>,
}

impl ViewWrites<'_> {
    fn row_of(&mut self, key: &[u8]) -> &mut model::data::Row {
        let i = match self.mutations.iter().position(|m| m.key == key) {
            Some(i) => i,
            None => {
                self.mutations.push(RowMutation::new(self.view.keyspace.clone(), key.to_vec()));
                self.mutations.len() - 1
            }
        };
        self.mutations[i].row_mut(&self.view.name)
    }

    fn delete(&mut self, key: &[u8], clustering: &[Vec<u8>], timestamp: i64, now: i32) {
        let deletion = DeletionTime::new(timestamp, now);
        let (start, end) = (self.view.prefix_bound(clustering, false), self.view.prefix_bound(clustering, true));
        let row = self.row_of(key);
        if clustering.is_empty() {
            row.deletion = row.deletion.max(deletion);
        } else {
            row.range_tombstones.push(RangeTombstone { start, end, deletion });
        }
    }

    fn upsert(&mut self, key: &[u8], clustering: &[Vec<u8>], base: &BaseRow, timestamp: i64, now: i32) {
        let view = self.view;
        let cmp = self.cmp.clone();
        let mut cells = vec![Cell::live(view.cell_name(clustering, None), Vec::new(), timestamp)];
        for c in &view.regular {
            let name = view.cell_name(clustering, Some(c));
            cells.push(match base.cells.get(&c.name) {
                Some(cell) => Cell { name, value: cell.value.clone(), timestamp: cell.timestamp, kind: cell.kind },
                None => Cell::tombstone(name, timestamp, now),
            });
        }
        let row = self.row_of(key);
        for cell in cells {
            insert_cell(&cmp.cmp, &mut row.cells, cell);
        }
    }
}

/// The view tables of `base`. Every write asks: the keyspace is searched in place, and a
/// view's table comes from its shared metadata.
pub(super) fn views_of(ctx: &Context<'_>, base: &Table) -> Vec<Arc<Table>> {
    let is_view_of_base = |d: &CfDef| d.cql.as_ref().and_then(|l| l.view.as_ref()).is_some_and(|v| v.base == base.name);
    let names = ctx.coordinator.with_keyspace(&base.keyspace, |ks| {
        ks.cf_defs.iter().filter(|d| is_view_of_base(d)).map(|d| d.name.clone()).collect::<Vec<_>>()
    });
    names
        .unwrap_or_default()
        .iter()
        .filter_map(|name| ctx.coordinator.cf_metadata(&base.keyspace, name).ok()?.cql_table().ok())
        .collect()
}

/// The base partitions' rows before a write, for [`after_base_write`].
pub(super) struct Before {
    views: Vec<Arc<Table>>,
    partitions: Vec<(Vec<u8>, Vec<BaseRow>)>,
}

fn read_level(cl: ConsistencyLevel) -> ConsistencyLevel {
    match cl {
        ConsistencyLevel::Any => ConsistencyLevel::One,
        other => other,
    }
}

async fn read_partitions(
    ctx: &Context<'_>,
    base: &Table,
    keys: &[Vec<u8>],
    cl: ConsistencyLevel,
) -> Result<Vec<(Vec<u8>, Vec<BaseRow>)>, CqlError> {
    let meta = ctx.coordinator.cf_metadata(&base.keyspace, &base.name)?;
    let (ks, cf) = meta.shared_names();
    let commands = keys
        .iter()
        .map(|k| ReadCommand { keyspace: ks.clone(), cf: cf.clone(), key: k.clone(), filter: ReadFilter::all() })
        .collect();
    let results = ctx.coordinator.read(commands, read_level(cl)).await?;
    let now = now_seconds();
    Ok(keys.iter().zip(results).map(|(k, cells)| (k.clone(), base_rows(base, k, &cells, now))).collect())
}

/// Reads what a base write will change, when the base table has views.
pub(super) async fn before_base_write(
    ctx: &Context<'_>,
    base: &Table,
    mutations: &[RowMutation],
    cl: ConsistencyLevel,
) -> Result<Option<Before>, CqlError> {
    let views = views_of(ctx, base);
    if views.is_empty() {
        return Ok(None);
    }
    let keys: Vec<Vec<u8>> = mutations.iter().map(|m| m.key.clone()).collect();
    let partitions = read_partitions(ctx, base, &keys, cl).await?;
    Ok(Some(Before { views, partitions }))
}

/// Brings the views up to date with the base partitions as they are now.
pub(super) async fn after_base_write(
    ctx: &Context<'_>,
    base: &Table,
    before: Before,
    timestamp: i64,
    cl: ConsistencyLevel,
) -> Result<(), CqlError> {
    let keys: Vec<Vec<u8>> = before.partitions.iter().map(|(k, _)| k.clone()).collect();
    let after = read_partitions(ctx, base, &keys, cl).await?;
    let now = now_seconds();
    for view in &before.views {
        let meta = ctx.coordinator.cf_metadata(&view.keyspace, &view.name)?;
        let mut writes = ViewWrites { view, cmp: meta, mutations: Vec::new() };
        for ((_, old_rows), (_, new_rows)) in before.partitions.iter().zip(&after) {
            let old: Vec<ViewKey> = old_rows.iter().filter_map(|r| view_key(view, r)).collect();
            let new: Vec<(ViewKey, &BaseRow)> =
                new_rows.iter().filter_map(|r| view_key(view, r).map(|k| (k, r))).collect();
            for gone in old.iter().filter(|k| !new.iter().any(|(n, _)| n == *k)) {
                writes.delete(&gone.0, &gone.1, timestamp, now);
            }
            for ((key, clustering), row) in &new {
                let unchanged = old_rows
                    .iter()
                    .any(|o| view_key(view, o).as_ref() == Some(&(key.clone(), clustering.clone())) && same(o, row));
                if !unchanged {
                    writes.upsert(key, clustering, row, timestamp, now);
                }
            }
        }
        if !writes.mutations.is_empty() {
            ctx.coordinator.mutate(writes.mutations, cl).await?;
        }
    }
    Ok(())
}

/// Whether a base row is as it was: same values, written at the same times.
fn same(a: &BaseRow, b: &BaseRow) -> bool {
    a.values == b.values
        && a.cells.len() == b.cells.len()
        && a.cells.iter().all(|(n, c)| b.cells.get(n).is_some_and(|d| d.timestamp == c.timestamp && d.kind == c.kind))
}

/// The newest timestamp a mutation carries (the write's own).
pub(super) fn write_timestamp(mutations: &[RowMutation]) -> i64 {
    let mut ts = i64::MIN;
    for m in mutations {
        for (_, row) in &m.updates {
            ts = ts.max(row.deletion.marked_at);
            for rt in &row.range_tombstones {
                ts = ts.max(rt.deletion.marked_at);
            }
            for c in &row.cells {
                ts = ts.max(c.timestamp);
            }
        }
    }
    if ts == i64::MIN {
        model::data::now_micros()
    } else {
        ts
    }
}

/// CREATE MATERIALIZED VIEW: 3.11's checks, the view table made, then built from the base.
pub(super) async fn create_view(ctx: &Context<'_>, s: &CreateView, cl: ConsistencyLevel) -> Result<Outcome, CqlError> {
    let keyspace = ctx.keyspace_of(&s.name)?;
    let base_keyspace = ctx.keyspace_of(&s.base_table)?;
    if base_keyspace != keyspace {
        return invalid("Cannot create a materialized view on a table in a separate keyspace");
    }
    let base = ctx.table(&s.base_table)?;
    let name = s.name.name.name().to_string();
    if base.layout != crate::schema::Layout::Sparse {
        return invalid("Materialized views are not supported on COMPACT STORAGE tables");
    }
    if base.counter {
        return invalid("Materialized views are not supported on counter tables");
    }
    if base.has_statics() {
        return invalid("Materialized views are not supported on tables with static columns yet");
    }
    let Some(ks) = ctx.coordinator.keyspace(&keyspace) else {
        return invalid(format!("Keyspace {keyspace} does not exist"));
    };
    if ks.cf(&name).is_some() {
        if s.if_not_exists {
            return Ok(Outcome::Void);
        }
        return Err(CqlError::AlreadyExists {
            keyspace: keyspace.clone(),
            table: name.clone(),
            message: format!("Cannot add already existing table \"{name}\" to keyspace \"{keyspace}\""),
        });
    }
    // The selected columns (the key's are always in).
    let selected: Vec<Column> = match &s.selection {
        Selection::Wildcard => base.columns().cloned().collect(),
        Selection::Selectors(sels) => {
            let mut out = Vec::new();
            for sel in sels {
                let Selectable::Column(id) = &sel.selectable else {
                    return invalid("Can only select columns by name when defining a materialized view");
                };
                if sel.alias.is_some() {
                    return invalid("Cannot use alias when defining a materialized view");
                }
                match base.column(id.name()) {
                    Some(c) => out.push(c.clone()),
                    None => return invalid(format!("Undefined column name {}", id.name())),
                }
            }
            out
        }
    };
    if let Some(c) = selected.iter().find(|c| c.ty.is_multi_cell()) {
        return invalid(format!(
            "Materialized views over the non-frozen collection {} are not supported yet (select other columns, or freeze it)",
            c.name
        ));
    }
    let key_names: Vec<&str> =
        s.primary_key.partition_key.iter().chain(&s.primary_key.clustering).map(|i| i.name()).collect();
    for k in &key_names {
        if base.column(k).is_none() {
            return invalid(format!("Unknown column name detected in CREATE MATERIALIZED VIEW statement : {k}"));
        }
    }
    for c in base.partition_key.iter().chain(&base.clustering) {
        if !key_names.contains(&c.name.as_str()) {
            return invalid(format!(
                "Cannot create Materialized View {name} without primary key columns from base {} ({})",
                base.name, c.name
            ));
        }
    }
    let extra: Vec<&&str> =
        key_names.iter().filter(|k| base.column(k).is_some_and(|c| c.kind == ColumnKind::Regular)).collect();
    if extra.len() > 1 {
        return invalid(format!(
            "Cannot include more than one non-primary key column in materialized view primary key (got {})",
            extra.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")
        ));
    }
    let not_null: Vec<&str> = s
        .where_clause
        .iter()
        .map(|r| match r {
            Relation::IsNotNull(c) => Ok(c.name()),
            other => Err(other.to_string()),
        })
        .collect::<Result<_, _>>()
        .or_else(|r| {
            invalid(format!("WHERE clauses other than IS NOT NULL on the view's key are not supported yet ({r})"))
        })?;
    for k in &key_names {
        if !not_null.contains(k) {
            return invalid(format!("Primary key column '{k}' is required to be filtered by 'IS NOT NULL'"));
        }
    }
    // The view is a table: its columns, its key, its options.
    let mut elements = Vec::new();
    let mut names: Vec<&Column> = Vec::new();
    for c in base.columns() {
        if key_names.contains(&c.name.as_str()) || selected.iter().any(|s| s.name == c.name) {
            names.push(c);
        }
    }
    for c in names {
        let Some(ty) = cql_native_type(&c.ty) else {
            return invalid(format!("column {} of type {} cannot be in a view yet", c.name, c.ty.class_name()));
        };
        elements.push(TableElement::Column(ColumnDefinition {
            name: crate::ast::Identifier::quoted(&c.name),
            ty: CqlType::Native(ty),
            is_static: false,
            primary_key: false,
        }));
    }
    elements.push(TableElement::PrimaryKey(PrimaryKey {
        partition_key: s.primary_key.partition_key.clone(),
        clustering: s.primary_key.clustering.clone(),
    }));
    let options: Vec<TableOption> =
        s.options.iter().filter(|o| !matches!(o, TableOption::CompactStorage)).cloned().collect();
    if s.options.iter().any(|o| matches!(o, TableOption::CompactStorage)) {
        return invalid("Cannot use 'COMPACT STORAGE' when defining a materialized view");
    }
    let as_table = CreateTable { if_not_exists: false, name: s.name.clone(), elements, options };
    let ks_def = ctx.coordinator.keyspace(&keyspace).unwrap_or_else(|| model::schema::KeyspaceDef::new(&keyspace));
    let mut def: CfDef = super::ddl::table_def(&ks_def, &name, &as_table)?;
    if let Some(layout) = def.cql.as_mut() {
        layout.view = Some(CqlView {
            base: base.name.clone(),
            where_clause: where_clause_text(&s.where_clause),
            include_all_columns: matches!(s.selection, Selection::Wildcard),
        });
    }
    ctx.coordinator.add_column_family(def).await?;
    build(ctx, &base, &keyspace, &name, cl).await?;
    Ok(Outcome::SchemaChange(SchemaChange { change: "CREATED", target: "TABLE", keyspace, name: Some(name) }))
}

/// The WHERE clause as 3.11 keeps it in `system_schema.views` (`View.relationsToWhereClause`):
/// each relation with its column named as CQL writes it, joined by ` AND `.
fn where_clause_text(relations: &[Relation]) -> String {
    relations
        .iter()
        .map(|r| match r {
            Relation::IsNotNull(c) => format!("{} IS NOT NULL", crate::ast::Identifier::new(c.name()).text()),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// Writes a view row for every base row there is.
async fn build(
    ctx: &Context<'_>,
    base: &Table,
    keyspace: &str,
    name: &str,
    cl: ConsistencyLevel,
) -> Result<(), CqlError> {
    let Some(view) = ctx.coordinator.keyspace(keyspace).and_then(|k| k.cf(name).cloned()) else { return Ok(()) };
    let view = Table::from_def(&view)?;
    let meta = ctx.coordinator.cf_metadata(keyspace, name)?;
    let mut start = KeyBound::Unbounded;
    let mut built = 0usize;
    loop {
        let command = RangeCommand {
            keyspace: base.keyspace.clone(),
            cf: base.name.clone(),
            pieces: vec![(start.clone(), KeyBound::Unbounded)],
            filter: ReadFilter::all(),
            max_rows: BUILD_PAGE,
        };
        let page = ctx.coordinator.scan(command, read_level(cl)).await?;
        let full = page.len() >= BUILD_PAGE;
        let last = page.last().map(|(k, _)| k.clone());
        let now = now_seconds();
        let mut writes = ViewWrites { view: &view, cmp: meta.clone(), mutations: Vec::new() };
        for (key, cells) in &page {
            for row in base_rows(base, &key.key, cells, now) {
                if let Some((vk, clustering)) = view_key(&view, &row) {
                    let ts = row.cells.values().map(|c| c.timestamp).max().unwrap_or_else(model::data::now_micros);
                    writes.upsert(&vk, &clustering, &row, ts, now);
                    built += 1;
                }
            }
        }
        if !writes.mutations.is_empty() {
            ctx.coordinator.mutate(writes.mutations, cl).await?;
        }
        match (full, last) {
            (true, Some(k)) => start = KeyBound::Key { key: k, inclusive: false },
            _ => break,
        }
    }
    tracing::info!(keyspace, view = name, base = %base.name, rows = built, "built materialized view");
    Ok(())
}
