//! Counters end to end, on one node and on three nodes with RF 3: add, batch_mutate with
//! CounterColumn / CounterSuperColumn, remove_counter, and every read method answering
//! CounterColumn / CounterSuperColumn; on three nodes each write goes through one node at QUORUM
//! and is read back at QUORUM through the others, then at ONE on every node (read repair has
//! made every copy whole by then).

use std::time::Duration;

use e2e::*;
use thrift_idl as t;

const QUORUM: t::ConsistencyLevel = t::ConsistencyLevel::QUORUM;
const COUNTER: &str = "CounterColumnType";

fn counter_cf(ks: &str, name: &str, super_cf: bool) -> t::CfDef {
    let mut d = if super_cf { super_cf_def(ks, name, "UTF8Type", "UTF8Type") } else { cf_def(ks, name, "UTF8Type") };
    d.default_validation_class = Some(COUNTER.into());
    d
}

fn counter(name: &str, value: i64) -> t::CounterColumn {
    t::CounterColumn::new(b(name), value)
}

fn counter_mutation(name: &str, value: i64) -> t::Mutation {
    t::Mutation::new(Some(t::ColumnOrSuperColumn::new(None, None, Some(counter(name, value)), None)), None)
}

fn counter_super_mutation(sc: &str, columns: Vec<t::CounterColumn>) -> t::Mutation {
    t::Mutation::new(
        Some(t::ColumnOrSuperColumn::new(None, None, None, Some(t::CounterSuperColumn::new(b(sc), columns)))),
        None,
    )
}

/// The value `get` answers for a standard counter.
fn value(c: &mut Client, key: &str, name: &str, cl: t::ConsistencyLevel) -> i64 {
    let got = ok("get counter", c.get(b(key), path("Hits", b(name)), cl));
    got.counter_column.as_ref().map(|cc| cc.value).unwrap_or_else(|| panic!("not a counter column: {got:?}"))
}

fn setup(admin: &mut Client, rf: u32) {
    ok(
        "add keyspace",
        admin.system_add_keyspace(ks_def(
            "Cnt",
            rf,
            vec![counter_cf("Cnt", "Hits", false), counter_cf("Cnt", "Nested", true)],
        )),
    );
}

/// Writes through `w` at `cl`, reads through `r` at `cl`: every counter method, standard and
/// super.
fn exercise(w: &mut Client, r: &mut Client, cl: t::ConsistencyLevel) {
    // add, standard: three increments and a decrement.
    for by in [1, 5, 10, -2] {
        ok("add", w.add(b("song1"), parent("Hits"), counter("likes", by), cl));
    }
    assert_eq!(value(r, "song1", "likes", cl), 14);
    // batch_mutate, standard: two counters of one row, and one of another row.
    let mut m = batch("song1", "Hits", vec![counter_mutation("views", 100), counter_mutation("likes", 1)]);
    m.extend(batch("song2", "Hits", vec![counter_mutation("likes", 7)]));
    ok("batch_mutate counters", w.batch_mutate(m, cl));
    assert_eq!(value(r, "song1", "likes", cl), 15);
    assert_eq!(value(r, "song1", "views", cl), 100);
    // get_slice, multiget_slice, get_count, get_range_slices.
    let slice = ok("get_slice", r.get_slice(b("song1"), parent("Hits"), all(100), cl));
    let got: Vec<(Vec<u8>, i64)> =
        slice.iter().filter_map(|c| c.counter_column.as_ref()).map(|c| (c.name.clone(), c.value)).collect();
    assert_eq!(got, vec![(b("likes"), 15), (b("views"), 100)], "{slice:?}");
    let multi = ok("multiget_slice", r.multiget_slice(vec![b("song1"), b("song2")], parent("Hits"), all(100), cl));
    let song2 = multi.get(&b("song2")).and_then(|cols| cols.first()).and_then(|c| c.counter_column.clone());
    assert_eq!(song2, Some(counter("likes", 7)));
    assert_eq!(ok("get_count", r.get_count(b("song1"), parent("Hits"), all(100), cl)), 2);
    let rows = ok("get_range_slices", r.get_range_slices(parent("Hits"), all(100), token_range("0", "0", 100), cl));
    let total: i64 =
        rows.iter().flat_map(|row| row.columns.iter()).filter_map(|c| c.counter_column.as_ref()).map(|c| c.value).sum();
    assert_eq!((rows.len(), total), (2, 122), "{rows:?}");

    // remove_counter: gone for get (NotFound) and for slices.
    ok("remove_counter", w.remove_counter(b("song2"), path("Hits", b("likes")), cl));
    expect_not_found("get removed", r.get(b("song2"), path("Hits", b("likes")), cl));

    // Super: add into a super column, batch_mutate a CounterSuperColumn, read back.
    let sp = super_parent("Nested", b("2026"));
    ok("add super", w.add(b("song1"), sp.clone(), counter("plays", 3), cl));
    ok(
        "batch_mutate super counters",
        w.batch_mutate(
            batch(
                "song1",
                "Nested",
                vec![counter_super_mutation("2026", vec![counter("plays", 4), counter("skips", 1)])],
            ),
            cl,
        ),
    );
    ok(
        "batch_mutate super counters",
        w.batch_mutate(batch("song1", "Nested", vec![counter_super_mutation("2027", vec![counter("plays", 9)])]), cl),
    );
    let got = ok("get super counter", r.get(b("song1"), super_path("Nested", b("2026"), Some(b("plays"))), cl));
    assert_eq!(got.counter_column, Some(counter("plays", 7)), "{got:?}");
    let whole = ok("get counter super column", r.get(b("song1"), super_path("Nested", b("2026"), None), cl));
    assert_eq!(
        whole.counter_super_column,
        Some(t::CounterSuperColumn::new(b("2026"), vec![counter("plays", 7), counter("skips", 1)])),
        "{whole:?}"
    );
    let top = ok("get_slice super", r.get_slice(b("song1"), parent("Nested"), all(100), cl));
    let names: Vec<Vec<u8>> =
        top.iter().filter_map(|c| c.counter_super_column.as_ref()).map(|s| s.name.clone()).collect();
    assert_eq!(names, vec![b("2026"), b("2027")], "{top:?}");
    assert_eq!(ok("get_count super", r.get_count(b("song1"), parent("Nested"), all(100), cl)), 2);
    ok("remove_counter super", w.remove_counter(b("song1"), super_path("Nested", b("2026"), Some(b("skips"))), cl));
    let inner = ok("get_slice in super", r.get_slice(b("song1"), sp, all(100), cl));
    let inner: Vec<Option<t::CounterColumn>> = inner.into_iter().map(|c| c.counter_column).collect();
    assert_eq!(inner, vec![Some(counter("plays", 7))]);

    // Counters have no place in atomic batches; regular columns none in a counter column family.
    expect_ire_containing(
        "atomic batch of counters",
        w.atomic_batch_mutate(batch("song1", "Hits", vec![counter_mutation("likes", 1)]), cl),
        &["not allowed in atomic batches"],
    );
    expect_ire_containing(
        "insert into a counter CF",
        w.insert(b("song1"), parent("Hits"), column(b("likes"), b("1"), ts()), cl),
        &["commutative"],
    );
}

