//! Keyspaces and tables: CREATE, ALTER and DROP, through the coordinator's schema changes
//! (persisted, spread to every live node and waited for, as the Thrift `system_*` calls).

use std::collections::{BTreeMap, HashSet};

use model::marshal::AbstractType;
use model::schema::{is_reserved_keyspace, valid_name, CfDef, ColumnDef, CqlLayout, KeyspaceDef};

use super::{invalid, Context, CqlError, Outcome, SchemaChange};
use crate::ast::{
    AlterKeyspace, AlterTable, AlterTableAction, CqlType, CreateKeyspace, CreateTable, Property, PropertyValue,
    QualifiedName, TableElement, TableOption,
};
use crate::schema::{storage_type, ColumnKind, Layout, Table, TypeScope};

fn change(change: &'static str, target: &'static str, keyspace: &str, name: Option<&str>) -> Outcome {
    Outcome::SchemaChange(SchemaChange {
        change,
        target,
        keyspace: keyspace.to_string(),
        name: name.map(str::to_string),
    })
}

fn not_modifiable(keyspace: &str) -> Result<Outcome, CqlError> {
    invalid(format!("{keyspace} keyspace is not user-modifiable"))
}

pub(super) async fn create_keyspace(ctx: &Context<'_>, s: &CreateKeyspace) -> Result<Outcome, CqlError> {
    let name = s.name.name();
    if !valid_name(name) {
        return invalid(format!(
            "Keyspace name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got \"{name}\")"
        ));
    }
    if is_reserved_keyspace(name) {
        return not_modifiable(name);
    }
    let def = keyspace_def(name, &s.properties, None)?;
    if let Some(existing) = ctx.coordinator.keyspaces().into_iter().find(|k| k.name.eq_ignore_ascii_case(name)) {
        if s.if_not_exists && existing.name == name {
            return Ok(Outcome::Void);
        }
        return Err(CqlError::AlreadyExists {
            keyspace: existing.name,
            table: String::new(),
            message: format!("Keyspace {name} already exists"),
        });
    }
    ctx.coordinator.add_keyspace(def).await?;
    Ok(change("CREATED", "KEYSPACE", name, None))
}

pub(super) async fn alter_keyspace(ctx: &Context<'_>, s: &AlterKeyspace) -> Result<Outcome, CqlError> {
    let name = s.name.name();
    let Some(existing) = ctx.coordinator.keyspace(name) else {
        return invalid(format!("Unknown keyspace {name}"));
    };
    if is_reserved_keyspace(name) {
        return not_modifiable(name);
    }
    let mut def = keyspace_def(name, &s.properties, Some(&existing))?;
    def.cf_defs.clear();
    ctx.coordinator.update_keyspace(def).await?;
    Ok(change("UPDATED", "KEYSPACE", name, None))
}

pub(super) async fn drop_keyspace(ctx: &Context<'_>, name: &str, if_exists: bool) -> Result<Outcome, CqlError> {
    if is_reserved_keyspace(name) {
        return not_modifiable(name);
    }
    if !ctx.coordinator.has_keyspace(name) {
        if if_exists {
            return Ok(Outcome::Void);
        }
        return invalid(format!("Cannot drop non existing keyspace '{name}'."));
    }
    ctx.coordinator.drop_keyspace(name).await?;
    Ok(change("DROPPED", "KEYSPACE", name, None))
}

