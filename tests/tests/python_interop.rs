//! Runs the Python interop test (tests/python/test_interop.py, the client generated from our IDL
//! by the Thrift compiler for Python) against the `sibyl` binary, so `cargo test` covers it.
//! A missing python3 or thrift module fails this test with instructions; it never skips.

use std::time::Duration;

use e2e::{run_python, sibyl_bin};

/// The Python test starts and stops its own node; this bounds the whole run.
const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn python_generated_client_interoperates() {
    let env = [("SIBYL_BIN", Some(sibyl_bin().display().to_string())), ("SIBYL_PORT", None)];
    let (status, output) = run_python("test_interop.py", "thrift", &env, LIMIT);
    assert!(status.success(), "the Python interop test failed ({status}):\n{output}");
    assert!(output.contains("OK"), "unittest did not report OK:\n{output}");
}
