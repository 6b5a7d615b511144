//! KEYS secondary indexes over Thrift, on one node and on three nodes with RF 3: seed 002's
//! schema (users by user_name, comments by user and by song) and its queries through
//! get_indexed_slices and get_range_slices with a row filter; overwrites, deletions and TTL
//! expiry never leave a stale match; paging by start key; an index added to a column family with
//! 10,000 rows is built in the background, its progress shown by `sibyltool indexstatus`, and
//! answers completely once built, after a restart and after compaction.

use std::collections::BTreeMap;
use std::time::Duration;

use e2e::*;
use thrift_idl as t;

const QUORUM: t::ConsistencyLevel = t::ConsistencyLevel::QUORUM;
const UTF8: &str = "UTF8Type";
const UUID: &str = "UUIDType";

fn column_def(name: &str, validation: &str, indexed: bool) -> t::ColumnDef {
    t::ColumnDef::new(b(name), validation.to_string(), indexed.then_some(t::IndexType::KEYS), None, None)
}

/// Seed 002's column families (the music app), as sibyl-cli would create them.
fn seed_002(ks: &str) -> Vec<t::CfDef> {
    let with = |name: &str, comparator: &str, columns: Vec<t::ColumnDef>| t::CfDef {
        column_metadata: Some(columns),
        ..cf_def(ks, name, comparator)
    };
    let person = || vec![column_def("user_name", UTF8, true), column_def("json_data", UTF8, false)];
    vec![
        with("users", UTF8, person()),
        with("songs", UTF8, person()),
        with(
            "comments",
            UTF8,
            vec![
                column_def("user", UUID, true),
                column_def("song", UUID, true),
                column_def("timestamp", "DateType", false),
                column_def("comment", UTF8, false),
            ],
        ),
        t::CfDef { default_validation_class: Some("IntegerType".into()), ..cf_def(ks, "user_likes", UUID) },
        t::CfDef {
            default_validation_class: Some("CounterColumnType".into()),
            column_metadata: Some(
                ["likes", "dislikes", "favorites", "views", "downloads"]
                    .iter()
                    .map(|c| column_def(c, "CounterColumnType", false))
                    .collect(),
            ),
            ..cf_def(ks, "song_data", "BytesType")
        },
    ]
}

fn uuid(n: u8) -> Vec<u8> {
    let mut u = [0u8; 16];
    u[15] = n;
    u[6] = 0x40; // version 4
    u[8] = 0x80;
    u.to_vec()
}

fn expr(column: &str, op: t::IndexOperator, value: impl Into<Vec<u8>>) -> t::IndexExpression {
    t::IndexExpression::new(b(column), op, value.into())
}

fn eq(column: &str, value: impl Into<Vec<u8>>) -> t::IndexExpression {
    expr(column, t::IndexOperator::EQ, value)
}

/// Row keys (UTF-8) and their columns, in the order returned.
fn rows(slices: Vec<t::KeySlice>) -> Vec<(String, BTreeMap<String, Vec<u8>>)> {
    slices
        .into_iter()
        .map(|s| {
            let columns = pairs(&s.columns).into_iter().map(|(n, v)| (String::from_utf8_lossy(&n).into_owned(), v));
            (String::from_utf8_lossy(&s.key).into_owned(), columns.collect())
        })
        .collect()
}

fn keys(slices: Vec<t::KeySlice>) -> Vec<String> {
    rows(slices).into_iter().map(|(k, _)| k).collect()
}

