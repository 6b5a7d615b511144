//! The token ring: which endpoint owns which tokens (Cassandra's `locator.TokenMetadata`).
//!
//! A [`TokenMetadata`] holds the normal tokens of every member (several per endpoint with
//! virtual nodes), the tokens of bootstrapping endpoints, the set of leaving endpoints and the
//! new token of each moving one. It is a
//! plain value: the coordinator keeps an `Arc<TokenMetadata>` and, on a ring change, clones it,
//! changes the clone and swaps the `Arc` (clone-on-write), so readers never lock. Lookups are
//! binary searches over the sorted token list.
//!
//! Also here: the token a new node picks at first start ([`choose_token`], [`random_tokens`]).

use std::collections::{BTreeMap, BTreeSet};

use model::dht::{Partitioner, Range, Token};
use rand::Rng;

use crate::Endpoint;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RingError {
    /// Cassandra asserts this never happens; a member always has at least one token.
    #[error("endpoint {endpoint} was given no tokens")]
    NoTokens { endpoint: Endpoint },
    /// Two nodes may not claim one token while joining (Cassandra's "Bootstrap Token collision").
    #[error("bootstrap token collision between {existing} and {endpoint} (token {token})")]
    BootstrapTokenCollision { token: String, existing: Endpoint, endpoint: Endpoint },
    /// A node may move only to a token nobody holds or claims.
    #[error("{endpoint} cannot move to token {token}: {existing} holds it")]
    MoveTokenCollision { token: String, existing: Endpoint, endpoint: Endpoint },
    /// Only a member with one token moves (Cassandra refuses to move a node with virtual nodes).
    #[error("{endpoint} cannot move: it has {tokens} tokens, and only a node with one token moves")]
    NotMovable { endpoint: Endpoint, tokens: usize },
}

/// The ring. See the module documentation for how it is shared.
#[derive(Debug, Clone)]
pub struct TokenMetadata {
    partitioner: Partitioner,
    /// Every normal token, ascending.
    tokens: Vec<Token>,
    /// `owners[i]` owns `tokens[i]`.
    owners: Vec<Endpoint>,
    /// Each member's normal tokens, ascending; never an empty list.
    endpoint_tokens: BTreeMap<Endpoint, Vec<Token>>,
    /// Tokens claimed by nodes that are joining and not yet in the ring.
    bootstrap_tokens: BTreeMap<Token, Endpoint>,
    /// Members that are streaming their data away before they leave (their tokens stay normal
    /// until they are removed).
    leaving: BTreeSet<Endpoint>,
    /// Members moving to a new token (`nodetool move`): their current token stays normal until
    /// they announce NORMAL at the new one.
    moving: BTreeMap<Endpoint, Token>,
}

impl TokenMetadata {
    pub fn new(partitioner: Partitioner) -> TokenMetadata {
        TokenMetadata {
            partitioner,
            tokens: Vec::new(),
            owners: Vec::new(),
            endpoint_tokens: BTreeMap::new(),
            bootstrap_tokens: BTreeMap::new(),
            leaving: BTreeSet::new(),
            moving: BTreeMap::new(),
        }
    }

    pub fn partitioner(&self) -> Partitioner {
        self.partitioner
    }

    /// Makes `tokens` the normal tokens of `endpoint`, replacing any it had. A token that
    /// belonged to another endpoint is taken from it (the last node to claim a token wins, as
    /// in Cassandra); those are returned with their previous owner so the caller can log them.
    /// The endpoint stops being bootstrapping, leaving or moving.
    pub fn update_normal_tokens(
        &mut self,
        endpoint: Endpoint,
        tokens: impl IntoIterator<Item = Token>,
    ) -> Result<Vec<(Token, Endpoint)>, RingError> {
        let new_tokens: BTreeSet<Token> = tokens.into_iter().collect();
        if new_tokens.is_empty() {
            return Err(RingError::NoTokens { endpoint });
        }
        self.bootstrap_tokens.retain(|_, ep| *ep != endpoint);
        self.leaving.remove(&endpoint);
        self.moving.remove(&endpoint);

        let mut ring = self.ring_map();
        ring.retain(|_, ep| *ep != endpoint);
        let mut taken = Vec::new();
        for token in new_tokens {
            if let Some(previous) = ring.insert(token.clone(), endpoint) {
                tracing::warn!(
                    "token {} changing ownership from {previous} to {endpoint}",
                    self.partitioner.token_to_string(&token)
                );
                taken.push((token, previous));
            }
        }
        self.set_ring(ring);
        Ok(taken)
    }

