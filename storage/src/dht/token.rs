//! Tokens and decorated keys.
//!
//! A [`Token`] is stored in a byte-comparable form chosen by its partitioner, so tokens of every
//! partitioner order correctly with a plain byte comparison and SSTables can store them without
//! knowing the partitioner. Each partitioner's minimum token sorts before every key's token.

use std::cmp::Ordering;

/// A position on the ring, in its partitioner's byte-comparable encoding.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Token(pub Vec<u8>);

impl Token {
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
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
