//! What the coordinator says about the ring: token ranges and their replicas, the token map,
//! the replicas of a key, and split points for Hadoop-style jobs.

use model::dht::{Partitioner, Range, Token};

use crate::Endpoint;
use membership::locator::replication::ReplicationStrategy;

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
    /// The ranges of the ring and their replicas for `keyspace`, in ring order; with
    /// `local_dc_only`, only the replicas in this node's data centre (describe_local_ring). A
    /// node-local keyspace (LocalStrategy, such as `system`) has no ring, as in Cassandra.
    pub fn describe_ring(&self, keyspace: &str, local_dc_only: bool) -> Result<Vec<RingRange>> {
        // 3.11's StorageService.describeRing words for a keyspace the schema does not hold.
        if !self.has_keyspace(keyspace) {
            return Err(CoordinatorError::Invalid(format!("No such keyspace: {keyspace}")));
        }
        let (def, map) = self.replicas_of(keyspace)?;
        if ReplicationStrategy::from_keyspace(&def).is_ok_and(|s| s == ReplicationStrategy::Local) {
            return Err(CoordinatorError::Invalid(format!("There is no ring for the keyspace: {keyspace}")));
        }
        let local_dc = self.local_dc();
        let snitch = self.membership.snitch();
        Ok(map
            .ranges()
            .map(|(range, replicas)| RingRange {
                start: range.left,
                end: range.right,
                endpoints: replicas
                    .iter()
                    .filter(|ep| !local_dc_only || snitch.datacenter(**ep) == local_dc)
                    .map(|ep| self.ring_endpoint(*ep))
                    .collect(),
            })
            .collect())
    }

    fn ring_endpoint(&self, ep: Endpoint) -> RingEndpoint {
        let snitch = self.membership.snitch();
        RingEndpoint {
            address: ep.ip().to_string(),
            rpc_address: self.membership.rpc_address(ep),
            datacenter: snitch.datacenter(ep),
            rack: snitch.rack(ep),
        }
    }

    /// Every token of the ring with the address of the node owning it.
    pub fn token_map(&self) -> Vec<(Token, String)> {
        let ring = self.membership.ring();
        ring.sorted_tokens().iter().zip(ring.sorted_owners()).map(|(t, ep)| (t.clone(), ep.ip().to_string())).collect()
    }

    /// The token of `key` and the addresses of its replicas in `keyspace`.
    pub fn natural_endpoints(&self, keyspace: &str, key: &[u8]) -> Result<(Token, Vec<String>)> {
        let (_, map) = self.replicas_of(keyspace)?;
        let token = self.token_of(key)?;
        let endpoints = map.endpoints_for(&token).iter().map(|ep| ep.ip().to_string()).collect();
        Ok((token, endpoints))
    }

    /// Each node's share of the ring by its tokens alone (`nodetool ring`'s "Owns"), by endpoint.
    pub fn ownership(&self) -> Vec<(Endpoint, f64)> {
        let ring = self.membership.ring();
        let tokens = ring.sorted_tokens();
        let owns = self.partitioner().describe_ownership(tokens);
        let mut by_node: std::collections::BTreeMap<Endpoint, f64> = std::collections::BTreeMap::new();
        for (ep, share) in ring.sorted_owners().iter().zip(owns) {
            *by_node.entry(*ep).or_default() += share;
        }
        by_node.into_iter().collect()
    }

    /// Each node's share of the data of `keyspace`, replicas counted (`nodetool status <ks>`).
    pub fn effective_ownership(&self, keyspace: &str) -> Result<Vec<(Endpoint, f64)>> {
        let (_, map) = self.replicas_of(keyspace)?;
        Ok(map.effective_ownership().into_iter().collect())
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
        // 3.11 never estimates a piece below the column family's min_index_interval (its
        // getSplits: an estimate is always above 0, CASSANDRA-7322).
        let min_rows =
            self.cf_metadata(keyspace, cf)?.def.min_index_interval.unwrap_or(model::schema::DEFAULT_MIN_INDEX_INTERVAL);
        let min_rows = u64::try_from(min_rows).unwrap_or(1);
        let (keyspace, cf) = (keyspace.to_string(), cf.to_string());
        self.blocking(move |storage| {
            let range = Range { left: start.clone(), right: end.clone() };
            let total_keys = storage.estimate_keys(&keyspace, &cf, &range)?;
            Ok(split_pieces(partitioner, &start, &end, total_keys, keys_per_split, min_rows))
        })
        .await
    }
}

/// `(start, end]` cut into pieces of about `keys_per_split` of its `total_keys` each: always
/// `start`, the distinct points between, then `end`, so at least one piece comes back, even
/// over the whole ring (`start == end`) or an empty range, as Cassandra's getSplits. Each
/// piece's estimate is at least `min_rows` (and at least 1).
fn split_pieces(
    partitioner: Partitioner,
    start: &Token,
    end: &Token,
    total_keys: u64,
    keys_per_split: u64,
    min_rows: u64,
) -> Vec<(Token, Token, u64)> {
    let pieces = ((total_keys / keys_per_split.max(1)) + 1).min(MAX_SPLITS) as usize;
    let tokens = partitioner.split(start, end, pieces);
    let per = (total_keys / (tokens.len().max(2) as u64 - 1)).max(min_rows).max(1);
    tokens.windows(2).map(|w| (w[0].clone(), w[1].clone(), per)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_ring_with_few_keys_is_one_piece() {
        for p in Partitioner::ALL {
            for t in [p.min_token(), p.token_for_key(b"k")] {
                assert_eq!(split_pieces(p, &t, &t, 3, 100, 1), vec![(t.clone(), t.clone(), 3)], "{p:?}");
            }
        }
    }

    #[test]
    fn an_empty_range_is_one_piece() {
        let p = Partitioner::Random;
        let (a, b) = (p.token_for_key(b"a"), p.token_for_key(b"b"));
        assert_eq!(split_pieces(p, &a, &b, 0, 10, 1), vec![(a, b, 1)]);
    }

    #[test]
    fn many_keys_make_pieces_that_chain_from_start_to_end() {
        let p = Partitioner::Murmur3;
        let t = p.token_for_key(b"k");
        let pieces = split_pieces(p, &t, &t, 1000, 100, 1);
        assert_eq!(pieces.len(), 11);
        assert_eq!(pieces.first().map(|x| &x.0), Some(&t));
        assert_eq!(pieces.last().map(|x| &x.1), Some(&t));
        assert!(pieces.windows(2).all(|w| w[0].1 == w[1].0));
    }

    #[test]
    fn no_piece_is_estimated_below_the_minimum() {
        let p = Partitioner::Random;
        let (a, b) = (p.token_for_key(b"a"), p.token_for_key(b"b"));
        // An empty range and a sparse one report min_index_interval rows, as 3.11 does.
        assert_eq!(split_pieces(p, &a, &b, 0, 10, 128), vec![(a.clone(), b.clone(), 128)]);
        let t = p.token_for_key(b"k");
        let pieces = split_pieces(p, &t, &t, 1000, 100, 128);
        assert!(pieces.iter().all(|x| x.2 == 128), "{pieces:?}");
        // A piece holding more keys than the minimum keeps its own estimate.
        let pieces = split_pieces(p, &t, &t, 100_000, 50_000, 128);
        assert!(pieces.iter().all(|x| x.2 > 128), "{pieces:?}");
    }
}
