//! SimpleAuthenticator as in Cassandra 0.6/0.7: no data access before login, wrong credentials
//! give AuthenticationException, data the user may not use gives InvalidRequestException (only
//! `login` declares AuthorizationException in API 20.1.0; Cassandra reports refusals elsewhere as
//! InvalidRequestException). `set_keyspace` needs no login and checks no right, as in Cassandra
//! (Hector calls it before `login`); each data call checks the login and the right to the column
//! families it touches, granted on the column family or on its keyspace.

use std::collections::BTreeMap;

use e2e::*;
use thrift_idl as t;
use thrift_idl::TCassandraSyncClient;

fn credentials(user: &str, password: &str) -> t::AuthenticationRequest {
    let mut m = BTreeMap::new();
    m.insert("username".to_string(), user.to_string());
    m.insert("password".to_string(), password.to_string());
    t::AuthenticationRequest::new(m)
}

fn is_authentication_error<T: std::fmt::Debug>(r: thrift::Result<T>) -> bool {
    matches!(r, Err(thrift::Error::User(e)) if e.downcast_ref::<t::AuthenticationException>().is_some())
}

fn value(c: &mut Client, key: &str, cf: &str, name: &str) -> Option<Vec<u8>> {
    let got = ok("get_slice", c.get_slice(b(key), parent(cf), names(&[name]), ONE));
    got.into_iter().next().and_then(|c| c.column).and_then(|c| c.value)
}

