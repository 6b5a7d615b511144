//! `sibyl-cli`: an interactive shell with cassandra-cli's (Cassandra 1.x) statement language,
//! talking Thrift (binary protocol, framed or unframed transport) to a Sibyl node.
//!
//! Layers: [`lexer`] and [`parser`] turn text into an [`ast::Statement`]; [`schema`] maps
//! create/update attributes to Thrift `KsDef`/`CfDef`; [`value`] converts typed text to bytes and
//! back through `model::marshal`; [`session::Session`] holds the connection and schema cache and
//! runs statements (data statements in `data`, schema and describe statements in `ddl`);
//! [`shell`] splits input into statements and drives batch and interactive runs; [`options`]
//! reads the command line.

pub mod ast;
mod data;
mod ddl;
pub mod help;
pub mod lexer;
pub mod options;
pub mod parser;
pub mod schema;
pub mod session;
pub mod shell;
pub mod value;

pub use ddl::schema_script;
pub use parser::{parse_statement, ParseError};
pub use session::{CliError, Flow, Session};
