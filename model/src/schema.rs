//! Schema objects: keyspace and column family definitions, with every option the Thrift API's
//! `KsDef`/`CfDef` carry. They are plain data (serde) so the engine can persist them in its system
//! keyspace and the front end can convert them from and to Thrift.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::marshal::AbstractType;

/// Standard or Super.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ColumnType {
    Standard,
    Super,
}

impl ColumnType {
    pub fn as_str(&self) -> &'static str {
        match self {
            ColumnType::Standard => "Standard",
            ColumnType::Super => "Super",
        }
    }

    pub fn parse(s: &str) -> Option<ColumnType> {
        match s {
            "Standard" => Some(ColumnType::Standard),
            "Super" => Some(ColumnType::Super),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum IndexType {
    Keys,
    Custom,
    Composites,
}

/// Metadata for one named column (Thrift `ColumnDef`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnDef {
    pub name: Vec<u8>,
    pub validation_class: String,
    pub index_type: Option<IndexType>,
    pub index_name: Option<String>,
    pub index_options: BTreeMap<String, String>,
}

/// A column family definition (Thrift `CfDef`). Class names are kept as given so they can be
/// echoed back; [`CfDef::validate`] checks that they parse.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CfDef {
    pub keyspace: String,
    pub name: String,
    /// Unique for the life of the cluster: a dropped and re-created CF gets a new one, so stale
    /// commit log records and files never reach the new CF.
    pub id: Uuid,
    pub column_type: ColumnType,
    pub comparator_type: String,
    pub subcomparator_type: Option<String>,
    pub comment: Option<String>,
    pub read_repair_chance: f64,
    pub dclocal_read_repair_chance: f64,
    pub column_metadata: Vec<ColumnDef>,
    pub gc_grace_seconds: i32,
    pub default_validation_class: String,
    pub key_validation_class: String,
    pub key_alias: Option<Vec<u8>>,
    pub min_compaction_threshold: i32,
    pub max_compaction_threshold: i32,
    pub compaction_strategy: String,
    pub compaction_strategy_options: BTreeMap<String, String>,
    pub compression_options: BTreeMap<String, String>,
    pub bloom_filter_fp_chance: Option<f64>,
    pub caching: String,
    pub cells_per_row_to_cache: Option<String>,
    pub memtable_flush_period_in_ms: Option<i32>,
    pub default_time_to_live: i32,
    pub speculative_retry: Option<String>,
    pub min_index_interval: Option<i32>,
    pub max_index_interval: Option<i32>,
    pub populate_io_cache_on_flush: Option<bool>,
    /// CQL's `crc_check_chance` (3.11's TableParams; 1.0 when unset). Kept and shown only: the
    /// engine verifies every block's checksum on every read whatever it says.
    #[serde(default)]
    pub crc_check_chance: Option<f64>,
    /// Thrift's `CfDef.id` (an i32 some clients show); derived from `id`.
    pub thrift_id: i32,
    /// The CQL names of the row key's and cell name's parts, for a table made by CQL's CREATE
    /// TABLE (3.11's legacy `key_aliases`, `column_aliases`, `value_alias` and flags). `None`
    /// for a column family made over Thrift, which CQL shows with its default names.
    #[serde(default)]
    pub cql: Option<CqlLayout>,
}

/// How CQL reads a table's row keys and cell names (see `cql::schema`, which builds and reads
/// it). A table made by CQL keeps its column names here: the partition key's parts, the
/// clustering columns and, for a compact table, the value column.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CqlLayout {
    /// The partition key columns, in order (the row key, a `CompositeType` when several).
    pub key_aliases: Vec<String>,
    /// The clustering columns, in order (the first components of each cell name).
    pub column_aliases: Vec<String>,
    /// A compact table's one value column; `None` for a non-compact table.
    pub value_alias: Option<String>,
    /// `COMPACT STORAGE`: cell names hold only clustering values, no column name.
    pub dense: bool,
    /// Static columns (one value per partition, under an empty clustering prefix).
    #[serde(default)]
    pub static_columns: Vec<String>,
    /// Columns dropped by ALTER TABLE, with when (microseconds): their cells written before
    /// then are ignored, even if a column of that name is added again (3.11's dropped_columns).
    #[serde(default)]
    pub dropped: BTreeMap<String, i64>,
    /// For a materialized view: what it is a view of.
    #[serde(default)]
    pub view: Option<CqlView>,
}

