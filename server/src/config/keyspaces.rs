//! `<Keyspaces>`: keyspace and column family definitions, turned into
//! [`model::schema::KeyspaceDef`]s and checked with the schema's own validation.

use std::collections::BTreeMap;

use model::schema::{CfDef, ColumnDef, ColumnType, IndexType, KeyspaceDef};
use uuid::Uuid;

use super::column_names::column_name_bytes;
use super::node::unknown_child;
use super::values::{
    bad, check_attributes, class_from_table, container, leaf, marshal_class, number_in, one_of, Elements,
};
use super::xml::Node;
use super::{CacheSize, CfCacheSettings, Config, ConfigError};

const STRATEGIES: &[(&str, &str)] = &[
    // 0.6 names, renamed in 0.7.
    ("org.apache.cassandra.locator.RackUnawareStrategy", "org.apache.cassandra.locator.SimpleStrategy"),
    ("org.apache.cassandra.locator.RackAwareStrategy", "org.apache.cassandra.locator.OldNetworkTopologyStrategy"),
    // 0.7 beta name of NetworkTopologyStrategy.
    ("org.apache.cassandra.locator.DatacenterShardStrategy", "org.apache.cassandra.locator.NetworkTopologyStrategy"),
    ("org.apache.cassandra.locator.SimpleStrategy", "org.apache.cassandra.locator.SimpleStrategy"),
    (
        "org.apache.cassandra.locator.OldNetworkTopologyStrategy",
        "org.apache.cassandra.locator.OldNetworkTopologyStrategy",
    ),
    ("org.apache.cassandra.locator.NetworkTopologyStrategy", "org.apache.cassandra.locator.NetworkTopologyStrategy"),
];

const NETWORK_TOPOLOGY: &str = "org.apache.cassandra.locator.NetworkTopologyStrategy";

const SNITCHES: &[(&str, &str)] = &[
    // 0.6 names, mapped as 0.7's config converter did.
    ("org.apache.cassandra.locator.EndPointSnitch", "org.apache.cassandra.locator.RackInferringSnitch"),
    ("org.apache.cassandra.locator.PropertyFileEndPointSnitch", "org.apache.cassandra.locator.PropertyFileSnitch"),
    ("org.apache.cassandra.locator.SimpleSnitch", "org.apache.cassandra.locator.SimpleSnitch"),
    ("org.apache.cassandra.locator.RackInferringSnitch", "org.apache.cassandra.locator.RackInferringSnitch"),
    ("org.apache.cassandra.locator.PropertyFileSnitch", "org.apache.cassandra.locator.PropertyFileSnitch"),
];

pub(crate) fn snitch_class(line: usize, value: &str) -> Result<String, ConfigError> {
    class_from_table("EndPointSnitch", line, value, SNITCHES)
}

/// Node-level `ReplicaPlacementStrategy` / `ReplicationFactor` (0.5 style), used for keyspaces
/// that do not set their own.
#[derive(Default)]
pub(crate) struct KeyspaceFallbacks {
    strategy: Option<String>,
    replication_factor: Option<u32>,
}

impl KeyspaceFallbacks {
    pub fn from_node_level(els: &Elements<'_>, warnings: &mut Vec<String>) -> Result<Self, ConfigError> {
        let mut fb = KeyspaceFallbacks::default();
        if let Some((v, line)) = els.text("ReplicaPlacementStrategy")? {
            fb.strategy = Some(class_from_table("ReplicaPlacementStrategy", line, v, STRATEGIES)?);
            warnings.push(format!(
                "line {line}: <ReplicaPlacementStrategy> belongs inside <Keyspace> since 0.6; used for keyspaces that do not set it"
            ));
        }
        if let Some((v, line)) = els.text("ReplicationFactor")? {
            fb.replication_factor = Some(number_in("ReplicationFactor", line, v, 1, u32::MAX)?);
            warnings.push(format!(
                "line {line}: <ReplicationFactor> belongs inside <Keyspace> since 0.6; used for keyspaces that do not set it"
            ));
        }
        Ok(fb)
    }
}

/// What `<Keyspaces>` yields.
#[derive(Default)]
pub(crate) struct Parsed {
    pub keyspaces: Vec<KeyspaceDef>,
    pub caches: BTreeMap<(String, String), CfCacheSettings>,
    /// The snitch every `EndPointSnitch` agreed on, with the line of the first.
    pub snitch: Option<(String, usize)>,
}

