//! Cluster and schema information, and schema changes, over the coordinator.

use std::collections::BTreeMap;

use cluster::coordinator::Coordinator;
use thrift_idl as t;
use uuid::Uuid;

use super::convert::{cf_def_from_thrift, ks_def_from_thrift, ks_def_to_thrift, token_range};
use super::error::{ire, TResult, ThriftError};

/// Every keyspace, the client's first and the node's own (`system`, `system_auth`, ...) after
/// them. Cassandra's order is its schema map's; clients such as Hector's host discovery call
/// describe_ring on the first keyspace not named `system`, which must not be one of the
/// node-local ones that have no ring here.
pub fn keyspaces(c: &Coordinator) -> Vec<t::KsDef> {
    let mut all: Vec<t::KsDef> = c.keyspaces().iter().map(ks_def_to_thrift).collect();
    all.sort_by_key(|k| super::validate::is_reserved_keyspace(&k.name));
    all
}

pub fn keyspace(c: &Coordinator, name: &str) -> TResult<t::KsDef> {
    c.keyspace(name).map(|k| ks_def_to_thrift(&k)).ok_or(ThriftError::NotFound)
}

pub fn ring(c: &Coordinator, keyspace: &str, local_dc_only: bool) -> TResult<Vec<t::TokenRange>> {
    let partitioner = c.partitioner();
    Ok(c.describe_ring(keyspace, local_dc_only)?.into_iter().map(|r| token_range(partitioner, r)).collect())
}

pub fn token_map(c: &Coordinator) -> BTreeMap<String, String> {
    let partitioner = c.partitioner();
    c.token_map().into_iter().map(|(token, address)| (partitioner.token_to_string(&token), address)).collect()
}

/// describe_splits(_ex): `(start, end, estimated rows)` of each piece, tokens as strings.
pub async fn splits(
    c: &Coordinator,
    ks: &str,
    cf: &str,
    start: &str,
    end: &str,
    keys_per_split: i32,
) -> TResult<Vec<(String, String, i64)>> {
    c.cf_metadata(ks, cf)?;
    if keys_per_split <= 0 {
        return Err(ire("keys_per_split must be positive"));
    }
    let p = c.partitioner();
    let start = p.token_from_string(start).map_err(|e| ire(e.to_string()))?;
    let end = p.token_from_string(end).map_err(|e| ire(e.to_string()))?;
    let pieces = c.describe_splits(ks, cf, start, end, keys_per_split as u64).await?;
    Ok(pieces
        .into_iter()
        .map(|(s, e, n)| (p.token_to_string(&s), p.token_to_string(&e), i64::try_from(n).unwrap_or(i64::MAX)))
        .collect())
}

fn version(v: Uuid) -> String {
    v.to_string()
}

/// As 3.11 (ThriftConversion, then MigrationManager.announceNewColumnFamily): the definition
/// is converted and checked first, then its keyspace must exist.
pub async fn add_column_family(c: &Coordinator, cf_def: t::CfDef) -> TResult<String> {
    let def = cf_def_from_thrift(cf_def, None).map_err(ire)?;
    if !c.has_keyspace(&def.keyspace) {
        return Err(ire(format!("Cannot add table '{}' to non existing keyspace '{}'.", def.name, def.keyspace)));
    }
    Ok(version(c.add_column_family(def).await?))
}

pub async fn update_column_family(c: &Coordinator, cf_def: t::CfDef) -> TResult<String> {
    let existing = c.cf_metadata(&cf_def.keyspace, &cf_def.name)?;
    if !existing.def.is_thrift_compatible() {
        return Err(ire(format!(
            "Cannot modify CQL3 table {} as it may break the schema. You should use cqlsh to modify CQL3 tables instead.",
            existing.name()
        )));
    }
    let def = cf_def_from_thrift(cf_def, Some(&existing.def)).map_err(ire)?;
    Ok(version(c.update_column_family(def).await?))
}

pub async fn drop_column_family(c: &Coordinator, ks: &str, cf: &str) -> TResult<String> {
    Ok(version(c.drop_column_family(ks, cf).await?))
}

pub async fn add_keyspace(c: &Coordinator, ks_def: t::KsDef) -> TResult<String> {
    let def = ks_def_from_thrift(ks_def).map_err(ire)?;
    Ok(version(c.add_keyspace(def).await?))
}

/// As 3.11's system_update_keyspace: the keyspace must exist (ThriftValidation's words), then
/// the definition must carry no column family.
pub async fn update_keyspace(c: &Coordinator, ks_def: t::KsDef) -> TResult<String> {
    if !c.has_keyspace(&ks_def.name) {
        return Err(ire(format!("Keyspace {} does not exist", ks_def.name)));
    }
    if !ks_def.cf_defs.is_empty() {
        return Err(ire("Keyspace update must not contain any table definitions."));
    }
    let def = ks_def_from_thrift(ks_def).map_err(ire)?;
    Ok(version(c.update_keyspace(def).await?))
}

/// 3.11 (MigrationManager.announceKeyspaceDrop) names a keyspace it cannot drop its own way.
pub async fn drop_keyspace(c: &Coordinator, name: &str) -> TResult<String> {
    let missing = || ire(format!("Cannot drop non existing keyspace '{name}'."));
    if !c.has_keyspace(name) {
        return Err(missing());
    }
    match c.drop_keyspace(name).await {
        Ok(v) => Ok(version(v)),
        // Dropped by another request in the meantime.
        Err(cluster::coordinator::CoordinatorError::Storage(storage::StorageError::UnknownKeyspace(_))) => {
            Err(missing())
        }
        Err(e) => Err(e.into()),
    }
}