/// A keyspace definition from `replication = {...}` and `durable_writes`; `existing` gives
/// what an ALTER leaves out.
fn keyspace_def(name: &str, properties: &[Property], existing: Option<&KeyspaceDef>) -> Result<KeyspaceDef, CqlError> {
    let mut replication: Option<BTreeMap<String, String>> = None;
    let mut durable = existing.map(|k| k.durable_writes).unwrap_or(true);
    let mut seen = HashSet::new();
    for p in properties {
        let key = p.name.name();
        if !seen.insert(key.to_string()) {
            return invalid(format!("Multiple definition for property {key}"));
        }
        match (key, &p.value) {
            ("replication", PropertyValue::Map(entries)) => {
                replication = Some(entries.iter().map(|(k, v)| (k.raw_text(), v.raw_text())).collect());
            }
            ("replication", _) => return invalid("Invalid value for property 'replication': a map is expected"),
            ("durable_writes", v) => durable = boolean("durable_writes", v)?,
            _ => return invalid(format!("Unknown property '{key}'")),
        }
    }
    let (class, options) = match (replication, existing) {
        (Some(mut map), _) => {
            let Some(class) = map.remove("class") else {
                return invalid("Missing mandatory replication strategy class");
            };
            (class, map)
        }
        (None, Some(e)) => (e.strategy_class.clone(), e.strategy_options.clone()),
        (None, None) => return invalid("Missing mandatory replication strategy class"),
    };
    let (strategy_class, strategy_options) =
        model::schema::check_replication(name, &class, options).map_err(CqlError::Invalid)?;
    let mut def = existing.cloned().unwrap_or_else(|| KeyspaceDef::new(name));
    def.strategy_class = strategy_class;
    def.strategy_options = strategy_options;
    def.durable_writes = durable;
    Ok(def)
}

fn boolean(property: &str, v: &PropertyValue) -> Result<bool, CqlError> {
    let text = match v {
        PropertyValue::Constant(c) => c.raw_text(),
        PropertyValue::Keyword(k) => k.clone(),
        PropertyValue::Map(_) => String::new(),
    };
    match text.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => invalid(format!("Invalid boolean value {text} for '{property}'. Expected true or false.")),
    }
}

pub(super) async fn create_table(ctx: &Context<'_>, s: &CreateTable) -> Result<Outcome, CqlError> {
    let keyspace = ctx.keyspace_of(&s.name)?;
    let name = s.name.name.name();
    if is_reserved_keyspace(&keyspace) {
        return not_modifiable(&keyspace);
    }
    if !valid_name(name) {
        return invalid(if name.len() > 48 {
            format!("Table names shouldn't be more than 48 characters long (got \"{name}\")")
        } else {
            format!("\"{name}\" is not a valid table name (must be alphanumeric character or underscores only: [a-zA-Z_0-9]+)")
        });
    }
    let Some(ks) = ctx.coordinator.keyspace(&keyspace) else {
        return invalid(format!("Cannot add table '{name}' to non existing keyspace '{keyspace}'."));
    };
    let def = table_def(&ks, name, s)?;
    if ks.cf(name).is_some() {
        if s.if_not_exists {
            return Ok(Outcome::Void);
        }
        return Err(CqlError::AlreadyExists {
            keyspace: keyspace.clone(),
            table: name.to_string(),
            message: format!("Cannot add already existing table \"{name}\" to keyspace \"{keyspace}\""),
        });
    }
    ctx.coordinator.add_column_family(def).await?;
    Ok(change("CREATED", "TABLE", &keyspace, Some(name)))
}

pub(super) async fn drop_table(
    ctx: &Context<'_>,
    name: &QualifiedName,
    if_exists: bool,
    view: bool,
) -> Result<Outcome, CqlError> {
    let keyspace = ctx.keyspace_of(name)?;
    let table = name.name.name();
    if is_reserved_keyspace(&keyspace) {
        return not_modifiable(&keyspace);
    }
    let ks = ctx.coordinator.keyspace(&keyspace);
    let Some(def) = ks.as_ref().and_then(|k| k.cf(table)) else {
        if if_exists {
            return Ok(Outcome::Void);
        }
        return invalid(format!("Cannot drop non existing table '{table}' in keyspace '{keyspace}'."));
    };
    if crate::schema::is_view(def) != view {
        return invalid(if view {
            format!("Materialized view '{table}' doesn't exist")
        } else {
            "Cannot use DROP TABLE on Materialized View".to_string()
        });
    }
    let views: Vec<String> = ks
        .iter()
        .flat_map(|k| &k.cf_defs)
        .filter(|d| d.cql.as_ref().and_then(|l| l.view.as_ref()).is_some_and(|v| v.base == table))
        .map(|d| format!("{keyspace}.{}", d.name))
        .collect();
    if !views.is_empty() {
        return invalid(format!(
            "Cannot drop table when materialized views still depend on it ({{{}}})",
            views.join(", ")
        ));
    }
    ctx.coordinator.drop_column_family(&keyspace, table).await?;
    Ok(change("DROPPED", "TABLE", &keyspace, Some(table)))
}

