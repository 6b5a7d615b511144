//! CQL types (Cassandra's `comparatorType`, `native_type`, `collection_type`, `tuple_type`).

use super::{PResult, Parser};
use crate::ast::{CqlType, NativeType};
use crate::lexer::{Keyword, Punct, TokenKind};

/// The native type a keyword names, if it names one.
pub(crate) fn native_type_of(k: Keyword) -> Option<NativeType> {
    use Keyword as K;
    use NativeType as N;
    Some(match k {
        K::Ascii => N::Ascii,
        K::Bigint => N::Bigint,
        K::Blob => N::Blob,
        K::Boolean => N::Boolean,
        K::Counter => N::Counter,
        K::Date => N::Date,
        K::Decimal => N::Decimal,
        K::Double => N::Double,
        K::Duration => N::Duration,
        K::Float => N::Float,
        K::Inet => N::Inet,
        K::Int => N::Int,
        K::Smallint => N::Smallint,
        K::Text => N::Text,
        K::Time => N::Time,
        K::Timestamp => N::Timestamp,
        K::Timeuuid => N::Timeuuid,
        K::Tinyint => N::Tinyint,
        K::Uuid => N::Uuid,
        K::Varchar => N::Varchar,
        K::Varint => N::Varint,
        _ => return None,
    })
}

impl Parser<'_> {
    /// True if token `n` can start a type.
    pub(crate) fn starts_type(&self, n: usize) -> bool {
        match self.kind(n) {
            TokenKind::Keyword(k) if native_type_of(*k).is_some() => true,
            TokenKind::Keyword(Keyword::Set) | TokenKind::String(_) => true,
            _ => self.is_non_type_ident(n) || (self.is_ident(n) && self.is_punct(n + 1, Punct::Dot)),
        }
    }

    /// `native_type`
    pub(crate) fn native_type(&mut self) -> PResult<NativeType> {
        match self.kind(0) {
            TokenKind::Keyword(k) => match native_type_of(*k) {
                Some(t) => {
                    self.advance();
                    Ok(t)
                }
                None => Err(self.no_viable()),
            },
            _ => Err(self.no_viable()),
        }
    }

    /// `comparatorType`
    pub(crate) fn cql_type(&mut self) -> PResult<CqlType> {
        self.nested(Self::cql_type_inner)
    }

    fn cql_type_inner(&mut self) -> PResult<CqlType> {
        use Keyword as K;
        let opens = self.is_punct(1, Punct::Lt);
        match self.kind(0).clone() {
            TokenKind::Keyword(k) if native_type_of(k).is_some() => self.native_type().map(CqlType::Native),
            TokenKind::Keyword(K::Map) if opens => {
                self.advance();
                self.advance();
                let key = self.cql_type()?;
                self.expect_punct(Punct::Comma)?;
                let value = self.cql_type()?;
                self.expect_punct(Punct::Gt)?;
                Ok(CqlType::Map(Box::new(key), Box::new(value)))
            }
            TokenKind::Keyword(K::List) if opens => self.one_parameter().map(|t| CqlType::List(Box::new(t))),
            TokenKind::Keyword(K::Set) => self.one_parameter().map(|t| CqlType::Set(Box::new(t))),
            TokenKind::Keyword(K::Frozen) if opens => {
                let inner = self.one_parameter()?;
                if matches!(inner, CqlType::Native(_) | CqlType::Custom(_)) {
                    self.defer(format!(
                        "frozen<> is only allowed on collections, tuples, and user-defined types (got {inner})"
                    ));
                }
                Ok(CqlType::Frozen(Box::new(inner)))
            }
            TokenKind::Keyword(K::Tuple) if opens => {
                self.advance();
                self.advance();
                let mut types = vec![self.cql_type()?];
                while self.eat_punct(Punct::Comma) {
                    types.push(self.cql_type()?);
                }
                self.expect_punct(Punct::Gt)?;
                Ok(CqlType::Tuple(types))
            }
            TokenKind::String(class) => {
                self.advance();
                Ok(CqlType::Custom(class))
            }
            _ if self.is_non_type_ident(0) || (self.is_ident(0) && self.is_punct(1, Punct::Dot)) => {
                self.user_type_name().map(CqlType::UserDefined)
            }
            _ => Err(self.no_viable()),
        }
    }

    /// `KEYWORD '<' comparatorType '>'`
    fn one_parameter(&mut self) -> PResult<CqlType> {
        self.advance();
        self.expect_punct(Punct::Lt)?;
        let t = self.cql_type()?;
        self.expect_punct(Punct::Gt)?;
        Ok(t)
    }

    /// `comparatorType (',' comparatorType)*`, maybe empty, between parentheses.
    pub(crate) fn parenthesized_types(&mut self) -> PResult<Vec<CqlType>> {
        self.expect_punct(Punct::LParen)?;
        let mut out = Vec::new();
        if !self.is_punct(0, Punct::RParen) {
            out.push(self.cql_type()?);
            while self.eat_punct(Punct::Comma) {
                out.push(self.cql_type()?);
            }
        }
        self.expect_punct(Punct::RParen)?;
        Ok(out)
    }
}
