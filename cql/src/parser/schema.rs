//! Schema statements: keyspaces, tables, indexes, user types, materialized views, triggers,
//! and the `WITH` properties they share (Cassandra's `properties`, `cfamDefinition`,
//! `cfamProperty`, `alterTableStatement`, ...).

use super::names::NameOf;
use super::{PResult, Parser};
use crate::ast::{
    AddedColumn, AlterKeyspace, AlterTable, AlterTableAction, AlterType, AlterTypeAction, ColumnDefinition,
    CreateIndex, CreateKeyspace, CreateTable, CreateTrigger, CreateType, CreateView, DropObject, Identifier,
    IndexTarget, IndexTargetKind, PrimaryKey, Property, PropertyValue, Statement, TableElement, TableOption,
};
use crate::lexer::{Keyword, Punct, TokenKind};

impl Parser<'_> {
    /// `CREATE ...`
    pub(crate) fn create_statement(&mut self) -> PResult<Statement> {
        use Keyword as K;
        self.expect_kw(K::Create)?;
        let TokenKind::Keyword(what) = self.kind(0).clone() else {
            return Err(self.no_viable_since(self.statement_start));
        };
        match what {
            K::Keyspace => self.create_keyspace().map(Statement::CreateKeyspace),
            K::Columnfamily => self.create_table().map(Statement::CreateTable),
            K::Custom | K::Index => self.create_index().map(Statement::CreateIndex),
            K::Type => self.create_type().map(Statement::CreateType),
            K::Materialized => self.create_view().map(Statement::CreateView),
            K::Trigger => self.create_trigger().map(Statement::CreateTrigger),
            K::Or | K::Function | K::Aggregate => self.create_function_or_aggregate(),
            K::User => self.create_or_alter_user(true).map(Statement::CreateUser),
            K::Role => self.create_or_alter_role(true).map(Statement::CreateRole),
            _ => Err(self.no_viable_since(self.statement_start)),
        }
    }

    /// `ALTER ...`
    pub(crate) fn alter_statement(&mut self) -> PResult<Statement> {
        use Keyword as K;
        self.expect_kw(K::Alter)?;
        let TokenKind::Keyword(what) = self.kind(0).clone() else {
            return Err(self.no_viable_since(self.statement_start));
        };
        match what {
            K::Keyspace => {
                self.advance();
                let name = self.keyspace_name()?;
                self.expect_kw(K::With)?;
                let properties = self.properties()?;
                Ok(Statement::AlterKeyspace(AlterKeyspace { name, properties }))
            }
            K::Columnfamily => self.alter_table().map(Statement::AlterTable),
            K::Type => self.alter_type().map(Statement::AlterType),
            K::Materialized => {
                self.advance();
                self.expect_kw(K::View)?;
                let name = self.table_name()?;
                self.expect_kw(K::With)?;
                let properties = self.properties()?;
                Ok(Statement::AlterView { name, properties })
            }
            K::User => self.create_or_alter_user(false).map(Statement::AlterUser),
            K::Role => self.create_or_alter_role(false).map(Statement::AlterRole),
            _ => Err(self.no_viable_since(self.statement_start)),
        }
    }

    /// `DROP ...`
    pub(crate) fn drop_statement(&mut self) -> PResult<Statement> {
        use Keyword as K;
        self.expect_kw(K::Drop)?;
        let TokenKind::Keyword(what) = self.kind(0).clone() else {
            return Err(self.no_viable_since(self.statement_start));
        };
        self.advance();
        if what == K::Materialized {
            self.expect_kw(K::View)?;
        }
        let if_exists =
            if matches!(what, K::Keyspace | K::Columnfamily | K::Index | K::Type | K::Materialized | K::Trigger) {
                self.if_exists()?
            } else {
                false
            };
        match what {
            K::Keyspace => Ok(Statement::DropKeyspace { if_exists, name: self.keyspace_name()? }),
            K::Columnfamily => Ok(Statement::DropTable(DropObject { if_exists, name: self.table_name()? })),
            K::Index => Ok(Statement::DropIndex(DropObject { if_exists, name: self.qualified_name(NameOf::Index)? })),
            K::Type => Ok(Statement::DropType(DropObject { if_exists, name: self.user_type_name()? })),
            K::Materialized => Ok(Statement::DropView(DropObject { if_exists, name: self.table_name()? })),
            K::Trigger => {
                let name = self.ident()?;
                self.expect_kw(K::On)?;
                Ok(Statement::DropTrigger { if_exists, name, table: self.table_name()? })
            }
            K::Function => self.drop_function().map(Statement::DropFunction),
            K::Aggregate => self.drop_function().map(Statement::DropAggregate),
            K::User => self.drop_user(),
            K::Role => self.drop_role(),
            _ => Err(self.no_viable_before()),
        }
    }

    /// A `no viable alternative` at the token just consumed, for the statement's decision.
    fn no_viable_before(&mut self) -> crate::error::SyntaxError {
        self.pos = self.pos.saturating_sub(1);
        self.no_viable_since(self.statement_start)
    }

    /// `property (AND property)*`, each name once.
    pub(crate) fn properties(&mut self) -> PResult<Vec<Property>> {
        let mut out: Vec<Property> = Vec::new();
        loop {
            let p = self.property()?;
            self.check_unique(&out, &p);
            out.push(p);
            if !self.eat_kw(Keyword::And) {
                return Ok(out);
            }
        }
    }

    fn check_unique<'p>(&mut self, seen: impl IntoIterator<Item = &'p Property>, p: &Property) {
        if seen.into_iter().any(|q| q.name.name() == p.name.name()) {
            self.defer(format!("Multiple definition for property {}", p.name.name()));
        }
    }

    /// `noncol_ident '=' (constant | unreserved_keyword | map)`
    fn property(&mut self) -> PResult<Property> {
        let name = self.ident()?;
        self.expect_punct(Punct::Eq)?;
        let value = if self.is_punct(0, Punct::LBrace) {
            PropertyValue::Map(self.constant_map()?)
        } else if self.starts_constant(0) {
            PropertyValue::Constant(self.constant()?)
        } else if matches!(self.kind(0), TokenKind::Keyword(k) if !k.is_reserved()) {
            PropertyValue::Keyword(self.advance().source(self.text).to_string())
        } else {
            return Err(self.no_viable());
        };
        Ok(Property { name, value })
    }

    /// `cfamProperty (AND cfamProperty)*`: properties, `COMPACT STORAGE`, `CLUSTERING ORDER BY`.
    fn table_options(&mut self) -> PResult<Vec<TableOption>> {
        let mut out: Vec<TableOption> = Vec::new();
        loop {
            let option = if self.is_kw(0, Keyword::Compact) && self.is_kw(1, Keyword::Storage) {
                self.advance();
                self.advance();
                TableOption::CompactStorage
            } else if self.is_kw(0, Keyword::Clustering) && self.is_kw(1, Keyword::Order) {
                self.advance();
                self.advance();
                self.expect_kw(Keyword::By)?;
                self.expect_punct(Punct::LParen)?;
                let mut order = Vec::new();
                loop {
                    let column = self.ident()?;
                    let descending = if self.eat_kw(Keyword::Desc) {
                        true
                    } else if self.eat_kw(Keyword::Asc) {
                        false
                    } else {
                        return Err(self.no_viable());
                    };
                    order.push((column, descending));
                    if !self.eat_punct(Punct::Comma) {
                        break;
                    }
                }
                self.expect_punct(Punct::RParen)?;
                TableOption::ClusteringOrder(order)
            } else {
                let p = self.property()?;
                let seen = out.iter().filter_map(|o| if let TableOption::Property(q) = o { Some(q) } else { None });
                let seen: Vec<&Property> = seen.collect();
                self.check_unique(seen, &p);
                TableOption::Property(p)
            };
            out.push(option);
            if !self.eat_kw(Keyword::And) {
                return Ok(out);
            }
        }
    }

    fn optional_table_options(&mut self) -> PResult<Vec<TableOption>> {
        if self.eat_kw(Keyword::With) {
            self.table_options()
        } else {
            Ok(Vec::new())
        }
    }

    fn create_keyspace(&mut self) -> PResult<CreateKeyspace> {
        self.expect_kw(Keyword::Keyspace)?;
        let if_not_exists = self.if_not_exists()?;
        let name = self.keyspace_name()?;
        self.expect_kw(Keyword::With)?;
        let properties = self.properties()?;
        Ok(CreateKeyspace { if_not_exists, name, properties })
    }

    fn create_table(&mut self) -> PResult<CreateTable> {
        self.expect_kw(Keyword::Columnfamily)?;
        let if_not_exists = self.if_not_exists()?;
        let name = self.table_name()?;
        self.expect_punct(Punct::LParen)?;
        let mut elements = vec![self.table_element()?];
        // Cassandra's `( ',' cfamColumns? )*` lets a definition be left out after a comma.
        while self.eat_punct(Punct::Comma) {
            if self.is_kw(0, Keyword::Primary) || self.is_ident(0) {
                elements.push(self.table_element()?);
            }
        }
        self.expect_punct(Punct::RParen)?;
        let options = self.optional_table_options()?;
        Ok(CreateTable { if_not_exists, name, elements, options })
    }

    fn table_element(&mut self) -> PResult<TableElement> {
        if self.is_kw(0, Keyword::Primary) {
            return self.primary_key().map(TableElement::PrimaryKey);
        }
        if !self.is_ident(0) {
            return Err(self.no_viable());
        }
        let name = self.ident()?;
        let ty = self.cql_type()?;
        let is_static = self.eat_kw(Keyword::Static);
        let primary_key = self.eat_kw(Keyword::Primary);
        if primary_key {
            self.expect_kw(Keyword::Key)?;
        }
        Ok(TableElement::Column(ColumnDefinition { name, ty, is_static, primary_key }))
    }

    /// `PRIMARY KEY '(' (ident | '(' ident, ... ')') (',' ident)* ')'`
    fn primary_key(&mut self) -> PResult<PrimaryKey> {
        self.expect_kw(Keyword::Primary)?;
        self.expect_kw(Keyword::Key)?;
        self.expect_punct(Punct::LParen)?;
        let partition_key = if self.is_punct(0, Punct::LParen) {
            self.parenthesized_idents()?
        } else if self.is_ident(0) {
            vec![self.ident()?]
        } else {
            return Err(self.no_viable());
        };
        let mut clustering = Vec::new();
        while self.eat_punct(Punct::Comma) {
            clustering.push(self.ident()?);
        }
        self.expect_punct(Punct::RParen)?;
        Ok(PrimaryKey { partition_key, clustering })
    }

    fn create_index(&mut self) -> PResult<CreateIndex> {
        let custom = self.eat_kw(Keyword::Custom);
        self.expect_kw(Keyword::Index)?;
        let if_not_exists = self.if_not_exists()?;
        let name = if self.is_kw(0, Keyword::On) { None } else { Some(self.qualified_name(NameOf::Index)?.name) };
        self.expect_kw(Keyword::On)?;
        let table = self.table_name()?;
        self.expect_punct(Punct::LParen)?;
        let mut targets = Vec::new();
        if !self.eat_punct(Punct::RParen) {
            targets.push(self.index_target()?);
            while self.eat_punct(Punct::Comma) {
                targets.push(self.index_target()?);
            }
            self.expect_punct(Punct::RParen)?;
        }
        let class = if self.eat_kw(Keyword::Using) {
            match self.kind(0).clone() {
                TokenKind::String(s) => {
                    self.advance();
                    Some(s)
                }
                _ => return Err(self.mismatched("STRING_LITERAL")),
            }
        } else {
            None
        };
        let properties = if self.eat_kw(Keyword::With) { self.properties()? } else { Vec::new() };
        Ok(CreateIndex { custom, if_not_exists, name, table, targets, class, properties })
    }

    fn index_target(&mut self) -> PResult<IndexTarget> {
        let kind = match self.kind(0) {
            TokenKind::Keyword(Keyword::Keys) => Some(IndexTargetKind::Keys),
            TokenKind::Keyword(Keyword::Values) => Some(IndexTargetKind::Values),
            TokenKind::Keyword(Keyword::Entries) => Some(IndexTargetKind::Entries),
            TokenKind::Keyword(Keyword::Full) => Some(IndexTargetKind::Full),
            _ => None,
        };
        match kind {
            Some(kind) if self.is_punct(1, Punct::LParen) => {
                self.advance();
                self.advance();
                let column = self.ident()?;
                self.expect_punct(Punct::RParen)?;
                Ok(IndexTarget { column, kind })
            }
            _ => Ok(IndexTarget { column: self.ident()?, kind: IndexTargetKind::Simple }),
        }
    }

    fn create_type(&mut self) -> PResult<CreateType> {
        self.expect_kw(Keyword::Type)?;
        let if_not_exists = self.if_not_exists()?;
        let name = self.user_type_name()?;
        self.expect_punct(Punct::LParen)?;
        let mut fields = vec![(self.ident()?, self.cql_type()?)];
        while self.eat_punct(Punct::Comma) {
            if self.is_ident(0) {
                fields.push((self.ident()?, self.cql_type()?));
            }
        }
        self.expect_punct(Punct::RParen)?;
        Ok(CreateType { if_not_exists, name, fields })
    }

    fn create_view(&mut self) -> PResult<CreateView> {
        self.expect_kw(Keyword::Materialized)?;
        self.expect_kw(Keyword::View)?;
        let if_not_exists = self.if_not_exists()?;
        let name = self.table_name()?;
        self.expect_kw(Keyword::As)?;
        self.expect_kw(Keyword::Select)?;
        let selection = self.selection()?;
        self.expect_kw(Keyword::From)?;
        let base_table = self.table_name()?;
        let where_clause = if self.eat_kw(Keyword::Where) { self.where_clause()? } else { Vec::new() };
        let primary_key = self.primary_key()?;
        let options = self.optional_table_options()?;
        Ok(CreateView { if_not_exists, name, selection, base_table, where_clause, primary_key, options })
    }

    fn create_trigger(&mut self) -> PResult<CreateTrigger> {
        self.expect_kw(Keyword::Trigger)?;
        let if_not_exists = self.if_not_exists()?;
        let name = self.ident()?;
        self.expect_kw(Keyword::On)?;
        let table = self.table_name()?;
        self.expect_kw(Keyword::Using)?;
        let TokenKind::String(class) = self.kind(0).clone() else {
            return Err(self.mismatched("STRING_LITERAL"));
        };
        self.advance();
        Ok(CreateTrigger { if_not_exists, name, table, class })
    }

    fn alter_table(&mut self) -> PResult<AlterTable> {
        use Keyword as K;
        self.expect_kw(K::Columnfamily)?;
        let name = self.table_name()?;
        let action = if self.eat_kw(K::Alter) {
            let column = self.ident()?;
            self.expect_kw(K::Type)?;
            AlterTableAction::AlterType { column, ty: self.cql_type()? }
        } else if self.eat_kw(K::Add) {
            let mut columns = Vec::new();
            if self.eat_punct(Punct::LParen) {
                columns.push(self.added_column()?);
                while self.eat_punct(Punct::Comma) {
                    columns.push(self.added_column()?);
                }
                self.expect_punct(Punct::RParen)?;
            } else {
                columns.push(self.added_column()?);
            }
            AlterTableAction::Add(columns)
        } else if self.eat_kw(K::Drop) {
            if self.is_kw(0, K::Compact) && self.is_kw(1, K::Storage) {
                self.advance();
                self.advance();
                AlterTableAction::DropCompactStorage
            } else {
                let columns =
                    if self.is_punct(0, Punct::LParen) { self.parenthesized_idents()? } else { vec![self.ident()?] };
                let mut timestamp = None;
                if self.eat_kw(K::Using) {
                    self.expect_kw(K::Timestamp)?;
                    if *self.kind(0) != TokenKind::Integer {
                        return Err(self.mismatched("INTEGER"));
                    }
                    timestamp = Some(self.advance().source(self.text).to_string());
                }
                AlterTableAction::Drop { columns, timestamp }
            }
        } else if self.eat_kw(K::With) {
            AlterTableAction::With(self.properties()?)
        } else if self.eat_kw(K::Rename) {
            AlterTableAction::Rename(self.renames()?)
        } else {
            return Err(self.no_viable());
        };
        Ok(AlterTable { name, action })
    }

    fn added_column(&mut self) -> PResult<AddedColumn> {
        let name = self.ident()?;
        let ty = self.cql_type()?;
        let is_static = self.eat_kw(Keyword::Static);
        Ok(AddedColumn { name, ty, is_static })
    }

    /// `a TO b (AND c TO d)*`
    fn renames(&mut self) -> PResult<Vec<(Identifier, Identifier)>> {
        let mut out = Vec::new();
        loop {
            let from = self.ident()?;
            self.expect_kw(Keyword::To)?;
            out.push((from, self.ident()?));
            if !self.eat_kw(Keyword::And) {
                return Ok(out);
            }
        }
    }

    fn alter_type(&mut self) -> PResult<AlterType> {
        self.expect_kw(Keyword::Type)?;
        let name = self.user_type_name()?;
        let action = if self.eat_kw(Keyword::Alter) {
            let field = self.ident()?;
            self.expect_kw(Keyword::Type)?;
            AlterTypeAction::AlterField(field, self.cql_type()?)
        } else if self.eat_kw(Keyword::Add) {
            let field = self.ident()?;
            AlterTypeAction::Add(field, self.cql_type()?)
        } else if self.eat_kw(Keyword::Rename) {
            AlterTypeAction::Rename(self.renames()?)
        } else {
            return Err(self.no_viable());
        };
        Ok(AlterType { name, action })
    }
}
