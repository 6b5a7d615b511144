//! The built-in keyspaces whose rows are derived from state kept elsewhere, rewritten whole
//! whenever it changes (`Storage::replace_derived_rows`): `system_schema` (from the schema),
//! `system_auth` (from the server's authenticator) and `system_distributed` (repair history:
//! empty, as no repair session has ever run here).
//!
//! As with `system_traces` ([`super::traces`]), 3.11's tables are CQL tables and what is stored
//! is the legacy layout a Thrift client of 3.11 sees: the row key is the partition key, the
//! comparator a CompositeType of the clustering columns' types then UTF8Type for the CQL column
//! name, one cell per CQL column. Frozen collections are one cell in the CQL protocol's
//! serialization (`i32 count, (i32 length, bytes)*` per element or map entry).
//!
//! `system_schema`'s ten tables are CQL tables here as in 3.11 (`SYSTEM_SCHEMA`: their columns
//! and types, so a CQL client reads them as 3.11 shows them; Thrift's describe_keyspace leaves
//! them out, as 3.11 does). `keyspaces`, `tables`, `columns`, `dropped_columns`, `views`,
//! `indexes` and `types` are filled from the schema, every keyspace included; `triggers`,
//! `functions` and `aggregates` stay empty, Sibyl having none of those. A table made by CQL is
//! described as CQL sees it (`model::cql_table`), a column family made over Thrift as 3.11
//! shows a compact table.
//!
//! ```text
//! system_auth.roles         key role; (column) can_login, is_superuser, salted_hash
//! system_auth.role_permissions  key role; (resource, column) permissions (frozen set)
//! ```
//!
//! All three are node-local (LocalStrategy): each node derives them from what it holds.

use std::collections::BTreeMap;

use uuid::Uuid;

use super::traces::composite_name;
use crate::data::Cell;
use crate::marshal::{write_elements, AbstractType};
use crate::schema::{CfDef, ColumnDef, CqlLayout, CqlView, IndexType, KeyspaceDef};

pub const SCHEMA_KEYSPACE: &str = "system_schema";
pub const AUTH_KEYSPACE: &str = "system_auth";
pub const DISTRIBUTED_KEYSPACE: &str = "system_distributed";

pub const KEYSPACES_CF: &str = "keyspaces";
pub const TABLES_CF: &str = "tables";
pub const COLUMNS_CF: &str = "columns";
pub const DROPPED_COLUMNS_CF: &str = "dropped_columns";
pub const TRIGGERS_CF: &str = "triggers";
pub const VIEWS_CF: &str = "views";
pub const TYPES_CF: &str = "types";
pub const FUNCTIONS_CF: &str = "functions";
pub const AGGREGATES_CF: &str = "aggregates";
pub const INDEXES_CF: &str = "indexes";
pub const ROLES_CF: &str = "roles";
pub const ROLE_PERMISSIONS_CF: &str = "role_permissions";

const M: &str = "org.apache.cassandra.db.marshal.";

/// (keyspace, column family, low bits of its fixed id, clustering types (short names), comment)
type Table = (&'static str, &'static str, u128, &'static [&'static str], &'static str);

/// The legacy tables of `system_auth` and `system_distributed` (not CQL tables yet).
const TABLES: &[Table] = &[
    (AUTH_KEYSPACE, ROLES_CF, 0x0d01, &[], "role definitions"),
    (AUTH_KEYSPACE, ROLE_PERMISSIONS_CF, 0x0d02, &["UTF8Type"], "permissions granted to db roles"),
    (DISTRIBUTED_KEYSPACE, "repair_history", 0x0e01, &["TimeUUIDType"], "Repair history"),
    (DISTRIBUTED_KEYSPACE, "parent_repair_history", 0x0e02, &[], "Repair history"),
];

/// A CQL table of `system_schema`: name, low bits of its fixed id, comment, clustering columns
/// and the other columns (CQL name, marshal type); the partition key is `keyspace_name` text.
struct SchemaTable {
    name: &'static str,
    id: u128,
    comment: &'static str,
    clustering: &'static [&'static str],
    columns: &'static [(&'static str, &'static str)],
}

const TEXT: &str = "UTF8Type";
const TEXT_MAP: &str = "FrozenType(MapType(UTF8Type,UTF8Type))";
const TEXT_LIST: &str = "FrozenType(ListType(UTF8Type))";

