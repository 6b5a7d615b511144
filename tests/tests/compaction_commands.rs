//! nodetool's run-time compaction commands on a real node: `disableautocompaction` lets flushed
//! SSTables pile up until `enableautocompaction`, `setcompactionthreshold` changes when a
//! background compaction starts (and `getcompactionthreshold` prints it in Cassandra's words),
//! `getsstables` names the SSTables holding a key, and `stop COMPACTION` interrupts a running
//! `compact`, which fails with Cassandra's "Compaction interrupted" and leaves the SSTables as
//! they were.

use std::collections::BTreeMap;
use std::time::Duration;

use e2e::*;
use thrift_idl as t;

const KS: &str = "Compactions";
/// Long enough for the compaction thread to have merged what it would merge.
const SETTLE: Duration = Duration::from_secs(2);

/// Writes rows `<prefix>0` … `<prefix>{n-1}` of `cf`, one column of `value`, in batches.
fn write_rows(c: &mut Client, cf: &str, prefix: &str, n: usize, value: &str) {
    let keys: Vec<String> = (0..n).map(|i| format!("{prefix}{i}")).collect();
    for chunk in keys.chunks(100) {
        let mut rows: BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>> = BTreeMap::new();
        for k in chunk {
            rows.extend(batch(k, cf, vec![insert_mutation(column("c", value, ts()))]));
        }
        ok("batch_mutate", c.batch_mutate(rows, ONE));
    }
}

fn sstable_count(node: &Node, cf: &str) -> usize {
    let stats = node.tool(&["cfstats", &format!("{KS}.{cf}")]).ok().stdout;
    let line = stats.lines().find_map(|l| l.trim().strip_prefix("SSTable count: ")).expect("an SSTable count");
    line.parse().expect("a number")
}

fn flush(node: &Node, cf: &str) {
    node.tool(&["flush", KS, cf]).ok();
}

/// A failed run's exit code (1: the node refused) and what it printed on stderr.
#[track_caller]
fn refused(run: ToolRun) -> String {
    assert_eq!(run.code, Some(1), "{run:?}");
    run.stderr
}

fn start() -> (Node, Client) {
    let node = Node::start(Config::random());
    let mut c = node.client();
    create_keyspace(&mut c, KS, vec![cf_def(KS, "Cf", "UTF8Type"), cf_def(KS, "Other", "UTF8Type")]);
    ok("set_keyspace", c.set_keyspace(KS.into()));
    (node, c)
}

