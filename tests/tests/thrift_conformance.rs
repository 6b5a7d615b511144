//! Requests Cassandra 3.11 answers in a particular way, answered the same way: split points over
//! the whole ring, what may touch a counter column family, keys checked against the key
//! validator on reads, key ranges, a session keyspace for schema changes, Deletion predicates,
//! the words for a super column family's path, the caching option as 3.11 describes it, the
//! words for a keyspace that does not exist, key validator failures, column names the comparator
//! refuses, ranges of subcolumns in a Deletion, split estimates and column definitions given twice.

use std::collections::BTreeMap;

use e2e::*;
use thrift_idl as t;

const KS: &str = "Conformance";

fn counter_cf(name: &str) -> t::CfDef {
    let mut d = cf_def(KS, name, "UTF8Type");
    d.default_validation_class = Some("CounterColumnType".into());
    d
}

/// Rows keyed by 8-byte longs.
fn long_keyed_cf(name: &str) -> t::CfDef {
    let mut d = cf_def(KS, name, "UTF8Type");
    d.key_validation_class = Some("LongType".into());
    d
}

fn setup() -> (Node, Client) {
    Node::start_with_keyspace(
        Config::random(),
        KS,
        vec![
            cf_def(KS, "Standard1", "UTF8Type"),
            long_keyed_cf("ByLong"),
            counter_cf("Counter1"),
            super_cf_def(KS, "Sup", "UTF8Type", "UTF8Type"),
        ],
    )
}

fn counter_mutation(name: &str, value: i64) -> t::Mutation {
    t::Mutation::new(
        Some(t::ColumnOrSuperColumn::new(None, None, Some(t::CounterColumn::new(b(name), value)), None)),
        None,
    )
}

fn multi_slice(key: Vec<u8>, cf: &str) -> t::MultiSliceRequest {
    t::MultiSliceRequest {
        key: Some(key),
        column_parent: Some(parent(cf)),
        column_slices: Some(vec![t::ColumnSlice::new(b("a"), b("z"))]),
        reversed: Some(false),
        count: Some(10),
        consistency_level: Some(ONE),
    }
}

#[test]
fn splits_of_the_whole_ring_and_of_an_empty_range_are_one_piece() {
    let (node, mut c) = setup();
    for i in 0..20 {
        ok("insert", c.insert(b(&format!("k{i}")), parent("Standard1"), column(b("c"), b("v"), ts()), ONE));
    }
    node.tool(&["flush"]).ok();
    // A one-node ring's range is (T, T]: what Hadoop's input format asks for.
    let ring = ok("describe_ring", c.describe_ring(KS.into()));
    let t = ring[0].end_token.clone();
    assert_eq!(ring[0].start_token, t, "{ring:?}");
    let ex = ok("splits_ex", c.describe_splits_ex("Standard1".into(), t.clone(), t.clone(), 65536));
    assert_eq!(ex.len(), 1, "{ex:?}");
    assert_eq!((ex[0].start_token.as_str(), ex[0].end_token.as_str()), (t.as_str(), t.as_str()));
    // 3.11 never estimates a split below the column family's min_index_interval (128 here).
    assert_eq!(ex[0].row_count, 128, "{ex:?}");
    assert_eq!(ok("splits", c.describe_splits("Standard1".into(), t.clone(), t.clone(), 65536)), [t.clone(), t]);
    assert_eq!(ok("splits of 0..0", c.describe_splits("Standard1".into(), "0".into(), "0".into(), 100)), ["0", "0"]);
    assert!(ok("splits of 0..0 by 5", c.describe_splits("Standard1".into(), "0".into(), "0".into(), 5)).len() > 2);
    // A range holding no key is one piece too.
    let empty = ok("splits of an empty CF", c.describe_splits_ex("ByLong".into(), "10".into(), "20".into(), 100));
    assert_eq!(empty.len(), 1, "{empty:?}");
    assert_eq!((empty[0].start_token.as_str(), empty[0].end_token.as_str()), ("10", "20"));
    assert_eq!(empty[0].row_count, 128, "{empty:?}");
    let mut sparse = cf_def(KS, "Sparse", "UTF8Type");
    sparse.min_index_interval = Some(16);
    ok("add Sparse", c.system_add_column_family(sparse));
    let ex = ok("splits of Sparse", c.describe_splits_ex("Sparse".into(), "10".into(), "20".into(), 100));
    assert_eq!(ex.iter().map(|s| s.row_count).collect::<Vec<_>>(), [16]);
}

