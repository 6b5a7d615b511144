//! The subset of Java's `.properties` format that Cassandra's snitch files use
//! (`cassandra-topology.properties`, `cassandra-rackdc.properties`).
//!
//! Followed from `java.util.Properties.load`: `#` and `!` start comment lines; a line ending in an
//! odd number of backslashes continues on the next one; backslash escapes (`\:`, `\=`, `\ `,
//! `\\`, `\t`, `\n`, `\r`, `\f`, `\uXXXX`; any other `\c` is `c`) work in keys and values.
//!
//! One deliberate difference: Java ends a key at the first unescaped `=`, `:` or blank, which
//! makes an unescaped IPv6 key (`fe80::1=DC1:RAC1`) parse as an empty key. Every line of these
//! files uses `=`, so here a line that has an unescaped `=` splits there, and only a line without
//! one falls back to Java's rule. Escaped keys (`fe80\:0\:0\:0\:202\:b3ff\:fe1e\:8329=...`, the
//! form Cassandra's sample file uses) read the same either way.
//!
//! Bytes are read as UTF-8, or as ISO-8859-1 (what `Properties.load` assumes) when they are not
//! valid UTF-8.

use std::path::Path;

use super::SnitchError;

/// One `key=value` entry and the line it starts on (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Property {
    pub key: String,
    pub value: String,
    pub line: usize,
}

/// Reads and parses a file; the path is only used in error messages.
pub(crate) fn read(path: &Path) -> Result<Vec<Property>, SnitchError> {
    let bytes = std::fs::read(path).map_err(|source| SnitchError::Io {
        file: path.to_path_buf(),
        reason: source.to_string(),
        kind: source.kind(),
    })?;
    let text = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => e.into_bytes().iter().map(|&b| char::from(b)).collect(),
    };
    parse(path, &text)
}

pub(crate) fn parse(path: &Path, text: &str) -> Result<Vec<Property>, SnitchError> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    while let Some((line_no, first)) = lines.next() {
        let trimmed = first.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('!') {
            continue;
        }
        // Join continuation lines; the continuation's leading blanks are dropped.
        let mut logical = String::from(trimmed);
        while ends_with_odd_backslashes(&logical) {
            logical.pop();
            match lines.next() {
                Some((_, next)) => logical.push_str(next.trim_start()),
                None => break,
            }
        }
        let (raw_key, raw_value) = split_entry(&logical);
        let syntax = |reason: String| SnitchError::Syntax {
            file: path.to_path_buf(),
            line: line_no,
            text: logical.clone(),
            reason,
        };
        let key = unescape(raw_key).map_err(syntax)?;
        let value = unescape(raw_value).map_err(syntax)?;
        if key.is_empty() {
            return Err(syntax("the line has no key before its separator".to_string()));
        }
        out.push(Property { key, value, line: line_no });
    }
    Ok(out)
}

fn ends_with_odd_backslashes(s: &str) -> bool {
    s.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1
}

/// Splits a logical line into its raw (still escaped) key and value.
fn split_entry(line: &str) -> (&str, &str) {
    let cut = first_unescaped(line, |c| c == '=')
        .map(|i| (i, true))
        .or_else(|| first_unescaped(line, |c| c == ':' || c == ' ' || c == '\t' || c == '\x0c').map(|i| (i, false)));
    let Some((at, is_equals)) = cut else {
        return (line, "");
    };
    let key = line.get(..at).unwrap_or(line).trim_end();
    let mut rest = line.get(at..).unwrap_or("");
    if is_equals {
        rest = rest.get(1..).unwrap_or("");
    } else {
        // Java: blanks, then at most one '=' or ':', then blanks.
        rest = rest.trim_start_matches([' ', '\t', '\x0c']);
        if let Some(r) = rest.strip_prefix(['=', ':']) {
            rest = r;
        }
    }
    (key, rest.trim_start_matches([' ', '\t', '\x0c']))
}

/// Byte index of the first character matching `pred` that is not escaped by a backslash.
fn first_unescaped(s: &str, pred: impl Fn(char) -> bool) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if pred(c) {
            return Some(i);
        }
    }
    None
}

fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\x0c'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let unit = u16::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == 4)
                    .ok_or_else(|| format!("malformed \\uxxxx escape \\u{hex}"))?;
                out.push(char::from_u32(u32::from(unit)).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}
