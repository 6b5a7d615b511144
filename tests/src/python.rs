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
    run_python_unittest_with(node, script, module, &[], limit);
}

/// [`run_python_unittest_on`] with more of the script's environment set.
pub fn run_python_unittest_with(
    node: &crate::Node,
    script: &str,
    module: &str,
    extra_env: &[(&str, Option<String>)],
    limit: Duration,
) {
    let native = node.native_addr();
    let mut env = vec![
        ("SIBYL_NATIVE_HOST", Some(native.ip().to_string())),
        ("SIBYL_NATIVE_PORT", Some(native.port().to_string())),
    ];
    env.extend(extra_env.iter().cloned());
    let (status, output) = run_python(script, module, &env, limit);
    assert!(status.success(), "{script} failed ({status}):\n{output}\nnode log:\n{}", node.log());
    assert!(output.contains("\nOK"), "unittest did not report OK:\n{output}");
}

/// Where scripts/test.sh installs tests/python/requirements-py27.txt (cqlsh 5.0.4 and its
/// driver), unless `SIBYL_PY27_DIR` says otherwise: outside the checkout, kept between runs.
pub const PY27_PACKAGES: &str = "/var/tmp/sibyl-py27";

/// Python 2.7 (`SIBYL_PY27`, else pyenv's 2.7.18, else `python2.7` on PATH) and the directory
/// holding cqlsh 5.0.4's packages; panics, saying how to get what is missing, when either is not
/// there. scripts/test.sh finds the interpreter the same way and installs the packages.
pub fn python27_cqlsh() -> (String, std::path::PathBuf) {
    let candidates: Vec<String> = match std::env::var("SIBYL_PY27") {
        Ok(p) => vec![p],
        Err(_) => vec!["/root/.pyenv/versions/2.7.18/bin/python".into(), "python2.7".into()],
    };
    let python = candidates
        .iter()
        .find(|p| {
            Command::new(p)
                .args(["-c", "import sys; assert sys.version_info[:2] == (2, 7)"])
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .unwrap_or_else(|| {
            panic!(
                "no Python 2.7 (tried {candidates:?}), which cqlsh 5.0.4 needs: install it (e.g. \
                 `pyenv install 2.7.18`, or a distribution's python2.7) or set SIBYL_PY27 to one, then run \
                 scripts/test.sh, which installs cqlsh 5.0.4 for it"
            )
        })
        .clone();
    let dir = std::path::PathBuf::from(std::env::var("SIBYL_PY27_DIR").unwrap_or_else(|_| PY27_PACKAGES.into()));
    let probe = Command::new(&python)
        .args(["-c", "import cassandra, cqlshlib; print(cassandra.__version__)"])
        .env("PYTHONPATH", &dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    assert!(
        probe.status.success() && dir.join("bin").join("cqlsh").is_file(),
        "cqlsh 5.0.4 is not installed in {}: run scripts/test.sh, or\n  CASS_DRIVER_NO_CYTHON=1 \
         CASS_DRIVER_NO_EXTENSIONS=1 {python} -m pip install --no-deps --target {} -r \
         tests/python/requirements-py27.txt\n{}",
        dir.display(),
        dir.display(),
        String::from_utf8_lossy(&probe.stderr)
    );
    (python, dir)
}