/// A materialized view's base (its other rules are the view table's own key and columns).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CqlView {
    /// The base table, in the view's keyspace.
    pub base: String,
    /// The view's WHERE clause as 3.11 keeps it (`system_schema.views.where_clause`): each
    /// relation with its column as CQL names it, joined by ` AND `. Empty for a view persisted
    /// before it was kept, which [`CqlView::where_clause_or`] rebuilds from the key.
    #[serde(default)]
    pub where_clause: String,
    /// Made by `SELECT *`: every base column, also those added to the base later.
    #[serde(default)]
    pub include_all_columns: bool,
}

impl CqlView {
    /// The WHERE clause, or for a view persisted without one, `IS NOT NULL` on each of
    /// `key_columns` (names already quoted as CQL needs), the only clause such a view could have.
    pub fn where_clause_or(&self, key_columns: &[String]) -> String {
        if self.where_clause.is_empty() {
            key_columns.iter().map(|c| format!("{c} IS NOT NULL")).collect::<Vec<_>>().join(" AND ")
        } else {
            self.where_clause.clone()
        }
    }
}

pub const DEFAULT_GC_GRACE_SECONDS: i32 = 864_000;

/// A column family's index intervals when its definition leaves them unset (3.11's
/// TableParams defaults; Cassandra reports these in describe_keyspace).
pub const DEFAULT_MIN_INDEX_INTERVAL: i32 = 128;
pub const DEFAULT_MAX_INDEX_INTERVAL: i32 = 2048;

impl CfDef {
    /// A definition with Cassandra 3.11's defaults.
    pub fn new(keyspace: impl Into<String>, name: impl Into<String>) -> CfDef {
        let id = Uuid::new_v4();
        CfDef {
            keyspace: keyspace.into(),
            name: name.into(),
            id,
            column_type: ColumnType::Standard,
            comparator_type: "org.apache.cassandra.db.marshal.BytesType".into(),
            subcomparator_type: None,
            comment: None,
            read_repair_chance: 0.0,
            dclocal_read_repair_chance: 0.1,
            column_metadata: Vec::new(),
            gc_grace_seconds: DEFAULT_GC_GRACE_SECONDS,
            default_validation_class: "org.apache.cassandra.db.marshal.BytesType".into(),
            key_validation_class: "org.apache.cassandra.db.marshal.BytesType".into(),
            key_alias: None,
            min_compaction_threshold: 4,
            max_compaction_threshold: 32,
            compaction_strategy: "org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy".into(),
            compaction_strategy_options: BTreeMap::new(),
            compression_options: BTreeMap::new(),
            bloom_filter_fp_chance: None,
            caching: "KEYS_ONLY".into(),
            cells_per_row_to_cache: None,
            memtable_flush_period_in_ms: None,
            default_time_to_live: 0,
            speculative_retry: None,
            min_index_interval: None,
            max_index_interval: None,
            populate_io_cache_on_flush: None,
            crc_check_chance: None,
            thrift_id: thrift_id_of(&id),
            cql: None,
        }
    }

    pub fn is_super(&self) -> bool {
        self.column_type == ColumnType::Super
    }

    /// Whether Thrift sees this column family (3.11's `isThriftCompatible`): every one made over
    /// Thrift, and CQL's COMPACT STORAGE tables; CQL's other tables are CQL's alone.
    pub fn is_thrift_compatible(&self) -> bool {
        match &self.cql {
            None => true,
            Some(layout) => layout.dense,
        }
    }

    /// The comparator for (super) column names.
    pub fn comparator(&self) -> Result<AbstractType, crate::marshal::MarshalError> {
        AbstractType::parse(&self.comparator_type)
    }

    pub fn subcomparator(&self) -> Result<Option<AbstractType>, crate::marshal::MarshalError> {
        self.subcomparator_type.as_deref().map(AbstractType::parse).transpose()
    }

