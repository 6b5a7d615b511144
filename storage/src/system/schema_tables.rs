//! The schema as rows of `system.schema_keyspaces` and `system.schema_columnfamilies` (Cassandra's
//! schema tables), so that nodes can exchange them and merge them like any other data.
//!
//! - `schema_keyspaces`: key = keyspace name; column `attributes` = the keyspace's replication
//!   strategy, options, durable_writes and user-defined types as JSON (types that two nodes
//!   change at once in one keyspace keep the later change, as a keyspace's options do).
//! - `schema_columnfamilies`: key = keyspace name; one column per column family, named after it,
//!   holding its whole definition as JSON.
//!
//! A dropped keyspace is a row tombstone in both rows; a dropped column family a column
//! tombstone. Each attribute set and each column family being its own cell, two nodes changing
//! different column families of one keyspace at once both keep their change; the same column
//! family changed twice keeps the later change (reconciliation: higher timestamp, then greater
//! value). A keyspace exists when its `attributes` cell is live; column families of a keyspace
//! that does not exist are ignored.
//!
//! Data written before this layout has one `definition` column per keyspace holding the whole
//! keyspace as JSON; [`decode_schema`] reports those so the engine converts them once.

use std::collections::{BTreeMap, HashSet};

use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};
use tracing::warn;
use uuid::Uuid;

use super::{is_builtin_keyspace, KEYSPACE, SCHEMA_COLUMNFAMILIES_CF, SCHEMA_KEYSPACES_CF};
use crate::data::{Cell, DeletionTime};
use crate::error::{Result, StorageError};
use crate::mutation::RowMutation;
use crate::schema::{valid_name, CfDef, KeyspaceDef, UserTypeDef};

const ATTRIBUTES: &[u8] = b"attributes";
const LEGACY_DEFINITION: &[u8] = b"definition";

/// What `attributes` holds: a keyspace definition without its column families.
#[derive(Serialize, Deserialize)]
struct KeyspaceAttributes {
    strategy_class: String,
    strategy_options: BTreeMap<String, String>,
    durable_writes: bool,
    #[serde(default)]
    user_types: Vec<UserTypeDef>,
}

impl KeyspaceAttributes {
    fn of(ks: &KeyspaceDef) -> KeyspaceAttributes {
        KeyspaceAttributes {
            strategy_class: ks.strategy_class.clone(),
            strategy_options: ks.strategy_options.clone(),
            durable_writes: ks.durable_writes,
            user_types: ks.user_types.clone(),
        }
    }

    fn same(a: &KeyspaceDef, b: &KeyspaceDef) -> bool {
        a.strategy_class == b.strategy_class
            && a.strategy_options == b.strategy_options
            && a.durable_writes == b.durable_writes
            && a.user_types == b.user_types
    }
}

fn json<T: Serialize>(what: &str, value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(value).map_err(|e| StorageError::InvalidSchema(format!("{what}: {e}")))
}

/// The mutations that take the schema tables from `old` to `new`, written at `timestamp` (`now`
/// is the node's clock in seconds, for tombstones). System keyspaces are never written.
pub fn diff_mutations(
    old: &BTreeMap<String, KeyspaceDef>,
    new: &BTreeMap<String, KeyspaceDef>,
    timestamp: i64,
    now: i32,
) -> Result<Vec<RowMutation>> {
    let mut out = Vec::new();
    for (name, ks) in new.iter().filter(|(name, _)| !is_builtin_keyspace(name)) {
        let before = old.get(name);
        let mut m = RowMutation::new(KEYSPACE, name.clone().into_bytes());
        if !before.is_some_and(|b| KeyspaceAttributes::same(b, ks)) {
            let attributes = json("keyspace attributes", &KeyspaceAttributes::of(ks))?;
            m.row_mut(SCHEMA_KEYSPACES_CF).cells.push(Cell::live(ATTRIBUTES, attributes, timestamp));
        }
        let mut cells = Vec::new();
        for cf in &ks.cf_defs {
            if before.and_then(|b| b.cf(&cf.name)) != Some(cf) {
                cells.push(Cell::live(cf.name.clone(), json("column family definition", cf)?, timestamp));
            }
        }
        for gone in before.iter().flat_map(|b| b.cf_defs.iter()).filter(|c| ks.cf(&c.name).is_none()) {
            cells.push(Cell::tombstone(gone.name.clone(), timestamp, now));
        }
        if !cells.is_empty() {
            // UTF8Type order is byte order.
            cells.sort_by(|a, b| a.name.cmp(&b.name));
            m.row_mut(SCHEMA_COLUMNFAMILIES_CF).cells = cells;
        }
        if !m.updates.is_empty() {
            out.push(m);
        }
    }
    for name in old.keys().filter(|name| !is_builtin_keyspace(name) && !new.contains_key(*name)) {
        out.push(keyspace_tombstone(name, timestamp, now));
    }
    Ok(out)
}

