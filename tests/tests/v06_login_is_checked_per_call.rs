//! Cassandra 0.6's `login(keyspace, auth_request)` with SimpleAuthenticator: data calls before a
//! login are refused with 0.6's words, bad credentials give AuthenticationException, a keyspace
//! the user may not use AuthorizationException; after login every call's own keyspace is checked
//! (0.6 checked only the one given to login), as InvalidRequestException, and so are its column
//! families when access.properties grants column families. Descriptions and properties need no
//! login, as in 0.6; a 0.6 login does not log the 20.1.0 side in.

mod v06_support;

use std::collections::BTreeMap;

use e2e::*;
use thrift_idl::v06 as v;
use thrift_idl::v06::TCassandraSyncClient as _;
use v06_support::*;

fn credentials(user: &str, password: &str) -> v::AuthenticationRequest {
    v::AuthenticationRequest::new(BTreeMap::from([
        ("username".to_string(), user.to_string()),
        ("password".to_string(), password.to_string()),
    ]))
}

#[test]
fn login_names_a_keyspace_and_every_call_is_authorized() {
    let cf = r#"<ColumnFamily Name="Standard1" CompareWith="UTF8Type"/>"#;
    let config = Config::random()
        .extra("  <Authenticator>org.apache.cassandra.auth.SimpleAuthenticator</Authenticator>\n")
        .keyspaces(keyspace_xml("Open", &[cf]) + "\n" + &keyspace_xml("Secret", &[cf]));
    let node = Node::start_with_files(
        config,
        &[
            ("passwd.properties", "alice=wonderland\nbob=builder\n"),
            ("access.properties", "Open=alice,bob\nSecret=alice\n"),
        ],
    );

    for framed in [false, true] {
        let mut anon = client06(&node, framed);
        // Descriptions and properties need no login (and 20.1.0's describe_keyspace(s) would).
        assert!(ok("describe_keyspaces", anon.describe_keyspaces()).contains("Secret"));
        assert!(ok("describe_keyspace", anon.describe_keyspace("Secret".into())).contains_key("Standard1"));
        assert_eq!(ok("cluster name", anon.get_string_property("cluster name".into())), "Sibyl E2E");
        assert_eq!(ok("describe_version", anon.describe_version()), "2.2.0");
        assert_eq!(ok("describe_ring", anon.describe_ring("Open".into())).len(), 1);
        // Data calls do.
        let why =
            expect_ire06("get before login", anon.get("Open".into(), "k".into(), path06("Standard1", b("c")), ONE06));
        assert_eq!(why, "Login is required before any other API calls");
        let m = batch06("k", "Standard1", vec![insert06(column06(b("c"), b("v"), ts()))]);
        expect_ire06("batch_mutate before login", anon.batch_mutate("Open".into(), m, ONE06));
        expect06::<v::AuthenticationException, _>(
            "wrong password",
            anon.login("Open".into(), credentials("alice", "x")),
        );
        expect06::<v::AuthenticationException, _>("unknown user", anon.login("Open".into(), credentials("eve", "x")));
        expect06::<v::AuthorizationException, _>(
            "bob into Secret",
            anon.login("Secret".into(), credentials("bob", "builder")),
        );
        expect_ire06("still not logged in", anon.get_count("Open".into(), "k".into(), parent06("Standard1"), ONE06));

        let mut bob = client06(&node, framed);
        ok("bob logs in", bob.login("Open".into(), credentials("bob", "builder")));
        ok(
            "bob writes Open",
            bob.insert("Open".into(), "k".into(), path06("Standard1", b("c")), b("bob"), ts(), ONE06),
        );
        let got = ok("bob reads Open", bob.get("Open".into(), "k".into(), path06("Standard1", b("c")), ONE06));
        assert_eq!(got.column.map(|c| c.value), Some(b("bob")));
        // Logged in for Open, bob still may not touch Secret: each call's keyspace is checked.
        let why = expect_ire06(
            "bob reads Secret",
            bob.get_slice("Secret".into(), "k".into(), parent06("Standard1"), all06(10), ONE06),
        );
        assert!(why.contains("bob") && why.contains("Secret"), "{why}");
        expect_ire06(
            "bob writes Secret",
            bob.insert("Secret".into(), "k".into(), path06("Standard1", b("c")), b("x"), ts(), ONE06),
        );

        let mut alice = client06(&node, framed);
        ok("alice logs in", alice.login("Open".into(), credentials("alice", "wonderland")));
        ok(
            "alice writes Secret",
            alice.insert("Secret".into(), "k".into(), path06("Standard1", b("c")), b("alice"), ts(), ONE06),
        );
        let got = ok("alice reads Secret", alice.get("Secret".into(), "k".into(), path06("Standard1", b("c")), ONE06));
        assert_eq!(got.column.map(|c| c.value), Some(b("alice")));
    }

    // A 20.1.0 client still logs in its own way: set_keyspace needs no login, its data calls do.
    let mut new = node.client();
    ok("20.1.0 set_keyspace before login", new.set_keyspace("Open".into()));
    expect_ire_containing(
        "20.1.0 get before login",
        new.get(b("k"), e2e::path("Standard1", b("c")), ONE),
        &["logged in"],
    );
}

