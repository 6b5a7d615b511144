//! Terms and constants (Cassandra's `term`, `value`, `constant`, `collectionLiteral`,
//! `usertypeLiteral`, `tupleLiteral`, `function`, `intValue`, markers and IN values).

use super::{PResult, Parser};
use crate::ast::{BindMarker, Constant, InValues, Term};
use crate::lexer::{Keyword, Punct, TokenKind};

impl Parser<'_> {
    /// True if token `n` can start a constant.
    pub(crate) fn starts_constant(&self, n: usize) -> bool {
        match self.kind(n) {
            TokenKind::String(_)
            | TokenKind::Integer
            | TokenKind::Float
            | TokenKind::Boolean(_)
            | TokenKind::Duration
            | TokenKind::Uuid
            | TokenKind::Hex
            | TokenKind::Keyword(Keyword::Nan | Keyword::Infinity) => true,
            TokenKind::Punct(Punct::Minus) => self.is_kw(n + 1, Keyword::Nan) || self.is_kw(n + 1, Keyword::Infinity),
            _ => false,
        }
    }

    /// True if token `n` can start a bind marker.
    pub(crate) fn starts_marker(&self, n: usize) -> bool {
        *self.kind(n) == TokenKind::QMark || (self.is_punct(n, Punct::Colon) && self.is_ident(n + 1))
    }

    /// True if token `n` can start a term.
    pub(crate) fn starts_term(&self, n: usize) -> bool {
        self.starts_constant(n)
            || self.starts_marker(n)
            || self.is_kw(n, Keyword::Null)
            || matches!(self.kind(n), TokenKind::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace))
            || self.starts_function_call(n)
    }

    /// `constant`
    pub(crate) fn constant(&mut self) -> PResult<Constant> {
        let text = self.text_of(0);
        let constant = match self.kind(0).clone() {
            TokenKind::String(s) => Constant::String(s),
            TokenKind::Integer => Constant::Integer(text.to_string()),
            TokenKind::Float | TokenKind::Keyword(Keyword::Nan | Keyword::Infinity) => {
                Constant::Float(text.to_string())
            }
            TokenKind::Boolean(b) => Constant::Boolean(b),
            TokenKind::Duration => Constant::Duration(text.to_string()),
            TokenKind::Uuid => match uuid::Uuid::parse_str(text) {
                Ok(u) => Constant::Uuid(u),
                Err(_) => return Err(self.no_viable()),
            },
            TokenKind::Hex => Constant::Hex(text.get(2..).unwrap_or("").to_string()),
            TokenKind::Punct(Punct::Minus) if self.starts_constant(0) => {
                self.advance();
                let word = self.text_of(0);
                self.advance();
                return Ok(Constant::Float(format!("-{word}")));
            }
            _ => return Err(self.no_viable()),
        };
        self.advance();
        Ok(constant)
    }

    /// `marker`: `?` or `:name`.
    pub(crate) fn marker(&mut self) -> PResult<BindMarker> {
        if *self.kind(0) == TokenKind::QMark {
            self.advance();
            return Ok(BindMarker::Anonymous);
        }
        if self.eat_punct(Punct::Colon) {
            return Ok(BindMarker::Named(self.ident()?));
        }
        Err(self.no_viable())
    }

    /// `intValue`: an integer or a bind marker (LIMIT, TTL, TIMESTAMP).
    pub(crate) fn int_value(&mut self) -> PResult<Term> {
        if *self.kind(0) == TokenKind::Integer {
            return self.constant().map(Term::Constant);
        }
        if *self.kind(0) == TokenKind::QMark || self.is_punct(0, Punct::Colon) {
            return self.marker().map(Term::BindMarker);
        }
        Err(self.no_viable())
    }

    /// `term`
    pub(crate) fn term(&mut self) -> PResult<Term> {
        self.nested(Self::term_inner)
    }

    fn term_inner(&mut self) -> PResult<Term> {
        if self.is_punct(0, Punct::LParen) {
            if let Some(hint) = self.type_hint_prefix()? {
                let term = self.term()?;
                return Ok(Term::TypeHint { hint, term: Box::new(term) });
            }
            return self.tuple_literal();
        }
        if self.starts_function_call(0) {
            let name = self.function_name()?;
            let args = self.parenthesized_terms()?;
            return Ok(Term::FunctionCall { name, args });
        }
        self.value()
    }

    /// `'(' comparatorType ')'` when a term follows it: a type hint rather than a tuple.
    /// Cassandra's grammar makes the same choice between `(int)?` and `('a')`.
    pub(crate) fn type_hint_prefix(&mut self) -> PResult<Option<crate::ast::CqlType>> {
        if !self.starts_type(1) {
            return Ok(None);
        }
        self.speculate(|p| {
            p.expect_punct(Punct::LParen)?;
            let hint = p.cql_type()?;
            p.expect_punct(Punct::RParen)?;
            if p.starts_term(0) {
                Ok(hint)
            } else {
                Err(p.no_viable())
            }
        })
    }

    /// `value`: a constant, a collection, UDT or tuple literal, NULL or a bind marker.
    pub(crate) fn value(&mut self) -> PResult<Term> {
        if self.starts_constant(0) {
            return self.constant().map(Term::Constant);
        }
        match self.kind(0) {
            TokenKind::Keyword(Keyword::Null) => {
                self.advance();
                Ok(Term::Null)
            }
            TokenKind::QMark | TokenKind::Punct(Punct::Colon) => self.marker().map(Term::BindMarker),
            TokenKind::Punct(Punct::LBracket) => self.list_literal(),
            TokenKind::Punct(Punct::LBrace) if self.is_ident(1) && self.is_punct(2, Punct::Colon) => {
                self.user_type_literal()
            }
            TokenKind::Punct(Punct::LBrace) => self.set_or_map_literal(),
            TokenKind::Punct(Punct::LParen) => self.tuple_literal(),
            _ => Err(self.no_viable()),
        }
    }

    fn list_literal(&mut self) -> PResult<Term> {
        self.expect_punct(Punct::LBracket)?;
        let items = self.terms_until(Punct::RBracket)?;
        Ok(Term::List(items))
    }

    /// `(term (',' term)*)? close`
    fn terms_until(&mut self, close: Punct) -> PResult<Vec<Term>> {
        let mut items = Vec::new();
        if !self.eat_punct(close) {
            items.push(self.term()?);
            while self.eat_punct(Punct::Comma) {
                items.push(self.term()?);
            }
            self.expect_punct(close)?;
        }
        Ok(items)
    }

    /// `'(' (term (',' term)*)? ')'`: function arguments and IN lists.
    pub(crate) fn parenthesized_terms(&mut self) -> PResult<Vec<Term>> {
        self.expect_punct(Punct::LParen)?;
        self.terms_until(Punct::RParen)
    }

    fn set_or_map_literal(&mut self) -> PResult<Term> {
        self.expect_punct(Punct::LBrace)?;
        if self.eat_punct(Punct::RBrace) {
            return Ok(Term::Set(Vec::new()));
        }
        let first = self.term()?;
        if self.eat_punct(Punct::Colon) {
            let mut entries = vec![(first, self.term()?)];
            while self.eat_punct(Punct::Comma) {
                let k = self.term()?;
                self.expect_punct(Punct::Colon)?;
                entries.push((k, self.term()?));
            }
            self.expect_punct(Punct::RBrace)?;
            return Ok(Term::Map(entries));
        }
        let mut items = vec![first];
        while self.eat_punct(Punct::Comma) {
            items.push(self.term()?);
        }
        self.expect_punct(Punct::RBrace)?;
        Ok(Term::Set(items))
    }

    fn user_type_literal(&mut self) -> PResult<Term> {
        self.expect_punct(Punct::LBrace)?;
        let mut fields = Vec::new();
        loop {
            let field = self.ident()?;
            self.expect_punct(Punct::Colon)?;
            fields.push((field, self.term()?));
            if !self.eat_punct(Punct::Comma) {
                break;
            }
        }
        self.expect_punct(Punct::RBrace)?;
        Ok(Term::UserType(fields))
    }

    /// `'(' term (',' term)* ')'`
    pub(crate) fn tuple_literal(&mut self) -> PResult<Term> {
        self.expect_punct(Punct::LParen)?;
        let mut items = vec![self.term()?];
        while self.eat_punct(Punct::Comma) {
            items.push(self.term()?);
        }
        self.expect_punct(Punct::RParen)?;
        Ok(Term::Tuple(items))
    }

    /// `singleColumnInValues | inMarker`: `(a, b)`, `()`, `?` or `:name`.
    pub(crate) fn in_values(&mut self) -> PResult<InValues> {
        if self.is_punct(0, Punct::LParen) {
            return self.parenthesized_terms().map(InValues::List);
        }
        if self.starts_marker(0) {
            return self.marker().map(InValues::Marker);
        }
        Err(self.no_viable())
    }

    /// A map of constants: Cassandra's `mapLiteral` in properties and role options, with its
    /// `convertPropertyMap` checks (constants only, each key once).
    pub(crate) fn constant_map(&mut self) -> PResult<Vec<(Constant, Constant)>> {
        self.expect_punct(Punct::LBrace)?;
        let mut raw = Vec::new();
        if !self.eat_punct(Punct::RBrace) {
            loop {
                let k = self.term()?;
                self.expect_punct(Punct::Colon)?;
                raw.push((k, self.term()?));
                if !self.eat_punct(Punct::Comma) {
                    break;
                }
            }
            self.expect_punct(Punct::RBrace)?;
        }
        let mut out: Vec<(Constant, Constant)> = Vec::with_capacity(raw.len());
        for (k, v) in raw {
            let key = match k {
                Term::Constant(c) => c,
                other => {
                    self.defer(format!("Invalid property name: {other}{}", ddl_marker_note(&other)));
                    break;
                }
            };
            let value = match v {
                Term::Constant(c) => c,
                other => {
                    self.defer(format!(
                        "Invalid property value: {other} for property: {key}{}",
                        ddl_marker_note(&other)
                    ));
                    break;
                }
            };
            if out.iter().any(|(seen, _)| seen.raw_text() == key.raw_text()) {
                self.defer(format!("Multiple definition for property {}", key.raw_text()));
            }
            out.push((key, value));
        }
        Ok(out)
    }
}

