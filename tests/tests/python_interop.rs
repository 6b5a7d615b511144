//! Runs the Python interop test (tests/python/test_interop.py, the client generated from our IDL
//! by the Thrift compiler for Python) against the `sibyl` binary, so `cargo test` covers it.
//! A missing python3 or thrift module fails this test with instructions; it never skips.

use std::process::{Command, Stdio};
use std::time::Duration;

use e2e::{repo_root, sibyl_bin, wait_bounded};

/// The Python test starts and stops its own node; this bounds the whole run.
const LIMIT: Duration = Duration::from_secs(120);

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string())
}

#[test]
fn python_generated_client_interoperates() {
    let py = python();
    let probe = Command::new(&py)
        .args(["-c", "import thrift, sys; print(thrift.__file__, sys.version)"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {py} ({e}): install Python 3 (or set PYTHON) to run the interop test"));
    assert!(
        probe.status.success(),
        "{py} cannot import the thrift module: run `{py} -m pip install -r tests/python/requirements.txt`\n{}",
        String::from_utf8_lossy(&probe.stderr)
    );

    let script = repo_root().join("tests").join("python").join("test_interop.py");
    let log = tempfile::NamedTempFile::new().expect("temporary file for the Python output");
    let mut child = Command::new(&py)
        .arg(&script)
        .env("SIBYL_BIN", sibyl_bin())
        .env_remove("SIBYL_PORT")
        .stdin(Stdio::null())
        .stdout(log.reopen().expect("reopen"))
        .stderr(log.reopen().expect("reopen"))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {py} {}: {e}", script.display()));
    let Some(status) = wait_bounded(&mut child, LIMIT) else {
        panic!(
            "the Python interop test ran longer than {LIMIT:?}:\n{}",
            std::fs::read_to_string(log.path()).unwrap_or_default()
        );
    };
    let output = std::fs::read_to_string(log.path()).unwrap_or_default();
    eprintln!("{output}");
    assert!(status.success(), "the Python interop test failed ({status}):\n{output}");
    assert!(output.contains("OK"), "unittest did not report OK:\n{output}");
}
