//! The CQL 3 language as Cassandra 3.11 speaks it (CQL 3.4.4): a lexer, a statement tree and a
//! hand-written recursive-descent parser.
//!
//! This crate only reads statements. It knows no schema, executes nothing and opens no socket:
//! names are not resolved, types not checked, and rules that Cassandra enforces when it prepares
//! a statement (one primary key per table, no TTL on counters, ...) are left to the code that
//! executes the tree. What it does check is what Cassandra's own grammar checks, with the same
//! error messages: see [`SyntaxError`] and the differences listed in the `error` module.
//!
//! Main items: [`parse`] (text to [`Statement`]), [`parse_statements`] (a script),
//! [`tokenize`] (text to [`Token`]s), and the tree in [`ast`], which prints back as CQL.
//!
//! ```
//! use cql::ast::{Relation, Statement};
//!
//! let Statement::Select(select) = cql::parse("SELECT name FROM ks.users WHERE id = ?")? else {
//!     panic!("a SELECT")
//! };
//! assert!(matches!(&select.where_clause[0], Relation::Column { column, .. } if column.name() == "id"));
//! assert_eq!(select.to_string(), "SELECT name FROM ks.users WHERE id = ?");
//!
//! let error = cql::parse("SELECT * FROMM t").unwrap_err();
//! assert_eq!(error.message, "line 1:9 mismatched input 'FROMM' expecting K_FROM (SELECT * [FROMM]...)");
//! # Ok::<(), cql::SyntaxError>(())
//! ```
//!
//! Why hand-written: Cassandra's ANTLR grammar is the reference, and following it rule by rule
//! gives Cassandra's error positions and words while keeping recursion bounded
//! ([`MAX_NESTING`]) and every input, however hostile, answered with a tree or an error.
#![deny(clippy::unwrap_used)]
#![warn(missing_docs)]

pub mod ast;
mod error;
pub mod exec;
mod lexer;
mod parser;
pub mod schema;

pub use ast::Statement;
pub use error::{SyntaxError, SyntaxErrorKind};
pub use exec::{CqlError, Executor, Outcome, Session};
pub use lexer::{all_keywords, tokenize, Keyword, Punct, Reservation, Token, TokenKind};
pub use parser::{parse, parse_statements, MAX_NESTING};