/// The column family of a CREATE TABLE, with 3.11's checks and messages
/// (`CreateTableStatement.RawStatement.prepare`).
pub(super) fn table_def(ks: &KeyspaceDef, name: &str, s: &CreateTable) -> Result<CfDef, CqlError> {
    let keyspace = ks.name.as_str();
    let scope = TypeScope { keyspace, types: &ks.user_types };
    let mut columns: Vec<(String, CqlType, bool)> = Vec::new();
    let mut keys = Vec::new();
    for element in &s.elements {
        match element {
            TableElement::Column(c) => {
                let n = c.name.name().to_string();
                if columns.iter().any(|(m, _, _)| *m == n) {
                    return invalid(format!("Multiple definition of identifier {n}"));
                }
                if c.primary_key {
                    keys.push((vec![n.clone()], Vec::new()));
                }
                columns.push((n, c.ty.clone(), c.is_static));
            }
            TableElement::PrimaryKey(pk) => keys.push((
                pk.partition_key.iter().map(|i| i.name().to_string()).collect(),
                pk.clustering.iter().map(|i| i.name().to_string()).collect(),
            )),
        }
    }
    let (partition_key, clustering) = match keys.len() {
        0 => return invalid("No PRIMARY KEY specifed (exactly one required)"),
        1 => keys.remove(0),
        _ => return invalid("Multiple PRIMARY KEYs specifed (exactly one required)"),
    };
    let type_of = |n: &str| -> Result<(AbstractType, bool), CqlError> {
        match columns.iter().find(|(m, _, _)| m == n) {
            Some((_, ty, is_static)) => Ok((storage_type(ty, &scope)?, *is_static)),
            None => invalid(format!("Unknown definition {n} referenced in PRIMARY KEY")),
        }
    };
    let mut key_types = Vec::new();
    let mut clustering_types = Vec::new();
    let mut seen = HashSet::new();
    for (i, n) in partition_key.iter().chain(&clustering).enumerate() {
        if !seen.insert(n.clone()) {
            return invalid(format!("Multiple definition of identifier {n}"));
        }
        let (ty, is_static) = type_of(n)?;
        if is_static {
            return invalid(format!("Static column {n} cannot be part of the PRIMARY KEY"));
        }
        if ty.is_counter() {
            return invalid(format!("counter type is not supported for PRIMARY KEY part {n}"));
        }
        if ty.is_multi_cell() {
            return invalid(format!("Invalid non-frozen collection type for PRIMARY KEY component {n}"));
        }
        if matches!(&ty, AbstractType::User(u) if !u.frozen) {
            return invalid(format!("Invalid non-frozen user-defined type for PRIMARY KEY component {n}"));
        }
        if ty.references_duration() {
            return invalid(format!("duration type is not supported for PRIMARY KEY part {n}"));
        }
        if i < partition_key.len() {
            key_types.push(ty);
        } else {
            clustering_types.push(ty);
        }
    }
    let mut regular: Vec<(String, AbstractType)> = Vec::new();
    let mut statics: Vec<String> = Vec::new();
    for (n, ty, is_static) in &columns {
        if seen.contains(n) {
            continue;
        }
        if *is_static {
            if clustering.is_empty() {
                return invalid(format!(
                    "Static columns are only useful (and thus allowed) if the table has at least one clustering column (column {n})"
                ));
            }
            statics.push(n.clone());
        }
        let ty = storage_type(ty, &scope)?;
        non_frozen_user_type(n, &ty)?;
        regular.push((n.clone(), ty));
    }
    let counters = regular.iter().filter(|(_, t)| t.is_counter()).count();
    if counters > 0 && counters < regular.len() {
        return invalid("Cannot mix counter and non counter columns in the same table");
    }
    let mut compact = false;
    let mut order: Option<Vec<(String, bool)>> = None;
    let mut def = CfDef::new(keyspace, name);
    for option in &s.options {
        match option {
            TableOption::CompactStorage => compact = true,
            TableOption::ClusteringOrder(o) => {
                if order.is_some() {
                    return invalid("Multiple definition for property clustering_order");
                }
                order = Some(o.iter().map(|(i, desc)| (i.name().to_string(), *desc)).collect());
            }
            TableOption::Property(p) => table_property(&mut def, p)?,
        }
    }
    if let Some(order) = &order {
        let mut last = None;
        for (n, _) in order {
            let Some(pos) = clustering.iter().position(|c| c == n) else {
                return invalid(format!(
                    "Only clustering key columns can be defined in CLUSTERING ORDER directive: {n} is not"
                ));
            };
            if let Some(prev) = last {
                if pos <= prev {
                    return invalid(format!(
                        "The order of columns in the CLUSTERING ORDER directive must be the one of the clustering key ({} must appear before {n})",
                        clustering[pos]
                    ));
                }
            }
            last = Some(pos);
        }
        if let Some(missing) = clustering.iter().find(|c| !order.iter().any(|(n, _)| n == *c)) {
            return invalid(format!("Missing CLUSTERING ORDER for column {missing}"));
        }
        for (n, desc) in order {
            if *desc {
                if let Some(pos) = clustering.iter().position(|c| c == n) {
                    clustering_types[pos] = AbstractType::Reversed(Box::new(clustering_types[pos].clone()));
                }
            }
        }
    }

    def.key_validation_class = match key_types.as_slice() {
        [one] => one.class_name(),
        many => AbstractType::Composite(many.to_vec()).class_name(),
    };
    let mut layout = CqlLayout {
        key_aliases: partition_key.clone(),
        column_aliases: clustering.clone(),
        static_columns: statics.clone(),
        ..Default::default()
    };
    if compact && !statics.is_empty() {
        return invalid("Static columns are not allowed in COMPACT STORAGE tables");
    }
    if compact && regular.iter().any(|(_, t)| t.is_multi_cell()) {
        return invalid("Non-frozen collections are not supported with COMPACT STORAGE");
    }
    if compact {
        if clustering.is_empty() {
            if regular.is_empty() {
                return invalid("No definition found that is not part of the PRIMARY KEY");
            }
            def.comparator_type = AbstractType::Utf8.class_name();
            def.column_metadata = column_metadata(&regular);
        } else {
            let [(value, value_type)] = regular.as_slice() else {
                if regular.is_empty() {
                    return invalid(
                        "COMPACT STORAGE tables without a column outside the PRIMARY KEY are not supported yet",
                    );
                }
                let names: Vec<&str> = regular.iter().map(|(n, _)| n.as_str()).collect();
                return invalid(format!(
                    "COMPACT STORAGE with composite PRIMARY KEY allows no more than one column not part of the PRIMARY KEY (got: {})",
                    names.join(", ")
                ));
            };
            def.comparator_type = match clustering_types.as_slice() {
                [one] => one.class_name(),
                many => AbstractType::Composite(many.to_vec()).class_name(),
            };
            def.default_validation_class = value_type.class_name();
            layout.value_alias = Some(value.clone());
        }
        layout.dense = true;
    } else {
        let mut parts = clustering_types;
        parts.push(AbstractType::Utf8);
        // 2.x's sparse layout with collections: one more component, the element's key,
        // ordered by its column's collection type.
        let collections: Vec<(Vec<u8>, AbstractType)> = regular
            .iter()
            .filter(|(_, t)| t.is_multi_cell())
            .map(|(n, t)| (n.as_bytes().to_vec(), t.clone()))
            .collect();
        if !collections.is_empty() {
            parts.push(AbstractType::ColumnToCollection(collections));
        }
        def.comparator_type = AbstractType::Composite(parts).class_name();
        def.column_metadata = column_metadata(&regular);
        if counters > 0 {
            def.default_validation_class = AbstractType::CounterColumn.class_name();
        }
    }
    def.cql = Some(layout);
    def.validate().map_err(CqlError::Invalid)?;
    Ok(def)
}

