//! Tokens of cassandra-cli's statement language.
//!
//! Facts kept from cassandra-cli's grammar: keywords are case-insensitive words; an identifier
//! starts with a letter or digit and goes on with letters, digits, `_` and `-`; integers may carry
//! a leading `-`; a double is `digits.digits`; strings are single-quoted with backslash escapes
//! (`\n`, `\t`, `\'`, `\\`, `\xHH`, `\uHHHH`, ...); `--` starts a comment to the end of the line and
//! `/* ... */` is a block comment. The lexer keeps each token's byte span so the parser can quote
//! the exact source text (host names such as `127.0.0.1` are rebuilt from it).

use std::fmt;

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub enum TokenKind {
    /// A bare word: keyword or identifier (the parser decides, case-insensitively for keywords).
    Ident(String),
    /// A single-quoted string, escapes already resolved.
    Str(String),
    /// An integer literal as written (may start with `-`).
    Int(String),
    /// A `digits.digits` literal as written.
    Double(String),
    /// Punctuation and operators: `; = [ ] { } ( ) , : / . ? > < >= <=`.
    Punct(&'static str),
}

/// A token and where it sits in the statement text (byte offsets).
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub start: usize,
    pub end: usize,
}

/// Why a statement could not be split into tokens.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LexError {
    #[error("Syntax error at position {pos}: unterminated string literal")]
    UnterminatedString { pos: usize },
    #[error("Syntax error at position {pos}: unterminated /* comment")]
    UnterminatedComment { pos: usize },
    #[error("Syntax error at position {pos}: bad escape sequence '{seq}' in string literal")]
    BadEscape { pos: usize, seq: String },
    #[error("Syntax error at position {pos}: unexpected character '{ch}'")]
    UnexpectedChar { pos: usize, ch: char },
}

impl fmt::Display for TokenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenKind::Ident(s) | TokenKind::Int(s) | TokenKind::Double(s) => f.write_str(s),
            TokenKind::Str(s) => write!(f, "'{}'", escape(s)),
            TokenKind::Punct(p) => f.write_str(p),
        }
    }
}

/// Splits one statement into tokens, dropping whitespace and comments.
pub fn tokenize(src: &str) -> Result<Vec<Token>, LexError> {
    let chars: Vec<(usize, char)> = src.char_indices().collect();
    let end_of = |i: usize| chars.get(i).map_or(src.len(), |&(b, _)| b);
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(&(pos, c)) = chars.get(i) {
        let next = chars.get(i + 1).map(|&(_, c)| c);
        if c.is_whitespace() {
            i += 1;
        } else if c == '-' && next == Some('-') {
            while chars.get(i).is_some_and(|&(_, c)| c != '\n') {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut j = i + 2;
            loop {
                match (chars.get(j), chars.get(j + 1)) {
                    (Some(&(_, '*')), Some(&(_, '/'))) => break,
                    (Some(_), _) => j += 1,
                    (None, _) => return Err(LexError::UnterminatedComment { pos }),
                }
            }
            i = j + 2;
        } else if c == '\'' {
            let (text, next_i) = string_literal(&chars, i)?;
            tokens.push(Token { kind: TokenKind::Str(text), start: pos, end: end_of(next_i) });
            i = next_i;
        } else if c.is_ascii_alphanumeric() || c == '_' || (c == '-' && next.is_some_and(|n| n.is_ascii_digit())) {
            let start = i;
            i += 1;
            while chars.get(i).is_some_and(|&(_, c)| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                // `a--b`: a `--` always starts a comment, even right after a word.
                if chars.get(i).map(|p| p.1) == Some('-') && chars.get(i + 1).map(|p| p.1) == Some('-') {
                    break;
                }
                i += 1;
            }
            let word: String = chars.get(start..i).unwrap_or_default().iter().map(|&(_, c)| c).collect();
            let digits = word.strip_prefix('-').unwrap_or(&word);
            let kind = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                // `digits.digits` is a double (e.g. read_repair_chance = 0.1).
                let frac_len =
                    chars.get(i + 1..).map_or(0, |rest| rest.iter().take_while(|p| p.1.is_ascii_digit()).count());
                if chars.get(i).map(|p| p.1) == Some('.') && frac_len > 0 {
                    let frac: String =
                        chars.get(i + 1..i + 1 + frac_len).unwrap_or_default().iter().map(|p| p.1).collect();
                    i += 1 + frac_len;
                    TokenKind::Double(format!("{word}.{frac}"))
                } else {
                    TokenKind::Int(word)
                }
            } else if word.starts_with('-') {
                return Err(LexError::UnexpectedChar { pos, ch: '-' });
            } else {
                TokenKind::Ident(word)
            };
            tokens.push(Token { kind, start: pos, end: end_of(i) });
        } else {
            let two: String = [Some(c), next].iter().flatten().collect();
            let (punct, len): (&'static str, usize) = match (c, two.as_str()) {
                (_, ">=") => (">=", 2),
                (_, "<=") => ("<=", 2),
                (';', _) => (";", 1),
                ('=', _) => ("=", 1),
                ('[', _) => ("[", 1),
                (']', _) => ("]", 1),
                ('{', _) => ("{", 1),
                ('}', _) => ("}", 1),
                ('(', _) => ("(", 1),
                (')', _) => (")", 1),
                (',', _) => (",", 1),
                (':', _) => (":", 1),
                ('/', _) => ("/", 1),
                ('.', _) => (".", 1),
                ('?', _) => ("?", 1),
                ('>', _) => (">", 1),
                ('<', _) => ("<", 1),
                _ => return Err(LexError::UnexpectedChar { pos, ch: c }),
            };
            tokens.push(Token { kind: TokenKind::Punct(punct), start: pos, end: end_of(i + len) });
            i += len;
        }
    }
    Ok(tokens)
}

