//! `create/update keyspace` and `create/update column family` attributes → Thrift `KsDef`/`CfDef`.
//!
//! Every attribute cassandra-cli 0.7–1.2 accepted is mapped to its `CfDef` field of API 20.1.0;
//! an unknown attribute is an error naming the valid ones. Differences from cassandra-cli, on
//! purpose: `column_metadata` is applied after the other attributes (so `comparator` may come
//! after it), a column without `validation_class` takes the column family's
//! `default_validation_class` (cassandra-cli 1.x rejected it; seed 002's `song_data` relies on it),
//! a `BytesType` column name that is not hex is taken as UTF-8 (see [`column_name_bytes`]),
//! unknown keys inside a column definition are errors instead of being ignored, and a keyspace
//! created without a strategy gets SimpleStrategy with one replica, as in 0.7/0.8, not 1.x's
//! NetworkTopologyStrategy (see [`DEFAULT_PLACEMENT_STRATEGY`]).

use std::collections::BTreeMap;

use model::marshal::AbstractType;
use thrift::OrderedFloat;
use thrift_idl::{CfDef, ColumnDef, IndexType, KsDef};

use super::ast::{AttrValue, Attrs};
use super::value::{self, ValueError};

/// Replication strategy of `create keyspace` without `placement_strategy`.
///
/// cassandra-cli 1.x defaulted to NetworkTopologyStrategy with one replica in SimpleSnitch's
/// `datacenter1`. That keyspace is only writable when the node's snitch puts it in a data centre
/// of that name, and Sibyl's sample configuration does not (its snitch names another one), so
/// every write to it would be Unavailable. We default instead to what 0.7 and 0.8's
/// cassandra-cli did and what works on any cluster: SimpleStrategy with `replication_factor` 1,
/// or N with the 0.7 form `with replication_factor = N`. `placement_strategy` and
/// `strategy_options` still choose anything else.
pub const DEFAULT_PLACEMENT_STRATEGY: &str = "org.apache.cassandra.locator.SimpleStrategy";
/// Replication factor of the default strategy when none is given.
pub const DEFAULT_REPLICATION_FACTOR: &str = "1";
/// Data center given the replicas when NetworkTopologyStrategy is named without options
/// (SimpleSnitch's, as cassandra-cli 1.x).
pub const DEFAULT_DATACENTER: &str = "datacenter1";

/// Column family attributes accepted by `create/update column family`.
pub const CF_ATTRIBUTES: &[&str] = &[
    "column_type",
    "comparator",
    "subcomparator",
    "comment",
    "rows_cached",
    "row_cache_save_period",
    "row_cache_keys_to_save",
    "keys_cached",
    "key_cache_save_period",
    "read_repair_chance",
    "dclocal_read_repair_chance",
    "gc_grace",
    "column_metadata",
    "memtable_operations",
    "memtable_throughput",
    "memtable_flush_after",
    "default_validation_class",
    "min_compaction_threshold",
    "max_compaction_threshold",
    "replicate_on_write",
    "row_cache_provider",
    "key_validation_class",
    "key_alias",
    "compaction_strategy",
    "compaction_strategy_options",
    "compression_options",
    "bloom_filter_fp_chance",
    "index_interval",
    "memtable_flush_period_in_ms",
    "caching",
    "default_time_to_live",
    "speculative_retry",
    "populate_io_cache_on_flush",
    "merge_shards_chance",
];

/// Keyspace attributes accepted by `create/update keyspace`.
pub const KS_ATTRIBUTES: &[&str] = &["placement_strategy", "strategy_options", "durable_writes", "replication_factor"];