    pub fn is_counter(&self) -> bool {
        AbstractType::parse(&self.default_validation_class).map(|t| t.is_counter()).unwrap_or(false)
    }

    /// The validator for values of column `name` (for super CFs: subcolumn name).
    pub fn validator_class_for(&self, name: &[u8]) -> &str {
        self.column_metadata
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.validation_class.as_str())
            .unwrap_or(&self.default_validation_class)
    }

    /// Checks every class name and option; the message names the offending option.
    pub fn validate(&self) -> Result<(), String> {
        if !valid_name(&self.name) {
            return Err(format!(
                "Invalid column family name \"{}\": must be 1-48 alphanumeric or underscore characters",
                self.name
            ));
        }
        AbstractType::parse(&self.comparator_type).map_err(|e| format!("comparator_type: {e}"))?;
        match (&self.column_type, &self.subcomparator_type) {
            (ColumnType::Standard, Some(_)) => {
                return Err(format!(
                    "subcomparator_type is only valid for Super column families (column family {})",
                    self.name
                ))
            }
            (ColumnType::Super, Some(s)) => {
                AbstractType::parse(s).map_err(|e| format!("subcomparator_type: {e}"))?;
            }
            _ => {}
        }
        AbstractType::parse(&self.default_validation_class).map_err(|e| format!("default_validation_class: {e}"))?;
        AbstractType::parse(&self.key_validation_class).map_err(|e| format!("key_validation_class: {e}"))?;
        // Counters and other columns never share a column family (Cassandra 3.11's rule, and
        // its words): a counter's cells merge where other cells replace each other.
        let counter = self.is_counter();
        let names = if self.is_super() { self.subcomparator().ok().flatten() } else { self.comparator().ok() };
        for c in &self.column_metadata {
            let ty = AbstractType::parse(&c.validation_class)
                .map_err(|e| format!("column_metadata validation_class: {e}"))?;
            if ty.is_counter() != counter {
                let name = names.as_ref().map(|t| t.to_display_string(&c.name)).unwrap_or_default();
                return Err(if counter {
                    format!("Cannot add a non counter column ({name}) in a counter column family")
                } else {
                    format!("Cannot add a counter column ({name}) in a non counter column family")
                });
            }
        }
        crate::schema_rules::check_cf_params(self)?;
        self.validate_indexes()?;
        if self.min_compaction_threshold < 2 && self.min_compaction_threshold != 0 {
            return Err(format!(
                "min_compaction_threshold cannot be less than 2 (got {})",
                self.min_compaction_threshold
            ));
        }
        if self.max_compaction_threshold < self.min_compaction_threshold && self.max_compaction_threshold != 0 {
            return Err("min_compaction_threshold cannot be greater than max_compaction_threshold".into());
        }
        Ok(())
    }
}

impl CfDef {
    /// Checks the secondary indexes the column metadata declares: KEYS only, on a standard,
    /// non-counter column family (Cassandra 3.11's rules and words; the names are checked by
    /// [`crate::schema_rules`]).
    fn validate_indexes(&self) -> Result<(), String> {
        for c in &self.column_metadata {
            let Some(kind) = c.index_type else { continue };
            if kind != IndexType::Keys {
                return Err(format!(
                    "index_type {kind:?} is not supported (column family {}): only KEYS indexes are",
                    self.name
                ));
            }
            if self.is_super() {
                return Err("Secondary indexes are not supported on super column families".into());
            }
            let counter = AbstractType::parse(&c.validation_class).map(|t| t.is_counter()).unwrap_or(false);
            if counter || self.is_counter() {
                return Err(format!(
                    "Secondary indexes are not supported on counter columns (column family {})",
                    self.name
                ));
            }
        }
        Ok(())
    }

    /// The index names this definition declares.
    pub fn index_names(&self) -> impl Iterator<Item = &str> {
        self.column_metadata.iter().filter(|c| c.index_type.is_some()).filter_map(|c| c.index_name.as_deref())
    }
}

