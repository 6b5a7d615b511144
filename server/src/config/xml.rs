//! A tiny element tree over quick-xml that remembers the line each element starts on.
//!
//! storage-conf.xml is small and read once, so building a tree first and interpreting it second
//! keeps the interpreter simple (elements may come in any order, required ones are checked after
//! the whole parent is seen) and gives every error a line number.

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::ConfigError;

/// One XML element: name, attributes in document order, text content and child elements.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub name: String,
    /// 1-based line of the element's `<`.
    pub line: usize,
    pub attrs: Vec<(String, String)>,
    /// Concatenated text and CDATA directly inside this element (not trimmed).
    pub text: String,
    pub children: Vec<Node>,
}

impl Node {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The element's text, trimmed; `None` when empty, because 0.6 treats an empty element as
    /// an absent one.
    pub fn value(&self) -> Option<&str> {
        let t = self.text.trim();
        (!t.is_empty()).then_some(t)
    }
}

/// Maps byte offsets to 1-based line numbers.
pub(crate) struct Lines {
    newline_offsets: Vec<usize>,
}

impl Lines {
    pub fn new(text: &str) -> Lines {
        Lines { newline_offsets: text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i).collect() }
    }

    pub fn line_of(&self, offset: u64) -> usize {
        let offset = usize::try_from(offset).unwrap_or(usize::MAX);
        // Number of newlines strictly before `offset`, plus one.
        self.newline_offsets.partition_point(|&nl| nl < offset) + 1
    }
}

/// Parses a whole document and returns its root element.
pub(crate) fn parse_document(xml: &str) -> Result<Node, ConfigError> {
    let lines = Lines::new(xml);
    let mut reader = Reader::from_str(xml);
    // End tags must match their start tags; a mismatch is a broken file, not something to guess at.
    reader.config_mut().check_end_names = true;
    let mut stack: Vec<Node> = Vec::new();
    let mut root: Option<Node> = None;
    loop {
        let start = reader.buffer_position();
        let event = reader
            .read_event()
            .map_err(|e| ConfigError::Xml { line: lines.line_of(reader.error_position()), reason: e.to_string() })?;
        let line = lines.line_of(start);
        match event {
            Event::Start(e) => {
                let node = open_node(&e, line)?;
                if root.is_some() && stack.is_empty() {
                    return Err(ConfigError::Xml { line, reason: "more than one root element".into() });
                }
                stack.push(node);
            }
            Event::Empty(e) => {
                let node = open_node(&e, line)?;
                close_node(node, &mut stack, &mut root, line)?;
            }
            Event::End(_) => {
                let node = stack.pop().ok_or_else(|| ConfigError::Xml { line, reason: "unexpected end tag".into() })?;
                close_node(node, &mut stack, &mut root, line)?;
            }
            Event::Text(t) => {
                let text = t.unescape().map_err(|e| ConfigError::Xml { line, reason: e.to_string() })?;
                match stack.last_mut() {
                    Some(parent) => parent.text.push_str(&text),
                    None if text.trim().is_empty() => {}
                    None => return Err(ConfigError::Xml { line, reason: "text outside the root element".into() }),
                }
            }
            Event::CData(c) => {
                let text = String::from_utf8(c.into_inner().into_owned())
                    .map_err(|_| ConfigError::Xml { line, reason: "CDATA section is not valid UTF-8".into() })?;
                match stack.last_mut() {
                    Some(parent) => parent.text.push_str(&text),
                    None => return Err(ConfigError::Xml { line, reason: "CDATA outside the root element".into() }),
                }
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
            Event::Eof => break,
        }
    }
    if let Some(open) = stack.last() {
        return Err(ConfigError::Xml { line: open.line, reason: format!("element <{}> is never closed", open.name) });
    }
    root.ok_or(ConfigError::Xml { line: 1, reason: "the document has no root element".into() })
}

fn open_node(e: &BytesStart<'_>, line: usize) -> Result<Node, ConfigError> {
    let name = String::from_utf8(e.name().as_ref().to_vec())
        .map_err(|_| ConfigError::Xml { line, reason: "element name is not valid UTF-8".into() })?;
    let mut attrs = Vec::new();
    for attr in e.attributes() {
        let attr = attr.map_err(|err| ConfigError::Xml { line, reason: format!("in <{name}>: {err}") })?;
        let key = String::from_utf8(attr.key.as_ref().to_vec())
            .map_err(|_| ConfigError::Xml { line, reason: format!("attribute name in <{name}> is not valid UTF-8") })?;
        let value = attr
            .unescape_value()
            .map_err(|err| ConfigError::Xml { line, reason: format!("attribute {key} of <{name}>: {err}") })?;
        attrs.push((key, value.into_owned()));
    }
    Ok(Node { name, line, attrs, text: String::new(), children: Vec::new() })
}

fn close_node(node: Node, stack: &mut [Node], root: &mut Option<Node>, line: usize) -> Result<(), ConfigError> {
    match stack.last_mut() {
        Some(parent) => parent.children.push(node),
        None if root.is_none() => *root = Some(node),
        None => return Err(ConfigError::Xml { line, reason: "more than one root element".into() }),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_one_based_and_count_newlines_before_the_offset() {
        let l = Lines::new("a\nbc\n\nd");
        assert_eq!(l.line_of(0), 1);
        assert_eq!(l.line_of(1), 1); // the newline itself belongs to line 1
        assert_eq!(l.line_of(2), 2);
        assert_eq!(l.line_of(5), 3);
        assert_eq!(l.line_of(6), 4);
    }

    #[test]
    fn tree_keeps_lines_attributes_and_text() {
        let doc = "<?xml version=\"1.0\"?>\n<!-- c -->\n<Storage>\n  <A x=\"1 &amp; 2\">t&lt;</A>\n\n  <B/><C><![CDATA[<raw>]]></C>\n</Storage>\n";
        let root = parse_document(doc).expect("parses");
        assert_eq!(root.name, "Storage");
        assert_eq!(root.line, 3);
        assert_eq!(root.children.len(), 3);
        assert_eq!(root.children[0].line, 4);
        assert_eq!(root.children[0].attr("x"), Some("1 & 2"));
        assert_eq!(root.children[0].value(), Some("t<"));
        assert_eq!(root.children[1].line, 6);
        assert_eq!(root.children[1].value(), None);
        assert_eq!(root.children[2].value(), Some("<raw>"));
    }

    #[test]
    fn mismatched_end_tag_reports_its_line() {
        let err = parse_document("<Storage>\n<A>\n</B>\n</Storage>").expect_err("must fail");
        assert!(matches!(err, ConfigError::Xml { line: 3, .. }), "{err:?}");
    }

    #[test]
    fn unclosed_and_empty_documents_fail() {
        assert!(matches!(parse_document("<Storage>\n<A>"), Err(ConfigError::Xml { .. })));
        assert!(matches!(parse_document("   "), Err(ConfigError::Xml { .. })));
        assert!(matches!(parse_document("<A/><B/>"), Err(ConfigError::Xml { .. })));
    }
}