#[test]
fn simple_authenticator_guards_data_and_schema() {
    let config = Config::random()
        .extra("  <Authenticator>org.apache.cassandra.auth.SimpleAuthenticator</Authenticator>\n")
        .keyspaces(
            keyspace_xml("Open", &[r#"<ColumnFamily Name="Standard1" CompareWith="UTF8Type"/>"#])
                + "\n"
                + &keyspace_xml("Secret", &[r#"<ColumnFamily Name="Standard1" CompareWith="UTF8Type"/>"#]),
        );
    // The properties files sit next to storage-conf.xml; write them before the node starts.
    let node = Node::start_with_files(
        config,
        &[
            ("passwd.properties", "alice=wonderland\nbob=builder\n"),
            ("access.properties", "<modify-keyspaces>=alice\nOpen=alice,bob\nSecret=alice\n"),
        ],
    );

    // set_keyspace first, login second (Hector's order): the keyspace only has to exist.
    let mut early = node.client();
    ok("set_keyspace before login", early.set_keyspace("Open".into()));
    expect_ire_containing(
        "unknown keyspace before login",
        early.set_keyspace("Nowhere".into()),
        &["Keyspace 'Nowhere' does not exist"],
    );
    expect_ire_containing(
        "get_slice before login",
        early.get_slice(b("k"), parent("Standard1"), all(10), ONE),
        &["logged in"],
    );
    expect_ire_containing(
        "insert before login",
        early.insert(b("k"), parent("Standard1"), column(b("c"), b("v"), ts()), ONE),
        &["logged in"],
    );
    assert!(is_authentication_error(early.login(credentials("alice", "wrong"))), "bad password must be refused");
    assert!(is_authentication_error(early.login(credentials("mallory", "x"))), "unknown user must be refused");
    expect_ire_containing("describe_keyspaces before login", early.describe_keyspaces(), &["logged in"]);
    ok("login after set_keyspace", early.login(credentials("bob", "builder")));
    ok("insert after login", early.insert(b("k"), parent("Standard1"), column(b("early"), b("bird"), ts()), ONE));
    assert_eq!(value(&mut early, "k", "Standard1", "early"), Some(b("bird")));

    let mut bob = node.client();
    ok("login bob", bob.login(credentials("bob", "builder")));
    ok("set_keyspace Open", bob.set_keyspace("Open".into()));
    ok("insert", bob.insert(b("k"), parent("Standard1"), column(b("c"), b("v"), ts()), ONE));
    expect_ire_containing(
        "unknown keyspace",
        bob.set_keyspace("Nowhere".into()),
        &["Keyspace 'Nowhere' does not exist"],
    );
    // Logged in, set_keyspace still checks no right (Cassandra 0.7 to 3.x); the data calls do.
    ok("bob names Secret", bob.set_keyspace("Secret".into()));
    expect_ire_containing(
        "bob reads Secret",
        bob.get_slice(b("k"), parent("Standard1"), all(10), ONE),
        &["bob", "Secret"],
    );
    expect_ire_containing(
        "bob writes Secret",
        bob.insert(b("k"), parent("Standard1"), column(b("c"), b("v"), ts()), ONE),
        &["bob", "Secret"],
    );
    let ks = t::KsDef::new("BobsOwn".to_string(), "SimpleStrategy".to_string(), None, None, vec![], None);
    expect_ire_containing("bob creates a keyspace", bob.system_add_keyspace(ks.clone()), &["bob", "keyspaces"]);

    let mut alice = node.client();
    ok("login alice", alice.login(credentials("alice", "wonderland")));
    ok("set_keyspace Secret", alice.set_keyspace("Secret".into()));
    ok("alice writes Secret", alice.insert(b("k"), parent("Standard1"), column(b("c"), b("a"), ts()), ONE));
    assert_eq!(value(&mut alice, "k", "Standard1", "c"), Some(b("a")));
    let mut ks = ks;
    ks.strategy_options = Some([("replication_factor".to_string(), "1".to_string())].into_iter().collect());
    ok("alice creates a keyspace", alice.system_add_keyspace(ks));
}

#[test]
fn column_family_grants_add_to_keyspace_grants() {
    // Grants: see Node::start_with_sample_grants.
    let node = Node::start_with_sample_grants();

    // jsmith: <ro> on Keyspace1, <rw> on Keyspace1.Standard1.
    let mut js = node.client();
    ok("login jsmith", js.login(credentials("jsmith", "havebadpass")));
    ok("set_keyspace Keyspace1", js.set_keyspace("Keyspace1".into()));
    ok("jsmith writes Standard1", js.insert(b("k"), parent("Standard1"), column(b("c"), b("js"), ts()), ONE));
    assert_eq!(value(&mut js, "k", "Standard1", "c"), Some(b("js")));
    let standard2 = ["jsmith", "Keyspace1.Standard2"];
    expect_ire_containing(
        "jsmith writes Standard2",
        js.insert(b("k"), parent("Standard2"), column(b("c"), b("js"), ts()), ONE),
        &standard2,
    );
    assert_eq!(value(&mut js, "k", "Standard2", "c"), None, "jsmith still reads Standard2");
    // A batch needs every column family it names: nothing of a refused batch is written.
    let mut both = batch("b", "Standard1", vec![insert_mutation(column(b("c"), b("batch"), ts()))]);
    if let Some(row) = both.get_mut(&b("b")) {
        row.insert("Standard2".to_string(), vec![insert_mutation(column(b("c"), b("batch"), ts()))]);
    }
    expect_ire_containing("jsmith batch with Standard2", js.batch_mutate(both.clone(), ONE), &standard2);
    expect_ire_containing("jsmith atomic batch with Standard2", js.atomic_batch_mutate(both, ONE), &standard2);
    assert_eq!(value(&mut js, "b", "Standard1", "c"), None, "a refused batch writes nothing");
    let only1 = batch("b", "Standard1", vec![insert_mutation(column(b("c"), b("batch"), ts()))]);
    ok("jsmith batch on Standard1", js.batch_mutate(only1, ONE));
    assert_eq!(value(&mut js, "b", "Standard1", "c"), Some(b("batch")));
    expect_ire_containing(
        "jsmith removes from Standard2",
        js.remove(b("k"), row_path("Standard2"), ts(), ONE),
        &standard2,
    );
    expect_ire_containing("jsmith truncates Standard2", js.truncate("Standard2".into()), &standard2);
    // Changing Keyspace1's column families takes <rw> on Keyspace1.
    expect_ire_containing(
        "jsmith drops Standard2",
        js.system_drop_column_family("Standard2".into()),
        &["jsmith", "keyspace Keyspace1"],
    );

    // dilbert: <rw> on Keyspace1 covers Standard2.
    let mut dil = node.client();
    ok("login dilbert", dil.login(credentials("dilbert", "nomoovertime")));
    ok("set_keyspace Keyspace1", dil.set_keyspace("Keyspace1".into()));
    ok("dilbert writes Standard2", dil.insert(b("k"), parent("Standard2"), column(b("c"), b("dil"), ts()), ONE));
    assert_eq!(value(&mut js, "k", "Standard2", "c"), Some(b("dil")));

    // dilbert in MusicApp: only song_data, and no keyspace grant.
    ok("set_keyspace MusicApp", dil.set_keyspace("MusicApp".into()));
    ok("dilbert writes song_data", dil.insert(b("k"), parent("song_data"), column(b("c"), b("song"), ts()), ONE));
    let got = ok("get song_data", dil.get(b("k"), path("song_data", b("c")), ONE));
    assert_eq!(got.column.and_then(|c| c.value), Some(b("song")));
    assert_eq!(ok("get_count", dil.get_count(b("k"), parent("song_data"), all(10), ONE)), 1);
    let rows = ok("multiget_slice", dil.multiget_slice(vec![b("k")], parent("song_data"), all(10), ONE));
    assert_eq!(rows.get(&b("k")).map(Vec::len), Some(1));
    let counts = ok("multiget_count", dil.multiget_count(vec![b("k")], parent("song_data"), all(10), ONE));
    assert_eq!(counts.get(&b("k")), Some(&1));
    let range = ok("get_range_slices", dil.get_range_slices(parent("song_data"), all(10), key_range("", "", 10), ONE));
    assert_eq!(range.len(), 1);
    let paged = ok("get_paged_slice", dil.get_paged_slice("song_data".into(), key_range("", "", 10), vec![], ONE));
    assert_eq!(paged.len(), 1);
    ok("remove from song_data", dil.remove(b("k"), row_path("song_data"), ts(), ONE));

    // Every data call on playlists is refused, naming dilbert and the column family.
    let playlists = ["dilbert", "MusicApp.playlists"];
    expect_ire_containing("get", dil.get(b("k"), path("playlists", b("c")), ONE), &playlists);
    expect_ire_containing("get_slice", dil.get_slice(b("k"), parent("playlists"), all(10), ONE), &playlists);
    expect_ire_containing("get_count", dil.get_count(b("k"), parent("playlists"), all(10), ONE), &playlists);
    expect_ire_containing(
        "multiget_slice",
        dil.multiget_slice(vec![b("k")], parent("playlists"), all(10), ONE),
        &playlists,
    );
    expect_ire_containing(
        "multiget_count",
        dil.multiget_count(vec![b("k")], parent("playlists"), all(10), ONE),
        &playlists,
    );
    expect_ire_containing(
        "get_range_slices",
        dil.get_range_slices(parent("playlists"), all(10), key_range("", "", 10), ONE),
        &playlists,
    );
    expect_ire_containing(
        "get_paged_slice",
        dil.get_paged_slice("playlists".into(), key_range("", "", 10), vec![], ONE),
        &playlists,
    );
    let clause = t::IndexClause::new(vec![t::IndexExpression::new(b("c"), t::IndexOperator::EQ, b("v"))], vec![], 10);
    expect_ire_containing(
        "get_indexed_slices",
        dil.get_indexed_slices(parent("playlists"), clause, all(10), ONE),
        &playlists,
    );
    let multi = t::MultiSliceRequest::new(
        Some(b("k")),
        Some(parent("playlists")),
        Some(vec![t::ColumnSlice::new(Some(b("a")), Some(b("z")))]),
        Some(false),
        Some(10),
        Some(ONE),
    );
    expect_ire_containing("get_multi_slice", dil.get_multi_slice(multi), &playlists);
    expect_ire_containing(
        "insert",
        dil.insert(b("k"), parent("playlists"), column(b("c"), b("v"), ts()), ONE),
        &playlists,
    );
    expect_ire_containing(
        "add",
        dil.add(b("k"), parent("playlists"), t::CounterColumn::new(b("c"), 1), ONE),
        &playlists,
    );
    let serial = t::ConsistencyLevel::SERIAL;
    expect_ire_containing(
        "cas",
        dil.cas(b("k"), "playlists".into(), vec![], vec![column(b("c"), b("v"), ts())], serial, ONE),
        &playlists,
    );
    expect_ire_containing("remove", dil.remove(b("k"), row_path("playlists"), ts(), ONE), &playlists);
    expect_ire_containing("remove_counter", dil.remove_counter(b("k"), path("playlists", b("c")), ONE), &playlists);
    let pl = batch("k", "playlists", vec![insert_mutation(column(b("c"), b("v"), ts()))]);
    expect_ire_containing("batch_mutate", dil.batch_mutate(pl.clone(), ONE), &playlists);
    expect_ire_containing("atomic_batch_mutate", dil.atomic_batch_mutate(pl, ONE), &playlists);
    expect_ire_containing("truncate", dil.truncate("playlists".into()), &playlists);
    expect_ire_containing(
        "describe_splits_ex",
        dil.describe_splits_ex("playlists".into(), "0".into(), "0".into(), 64),
        &playlists,
    );

    // Elvis Presley may name MusicApp but read nothing in it.
    let mut elvis = node.client();
    ok("login Elvis", elvis.login(credentials("Elvis Presley", "graceland4evar")));
    ok("set_keyspace MusicApp", elvis.set_keyspace("MusicApp".into()));
    expect_ire_containing(
        "Elvis reads song_data",
        elvis.get_slice(b("k"), parent("song_data"), all(10), ONE),
        &["Elvis Presley", "MusicApp.song_data"],
    );
}

#[test]
fn cql_statements_need_the_same_grants_as_the_thrift_calls() {
    // Grants: see Node::start_with_sample_grants.
    let node = Node::start_with_sample_grants();
    let cql = |c: &mut Client, q: &str| c.execute_cql3_query(q.as_bytes().to_vec(), t::Compression::NONE, ONE);
    let insert1 = "INSERT INTO \"Keyspace1\".\"Standard1\" (key, column1, value) VALUES (0x6b, 'c', 0x6a73)";
    let mut anonymous = node.client();
    expect_ire_containing("CQL before login", cql(&mut anonymous, insert1), &["logged in"]);

    // jsmith: <ro> on Keyspace1, <rw> on Keyspace1.Standard1, <modify-keyspaces>.
    let mut js = node.client();
    ok("login jsmith", js.login(credentials("jsmith", "havebadpass")));
    ok("jsmith writes Standard1 with CQL", cql(&mut js, insert1));
    ok("set_keyspace Keyspace1", js.set_keyspace("Keyspace1".into()));
    assert_eq!(value(&mut js, "k", "Standard1", "c"), Some(b("js")));
    expect_ire_containing(
        "jsmith writes Standard2 with CQL",
        cql(&mut js, "INSERT INTO \"Keyspace1\".\"Standard2\" (key, column1, value) VALUES (0x6b, 'c', 0x6a73)"),
        &["jsmith", "Keyspace1.Standard2"],
    );
    ok("jsmith reads Standard2 with CQL", cql(&mut js, "SELECT * FROM \"Keyspace1\".\"Standard2\""));
    ok(
        "jsmith makes a keyspace",
        cql(&mut js, "CREATE KEYSPACE jsks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"),
    );

    // Elvis: <ro> on Keyspace1 only; no right to make keyspaces.
    let mut elvis = node.client();
    ok("login Elvis", elvis.login(credentials("Elvis Presley", "graceland4evar")));
    expect_ire_containing(
        "Elvis makes a table in Keyspace1",
        cql(&mut elvis, "CREATE TABLE \"Keyspace1\".t (k int PRIMARY KEY)"),
        &["Elvis Presley"],
    );
    let refused = cql(
        &mut elvis,
        "CREATE KEYSPACE elvis WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    );
    assert!(refused.is_err(), "Elvis may not make keyspaces: {refused:?}");
}
