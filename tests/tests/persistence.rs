//! Data and schema survive restarts: a clean shutdown (SIGTERM flushes memtables), a crash
//! (SIGKILL: the commit log is replayed), and a mix of flushed and unflushed data.

use std::time::Duration;

use e2e::*;
use thrift_idl as t;

const KS: &str = "Durable";

fn schema() -> Vec<t::CfDef> {
    vec![cf_def(KS, "Standard1", "UTF8Type"), super_cf_def(KS, "Super1", "UTF8Type", "BytesType")]
}

/// A node started with `config` whose keyspace Durable exists, and a client in that keyspace.
fn start_durable(config: Config) -> (Node, Client) {
    Node::start_with_keyspace(config, KS, schema())
}

fn write_rows(c: &mut Client, prefix: &str, rows: usize, value: &str) {
    for i in 0..rows {
        let key = format!("{prefix}{i:03}");
        let m = batch(
            &key,
            "Standard1",
            vec![
                insert_mutation(column(b("name"), b(&key), ts())),
                insert_mutation(column(b("value"), b(value), ts())),
            ],
        );
        ok("batch_mutate", c.batch_mutate(m, ONE));
    }
}

fn assert_rows(c: &mut Client, prefix: &str, rows: usize, value: &str, when: &str) {
    assert_row_range(c, prefix, 0..rows, value, when)
}

fn assert_row_range(c: &mut Client, prefix: &str, rows: std::ops::Range<usize>, value: &str, when: &str) {
    let keys: Vec<Vec<u8>> = rows.map(|i| b(&format!("{prefix}{i:03}"))).collect();
    let got = ok("multiget_slice", c.multiget_slice(keys.clone(), parent("Standard1"), all(10), ONE));
    for k in keys {
        let name = String::from_utf8_lossy(&k).into_owned();
        let cols = got.get(&k).map(|v| str_pairs(v)).unwrap_or_default();
        assert_eq!(
            cols,
            vec![("name".to_string(), name.clone()), ("value".to_string(), value.to_string())],
            "{when}: row {name}"
        );
    }
}

#[test]
fn clean_shutdown_keeps_data_and_deletions() {
    let (mut node, mut c) = start_durable(Config::random());
    write_rows(&mut c, "row", 100, "v1");
    ok("remove column", c.remove(b("row000"), path("Standard1", b("value")), ts(), ONE));
    ok("remove row", c.remove(b("row001"), row_path("Standard1"), ts(), ONE));
    ok("super insert", c.insert(b("s"), super_parent("Super1", b("sc")), column(vec![1, 2], b("sub"), ts()), ONE));
    let ttl_ts = ts();
    ok("ttl insert", c.insert(b("ttl"), parent("Standard1"), column_ttl(b("c"), b("v"), ttl_ts, 3600), ONE));
    drop(c);

    let status = node.stop();
    assert!(status.success(), "sibyl exited with {status} on SIGTERM:\n{}", node.log());
    node.start_again();

    let mut c = node.client_in(KS);
    assert_row_range(&mut c, "row", 2..100, "v1", "after a clean restart");
    expect_not_found("deleted column after restart", c.get(b("row000"), path("Standard1", b("value")), ONE));
    assert!(
        ok("slice", c.get_slice(b("row001"), parent("Standard1"), all(10), ONE)).is_empty(),
        "a deleted row stays deleted after restart"
    );
    let sc = ok("super get", c.get(b("s"), super_path("Super1", b("sc"), None), ONE)).super_column.expect("sc");
    assert_eq!(
        str_pairs(&ok("slice", c.get_slice(b("row000"), parent("Standard1"), all(10), ONE))),
        vec![("name".to_string(), "row000".to_string())],
        "a deleted column stays deleted, its neighbour stays"
    );
    assert_eq!(
        sc.columns.iter().map(|c| (c.name.clone(), c.value.clone())).collect::<Vec<_>>(),
        vec![(vec![1, 2], Some(b("sub")))]
    );
    let got = ok("ttl get", c.get(b("ttl"), path("Standard1", b("c")), ONE)).column.expect("column");
    assert_eq!((got.timestamp, got.ttl), (Some(ttl_ts), Some(3600)), "timestamp and TTL survive a restart");
}

#[test]
fn sigkill_after_sync_period_replays_the_commit_log() {
    let (mut node, mut c) = start_durable(Config::random());
    write_rows(&mut c, "row", 50, "v1");
    // Periodic sync every 1000 ms (the harness' CommitLogSyncPeriodInMS): wait two periods.
    std::thread::sleep(Duration::from_millis(2100));
    node.kill9();
    node.start_again();
    let mut c = node.client_in(KS);
    assert_rows(&mut c, "row", 50, "v1", "after SIGKILL and replay");
}

