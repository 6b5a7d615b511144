//! Java's `.properties` format, as `java.util.Properties.load` reads it, for the files Cassandra
//! users bring: the snitches' `cassandra-topology.properties` and `cassandra-rackdc.properties`,
//! and SimpleAuthenticator's `passwd.properties` and `access.properties`.
//!
//! `#` and `!` start comment lines; a line ending in an odd number of backslashes continues on
//! the next one (whose leading blanks are dropped); backslash escapes (`\:`, `\=`, `\ `, `\\`,
//! `\t`, `\n`, `\r`, `\f`, `\uXXXX`; any other `\c` is `c`) work in keys and values. A key ends
//! at the first unescaped `=`, `:` or blank ([`KeyEnd::Java`]); then blanks, at most one `=` or
//! `:`, and blanks again precede the value.
//!
//! Bytes are read as UTF-8, or as ISO-8859-1 (what `Properties.load` assumes) when they are not
//! valid UTF-8 ([`decode`]).

/// Where a key ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyEnd {
    /// Java's rule: the first unescaped `=`, `:` or blank.
    Java,
    /// The first unescaped `=` of a line that has one, else Java's rule. The snitch files write
    /// every entry with `=`, and an unescaped IPv6 key (`fe80::1=DC1:RAC1`) would end at its
    /// first `:` under Java's rule; escaped keys (Cassandra's sample) read the same either way.
    FirstEquals,
}

/// One `key=value` entry and the line it starts on (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    pub key: String,
    pub value: String,
    pub line: usize,
}

/// A line that is not a valid entry: where, what it said (continuations joined), and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct PropertiesError {
    pub line: usize,
    pub text: String,
    pub reason: String,
}

/// The text of a properties file's bytes: UTF-8, or ISO-8859-1 when they are not valid UTF-8.
pub fn decode(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| e.into_bytes().iter().map(|&b| char::from(b)).collect())
}

/// Every entry of `text` in file order (a key given twice appears twice: see [`last_wins`]).
pub fn parse(text: &str, key_end: KeyEnd) -> Result<Vec<Property>, PropertiesError> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    while let Some((line, first)) = lines.next() {
        let trimmed = first.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('!') {
            continue;
        }
        let mut logical = String::from(trimmed);
        while ends_with_odd_backslashes(&logical) {
            logical.pop();
            match lines.next() {
                Some((_, next)) => logical.push_str(next.trim_start()),
                None => break,
            }
        }
        let (raw_key, raw_value) = split_entry(&logical, key_end);
        let error = |reason: String| PropertiesError { line, text: logical.clone(), reason };
        let key = unescape(raw_key).map_err(error)?;
        let value = unescape(raw_value).map_err(error)?;
        out.push(Property { key, value, line });
    }
    Ok(out)
}

/// `entries` with each key once, holding its last value at its first line, as
/// `java.util.Properties` keeps a key given twice.
pub fn last_wins(entries: Vec<Property>) -> Vec<Property> {
    let mut out: Vec<Property> = Vec::with_capacity(entries.len());
    for p in entries {
        match out.iter_mut().find(|o| o.key == p.key) {
            Some(existing) => existing.value = p.value,
            None => out.push(p),
        }
    }
    out
}

fn ends_with_odd_backslashes(s: &str) -> bool {
    s.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1
}

fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\x0c')
}

/// Splits a logical line into its raw (still escaped) key and value.
fn split_entry(line: &str, key_end: KeyEnd) -> (&str, &str) {
    let equals = match key_end {
        KeyEnd::FirstEquals => first_unescaped(line, |c| c == '='),
        KeyEnd::Java => None,
    };
    if let Some(at) = equals {
        let (key, rest) = line.split_at(at);
        return (key.trim_end_matches(is_blank), rest.get(1..).unwrap_or("").trim_start_matches(is_blank));
    }
    let Some(at) = first_unescaped(line, |c| c == '=' || c == ':' || is_blank(c)) else {
        return (line, "");
    };
    let (key, rest) = line.split_at(at);
    let rest = rest.trim_start_matches(is_blank);
    let rest = rest.strip_prefix(['=', ':']).unwrap_or(rest);
    (key, rest.trim_start_matches(is_blank))
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
                // A lone surrogate, which Java would keep in its UTF-16 string.
                out.push(char::from_u32(u32::from(unit)).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(text: &str, key_end: KeyEnd) -> Vec<(String, String, usize)> {
        match parse(text, key_end) {
            Ok(p) => p.into_iter().map(|p| (p.key, p.value, p.line)).collect(),
            Err(e) => panic!("{e}"),
        }
    }

    fn owned(expected: &[(&str, &str, usize)]) -> Vec<(String, String, usize)> {
        expected.iter().map(|(k, v, l)| (k.to_string(), v.to_string(), *l)).collect()
    }

    #[test]
    fn separators_escapes_comments_and_continuations_follow_java() {
        let text =
            "# c\n! c\n\na=1\n  b : 2\nc 3\nd\\=e=4\nf=five\\\n   and more\nempty=\nkey\\ with\\ space=\\u0041\\t\n";
        let expected = [
            ("a", "1", 4),
            ("b", "2", 5),
            ("c", "3", 6),
            ("d=e", "4", 7),
            ("f", "fiveand more", 8),
            ("empty", "", 10),
            ("key with space", "A\t", 11),
        ];
        assert_eq!(entries(text, KeyEnd::Java), owned(&expected));
        assert_eq!(entries(text, KeyEnd::FirstEquals), owned(&expected));
        assert!(parse("x=\\u00zz\n", KeyEnd::Java).is_err());
        assert_eq!(parse("ok=1\nx=\\u12\n", KeyEnd::Java).map_err(|e| e.line), Err(2));
    }

    #[test]
    fn the_key_rules_differ_only_where_a_line_has_an_unescaped_equals() {
        let text = "fe80::1=DC1:RAC1\nElvis Presley=pw\nplain value\n";
        assert_eq!(
            entries(text, KeyEnd::Java),
            owned(&[("fe80", ":1=DC1:RAC1", 1), ("Elvis", "Presley=pw", 2), ("plain", "value", 3)])
        );
        assert_eq!(
            entries(text, KeyEnd::FirstEquals),
            owned(&[("fe80::1", "DC1:RAC1", 1), ("Elvis Presley", "pw", 2), ("plain", "value", 3)])
        );
    }

    #[test]
    fn a_key_given_twice_keeps_its_last_value_at_its_first_line() {
        let p = last_wins(parse("k=1\nj=2\nk=3\n", KeyEnd::Java).unwrap_or_default());
        let got: Vec<(String, String, usize)> = p.into_iter().map(|p| (p.key, p.value, p.line)).collect();
        assert_eq!(got, owned(&[("k", "3", 1), ("j", "2", 2)]));
    }

    #[test]
    fn latin1_bytes_decode_as_java_reads_them() {
        assert_eq!(decode(b"caf\xe9=1".to_vec()), "café=1");
        assert_eq!(decode("café=1".as_bytes().to_vec()), "café=1");
    }
}
