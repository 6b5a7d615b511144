//! Cassandra's Thrift RPC interface as Rust types: API version 20.1.0 at the crate root, and the
//! 0.6 API (version 2.2.0) in [`v06`].
//!
//! `cassandra.thrift` (next to this crate's `Cargo.toml`) is our own IDL, wire-compatible with the
//! interface of Cassandra 2.1–3.11. [`cassandra`] is generated from it by the Thrift 0.17 compiler
//! (`thrift-idl/regenerate.sh`; do not edit it by hand) and re-exported here, so users write
//! `thrift_idl::ColumnParent`, `thrift_idl::CassandraSyncHandler`, and so on.
//! `cassandra-0.6.thrift` is our IDL of Cassandra 0.6's interface (keyspace as argument 1 of every
//! data call, `string` row keys, `ConsistencyLevel::ZERO`...), generated the same way into [`v06`];
//! it is not re-exported, since most of its names are also 20.1.0 names:
//! write `thrift_idl::v06::ColumnParent`.
//!
//! [`VERSION`] (`"20.1.0"`, from the IDL constant) is what `describe_version` answers; a 0.6 client
//! expects [`v06::VERSION`] (`"2.2.0"`).
//!
//! Shape of the generated service API (the same in both modules):
//! - server side: implement [`CassandraSyncHandler`] (one `handle_<method>` per method, all
//!   arguments by value) and wrap it in [`CassandraSyncProcessor`], a `thrift::server::TProcessor`;
//! - client side: [`CassandraSyncClient`] implements [`TCassandraSyncClient`];
//! - a declared exception (e.g. [`InvalidRequestException`]) travels as
//!   `thrift::Error::User(Box<dyn Error + Send + Sync>)` holding that exception struct, see
//!   [`user_error`];
//! - each method `m` has public `Cassandra<M>Args` and `Cassandra<M>Result` structs (e.g.
//!   [`CassandraGetSliceArgs`], [`CassandraGetSliceResult`]) with public fields named as in the IDL
//!   and public inherent `read_from_in_protocol` / `write_to_out_protocol` (they do not implement
//!   `TSerializable`). Args hold the arguments in IDL order; a Result holds `result_value` (field
//!   0, absent for `void` methods) and one `Option` per declared exception, at its declared id.
//!   They let a dispatcher of its own decode a call after `read_message_begin` and encode its
//!   reply, and a client encode calls without the generated client.
//!
//! Differences from the raw generator output, made by `postprocess_rs.py` (each step refuses to
//! run if the generated code has changed shape):
//! - the Args and Result structs above are public;
//! - **Thrift's wire-type rule**: every reader (structs, exceptions, Args, Results) reads a known
//!   field id only when its wire type is the one our writer uses for that id, and skips it like an
//!   unknown field otherwise, as Thrift's Java and C++ code does. A client of another API
//!   generation therefore cannot make a reader misparse the rest of a message: a mistyped field is
//!   simply absent, and if it is required the read fails with the missing-field error;
//! - method arguments that have an IDL default (every defaulted `consistency_level`, `cas`' two
//!   levels, 0.6's `get_range_slice` key bounds) take that default when a client leaves them out,
//!   as Cassandra's server does. As in Java, a required argument of a primitive type keeps no
//!   default (0.6's `get_range_slice.row_count` must be sent). Optional *struct* fields with an
//!   IDL default (e.g. `CfDef::column_type`, `KsDef::durable_writes`) still decode as `None` when
//!   absent; the server applies their defaults when converting;
//! - a list's declared size reserves at most 1024 elements up front;
//! - every reader and writer is an inherent function generic over the protocol
//!   (`read_from_in_protocol<P: TInputProtocol + ?Sized>`), which the `TSerializable` impl calls.
//!   Inherent functions win over trait ones in resolution, so every call takes the generic one:
//!   given a concrete protocol (the server's `MessageInput`, `TBinaryOutputProtocol<&mut Vec<u8>>`)
//!   a whole message decodes or encodes without a virtual call per field.
//!
//! Enums are newtypes over `i32` (`ConsistencyLevel(pub i32)`): unknown values from clients decode
//! without error, so the server must validate them.

