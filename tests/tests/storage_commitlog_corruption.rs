//! One byte damaged in the middle of a killed node's commit log, with acknowledged writes after
//! it: the restart fails naming the segment and the offset, and leaves the segment on disk;
//! started again with `SIBYL_COMMITLOG_IGNORE_REPLAY_ERRORS=true`, the node replays every
//! record that verifies, serves all rows but the damaged record's, and keeps the segment aside
//! as `.corrupt`.
//!
//! The robustness audit's scenario: before, the damaged record and everything after it were
//! taken for a torn tail, dropped, and the segment deleted.

use std::path::{Path, PathBuf};

use e2e::*;

const KS: &str = "Durable";
const ROWS: usize = 300;
/// The row whose commit log record is damaged.
const DAMAGED: usize = 150;
const OVERRIDE_ENV: &str = "SIBYL_COMMITLOG_IGNORE_REPLAY_ERRORS";

fn row_key(i: usize) -> Vec<u8> {
    b(&format!("cl{i:04}"))
}

fn row_value(i: usize) -> Vec<u8> {
    b(&format!("clv-{i:04}"))
}

/// The newest commit log segment of the node in `dir`.
fn newest_segment(dir: &Path) -> PathBuf {
    let mut segments: Vec<PathBuf> = std::fs::read_dir(dir.join("commitlog"))
        .expect("commit log directory")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    segments.sort();
    segments.pop().expect("a commit log segment")
}

#[test]
fn a_damaged_commit_log_stops_the_restart_and_the_override_keeps_the_rest() {
    let (mut node, mut c) = Node::start_with_keyspace(Config::random(), KS, vec![cf_def(KS, "Standard1", "UTF8Type")]);
    for i in 0..ROWS {
        ok("insert", c.insert(row_key(i), parent("Standard1"), column(b("c"), row_value(i), ts()), ONE));
    }
    drop(c);
    node.kill9(); // acknowledged, never flushed: the rows live in the commit log only

    // Damage one byte of row DAMAGED's record, in the middle of the segment's rows.
    let segment = newest_segment(node.dir());
    let mut bytes = std::fs::read(&segment).expect("read the segment");
    let key = row_key(DAMAGED);
    let at = bytes.windows(key.len()).position(|w| w == key.as_slice()).expect("the row's key is in the segment");
    bytes[at + 1] ^= 0xFF;
    std::fs::write(&segment, &bytes).expect("write the damaged segment");

    // The restart refuses, naming the file and the offset, and leaves the segment alone.
    let status = node.try_start_again(&[(OVERRIDE_ENV, "false")]).expect_err("the damaged log was replayed");
    let log = node.log();
    assert_eq!(status.code(), Some(1), "{log}");
    let name = segment.file_name().expect("file name").to_string_lossy().into_owned();
    assert!(log.contains(&name), "the error names the segment:\n{log}");
    assert!(log.contains("damaged at offset"), "the error names the offset:\n{log}");
    assert!(log.contains(OVERRIDE_ENV), "the error says how to go on anyway:\n{log}");
    assert!(!log.contains(READY_LINE), "{log}");
    assert_eq!(std::fs::read(&segment).expect("the segment is still there"), bytes, "the segment was changed");

    // With the override: every other row is back, the damaged segment is kept aside.
    node.try_start_again(&[(OVERRIDE_ENV, "true")]).unwrap_or_else(|s| panic!("exited ({s}):\n{}", node.log()));
    let mut c = node.client_in(KS);
    let keys: Vec<Vec<u8>> = (0..ROWS).map(row_key).collect();
    let got = ok("multiget_slice", c.multiget_slice(keys, parent("Standard1"), all(10), ONE));
    let missing: Vec<usize> = (0..ROWS)
        .filter(|&i| {
            let cols = got.get(&row_key(i)).map(|v| pairs(v)).unwrap_or_default();
            cols != vec![(b("c"), row_value(i))]
        })
        .collect();
    assert_eq!(missing, vec![DAMAGED], "only the damaged record's row is lost");
    let log = node.log();
    assert!(log.contains(&name) && log.contains("skipped damaged commit log records"), "{log}");
    let kept = PathBuf::from(format!("{}.corrupt", segment.display()));
    assert_eq!(std::fs::read(&kept).expect("the damaged segment is kept aside"), bytes);
    assert!(!segment.exists(), "the damaged segment is no longer replayed");
}
