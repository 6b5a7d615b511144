//! Identifiers and names (Cassandra's `ident`, `cident`, `noncol_ident`, `fident`,
//! `columnFamilyName`, `keyspaceName`, `userTypeName`, `functionName`, `roleName`).

use super::{PResult, Parser};
use crate::ast::{Identifier, QualifiedName, RoleName};
use crate::lexer::{Keyword, Punct, Reservation, TokenKind};

/// Cassandra's `reservedTypeNames`: names no user type may take (compared as written).
const RESERVED_TYPE_NAMES: [&str; 7] = ["byte", "complex", "enum", "date", "interval", "macaddr", "bitstring"];

/// What a name names, for the error Cassandra gives when a bind marker stands in its place.
#[derive(Clone, Copy)]
pub(crate) enum NameOf {
    Keyspace,
    Table,
    Index,
}

impl NameOf {
    fn marker_error(self) -> &'static str {
        match self {
            NameOf::Keyspace => "Bind variables cannot be used for keyspace names",
            NameOf::Table => "Bind variables cannot be used for table names",
            NameOf::Index => "Bind variables cannot be used for index names",
        }
    }
}

impl Parser<'_> {
    /// True if token `n` can be an identifier: IDENT, QUOTED_NAME or an unreserved keyword.
    pub(crate) fn is_ident(&self, n: usize) -> bool {
        match self.kind(n) {
            TokenKind::Ident | TokenKind::QuotedName(_) => true,
            TokenKind::Keyword(k) => !k.is_reserved(),
            _ => false,
        }
    }

    /// Cassandra's `ident` (and `cident`, `noncol_ident`, `fident`, which accept the same
    /// tokens): an identifier or an unreserved keyword.
    pub(crate) fn ident(&mut self) -> PResult<Identifier> {
        if !self.is_ident(0) {
            return Err(self.no_viable());
        }
        Ok(self.take_ident())
    }

    /// The current token as an identifier (the caller checked it can be one).
    fn take_ident(&mut self) -> Identifier {
        let id = match self.kind(0) {
            TokenKind::QuotedName(name) => Identifier::quoted(name),
            _ => Identifier::unquoted(self.text_of(0)),
        };
        self.advance();
        id
    }

    /// A keyspace, table or index name part: an identifier, or `?`, which Cassandra refuses
    /// with a bare message but parses on.
    fn name_part(&mut self, of: NameOf) -> PResult<Identifier> {
        if *self.kind(0) == TokenKind::QMark {
            self.defer(of.marker_error().to_string());
            self.advance();
            return Ok(Identifier::unquoted("?"));
        }
        self.ident()
    }

    fn starts_name_part(&self, n: usize) -> bool {
        self.is_ident(n) || *self.kind(n) == TokenKind::QMark
    }

    /// `keyspaceName`
    pub(crate) fn keyspace_name(&mut self) -> PResult<Identifier> {
        self.name_part(NameOf::Keyspace)
    }

    /// `(ksName '.')? name`, for tables, views and indexes.
    pub(crate) fn qualified_name(&mut self, of: NameOf) -> PResult<QualifiedName> {
        if self.starts_name_part(0) && self.is_punct(1, Punct::Dot) {
            let ks = self.name_part(NameOf::Keyspace)?;
            self.advance();
            let name = self.name_part(of)?;
            return Ok(QualifiedName::qualified(ks, name));
        }
        Ok(QualifiedName::local(self.name_part(of)?))
    }

    /// `columnFamilyName`
    pub(crate) fn table_name(&mut self) -> PResult<QualifiedName> {
        self.qualified_name(NameOf::Table)
    }

    /// `userTypeName`: `(noncol_ident '.')? non_type_ident`, where the type's own name may not be
    /// a native type nor one of the other column-only keywords (`KEY` excepted).
    pub(crate) fn user_type_name(&mut self) -> PResult<QualifiedName> {
        let keyspace = if self.is_ident(0) && self.is_punct(1, Punct::Dot) {
            let ks = self.ident()?;
            self.advance();
            Some(ks)
        } else {
            None
        };
        let name = self.non_type_ident()?;
        Ok(QualifiedName { keyspace, name })
    }

    /// True if token `n` can start a user type name.
    pub(crate) fn is_non_type_ident(&self, n: usize) -> bool {
        match self.kind(n) {
            TokenKind::Ident | TokenKind::QuotedName(_) => true,
            TokenKind::Keyword(Keyword::Key) => true,
            TokenKind::Keyword(k) => k.reservation() == Reservation::Basic,
            _ => false,
        }
    }

    fn non_type_ident(&mut self) -> PResult<Identifier> {
        if !self.is_non_type_ident(0) {
            return Err(self.no_viable());
        }
        if *self.kind(0) == TokenKind::Ident {
            let text = self.text_of(0);
            if RESERVED_TYPE_NAMES.contains(&text) {
                self.defer(format!("Invalid (reserved) user type name {text}"));
            }
        }
        Ok(self.take_ident())
    }

    /// True if token `n` can be a function's own name (`allowedFunctionName`).
    pub(crate) fn is_function_name(&self, n: usize) -> bool {
        match self.kind(n) {
            TokenKind::Ident | TokenKind::QuotedName(_) => true,
            TokenKind::Keyword(Keyword::Token | Keyword::Count) => true,
            TokenKind::Keyword(k) => matches!(k.reservation(), Reservation::Basic | Reservation::NativeType),
            _ => false,
        }
    }

    /// `allowedFunctionName`. Cassandra lower-cases an IDENT here but keeps an unreserved
    /// keyword as written (`Map(...)` names the function `Map`); we fold both, as for any other
    /// unquoted name, since no function can be created under a mixed-case unquoted name.
    pub(crate) fn function_own_name(&mut self) -> PResult<Identifier> {
        if !self.is_function_name(0) {
            return Err(self.no_viable());
        }
        Ok(self.take_ident())
    }

    /// True if tokens from `n` start a function call: `f(` or `ks.f(`.
    pub(crate) fn starts_function_call(&self, n: usize) -> bool {
        (self.is_function_name(n) && self.is_punct(n + 1, Punct::LParen))
            || (self.starts_name_part(n)
                && self.is_punct(n + 1, Punct::Dot)
                && self.is_function_name(n + 2)
                && self.is_punct(n + 3, Punct::LParen))
    }

    /// `functionName`: `(keyspaceName '.')? allowedFunctionName`.
    pub(crate) fn function_name(&mut self) -> PResult<QualifiedName> {
        if self.starts_name_part(0) && self.is_punct(1, Punct::Dot) {
            let ks = self.keyspace_name()?;
            self.advance();
            let name = self.function_own_name()?;
            return Ok(QualifiedName::qualified(ks, name));
        }
        Ok(QualifiedName::local(self.function_own_name()?))
    }

    /// True if token `n` can be a role name.
    pub(crate) fn is_role_name(&self, n: usize) -> bool {
        self.is_ident(n) || matches!(self.kind(n), TokenKind::String(_) | TokenKind::QMark)
    }

    /// `roleName`: an identifier, a string or (refused) a bind marker.
    pub(crate) fn role_name(&mut self) -> PResult<RoleName> {
        match self.kind(0).clone() {
            TokenKind::String(s) => {
                self.advance();
                Ok(RoleName::String(s))
            }
            TokenKind::QMark => {
                self.defer("Bind variables cannot be used for role names".to_string());
                self.advance();
                Ok(RoleName::String("?".to_string()))
            }
            _ => self.ident().map(RoleName::Identifier),
        }
    }

    /// `username`: IDENT or a string, case kept; a quoted name is refused as in Cassandra.
    pub(crate) fn user_name(&mut self) -> PResult<String> {
        match self.kind(0).clone() {
            TokenKind::Ident => Ok(self.advance().source(self.text).to_string()),
            TokenKind::String(s) => {
                self.advance();
                Ok(s)
            }
            TokenKind::QuotedName(s) => {
                self.defer(
                    "Quoted strings are are not supported for user names and USER is deprecated, please use ROLE"
                        .to_string(),
                );
                self.advance();
                Ok(s)
            }
            _ => Err(self.no_viable()),
        }
    }

    /// `ident (',' ident)*`
    pub(crate) fn ident_list(&mut self) -> PResult<Vec<Identifier>> {
        let mut out = vec![self.ident()?];
        while self.eat_punct(Punct::Comma) {
            out.push(self.ident()?);
        }
        Ok(out)
    }

    /// `'(' ident (',' ident)* ')'`
    pub(crate) fn parenthesized_idents(&mut self) -> PResult<Vec<Identifier>> {
        self.expect_punct(Punct::LParen)?;
        let out = self.ident_list()?;
        self.expect_punct(Punct::RParen)?;
        Ok(out)
    }
}