#[test]
fn counter_column_families_take_only_counter_operations() {
    let (_node, mut c) = setup();
    ok("add", c.add(b("k"), parent("Counter1"), t::CounterColumn::new(b("c"), 3), ONE));
    assert_eq!(
        expect_ire("remove on a counter CF", c.remove(b("k"), path("Counter1", b("c")), ts(), ONE)),
        "invalid operation for commutative table Counter1"
    );
    expect_ire("remove of a counter row", c.remove(b("k"), row_path("Counter1"), ts(), ONE));
    let got = ok("get", c.get(b("k"), path("Counter1", b("c")), ONE));
    assert_eq!(got.counter_column.map(|cc| cc.value), Some(3), "the counter is still there");

    // An atomic batch may not touch a counter column family at all, deletions included.
    let deletion = delete_mutation(ts(), None, Some(names(&["c"])));
    assert_eq!(
        expect_ire("deletion in an atomic batch", c.atomic_batch_mutate(batch("k", "Counter1", vec![deletion]), ONE)),
        "Counter mutations are not allowed in atomic batches"
    );
    expect_ire(
        "increment in an atomic batch",
        c.atomic_batch_mutate(batch("k", "Counter1", vec![counter_mutation("c", 1)]), ONE),
    );
    let got = ok("get", c.get(b("k"), path("Counter1", b("c")), ONE));
    assert_eq!(got.counter_column.map(|cc| cc.value), Some(3), "nothing of the refused batches applied");
    // The same deletion in an ordinary batch goes through.
    let deletion = delete_mutation(ts(), None, Some(names(&["c"])));
    ok("deletion in a batch", c.batch_mutate(batch("k", "Counter1", vec![deletion]), ONE));
    expect_not_found("get after the deletion", c.get(b("k"), path("Counter1", b("c")), ONE));
}

#[test]
fn reads_check_keys_against_the_key_validator() {
    let (_node, mut c) = setup();
    let good = 7i64.to_be_bytes().to_vec();
    let bad = b("seven");
    ok("insert", c.insert(good.clone(), parent("ByLong"), column(b("c"), b("v"), ts()), ONE));

    let p = parent("ByLong");
    // 3.11 answers with the key validator's reason alone.
    assert_eq!(expect_ire("get", c.get(bad.clone(), path("ByLong", b("c")), ONE)), "Expected 8 or 0 byte long (5)");
    assert_eq!(
        expect_ire("insert", c.insert(bad.clone(), p.clone(), column(b("c"), b("v"), ts()), ONE)),
        "Expected 8 or 0 byte long (5)"
    );
    assert_eq!(expect_ire("empty key", c.get(Vec::new(), path("Standard1", b("c")), ONE)), "Key may not be empty");
    assert_eq!(
        expect_ire("key too long", c.insert(vec![b'k'; 65536], parent("Standard1"), column(b("c"), b("v"), ts()), ONE)),
        "Key length of 65536 is longer than maximum of 65535"
    );
    expect_ire("get_slice", c.get_slice(bad.clone(), p.clone(), all(10), ONE));
    expect_ire("get_count by names", c.get_count(bad.clone(), p.clone(), names(&["c"]), ONE));
    expect_ire("multiget_slice", c.multiget_slice(vec![good.clone(), bad.clone()], p.clone(), all(10), ONE));
    expect_ire("multiget_count", c.multiget_count(vec![good.clone(), bad.clone()], p.clone(), all(10), ONE));
    expect_ire("get_multi_slice", c.get_multi_slice(multi_slice(bad.clone(), "ByLong")));
    // 3.11 counts a slice without checking the key: there is nothing under a key no write takes.
    assert_eq!(ok("get_count by slice", c.get_count(bad, p.clone(), all(10), ONE)), 0);

    assert_eq!(ok("get_slice", c.get_slice(good.clone(), p.clone(), all(10), ONE)).len(), 1);
    assert_eq!(ok("multiget_count", c.multiget_count(vec![good.clone()], p.clone(), all(10), ONE))[&good], 1);
    assert_eq!(ok("get_multi_slice", c.get_multi_slice(multi_slice(good, "ByLong"))).len(), 1);
}

