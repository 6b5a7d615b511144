//! Every Thrift method of API 20.1.0 that Sibyl implements, against a real node: results are
//! compared with what Cassandra answers for the same calls.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use e2e::*;
use thrift_idl as t;

const KS: &str = "Methods";

fn long(n: i64) -> Vec<u8> {
    n.to_be_bytes().to_vec()
}

/// Standard1 (UTF8Type), Long1 (LongType comparator), Super1 (UTF8Type / UTF8Type).
fn schema() -> Vec<t::CfDef> {
    vec![
        cf_def(KS, "Standard1", "UTF8Type"),
        cf_def(KS, "Long1", "LongType"),
        super_cf_def(KS, "Super1", "UTF8Type", "UTF8Type"),
    ]
}

fn setup(config: Config) -> (Node, Client) {
    Node::start_with_keyspace(config, KS, schema())
}

fn insert(c: &mut Client, key: &str, cf: &str, name: impl Into<Vec<u8>>, value: &str) {
    ok("insert", c.insert(b(key), parent(cf), column(name, b(value), ts()), ONE));
}

#[test]
fn login_insert_get_and_slices() {
    let node = Node::start(Config::random());
    let mut c = node.client();
    // AllowAllAuthenticator: any credentials log in, and login is not required.
    ok("login", c.login(t::AuthenticationRequest::new(BTreeMap::new())));
    let mut creds = BTreeMap::new();
    creds.insert("username".to_string(), "anyone".to_string());
    creds.insert("password".to_string(), "whatever".to_string());
    ok("login with credentials", c.login(t::AuthenticationRequest::new(creds)));
    create_keyspace(&mut c, KS, schema());
    ok("set_keyspace", c.set_keyspace(KS.into()));

    // insert / get
    for (n, v) in [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4"), ("e", "5")] {
        insert(&mut c, "k1", "Standard1", b(n), v);
    }
    let got = ok("get", c.get(b("k1"), path("Standard1", b("c")), ONE));
    let col = got.column.expect("get returns a column");
    assert_eq!((col.name, col.value), (b("c"), Some(b("3"))));
    assert!(col.timestamp.is_some());
    expect_not_found("get of a missing column", c.get(b("k1"), path("Standard1", b("zz")), ONE));
    expect_not_found("get of a missing row", c.get(b("nokey"), path("Standard1", b("a")), ONE));

    // A later timestamp overwrites, an earlier one does not.
    let t1 = ts();
    ok("insert", c.insert(b("k1"), parent("Standard1"), column(b("a"), b("new"), t1), ONE));
    ok("insert", c.insert(b("k1"), parent("Standard1"), column(b("a"), b("old"), t1 - 1000), ONE));
    let got = ok("get", c.get(b("k1"), path("Standard1", b("a")), ONE)).column.expect("column");
    assert_eq!(got.value, Some(b("new")), "the newer timestamp wins");
    assert_eq!(got.timestamp, Some(t1));

    // get_slice by names (result in comparator order, missing names skipped)
    let r = ok("get_slice names", c.get_slice(b("k1"), parent("Standard1"), names(&["d", "b", "zz"]), ONE));
    assert_eq!(str_pairs(&r), vec![("b".into(), "2".into()), ("d".into(), "4".into())]);
    // ranges, inclusive at both ends
    let r = ok("get_slice range", c.get_slice(b("k1"), parent("Standard1"), slice(b("b"), b("d"), false, 100), ONE));
    assert_eq!(col_names(&r), ["b", "c", "d"]);
    let r = ok("get_slice open", c.get_slice(b("k1"), parent("Standard1"), all(100), ONE));
    assert_eq!(col_names(&r), ["a", "b", "c", "d", "e"]);
    // reversed: start is the high end
    let r = ok("get_slice reversed", c.get_slice(b("k1"), parent("Standard1"), slice(b("d"), b("b"), true, 100), ONE));
    assert_eq!(col_names(&r), ["d", "c", "b"]);
    let r =
        ok("get_slice reversed open", c.get_slice(b("k1"), parent("Standard1"), slice(vec![], vec![], true, 2), ONE));
    assert_eq!(col_names(&r), ["e", "d"]);
    // count
    let r = ok("get_slice count", c.get_slice(b("k1"), parent("Standard1"), slice(b("b"), vec![], false, 2), ONE));
    assert_eq!(col_names(&r), ["b", "c"]);
    let r = ok("get_slice count 0", c.get_slice(b("k1"), parent("Standard1"), all(0), ONE));
    assert!(r.is_empty());
    let r = ok("get_slice missing row", c.get_slice(b("nokey"), parent("Standard1"), all(10), ONE));
    assert!(r.is_empty());

    // get_count
    assert_eq!(ok("get_count", c.get_count(b("k1"), parent("Standard1"), all(100), ONE)), 5);
    assert_eq!(
        ok("get_count range", c.get_count(b("k1"), parent("Standard1"), slice(b("b"), b("c"), false, 100), ONE)),
        2
    );
    assert_eq!(ok("get_count missing", c.get_count(b("nokey"), parent("Standard1"), all(100), ONE)), 0);
    assert_eq!(
        ok("get_count limited", c.get_count(b("k1"), parent("Standard1"), all(2), ONE)),
        2,
        "get_count honours the count"
    );

    // multiget_slice / multiget_count
    insert(&mut c, "k2", "Standard1", b("x"), "9");
    let r = ok(
        "multiget_slice",
        c.multiget_slice(vec![b("k1"), b("k2"), b("k3")], parent("Standard1"), slice(vec![], vec![], false, 2), ONE),
    );
    assert_eq!(r.len(), 3, "every asked key is in the answer: {r:?}");
    assert_eq!(col_names(&r[&b("k1")]), ["a", "b"]);
    assert_eq!(str_pairs(&r[&b("k2")]), vec![("x".to_string(), "9".to_string())]);
    assert!(r[&b("k3")].is_empty());
    let r = ok("multiget_count", c.multiget_count(vec![b("k1"), b("k2"), b("k3")], parent("Standard1"), all(100), ONE));
    assert_eq!(r.get(&b("k1")), Some(&5));
    assert_eq!(r.get(&b("k2")), Some(&1));
    assert_eq!(r.get(&b("k3")).copied().unwrap_or(0), 0);

    // LongType comparator sorts numerically (signed), not bytewise.
    for n in [5i64, -3, 1000, 0, -70000] {
        ok("insert long", c.insert(b("k1"), parent("Long1"), column(long(n), b("v"), ts()), ONE));
    }
    let r = ok("get_slice long", c.get_slice(b("k1"), parent("Long1"), all(100), ONE));
    let got: Vec<i64> =
        pairs(&r).iter().map(|(n, _)| i64::from_be_bytes(n.as_slice().try_into().expect("8-byte name"))).collect();
    assert_eq!(got, [-70000, -3, 0, 5, 1000]);
    let r =
        ok("get_slice long range", c.get_slice(b("k1"), parent("Long1"), slice(long(-3), long(5), false, 100), ONE));
    assert_eq!(r.len(), 3);
}

