//! The seed documents' music application written against helenus 0.6 (the Node.js Thrift client
//! for Cassandra), run unchanged against the `sibyl` binary: tests/node/music_app.js creates the
//! schema over Thrift, writes users, songs, comments, likes and counters, and queries the KEYS
//! indexes. A missing `node` or `tests/node/node_modules` fails this test with instructions
//! (scripts/test.sh installs them); it never skips.

use std::process::{Command, Stdio};
use std::time::Duration;

use e2e::{repo_root, wait_bounded, Config, Node};

const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn helenus_runs_the_music_app() {
    let dir = repo_root().join("tests").join("node");
    assert!(
        dir.join("node_modules").join("helenus").is_dir(),
        "helenus is not installed: run `npm ci` in {} (scripts/test.sh does)",
        dir.display()
    );
    let node = Node::start(Config::random());
    let log = tempfile::NamedTempFile::new().expect("temporary file for the app's output");
    let mut child = Command::new("node")
        .arg("music_app.js")
        .arg(node.addr().to_string())
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(log.reopen().expect("reopen"))
        .stderr(log.reopen().expect("reopen"))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run node ({e}): install Node.js to run the helenus test"));
    let Some(status) = wait_bounded(&mut child, LIMIT) else {
        panic!(
            "the helenus app ran longer than {LIMIT:?}:\n{}",
            std::fs::read_to_string(log.path()).unwrap_or_default()
        );
    };
    let output = std::fs::read_to_string(log.path()).unwrap_or_default();
    assert!(status.success(), "the helenus app failed ({status}):\n{output}\nnode log:\n{}", node.log());
    assert!(output.contains("music app: OK"), "{output}");
}
