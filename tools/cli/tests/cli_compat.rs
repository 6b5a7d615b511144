//! End to end: what users' existing cassandra-cli invocations and scripts meet in sibyl-cli —
//! commons-cli option forms, piped standard input, start-up failures that are not fatal, the
//! messages cassandra-cli prints without failing, `list`'s defaults and `columns`, `trace next
//! query`, and a `create keyspace` without a strategy that can be written to whatever the snitch.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const CLUSTER: &str = "CLI Compat Cluster";

fn cli_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_sibyl-cli"))
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl From<Output> for Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {:?}\n--- stdout:\n{}\n--- stderr:\n{}", self.code, self.stdout, self.stderr)
    }
}

/// `sibyl-cli ARGS` with `stdin` piped in (nothing when `None`).
fn cli(args: &[&str], stdin: Option<&str>) -> Run {
    let mut child = Command::new(cli_bin())
        .args(args)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sibyl-cli");
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(text.as_bytes()).expect("write stdin");
    }
    child.wait_with_output().expect("sibyl-cli output").into()
}

/// `sibyl-cli -h 127.0.0.1 -p PORT ARGS -f SCRIPT`.
fn run_file(node: &e2e::Node, script: &str, args: &[&str]) -> Run {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), script).expect("write script");
    let port = node.port().to_string();
    let mut all = vec!["-h", "127.0.0.1", "-p", &port];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-f", file.path().to_str().expect("utf-8 path")]);
    cli(&all, None)
}

fn assert_in(haystack: &str, needle: &str) {
    assert!(haystack.contains(needle), "expected {needle:?} in:\n{haystack}");
}

#[test]
fn cassandra_cli_command_lines() {
    let node = e2e::Node::start(e2e::Config::default().cluster_name(CLUSTER));
    let port = node.port().to_string();

    // commons-cli's GnuParser forms: single-dash long names, `=` and joined values.
    let run = cli(&["-host", "127.0.0.1", "-port", &port, "-e", "show cluster name"], None);
    assert_eq!(run.code, Some(0), "{run}");
    assert_in(&run.stdout, &format!("Connected to: \"{CLUSTER}\" on 127.0.0.1/{port}\n{CLUSTER}\n"));
    let joined = format!("-p{port}");
    let run = cli(&["--host=127.0.0.1", &joined, "-e", "show api version"], None);
    assert_eq!(run.code, Some(0), "{run}");
    assert_in(&run.stdout, "20.1.0\n");
    // cassandra-cli's other options: accepted; --unframed really talks unframed.
    let run = cli(
        &["-h", "127.0.0.1", "-p", &port, "--unframed", "--schema-mwt", "5", "--jmxport", "7199", "--debug"],
        Some("show api version;\n"),
    );
    assert_eq!(run.code, Some(0), "{run}");
    assert_in(&run.stdout, "20.1.0\n");
    // `-u` without `-pw` logs in with an empty password (the node has no authenticator).
    let run = cli(&["-h", "127.0.0.1", "-p", &port, "-u", "jsmith", "-e", "show api version"], None);
    assert_eq!(run.code, Some(0), "{run}");

    // Piped standard input without -B runs like typed statements: errors are printed without
    // line numbers and the run goes on to exit 0.
    let piped = "show api version;\nbogus;\nshow api version;\n";
    let run = cli(&["-h", "127.0.0.1", "-p", &port], Some(piped));
    assert_eq!(run.code, Some(0), "{run}");
    assert_eq!(run.stdout.matches("20.1.0\n").count(), 2, "{run}");
    assert_eq!(run.stderr, "Command not found: `bogus`. Type 'help;' or '?' for help.\n", "{run}");
    // -B: the first error is fatal (exit 4) and output is suppressed unless -v.
    let run = cli(&["-h", "127.0.0.1", "-p", &port, "-B"], Some(piped));
    assert_eq!(run.code, Some(4), "{run}");
    assert!(!run.stdout.contains("20.1.0"), "{run}");
    assert_eq!(run.stderr, "Command not found: `bogus`. Type 'help;' or '?' for help.\n", "{run}");
    let run = cli(&["-h", "127.0.0.1", "-p", &port, "-B", "-v"], Some(piped));
    assert_eq!(run.code, Some(4), "{run}");
    assert_eq!(run.stdout.matches("20.1.0\n").count(), 1, "{run}");

    // A failed start-up connection is reported and the file still runs (it may connect itself).
    let dead = e2e::free_port().to_string();
    let script = format!("connect 127.0.0.1/{port};\nshow api version;\n");
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), script).expect("write script");
    let run = cli(&["-p", &dead, "-f", file.path().to_str().expect("utf-8 path")], None);
    assert_eq!(run.code, Some(0), "{run}");
    assert_in(&run.stderr, &format!("Exception connecting to 127.0.0.1/{dead}."));
    assert_in(&run.stdout, &format!("Connected to: \"{CLUSTER}\" on 127.0.0.1/{port}\n20.1.0\n"));
    // ... and so is an unknown -k keyspace.
    let run = cli(&["-h", "127.0.0.1", "-p", &port, "-k", "nosuch", "-e", "show api version"], None);
    assert_eq!(run.code, Some(0), "{run}");
    assert_eq!(run.stderr, "Keyspace 'nosuch' not found.\n", "{run}");
    assert_in(&run.stdout, "20.1.0\n");
}