/// The options every table and view row has (3.11's `TableParams`).
const TABLE_OPTIONS: &[(&str, &str)] = &[
    ("bloom_filter_fp_chance", "DoubleType"),
    ("caching", TEXT_MAP),
    ("cdc", "BooleanType"),
    ("comment", TEXT),
    ("compaction", TEXT_MAP),
    ("compression", TEXT_MAP),
    ("crc_check_chance", "DoubleType"),
    ("dclocal_read_repair_chance", "DoubleType"),
    ("default_time_to_live", "Int32Type"),
    ("extensions", "FrozenType(MapType(UTF8Type,BytesType))"),
    ("gc_grace_seconds", "Int32Type"),
    ("id", "UUIDType"),
    ("max_index_interval", "Int32Type"),
    ("memtable_flush_period_in_ms", "Int32Type"),
    ("min_index_interval", "Int32Type"),
    ("read_repair_chance", "DoubleType"),
    ("speculative_retry", TEXT),
];

const SYSTEM_SCHEMA: &[SchemaTable] = &[
    SchemaTable {
        name: KEYSPACES_CF,
        id: 0x0c01,
        comment: "keyspace definitions",
        clustering: &[],
        columns: &[("durable_writes", "BooleanType"), ("replication", TEXT_MAP)],
    },
    SchemaTable {
        name: TABLES_CF,
        id: 0x0c02,
        comment: "table definitions",
        clustering: &["table_name"],
        columns: &[("flags", "FrozenType(SetType(UTF8Type))")],
    },
    SchemaTable {
        name: COLUMNS_CF,
        id: 0x0c03,
        comment: "column definitions",
        clustering: &["table_name", "column_name"],
        columns: &[
            ("clustering_order", TEXT),
            ("column_name_bytes", "BytesType"),
            ("kind", TEXT),
            ("position", "Int32Type"),
            ("type", TEXT),
        ],
    },
    SchemaTable {
        name: DROPPED_COLUMNS_CF,
        id: 0x0c04,
        comment: "dropped column registry",
        clustering: &["table_name", "column_name"],
        columns: &[("dropped_time", "TimestampType"), ("kind", TEXT), ("type", TEXT)],
    },
    SchemaTable {
        name: TRIGGERS_CF,
        id: 0x0c05,
        comment: "trigger definitions",
        clustering: &["table_name", "trigger_name"],
        columns: &[("options", TEXT_MAP)],
    },
    SchemaTable {
        name: VIEWS_CF,
        id: 0x0c06,
        comment: "view definitions",
        clustering: &["view_name"],
        columns: &[
            ("base_table_id", "UUIDType"),
            ("base_table_name", TEXT),
            ("include_all_columns", "BooleanType"),
            ("where_clause", TEXT),
        ],
    },
    SchemaTable {
        name: TYPES_CF,
        id: 0x0c07,
        comment: "user defined type definitions",
        clustering: &["type_name"],
        columns: &[("field_names", TEXT_LIST), ("field_types", TEXT_LIST)],
    },
    SchemaTable {
        name: FUNCTIONS_CF,
        id: 0x0c08,
        comment: "user defined function definitions",
        clustering: &["function_name", "argument_types"],
        columns: &[
            ("argument_names", TEXT_LIST),
            ("body", TEXT),
            ("called_on_null_input", "BooleanType"),
            ("language", TEXT),
            ("return_type", TEXT),
        ],
    },
    SchemaTable {
        name: AGGREGATES_CF,
        id: 0x0c09,
        comment: "user defined aggregate definitions",
        clustering: &["aggregate_name", "argument_types"],
        columns: &[
            ("final_func", TEXT),
            ("initcond", TEXT),
            ("return_type", TEXT),
            ("state_func", TEXT),
            ("state_type", TEXT),
        ],
    },
    SchemaTable {
        name: INDEXES_CF,
        id: 0x0c0a,
        comment: "secondary index definitions",
        clustering: &["table_name", "index_name"],
        columns: &[("kind", TEXT), ("options", TEXT_MAP)],
    },
];

const ID_BASE: u128 = 0x5bb1_0000_0000_4000_8000_0000_0000_0000;

/// The fixed ids of every column family here.
pub(super) fn cf_ids() -> impl Iterator<Item = Uuid> {
    SYSTEM_SCHEMA.iter().map(|t| t.id).chain(TABLES.iter().map(|t| t.2)).map(|low| Uuid::from_u128(ID_BASE | low))
}

/// The type of a clustering column of `system_schema` (`argument_types` is a list of text).
fn clustering_type(name: &str) -> &'static str {
    if name == "argument_types" {
        TEXT_LIST
    } else {
        TEXT
    }
}