#[test]
fn sigkill_right_after_acknowledgement_keeps_the_write() {
    // The process dies, the OS does not: an acknowledged write is in the commit log file (as in
    // Cassandra, where periodic mode writes every mutation to the segment before acknowledging).
    let (mut node, mut c) = start_durable(Config::random());
    write_rows(&mut c, "row", 20, "acked");
    node.kill9();
    node.start_again();
    let mut c = node.client_in(KS);
    assert_rows(&mut c, "row", 20, "acked", "after SIGKILL right after the acknowledgement");
}

#[test]
fn flushed_and_replayed_data_merge_by_timestamp() {
    let (mut node, mut c) = start_durable(Config::random());
    write_rows(&mut c, "row", 40, "old");
    drop(c);
    node.restart(); // clean: "old" is flushed to an SSTable

    let mut c = node.client_in(KS);
    write_rows(&mut c, "row", 20, "new"); // overwrites rows 0..20, only in the commit log
    ok("delete", c.remove(b("row030"), row_path("Standard1"), ts(), ONE));
    // An older write than the flushed one must lose after replay, too.
    ok("stale write", c.insert(b("row035"), parent("Standard1"), column(b("value"), b("stale"), 1), ONE));
    std::thread::sleep(Duration::from_millis(2100));
    node.kill9();
    node.start_again();

    let mut c = node.client_in(KS);
    assert_rows(&mut c, "row", 20, "new", "replayed overwrites");
    let keys: Vec<Vec<u8>> = (20..40).filter(|i| *i != 30).map(|i| b(&format!("row{i:03}"))).collect();
    let got = ok("multiget", c.multiget_slice(keys, parent("Standard1"), names(&["value"]), ONE));
    for (k, cols) in &got {
        assert_eq!(
            str_pairs(cols),
            vec![("value".to_string(), "old".to_string())],
            "row {}",
            String::from_utf8_lossy(k)
        );
    }
    assert!(
        ok("slice", c.get_slice(b("row030"), parent("Standard1"), all(10), ONE)).is_empty(),
        "replayed row deletion"
    );
    // Scans see the merged view too.
    let rows = ok("scan", c.get_range_slices(parent("Standard1"), all(10), key_range("", "", 1000), ONE));
    let live = rows.iter().filter(|r| !r.columns.is_empty()).count();
    assert_eq!(live, 39);
}

#[test]
fn schema_changes_survive_restarts() {
    let mut node = Node::start(Config::random());
    let mut c = node.client();
    create_keyspace(&mut c, KS, schema());
    create_keyspace(&mut c, "Doomed", vec![cf_def("Doomed", "Cf", "BytesType")]);
    ok("set_keyspace", c.set_keyspace(KS.into()));
    ok("add CF", c.system_add_column_family(cf_def(KS, "Added", "LongType")));
    ok("drop CF", c.system_drop_column_family_in(KS, "Super1"));
    let mut upd =
        ok("describe", c.describe_keyspace(KS.into())).cf_defs.into_iter().find(|d| d.name == "Standard1").expect("cf");
    upd.comment = Some("kept across restarts".into());
    ok("update CF", c.system_update_column_family(upd));
    ok("drop keyspace", c.system_drop_keyspace("Doomed".into()));
    ok("set_keyspace", c.set_keyspace(KS.into()));
    ok("insert", c.insert(b("k"), parent("Added"), column(7i64.to_be_bytes().to_vec(), b("v"), ts()), ONE));
    let version = ok("versions", c.describe_schema_versions()).into_keys().next().expect("version");
    drop(c);

    let check = |node: &Node, when: &str| {
        let mut c = node.client();
        let kss = ok("describe_keyspaces", c.describe_keyspaces());
        assert!(kss.iter().all(|k| k.name != "Doomed"), "{when}: a dropped keyspace came back");
        let d = ok("describe_keyspace", c.describe_keyspace(KS.into()));
        let mut names: Vec<&str> = d.cf_defs.iter().map(|d| d.name.as_str()).collect();
        names.sort();
        assert_eq!(names, ["Added", "Standard1"], "{when}");
        let added = d.cf_defs.iter().find(|d| d.name == "Added").expect("Added");
        assert_eq!(added.comparator_type.as_deref(), Some("org.apache.cassandra.db.marshal.LongType"), "{when}");
        let std1 = d.cf_defs.iter().find(|d| d.name == "Standard1").expect("Standard1");
        assert_eq!(std1.comment.as_deref(), Some("kept across restarts"), "{when}");
        let v = ok("versions", c.describe_schema_versions()).into_keys().next().expect("version");
        assert_eq!(v, version, "{when}: the schema version is kept");
        ok("set_keyspace", c.set_keyspace(KS.into()));
        let r = ok("slice", c.get_slice(b("k"), parent("Added"), all(10), ONE));
        assert_eq!(r.len(), 1, "{when}: data of a CF added at runtime");
    };
    node.restart();
    check(&node, "after a clean restart");
    // Schema changes made right before a crash survive too.
    let mut c = node.client_in(KS);
    ok("add CF before crash", c.system_add_column_family(cf_def(KS, "Late", "UTF8Type")));
    drop(c);
    node.kill9();
    node.start_again();
    let mut c = node.client_in(KS);
    ok("insert into CF added before the crash", c.insert(b("k"), parent("Late"), column(b("c"), b("v"), ts()), ONE));
}