#[test]
fn column_names_are_refused_in_3_11_words() {
    let (_node, mut c) = setup();
    ok("add LongNames", c.system_add_column_family(cf_def(KS, "LongNames", "LongType")));
    let p = parent("LongNames");
    let three = vec![1u8, 2, 3];
    // 3.11's validateColumnNames answers with the comparator's reason alone.
    let expected = "Expected 8 or 0 byte long (3)";
    assert_eq!(expect_ire("insert", c.insert(b("k"), p.clone(), column(three.clone(), b("v"), ts()), ONE)), expected);
    assert_eq!(expect_ire("get", c.get(b("k"), path("LongNames", three.clone()), ONE)), expected);
    assert_eq!(expect_ire("get_slice by name", c.get_slice(b("k"), p.clone(), names(&[&three]), ONE)), expected);
    let insert = insert_mutation(column(three.clone(), b("v"), ts()));
    assert_eq!(expect_ire("batch_mutate", c.batch_mutate(batch("k", "LongNames", vec![insert]), ONE)), expected);
    assert_eq!(
        expect_ire("slice bound", c.get_slice(b("k"), p.clone(), slice(three, vec![], false, 10), ONE)),
        expected
    );
    // Empty and overlong names, and super columns named as a column's parent.
    assert_eq!(
        expect_ire("empty name", c.insert(b("k"), p.clone(), column(vec![], b("v"), ts()), ONE)),
        "column name must not be empty"
    );
    assert_eq!(
        expect_ire("65536-byte name", c.insert(b("k"), p.clone(), column(vec![0; 65536], b("v"), ts()), ONE)),
        "column name length must not be greater than 65535"
    );
    assert_eq!(
        expect_ire("empty super column", c.get(b("k"), super_path("Sup", vec![], Some(b("c"))), ONE)),
        "supercolumn name must not be empty"
    );
    assert_eq!(
        expect_ire(
            "65536-byte slice start",
            c.get_slice(b("k"), p.clone(), slice(vec![0; 65536], vec![], false, 10), ONE)
        ),
        "range start length cannot be larger than 65535"
    );
    ok("an 8-byte name", c.insert(b("k"), p, column(7i64.to_be_bytes().to_vec(), b("v"), ts()), ONE));
}

#[test]
fn key_ranges_are_checked_as_3_11_does() {
    let (_node, mut c) = setup();
    let p = parent("Standard1");
    let exactly_one = "exactly one each of {start key, start token} and {end key, end token} must be specified";
    let start_only = t::KeyRange::new(Some(b("a")), None, None, None, 10, None);
    assert_eq!(
        expect_ire("start key alone", c.get_range_slices(p.clone(), all(10), start_only.clone(), ONE)),
        exactly_one
    );
    assert_eq!(
        expect_ire("paged start key alone", c.get_paged_slice("Standard1".into(), start_only, b(""), ONE)),
        exactly_one
    );
    // With RandomPartitioner "a"'s token is far above 1.
    let past = t::KeyRange::new(Some(b("a")), None, None, Some("1".to_string()), 10, None);
    assert_eq!(
        expect_ire("start key after end token", c.get_range_slices(p.clone(), all(10), past, ONE)),
        "Start key's token sorts after end token"
    );
    let token_then_key = t::KeyRange::new(None, Some(b("a")), Some("0".to_string()), None, 10, None);
    assert_eq!(
        expect_ire("start token and end key", c.get_range_slices(p.clone(), all(10), token_then_key, ONE)),
        "start token + end key is not a supported key range"
    );
    assert_eq!(
        expect_ire("no rows", c.get_range_slices(p.clone(), all(10), key_range("", "", 0), ONE)),
        "maxRows must be positive"
    );
    ok("the whole ring by keys", c.get_range_slices(p, all(10), key_range("", "", 10), ONE));
}

#[test]
fn adding_a_column_family_needs_a_session_keyspace() {
    let (node, _c) = setup();
    let mut fresh = node.client();
    let why = expect_ire("add without a keyspace", fresh.system_add_column_family(cf_def(KS, "Later", "UTF8Type")));
    assert!(why.contains("keyspace"), "{why}");
    ok("set_keyspace", fresh.set_keyspace(KS.into()));
    ok("add in a keyspace", fresh.system_add_column_family(cf_def(KS, "Later", "UTF8Type")));
}