pub(crate) fn parse_keyspaces(
    node: &Node,
    config: &Config,
    fallbacks: &KeyspaceFallbacks,
    global_snitch: Option<(String, usize)>,
    warnings: &mut Vec<String>,
) -> Result<Parsed, ConfigError> {
    leaf_attrs_none(node)?;
    container(node, "Keyspace")?;
    let mut parsed = Parsed { snitch: global_snitch, ..Parsed::default() };
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut cache_notes = CacheNotes::default();
    for ks_node in &node.children {
        if ks_node.name != "Keyspace" {
            return Err(unknown_child(node, ks_node, &["Keyspace"]));
        }
        let ks = parse_keyspace(ks_node, config, fallbacks, &mut parsed, &mut cache_notes, warnings)?;
        if let Some(first_line) = seen.insert(ks.name.clone(), ks_node.line) {
            return Err(ConfigError::Duplicate {
                element: format!("Keyspace Name=\"{}\"", ks.name),
                line: ks_node.line,
                first_line,
            });
        }
        parsed.keyspaces.push(ks);
    }
    warnings.extend(cache_notes.warnings());
    Ok(parsed)
}

fn leaf_attrs_none(node: &Node) -> Result<(), ConfigError> {
    check_attributes(node, &[])
}

fn parse_keyspace(
    node: &Node,
    config: &Config,
    fallbacks: &KeyspaceFallbacks,
    parsed: &mut Parsed,
    cache_notes: &mut CacheNotes,
    warnings: &mut Vec<String>,
) -> Result<KeyspaceDef, ConfigError> {
    check_attributes(node, &["Name", "DurableWrites"])?;
    let name = match node.attr("Name").map(str::trim) {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => {
            return Err(ConfigError::Missing {
                element: "attribute Name".into(),
                within: "Keyspace".into(),
                line: node.line,
            })
        }
    };
    if crate::thrift::validate::is_reserved_keyspace(&name) {
        return Err(bad("Keyspace Name", node.line, &name, format!("the {name} keyspace is reserved")));
    }
    let els = Elements::collect(
        node,
        &["ReplicaPlacementStrategy", "ReplicationFactor", "EndPointSnitch", "DurableWrites", "StrategyOptions"],
        &["ColumnFamily", "StrategyOption"],
        &[],
        warnings,
    )?;
    let within = format!("Keyspace Name=\"{name}\"");
    let missing = |element: &str| ConfigError::Missing {
        element: format!("<{element}>"),
        within: within.clone(),
        line: node.line,
    };

    let strategy = match els.text("ReplicaPlacementStrategy")? {
        Some((v, line)) => class_from_table("ReplicaPlacementStrategy", line, v, STRATEGIES)?,
        None => fallbacks.strategy.clone().ok_or_else(|| missing("ReplicaPlacementStrategy"))?,
    };
    let replication_factor = match els.text("ReplicationFactor")? {
        Some((v, line)) => Some((number_in("ReplicationFactor", line, v, 1, u32::MAX)?, line)),
        None => fallbacks.replication_factor.map(|rf| (rf, node.line)),
    };

    let mut ks = KeyspaceDef::new(name.clone());
    ks.strategy_class = strategy;
    ks.strategy_options = strategy_options(node, &els)?;
    if ks.strategy_class == NETWORK_TOPOLOGY {
        if let Some((_, line)) = replication_factor {
            warnings.push(format!(
                "line {line}: keyspace {name}: <ReplicationFactor> is ignored with NetworkTopologyStrategy; give one <StrategyOption Name=\"<datacenter>\" Value=\"<replicas>\"/> per datacenter"
            ));
        }
        if ks.strategy_options.is_empty() {
            return Err(missing("StrategyOption"));
        }
    } else {
        let (rf, _) = replication_factor.ok_or_else(|| missing("ReplicationFactor"))?;
        ks.strategy_options.insert("replication_factor".into(), rf.to_string());
    }

    if let Some((v, line)) = els.text("EndPointSnitch")? {
        let snitch = snitch_class(line, v)?;
        match &parsed.snitch {
            Some((agreed, first_line)) if *agreed != snitch => {
                return Err(bad(
                    "EndPointSnitch",
                    line,
                    v,
                    format!("the snitch is global since 0.7 and line {first_line} already chose {agreed}; all keyspaces must agree"),
                ))
            }
            Some(_) => {}
            None => parsed.snitch = Some((snitch, line)),
        }
    }

    let durable_attr = node.attr("DurableWrites").map(|v| (v.trim(), node.line));
    let durable_el = els.text("DurableWrites")?;
    ks.durable_writes = match durable_el.or(durable_attr) {
        Some((v, line)) => super::values::strict_bool("DurableWrites", line, v)?,
        None => true,
    };

    let mut seen_cf: BTreeMap<String, usize> = BTreeMap::new();
    for cf_node in node.children.iter().filter(|c| c.name == "ColumnFamily") {
        let (cf, caches) = parse_column_family(cf_node, &name, config, cache_notes, warnings)?;
        if let Some(first_line) = seen_cf.insert(cf.name.clone(), cf_node.line) {
            return Err(ConfigError::Duplicate {
                element: format!("ColumnFamily Name=\"{}\"", cf.name),
                line: cf_node.line,
                first_line,
            });
        }
        cf.validate().map_err(|reason| ConfigError::InvalidSchema {
            keyspace: name.clone(),
            cf: Some(cf.name.clone()),
            line: cf_node.line,
            reason,
        })?;
        parsed.caches.insert((name.clone(), cf.name.clone()), caches);
        ks.cf_defs.push(cf);
    }
    ks.validate().map_err(|reason| ConfigError::InvalidSchema {
        keyspace: name.clone(),
        cf: None,
        line: node.line,
        reason,
    })?;
    Ok(ks)
}

