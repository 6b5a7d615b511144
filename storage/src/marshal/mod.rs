//! TEMPORARY interface stub; the marshal helper replaces this file.
use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MarshalError {
    #[error("{0}")]
    Invalid(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AbstractType {
    Bytes,
}

impl AbstractType {
    pub fn parse(_s: &str) -> Result<AbstractType, MarshalError> {
        Ok(AbstractType::Bytes)
    }
    pub fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        a.cmp(b)
    }
    pub fn validate(&self, _v: &[u8]) -> Result<(), MarshalError> {
        Ok(())
    }
    pub fn is_counter(&self) -> bool {
        false
    }
}
