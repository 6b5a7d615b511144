//! The configuration error type and the "did you mean" helper.

use std::fmt;
use std::path::PathBuf;

/// Why a storage-conf.xml could not be turned into a [`super::Config`]. Every variant that comes
/// from the file carries the 1-based line of the offending element, so the operator can go
/// straight to it. Callers print the file name in front of the message.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },

    #[error("malformed XML at line {line}: {reason}")]
    Xml { line: usize, reason: String },

    /// An element no Cassandra version ever defined in this position (usually a typo).
    #[error("unknown element <{name}> in <{parent}> at line {line}{}", did_you_mean(suggestion, true))]
    UnknownElement { name: String, parent: String, line: usize, suggestion: Option<String> },

    #[error("unknown attribute {name} on <{element}> at line {line}{}", did_you_mean(suggestion, false))]
    UnknownAttribute { name: String, element: String, line: usize, suggestion: Option<String> },

    #[error("bad value {value:?} for {element} at line {line}: {reason}")]
    BadValue { element: String, line: usize, value: String, reason: String },

    /// A host name (in `ListenAddress` or a `Seed`) that does not resolve. Names are resolved
    /// once at load, so a node never gossips with a name it cannot reach.
    #[error(
        "cannot resolve host name {host:?} in {element} at line {line}: {source}; give an IP address or fix the name"
    )]
    UnknownHost { element: String, line: usize, host: String, source: std::io::Error },

    /// A required element or attribute is absent (or empty, which 0.6 treats the same).
    #[error("missing required {element} in <{within}> (line {line})")]
    Missing { element: String, within: String, line: usize },

    #[error("<{element}> given twice: at line {first_line} and again at line {line}")]
    Duplicate { element: String, line: usize, first_line: usize },

    #[error("invalid schema in keyspace {keyspace}{} at line {line}: {reason}",
            cf.as_ref().map(|c| format!(", column family {c}")).unwrap_or_default())]
    InvalidSchema { keyspace: String, cf: Option<String>, line: usize, reason: String },
}

fn did_you_mean(suggestion: &Option<String>, element: bool) -> String {
    match (suggestion, element) {
        (Some(s), true) => format!(" (did you mean <{s}>?)"),
        (Some(s), false) => format!(" (did you mean {s}?)"),
        (None, _) => String::new(),
    }
}

/// The known name closest to `name`, if it is close enough to be a plausible typo: a name
/// that differs only in case always qualifies, otherwise the edit distance must be at most a
/// third of the name's length (and at least 2 is always tolerated).
pub(crate) fn suggest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut best: Option<(usize, &str)> = None;
    for candidate in known {
        if candidate.eq_ignore_ascii_case(name) {
            return Some(candidate.to_string());
        }
        let d = edit_distance(&name.to_ascii_lowercase(), &candidate.to_ascii_lowercase());
        match best {
            Some((bd, _)) if bd <= d => {}
            _ => best = Some((d, candidate)),
        }
    }
    let limit = (name.chars().count() / 3).max(2);
    best.filter(|(d, _)| *d <= limit).map(|(_, c)| c.to_string())
}

/// Levenshtein distance over chars.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Formats a list of allowed values for error messages: `a, b or c`.
pub(crate) struct OneOf<'a>(pub &'a [&'a str]);

impl fmt::Display for OneOf<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(if i + 1 == n { " or " } else { ", " })?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_basics() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("ThriftPrt", "ThriftPort"), 1);
    }

    #[test]
    fn suggestions_prefer_case_matches_and_reject_far_names() {
        let known = ["ThriftPort", "ThriftAddress", "StoragePort"];
        assert_eq!(suggest("ThriftPrt", known).as_deref(), Some("ThriftPort"));
        assert_eq!(suggest("thriftport", known).as_deref(), Some("ThriftPort"));
        assert_eq!(suggest("Zookeeper", known), None);
    }

    #[test]
    fn one_of_lists_values() {
        assert_eq!(OneOf(&["a"]).to_string(), "a");
        assert_eq!(OneOf(&["a", "b", "c"]).to_string(), "a, b or c");
    }

    #[test]
    fn messages_name_element_line_and_suggestion() {
        let e = ConfigError::UnknownElement {
            name: "ThriftPrt".into(),
            parent: "Storage".into(),
            line: 42,
            suggestion: Some("ThriftPort".into()),
        };
        assert_eq!(e.to_string(), "unknown element <ThriftPrt> in <Storage> at line 42 (did you mean <ThriftPort>?)");
    }
}
