//! Sibyl's data model: what every layer speaks, with no storage, network or front end in it.
//!
//! Cassandra's `db.marshal`, `dht`, and the data classes of `db` and `db.filter`: comparators
//! and validators ([`marshal::AbstractType`]), row order and tokens ([`dht::Partitioner`]),
//! what is stored ([`data::Cell`], [`data::Row`], counter contexts in [`counter`]), how cells
//! sort ([`comparator::CellComparator`]), definitions ([`schema`], with Cassandra's rules for
//! them in [`schema_rules`] and [`compaction_options`]), what a read wants
//! ([`filter::ReadFilter`]) and a write ([`mutation::RowMutation`]). The engine (`storage`)
//! stores it, the coordinator moves it between nodes, the front ends and tools convert to and
//! from it; a tool that only needs types (`sibyl-cli`) links this crate alone.
#![deny(clippy::unwrap_used)]

pub mod compaction_options;
pub mod comparator;
pub mod counter;
pub mod cql_table;
pub mod data;
pub mod dht;
pub mod error;
pub mod filter;
pub mod marshal;
pub mod mutation;
pub mod schema;
pub mod schema_rules;
