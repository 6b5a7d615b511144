//! Schema rules Cassandra 3.11 checks beyond types and names (CFMetaData/TableParams/
//! IndexMetadata/KeyspaceMetadata.validate), with its words: a client that parses 3.11's
//! InvalidRequestException reasons finds the same ones here.

use std::collections::HashSet;

use crate::schema::{valid_index_name, CfDef, KeyspaceDef};

/// Longest TTL Cassandra accepts, a column's or a column family's default: 20 years.
pub const MAX_TTL: i32 = 20 * 365 * 24 * 60 * 60;

/// A column family's numeric options and index names (TableParams.validate, IndexMetadata).
pub fn check_cf_params(cf: &CfDef) -> Result<(), String> {
    at_least("gc_grace_seconds", cf.gc_grace_seconds, 0)?;
    at_least("default_time_to_live", cf.default_time_to_live, 0)?;
    if cf.default_time_to_live > MAX_TTL {
        return Err(format!(
            "default_time_to_live must be less than or equal to {MAX_TTL} (got {})",
            cf.default_time_to_live
        ));
    }
    if let Some(period) = cf.memtable_flush_period_in_ms {
        at_least("memtable_flush_period_in_ms", period, 0)?;
    }
    if let Some(min) = cf.min_index_interval {
        at_least("min_index_interval", min, 1)?;
    }
    if let (Some(min), Some(max)) = (cf.min_index_interval, cf.max_index_interval) {
        if max < min {
            return Err(format!(
                "max_index_interval must be greater than or equal to min_index_interval ({min}) (got {max})"
            ));
        }
    }
    let mut names = HashSet::new();
    for name in cf.index_names() {
        if !valid_index_name(name) {
            return Err(format!("Illegal index name {name}"));
        }
        if !names.insert(name) {
            return Err(format!("Duplicate index name {name}"));
        }
    }
    Ok(())
}

/// Index names are unique in a keyspace, not only in a column family (KeyspaceMetadata.validate).
pub fn check_keyspace_index_names(ks: &KeyspaceDef) -> Result<(), String> {
    let mut names = HashSet::new();
    for cf in &ks.cf_defs {
        // Within one column family, check_cf_params names the duplicate in its own words.
        let mut this_cf = HashSet::new();
        for name in cf.index_names() {
            if this_cf.insert(name) && !names.insert(name) {
                return Err(format!("Duplicate index name {name} in keyspace {}", ks.name));
            }
        }
    }
    Ok(())
}

fn at_least(option: &str, value: i32, min: i32) -> Result<(), String> {
    if value < min {
        return Err(format!("{option} must be greater than or equal to {min} (got {value})"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ColumnDef, IndexType};

    fn indexed(cf: &str, names: &[&str]) -> CfDef {
        let mut d = CfDef::new("ks", cf);
        for (i, n) in names.iter().enumerate() {
            d.column_metadata.push(ColumnDef {
                name: vec![i as u8],
                validation_class: "org.apache.cassandra.db.marshal.BytesType".into(),
                index_type: Some(IndexType::Keys),
                index_name: Some(n.to_string()),
                index_options: Default::default(),
            });
        }
        d
    }

    #[test]
    fn index_names_are_unique_in_a_column_family_and_its_keyspace() {
        assert_eq!(check_cf_params(&indexed("a", &["i", "j"])), Ok(()));
        assert_eq!(check_cf_params(&indexed("a", &["i", "i"])), Err("Duplicate index name i".into()));
        assert_eq!(check_cf_params(&indexed("a", &["bad-name"])), Err("Illegal index name bad-name".into()));
        let mut ks = KeyspaceDef::new("ks");
        ks.cf_defs = vec![indexed("a", &["i"]), indexed("b", &["j"])];
        assert_eq!(check_keyspace_index_names(&ks), Ok(()));
        ks.cf_defs.push(indexed("c", &["i"]));
        assert_eq!(check_keyspace_index_names(&ks), Err("Duplicate index name i in keyspace ks".into()));
        assert!(ks.validate().is_err_and(|e| e.contains("Duplicate index name i in keyspace ks")));
    }

    #[test]
    fn numeric_options_in_3_11_words() {
        let mut cf = CfDef::new("ks", "cf");
        cf.default_time_to_live = MAX_TTL;
        assert_eq!(check_cf_params(&cf), Ok(()));
        cf.default_time_to_live = MAX_TTL + 1;
        assert_eq!(
            check_cf_params(&cf),
            Err("default_time_to_live must be less than or equal to 630720000 (got 630720001)".into())
        );
        cf.default_time_to_live = -1;
        assert_eq!(
            check_cf_params(&cf),
            Err("default_time_to_live must be greater than or equal to 0 (got -1)".into())
        );
        let mut cf = CfDef::new("ks", "cf");
        cf.min_index_interval = Some(128);
        cf.max_index_interval = Some(64);
        assert_eq!(
            check_cf_params(&cf),
            Err("max_index_interval must be greater than or equal to min_index_interval (128) (got 64)".into())
        );
    }
}
