//! INSERT, UPDATE, DELETE and BATCH (Cassandra's `insertStatement`, `updateStatement`,
//! `deleteStatement`, `batchStatement`, `columnOperation`, `columnCondition`, `usingClause`).

use super::{PResult, Parser};
use crate::ast::{
    Assignment, Attributes, Batch, BatchKind, BatchStatement, Condition, ConditionTarget, Conditions, Delete, Deletion,
    Identifier, Insert, InsertValues, Predicate, Term, Update,
};
use crate::lexer::{Keyword, Punct, TokenKind};

impl Parser<'_> {
    /// `INSERT INTO t (cols) VALUES (terms) | JSON value [DEFAULT NULL|UNSET]`, then
    /// `[IF NOT EXISTS] [USING ...]`.
    pub(crate) fn insert_statement(&mut self) -> PResult<Insert> {
        self.expect_kw(Keyword::Insert)?;
        self.expect_kw(Keyword::Into)?;
        let table = self.table_name()?;
        let values = if self.is_punct(0, Punct::LParen) {
            let columns = self.parenthesized_idents()?;
            self.expect_kw(Keyword::Values)?;
            self.expect_punct(Punct::LParen)?;
            let mut values = vec![self.term()?];
            while self.eat_punct(Punct::Comma) {
                values.push(self.term()?);
            }
            self.expect_punct(Punct::RParen)?;
            InsertValues::Values { columns, values }
        } else if self.eat_kw(Keyword::Json) {
            let value = match self.kind(0).clone() {
                TokenKind::String(s) => {
                    self.advance();
                    Term::string(&s)
                }
                _ if self.starts_marker(0) => Term::BindMarker(self.marker()?),
                _ => return Err(self.no_viable()),
            };
            let mut default_unset = false;
            if self.eat_kw(Keyword::Default) {
                if self.eat_kw(Keyword::Unset) {
                    default_unset = true;
                } else if !self.eat_kw(Keyword::Null) {
                    return Err(self.no_viable());
                }
            }
            InsertValues::Json { value, default_unset }
        } else {
            return Err(self.no_viable());
        };
        let if_not_exists = self.if_not_exists()?;
        let attributes = self.using_clause()?;
        Ok(Insert { table, values, if_not_exists, attributes })
    }

    /// `[USING TIMESTAMP n | TTL n (AND ...)*]`
    pub(crate) fn using_clause(&mut self) -> PResult<Attributes> {
        let mut attributes = Attributes::default();
        if !self.eat_kw(Keyword::Using) {
            return Ok(attributes);
        }
        loop {
            if self.eat_kw(Keyword::Timestamp) {
                attributes.timestamp = Some(self.int_value()?);
            } else if self.eat_kw(Keyword::Ttl) {
                attributes.ttl = Some(self.int_value()?);
                attributes.ttl_first = attributes.timestamp.is_none();
            } else {
                return Err(self.no_viable());
            }
            if !self.eat_kw(Keyword::And) {
                // Only an order between two markers matters.
                attributes.ttl_first &= attributes.timestamp.is_some();
                return Ok(attributes);
            }
        }
    }

    /// `UPDATE t [USING ...] SET ops WHERE ... [IF EXISTS | IF conditions]`
    pub(crate) fn update_statement(&mut self) -> PResult<Update> {
        self.expect_kw(Keyword::Update)?;
        let table = self.table_name()?;
        let attributes = self.using_clause()?;
        self.expect_kw(Keyword::Set)?;
        let mut assignments = vec![self.assignment()?];
        while self.eat_punct(Punct::Comma) {
            assignments.push(self.assignment()?);
        }
        self.expect_kw(Keyword::Where)?;
        let where_clause = self.where_clause()?;
        let conditions = self.conditions()?;
        Ok(Update { table, attributes, assignments, where_clause, conditions })
    }

    /// `columnOperation`
    fn assignment(&mut self) -> PResult<Assignment> {
        let column = self.ident()?;
        match self.kind(0) {
            TokenKind::Punct(Punct::Eq) => {
                self.advance();
                self.normal_assignment(column)
            }
            TokenKind::Punct(p @ (Punct::PlusEq | Punct::MinusEq)) => {
                let add = *p == Punct::PlusEq;
                self.advance();
                let value = self.term()?;
                Ok(if add { Assignment::Add { column, value } } else { Assignment::Subtract { column, value } })
            }
            TokenKind::Punct(Punct::LBracket) => {
                self.advance();
                let key = self.term()?;
                self.expect_punct(Punct::RBracket)?;
                self.expect_punct(Punct::Eq)?;
                Ok(Assignment::SetElement { column, key, value: self.term()? })
            }
            TokenKind::Punct(Punct::Dot) => {
                self.advance();
                let field = self.ident()?;
                self.expect_punct(Punct::Eq)?;
                Ok(Assignment::SetField { column, field, value: self.term()? })
            }
            _ => Err(self.no_viable()),
        }
    }

    /// `normalColumnOperation`: what follows `c =`.
    fn normal_assignment(&mut self, column: Identifier) -> PResult<Assignment> {
        if self.is_ident(0) && !self.starts_function_call(0) {
            let other = self.ident()?;
            let same = other.name() == column.name();
            return match self.kind(0) {
                TokenKind::Punct(p @ (Punct::Plus | Punct::Minus)) => {
                    let add = *p == Punct::Plus;
                    if !same {
                        let sign = if add { "+" } else { "-" };
                        self.defer(format!("Only expressions of the form X = X {sign}<value> are supported."));
                    }
                    self.advance();
                    let value = self.term()?;
                    Ok(if add { Assignment::Add { column, value } } else { Assignment::Subtract { column, value } })
                }
                // `c = c -1` lexes the `-1` as one integer.
                TokenKind::Integer => {
                    if !same {
                        let sign = if self.text_of(0).starts_with('-') { '-' } else { '+' };
                        self.defer(format!("Only expressions of the form X = X {sign} <value> are supported."));
                    }
                    let value = Term::Constant(self.constant()?);
                    Ok(Assignment::Add { column, value })
                }
                _ => Err(self.no_viable()),
            };
        }
        let value = self.term()?;
        if !self.eat_punct(Punct::Plus) {
            return Ok(Assignment::Set { column, value });
        }
        let other = self.ident()?;
        if other.name() != column.name() {
            self.defer("Only expressions of the form X = <value> + X are supported.".to_string());
        }
        Ok(Assignment::Prepend { column, value })
    }

    /// `[IF EXISTS | IF condition (AND condition)*]`
    fn conditions(&mut self) -> PResult<Option<Conditions>> {
        if !self.eat_kw(Keyword::If) {
            return Ok(None);
        }
        if self.eat_kw(Keyword::Exists) {
            return Ok(Some(Conditions::Exists));
        }
        let mut out = vec![self.condition()?];
        while self.eat_kw(Keyword::And) {
            out.push(self.condition()?);
        }
        Ok(Some(Conditions::Columns(out)))
    }

    /// `columnCondition`
    fn condition(&mut self) -> PResult<Condition> {
        let column = self.ident()?;
        let target = if self.eat_punct(Punct::LBracket) {
            let element = self.term()?;
            self.expect_punct(Punct::RBracket)?;
            ConditionTarget::Element(element)
        } else if self.eat_punct(Punct::Dot) {
            ConditionTarget::Field(self.ident()?)
        } else {
            ConditionTarget::Column
        };
        let predicate = if self.eat_kw(Keyword::In) {
            Predicate::In(self.in_values()?)
        } else if self.comparison(0).is_some() {
            let op = self.relation_type()?;
            Predicate::Compare(op, self.term()?)
        } else {
            return Err(self.no_viable());
        };
        Ok(Condition { column, target, predicate })
    }

    /// `DELETE [selections] FROM t [USING TIMESTAMP n] WHERE ... [IF ...]`
    pub(crate) fn delete_statement(&mut self) -> PResult<Delete> {
        self.expect_kw(Keyword::Delete)?;
        let mut deletions = Vec::new();
        if !self.is_kw(0, Keyword::From) {
            loop {
                let column = self.ident()?;
                let deletion = if self.eat_punct(Punct::LBracket) {
                    let key = self.term()?;
                    self.expect_punct(Punct::RBracket)?;
                    Deletion::Element(column, key)
                } else if self.eat_punct(Punct::Dot) {
                    Deletion::Field(column, self.ident()?)
                } else {
                    Deletion::Column(column)
                };
                deletions.push(deletion);
                if !self.eat_punct(Punct::Comma) {
                    break;
                }
            }
        }
        self.expect_kw(Keyword::From)?;
        let table = self.table_name()?;
        let timestamp = if self.eat_kw(Keyword::Using) {
            self.expect_kw(Keyword::Timestamp)?;
            Some(self.int_value()?)
        } else {
            None
        };
        self.expect_kw(Keyword::Where)?;
        let where_clause = self.where_clause()?;
        let conditions = self.conditions()?;
        Ok(Delete { deletions, table, timestamp, where_clause, conditions })
    }

    /// `BEGIN [UNLOGGED | COUNTER] BATCH [USING ...] (statement [;])* APPLY BATCH`
    pub(crate) fn batch_statement(&mut self) -> PResult<Batch> {
        self.expect_kw(Keyword::Begin)?;
        let kind = if self.eat_kw(Keyword::Unlogged) {
            BatchKind::Unlogged
        } else if self.eat_kw(Keyword::Counter) {
            BatchKind::Counter
        } else {
            BatchKind::Logged
        };
        self.expect_kw(Keyword::Batch)?;
        let attributes = self.using_clause()?;
        let mut statements = Vec::new();
        loop {
            let statement = match self.kind(0) {
                TokenKind::Keyword(Keyword::Insert) => BatchStatement::Insert(self.insert_statement()?),
                TokenKind::Keyword(Keyword::Update) => BatchStatement::Update(self.update_statement()?),
                TokenKind::Keyword(Keyword::Delete) => BatchStatement::Delete(self.delete_statement()?),
                _ => break,
            };
            statements.push(statement);
            self.eat_punct(Punct::Semicolon);
        }
        self.expect_kw(Keyword::Apply)?;
        self.expect_kw(Keyword::Batch)?;
        Ok(Batch { kind, attributes, statements })
    }
}