/// Cassandra's sample access.properties (examples/simple_authentication), plus a user whose
/// only grant is one column family: 0.6 calls honour column family grants as 20.1.0 calls do.
#[test]
fn column_family_grants_apply_to_06_calls() {
    // Grants: see Node::start_with_sample_grants.
    let node = Node::start_with_sample_grants();
    let ks1 = || "Keyspace1".to_string();
    let music = || "MusicApp".to_string();

    // jsmith: <ro> on Keyspace1 and <rw> on Keyspace1.Standard1.
    let mut js = client06(&node, true);
    ok("jsmith logs in", js.login(ks1(), credentials("jsmith", "havebadpass")));
    ok("jsmith writes Standard1", js.insert(ks1(), "k".into(), path06("Standard1", b("c")), b("js"), ts(), ONE06));
    let got = ok("jsmith reads Standard1", js.get(ks1(), "k".into(), path06("Standard1", b("c")), ONE06));
    assert_eq!(got.column.map(|c| c.value), Some(b("js")));
    let why = expect_ire06(
        "jsmith writes Standard2",
        js.insert(ks1(), "k".into(), path06("Standard2", b("c")), b("js"), ts(), ONE06),
    );
    assert!(why.contains("jsmith") && why.contains("Keyspace1.Standard2"), "{why}");
    ok("jsmith reads Standard2", js.get_slice(ks1(), "k".into(), parent06("Standard2"), all06(10), ONE06));
    let mut both = batch06("b", "Standard1", vec![insert06(column06(b("c"), b("v"), ts()))]);
    if let Some(row) = both.get_mut("b") {
        row.insert("Standard2".to_string(), vec![insert06(column06(b("c"), b("v"), ts()))]);
    }
    let why = expect_ire06("jsmith batch with Standard2", js.batch_mutate(ks1(), both, ONE06));
    assert!(why.contains("Keyspace1.Standard2"), "{why}");
    let got = ok("nothing of it written", js.get_slice(ks1(), "b".into(), parent06("Standard1"), all06(10), ONE06));
    assert!(got.is_empty(), "{got:?}");
    let why = expect_ire06(
        "jsmith removes from Standard2",
        js.remove(ks1(), "k".into(), path06("Standard2", b("c")), ts(), ONE06),
    );
    assert!(why.contains("Keyspace1.Standard2"), "{why}");

    // dilbert: no grant on MusicApp, <rw> on its song_data; that is enough to log in to it.
    let mut dil = client06(&node, true);
    ok("dilbert logs in to MusicApp", dil.login(music(), credentials("dilbert", "nomoovertime")));
    ok("dilbert writes song_data", dil.insert(music(), "k".into(), path06("song_data", b("c")), b("d"), ts(), ONE06));
    let got = ok("dilbert reads song_data", dil.get(music(), "k".into(), path06("song_data", b("c")), ONE06));
    assert_eq!(got.column.map(|c| c.value), Some(b("d")));
    for (what, r) in [
        ("dilbert reads playlists", dil.get_count(music(), "k".into(), parent06("playlists"), ONE06).map(|_| ())),
        ("dilbert writes playlists", dil.insert(music(), "k".into(), path06("playlists", b("c")), b("d"), ts(), ONE06)),
    ] {
        let why = expect_ire06(what, r);
        assert!(why.contains("dilbert") && why.contains("MusicApp.playlists"), "{what}: {why}");
    }

    // Elvis Presley has nothing in MusicApp: 0.6's login says so.
    let mut elvis = client06(&node, true);
    expect06::<v::AuthorizationException, _>(
        "Elvis into MusicApp",
        elvis.login(music(), credentials("Elvis Presley", "graceland4evar")),
    );
}
