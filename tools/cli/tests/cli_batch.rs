//! End to end: a real `sibyl` node (started by the `e2e` harness) and `sibyl-cli -f` / `-e`
//! running seed 002's schema and data statements against it.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const SEED_002: &str = include_str!("data/seed_002_schema.txt");

fn cli_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_sibyl-cli"))
}

/// A running node (killed when dropped) and helpers to run `sibyl-cli` against it.
struct Node {
    node: e2e::Node,
}

impl Node {
    fn start() -> Node {
        Node { node: e2e::Node::start(e2e::Config::default().cluster_name("CLI Test Cluster")) }
    }

    fn cli(&self, args: &[&str]) -> Output {
        Command::new(cli_bin())
            .args(["-h", "127.0.0.1", "-p", &self.node.port().to_string()])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run sibyl-cli")
    }

    fn run_file(&self, script: &str, extra: &[&str]) -> (Output, String, String) {
        let file = tempfile::NamedTempFile::new().expect("temp file");
        std::fs::write(file.path(), script).expect("write script");
        let path = file.path().to_str().expect("utf-8 path");
        let mut args = vec!["-f", path];
        args.extend_from_slice(extra);
        let out = self.cli(&args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out, stdout, stderr)
    }
}

const KEYSPACE: &str = "create keyspace music with placement_strategy = 'org.apache.cassandra.locator.SimpleStrategy'\n  and strategy_options = {replication_factor:1};\nuse music;\n";

fn assert_in(haystack: &str, needle: &str) {
    assert!(haystack.contains(needle), "expected {needle:?} in output:\n{haystack}");
}

#[test]
fn seed_002_schema_and_data_round_trip() {
    let node = Node::start();
    let script = format!(
        "-- seed 002, as written\n{KEYSPACE}{SEED_002}\n\
         # data\n\
         assume users keys as utf8;\n\
         set users['jsmith']['user_name'] = 'John Smith';\n\
         set users['jsmith']['json_data'] = '{{\"likes\": [\"a;b\"]}}' with ttl = 3600;\n\
         set users[utf8('bob')]['user_name'] = 'Bob';\n\
         get users['jsmith'];\n\
         echo_marker_1_is_not_a_command_so_it_is_not_here;\n\
         set users['stop']['user_name'] = 'never written';\n"
    );
    // The line above is an error on purpose: -f stops there (cassandra-cli behaviour) ...
    let (out, stdout, stderr) = node.run_file(&script, &[]);
    assert_eq!(out.status.code(), Some(4), "stdout:\n{stdout}\nstderr:\n{stderr}");
    // cassandra-cli's `Line N` counts statements, not lines.
    let statements = sibyl_cli::cli::shell::split_script(&script);
    let n = statements.iter().position(|p| p.text.starts_with("echo_marker")).expect("marker") + 1;
    let line = script.lines().position(|l| l.starts_with("echo_marker")).expect("marker") + 1;
    assert_ne!(n, line, "the script has multi-line statements and comments");
    assert_eq!(
        stderr,
        format!("Line {n} => Command not found: `echo_marker_1_is_not_a_command_so_it_is_not_here`. Type 'help;' or '?' for help.\n")
    );
    assert_eq!(
        stdout.matches("... schemas agree across the cluster").count(),
        6,
        "keyspace + 5 column families:\n{stdout}"
    );
    assert_in(&stdout, "Authenticated to keyspace: music");
    assert_eq!(stdout.matches("Value inserted.").count(), 3);
    let row: Vec<&str> =
        stdout.lines().skip_while(|l| !l.starts_with("=> ")).take_while(|l| !l.starts_with("Elapsed")).collect();
    assert!(row.iter().any(|l| l.starts_with("=> (column=user_name, value=John Smith, timestamp=")), "{stdout}");
    assert!(
        row.iter().any(|l| l.starts_with("=> (column=json_data, value={\"likes\": [\"a;b\"]}, timestamp=")
            && l.ends_with(", ttl=3600)")),
        "{stdout}"
    );
    assert!(row.contains(&"Returned 2 results."), "{stdout}");

    // ... and a second run (a new session: the data is on the node) reads, lists and deletes.
    let script = "use music;\n\
        assume users keys as utf8;\n\
        list users;\n\
        get users['jsmith']['user_name'];\n\
        count users['jsmith'];\n\
        del users['jsmith']['json_data'];\n\
        get users['jsmith']['json_data'];\n\
        del users['bob'];\n\
        list users limit 10;\n\
        set user_likes[bytes('0a0b')]['550e8400-e29b-41d4-a716-446655440000'] = 3;\n\
        get user_likes['0a0b'];\n\
        set comments['00ff']['timestamp'] = '2012-01-01 10:00:00';\n\
        set comments['00ff']['user'] = '550e8400-e29b-41d4-a716-446655440000';\n\
        get comments['00ff'];\n\
        describe users;\n";
    let (out, stdout, stderr) = node.run_file(script, &[]);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(stderr, "");
    // First list: both rows (order is the partitioner's), and not the row after the failed line.
    let first_list: Vec<&str> =
        stdout.lines().skip_while(|l| !l.starts_with("-----")).take_while(|l| !l.starts_with("Elapsed")).collect();
    assert!(first_list.contains(&"RowKey: jsmith") && first_list.contains(&"RowKey: bob"), "{stdout}");
    assert!(first_list.contains(&"2 Rows Returned."), "{stdout}");
    assert_in(&stdout, "=> (column=user_name, value=John Smith, timestamp=");
    assert_in(&stdout, "2 columns\n");
    assert_in(&stdout, "column removed.\n");
    assert_in(&stdout, "Value was not found\n");
    assert_in(&stdout, "row removed.\n");
    assert_in(&stdout, "-------------------\nRowKey: jsmith\n=> (column=user_name, value=John Smith, timestamp=");
    // bob's row was deleted: until compaction purges its tombstone it is listed without
    // columns (a "range ghost", as Cassandra lists it).
    assert_in(&stdout, "-------------------\nRowKey: bob\n\n2 Rows Returned.\n");
    // UUIDType comparator, IntegerType default validator, BytesType key.
    assert_in(&stdout, "=> (column=550e8400-e29b-41d4-a716-446655440000, value=3, timestamp=");
    // DateType and UUIDType values from the column metadata.
    assert_in(&stdout, "=> (column=timestamp, value=2012-01-01T10:00:00");
    assert_in(&stdout, "=> (column=user, value=550e8400-e29b-41d4-a716-446655440000, timestamp=");
    assert_in(&stdout, "    ColumnFamily: users\n");
    assert_in(&stdout, "        Column Name: user_name\n          Validation Class: org.apache.cassandra.db.marshal.UTF8Type\n          Index Name: users_user_name_idx\n          Index Type: KEYS\n");
}