/// A `system_schema` table as a CQL table: `keyspace_name` the partition key, its clustering
/// columns in the comparator, its other columns declared (the table options too for `tables`
/// and `views`).
fn schema_table_def(t: &SchemaTable) -> CfDef {
    let mut cf = CfDef::new(SCHEMA_KEYSPACE, t.name);
    cf.id = Uuid::from_u128(ID_BASE | t.id);
    cf.thrift_id = crate::schema::thrift_id_of(&cf.id);
    let mut parts: Vec<String> = t.clustering.iter().map(|c| format!("{M}{}", clustering_type(c))).collect();
    parts.push(format!("{M}UTF8Type"));
    cf.comparator_type = format!("{M}CompositeType({})", parts.join(","));
    cf.key_validation_class = format!("{M}UTF8Type");
    let options: &[(&str, &str)] = if matches!(t.name, TABLES_CF | VIEWS_CF) { TABLE_OPTIONS } else { &[] };
    cf.column_metadata = t
        .columns
        .iter()
        .chain(options)
        .map(|(name, ty)| ColumnDef {
            name: name.as_bytes().to_vec(),
            validation_class: AbstractType::parse(ty).map(|t| t.class_name()).unwrap_or_else(|_| format!("{M}{ty}")),
            index_type: None,
            index_name: None,
            index_options: BTreeMap::new(),
        })
        .collect();
    cf.cql = Some(CqlLayout {
        key_aliases: vec!["keyspace_name".into()],
        column_aliases: t.clustering.iter().map(|c| c.to_string()).collect(),
        ..CqlLayout::default()
    });
    cf.comment = Some(t.comment.into());
    // Rewritten whole: the tombstones of what a rewrite replaces can go at once.
    cf.gc_grace_seconds = 0;
    cf
}

/// The definitions of the three keyspaces (never stored: the same on every node).
pub fn keyspace_defs() -> Vec<KeyspaceDef> {
    [SCHEMA_KEYSPACE, AUTH_KEYSPACE, DISTRIBUTED_KEYSPACE]
        .into_iter()
        .map(|name| {
            let mut ks = KeyspaceDef::new(name);
            ks.strategy_class = "org.apache.cassandra.locator.LocalStrategy".into();
            ks.strategy_options = BTreeMap::new();
            if name == SCHEMA_KEYSPACE {
                ks.cf_defs.extend(SYSTEM_SCHEMA.iter().map(schema_table_def));
            }
            for t in TABLES.iter().filter(|t| t.0 == name) {
                let mut cf = CfDef::new(name, t.1);
                cf.id = Uuid::from_u128(ID_BASE | t.2);
                cf.thrift_id = crate::schema::thrift_id_of(&cf.id);
                let parts: Vec<String> =
                    t.3.iter().chain(std::iter::once(&"UTF8Type")).map(|p| format!("{M}{p}")).collect();
                cf.comparator_type = format!("{M}CompositeType({})", parts.join(","));
                cf.key_validation_class = match t.1 {
                    // Partition key (keyspace_name, columnfamily_name).
                    "repair_history" => format!("{M}CompositeType({M}UTF8Type,{M}UTF8Type)"),
                    "parent_repair_history" => format!("{M}TimeUUIDType"),
                    _ => format!("{M}UTF8Type"),
                };
                if t.1 == "repair_history" {
                    // Named as 3.11 names its key, so drivers read a text pair, not a custom
                    // composite type some of them cannot parse.
                    cf.cql = Some(CqlLayout {
                        key_aliases: vec!["keyspace_name".into(), "columnfamily_name".into()],
                        column_aliases: vec!["id".into()],
                        ..CqlLayout::default()
                    });
                }
                cf.comment = Some(t.4.into());
                cf.gc_grace_seconds = 0;
                ks.cf_defs.push(cf);
            }
            ks
        })
        .collect()
}

/// One derived row: its key and its cells (timestamps are set when written).
pub type DerivedRow = (Vec<u8>, Vec<Cell>);

fn cell(name: Vec<u8>, value: impl Into<Vec<u8>>) -> Cell {
    Cell::live(name, value, 0)
}

/// A frozen set or list in the CQL protocol's serialization.
fn frozen(items: &[&[u8]]) -> Vec<u8> {
    write_elements(items.len(), items.iter().copied())
}

/// A frozen map of text in the CQL protocol's serialization.
fn frozen_map(map: &BTreeMap<String, String>) -> Vec<u8> {
    write_elements(map.len(), map.iter().flat_map(|(k, v)| [k.as_bytes(), v.as_bytes()]))
}

