//! The snitch files (`cassandra-topology.properties`, `cassandra-rackdc.properties`), read with
//! the one properties parser ([`crate::properties`]) and its [`KeyEnd::FirstEquals`] rule (an
//! unescaped IPv6 key must not end at its first `:`); a line without a key is refused.

use std::path::Path;

use super::SnitchError;
pub(crate) use crate::properties::Property;
use crate::properties::{self, KeyEnd};

/// Reads and parses a file; the path is only used in error messages.
pub(crate) fn read(path: &Path) -> Result<Vec<Property>, SnitchError> {
    let bytes = std::fs::read(path).map_err(|source| SnitchError::Io {
        file: path.to_path_buf(),
        reason: source.to_string(),
        kind: source.kind(),
    })?;
    parse(path, &properties::decode(bytes))
}

pub(crate) fn parse(path: &Path, text: &str) -> Result<Vec<Property>, SnitchError> {
    let syntax = |line, text, reason| SnitchError::Syntax { file: path.to_path_buf(), line, text, reason };
    let entries = properties::parse(text, KeyEnd::FirstEquals).map_err(|e| syntax(e.line, e.text, e.reason))?;
    if let Some(p) = entries.iter().find(|p| p.key.is_empty()) {
        let text = format!("={}", p.value);
        return Err(syntax(p.line, text, "the line has no key before its separator".to_string()));
    }
    Ok(entries)
}
