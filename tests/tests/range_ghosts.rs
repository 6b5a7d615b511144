//! Issue 11, point 1: range scans return every partition present in the range, as Cassandra 3.11
//! does for Thrift ("range ghosts"): a partition whose columns the predicate does not select, or
//! whose columns were all deleted (tombstones not yet purged), comes back as a KeySlice with an
//! empty column list. The row count of get_range_slices counts those rows; get_paged_slice returns
//! them too (its count is of columns, which a ghost has none of). A ghost disappears once
//! compaction purges its tombstones.

use std::time::Duration;

use e2e::*;
use thrift_idl::{self as t, TCassandraSyncClient};

const KS: &str = "Ghosts";

/// ByteOrderedPartitioner, so scans come back in key order; `Standard1` purges tombstones at once
/// (gc_grace_seconds 0) so the test can watch a ghost go.
fn setup() -> (Node, Client) {
    let mut cf = cf_def(KS, "Standard1", "UTF8Type");
    cf.gc_grace_seconds = Some(0);
    Node::start_with_keyspace(Config::ordered(), KS, vec![cf])
}

fn insert(c: &mut Client, key: &str, name: &str, value: &str) {
    ok("insert", c.insert(b(key), parent("Standard1"), column(b(name), b(value), ts()), ONE));
}

/// (key, column names) of each KeySlice.
fn shape(rows: &[t::KeySlice]) -> Vec<(String, Vec<String>)> {
    rows.iter().map(|r| (String::from_utf8_lossy(&r.key).into_owned(), col_names(&r.columns))).collect()
}

fn s(key: &str, columns: &[&str]) -> (String, Vec<String>) {
    (key.to_string(), columns.iter().map(|c| c.to_string()).collect())
}

fn scan(c: &mut Client, predicate: t::SlicePredicate, count: i32) -> Vec<(String, Vec<String>)> {
    shape(&ok("get_range_slices", c.get_range_slices(parent("Standard1"), predicate, key_range("", "", count), ONE)))
}

fn paged(c: &mut Client, start: &str, start_column: &str, count: i32) -> Vec<(String, Vec<String>)> {
    let range = key_range(start, "", count);
    shape(&ok("get_paged_slice", c.get_paged_slice("Standard1".into(), range, b(start_column), ONE)))
}

#[test]
fn a_names_predicate_matching_one_row_still_returns_every_row() {
    let (_node, mut c) = setup();
    insert(&mut c, "a", "x", "1");
    insert(&mut c, "b", "y", "2");
    insert(&mut c, "c", "x", "3");
    insert(&mut c, "c", "z", "4");
    // Only b has a column named y: a and c come back with nothing selected.
    assert_eq!(scan(&mut c, names(&["y"]), 100), vec![s("a", &[]), s("b", &["y"]), s("c", &[])]);
    // A slice that selects nothing anywhere: still three rows.
    assert_eq!(scan(&mut c, slice(b("q"), b("r"), false, 10), 100), vec![s("a", &[]), s("b", &[]), s("c", &[])]);
    // The row count counts the rows the predicate selected nothing from.
    assert_eq!(scan(&mut c, names(&["y"]), 1), vec![s("a", &[])]);
    assert_eq!(scan(&mut c, names(&["y"]), 2), vec![s("a", &[]), s("b", &["y"])]);
    // A slice with a column count keeps every row, each cut to the count.
    assert_eq!(scan(&mut c, all(1), 100), vec![s("a", &["x"]), s("b", &["y"]), s("c", &["x"])]);
}

#[test]
fn a_row_whose_columns_were_removed_stays_a_ghost_until_purged() {
    let (node, mut c) = setup();
    insert(&mut c, "a", "x", "1");
    insert(&mut c, "b", "x", "2");
    insert(&mut c, "b", "y", "3");
    insert(&mut c, "c", "x", "4");
    insert(&mut c, "d", "x", "5");
    // b loses each of its columns, d its whole row.
    for name in ["x", "y"] {
        ok("remove column", c.remove(b("b"), path("Standard1", b(name)), ts(), ONE));
    }
    ok("remove row", c.remove(b("d"), row_path("Standard1"), ts(), ONE));
    let ghosts = vec![s("a", &["x"]), s("b", &[]), s("c", &["x"]), s("d", &[])];
    assert_eq!(scan(&mut c, all(100), 100), ghosts, "deleted rows are listed without columns");
    // The count counts ghosts: two rows are a and the ghost b.
    assert_eq!(scan(&mut c, all(100), 2), vec![s("a", &["x"]), s("b", &[])]);
    // Point reads see nothing there, as always.
    assert!(ok("get_slice", c.get_slice(b("b"), parent("Standard1"), all(10), ONE)).is_empty());
    // Flushed to an SSTable, the tombstones are still there: so are the ghosts.
    node.tool(&["flush", KS]).ok();
    assert_eq!(scan(&mut c, all(100), 100), ghosts, "ghosts survive a flush");

    // gc_grace_seconds is 0: once a second has passed, a major compaction purges the tombstones
    // and the ghosts go.
    std::thread::sleep(Duration::from_millis(1100));
    node.tool(&["compact", KS]).ok();
    assert_eq!(scan(&mut c, all(100), 100), vec![s("a", &["x"]), s("c", &["x"])], "purged rows are gone");
}

#[test]
fn get_paged_slice_returns_ghosts_and_counts_columns() {
    let (_node, mut c) = setup();
    insert(&mut c, "a", "x", "1");
    insert(&mut c, "a", "y", "2");
    insert(&mut c, "b", "x", "3");
    insert(&mut c, "c", "x", "4");
    insert(&mut c, "c", "y", "5");
    insert(&mut c, "c", "z", "6");
    ok("remove b", c.remove(b("b"), row_path("Standard1"), ts(), ONE));
    // b is a ghost: returned with no columns, using none of the column count.
    assert_eq!(paged(&mut c, "", "", 100), vec![s("a", &["x", "y"]), s("b", &[]), s("c", &["x", "y", "z"])]);
    // Three columns: a's two, the ghost b, one of c's.
    assert_eq!(paged(&mut c, "", "", 3), vec![s("a", &["x", "y"]), s("b", &[]), s("c", &["x"])]);
    // Resuming inside a (from column y), as a paging client does.
    assert_eq!(paged(&mut c, "a", "y", 2), vec![s("a", &["y"]), s("b", &[]), s("c", &["x"])]);
}
