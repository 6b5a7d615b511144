//! `sibyl-stress`, a load generator for Cassandra's Thrift API in the spirit of
//! cassandra-stress: inserts, reads, mixes of both, range slices and counter increments over a
//! chosen number of keys, columns and value size, with uniform, gaussian or sequential keys,
//! `--threads` connections with one request in flight each, stopping after a count or a duration,
//! flat out or paced at `--rate`. With `--protocol resp` the same runner speaks Redis' protocol
//! (`SET`/`GET`), so one client drives both servers of `bench/redis-vs-sibyl.sh`; with
//! `--protocol cql` it speaks Cassandra's native protocol (prepared INSERT and SELECT of a CQL
//! table), for `bench/cql-vs-thrift.sh`.
//!
//! It reports a progress line per second and ends with the op rate and latency percentiles
//! from an HdrHistogram; `--json` prints that summary for scripts and `--graph` appends the run
//! to a self-contained HTML page comparing runs.
//!
//! - [`settings`]: the command line and its small languages (ratios, durations, levels);
//! - [`keys`]: key distributions and key format;
//! - [`client`]: Thrift connections, the stress schema, one function per request kind;
//! - [`runner`]: connection tasks on a one-thread tokio runtime, sampling and stop rules;
//! - [`stats`]: histograms, intervals, the summary;
//! - [`report`]: the HTML page;
//! - [`wire`]: the measured Thrift calls (the generated argument and result structs) and the
//!   async connection;
//! - [`resp`]: the RESP encoder, reply parser and connection;
//! - [`cql`]: the native protocol's frames, reply parser, connection and stress table;
//! - [`pacer`]: the `--rate` schedule.

pub mod client;
pub mod cql;
pub mod keys;
pub mod pacer;
pub mod report;
pub mod resp;
pub mod runner;
pub mod settings;
pub mod stats;
pub mod wire;