/// The node's snitch is 0.6's EndPointSnitch (RackInferringSnitch: data centre "0" for
/// 127.0.0.1), as in Sibyl's sample configuration, so a keyspace replicated to `datacenter1` only
/// could not be written.
#[test]
fn soft_messages_list_defaults_and_a_default_keyspace() {
    let config = e2e::Config::default()
        .cluster_name(CLUSTER)
        .keyspaces(e2e::keyspace_xml("Configured", &["<ColumnFamily Name=\"Standard1\"/>"]));
    let node = e2e::Node::start(config);
    let mut script = String::from(
        "describe;\n\
         get cf['k1'];\n\
         consistencylevel as FOO;\n\
         create keyspace fresh;\n\
         use fresh;\n\
         create column family cf with comparator = UTF8Type and key_validation_class = UTF8Type \
           and default_validation_class = UTF8Type;\n",
    );
    for i in 0..150 {
        script.push_str(&format!("set cf['k1']['c{i:03}'] = 'v{i}';\n"));
    }
    script.push_str(
        "set cf['k2']['a'] = 'x';\n\
         describe nosuch;\n\
         assume cf keys as nosuchtype;\n\
         list cf limit 0;\n\
         list cf;\n\
         list cf[k1:k1] limit 1 columns 2 reversed;\n\
         trace next query;\n\
         get cf['k2']['a'];\n\
         del cf['k2'];\n\
         describe cf;\n",
    );
    let run = run_file(&node, &script, &[]);
    assert_eq!(run.code, Some(0), "{run}");
    // The one message cassandra-cli prints on standard error (CliClient.hasKeySpace).
    assert_eq!(run.stderr, "Not authorized to a working keyspace.\n", "{run}");
    let out = &run.stdout;
    assert_in(out, "Authenticate to a Keyspace, before using `describe` or `describe <column_family>`\n");
    assert_in(out, "'FOO' is invalid. Available: ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, EACH_QUORUM, ANY\n");
    // `create keyspace fresh;` is SimpleStrategy with one replica: the writes went through.
    assert_eq!(out.matches("Value inserted.").count(), 151, "{run}");
    assert_in(out, "Sorry, no Keyspace nor ColumnFamily was found with name: nosuch\n");
    assert_in(out, "Type 'nosuchtype' was not found. Available: bytes, ");
    assert_in(out, " Or any class which extends o.a.c.db.marshal.AbstractType.\n");
    assert_in(out, "Invalid limit 0\n");
    // `list cf;`: both defaults announced, 100 of k1's 150 columns.
    let list: &str = out.split("Using default limit of 100\n").nth(1).unwrap_or_default();
    assert!(list.starts_with("Using default column limit of 100\n-------------------\n"), "{run}");
    let list = list.split(" Rows Returned.").next().unwrap_or_default();
    assert_eq!(list.matches("=> (column=c").count(), 100, "{run}");
    assert_in(list, "=> (column=c099, value=v99, timestamp=");
    assert!(!list.contains("column=c100"), "{run}");
    assert!(list.ends_with("\n2"), "{run}");
    // `columns 2 reversed`: k1's last two columns, last first.
    assert_in(out, "-------------------\nRowKey: k1\n=> (column=c149, value=v149, timestamp=");
    let reversed: Vec<&str> =
        out.lines().skip_while(|l| !l.starts_with("=> (column=c149")).take_while(|l| l.starts_with("=> ")).collect();
    assert_eq!(reversed.len(), 2, "{run}");
    assert!(reversed.get(1).is_some_and(|l| l.starts_with("=> (column=c148,")), "{run}");
    assert_in(out, "\n1 Row Returned.\n");
    // trace next query: a time UUID.
    let id = out.lines().find_map(|l| l.strip_prefix("Will trace next query. Session ID: ")).expect(out);
    assert_eq!(uuid::Uuid::parse_str(id).map(|u| u.get_version_num()), Ok(1), "{id}");
    assert_in(out, "row removed.\nElapsed time: ");
    // describe: 1.2's lines, doubles as Java prints them.
    assert_in(out, "      Populate IO Cache on flush: false\n      Replicate on write: true\n");
    let rrc = out.lines().find_map(|l| l.strip_prefix("      Read repair chance: ")).expect(out);
    assert!(rrc.contains('.'), "Java double: {rrc}");
    assert!(out.lines().any(|l| l.starts_with("      Bloom Filter FP chance: ")), "{run}");

    // Errors worded as cassandra-cli's, each fatal in -f.
    for (script, message) in [
        ("use nosuch;", "Line 1 => Keyspace 'nosuch' not found.\n"),
        ("drop keyspace nosuch;", "Line 1 => Keyspace 'nosuch' not found.\n"),
        ("update keyspace nosuch with durable_writes = false;", "Line 1 => Keyspace 'nosuch' not found.\n"),
        ("use fresh;\nget nosuchcf['k'];", "Line 2 => nosuchcf not found in current keyspace.\n"),
        ("use fresh;\nassume cf keys as bytes;\nget cf['zz'];", "Line 3 => cannot parse 'zz' as hex bytes\n"),
    ] {
        let run = run_file(&node, script, &[]);
        assert_eq!(run.code, Some(4), "{script}: {run}");
        assert_eq!(run.stderr, message, "{script}: {run}");
    }
}
