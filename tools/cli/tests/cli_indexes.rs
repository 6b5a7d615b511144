//! End to end: seed 002's secondary index queries as a `sibyl-cli -f` script (`get users where
//! user_name = 'alice';`, a song's comments), on one node and on three nodes with RF 3.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

const SEED_002: &str = include_str!("data/seed_002_schema.txt");

fn cli_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_sibyl-cli"))
}

/// Runs `script` with `sibyl-cli -f` against `node`; returns (success, stdout, stderr).
fn run_file(node: &e2e::Node, script: &str) -> (bool, String, String) {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), script).expect("write script");
    let out = Command::new(cli_bin())
        .args(["-h", &node.address(), "-p", &node.port().to_string()])
        .args(["-f", file.path().to_str().expect("utf-8 path")])
        .stdin(Stdio::null())
        .output()
        .expect("run sibyl-cli");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn schema(rf: u32) -> String {
    format!(
        "create keyspace music with placement_strategy = 'org.apache.cassandra.locator.SimpleStrategy'\n  \
         and strategy_options = {{replication_factor:{rf}}};\nuse music;\n{SEED_002}"
    )
}

const DATA: &str = "use music;\n\
    consistencylevel as QUORUM;\n\
    assume users keys as utf8;\n\
    assume comments keys as utf8;\n\
    set users['u1']['user_name'] = 'alice';\n\
    set users['u1']['json_data'] = '{\"likes\": 3}';\n\
    set users['u2']['user_name'] = 'bob';\n\
    set users['u3']['user_name'] = 'alice';\n\
    set users['u3']['user_name'] = 'carol';\n\
    set comments['c1']['song'] = '550e8400-e29b-41d4-a716-446655440000';\n\
    set comments['c1']['comment'] = 'great';\n\
    set comments['c2']['song'] = '550e8400-e29b-41d4-a716-446655440000';\n\
    set comments['c2']['comment'] = 'meh';\n\
    set comments['c3']['song'] = '00000000-0000-4000-8000-000000000001';\n";

const QUERIES: &str = "use music;\n\
    consistencylevel as QUORUM;\n\
    assume users keys as utf8;\n\
    assume comments keys as utf8;\n\
    get users where user_name = 'alice';\n\
    get comments where song = '550e8400-e29b-41d4-a716-446655440000';\n\
    get comments where song = '550e8400-e29b-41d4-a716-446655440000' and comment > 'hello';\n\
    get users where user_name = 'nobody';\n";

/// The rows of each `get ... where` in the output, in order: the row keys listed before each
/// "N Row(s) Returned." line (or none for "0 Row Returned.").
fn results(stdout: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut current = Vec::new();
    for line in stdout.lines() {
        if let Some(key) = line.strip_prefix("RowKey: ") {
            current.push(key.to_string());
        } else if line.ends_with("Returned.") {
            current.sort();
            out.push(std::mem::take(&mut current));
        }
    }
    out
}

fn check_queries(node: &e2e::Node) {
    let (ok, stdout, stderr) = run_file(node, QUERIES);
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(
        results(&stdout),
        vec![vec!["u1".to_string()], vec!["c1".into(), "c2".into()], vec!["c2".into()], vec![]],
        "{stdout}"
    );
    assert!(stdout.contains("=> (column=json_data, value={\"likes\": 3}, timestamp="), "{stdout}");
    assert!(stdout.contains("=> (column=user_name, value=alice, timestamp="), "{stdout}");
    assert!(stdout.contains("1 Row Returned.") && stdout.contains("2 Rows Returned."), "{stdout}");
}

#[test]
fn seed_002_index_queries_on_one_node() {
    let node = e2e::Node::start(e2e::Config::default().cluster_name("CLI Index Test"));
    let (ok, stdout, stderr) = run_file(&node, &format!("{}\n{DATA}", schema(1)));
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    check_queries(&node);
}

#[test]
fn seed_002_index_queries_on_three_nodes() {
    let tokens = e2e::random_partitioner_tokens(3);
    let nodes = e2e::start_cluster(3, |i| e2e::Config {
        cluster_name: "CLI Index Ring".into(),
        initial_token: tokens[i].clone(),
        ..e2e::Config::random()
    });
    e2e::wait_for_ring(&nodes, 3, Duration::from_secs(60));
    let (ok, stdout, stderr) = run_file(&nodes[0], &format!("{}\n{DATA}", schema(3)));
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    for node in &nodes {
        check_queries(node);
    }
}