fn indexed(
    c: &mut Client,
    cf: &str,
    exprs: Vec<t::IndexExpression>,
    count: i32,
    cl: t::ConsistencyLevel,
) -> Vec<String> {
    let clause = t::IndexClause::new(exprs, Vec::new(), count);
    keys(ok("get_indexed_slices", c.get_indexed_slices(parent(cf), clause, all(100), cl)))
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn insert(c: &mut Client, key: &str, cf: &str, columns: Vec<t::Column>, cl: t::ConsistencyLevel) {
    let mutations = columns.into_iter().map(insert_mutation).collect();
    let mut by_cf = BTreeMap::new();
    by_cf.insert(cf.to_string(), mutations);
    let mut m = BTreeMap::new();
    m.insert(b(key), by_cf);
    ok("batch_mutate", c.batch_mutate(m, cl));
}

/// Seed 002's queries and the index's maintenance, each step through the next client.
fn seed_002_queries(clients: &mut [Client], cl: t::ConsistencyLevel) {
    let n = clients.len();
    let mut turn = 0usize;
    let mut next = move || {
        turn += 1;
        turn % n
    };
    macro_rules! c {
        () => {
            &mut clients[next()]
        };
    }
    for (key, name) in [("u1", "alice"), ("u2", "bob"), ("u3", "carol"), ("u4", "alice")] {
        let json = format!("{{\"name\": \"{name}\"}}");
        insert(c!(), key, "users", vec![column("json_data", json, ts()), column("user_name", name, ts())], cl);
    }
    insert(c!(), "s1", "songs", vec![column("user_name", "alice", ts())], cl);
    let comment = |user: u8, song: u8, text: &str| {
        vec![column("comment", text, ts()), column("song", uuid(song), ts()), column("user", uuid(user), ts())]
    };
    insert(c!(), "c1", "comments", comment(1, 10, "first"), cl);
    insert(c!(), "c2", "comments", comment(2, 10, "second"), cl);
    insert(c!(), "c3", "comments", comment(1, 11, "third"), cl);

    // Find a user by name: the row, with its columns.
    let clause = t::IndexClause::new(vec![eq("user_name", "bob")], Vec::new(), 100);
    let found = rows(ok("by name", c!().get_indexed_slices(parent("users"), clause, all(100), cl)));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "u2");
    assert_eq!(found[0].1.get("user_name").map(Vec::as_slice), Some(&b"bob"[..]));
    assert!(found[0].1.contains_key("json_data"));
    assert_eq!(sorted(indexed(c!(), "users", vec![eq("user_name", "alice")], 100, cl)), ["u1", "u4"]);
    assert_eq!(indexed(c!(), "songs", vec![eq("user_name", "alice")], 100, cl), ["s1"], "songs have their own index");
    assert!(indexed(c!(), "users", vec![eq("user_name", "nobody")], 100, cl).is_empty());
    // A song's comments, a user's, and both.
    assert_eq!(sorted(indexed(c!(), "comments", vec![eq("song", uuid(10))], 100, cl)), ["c1", "c2"]);
    assert_eq!(sorted(indexed(c!(), "comments", vec![eq("user", uuid(1))], 100, cl)), ["c1", "c3"]);
    assert_eq!(indexed(c!(), "comments", vec![eq("user", uuid(1)), eq("song", uuid(11))], 100, cl), ["c3"]);
    // Further expressions filter (UTF8 order here).
    let gt = vec![eq("song", uuid(10)), expr("comment", t::IndexOperator::GT, "hello")];
    assert_eq!(indexed(c!(), "comments", gt, 100, cl), ["c2"]);
    // A predicate that selects one column.
    let clause = t::IndexClause::new(vec![eq("song", uuid(10))], Vec::new(), 100);
    let only = ok("names", c!().get_indexed_slices(parent("comments"), clause, names(&["comment"]), cl));
    for r in rows(only) {
        assert_eq!(r.1.keys().collect::<Vec<_>>(), ["comment"], "{r:?}");
    }

    // get_range_slices with a row filter: the same rows, the range limiting them.
    let mut range = key_range("", "", 100);
    range.row_filter = Some(vec![eq("user_name", "alice")]);
    let got = keys(ok("row_filter", c!().get_range_slices(parent("users"), all(10), range, cl)));
    assert_eq!(sorted(got), ["u1", "u4"]);
    let mut range = token_range("0", "0", 100);
    range.row_filter = Some(vec![eq("user", uuid(2))]);
    assert_eq!(keys(ok("row_filter tokens", c!().get_range_slices(parent("comments"), all(10), range, cl))), ["c2"]);

    // Overwrite, column deletion, row deletion, TTL: no stale match.
    insert(c!(), "u1", "users", vec![column("user_name", "alicia", ts())], cl);
    assert_eq!(indexed(c!(), "users", vec![eq("user_name", "alice")], 100, cl), ["u4"]);
    assert_eq!(indexed(c!(), "users", vec![eq("user_name", "alicia")], 100, cl), ["u1"]);
    let now = ts();
    ok("remove column", c!().remove(b("u4"), path("users", b("user_name")), now, cl));
    assert!(indexed(c!(), "users", vec![eq("user_name", "alice")], 100, cl).is_empty());
    ok("remove row", c!().remove(b("u2"), row_path("users"), ts(), cl));
    assert!(indexed(c!(), "users", vec![eq("user_name", "bob")], 100, cl).is_empty());
    insert(c!(), "u5", "users", vec![column_ttl("user_name", "dave", ts(), 1)], cl);
    assert_eq!(indexed(c!(), "users", vec![eq("user_name", "dave")], 100, cl), ["u5"]);
    std::thread::sleep(Duration::from_millis(2200));
    assert!(indexed(c!(), "users", vec![eq("user_name", "dave")], 100, cl).is_empty(), "an expired match");
    // The value written again is found again.
    insert(c!(), "u2", "users", vec![column("user_name", "bob", ts())], cl);
    assert_eq!(indexed(c!(), "users", vec![eq("user_name", "bob")], 100, cl), ["u2"]);

    // Paging by start key: pages of 7 over 40 matches give each once, in the ring's order.
    for i in 0..40 {
        insert(c!(), &format!("p{i:02}"), "users", vec![column("user_name", "paged", ts())], cl);
    }
    let whole = indexed(c!(), "users", vec![eq("user_name", "paged")], 1000, cl);
    assert_eq!(whole.len(), 40);
    let mut scan_range = key_range("", "", 1000);
    scan_range.row_filter = Some(vec![eq("user_name", "paged")]);
    let ring_order = keys(ok("ring order", c!().get_range_slices(parent("users"), all(1), scan_range, cl)));
    assert_eq!(whole, ring_order, "get_indexed_slices and get_range_slices disagree on the order");
    let mut paged: Vec<String> = Vec::new();
    let mut start = Vec::new();
    for _ in 0..20 {
        let clause = t::IndexClause::new(vec![eq("user_name", "paged")], start.clone(), 7);
        let page = keys(ok("page", c!().get_indexed_slices(parent("users"), clause, all(1), cl)));
        let fresh: Vec<String> = page.iter().filter(|k| paged.last() != Some(*k)).cloned().collect();
        if fresh.is_empty() {
            break;
        }
        paged.extend(fresh);
        start = b(page.last().map(String::as_str).unwrap_or_default());
    }
    assert_eq!(paged, whole);

    // Cassandra's refusals.
    let clause = t::IndexClause::new(vec![eq("json_data", "x")], Vec::new(), 10);
    expect_ire_containing(
        "no indexed EQ",
        c!().get_indexed_slices(parent("users"), clause, all(10), cl),
        &["No indexed columns present in index clause with operator EQ"],
    );
    let clause = t::IndexClause::new(Vec::new(), Vec::new(), 10);
    expect_ire_containing(
        "empty clause",
        c!().get_indexed_slices(parent("users"), clause, all(10), cl),
        &["index clause list may not be empty"],
    );
    let clause = t::IndexClause::new(vec![eq("user", b("not a uuid"))], Vec::new(), 10);
    expect_ire_containing(
        "bad value",
        c!().get_indexed_slices(parent("comments"), clause, all(10), cl),
        &["failed value validation"],
    );
}

