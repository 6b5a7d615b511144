//! The CQL lexer: text to tokens, as Cassandra 3.11's `Lexer.g` cuts it.
//!
//! Every token knows its byte span, its line (from 1) and its column (from 0, in UTF-16 code
//! units as Java counts), because error messages quote them. Whitespace and comments are kept
//! as [`TokenKind::Trivia`] tokens: they never reach the grammar, but Cassandra's error snippet
//! counts them when it decides how much of the query to quote.
//!
//! Like ANTLR's lexer, at each position the longest token wins, and between tokens of the same
//! length the one Cassandra's grammar lists first: a keyword before an identifier, a duration
//! (`P1D`) before an identifier, an integer before nothing else.

mod keyword;
mod scan;

pub use keyword::{all_keywords, Keyword, Reservation};

use crate::error::{display_token, java_len, SyntaxError, SyntaxErrorKind};

/// Punctuation and operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Punct {
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Semicolon,
    Colon,
    Dot,
    Star,
    Plus,
    Minus,
    PlusEq,
    MinusEq,
    Eq,
    Neq,
    Lt,
    Lte,
    Gt,
    Gte,
}

impl Punct {
    /// The characters of the token.
    pub fn as_str(self) -> &'static str {
        match self {
            Punct::LParen => "(",
            Punct::RParen => ")",
            Punct::LBracket => "[",
            Punct::RBracket => "]",
            Punct::LBrace => "{",
            Punct::RBrace => "}",
            Punct::Comma => ",",
            Punct::Semicolon => ";",
            Punct::Colon => ":",
            Punct::Dot => ".",
            Punct::Star => "*",
            Punct::Plus => "+",
            Punct::Minus => "-",
            Punct::PlusEq => "+=",
            Punct::MinusEq => "-=",
            Punct::Eq => "=",
            Punct::Neq => "!=",
            Punct::Lt => "<",
            Punct::Lte => "<=",
            Punct::Gt => ">",
            Punct::Gte => ">=",
        }
    }
}

/// What a token is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenKind {
    /// A keyword, reserved or not.
    Keyword(Keyword),
    /// An unquoted identifier (`[a-zA-Z][a-zA-Z0-9_]*` that is no keyword).
    Ident,
    /// A double-quoted identifier; the content with `""` turned into `"`.
    QuotedName(String),
    /// A string constant (`'...'` or `$$...$$`); the content with `''` turned into `'`.
    String(String),
    /// `'-'? [0-9]+`
    Integer,
    /// A float with a fraction or an exponent (`NaN` and `Infinity` are keywords).
    Float,
    /// `true` or `false`, any case.
    Boolean(bool),
    /// A duration constant (`1h30m`, `P1D`, ...).
    Duration,
    /// A UUID constant.
    Uuid,
    /// A blob constant, `0x` and hex digits.
    Hex,
    /// `?`
    QMark,
    /// Punctuation or an operator.
    Punct(Punct),
    /// The literal `expr(` that opens a custom index expression (case-sensitive, as in
    /// Cassandra, where it is one token).
    ExprParen,
    /// Whitespace or a comment.
    Trivia,
    /// The end of the text.
    Eof,
}

impl TokenKind {
    /// The name Cassandra's parser prints for this kind of token in "expecting ..." messages.
    pub fn token_name(&self) -> String {
        match self {
            TokenKind::Keyword(k) => k.token_name(),
            TokenKind::Ident => "IDENT".into(),
            TokenKind::QuotedName(_) => "QUOTED_NAME".into(),
            TokenKind::String(_) => "STRING_LITERAL".into(),
            TokenKind::Integer => "INTEGER".into(),
            TokenKind::Float => "FLOAT".into(),
            TokenKind::Boolean(_) => "BOOLEAN".into(),
            TokenKind::Duration => "DURATION".into(),
            TokenKind::Uuid => "UUID".into(),
            TokenKind::Hex => "HEXNUMBER".into(),
            TokenKind::QMark => "QMARK".into(),
            TokenKind::Punct(p) => format!("'{}'", p.as_str()),
            TokenKind::ExprParen => "'expr('".into(),
            TokenKind::Trivia => "WS".into(),
            TokenKind::Eof => "EOF".into(),
        }
    }
}

/// One token of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Byte offset where it starts.
    pub start: usize,
    /// Byte offset just past its end.
    pub end: usize,
    /// Its line, from 1.
    pub line: u32,
    /// Its column, from 0, in UTF-16 code units.
    pub column: u32,
}

