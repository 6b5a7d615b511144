//! Keyspace and column family definitions: Thrift's `KsDef`/`CfDef` to and from the engine's
//! schema objects, with the defaults Cassandra 3.11 applies.

use std::collections::BTreeMap;

use model::compaction_options::CompactionOptions;
use model::marshal::AbstractType;
use model::schema::{self, ColumnType, IndexType};
use thrift::OrderedFloat;
use thrift_idl as t;

/// Cassandra's short class names get the package they live in.
pub fn full_class_name(name: &str, package: &str) -> String {
    if name.contains('.') {
        name.to_string()
    } else {
        format!("{package}.{name}")
    }
}

const MARSHAL: &str = "org.apache.cassandra.db.marshal";

/// Normalizes a type name as Cassandra would echo it back.
fn type_name(name: &str) -> Result<String, String> {
    AbstractType::parse(name).map(|t| t.class_name()).map_err(|e| e.to_string())
}

/// A Thrift `CfDef` as our schema definition (defaults as Cassandra 3.11 applies them).
/// `existing` is the current definition for an update (its id is kept).
/// A probability option, 0 to 1 with both ends (3.11's TableParams.validate words).
fn chance(option: &str, value: f64) -> Result<f64, String> {
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{option} must be larger than or equal to 0 and smaller than or equal to 1.0 (got {value:?})"))
    }
}

pub fn cf_def_from_thrift(d: t::CfDef, existing: Option<&schema::CfDef>) -> Result<schema::CfDef, String> {
    let mut cf = schema::CfDef::new(d.keyspace.clone(), d.name.clone());
    if let Some(e) = existing {
        cf.id = e.id;
        cf.thrift_id = e.thrift_id;
        // A COMPACT STORAGE table keeps its CQL names through a Thrift update.
        cf.cql = e.cql.clone();
    }
    cf.column_type = match d.column_type.as_deref() {
        None | Some("Standard") => ColumnType::Standard,
        Some("Super") => ColumnType::Super,
        Some(other) => return Err(format!("Invalid column type {other}: must be Standard or Super")),
    };
    if let Some(c) = d.comparator_type {
        cf.comparator_type = type_name(&c)?;
    } else {
        cf.comparator_type = format!("{MARSHAL}.BytesType");
    }
    cf.subcomparator_type = match (cf.column_type, d.subcomparator_type) {
        (ColumnType::Super, Some(s)) => Some(type_name(&s)?),
        (ColumnType::Super, None) => Some(format!("{MARSHAL}.BytesType")),
        (ColumnType::Standard, Some(_)) => {
            return Err(format!("subcomparator_type is invalid for standard column family {}", d.name))
        }
        (ColumnType::Standard, None) => None,
    };
    cf.comment = d.comment;
    // Checked here, for what a client asks, rather than in the engine's schema rules: a
    // definition stored before this check must still load.
    if let Some(v) = d.read_repair_chance {
        cf.read_repair_chance = chance("read_repair_chance", v.0)?;
    }
    if let Some(v) = d.dclocal_read_repair_chance {
        cf.dclocal_read_repair_chance = chance("dclocal_read_repair_chance", v.0)?;
    }
    if let Some(v) = d.gc_grace_seconds {
        cf.gc_grace_seconds = v;
    }
    if let Some(v) = d.default_validation_class {
        cf.default_validation_class = type_name(&v)?;
    }
    if let Some(v) = d.key_validation_class {
        cf.key_validation_class = type_name(&v)?;
    }
    cf.key_alias = d.key_alias;
    if let Some(v) = d.min_compaction_threshold {
        cf.min_compaction_threshold = v;
    }
    if let Some(v) = d.max_compaction_threshold {
        cf.max_compaction_threshold = v;
    }
    if let Some(v) = d.compaction_strategy {
        cf.compaction_strategy = CompactionOptions::full_class_name(&v);
    }
    cf.compaction_strategy_options = d.compaction_strategy_options.unwrap_or_default();
    // Checked here, as read_repair_chance is: a stored definition that an older build accepted
    // must still load.
    CompactionOptions::parse(&cf.compaction_strategy, &cf.compaction_strategy_options)?;
    // Cassandra 3's place for the thresholds is the options; they win over the fields.
    for (key, field) in
        [("min_threshold", &mut cf.min_compaction_threshold), ("max_threshold", &mut cf.max_compaction_threshold)]
    {
        if let Some(v) = cf.compaction_strategy_options.get(key).and_then(|v| v.trim().parse().ok()) {
            *field = v;
        }
    }
    cf.compression_options = d.compression_options.unwrap_or_default();
    cf.bloom_filter_fp_chance = d.bloom_filter_fp_chance.map(|v| v.0);
    if let Some(v) = d.bloom_filter_fp_chance {
        if !(v.0 > 0.0 && v.0 <= 1.0) {
            return Err(format!("bloom_filter_fp_chance must be in (0, 1], got {}", v.0));
        }
    }
    if d.caching.is_some() || d.cells_per_row_to_cache.is_some() {
        let (caching, cells) = caching_from_thrift(d.caching.as_deref(), d.cells_per_row_to_cache.as_deref())?;
        cf.caching = caching.to_string();
        cf.cells_per_row_to_cache = Some(cells);
    }
    cf.memtable_flush_period_in_ms = d.memtable_flush_period_in_ms;
    if let Some(v) = d.default_time_to_live {
        cf.default_time_to_live = v;
    }
    cf.speculative_retry = d.speculative_retry;
    cf.min_index_interval = d.min_index_interval;
    cf.max_index_interval = d.max_index_interval;
    cf.populate_io_cache_on_flush = d.populate_io_cache_on_flush;
    if let Some(triggers) = d.triggers {
        if !triggers.is_empty() {
            return Err("triggers are not supported yet".into());
        }
    }
    for c in d.column_metadata.unwrap_or_default() {
        if cf.column_metadata.iter().any(|kept| kept.name == c.name) {
            merge_duplicate_column(&mut cf, c)?;
            continue;
        }
        let index_type = match c.index_type {
            None => None,
            Some(t::IndexType::KEYS) => Some(IndexType::Keys),
            Some(t::IndexType::CUSTOM) => Some(IndexType::Custom),
            Some(t::IndexType::COMPOSITES) => Some(IndexType::Composites),
            Some(other) => return Err(format!("unknown index_type {}", other.0)),
        };
        cf.column_metadata.push(schema::ColumnDef {
            name: c.name,
            validation_class: type_name(&c.validation_class)?,
            index_type,
            index_name: c.index_name,
            index_options: c.index_options.unwrap_or_default(),
        });
    }
    cf.validate()?;
    Ok(cf)
}

