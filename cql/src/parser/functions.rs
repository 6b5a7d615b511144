//! User-defined functions and aggregates (Cassandra's `createFunctionStatement`,
//! `createAggregateStatement`, `dropFunctionStatement`, `dropAggregateStatement`).

use super::{PResult, Parser};
use crate::ast::{CreateAggregate, CreateFunction, DropFunction, Statement};
use crate::lexer::{Keyword, Punct, TokenKind};

impl Parser<'_> {
    /// `CREATE [OR REPLACE] FUNCTION ...` or `CREATE [OR REPLACE] AGGREGATE ...`, after CREATE.
    pub(crate) fn create_function_or_aggregate(&mut self) -> PResult<Statement> {
        let or_replace = self.eat_kw(Keyword::Or);
        if or_replace {
            self.expect_kw(Keyword::Replace)?;
        }
        if self.eat_kw(Keyword::Function) {
            return self.create_function(or_replace).map(Statement::CreateFunction);
        }
        if self.eat_kw(Keyword::Aggregate) {
            return self.create_aggregate(or_replace).map(Statement::CreateAggregate);
        }
        Err(self.no_viable())
    }

    fn create_function(&mut self, or_replace: bool) -> PResult<CreateFunction> {
        let if_not_exists = self.if_not_exists()?;
        let name = self.function_name()?;
        self.expect_punct(Punct::LParen)?;
        let mut arguments = Vec::new();
        if !self.eat_punct(Punct::RParen) {
            loop {
                let arg = self.ident()?;
                arguments.push((arg, self.cql_type()?));
                if !self.eat_punct(Punct::Comma) {
                    break;
                }
            }
            self.expect_punct(Punct::RParen)?;
        }
        let called_on_null_input = if self.eat_kw(Keyword::Called) {
            true
        } else if self.eat_kw(Keyword::Returns) {
            self.expect_kw(Keyword::Null)?;
            false
        } else {
            return Err(self.no_viable());
        };
        self.expect_kw(Keyword::On)?;
        self.expect_kw(Keyword::Null)?;
        self.expect_kw(Keyword::Input)?;
        self.expect_kw(Keyword::Returns)?;
        let return_type = self.cql_type()?;
        self.expect_kw(Keyword::Language)?;
        if *self.kind(0) != TokenKind::Ident {
            return Err(self.mismatched("IDENT"));
        }
        let language = self.advance().source(self.text).to_ascii_lowercase();
        self.expect_kw(Keyword::As)?;
        let TokenKind::String(body) = self.kind(0).clone() else {
            return Err(self.mismatched("STRING_LITERAL"));
        };
        self.advance();
        Ok(CreateFunction {
            or_replace,
            if_not_exists,
            name,
            arguments,
            called_on_null_input,
            return_type,
            language,
            body,
        })
    }

    fn create_aggregate(&mut self, or_replace: bool) -> PResult<CreateAggregate> {
        let if_not_exists = self.if_not_exists()?;
        let name = self.function_name()?;
        let arguments = self.parenthesized_types()?;
        self.expect_kw(Keyword::Sfunc)?;
        let state_function = self.function_own_name()?;
        self.expect_kw(Keyword::Stype)?;
        let state_type = self.cql_type()?;
        let final_function = if self.eat_kw(Keyword::Finalfunc) { Some(self.function_own_name()?) } else { None };
        let initial_condition = if self.eat_kw(Keyword::Initcond) { Some(self.term()?) } else { None };
        Ok(CreateAggregate {
            or_replace,
            if_not_exists,
            name,
            arguments,
            state_function,
            state_type,
            final_function,
            initial_condition,
        })
    }

    /// `DROP FUNCTION|AGGREGATE [IF EXISTS] name [(types)]`, after the keyword.
    pub(crate) fn drop_function(&mut self) -> PResult<DropFunction> {
        let if_exists = self.if_exists()?;
        let name = self.function_name()?;
        let arguments = if self.is_punct(0, Punct::LParen) { Some(self.parenthesized_types()?) } else { None };
        Ok(DropFunction { if_exists, name, arguments })
    }
}
