//! Tokens and decorated keys.
//!
//! A [`Token`] is stored in a byte-comparable form chosen by its partitioner, so tokens of every
//! partitioner order correctly with a plain byte comparison and SSTables can store them without
//! knowing the partitioner. Each partitioner's minimum token sorts before every key's token, and
//! every partitioner encodes its minimum as the empty byte string, so code that only needs "the
//! start of the ring" (range unwrapping, full-ring scans) does not need to know the partitioner.

use std::cmp::Ordering;

/// A position on the ring, in its partitioner's byte-comparable encoding.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Token(pub Vec<u8>);

impl Token {
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The minimum token of every partitioner: the empty encoding, sorting before all others.
    pub fn minimum() -> Token {
        Token(Vec::new())
    }

    pub fn is_minimum(&self) -> bool {
        self.0.is_empty()
    }
}

/// A row key with its token: rows are ordered by token, then by key bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DecoratedKey {
    pub token: Token,
    pub key: Vec<u8>,
}

impl DecoratedKey {
    pub fn new(token: Token, key: Vec<u8>) -> DecoratedKey {
        DecoratedKey { token, key }
    }
}

impl Ord for DecoratedKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.token.cmp(&other.token).then_with(|| self.key.cmp(&other.key))
    }
}

impl PartialOrd for DecoratedKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