#[test]
fn range_scans_over_byte_ordered_partitioner() {
    let (_node, mut c) = setup(Config::ordered());
    assert_eq!(ok("describe_partitioner", c.describe_partitioner()), BYTE_ORDERED_PARTITIONER);
    let keys = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
    for k in keys {
        for col in ["c1", "c2", "c3"] {
            insert(&mut c, k, "Standard1", b(col), &format!("{k}-{col}"));
        }
    }
    let p = parent("Standard1");
    // Key ranges: both ends inclusive, rows in key order.
    let r = ok("key range", c.get_range_slices(p.clone(), all(100), key_range("c", "f", 100), ONE));
    assert_eq!(slice_keys(&r), ["c", "d", "e", "f"]);
    assert_eq!(col_names(&r[0].columns), ["c1", "c2", "c3"]);
    let r = ok("key range with count", c.get_range_slices(p.clone(), all(100), key_range("c", "", 2), ONE));
    assert_eq!(slice_keys(&r), ["c", "d"]);
    let r = ok("whole ring by keys", c.get_range_slices(p.clone(), all(100), key_range("", "", 100), ONE));
    assert_eq!(slice_keys(&r), keys);
    // The predicate applies to every row.
    let r = ok("key range names", c.get_range_slices(p.clone(), names(&["c2"]), key_range("a", "b", 100), ONE));
    assert_eq!(r.len(), 2);
    assert_eq!(str_pairs(&r[1].columns), vec![("c2".to_string(), "b-c2".to_string())]);

    // Token ranges are (start, end]: the start token's own key is excluded.
    let r = ok(
        "token range",
        c.get_range_slices(p.clone(), all(1), token_range(&hex_token(b"c"), &hex_token(b"f"), 100), ONE),
    );
    assert_eq!(slice_keys(&r), ["d", "e", "f"]);
    // A wrapping range goes past the end of the ring and on from its start.
    let r = ok(
        "wrapping token range",
        c.get_range_slices(p.clone(), all(1), token_range(&hex_token(b"h"), &hex_token(b"b"), 100), ONE),
    );
    assert_eq!(slice_keys(&r), ["i", "j", "a", "b"]);
    // The minimum token ("" for this partitioner) at both ends is the whole ring.
    let r = ok("full ring tokens", c.get_range_slices(p.clone(), all(1), token_range("", "", 100), ONE));
    assert_eq!(slice_keys(&r), keys);
    // start key + end token
    let r = ok(
        "start key + end token",
        c.get_range_slices(
            p.clone(),
            all(1),
            t::KeyRange::new(Some(b("b")), None, None, Some(hex_token(b"d")), 100, None),
            ONE,
        ),
    );
    assert_eq!(slice_keys(&r), ["b", "c", "d"]);

    // get_paged_slice: `count` counts columns across rows; start_column applies to the first row.
    let r = ok("get_paged_slice", c.get_paged_slice("Standard1".into(), key_range("b", "", 5), b("c2"), ONE));
    let got: Vec<(String, Vec<String>)> =
        r.iter().map(|ks| (String::from_utf8_lossy(&ks.key).into_owned(), col_names(&ks.columns))).collect();
    assert_eq!(
        got,
        vec![
            ("b".to_string(), vec!["c2".to_string(), "c3".to_string()]),
            ("c".to_string(), vec!["c1".into(), "c2".into(), "c3".into()])
        ]
    );
    let r = ok(
        "get_paged_slice tokens",
        c.get_paged_slice("Standard1".into(), token_range(&hex_token(b"h"), "", 100), vec![], ONE),
    );
    assert_eq!(slice_keys(&r), ["i", "j"]);
}

