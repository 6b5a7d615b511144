//! Reading typed values out of elements: booleans, numbers, enums and class names, each with an
//! error that names the element, its line and the offending text.

use std::collections::BTreeMap;
use std::str::FromStr;

use super::error::{suggest, OneOf};
use super::xml::Node;
use super::ConfigError;

pub(crate) fn bad(element: &str, line: usize, value: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::BadValue { element: element.to_string(), line, value: value.to_string(), reason: reason.into() }
}

/// `true`/`false` in any case, as 0.6's strict booleans; anything else is refused.
pub(crate) fn strict_bool(element: &str, line: usize, value: &str) -> Result<bool, ConfigError> {
    if value.eq_ignore_ascii_case("true") {
        Ok(true)
    } else if value.eq_ignore_ascii_case("false") {
        Ok(false)
    } else {
        Err(bad(element, line, value, "expected true or false"))
    }
}

/// A number of type `T` within `min..=max`.
pub(crate) fn number_in<T>(element: &str, line: usize, value: &str, min: T, max: T) -> Result<T, ConfigError>
where
    T: FromStr + PartialOrd + Copy + std::fmt::Display,
{
    let range = || range_words(min.to_string(), max.to_string());
    let parsed: T = value.parse().map_err(|_| bad(element, line, value, format!("expected a number {}", range())))?;
    // NaN fails both comparisons, so it is refused here too.
    if parsed >= min && parsed <= max {
        Ok(parsed)
    } else {
        Err(bad(element, line, value, format!("must be {}", range())))
    }
}

/// `min..=max` in words. The float bounds `f64::MIN_POSITIVE` and `f64::MAX` print as hundreds
/// of digits; they stand for open ends ("above 0", "or more").
fn range_words(min: String, max: String) -> String {
    const READABLE: usize = 24;
    match (min.len() > READABLE, max.len() > READABLE) {
        (false, false) => format!("from {min} to {max}"),
        (false, true) => format!("{min} or more"),
        (true, false) => format!("above 0 and at most {max}"),
        (true, true) => "above 0".to_string(),
    }
}

/// One of the exact (case-sensitive) names in `table`.
pub(crate) fn one_of<T: Copy>(element: &str, line: usize, value: &str, table: &[(&str, T)]) -> Result<T, ConfigError> {
    if let Some((_, v)) = table.iter().find(|(name, _)| *name == value) {
        return Ok(*v);
    }
    let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
    let mut reason = format!("expected {}", OneOf(&names));
    if let Some(s) = suggest(value, names.iter().copied()) {
        reason.push_str(&format!(" (did you mean {s}?)"));
    }
    Err(bad(element, line, value, reason))
}

/// The child elements of one parent, indexed by name, after checking that every child is either
/// known or a known leftover (which only gives a warning).
pub(crate) struct Elements<'a> {
    pub parent: &'a Node,
    by_name: BTreeMap<&'a str, &'a Node>,
}

/// An element older versions accepted that we ignore, with what to tell the operator.
pub(crate) struct Ignored {
    pub name: &'static str,
    pub why: &'static str,
}