    /// Records the tokens a joining node will take. They are not part of the ring yet; they
    /// only give the node pending (write-only) ranges.
    pub fn add_bootstrap_tokens(
        &mut self,
        endpoint: Endpoint,
        tokens: impl IntoIterator<Item = Token>,
    ) -> Result<(), RingError> {
        let tokens: BTreeSet<Token> = tokens.into_iter().collect();
        if tokens.is_empty() {
            return Err(RingError::NoTokens { endpoint });
        }
        for token in &tokens {
            let existing = self.bootstrap_tokens.get(token).copied().or_else(|| self.normal_owner(token));
            if let Some(existing) = existing.filter(|ep| *ep != endpoint) {
                return Err(RingError::BootstrapTokenCollision {
                    token: self.partitioner.token_to_string(token),
                    existing,
                    endpoint,
                });
            }
        }
        self.bootstrap_tokens.retain(|_, ep| *ep != endpoint);
        self.bootstrap_tokens.extend(tokens.into_iter().map(|t| (t, endpoint)));
        Ok(())
    }

    /// Marks a member as leaving: its ranges become pending on the nodes that will take them.
    pub fn add_leaving_endpoint(&mut self, endpoint: Endpoint) {
        self.leaving.insert(endpoint);
    }

    /// Marks a member with one token as moving to `token`: the ranges it will take become
    /// pending on it, and those it gives up on the nodes that will take them.
    pub fn add_moving_endpoint(&mut self, endpoint: Endpoint, token: Token) -> Result<(), RingError> {
        let tokens = self.tokens_of(endpoint).len();
        if tokens != 1 {
            return Err(RingError::NotMovable { endpoint, tokens });
        }
        let claimed = self.moving.iter().find(|(ep, t)| **t == token && **ep != endpoint).map(|(ep, _)| *ep);
        let existing = self.normal_owner(&token).or_else(|| self.bootstrap_tokens.get(&token).copied()).or(claimed);
        if let Some(existing) = existing {
            return Err(RingError::MoveTokenCollision {
                token: self.partitioner.token_to_string(&token),
                existing,
                endpoint,
            });
        }
        self.moving.insert(endpoint, token);
        Ok(())
    }

    /// Forgets the endpoint entirely: normal and bootstrap tokens, leaving and moving state.
    pub fn remove_endpoint(&mut self, endpoint: Endpoint) {
        self.bootstrap_tokens.retain(|_, ep| *ep != endpoint);
        self.leaving.remove(&endpoint);
        self.moving.remove(&endpoint);
        if self.endpoint_tokens.contains_key(&endpoint) {
            let mut ring = self.ring_map();
            ring.retain(|_, ep| *ep != endpoint);
            self.set_ring(ring);
        }
    }

    /// Whether the endpoint owns normal tokens.
    pub fn is_member(&self, endpoint: Endpoint) -> bool {
        self.endpoint_tokens.contains_key(&endpoint)
    }

    pub fn is_leaving(&self, endpoint: Endpoint) -> bool {
        self.leaving.contains(&endpoint)
    }

    /// The endpoint's normal tokens, ascending; empty for a non-member.
    pub fn tokens_of(&self, endpoint: Endpoint) -> &[Token] {
        self.endpoint_tokens.get(&endpoint).map_or(&[], Vec::as_slice)
    }