#[test]
fn seed_002_queries_on_one_node() {
    let node = Node::start(Config::random());
    let mut c = node.client();
    ok("add keyspace", c.system_add_keyspace(ks_def("music", 1, seed_002("music"))));
    ok("use", c.set_keyspace("music".into()));
    // Cassandra's default index names, shown by describe_keyspace.
    let ks = ok("describe", c.describe_keyspace("music".into()));
    let users = ks.cf_defs.iter().find(|d| d.name == "users").expect("users");
    let index_names: Vec<Option<String>> =
        users.column_metadata.iter().flatten().map(|c| c.index_name.clone()).collect();
    assert_eq!(index_names, [Some("users_user_name_idx".to_string()), None]);
    seed_002_queries(std::slice::from_mut(&mut c), ONE);
}

#[test]
fn seed_002_queries_across_three_nodes_at_quorum() {
    let tokens = random_partitioner_tokens(3);
    let nodes = start_cluster(3, |i| Config {
        cluster_name: "Index Test".into(),
        initial_token: tokens[i].clone(),
        ..Config::random()
    });
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    let mut admin = nodes[0].client();
    ok("add keyspace", admin.system_add_keyspace(ks_def("music", 3, seed_002("music"))));
    let mut clients: Vec<Client> = nodes.iter().map(|n| n.client_in("music")).collect();
    seed_002_queries(&mut clients, QUORUM);
    // Every node indexed its replicas: each answers at ONE from its own data.
    for c in clients.iter_mut() {
        assert_eq!(indexed(c, "users", vec![eq("user_name", "paged")], 1000, ONE).len(), 40);
    }
    for node in &nodes {
        let status = node.tool(&["indexstatus", "music"]).ok();
        assert_eq!(status.stdout.lines().filter(|l| l.ends_with(": built")).count(), 4, "{}", status.stdout);
    }
}