#[test]
fn range_scans_over_random_partitioner() {
    let (_node, mut c) = setup(Config::random());
    assert_eq!(ok("describe_partitioner", c.describe_partitioner()), RANDOM_PARTITIONER);
    let keys: BTreeSet<String> = (0..25).map(|i| format!("key{i:02}")).collect();
    for k in &keys {
        insert(&mut c, k, "Standard1", b("col"), k);
    }
    let p = parent("Standard1");
    // start_token == end_token is the full ring.
    let token = "85070591730234615865843651147715396314";
    let r = ok("full ring", c.get_range_slices(p.clone(), all(10), token_range(token, token, 1000), ONE));
    assert_eq!(r.len(), keys.len(), "the full ring returns every row once: {:?}", slice_keys(&r));
    assert_eq!(slice_keys(&r).into_iter().collect::<BTreeSet<_>>(), keys);
    for row in &r {
        assert_eq!(str_pairs(&row.columns), vec![("col".to_string(), String::from_utf8_lossy(&row.key).into_owned())]);
    }
    // The minimum token (-1) at both ends is the whole ring too; every form of "everything"
    // returns the rows in the same (token) order.
    let by_min = ok("min tokens", c.get_range_slices(p.clone(), all(10), token_range("-1", "-1", 1000), ONE));
    let by_keys = slice_keys(&ok("empty keys", c.get_range_slices(p.clone(), all(10), key_range("", "", 1000), ONE)));
    assert_eq!(by_keys.len(), keys.len());
    assert_eq!(slice_keys(&by_min), by_keys);
    let by_zero = ok("0 to 0", c.get_range_slices(p.clone(), all(10), token_range("0", "0", 1000), ONE));
    assert_eq!(slice_keys(&by_zero), by_keys);

    // Paging the way Cassandra clients do: the next page starts at the last key seen (inclusive).
    let mut seen = Vec::new();
    let mut start = String::new();
    for _page in 0..50 {
        let r = ok("page", c.get_range_slices(p.clone(), all(10), key_range(&start, "", 7), ONE));
        let mut page = slice_keys(&r);
        if !start.is_empty() {
            assert_eq!(page.first(), Some(&start), "a page starts at its start key");
            page.remove(0);
        }
        if page.is_empty() {
            break;
        }
        start = page.last().cloned().unwrap_or_default();
        seen.extend(page);
    }
    assert_eq!(seen, by_keys, "paging visits every row once, in token order");
    assert_eq!(seen.iter().cloned().collect::<BTreeSet<_>>(), keys);
    // A token range that is a strict part of the ring returns a strict, non-empty subset
    // (25 MD5 tokens, split at 2**126: both halves are non-empty with overwhelming odds).
    let half = ok("half ring", c.get_range_slices(p.clone(), all(10), token_range("0", token, 1000), ONE));
    let other = ok("other half", c.get_range_slices(p, all(10), token_range(token, "0", 1000), ONE));
    assert_eq!(half.len() + other.len(), keys.len(), "two halves of the ring cover it exactly");
}