/// The CQL name of a marshal type, as `system_schema.columns.type` holds it; a type CQL has no
/// name for is its class name in quotes, as 3.11 writes custom types.
fn cql_type(class: &str) -> String {
    match AbstractType::parse(class) {
        Ok(ty) => model::cql_table::cql_name(&ty),
        Err(_) => format!("'{class}'"),
    }
}

/// The rows of every `system_schema` table for `keyspaces`.
pub fn schema_rows(keyspaces: &BTreeMap<String, KeyspaceDef>) -> Vec<(&'static str, Vec<DerivedRow>)> {
    let mut by_table: BTreeMap<&'static str, Vec<DerivedRow>> =
        SYSTEM_SCHEMA.iter().map(|t| (t.name, Vec::new())).collect();
    for ks in keyspaces.values() {
        let key = ks.name.as_bytes().to_vec();
        let mut replication = ks.strategy_options.clone();
        replication.insert("class".into(), ks.strategy_class.clone());
        let keyspace_row = vec![
            cell(composite_name(&[b""]), Vec::new()),
            cell(composite_name(&[b"durable_writes"]), vec![u8::from(ks.durable_writes)]),
            cell(composite_name(&[b"replication"]), frozen_map(&replication)),
        ];
        let mut cells: BTreeMap<&'static str, Vec<Cell>> = BTreeMap::new();
        cells.insert(KEYSPACES_CF, keyspace_row);
        for cf in &ks.cf_defs {
            let view = cf.cql.as_ref().and_then(|l| l.view.as_ref());
            match view {
                Some(v) => {
                    let base_id = ks.cf(&v.base).map(|b| b.id);
                    cells.entry(VIEWS_CF).or_default().extend(view_cells(cf, v, base_id));
                }
                None => cells.entry(TABLES_CF).or_default().extend(table_cells(cf)),
            }
            cells.entry(COLUMNS_CF).or_default().extend(column_cells(cf));
            cells.entry(DROPPED_COLUMNS_CF).or_default().extend(dropped_cells(cf));
            cells.entry(INDEXES_CF).or_default().extend(index_cells(cf));
        }
        cells.insert(TYPES_CF, type_cells(ks));
        for (table, cells) in cells {
            if let Some(rows) = by_table.get_mut(table) {
                if !cells.is_empty() {
                    rows.push((key.clone(), cells));
                }
            }
        }
    }
    by_table.into_iter().collect()
}

/// 3.11's `flags` of a table: `super`, `counter`, `dense`, `compound`, lower case.
fn flags(cf: &CfDef) -> Vec<&'static str> {
    let compound = cf.comparator().is_ok_and(|c| matches!(c, AbstractType::Composite(_)));
    let sparse_cql = cf.cql.as_ref().is_some_and(|l| !l.dense);
    let dense = match &cf.cql {
        Some(l) => l.dense && !l.column_aliases.is_empty(),
        // A Thrift column family is dense unless its columns are declared (static compact).
        None => cf.is_super() || cf.column_metadata.is_empty() || compound,
    };
    let mut out = Vec::new();
    if cf.is_counter() {
        out.push("counter");
    }
    if sparse_cql || compound {
        out.push("compound");
    }
    if dense {
        out.push("dense");
    }
    if cf.is_super() {
        out.push("super");
    }
    out
}

/// The options of a table or view row, named `name` in the row's clustering.
fn option_cells(cf: &CfDef, name: &[u8]) -> Vec<Cell> {
    let c = |column: &str, value: Vec<u8>| cell(composite_name(&[name, column.as_bytes()]), value);
    let mut compaction = cf.compaction_strategy_options.clone();
    compaction.insert("class".into(), cf.compaction_strategy.clone());
    compaction.insert("min_threshold".into(), cf.min_compaction_threshold.to_string());
    compaction.insert("max_threshold".into(), cf.max_compaction_threshold.to_string());
    let caching = caching_map(cf);
    let compression = compression_map(&cf.compression_options);
    let mut out = vec![
        c("", Vec::new()),
        c("caching", frozen_map(&caching)),
        c("comment", cf.comment.clone().unwrap_or_default().into_bytes()),
        c("compaction", frozen_map(&compaction)),
        c("compression", frozen_map(&compression)),
        c("crc_check_chance", cf.crc_check_chance.unwrap_or(1.0).to_be_bytes().to_vec()),
        c("dclocal_read_repair_chance", cf.dclocal_read_repair_chance.to_be_bytes().to_vec()),
        c("default_time_to_live", cf.default_time_to_live.to_be_bytes().to_vec()),
        c("extensions", frozen(&[])),
        c("gc_grace_seconds", cf.gc_grace_seconds.to_be_bytes().to_vec()),
        c("id", cf.id.as_bytes().to_vec()),
        c(
            "max_index_interval",
            cf.max_index_interval.unwrap_or(crate::schema::DEFAULT_MAX_INDEX_INTERVAL).to_be_bytes().to_vec(),
        ),
        c(
            "min_index_interval",
            cf.min_index_interval.unwrap_or(crate::schema::DEFAULT_MIN_INDEX_INTERVAL).to_be_bytes().to_vec(),
        ),
        c("read_repair_chance", cf.read_repair_chance.to_be_bytes().to_vec()),
    ];
    // The chance the engine writes with, set or not.
    let leveled = cf.compaction_strategy.ends_with("LeveledCompactionStrategy");
    let chance =
        crate::compaction::bloom_fp_chance(cf, leveled, crate::sstable::WriterOptions::default().bloom_fp_chance);
    out.push(c("bloom_filter_fp_chance", chance.to_be_bytes().to_vec()));
    out.push(c("memtable_flush_period_in_ms", cf.memtable_flush_period_in_ms.unwrap_or(0).to_be_bytes().to_vec()));
    out.push(c(
        "speculative_retry",
        cf.speculative_retry.clone().unwrap_or_else(|| "99PERCENTILE".into()).into_bytes(),
    ));
    out
}