#[test]
fn an_index_added_to_10000_rows_is_built_in_the_background_and_survives_restart_and_compaction() {
    let mut node = Node::start(Config::random());
    let mut c = node.client();
    let plain =
        t::CfDef { column_metadata: Some(vec![column_def("user_name", UTF8, false)]), ..cf_def("big", "users", UTF8) };
    ok("add keyspace", c.system_add_keyspace(ks_def("big", 1, vec![plain])));
    ok("use", c.set_keyspace("big".into()));
    for batch in 0..100 {
        let mut m = BTreeMap::new();
        for i in batch * 100..(batch + 1) * 100 {
            let mut by_cf = BTreeMap::new();
            let name = format!("n{}", i % 50);
            by_cf.insert("users".to_string(), vec![insert_mutation(column("user_name", name, ts()))]);
            m.insert(b(&format!("r{i:05}")), by_cf);
        }
        ok("batch", c.batch_mutate(m, ONE));
    }
    node.tool(&["flush", "big"]).ok();
    assert_eq!(node.tool(&["indexstatus"]).ok().stdout, "No secondary indexes.\n");

    // Add the index as a client does: the current definition, with the column indexed.
    let ks = ok("describe", c.describe_keyspace("big".into()));
    let mut def = ks.cf_defs.into_iter().find(|d| d.name == "users").expect("users");
    def.column_metadata = Some(vec![column_def("user_name", UTF8, true)]);
    ok("update", c.system_update_column_family(def));
    let mut seen = Vec::new();
    let built = eventually(Duration::from_secs(120), || {
        let out = node.tool(&["indexstatus", "big"]).ok().stdout;
        seen.push(out.clone());
        out.trim_end().ends_with(": built")
    });
    assert!(built, "not built in time: {seen:?}");
    for line in &seen {
        let line = line.trim_end();
        assert!(line.starts_with("big.users.users_user_name_idx (user_name): "), "{line}");
        let state = line.rsplit(": ").next().unwrap_or_default();
        assert!(state == "built" || state.starts_with("building ") && state.ends_with("%)"), "{line}");
    }
    let json = node.tool(&["--json", "indexstatus", "big"]).ok().stdout;
    assert!(json.contains("\"rows_done\": 10000") && json.contains("\"rows_total\": 10000"), "{json}");

    let complete = |c: &mut Client| {
        for n in [0, 17, 49] {
            let got = indexed(c, "users", vec![eq("user_name", format!("n{n}"))], 10_000, ONE);
            assert_eq!(got.len(), 200, "n{n}");
        }
    };
    complete(&mut c);
    // Overwrite some, then restart and compact: the index stays complete and exact.
    for i in 0..10 {
        insert(&mut c, &format!("r{:05}", i * 50), "users", vec![column("user_name", "moved", ts())], ONE);
    }
    node.stop();
    node.start_again();
    let mut c = node.client_in("big");
    let status = node.tool(&["indexstatus", "big"]).ok().stdout;
    assert!(status.trim_end().ends_with(": built"), "{status}");
    assert_eq!(indexed(&mut c, "users", vec![eq("user_name", "n0")], 10_000, ONE).len(), 190);
    assert_eq!(indexed(&mut c, "users", vec![eq("user_name", "moved")], 10_000, ONE).len(), 10);
    node.tool(&["compact", "big"]).ok();
    assert_eq!(indexed(&mut c, "users", vec![eq("user_name", "n0")], 10_000, ONE).len(), 190);
    assert_eq!(indexed(&mut c, "users", vec![eq("user_name", "n17")], 10_000, ONE).len(), 200);
    assert_eq!(indexed(&mut c, "users", vec![eq("user_name", "moved")], 10_000, ONE).len(), 10);

    // rebuild_index empties the index and builds it again; queries are complete throughout.
    let run = node.tool(&["rebuild_index", "big", "users"]).ok();
    assert_eq!(run.stdout, "Rebuilding users_user_name_idx of big.users (sibyltool indexstatus follows it)\n");
    assert_eq!(indexed(&mut c, "users", vec![eq("user_name", "n17")], 10_000, ONE).len(), 200);
    let built = eventually(Duration::from_secs(120), || {
        node.tool(&["indexstatus", "big"]).ok().stdout.trim_end().ends_with(": built")
    });
    assert!(built, "not built again in time");
    assert_eq!(indexed(&mut c, "users", vec![eq("user_name", "n0")], 10_000, ONE).len(), 190);
    assert_eq!(indexed(&mut c, "users", vec![eq("user_name", "moved")], 10_000, ONE).len(), 10);
    let unknown = node.tool(&["rebuild_index", "big", "users", "nope"]);
    assert_eq!(unknown.code, Some(1), "{unknown:?}");
    assert!(unknown.stderr.contains("column family big.users has no index nope"), "{unknown:?}");
}