/// `<StrategyOption Name=".." Value=".."/>`, directly under `<Keyspace>` or inside a
/// `<StrategyOptions>` wrapper.
fn strategy_options(ks_node: &Node, els: &Elements<'_>) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut option_nodes: Vec<&Node> = ks_node.children.iter().filter(|c| c.name == "StrategyOption").collect();
    if let Some(wrapper) = els.node("StrategyOptions") {
        container(wrapper, "StrategyOption")?;
        check_attributes(wrapper, &[])?;
        for child in &wrapper.children {
            if child.name != "StrategyOption" {
                return Err(unknown_child(wrapper, child, &["StrategyOption"]));
            }
            option_nodes.push(child);
        }
    }
    let mut options = BTreeMap::new();
    let mut lines: BTreeMap<String, usize> = BTreeMap::new();
    for opt in option_nodes {
        check_attributes(opt, &["Name", "Value"])?;
        leaf(opt)?;
        let get = |attr: &str| match opt.attr(attr).map(str::trim) {
            Some(v) if !v.is_empty() => Ok(v.to_string()),
            _ => Err(ConfigError::Missing {
                element: format!("attribute {attr}"),
                within: "StrategyOption".into(),
                line: opt.line,
            }),
        };
        let (name, value) = (get("Name")?, get("Value")?);
        if let Some(first_line) = lines.insert(name.clone(), opt.line) {
            return Err(ConfigError::Duplicate {
                element: format!("StrategyOption Name=\"{name}\""),
                line: opt.line,
                first_line,
            });
        }
        options.insert(name, value);
    }
    Ok(options)
}

const CF_ATTRIBUTES: &[&str] = &[
    // 0.6
    "Name",
    "ColumnType",
    "CompareWith",
    "CompareSubcolumnsWith",
    "KeysCached",
    "KeysCachedFraction",
    "RowsCached",
    "RowCacheSavePeriodInSeconds",
    "KeyCacheSavePeriodInSeconds",
    "Comment",
    "ColumnSort",
    // Extensions (0.7+ CfDef options).
    "ReadRepairChance",
    "GCGraceSeconds",
    "DefaultValidationClass",
    "KeyValidationClass",
    "DefaultTimeToLive",
    "MinCompactionThreshold",
    "MaxCompactionThreshold",
    "Caching",
    "BloomFilterFpChance",
];