#[test]
fn get_multi_slice() {
    let (_node, mut c) = setup(Config::random());
    for n in ["a", "b", "c", "d", "e", "f", "g"] {
        insert(&mut c, "row", "Standard1", b(n), n);
    }
    let req = |slices: Vec<(&str, &str)>, reversed: bool, count: i32| {
        t::MultiSliceRequest::new(
            Some(b("row")),
            Some(parent("Standard1")),
            Some(slices.into_iter().map(|(s, f)| t::ColumnSlice::new(Some(b(s)), Some(b(f)))).collect::<Vec<_>>()),
            Some(reversed),
            Some(count),
            Some(ONE),
        )
    };
    let r = ok("get_multi_slice", c.get_multi_slice(req(vec![("a", "b"), ("d", "e")], false, 100)));
    assert_eq!(col_names(&r), ["a", "b", "d", "e"]);
    let r = ok("get_multi_slice reversed", c.get_multi_slice(req(vec![("g", "f"), ("c", "b")], true, 100)));
    assert_eq!(col_names(&r), ["g", "f", "c", "b"]);
    let r = ok("get_multi_slice count", c.get_multi_slice(req(vec![("a", "b"), ("d", "g")], false, 3)));
    assert_eq!(col_names(&r), ["a", "b", "d"]);
}

#[test]
fn removes_batches_and_truncate() {
    let (_node, mut c) = setup(Config::random());
    for n in ["a", "b", "c", "d", "e"] {
        insert(&mut c, "r1", "Standard1", b(n), n);
        insert(&mut c, "r2", "Standard1", b(n), n);
    }
    // remove one column
    ok("remove column", c.remove(b("r1"), path("Standard1", b("b")), ts(), ONE));
    expect_not_found("removed column", c.get(b("r1"), path("Standard1", b("b")), ONE));
    assert_eq!(col_names(&ok("slice", c.get_slice(b("r1"), parent("Standard1"), all(100), ONE))), ["a", "c", "d", "e"]);
    // A remove with an older timestamp than the data does not delete it.
    ok("remove old", c.remove(b("r1"), path("Standard1", b("a")), 1, ONE));
    assert!(c.get(b("r1"), path("Standard1", b("a")), ONE).is_ok(), "an older tombstone loses to newer data");
    // remove a whole row; writes after the deletion are visible again
    ok("remove row", c.remove(b("r2"), row_path("Standard1"), ts(), ONE));
    assert!(ok("slice", c.get_slice(b("r2"), parent("Standard1"), all(100), ONE)).is_empty());
    insert(&mut c, "r2", "Standard1", b("z"), "after");
    assert_eq!(col_names(&ok("slice", c.get_slice(b("r2"), parent("Standard1"), all(100), ONE))), ["z"]);

    // batch_mutate: inserts in two rows and two CFs, plus deletions by names and by slice range.
    let mut m = batch(
        "r3",
        "Standard1",
        ["a", "b", "c", "d", "e", "f"].iter().map(|n| insert_mutation(column(b(n), b(n), ts()))).collect(),
    );
    m.get_mut(&b("r3")).expect("row").insert("Long1".into(), vec![insert_mutation(column(long(7), b("seven"), ts()))]);
    m.extend(batch("r4", "Standard1", vec![insert_mutation(column(b("only"), b("1"), ts()))]));
    ok("batch_mutate inserts", c.batch_mutate(m, ONE));
    assert_eq!(ok("count", c.get_count(b("r3"), parent("Standard1"), all(100), ONE)), 6);
    assert_eq!(ok("count", c.get_count(b("r3"), parent("Long1"), all(100), ONE)), 1);
    assert_eq!(ok("count", c.get_count(b("r4"), parent("Standard1"), all(100), ONE)), 1);
    let t_del = ts();
    let m = batch(
        "r3",
        "Standard1",
        vec![
            delete_mutation(t_del, None, Some(names(&["a", "c"]))),
            delete_mutation(t_del, None, Some(slice(b("d"), b("e"), false, 100))),
        ],
    );
    ok("batch_mutate deletions", c.batch_mutate(m, ONE));
    assert_eq!(col_names(&ok("slice", c.get_slice(b("r3"), parent("Standard1"), all(100), ONE))), ["b", "f"]);
    // A Deletion without predicate deletes the row in that CF only.
    ok("batch row deletion", c.batch_mutate(batch("r3", "Long1", vec![delete_mutation(ts(), None, None)]), ONE));
    assert_eq!(ok("count", c.get_count(b("r3"), parent("Long1"), all(100), ONE)), 0);
    assert_eq!(ok("count", c.get_count(b("r3"), parent("Standard1"), all(100), ONE)), 2);

    // atomic_batch_mutate
    let m = batch(
        "r5",
        "Standard1",
        vec![insert_mutation(column(b("x"), b("1"), ts())), insert_mutation(column(b("y"), b("2"), ts()))],
    );
    ok("atomic_batch_mutate", c.atomic_batch_mutate(m, ONE));
    assert_eq!(str_pairs(&ok("slice", c.get_slice(b("r5"), parent("Standard1"), all(100), ONE))).len(), 2);

    // truncate empties one CF and leaves the others
    ok("truncate", c.truncate("Standard1".into()));
    for k in ["r1", "r2", "r3", "r4", "r5"] {
        assert!(ok("slice", c.get_slice(b(k), parent("Standard1"), all(100), ONE)).is_empty(), "{k} after truncate");
    }
    let r = ok("scan", c.get_range_slices(parent("Standard1"), all(10), key_range("", "", 100), ONE));
    assert!(r.iter().all(|ks| ks.columns.is_empty()), "no live columns after truncate: {r:?}");
    insert(&mut c, "r1", "Standard1", b("new"), "v");
    assert_eq!(col_names(&ok("slice", c.get_slice(b("r1"), parent("Standard1"), all(100), ONE))), ["new"]);
}