fn column_metadata(columns: &[(String, AbstractType)]) -> Vec<ColumnDef> {
    columns
        .iter()
        .map(|(n, ty)| ColumnDef {
            name: n.as_bytes().to_vec(),
            validation_class: ty.class_name(),
            index_type: None,
            index_name: None,
            index_options: BTreeMap::new(),
        })
        .collect()
}

/// One `WITH name = value` of CREATE TABLE (3.11's `TableAttributes`).
fn table_property(def: &mut CfDef, p: &Property) -> Result<(), CqlError> {
    let key = p.name.name();
    let text = match &p.value {
        PropertyValue::Constant(c) => Some(c.raw_text()),
        PropertyValue::Keyword(k) => Some(k.clone()),
        PropertyValue::Map(_) => None,
    };
    let map = match &p.value {
        PropertyValue::Map(entries) => {
            Some(entries.iter().map(|(k, v)| (k.raw_text(), v.raw_text())).collect::<BTreeMap<_, _>>())
        }
        _ => None,
    };
    let number = |what: &str| -> Result<f64, CqlError> {
        text.as_deref()
            .and_then(|t| t.parse::<f64>().ok())
            .map_or_else(|| invalid(format!("Invalid double value {} for '{what}'", p.value)), Ok)
    };
    let integer = |what: &str| -> Result<i32, CqlError> {
        text.as_deref()
            .and_then(|t| t.parse::<i32>().ok())
            .map_or_else(|| invalid(format!("Invalid integer value {} for '{what}'", p.value)), Ok)
    };
    let chance = |what: &str| -> Result<f64, CqlError> {
        let v = number(what)?;
        if !(0.0..=1.0).contains(&v) {
            return invalid(format!(
                "{what} must be larger than or equal to 0 and smaller than or equal to 1.0 (got {v})"
            ));
        }
        Ok(v)
    };
    match key {
        "comment" => def.comment = text,
        "gc_grace_seconds" => {
            let v = integer(key)?;
            if v < 0 {
                return invalid(format!("{key} must be greater than or equal to 0 (got {v})"));
            }
            def.gc_grace_seconds = v;
        }
        "default_time_to_live" => {
            let v = integer(key)?;
            if !(0..=model::schema_rules::MAX_TTL).contains(&v) {
                return invalid(format!(
                    "default_time_to_live must be greater than or equal to 0 and less than or equal to {} (got {v})",
                    model::schema_rules::MAX_TTL
                ));
            }
            def.default_time_to_live = v;
        }
        "read_repair_chance" => def.read_repair_chance = chance(key)?,
        "dclocal_read_repair_chance" => def.dclocal_read_repair_chance = chance(key)?,
        "crc_check_chance" => def.crc_check_chance = Some(chance(key)?),
        "bloom_filter_fp_chance" => {
            let v = number(key)?;
            if !(v > 0.0 && v <= 1.0) {
                return invalid(format!(
                    "bloom_filter_fp_chance must be larger than 0 and less than or equal to 1.0 (got {v})"
                ));
            }
            def.bloom_filter_fp_chance = Some(v);
        }
        "memtable_flush_period_in_ms" => def.memtable_flush_period_in_ms = Some(integer(key)?),
        "min_index_interval" => def.min_index_interval = Some(integer(key)?),
        "max_index_interval" => def.max_index_interval = Some(integer(key)?),
        "speculative_retry" => def.speculative_retry = text,
        "cdc" => {
            if boolean(key, &p.value)? {
                return invalid("cdc is not supported yet");
            }
        }
        "caching" => {
            let Some(map) = map else { return invalid("Invalid value for property 'caching': a map is expected") };
            let keys = map.get("keys").map(String::as_str).unwrap_or("ALL");
            let rows = map.get("rows_per_partition").map(String::as_str).unwrap_or("NONE");
            if let Some(k) = map.keys().find(|k| !matches!(k.as_str(), "keys" | "rows_per_partition")) {
                return invalid(format!(
                    "Invalid caching sub-options {k}: only \"keys\" and \"rows_per_partition\" are allowed"
                ));
            }
            def.caching = match (keys, rows) {
                ("ALL", "NONE") => "KEYS_ONLY",
                ("ALL", _) => "ALL",
                ("NONE", "NONE") => "NONE",
                ("NONE", _) => "ROWS_ONLY",
                (other, _) => {
                    return invalid(format!(
                        "Invalid value '{other}' for caching sub-option 'keys': only 'ALL' and 'NONE' are allowed"
                    ))
                }
            }
            .to_string();
            def.cells_per_row_to_cache = Some(rows.to_string());
        }
        "compaction" => {
            let Some(mut map) = map else {
                return invalid("Invalid value for property 'compaction': a map is expected");
            };
            let Some(class) = map.remove("class") else {
                return invalid("Missing sub-option 'class' for the 'compaction' option.");
            };
            def.compaction_strategy = model::compaction_options::CompactionOptions::full_class_name(&class);
            for (k, slot) in [
                ("min_threshold", &mut def.min_compaction_threshold),
                ("max_threshold", &mut def.max_compaction_threshold),
            ] {
                if let Some(v) = map.get(k).and_then(|v| v.trim().parse().ok()) {
                    *slot = v;
                }
            }
            model::compaction_options::CompactionOptions::parse(&def.compaction_strategy, &map)
                .map_err(CqlError::Invalid)?;
            def.compaction_strategy_options = map;
        }
        "compression" => {
            let Some(map) = map else { return invalid("Invalid value for property 'compression': a map is expected") };
            def.compression_options = map;
        }
        "id" => return invalid("id of a table cannot be set yet (not supported yet)"),
        _ => return invalid(format!("Unknown property '{key}'")),
    }
    Ok(())
}