/// Index names are word characters, at least one (Cassandra's `IndexMetadata.isNameValid`).
pub fn valid_index_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Cassandra's default index name: `<cf>_<column>_idx` without the non-word characters, the
/// column as its comparator shows it.
pub fn default_index_name(cf: &str, column: &str) -> String {
    format!("{cf}_{column}_idx").chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
}

/// Names every unnamed index of the keyspace as Cassandra does (`Indexes.getAvailableIndexName`):
/// the default name, or with `_1`, `_2`, ... when another index of the keyspace has it. A column
/// without an index loses a stray index name, as Cassandra keeps none.
pub fn assign_index_names(ks: &mut KeyspaceDef) {
    let mut taken: std::collections::HashSet<String> =
        ks.cf_defs.iter().flat_map(|cf| cf.index_names().map(str::to_string)).collect();
    for cf in &mut ks.cf_defs {
        let comparator = cf.comparator().unwrap_or(AbstractType::Bytes);
        let cf_name = cf.name.clone();
        for c in &mut cf.column_metadata {
            if c.index_type.is_none() {
                c.index_name = None;
                continue;
            }
            if c.index_name.as_deref().is_some_and(|n| !n.is_empty()) {
                continue;
            }
            let base = default_index_name(&cf_name, &comparator.to_display_string(&c.name));
            let mut name = base.clone();
            let mut i = 0;
            while taken.contains(&name) {
                i += 1;
                name = format!("{base}_{i}");
            }
            taken.insert(name.clone());
            c.index_name = Some(name);
        }
    }
}

/// Cassandra 2.x+ exposes an i32 id in Thrift; we fold the UUID into one.
pub fn thrift_id_of(id: &Uuid) -> i32 {
    let b = id.as_bytes();
    i32::from_be_bytes([b[0], b[1], b[2], b[3]]) ^ i32::from_be_bytes([b[12], b[13], b[14], b[15]])
}

/// A keyspace definition (Thrift `KsDef`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KeyspaceDef {
    pub name: String,
    pub strategy_class: String,
    pub strategy_options: BTreeMap<String, String>,
    pub durable_writes: bool,
    pub cf_defs: Vec<CfDef>,
    /// The keyspace's user-defined types (CQL's CREATE TYPE), in the order made.
    #[serde(default)]
    pub user_types: Vec<UserTypeDef>,
}

/// A user-defined type (3.11's `system_schema.types` row): its fields' names and their types
/// as marshal class names (a user type used in a field is written out whole, as in a column's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserTypeDef {
    pub name: String,
    pub field_names: Vec<String>,
    pub field_types: Vec<String>,
}

impl UserTypeDef {
    /// The marshal type of this definition in `keyspace`, frozen or not.
    pub fn to_type(&self, keyspace: &str, frozen: bool) -> Result<AbstractType, crate::marshal::MarshalError> {
        let mut fields = Vec::with_capacity(self.field_names.len());
        for (name, class) in self.field_names.iter().zip(&self.field_types) {
            fields.push((name.clone().into_bytes(), AbstractType::parse(class)?));
        }
        let user = crate::marshal::UserType {
            keyspace: keyspace.to_string(),
            name: self.name.clone().into_bytes(),
            fields,
            frozen: false,
        };
        let t = AbstractType::User(Box::new(user));
        Ok(if frozen { t.frozen() } else { t })
    }
}

impl KeyspaceDef {
    pub fn new(name: impl Into<String>) -> KeyspaceDef {
        let mut strategy_options = BTreeMap::new();
        strategy_options.insert("replication_factor".to_string(), "1".to_string());
        KeyspaceDef {
            name: name.into(),
            strategy_class: "org.apache.cassandra.locator.SimpleStrategy".into(),
            strategy_options,
            durable_writes: true,
            cf_defs: Vec::new(),
            user_types: Vec::new(),
        }
    }

    pub fn cf(&self, name: &str) -> Option<&CfDef> {
        self.cf_defs.iter().find(|c| c.name == name)
    }

    pub fn user_type(&self, name: &str) -> Option<&UserTypeDef> {
        self.user_types.iter().find(|t| t.name == name)
    }

