//! Rules a client meets as Cassandra 3.11 states them, through the real server: EACH_QUORUM
//! reads, the consistency levels counter writes refuse, the reasons for a super column left out,
//! a keyspace name taken in another case, an indexed value too long to index, read repair
//! chances outside 0..1, the order of describe_keyspaces, and the 0.6 API's own reason for a key
//! range that runs backwards.

mod v06_support;

use e2e::*;
use thrift_idl as t;
use thrift_idl::v06::TCassandraSyncClient as _;
use v06_support::*;

const ONE: t::ConsistencyLevel = t::ConsistencyLevel::ONE;

fn counter_cf(name: &str) -> t::CfDef {
    t::CfDef { default_validation_class: Some("CounterColumnType".into()), ..cf_def("Rules", name, "UTF8Type") }
}

fn indexed_cf() -> t::CfDef {
    let by_state = t::ColumnDef {
        name: b("state"),
        validation_class: "BytesType".into(),
        index_type: Some(t::IndexType::KEYS),
        index_name: Some("by_state".into()),
        index_options: None,
    };
    t::CfDef { column_metadata: Some(vec![by_state]), ..cf_def("Rules", "Users", "UTF8Type") }
}

fn counter_deletion() -> t::Mutation {
    t::Mutation::new(None, Some(t::Deletion::new(None, None, Some(names(&["hits"])))))
}

#[test]
fn cassandra_3_11_rules_over_thrift() {
    let node = Node::start(Config::random());
    let mut c = node.client();
    create_keyspace(
        &mut c,
        "Rules",
        vec![
            cf_def("Rules", "Standard1", "UTF8Type"),
            super_cf_def("Rules", "Super1", "UTF8Type", "UTF8Type"),
            counter_cf("Counter1"),
            indexed_cf(),
        ],
    );
    ok("set_keyspace", c.set_keyspace("Rules".into()));

    // EACH_QUORUM reads a quorum in every data centre (3.0+); on one node, this node.
    ok("insert", c.insert(b("k"), parent("Standard1"), column("c", "v", ts()), ONE));
    let got = ok("get at EACH_QUORUM", c.get(b("k"), path("Standard1", "c"), t::ConsistencyLevel::EACH_QUORUM));
    assert_eq!(got.column.and_then(|col| col.value), Some(b("v")));
    let counted = c.get_count(b("k"), parent("Standard1"), all(10), t::ConsistencyLevel::EACH_QUORUM);
    assert_eq!(ok("get_count at EACH_QUORUM", counted), 1);
    // ANY is still a write-only level.
    let why = expect_ire("get at ANY", c.get(b("k"), path("Standard1", "c"), t::ConsistencyLevel::ANY));
    assert_eq!(why, "ANY ConsistencyLevel is only supported for writes");

    // Counter writes: ANY is refused naming the table, the serial levels as non-serializable,
    // for increments, removals and counter deletions in a batch alike.
    let any = "Consistency level ANY is not yet supported for counter table Counter1";
    let add = c.add(b("k"), parent("Counter1"), t::CounterColumn::new(b("hits"), 1), t::ConsistencyLevel::ANY);
    assert_eq!(expect_ire("add at ANY", add), any);
    let removal = c.remove_counter(b("k"), path("Counter1", "hits"), t::ConsistencyLevel::ANY);
    assert_eq!(expect_ire("remove_counter at ANY", removal), any);
    let deletion = batch("k", "Counter1", vec![counter_deletion()]);
    assert_eq!(expect_ire("counter deletion at ANY", c.batch_mutate(deletion, t::ConsistencyLevel::ANY)), any);
    let add = c.add(b("k"), parent("Counter1"), t::CounterColumn::new(b("hits"), 1), t::ConsistencyLevel::SERIAL);
    assert_eq!(expect_ire("add at SERIAL", add), "Counter operations are inherently non-serializable");
    let removal = c.remove_counter(b("k"), path("Counter1", "hits"), t::ConsistencyLevel::LOCAL_SERIAL);
    assert_eq!(
        expect_ire("remove_counter at LOCAL_SERIAL", removal),
        "Counter operations are inherently non-serializable"
    );
    // A plain write at SERIAL keeps its own reason, and nothing above was applied.
    let insert = c.insert(b("k"), parent("Standard1"), column("d", "v", ts()), t::ConsistencyLevel::SERIAL);
    assert_eq!(expect_ire("insert at SERIAL", insert), "You must use conditional updates for serializable writes");
    expect_not_found("counter never written", c.get(b("k"), path("Counter1", "hits"), ONE));

    // A super column family wants the super column in insert and add.
    let why =
        expect_ire("insert without super column", c.insert(b("k"), parent("Super1"), column("c", "v", ts()), ONE));
    assert_eq!(why, "missing mandatory super column name for super CF Super1");

    // Keyspace names are unique whatever their case.
    let why = expect_ire("add RULES", c.system_add_keyspace(ks_def("RULES", 1, vec![])));
    assert_eq!(why, "Keyspace names must be case-insensitively unique (\"RULES\" conflicts with \"Rules\")");

    // An indexed value must fit an index key: 65,534 bytes do, 70,000 do not (and the index
    // still answers for what was written).
    let fits = column("state", vec![b'x'; 65534], ts());
    ok("indexed value of 65,534 bytes", c.insert(b("u1"), parent("Users"), fits, ONE));
    let too_long = column("state", vec![b'x'; 70000], ts());
    let why = expect_ire("indexed value of 70,000 bytes", c.insert(b("u2"), parent("Users"), too_long.clone(), ONE));
    assert_eq!(
        why,
        "Cannot index value of size 70000 for index by_state on Rules.Users(state) (maximum allowed size=65535)"
    );
    let batched = batch("u2", "Users", vec![insert_mutation(too_long)]);
    expect_ire("indexed value of 70,000 bytes in a batch", c.batch_mutate(batched, ONE));
    // The same value in a column without an index is fine.
    ok("long value, no index", c.insert(b("u2"), parent("Users"), column("bio", vec![b'x'; 70000], ts()), ONE));
    expect_not_found("u2 has no state", c.get(b("u2"), path("Users", "state"), ONE));

    // Read repair chances are probabilities.
    let mut bad = cf_def("Rules", "Standard2", "UTF8Type");
    bad.read_repair_chance = Some(2.0.into());
    let why = expect_ire("read_repair_chance 2.0", c.system_add_column_family(bad));
    assert_eq!(why, "read_repair_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got 2.0)");

    // describe_keyspaces lists the client's keyspaces before the node's own, so the first one
    // not named "system" (where Hector's host discovery asks for the ring) has a ring.
    let names: Vec<String> = ok("describe_keyspaces", c.describe_keyspaces()).into_iter().map(|k| k.name).collect();
    assert_eq!(names.first().map(String::as_str), Some("Rules"), "{names:?}");
    assert!(names.iter().skip(1).all(|n| n.starts_with("system")), "{names:?}");
    let first = names.iter().find(|n| *n != "system").expect("a keyspace").clone();
    ok("describe_ring of the first keyspace not named system", c.describe_ring(first));
}

