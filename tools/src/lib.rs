//! Sibyl's command-line tools. [`cli`] is `sibyl-cli`, a cassandra-cli compatible shell.

pub mod cli;
