//! SELECT and the WHERE clause (Cassandra's `selectStatement`, `selectClause`,
//! `unaliasedSelector`, `whereClause`, `relation`, `customIndexExpression`).

use super::{PResult, Parser};
use crate::ast::{
    InValues, Operator, Ordering, QualifiedName, Relation, Select, Selectable, Selection, Selector, Term,
};
use crate::lexer::{Keyword, Punct, TokenKind};

impl Parser<'_> {
    /// `SELECT [JSON] [DISTINCT] selection FROM t [WHERE ...] [GROUP BY ...] [ORDER BY ...]
    /// [PER PARTITION LIMIT n] [LIMIT n] [ALLOW FILTERING]`
    pub(crate) fn select_statement(&mut self) -> PResult<Select> {
        self.expect_kw(Keyword::Select)?;
        // `json` and `distinct` are also column names: as in Cassandra's grammar, they are
        // keywords only if a select clause follows them.
        let mut json = false;
        let mut clause = None;
        if self.is_kw(0, Keyword::Json) {
            clause = self.speculate(|p| {
                p.advance();
                p.select_clause()
            })?;
            json = clause.is_some();
        }
        let (distinct, selection) = match clause {
            Some(c) => c,
            None => self.select_clause()?,
        };
        self.expect_kw(Keyword::From)?;
        let table = self.table_name()?;
        let where_clause = if self.eat_kw(Keyword::Where) { self.where_clause()? } else { Vec::new() };
        let mut group_by = Vec::new();
        if self.eat_kw(Keyword::Group) {
            self.expect_kw(Keyword::By)?;
            group_by = self.ident_list()?;
        }
        let mut order_by = Vec::new();
        if self.eat_kw(Keyword::Order) {
            self.expect_kw(Keyword::By)?;
            loop {
                let column = self.ident()?;
                let descending = if self.eat_kw(Keyword::Desc) {
                    true
                } else {
                    self.eat_kw(Keyword::Asc);
                    false
                };
                order_by.push(Ordering { column, descending });
                if !self.eat_punct(Punct::Comma) {
                    break;
                }
            }
        }
        let mut per_partition_limit = None;
        if self.eat_kw(Keyword::Per) {
            self.expect_kw(Keyword::Partition)?;
            self.expect_kw(Keyword::Limit)?;
            per_partition_limit = Some(self.int_value()?);
        }
        let limit = if self.eat_kw(Keyword::Limit) { Some(self.int_value()?) } else { None };
        let allow_filtering = self.eat_kw(Keyword::Allow);
        if allow_filtering {
            self.expect_kw(Keyword::Filtering)?;
        }
        Ok(Select {
            json,
            distinct,
            selection,
            table,
            where_clause,
            group_by,
            order_by,
            per_partition_limit,
            limit,
            allow_filtering,
        })
    }

    /// `[DISTINCT] selection`
    fn select_clause(&mut self) -> PResult<(bool, Selection)> {
        if self.is_kw(0, Keyword::Distinct) {
            let distinct = self.speculate(|p| {
                p.advance();
                p.selection()
            })?;
            if let Some(selection) = distinct {
                return Ok((true, selection));
            }
        }
        Ok((false, self.selection()?))
    }

    /// `'*' | selector (',' selector)*`
    pub(crate) fn selection(&mut self) -> PResult<Selection> {
        if self.eat_punct(Punct::Star) {
            return Ok(Selection::Wildcard);
        }
        let mut selectors = vec![self.selector()?];
        while self.eat_punct(Punct::Comma) {
            selectors.push(self.selector()?);
        }
        Ok(Selection::Selectors(selectors))
    }

    fn selector(&mut self) -> PResult<Selector> {
        let selectable = self.unaliased_selector()?;
        let alias = if self.eat_kw(Keyword::As) { Some(self.ident()?) } else { None };
        Ok(Selector { selectable, alias })
    }

    fn unaliased_selector(&mut self) -> PResult<Selectable> {
        self.nested(Self::unaliased_selector_inner)
    }

    fn unaliased_selector_inner(&mut self) -> PResult<Selectable> {
        // Calls, the recursive case, are kept out of `selector_head` so that the frames on the
        // recursive path stay small.
        let special = match self.kind(0) {
            TokenKind::Keyword(Keyword::Count) => self.is_punct(1, Punct::LParen) && self.is_punct(2, Punct::Star),
            TokenKind::Keyword(Keyword::Writetime | Keyword::Ttl | Keyword::Cast) => self.is_punct(1, Punct::LParen),
            _ => false,
        };
        let call = !special && self.starts_function_call(0);
        let mut s = if call { self.selector_call()? } else { self.selector_head()? };
        while self.is_punct(0, Punct::Dot) {
            self.advance();
            let field = self.ident()?;
            s = Selectable::Field { selector: Box::new(s), field };
        }
        Ok(s)
    }

    /// `f(selector, ...)`, maybe keyspace-qualified.
    fn selector_call(&mut self) -> PResult<Selectable> {
        let name = self.function_name()?;
        self.expect_punct(Punct::LParen)?;
        let mut args = Vec::new();
        if !self.eat_punct(Punct::RParen) {
            args.push(self.unaliased_selector()?);
            while self.eat_punct(Punct::Comma) {
                args.push(self.unaliased_selector()?);
            }
            self.expect_punct(Punct::RParen)?;
        }
        Ok(Selectable::Function { name, args })
    }

    fn selector_head(&mut self) -> PResult<Selectable> {
        let call = self.is_punct(1, Punct::LParen);
        match self.kind(0) {
            TokenKind::Keyword(Keyword::Count) if call && self.is_punct(2, Punct::Star) => {
                self.advance();
                self.advance();
                self.advance();
                self.expect_punct(Punct::RParen)?;
                return Ok(Selectable::CountRows);
            }
            TokenKind::Keyword(k @ (Keyword::Writetime | Keyword::Ttl)) if call => {
                let writetime = *k == Keyword::Writetime;
                self.advance();
                self.advance();
                let column = self.ident()?;
                self.expect_punct(Punct::RParen)?;
                return Ok(if writetime { Selectable::WriteTime(column) } else { Selectable::Ttl(column) });
            }
            TokenKind::Keyword(Keyword::Cast) if call => {
                self.advance();
                self.advance();
                let inner = self.unaliased_selector()?;
                self.expect_kw(Keyword::As)?;
                let to = self.native_type()?;
                self.expect_punct(Punct::RParen)?;
                return Ok(Selectable::Cast { selector: Box::new(inner), to });
            }
            _ => {}
        }
        if self.is_ident(0) {
            return self.ident().map(Selectable::Column);
        }
        if self.is_punct(0, Punct::LParen) {
            if let Some(hint) = self.type_hint_prefix()? {
                let value = self.value()?;
                return Ok(Selectable::Term(Term::TypeHint { hint, term: Box::new(value) }));
            }
        }
        self.value().map(Selectable::Term)
    }

    /// `relation (AND relation)*`
    pub(crate) fn where_clause(&mut self) -> PResult<Vec<Relation>> {
        let mut out = Vec::new();
        self.relation(&mut out)?;
        while self.eat_kw(Keyword::And) {
            self.relation(&mut out)?;
        }
        Ok(out)
    }

    /// One relation, appended to `out` (a parenthesized relation is unwrapped).
    fn relation(&mut self, out: &mut Vec<Relation>) -> PResult<()> {
        self.nested(|p| p.relation_inner(out))
    }

    fn relation_inner(&mut self, out: &mut Vec<Relation>) -> PResult<()> {
        let tuple = self.is_ident(1) && (self.is_punct(2, Punct::Comma) || self.is_punct(2, Punct::RParen));
        if self.is_punct(0, Punct::LParen) && !tuple {
            self.advance();
            self.relation(out)?;
            return self.expect_punct(Punct::RParen);
        }
        // Kept out of this function so that its frame, on the recursive path, stays small.
        let relation = self.single_relation()?;
        out.push(relation);
        Ok(())
    }

    /// A relation that is not a parenthesized one.
    fn single_relation(&mut self) -> PResult<Relation> {
        if *self.kind(0) == TokenKind::ExprParen {
            self.advance();
            let index = QualifiedName::local(self.ident()?);
            self.expect_punct(Punct::Comma)?;
            let expression = self.term()?;
            self.expect_punct(Punct::RParen)?;
            return Ok(Relation::CustomIndex { index, expression });
        }
        if self.eat_kw(Keyword::Token) {
            let columns = self.parenthesized_idents()?;
            let op = self.relation_type()?;
            let value = self.term()?;
            return Ok(Relation::Token { columns, op, value });
        }
        if self.is_punct(0, Punct::LParen) {
            return self.multi_column_relation();
        }
        if !self.is_ident(0) {
            return Err(self.no_viable());
        }
        let start = self.pos;
        let column = self.ident()?;
        let relation = match self.kind(0) {
            TokenKind::Keyword(Keyword::Like) => {
                self.advance();
                Relation::Column { column, op: Operator::Like, value: self.term()? }
            }
            TokenKind::Keyword(Keyword::Is) => {
                self.advance();
                self.expect_kw(Keyword::Not)?;
                self.expect_kw(Keyword::Null)?;
                Relation::IsNotNull(column)
            }
            TokenKind::Keyword(Keyword::In) => {
                self.advance();
                Relation::In { column, values: self.in_values()? }
            }
            TokenKind::Keyword(Keyword::Contains) => {
                self.advance();
                // `CONTAINS key.f()` calls a function of keyspace `key`.
                let key = self.is_kw(0, Keyword::Key) && !self.is_punct(1, Punct::Dot);
                if key {
                    self.advance();
                }
                let op = if key { Operator::ContainsKey } else { Operator::Contains };
                Relation::Column { column, op, value: self.term()? }
            }
            TokenKind::Punct(Punct::LBracket) => {
                self.advance();
                let key = self.term()?;
                self.expect_punct(Punct::RBracket)?;
                let op = self.relation_type()?;
                Relation::MapElement { column, key, op, value: self.term()? }
            }
            _ if self.comparison(0).is_some() => {
                let op = self.relation_type()?;
                Relation::Column { column, op, value: self.term()? }
            }
            _ => return Err(self.no_viable_since(start)),
        };
        Ok(relation)
    }

    /// `(a, b) IN ...` or `(a, b) op ...`
    fn multi_column_relation(&mut self) -> PResult<Relation> {
        let columns = self.parenthesized_idents()?;
        if !self.eat_kw(Keyword::In) {
            let op = self.relation_type()?;
            let value = if self.starts_marker(0) {
                Term::BindMarker(self.marker()?)
            } else if self.is_punct(0, Punct::LParen) {
                self.tuple_literal()?
            } else {
                return Err(self.no_viable());
            };
            return Ok(Relation::MultiColumn { columns, op, value });
        }
        if self.starts_marker(0) {
            return Ok(Relation::MultiColumnIn { columns, values: InValues::Marker(self.marker()?) });
        }
        self.expect_punct(Punct::LParen)?;
        let mut items = Vec::new();
        if !self.eat_punct(Punct::RParen) {
            // Either every item is a tuple literal or every item a bind marker.
            let markers = self.starts_marker(0);
            loop {
                if markers {
                    items.push(Term::BindMarker(self.marker()?));
                } else if self.is_punct(0, Punct::LParen) {
                    items.push(self.tuple_literal()?);
                } else {
                    return Err(self.no_viable());
                }
                if !self.eat_punct(Punct::Comma) {
                    break;
                }
            }
            self.expect_punct(Punct::RParen)?;
        }
        Ok(Relation::MultiColumnIn { columns, values: InValues::List(items) })
    }

    /// The comparison operator at token `n`, if there is one.
    pub(crate) fn comparison(&self, n: usize) -> Option<Operator> {
        match self.kind(n) {
            TokenKind::Punct(Punct::Eq) => Some(Operator::Eq),
            TokenKind::Punct(Punct::Lt) => Some(Operator::Lt),
            TokenKind::Punct(Punct::Lte) => Some(Operator::Lte),
            TokenKind::Punct(Punct::Gt) => Some(Operator::Gt),
            TokenKind::Punct(Punct::Gte) => Some(Operator::Gte),
            TokenKind::Punct(Punct::Neq) => Some(Operator::Neq),
            _ => None,
        }
    }

    /// `relationType`: `= < <= > >= !=`.
    pub(crate) fn relation_type(&mut self) -> PResult<Operator> {
        match self.comparison(0) {
            Some(op) => {
                self.advance();
                Ok(op)
            }
            None => Err(self.no_viable()),
        }
    }
}
