//! nodetool's run-time compaction commands through the admin interface, against a real engine:
//! `disable_auto_compaction`/`enable_auto_compaction`, `get_compaction_threshold`/
//! `set_compaction_threshold` (nodetool's checks and words), `get_sstables` (text and hex keys)
//! and `stop`, whose interrupted compaction answers an `interrupted` error.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use admin_protocol::*;
use model::data::Cell;
use model::mutation::RowMutation;
use storage::engine::Storage;
use tokio::io::BufReader;

use super::state::AdminState;
use super::*;
use crate::node::Node;

fn open_node(dir: &Path, compaction_throughput_mb_per_sec: u32) -> Arc<Node> {
    super::tests::open_node_with(dir, |c| c.compaction_throughput_mb_per_sec = compaction_throughput_mb_per_sec)
}

fn write(storage: &Storage, key: &str, value: &[u8]) {
    let mut m = RowMutation::new("ks", key.as_bytes());
    m.row_mut("cf").cells.push(Cell::live(b"col".to_vec(), value.to_vec(), 1000));
    storage.apply(m).expect("write");
}

/// The final reply to one request line.
async fn call(state: &AdminState, line: &str) -> Reply {
    let input = format!("{line}\n");
    let mut reader = BufReader::new(input.as_bytes());
    let mut out = ReplyWriter::new(Vec::new());
    serve_lines(&mut reader, &mut out, state, "test").await.expect("in-memory I/O");
    let text = String::from_utf8(out.write).expect("replies are UTF-8");
    let last = text.lines().last().expect("a reply");
    Reply::decode_line(last.as_bytes()).expect("well-formed reply")
}

fn ok<T: serde::de::DeserializeOwned>(r: Reply) -> T {
    match r {
        Reply::Ok(v) => serde_json::from_value(v).expect("result decodes"),
        other => panic!("expected ok, got {other:?}"),
    }
}

fn error(r: Reply) -> ErrorReply {
    match r {
        Reply::Error(e) => e,
        other => panic!("expected an error, got {other:?}"),
    }
}