/// `system_drop_column_family` works on the session keyspace.
trait DropIn {
    fn system_drop_column_family_in(&mut self, ks: &str, cf: &str) -> thrift::Result<String>;
}
impl DropIn for Client {
    fn system_drop_column_family_in(&mut self, ks: &str, cf: &str) -> thrift::Result<String> {
        self.set_keyspace(ks.to_string())?;
        self.system_drop_column_family(cf.to_string())
    }
}

/// `writers` connections, each writing rows `w<writer>-<i>` (one column, the key as value) until
/// `rows` are written or a write fails; each thread returns the keys that were acknowledged.
fn concurrent_writers(node: &Node, writers: usize, rows: usize) -> Vec<std::thread::JoinHandle<Vec<String>>> {
    (0..writers)
        .map(|w| {
            let mut c = node.client_in(KS);
            std::thread::spawn(move || {
                let mut acknowledged = Vec::new();
                for i in 0..rows {
                    let key = format!("w{w}-{i:05}");
                    let m = batch(&key, "Standard1", vec![insert_mutation(column(b("value"), b(&key), ts()))]);
                    if c.batch_mutate(m, ONE).is_err() {
                        break;
                    }
                    acknowledged.push(key);
                }
                acknowledged
            })
        })
        .collect()
}

fn assert_acknowledged_rows(c: &mut Client, acknowledged: &[String], when: &str) {
    for keys in acknowledged.chunks(500) {
        let keys: Vec<Vec<u8>> = keys.iter().map(|k| b(k)).collect();
        let got = ok("multiget_slice", c.multiget_slice(keys.clone(), parent("Standard1"), all(10), ONE));
        for k in keys {
            let name = String::from_utf8_lossy(&k).into_owned();
            let cols = got.get(&k).map(|v| str_pairs(v)).unwrap_or_default();
            assert_eq!(cols, vec![("value".to_string(), name.clone())], "{when}: acknowledged row {name} lost");
        }
    }
}

#[test]
fn sigkill_under_concurrent_load_keeps_every_acknowledged_write() {
    // Many connections writing at once: the server acknowledges a batch only after its commit-log
    // record is in a file, even when one write(2) carries the records of several connections.
    let (mut node, _) = start_durable(Config::random());
    let writers = concurrent_writers(&node, 8, 5_000);
    std::thread::sleep(Duration::from_millis(400));
    node.kill9();
    let acknowledged: Vec<String> = writers.into_iter().flat_map(|w| w.join().unwrap()).collect();
    assert!(acknowledged.len() > 100, "only {} writes before the kill", acknowledged.len());
    node.start_again();
    assert_acknowledged_rows(&mut node.client_in(KS), &acknowledged, "after SIGKILL under load");
}

#[test]
fn flushed_data_reads_back_with_the_block_cache_off_and_several_event_loops() {
    let config =
        Config::random().extra("<ThriftEventLoops>3</ThriftEventLoops>\n<BlockCacheSizeInMB>0</BlockCacheSizeInMB>");
    let (mut node, mut c) = start_durable(config);
    write_rows(&mut c, "row", 60, "flushed");
    node.restart();
    // Several connections, dealt over the three loops, read from the SSTable without a cache.
    for _ in 0..4 {
        let mut c = node.client_in(KS);
        assert_rows(&mut c, "row", 60, "flushed", "after a flush, block cache off");
    }
    assert!(node.log().contains("event_loops=3"), "the configured loop count is not in the log:\n{}", node.log());
}

#[test]
fn writers_on_several_event_loops_are_all_acknowledged() {
    // Four loops share one commit log: a loop whose records missed another loop's write must
    // still get them written and its replies sent (a lost wake-up would hang a client until
    // its socket timeout).
    let (node, _) = start_durable(Config::random().extra("<ThriftEventLoops>4</ThriftEventLoops>"));
    let mut acknowledged = Vec::new();
    for writer in concurrent_writers(&node, 8, 300) {
        let keys = writer.join().unwrap();
        assert_eq!(keys.len(), 300, "a write failed after {} rows", keys.len());
        acknowledged.extend(keys);
    }
    assert_acknowledged_rows(&mut node.client_in(KS), &acknowledged, "four event loops");
}

