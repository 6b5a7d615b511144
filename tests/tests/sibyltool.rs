//! `sibyltool` against a real `sibyl` process: data written over Thrift, then flush, cfstats,
//! ring, status, info, describecluster, getendpoints, tpstats, netstats, cleanup, the ring
//! operations that need the cluster layer, errors, and drain (after which Thrift writes fail).
//!
//! Every wait is bounded: node start, each tool run, Thrift sockets, node stop (the harness').

use e2e::*;
use model::dht::Partitioner;

const CLUSTER: &str = "Sibyl Tool Test";

fn insert(c: &mut Client, cf: &str, key: &str) -> thrift::Result<()> {
    c.insert(b(key), parent(cf), column(b("name"), b("value"), 1_000), ONE)
}

fn parse_json(run: &ToolRun) -> serde_json::Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {run:?}"))
}

fn start() -> Node {
    let keyspace = keyspace_xml(
        "Keyspace1",
        &[
            r#"<ColumnFamily Name="Standard1" CompareWith="BytesType"/>"#,
            r#"<ColumnFamily Name="Standard2" CompareWith="UTF8Type"/>"#,
        ],
    );
    Node::start(Config::random().cluster_name(CLUSTER).keyspaces(keyspace))
}

fn line_value<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.trim_start().strip_prefix(label).map(|rest| rest.trim_start_matches([' ', ':']).trim()))
        .unwrap_or_else(|| panic!("no {label:?} line in:\n{text}"))
}

