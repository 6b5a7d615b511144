//! Runs tests/python/test_cql_driver.py, seed 001 through the DataStax Python driver
//! (`cassandra-driver` from PyPI, unmodified), against a real node's native protocol port, so
//! `cargo test` covers it. A missing python3 or driver fails this test with instructions; it
//! never skips.

use std::time::Duration;

use e2e::{run_python_unittest_on, Node};

/// The whole Python run, connections and schema refreshes included.
const LIMIT: Duration = Duration::from_secs(180);

#[test]
fn the_datastax_python_driver_runs_seed_001() {
    let node = Node::start_default();
    run_python_unittest_on(&node, "test_cql_driver.py", "cassandra", LIMIT);
}
