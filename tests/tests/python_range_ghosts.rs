//! Runs tests/python/test_range_ghosts.py (issue 11, point 1): pycassa's documented get_range, on
//! the client generated from our IDL, yields the rows a range scan returns with no columns (rows
//! the predicate selects nothing from, deleted rows not yet purged) and counts them in row_count.
//! A missing python3 or thrift module fails this test with instructions; it never skips.

use std::time::Duration;

use e2e::{run_python, sibyl_bin, sibyltool_bin};

/// The Python test starts and stops its own node; this bounds the whole run.
const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn pycassa_get_range_yields_range_ghosts() {
    let env = [
        ("SIBYL_BIN", Some(sibyl_bin().display().to_string())),
        ("SIBYLTOOL_BIN", Some(sibyltool_bin().display().to_string())),
    ];
    let (status, output) = run_python("test_range_ghosts.py", "thrift", &env, LIMIT);
    assert!(status.success(), "the Python range-ghost test failed ({status}):\n{output}");
    assert!(
        output.contains("Ran 3 tests") && output.contains("OK"),
        "unittest did not run its 3 tests to OK:\n{output}"
    );
}
