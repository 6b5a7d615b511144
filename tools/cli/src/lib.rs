//! `sibyl-cli`, a cassandra-cli compatible shell that talks Thrift to a Sibyl node. [`cli`] holds
//! all of it (lexer, parser, session, shell); the binary in `src/bin/sibyl-cli.rs` is the command
//! line around it.

pub mod cli;