/// Declares a module of generated code, keeping its lints out of our builds instead of editing it.
macro_rules! generated {
    ($(#[$attr:meta])* pub mod $name:ident;) => {
        #[allow(
            clippy::all,
            clippy::pedantic,
            clippy::nursery,
            clippy::unwrap_used,
            clippy::expect_used,
            clippy::panic,
            clippy::indexing_slicing,
            non_camel_case_types,
            non_snake_case,
            dead_code,
            unused,
            missing_docs
        )]
        $(#[$attr])*
        pub mod $name;
    };
}

generated! {
    /// Cassandra's Thrift interface, API version 20.1.0, generated from `cassandra.thrift`.
    pub mod cassandra;
}

generated! {
    /// Cassandra 0.6's Thrift interface, API version 2.2.0, generated from `cassandra-0.6.thrift`.
    #[path = "cassandra_06.rs"]
    pub mod v06;
}
pub use cassandra::*;

pub mod input;
pub use input::{Header, MessageInput};
pub mod output;
pub use output::MessageOutput;

/// Default Thrift RPC port of Cassandra (`rpc_port`); clients use framed transport + binary protocol.
pub const DEFAULT_RPC_PORT: u16 = 9160;

/// Wraps a declared Thrift exception so a handler can return it: the generated processor looks for
/// it in `thrift::Error::User` and writes it into the method's result struct at its declared id.
///
/// An exception type the method does not declare is answered with a `TApplicationException`
/// instead, so return only the exceptions listed for the method.
pub fn user_error<E>(exception: E) -> thrift::Error
where
    E: std::error::Error + Send + Sync + 'static,
{
    thrift::Error::User(Box::new(exception))
}

/// A `CfDef` naming only its keyspace and column family, every optional field absent, so the
/// server applies its defaults. Set other fields with struct update syntax:
/// `CfDef { comparator_type: Some("UTF8Type".into()), ..bare_cf_def("ks", "cf") }`.
/// (The generated `Default` is no substitute: it fills some optional fields with zeros.)
pub fn bare_cf_def(keyspace: impl Into<String>, name: impl Into<String>) -> CfDef {
    CfDef {
        keyspace: keyspace.into(),
        name: name.into(),
        column_type: None,
        comparator_type: None,
        subcomparator_type: None,
        comment: None,
        row_cache_size: None,
        key_cache_size: None,
        read_repair_chance: None,
        column_metadata: None,
        gc_grace_seconds: None,
        default_validation_class: None,
        id: None,
        min_compaction_threshold: None,
        max_compaction_threshold: None,
        row_cache_save_period_in_seconds: None,
        key_cache_save_period_in_seconds: None,
        memtable_flush_after_mins: None,
        memtable_throughput_in_mb: None,
        memtable_operations_in_millions: None,
        replicate_on_write: None,
        merge_shards_chance: None,
        key_validation_class: None,
        row_cache_provider: None,
        key_alias: None,
        compaction_strategy: None,
        compaction_strategy_options: None,
        row_cache_keys_to_save: None,
        compression_options: None,
        bloom_filter_fp_chance: None,
        caching: None,
        dclocal_read_repair_chance: None,
        populate_io_cache_on_flush: None,
        memtable_flush_period_in_ms: None,
        default_time_to_live: None,
        index_interval: None,
        speculative_retry: None,
        triggers: None,
        cells_per_row_to_cache: None,
        min_index_interval: None,
        max_index_interval: None,
    }
}

/// Shorthand for the most common error: `InvalidRequestException { why }` as a `thrift::Error`.
pub fn invalid_request(why: impl Into<String>) -> thrift::Error {
    user_error(InvalidRequestException::new(why.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idl_version_is_20_1_0() {
        // `VERSION` (generated from the IDL constant) is what `describe_version` must answer.
        assert_eq!(VERSION, "20.1.0");
    }

    #[test]
    fn invalid_request_is_a_downcastable_user_error() {
        let err = invalid_request("no keyspace");
        let thrift::Error::User(inner) = err else {
            panic!("expected thrift::Error::User, got {err:?}");
        };
        let ire = inner.downcast_ref::<InvalidRequestException>();
        assert_eq!(ire.map(|e| e.why.as_str()), Some("no keyspace"));
    }
}
