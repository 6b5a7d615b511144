//! Replication strategies: which nodes hold the replicas of a token (Cassandra's
//! `AbstractReplicationStrategy` and its subclasses in `locator`).
//!
//! | Strategy (aliases) | Options | Replicas |
//! |---|---|---|
//! | SimpleStrategy (RackUnawareStrategy) | `replication_factor` | the next distinct nodes on the ring |
//! | OldNetworkTopologyStrategy (RackAwareStrategy) | `replication_factor` | primary, one in another DC, one on another rack, then ring order |
//! | NetworkTopologyStrategy (DatacenterShardStrategy) | `<dc>: <replicas>` per DC | per DC, distinct racks first |
//! | LocalStrategy | none | the local node only (node-local system data) |
//!
//! [`ReplicationStrategy::natural_endpoints`] computes one token's replicas from the ring; the
//! request path uses a [`ReplicaMap`], built once per ring or schema change, which answers by
//! binary search and also knows the pending (write-only) replicas of joining and leaving nodes.

mod placement;
mod replica_map;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use model::dht::Token;
use model::schema::KeyspaceDef;

pub use replica_map::ReplicaMap;

use crate::locator::snitch::Snitch;
use crate::locator::token_metadata::TokenMetadata;
use crate::Endpoint;
use placement::{Placement, RingView};

const LOCATOR: &str = "org.apache.cassandra.locator.";
const REPLICATION_FACTOR: &str = "replication_factor";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplicationError {
    #[error("keyspace {keyspace}: unable to find replication strategy class {class:?}")]
    UnknownStrategy { keyspace: String, class: String },
    #[error("keyspace {keyspace}: {strategy} requires a replication_factor strategy option")]
    MissingReplicationFactor { keyspace: String, strategy: &'static str },
    #[error("keyspace {keyspace}: replication factor {option} must be a non-negative integer; found {value:?}")]
    InvalidReplicationFactor { keyspace: String, option: String, value: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplicationStrategy {
    Simple {
        replication_factor: usize,
    },
    OldNetworkTopology {
        replication_factor: usize,
    },
    /// Replicas per data centre name. Data centres with no members are skipped.
    NetworkTopology {
        datacenters: BTreeMap<String, usize>,
    },
    Local,
}

impl ReplicationStrategy {
    /// The keyspace's strategy from its class name (short, full, or a 0.6-era alias) and options.
    pub fn from_keyspace(ks: &KeyspaceDef) -> Result<ReplicationStrategy, ReplicationError> {
        ReplicationStrategy::from_options(&ks.name, &ks.strategy_class, &ks.strategy_options)
    }

    /// As [`ReplicationStrategy::from_keyspace`]; `keyspace` is only used in errors.
    ///
    /// Options other than the ones a strategy reads are ignored: the Thrift front end refuses
    /// unknown options when a keyspace is created, and schemas written by older versions must
    /// still load. NetworkTopologyStrategy ignores `replication_factor` (0.7-era clients send it
    /// alongside the per-DC factors; Cassandra 3.11 refuses it).
    pub fn from_options(
        keyspace: &str,
        class: &str,
        options: &BTreeMap<String, String>,
    ) -> Result<ReplicationStrategy, ReplicationError> {
        let trimmed = class.trim();
        let short = trimmed.strip_prefix(LOCATOR).unwrap_or(trimmed);
        let parse = |option: &str, value: &str| {
            value.trim().parse::<usize>().map_err(|_| ReplicationError::InvalidReplicationFactor {
                keyspace: keyspace.to_string(),
                option: option.to_string(),
                value: value.to_string(),
            })
        };
        let replication_factor = |strategy: &'static str| match options.get(REPLICATION_FACTOR) {
            Some(v) => parse(REPLICATION_FACTOR, v),
            None => Err(ReplicationError::MissingReplicationFactor { keyspace: keyspace.to_string(), strategy }),
        };
        match short {
            // 0.6 names: RackUnawareStrategy became SimpleStrategy in 0.7, RackAwareStrategy
            // OldNetworkTopologyStrategy, and 0.7's DatacenterShardStrategy was renamed
            // NetworkTopologyStrategy.
            "SimpleStrategy" | "RackUnawareStrategy" => {
                Ok(ReplicationStrategy::Simple { replication_factor: replication_factor("SimpleStrategy")? })
            }
            "OldNetworkTopologyStrategy" | "RackAwareStrategy" => Ok(ReplicationStrategy::OldNetworkTopology {
                replication_factor: replication_factor("OldNetworkTopologyStrategy")?,
            }),
            "NetworkTopologyStrategy" | "DatacenterShardStrategy" => {
                let mut datacenters = BTreeMap::new();
                for (dc, value) in options.iter().filter(|(k, _)| !k.eq_ignore_ascii_case(REPLICATION_FACTOR)) {
                    datacenters.insert(dc.clone(), parse(dc, value)?);
                }
                Ok(ReplicationStrategy::NetworkTopology { datacenters })
            }
            "LocalStrategy" => Ok(ReplicationStrategy::Local),
            _ => Err(ReplicationError::UnknownStrategy { keyspace: keyspace.to_string(), class: class.to_string() }),
        }
    }

    /// The full class name Cassandra 0.7+ uses for this strategy.
    pub fn class_name(&self) -> &'static str {
        match self {
            ReplicationStrategy::Simple { .. } => "org.apache.cassandra.locator.SimpleStrategy",
            ReplicationStrategy::OldNetworkTopology { .. } => "org.apache.cassandra.locator.OldNetworkTopologyStrategy",
            ReplicationStrategy::NetworkTopology { .. } => "org.apache.cassandra.locator.NetworkTopologyStrategy",
            ReplicationStrategy::Local => "org.apache.cassandra.locator.LocalStrategy",
        }
    }

    /// Replicas asked for in total (NetworkTopologyStrategy: the sum over data centres).
    pub fn replication_factor(&self) -> usize {
        match self {
            ReplicationStrategy::Simple { replication_factor }
            | ReplicationStrategy::OldNetworkTopology { replication_factor } => *replication_factor,
            ReplicationStrategy::NetworkTopology { datacenters } => datacenters.values().sum(),
            ReplicationStrategy::Local => 1,
        }
    }

    /// Replicas asked for in one data centre, for LOCAL_QUORUM and EACH_QUORUM. Only
    /// NetworkTopologyStrategy places replicas per DC (0 for a DC it does not name); for the
    /// others this is the total, as Cassandra's `ConsistencyLevel.localQuorumFor` falls back to.
    pub fn dc_replication_factor(&self, dc: &str) -> usize {
        match self {
            ReplicationStrategy::NetworkTopology { datacenters } => datacenters.get(dc).copied().unwrap_or(0),
            _ => self.replication_factor(),
        }
    }

    /// The replicas of `token`, primary first, computed from the ring (and the snitch's view of
    /// every member, read once per call). The request path should use a [`ReplicaMap`].
    pub fn natural_endpoints(
        &self,
        token: &Token,
        tm: &TokenMetadata,
        snitch: &dyn Snitch,
        local: Endpoint,
    ) -> Vec<Endpoint> {
        if *self == ReplicationStrategy::Local {
            return vec![local];
        }
        let Some(start) = tm.first_token_index(token) else {
            return Vec::new();
        };
        let view = RingView::new(tm, snitch);
        let mut nodes = Vec::new();
        Placement::new(self, &view).place(&view, start, &mut nodes);
        nodes.iter().filter_map(|&n| view.nodes.get(n).copied()).collect()
    }
}