    /// Every member (endpoints with normal tokens), in address order.
    pub fn endpoints(&self) -> impl ExactSizeIterator<Item = Endpoint> + '_ {
        self.endpoint_tokens.keys().copied()
    }

    pub fn member_count(&self) -> usize {
        self.endpoint_tokens.len()
    }

    /// Every normal token, ascending.
    pub fn sorted_tokens(&self) -> &[Token] {
        &self.tokens
    }

    /// The owners of [`TokenMetadata::sorted_tokens`], position by position.
    pub fn sorted_owners(&self) -> &[Endpoint] {
        &self.owners
    }

    pub fn bootstrap_tokens(&self) -> &BTreeMap<Token, Endpoint> {
        &self.bootstrap_tokens
    }

    pub fn leaving_endpoints(&self) -> &BTreeSet<Endpoint> {
        &self.leaving
    }

    /// Each moving member with the token it is moving to.
    pub fn moving_endpoints(&self) -> &BTreeMap<Endpoint, Token> {
        &self.moving
    }

    pub fn is_moving(&self, endpoint: Endpoint) -> bool {
        self.moving.contains_key(&endpoint)
    }

    /// A copy with the normal tokens only: no bootstrapping tokens, nobody leaving or moving
    /// (Cassandra's `cloneOnlyTokenMap`).
    pub fn normal_ring(&self) -> TokenMetadata {
        TokenMetadata {
            partitioner: self.partitioner,
            tokens: self.tokens.clone(),
            owners: self.owners.clone(),
            endpoint_tokens: self.endpoint_tokens.clone(),
            bootstrap_tokens: BTreeMap::new(),
            leaving: BTreeSet::new(),
            moving: BTreeMap::new(),
        }
    }

    /// The endpoint whose primary range holds `token`: the owner of the first ring token
    /// `>= token`, wrapping to the first token. For a ring token that is its own owner.
    pub fn owner_of(&self, token: &Token) -> Option<Endpoint> {
        self.first_token_index(token).and_then(|i| self.owners.get(i).copied())
    }

    /// The owner of exactly this token, if it is a normal token (Cassandra's `getEndpoint`).
    pub fn normal_owner(&self, token: &Token) -> Option<Endpoint> {
        self.tokens.binary_search(token).ok().and_then(|i| self.owners.get(i).copied())
    }

    /// Index of the first ring token `>= token`, wrapping to 0 past the last one; `None` for an
    /// empty ring (Cassandra's `firstTokenIndex`).
    pub fn first_token_index(&self, token: &Token) -> Option<usize> {
        if self.tokens.is_empty() {
            return None;
        }
        let i = self.tokens.partition_point(|t| t < token);
        Some(if i == self.tokens.len() { 0 } else { i })
    }

    /// Every ring token with its owner, once each, starting at the first token `>= start` and
    /// wrapping around the end of the ring (Cassandra's `ringIterator` without the minimum).
    pub fn ring_walk(&self, start: &Token) -> RingWalk<'_> {
        RingWalk { tm: self, start: self.first_token_index(start).unwrap_or(0), step: 0 }
    }

    /// The token just before `token` on the ring (wrapping). `token` must be a normal token.
    pub fn predecessor(&self, token: &Token) -> Option<&Token> {
        let i = self.tokens.binary_search(token).ok()?;
        let p = if i == 0 { self.tokens.len() - 1 } else { i - 1 };
        self.tokens.get(p)
    }

    /// The ranges the endpoint is the primary owner of: `(predecessor, token]` for each of its
    /// tokens. A one-token ring gives `(t, t]`, the whole ring.
    pub fn primary_ranges(&self, endpoint: Endpoint) -> Vec<Range> {
        self.tokens_of(endpoint)
            .iter()
            .filter_map(|t| self.predecessor(t).map(|p| Range::new(p.clone(), t.clone())))
            .collect()
    }

    fn ring_map(&self) -> BTreeMap<Token, Endpoint> {
        self.tokens.iter().cloned().zip(self.owners.iter().copied()).collect()
    }

    fn set_ring(&mut self, ring: BTreeMap<Token, Endpoint>) {
        self.endpoint_tokens.clear();
        self.tokens = Vec::with_capacity(ring.len());
        self.owners = Vec::with_capacity(ring.len());
        for (token, endpoint) in ring {
            // Tokens arrive in ascending order, so each endpoint's list stays sorted.
            self.endpoint_tokens.entry(endpoint).or_default().push(token.clone());
            self.tokens.push(token);
            self.owners.push(endpoint);
        }
    }
}

