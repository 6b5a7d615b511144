//! Runs tests/python/test_cqlsh.py: cqlsh from PyPI, unmodified, against a real node's native
//! port (seed 001 through `cqlsh -f`, SELECT output, COPY TO and FROM), so `cargo test` covers
//! it. A missing python3 or cqlsh fails this test with instructions; it never skips.

use std::time::Duration;

use e2e::{run_python_unittest_on, Node};

/// The whole Python run: several cqlsh processes, COPY's workers included.
const LIMIT: Duration = Duration::from_secs(300);

#[test]
fn cqlsh_runs_seed_001_and_copies_tables_both_ways() {
    let node = Node::start_default();
    run_python_unittest_on(&node, "test_cqlsh.py", "cqlshlib", LIMIT);
}
