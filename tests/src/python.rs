//! Running the Python tests of tests/python from `cargo test`: python3 (or `$PYTHON`) must be
//! there and import what the script needs, else the test fails with instructions; it never
//! skips.

use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use crate::{repo_root, wait_bounded};

/// Runs `tests/python/<script>` once `import <module>` works, with `env` set (`None`: removed),
/// bounded by `limit`; its exit status and output (both streams), which is also printed.
pub fn run_python(script: &str, module: &str, env: &[(&str, Option<String>)], limit: Duration) -> (ExitStatus, String) {
    let py = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    let probe = Command::new(&py)
        .args(["-c", &format!("import {module}, sys; print({module}.__file__, sys.version)")])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {py} ({e}): install Python 3 (or set PYTHON) to run {script}"));
    assert!(
        probe.status.success(),
        "{py} cannot import {module}: run `{py} -m pip install -r tests/python/requirements.txt`\n{}",
        String::from_utf8_lossy(&probe.stderr)
    );
    let path = repo_root().join("tests").join("python").join(script);
    let log = tempfile::NamedTempFile::new().expect("temporary file for the Python output");
    let mut command = Command::new(&py);
    command.arg(&path).stdin(Stdio::null());
    for (name, value) in env {
        match value {
            Some(v) => command.env(name, v),
            None => command.env_remove(name),
        };
    }
    let mut child = command
        .stdout(log.reopen().expect("reopen"))
        .stderr(log.reopen().expect("reopen"))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {py} {}: {e}", path.display()));
    let Some(status) = wait_bounded(&mut child, limit) else {
        panic!("{script} ran longer than {limit:?}:\n{}", std::fs::read_to_string(log.path()).unwrap_or_default());
    };
    let output = std::fs::read_to_string(log.path()).unwrap_or_default();
    eprintln!("{output}");
    (status, output)
}

/// Runs `tests/python/<script>` (a unittest file that imports `module`) against `node`'s
/// native port, passed in SIBYL_NATIVE_HOST and SIBYL_NATIVE_PORT, bounded by `limit`; panics
/// with its output and the node's log unless it passes.
pub fn run_python_unittest_on(node: &crate::Node, script: &str, module: &str, limit: Duration) {
    let native = node.native_addr();
    let env =
        [("SIBYL_NATIVE_HOST", Some(native.ip().to_string())), ("SIBYL_NATIVE_PORT", Some(native.port().to_string()))];
    let (status, output) = run_python(script, module, &env, limit);
    assert!(status.success(), "{script} failed ({status}):\n{output}\nnode log:\n{}", node.log());
    assert!(output.contains("\nOK"), "unittest did not report OK:\n{output}");
}
