//! The conformance suite's tests that use Thrift and a CQL session on the native port against
//! the same tables (Cassandra's dtest `thrift_test.py`, `TestMutations`), in our words: a
//! super column family written through Thrift reads from CQL as 3.11 shows it (key, column1,
//! column2, value), and CQL's writes to it read back through Thrift; a range deletion through
//! Thrift removes a CQL partition's rows and its static value; a COMPACT STORAGE table made by
//! CQL takes Thrift inserts and gets; a Thrift range tombstone with end-of-component 0 ends
//! where Cassandra ends it.
//!
//! Each test starts its own node (ByteOrderedPartitioner, as the suite runs) with keyspace
//! Keyspace1 made over Thrift.

use e2e::native::{rows, NativeClient};
use e2e::*;
use thrift_idl as t;

const KS: &str = "Keyspace1";

fn node_with_keyspace() -> (Node, Client, NativeClient) {
    let (node, thrift) = Node::start_with_keyspace(Config::ordered(), KS, vec![]);
    let mut cql = NativeClient::ready(node.native_addr(), 4, None);
    cql.query_ok("USE \"Keyspace1\"", 3);
    (node, thrift, cql)
}

/// The rows of a SELECT, each value as bytes.
fn select(cql: &mut NativeClient, q: &str) -> Vec<Vec<Option<Vec<u8>>>> {
    rows(&cql.query(q)).rows
}

fn text(s: &str) -> Option<Vec<u8>> {
    Some(s.as_bytes().to_vec())
}

fn int(i: i32) -> Option<Vec<u8>> {
    Some(i.to_be_bytes().to_vec())
}

/// A one- or two-component CompositeType name, each component followed by `eoc`.
fn composite(parts: &[&str], eoc: u8) -> Vec<u8> {
    let mut out = Vec::new();
    for p in parts {
        out.extend((p.len() as u16).to_be_bytes());
        out.extend(p.as_bytes());
        out.push(eoc);
    }
    out
}

fn with_super1() -> (Node, Client, NativeClient) {
    let (node, mut thrift, cql) = node_with_keyspace();
    ok("add Super1", thrift.system_add_column_family(super_cf_def(KS, "Super1", "BytesType", "LongType")));
    (node, thrift, cql)
}

fn long(i: i64) -> Vec<u8> {
    i.to_be_bytes().to_vec()
}

/// The subcolumns `_insert_super` writes: (super column, subcolumn, value).
const SUPER_CELLS: [(&str, i64, &str); 3] = [("sc1", 4, "value4"), ("sc2", 5, "value5"), ("sc2", 6, "value6")];

fn super_row(key: &str, sc: &str, sub: i64, value: &str) -> Vec<Option<Vec<u8>>> {
    vec![text(key), text(sc), Some(long(sub)), text(value)]
}

#[test]
fn a_super_column_family_written_through_thrift_reads_from_cql() {
    let (_node, mut thrift, mut cql) = with_super1();
    for key in ["key1", "key2"] {
        for (sc, sub, value) in SUPER_CELLS {
            ok("insert", thrift.insert(b(key), super_parent("Super1", b(sc)), column(long(sub), b(value), 0), ONE));
        }
    }
    let rows_of = |key: &str| SUPER_CELLS.iter().map(|(sc, sub, v)| super_row(key, sc, *sub, v)).collect::<Vec<_>>();
    let mut all = rows_of("key1");
    all.extend(rows_of("key2"));
    assert_eq!(select(&mut cql, "SELECT * FROM \"Super1\""), all);
    assert_eq!(select(&mut cql, "SELECT * FROM \"Super1\" WHERE key=textAsBlob('key1')"), rows_of("key1"));
    let sc2 = &rows_of("key1")[1..];
    let in_sc2 = "SELECT * FROM \"Super1\" WHERE key = textAsBlob('key1') AND column1 = textAsBlob('sc2')";
    assert_eq!(select(&mut cql, in_sc2), sc2);
    assert_eq!(select(&mut cql, &format!("{in_sc2} AND column2 = 5")), &sc2[..1]);
    assert_eq!(select(&mut cql, &format!("{in_sc2} AND column2 > 5")), &sc2[1..], "an exclusive bound");
    let values = "SELECT column2, value FROM \"Super1\" WHERE key = textAsBlob('key1') AND column1 = textAsBlob('sc2')";
    assert_eq!(select(&mut cql, values), [vec![Some(long(5)), text("value5")], vec![Some(long(6)), text("value6")]]);
}