#[test]
fn deletion_predicates_follow_3_11() {
    let (_node, mut c) = setup();
    let fill = |c: &mut Client, key: &str| {
        for n in ["a", "b", "c", "d"] {
            ok("insert", c.insert(b(key), parent("Standard1"), column(b(n), b("v"), ts()), ONE));
        }
    };
    let left =
        |c: &mut Client, key: &str| col_names(&ok("slice", c.get_slice(b(key), parent("Standard1"), all(10), ONE)));

    // Names and a range together: the range is checked, the names are deleted.
    fill(&mut c, "both");
    let both = t::SlicePredicate::new(vec![b("b")], t::SliceRange::new(b("a"), b("d"), false, 10));
    ok(
        "names and range",
        c.batch_mutate(batch("both", "Standard1", vec![delete_mutation(ts(), None, Some(both))]), ONE),
    );
    assert_eq!(left(&mut c, "both"), ["a", "c", "d"]);

    // A reversed range is ordered in its direction of traversal; it deletes from start to finish
    // as given, so finish before start deletes nothing.
    fill(&mut c, "rev");
    let reversed = slice(b("c"), b("a"), true, 10);
    ok(
        "reversed range",
        c.batch_mutate(batch("rev", "Standard1", vec![delete_mutation(ts(), None, Some(reversed))]), ONE),
    );
    assert_eq!(left(&mut c, "rev"), ["a", "b", "c", "d"]);
    let wrong_way = slice(b("a"), b("c"), true, 10);
    assert_eq!(
        expect_ire(
            "reversed range the wrong way",
            c.batch_mutate(batch("rev", "Standard1", vec![delete_mutation(ts(), None, Some(wrong_way))]), ONE)
        ),
        "range finish must come after start in the order of traversal"
    );
    let forward = slice(b("b"), b("c"), false, 10);
    ok(
        "forward range",
        c.batch_mutate(batch("rev", "Standard1", vec![delete_mutation(ts(), None, Some(forward))]), ONE),
    );
    assert_eq!(left(&mut c, "rev"), ["a", "d"]);

    // A read takes names or a range, not both.
    let both = t::SlicePredicate::new(vec![b("b")], t::SliceRange::new(b(""), b(""), false, 10));
    assert_eq!(
        expect_ire("read with both", c.get_slice(b("both"), parent("Standard1"), both, ONE)),
        "predicate column_names and slice_range may not both be present"
    );
}

#[test]
fn a_super_column_family_path_names_the_super_column() {
    let (_node, mut c) = setup();
    assert_eq!(
        expect_ire("get without super column", c.get(b("k"), path("Sup", b("c")), ONE)),
        "supercolumn parameter is not optional for super CF Sup"
    );
    assert_eq!(
        expect_ire("get without column", c.get(b("k"), row_path("Standard1"), ONE)),
        "column parameter is not optional for standard CF Standard1"
    );
    assert_eq!(
        expect_ire(
            "remove with a super column in a standard CF",
            c.remove(b("k"), super_path("Standard1", b("s"), None), ts(), ONE)
        ),
        "supercolumn may not be specified for standard CF Standard1"
    );
}

#[test]
fn defaults_are_described_in_3_11_words() {
    let (_node, mut c) = setup();
    let mut d = cf_def(KS, "Cached", "UTF8Type");
    d.caching = Some("keys_only".into());
    d.cells_per_row_to_cache = Some("100".into());
    ok("add", c.system_add_column_family(d));
    let mut all = cf_def(KS, "AllCached", "UTF8Type");
    all.caching = Some("all".into());
    ok("add", c.system_add_column_family(all));
    let ks = ok("describe_keyspace", c.describe_keyspace(KS.into()));
    let by_name: BTreeMap<&str, &t::CfDef> = ks.cf_defs.iter().map(|d| (d.name.as_str(), d)).collect();
    let caching = |name: &str| (by_name[name].caching.as_deref(), by_name[name].cells_per_row_to_cache.as_deref());
    assert_eq!(caching("Cached"), (Some("KEYS_ONLY"), Some("0")));
    assert_eq!(caching("AllCached"), (Some("ALL"), Some("ALL")));
    assert_eq!(caching("Standard1"), (Some("KEYS_ONLY"), Some("0")));
    // Index intervals and speculative retry left unset are described with 3.11's defaults.
    let intervals = |name: &str| (by_name[name].min_index_interval, by_name[name].max_index_interval);
    assert_eq!(intervals("Standard1"), (Some(128), Some(2048)));
    assert_eq!(by_name["Standard1"].speculative_retry.as_deref(), Some("99PERCENTILE"));
    let mut bad = cf_def(KS, "Bad", "UTF8Type");
    bad.caching = Some("sometimes".into());
    assert_eq!(
        expect_ire("unknown caching", c.system_add_column_family(bad)),
        "Invalid value sometimes for caching parameter"
    );
}