#[test]
fn sibyltool_reports_and_operates_a_running_node() {
    let mut node = start();
    let mut client = node.client_in("Keyspace1");
    for key in ["key1", "key2", "key3"] {
        insert(&mut client, "Standard1", key).expect("insert");
    }

    // Before the flush: data only in the memtable.
    let before = node.tool(&["cfstats", "Keyspace1.Standard1"]).ok();
    assert_eq!(line_value(&before.stdout, "SSTable count"), "0", "{}", before.stdout);
    assert_eq!(line_value(&before.stdout, "Memtable Columns Count"), "3");
    assert_eq!(line_value(&before.stdout, "Write Count"), "3");

    // flush: progress on stderr as plain lines (not a terminal), a summary on stdout.
    let flush = node.tool(&["flush", "Keyspace1"]).ok();
    assert!(flush.stderr.contains("[0/2] flushing Keyspace1.Standard1\n"), "{flush:?}");
    assert!(flush.stderr.contains("[2/2] flushed 2 column families\n"), "{flush:?}");
    assert!(flush.stdout.contains("Keyspace1.Standard1: 1 new SSTable, 1 SSTables"), "{flush:?}");
    assert!(flush.stdout.contains("Keyspace1.Standard2: memtable was empty, 0 SSTables"), "{flush:?}");

    let stats = node.tool(&["cfstats", "Keyspace1"]).ok();
    let std1 = stats.stdout.split("Column Family: Standard2").next().expect("Standard1 first");
    assert!(std1.contains("Column Family: Standard1"), "{}", stats.stdout);
    assert_eq!(line_value(std1, "SSTable count"), "1", "{}", stats.stdout);
    assert_eq!(line_value(std1, "Number of Keys (estimate)"), "3");
    assert_eq!(line_value(std1, "Memtable Columns Count"), "0");
    assert_eq!(line_value(std1, "Memtable Switch Count"), "1");
    let json = parse_json(&node.tool(&["--json", "cfstats", "Keyspace1.Standard1"]).ok());
    let cf = &json["keyspaces"][0]["column_families"][0];
    assert_eq!(cf["sstable_count"], 1, "{json}");
    assert_eq!(cf["key_estimate"], 3, "{json}");
    let space = cf["space_used_live"].as_u64().expect("bytes");
    assert!(space > 0);

    // ring, status and info agree on this node's token and load.
    let info_json = parse_json(&node.tool(&["--json", "info"]).ok());
    let token = info_json["token"].as_str().expect("token").to_string();
    // Load is every SSTable on the node: Standard1's and the system keyspace's (schema, state).
    let all = parse_json(&node.tool(&["--json", "cfstats"]).ok());
    let total: u64 = all["keyspaces"]
        .as_array()
        .expect("keyspaces")
        .iter()
        .flat_map(|k| k["column_families"].as_array().expect("cfs").iter())
        .map(|c| c["space_used_live"].as_u64().expect("bytes"))
        .sum();
    assert!(total > space, "system keyspace SSTables count in the load: {all}");
    assert_eq!(info_json["load_bytes"].as_u64(), Some(total));
    let ring = node.tool(&["ring"]).ok();
    let row: Vec<&str> = ring.stdout.lines().last().expect("node row").split_whitespace().collect();
    // The node's configuration names 0.6's EndPointSnitch, which is RackInferringSnitch: the
    // data centre is the address's second octet, the rack its third.
    assert_eq!(row[..5], ["127.0.0.1", "0", "0", "Up", "Normal"], "{}", ring.stdout);
    assert_eq!(row[7..], ["100.00%", token.as_str()], "{}", ring.stdout);
    let status = node.tool(&["status"]).ok();
    let row = status.stdout.lines().last().expect("node row");
    assert!(row.starts_with("UN  127.0.0.1"), "{}", status.stdout);
    assert!(row.contains("100.00%") && row.ends_with(" 0"), "{}", status.stdout);
    let info = node.tool(&["info"]).ok();
    assert_eq!(line_value(&info.stdout, "Token"), token);
    assert_eq!(line_value(&info.stdout, "Mode"), "NORMAL");
    assert_eq!(line_value(&info.stdout, "Cluster"), CLUSTER);
    assert!(line_value(&info.stdout, "Uptime (seconds)").parse::<u64>().is_ok(), "{}", info.stdout);
    assert!(line_value(&info.stdout, "Memory (resident)").contains("MB"), "{}", info.stdout);
    // The default 64 MB block cache, as the node reports it.
    assert_eq!(info_json["block_cache_capacity_bytes"], 64 << 20, "{info_json}");
    assert!(line_value(&info.stdout, "Block cache").contains("capacity 64.00 MB"), "{}", info.stdout);

    let cluster = node.tool(&["describecluster"]).ok();
    assert!(cluster.stdout.starts_with("Cluster Information:\n"), "{}", cluster.stdout);
    assert_eq!(line_value(&cluster.stdout, "Name"), CLUSTER);
    assert_eq!(line_value(&cluster.stdout, "Partitioner"), "org.apache.cassandra.dht.RandomPartitioner");
    // 0.6's EndPointSnitch, as the node's configuration names it, is RackInferringSnitch.
    assert_eq!(line_value(&cluster.stdout, "Snitch"), "org.apache.cassandra.locator.RackInferringSnitch");
    let schema_line = cluster.stdout.lines().last().expect("a schema version line");
    assert!(schema_line.ends_with(": [127.0.0.1]"), "{}", cluster.stdout);
    assert_eq!(schema_line.trim().len(), 36 + ": [127.0.0.1]".len(), "a UUID: {schema_line}");

    // getendpoints: this node, and the key's token by the configured partitioner.
    let endpoints = node.tool(&["getendpoints", "Keyspace1", "Standard1", "key1"]).ok();
    assert_eq!(endpoints.stdout, "127.0.0.1\n");
    let json = parse_json(&node.tool(&["--json", "getendpoints", "Keyspace1", "Standard1", "key1"]).ok());
    let p = Partitioner::Random;
    assert_eq!(json["token"].as_str(), Some(p.token_to_string(&p.token_for_key(b"key1")).as_str()));

    // tpstats: the node also writes its own system keyspace (schema, local row, peers) on a
    // timetable of its own, so the check is that two more client writes add at least two.
    let mutation_stage = |node: &Node| -> u64 {
        let tp = node.tool(&["tpstats"]).ok();
        let line = tp.stdout.lines().find(|l| l.starts_with("MutationStage")).expect("MutationStage");
        let fields: Vec<String> = line.split_whitespace().map(String::from).collect();
        assert_eq!(fields[..3], ["MutationStage", "n/a", "n/a"], "{}", tp.stdout);
        assert!(tp.stdout.contains("Internode messages dropped since startup"), "{}", tp.stdout);
        fields[3].parse().expect("a completed count")
    };
    let first = mutation_stage(&node);
    assert!(first >= 3, "the 3 client writes are counted: {first}");
    for key in ["key5", "key6"] {
        insert(&mut client, "Standard2", key).expect("insert");
    }
    let second = mutation_stage(&node);
    assert!(second >= first + 2, "two more writes counted: {first} then {second}");

    let net = node.tool(&["netstats"]).ok();
    assert_eq!(net.stdout, "Mode: NORMAL\nNot sending any streams.\nNot receiving any streams.\n");
    let cleanup = node.tool(&["cleanup"]).ok();
    assert!(cleanup.stdout.starts_with("Keyspace1: nothing to clean up"), "{cleanup:?}");
    let version = node.tool(&["version"]).ok();
    assert!(version.stdout.starts_with(&format!("ReleaseVersion: {}\n", env!("CARGO_PKG_VERSION"))));

    // compact with one SSTable keeps one.
    let compact = node.tool(&["compact", "Keyspace1", "Standard1"]).ok();
    assert!(compact.stdout.starts_with("Keyspace1.Standard1: 1 SSTables"), "{compact:?}");
    assert!(compact.stderr.contains("[0/1] compacting Keyspace1.Standard1"), "{compact:?}");

    // Errors: exit code 1 and the node's message.
    for (args, needle) in [
        (
            &["move", "abc"][..],
            "move: invalid token \"abc\" for RandomPartitioner: not an integer: invalid digit found in string",
        ),
        (&["loadbalance"][..], "loadbalance: this node is the only one in the ring"),
        (&["join"][..], "This node has already joined the ring."),
        (
            &["decommission"][..],
            "decommission: this node is the only one in the ring; its data would have nowhere to go",
        ),
        (&["removenode", "x"][..], "removenode: no node x in the ring"),
        (&["cfstats", "Nope"][..], "keyspace Nope does not exist"),
        (&["flush", "Keyspace1", "Missing"][..], "column family Keyspace1.Missing does not exist"),
    ] {
        let run = node.tool(args);
        assert_eq!(run.code, Some(1), "{args:?}: {run:?}");
        assert_eq!(run.stderr, format!("sibyltool: {needle}\n"), "{args:?}");
    }

    // drain: every memtable flushed, then Thrift writes fail and reads still work.
    insert(&mut client, "Standard2", "key9").expect("insert before drain");
    let drain = node.tool(&["drain"]).ok();
    // Keyspace1's two column families, the system keyspace's six (hints, local, paxos, peers
    // and the two schema tables), system_traces' two (sessions, events), system_schema's ten
    // (keyspaces, tables, columns, dropped_columns, triggers, views, types, functions,
    // aggregates, indexes), system_auth's two (roles, role_permissions) and
    // system_distributed's two (repair_history, parent_repair_history).
    assert!(drain.stdout.starts_with("Drained: flushed 24 column families."), "{drain:?}");
    assert!(drain.stderr.contains("drained"), "{drain:?}");
    let after = parse_json(&node.tool(&["--json", "cfstats", "Keyspace1.Standard2"]).ok());
    assert_eq!(after["keyspaces"][0]["column_families"][0]["sstable_count"], 1, "{after}");
    match insert(&mut client, "Standard1", "key4") {
        Err(thrift::Error::Application(e)) => {
            assert_eq!(e.kind, thrift::ApplicationErrorKind::InternalError, "{e:?}");
            assert_eq!(e.message, "storage is shutting down");
        }
        other => panic!("a write after drain must fail with an internal error, got {other:?}"),
    }
    let mut reader = node.client_in("Keyspace1");
    let got = reader.get(b("key1"), path("Standard1", b("name")), ONE).expect("reads work after drain");
    assert_eq!(got.column.and_then(|c| c.value), Some(b"value".to_vec()));
    let info = node.tool(&["info"]).ok();
    assert_eq!(line_value(&info.stdout, "Mode"), "DRAINED");
    let flush = node.tool(&["flush"]);
    assert_eq!(flush.code, Some(1), "{flush:?}");
    assert!(flush.stderr.contains("the node is drained"), "{flush:?}");
    let again = node.tool(&["drain"]).ok();
    assert!(again.stdout.starts_with("Already drained."), "{again:?}");

    // A drained node still stops cleanly.
    let status = node.stop();
    assert!(status.success(), "exit status {status}\nlog:\n{}", node.log());
}