/// Reads a quoted string starting at `chars[open]` (the quote); returns its text and the index
/// after the closing quote.
fn string_literal(chars: &[(usize, char)], open: usize) -> Result<(String, usize), LexError> {
    let pos = chars.get(open).map_or(0, |p| p.0);
    let mut out = String::new();
    let mut i = open + 1;
    loop {
        let Some(&(_, c)) = chars.get(i) else {
            return Err(LexError::UnterminatedString { pos });
        };
        match c {
            '\'' => return Ok((out, i + 1)),
            '\\' => {
                let Some(&(epos, e)) = chars.get(i + 1) else {
                    return Err(LexError::UnterminatedString { pos });
                };
                i += 2;
                match e {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'v' => out.push('\u{b}'),
                    '0' => out.push('\0'),
                    'x' | 'u' => {
                        let len = if e == 'x' { 2 } else { 4 };
                        let hex: String = chars.get(i..i + len).unwrap_or_default().iter().map(|p| p.1).collect();
                        let decoded = (hex.len() == len)
                            .then(|| u32::from_str_radix(&hex, 16).ok())
                            .flatten()
                            .and_then(char::from_u32);
                        match decoded {
                            Some(ch) => out.push(ch),
                            None => return Err(LexError::BadEscape { pos: epos, seq: format!("\\{e}{hex}") }),
                        }
                        i += len;
                    }
                    // `\'`, `\"`, `\\` and any other character stand for themselves.
                    other => out.push(other),
                }
            }
            other => {
                out.push(other);
                i += 1;
            }
        }
    }
}

/// Quotes text the way the lexer reads it back: backslash before `'` and `\`, control characters
/// as escapes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<TokenKind> {
        tokenize(src).unwrap().into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn words_numbers_and_punctuation() {
        use TokenKind::*;
        assert_eq!(
            kinds("set Users['jsmith']['age'] = -42;"),
            vec![
                Ident("set".into()),
                Ident("Users".into()),
                Punct("["),
                Str("jsmith".into()),
                Punct("]"),
                Punct("["),
                Str("age".into()),
                Punct("]"),
                Punct("="),
                Int("-42".into()),
                Punct(";"),
            ]
        );
        assert_eq!(
            kinds("0.25 >= <= user-name_2"),
            vec![Double("0.25".into()), Punct(">="), Punct("<="), Ident("user-name_2".into())]
        );
    }

    #[test]
    fn string_escapes() {
        assert_eq!(kinds(r"'it\'s'"), vec![TokenKind::Str("it's".into())]);
        assert_eq!(kinds(r"'a\nb\tc\\d'"), vec![TokenKind::Str("a\nb\tc\\d".into())]);
        assert_eq!(kinds(r"'\x41\u00e9\0'"), vec![TokenKind::Str("Aé\0".into())]);
        assert_eq!(kinds(r"'\q'"), vec![TokenKind::Str("q".into())]);
        assert_eq!(kinds("'日本語'"), vec![TokenKind::Str("日本語".into())]);
        assert!(matches!(tokenize(r"'\xZZ'"), Err(LexError::BadEscape { .. })));
        assert!(matches!(tokenize("'open"), Err(LexError::UnterminatedString { pos: 0 })));
        // Round trip through `escape`.
        let text = "quote ' back \\ nl \n ctl \u{1}";
        assert_eq!(kinds(&format!("'{}'", escape(text))), vec![TokenKind::Str(text.into())]);
    }

    #[test]
    fn comments_are_skipped() {
        assert_eq!(kinds("get -- a comment\n x /* block\n */ y"), kinds("get x y"));
        assert!(matches!(tokenize("/* never closed"), Err(LexError::UnterminatedComment { .. })));
    }

    #[test]
    fn spans_cover_source_text() {
        let src = "connect 127.0.0.1/9160";
        let toks = tokenize(src).unwrap();
        let first = toks.get(1).unwrap();
        let slash = toks.iter().position(|t| t.kind == TokenKind::Punct("/")).unwrap();
        let last = toks.get(slash - 1).unwrap();
        assert_eq!(&src[first.start..last.end], "127.0.0.1");
    }

    #[test]
    fn bad_characters_are_errors() {
        assert!(matches!(tokenize("get x @"), Err(LexError::UnexpectedChar { ch: '@', .. })));
    }
}