impl Token {
    /// The token's source text.
    pub fn source<'a>(&self, text: &'a str) -> &'a str {
        text.get(self.start..self.end).unwrap_or("")
    }

    /// The token's text as Cassandra's messages show it: strings and quoted names unescaped and
    /// without quotes, `<EOF>` for the end.
    pub fn display_text(&self, text: &str) -> String {
        match &self.kind {
            TokenKind::String(s) | TokenKind::QuotedName(s) => s.clone(),
            TokenKind::Eof => "<EOF>".into(),
            _ => self.source(text).to_string(),
        }
    }
}

/// The tokens of a text (trivia included, ending with [`TokenKind::Eof`]) and the lexer's
/// error, if it stopped at one: then the tokens end where the error is.
#[derive(Debug, Clone)]
pub(crate) struct Lexed {
    pub tokens: Vec<Token>,
    pub error: Option<SyntaxError>,
}

/// Cuts `text` into tokens, whitespace and comments included; the last token is `Eof`.
pub fn tokenize(text: &str) -> Result<Vec<Token>, SyntaxError> {
    let lexed = lex(text);
    match lexed.error {
        Some(e) => Err(e),
        None => Ok(lexed.tokens),
    }
}

pub(crate) fn lex(text: &str) -> Lexed {
    let mut lexer = Lexer { text, bytes: text.as_bytes(), pos: 0, line: 1, column: 0, tokens: Vec::new() };
    let error = lexer.run().err();
    let (line, column) = (lexer.line, lexer.column);
    let end = lexer.pos;
    lexer.tokens.push(Token { kind: TokenKind::Eof, start: end, end, line, column });
    Lexed { tokens: lexer.tokens, error }
}

struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: u32,
    column: u32,
    tokens: Vec<Token>,
}