/// Thrift's caching options as 3.11 reads them (ThriftConversion.cachingFromThrift): `caching`
/// is one of ALL, KEYS_ONLY, ROWS_ONLY and NONE in any case (KEYS_ONLY when absent), and
/// `cells_per_row_to_cache` ("ALL" or a count) counts only when rows are cached. Returns the
/// caching in capitals, as 3.11 describes it, and the rows cached per partition ("ALL" or a
/// count, "0" when rows are not cached).
fn caching_from_thrift(caching: Option<&str>, cells_per_row: Option<&str>) -> Result<(&'static str, String), String> {
    let (keys, mut rows) = match caching.map(str::to_ascii_uppercase).as_deref() {
        None | Some("KEYS_ONLY") => (true, RowsCached::None),
        Some("ALL") => (true, RowsCached::All),
        Some("ROWS_ONLY") => (false, RowsCached::All),
        Some("NONE") => (false, RowsCached::None),
        Some(_) => return Err(format!("Invalid value {} for caching parameter", caching.unwrap_or_default())),
    };
    if let (Some(cells), false) = (cells_per_row, rows == RowsCached::None) {
        rows = match cells {
            "ALL" => RowsCached::All,
            n => match n.parse::<i32>() {
                Ok(0) => RowsCached::None,
                Ok(n) if n > 0 => RowsCached::First(n),
                _ => {
                    return Err(format!(
                        "Invalid value {n} for cells_per_row_to_cache: must be ALL or a positive count"
                    ))
                }
            },
        };
    }
    let caching = match (keys, rows != RowsCached::None) {
        (true, true) => "ALL",
        (false, true) => "ROWS_ONLY",
        (true, false) => "KEYS_ONLY",
        (false, false) => "NONE",
    };
    let cells = match rows {
        RowsCached::All => "ALL".to_string(),
        RowsCached::First(n) => n.to_string(),
        RowsCached::None => "0".to_string(),
    };
    Ok((caching, cells))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum RowsCached {
    None,
    First(i32),
    All,
}

/// cells_per_row_to_cache of a definition that never set it: every row when rows are cached.
fn default_cells_per_row(caching: &str) -> &'static str {
    if caching.eq_ignore_ascii_case("ALL") || caching.eq_ignore_ascii_case("ROWS_ONLY") {
        "ALL"
    } else {
        "0"
    }
}

