//! TEMPORARY interface stub; the dht helper replaces this file.
pub mod token;
pub use token::{DecoratedKey, Token};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DhtError {
    #[error("{0}")]
    Invalid(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partitioner {
    ByteOrdered,
}

impl Partitioner {
    pub fn decorate(&self, key: &[u8]) -> DecoratedKey {
        DecoratedKey::new(Token(key.to_vec()), key.to_vec())
    }
    pub fn min_token(&self) -> Token {
        Token(Vec::new())
    }
}