#[test]
fn errors_continue_and_unsupported_features_report_the_server_error() {
    let node = Node::start();
    let setup = format!("{KEYSPACE}{SEED_002}");
    let (out, stdout, stderr) = node.run_file(&setup, &[]);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");

    let script = "use music;\n\
        set users['not hex']['user_name'] = 'x';\n\
        get users where json_data = 'John';
\
        incr users['00'][utf8('likes')] by 2;
\
        create column family bad with colour = blue;\n\
        set users['00']['user_name'] = 'still running';\n\
        get users['00'];\n";
    let (out, stdout, stderr) = node.run_file(script, &["--continue-on-error"]);
    assert_eq!(out.status.code(), Some(4), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let errors: Vec<&str> = stderr.lines().collect();
    assert_eq!(errors.len(), 4, "{stderr}");
    assert_eq!(errors.first(), Some(&"Line 2 => cannot parse 'not hex' as hex bytes"), "{stderr}");
    // The server's errors are shown: no index on json_data, and counters only in a counter
    // column family.
    assert!(errors.get(1).is_some_and(|e| e.starts_with("Line 3 => ") && e.contains("No indexed columns")), "{stderr}");
    assert!(errors.get(2).is_some_and(|e| e.starts_with("Line 4 => ") && e.contains("non commutative")), "{stderr}");
    assert!(
        errors.get(3).is_some_and(|e| e.starts_with("Line 5 => Unknown column family attribute 'colour'")),
        "{stderr}"
    );
    assert_in(&stdout, "=> (column=user_name, value=still running, timestamp=");

    // -e runs statements given on the command line; without a keyspace, data statements print
    // cassandra-cli's message on stderr and do not fail.
    let out = node.cli(&["-e", "show api version; show cluster name"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert_in(&stdout, "20.1.0\nCLI Test Cluster\n");
    let out = node.cli(&["-e", "get users['00']"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "Not authorized to a working keyspace.\n");
    let out = node.cli(&["-k", "music", "-e", "get users['00']['user_name']"]);
    assert!(out.status.success());
    assert_in(&String::from_utf8_lossy(&out.stdout), "value=still running");
}

/// Seed 002's song_data counters: incr/decr through sibyl-cli (Thrift add), read back with get
/// and list, removed with del (remove_counter).
#[test]
fn seed_002_song_data_counters() {
    let node = Node::start();
    let script = format!(
        "{KEYSPACE}{SEED_002}\n\
         assume song_data comparator as utf8;\n\
         assume song_data keys as utf8;\n\
         incr song_data['song1']['likes'];\n\
         incr song_data['song1']['likes'] by 4;\n\
         decr song_data['song1']['likes'];\n\
         incr song_data['song1']['views'] by 10;\n\
         get song_data['song1']['likes'];\n\
         get song_data['song1'];\n\
         count song_data['song1'];\n\
         del song_data['song1']['views'];\n\
         get song_data['song1'];\n"
    );
    let (out, stdout, stderr) = node.run_file(&script, &[]);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_in(&stdout, "Value incremented.\n");
    assert_in(&stdout, "Value decremented.\n");
    assert_in(&stdout, "=> (counter=likes, value=4)\n");
    assert_in(&stdout, "=> (counter=likes, value=4)\n=> (counter=views, value=10)\nReturned 2 results.");
    assert_in(&stdout, "2 columns\n");
    assert_in(&stdout, "=> (counter=likes, value=4)\nReturned 1 results.");
}

#[test]
fn show_schema_output_recreates_the_keyspace() {
    let node = Node::start();
    let (out, stdout, stderr) = node.run_file(&format!("{KEYSPACE}{SEED_002}"), &[]);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let show = |node: &Node| {
        let out = node.cli(&["-e", "show schema music"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        // Drop the "Connected to" line.
        text.lines().skip(1).collect::<Vec<_>>().join("\n")
    };
    let before = show(&node);
    assert_in(&before, "create column family 'song_data'");
    let out = node.cli(&["-e", "drop keyspace music"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (out, stdout, stderr) = node.run_file(&before, &[]);
    assert!(out.status.success(), "replaying show schema failed:\n{stdout}\n{stderr}");
    assert_eq!(show(&node), before);
}

/// As in cassandra-cli, a failed start-up connection is reported and the statements run: without
/// a connection they print "Not connected to a cassandra instance." and do not fail.
#[test]
fn connection_failure_is_reported_and_statements_run() {
    let port = e2e::free_port();
    let out = Command::new(cli_bin()).args(["-p", &port.to_string(), "-e", "show keyspaces"]).output().expect("run");
    assert_eq!(out.status.code(), Some(0));
    assert_in(&String::from_utf8_lossy(&out.stderr), &format!("Exception connecting to 127.0.0.1/{port}"));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Not connected to a cassandra instance.\n");
}

#[test]
fn list_pages_and_super_columns() {
    let node = Node::start();
    let mut script = format!(
        "{KEYSPACE}create column family Events with comparator = LongType and key_validation_class = UTF8Type \
         and default_validation_class = UTF8Type;\n\
         create column family Posts with column_type = Super and comparator = UTF8Type and subcomparator = LongType \
         and key_validation_class = AsciiType;\n"
    );
    for i in 0..250 {
        script.push_str(&format!("set Events['row{i:03}'][{i}] = 'event {i}';\n"));
    }
    script.push_str(
        "list Events limit 1000;\n\
         list Events limit 150;\n\
         list Events;\n\
         set Posts['alice']['post1'][1] = '68656c6c6f';\n\
         set Posts['alice']['post1'][2] = utf8('world');\n\
         set Posts['alice']['post2'][3] = int(7);\n\
         get Posts['alice'];\n\
         get Posts['alice']['post1'];\n\
         get Posts['alice']['post1'][2];\n\
         count Posts['alice'];\n\
         count Posts['alice']['post1'];\n\
         del Posts['alice']['post1'][1];\n\
         get Posts['alice']['post1'];\n",
    );
    let (out, stdout, stderr) = node.run_file(&script, &[]);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_in(&stdout, "\n250 Rows Returned.\n");
    assert_in(&stdout, "\n150 Rows Returned.\n");
    // Without a limit, cassandra-cli 1.1+'s default of 100 rows.
    assert_in(&stdout, "Using default limit of 100\nUsing default column limit of 100\n-------------------\n");
    assert_in(&stdout, "\n100 Rows Returned.\n");
    // Every row exactly once in the full list (paging must not repeat or skip rows).
    let full: Vec<&str> = stdout.split("\n250 Rows Returned.").next().unwrap_or_default().lines().collect();
    for i in 0..250 {
        let key = format!("RowKey: row{i:03}");
        assert_eq!(full.iter().filter(|l| **l == key).count(), 1, "{key}");
    }
    assert_in(&stdout, "=> (column=42, value=event 42, timestamp=");
    // Super columns: names by comparator, sub-columns by subcomparator, values by validator.
    assert_in(&stdout, "=> (super_column=post1,\n     (column=1, value=68656c6c6f, timestamp=");
    // A value written with a function is shown with that function's type afterwards.
    assert_in(&stdout, "=> (super_column=post2,\n     (column=3, value=7, timestamp=");
    assert_in(&stdout, "2 columns\n");
    assert_in(&stdout, "=> (column=2, value=world, timestamp=");
    assert_in(&stdout, "column removed.\nElapsed time: ");
    let after_del = stdout.split("column removed.\n").nth(1).unwrap_or_default();
    assert!(
        after_del.lines().nth(1).is_some_and(|l| l.starts_with("=> (column=2, value=world, timestamp=")),
        "{stdout}"
    );
}