pub fn cf_def_to_thrift(cf: &schema::CfDef) -> t::CfDef {
    let column_metadata = cf
        .column_metadata
        .iter()
        .map(|c| t::ColumnDef {
            name: c.name.clone(),
            validation_class: c.validation_class.clone(),
            index_type: c.index_type.map(|i| match i {
                IndexType::Keys => t::IndexType::KEYS,
                IndexType::Custom => t::IndexType::CUSTOM,
                IndexType::Composites => t::IndexType::COMPOSITES,
            }),
            index_name: c.index_name.clone(),
            index_options: if c.index_options.is_empty() { None } else { Some(c.index_options.clone()) },
        })
        .collect();
    t::CfDef {
        column_type: Some(cf.column_type.as_str().to_string()),
        comparator_type: Some(cf.comparator_type.clone()),
        subcomparator_type: cf.subcomparator_type.clone(),
        comment: Some(cf.comment.clone().unwrap_or_default()),
        read_repair_chance: Some(OrderedFloat(cf.read_repair_chance)),
        column_metadata: Some(column_metadata),
        gc_grace_seconds: Some(cf.gc_grace_seconds),
        default_validation_class: Some(cf.default_validation_class.clone()),
        id: Some(cf.thrift_id),
        min_compaction_threshold: Some(cf.min_compaction_threshold),
        max_compaction_threshold: Some(cf.max_compaction_threshold),
        key_validation_class: Some(cf.key_validation_class.clone()),
        key_alias: cf.key_alias.clone(),
        compaction_strategy: Some(cf.compaction_strategy.clone()),
        compaction_strategy_options: Some(cf.compaction_strategy_options.clone()),
        compression_options: Some(cf.compression_options.clone()),
        bloom_filter_fp_chance: cf.bloom_filter_fp_chance.map(OrderedFloat),
        caching: Some(cf.caching.to_ascii_uppercase()),
        dclocal_read_repair_chance: Some(OrderedFloat(cf.dclocal_read_repair_chance)),
        populate_io_cache_on_flush: cf.populate_io_cache_on_flush,
        memtable_flush_period_in_ms: Some(cf.memtable_flush_period_in_ms.unwrap_or(0)),
        default_time_to_live: Some(cf.default_time_to_live),
        // 3.x's default (TableParams: the 99th percentile), as its SpeculativeRetryParam writes it.
        speculative_retry: Some(cf.speculative_retry.clone().unwrap_or_else(|| "99PERCENTILE".into())),
        triggers: Some(Vec::new()),
        cells_per_row_to_cache: Some(
            cf.cells_per_row_to_cache.clone().unwrap_or_else(|| default_cells_per_row(&cf.caching).into()),
        ),
        min_index_interval: Some(cf.min_index_interval.unwrap_or(schema::DEFAULT_MIN_INDEX_INTERVAL)),
        max_index_interval: Some(cf.max_index_interval.unwrap_or(schema::DEFAULT_MAX_INDEX_INTERVAL)),
        ..thrift_idl::bare_cf_def(cf.keyspace.clone(), cf.name.clone())
    }
}