#[tokio::test]
async fn compaction_thresholds_are_read_and_set_with_nodetools_checks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let node = open_node(dir.path(), 0);
    let state = AdminState::new(node.clone());
    let get = r#"{"op":"get_compaction_threshold","keyspace":"ks","cf":"cf"}"#;
    let r: CompactionThresholdResult = ok(call(&state, get).await);
    assert_eq!((r.keyspace.as_str(), r.column_family.as_str(), r.min, r.max), ("ks", "cf", 4, 32));

    let set = |min: i32, max: i32| {
        format!(r#"{{"op":"set_compaction_threshold","keyspace":"ks","cf":"cf","min":{min},"max":{max}}}"#)
    };
    let r: CompactionThresholdResult = ok(call(&state, &set(2, 8)).await);
    assert_eq!((r.min, r.max), (2, 8));
    assert_eq!(node.storage.compaction_thresholds("ks", "cf").expect("cf"), (2, 8));
    assert_eq!(node.storage.compaction_thresholds("ks", "other").expect("cf"), (4, 32), "only the one named");
    for (min, max, message) in [
        (-1, 4, "ks.cf: Thresholds must be positive integers"),
        (5, 4, "ks.cf: Min threshold cannot be greater than max."),
        (1, 4, "ks.cf: Min threshold must be at least 2"),
        (0, 4, "ks.cf: Min threshold must be at least 2"),
        (4, 0, "ks.cf: Min threshold cannot be greater than max."),
    ] {
        let e = error(call(&state, &set(min, max)).await);
        assert_eq!((e.kind, e.message.as_str()), (ErrorKind::BadRequest, message), "{min} {max}");
    }
    let r: CompactionThresholdResult = ok(call(&state, get).await);
    assert_eq!((r.min, r.max), (2, 8), "refused values changed nothing");
    let r: CompactionThresholdResult = ok(call(&state, &set(0, 0)).await);
    assert_eq!((r.min, r.max), (0, 0));

    let e = error(call(&state, r#"{"op":"get_compaction_threshold","keyspace":"ks","cf":"nope"}"#).await);
    assert_eq!((e.kind, e.message.as_str()), (ErrorKind::UnknownColumnFamily, "column family ks.nope does not exist"));
    let e =
        error(call(&state, r#"{"op":"set_compaction_threshold","keyspace":"nope","cf":"cf","min":2,"max":4}"#).await);
    assert_eq!((e.kind, e.message.as_str()), (ErrorKind::UnknownKeyspace, "keyspace nope does not exist"));
}

#[tokio::test]
async fn auto_compaction_is_switched_per_column_family() {
    let dir = tempfile::tempdir().expect("tempdir");
    let node = open_node(dir.path(), 0);
    let state = AdminState::new(node.clone());
    let r: AutoCompactionResult = ok(call(&state, r#"{"op":"disable_auto_compaction","keyspace":"ks"}"#).await);
    assert_eq!(r.column_families, ["ks.cf", "ks.other"]);
    assert_eq!(r.changed, ["ks.cf", "ks.other"]);
    assert!(!r.enabled);
    assert!(!node.storage.auto_compaction("ks", "cf").expect("cf"));
    let again: AutoCompactionResult = ok(call(&state, r#"{"op":"disable_auto_compaction"}"#).await);
    assert!(again.column_families.len() > 2, "every column family: {again:?}");
    assert!(!again.changed.iter().any(|c| c.starts_with("ks.")), "{again:?}");

    let r: AutoCompactionResult =
        ok(call(&state, r#"{"op":"enable_auto_compaction","keyspace":"ks","cfs":["other"]}"#).await);
    assert_eq!((r.enabled, r.changed.as_slice()), (true, &["ks.other".to_string()][..]));
    assert!(node.storage.auto_compaction("ks", "other").expect("cf"));
    assert!(!node.storage.auto_compaction("ks", "cf").expect("cf"));

    // Every name is checked before anything changes.
    let e = error(call(&state, r#"{"op":"enable_auto_compaction","keyspace":"ks","cfs":["cf","nope"]}"#).await);
    assert_eq!(e.kind, ErrorKind::UnknownColumnFamily);
    assert!(!node.storage.auto_compaction("ks", "cf").expect("cf"));
    let e = error(call(&state, r#"{"op":"disable_auto_compaction","keyspace":"nope"}"#).await);
    assert_eq!(e.kind, ErrorKind::UnknownKeyspace);
}

#[tokio::test]
async fn getsstables_takes_text_or_hex_keys() {
    let dir = tempfile::tempdir().expect("tempdir");
    let node = open_node(dir.path(), 0);
    write(&node.storage, "k1", b"v");
    node.storage.flush("ks", "cf").expect("flush");
    write(&node.storage, "k2", b"v");
    node.storage.flush("ks", "cf").expect("flush");
    let files = node.storage.data_files("ks", "cf").expect("cf");
    let state = AdminState::new(node.clone());
    let get = |key: &str, hex: bool| {
        format!(r#"{{"op":"get_sstables","keyspace":"ks","cf":"cf","key":"{key}","hex_format":{hex}}}"#)
    };
    let listed = |r: Reply| ok::<GetSsTablesResult>(r).files;
    let k1 = listed(call(&state, &get("k1", false)).await);
    assert_eq!(k1.len(), 1);
    assert!(files.iter().any(|f| f.display().to_string() == k1[0]), "{k1:?} not in {files:?}");
    assert_eq!(listed(call(&state, &get("6B31", true)).await), k1, "hex digits of either case");
    assert_ne!(listed(call(&state, &get("k2", false)).await), k1);
    assert_eq!(listed(call(&state, &get("k3", false)).await), Vec::<String>::new());

    let e = error(call(&state, &get("6b3", true)).await);
    assert_eq!(
        (e.kind, e.message.as_str()),
        (ErrorKind::BadRequest, "An hex string representing bytes must have an even length")
    );
    let e = error(call(&state, &get("6bzz", true)).await);
    assert_eq!((e.kind, e.message.as_str()), (ErrorKind::BadRequest, "Non-hex characters in 6bzz"));
    let e = error(call(&state, r#"{"op":"get_sstables","keyspace":"ks","cf":"nope","key":"k1"}"#).await);
    assert_eq!(e.kind, ErrorKind::UnknownColumnFamily);
}

#[tokio::test]
async fn stop_names_unknown_types_and_interrupts_a_running_compaction() {
    let dir = tempfile::tempdir().expect("tempdir");
    // At 1 MiB/s the 8 MiB below take some 8 seconds to compact.
    let node = open_node(dir.path(), 1);
    let value = vec![b'x'; 1024];
    for f in 0..4 {
        for i in 0..2000 {
            write(&node.storage, &format!("key{f}-{i}"), &value);
        }
        node.storage.flush("ks", "cf").expect("flush");
    }
    let state = Arc::new(AdminState::new(node.clone()));

    let e = error(call(&state, r#"{"op":"stop","compaction_type":"FOO"}"#).await);
    assert_eq!(e.kind, ErrorKind::BadRequest);
    assert!(
        e.message.starts_with(r#"stop: unknown compaction type "FOO"; the types are COMPACTION, "#),
        "{}",
        e.message
    );
    let e = error(call(&state, r#"{"op":"stop","compaction_type":"INDEX_BUILD"}"#).await);
    assert_eq!(e.kind, ErrorKind::NotSupported);
    let r: StopResult = ok(call(&state, r#"{"op":"stop","compaction_type":"VALIDATION"}"#).await);
    assert_eq!((r.compaction_type.as_str(), r.stopped.len()), ("VALIDATION", 0));

    let compacting = {
        let state = state.clone();
        tokio::spawn(async move { call(&state, r#"{"op":"compact","keyspace":"ks","cfs":["cf"]}"#).await })
    };
    let started = Instant::now();
    while !node.storage.compaction_stats().0.iter().any(|c| c.bytes_done > 0) {
        assert!(started.elapsed() < Duration::from_secs(30), "no compaction listed");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let r: StopResult = ok(call(&state, r#"{"op":"stop","compaction_type":"compaction"}"#).await);
    assert_eq!(r.compaction_type, "COMPACTION");
    assert_eq!(r.stopped.len(), 1, "{r:?}");
    assert_eq!((r.stopped[0].kind.as_str(), r.stopped[0].column_family.as_str()), ("Compaction", "cf"));

    let e = error(compacting.await.expect("compact task"));
    assert_eq!(e.kind, ErrorKind::Interrupted, "{e:?}");
    assert!(e.message.starts_with("Compaction interrupted: Compaction@"), "{}", e.message);
    assert!(e.message.contains("(ks, cf, "), "{}", e.message);
    assert_eq!(node.storage.data_files("ks", "cf").expect("cf").len(), 4, "the inputs stay");
}