/// Errors building schema definitions.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SchemaError {
    #[error("Unknown column family attribute '{0}'. Valid attributes: {list}", list = CF_ATTRIBUTES.join(", "))]
    UnknownCfAttribute(String),
    #[error("Unknown keyspace attribute '{0}'. Valid attributes: {list}", list = KS_ATTRIBUTES.join(", "))]
    UnknownKsAttribute(String),
    #[error("'{attr}' is not supported by Thrift API 20.1.0 (it was removed in Cassandra 2.0)")]
    RemovedAttribute { attr: String },
    #[error("'{attr}' expects {expected}, got {got}")]
    BadValue { attr: String, expected: &'static str, got: String },
    #[error("Error: {attr} must be between 0 and 1.")]
    ChanceOutOfRange { attr: String },
    #[error("'column_metadata' format - [{{ k:v, k:v, ..}}, {{ ... }}, ...]")]
    BadColumnMetadata,
    #[error("Unknown column definition key '{0}' (valid: column_name, validation_class, index_type, index_name, index_options)")]
    UnknownColumnKey(String),
    #[error("column definition needs a column_name")]
    MissingColumnName,
    #[error("IndexType '{0}' is unsupported.")]
    BadIndexType(String),
    #[error("{0}")]
    Value(#[from] ValueError),
}

/// A `CfDef` with only keyspace and name set.
pub fn empty_cf_def(keyspace: &str, name: &str) -> CfDef {
    thrift_idl::bare_cf_def(keyspace, name)
}

/// A new keyspace's definition: cassandra-cli's default strategy, then the attributes.
pub fn new_ks_def(name: &str, attrs: &Attrs) -> Result<KsDef, SchemaError> {
    let base = KsDef {
        name: name.to_string(),
        strategy_class: DEFAULT_PLACEMENT_STRATEGY.to_string(),
        strategy_options: None,
        replication_factor: None,
        cf_defs: Vec::new(),
        durable_writes: None,
    };
    apply_ks_attrs(base, attrs)
}

/// Applies keyspace attributes to `base` (an existing definition for `update keyspace`). The
/// result carries no column families and no deprecated `replication_factor`, as
/// `system_update_keyspace` wants.
pub fn apply_ks_attrs(mut ks: KsDef, attrs: &Attrs) -> Result<KsDef, SchemaError> {
    ks.cf_defs = Vec::new();
    ks.replication_factor = None;
    for (attr, value) in attrs {
        match attr.as_str() {
            "placement_strategy" => ks.strategy_class = text(attr, value)?.to_string(),
            "strategy_options" => ks.strategy_options = Some(options(attr, value)?),
            "durable_writes" => ks.durable_writes = Some(boolean(attr, value)?),
            // Cassandra 0.7 style: `with replication_factor = 1`.
            "replication_factor" => {
                let rf = int(attr, value)?;
                ks.strategy_options
                    .get_or_insert_with(BTreeMap::new)
                    .insert("replication_factor".into(), rf.to_string());
            }
            other => return Err(SchemaError::UnknownKsAttribute(other.to_string())),
        }
    }
    let is_strategy = |name: &str| ks.strategy_class == name || ks.strategy_class.ends_with(&format!(".{name}"));
    if is_strategy("SimpleStrategy") {
        ks.strategy_options
            .get_or_insert_with(BTreeMap::new)
            .entry("replication_factor".to_string())
            .or_insert_with(|| DEFAULT_REPLICATION_FACTOR.to_string());
    } else if is_strategy("NetworkTopologyStrategy") {
        let opts = ks.strategy_options.get_or_insert_with(BTreeMap::new);
        // An old-style replication_factor means "this many copies in the local data center".
        if let Some(rf) = opts.remove("replication_factor") {
            opts.entry(DEFAULT_DATACENTER.to_string()).or_insert(rf);
        }
        if opts.is_empty() {
            opts.insert(DEFAULT_DATACENTER.to_string(), "1".to_string());
        }
    }
    Ok(ks)
}

/// Applies column family attributes to `cf` (a fresh [`empty_cf_def`] for `create`, the server's
/// current definition for `update`).
pub fn apply_cf_attrs(mut cf: CfDef, attrs: &Attrs) -> Result<CfDef, SchemaError> {
    let mut metadata = None;
    for (attr, value) in attrs {
        let a = attr.as_str();
        match a {
            "column_type" => cf.column_type = Some(text(a, value)?.to_string()),
            "comparator" => cf.comparator_type = Some(text(a, value)?.to_string()),
            "subcomparator" => cf.subcomparator_type = Some(text(a, value)?.to_string()),
            "comment" => cf.comment = Some(text(a, value)?.to_string()),
            "rows_cached" => cf.row_cache_size = Some(double(a, value)?),
            "row_cache_save_period" => cf.row_cache_save_period_in_seconds = Some(int(a, value)?),
            "row_cache_keys_to_save" => cf.row_cache_keys_to_save = Some(int(a, value)?),
            "keys_cached" => cf.key_cache_size = Some(double(a, value)?),
            "key_cache_save_period" => cf.key_cache_save_period_in_seconds = Some(int(a, value)?),
            "read_repair_chance" => cf.read_repair_chance = Some(chance(a, value)?),
            "dclocal_read_repair_chance" => cf.dclocal_read_repair_chance = Some(chance(a, value)?),
            "gc_grace" => cf.gc_grace_seconds = Some(int(a, value)?),
            "column_metadata" => metadata = Some(value),
            "memtable_operations" => cf.memtable_operations_in_millions = Some(double(a, value)?),
            "memtable_throughput" => cf.memtable_throughput_in_mb = Some(int(a, value)?),
            "memtable_flush_after" => cf.memtable_flush_after_mins = Some(int(a, value)?),
            "default_validation_class" => cf.default_validation_class = Some(text(a, value)?.to_string()),
            "min_compaction_threshold" => cf.min_compaction_threshold = Some(int(a, value)?),
            "max_compaction_threshold" => cf.max_compaction_threshold = Some(int(a, value)?),
            "replicate_on_write" => cf.replicate_on_write = Some(boolean(a, value)?),
            "row_cache_provider" => cf.row_cache_provider = Some(text(a, value)?.to_string()),
            "key_validation_class" => cf.key_validation_class = Some(text(a, value)?.to_string()),
            "key_alias" => cf.key_alias = Some(text(a, value)?.as_bytes().to_vec()),
            "compaction_strategy" => cf.compaction_strategy = Some(text(a, value)?.to_string()),
            "compaction_strategy_options" => cf.compaction_strategy_options = Some(options(a, value)?),
            "compression_options" => cf.compression_options = Some(options(a, value)?),
            "bloom_filter_fp_chance" => cf.bloom_filter_fp_chance = Some(double(a, value)?),
            "index_interval" => cf.index_interval = Some(int(a, value)?),
            "memtable_flush_period_in_ms" => cf.memtable_flush_period_in_ms = Some(int(a, value)?),
            "caching" => cf.caching = Some(text(a, value)?.to_string()),
            "default_time_to_live" => cf.default_time_to_live = Some(int(a, value)?),
            "speculative_retry" => cf.speculative_retry = Some(text(a, value)?.to_string()),
            "populate_io_cache_on_flush" => cf.populate_io_cache_on_flush = Some(boolean(a, value)?),
            "merge_shards_chance" => cf.merge_shards_chance = Some(double(a, value)?),
            "column_aliases" | "key_aliases" | "value_alias" => {
                return Err(SchemaError::RemovedAttribute { attr: a.to_string() })
            }
            other => return Err(SchemaError::UnknownCfAttribute(other.to_string())),
        }
    }
    if let Some(value) = metadata {
        cf.column_metadata = Some(column_metadata(&cf, value)?);
    }
    Ok(cf)
}

/// `[{column_name: x, validation_class: T, index_type: KEYS, index_name: n, index_options: {..}}, ...]`
fn column_metadata(cf: &CfDef, value: &AttrValue) -> Result<Vec<ColumnDef>, SchemaError> {
    let AttrValue::Array(items) = value else {
        return Err(SchemaError::BadColumnMetadata);
    };
    // Column names of a super column family are sub-column names.
    let is_super = cf.column_type.as_deref() == Some("Super");
    let name_class = if is_super { cf.subcomparator_type.as_deref() } else { cf.comparator_type.as_deref() };
    let name_type = value::schema_type(name_class)?;
    let default_validator = cf.default_validation_class.clone().unwrap_or_else(|| "BytesType".to_string());
    let mut defs = Vec::with_capacity(items.len());
    for item in items {
        let AttrValue::Hash(pairs) = item else {
            return Err(SchemaError::BadColumnMetadata);
        };
        let mut def = ColumnDef {
            name: Vec::new(),
            validation_class: default_validator.clone(),
            index_type: None,
            index_name: None,
            index_options: None,
        };
        let mut has_name = false;
        for (key, v) in pairs {
            match key.as_str() {
                "column_name" => {
                    def.name = match v {
                        AttrValue::Call { name, arg } => value::call_to_bytes(name, arg.as_deref())?,
                        _ => column_name_bytes(&name_type, text(key, v)?)?,
                    };
                    has_name = true;
                }
                "validation_class" => def.validation_class = text(key, v)?.to_string(),
                "index_type" => def.index_type = Some(index_type(text(key, v)?)?),
                "index_name" => def.index_name = Some(text(key, v)?.to_string()),
                "index_options" => def.index_options = Some(options(key, v)?),
                other => return Err(SchemaError::UnknownColumnKey(other.to_string())),
            }
        }
        if !has_name {
            return Err(SchemaError::MissingColumnName);
        }
        defs.push(def);
    }
    Ok(defs)
}

/// A `column_name` in column metadata, converted by the (sub)comparator. With a `BytesType`
/// comparator, a name that is not hex is taken as its UTF-8 bytes: cassandra-cli 1.x rejected
/// such names, which made schemas like seed 002's `song_data` (no comparator, names such as
/// `likes`) fail; a name that is valid hex (`cafe`) is still read as hex.
fn column_name_bytes(name_type: &AbstractType, text: &str) -> Result<Vec<u8>, SchemaError> {
    match name_type.from_display_string(text) {
        Ok(bytes) => Ok(bytes),
        Err(_) if *name_type == AbstractType::Bytes => Ok(text.as_bytes().to_vec()),
        Err(e) => Err(SchemaError::Value(ValueError::from(e))),
    }
}

/// `KEYS`, `CUSTOM`, `COMPOSITES` or their numbers.
fn index_type(s: &str) -> Result<IndexType, SchemaError> {
    match s.to_ascii_uppercase().as_str() {
        "KEYS" | "0" => Ok(IndexType::KEYS),
        "CUSTOM" | "1" => Ok(IndexType::CUSTOM),
        "COMPOSITES" | "2" => Ok(IndexType::COMPOSITES),
        _ => Err(SchemaError::BadIndexType(s.to_string())),
    }
}

fn bad(attr: &str, expected: &'static str, value: &AttrValue) -> SchemaError {
    let got = match value.as_text() {
        Some(t) => format!("'{t}'"),
        None => value.describe().to_string(),
    };
    SchemaError::BadValue { attr: attr.to_string(), expected, got }
}

fn text<'v>(attr: &str, value: &'v AttrValue) -> Result<&'v str, SchemaError> {
    value.as_text().ok_or_else(|| bad(attr, "a name or a quoted string", value))
}