fn parse_column_family(
    node: &Node,
    keyspace: &str,
    config: &Config,
    cache_notes: &mut CacheNotes,
    warnings: &mut Vec<String>,
) -> Result<(CfDef, CfCacheSettings), ConfigError> {
    check_attributes(node, CF_ATTRIBUTES)?;
    let line = node.line;
    let attr = |name: &str| node.attr(name).map(str::trim).filter(|v| !v.is_empty());
    let name = attr("Name").ok_or_else(|| ConfigError::Missing {
        element: "attribute Name".into(),
        within: format!("ColumnFamily in keyspace {keyspace}"),
        line,
    })?;
    if let Some(v) = attr("ColumnSort") {
        return Err(bad("ColumnSort", line, v, "ColumnSort was removed in 0.4; use CompareWith"));
    }
    let els = Elements::collect(node, &["Comment"], &["Column"], &[], warnings)?;

    // Deterministic ids: every node that first starts from the same file must agree on them.
    let mut cf = CfDef::new(keyspace, name);
    cf.id = config_cf_id(keyspace, name);
    cf.thrift_id = model::schema::thrift_id_of(&cf.id);

    cf.column_type = match attr("ColumnType") {
        Some(v) => one_of("ColumnType", line, v, &[("Standard", ColumnType::Standard), ("Super", ColumnType::Super)])?,
        None => ColumnType::Standard,
    };
    cf.comparator_type = marshal_class(attr("CompareWith").unwrap_or("BytesType"));
    cf.subcomparator_type = match (cf.column_type, attr("CompareSubcolumnsWith")) {
        (ColumnType::Standard, Some(v)) => {
            return Err(bad("CompareSubcolumnsWith", line, v, "only valid with ColumnType=\"Super\""));
        }
        (ColumnType::Standard, None) => None,
        (ColumnType::Super, v) => Some(marshal_class(v.unwrap_or("BytesType"))),
    };

    let comment_el = els.text("Comment")?;
    cf.comment = match (comment_el, attr("Comment")) {
        (Some((text, _)), Some(_)) => {
            warnings.push(format!("line {line}: ColumnFamily {name} has both a Comment attribute and a <Comment> element; using the element"));
            Some(text.to_string())
        }
        (Some((text, _)), None) => Some(text.to_string()),
        (None, Some(text)) => Some(text.to_string()),
        (None, None) => None,
    };

    cf.read_repair_chance = match attr("ReadRepairChance") {
        Some(v) => fraction_or_percent("ReadRepairChance", line, v)?,
        None if config.do_consistency_checks => 1.0,
        None => 0.0,
    };
    // 0.6 had no per-datacenter read repair; keep all of it in the global chance.
    cf.dclocal_read_repair_chance = 0.0;
    cf.gc_grace_seconds = match attr("GCGraceSeconds") {
        Some(v) => number_in("GCGraceSeconds", line, v, 0, i32::MAX)?,
        None => config.gc_grace_seconds,
    };
    if let Some(v) = attr("DefaultValidationClass") {
        cf.default_validation_class = marshal_class(v);
    }
    if let Some(v) = attr("KeyValidationClass") {
        cf.key_validation_class = marshal_class(v);
    }
    if let Some(v) = attr("DefaultTimeToLive") {
        cf.default_time_to_live = number_in("DefaultTimeToLive", line, v, 0, i32::MAX)?;
    }
    if let Some(v) = attr("MinCompactionThreshold") {
        cf.min_compaction_threshold = number_in("MinCompactionThreshold", line, v, 0, i32::MAX)?;
    }
    if let Some(v) = attr("MaxCompactionThreshold") {
        cf.max_compaction_threshold = number_in("MaxCompactionThreshold", line, v, 0, i32::MAX)?;
    }
    if let Some(v) = attr("BloomFilterFpChance") {
        let p = number_in("BloomFilterFpChance", line, v, 0.0, 1.0)?;
        if p <= 0.0 {
            return Err(bad("BloomFilterFpChance", line, v, "must be above 0"));
        }
        cf.bloom_filter_fp_chance = Some(p);
    }

    let on = format!("{keyspace}.{name}");
    let caches = cache_settings(node, &on, cache_notes)?;
    cf.caching = match attr("Caching") {
        Some(v) => {
            let caching = one_of(
                "Caching",
                line,
                v,
                &[("ALL", "ALL"), ("KEYS_ONLY", "KEYS_ONLY"), ("ROWS_ONLY", "ROWS_ONLY"), ("NONE", "NONE")],
            )?;
            // KEYS_ONLY is what Sibyl does whatever the setting.
            match caching {
                "ALL" | "ROWS_ONLY" => cache_notes.note(CacheNote::CachingRows, line, "Caching", v, &on),
                "NONE" => cache_notes.note(CacheNote::CachingNone, line, "Caching", v, &on),
                _ => {}
            }
            caching.to_string()
        }
        None => match (caches.keys_cached != CacheSize::Off, caches.rows_cached != CacheSize::Off) {
            (true, true) => "ALL",
            (true, false) => "KEYS_ONLY",
            (false, true) => "ROWS_ONLY",
            (false, false) => "NONE",
        }
        .to_string(),
    };

    cf.column_metadata = column_metadata(node, &cf, warnings)?;
    Ok((cf, caches))
}

