//! Cassandra 0.6's Thrift API (version 2.2.0) on the same port as API 20.1.0, told apart per
//! message, with no configuration.
//!
//! **Routing** ([`route`]). A message goes to the generation that
//! 1. has its method name, when only one has it (`get_string_property`, `batch_insert`,
//!    `multiget`, `get_range_slice`, `get_string_list_property` are 0.6's; `set_keyspace`,
//!    `system_*`, ... are 20.1.0's);
//! 2. otherwise sends its arguments with that layout: 0.6 puts the keyspace (a string) as field
//!    1 and shifts the other arguments up by one, so a field id with a wire type only one
//!    generation uses there decides (`get`: field 2 a string is 0.6's key, a struct 20.1.0's
//!    column path), read from the field headers without decoding;
//! 3. otherwise (`describe_keyspace`, `describe_keyspaces`, `describe_ring`, `describe_version`,
//!    `describe_cluster_name`, `describe_partitioner` have the same arguments in both) is the
//!    one the connection's last message of kind 1 or 2 showed; before any, an unframed
//!    connection is taken for 0.6 (its default transport; pycassa 0.3 calls `describe_version`
//!    first and insists on major version 2) and a framed one for 20.1.0 (the only transport
//!    Cassandra 2.1–3.11 serve). `describe_keyspace` and `describe_keyspaces` need no guess:
//!    until the connection has shown its generation they are answered in both forms at once
//!    ([`both`]).
//!
//! Names neither generation has (0.5's `get_key_range` among them) follow rule 3 and get
//! UNKNOWN_METHOD from either table.
//!
//! **Serving.** [`handler`] checks the login and the call's keyspace, converts 0.6's structs
//! into 20.1.0's ([`convert`]) and calls the same `reads`/`writes`/`describe` functions the
//! 20.1.0 API uses, so both generations see the same data through the same validation; 0.6's
//! consistency level ZERO is a write answered before it is durable. The connection keeps one
//! handler per generation: a 0.6 login does not log the 20.1.0 side in, nor the reverse.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
#![cfg_attr(test, allow(clippy::expect_used))]

mod both;
mod convert;
mod describe;
mod dispatch;
mod error;
mod handler;
pub mod route;

use std::sync::Arc;

use route::{Generation, Route, Router};

use super::dispatch::BadHeader;
use super::handler::{Handler as Handler20, ThriftContext};

/// A connection's two API generations: the router's state and the 0.6 handler (the 20.1.0
/// handler is the connection's own, passed in).
pub struct Generations {
    router: Router,
    v06: handler::Handler,
}

impl Generations {
    /// For a new connection; `framed` is the transport its first bytes showed.
    pub fn new(ctx: Arc<ThriftContext>, framed: bool) -> Generations {
        Generations { router: Router::new(framed), v06: handler::Handler::new(ctx) }
    }

    /// Runs one message through the generation it belongs to and appends the reply to `out`.
    pub async fn dispatch(&mut self, v20: &mut Handler20, message: &[u8], out: &mut Vec<u8>) -> Result<(), BadHeader> {
        match self.router.route(message) {
            Route::To(Generation::V20) => super::dispatch::dispatch(v20, message, out).await,
            Route::To(Generation::V06) => dispatch::dispatch(&mut self.v06, message, out).await,
            Route::BothForms => both::dispatch(v20, &mut self.v06, message, out).await,
        }
    }
}