#[test]
fn describe_methods() {
    let node = Node::start(Config::random().cluster_name("Describe Cluster"));
    let mut c = node.client();
    let version = create_keyspace(&mut c, KS, schema());
    ok("set_keyspace", c.set_keyspace(KS.into()));

    let versions = ok("describe_schema_versions", c.describe_schema_versions());
    assert_eq!(versions.len(), 1, "one node, one schema version: {versions:?}");
    let (v, hosts) = versions.iter().next().expect("one version");
    assert_eq!(v, &version, "the version system_add_keyspace returned is the current one");
    assert_eq!(hosts, &vec!["127.0.0.1".to_string()]);

    let kss = ok("describe_keyspaces", c.describe_keyspaces());
    let ours = kss.iter().find(|k| k.name == KS).unwrap_or_else(|| panic!("{KS} not in {kss:?}"));
    let cfs: BTreeSet<&str> = ours.cf_defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(cfs, BTreeSet::from(["Standard1", "Long1", "Super1"]));

    assert_eq!(ok("describe_cluster_name", c.describe_cluster_name()), "Describe Cluster");
    assert_eq!(ok("describe_version", c.describe_version()), "20.1.0");
    assert_eq!(ok("describe_partitioner", c.describe_partitioner()), RANDOM_PARTITIONER);
    let snitch = ok("describe_snitch", c.describe_snitch());
    assert!(snitch.starts_with("org.apache.cassandra.locator."), "snitch {snitch}");

    let token_map = ok("describe_token_map", c.describe_token_map());
    assert_eq!(token_map.len(), 1, "{token_map:?}");
    let (token, host) = token_map.iter().next().expect("one token");
    assert_eq!(host, "127.0.0.1");
    let as_number: u128 = token.parse().unwrap_or_else(|_| panic!("RandomPartitioner token {token} is a number"));
    assert!(as_number <= 1u128 << 127);

    for (name, ring) in
        [("describe_ring", c.describe_ring(KS.into())), ("describe_local_ring", c.describe_local_ring(KS.into()))]
    {
        let ring = ok(name, ring);
        assert_eq!(ring.len(), 1, "{name}: one node owns the whole ring: {ring:?}");
        assert_eq!(ring[0].endpoints, vec!["127.0.0.1".to_string()]);
        assert_eq!(&ring[0].start_token, token);
        assert_eq!(&ring[0].end_token, token);
        assert_eq!(ring[0].rpc_endpoints.as_deref(), Some(&["127.0.0.1".to_string()][..]));
    }
    expect_ire_containing("describe_ring of an unknown keyspace", c.describe_ring("NoSuchKs".into()), &["NoSuchKs"]);

    let ksdef = ok("describe_keyspace", c.describe_keyspace(KS.into()));
    assert_eq!(ksdef.name, KS);
    assert!(ksdef.strategy_class.ends_with("SimpleStrategy"), "{}", ksdef.strategy_class);
    assert_eq!(
        ksdef.strategy_options.as_ref().and_then(|o| o.get("replication_factor")).map(String::as_str),
        Some("1")
    );
    let long = ksdef.cf_defs.iter().find(|d| d.name == "Long1").expect("Long1");
    assert_eq!(long.comparator_type.as_deref(), Some("org.apache.cassandra.db.marshal.LongType"));
    let sup = ksdef.cf_defs.iter().find(|d| d.name == "Super1").expect("Super1");
    assert_eq!(sup.column_type.as_deref(), Some("Super"));
    assert_eq!(sup.subcomparator_type.as_deref(), Some("org.apache.cassandra.db.marshal.UTF8Type"));
    expect_not_found("describe_keyspace of an unknown keyspace", c.describe_keyspace("NoSuchKs".into()));

    // Splits cover the asked range exactly, in order.
    for i in 0..200 {
        insert(&mut c, &format!("k{i}"), "Standard1", b("c"), "v");
    }
    let (start, end) = ("0".to_string(), "170141183460469231731687303715884105727".to_string());
    let splits = ok("describe_splits", c.describe_splits("Standard1".into(), start.clone(), end.clone(), 64));
    assert!(splits.len() >= 2, "{splits:?}");
    assert_eq!(splits.first(), Some(&start));
    assert_eq!(splits.last(), Some(&end));
    let numbers: Vec<u128> = splits.iter().map(|s| s.parse().expect("numeric token")).collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "split tokens increase: {splits:?}");
    let ex = ok("describe_splits_ex", c.describe_splits_ex("Standard1".into(), start.clone(), end.clone(), 64));
    assert!(!ex.is_empty());
    assert_eq!(ex.first().map(|s| &s.start_token), Some(&start));
    assert_eq!(ex.last().map(|s| &s.end_token), Some(&end));
    assert!(ex.windows(2).all(|w| w[0].end_token == w[1].start_token), "splits are contiguous: {ex:?}");
    assert!(ex.iter().all(|s| s.row_count >= 0));
    expect_ire("describe_splits of an unknown CF", c.describe_splits("Nope".into(), start, end, 64));
}