fn int(attr: &str, value: &AttrValue) -> Result<i32, SchemaError> {
    match value {
        AttrValue::Int(s) | AttrValue::Text(s) => s.parse().map_err(|_| bad(attr, "an integer", value)),
        _ => Err(bad(attr, "an integer", value)),
    }
}

fn double(attr: &str, value: &AttrValue) -> Result<OrderedFloat<f64>, SchemaError> {
    match value {
        AttrValue::Int(s) | AttrValue::Double(s) | AttrValue::Text(s) => s
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(OrderedFloat)
            .ok_or_else(|| bad(attr, "a number", value)),
        _ => Err(bad(attr, "a number", value)),
    }
}

fn chance(attr: &str, value: &AttrValue) -> Result<OrderedFloat<f64>, SchemaError> {
    let c = double(attr, value)?;
    if !(0.0..=1.0).contains(&c.0) {
        return Err(SchemaError::ChanceOutOfRange { attr: attr.to_string() });
    }
    Ok(c)
}

fn boolean(attr: &str, value: &AttrValue) -> Result<bool, SchemaError> {
    match value.as_text().map(str::to_ascii_lowercase).as_deref() {
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        _ => Err(bad(attr, "true or false", value)),
    }
}

/// `{k: v, ...}`; the deprecated `[{k: v}]` form is accepted too.
fn options(attr: &str, value: &AttrValue) -> Result<BTreeMap<String, String>, SchemaError> {
    match value {
        AttrValue::Hash(pairs) => pairs
            .iter()
            .map(|(k, v)| Ok((k.clone(), v.as_text().ok_or_else(|| bad(attr, "scalar option values", v))?.to_string())))
            .collect(),
        AttrValue::Array(items) => match items.as_slice() {
            [] => Ok(BTreeMap::new()),
            [one] => options(attr, one),
            _ => Err(bad(attr, "{key: value, ...}", value)),
        },
        _ => Err(bad(attr, "{key: value, ...}", value)),
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