#[test]
fn background_compaction_is_switched_and_tuned_and_getsstables_finds_keys() {
    let (node, mut c) = start();

    // Thresholds, in Cassandra's words, set for one column family only.
    let thresholds = |cf: &str| node.tool(&["getcompactionthreshold", KS, cf]).ok().stdout;
    assert_eq!(thresholds("Cf"), "Current compaction thresholds for Compactions/Cf: \n min = 4,  max = 32\n");
    let e = refused(node.tool(&["setcompactionthreshold", KS, "Cf", "1", "4"]));
    assert!(e.contains("Compactions.Cf: Min threshold must be at least 2"), "{e}");
    let e = refused(node.tool(&["setcompactionthreshold", KS, "Cf", "-1", "4"]));
    assert!(e.contains("Compactions.Cf: Thresholds must be positive integers"), "{e}");
    let e = refused(node.tool(&["setcompactionthreshold", KS, "Cf", "6", "4"]));
    assert!(e.contains("Compactions.Cf: Min threshold cannot be greater than max."), "{e}");
    let e = refused(node.tool(&["getcompactionthreshold", KS, "Nope"]));
    assert!(e.contains("column family Compactions.Nope does not exist"), "{e}");
    assert_eq!(node.tool(&["setcompactionthreshold", KS, "Cf", "2", "8"]).ok().stdout, "");
    assert_eq!(thresholds("Cf"), "Current compaction thresholds for Compactions/Cf: \n min = 2,  max = 8\n");
    assert_eq!(thresholds("Other"), "Current compaction thresholds for Compactions/Other: \n min = 4,  max = 32\n");

    // Disabled: three flushes stay three SSTables, although two make a compaction now.
    assert_eq!(node.tool(&["disableautocompaction", KS, "Cf"]).ok().stdout, "");
    for f in 0..3 {
        write_rows(&mut c, "Cf", &format!("f{f}-"), 50, "v");
        flush(&node, "Cf");
    }
    std::thread::sleep(SETTLE);
    assert_eq!(sstable_count(&node, "Cf"), 3);
    let e = refused(node.tool(&["enableautocompaction", KS, "Nope"]));
    assert!(e.contains("column family Compactions.Nope does not exist"), "{e}");

    // Enabled: they are merged with no further flush.
    assert_eq!(node.tool(&["enableautocompaction", KS, "Cf"]).ok().stdout, "");
    assert!(eventually(Duration::from_secs(30), || sstable_count(&node, "Cf") == 1), "never merged");

    // getsstables: a key written again after the merge is in two SSTables, an absent key in
    // none; text or hex.
    node.tool(&["disableautocompaction"]).ok();
    write_rows(&mut c, "Cf", "f1-", 1, "again");
    flush(&node, "Cf");
    let files = node.tool(&["getsstables", KS, "Cf", "f1-0"]).ok().stdout;
    let listed: Vec<&str> = files.lines().collect();
    assert_eq!(listed.len(), 2, "{files}");
    for f in &listed {
        assert!(f.ends_with("-Data.db") && std::path::Path::new(f).is_file(), "{f}");
    }
    let hex: String = b"f1-0".iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(node.tool(&["getsstables", "--hex-format", KS, "Cf", &hex]).ok().stdout, files);
    assert_eq!(node.tool(&["getsstables", KS, "Cf", "f0-1"]).ok().stdout.lines().count(), 1);
    assert_eq!(node.tool(&["getsstables", KS, "Cf", "absent"]).ok().stdout, "");
    let e = refused(node.tool(&["getsstables", "--hex-format", KS, "Cf", "f1-"]));
    assert!(e.contains("An hex string representing bytes must have an even length"), "{e}");
    let e = refused(node.tool(&["getsstables", "Nope", "Cf", "f1-0"]));
    assert!(e.contains("keyspace Nope does not exist"), "{e}");
}

#[test]
fn stop_interrupts_a_running_compaction() {
    let (node, mut c) = start();
    node.tool(&["disableautocompaction", KS]).ok();
    // Four SSTables of about 1.5 MiB: at 1 MiB/s their merge takes some 6 seconds.
    let value = "x".repeat(1024);
    for f in 0..4 {
        write_rows(&mut c, "Cf", &format!("f{f}-"), 1500, &value);
        flush(&node, "Cf");
    }
    node.tool(&["setcompactionthroughput", "1"]).ok();

    let e = refused(node.tool(&["stop", "FOO"]));
    assert!(e.contains("unknown compaction type \"FOO\""), "{e}");
    assert_eq!(node.tool(&["stop", "VALIDATION"]).ok().stdout, "", "nothing of that type runs here");

    let compact = std::thread::spawn(node.tool_later(&["compact", KS, "Cf"]));
    let listed = eventually(Duration::from_secs(30), || {
        node.tool(&["compactionstats"]).ok().stdout.lines().any(|l| l.starts_with("Compaction ") && l.contains(" Cf "))
    });
    assert!(listed, "the compaction never showed in compactionstats");
    assert_eq!(node.tool(&["stop", "COMPACTION"]).ok().stdout, "");

    let run = compact.join().expect("the compact thread");
    let e = refused(run);
    assert!(e.contains("Compaction interrupted: Compaction@") && e.contains("(Compactions, Cf, "), "{e}");
    assert_eq!(sstable_count(&node, "Cf"), 4, "the inputs stay");
    assert_eq!(node.tool(&["compactionstats"]).ok().stdout.lines().count(), 1, "nothing runs any more");
    let got = ok("get", c.get(b("f3-1499"), path("Cf", "c"), ONE));
    assert_eq!(got.column.and_then(|col| col.value), Some(b(&value)));

    // The next compaction runs to its end.
    node.tool(&["setcompactionthroughput", "0"]).ok();
    node.tool(&["compact", KS, "Cf"]).ok();
    assert_eq!(sstable_count(&node, "Cf"), 1);
}