#[test]
fn schema_changes_through_system_methods() {
    let node = Node::start(Config::random());
    let mut c = node.client();
    let current = |c: &mut Client| -> String {
        let v = ok("describe_schema_versions", c.describe_schema_versions());
        assert_eq!(v.len(), 1, "{v:?}");
        v.into_keys().next().expect("one version")
    };
    let v0 = current(&mut c);
    let v1 = create_keyspace(&mut c, "Schema1", vec![cf_def("Schema1", "First", "BytesType")]);
    assert_ne!(v1, v0, "adding a keyspace changes the schema version");
    assert_eq!(current(&mut c), v1);
    expect_ire_containing(
        "adding an existing keyspace",
        c.system_add_keyspace(ks_def("Schema1", 1, vec![])),
        &["Schema1"],
    );

    // update keyspace: durable_writes and replication options change
    let mut upd = ks_def("Schema1", 1, vec![]);
    upd.durable_writes = Some(false);
    let v2 = ok("system_update_keyspace", c.system_update_keyspace(upd));
    assert_ne!(v2, v1);
    assert_eq!(current(&mut c), v2);
    let d = ok("describe_keyspace", c.describe_keyspace("Schema1".into()));
    assert_eq!(d.durable_writes, Some(false));
    assert_eq!(d.cf_defs.len(), 1, "updating a keyspace keeps its column families");

    // add column family: the CfDef names its keyspace, but a session keyspace is needed too (3.11)
    expect_ire(
        "system_add_column_family without a session keyspace",
        c.system_add_column_family(cf_def("Schema1", "Second", "UTF8Type")),
    );
    ok("set_keyspace", c.set_keyspace("Schema1".into()));
    let v3 = ok("system_add_column_family", c.system_add_column_family(cf_def("Schema1", "Second", "UTF8Type")));
    assert_ne!(v3, v2);
    ok("insert into new CF", c.insert(b("k"), parent("Second"), column(b("n"), b("v"), ts()), ONE));
    assert_eq!(col_names(&ok("slice", c.get_slice(b("k"), parent("Second"), all(10), ONE))), ["n"]);
    expect_ire("adding an existing CF", c.system_add_column_family(cf_def("Schema1", "Second", "UTF8Type")));

    // update column family: comment and default validation class
    let mut cf = ok("describe_keyspace", c.describe_keyspace("Schema1".into()))
        .cf_defs
        .into_iter()
        .find(|d| d.name == "Second")
        .expect("Second");
    cf.comment = Some("updated by e2e".into());
    cf.default_validation_class = Some("LongType".into());
    let v4 = ok("system_update_column_family", c.system_update_column_family(cf));
    assert_ne!(v4, v3);
    let d = ok("describe_keyspace", c.describe_keyspace("Schema1".into()));
    let second = d.cf_defs.iter().find(|d| d.name == "Second").expect("Second");
    assert_eq!(second.comment.as_deref(), Some("updated by e2e"));
    assert_eq!(second.default_validation_class.as_deref(), Some("org.apache.cassandra.db.marshal.LongType"));
    // The new validator applies to writes.
    expect_ire(
        "value not a long after update",
        c.insert(b("k"), parent("Second"), column(b("m"), b("abc"), ts()), ONE),
    );
    ok("a long value", c.insert(b("k"), parent("Second"), column(b("m"), 7i64.to_be_bytes().to_vec(), ts()), ONE));
    // The data written before is still there.
    assert_eq!(col_names(&ok("slice", c.get_slice(b("k"), parent("Second"), all(10), ONE))), ["m", "n"]);

    // drop column family
    let v5 = ok("system_drop_column_family", c.system_drop_column_family("First".into()));
    assert_ne!(v5, v4);
    let d = ok("describe_keyspace", c.describe_keyspace("Schema1".into()));
    assert_eq!(d.cf_defs.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["Second"]);
    expect_ire("insert into dropped CF", c.insert(b("k"), parent("First"), column(b("n"), b("v"), ts()), ONE));
    expect_ire("dropping a missing CF", c.system_drop_column_family("First".into()));

    // drop keyspace
    let v6 = ok("system_drop_keyspace", c.system_drop_keyspace("Schema1".into()));
    assert_ne!(v6, v5);
    assert_eq!(current(&mut c), v6);
    expect_not_found("describe_keyspace after drop", c.describe_keyspace("Schema1".into()));
    assert!(ok("describe_keyspaces", c.describe_keyspaces()).iter().all(|k| k.name != "Schema1"));
    expect_ire("set_keyspace after drop", c.set_keyspace("Schema1".into()));
    expect_ire("dropping a missing keyspace", c.system_drop_keyspace("Schema1".into()));
    // The name can be used again, and the new keyspace starts empty.
    create_keyspace(&mut c, "Schema1", vec![cf_def("Schema1", "Second", "UTF8Type")]);
    ok("set_keyspace", c.set_keyspace("Schema1".into()));
    assert!(
        ok("slice", c.get_slice(b("k"), parent("Second"), all(10), ONE)).is_empty(),
        "a re-created CF has no old data"
    );
}