#[test]
fn unreachable_node_and_bad_usage_have_their_own_exit_codes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port().to_string();
    let run = run_sibyltool(dir.path(), &["-p", &port, "ring"]);
    assert_eq!(run.code, Some(3), "{run:?}");
    assert!(
        run.stderr.starts_with(&format!("sibyltool: cannot connect to sibyl admin interface at 127.0.0.1:{port}: ")),
        "{run:?}"
    );
    let usage = run_sibyltool(dir.path(), &["frobnicate"]);
    assert_eq!(usage.code, Some(2), "{usage:?}");
    let usage = run_sibyltool(dir.path(), &["getendpoints", "Keyspace1"]);
    assert_eq!(usage.code, Some(2), "{usage:?}");
}

/// `snapshot`, `listsnapshots` and `clearsnapshot`: the snapshot holds the data as it was when
/// taken (its files are hard links that stay when compaction replaces the originals).
#[test]
fn snapshots_are_taken_listed_and_cleared() {
    let node = start();
    let mut client = node.client_in("Keyspace1");
    for key in ["key1", "key2"] {
        insert(&mut client, "Standard1", key).expect("insert");
    }
    let taken = node.tool(&["snapshot", "-t", "nightly", "Keyspace1"]).ok();
    assert!(taken.stdout.starts_with("Snapshot directory: nightly (2 column families, 5 files, "), "{taken:?}");
    assert!(taken.stderr.contains("snapshot nightly of Keyspace1.Standard1"), "{taken:?}");
    let json = parse_json(&node.tool(&["--json", "snapshot", "-t", "second", "Keyspace1"]).ok());
    let dir = std::path::PathBuf::from(json["column_families"][0]["directory"].as_str().expect("a directory"));
    assert!(dir.ends_with("snapshots/second"), "{json}");
    let files: Vec<String> = std::fs::read_dir(&dir)
        .expect("snapshot dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into())
        .collect();
    assert!(files.iter().any(|f| f.ends_with("-Data.db")), "{files:?}");

    // Compaction replaces the SSTable; the snapshot's links keep the old one's data.
    insert(&mut client, "Standard1", "key3").expect("insert");
    node.tool(&["compact", "Keyspace1", "Standard1"]).ok();
    let data = files.iter().find(|f| f.ends_with("-Data.db")).expect("Data");
    assert!(!dir.parent().unwrap().parent().unwrap().join(data).exists(), "compaction removed the original");
    assert!(std::fs::metadata(dir.join(data)).expect("still linked").len() > 0);

    let listed = node.tool(&["listsnapshots"]).ok();
    assert_eq!(listed.stdout.lines().filter(|l| l.starts_with("nightly ")).count(), 2, "{listed:?}");
    assert_eq!(listed.stdout.lines().filter(|l| l.starts_with("second ")).count(), 2, "{listed:?}");

    for (args, needle) in [
        (&["snapshot", "-t", "nightly"][..], "snapshot nightly already exists for Keyspace1.Standard1"),
        (&["snapshot", "-t", "../up"][..], "invalid snapshot name \"../up\": it holds a path separator or NUL"),
        (&["snapshot", "Nope"][..], "keyspace Nope does not exist"),
    ] {
        let run = node.tool(args);
        assert_eq!(run.code, Some(1), "{args:?}: {run:?}");
        assert!(run.stderr.starts_with(&format!("sibyltool: {needle}")), "{args:?}: {run:?}");
    }

    let cleared = node.tool(&["clearsnapshot", "-t", "nightly"]).ok();
    assert!(cleared.stdout.starts_with("Removed 2 snapshot directories\n"), "{cleared:?}");
    let listed = node.tool(&["listsnapshots"]).ok();
    assert!(!listed.stdout.contains("nightly") && listed.stdout.contains("second"), "{listed:?}");
    node.tool(&["clearsnapshot"]).ok();
    assert_eq!(node.tool(&["listsnapshots"]).ok().stdout, "There are no snapshots\n");
}

/// `AutoSnapshot` (on by default): a Thrift truncate and a column family drop each leave a
/// snapshot of what they removed, listed and cleared like any other.
#[test]
fn truncate_and_drop_leave_a_snapshot_behind() {
    let node = start();
    let mut client = node.client_in("Keyspace1");
    insert(&mut client, "Standard1", "key1").expect("insert");
    client.truncate("Standard1".into()).expect("truncate");
    client.system_drop_column_family("Standard1".into()).expect("drop");
    let listed = node.tool(&["listsnapshots"]).ok();
    let tags: Vec<&str> = listed.stdout.lines().filter_map(|l| l.split_whitespace().next()).collect();
    let truncated = tags.iter().find(|t| t.ends_with("-truncated-Standard1")).unwrap_or_else(|| panic!("{listed:?}"));
    let dropped = tags.iter().find(|t| t.ends_with("-dropped-Standard1")).unwrap_or_else(|| panic!("{listed:?}"));
    for tag in [truncated, dropped] {
        let millis = tag.split('-').next().unwrap_or_default();
        assert!(millis.len() >= 13 && millis.bytes().all(|b| b.is_ascii_digit()), "{tag}");
    }
    // The truncation's snapshot holds the row (an SSTable's five files); the drop's, nothing.
    let json = parse_json(&node.tool(&["--json", "listsnapshots"]).ok());
    let files_of = |tag: &str| {
        json["snapshots"].as_array().expect("snapshots").iter().find(|s| s["tag"] == tag).map(|s| s["files"].clone())
    };
    assert_eq!(files_of(truncated), Some(serde_json::json!(5)), "{json}");
    assert_eq!(files_of(dropped), Some(serde_json::json!(0)), "{json}");
    node.tool(&["clearsnapshot"]).ok();
    assert_eq!(node.tool(&["listsnapshots"]).ok().stdout, "There are no snapshots\n");
}

/// `import`: a snapshot comes back into a truncated column family while the node runs, and a
/// directory without SSTables is refused with the reason.
#[test]
fn a_snapshot_is_imported_back_while_the_node_runs() {
    let node = start();
    let mut client = node.client_in("Keyspace1");
    for key in ["key1", "key2"] {
        insert(&mut client, "Standard1", key).expect("insert");
    }
    let json = parse_json(&node.tool(&["--json", "snapshot", "-t", "before", "Keyspace1"]).ok());
    let snapshot = json["column_families"]
        .as_array()
        .expect("column families")
        .iter()
        .find(|c| c["column_family"] == "Standard1")
        .and_then(|c| c["directory"].as_str())
        .expect("Standard1's snapshot")
        .to_string();
    client.truncate("Standard1".into()).expect("truncate");
    let read = |client: &mut Client, key: &str| client.get(b(key), path("Standard1", b("name")), ONE).is_ok();
    assert!(!read(&mut client, "key1"));

    let run = node.tool(&["import", "Keyspace1", "Standard1", &snapshot]).ok();
    assert!(run.stdout.starts_with("Imported 1 SSTables into Keyspace1.Standard1 (2 partitions, "), "{run:?}");
    assert!(run.stderr.contains("importing"), "{run:?}");
    assert!(read(&mut client, "key1") && read(&mut client, "key2"));

    let empty = tempfile::tempdir().expect("tempdir");
    let refused = node.tool(&["import", "Keyspace1", "Standard1", &empty.path().display().to_string()]);
    assert_eq!(refused.code, Some(1), "{refused:?}");
    assert!(refused.stderr.contains("it holds no SSTable of Keyspace1.Standard1"), "{refused:?}");
}

/// `scrub`: after a byte of an SSTable is damaged on disk, reads of the partitions in the
/// damaged chunk fail (naming the file); scrub leaves those out, lists them, and every read
/// answers again.
#[test]
fn scrub_leaves_out_damaged_partitions_and_reads_answer_again() {
    let mut node = start();
    let mut client = node.client_in("Keyspace1");
    let value = "v".repeat(100);
    for i in 0..3000 {
        let key = format!("key{i}");
        ok("insert", client.insert(b(&key), parent("Standard1"), column(b("name"), b(&value), 1_000), ONE));
    }
    node.tool(&["flush", "Keyspace1", "Standard1"]).ok();
    assert!(node.stop().success());
    let data = find_files(node.dir(), "-Data.db")
        .into_iter()
        .find(|p| p.to_string_lossy().contains("Standard1-"))
        .expect("Data file");
    let mut bytes = std::fs::read(&data).expect("read");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xFF;
    std::fs::write(&data, bytes).expect("write");
    node.start_again();

    let mut client = node.client_in("Keyspace1");
    let read = |client: &mut Client, i: usize| client.get(b(&format!("key{i}")), path("Standard1", b("name")), ONE);
    let failing: Vec<usize> = (0..3000).filter(|i| read(&mut client, *i).is_err()).collect();
    assert!(!failing.is_empty(), "the damage went unnoticed");
    let run = node.tool(&["scrub", "Keyspace1", "Standard1"]).ok();
    let expected = format!(
        "Keyspace1.Standard1: 1 SSTables checked, 1 rewritten, {} partitions kept, {} lost (run repair",
        3000 - failing.len(),
        failing.len()
    );
    assert!(run.stdout.starts_with(&expected), "{run:?}");
    assert!(run.stdout.contains(&format!("\n  key{}\n", failing[0])), "{run:?}");
    let mut client = node.client_in("Keyspace1");
    for i in 0..3000 {
        match read(&mut client, i) {
            Ok(_) => assert!(!failing.contains(&i), "key{i} was lost"),
            Err(thrift::Error::User(e)) if e.downcast_ref::<thrift_idl::NotFoundException>().is_some() => {
                assert!(failing.contains(&i), "key{i} is gone")
            }
            Err(e) => panic!("key{i}: {e:?}"),
        }
    }
    let listed = node.tool(&["listsnapshots"]).ok();
    assert!(listed.stdout.contains("-pre-scrub-Standard1-"), "{listed:?}");
}

/// Every file under `dir` whose name ends with `suffix`, outside snapshots.
fn find_files(dir: &std::path::Path, suffix: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "snapshots") {
                found.extend(find_files(&path, suffix));
            }
        } else if path.to_string_lossy().ends_with(suffix) {
            found.push(path);
        }
    }
    found
}

