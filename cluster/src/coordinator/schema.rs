//! Schema changes through the coordinator, so that every node learns of them (today: this
//! one), and the schema versions nodes report.

use std::collections::BTreeMap;

use model::schema::{CfDef, KeyspaceDef, UserTypeDef};
use uuid::Uuid;

use super::{Coordinator, Result};

/// Longest wait for the live nodes to merge a schema change before it returns.
const SCHEMA_AGREEMENT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

impl Coordinator {
    pub async fn add_keyspace(&self, def: KeyspaceDef) -> Result<Uuid> {
        let version = self.blocking(move |storage| Ok(storage.add_keyspace(def)?)).await?;
        self.spread_schema().await;
        Ok(version)
    }

    pub async fn update_keyspace(&self, def: KeyspaceDef) -> Result<Uuid> {
        let version = self.blocking(move |storage| Ok(storage.update_keyspace(def)?)).await?;
        self.spread_schema().await;
        Ok(version)
    }

    /// CREATE, ALTER or DROP TYPE: the keyspace's types, and the tables a change rewrites.
    pub async fn update_user_types(&self, keyspace: &str, types: Vec<UserTypeDef>, tables: Vec<CfDef>) -> Result<Uuid> {
        let keyspace = keyspace.to_string();
        let version = self.blocking(move |storage| Ok(storage.update_user_types(&keyspace, types, tables)?)).await?;
        self.spread_schema().await;
        Ok(version)
    }

    pub async fn drop_keyspace(&self, name: &str) -> Result<Uuid> {
        let name = name.to_string();
        let version = self.blocking(move |storage| Ok(storage.drop_keyspace(&name)?)).await?;
        self.spread_schema().await;
        Ok(version)
    }

    pub async fn add_column_family(&self, def: CfDef) -> Result<Uuid> {
        let version = self.blocking(move |storage| Ok(storage.add_column_family(def)?)).await?;
        self.spread_schema().await;
        Ok(version)
    }

    pub async fn update_column_family(&self, def: CfDef) -> Result<Uuid> {
        let version = self.blocking(move |storage| Ok(storage.update_column_family(def)?)).await?;
        self.spread_schema().await;
        Ok(version)
    }

    pub async fn drop_column_family(&self, keyspace: &str, cf: &str) -> Result<Uuid> {
        let (keyspace, cf) = (keyspace.to_string(), cf.to_string());
        let version = self.blocking(move |storage| Ok(storage.drop_column_family(&keyspace, &cf)?)).await?;
        self.spread_schema().await;
        Ok(version)
    }

    /// Pushes this node's schema to every live node and waits until they merged it, so the
    /// change can be used through any node once the call returns. Nodes that do not confirm in
    /// time (or are down) catch up through gossip later.
    async fn spread_schema(&self) {
        let Some(schema) = &self.schema else { return };
        let late = schema.push_to_live(&self.membership, SCHEMA_AGREEMENT_TIMEOUT).await;
        if !late.is_empty() {
            tracing::warn!(nodes = ?late, "schema change not confirmed by every live node; they will pull it");
        }
    }

    pub fn schema_version(&self) -> Uuid {
        self.storage.schema_version()
    }

    /// Schema version → the addresses of the nodes reporting it, each live node asked directly
    /// (describe_schema_versions; unreachable nodes appear under "UNREACHABLE").
    pub async fn schema_versions(&self) -> BTreeMap<String, Vec<String>> {
        if let Some(schema) = &self.schema {
            return schema.versions(&self.membership, self.settings.timeouts.request).await;
        }
        self.known_schema_versions()
    }

    /// Schema version → addresses, as gossip last reported them (no messages sent).
    pub fn known_schema_versions(&self) -> BTreeMap<String, Vec<String>> {
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