/// ALTER TABLE: ADD and DROP regular columns, RENAME primary key columns, WITH options (3.11's
/// `AlterTableStatement`, its checks and words).
pub(super) async fn alter_table(ctx: &Context<'_>, s: &AlterTable) -> Result<Outcome, CqlError> {
    let keyspace = ctx.keyspace_of(&s.name)?;
    let name = s.name.name.name();
    if is_reserved_keyspace(&keyspace) {
        return not_modifiable(&keyspace);
    }
    let Some(existing) = ctx.coordinator.keyspace(&keyspace).and_then(|k| k.cf(name).cloned()) else {
        return invalid(format!("unconfigured table {name}"));
    };
    let table = Table::from_def(&existing)?;
    if table.view_of.is_some() {
        return invalid("Cannot use ALTER TABLE on Materialized View");
    }
    let mut def = existing.clone();
    let made_by_cql = def.cql.is_some();
    let compact = table.layout != Layout::Sparse;
    match &s.action {
        AlterTableAction::With(properties) => {
            for p in properties {
                table_property(&mut def, p)?;
            }
        }
        AlterTableAction::Add(columns) => {
            if compact || !made_by_cql {
                return invalid("Cannot add new column to a COMPACT STORAGE table");
            }
            for added in columns {
                let n = added.name.name();
                if table.column(n).is_some() {
                    return invalid(format!("Invalid column name {n} because it conflicts with an existing column"));
                }
                if added.is_static {
                    if table.clustering.is_empty() {
                        return invalid(format!(
                            "Static columns are only useful (and thus allowed) if the table has at least one clustering column (column {n})"
                        ));
                    }
                    if let Some(layout) = def.cql.as_mut() {
                        layout.static_columns.push(n.to_string());
                    }
                }
                let ks = ctx.coordinator.keyspace(&keyspace);
                let types = ks.as_ref().map(|k| k.user_types.as_slice()).unwrap_or_default();
                let ty = storage_type(&added.ty, &TypeScope { keyspace: &keyspace, types })?;
                non_frozen_user_type(n, &ty)?;
                if ty.is_multi_cell() && !table.keeps_elements_of(n) {
                    // The comparator would need a new ColumnToCollectionType entry, and a live
                    // column family's comparator cannot change yet.
                    return invalid(format!(
                        "adding the non-frozen collection {n} to an existing table is not supported yet: add it as frozen<{}>, or create the table with it",
                        added.ty
                    ));
                }
                if let Some((_, used)) = table.collections.iter().find(|(c, _)| c == n.as_bytes()) {
                    if *used != ty {
                        return invalid(format!(
                            "Cannot add a collection with the name {n} because a collection with the same name and a different type ({}) has already been used in the past",
                            crate::schema::cql_name(used)
                        ));
                    }
                }
                if ty.is_counter() != table.counter {
                    return invalid(if table.counter {
                        format!("Cannot add a non counter column ({n}) in a counter column family")
                    } else {
                        format!("Cannot add a counter column ({n}) in a non counter column family")
                    });
                }
                def.column_metadata.extend(column_metadata(&[(n.to_string(), ty)]));
            }
        }
        AlterTableAction::Drop { columns, timestamp } => {
            if compact || !made_by_cql {
                return invalid("Cannot drop columns from a non-CQL3 table");
            }
            let when = match timestamp {
                Some(t) => t.parse::<i64>().or_else(|_| invalid(format!("Invalid timestamp {t}")))?,
                None => model::data::now_micros(),
            };
            for dropped in columns {
                let n = dropped.name();
                match table.column(n) {
                    None => return invalid(format!("Column {n} was not found in table {name}")),
                    Some(c) if c.kind != ColumnKind::Regular => {
                        return invalid(format!("Cannot drop PRIMARY KEY part {n}"))
                    }
                    Some(_) => {}
                }
                def.column_metadata.retain(|c| c.name != n.as_bytes());
                if let Some(layout) = def.cql.as_mut() {
                    layout.dropped.insert(n.to_string(), when);
                    layout.static_columns.retain(|s| s != n);
                }
            }
        }
        AlterTableAction::Rename(renames) => {
            let Some(layout) = def.cql.as_mut() else {
                return invalid("renaming the columns of a table made over Thrift is not supported yet");
            };
            for (from, to) in renames {
                let (from, to) = (from.name(), to.name());
                let Some(c) = table.column(from) else {
                    return invalid(format!("Cannot rename unknown column {from} in table {name}"));
                };
                if table.column(to).is_some() && to != from {
                    return invalid(format!("Cannot rename column {from} to {to} in table {name}; another column of that name already exist"));
                }
                let slot = match c.kind {
                    ColumnKind::PartitionKey => layout.key_aliases.get_mut(c.position),
                    ColumnKind::Clustering => layout.column_aliases.get_mut(c.position),
                    ColumnKind::Regular if layout.value_alias.as_deref() == Some(from) => layout.value_alias.as_mut(),
                    ColumnKind::Regular => {
                        return invalid(format!("Cannot rename non PRIMARY KEY part {from}"));
                    }
                };
                match slot {
                    Some(s) => *s = to.to_string(),
                    None => return invalid(format!("Cannot rename column {from}: its table keeps no CQL name for it")),
                }
            }
        }
        AlterTableAction::AlterType { column, .. } => {
            return invalid(format!("Altering of types is not allowed (column {})", column.name()));
        }
        AlterTableAction::DropCompactStorage => return invalid("DROP COMPACT STORAGE is not supported yet"),
    }
    def.validate().map_err(CqlError::Invalid)?;
    ctx.coordinator.update_column_family(def).await?;
    Ok(change("UPDATED", "TABLE", &keyspace, Some(name)))
}

/// A column of a non-frozen user type (a cell per field, 3.11 since 3.6) is not kept yet.
fn non_frozen_user_type(column: &str, ty: &AbstractType) -> Result<(), CqlError> {
    if matches!(ty, AbstractType::User(u) if !u.frozen) {
        return invalid(format!(
            "column {column}: non-frozen user types are not supported yet (declare it frozen<{}>)",
            crate::schema::cql_name(ty)
        ));
    }
    Ok(())
}
