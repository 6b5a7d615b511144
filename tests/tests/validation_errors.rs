//! Invalid requests get Cassandra's exceptions (InvalidRequestException with a reason that names
//! the problem, UnavailableException for consistency levels one node cannot meet, NotFound...),
//! nothing is half applied, and the connection keeps working after every one of them.

use std::collections::BTreeMap;

use e2e::*;
use thrift_idl as t;

const KS: &str = "Validation";

fn schema() -> Vec<t::CfDef> {
    let mut longs = cf_def(KS, "LongValues", "UTF8Type");
    longs.default_validation_class = Some("LongType".into());
    vec![
        cf_def(KS, "Standard1", "UTF8Type"),
        cf_def(KS, "Long1", "LongType"),
        longs,
        super_cf_def(KS, "Super1", "UTF8Type", "UTF8Type"),
    ]
}

fn col(name: &str) -> t::Column {
    column(b(name), b("v"), ts())
}

#[test]
fn invalid_requests_are_refused_and_the_connection_survives() {
    let node = Node::start(Config::random());
    let mut c = node.client();

    // Before any keyspace is set.
    expect_ire_containing(
        "insert without keyspace",
        c.insert(b("k"), parent("Standard1"), col("a"), ONE),
        &["keyspace"],
    );
    expect_ire_containing(
        "get_slice without keyspace",
        c.get_slice(b("k"), parent("Standard1"), all(10), ONE),
        &["keyspace"],
    );
    expect_ire_containing("set_keyspace unknown", c.set_keyspace("NoSuchKeyspace".into()), &["NoSuchKeyspace"]);

    // Schema changes with bad definitions.
    expect_ire_containing(
        "invalid keyspace name",
        c.system_add_keyspace(ks_def("bad-name!", 1, vec![])),
        &["bad-name!"],
    );
    let mut unknown_strategy = ks_def("Fine", 1, vec![]);
    unknown_strategy.strategy_class = "org.apache.cassandra.locator.NoSuchStrategy".into();
    expect_ire_containing("unknown strategy class", c.system_add_keyspace(unknown_strategy), &["NoSuchStrategy"]);
    expect_ire_containing(
        "a CF of another keyspace inside a KsDef",
        c.system_add_keyspace(ks_def("Fine", 1, vec![cf_def("Other", "Cf", "BytesType")])),
        &["Other"],
    );
    expect_ire(
        "unknown comparator",
        c.system_add_keyspace(ks_def("Fine", 1, vec![cf_def("Fine", "Cf", "NoSuchType")])),
    );
    expect_not_found("the refused keyspaces were not created", c.describe_keyspace("Fine".into()));

    create_keyspace(&mut c, KS, schema());
    ok("set_keyspace", c.set_keyspace(KS.into()));

    // Unknown column family, on writes and reads.
    expect_ire_containing("insert unknown CF", c.insert(b("k"), parent("NoSuchCF"), col("a"), ONE), &["NoSuchCF"]);
    expect_ire_containing("get_slice unknown CF", c.get_slice(b("k"), parent("NoSuchCF"), all(10), ONE), &["NoSuchCF"]);
    expect_ire_containing(
        "batch_mutate unknown CF",
        c.batch_mutate(batch("k", "NoSuchCF", vec![insert_mutation(col("a"))]), ONE),
        &["NoSuchCF"],
    );

    // Super column on a standard CF; no super column on a super CF.
    expect_ire_containing(
        "super_column on a standard CF",
        c.insert(b("k"), super_parent("Standard1", b("sc")), col("a"), ONE),
        &["super"],
    );
    expect_ire_containing(
        "get with super_column on a standard CF",
        c.get(b("k"), super_path("Standard1", b("sc"), Some(b("a"))), ONE),
        &["super"],
    );
    expect_ire_containing(
        "insert into a super CF without super column",
        c.insert(b("k"), parent("Super1"), col("a"), ONE),
        &["super"],
    );
    expect_ire_containing(
        "batch column into a super CF",
        c.batch_mutate(batch("k", "Super1", vec![insert_mutation(col("a"))]), ONE),
        &["super"],
    );
    expect_ire_containing(
        "batch super column into a standard CF",
        c.batch_mutate(batch("k", "Standard1", vec![super_insert_mutation(b("sc"), vec![col("a")])]), ONE),
        &["super"],
    );

    // Column names: empty, too long, invalid for the comparator.
    expect_ire_containing(
        "empty column name",
        c.insert(b("k"), parent("Standard1"), column(vec![], b("v"), ts()), ONE),
        &["empty"],
    );
    expect_ire_containing(
        "65536-byte column name",
        c.insert(b("k"), parent("Standard1"), column(vec![b'x'; 65536], b("v"), ts()), ONE),
        &["65535"],
    );
    // 3.11 answers with the comparator's reason alone.
    expect_ire_containing(
        "3-byte name under LongType",
        c.insert(b("k"), parent("Long1"), column(vec![1, 2, 3], b("v"), ts()), ONE),
        &["Expected 8 or 0 byte long (3)"],
    );
    expect_ire(
        "invalid UTF-8 name under UTF8Type",
        c.insert(b("k"), parent("Standard1"), column(vec![0xff, 0xfe], b("v"), ts()), ONE),
    );
    expect_ire("empty name in a get", c.get(b("k"), path("Standard1", vec![]), ONE));

    // Values invalid for their validator.
    expect_ire_containing(
        "3-byte value under LongType validator",
        c.insert(b("k"), parent("LongValues"), column(b("n"), vec![1, 2, 3], ts()), ONE),
        &["validation"],
    );
    ok(
        "8-byte value under LongType validator",
        c.insert(b("k"), parent("LongValues"), column(b("n"), vec![0; 8], ts()), ONE),
    );

    // Missing timestamp / value; bad TTL.
    expect_ire_containing(
        "missing timestamp",
        c.insert(b("k"), parent("Standard1"), t::Column::new(b("a"), Some(b("v")), None, None), ONE),
        &["timestamp"],
    );
    expect_ire_containing(
        "deletion without timestamp",
        c.batch_mutate(
            batch(
                "k",
                "Standard1",
                vec![t::Mutation::new(None, Some(t::Deletion::new(None, None, Some(names(&["a"])))))],
            ),
            ONE,
        ),
        &["timestamp"],
    );
    expect_ire_containing(
        "TTL over 20 years",
        c.insert(b("k"), parent("Standard1"), column_ttl(b("a"), b("v"), ts(), 630_720_001), ONE),
        &["ttl is too large"],
    );
    expect_ire_containing(
        "negative TTL",
        c.insert(b("k"), parent("Standard1"), column_ttl(b("a"), b("v"), ts(), -5), ONE),
        &["ttl"],
    );

    // Empty and oversized keys.
    expect_ire_containing("empty key on insert", c.insert(vec![], parent("Standard1"), col("a"), ONE), &["key"]);
    expect_ire_containing("empty key on get_slice", c.get_slice(vec![], parent("Standard1"), all(10), ONE), &["key"]);
    expect_ire_containing(
        "empty key in batch_mutate",
        c.batch_mutate(batch("", "Standard1", vec![insert_mutation(col("a"))]), ONE),
        &["key"],
    );
    expect_ire_containing("65536-byte key", c.insert(vec![b'k'; 65536], parent("Standard1"), col("a"), ONE), &["key"]);

    // Slice predicates.
    expect_ire_containing(
        "predicate with neither names nor range",
        c.get_slice(b("k"), parent("Standard1"), t::SlicePredicate::new(None, None), ONE),
        &["predicate column_names and slice_range may not both be null"],
    );
    expect_ire_containing(
        "predicate with both names and range",
        c.get_slice(
            b("k"),
            parent("Standard1"),
            t::SlicePredicate::new(Some(vec![b("a")]), Some(t::SliceRange::new(vec![], vec![], false, 10))),
            ONE,
        ),
        &["predicate column_names and slice_range may not both be present"],
    );
    expect_ire_containing(
        "negative count",
        c.get_slice(b("k"), parent("Standard1"), slice(vec![], vec![], false, -1), ONE),
        &["count"],
    );
    expect_ire_containing(
        "UTF8 slice start after finish",
        c.get_slice(b("k"), parent("Standard1"), slice(b("z"), b("a"), false, 10), ONE),
        &["finish"],
    );
    expect_ire_containing(
        "reversed UTF8 slice start before finish",
        c.get_slice(b("k"), parent("Standard1"), slice(b("a"), b("z"), true, 10), ONE),
        &["finish"],
    );
    // LongType compares numerically: 2 > -1 although 0x00.. < 0xff.. bytewise.
    expect_ire_containing(
        "LongType slice start after finish",
        c.get_slice(
            b("k"),
            parent("Long1"),
            slice(2i64.to_be_bytes().to_vec(), (-1i64).to_be_bytes().to_vec(), false, 10),
            ONE,
        ),
        &["finish"],
    );
    ok(
        "LongType slice in numeric order",
        c.get_slice(
            b("k"),
            parent("Long1"),
            slice((-1i64).to_be_bytes().to_vec(), 2i64.to_be_bytes().to_vec(), false, 10),
            ONE,
        ),
    );
    expect_ire(
        "slice bound invalid for LongType",
        c.get_slice(b("k"), parent("Long1"), slice(vec![1, 2, 3], vec![], false, 10), ONE),
    );

    // Key ranges.
    let p = parent("Standard1");
    expect_ire_containing(
        "both start_key and start_token",
        c.get_range_slices(
            p.clone(),
            all(10),
            t::KeyRange::new(Some(b("a")), None, Some("0".to_string()), None, 10, None),
            ONE,
        ),
        &["start"],
    );
    expect_ire_containing(
        "neither start_key nor start_token",
        c.get_range_slices(p.clone(), all(10), t::KeyRange::new(None, Some(b("a")), None, None, 10, None), ONE),
        &["start"],
    );
    expect_ire_containing(
        "both end_key and end_token",
        c.get_range_slices(
            p.clone(),
            all(10),
            t::KeyRange::new(Some(b("a")), Some(b("b")), None, Some("0".to_string()), 10, None),
            ONE,
        ),
        &["end"],
    );
    expect_ire("non-positive row count", c.get_range_slices(p.clone(), all(10), key_range("", "", 0), ONE));
    expect_ire(
        "token not a number for RandomPartitioner",
        c.get_range_slices(p.clone(), all(10), token_range("abc", "0", 10), ONE),
    );
    // With RandomPartitioner, start and end keys must be in token order: MD5 puts "a" before "b".
    expect_ire(
        "end key's token before start key's",
        c.get_range_slices(p.clone(), all(10), key_range("b", "a", 10), ONE),
    );
    ok("keys in token order", c.get_range_slices(p.clone(), all(10), key_range("a", "b", 10), ONE));

    // Consistency levels: ANY is for writes; one live replica cannot satisfy TWO/THREE/QUORUM
    // of RF 3.
    expect_ire_containing(
        "ANY on a read",
        c.get_slice(b("k"), parent("Standard1"), all(10), t::ConsistencyLevel::ANY),
        &["ANY"],
    );
    ok("ANY on a write", c.insert(b("k"), parent("Standard1"), col("any"), t::ConsistencyLevel::ANY));
    expect_unavailable(
        "TWO on a write, RF 1",
        c.insert(b("k"), parent("Standard1"), col("a"), t::ConsistencyLevel::TWO),
    );
    expect_unavailable(
        "TWO on a read, RF 1",
        c.get_slice(b("k"), parent("Standard1"), all(10), t::ConsistencyLevel::TWO),
    );
    expect_unavailable("THREE on a read, RF 1", c.get(b("k"), path("Standard1", b("any")), t::ConsistencyLevel::THREE));
    ok("QUORUM of RF 1", c.get_slice(b("k"), parent("Standard1"), all(10), t::ConsistencyLevel::QUORUM));
    ok("ALL of RF 1", c.get_slice(b("k"), parent("Standard1"), all(10), t::ConsistencyLevel::ALL));
    expect_ire("unknown consistency level", c.get_slice(b("k"), parent("Standard1"), all(10), t::ConsistencyLevel(99)));

    // Not supported yet: a clear InvalidRequestException, not a dropped connection.
    let add = c.add(b("k"), parent("Standard1"), t::CounterColumn::new(b("c"), 1), ONE);
    expect_ire_containing("add to a non counter CF", add, &["invalid operation for non commutative table Standard1"]);
    expect_ire_containing(
        "cas at a level that is not serial",
        c.cas(b("k"), "Standard1".into(), vec![], vec![col("a")], ONE, ONE),
        &["Invalid consistency for conditional update"],
    );
    expect_ire_containing(
        "get_indexed_slices",
        c.get_indexed_slices(
            parent("Standard1"),
            t::IndexClause::new(vec![t::IndexExpression::new(b("a"), t::IndexOperator::EQ, b("v"))], vec![], 10),
            all(10),
            ONE,
        ),
        &["No indexed columns present in index clause with operator EQ"],
    );
    // Unquoted CQL names are lower-cased: the Thrift-made Standard1 is "Standard1" in CQL.
    expect_ire_containing(
        "execute_cql3_query",
        c.execute_cql3_query(b("SELECT * FROM Standard1"), t::Compression::NONE, ONE),
        &["unconfigured table standard1"],
    );

    // A batch with one bad mutation applies nothing (everything is validated first).
    let mut m = batch("atomic", "Standard1", vec![insert_mutation(col("good"))]);
    m.extend(batch("atomic2", "Standard1", vec![insert_mutation(column(vec![], b("v"), ts()))]));
    expect_ire("batch with one bad mutation", c.batch_mutate(m, ONE));
    assert!(
        ok("slice", c.get_slice(b("atomic"), parent("Standard1"), all(10), ONE)).is_empty(),
        "the valid part of a refused batch was applied"
    );

    // After all of that, the same connection still works.
    ok("insert after errors", c.insert(b("k"), parent("Standard1"), column(b("ok"), b("fine"), ts()), ONE));
    let got = ok("get after errors", c.get(b("k"), path("Standard1", b("ok")), ONE));
    assert_eq!(got.column.and_then(|c| c.value), Some(b("fine")));
    assert_eq!(ok("describe_version after errors", c.describe_version()), "20.1.0");
}

#[test]
fn keyspace_is_per_connection() {
    let node = Node::start(Config::random());
    let mut admin = node.client();
    create_keyspace(&mut admin, KS, schema());
    ok("set_keyspace", admin.set_keyspace(KS.into()));
    // A second connection has its own session: no keyspace yet.
    let mut other = node.client();
    expect_ire_containing(
        "other connection without keyspace",
        other.get_slice(b("k"), parent("Standard1"), all(10), ONE),
        &["keyspace"],
    );
    // Logging in with AllowAll changes nothing about that.
    ok("login", other.login(t::AuthenticationRequest::new(BTreeMap::new())));
    expect_ire("still no keyspace", other.insert(b("k"), parent("Standard1"), col("a"), ONE));
    ok("admin still works", admin.insert(b("k"), parent("Standard1"), col("a"), ONE));
}