/// A name-based (version 3 layout) UUID from MD5 over the keyspace and CF names.
fn config_cf_id(keyspace: &str, cf: &str) -> Uuid {
    use md5::{Digest, Md5};
    let mut h = Md5::new();
    h.update(b"sibyl storage-conf column family\0");
    h.update(keyspace.as_bytes());
    h.update([0u8]);
    h.update(cf.as_bytes());
    let mut bytes: [u8; 16] = h.finalize().into();
    bytes[6] = (bytes[6] & 0x0f) | 0x30; // version 3
    bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 4122 variant
    Uuid::from_bytes(bytes)
}

/// A probability as `0.25` or `25%`.
fn fraction_or_percent(element: &str, line: usize, v: &str) -> Result<f64, ConfigError> {
    match v.strip_suffix('%') {
        Some(pct) => Ok(number_in(element, line, pct.trim(), 0.0, 100.0)? / 100.0),
        None => number_in(element, line, v, 0.0, 1.0),
    }
}

/// 0.6's cache size rules: `NN%` is a fraction; otherwise 0 is off, (0, 1] a fraction, and a
/// larger number an absolute count.
fn cache_size(element: &str, line: usize, v: &str) -> Result<CacheSize, ConfigError> {
    let x = match v.strip_suffix('%') {
        Some(pct) => {
            let f = number_in(element, line, pct.trim(), 0.0, 100.0)? / 100.0;
            return Ok(if f == 0.0 { CacheSize::Off } else { CacheSize::Fraction(f) });
        }
        None => number_in(element, line, v, 0.0, f64::MAX)?,
    };
    Ok(if x == 0.0 {
        CacheSize::Off
    } else if x <= 1.0 {
        CacheSize::Fraction(x)
    } else {
        // Cache sizes far beyond u64 are not meaningful; `as` saturates.
        CacheSize::Count(x.round() as u64)
    })
}

/// The 0.6 cache attributes of a column family (`on` is `keyspace.cf`), noting in `notes` those
/// that ask for what Sibyl does not do.
///
/// Sibyl has no row cache, saves no cache, and keeps key positions in the block cache that every
/// column family shares (`BlockCacheSizeInMB`). So a positive `KeysCached` is honoured in spirit
/// (keys are cached) and loads silently: the sample file and every 0.6 file set one, and a
/// warning each start would teach operators to ignore warnings. What is noted: asking for no
/// key cache (`KeysCached="0"`, which does not turn it off), for a row cache, or for saved
/// caches. `SavedCachesDirectory` alone asks for nothing (0.6 required it, and saved nothing
/// without a save period), so it is named only in the save-period notes.
fn cache_settings(node: &Node, on: &str, notes: &mut CacheNotes) -> Result<CfCacheSettings, ConfigError> {
    let line = node.line;
    let attr = |name: &str| node.attr(name).map(str::trim).filter(|v| !v.is_empty());
    let mut s = CfCacheSettings::default();
    let mut keys_from = None;
    if let Some(v) = attr("KeysCachedFraction") {
        notes.note(CacheNote::KeysCachedFraction, line, "KeysCachedFraction", v, on);
        if attr("KeysCached").is_none() {
            let f = number_in("KeysCachedFraction", line, v, 0.0, 1.0)?;
            s.keys_cached = if f == 0.0 { CacheSize::Off } else { CacheSize::Fraction(f) };
            keys_from = Some(("KeysCachedFraction", v));
        }
    }
    if let Some(v) = attr("KeysCached") {
        s.keys_cached = cache_size("KeysCached", line, v)?;
        keys_from = Some(("KeysCached", v));
    }
    if let (CacheSize::Off, Some((attribute, v))) = (s.keys_cached, keys_from) {
        notes.note(CacheNote::KeysCachedOff, line, attribute, v, on);
    }
    if let Some(v) = attr("RowsCached") {
        s.rows_cached = cache_size("RowsCached", line, v)?;
        if s.rows_cached != CacheSize::Off {
            notes.note(CacheNote::RowsCached, line, "RowsCached", v, on);
        }
    }
    if let Some(v) = attr("KeyCacheSavePeriodInSeconds") {
        s.key_cache_save_period_seconds = number_in("KeyCacheSavePeriodInSeconds", line, v, 0, u32::MAX)?;
        if s.key_cache_save_period_seconds > 0 {
            notes.note(CacheNote::KeyCacheSavePeriod, line, "KeyCacheSavePeriodInSeconds", v, on);
        }
    }
    if let Some(v) = attr("RowCacheSavePeriodInSeconds") {
        s.row_cache_save_period_seconds = number_in("RowCacheSavePeriodInSeconds", line, v, 0, u32::MAX)?;
        if s.row_cache_save_period_seconds > 0 {
            notes.note(CacheNote::RowCacheSavePeriod, line, "RowCacheSavePeriodInSeconds", v, on);
        }
    }
    Ok(s)
}