impl<'a> Elements<'a> {
    /// `single` are elements that may appear at most once; `repeated` may appear any number of
    /// times (they are not indexed; the caller walks `parent.children` for them).
    pub fn collect(
        parent: &'a Node,
        single: &[&str],
        repeated: &[&str],
        ignored: &[Ignored],
        warnings: &mut Vec<String>,
    ) -> Result<Elements<'a>, ConfigError> {
        let mut by_name: BTreeMap<&'a str, &'a Node> = BTreeMap::new();
        for child in &parent.children {
            let name = child.name.as_str();
            if single.contains(&name) {
                if let Some(first) = by_name.insert(name, child) {
                    return Err(ConfigError::Duplicate {
                        element: name.to_string(),
                        line: child.line,
                        first_line: first.line,
                    });
                }
            } else if repeated.contains(&name) {
                continue;
            } else if let Some(ig) = ignored.iter().find(|i| i.name == name) {
                warnings.push(format!("line {}: <{}> is ignored: {}", child.line, name, ig.why));
            } else {
                let known = single.iter().chain(repeated.iter()).copied().chain(ignored.iter().map(|i| i.name));
                return Err(ConfigError::UnknownElement {
                    name: name.to_string(),
                    parent: parent.name.clone(),
                    line: child.line,
                    suggestion: suggest(name, known),
                });
            }
        }
        Ok(Elements { parent, by_name })
    }

    pub fn node(&self, name: &str) -> Option<&'a Node> {
        self.by_name.get(name).copied()
    }

    /// Trimmed text of a leaf element; `None` when absent or empty. A leaf that contains child
    /// elements is refused.
    pub fn text(&self, name: &str) -> Result<Option<(&'a str, usize)>, ConfigError> {
        let Some(node) = self.node(name) else { return Ok(None) };
        leaf(node)?;
        Ok(node.value().map(|v| (v, node.line)))
    }

    pub fn required_text(&self, name: &str) -> Result<(&'a str, usize), ConfigError> {
        self.text(name)?.ok_or_else(|| self.missing(name))
    }

    pub fn missing(&self, name: &str) -> ConfigError {
        ConfigError::Missing { element: format!("<{name}>"), within: self.parent.name.clone(), line: self.parent.line }
    }

    pub fn bool(&self, name: &str, default: bool) -> Result<bool, ConfigError> {
        match self.text(name)? {
            Some((v, line)) => strict_bool(name, line, v),
            None => Ok(default),
        }
    }

    pub fn number<T>(&self, name: &str, default: T, min: T, max: T) -> Result<T, ConfigError>
    where
        T: FromStr + PartialOrd + Copy + std::fmt::Display,
    {
        match self.text(name)? {
            Some((v, line)) => number_in(name, line, v, min, max),
            // Empty counts as absent, as in 0.6 (its XMLUtils.getNodeValue turns "" into null).
            None => Ok(default),
        }
    }
}

/// Refuses child elements inside an element that should hold only text.
pub(crate) fn leaf(node: &Node) -> Result<(), ConfigError> {
    match node.children.first() {
        Some(child) => Err(ConfigError::UnknownElement {
            name: child.name.clone(),
            parent: node.name.clone(),
            line: child.line,
            suggestion: None,
        }),
        None => Ok(()),
    }
}

/// Refuses stray text inside an element that should hold only child elements (for example
/// `<Seeds>127.0.0.1</Seeds>` without the `<Seed>` wrapper).
pub(crate) fn container(node: &Node, expected_child: &str) -> Result<(), ConfigError> {
    match node.value() {
        Some(text) => {
            Err(bad(&node.name, node.line, text, format!("expected <{expected_child}> child elements, not text")))
        }
        None => Ok(()),
    }
}

/// Checks that every attribute of `node` is in `known`.
pub(crate) fn check_attributes(node: &Node, known: &[&str]) -> Result<(), ConfigError> {
    for (name, _) in &node.attrs {
        if !known.contains(&name.as_str()) {
            return Err(ConfigError::UnknownAttribute {
                name: name.clone(),
                element: node.name.clone(),
                line: node.line,
                suggestion: suggest(name, known.iter().copied()),
            });
        }
    }
    Ok(())
}

pub(crate) const MARSHAL_PACKAGE: &str = "org.apache.cassandra.db.marshal.";

/// A comparator or validator name as written in the file, made fully qualified: a name without
/// a dot gets the marshal package prefix (0.6's rule). For parameterised types such as
/// `ReversedType(LongType)` only the outer name is qualified; the type parser resolves the inner
/// ones.
pub(crate) fn marshal_class(name: &str) -> String {
    let name = name.trim();
    let outer_end = name.find('(').unwrap_or(name.len());
    let outer = name.get(..outer_end).unwrap_or(name);
    if outer.contains('.') {
        name.to_string()
    } else {
        format!("{MARSHAL_PACKAGE}{name}")
    }
}