#[test]
fn a_backwards_key_range_is_refused_in_each_api_s_words() {
    let cf = r#"<ColumnFamily Name="Standard1" CompareWith="BytesType"/>"#;
    let node = Node::start(Config::random().keyspaces(keyspace_xml("Keyspace1", &[cf])));
    let mut c = node.client_in("Keyspace1");
    // Two keys whose MD5 tokens run backwards: the last and the first of twenty in token order.
    let (start, end) = {
        let mut keys: Vec<String> = (0..20).map(|i| format!("key{i}")).collect();
        keys.sort_by_key(|k| model::dht::Partitioner::Random.token_for_key(k.as_bytes()));
        (keys[19].clone(), keys[0].clone())
    };
    let why = expect_ire(
        "backwards range",
        c.get_range_slices(parent("Standard1"), all(1), key_range(&start, &end, 10), ONE),
    );
    assert!(why.starts_with("start key's token sorts after end key's token"), "{why}");

    let mut old = client06(&node, false);
    let range = thrift_idl::v06::KeyRange::new(Some(start.clone()), Some(end.clone()), None, None, 10);
    let why = expect_ire06(
        "0.6 backwards range",
        old.get_range_slices("Keyspace1".into(), parent06("Standard1"), all06(1), range, ONE06),
    );
    assert_eq!(
        why,
        "start key's md5 sorts after end key's md5.  this is not allowed; you probably should not specify end key \
         at all, under RandomPartitioner"
    );
    let why = expect_ire06(
        "0.6 get_range_slice backwards",
        old.get_range_slice("Keyspace1".into(), parent06("Standard1"), all06(1), start.clone(), end.clone(), 10, ONE06),
    );
    assert!(why.starts_with("start key's md5 sorts after end key's md5"), "{why}");
}