/// Deletes keyspace `name` and all its column families.
fn keyspace_tombstone(name: &str, timestamp: i64, now: i32) -> RowMutation {
    let mut m = RowMutation::new(KEYSPACE, name.as_bytes().to_vec());
    m.row_mut(SCHEMA_KEYSPACES_CF).deletion = DeletionTime::new(timestamp, now);
    m.row_mut(SCHEMA_COLUMNFAMILIES_CF).deletion = DeletionTime::new(timestamp, now);
    m
}

/// Rewrites keyspaces kept in the old layout (one `definition` column) in this one, deleting
/// the old column in the same mutation.
pub fn convert_legacy(legacy: &[KeyspaceDef], timestamp: i64, now: i32) -> Result<Vec<RowMutation>> {
    let mut out = Vec::with_capacity(legacy.len());
    for ks in legacy {
        let one = BTreeMap::from([(ks.name.clone(), ks.clone())]);
        let mut m = diff_mutations(&BTreeMap::new(), &one, timestamp, now)?
            .pop()
            .unwrap_or_else(|| RowMutation::new(KEYSPACE, ks.name.clone().into_bytes()));
        let row = m.row_mut(SCHEMA_KEYSPACES_CF);
        row.cells.push(Cell::tombstone(LEGACY_DEFINITION, timestamp, now));
        row.cells.sort_by(|a, b| a.name.cmp(&b.name));
        out.push(m);
    }
    Ok(out)
}

/// The schema the tables hold, and keyspaces still in the old layout.
#[derive(Debug, Default)]
pub struct DecodedSchema {
    /// Keyspaces in the current layout, with their column families sorted by name.
    pub keyspaces: BTreeMap<String, KeyspaceDef>,
    /// Keyspaces with a live `definition` column and no `attributes`, to convert.
    pub legacy: Vec<KeyspaceDef>,
}

/// Rebuilds the schema from the live cells of the two tables' rows (key, cells).
///
/// The result is a function of the cells alone, so nodes holding the same rows agree, whatever
/// order they received them in. What cannot be used is left out with a warning, never guessed
/// at: a keyspace with a bad name or unreadable attributes, a column family whose definition does
/// not parse or validate, or whose id another column family (earlier by keyspace, then name)
/// already has.
pub fn decode_schema(keyspace_rows: Vec<(Vec<u8>, Vec<Cell>)>, cf_rows: Vec<(Vec<u8>, Vec<Cell>)>) -> DecodedSchema {
    let mut out = DecodedSchema::default();
    for (key, cells) in keyspace_rows {
        let Some(name) = String::from_utf8(key).ok().filter(|n| valid_name(n) && !is_builtin_keyspace(n)) else {
            warn!("schema_keyspaces: ignoring a row whose key is not a keyspace name");
            continue;
        };
        if let Some(attributes) = cells.iter().find(|c| c.name == ATTRIBUTES) {
            match serde_json::from_slice::<KeyspaceAttributes>(&attributes.value) {
                Ok(a) => {
                    let ks = KeyspaceDef {
                        name: name.clone(),
                        strategy_class: a.strategy_class,
                        strategy_options: a.strategy_options,
                        durable_writes: a.durable_writes,
                        cf_defs: Vec::new(),
                        user_types: a.user_types,
                    };
                    out.keyspaces.insert(name, ks);
                }
                Err(e) => warn!(keyspace = %name, error = %e, "schema_keyspaces: ignoring unreadable attributes"),
            }
        } else if let Some(definition) = cells.iter().find(|c| c.name == LEGACY_DEFINITION) {
            match serde_json::from_slice::<KeyspaceDef>(&definition.value) {
                Ok(ks) if ks.name == name => out.legacy.push(ks),
                Ok(ks) => warn!(keyspace = %name, named = %ks.name, "schema_keyspaces: ignoring a misfiled definition"),
                Err(e) => warn!(keyspace = %name, error = %e, "schema_keyspaces: ignoring an unreadable definition"),
            }
        }
    }
    let mut cf_rows: BTreeMap<Vec<u8>, Vec<Cell>> = cf_rows.into_iter().collect();
    let mut ids: HashSet<Uuid> = HashSet::new();
    for (name, ks) in out.keyspaces.iter_mut() {
        for cell in cf_rows.remove(name.as_bytes()).unwrap_or_default() {
            let cf_name = String::from_utf8_lossy(&cell.name).into_owned();
            let mut cf: CfDef = match serde_json::from_slice(&cell.value) {
                Ok(cf) => cf,
                Err(e) => {
                    warn!(keyspace = %name, cf = %cf_name, error = %e, "schema_columnfamilies: ignoring an unreadable definition");
                    continue;
                }
            };
            // The cell's place says which column family it is.
            cf.keyspace = name.clone();
            cf.name = cf_name;
            if let Err(e) = cf.validate() {
                warn!(keyspace = %name, cf = %cf.name, error = %e, "schema_columnfamilies: ignoring an invalid definition");
                continue;
            }
            if super::is_system_cf(&cf.id) || !ids.insert(cf.id) {
                warn!(keyspace = %name, cf = %cf.name, id = %cf.id, "schema_columnfamilies: ignoring a definition whose id is taken");
                continue;
            }
            ks.cf_defs.push(cf);
        }
        ks.cf_defs.sort_by(|a, b| a.name.cmp(&b.name));
    }
    out
}