/// The caching word and rows per partition as 3.11's map (`CachingParams.asMap`): `keys` ALL or
/// NONE, `rows_per_partition` ALL, NONE or the count of rows cached.
fn caching_map(cf: &CfDef) -> BTreeMap<String, String> {
    let (keys, rows_cached) = match cf.caching.to_ascii_uppercase().as_str() {
        "ALL" => ("ALL", true),
        "ROWS_ONLY" => ("NONE", true),
        "NONE" => ("NONE", false),
        _ => ("ALL", false),
    };
    let rows = match cf.cells_per_row_to_cache.as_deref().map(str::trim) {
        _ if !rows_cached => "NONE".to_string(),
        Some(n) if n.parse::<u32>().is_ok_and(|n| n > 0) => n.to_string(),
        Some(n) if n == "0" || n.eq_ignore_ascii_case("NONE") => "NONE".to_string(),
        _ => "ALL".to_string(),
    };
    BTreeMap::from([("keys".to_string(), keys.to_string()), ("rows_per_partition".into(), rows)])
}

/// The compression options as 3.11 shows them (`CompressionParams.asMap`): `{'enabled': 'false'}`
/// when off (and with no options: the engine does not compress SSTables), else the compressor's
/// full class name and its chunk length (64 KiB unless set), the legacy names `sstable_compression`
/// and `chunk_length_kb` read as 3.11 reads them.
fn compression_map(options: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let disabled = BTreeMap::from([("enabled".to_string(), "false".to_string())]);
    if options.is_empty() || options.get("enabled").is_some_and(|v| v.trim().eq_ignore_ascii_case("false")) {
        return disabled;
    }
    let mut out = options.clone();
    out.remove("enabled");
    let Some(class) = out.remove("class").or_else(|| out.remove("sstable_compression")) else { return out };
    let class = if class.contains('.') { class } else { format!("org.apache.cassandra.io.compress.{class}") };
    let chunk = out.remove("chunk_length_in_kb").or_else(|| out.remove("chunk_length_kb")).unwrap_or("64".into());
    out.insert("class".into(), class);
    out.insert("chunk_length_in_kb".into(), chunk);
    out
}

fn table_cells(cf: &CfDef) -> Vec<Cell> {
    let t = cf.name.as_bytes();
    let mut out = option_cells(cf, t);
    let flags: Vec<&[u8]> = flags(cf).into_iter().map(str::as_bytes).collect();
    out.push(cell(composite_name(&[t, b"flags"]), frozen(&flags)));
    out
}

fn view_cells(cf: &CfDef, view: &CqlView, base_id: Option<Uuid>) -> Vec<Cell> {
    let v = cf.name.as_bytes();
    let mut out = option_cells(cf, v);
    out.push(cell(composite_name(&[v, b"base_table_name"]), view.base.as_bytes().to_vec()));
    if let Some(id) = base_id {
        out.push(cell(composite_name(&[v, b"base_table_id"]), id.as_bytes().to_vec()));
    }
    out.push(cell(composite_name(&[v, b"include_all_columns"]), vec![u8::from(view.include_all_columns)]));
    let key: Vec<String> =
        cf.cql.iter().flat_map(|l| l.key_aliases.iter().chain(&l.column_aliases)).map(|c| cql_quoted(c)).collect();
    out.push(cell(composite_name(&[v, b"where_clause"]), view.where_clause_or(&key).into_bytes()));
    out
}

