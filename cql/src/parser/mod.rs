//! The recursive-descent parser: tokens to a [`Statement`], following Cassandra 3.11's
//! `Parser.g` rule by rule.
//!
//! Where ANTLR would throw `MismatchedTokenException` (one token required), we report
//! `mismatched input 'x' expecting T`; where it would throw `NoViableAltException` (no
//! alternative of a decision fits), `no viable alternative at input 'x'`. Checks that
//! Cassandra's grammar actions make (`addRecognitionError`) are recorded and parsing goes on, so
//! that, as in Cassandra, the first error in the statement is the one reported.
//!
//! Recursion is bounded: types, terms, selectors and relations nested deeper than
//! [`MAX_NESTING`] are refused with a [`SyntaxErrorKind::TooDeep`] error, never a stack
//! overflow; 64 levels of the deepest kind took under 640 KiB of stack in an unoptimised build,
//! and the functions on recursive paths are kept small for that reason.
//!
//! Every decision looks at a bounded number of tokens, except two speculative parses that
//! Cassandra's grammar also makes (is `SELECT JSON`/`DISTINCT` followed by a select clause? is
//! `(type)` followed by a term?), which cost a constant factor: a select clause is read at most
//! four times, a hinted type twice.

mod auth;
mod dml;
mod functions;
mod names;
mod schema;
mod select;
mod terms;
mod types;

use crate::ast::Statement;
use crate::error::{append_snippet, display_token, SnippetToken, SyntaxError, SyntaxErrorKind};
use crate::lexer::{lex, token_width, Keyword, Punct, Token, TokenKind};

/// How deeply types, terms, selectors and relations may nest.
pub const MAX_NESTING: usize = 64;

pub(crate) type PResult<T> = Result<T, SyntaxError>;

/// Parses one CQL statement, optionally followed by semicolons.
pub fn parse(text: &str) -> Result<Statement, SyntaxError> {
    let mut p = Parser::new(text);
    let parsed = p.statement_then_eof();
    p.finish(parsed)
}

/// Parses a script of statements separated by semicolons, as cqlsh would send them one by one.
/// The first error ends the script.
pub fn parse_statements(text: &str) -> Result<Vec<Statement>, SyntaxError> {
    let mut p = Parser::new(text);
    let parsed = p.statements_then_eof();
    p.finish(parsed)
}