#[test]
fn a_stale_replica_match_is_never_returned() {
    // Without hints, a replica that missed a write keeps its old value (and index entry) until
    // a read repairs it.
    let tokens = random_partitioner_tokens(3);
    let mut nodes = start_cluster(3, |i| Config {
        cluster_name: "Stale Index".into(),
        initial_token: tokens[i].clone(),
        extra_xml: "<HintedHandoffEnabled>false</HintedHandoffEnabled>".into(),
        ..Config::random()
    });
    wait_for_ring(&nodes, 3, Duration::from_secs(60));
    let mut admin = nodes[0].client();
    ok("add keyspace", admin.system_add_keyspace(ks_def("music", 3, seed_002("music"))));
    let mut c1 = nodes[0].client_in("music");
    insert(&mut c1, "u1", "users", vec![column("user_name", "alice", ts())], t::ConsistencyLevel::ALL);

    // Node 3 is down while the value changes (paused, it would still receive the write when
    // resumed), and comes back with the old value.
    nodes[2].kill9();
    // Once the others see it down, the write is not even queued for it.
    let seen_down = eventually(Duration::from_secs(60), || {
        nodes[..2].iter().all(|n| n.tool(&["status"]).stdout.lines().any(|l| l.starts_with("DN ")))
    });
    assert!(seen_down, "node 3 never seen down");
    insert(&mut c1, "u1", "users", vec![column("user_name", "zed", ts())], QUORUM);
    nodes[2].start_again();
    wait_for_ring(&nodes, 3, Duration::from_secs(60));

    // Through the stale node, at ALL: its own index still says alice, the others say zed.
    let mut c3 = nodes[2].client_in("music");
    let mut answers = None;
    let asked = eventually(Duration::from_secs(30), || {
        let clause = |v: &str| t::IndexClause::new(vec![eq("user_name", v)], Vec::new(), 10);
        let alice = c3.get_indexed_slices(parent("users"), clause("alice"), all(10), t::ConsistencyLevel::ALL);
        let zed = c3.get_indexed_slices(parent("users"), clause("zed"), all(10), t::ConsistencyLevel::ALL);
        match (alice, zed) {
            (Ok(a), Ok(z)) => {
                answers = Some((keys(a), keys(z)));
                true
            }
            _ => false, // the node may see the others down for a moment after its start
        }
    });
    assert!(asked, "the stale node never answered at ALL");
    let (alice, zed) = answers.unwrap_or_default();
    assert!(alice.is_empty(), "a stale replica's match was returned: {alice:?}");
    assert_eq!(zed, ["u1"], "a match the stale replica does not know of was lost");
}

#[test]
fn an_index_declared_in_storage_conf_xml_is_created_and_queried() {
    let cf = "<ColumnFamily Name=\"Users\" CompareWith=\"UTF8Type\">\
              <Column Name=\"email\" ValidationClass=\"UTF8Type\" IndexType=\"KEYS\" IndexName=\"by_email\"/>\
              <Column Name=\"city\" ValidationClass=\"UTF8Type\" IndexType=\"KEYS\"/>\
              </ColumnFamily>";
    let node = Node::start(Config::random().keyspaces(keyspace_xml("Xml", &[cf])));
    let status = node.tool(&["indexstatus"]).ok().stdout;
    assert_eq!(status, "Xml.Users.Users_city_idx (city): built\nXml.Users.by_email (email): built\n", "{status}");
    let mut c = node.client_in("Xml");
    insert(&mut c, "k1", "Users", vec![column("city", "Oslo", ts()), column("email", "a@x", ts())], ONE);
    insert(&mut c, "k2", "Users", vec![column("city", "Oslo", ts()), column("email", "b@x", ts())], ONE);
    assert_eq!(indexed(&mut c, "Users", vec![eq("email", "b@x")], 10, ONE), ["k2"]);
    assert_eq!(sorted(indexed(&mut c, "Users", vec![eq("city", "Oslo")], 10, ONE)), ["k1", "k2"]);
}
