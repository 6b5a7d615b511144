//! User-defined functions and aggregates. Sibyl parses them so that their statements get
//! Cassandra's errors and a clear refusal, not a syntax error.

use std::fmt;

use super::ddl::{IfExists, IfNotExists};
use super::ident::{Comma, Identifier, QualifiedName};
use super::term::{quote_string, Term};
use super::types::CqlType;

/// `CREATE [OR REPLACE] FUNCTION [IF NOT EXISTS] ks.f (arg type, ...) ...`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CreateFunction {
    /// `OR REPLACE`
    pub or_replace: bool,
    /// `IF NOT EXISTS`
    pub if_not_exists: bool,
    /// The function.
    pub name: QualifiedName,
    /// The arguments' names and types.
    pub arguments: Vec<(Identifier, CqlType)>,
    /// `CALLED ON NULL INPUT` (true) or `RETURNS NULL ON NULL INPUT` (false).
    pub called_on_null_input: bool,
    /// `RETURNS type`
    pub return_type: CqlType,
    /// `LANGUAGE java`, lower case.
    pub language: String,
    /// `AS '...'`, the body.
    pub body: String,
}

impl fmt::Display for CreateFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.or_replace { "CREATE OR REPLACE FUNCTION" } else { "CREATE FUNCTION" })?;
        write!(f, "{} {} (", IfNotExists(self.if_not_exists), self.name)?;
        for (i, (name, ty)) in self.arguments.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{name} {ty}")?;
        }
        let on_null = if self.called_on_null_input { "CALLED" } else { "RETURNS NULL" };
        write!(f, ") {on_null} ON NULL INPUT RETURNS {} LANGUAGE {}", self.return_type, self.language)?;
        write!(f, " AS {}", quote_string(&self.body))
    }
}

/// `CREATE [OR REPLACE] AGGREGATE [IF NOT EXISTS] ks.a (type, ...) SFUNC f STYPE t ...`
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CreateAggregate {
    /// `OR REPLACE`
    pub or_replace: bool,
    /// `IF NOT EXISTS`
    pub if_not_exists: bool,
    /// The aggregate.
    pub name: QualifiedName,
    /// The argument types.
    pub arguments: Vec<CqlType>,
    /// `SFUNC f`
    pub state_function: Identifier,
    /// `STYPE t`
    pub state_type: CqlType,
    /// `FINALFUNC f`
    pub final_function: Option<Identifier>,
    /// `INITCOND term`
    pub initial_condition: Option<Term>,
}

impl fmt::Display for CreateAggregate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.or_replace { "CREATE OR REPLACE AGGREGATE" } else { "CREATE AGGREGATE" })?;
        write!(f, "{} {} ({})", IfNotExists(self.if_not_exists), self.name, Comma(&self.arguments))?;
        write!(f, " SFUNC {} STYPE {}", self.state_function, self.state_type)?;
        if let Some(ff) = &self.final_function {
            write!(f, " FINALFUNC {ff}")?;
        }
        if let Some(init) = &self.initial_condition {
            write!(f, " INITCOND {init}")?;
        }
        Ok(())
    }
}

/// `DROP FUNCTION [IF EXISTS] ks.f [(type, ...)]`, and the same for aggregates.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DropFunction {
    /// `IF EXISTS`
    pub if_exists: bool,
    /// The function or aggregate.
    pub name: QualifiedName,
    /// The signature, when given (an overloaded name needs it).
    pub arguments: Option<Vec<CqlType>>,
}

impl DropFunction {
    pub(crate) fn write(&self, f: &mut fmt::Formatter<'_>, what: &str) -> fmt::Result {
        write!(f, "DROP {what}{} {}", IfExists(self.if_exists), self.name)?;
        if let Some(args) = &self.arguments {
            write!(f, " ({})", Comma(args))?;
        }
        Ok(())
    }
}
