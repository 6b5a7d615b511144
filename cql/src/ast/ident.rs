//! Names: identifiers as written and as Cassandra interns them, and keyspace-qualified names.

use std::fmt;

use crate::lexer::Keyword;

/// A name of a column, table, keyspace, field, index, trigger, function or role.
///
/// It keeps the text as written and the name Cassandra interns (its `ColumnIdentifier` rule):
/// unquoted identifiers and unreserved keywords are case-insensitive, so their name is the lower
/// case of their text; quoted identifiers keep their case and their name is the content between
/// the quotes, with `""` read as `"`. So `MyCol`, `mycol` and `"mycol"` name the same column,
/// and `"MyCol"` another one. Two identifiers are `==` only if they are also written alike;
/// compare [`Identifier::name`]s to know whether they name the same thing.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identifier {
    name: String,
    text: String,
}

impl Identifier {
    /// An unquoted identifier (or unreserved keyword) as written.
    pub fn unquoted(text: &str) -> Identifier {
        Identifier { name: text.to_ascii_lowercase(), text: text.to_string() }
    }

    /// A quoted identifier whose content (already unescaped) is `name`.
    pub fn quoted(name: &str) -> Identifier {
        Identifier { name: name.to_string(), text: quote_name(name) }
    }

    /// The identifier naming `name`, written the simplest way that reads back as `name`: bare
    /// when it is `[a-z][a-z0-9_]*` and no keyword, quoted otherwise. Cassandra's
    /// `ColumnIdentifier.maybeQuote` leaves unreserved keywords bare; we quote them too, because
    /// a bare unreserved keyword is not a name in every position (`SELECT json AS x FROM t`
    /// reads `json` as the JSON keyword, in Cassandra as here).
    pub fn new(name: &str) -> Identifier {
        let plain = name.bytes().next().is_some_and(|c| c.is_ascii_lowercase())
            && name.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_');
        if plain && Keyword::from_word(name).is_none() && !is_boolean(name) {
            Identifier::unquoted(name)
        } else {
            Identifier::quoted(name)
        }
    }

    /// The interned name: what the identifier refers to.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The identifier as written, quotes included.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// True if it was written between double quotes.
    pub fn is_quoted(&self) -> bool {
        self.text.starts_with('"')
    }
}

fn is_boolean(name: &str) -> bool {
    name == "true" || name == "false"
}

/// `name` between double quotes, with its double quotes doubled.
pub(crate) fn quote_name(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl fmt::Display for Identifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A table, view, index, type or function name, maybe prefixed by its keyspace (`ks.t`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QualifiedName {
    /// The keyspace, when written; otherwise the session's current one applies.
    pub keyspace: Option<Identifier>,
    /// The name within the keyspace.
    pub name: Identifier,
}

impl QualifiedName {
    /// A name without keyspace.
    pub fn local(name: Identifier) -> QualifiedName {
        QualifiedName { keyspace: None, name }
    }

    /// A name in `keyspace`.
    pub fn qualified(keyspace: Identifier, name: Identifier) -> QualifiedName {
        QualifiedName { keyspace: Some(keyspace), name }
    }
}

impl fmt::Display for QualifiedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(ks) = &self.keyspace {
            write!(f, "{ks}.")?;
        }
        write!(f, "{}", self.name)
    }
}

/// Writes `items` separated by `", "`.
pub(crate) struct Comma<'a, T>(pub &'a [T]);

impl<T: fmt::Display> fmt::Display for Comma<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

/// Writes `{k: v, ...}`: map literals, UDT literals, property maps.
pub(crate) struct Entries<'a, K, V>(pub &'a [(K, V)]);

impl<K: fmt::Display, V: fmt::Display> fmt::Display for Entries<'_, K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{k}: {v}")?;
        }
        f.write_str("}")
    }
}

/// Writes `items` separated by `sep`.
pub(crate) struct Joined<'a, T>(pub &'a [T], pub &'static str);

impl<T: fmt::Display> fmt::Display for Joined<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(self.1)?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unquoted_names_fold_case_and_quoted_names_keep_it() {
        assert_eq!(Identifier::unquoted("MyCol").name(), "mycol");
        assert_eq!(Identifier::unquoted("MyCol").text(), "MyCol");
        assert_eq!(Identifier::quoted("My \"Col\"").text(), "\"My \"\"Col\"\"\"");
        assert_eq!(Identifier::quoted("My \"Col\"").name(), "My \"Col\"");
    }

    #[test]
    fn new_quotes_only_when_needed() {
        assert_eq!(Identifier::new("plain_1").text(), "plain_1");
        assert_eq!(Identifier::new("Upper").text(), "\"Upper\"");
        assert_eq!(Identifier::new("select").text(), "\"select\"");
        assert_eq!(Identifier::new("key").text(), "\"key\"");
        assert_eq!(Identifier::new("").text(), "\"\"");
    }
}