#[test]
fn counters_on_one_node() {
    let node = Node::start(Config::random());
    let mut admin = node.client();
    setup(&mut admin, 1);
    let mut w = node.client_in("Cnt");
    let mut r = node.client_in("Cnt");
    exercise(&mut w, &mut r, ONE);
}

#[test]
fn counters_across_three_nodes_rf3() {
    let tokens = random_partitioner_tokens(3);
    let nodes = start_cluster(3, |i| Config {
        cluster_name: "Counter Test".into(),
        initial_token: tokens[i].clone(),
        ..Config::random()
    });
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    setup(&mut nodes[0].client(), 3);
    let mut clients: Vec<Client> = nodes.iter().map(|n| n.client_in("Cnt")).collect();
    let (first, rest) = clients.split_at_mut(1);
    exercise(&mut first[0], &mut rest[0], QUORUM);
    // Through the third node, increments led by whichever replica: every node agrees.
    for _ in 0..20 {
        ok("add through node 3", rest[1].add(b("song1"), parent("Hits"), counter("likes", 1), QUORUM));
    }
    for c in clients.iter_mut() {
        assert_eq!(value(c, "song1", "likes", QUORUM), 35);
    }
    // After QUORUM reads from each node (read repair), every node answers alone.
    for c in clients.iter_mut() {
        assert_eq!(value(c, "song1", "likes", ONE), 35);
    }
}

/// Seed 002's song_data (a counter CF with BytesType names): a user likes a song, then changes
/// their mind (unlike: likes - 1, dislikes + 1, in one batch), through Thrift.
#[test]
fn seed_002_like_and_unlike_through_thrift() {
    let node = Node::start(Config::random());
    let mut song_data = cf_def("music", "song_data", "BytesType");
    song_data.default_validation_class = Some(COUNTER.into());
    ok("add keyspace", node.client().system_add_keyspace(ks_def("music", 1, vec![song_data])));
    let mut c = node.client_in("music");
    for _ in 0..3 {
        ok("like", c.add(b("song1"), parent("song_data"), counter("likes", 1), ONE));
    }
    let unlike = batch("song1", "song_data", vec![counter_mutation("likes", -1), counter_mutation("dislikes", 1)]);
    ok("unlike", c.batch_mutate(unlike, ONE));
    let row = ok("get_slice", c.get_slice(b("song1"), parent("song_data"), all(10), ONE));
    let got: Vec<Option<t::CounterColumn>> = row.into_iter().map(|c| c.counter_column).collect();
    assert_eq!(got, vec![Some(counter("dislikes", 1)), Some(counter("likes", 2))]);
}
