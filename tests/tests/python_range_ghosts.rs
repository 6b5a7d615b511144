//! Runs tests/python/test_range_ghosts.py (issue 11, point 1): pycassa's documented get_range, on
//! the client generated from our IDL, yields the rows a range scan returns with no columns (rows
//! the predicate selects nothing from, deleted rows not yet purged) and counts them in row_count.
//! A missing python3 or thrift module fails this test with instructions; it never skips.

use std::process::{Command, Stdio};
use std::time::Duration;

use e2e::{repo_root, sibyl_bin, sibyltool_bin, wait_bounded};

/// The Python test starts and stops its own node; this bounds the whole run.
const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn pycassa_get_range_yields_range_ghosts() {
    let py = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    let probe = Command::new(&py)
        .args(["-c", "import thrift"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {py} ({e}): install Python 3 (or set PYTHON) to run this test"));
    assert!(
        probe.status.success(),
        "{py} cannot import the thrift module: run `{py} -m pip install -r tests/python/requirements.txt`\n{}",
        String::from_utf8_lossy(&probe.stderr)
    );

    let script = repo_root().join("tests").join("python").join("test_range_ghosts.py");
    let log = tempfile::NamedTempFile::new().expect("temporary file for the Python output");
    let mut child = Command::new(&py)
        .arg(&script)
        .env("SIBYL_BIN", sibyl_bin())
        .env("SIBYLTOOL_BIN", sibyltool_bin())
        .stdin(Stdio::null())
        .stdout(log.reopen().expect("reopen"))
        .stderr(log.reopen().expect("reopen"))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {py} {}: {e}", script.display()));
    let Some(status) = wait_bounded(&mut child, LIMIT) else {
        panic!(
            "the Python range-ghost test ran longer than {LIMIT:?}:\n{}",
            std::fs::read_to_string(log.path()).unwrap_or_default()
        );
    };
    let output = std::fs::read_to_string(log.path()).unwrap_or_default();
    eprintln!("{output}");
    assert!(status.success(), "the Python range-ghost test failed ({status}):\n{output}");
    assert!(
        output.contains("Ran 3 tests") && output.contains("OK"),
        "unittest did not run its 3 tests to OK:\n{output}"
    );
}
