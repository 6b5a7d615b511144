//! What the coordinator says about the ring: token ranges and their replicas, the token map,
//! the replicas of a key, and split points for Hadoop-style jobs.

use storage::dht::{Range, Token};

use super::{Coordinator, CoordinatorError, Result};

/// One token range of the ring and the nodes replicating it (describe_ring).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingRange {
    /// The range `(start, end]`.
    pub start: Token,
    pub end: Token,
    pub endpoints: Vec<RingEndpoint>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingEndpoint {
    pub address: String,
    pub rpc_address: String,
    pub datacenter: String,
    pub rack: String,
}

/// Split estimates never cut a range into more pieces than this.
const MAX_SPLITS: u64 = 1 << 16;

impl Coordinator {
    /// The ranges of the ring and their replicas for `keyspace`.
    pub fn describe_ring(&self, keyspace: &str) -> Result<Vec<RingRange>> {
        if !self.storage.has_keyspace(keyspace) {
            return Err(CoordinatorError::Invalid(format!("Keyspace '{keyspace}' does not exist")));
        }
        Ok(vec![RingRange {
            start: self.node.token.clone(),
            end: self.node.token.clone(),
            endpoints: vec![self.local_endpoint()],
        }])
    }

    fn local_endpoint(&self) -> RingEndpoint {
        RingEndpoint {
            address: self.node.listen_address.clone(),
            rpc_address: self.node.rpc_address.clone(),
            datacenter: self.node.datacenter.clone(),
            rack: self.node.rack.clone(),
        }
    }

    /// Every token of the ring with the address of the node owning it.
    pub fn token_map(&self) -> Vec<(Token, String)> {
        vec![(self.node.token.clone(), self.node.listen_address.clone())]
    }

    /// The token of `key` and the addresses of its replicas in `keyspace`.
    pub fn natural_endpoints(&self, keyspace: &str, key: &[u8]) -> Result<(Token, Vec<String>)> {
        if !self.storage.has_keyspace(keyspace) {
            return Err(CoordinatorError::Invalid(format!("Keyspace '{keyspace}' does not exist")));
        }
        let token = self.partitioner().try_token_for_key(key).map_err(|e| CoordinatorError::Invalid(e.to_string()))?;
        // One node holds every key, whatever the replication factor.
        Ok((token, vec![self.node.listen_address.clone()]))
    }

    /// Each node's share of the ring, by address (`nodetool ring`'s "Owns").
    pub fn ownership(&self) -> Vec<(String, f64)> {
        let owns = self
            .partitioner()
            .describe_ownership(std::slice::from_ref(&self.node.token))
            .first()
            .copied()
            .unwrap_or(0.0);
        vec![(self.node.listen_address.clone(), owns)]
    }

    /// Splits `(start, end]` of a column family into pieces of about `keys_per_split` keys each,
    /// estimated from the SSTables' key samples: `(start, end, estimated keys)` per piece.
    pub async fn describe_splits(
        &self,
        keyspace: &str,
        cf: &str,
        start: Token,
        end: Token,
        keys_per_split: u64,
    ) -> Result<Vec<(Token, Token, u64)>> {
        if keys_per_split == 0 {
            return Err(CoordinatorError::Invalid("keys_per_split must be positive".into()));
        }
        let partitioner = self.partitioner();
        let (keyspace, cf) = (keyspace.to_string(), cf.to_string());
        self.blocking(move |storage| {
            let range = Range { left: start.clone(), right: end.clone() };
            let total_keys = storage.estimate_keys(&keyspace, &cf, &range)?;
            let pieces = ((total_keys / keys_per_split) + 1).min(MAX_SPLITS) as usize;
            let mut tokens = vec![start.clone()];
            if pieces > 1 {
                tokens.extend(partitioner.split(&start, &end, pieces));
            }
            tokens.push(end);
            tokens.dedup();
            let per = (total_keys / (tokens.len().max(2) as u64 - 1)).max(1);
            Ok(tokens.windows(2).map(|w| (w[0].clone(), w[1].clone(), per)).collect())
        })
        .await
    }
}
