//! Schema statements (create/update/drop keyspace and column family, drop index) and the
//! describe/show family.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use thrift_idl::{CfDef, KsDef, TCassandraSyncClient};

use super::ast::Attrs;
use super::lexer::escape;
use super::schema;
use super::session::{resolve_name, CliError, Session};
use super::value;

/// The name describe_schema_versions gives nodes that did not answer.
const UNREACHABLE: &str = "UNREACHABLE";
const MARSHAL_PACKAGE: &str = "org.apache.cassandra.db.marshal.";

impl Session {
    /// After a schema change: print the new version and wait until every reachable node has it.
    fn settle_schema(&mut self, version: &str) -> Result<(), CliError> {
        writeln!(self.out, "{version}")?;
        writeln!(self.out, "Waiting for schema agreement...")?;
        let deadline = Instant::now() + self.schema_wait;
        loop {
            let versions = self.client()?.describe_schema_versions()?;
            if versions.keys().all(|v| v == version || v == UNREACHABLE) {
                if let Some(nodes) = versions.get(UNREACHABLE) {
                    writeln!(self.out, "Warning: unreachable nodes {}", nodes.join(", "))?;
                }
                writeln!(self.out, "... schemas agree across the cluster")?;
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(CliError::SchemaNotSettled {
                    secs: self.schema_wait.as_secs(),
                    versions: format!("{versions:?}"),
                });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn resolve_keyspace(&mut self, name: &str) -> Result<KsDef, CliError> {
        let keyspaces = self.client()?.describe_keyspaces()?;
        let real = resolve_name(name, keyspaces.iter().map(|k| k.name.as_str()))
            .ok_or_else(|| CliError::UnknownKeyspace(name.to_string()))?;
        keyspaces.into_iter().find(|k| k.name == real).ok_or(CliError::UnknownKeyspace(real))
    }

    pub(crate) fn exec_create_keyspace(&mut self, name: &str, attrs: &Attrs) -> Result<(), CliError> {
        self.client()?;
        let def = schema::new_ks_def(name, attrs)?;
        let version = self.client()?.system_add_keyspace(def)?;
        self.settle_schema(&version)
    }

    pub(crate) fn exec_update_keyspace(&mut self, name: &str, attrs: &Attrs) -> Result<(), CliError> {
        let current = self.resolve_keyspace(name)?;
        let def = schema::apply_ks_attrs(current, attrs)?;
        let version = self.client()?.system_update_keyspace(def)?;
        self.settle_schema(&version)?;
        self.refresh_keyspace()
    }

    pub(crate) fn exec_drop_keyspace(&mut self, name: &str) -> Result<(), CliError> {
        let ks = self.resolve_keyspace(name)?;
        let version = self.client()?.system_drop_keyspace(ks.name.clone())?;
        self.settle_schema(&version)?;
        if self.keyspace.as_deref() == Some(ks.name.as_str()) {
            self.keyspace = None;
            self.ks_def = None;
        }
        Ok(())
    }

    pub(crate) fn exec_create_cf(&mut self, name: &str, attrs: &Attrs) -> Result<(), CliError> {
        let ks = self.require_keyspace()?;
        let def = schema::apply_cf_attrs(schema::empty_cf_def(&ks, name), attrs)?;
        let version = self.client()?.system_add_column_family(def)?;
        self.settle_schema(&version)?;
        self.refresh_keyspace()
    }

    pub(crate) fn exec_update_cf(&mut self, name: &str, attrs: &Attrs) -> Result<(), CliError> {
        let cf = self.resolve_cf(name)?;
        // Start from the server's definition, not the session's (which may carry `assume`s).
        self.refresh_keyspace()?;
        let current = self.cf_def(&cf)?.clone();
        let def = schema::apply_cf_attrs(current, attrs)?;
        let version = self.client()?.system_update_column_family(def)?;
        self.settle_schema(&version)?;
        self.refresh_keyspace()
    }

    pub(crate) fn exec_drop_cf(&mut self, name: &str) -> Result<(), CliError> {
        let cf = self.resolve_cf(name)?;
        let version = self.client()?.system_drop_column_family(cf)?;
        self.settle_schema(&version)?;
        self.refresh_keyspace()
    }

    /// `drop index on CF.column`: clears the column's index in the column family definition.
    pub(crate) fn exec_drop_index(&mut self, cf: &str, column: &str) -> Result<(), CliError> {
        let cf = self.resolve_cf(cf)?;
        self.refresh_keyspace()?;
        let mut def = self.cf_def(&cf)?.clone();
        let name_class = if def.column_type.as_deref() == Some("Super") {
            def.subcomparator_type.as_deref()
        } else {
            def.comparator_type.as_deref()
        };
        let name = value::schema_type(name_class)?.from_display_string(column).map_err(value::ValueError::from)?;
        let Some(col) = def.column_metadata.iter_mut().flatten().find(|c| c.name == name) else {
            return Err(CliError::Usage(format!("Column '{column}' definition was not found in ColumnFamily '{cf}'.")));
        };
        if col.index_type.is_none() {
            return Err(CliError::Usage(format!("Column '{column}' does not have an index.")));
        }
        col.index_type = None;
        col.index_name = None;
        col.index_options = None;
        let version = self.client()?.system_update_column_family(def)?;
        self.settle_schema(&version)?;
        self.refresh_keyspace()
    }

    /// `describe;` (current keyspace), `describe KS;` or `describe CF;`. As in
    /// CliClient.executeDescribe, `describe;` without a keyspace and a name that is neither a
    /// keyspace nor a column family of the current one get a message, not an error.
    pub(crate) fn exec_describe(&mut self, name: Option<&str>) -> Result<(), CliError> {
        self.client()?;
        let Some(name) = name else {
            let Some(ks) = self.keyspace.clone() else {
                writeln!(
                    self.out,
                    "Authenticate to a Keyspace, before using `describe` or `describe <column_family>`"
                )?;
                return Ok(());
            };
            let def = self.resolve_keyspace(&ks)?;
            return self.describe_keyspace(&def);
        };
        let keyspaces = self.client()?.describe_keyspaces()?;
        if let Some(real) = resolve_name(name, keyspaces.iter().map(|k| k.name.as_str())) {
            if let Some(def) = keyspaces.iter().find(|k| k.name == real) {
                return self.describe_keyspace(def);
            }
        }
        if self.keyspace.is_none() {
            return Err(CliError::Usage(format!(
                "Keyspace with name '{name}' wasn't found, to lookup ColumnFamily with that name, please, authorize to one of the keyspaces first."
            )));
        }
        match self.resolve_cf(name) {
            Ok(cf) => {
                let def = self.cf_def(&cf)?.clone();
                self.describe_cf(&def)
            }
            Err(CliError::UnknownColumnFamily(_)) => {
                writeln!(self.out, "Sorry, no Keyspace nor ColumnFamily was found with name: {name}")?;
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    fn describe_keyspace(&mut self, ks: &KsDef) -> Result<(), CliError> {
        writeln!(self.out, "Keyspace: {}:", ks.name)?;
        writeln!(self.out, "  Replication Strategy: {}", ks.strategy_class)?;
        writeln!(self.out, "  Durable Writes: {}", ks.durable_writes.unwrap_or(true))?;
        writeln!(self.out, "    Options: [{}]", format_options(ks.strategy_options.as_ref(), ":", ", "))?;
        writeln!(self.out, "  Column Families:")?;
        let mut cfs: Vec<&CfDef> = ks.cf_defs.iter().collect();
        cfs.sort_by(|a, b| a.name.cmp(&b.name));
        for cf in cfs {
            self.describe_cf(cf)?;
        }
        Ok(())
    }

    /// One column family as cassandra-cli 1.2's describeColumnFamily shows it. Numbers and flags
    /// the node leaves unset are shown as Java's Thrift structs showed them (0, 0.0), except
    /// `Replicate on write`, which Cassandra defaulted to true.
    fn describe_cf(&mut self, cf: &CfDef) -> Result<(), CliError> {
        let is_super = cf.column_type.as_deref() == Some("Super");
        let o = &mut self.out;
        writeln!(o, "    ColumnFamily: {}{}", cf.name, if is_super { " (Super)" } else { "" })?;
        if let Some(c) = cf.comment.as_deref().filter(|c| !c.is_empty()) {
            writeln!(o, "    \"{c}\"")?;
        }
        let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "null".into());
        if let Some(k) = &cf.key_validation_class {
            writeln!(o, "      Key Validation Class: {k}")?;
        }
        if let Some(v) = &cf.default_validation_class {
            writeln!(o, "      Default column value validator: {v}")?;
        }
        let sub = if is_super { format!("/{}", show(&cf.subcomparator_type)) } else { String::new() };
        writeln!(o, "      Columns sorted by: {}{sub}", show(&cf.comparator_type))?;
        writeln!(o, "      GC grace seconds: {}", cf.gc_grace_seconds.unwrap_or(0))?;
        writeln!(
            o,
            "      Compaction min/max thresholds: {}/{}",
            cf.min_compaction_threshold.unwrap_or(0),
            cf.max_compaction_threshold.unwrap_or(0)
        )?;
        let chance = |c: Option<thrift::OrderedFloat<f64>>| value::java_double(c.map_or(0.0, |c| c.0));
        writeln!(o, "      Read repair chance: {}", chance(cf.read_repair_chance))?;
        writeln!(o, "      DC Local Read repair chance: {}", chance(cf.dclocal_read_repair_chance))?;
        writeln!(o, "      Populate IO Cache on flush: {}", cf.populate_io_cache_on_flush.unwrap_or(false))?;
        writeln!(o, "      Replicate on write: {}", cf.replicate_on_write.unwrap_or(true))?;
        writeln!(o, "      Caching: {}", show(&cf.caching))?;
        let fp = cf.bloom_filter_fp_chance.map_or_else(|| "default".to_string(), |f| value::java_double(f.0));
        writeln!(o, "      Bloom Filter FP chance: {fp}")?;
        if let Some(ttl) = cf.default_time_to_live.filter(|t| *t != 0) {
            writeln!(o, "      Default time to live: {ttl}")?;
        }
        let metadata = cf.column_metadata.as_deref().unwrap_or_default();
        if !metadata.is_empty() {
            let name_class = if is_super { cf.subcomparator_type.as_deref() } else { cf.comparator_type.as_deref() };
            let name_type = value::schema_type(name_class)?;
            writeln!(o, "      Column Metadata:")?;
            for c in metadata {
                let mut shown = name_type.to_display_string(&c.name);
                // BytesType names are hex; show the text too when it is UTF-8, as cassandra-cli did.
                if name_type == model::marshal::AbstractType::Bytes {
                    if let Ok(s) = std::str::from_utf8(&c.name) {
                        shown = format!("{s} ({shown})");
                    }
                }
                writeln!(o, "        Column Name: {shown}")?;
                writeln!(o, "          Validation Class: {}", c.validation_class)?;
                if let Some(n) = &c.index_name {
                    writeln!(o, "          Index Name: {n}")?;
                }
                if let Some(t) = c.index_type {
                    writeln!(o, "          Index Type: {}", index_type_name(t))?;
                }
                if let Some(opts) = &c.index_options {
                    // Java's Map.toString.
                    writeln!(o, "          Index Options: {{{}}}", format_options(Some(opts), "=", ", "))?;
                }
            }
        }
        writeln!(o, "      Compaction Strategy: {}", show(&cf.compaction_strategy))?;
        if let Some(opts) = cf.compaction_strategy_options.as_ref().filter(|m| !m.is_empty()) {
            writeln!(o, "      Compaction Strategy Options:")?;
            for (k, v) in opts {
                writeln!(o, "        {k}: {v}")?;
            }
        }
        if let Some(opts) = cf.compression_options.as_ref().filter(|m| !m.is_empty()) {
            writeln!(o, "      Compression Options:")?;
            for (k, v) in opts {
                writeln!(o, "        {k}: {v}")?;
            }
        }
        Ok(())
    }

    pub(crate) fn exec_describe_cluster(&mut self) -> Result<(), CliError> {
        let c = self.client()?;
        let name = c.describe_cluster_name()?;
        let snitch = c.describe_snitch()?;
        let partitioner = c.describe_partitioner()?;
        let versions = c.describe_schema_versions()?;
        writeln!(self.out, "Cluster Information:")?;
        writeln!(self.out, "   Name: {name}")?;
        writeln!(self.out, "   Snitch: {snitch}")?;
        writeln!(self.out, "   Partitioner: {partitioner}")?;
        writeln!(self.out, "   Schema versions: ")?;
        for (version, nodes) in versions {
            writeln!(self.out, "\t{version}: [{}]", nodes.join(", "))?;
            writeln!(self.out)?;
        }
        Ok(())
    }

    pub(crate) fn exec_describe_ring(&mut self, keyspace: Option<&str>) -> Result<(), CliError> {
        let ks = match keyspace {
            Some(k) => self.resolve_keyspace(k)?.name,
            None => self.require_keyspace()?,
        };
        let ranges = self.client()?.describe_ring(ks)?;
        for r in ranges {
            writeln!(self.out, "TokenRange: ")?;
            writeln!(self.out, "\tstart_token: {}", r.start_token)?;
            writeln!(self.out, "\tend_token: {}", r.end_token)?;
            writeln!(self.out, "\tendpoints: [{}]", r.endpoints.join(", "))?;
            if let Some(rpc) = &r.rpc_endpoints {
                writeln!(self.out, "\trpc_endpoints: [{}]", rpc.join(", "))?;
            }
        }
        Ok(())
    }

    pub(crate) fn exec_show_keyspaces(&mut self) -> Result<(), CliError> {
        let mut keyspaces = self.client()?.describe_keyspaces()?;
        keyspaces.sort_by(|a, b| a.name.cmp(&b.name));
        for ks in &keyspaces {
            self.describe_keyspace(ks)?;
        }
        Ok(())
    }

    /// `show schema [KS]`: the statements that recreate a keyspace (default: the current one, or
    /// all keyspaces when none is selected).
    pub(crate) fn exec_show_schema(&mut self, keyspace: Option<&str>) -> Result<(), CliError> {
        let mut keyspaces = self.client()?.describe_keyspaces()?;
        keyspaces.sort_by(|a, b| a.name.cmp(&b.name));
        let wanted = match keyspace {
            Some(k) => Some(self.resolve_keyspace(k)?.name),
            None => self.keyspace.clone(),
        };
        for ks in keyspaces.iter().filter(|k| wanted.as_ref().map_or(true, |w| *w == k.name)) {
            let script = schema_script(ks)?;
            write!(self.out, "{script}")?;
        }
        Ok(())
    }
}

fn index_type_name(t: thrift_idl::IndexType) -> String {
    match t {
        thrift_idl::IndexType::KEYS => "KEYS".into(),
        thrift_idl::IndexType::CUSTOM => "CUSTOM".into(),
        thrift_idl::IndexType::COMPOSITES => "COMPOSITES".into(),
        other => other.0.to_string(),
    }
}

fn format_options(opts: Option<&BTreeMap<String, String>>, kv: &str, sep: &str) -> String {
    opts.map(|m| m.iter().map(|(k, v)| format!("{k}{kv}{v}")).collect::<Vec<_>>().join(sep)).unwrap_or_default()
}

/// `org.apache.cassandra.db.marshal.UTF8Type` → `UTF8Type` (also inside type parameters).
fn short_type(class: &str) -> String {
    class.replace(MARSHAL_PACKAGE, "")
}

fn quote(s: &str) -> String {
    format!("'{}'", escape(s))
}

/// The cassandra-cli script that recreates one keyspace and its column families.
pub fn schema_script(ks: &KsDef) -> Result<String, CliError> {
    let mut s = format!("create keyspace {}", ks.name);
    let strategy = ks.strategy_class.strip_prefix("org.apache.cassandra.locator.").unwrap_or(&ks.strategy_class);
    s.push_str(&format!("\n  with placement_strategy = {}", quote(strategy)));
    if let Some(opts) = ks.strategy_options.as_ref().filter(|m| !m.is_empty()) {
        let body: Vec<String> = opts.iter().map(|(k, v)| format!("{} : {}", quote(k), quote(v))).collect();
        s.push_str(&format!("\n  and strategy_options = {{{}}}", body.join(", ")));
    }
    s.push_str(&format!("\n  and durable_writes = {};\n\nuse {};\n\n", ks.durable_writes.unwrap_or(true), ks.name));
    let mut cfs: Vec<&CfDef> = ks.cf_defs.iter().collect();
    cfs.sort_by(|a, b| a.name.cmp(&b.name));
    for cf in cfs {
        s.push_str(&cf_script(cf)?);
    }
    s.push('\n');
    Ok(s)
}

fn cf_script(cf: &CfDef) -> Result<String, CliError> {
    let mut attrs: Vec<(&str, String)> = Vec::new();
    let is_super = cf.column_type.as_deref() == Some("Super");
    attrs.push(("column_type", quote(cf.column_type.as_deref().unwrap_or("Standard"))));
    if let Some(c) = &cf.comparator_type {
        attrs.push(("comparator", quote(&short_type(c))));
    }
    if is_super {
        if let Some(c) = &cf.subcomparator_type {
            attrs.push(("subcomparator", quote(&short_type(c))));
        }
    }
    if let Some(v) = cf.default_validation_class.as_deref().filter(|v| !v.is_empty()) {
        attrs.push(("default_validation_class", quote(&short_type(v))));
    }
    if let Some(v) = &cf.key_validation_class {
        attrs.push(("key_validation_class", quote(&short_type(v))));
    }
    if let Some(v) = cf.read_repair_chance {
        attrs.push(("read_repair_chance", v.0.to_string()));
    }
    if let Some(v) = cf.dclocal_read_repair_chance {
        attrs.push(("dclocal_read_repair_chance", v.0.to_string()));
    }
    if let Some(v) = cf.gc_grace_seconds {
        attrs.push(("gc_grace", v.to_string()));
    }
    if let Some(v) = cf.min_compaction_threshold {
        attrs.push(("min_compaction_threshold", v.to_string()));
    }
    if let Some(v) = cf.max_compaction_threshold {
        attrs.push(("max_compaction_threshold", v.to_string()));
    }
    if let Some(v) = &cf.compaction_strategy {
        attrs.push(("compaction_strategy", quote(v)));
    }
    if let Some(v) = &cf.caching {
        attrs.push(("caching", quote(v)));
    }
    if let Some(v) = cf.default_time_to_live.filter(|t| *t != 0) {
        attrs.push(("default_time_to_live", v.to_string()));
    }
    if let Some(v) = cf.bloom_filter_fp_chance {
        attrs.push(("bloom_filter_fp_chance", v.0.to_string()));
    }
    if let Some(c) = cf.comment.as_deref().filter(|c| !c.is_empty()) {
        attrs.push(("comment", quote(c)));
    }
    let metadata = cf.column_metadata.as_deref().unwrap_or_default();
    if !metadata.is_empty() {
        let name_class = if is_super { cf.subcomparator_type.as_deref() } else { cf.comparator_type.as_deref() };
        let name_type = value::schema_type(name_class)?;
        let mut cols = Vec::new();
        for c in metadata {
            let mut col = format!(
                "\n    {{column_name : {},\n    validation_class : {}",
                quote(&name_type.to_display_string(&c.name)),
                short_type(&c.validation_class)
            );
            if let Some(n) = &c.index_name {
                col.push_str(&format!(",\n    index_name : {}", quote(n)));
            }
            if let Some(t) = c.index_type {
                col.push_str(&format!(",\n    index_type : {}", t.0));
            }
            col.push('}');
            cols.push(col);
        }
        attrs.push(("column_metadata", format!("[{}]", cols.join(","))));
    }
    for (name, opts) in [
        ("compaction_strategy_options", &cf.compaction_strategy_options),
        ("compression_options", &cf.compression_options),
    ] {
        if let Some(m) = opts.as_ref().filter(|m| !m.is_empty()) {
            let body: Vec<String> = m.iter().map(|(k, v)| format!("{} : {}", quote(k), quote(v))).collect();
            attrs.push((name, format!("{{{}}}", body.join(", "))));
        }
    }
    let mut s = format!("create column family {}", quote(&cf.name));
    for (i, (name, value)) in attrs.iter().enumerate() {
        s.push_str(&format!("\n  {} {name} = {value}", if i == 0 { "with" } else { "and" }));
    }
    s.push_str(";\n\n");
    Ok(s)
}