#[test]
fn ttl_columns_expire() {
    let node = Node::start(Config::random());
    let mut c = node.client();
    let mut short = cf_def(KS, "ShortLived", "UTF8Type");
    short.default_time_to_live = Some(1);
    create_keyspace(&mut c, KS, vec![cf_def(KS, "Standard1", "UTF8Type"), short]);
    ok("set_keyspace", c.set_keyspace(KS.into()));

    ok("insert ttl", c.insert(b("k"), parent("Standard1"), column_ttl(b("brief"), b("v"), ts(), 1), ONE));
    ok("insert ttl long", c.insert(b("k"), parent("Standard1"), column_ttl(b("lasting"), b("v"), ts(), 3600), ONE));
    insert(&mut c, "k", "Standard1", b("forever"), "v");
    ok("insert default ttl", c.insert(b("k"), parent("ShortLived"), column(b("x"), b("v"), ts()), ONE));

    let got = ok("get ttl column", c.get(b("k"), path("Standard1", b("lasting")), ONE)).column.expect("column");
    assert_eq!(got.ttl, Some(3600), "the TTL is returned with the column");
    let got = ok("get default-ttl column", c.get(b("k"), path("ShortLived", b("x")), ONE)).column.expect("column");
    assert_eq!(got.ttl, Some(1), "the CF's default_time_to_live applies to columns written without TTL");

    // TTL is in seconds with one-second resolution: gone within 1 + 1 s, allow up to 5 s.
    let gone = eventually(Duration::from_secs(5), || {
        let names = col_names(&ok("slice", c.get_slice(b("k"), parent("Standard1"), all(10), ONE)));
        names == ["forever", "lasting"]
    });
    assert!(
        gone,
        "the 1 s TTL column did not expire: {:?}",
        ok("slice", c.get_slice(b("k"), parent("Standard1"), all(10), ONE))
    );
    expect_not_found("expired column", c.get(b("k"), path("Standard1", b("brief")), ONE));
    assert_eq!(ok("count", c.get_count(b("k"), parent("Standard1"), all(10), ONE)), 2);
    let gone = eventually(Duration::from_secs(5), || {
        ok("slice", c.get_slice(b("k"), parent("ShortLived"), all(10), ONE)).is_empty()
    });
    assert!(gone, "default_time_to_live 1 s did not expire the column");
}