/// `name` as CQL writes it: bare when `[a-z][a-z0-9_]*`, else between double quotes.
fn cql_quoted(name: &str) -> String {
    let bare = name.bytes().next().is_some_and(|c| c.is_ascii_lowercase())
        && name.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_');
    if bare {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// A table's columns: a table made by CQL, or a Thrift column family without declared
/// columns (dense, composite or super), as CQL sees it; a Thrift column family with declared
/// columns as 3.11 shows a static compact table.
fn column_cells(cf: &CfDef) -> Vec<Cell> {
    let t = cf.name.as_bytes();
    let mut out = Vec::new();
    let mut column = |name: &[u8], kind: &str, position: i32, ty: String, order: &str| {
        let c = |field: &str, value: Vec<u8>| cell(composite_name(&[t, name, field.as_bytes()]), value);
        out.push(c("", Vec::new()));
        out.push(c("clustering_order", order.as_bytes().to_vec()));
        out.push(c("column_name_bytes", name.to_vec()));
        out.push(c("kind", kind.as_bytes().to_vec()));
        out.push(c("position", position.to_be_bytes().to_vec()));
        out.push(c("type", ty.into_bytes()));
    };
    if cf.cql.is_some() || cf.column_metadata.is_empty() {
        if let Ok(table) = model::cql_table::Table::from_def(cf) {
            use model::cql_table::{cql_name, ColumnKind};
            for c in table.columns() {
                let (kind, position, order) = match c.kind {
                    ColumnKind::PartitionKey => ("partition_key", c.position as i32, "none"),
                    ColumnKind::Clustering => {
                        ("clustering", c.position as i32, if c.reversed { "desc" } else { "asc" })
                    }
                    ColumnKind::Regular if c.is_static => ("static", -1, "none"),
                    ColumnKind::Regular => ("regular", -1, "none"),
                };
                column(c.name.as_bytes(), kind, position, cql_name(&c.ty), order);
            }
            return out;
        }
    }
    let key_name = cf.key_alias.clone().unwrap_or_else(|| b"key".to_vec());
    column(&key_name, "partition_key", 0, cql_type(&cf.key_validation_class), "none");
    column(b"column1", "clustering", 0, cql_type(&cf.comparator_type), "asc");
    if let Some(sub) = &cf.subcomparator_type {
        column(b"column2", "clustering", 1, cql_type(sub), "asc");
    }
    column(b"value", "regular", -1, cql_type(&cf.default_validation_class), "none");
    for def in &cf.column_metadata {
        column(&def.name, "static", -1, cql_type(&def.validation_class), "none");
    }
    out
}

/// The columns a CQL table dropped, with when (3.11 also keeps their type, which Sibyl does
/// not record).
fn dropped_cells(cf: &CfDef) -> Vec<Cell> {
    let Some(layout) = &cf.cql else { return Vec::new() };
    let t = cf.name.as_bytes();
    let mut out = Vec::new();
    for (name, micros) in &layout.dropped {
        let c = |field: &str, value: Vec<u8>| cell(composite_name(&[t, name.as_bytes(), field.as_bytes()]), value);
        out.push(c("", Vec::new()));
        out.push(c("dropped_time", (micros / 1000).to_be_bytes().to_vec()));
        out.push(c("kind", b"regular".to_vec()));
    }
    out
}

/// The keyspace's user types (3.11's `system_schema.types`): each field's name, and its type
/// as CQL writes it, in order; rows by type name.
fn type_cells(ks: &KeyspaceDef) -> Vec<Cell> {
    let mut types: Vec<_> = ks.user_types.iter().collect();
    types.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = Vec::new();
    for t in types {
        let c = |field: &str, value: Vec<u8>| cell(composite_name(&[t.name.as_bytes(), field.as_bytes()]), value);
        let names: Vec<&[u8]> = t.field_names.iter().map(|n| n.as_bytes()).collect();
        let cql_types: Vec<String> = t.field_types.iter().map(|class| cql_type(class)).collect();
        out.push(c("", Vec::new()));
        out.push(c("field_names", write_elements(names.len(), names)));
        out.push(c("field_types", write_elements(cql_types.len(), cql_types.iter().map(|t| t.as_bytes()))));
    }
    out
}

/// The secondary indexes of a column family's declared columns (made over Thrift).
fn index_cells(cf: &CfDef) -> Vec<Cell> {
    let t = cf.name.as_bytes();
    let mut out = Vec::new();
    for def in &cf.column_metadata {
        let Some(kind) = def.index_type else { continue };
        let column_name = String::from_utf8_lossy(&def.name).into_owned();
        let name = def.index_name.clone().unwrap_or_else(|| format!("{}_{column_name}_idx", cf.name));
        let c = |field: &str, value: Vec<u8>| cell(composite_name(&[t, name.as_bytes(), field.as_bytes()]), value);
        let kind = match kind {
            IndexType::Keys => "KEYS",
            IndexType::Custom => "CUSTOM",
            IndexType::Composites => "COMPOSITES",
        };
        let mut options = def.index_options.clone();
        options.insert("target".into(), column_name);
        out.push(c("", Vec::new()));
        out.push(c("kind", kind.as_bytes().to_vec()));
        out.push(c("options", frozen_map(&options)));
    }
    out
}

/// The rows of `system_auth.roles` and `role_permissions` for `users`: each user's name,
/// whether it may change keyspaces (3.11's superuser), and its grants as (resource,
/// permissions), resources named as 3.11 does (`data/<keyspace>`, `data/<keyspace>/<table>`).
pub fn auth_rows(users: &[AuthUser]) -> [(&'static str, Vec<DerivedRow>); 2] {
    let mut roles = Vec::new();
    let mut permissions = Vec::new();
    for user in users {
        let key = user.name.as_bytes().to_vec();
        roles.push((
            key.clone(),
            vec![
                cell(composite_name(&[b"can_login"]), vec![1]),
                cell(composite_name(&[b"is_superuser"]), vec![u8::from(user.superuser)]),
            ],
        ));
        let cells: Vec<Cell> = user
            .grants
            .iter()
            .map(|(resource, perms)| {
                let items: Vec<&[u8]> = perms.iter().map(|p| p.as_bytes()).collect();
                cell(composite_name(&[resource.as_bytes(), b"permissions"]), frozen(&items))
            })
            .collect();
        if !cells.is_empty() {
            permissions.push((key, cells));
        }
    }
    [(ROLES_CF, roles), (ROLE_PERMISSIONS_CF, permissions)]
}

/// A user of the configured authenticator, as `system_auth` shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct AuthUser {
    pub name: String,
    pub superuser: bool,
    /// resource → permissions (`SELECT`, `MODIFY`, ...), sorted.
    pub grants: BTreeMap<String, Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_derived_keyspaces_are_valid() {
        let defs = keyspace_defs();
        assert_eq!(
            defs.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(),
            [SCHEMA_KEYSPACE, AUTH_KEYSPACE, DISTRIBUTED_KEYSPACE]
        );
        for ks in &defs {
            ks.validate().expect("valid");
        }
        // system_schema's tables read as CQL tables, with 3.11's columns.
        let tables = defs[0].cf("tables").expect("system_schema.tables");
        let table = model::cql_table::Table::from_def(tables).expect("a CQL table");
        let names: Vec<&str> = table.columns().map(|c| c.name.as_str()).take(4).collect();
        assert_eq!(names, ["keyspace_name", "table_name", "bloom_filter_fp_chance", "caching"]);
        assert_eq!(defs[0].cf_defs.len(), 10);
    }

    #[test]
    fn a_keyspace_gives_one_row_per_table_kind() {
        let mut ks = KeyspaceDef::new("Shop");
        ks.cf_defs.push(CfDef::new("Shop", "Orders"));
        let rows: BTreeMap<&str, Vec<DerivedRow>> =
            schema_rows(&BTreeMap::from([("Shop".to_string(), ks)])).into_iter().collect();
        let (keyspaces, tables, columns) = (&rows[KEYSPACES_CF], &rows[TABLES_CF], &rows[COLUMNS_CF]);
        assert_eq!(rows.len(), 10, "every table of system_schema");
        assert!(rows[TYPES_CF].is_empty() && rows[VIEWS_CF].is_empty());
        assert_eq!(keyspaces.len(), 1);
        assert_eq!(keyspaces[0].0, b"Shop");
        assert!(tables[0].1.iter().any(|c| c.name == composite_name(&[b"Orders", b"comment"])));
        let kinds: Vec<&Cell> =
            columns[0].1.iter().filter(|c| c.name == composite_name(&[b"Orders", b"key", b"type"])).collect();
        assert_eq!(kinds.len(), 1);
        assert_eq!(kinds[0].value, b"blob");
        assert_eq!(
            frozen_map(&BTreeMap::from([("a".to_string(), "b".to_string())])),
            [0, 0, 0, 1, 0, 0, 0, 1, b'a', 0, 0, 0, 1, b'b']
        );
    }

    #[test]
    fn a_composite_comparator_is_one_clustering_column_per_component() {
        let mut cf = CfDef::new("Shop", "Events");
        cf.comparator_type = "CompositeType(UTF8Type, LongType)".into();
        let types: BTreeMap<Vec<u8>, Vec<u8>> = column_cells(&cf)
            .into_iter()
            .filter_map(|c| {
                let parts = model::cql_table::split(&c.name)?;
                (parts.len() == 3 && parts[2].0 == b"type").then(|| (parts[1].0.to_vec(), c.value.clone()))
            })
            .collect();
        let want: BTreeMap<Vec<u8>, Vec<u8>> =
            [("key", "blob"), ("column1", "text"), ("column2", "bigint"), ("value", "blob")]
                .into_iter()
                .map(|(n, t)| (n.as_bytes().to_vec(), t.as_bytes().to_vec()))
                .collect();
        assert_eq!(types, want);
    }

    #[test]
    fn a_view_row_names_its_base_and_keeps_its_where_clause() {
        let view_cell = |view: CqlView| {
            let mut ks = KeyspaceDef::new("shop");
            let base = CfDef::new("shop", "users");
            let base_id = base.id;
            let mut cf = CfDef::new("shop", "by_name");
            cf.cql = Some(CqlLayout {
                key_aliases: vec!["name".into()],
                column_aliases: vec!["Id".into()],
                view: Some(view),
                ..CqlLayout::default()
            });
            ks.cf_defs.extend([base, cf]);
            let rows: BTreeMap<&str, Vec<DerivedRow>> =
                schema_rows(&BTreeMap::from([("shop".to_string(), ks)])).into_iter().collect();
            let cells = rows[VIEWS_CF][0].1.clone();
            let value = |column: &[u8]| {
                cells.iter().find(|c| c.name == composite_name(&[b"by_name", column])).map(|c| c.value.clone())
            };
            assert_eq!(value(b"base_table_id"), Some(base_id.as_bytes().to_vec()));
            assert_eq!(value(b"base_table_name"), Some(b"users".to_vec()));
            (value(b"where_clause"), value(b"include_all_columns"))
        };
        let written = CqlView {
            base: "users".into(),
            where_clause: "name IS NOT NULL AND \"Id\" IS NOT NULL AND age IS NOT NULL".into(),
            include_all_columns: true,
        };
        assert_eq!(
            view_cell(written),
            (Some(b"name IS NOT NULL AND \"Id\" IS NOT NULL AND age IS NOT NULL".to_vec()), Some(vec![1]))
        );
        // A view kept before its clause was: IS NOT NULL on each key column, its only rule then.
        let old = CqlView { base: "users".into(), ..CqlView::default() };
        assert_eq!(view_cell(old), (Some(b"name IS NOT NULL AND \"Id\" IS NOT NULL".to_vec()), Some(vec![0])));
    }

    #[test]
    fn caching_and_compression_read_as_3_11_shows_them() {
        let mut cf = CfDef::new("shop", "t");
        let caching = |cf: &CfDef| {
            let m = caching_map(cf);
            (m["keys"].clone(), m["rows_per_partition"].clone())
        };
        assert_eq!(caching(&cf), ("ALL".into(), "NONE".into()));
        cf.caching = "ROWS_ONLY".into();
        cf.cells_per_row_to_cache = Some("10".into());
        assert_eq!(caching(&cf), ("NONE".into(), "10".into()));
        cf.caching = "ALL".into();
        cf.cells_per_row_to_cache = Some("ALL".into());
        assert_eq!(caching(&cf), ("ALL".into(), "ALL".into()));
        cf.caching = "KEYS_ONLY".into();
        cf.cells_per_row_to_cache = Some("10".into());
        assert_eq!(caching(&cf), ("ALL".into(), "NONE".into()), "rows are counted only when cached");

        let map = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        let off = map(&[("enabled", "false")]);
        assert_eq!(compression_map(&map(&[])), off);
        assert_eq!(compression_map(&off), off);
        let lz4 = map(&[("chunk_length_in_kb", "64"), ("class", "org.apache.cassandra.io.compress.LZ4Compressor")]);
        assert_eq!(compression_map(&map(&[("class", "LZ4Compressor")])), lz4);
        assert_eq!(compression_map(&map(&[("sstable_compression", "LZ4Compressor"), ("enabled", "true")])), lz4);
        assert_eq!(
            compression_map(&map(&[("class", "com.example.Zip"), ("chunk_length_kb", "16")])),
            map(&[("chunk_length_in_kb", "16"), ("class", "com.example.Zip")])
        );
    }
}