impl Lexer<'_> {
    fn byte(&self, at: usize) -> Option<u8> {
        self.bytes.get(at).copied()
    }

    /// Moves to byte offset `to` (a character boundary), keeping line and column up to date.
    fn advance(&mut self, to: usize) {
        let passed = self.text.get(self.pos..to).unwrap_or("");
        for c in passed.chars() {
            if c == '\n' {
                self.line += 1;
                self.column = 0;
            } else {
                self.column += c.len_utf16() as u32;
            }
        }
        self.pos = to.min(self.text.len()).max(self.pos);
    }

    fn emit(&mut self, kind: TokenKind, end: usize) {
        let (start, line, column) = (self.pos, self.line, self.column);
        self.advance(end);
        self.tokens.push(Token { kind, start, end: self.pos, line, column });
    }

    /// A lexer error at byte offset `at`, worded by ANTLR: `found` is the character there
    /// (`None` at the end of the text).
    fn error_at(&mut self, at: usize, message: impl FnOnce(&str) -> String) -> SyntaxError {
        self.advance(at);
        let found = self.text.get(at..).and_then(|s| s.chars().next());
        let shown = found.map_or_else(|| "<EOF>".to_string(), |c| c.to_string());
        let body = message(&display_token(&shown));
        SyntaxError {
            kind: SyntaxErrorKind::Lexer,
            line: self.line,
            column: self.column as i32,
            offset: at,
            token: shown,
            message: format!("line {}:{} {}", self.line, self.column, body),
        }
    }

    fn run(&mut self) -> Result<(), SyntaxError> {
        while let Some(c) = self.byte(self.pos) {
            let at = self.pos;
            match c {
                b' ' | b'\t' | b'\n' | b'\r' => {
                    let n = self
                        .bytes
                        .get(at..)
                        .unwrap_or_default()
                        .iter()
                        .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                        .count();
                    self.emit(TokenKind::Trivia, at + n);
                }
                b'-' if self.byte(at + 1) == Some(b'-') => self.line_comment(),
                b'/' if self.byte(at + 1) == Some(b'/') => self.line_comment(),
                b'/' if self.byte(at + 1) == Some(b'*') => self.block_comment()?,
                b'\'' => self.quoted_string()?,
                b'$' => self.dollar_string()?,
                b'"' => self.quoted_name()?,
                _ => self.token()?,
            }
        }
        Ok(())
    }

    fn line_comment(&mut self) {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        let n = rest.iter().position(|b| matches!(b, b'\n' | b'\r')).map_or(rest.len(), |i| i + 1);
        self.emit(TokenKind::Trivia, self.pos + n);
    }

    fn block_comment(&mut self) -> Result<(), SyntaxError> {
        let from = self.pos + 2;
        match self.text.get(from..).and_then(|s| s.find("*/")) {
            Some(i) => {
                self.emit(TokenKind::Trivia, from + i + 2);
                Ok(())
            }
            None => Err(self.error_at(self.text.len(), |c| format!("mismatched character {c} expecting '*'"))),
        }
    }

    /// `'...'` with `''` standing for one quote.
    fn quoted_string(&mut self) -> Result<(), SyntaxError> {
        self.delimited(b'\'').map(|(content, end)| self.emit(TokenKind::String(content), end))
    }

    /// `"..."` with `""` standing for one double quote; never empty.
    fn quoted_name(&mut self) -> Result<(), SyntaxError> {
        let (content, end) = self.delimited(b'"')?;
        if content.is_empty() {
            return Err(self.error_at(self.pos + 1, |c| format!("no viable alternative at character {c}")));
        }
        self.emit(TokenKind::QuotedName(content), end);
        Ok(())
    }

    /// Reads from an opening `quote` to its closing one; returns the content and the end.
    fn delimited(&mut self, quote: u8) -> Result<(String, usize), SyntaxError> {
        let mut content = String::new();
        let mut i = self.pos + 1;
        while let Some((rest, j)) =
            self.text.get(i..).and_then(|rest| Some((rest, rest.bytes().position(|b| b == quote)?)))
        {
            content.push_str(rest.get(..j).unwrap_or(""));
            if self.byte(i + j + 1) == Some(quote) {
                content.push(quote as char);
                i += j + 2;
            } else {
                return Ok((content, i + j + 1));
            }
        }
        let q = quote as char;
        Err(self.error_at(self.text.len(), |c| format!("mismatched character {c} expecting '{q}'")))
    }

    /// `$$...$$`, whose content is taken as it is.
    fn dollar_string(&mut self) -> Result<(), SyntaxError> {
        let at = self.pos;
        if self.byte(at + 1) != Some(b'$') {
            return Err(self.error_at(at + 1, |c| format!("mismatched character {c} expecting '$'")));
        }
        match self.text.get(at + 2..).and_then(|s| s.find("$$")) {
            Some(i) => {
                let content = self.text.get(at + 2..at + 2 + i).unwrap_or("").to_string();
                self.emit(TokenKind::String(content), at + 2 + i + 2);
                Ok(())
            }
            None => Err(self.error_at(self.text.len(), |c| format!("mismatched character {c} expecting '$'"))),
        }
    }

    fn punct(&self) -> Option<(Punct, usize)> {
        let next = self.byte(self.pos + 1);
        let (p, len) = match (self.byte(self.pos)?, next) {
            (b'!', Some(b'=')) => (Punct::Neq, 2),
            (b'+', Some(b'=')) => (Punct::PlusEq, 2),
            (b'-', Some(b'=')) => (Punct::MinusEq, 2),
            (b'<', Some(b'=')) => (Punct::Lte, 2),
            (b'>', Some(b'=')) => (Punct::Gte, 2),
            (b'(', _) => (Punct::LParen, 1),
            (b')', _) => (Punct::RParen, 1),
            (b'[', _) => (Punct::LBracket, 1),
            (b']', _) => (Punct::RBracket, 1),
            (b'{', _) => (Punct::LBrace, 1),
            (b'}', _) => (Punct::RBrace, 1),
            (b',', _) => (Punct::Comma, 1),
            (b';', _) => (Punct::Semicolon, 1),
            (b':', _) => (Punct::Colon, 1),
            (b'.', _) => (Punct::Dot, 1),
            (b'*', _) => (Punct::Star, 1),
            (b'+', _) => (Punct::Plus, 1),
            (b'-', _) => (Punct::Minus, 1),
            (b'=', _) => (Punct::Eq, 1),
            (b'<', _) => (Punct::Lt, 1),
            (b'>', _) => (Punct::Gt, 1),
            _ => return None,
        };
        Some((p, self.pos + len))
    }

    /// Everything else: keywords, identifiers, numbers, durations, UUIDs, blobs, `?`,
    /// punctuation. The longest candidate wins; on a tie, the first listed.
    fn token(&mut self) -> Result<(), SyntaxError> {
        let (b, at) = (self.bytes, self.pos);
        let word = scan::word(b, at);
        let word_kind = word.and_then(|end| self.text.get(at..end)).map(|w| {
            if w.eq_ignore_ascii_case("true") || w.eq_ignore_ascii_case("false") {
                TokenKind::Boolean(w.eq_ignore_ascii_case("true"))
            } else {
                Keyword::from_word(w).map_or(TokenKind::Ident, TokenKind::Keyword)
            }
        });
        let expr = (self.text.get(at..at + 5) == Some("expr(")).then_some(at + 5);
        let mut best: Option<(TokenKind, usize)> = None;
        let mut offer = |kind: TokenKind, end: Option<usize>| {
            if let Some(end) = end {
                if best.as_ref().map_or(true, |(_, e)| end > *e) {
                    best = Some((kind, end));
                }
            }
        };
        // In the order of Cassandra's Lexer.g, so that a tie goes to the earlier rule.
        if let Some(kind @ TokenKind::Keyword(_)) = &word_kind {
            offer(kind.clone(), word);
        }
        offer(TokenKind::Integer, scan::integer(b, at));
        offer(TokenKind::QMark, (b.get(at) == Some(&b'?')).then_some(at + 1));
        offer(TokenKind::Float, scan::float(b, at));
        if let Some(kind @ TokenKind::Boolean(_)) = &word_kind {
            offer(kind.clone(), word);
        }
        offer(TokenKind::Duration, scan::duration(b, at));
        if let Some(TokenKind::Ident) = &word_kind {
            offer(TokenKind::Ident, word);
        }
        offer(TokenKind::Hex, scan::hex(b, at));
        offer(TokenKind::Uuid, scan::uuid(b, at));
        offer(TokenKind::ExprParen, expr);
        if let Some((p, end)) = self.punct() {
            offer(TokenKind::Punct(p), Some(end));
        }
        match best {
            Some((kind, end)) => {
                self.emit(kind, end);
                Ok(())
            }
            None if b.get(at) == Some(&b'!') => {
                Err(self.error_at(at + 1, |c| format!("mismatched character {c} expecting '='")))
            }
            None => Err(self.error_at(at, |c| format!("no viable alternative at character {c}"))),
        }
    }
}

