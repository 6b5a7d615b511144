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
//! ```text
//! system_schema.keyspaces   key keyspace_name; (column) durable_writes, replication
//! system_schema.tables      key keyspace_name; (table_name, column) bloom_filter_fp_chance,
//!                           caching, comment, compaction, compression,
//!                           dclocal_read_repair_chance, default_time_to_live,
//!                           gc_grace_seconds, id, memtable_flush_period_in_ms,
//!                           read_repair_chance, speculative_retry
//! system_schema.columns     key keyspace_name; (table_name, column_name, column)
//!                           clustering_order, column_name_bytes, kind, position, type
//! system_auth.roles         key role; (column) can_login, is_superuser, salted_hash
//! system_auth.role_permissions  key role; (resource, column) permissions (frozen set)
//! ```
//!
//! All three are node-local (LocalStrategy): each node derives them from what it holds.

use std::collections::BTreeMap;

use uuid::Uuid;

use super::traces::composite_name;
use crate::data::Cell;
use crate::marshal::AbstractType;
use crate::schema::{CfDef, KeyspaceDef};

pub const SCHEMA_KEYSPACE: &str = "system_schema";
pub const AUTH_KEYSPACE: &str = "system_auth";
pub const DISTRIBUTED_KEYSPACE: &str = "system_distributed";

pub const KEYSPACES_CF: &str = "keyspaces";
pub const TABLES_CF: &str = "tables";
pub const COLUMNS_CF: &str = "columns";
pub const ROLES_CF: &str = "roles";
pub const ROLE_PERMISSIONS_CF: &str = "role_permissions";

const M: &str = "org.apache.cassandra.db.marshal.";

/// (keyspace, column family, low bits of its fixed id, clustering types (short names), comment)
type Table = (&'static str, &'static str, u128, &'static [&'static str], &'static str);

const TABLES: &[Table] = &[
    (SCHEMA_KEYSPACE, KEYSPACES_CF, 0x0c01, &[], "keyspace definitions"),
    (SCHEMA_KEYSPACE, TABLES_CF, 0x0c02, &["UTF8Type"], "table definitions"),
    (SCHEMA_KEYSPACE, COLUMNS_CF, 0x0c03, &["UTF8Type", "UTF8Type"], "column definitions"),
    (AUTH_KEYSPACE, ROLES_CF, 0x0d01, &[], "role definitions"),
    (AUTH_KEYSPACE, ROLE_PERMISSIONS_CF, 0x0d02, &["UTF8Type"], "permissions granted to db roles"),
    (DISTRIBUTED_KEYSPACE, "repair_history", 0x0e01, &["TimeUUIDType"], "Repair history"),
    (DISTRIBUTED_KEYSPACE, "parent_repair_history", 0x0e02, &[], "Repair history"),
];

/// The fixed ids of every column family here.
pub(super) fn cf_ids() -> impl Iterator<Item = Uuid> {
    TABLES.iter().map(|t| Uuid::from_u128(0x5bb1_0000_0000_4000_8000_0000_0000_0000 | t.2))
}