#[test]
fn cql_writes_to_a_super_column_family_read_through_thrift() {
    let (_node, mut thrift, mut cql) = with_super1();
    for key in ["key1", "key2"] {
        for (sc, sub, value) in SUPER_CELLS {
            cql.query_ok(
                &format!(
                    "INSERT INTO \"Super1\" (key, column1, column2, value) VALUES \
                     (textAsBlob('{key}'), textAsBlob('{sc}'), {sub}, textAsBlob('{value}')) USING TIMESTAMP 1234"
                ),
                1,
            );
        }
    }
    let got = ok("get_slice", thrift.get_slice(b("key1"), parent("Super1"), slice("sc1", "sc2", false, 2), ONE));
    let supers: Vec<t::SuperColumn> = got.into_iter().map(|c| c.super_column.expect("a super column")).collect();
    let want = vec![
        t::SuperColumn::new(b("sc1"), vec![column(long(4), b("value4"), 1234)]),
        t::SuperColumn::new(b("sc2"), vec![column(long(5), b("value5"), 1234), column(long(6), b("value6"), 1234)]),
    ];
    assert_eq!(supers, want);
    // A CQL delete of one super column's subcolumns.
    cql.query_ok("DELETE FROM \"Super1\" WHERE key = textAsBlob('key2') AND column1 = textAsBlob('sc2')", 1);
    let left = ok("get_slice", thrift.get_slice(b("key2"), parent("Super1"), all(10), ONE));
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].super_column.as_ref().map(|s| s.name.clone()), Some(b("sc1")));
}

#[test]
fn a_thrift_range_deletion_removes_cql_rows_and_the_static_value() {
    let (_node, mut thrift, mut cql) = node_with_keyspace();
    cql.query_ok("CREATE TABLE t (k text, s text static, t text, v text, PRIMARY KEY (k, t))", 5);
    cql.query_ok("INSERT INTO t (k, s, t, v) VALUES ('k', 's', 't', 'v') USING TIMESTAMP 0", 1);
    assert_eq!(select(&mut cql, "SELECT * FROM t"), [vec![text("k"), text("t"), text("s"), text("v")]]);
    let whole_row = slice("", "", false, 1000);
    ok("batch_mutate", thrift.batch_mutate(batch("k", "t", vec![delete_mutation(1, None, Some(whole_row))]), ONE));
    assert_eq!(select(&mut cql, "SELECT * FROM t"), Vec::<Vec<Option<Vec<u8>>>>::new());
}

#[test]
fn a_compact_table_made_by_cql_takes_thrift_inserts_and_gets() {
    let (_node, mut thrift, mut cql) = node_with_keyspace();
    cql.query_ok("CREATE TABLE IF NOT EXISTS cs1 (k int PRIMARY KEY,v int) WITH COMPACT STORAGE", 5);
    let key = 1i32.to_be_bytes().to_vec();
    ok("insert", thrift.insert(key.clone(), parent("cs1"), column(b("v"), 1i32.to_be_bytes().to_vec(), 0), ONE));
    let got = ok("get", thrift.get(key, path("cs1", b("v")), ONE));
    assert_eq!(got.column, Some(column(b("v"), 1i32.to_be_bytes().to_vec(), 0)));
    assert_eq!(select(&mut cql, "SELECT k, v FROM cs1"), [vec![int(1), int(1)]]);
}