/// The schema version: an MD5-based (version 3) UUID of every non-system keyspace in a canonical
/// form (keyspaces by name, their column families by name, each as JSON), like Cassandra's
/// `Schema.calculateSchemaDigest`. Nodes holding the same definitions compute the same version.
pub fn schema_version(keyspaces: &BTreeMap<String, KeyspaceDef>) -> Result<Uuid> {
    let mut md5 = Md5::new();
    for ks in keyspaces.values().filter(|k| !is_builtin_keyspace(&k.name)) {
        let mut canonical = ks.clone();
        canonical.cf_defs.sort_by(|a, b| a.name.cmp(&b.name));
        md5.update(json("keyspace definition", &canonical)?);
    }
    Ok(uuid::Builder::from_md5_bytes(md5.finalize().into()).into_uuid())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparator::CellComparator;
    use crate::data::Row;
    use crate::filter::{add_to_row, collect_live, ReadFilter};
    use crate::marshal::AbstractType;

    /// Applies mutations to in-memory tables and decodes them, as the engine does with stores.
    #[derive(Default)]
    struct Tables {
        keyspaces: BTreeMap<Vec<u8>, Row>,
        cfs: BTreeMap<Vec<u8>, Row>,
    }

    impl Tables {
        fn apply(&mut self, mutations: Vec<RowMutation>) {
            let cmp = CellComparator::standard(AbstractType::Utf8);
            for m in mutations {
                for (cf, row) in m.updates {
                    let table = if cf == SCHEMA_KEYSPACES_CF { &mut self.keyspaces } else { &mut self.cfs };
                    add_to_row(&cmp, table.entry(m.key.clone()).or_default(), row);
                }
            }
        }

        fn decode(&self) -> DecodedSchema {
            let cmp = CellComparator::standard(AbstractType::Utf8);
            let live = |t: &BTreeMap<Vec<u8>, Row>| {
                t.iter().map(|(k, r)| (k.clone(), collect_live(&cmp, r, &ReadFilter::all(), 0))).collect()
            };
            decode_schema(live(&self.keyspaces), live(&self.cfs))
        }
    }

    fn ks(name: &str, cfs: &[&str]) -> KeyspaceDef {
        let mut ks = KeyspaceDef::new(name);
        ks.cf_defs = cfs.iter().map(|c| CfDef::new(name, *c)).collect();
        ks
    }

    fn map(keyspaces: &[&KeyspaceDef]) -> BTreeMap<String, KeyspaceDef> {
        keyspaces.iter().map(|k| (k.name.clone(), (*k).clone())).collect()
    }

    #[test]
    fn diffs_applied_in_turn_rebuild_the_schema() {
        let mut t = Tables::default();
        let v1 = map(&[&ks("a", &["y", "x"]), &ks("b", &[])]);
        t.apply(diff_mutations(&BTreeMap::new(), &v1, 1, 0).expect("diff"));
        let mut sorted = v1.clone();
        sorted.values_mut().for_each(|k| k.cf_defs.sort_by(|p, q| p.name.cmp(&q.name)));
        assert_eq!(t.decode().keyspaces, sorted);

        let mut v2 = sorted.clone();
        v2.remove("b");
        let a = v2.get_mut("a").expect("a");
        a.cf_defs.retain(|c| c.name != "x");
        a.durable_writes = false;
        a.cf_defs.push(CfDef::new("a", "z"));
        let diff = diff_mutations(&sorted, &v2, 2, 0).expect("diff");
        // a: attributes, one new CF and one tombstone; b: deleted.
        assert_eq!(diff.len(), 2);
        t.apply(diff);
        assert_eq!(t.decode().keyspaces, v2);
        assert_eq!(schema_version(&t.decode().keyspaces).expect("v"), schema_version(&v2).expect("v"));
    }

    #[test]
    fn concurrent_changes_to_different_column_families_both_survive() {
        let base = map(&[&ks("a", &["x"])]);
        let mut one = base.clone();
        one.get_mut("a").expect("a").cf_defs.push(CfDef::new("a", "from_one"));
        let mut two = base.clone();
        two.get_mut("a").expect("a").cf_defs.retain(|c| c.name != "x");
        let (mut t1, mut t2) = (Tables::default(), Tables::default());
        let m0 = diff_mutations(&BTreeMap::new(), &base, 1, 0).expect("diff");
        let m1 = diff_mutations(&base, &one, 2, 0).expect("diff");
        let m2 = diff_mutations(&base, &two, 3, 0).expect("diff");
        t1.apply(m0.clone());
        t1.apply(m1.clone());
        t1.apply(m2.clone());
        t2.apply(m2);
        t2.apply(m1);
        t2.apply(m0);
        let names: Vec<String> = t1.decode().keyspaces["a"].cf_defs.iter().map(|c| c.name.clone()).collect();
        assert_eq!(names, vec!["from_one".to_string()]);
        assert_eq!(t1.decode().keyspaces, t2.decode().keyspaces);
    }

    #[test]
    fn the_old_layout_is_reported_and_converts() {
        let old = ks("legacy", &["cf"]);
        let mut t = Tables::default();
        let mut m = RowMutation::new(KEYSPACE, b"legacy".to_vec());
        m.row_mut(SCHEMA_KEYSPACES_CF).cells.push(Cell::live(
            LEGACY_DEFINITION,
            serde_json::to_vec(&old).expect("json"),
            1,
        ));
        t.apply(vec![m]);
        let decoded = t.decode();
        assert!(decoded.keyspaces.is_empty());
        assert_eq!(decoded.legacy, vec![old.clone()]);
        t.apply(convert_legacy(&decoded.legacy, 2, 0).expect("convert"));
        let decoded = t.decode();
        assert!(decoded.legacy.is_empty());
        assert_eq!(decoded.keyspaces.get("legacy"), Some(&old));
    }

    #[test]
    fn unusable_definitions_are_left_out() {
        let mut t = Tables::default();
        let good = ks("a", &["ok"]);
        t.apply(diff_mutations(&BTreeMap::new(), &map(&[&good]), 1, 0).expect("diff"));
        let mut bad = RowMutation::new(KEYSPACE, b"a".to_vec());
        let mut same_id = CfDef::new("a", "twin");
        same_id.id = good.cf_defs[0].id;
        let mut invalid = CfDef::new("a", "invalid");
        invalid.gc_grace_seconds = -1;
        bad.row_mut(SCHEMA_COLUMNFAMILIES_CF).cells = vec![
            Cell::live("garbage", "not json", 2),
            Cell::live("invalid", serde_json::to_vec(&invalid).expect("json"), 2),
            Cell::live("twin", serde_json::to_vec(&same_id).expect("json"), 2),
        ];
        let mut orphan = RowMutation::new(KEYSPACE, b"orphan".to_vec());
        orphan.row_mut(SCHEMA_COLUMNFAMILIES_CF).cells.push(Cell::live(
            "cf",
            serde_json::to_vec(&CfDef::new("orphan", "cf")).expect("json"),
            2,
        ));
        t.apply(vec![bad, orphan]);
        assert_eq!(t.decode().keyspaces, map(&[&good]));
    }

    #[test]
    fn the_version_depends_on_content_only() {
        let a = ks("a", &["x", "y"]);
        let mut reordered = a.clone();
        reordered.cf_defs.reverse();
        let v = schema_version(&map(&[&a])).expect("v");
        assert_eq!(v, schema_version(&map(&[&reordered])).expect("v"));
        assert_eq!(v.get_version_num(), 3);
        let mut with_system = map(&[&a]);
        with_system.insert(KEYSPACE.into(), super::super::keyspace_def());
        assert_eq!(v, schema_version(&with_system).expect("v"));
        let mut changed = a.clone();
        changed.cf_defs[0].gc_grace_seconds += 1;
        assert_ne!(v, schema_version(&map(&[&changed])).expect("v"));
        assert_ne!(v, schema_version(&BTreeMap::new()).expect("v"));
    }
}
