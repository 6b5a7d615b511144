//! Tokens and decorated keys.
//!
//! A [`Token`] is stored in a byte-comparable form chosen by its partitioner, so tokens of every
//! partitioner order correctly with a plain byte comparison and SSTables can store them without
//! knowing the partitioner. Each partitioner's minimum token sorts before every key's token, and
//! every partitioner encodes its minimum as the empty byte string, so code that only needs "the
//! start of the ring" (range unwrapping, full-ring scans) does not need to know the partitioner.

use std::cmp::Ordering;

use smallvec::SmallVec;

/// A token's bytes: inline up to sixteen, the size of the random and Murmur3 partitioners'
/// tokens, so that deriving one for a request allocates nothing (an allocation and its free
/// were about 90 instructions of a point read's 7,300). Byte-ordered tokens are the keys
/// themselves and may spill to the heap.
pub type TokenBytes = SmallVec<[u8; 16]>;

// No larger than the `Vec` it replaced (smallvec's `union` feature), so that keys, index
// entries and errors holding a token do not grow.
const _: () = assert!(std::mem::size_of::<Token>() == std::mem::size_of::<Vec<u8>>());

/// A position on the ring, in its partitioner's byte-comparable encoding.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Token(pub TokenBytes);

impl Token {
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The minimum token of every partitioner: the empty encoding, sorting before all others.
    pub fn minimum() -> Token {
        Token(TokenBytes::new())
    }

    /// The token whose encoding is `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Token {
        Token(TokenBytes::from_slice(bytes))
    }

    pub fn is_minimum(&self) -> bool {
        self.0.is_empty()
    }
}

/// A row key with its token: rows are ordered by token, then by key bytes.
///
/// Build it with [`DecoratedKey::new`]: it also keeps the token's first eight bytes inline, so
/// that most comparisons (memtable skip list, SSTable index searches) decide without following
/// the token's heap pointer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DecoratedKey {
    pub token: Token,
    pub key: Vec<u8>,
    /// The token's first eight bytes, big-endian, zero-padded: ordering these as integers
    /// agrees with ordering the tokens' bytes wherever they differ.
    prefix: u64,
}

impl DecoratedKey {
    pub fn new(token: Token, key: Vec<u8>) -> DecoratedKey {
        let mut head = [0u8; 8];
        let n = token.0.len().min(8);
        head[..n].copy_from_slice(&token.0[..n]);
        DecoratedKey { prefix: u64::from_be_bytes(head), token, key }
    }

    /// The token's first eight bytes as an integer (zero-padded). Never decreases as keys
    /// increase, so ordered structures can index by it and compare whole keys only on ties.
    pub fn token_prefix(&self) -> u64 {
        self.prefix
    }
}

impl Ord for DecoratedKey {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        // Equal prefixes can still hide different lengths (zero padding), so fall back to the
        // full comparison then.
        self.prefix.cmp(&other.prefix).then_with(|| self.token.cmp(&other.token)).then_with(|| self.key.cmp(&other.key))
    }
}

impl PartialOrd for DecoratedKey {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