/// The UTF-16 width of a token's source, for error snippets.
pub(crate) fn token_width(token: &Token, text: &str) -> u32 {
    java_len(token.source(text)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        tokenize(text).expect("lexes").into_iter().map(|t| t.kind).filter(|k| *k != TokenKind::Trivia).collect()
    }

    #[test]
    fn longest_match_decides_between_numbers_durations_and_uuids() {
        use TokenKind as T;
        assert_eq!(
            kinds("1 1h30m 1.5 -1 1e3 P1D P1Dx 0xff"),
            [T::Integer, T::Duration, T::Float, T::Integer, T::Float, T::Duration, T::Ident, T::Hex, T::Eof]
        );
        assert_eq!(kinds("123e4567-e89b-12d3-a456-426614174000"), [T::Uuid, T::Eof]);
        assert_eq!(kinds("c-1"), [T::Ident, T::Integer, T::Eof]);
        assert_eq!(kinds("- 1"), [T::Punct(Punct::Minus), T::Integer, T::Eof]);
        assert_eq!(
            kinds("-NaN Infinity"),
            [T::Punct(Punct::Minus), T::Keyword(Keyword::Nan), T::Keyword(Keyword::Infinity), T::Eof]
        );
    }

    #[test]
    fn strings_names_and_comments() {
        use TokenKind as T;
        assert_eq!(
            kinds("'it''s' $$a'b$$ \"My \"\"Col\"\"\""),
            [T::String("it's".into()), T::String("a'b".into()), T::QuotedName("My \"Col\"".into()), T::Eof]
        );
        assert_eq!(kinds("a -- x\nb // y\nc /* z\n */ d"), [T::Ident, T::Ident, T::Ident, T::Ident, T::Eof]);
        assert_eq!(
            kinds("TRUE select expr(x"),
            [T::Boolean(true), T::Keyword(Keyword::Select), T::ExprParen, T::Ident, T::Eof]
        );
    }

    #[test]
    fn positions_count_lines_from_one_and_columns_from_zero() {
        let tokens = tokenize("SELECT\n  a").expect("lexes");
        let a = tokens.iter().find(|t| t.kind == TokenKind::Ident).expect("a");
        assert_eq!((a.line, a.column), (2, 2));
    }

    #[test]
    fn errors_are_worded_like_antlr() {
        let e = tokenize("SELECT 'abc").expect_err("unterminated");
        assert_eq!(e.message, "line 1:11 mismatched character '<EOF>' expecting '''");
        let e = tokenize("SELECT # FROM").expect_err("bad char");
        assert_eq!(e.message, "line 1:7 no viable alternative at character '#'");
        let e = tokenize("a ! b").expect_err("lone bang");
        assert_eq!(e.message, "line 1:3 mismatched character ' ' expecting '='");
    }
}