pub(crate) struct Parser<'a> {
    text: &'a str,
    /// Every token, whitespace and comments included (ANTLR's token stream, for snippets).
    all: Vec<Token>,
    /// Indexes into `all` of the tokens the grammar sees; the last is `Eof`.
    significant: Vec<usize>,
    /// Position in `significant`.
    pos: usize,
    depth: usize,
    /// Where the statement being parsed starts, in `significant`.
    statement_start: usize,
    /// Errors of grammar actions: reported at the end, unless a syntax error came first.
    deferred: Vec<SyntaxError>,
    lex_error: Option<SyntaxError>,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Parser<'a> {
        let lexed = lex(text);
        let significant =
            lexed.tokens.iter().enumerate().filter(|(_, t)| t.kind != TokenKind::Trivia).map(|(i, _)| i).collect();
        Parser {
            text,
            all: lexed.tokens,
            significant,
            pos: 0,
            depth: 0,
            statement_start: 0,
            deferred: Vec::new(),
            lex_error: lexed.error,
        }
    }

    /// The first error wins: a deferred one found before the failure, the lexer's when the
    /// parser got as far as where the lexer stopped, or the parser's.
    fn finish<T>(&mut self, parsed: PResult<T>) -> PResult<T> {
        let mut first = match parsed {
            Ok(v) => match self.deferred.first() {
                Some(e) => Err(e.clone()),
                None => Ok(v),
            },
            Err(e) => Err(self.deferred.first().cloned().unwrap_or(e)),
        };
        if let Some(lex) = self.lex_error.take() {
            let parser_got_first = matches!(&first, Err(e) if e.offset < lex.offset && e.line != 0);
            if !parser_got_first {
                first = Err(lex);
            }
        }
        first
    }

    fn statement_then_eof(&mut self) -> PResult<Statement> {
        let statement = self.statement()?;
        while self.eat_punct(Punct::Semicolon) {}
        self.expect_eof()?;
        Ok(statement)
    }

    fn statements_then_eof(&mut self) -> PResult<Vec<Statement>> {
        let mut out = Vec::new();
        loop {
            while self.eat_punct(Punct::Semicolon) {}
            if self.at_eof() {
                return Ok(out);
            }
            out.push(self.statement()?);
            if !self.at_eof() {
                self.expect_punct(Punct::Semicolon)?;
            }
        }
    }

    /// Cassandra's `cqlStatement`: the first keywords decide.
    fn statement(&mut self) -> PResult<Statement> {
        use Keyword as K;
        self.statement_start = self.pos;
        let TokenKind::Keyword(first) = self.kind(0).clone() else {
            return Err(self.no_viable());
        };
        match first {
            K::Select => self.select_statement().map(Statement::Select),
            K::Insert => self.insert_statement().map(Statement::Insert),
            K::Update => self.update_statement().map(Statement::Update),
            K::Delete => self.delete_statement().map(Statement::Delete),
            K::Begin => self.batch_statement().map(Statement::Batch),
            K::Use => {
                self.advance();
                self.keyspace_name().map(Statement::Use)
            }
            K::Truncate => {
                self.advance();
                self.eat_kw(K::Columnfamily);
                self.table_name().map(Statement::Truncate)
            }
            K::Create => self.create_statement(),
            K::Alter => self.alter_statement(),
            K::Drop => self.drop_statement(),
            K::Grant | K::Revoke => self.grant_or_revoke(),
            K::List => self.list_statement(),
            _ => Err(self.no_viable()),
        }
    }

    // ---- looking at tokens ----

    fn token(&self, n: usize) -> &Token {
        let i = (self.pos + n).min(self.significant.len().saturating_sub(1));
        self.significant.get(i).and_then(|&i| self.all.get(i)).unwrap_or_else(|| self.eof_token())
    }

    fn eof_token(&self) -> &Token {
        // `lex` always ends the stream with Eof, so the stream is never empty.
        static EOF: Token = Token { kind: TokenKind::Eof, start: 0, end: 0, line: 0, column: 0 };
        self.all.last().unwrap_or(&EOF)
    }

    pub(crate) fn kind(&self, n: usize) -> &TokenKind {
        &self.token(n).kind
    }

    pub(crate) fn is_kw(&self, n: usize, k: Keyword) -> bool {
        *self.kind(n) == TokenKind::Keyword(k)
    }

    pub(crate) fn is_punct(&self, n: usize, p: Punct) -> bool {
        *self.kind(n) == TokenKind::Punct(p)
    }

    pub(crate) fn at_eof(&self) -> bool {
        *self.kind(0) == TokenKind::Eof
    }

    /// The current token's source text.
    pub(crate) fn text_of(&self, n: usize) -> &'a str {
        let t = self.token(n);
        self.text.get(t.start..t.end).unwrap_or("")
    }

    /// Moves past the current token (never past the end) and returns it.
    pub(crate) fn advance(&mut self) -> Token {
        let t = self.token(0).clone();
        if self.pos + 1 < self.significant.len() {
            self.pos += 1;
        }
        t
    }

    pub(crate) fn eat_kw(&mut self, k: Keyword) -> bool {
        let found = self.is_kw(0, k);
        if found {
            self.advance();
        }
        found
    }

    pub(crate) fn eat_punct(&mut self, p: Punct) -> bool {
        let found = self.is_punct(0, p);
        if found {
            self.advance();
        }
        found
    }

    pub(crate) fn expect_kw(&mut self, k: Keyword) -> PResult<()> {
        if self.eat_kw(k) {
            Ok(())
        } else {
            Err(self.mismatched(&k.token_name()))
        }
    }

    pub(crate) fn expect_punct(&mut self, p: Punct) -> PResult<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err(self.mismatched(&format!("'{}'", p.as_str())))
        }
    }

    fn expect_eof(&mut self) -> PResult<()> {
        if self.at_eof() {
            Ok(())
        } else {
            Err(self.mismatched("EOF"))
        }
    }

    /// `IF NOT EXISTS`, if present.
    pub(crate) fn if_not_exists(&mut self) -> PResult<bool> {
        if !self.eat_kw(Keyword::If) {
            return Ok(false);
        }
        self.expect_kw(Keyword::Not)?;
        self.expect_kw(Keyword::Exists)?;
        Ok(true)
    }

    /// `IF EXISTS`, if present.
    pub(crate) fn if_exists(&mut self) -> PResult<bool> {
        if !self.eat_kw(Keyword::If) {
            return Ok(false);
        }
        self.expect_kw(Keyword::Exists)?;
        Ok(true)
    }

    // ---- nesting and speculation ----

    /// Runs `f` one nesting level deeper, refusing to go past [`MAX_NESTING`].
    pub(crate) fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_NESTING {
            let body = format!("nesting deeper than {MAX_NESTING} levels at input {}", self.shown_token());
            return Err(self.error_here(SyntaxErrorKind::TooDeep, body));
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    /// Tries `f`; on failure puts everything back as it was and returns `None` (ANTLR's
    /// syntactic predicates). Nesting errors are not failures of the guess: they propagate.
    pub(crate) fn speculate<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<Option<T>> {
        let (pos, depth, deferred) = (self.pos, self.depth, self.deferred.len());
        match f(self) {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.kind == SyntaxErrorKind::TooDeep => Err(e),
            Err(_) => {
                self.pos = pos;
                self.depth = depth;
                self.deferred.truncate(deferred);
                Ok(None)
            }
        }
    }

    // ---- errors ----

    fn shown_token(&self) -> String {
        display_token(&self.token(0).display_text(self.text))
    }

    /// `mismatched input 'x' expecting T` at the current token.
    pub(crate) fn mismatched(&self, expected: &str) -> SyntaxError {
        let body = format!("mismatched input {} expecting {expected}", self.shown_token());
        self.error_here(SyntaxErrorKind::Mismatched { expected: expected.to_string() }, body)
    }

    /// `no viable alternative at input 'x'` at the current token.
    pub(crate) fn no_viable(&self) -> SyntaxError {
        let body = format!("no viable alternative at input {}", self.shown_token());
        self.error_here(SyntaxErrorKind::NoViableAlternative, body)
    }

    /// `no viable alternative at input 'x'` for a decision that began at position `start` and
    /// gave up at the current token. ANTLR's DFAs rewind the stream before the error is
    /// reported, so Cassandra's snippet marks the token where the decision began while its
    /// header names the one where it gave up: `line 1:7 no viable alternative at input 'TABEL'
    /// ([CREATE] TABEL...)`.
    pub(crate) fn no_viable_since(&self, start: usize) -> SyntaxError {
        let body = format!("no viable alternative at input {}", self.shown_token());
        self.error_marking(SyntaxErrorKind::NoViableAlternative, body, start)
    }

    /// An error at the current token, with Cassandra's header and snippet.
    fn error_here(&self, kind: SyntaxErrorKind, body: String) -> SyntaxError {
        self.error_marking(kind, body, self.pos)
    }

    /// An error at the current token whose snippet marks the token at position `mark`.
    fn error_marking(&self, kind: SyntaxErrorKind, body: String, mark: usize) -> SyntaxError {
        let token = self.token(0);
        let shown = token.display_text(self.text);
        if token.kind == TokenKind::Eof {
            return SyntaxError {
                kind,
                line: 0,
                column: -1,
                offset: self.text.len(),
                token: shown,
                message: format!("line 0:-1 {body}"),
            };
        }
        let mut message = format!("line {}:{} {body}", token.line, token.column);
        // Cassandra quotes from ten stream tokens (whitespace included) before the marked one to
        // two after it, but never past what the parser had read.
        let current = self.significant.get(self.pos).copied().unwrap_or(0);
        let marked = self.significant.get(mark.min(self.pos)).copied().unwrap_or(current);
        let at = |i: usize| self.all.get(i).unwrap_or(token);
        let snippet = |t: &Token| SnippetToken { line: t.line, column: t.column, width: token_width(t, self.text) };
        let (from, to, offending) = (at(marked.saturating_sub(10)), at(current.min(marked + 2)), at(marked));
        append_snippet(&mut message, self.text, snippet(from), snippet(to), snippet(offending));
        SyntaxError { kind, line: token.line, column: token.column as i32, offset: token.start, token: shown, message }
    }

    /// Records an error of Cassandra's grammar actions (a bare message) and goes on parsing.
    pub(crate) fn defer(&mut self, message: String) {
        let token = self.token(0);
        let (line, column) = if token.kind == TokenKind::Eof { (0, -1) } else { (token.line, token.column as i32) };
        let shown = token.display_text(self.text);
        self.deferred.push(SyntaxError {
            kind: SyntaxErrorKind::Invalid,
            line,
            column,
            offset: token.start,
            token: shown,
            message,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_error_in_the_text_wins() {
        // A rule's error found before a syntax error is reported, as in Cassandra.
        let e = parse("SELECT * FROM ? WHERE").expect_err("two errors");
        assert_eq!(e.message, "Bind variables cannot be used for table names");
        // A parser error before the lexer's stopping point beats the lexer's error.
        let e = parse("SELECT * FROMM t 'abc").expect_err("two errors");
        assert_eq!(e.kind, SyntaxErrorKind::Mismatched { expected: "K_FROM".into() });
        // Reaching the lexer's stopping point reports the lexer's error, even on success.
        let e = parse("SELECT * FROM t 'abc").expect_err("unterminated");
        assert_eq!(e.kind, SyntaxErrorKind::Lexer);
    }

    #[test]
    fn speculation_leaves_no_trace_of_the_failed_guess() {
        // `(frozen<int>)` is first tried as a type hint, which records the frozen<int> error;
        // no term follows, so it is a tuple after all, and the error must go with the guess.
        let e = parse("INSERT INTO t (c) VALUES ((frozen<int>))").expect_err("not a term");
        assert_eq!(e.kind, SyntaxErrorKind::NoViableAlternative);
        assert_eq!(e.token, "frozen");
        let s = parse("SELECT distinct, b FROM t").expect("distinct is a column");
        assert_eq!(s.to_string(), "SELECT distinct, b FROM t");
    }

    #[test]
    fn scripts_split_on_semicolons() {
        let statements = parse_statements("USE ks; SELECT * FROM t;; DROP TABLE t").expect("three statements");
        assert_eq!(statements.len(), 3);
        assert!(parse_statements("USE ks SELECT").is_err());
    }
}