/// A second ColumnDef of a name already defined. 3.11 keeps the first definition and drops the
/// later one silently (its column set keeps one column of a name), but still makes the index the
/// later one declares: that index goes to the kept column when it has none; two indexes of one
/// default name are refused in 3.11's words, and Sibyl, which keeps one index per column,
/// refuses two differently named ones.
fn merge_duplicate_column(cf: &mut schema::CfDef, c: t::ColumnDef) -> Result<(), String> {
    let Some(index_type) = c.index_type else { return Ok(()) };
    let index_type = match index_type {
        t::IndexType::KEYS => IndexType::Keys,
        t::IndexType::CUSTOM => IndexType::Custom,
        t::IndexType::COMPOSITES => IndexType::Composites,
        other => return Err(format!("unknown index_type {}", other.0)),
    };
    let shown = AbstractType::parse(&cf.comparator_type).map(|t| t.to_display_string(&c.name)).unwrap_or_default();
    let effective = |name: &Option<String>| match name.as_deref() {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => schema::default_index_name(&cf.name, &shown),
    };
    let cf_name = cf.name.clone();
    let Some(kept) = cf.column_metadata.iter_mut().find(|k| k.name == c.name) else { return Ok(()) };
    if kept.index_type.is_none() {
        kept.index_type = Some(index_type);
        kept.index_name = c.index_name;
        kept.index_options = c.index_options.unwrap_or_default();
        return Ok(());
    }
    let (first, second) = (effective(&kept.index_name), effective(&c.index_name));
    if first == second {
        return Err(format!("Duplicate index name {first}"));
    }
    Err(format!(
        "column {shown} of {cf_name} is defined twice with an index each ({first} and {second}): only one index per column is supported"
    ))
}

pub fn ks_def_from_thrift(d: t::KsDef) -> Result<schema::KeyspaceDef, String> {
    if !schema::valid_name(&d.name) {
        return Err(format!(
            "\"{}\" is not a valid keyspace name: it must be 1 to 48 alphanumeric or underscore characters",
            d.name
        ));
    }
    let mut strategy_options: BTreeMap<String, String> = d.strategy_options.unwrap_or_default();
    if let Some(rf) = d.replication_factor {
        strategy_options.entry("replication_factor".into()).or_insert_with(|| rf.to_string());
    }
    let (strategy_class, strategy_options) = schema::check_replication(&d.name, &d.strategy_class, strategy_options)?;
    let mut ks = schema::KeyspaceDef::new(d.name.clone());
    ks.strategy_class = strategy_class;
    ks.strategy_options = strategy_options;
    ks.durable_writes = d.durable_writes.unwrap_or(true);
    for cf in d.cf_defs {
        if cf.keyspace != d.name {
            return Err(format!(
                "CfDef ({}) had a keyspace definition that did not match KsDef ({})",
                cf.keyspace, d.name
            ));
        }
        ks.cf_defs.push(cf_def_from_thrift(cf, None)?);
    }
    ks.validate()?;
    Ok(ks)
}

