//! Runs tests/python/test_cqlsh_5.py: Cassandra 3.x's own cqlsh (PyPI `cqlsh` 5.0.4, Python
//! 2.7), unmodified, against a real node's native port: its connection and version banner,
//! seed 001 through `cqlsh -f`, DESCRIBE of keyspaces, tables (clustering order, compact
//! storage, static and collection columns, options), a materialized view, the schema and the
//! cluster, compared whole with what it prints against 3.11, SELECT output and errors. A missing
//! Python 2.7 or cqlsh 5.0.4 fails this test with instructions; it never skips.

use std::time::Duration;

use e2e::{python27_cqlsh, run_python_unittest_with, Node};

/// The whole Python run: a dozen cqlsh processes, each connecting and reading the schema.
const LIMIT: Duration = Duration::from_secs(300);

#[test]
fn cqlsh_5_describes_the_schema_as_against_3_11() {
    let (python, dir) = python27_cqlsh();
    let node = Node::start_default();
    let env = [("SIBYL_PY27", Some(python)), ("SIBYL_CQLSH5_DIR", Some(dir.display().to_string()))];
    run_python_unittest_with(&node, "test_cqlsh_5.py", "unittest", &env, LIMIT);
}