/// A cache setting Sibyl does not honour. Each is reported once for the whole file, naming the
/// first column family that asked and how many more did, so a file with a hundred column
/// families does not log a hundred lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum CacheNote {
    KeysCachedFraction,
    /// `KeysCached` (or `KeysCachedFraction`) 0.
    KeysCachedOff,
    /// `RowsCached` above 0.
    RowsCached,
    KeyCacheSavePeriod,
    RowCacheSavePeriod,
    /// `Caching="ALL"` or `"ROWS_ONLY"`.
    CachingRows,
    CachingNone,
}

impl CacheNote {
    /// What Sibyl does instead, to follow `attribute="value" (on ks.cf)`.
    fn what_sibyl_does(self) -> &'static str {
        match self {
            CacheNote::KeysCachedFraction => {
                "is deprecated since 0.6 and read as KeysCached; key cache sizes per column family are not used: \
                 Sibyl keeps key positions in the block cache shared by every column family (BlockCacheSizeInMB)"
            }
            CacheNote::KeysCachedOff | CacheNote::CachingNone => {
                "does not turn the key cache off: Sibyl keeps key positions in the block cache shared by every \
                 column family, sized by BlockCacheSizeInMB (0 turns it off for all)"
            }
            CacheNote::RowsCached | CacheNote::CachingRows => {
                "asks for a row cache, which Sibyl does not have: reads merge the memtable with SSTable blocks \
                 kept in the block cache (BlockCacheSizeInMB) and the OS page cache"
            }
            CacheNote::KeyCacheSavePeriod => {
                "is ignored: Sibyl saves no caches (SavedCachesDirectory is not used); after a restart the block \
                 cache fills again as keys are read"
            }
            CacheNote::RowCacheSavePeriod => {
                "is ignored: Sibyl has no row cache to save (SavedCachesDirectory is not used)"
            }
        }
    }
}

/// Where a [`CacheNote`] was first seen, and on how many column families.
struct FirstSeen {
    line: usize,
    attribute: &'static str,
    value: String,
    on: String,
    count: usize,
}

/// The cache notes of one file, reported after every keyspace is read.
#[derive(Default)]
pub(crate) struct CacheNotes(BTreeMap<CacheNote, FirstSeen>);

impl CacheNotes {
    fn note(&mut self, note: CacheNote, line: usize, attribute: &'static str, value: &str, on: &str) {
        self.0.entry(note).and_modify(|seen| seen.count += 1).or_insert_with(|| FirstSeen {
            line,
            attribute,
            value: value.to_string(),
            on: on.to_string(),
            count: 1,
        });
    }

    /// One warning per note, in [`CacheNote`] order.
    fn warnings(self) -> impl Iterator<Item = String> {
        self.0.into_iter().map(|(note, seen)| {
            let more = match seen.count - 1 {
                0 => String::new(),
                1 => " and 1 more column family".to_string(),
                n => format!(" and {n} more column families"),
            };
            format!(
                "line {}: {}=\"{}\" (on {}{more}) {}",
                seen.line,
                seen.attribute,
                seen.value,
                seen.on,
                note.what_sibyl_does()
            )
        })
    }
}

