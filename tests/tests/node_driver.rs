//! DataStax's Node.js `cassandra-driver` (4.x, from npm, unmodified) against one `sibyl` node's
//! native port: tests/node/cql_driver.js connects (protocol negotiation down to v4, and v3 on
//! request; the local data center read from `system.local`), runs seed 001's CQL with its exact
//! rows and order, binds every common type through prepared statements, pages over 2,500 rows
//! three ways, runs batches and conditional writes, reads schema metadata (`system_schema`,
//! `system_traces`), the token map and the object mapper, checks error codes, sees schema changes
//! made by another client through events, and reads a query's trace; once per partitioner the
//! driver hashes keys for (Random, Murmur3). It prints `FAILED: <check>` and exits 1 at the first
//! check that fails.
//!
//! A missing `node` or `tests/node/node_modules/cassandra-driver` fails this test with
//! instructions (scripts/test.sh installs them); it never skips.

use std::process::{Command, Stdio};
use std::time::Duration;

use e2e::{repo_root, wait_bounded, Config, Node};

/// The script takes a few seconds; the rest is room for a slow, shared machine.
const LIMIT: Duration = Duration::from_secs(120);

/// Runs tests/node/cql_driver.js against `node`'s native port; panics with its output and the
/// node's log unless every check passed.
fn run_cql_driver_js(node: &Node) {
    let dir = repo_root().join("tests").join("node");
    assert!(
        dir.join("node_modules").join("cassandra-driver").is_dir(),
        "cassandra-driver is not installed: run `npm ci` in {} (scripts/test.sh does)",
        dir.display()
    );
    let native = node.native_addr();
    let log = tempfile::NamedTempFile::new().expect("temporary file for the script's output");
    let mut child = Command::new("node")
        .arg("cql_driver.js")
        .arg(native.ip().to_string())
        .arg(native.port().to_string())
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(log.reopen().expect("reopen"))
        .stderr(log.reopen().expect("reopen"))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run node ({e}): install Node.js to run the cassandra-driver test"));
    let Some(status) = wait_bounded(&mut child, LIMIT) else {
        panic!(
            "cql_driver.js ran longer than {LIMIT:?}:\n{}\nnode log:\n{}",
            std::fs::read_to_string(log.path()).unwrap_or_default(),
            node.log()
        );
    };
    let output = std::fs::read_to_string(log.path()).unwrap_or_default();
    assert!(status.success(), "cql_driver.js failed ({status}):\n{output}\nnode log:\n{}", node.log());
    assert!(output.contains("cql driver: OK"), "{output}");
    assert!(!output.contains("FAILED"), "{output}");
}

/// The default node (RandomPartitioner): the driver's token map hashes keys with MD5.
#[test]
fn the_node_cassandra_driver_runs_a_users_session() {
    run_cql_driver_js(&Node::start_default());
}

/// Cassandra's own default partitioner, which most Node users' clusters run: the driver's token
/// map hashes keys with Murmur3 as the node does.
#[test]
fn the_node_cassandra_driver_runs_a_users_session_on_murmur3() {
    run_cql_driver_js(&Node::start(Config::default().partitioner("org.apache.cassandra.dht.Murmur3Partitioner")));
}