fn ddl_marker_note(t: &Term) -> &'static str {
    if matches!(t, Term::BindMarker(_)) {
        " (bind variables are not supported in DDL queries)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use crate::ast::{Constant, CqlType, InsertValues, NativeType, Statement, Term};
    use crate::parse;

    fn value(text: &str) -> Term {
        match parse(&format!("INSERT INTO t (c) VALUES ({text})")) {
            Ok(Statement::Insert(i)) => match i.values {
                InsertValues::Values { mut values, .. } => values.remove(0),
                other => panic!("{other:?}"),
            },
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn parentheses_are_a_hint_only_when_a_term_follows() {
        assert_eq!(value("('a')"), Term::Tuple(vec![Term::string("a")]));
        assert_eq!(
            value("('org.Foo')'x'"),
            Term::TypeHint { hint: CqlType::Custom("org.Foo".into()), term: Box::new(Term::string("x")) }
        );
        assert!(matches!(value("(int)?"), Term::TypeHint { hint: CqlType::Native(NativeType::Int), .. }));
        assert!(matches!(value("(ks.udt){a: 1}"), Term::TypeHint { hint: CqlType::UserDefined(_), .. }));
        assert!(matches!(value("(f(), 1)"), Term::Tuple(v) if v.len() == 2));
    }

    #[test]
    fn braces_hold_a_udt_only_when_a_name_and_a_colon_open_them() {
        assert!(matches!(value("{a: 1}"), Term::UserType(_)));
        assert!(matches!(value("{\"A\": 1, key: 2}"), Term::UserType(f) if f.len() == 2));
        assert!(matches!(value("{'a': 1}"), Term::Map(_)));
        assert!(matches!(value("{f(): 1}"), Term::Map(_)));
        assert!(matches!(value("{:a: 1}"), Term::Map(_)));
        assert_eq!(value("{}"), Term::Set(vec![]));
        assert_eq!(value("-NaN"), Term::Constant(Constant::Float("-NaN".into())));
    }
}