    pub fn validate(&self) -> Result<(), String> {
        if !valid_name(&self.name) {
            return Err(format!(
                "Invalid keyspace name \"{}\": must be 1-48 alphanumeric or underscore characters",
                self.name
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for cf in &self.cf_defs {
            if cf.keyspace != self.name {
                return Err(format!(
                    "column family {} names keyspace {} but belongs to {}",
                    cf.name, cf.keyspace, self.name
                ));
            }
            if !seen.insert(cf.name.as_str()) {
                return Err(format!("duplicate column family {} in keyspace {}", cf.name, self.name));
            }
            cf.validate()?;
        }
        crate::schema_rules::check_keyspace_index_names(self)
    }
}

/// The keyspaces Cassandra 3.11 keeps for itself: no client makes, alters or drops them.
pub fn is_reserved_keyspace(name: &str) -> bool {
    ["system", "system_auth", "system_traces", "system_distributed", "system_schema"]
        .iter()
        .any(|r| r.eq_ignore_ascii_case(name))
}

/// Replication strategies Cassandra accepts for a keyspace.
const STRATEGIES: [&str; 3] = ["SimpleStrategy", "NetworkTopologyStrategy", "OldNetworkTopologyStrategy"];
const LOCATOR: &str = "org.apache.cassandra.locator";

/// Checks a keyspace's replication as Cassandra 3.11 does when a keyspace is made or altered,
/// over Thrift or CQL, and gives the strategy's full class name with its options. The messages
/// are 3.11's.
pub fn check_replication(
    keyspace: &str,
    class: &str,
    options: BTreeMap<String, String>,
) -> Result<(String, BTreeMap<String, String>), String> {
    let full = if class.contains('.') { class.to_string() } else { format!("{LOCATOR}.{class}") };
    let short = full.rsplit('.').next().unwrap_or_default();
    if !full.starts_with(LOCATOR) || !STRATEGIES.contains(&short) {
        return Err(format!("Unable to find replication strategy class '{class}'"));
    }
    match short {
        "SimpleStrategy" | "OldNetworkTopologyStrategy" => {
            let rf = options
                .get("replication_factor")
                .ok_or_else(|| format!("{short} requires a replication_factor strategy option."))?;
            match rf.parse::<i32>() {
                Ok(n) if n >= 0 => {}
                _ => return Err(format!("Replication factor must be non-negative; found {rf}")),
            }
            if short == "SimpleStrategy" {
                if let Some(k) = options.keys().find(|k| *k != "replication_factor") {
                    return Err(format!(
                        "Unrecognized strategy option {{{k}}} passed to SimpleStrategy for keyspace {keyspace}"
                    ));
                }
            }
        }
        _ => {
            for (dc, rf) in &options {
                if rf.parse::<i32>().map(|n| n < 0).unwrap_or(true) {
                    return Err(format!("Replication factor for {dc} must be a non-negative integer; found {rf}"));
                }
            }
        }
    }
    Ok((full, options))
}

/// Keyspace and CF names: word characters only, 1..=48 long (Cassandra's rule).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 48 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The whole schema: every keyspace, by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Schema {
    pub keyspaces: BTreeMap<String, KeyspaceDef>,
    /// Changes with every schema change (Cassandra's schema version).
    pub version: Uuid,
}

impl Schema {
    /// Whether writes to `keyspace` go through the commit log: its `durable_writes`, true for a
    /// keyspace this schema does not hold.
    pub fn durable_writes(&self, keyspace: &str) -> bool {
        self.keyspaces.get(keyspace).is_none_or(|k| k.durable_writes)
    }
}

/// A column family's definition with what every request needs parsed once per schema change:
/// the cell comparator and the value validators (Cassandra's CFMetaData). Front ends validate
/// and convert requests against it; the engine hands out a shared, immutable copy
/// (the engine's `Storage::cf_metadata`) that a schema change replaces.
#[derive(Clone, Debug)]
pub struct CfMetadata {
    pub def: CfDef,
    pub cmp: crate::comparator::CellComparator,
    pub validators: Validators,
    /// The compaction strategy and options, read once per definition (leniently: see
    /// `CompactionOptions::of`, which warns of what it cannot read).
    pub compaction: crate::compaction_options::CompactionOptions,
    /// `def.keyspace` and `def.name` shared, for the commands that name this column family on
    /// every request (a clone is a count, not a copy).
    shared_names: (Arc<str>, Arc<str>),
    /// The CQL view of the definition, built on first use: every CQL statement asks for it,
    /// and building it parses every type name of the definition.
    cql_table: std::sync::OnceLock<Result<Arc<crate::cql_table::Table>, crate::cql_table::NotATable>>,
}

impl CfMetadata {
    pub fn new(def: CfDef) -> Result<CfMetadata, crate::marshal::MarshalError> {
        let cmp = crate::comparator::CellComparator::for_cf(&def)?;
        let validators = Validators::of(&def)?;
        let shared_names = (Arc::from(def.keyspace.as_str()), Arc::from(def.name.as_str()));
        let compaction = crate::compaction_options::CompactionOptions::of(&def);
        Ok(CfMetadata { def, cmp, validators, compaction, shared_names, cql_table: std::sync::OnceLock::new() })
    }

    /// The CQL view of this column family ([`crate::cql_table::Table::from_def`]), built once.
    pub fn cql_table(&self) -> Result<Arc<crate::cql_table::Table>, crate::cql_table::NotATable> {
        self.cql_table.get_or_init(|| crate::cql_table::Table::from_def(&self.def).map(Arc::new)).clone()
    }

    /// The keyspace's and the column family's names, shared.
    pub fn shared_names(&self) -> (Arc<str>, Arc<str>) {
        self.shared_names.clone()
    }

    pub fn keyspace(&self) -> &str {
        &self.def.keyspace
    }

    pub fn name(&self) -> &str {
        &self.def.name
    }

    pub fn is_super(&self) -> bool {
        self.cmp.is_super()
    }
}

/// A column family's validators and write defaults.
#[derive(Clone, Debug)]
pub struct Validators {
    pub key: AbstractType,
    pub default_value: AbstractType,
    /// Per-column validators (column_metadata), by column (or subcolumn) name.
    pub columns: std::collections::HashMap<Vec<u8>, AbstractType>,
    pub default_time_to_live: i32,
}

impl Validators {
    fn of(def: &CfDef) -> Result<Validators, crate::marshal::MarshalError> {
        let mut columns = std::collections::HashMap::new();
        for c in &def.column_metadata {
            columns.insert(c.name.clone(), AbstractType::parse(&c.validation_class)?);
        }
        Ok(Validators {
            key: AbstractType::parse(&def.key_validation_class)?,
            default_value: AbstractType::parse(&def.default_validation_class)?,
            columns,
            default_time_to_live: def.default_time_to_live,
        })
    }

    /// The validator for values of column `name`.
    pub fn value(&self, name: &[u8]) -> &AbstractType {
        self.columns.get(name).unwrap_or(&self.default_value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COUNTER: &str = "org.apache.cassandra.db.marshal.CounterColumnType";

    fn column(name: &str, class: &str) -> ColumnDef {
        ColumnDef {
            name: name.as_bytes().to_vec(),
            validation_class: class.into(),
            index_type: None,
            index_name: None,
            index_options: BTreeMap::new(),
        }
    }

    #[test]
    fn counters_and_other_columns_never_share_a_column_family() {
        let mut cf = CfDef::new("ks", "song_data");
        cf.comparator_type = "UTF8Type".into();
        cf.default_validation_class = COUNTER.into();
        cf.column_metadata = vec![column("likes", COUNTER)];
        assert_eq!(cf.validate(), Ok(()));
        assert!(cf.is_counter());
        cf.column_metadata.push(column("name", "UTF8Type"));
        assert_eq!(cf.validate(), Err("Cannot add a non counter column (name) in a counter column family".into()));

        let mut plain = CfDef::new("ks", "users");
        plain.comparator_type = "UTF8Type".into();
        plain.column_metadata = vec![column("visits", "CounterColumnType")];
        assert_eq!(plain.validate(), Err("Cannot add a counter column (visits) in a non counter column family".into()));
    }
}