/// The short name of a class (after the last dot).
pub(crate) fn short_class(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// Resolves a class name against `table` of (accepted name, normalized full name). A name is
/// accepted fully qualified or, for convenience, by its short name.
pub(crate) fn class_from_table(
    element: &str,
    line: usize,
    value: &str,
    table: &[(&str, &str)],
) -> Result<String, ConfigError> {
    let short = short_class(value);
    let found =
        table.iter().find(|(accepted, _)| *accepted == value || (short == value && short_class(accepted) == short));
    if let Some((_, normalized)) = found {
        return Ok((*normalized).to_string());
    }
    let names: Vec<&str> = table.iter().map(|(a, _)| short_class(a)).collect();
    let mut reason = format!("unsupported class; supported: {}", OneOf(&names));
    if let Some(s) = suggest(short, names.iter().copied()) {
        reason.push_str(&format!(" (did you mean {s}?)"));
    }
    Err(bad(element, line, value, reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_bool_accepts_any_case_only() {
        assert!(strict_bool("X", 1, "TRUE").expect("ok"));
        assert!(!strict_bool("X", 1, "False").expect("ok"));
        assert!(matches!(strict_bool("X", 7, "yes"), Err(ConfigError::BadValue { line: 7, .. })));
    }

    #[test]
    fn numbers_are_range_checked() {
        assert_eq!(number_in::<u32>("X", 1, "8", 5, 16).expect("ok"), 8);
        assert!(number_in::<u32>("X", 1, "4", 5, 16).is_err());
        assert!(number_in::<u32>("X", 1, "-1", 0, 16).is_err());
        assert!(number_in::<f64>("X", 1, "NaN", 0.0, 1.0).is_err());
        assert!(number_in::<u16>("X", 1, "70000", 0, u16::MAX).is_err());
    }

    #[test]
    fn open_float_bounds_are_said_in_words() {
        let reason = |r: Result<f64, ConfigError>| match r {
            Err(ConfigError::BadValue { reason, .. }) => reason,
            other => panic!("{other:?}"),
        };
        assert_eq!(reason(number_in("X", 1, "-0.3", f64::MIN_POSITIVE, f64::MAX)), "must be above 0");
        assert_eq!(reason(number_in("X", 1, "-1", 0.0, f64::MAX)), "must be 0 or more");
        assert_eq!(reason(number_in("X", 1, "2", 0.0, 1.0)), "must be from 0 to 1");
        assert_eq!(reason(number_in("X", 1, "", f64::MIN_POSITIVE, 8.0)), "expected a number above 0 and at most 8");
    }

    #[test]
    fn marshal_names_get_the_package_prefix() {
        assert_eq!(marshal_class("UTF8Type"), "org.apache.cassandra.db.marshal.UTF8Type");
        assert_eq!(marshal_class("com.example.MyType"), "com.example.MyType");
        assert_eq!(marshal_class("ReversedType(LongType)"), "org.apache.cassandra.db.marshal.ReversedType(LongType)");
    }

    #[test]
    fn class_tables_accept_short_and_full_names() {
        let table = [("org.example.A", "org.example.Anew"), ("org.example.B", "org.example.B")];
        assert_eq!(class_from_table("E", 1, "org.example.A", &table).expect("ok"), "org.example.Anew");
        assert_eq!(class_from_table("E", 1, "B", &table).expect("ok"), "org.example.B");
        assert!(class_from_table("E", 1, "org.other.B", &table).is_err());
        let err = class_from_table("E", 3, "C", &table).expect_err("unknown");
        assert!(matches!(err, ConfigError::BadValue { line: 3, .. }));
    }
}