pub fn ks_def_to_thrift(ks: &schema::KeyspaceDef) -> t::KsDef {
    t::KsDef {
        name: ks.name.clone(),
        strategy_class: ks.strategy_class.clone(),
        strategy_options: Some(ks.strategy_options.clone()),
        replication_factor: None,
        // CQL's own tables stay out of Thrift's view, as in 3.11 (CASSANDRA-4377).
        cf_defs: ks.cf_defs.iter().filter(|cf| cf.is_thrift_compatible()).map(cf_def_to_thrift).collect(),
        durable_writes: Some(ks.durable_writes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(caching: Option<&str>, cells: Option<&str>) -> (Option<String>, Option<String>) {
        let d = t::CfDef {
            caching: caching.map(str::to_string),
            cells_per_row_to_cache: cells.map(str::to_string),
            ..thrift_idl::bare_cf_def("KS", "Cf")
        };
        let back = cf_def_to_thrift(&cf_def_from_thrift(d, None).expect("valid definition"));
        (back.caching, back.cells_per_row_to_cache)
    }

    fn pair(caching: &str, cells: &str) -> (Option<String>, Option<String>) {
        (Some(caching.to_string()), Some(cells.to_string()))
    }

    #[test]
    fn caching_is_described_as_3_11_does() {
        // What a client generated from the IDL sends by default.
        assert_eq!(described(Some("keys_only"), Some("100")), pair("KEYS_ONLY", "0"));
        assert_eq!(described(None, None), pair("KEYS_ONLY", "0"));
        assert_eq!(described(Some("all"), None), pair("ALL", "ALL"));
        assert_eq!(described(Some("ALL"), Some("100")), pair("ALL", "100"));
        assert_eq!(described(Some("Rows_Only"), Some("ALL")), pair("ROWS_ONLY", "ALL"));
        assert_eq!(described(Some("ALL"), Some("0")), pair("KEYS_ONLY", "0"));
        assert_eq!(described(Some("none"), Some("100")), pair("NONE", "0"));
    }

    #[test]
    fn read_repair_chances_are_probabilities() {
        let with = |rr: f64, dclocal: f64| {
            let d = t::CfDef {
                read_repair_chance: Some(OrderedFloat(rr)),
                dclocal_read_repair_chance: Some(OrderedFloat(dclocal)),
                ..thrift_idl::bare_cf_def("KS", "Cf")
            };
            cf_def_from_thrift(d, None).map(|cf| (cf.read_repair_chance, cf.dclocal_read_repair_chance))
        };
        assert_eq!(with(1.0, 0.0), Ok((1.0, 0.0)));
        assert_eq!(
            with(2.0, 0.1),
            Err("read_repair_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got 2.0)"
                .into())
        );
        assert_eq!(
            with(0.5, -0.25),
            Err("dclocal_read_repair_chance must be larger than or equal to 0 and smaller than or equal to 1.0 \
                 (got -0.25)"
                .into())
        );
        assert!(with(f64::NAN, 0.1).is_err());
    }

    fn column(name: &str, class: &str, index: Option<Option<&str>>) -> t::ColumnDef {
        t::ColumnDef {
            name: name.as_bytes().to_vec(),
            validation_class: class.to_string(),
            index_type: index.map(|_| t::IndexType::KEYS),
            index_name: index.flatten().map(str::to_string),
            index_options: None,
        }
    }

    fn with_columns(columns: Vec<t::ColumnDef>) -> Result<schema::CfDef, String> {
        let d = t::CfDef {
            comparator_type: Some("UTF8Type".into()),
            column_metadata: Some(columns),
            ..thrift_idl::bare_cf_def("KS", "Cf")
        };
        cf_def_from_thrift(d, None)
    }

    #[test]
    fn a_column_defined_twice_keeps_its_first_definition() {
        let cf = with_columns(vec![
            column("a", "LongType", None),
            column("b", "UTF8Type", None),
            column("a", "UTF8Type", None),
        ])
        .expect("3.11 accepts a name defined twice");
        let kept: Vec<(&[u8], &str)> =
            cf.column_metadata.iter().map(|c| (c.name.as_slice(), c.validation_class.as_str())).collect();
        assert_eq!(
            kept,
            [
                (&b"a"[..], "org.apache.cassandra.db.marshal.LongType"),
                (&b"b"[..], "org.apache.cassandra.db.marshal.UTF8Type")
            ]
        );
        // The later definition's index still indexes the column.
        let cf = with_columns(vec![column("a", "LongType", None), column("a", "UTF8Type", Some(Some("by_a")))])
            .expect("an index on the second definition");
        assert_eq!(cf.column_metadata.len(), 1);
        assert_eq!(cf.column_metadata[0].validation_class, "org.apache.cassandra.db.marshal.LongType");
        assert_eq!(cf.column_metadata[0].index_name.as_deref(), Some("by_a"));
        // Two unnamed indexes get one default name: refused in 3.11's words.
        assert_eq!(
            with_columns(vec![column("a", "LongType", Some(None)), column("a", "LongType", Some(None))])
                .err()
                .as_deref(),
            Some("Duplicate index name Cf_a_idx")
        );
    }

    #[test]
    fn unknown_caching_values_are_refused() {
        let d = t::CfDef { caching: Some("sometimes".into()), ..thrift_idl::bare_cf_def("KS", "Cf") };
        assert_eq!(cf_def_from_thrift(d, None).err().as_deref(), Some("Invalid value sometimes for caching parameter"));
        let d = t::CfDef {
            caching: Some("ALL".into()),
            cells_per_row_to_cache: Some("lots".into()),
            ..thrift_idl::bare_cf_def("KS", "Cf")
        };
        assert!(cf_def_from_thrift(d, None).is_err());
    }
}