#[test]
fn super_column_families() {
    let (_node, mut c) = setup(Config::random());
    // insert into super columns with insert(), and with batch_mutate
    for (sc, sub, v) in [("sc1", "a", "1"), ("sc1", "b", "2"), ("sc2", "a", "3")] {
        ok("insert super", c.insert(b("row"), super_parent("Super1", b(sc)), column(b(sub), b(v), ts()), ONE));
    }
    let m = batch(
        "row",
        "Super1",
        vec![
            super_insert_mutation(b("sc3"), vec![column(b("x"), b("4"), ts()), column(b("y"), b("5"), ts())]),
            super_insert_mutation(b("sc1"), vec![column(b("c"), b("6"), ts())]),
        ],
    );
    ok("batch super", c.batch_mutate(m, ONE));

    // get of a whole super column
    let got = ok("get super column", c.get(b("row"), super_path("Super1", b("sc1"), None), ONE));
    let sc = got.super_column.expect("a super column");
    assert_eq!(sc.name, b("sc1"));
    let subs: Vec<(Vec<u8>, Option<Vec<u8>>)> = sc.columns.into_iter().map(|c| (c.name, c.value)).collect();
    assert_eq!(subs, vec![(b("a"), Some(b("1"))), (b("b"), Some(b("2"))), (b("c"), Some(b("6")))]);
    // get of one subcolumn
    let got = ok("get subcolumn", c.get(b("row"), super_path("Super1", b("sc3"), Some(b("y"))), ONE));
    assert_eq!(got.column.map(|c| (c.name, c.value)), Some((b("y"), Some(b("5")))));
    expect_not_found("missing super column", c.get(b("row"), super_path("Super1", b("nope"), None), ONE));

    // slices of super columns: names, ranges, reversed, count (counts super columns)
    let super_names = |r: &[t::ColumnOrSuperColumn]| -> Vec<String> {
        r.iter()
            .map(|c| String::from_utf8_lossy(&c.super_column.as_ref().expect("super column").name).into_owned())
            .collect()
    };
    let r = ok("slice super", c.get_slice(b("row"), parent("Super1"), all(100), ONE));
    assert_eq!(super_names(&r), ["sc1", "sc2", "sc3"]);
    assert_eq!(r[0].super_column.as_ref().map(|s| s.columns.len()), Some(3), "super columns come whole");
    let r = ok("slice super names", c.get_slice(b("row"), parent("Super1"), names(&["sc3", "sc1"]), ONE));
    assert_eq!(super_names(&r), ["sc1", "sc3"]);
    let r = ok("slice super reversed", c.get_slice(b("row"), parent("Super1"), slice(vec![], vec![], true, 2), ONE));
    assert_eq!(super_names(&r), ["sc3", "sc2"]);
    let r =
        ok("slice super range", c.get_slice(b("row"), parent("Super1"), slice(b("sc2"), b("sc9"), false, 100), ONE));
    assert_eq!(super_names(&r), ["sc2", "sc3"]);
    assert_eq!(ok("count super", c.get_count(b("row"), parent("Super1"), all(100), ONE)), 3);

    // slices of subcolumns within one super column
    let r = ok(
        "slice subcolumns",
        c.get_slice(b("row"), super_parent("Super1", b("sc1")), slice(b("b"), vec![], false, 100), ONE),
    );
    assert_eq!(str_pairs(&r), vec![("b".into(), "2".into()), ("c".into(), "6".into())]);
    let r =
        ok("slice subcolumn names", c.get_slice(b("row"), super_parent("Super1", b("sc1")), names(&["a", "c"]), ONE));
    assert_eq!(col_names(&r), ["a", "c"]);
    assert_eq!(ok("count subcolumns", c.get_count(b("row"), super_parent("Super1", b("sc1")), all(100), ONE)), 3);
    let r = ok(
        "range slices in super",
        c.get_range_slices(super_parent("Super1", b("sc3")), all(100), key_range("", "", 10), ONE),
    );
    assert_eq!(r.len(), 1);
    assert_eq!(col_names(&r[0].columns), ["x", "y"]);

    // remove one subcolumn, then a whole super column
    ok("remove subcolumn", c.remove(b("row"), super_path("Super1", b("sc1"), Some(b("b"))), ts(), ONE));
    let r = ok("slice subcolumns", c.get_slice(b("row"), super_parent("Super1", b("sc1")), all(100), ONE));
    assert_eq!(col_names(&r), ["a", "c"]);
    ok("remove super column", c.remove(b("row"), super_path("Super1", b("sc1"), None), ts(), ONE));
    expect_not_found("removed super column", c.get(b("row"), super_path("Super1", b("sc1"), None), ONE));
    let r = ok("slice after remove", c.get_slice(b("row"), parent("Super1"), all(100), ONE));
    assert_eq!(super_names(&r), ["sc2", "sc3"]);
    // A super column written again after its deletion holds only the new subcolumns.
    ok("insert super again", c.insert(b("row"), super_parent("Super1", b("sc1")), column(b("z"), b("7"), ts()), ONE));
    let got =
        ok("get super column", c.get(b("row"), super_path("Super1", b("sc1"), None), ONE)).super_column.expect("sc");
    assert_eq!(got.columns.iter().map(|c| c.name.clone()).collect::<Vec<_>>(), vec![b("z")]);
    // batch Deletion of a super column by name
    ok(
        "batch delete super column",
        c.batch_mutate(batch("row", "Super1", vec![delete_mutation(ts(), None, Some(names(&["sc2"])))]), ONE),
    );
    // batch Deletion of subcolumns inside one super column
    ok(
        "batch delete subcolumns",
        c.batch_mutate(batch("row", "Super1", vec![delete_mutation(ts(), Some(b("sc3")), Some(names(&["x"])))]), ONE),
    );
    let r = ok("slice after deletions", c.get_slice(b("row"), parent("Super1"), all(100), ONE));
    assert_eq!(super_names(&r), ["sc1", "sc3"]);
    let sc3 = r[1].super_column.as_ref().expect("sc3");
    assert_eq!(sc3.columns.iter().map(|c| c.name.clone()).collect::<Vec<_>>(), vec![b("y")]);
}