/// `<Column Name=".." ValidationClass=".." IndexType="KEYS" IndexName=".."/>` children.
fn column_metadata(node: &Node, cf: &CfDef, warnings: &mut Vec<String>) -> Result<Vec<ColumnDef>, ConfigError> {
    // In a super CF, column metadata describes subcolumns, so names follow the subcomparator.
    let name_type = cf.subcomparator_type.as_deref().unwrap_or(&cf.comparator_type);
    let mut columns: Vec<ColumnDef> = Vec::new();
    let mut lines: Vec<usize> = Vec::new();
    for col in node.children.iter().filter(|c| c.name == "Column") {
        check_attributes(col, &["Name", "ValidationClass", "IndexType", "IndexName"])?;
        leaf(col)?;
        let attr = |name: &str| col.attr(name).map(str::trim).filter(|v| !v.is_empty());
        let text = col.attr("Name").filter(|v| !v.is_empty()).ok_or_else(|| ConfigError::Missing {
            element: "attribute Name".into(),
            within: format!("Column of column family {}", cf.name),
            line: col.line,
        })?;
        let name = column_name_bytes(name_type, text, warnings, col.line)
            .map_err(|reason| bad("Column Name", col.line, text, reason))?;
        let index_type = match attr("IndexType") {
            Some(v) => Some(one_of(
                "IndexType",
                col.line,
                v,
                &[
                    ("KEYS", IndexType::Keys),
                    ("0", IndexType::Keys),
                    ("CUSTOM", IndexType::Custom),
                    ("1", IndexType::Custom),
                    ("COMPOSITES", IndexType::Composites),
                    ("2", IndexType::Composites),
                ],
            )?),
            None => None,
        };
        let index_name = attr("IndexName").map(str::to_string);
        if index_name.is_some() && index_type.is_none() {
            return Err(bad("IndexName", col.line, index_name.as_deref().unwrap_or(""), "needs an IndexType"));
        }
        if index_type.is_some() && cf.is_super() {
            return Err(ConfigError::InvalidSchema {
                keyspace: cf.keyspace.clone(),
                cf: Some(cf.name.clone()),
                line: col.line,
                reason: "secondary indexes are not supported on super column families".into(),
            });
        }
        if let Some(i) = columns.iter().position(|c| c.name == name) {
            return Err(ConfigError::Duplicate {
                element: format!("Column Name=\"{text}\""),
                line: col.line,
                first_line: lines.get(i).copied().unwrap_or(col.line),
            });
        }
        columns.push(ColumnDef {
            name,
            // Without a ValidationClass a column's values follow the CF default (so the columns
            // of a counter CF are counters).
            validation_class: attr("ValidationClass")
                .map_or_else(|| cf.default_validation_class.clone(), marshal_class),
            index_type,
            index_name,
            index_options: BTreeMap::new(),
        });
        lines.push(col.line);
    }
    Ok(columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cf_ids_are_stable_and_distinct() {
        let a = config_cf_id("Keyspace1", "Standard1");
        assert_eq!(a, config_cf_id("Keyspace1", "Standard1"));
        assert_ne!(a, config_cf_id("Keyspace1", "Standard2"));
        // The separator keeps ("ab","c") apart from ("a","bc").
        assert_ne!(config_cf_id("ab", "c"), config_cf_id("a", "bc"));
        assert_eq!(a.get_version_num(), 3);
    }

    #[test]
    fn cache_sizes_follow_0_6_rules() {
        assert_eq!(cache_size("K", 1, "0").expect("ok"), CacheSize::Off);
        assert_eq!(cache_size("K", 1, "1").expect("ok"), CacheSize::Fraction(1.0));
        assert_eq!(cache_size("K", 1, "0.5").expect("ok"), CacheSize::Fraction(0.5));
        assert_eq!(cache_size("K", 1, "50%").expect("ok"), CacheSize::Fraction(0.5));
        assert_eq!(cache_size("K", 1, "200000").expect("ok"), CacheSize::Count(200_000));
        assert!(cache_size("K", 1, "-3").is_err());
        assert!(cache_size("K", 1, "150%").is_err());
        assert!(cache_size("K", 1, "lots").is_err());
    }

    #[test]
    fn read_repair_chance_accepts_fraction_or_percent() {
        assert_eq!(fraction_or_percent("R", 1, "0.25").expect("ok"), 0.25);
        assert_eq!(fraction_or_percent("R", 1, "10%").expect("ok"), 0.1);
        assert!(fraction_or_percent("R", 1, "1.5").is_err());
    }
}