#[test]
fn a_range_tombstone_ending_at_eoc_0_spares_longer_names() {
    let (node, mut thrift, mut cql) = node_with_keyspace();
    cql.query_ok(
        "CREATE TABLE test (id INT, c1 TEXT, c2 TEXT, v INT, PRIMARY KEY (id, c1, c2)) \
         with compact storage and compression = {'sstable_compression': ''}",
        5,
    );
    // Deletes ('a') to ('asd'), both with end-of-component 0: the finish bound is the prefix
    // ('asd') itself, so it covers no name that has a second component after 'asd'.
    let range = slice(composite(&["a"], 0), composite(&["asd"], 0), false, 100);
    let mut mutations = std::collections::BTreeMap::new();
    mutations.insert(
        1i32.to_be_bytes().to_vec(),
        [("test".to_string(), vec![delete_mutation(2470761440040513, None, Some(range))])].into(),
    );
    ok("batch_mutate", thrift.batch_mutate(mutations, ONE));
    cql.query_ok("INSERT INTO test (id, c1, c2, v) VALUES (1, 'asd', '', 0) USING TIMESTAMP 1470761451368658", 1);
    cql.query_ok("INSERT INTO test (id, c1, c2, v) VALUES (1, 'asd', 'asd', 0) USING TIMESTAMP 1470761449416613", 1);
    let want = [vec![int(1), text("asd"), text(""), int(0)], vec![int(1), text("asd"), text("asd"), int(0)]];
    assert_eq!(select(&mut cql, "SELECT * FROM test"), want);
    node.tool(&["flush", KS, "test"]).ok();
    assert_eq!(select(&mut cql, "SELECT * FROM test"), want, "the same once flushed");
}

#[test]
fn thrift_range_deletions_on_a_composite_table_read_alike_from_cql() {
    // The suite's Thrift-only test_range_deletion_eoc_0, read back through both APIs: a Thrift
    // column family with a composite comparator reads from CQL as one clustering column per
    // component (column1, column2), as 3.11 shows it.
    let (_node, mut thrift, mut cql) = node_with_keyspace();
    let cf = cf_def(KS, "StandardComposite", "CompositeType(AsciiType, AsciiType)");
    ok("add cf", thrift.system_add_column_family(cf));
    let insert = |thrift: &mut Client, name: Vec<u8>| {
        ok("insert", thrift.insert(b("key"), parent("StandardComposite"), column(name, b("value"), 1), ONE));
    };
    for i in 0..10 {
        insert(&mut thrift, composite(&[&i.to_string(), &i.to_string()], 0));
    }
    insert(&mut thrift, composite(&["6"], 0));
    let delete = |thrift: &mut Client, finish: &[&str], timestamp: i64| {
        let range = slice(composite(&["3"], 0xff), composite(finish, 0), false, 100);
        let mutations = vec![delete_mutation(timestamp, None, Some(range))];
        ok("range delete", thrift.batch_mutate(batch("key", "StandardComposite", mutations), ONE));
    };
    let names_through_both = |thrift: &mut Client, cql: &mut NativeClient| {
        let cells = ok("get_slice", thrift.get_slice(b("key"), parent("StandardComposite"), all(100), ONE));
        let from_thrift: Vec<Vec<u8>> = cells.into_iter().map(|c| c.column.expect("a column").name).collect();
        let q = "SELECT column1, column2 FROM \"StandardComposite\" WHERE key = 0x6b6579";
        let from_cql: Vec<Vec<u8>> = select(cql, q)
            .into_iter()
            .map(|r| {
                let parts: Vec<String> =
                    r.into_iter().flatten().map(|v| String::from_utf8(v).expect("ascii")).collect();
                let parts: Vec<&str> = parts.iter().map(String::as_str).filter(|p| !p.is_empty()).collect();
                composite(&parts, 0)
            })
            .collect();
        assert_eq!(from_cql, from_thrift, "CQL and Thrift see the same cells");
        from_thrift
    };
    let pairs = |ids: &[u8]| ids.iter().map(|i| composite(&[&i.to_string(), &i.to_string()], 0)).collect::<Vec<_>>();
    // ('3' with end-of-component 0xff) starts at the first name with prefix '3', as Cassandra
    // reads it; the one-component ('6') sorts before ('6', '\x01') and goes too.
    delete(&mut thrift, &["6", "\u{1}"], 2);
    assert_eq!(names_through_both(&mut thrift, &mut cql), pairs(&[0, 1, 2, 6, 7, 8, 9]));
    delete(&mut thrift, &["6", "6"], 3);
    assert_eq!(names_through_both(&mut thrift, &mut cql), pairs(&[0, 1, 2, 7, 8, 9]));
}