/// The definitions of the three keyspaces (never stored: the same on every node).
pub fn keyspace_defs() -> Vec<KeyspaceDef> {
    [SCHEMA_KEYSPACE, AUTH_KEYSPACE, DISTRIBUTED_KEYSPACE]
        .into_iter()
        .map(|name| {
            let mut ks = KeyspaceDef::new(name);
            ks.strategy_class = "org.apache.cassandra.locator.LocalStrategy".into();
            ks.strategy_options = BTreeMap::new();
            for (t, id) in TABLES.iter().zip(cf_ids()).filter(|(t, _)| t.0 == name) {
                let mut cf = CfDef::new(name, t.1);
                cf.id = id;
                cf.thrift_id = crate::schema::thrift_id_of(&id);
                let parts: Vec<String> =
                    t.3.iter().chain(std::iter::once(&"UTF8Type")).map(|p| format!("{M}{p}")).collect();
                cf.comparator_type = format!("{M}CompositeType({})", parts.join(","));
                cf.key_validation_class = match t.1 {
                    // Partition key (keyspace_name, columnfamily_name).
                    "repair_history" => format!("{M}CompositeType({M}UTF8Type,{M}UTF8Type)"),
                    "parent_repair_history" => format!("{M}TimeUUIDType"),
                    _ => format!("{M}UTF8Type"),
                };
                cf.comment = Some(t.4.into());
                // Rewritten whole: the tombstones of what a rewrite replaces can go at once.
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

/// A frozen collection in the CQL protocol's serialization.
fn frozen(items: &[&[u8]]) -> Vec<u8> {
    let mut out = i32::try_from(items.len()).unwrap_or(i32::MAX).to_be_bytes().to_vec();
    for item in items {
        out.extend_from_slice(&i32::try_from(item.len()).unwrap_or(i32::MAX).to_be_bytes());
        out.extend_from_slice(item);
    }
    out
}

fn frozen_map(map: &BTreeMap<String, String>) -> Vec<u8> {
    let mut out = i32::try_from(map.len()).unwrap_or(i32::MAX).to_be_bytes().to_vec();
    for (k, v) in map {
        for part in [k.as_bytes(), v.as_bytes()] {
            out.extend_from_slice(&i32::try_from(part.len()).unwrap_or(i32::MAX).to_be_bytes());
            out.extend_from_slice(part);
        }
    }
    out
}

/// The CQL name of a marshal type, as `system_schema.columns.type` holds it; a type CQL has no
/// name for is its class name in quotes, as 3.11 writes custom types.
fn cql_type(class: &str) -> String {
    let Ok(ty) = AbstractType::parse(class) else { return format!("'{class}'") };
    let name = match ty.short_name() {
        "UTF8Type" => "text",
        "AsciiType" => "ascii",
        "BytesType" => "blob",
        "LongType" => "bigint",
        "Int32Type" => "int",
        "IntegerType" => "varint",
        "DecimalType" => "decimal",
        "DoubleType" => "double",
        "FloatType" => "float",
        "BooleanType" => "boolean",
        "UUIDType" => "uuid",
        "LexicalUUIDType" => return format!("'{M}LexicalUUIDType'"),
        "TimeUUIDType" => "timeuuid",
        "TimestampType" | "DateType" => "timestamp",
        "InetAddressType" => "inet",
        "CounterColumnType" => "counter",
        _ => return format!("'{}'", ty.class_name()),
    };
    name.to_string()
}

/// The rows of `system_schema.keyspaces`, `tables` and `columns` for `keyspaces`.
pub fn schema_rows(keyspaces: &BTreeMap<String, KeyspaceDef>) -> [(&'static str, Vec<DerivedRow>); 3] {
    let mut ks_rows = Vec::new();
    let mut table_rows = Vec::new();
    let mut column_rows = Vec::new();
    for ks in keyspaces.values() {
        let key = ks.name.as_bytes().to_vec();
        let mut replication = ks.strategy_options.clone();
        replication.insert("class".into(), ks.strategy_class.clone());
        ks_rows.push((
            key.clone(),
            vec![
                cell(composite_name(&[b"durable_writes"]), vec![u8::from(ks.durable_writes)]),
                cell(composite_name(&[b"replication"]), frozen_map(&replication)),
            ],
        ));
        let mut tables = Vec::new();
        let mut columns = Vec::new();
        for cf in &ks.cf_defs {
            tables.extend(table_cells(cf));
            columns.extend(column_cells(cf));
        }
        table_rows.push((key.clone(), tables));
        column_rows.push((key, columns));
    }
    [(KEYSPACES_CF, ks_rows), (TABLES_CF, table_rows), (COLUMNS_CF, column_rows)]
}

fn table_cells(cf: &CfDef) -> Vec<Cell> {
    let t = cf.name.as_bytes();
    let c = |column: &str, value: Vec<u8>| cell(composite_name(&[t, column.as_bytes()]), value);
    let mut compaction = cf.compaction_strategy_options.clone();
    compaction.insert("class".into(), cf.compaction_strategy.clone());
    compaction.insert("min_threshold".into(), cf.min_compaction_threshold.to_string());
    compaction.insert("max_threshold".into(), cf.max_compaction_threshold.to_string());
    let caching = BTreeMap::from([("keys".to_string(), cf.caching.clone())]);
    let mut out = vec![
        c("caching", frozen_map(&caching)),
        c("comment", cf.comment.clone().unwrap_or_default().into_bytes()),
        c("compaction", frozen_map(&compaction)),
        c("compression", frozen_map(&cf.compression_options)),
        c("dclocal_read_repair_chance", cf.dclocal_read_repair_chance.to_be_bytes().to_vec()),
        c("default_time_to_live", cf.default_time_to_live.to_be_bytes().to_vec()),
        c("gc_grace_seconds", cf.gc_grace_seconds.to_be_bytes().to_vec()),
        c("id", cf.id.as_bytes().to_vec()),
        c("read_repair_chance", cf.read_repair_chance.to_be_bytes().to_vec()),
    ];
    if let Some(p) = cf.bloom_filter_fp_chance {
        out.push(c("bloom_filter_fp_chance", p.to_be_bytes().to_vec()));
    }
    if let Some(ms) = cf.memtable_flush_period_in_ms {
        out.push(c("memtable_flush_period_in_ms", ms.to_be_bytes().to_vec()));
    }
    if let Some(s) = &cf.speculative_retry {
        out.push(c("speculative_retry", s.clone().into_bytes()));
    }
    out
}

/// A Thrift column family's CQL columns (3.11's view of a compact table): the partition key
/// `key`, the clustering `column1` (and `column2` in a super column family), the value `value`,
/// and each named column of `column_metadata` as a static column.
fn column_cells(cf: &CfDef) -> Vec<Cell> {
    let t = cf.name.as_bytes();
    let mut out = Vec::new();
    let mut column = |name: &[u8], kind: &str, position: i32, class: &str, order: &str| {
        let c = |field: &str, value: Vec<u8>| cell(composite_name(&[t, name, field.as_bytes()]), value);
        out.push(c("clustering_order", order.as_bytes().to_vec()));
        out.push(c("column_name_bytes", name.to_vec()));
        out.push(c("kind", kind.as_bytes().to_vec()));
        out.push(c("position", position.to_be_bytes().to_vec()));
        out.push(c("type", cql_type(class).into_bytes()));
    };
    let key_name = cf.key_alias.clone().unwrap_or_else(|| b"key".to_vec());
    column(&key_name, "partition_key", 0, &cf.key_validation_class, "none");
    column(b"column1", "clustering", 0, &cf.comparator_type, "asc");
    if let Some(sub) = &cf.subcomparator_type {
        column(b"column2", "clustering", 1, sub, "asc");
    }
    column(b"value", "regular", -1, &cf.default_validation_class, "none");
    for def in &cf.column_metadata {
        column(&def.name, "static", -1, &def.validation_class, "none");
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
    }

    #[test]
    fn a_keyspace_gives_one_row_per_table_kind() {
        let mut ks = KeyspaceDef::new("Shop");
        ks.cf_defs.push(CfDef::new("Shop", "Orders"));
        let rows = schema_rows(&BTreeMap::from([("Shop".to_string(), ks)]));
        let [(_, keyspaces), (_, tables), (_, columns)] = &rows;
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
}
