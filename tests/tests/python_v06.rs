//! Runs the 0.6 API's Python test (tests/python/test_v06.py: the client generated from our
//! `cassandra-0.6.thrift` calls every 0.6 method, next to a 20.1.0 client) against the `sibyl`
//! binary, so `cargo test` covers it. A missing python3 or thrift module fails this test with
//! instructions; it never skips.

use std::process::{Command, Stdio};
use std::time::Duration;

use e2e::{repo_root, sibyl_bin, wait_bounded};

/// The Python test starts and stops its own node; this bounds the whole run.
const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn python_0_6_client_calls_every_0_6_method() {
    let py = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    let probe = Command::new(&py)
        .args(["-c", "import thrift, sys; print(thrift.__file__, sys.version)"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {py} ({e}): install Python 3 (or set PYTHON) to run the 0.6 test"));
    assert!(
        probe.status.success(),
        "{py} cannot import the thrift module: run `{py} -m pip install -r tests/python/requirements.txt`\n{}",
        String::from_utf8_lossy(&probe.stderr)
    );

    let script = repo_root().join("tests").join("python").join("test_v06.py");
    let log = tempfile::NamedTempFile::new().expect("temporary file for the Python output");
    let mut child = Command::new(&py)
        .arg(&script)
        .env("SIBYL_BIN", sibyl_bin())
        .stdin(Stdio::null())
        .stdout(log.reopen().expect("reopen"))
        .stderr(log.reopen().expect("reopen"))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {py} {}: {e}", script.display()));
    let Some(status) = wait_bounded(&mut child, LIMIT) else {
        panic!(
            "the Python 0.6 test ran longer than {LIMIT:?}:\n{}",
            std::fs::read_to_string(log.path()).unwrap_or_default()
        );
    };
    let output = std::fs::read_to_string(log.path()).unwrap_or_default();
    eprintln!("{output}");
    assert!(status.success(), "the Python 0.6 test failed ({status}):\n{output}");
    assert!(output.contains("OK") && output.contains("Ran 10 tests"), "unittest did not run all 10 tests:\n{output}");
}
