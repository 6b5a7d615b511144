//! Runs tests/python/test_cql_driver.py, seed 001 through the DataStax Python driver
//! (`cassandra-driver` from PyPI, unmodified), against a real node's native protocol port, so
//! `cargo test` covers it. A missing python3 or driver fails this test with instructions; it
//! never skips.

use std::process::{Command, Stdio};
use std::time::Duration;

use e2e::{repo_root, wait_bounded, Node};

/// The whole Python run, connections and schema refreshes included.
const LIMIT: Duration = Duration::from_secs(180);

#[test]
fn the_datastax_python_driver_runs_seed_001() {
    let py = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    let probe = Command::new(&py)
        .args(["-c", "import cassandra, sys; print(cassandra.__version__, sys.version)"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {py} ({e}): install Python 3 (or set PYTHON) to run the driver test"));
    assert!(
        probe.status.success(),
        "{py} cannot import the cassandra driver: run `{py} -m pip install -r tests/python/requirements.txt`\n{}",
        String::from_utf8_lossy(&probe.stderr)
    );
    let node = Node::start_default();
    let native = node.native_addr();
    let script = repo_root().join("tests").join("python").join("test_cql_driver.py");
    let log = tempfile::NamedTempFile::new().expect("temporary file for the Python output");
    let mut child = Command::new(&py)
        .arg(&script)
        .env("SIBYL_NATIVE_HOST", native.ip().to_string())
        .env("SIBYL_NATIVE_PORT", native.port().to_string())
        .stdin(Stdio::null())
        .stdout(log.reopen().expect("reopen"))
        .stderr(log.reopen().expect("reopen"))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {py} {}: {e}", script.display()));
    let Some(status) = wait_bounded(&mut child, LIMIT) else {
        panic!(
            "the driver test ran longer than {LIMIT:?}:\n{}",
            std::fs::read_to_string(log.path()).unwrap_or_default()
        );
    };
    let output = std::fs::read_to_string(log.path()).unwrap_or_default();
    eprintln!("{output}");
    assert!(status.success(), "the driver test failed ({status}):\n{output}\nnode log:\n{}", node.log());
    assert!(output.contains("\nOK"), "unittest did not report OK:\n{output}");
}