/// The biggest Data component of `cf` under a stopped node's data directory.
fn largest_data_file(node: &Node, cf: &str) -> std::path::PathBuf {
    let ks_dir = node.dir().join("data").join(KS);
    let mut files = Vec::new();
    for cf_dir in std::fs::read_dir(&ks_dir).unwrap().map(|e| e.unwrap().path()) {
        if !cf_dir.file_name().unwrap().to_string_lossy().starts_with(&format!("{cf}-")) {
            continue;
        }
        for f in std::fs::read_dir(&cf_dir).unwrap().map(|e| e.unwrap().path()) {
            if f.to_string_lossy().ends_with("-Data.db") {
                files.push((std::fs::metadata(&f).unwrap().len(), f));
            }
        }
    }
    files.into_iter().max().unwrap_or_else(|| panic!("no Data component of {cf} under {}", ks_dir.display())).1
}

#[test]
fn every_disk_access_mode_reads_flushed_data_and_names_a_damaged_file() {
    for mode in ["standard", "mmap_index_only", "mmap", "auto"] {
        let config = Config::random().extra(format!("<DiskAccessMode>{mode}</DiskAccessMode>"));
        let (mut node, mut c) = start_durable(config);
        let engine = match mode {
            "standard" => "Standard",
            "mmap_index_only" => "MmapIndexOnly",
            _ => "Mmap", // auto, on this 64-bit platform
        };
        assert!(node.log().contains(&format!("disk_access={engine}")), "{mode}: not in the log:\n{}", node.log());
        write_rows(&mut c, "row", 200, "flushed");
        node.restart(); // the clean stop flushes: every read below is served from the SSTable
        assert_rows(&mut node.client_in(KS), "row", 200, "flushed", &format!("{mode}: after a flush"));

        // One byte changed in the middle of the Data component, while the node is down.
        node.stop();
        let data = largest_data_file(&node, "Standard1");
        let mut bytes = std::fs::read(&data).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x5a;
        std::fs::write(&data, &bytes).unwrap();
        node.start_again();

        // Twice: a chunk that failed its check fails again, it is never trusted afterwards.
        let mut c = node.client_in(KS);
        let (mut good, mut bad) = (0, 0);
        for pass in 0..2 {
            for i in 0..200 {
                let key = format!("row{i:03}");
                match c.get_slice(b(&key), parent("Standard1"), all(10), ONE) {
                    Ok(cols) => {
                        let want =
                            vec![("name".to_string(), key.clone()), ("value".to_string(), "flushed".to_string())];
                        assert_eq!(str_pairs(&cols), want, "{mode}: pass {pass}, row {key} read wrong data");
                        good += 1;
                    }
                    Err(e) => {
                        let message = format!("{e:?}");
                        assert!(
                            message.contains(&data.display().to_string()),
                            "{mode}: {key}: error does not name {}: {message}",
                            data.display()
                        );
                        bad += 1;
                    }
                }
            }
        }
        assert!(bad >= 2 && bad % 2 == 0, "{mode}: {bad} failed reads over two passes");
        assert!(good >= 2 * 150, "{mode}: only {good} good reads of 400");
        assert!(node.is_running(), "{mode}: the node stopped");
    }
}

/// `MemtableOperationsInMillions` flushes a memtable after that many columns, as in Cassandra
/// 0.6: 0.00005 million is 50 columns, so 60 rows of two columns make at least two SSTables
/// with no operator flush. A SIGKILL after that keeps every row, from SSTables or the log.
#[test]
fn memtable_operations_threshold_flushes_by_itself() {
    let config = Config::random().extra("<MemtableOperationsInMillions>0.00005</MemtableOperationsInMillions>");
    let (mut node, mut c) = start_durable(config);
    write_rows(&mut c, "row", 60, "v1");
    let sstables = || -> u64 {
        let run = node.tool(&["--json", "cfstats", &format!("{KS}.Standard1")]).ok();
        let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
        json["keyspaces"][0]["column_families"][0]["sstable_count"].as_u64().expect("sstable_count")
    };
    let started = std::time::Instant::now();
    while sstables() < 2 {
        assert!(started.elapsed() < Duration::from_secs(20), "no flush after 120 columns with a 50-column threshold");
        std::thread::sleep(Duration::from_millis(100));
    }
    node.kill9();
    node.start_again();
    let mut c = node.client_in(KS);
    assert_rows(&mut c, "row", 60, "v1", "after flushes by column count and a SIGKILL");
}
