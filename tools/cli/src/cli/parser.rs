//! Recursive-descent parser for cassandra-cli statements (one statement at a time).
//!
//! The accepted syntax follows cassandra-cli 1.x: see `help;` in the shell, or [`super::help`].

use super::ast::*;
use super::lexer::{tokenize, LexError, Token, TokenKind};

/// Why a statement did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error(transparent)]
    Lex(#[from] LexError),
    /// The first word is not a command.
    #[error("Command not found: `{statement}`. Type 'help;' or '?' for help.")]
    UnknownCommand { statement: String },
    #[error("Syntax error at position {pos}: {message}")]
    Syntax { pos: usize, message: String },
}

/// Parses one statement (a trailing `;` is allowed). Empty input gives [`Statement::NoOp`].
pub fn parse_statement(src: &str) -> Result<Statement, ParseError> {
    let tokens = tokenize(src)?;
    let mut p = Parser { src, tokens, pos: 0 };
    let stmt = p.statement()?;
    p.eat_punct(";");
    if let Some(t) = p.peek() {
        return Err(p.error_at(t.start, format!("unexpected '{}' after the end of the statement", t.kind)));
    }
    Ok(stmt)
}

struct Parser<'a> {
    src: &'a str,
    tokens: Vec<Token>,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn peek_kind(&self) -> Option<&TokenKind> {
        self.peek().map(|t| &t.kind)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.pos).cloned();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    fn here(&self) -> usize {
        self.peek().map_or(self.src.len(), |t| t.start)
    }

    fn error_at(&self, pos: usize, message: String) -> ParseError {
        ParseError::Syntax { pos, message }
    }

    fn unexpected(&self, wanted: &str) -> ParseError {
        match self.peek() {
            Some(t) => self.error_at(t.start, format!("expected {wanted}, found '{}'", t.kind)),
            None => self.error_at(self.src.len(), format!("expected {wanted} at the end of the statement")),
        }
    }

    /// True (and consumes it) if the next token is the keyword `kw` (case-insensitive).
    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek_kind(), Some(TokenKind::Ident(w)) if w.eq_ignore_ascii_case(kw))
    }

    fn expect_kw(&mut self, kw: &str) -> Result<(), ParseError> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{}'", kw.to_ascii_uppercase())))
        }
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek_kind(), Some(TokenKind::Punct(q)) if *q == p)
    }

    fn expect_punct(&mut self, p: &str) -> Result<(), ParseError> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{p}'")))
        }
    }

    fn at_end(&self) -> bool {
        self.peek().is_none() || self.is_punct(";")
    }

    /// entityName: identifier, string or integer.
    fn entity_name(&mut self, what: &str) -> Result<String, ParseError> {
        match self.peek_kind() {
            Some(TokenKind::Ident(s) | TokenKind::Str(s) | TokenKind::Int(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.unexpected(what)),
        }
    }

    fn positive_int(&mut self, what: &str) -> Result<u64, ParseError> {
        let pos = self.here();
        match self.next().map(|t| t.kind) {
            Some(TokenKind::Int(s)) => {
                s.parse::<u64>().map_err(|_| self.error_at(pos, format!("{what} must be a positive integer, got {s}")))
            }
            _ => {
                self.pos = self.pos.saturating_sub(1);
                Err(self.unexpected(what))
            }
        }
    }

    fn limit_clause(&mut self) -> Result<Option<u32>, ParseError> {
        if !self.eat_kw("limit") {
            return Ok(None);
        }
        let pos = self.here();
        let n = self.positive_int("a limit")?;
        let n = u32::try_from(n).ok().filter(|&n| n > 0 && n <= i32::MAX as u32);
        match n {
            Some(n) => Ok(Some(n)),
            None => Err(self.error_at(pos, "LIMIT should be greater than zero and fit in a 32-bit integer.".into())),
        }
    }

    fn statement(&mut self) -> Result<Statement, ParseError> {
        let Some(first) = self.peek().cloned() else {
            return Ok(Statement::NoOp);
        };
        if self.eat_punct("?") {
            return Ok(Statement::Help { topic: None });
        }
        if self.is_punct(";") {
            return Ok(Statement::NoOp);
        }
        let TokenKind::Ident(word) = &first.kind else {
            return Err(self.unknown_command());
        };
        self.pos += 1;
        match word.to_ascii_lowercase().as_str() {
            "connect" => self.connect(),
            "use" => self.use_keyspace(),
            "help" => self.help(),
            "quit" | "exit" => Ok(Statement::Exit),
            "create" => self.create_or_update(true),
            "update" => self.create_or_update(false),
            "drop" => self.drop(),
            "set" => self.set(),
            "get" => self.get(),
            "del" => Ok(Statement::Del { path: self.path_expr()? }),
            "count" => Ok(Statement::Count { path: self.path_expr()? }),
            "incr" => self.incr(1),
            "decr" => self.incr(-1),
            "list" => self.list(),
            "truncate" => Ok(Statement::Truncate { cf: self.entity_name("a column family name")? }),
            "assume" => self.assume(),
            "consistencylevel" => {
                self.expect_kw("as")?;
                Ok(Statement::ConsistencyLevel { level: self.entity_name("a consistency level")? })
            }
            "describe" => self.describe(),
            "show" => self.show(),
            "trace" => {
                self.expect_kw("next")?;
                self.expect_kw("query")?;
                Ok(Statement::TraceNextQuery)
            }
            _ => Err(self.unknown_command()),
        }
    }

    fn unknown_command(&self) -> ParseError {
        ParseError::UnknownCommand { statement: self.src.trim().trim_end_matches(';').trim_end().to_string() }
    }

    fn connect(&mut self) -> Result<Statement, ParseError> {
        // The host is everything up to `/`, taken from the source (so `127.0.0.1` and
        // `node-1.example.com` both work whatever their tokens are).
        let start = self.here();
        let mut end = start;
        while let Some(t) = self.peek() {
            if matches!(t.kind, TokenKind::Punct("/")) {
                break;
            }
            end = t.end;
            self.pos += 1;
        }
        let host = self.src.get(start..end).unwrap_or_default().trim().to_string();
        if host.is_empty() || host.contains(char::is_whitespace) {
            return Err(self.error_at(start, "expected HOST/PORT".into()));
        }
        self.expect_punct("/")?;
        let pos = self.here();
        let port = self.positive_int("a port number")?;
        let port = u16::try_from(port).map_err(|_| self.error_at(pos, format!("port {port} is out of range")))?;
        let credentials = self.credentials()?;
        Ok(Statement::Connect { host, port, credentials })
    }

    /// Optional `username 'password'` after connect/use.
    fn credentials(&mut self) -> Result<Option<(String, String)>, ParseError> {
        if self.at_end() {
            return Ok(None);
        }
        let user = self.entity_name("a user name")?;
        let pass = self.entity_name("a password")?;
        Ok(Some((user, pass)))
    }

    fn use_keyspace(&mut self) -> Result<Statement, ParseError> {
        let keyspace = self.entity_name("a keyspace name")?;
        let credentials = self.credentials()?;
        Ok(Statement::Use { keyspace, credentials })
    }

    fn help(&mut self) -> Result<Statement, ParseError> {
        let mut words = Vec::new();
        while !self.at_end() {
            match self.next().map(|t| t.kind) {
                Some(TokenKind::Ident(w)) => words.push(w.to_ascii_lowercase()),
                _ => {
                    self.pos -= 1;
                    return Err(self.unexpected("a command name"));
                }
            }
        }
        Ok(Statement::Help { topic: (!words.is_empty()).then(|| words.join(" ")) })
    }

    fn create_or_update(&mut self, create: bool) -> Result<Statement, ParseError> {
        if self.eat_kw("keyspace") {
            let (name, attrs) = self.key_value_pairs("a keyspace name")?;
            return Ok(if create {
                Statement::CreateKeyspace { name, attrs }
            } else {
                Statement::UpdateKeyspace { name, attrs }
            });
        }
        if self.eat_kw("column") {
            self.expect_kw("family")?;
            let (name, attrs) = self.key_value_pairs("a column family name")?;
            return Ok(if create {
                Statement::CreateColumnFamily { name, attrs }
            } else {
                Statement::UpdateColumnFamily { name, attrs }
            });
        }
        Err(self.unexpected("KEYSPACE or COLUMN FAMILY"))
    }

    /// `name (with|and attr = value)*`
    fn key_value_pairs(&mut self, what: &str) -> Result<(String, Attrs), ParseError> {
        let name = self.entity_name(what)?;
        let mut attrs = Vec::new();
        while !self.at_end() {
            if !(self.eat_kw("with") || self.eat_kw("and")) {
                return Err(self.unexpected("WITH or AND"));
            }
            let attr = match self.next().map(|t| t.kind) {
                Some(TokenKind::Ident(a)) => a.to_ascii_lowercase(),
                _ => {
                    self.pos = self.pos.saturating_sub(1);
                    return Err(self.unexpected("an attribute name"));
                }
            };
            self.expect_punct("=")?;
            attrs.push((attr, self.attr_value()?));
        }
        Ok((name, attrs))
    }

    fn attr_value(&mut self) -> Result<AttrValue, ParseError> {
        if self.eat_punct("[") {
            let mut items = Vec::new();
            while !self.eat_punct("]") {
                if self.is_punct("{") {
                    items.push(self.hash()?);
                    self.eat_punct(",");
                } else {
                    return Err(self.unexpected("'{' or ']'"));
                }
            }
            return Ok(AttrValue::Array(items));
        }
        if self.is_punct("{") {
            return self.hash();
        }
        match self.next().map(|t| t.kind) {
            Some(TokenKind::Ident(s) | TokenKind::Str(s)) => Ok(AttrValue::Text(s)),
            Some(TokenKind::Int(s)) => Ok(AttrValue::Int(s)),
            Some(TokenKind::Double(s)) => Ok(AttrValue::Double(s)),
            _ => {
                self.pos = self.pos.saturating_sub(1);
                Err(self.unexpected("a value"))
            }
        }
    }

    /// `{ key : value (, key : value)* }`
    fn hash(&mut self) -> Result<AttrValue, ParseError> {
        self.expect_punct("{")?;
        let mut pairs = Vec::new();
        if self.eat_punct("}") {
            return Ok(AttrValue::Hash(pairs));
        }
        loop {
            let key = match self.term("a hash key")? {
                Term::Text(s) => s,
                Term::Call { name, arg } => {
                    // Function-typed keys only make sense as column names; keep them as text the
                    // schema code can convert (`long(5)`).
                    format!("{name}({})", arg.unwrap_or_default())
                }
            };
            self.expect_punct(":")?;
            let value = if self.is_punct("{") {
                self.hash()?
            } else {
                match self.next().map(|t| t.kind) {
                    Some(TokenKind::Ident(s)) if self.is_punct("(") => {
                        let arg = self.call_args()?;
                        AttrValue::Call { name: s, arg }
                    }
                    Some(TokenKind::Ident(s) | TokenKind::Str(s)) => AttrValue::Text(s),
                    Some(TokenKind::Int(s)) => AttrValue::Int(s),
                    Some(TokenKind::Double(s)) => AttrValue::Double(s),
                    _ => {
                        self.pos = self.pos.saturating_sub(1);
                        return Err(self.unexpected("a hash value"));
                    }
                }
            };
            pairs.push((key, value));
            if self.eat_punct("}") {
                return Ok(AttrValue::Hash(pairs));
            }
            self.expect_punct(",")?;
        }
    }

    /// `( arg? )` after a function name.
    fn call_args(&mut self) -> Result<Option<String>, ParseError> {
        self.expect_punct("(")?;
        if self.eat_punct(")") {
            return Ok(None);
        }
        let arg = self.entity_name("a function argument")?;
        self.expect_punct(")")?;
        Ok(Some(arg))
    }

    /// A value: identifier, number, string or function call.
    fn term(&mut self, what: &str) -> Result<Term, ParseError> {
        match self.next().map(|t| t.kind) {
            Some(TokenKind::Ident(s)) if self.is_punct("(") => {
                let arg = self.call_args()?;
                Ok(Term::Call { name: s, arg })
            }
            Some(TokenKind::Ident(s) | TokenKind::Str(s) | TokenKind::Int(s) | TokenKind::Double(s)) => {
                Ok(Term::Text(s))
            }
            _ => {
                self.pos = self.pos.saturating_sub(1);
                Err(self.unexpected(what))
            }
        }
    }

    /// `CF [ key ] ([ col ] ([ subcol ])?)?`
    fn path_expr(&mut self) -> Result<PathExpr, ParseError> {
        let cf = self.entity_name("a column family name")?;
        self.expect_punct("[")?;
        let key = self.term("a row key")?;
        self.expect_punct("]")?;
        let mut columns = Vec::new();
        while self.eat_punct("[") {
            if columns.len() == 2 {
                return Err(self.error_at(self.here(), "Invalid row, super column, or column specification.".into()));
            }
            columns.push(self.term("a column name")?);
            self.expect_punct("]")?;
        }
        Ok(PathExpr { cf, key, columns })
    }

    fn set(&mut self) -> Result<Statement, ParseError> {
        let path = self.path_expr()?;
        self.expect_punct("=")?;
        let value = self.term("a value")?;
        let mut ttl = None;
        if self.eat_kw("with") {
            self.expect_kw("ttl")?;
            self.expect_punct("=")?;
            let pos = self.here();
            let n = self.positive_int("a TTL")?;
            ttl = Some(
                i32::try_from(n)
                    .map_err(|_| self.error_at(pos, format!("TTL '{n}' is invalid, should be a positive integer.")))?,
            );
        }
        Ok(Statement::Set { path, value, ttl })
    }

    fn get(&mut self) -> Result<Statement, ParseError> {
        // `get CF where ...` has no `[` after the column family name.
        let is_where = matches!(self.tokens.get(self.pos + 1), Some(Token { kind: TokenKind::Ident(w), .. }) if w.eq_ignore_ascii_case("where"));
        if is_where {
            let cf = self.entity_name("a column family name")?;
            self.expect_kw("where")?;
            let mut conditions = vec![self.condition()?];
            while self.eat_kw("and") {
                conditions.push(self.condition()?);
            }
            let limit = self.limit_clause()?;
            return Ok(Statement::GetWhere { cf, conditions, limit });
        }
        let path = self.path_expr()?;
        let as_type = if self.eat_kw("as") { Some(self.entity_name("a type name")?) } else { None };
        let limit = self.limit_clause()?;
        Ok(Statement::Get { path, as_type, limit })
    }

    fn condition(&mut self) -> Result<Condition, ParseError> {
        let column = self.term("a column name")?;
        let op = match self.next().map(|t| t.kind) {
            Some(TokenKind::Punct("=")) => CompareOp::Eq,
            Some(TokenKind::Punct(">")) => CompareOp::Gt,
            Some(TokenKind::Punct(">=")) => CompareOp::Gte,
            Some(TokenKind::Punct("<")) => CompareOp::Lt,
            Some(TokenKind::Punct("<=")) => CompareOp::Lte,
            _ => {
                self.pos = self.pos.saturating_sub(1);
                return Err(self.unexpected("one of = > >= < <="));
            }
        };
        let value = self.term("a value")?;
        Ok(Condition { column, op, value })
    }

    fn incr(&mut self, sign: i64) -> Result<Statement, ParseError> {
        let path = self.path_expr()?;
        let mut by = 1i64;
        if self.eat_kw("by") {
            let pos = self.here();
            by = match self.next().map(|t| t.kind) {
                Some(TokenKind::Int(s)) => s
                    .parse::<i64>()
                    .map_err(|_| self.error_at(pos, format!("'{s}' is an invalid value, should be an integer.")))?,
                _ => {
                    self.pos = self.pos.saturating_sub(1);
                    return Err(self.unexpected("an integer"));
                }
            };
        }
        Ok(Statement::Incr { path, by: by.wrapping_mul(sign) })
    }

    fn list(&mut self) -> Result<Statement, ParseError> {
        let cf = self.entity_name("a column family name")?;
        let (mut start, mut end) = (None, None);
        // `[start:end]`, either side optional; `[]` is the same as no range.
        if self.eat_punct("[") && !self.eat_punct("]") {
            if !self.is_punct(":") {
                start = Some(self.entity_name("a start key")?);
            }
            self.expect_punct(":")?;
            if !self.is_punct("]") {
                end = Some(self.entity_name("an end key")?);
            }
            self.expect_punct("]")?;
        }
        // cassandra-cli's grammar takes any integer literal here and its executeList refuses 0
        // with a message; 0 is let through for that.
        let limit = if self.eat_kw("limit") { Some(self.count("a limit")?) } else { None };
        let (mut columns, mut reversed) = (None, false);
        if self.eat_kw("columns") {
            columns = Some(self.count("a column count")?);
            reversed = self.eat_kw("reversed");
        }
        Ok(Statement::List { cf, start, end, limit, columns, reversed })
    }

    /// A non-negative integer that fits Thrift's 32-bit counts.
    fn count(&mut self, what: &str) -> Result<u32, ParseError> {
        let pos = self.here();
        let n = self.positive_int(what)?;
        u32::try_from(n)
            .ok()
            .filter(|&n| n <= i32::MAX as u32)
            .ok_or_else(|| self.error_at(pos, format!("{what} must fit in a 32-bit integer, got {n}")))
    }

    fn drop(&mut self) -> Result<Statement, ParseError> {
        if self.eat_kw("keyspace") {
            return Ok(Statement::DropKeyspace { name: self.entity_name("a keyspace name")? });
        }
        if self.eat_kw("column") {
            self.expect_kw("family")?;
            return Ok(Statement::DropColumnFamily { name: self.entity_name("a column family name")? });
        }
        if self.eat_kw("index") {
            self.expect_kw("on")?;
            let cf = self.entity_name("a column family name")?;
            self.expect_punct(".")?;
            let column = self.entity_name("a column name")?;
            return Ok(Statement::DropIndex { cf, column });
        }
        Err(self.unexpected("KEYSPACE, COLUMN FAMILY or INDEX"))
    }

    fn assume(&mut self) -> Result<Statement, ParseError> {
        let cf = self.entity_name("a column family name")?;
        let pos = self.here();
        let element = self.entity_name("KEYS, COMPARATOR, SUB_COMPARATOR or VALIDATOR")?;
        let target = match element.to_ascii_lowercase().as_str() {
            "keys" => AssumeTarget::Keys,
            "comparator" => AssumeTarget::Comparator,
            "sub_comparator" | "subcomparator" => AssumeTarget::SubComparator,
            "validator" => AssumeTarget::Validator,
            _ => {
                return Err(self.error_at(
                    pos,
                    format!("'{element}' is invalid. Available: VALIDATOR, COMPARATOR, KEYS, SUB_COMPARATOR."),
                ))
            }
        };
        self.expect_kw("as")?;
        let type_name = self.entity_name("a type name")?;
        Ok(Statement::Assume { cf, target, type_name })
    }

    fn describe(&mut self) -> Result<Statement, ParseError> {
        if self.at_end() {
            return Ok(Statement::Describe { name: None });
        }
        // `describe cluster` / `describe ring` unless a keyspace/CF is literally named so and
        // quoted ('cluster').
        if matches!(self.peek_kind(), Some(TokenKind::Ident(_))) {
            if self.eat_kw("cluster") {
                if self.at_end() {
                    return Ok(Statement::DescribeCluster);
                }
                self.pos -= 1;
            } else if self.eat_kw("ring") {
                let keyspace = if self.at_end() { None } else { Some(self.entity_name("a keyspace name")?) };
                return Ok(Statement::DescribeRing { keyspace });
            } else if self.eat_kw("keyspace") {
                // Old form: `describe keyspace KS`.
                if !self.at_end() {
                    return Ok(Statement::Describe { name: Some(self.entity_name("a keyspace name")?) });
                }
                self.pos -= 1;
            }
        }
        Ok(Statement::Describe { name: Some(self.entity_name("a keyspace or column family name")?) })
    }

    fn show(&mut self) -> Result<Statement, ParseError> {
        if self.eat_kw("keyspaces") {
            return Ok(Statement::ShowKeyspaces);
        }
        if self.eat_kw("cluster") {
            self.expect_kw("name")?;
            return Ok(Statement::ShowClusterName);
        }
        if self.eat_kw("api") {
            self.expect_kw("version")?;
            return Ok(Statement::ShowApiVersion);
        }
        if self.eat_kw("schema") {
            let keyspace = if self.at_end() { None } else { Some(self.entity_name("a keyspace name")?) };
            return Ok(Statement::ShowSchema { keyspace });
        }
        Err(self.unexpected("KEYSPACES, CLUSTER NAME, API VERSION or SCHEMA"))
    }
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