#[test]
fn a_keyspace_that_does_not_exist_is_named_as_3_11_does() {
    let (node, mut c) = setup();
    assert_eq!(expect_ire("set_keyspace", c.set_keyspace("Nope".into())), "Keyspace 'Nope' does not exist");
    expect_not_found("describe_keyspace", c.describe_keyspace("Nope".into()));
    assert_eq!(expect_ire("describe_ring", c.describe_ring("Nope".into())), "No such keyspace: Nope");
    assert_eq!(
        expect_ire("update_keyspace", c.system_update_keyspace(ks_def("Nope", 1, vec![]))),
        "Keyspace Nope does not exist"
    );
    // The keyspace is looked for before the column families a keyspace update may not carry.
    assert_eq!(
        expect_ire(
            "update_keyspace with a CfDef",
            c.system_update_keyspace(ks_def("Nope", 1, vec![cf_def("Nope", "Cf", "UTF8Type")]))
        ),
        "Keyspace Nope does not exist"
    );
    assert_eq!(
        expect_ire("add_column_family", c.system_add_column_family(cf_def("Nope", "Cf", "UTF8Type"))),
        "Cannot add table 'Cf' to non existing keyspace 'Nope'."
    );
    assert_eq!(
        expect_ire("update_column_family", c.system_update_column_family(cf_def("Nope", "Cf", "UTF8Type"))),
        "Keyspace Nope does not exist"
    );
    assert_eq!(
        expect_ire("drop_keyspace", c.system_drop_keyspace("Nope".into())),
        "Cannot drop non existing keyspace 'Nope'."
    );

    // A session keyspace dropped since set_keyspace.
    create_keyspace(&mut c, "Doomed", vec![cf_def("Doomed", "Cf", "UTF8Type")]);
    let mut gone = node.client_in("Doomed");
    ok("insert", gone.insert(b("k"), parent("Cf"), column(b("c"), b("v"), ts()), ONE));
    ok("drop_keyspace", c.system_drop_keyspace("Doomed".into()));
    let missing = "Keyspace Doomed does not exist";
    assert_eq!(expect_ire("get_slice", gone.get_slice(b("k"), parent("Cf"), all(10), ONE)), missing);
    assert_eq!(expect_ire("insert", gone.insert(b("k"), parent("Cf"), column(b("c"), b("v"), ts()), ONE)), missing);
    assert_eq!(
        expect_ire(
            "batch_mutate",
            gone.batch_mutate(batch("k", "Cf", vec![insert_mutation(column(b("c"), b("v"), ts()))]), ONE)
        ),
        missing
    );
    assert_eq!(expect_ire("truncate", gone.truncate("Cf".into())), missing);
    assert_eq!(expect_ire("drop_column_family", gone.system_drop_column_family("Cf".into())), missing);
}

#[test]
fn a_range_of_subcolumns_cannot_be_deleted() {
    let (_node, mut c) = setup();
    let sup = |name: &str| super_insert_mutation(b("sc"), vec![column(b(name), b("v"), ts())]);
    ok("insert", c.batch_mutate(batch("k", "Sup", vec![sup("a"), sup("b"), sup("c")]), ONE));
    let range = slice(b("a"), b("b"), false, 10);
    assert_eq!(
        expect_ire(
            "range in a super column",
            c.batch_mutate(batch("k", "Sup", vec![delete_mutation(ts(), Some(b("sc")), Some(range))]), ONE)
        ),
        "Cannot delete a range of subcolumns in a super column"
    );
    let left = ok("slice", c.get_slice(b("k"), super_parent("Sup", b("sc")), all(10), ONE));
    assert_eq!(col_names(&left), ["a", "b", "c"], "nothing deleted");
    // Names inside the super column, and a range of whole super columns, are still deleted.
    ok(
        "names in a super column",
        c.batch_mutate(batch("k", "Sup", vec![delete_mutation(ts(), Some(b("sc")), Some(names(&["b"])))]), ONE),
    );
    let left = ok("slice", c.get_slice(b("k"), super_parent("Sup", b("sc")), all(10), ONE));
    assert_eq!(col_names(&left), ["a", "c"]);
    ok(
        "range of super columns",
        c.batch_mutate(
            batch("k", "Sup", vec![delete_mutation(ts(), None, Some(slice(b("a"), b("z"), false, 10)))]),
            ONE,
        ),
    );
    assert!(ok("slice", c.get_slice(b("k"), parent("Sup"), all(10), ONE)).is_empty());
}