/// `compactionstats`, and the compaction and streaming limits read and changed, on a quiet node.
#[test]
fn throughput_limits_are_read_and_changed_at_run_time() {
    let node = start();
    // The node compacts its system.local at start; wait for that to end.
    let quiet = eventually(std::time::Duration::from_secs(30), || {
        node.tool(&["compactionstats"]).ok().stdout == "pending tasks: 0\n"
    });
    assert!(quiet, "{:?}", node.tool(&["compactionstats"]));
    let json = parse_json(&node.tool(&["--json", "compactionstats"]).ok());
    assert_eq!(json["throughput_mb_per_sec"], 16, "{json}");
    assert_eq!(node.tool(&["getcompactionthroughput"]).ok().stdout, "Current compaction throughput: 16 MB/s\n");
    assert_eq!(node.tool(&["setcompactionthroughput", "64"]).ok().stdout, "Current compaction throughput: 64 MB/s\n");
    assert_eq!(node.tool(&["getcompactionthroughput"]).ok().stdout, "Current compaction throughput: 64 MB/s\n");
    node.tool(&["setcompactionthroughput", "0"]).ok();
    assert_eq!(node.tool(&["getcompactionthroughput"]).ok().stdout, "Current compaction throughput: unthrottled\n");
    let bad = node.tool(&["setcompactionthroughput", "-1"]);
    assert_eq!(bad.code, Some(2), "{bad:?}");

    // The streaming limit likewise (StreamThroughputOutboundMegabitsPerSec, default 200).
    assert_eq!(node.tool(&["getstreamthroughput"]).ok().stdout, "Current stream throughput: 200 Mb/s\n");
    node.tool(&["setstreamthroughput", "25"]).ok();
    assert_eq!(node.tool(&["getstreamthroughput"]).ok().stdout, "Current stream throughput: 25 Mb/s\n");
}