/// See [`TokenMetadata::ring_walk`].
pub struct RingWalk<'a> {
    tm: &'a TokenMetadata,
    start: usize,
    step: usize,
}

impl<'a> Iterator for RingWalk<'a> {
    type Item = (&'a Token, Endpoint);

    fn next(&mut self) -> Option<Self::Item> {
        let n = self.tm.tokens.len();
        if self.step >= n {
            return None;
        }
        let i = (self.start + self.step) % n;
        self.step += 1;
        Some((self.tm.tokens.get(i)?, *self.tm.owners.get(i)?))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.tm.tokens.len().saturating_sub(self.step);
        (left, Some(left))
    }
}

impl ExactSizeIterator for RingWalk<'_> {}

/// The token a node takes at first start when it has no `InitialToken` and one token
/// (`num_tokens` = 1): the midpoint of the largest primary range of the member that owns the most
/// of the ring, so the new node takes half of the most loaded node's biggest range (Cassandra
/// 0.6's balanced token, measured by token ownership instead of the data load). An empty ring or
/// a ring of one node gives a random token.
pub fn choose_token(partitioner: Partitioner, tm: &TokenMetadata) -> Token {
    choose_token_with(partitioner, tm, &mut rand::thread_rng())
}

/// [`choose_token`] with the caller's random source.
pub fn choose_token_with(partitioner: Partitioner, tm: &TokenMetadata, rng: &mut impl Rng) -> Token {
    if tm.member_count() <= 1 {
        return free_random_token(partitioner, tm, rng);
    }
    let ownership = partitioner.describe_ownership(tm.sorted_tokens());
    let mut per_endpoint: BTreeMap<Endpoint, f64> = BTreeMap::new();
    for (owner, share) in tm.sorted_owners().iter().zip(&ownership) {
        *per_endpoint.entry(*owner).or_default() += share;
    }
    // Ties go to the lowest address, so the choice is deterministic.
    let heaviest = per_endpoint.iter().fold(None, |best: Option<(Endpoint, f64)>, (ep, share)| match best {
        Some((_, s)) if s >= *share => best,
        _ => Some((*ep, *share)),
    });
    let largest_range = heaviest.and_then(|(ep, _)| {
        tm.sorted_tokens().iter().zip(&ownership).zip(tm.sorted_owners()).filter(|(_, owner)| **owner == ep).fold(
            None,
            |best: Option<(&Token, f64)>, ((t, share), _)| match best {
                Some((_, s)) if s >= *share => best,
                _ => Some((t, *share)),
            },
        )
    });
    if let Some((right, _)) = largest_range {
        if let Some(left) = tm.predecessor(right) {
            let mid = partitioner.midpoint(left, right);
            // Adjacent tokens have no midpoint strictly between them.
            if tm.normal_owner(&mid).is_none() && !tm.bootstrap_tokens().contains_key(&mid) {
                return mid;
            }
        }
    }
    free_random_token(partitioner, tm, rng)
}

/// `n` distinct random tokens that no member or joining node holds, for `num_tokens` > 1
/// (Cassandra's `BootStrapper.getRandomTokens`).
pub fn random_tokens(partitioner: Partitioner, n: usize, tm: &TokenMetadata) -> Vec<Token> {
    random_tokens_with(partitioner, n, tm, &mut rand::thread_rng())
}

/// [`random_tokens`] with the caller's random source.
pub fn random_tokens_with(partitioner: Partitioner, n: usize, tm: &TokenMetadata, rng: &mut impl Rng) -> Vec<Token> {
    let mut chosen = BTreeSet::new();
    // Every partitioner draws from a space of at least 2^64 tokens, so collisions are rare and
    // this loop ends after about n draws.
    while chosen.len() < n {
        let t = free_random_token(partitioner, tm, rng);
        chosen.insert(t);
    }
    chosen.into_iter().collect()
}

fn free_random_token(partitioner: Partitioner, tm: &TokenMetadata, rng: &mut impl Rng) -> Token {
    loop {
        let t = partitioner.random_token(rng);
        if tm.normal_owner(&t).is_none() && !tm.bootstrap_tokens().contains_key(&t) && !t.is_minimum() {
            return t;
        }
    }
}

#[cfg(test)]
mod tests;
