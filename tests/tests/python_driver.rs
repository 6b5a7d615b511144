//! Runs tests/python/test_cql_driver.py, seed 001 through the DataStax Python driver
//! (`cassandra-driver` from PyPI, unmodified), against a real node's native protocol port, so
//! `cargo test` covers it. A missing python3 or driver fails this test with instructions; it
//! never skips.

use std::time::Duration;

use e2e::{run_python, Node};

/// The whole Python run, connections and schema refreshes included.
const LIMIT: Duration = Duration::from_secs(180);

#[test]
fn the_datastax_python_driver_runs_seed_001() {
    let node = Node::start_default();
    let native = node.native_addr();
    let env =
        [("SIBYL_NATIVE_HOST", Some(native.ip().to_string())), ("SIBYL_NATIVE_PORT", Some(native.port().to_string()))];
    let (status, output) = run_python("test_cql_driver.py", "cassandra", &env, LIMIT);
    assert!(status.success(), "the driver test failed ({status}):\n{output}\nnode log:\n{}", node.log());
    assert!(output.contains("\nOK"), "unittest did not report OK:\n{output}");
}
