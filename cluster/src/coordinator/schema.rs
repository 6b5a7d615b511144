//! Schema changes through the coordinator, so that every node learns of them (today: this
//! one), and the schema versions nodes report.

use std::collections::BTreeMap;

use storage::schema::{CfDef, KeyspaceDef};
use uuid::Uuid;

use super::{Coordinator, Result};

impl Coordinator {
    pub async fn add_keyspace(&self, def: KeyspaceDef) -> Result<Uuid> {
        self.blocking(move |storage| Ok(storage.add_keyspace(def)?)).await
    }

    pub async fn update_keyspace(&self, def: KeyspaceDef) -> Result<Uuid> {
        self.blocking(move |storage| Ok(storage.update_keyspace(def)?)).await
    }

    pub async fn drop_keyspace(&self, name: &str) -> Result<Uuid> {
        let name = name.to_string();
        self.blocking(move |storage| Ok(storage.drop_keyspace(&name)?)).await
    }

    pub async fn add_column_family(&self, def: CfDef) -> Result<Uuid> {
        self.blocking(move |storage| Ok(storage.add_column_family(def)?)).await
    }

    pub async fn update_column_family(&self, def: CfDef) -> Result<Uuid> {
        self.blocking(move |storage| Ok(storage.update_column_family(def)?)).await
    }

    pub async fn drop_column_family(&self, keyspace: &str, cf: &str) -> Result<Uuid> {
        let (keyspace, cf) = (keyspace.to_string(), cf.to_string());
        self.blocking(move |storage| Ok(storage.drop_column_family(&keyspace, &cf)?)).await
    }

    pub fn schema_version(&self) -> Uuid {
        self.storage.schema_version()
    }

    /// Schema version → the addresses of the nodes reporting it (describe_schema_versions;
    /// unreachable nodes appear under "UNREACHABLE").
    pub fn schema_versions(&self) -> BTreeMap<String, Vec<String>> {
        let mut versions: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let local = self.membership.local();
        for ep in self.membership.all_endpoints() {
            let version = if ep == local {
                self.schema_version().to_string()
            } else if !self.membership.is_alive(ep) {
                "UNREACHABLE".to_string()
            } else {
                match self.membership.peer(ep).and_then(|p| p.schema_version) {
                    Some(v) => v,
                    None => "UNREACHABLE".to_string(),
                }
            };
            versions.entry(version).or_default().push(ep.ip().to_string());
        }
        versions
    }
}