#[test]
fn a_column_defined_twice_keeps_its_first_definition() {
    let (_node, mut c) = setup();
    let def = |name: &str, class: &str| t::ColumnDef {
        name: b(name),
        validation_class: class.to_string(),
        index_type: None,
        index_name: None,
        index_options: None,
    };
    let twice = vec![def("a", "LongType"), def("b", "UTF8Type"), def("a", "UTF8Type")];
    let described = |c: &mut Client, ks: &str, cf: &str| -> Vec<(String, String)> {
        let ks = ok("describe_keyspace", c.describe_keyspace(ks.into()));
        let d = ks.cf_defs.into_iter().find(|d| d.name == cf).expect("described");
        let mut cols: Vec<(String, String)> = d
            .column_metadata
            .unwrap_or_default()
            .into_iter()
            .map(|c| (String::from_utf8_lossy(&c.name).into_owned(), c.validation_class))
            .collect();
        cols.sort();
        cols
    };
    let expected = vec![
        ("a".to_string(), "org.apache.cassandra.db.marshal.LongType".to_string()),
        ("b".to_string(), "org.apache.cassandra.db.marshal.UTF8Type".to_string()),
    ];

    let mut d = cf_def(KS, "Twice", "UTF8Type");
    d.column_metadata = Some(twice.clone());
    ok("add_column_family", c.system_add_column_family(d.clone()));
    assert_eq!(described(&mut c, KS, "Twice"), expected);
    // The kept definition is the one values are checked against.
    assert_eq!(
        expect_ire("not a long", c.insert(b("k"), parent("Twice"), column(b("a"), b("text"), ts()), ONE)),
        "(Expected 8 or 0 byte long (4)) [Conformance][Twice][a] failed validation"
    );

    ok("update_column_family", c.system_update_column_family(d));
    assert_eq!(described(&mut c, KS, "Twice"), expected);

    let mut in_ks = cf_def("TwiceKs", "Twice", "UTF8Type");
    in_ks.column_metadata = Some(twice);
    create_keyspace(&mut c, "TwiceKs", vec![in_ks]);
    assert_eq!(described(&mut c, "TwiceKs", "Twice"), expected);
}

#[test]
fn cas_updates_need_a_timestamp() {
    let (_node, mut c) = setup();
    let stamped = column(b("a"), b("1"), ts());
    let unstamped = t::Column::new(b("b"), Some(b("2")), None, None);
    assert_eq!(
        expect_ire(
            "cas update without a timestamp",
            c.cas(
                b("k"),
                "Standard1".into(),
                vec![],
                vec![stamped.clone(), unstamped],
                t::ConsistencyLevel::SERIAL,
                ONE
            )
        ),
        "Column timestamp is required"
    );
    assert!(ok("slice", c.get_slice(b("k"), parent("Standard1"), all(10), ONE)).is_empty(), "nothing applied");
    let r = ok("cas", c.cas(b("k"), "Standard1".into(), vec![], vec![stamped], t::ConsistencyLevel::SERIAL, ONE));
    assert!(r.success);
}

#[test]
fn get_paged_slice_pages_a_super_column_family_by_super_column() {
    let (_node, mut c) = setup();
    let sup =
        |name: &str| super_insert_mutation(b(name), vec![column(b("s1"), b("v"), ts()), column(b("s2"), b("v"), ts())]);
    ok("insert", c.batch_mutate(batch("k", "Sup", vec![sup("a"), sup("b"), sup("c")]), ONE));
    // Whole super columns, counted as one each: every subcolumn of the ones returned comes along.
    let shape = |rows: Vec<t::KeySlice>| -> Vec<(String, Vec<String>)> {
        rows.into_iter()
            .flat_map(|row| row.columns)
            .map(|cosc| {
                let sc = cosc.super_column.expect("a super column");
                let subs = sc.columns.iter().map(|c| String::from_utf8_lossy(&c.name).into_owned()).collect();
                (String::from_utf8_lossy(&sc.name).into_owned(), subs)
            })
            .collect()
    };
    let two = ok("paged", c.get_paged_slice("Sup".into(), key_range("k", "k", 2), b(""), ONE));
    let subs = || vec!["s1".to_string(), "s2".to_string()];
    assert_eq!(shape(two), vec![("a".to_string(), subs()), ("b".to_string(), subs())]);
    // The start column names a super column: the page starts there, inclusive.
    let from_b = ok("paged from b", c.get_paged_slice("Sup".into(), key_range("k", "k", 10), b("b"), ONE));
    assert_eq!(shape(from_b), vec![("b".to_string(), subs()), ("c".to_string(), subs())]);
}
