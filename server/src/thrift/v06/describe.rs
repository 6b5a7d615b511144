//! 0.6's descriptions of the cluster and the schema: its property calls, the map form of
//! `describe_keyspace`, `describe_ring` (user keyspaces only) and token-only `describe_splits`,
//! built on the same coordinator answers as the 20.1.0 calls ([`crate::thrift::describe`]).

use std::collections::{BTreeMap, BTreeSet};

use cluster::coordinator::Coordinator;
use model::schema::{ColumnType, KeyspaceDef};
use thrift_idl::v06 as v;

use super::convert;
use crate::thrift::describe as shared;
use crate::thrift::error::{ire, TResult, ThriftError};
use crate::thrift::handler::ThriftContext;
use crate::thrift::validate::is_reserved_keyspace;

/// What `get_string_property("config file")` answers when the file cannot be read (0.6's words).
const NO_CONFIG_FILE: &str = "file not found!";

/// `get_string_property`: "cluster name", "config file" (the text of storage-conf.xml, read
/// now as 0.6 did), "token map" (JSON: token → address), "version"; "?" for anything else.
pub async fn string_property(ctx: &ThriftContext, property: &str) -> TResult<String> {
    let c = &ctx.coordinator;
    Ok(match property {
        "cluster name" => c.cluster_name().to_string(),
        "config file" => match &ctx.config_file {
            Some(path) => tokio::fs::read_to_string(path).await.unwrap_or_else(|_| NO_CONFIG_FILE.to_string()),
            None => NO_CONFIG_FILE.to_string(),
        },
        "token map" => {
            serde_json::to_string(&shared::token_map(c)).map_err(|e| ThriftError::Internal(e.to_string()))?
        }
        "version" => v::VERSION.to_string(),
        _ => "?".to_string(),
    })
}

/// Every keyspace, `system` included (describe_keyspaces, get_string_list_property).
pub fn keyspace_names(c: &Coordinator) -> BTreeSet<String> {
    c.keyspaces().into_iter().map(|k| k.name).filter(|name| known_to_0_6(name)).collect()
}

/// 0.6 had one system keyspace, `system`; the other four of 3.11 (`system_schema`,
/// `system_auth`, `system_distributed`, `system_traces`) are not shown to its clients.
fn known_to_0_6(keyspace: &str) -> bool {
    keyspace == "system" || !is_reserved_keyspace(keyspace)
}

/// describe_keyspace: column family → {"Type", "CompareWith", "CompareSubcolumnsWith" (super
/// column families only), "Desc"}. NotFoundException for an unknown keyspace.
pub fn keyspace(c: &Coordinator, name: &str) -> TResult<BTreeMap<String, BTreeMap<String, String>>> {
    c.keyspace(name).filter(|ks| known_to_0_6(&ks.name)).map(|ks| keyspace_map(&ks)).ok_or(ThriftError::NotFound)
}

pub fn keyspace_map(ks: &KeyspaceDef) -> BTreeMap<String, BTreeMap<String, String>> {
    ks.cf_defs
        .iter()
        .map(|cf| {
            let kind = cf.column_type.as_str();
            let mut props = BTreeMap::from([
                ("Type".to_string(), kind.to_string()),
                ("CompareWith".to_string(), cf.comparator_type.clone()),
            ]);
            if cf.column_type == ColumnType::Super {
                if let Some(sub) = &cf.subcomparator_type {
                    props.insert("CompareSubcolumnsWith".to_string(), sub.clone());
                }
            }
            // Without a comment 0.6 described the column family in a few lines of its own.
            let desc = cf.comment.clone().unwrap_or_else(|| {
                format!(
                    "{}.{}\nColumn Family Type: {kind}\nColumns Sorted By: {}\n",
                    ks.name, cf.name, cf.comparator_type
                )
            });
            props.insert("Desc".to_string(), desc);
            (cf.name.clone(), props)
        })
        .collect()
}

/// describe_ring: as 20.1.0's, for user keyspaces only.
pub fn ring(c: &Coordinator, keyspace: &str) -> TResult<Vec<v::TokenRange>> {
    if is_reserved_keyspace(keyspace) || !c.has_keyspace(keyspace) {
        return Err(ire(format!("There is no ring for the keyspace: {keyspace}")));
    }
    Ok(shared::ring(c, keyspace, false)?.into_iter().map(convert::token_range_06).collect())
}

/// describe_splits without a column family: 0.6 sampled the keys of every column family
/// together. This takes the split points of the user column family that gives the most
/// pieces (the biggest one dominates such a sample anyway): `[start, points..., end]`.
pub async fn splits(c: &Coordinator, start: String, end: String, keys_per_split: i32) -> TResult<Vec<String>> {
    let mut best: Vec<(String, String, i64)> = Vec::new();
    for ks in c.keyspaces().into_iter().filter(|ks| !is_reserved_keyspace(&ks.name)) {
        for cf in &ks.cf_defs {
            let pieces = shared::splits(c, &ks.name, &cf.name, &start, &end, keys_per_split).await?;
            if pieces.len() > best.len() {
                best = pieces;
            }
        }
    }
    if best.is_empty() {
        return Ok(vec![start, end]);
    }
    let mut tokens: Vec<String> = best.iter().map(|(s, _, _)| s.clone()).collect();
    tokens.extend(best.last().map(|(_, e, _)| e.clone()));
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::schema::CfDef;

    #[test]
    fn keyspace_map_has_0_6_properties() {
        let mut ks = KeyspaceDef::new("Blog".to_string());
        let mut entries = CfDef::new("Blog".to_string(), "Entries".to_string());
        entries.comparator_type = "org.apache.cassandra.db.marshal.BytesType".into();
        entries.comment = Some("posts".into());
        let mut comments = CfDef::new("Blog".to_string(), "Comments".to_string());
        comments.column_type = ColumnType::Super;
        comments.comparator_type = "org.apache.cassandra.db.marshal.TimeUUIDType".into();
        comments.subcomparator_type = Some("org.apache.cassandra.db.marshal.UTF8Type".into());
        ks.cf_defs = vec![entries, comments];
        let map = keyspace_map(&ks);
        let e = map.get("Entries").expect("Entries");
        assert_eq!(e.get("Type").map(String::as_str), Some("Standard"));
        assert_eq!(e.get("Desc").map(String::as_str), Some("posts"));
        assert!(!e.contains_key("CompareSubcolumnsWith"));
        let c = map.get("Comments").expect("Comments");
        assert_eq!(c.get("Type").map(String::as_str), Some("Super"));
        assert_eq!(c.get("CompareWith").map(String::as_str), Some("org.apache.cassandra.db.marshal.TimeUUIDType"));
        assert_eq!(
            c.get("CompareSubcolumnsWith").map(String::as_str),
            Some("org.apache.cassandra.db.marshal.UTF8Type")
        );
        let desc = c.get("Desc").expect("a generated description");
        assert!(desc.starts_with("Blog.Comments\n") && desc.contains("Column Family Type: Super"), "{desc}");
    }
}
