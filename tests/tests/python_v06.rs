//! Runs the 0.6 API's Python test (tests/python/test_v06.py: the client generated from our
//! `cassandra-0.6.thrift` calls every 0.6 method, next to a 20.1.0 client) against the `sibyl`
//! binary, so `cargo test` covers it. A missing python3 or thrift module fails this test with
//! instructions; it never skips.

use std::time::Duration;

use e2e::{run_python, sibyl_bin};

/// The Python test starts and stops its own node; this bounds the whole run.
const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn python_0_6_client_calls_every_0_6_method() {
    let bin = Some(sibyl_bin().display().to_string());
    let (status, output) = run_python("test_v06.py", "thrift", &[("SIBYL_BIN", bin)], LIMIT);
    assert!(status.success(), "the Python 0.6 test failed ({status}):\n{output}");
    assert!(output.contains("OK") && output.contains("Ran 10 tests"), "unittest did not run all 10 tests:\n{output}");
}
