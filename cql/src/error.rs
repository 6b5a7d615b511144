//! Syntax errors, worded as Cassandra 3.11 words them.
//!
//! Cassandra's `ErrorCollector` builds a message from ANTLR's recognition error: a header
//! `line L:C`, ANTLR's sentence (`mismatched input 'x' expecting K_FROM`, `no viable alternative
//! at input 'x'`, `mismatched character '<EOF>' expecting '''`), and for parser errors a snippet
//! of the query with the offending token in square brackets: `(SELECT * [FROMM]...)`. Errors
//! that Cassandra's grammar actions raise themselves (`Bind variables cannot be used for
//! keyspace names`) are bare sentences. [`SyntaxError`] carries the same message and, as data,
//! where and what went wrong.
//!
//! [`SyntaxError`]'s documentation lists where we differ from Cassandra.

/// What kind of mistake a [`SyntaxError`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyntaxErrorKind {
    /// The lexer found a character no token starts with, or the input ended inside a string,
    /// a quoted name or a comment.
    Lexer,
    /// One token was required and another was found; `expected` is its name as Cassandra prints
    /// it (`K_FROM`, `IDENT`, `')'`, `EOF`).
    Mismatched {
        /// The required token's name.
        expected: String,
    },
    /// No alternative of the grammar goes on with this token.
    NoViableAlternative,
    /// The statement parses, but breaks a rule Cassandra's parser checks itself (a bind marker
    /// as a table name, `SET a = b + 1`, a property given twice).
    Invalid,
    /// Types, terms, selectors or relations are nested deeper than [`crate::MAX_NESTING`].
    TooDeep,
}

/// A statement that is not valid CQL.
///
/// Where we differ from Cassandra 3.11, on purpose or because ANTLR's exact behaviour depends
/// on how far its DFAs looked ahead:
/// - The snippet ends at the offending token. Cassandra's ends up to two tokens later when
///   ANTLR had already read them, which depends on the decision being made.
/// - The highlighted span of a string or quoted name covers its source text; Cassandra uses the
///   length of the unescaped text, which puts the `]` a few characters early.
/// - At a decision that needs several tokens of lookahead, ANTLR names the token where its DFA
///   gave up, which may lie a token further or nearer than where our decision gives up.
/// - The lexer stops at its first error; Cassandra's carries on, but reports the first error too.
/// - A `--` or `//` comment may end the input without a newline; Cassandra's lexer requires one.
/// - Nesting deeper than [`crate::MAX_NESTING`] is refused (Cassandra would overflow its stack).
///
/// `line` and `column` are the numbers Cassandra prints: lines count from 1 and columns from 0
/// (in UTF-16 code units, as Java counts characters). When the parser ran out of input, they are
/// `0` and `-1`, as Cassandra prints for ANTLR's end-of-file token (`line 0:-1 mismatched input
/// '<EOF>' expecting ')'`); `offset` then is the length of the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SyntaxError {
    /// What went wrong.
    pub kind: SyntaxErrorKind,
    /// The line of the offending token (from 1), or 0 at the end of the input.
    pub line: u32,
    /// The column of the offending token (from 0), or -1 at the end of the input.
    pub column: i32,
    /// Byte offset of the offending token in the text.
    pub offset: usize,
    /// The offending token as Cassandra displays it: strings and quoted names without their
    /// quotes, `<EOF>` at the end of the input.
    pub token: String,
    /// The whole message, as Cassandra's `SyntaxException` carries it.
    pub message: String,
}

/// Quotes a token for a message the way ANTLR does: `'text'`, with line breaks and tabs shown
/// as `\n`, `\r` and `\t`.
pub(crate) fn display_token(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// The width of `s` in Java characters (UTF-16 code units), the unit of Cassandra's columns.
pub(crate) fn java_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The prefix of `s` that is `units` Java characters long (or all of `s`).
fn java_prefix(s: &str, units: usize) -> &str {
    let mut seen = 0;
    for (i, c) in s.char_indices() {
        if seen >= units {
            return s.get(..i).unwrap_or(s);
        }
        seen += c.len_utf16();
    }
    s
}

/// Where a token sits, for the snippet: its line (from 1), column and width in Java characters.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SnippetToken {
    pub line: u32,
    pub column: u32,
    pub width: u32,
}

/// Appends Cassandra's query snippet, `" (SELECT * [FROMM]...)"`: the text from `from` to `to`,
/// with `offending` in square brackets, `...` where the query goes on before or after, and the
/// lines joined without their line breaks.
pub(crate) fn append_snippet(
    out: &mut String,
    query: &str,
    from: SnippetToken,
    to: SnippetToken,
    offending: SnippetToken,
) {
    // Java's split drops trailing empty strings.
    let mut lines: Vec<String> = query.split('\n').map(str::to_string).collect();
    while lines.len() > 1 && lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    let index = |t: SnippetToken| (t.line as usize).checked_sub(1).filter(|i| *i < lines.len());
    let (Some(from_i), Some(to_i), Some(off_i)) = (index(from), index(to), index(offending)) else {
        return;
    };
    let include_start = from.line == 1 && from.column == 0;
    let to_end = (to.column + to.width) as usize;
    let include_end = to_i + 1 == lines.len() && lines.get(to_i).is_some_and(|l| java_len(l) == to_end);

    if let Some(line) = lines.get_mut(to_i) {
        if to_end < java_len(line) {
            *line = java_prefix(line, to_end).to_string();
        }
    }
    if let Some(line) = lines.get_mut(off_i) {
        let start = java_prefix(line, offending.column as usize).len();
        let end = java_prefix(line, (offending.column + offending.width) as usize).len();
        let (a, rest) = line.split_at(start.min(line.len()));
        let (b, c) = rest.split_at(end.saturating_sub(start).min(rest.len()));
        *line = format!("{a}[{b}]{c}");
    }
    if let Some(line) = lines.get_mut(from_i) {
        let start = java_prefix(line, from.column as usize).len();
        *line = line.get(start..).unwrap_or("").to_string();
    }

    out.push_str(" (");
    if !include_start {
        out.push_str("...");
    }
    for line in lines.iter().take(to_i + 1).skip(from_i) {
        out.push_str(line);
    }
    if !include_end {
        out.push_str("...");
    }
    out.push(')');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(line: u32, column: u32, width: u32) -> SnippetToken {
        SnippetToken { line, column, width }
    }

    #[test]
    fn snippet_marks_the_offending_token() {
        let mut s = String::new();
        append_snippet(&mut s, "SELECT * FROMM t", tok(1, 0, 6), tok(1, 9, 5), tok(1, 9, 5));
        assert_eq!(s, " (SELECT * [FROMM]...)");
        let mut s = String::new();
        append_snippet(&mut s, "SELECT * FROM t x", tok(1, 0, 6), tok(1, 16, 1), tok(1, 16, 1));
        assert_eq!(s, " (SELECT * FROM t [x])");
        let mut s = String::new();
        append_snippet(&mut s, "SELECT a\nFROM t x", tok(1, 7, 1), tok(2, 7, 1), tok(2, 7, 1));
        assert_eq!(s, " (...aFROM t [x])");
    }

    #[test]
    fn tokens_are_quoted_like_antlr() {
        assert_eq!(display_token("a\nb"), "'a\\nb'");
        assert_eq!(java_len("a😀"), 3);
    }
}
