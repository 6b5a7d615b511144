//! A data directory that cannot be written (a full or failed disk): the node neither piles up
//! memtables until it runs out of memory nor loses a write it acknowledged. Once a column
//! family's memtable reaches twice its flush threshold with its flush failing, writes to it time
//! out (TimedOutException, as when Cassandra's writers block on a flush queue that does not
//! drain) and reads go on. When the directory is back, a flush writes everything, writes are
//! taken again, and every acknowledged write survives a crash.

use std::path::PathBuf;

use e2e::*;
use thrift_idl as t;

const KS: &str = "Disk";

/// The directory of `cf`'s SSTables under the node's data directory.
fn cf_dir(node: &Node, cf: &str) -> PathBuf {
    let ks_dir = node.dir().join("data").join(KS);
    std::fs::read_dir(&ks_dir)
        .expect("keyspace directory")
        .map(|e| e.expect("entry").path())
        .find(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&format!("{cf}-"))))
        .unwrap_or_else(|| panic!("no directory for {cf} in {}", ks_dir.display()))
}

fn insert(c: &mut Client, key: &str) -> thrift::Result<()> {
    c.insert(b(key), parent("Standard1"), column(b("c"), vec![b'v'; 100], ts()), ONE)
}

fn is_timed_out(e: &thrift::Error) -> bool {
    matches!(e, thrift::Error::User(u) if u.downcast_ref::<t::TimedOutException>().is_some())
}

#[test]
fn writes_time_out_while_memtables_cannot_be_flushed_and_none_is_lost() {
    // A flush every 1,000 columns, so the hard limit is reached within a few thousand writes.
    let config = Config::random().extra("  <MemtableOperationsInMillions>0.001</MemtableOperationsInMillions>");
    let (mut node, mut c) = Node::start_with_keyspace(config, KS, vec![cf_def(KS, "Standard1", "BytesType")]);
    let dir = cf_dir(&node, "Standard1");
    let aside = dir.with_extension("aside");
    std::fs::rename(&dir, &aside).expect("moved the column family's directory aside");

    let mut acknowledged = 0usize;
    let refused = loop {
        assert!(acknowledged < 20_000, "20,000 writes taken while no memtable could be flushed");
        match insert(&mut c, &format!("key{acknowledged}")) {
            Ok(()) => acknowledged += 1,
            Err(e) => break e,
        }
    };
    assert!(is_timed_out(&refused), "a refused write answers TimedOutException, got {refused:?}");
    assert!((2_000..=5_000).contains(&acknowledged), "{acknowledged} writes taken before the first refusal");
    assert!(node.log().contains("flush failed"), "the failed flush is logged:\n{}", node.log());
    // The connection stays usable: reads answer, more writes are refused the same way.
    let got = ok("get", c.get(b("key0"), path("Standard1", b("c")), ONE));
    assert_eq!(got.column.expect("column").value, Some(vec![b'v'; 100]));
    let again = insert(&mut c, "refused").expect_err("still refused");
    assert!(is_timed_out(&again), "{again:?}");

    std::fs::rename(&aside, &dir).expect("moved the directory back");
    node.tool(&["flush", KS, "Standard1"]).ok();
    ok("insert after the flush", insert(&mut c, "taken again"));

    drop(c);
    node.kill9();
    node.start_again();
    let mut c = node.client_in(KS);
    for i in (0..acknowledged).step_by(13).chain([acknowledged - 1]) {
        let key = format!("key{i}");
        let got = ok(&key, c.get(b(&key), path("Standard1", b("c")), ONE));
        assert_eq!(got.column.expect("column").value, Some(vec![b'v'; 100]), "{key}");
    }
    ok("get", c.get(b("taken again"), path("Standard1", b("c")), ONE));
}
