//! SimpleAuthenticator as in Cassandra 0.6/0.7: no data access before login, wrong credentials
//! give AuthenticationException, keyspaces a user may not use give InvalidRequestException (only
//! `login` declares AuthorizationException in API 20.1.0; Cassandra reports refusals elsewhere as
//! InvalidRequestException).

use e2e::*;
use thrift_idl as t;
use thrift_idl::TCassandraSyncClient;

fn credentials(user: &str, password: &str) -> t::AuthenticationRequest {
    let mut m = std::collections::BTreeMap::new();
    m.insert("username".to_string(), user.to_string());
    m.insert("password".to_string(), password.to_string());
    t::AuthenticationRequest::new(m)
}

fn is_authentication_error<T: std::fmt::Debug>(r: thrift::Result<T>) -> bool {
    matches!(r, Err(thrift::Error::User(e)) if e.downcast_ref::<t::AuthenticationException>().is_some())
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

    let mut anon = node.client();
    expect_ire_containing("set_keyspace before login", anon.set_keyspace("Open".into()), &["logged in"]);
    assert!(is_authentication_error(anon.login(credentials("alice", "wrong"))), "bad password must be refused");
    assert!(is_authentication_error(anon.login(credentials("mallory", "x"))), "unknown user must be refused");

    let mut bob = node.client();
    ok("login bob", bob.login(credentials("bob", "builder")));
    ok("set_keyspace Open", bob.set_keyspace("Open".into()));
    ok("insert", bob.insert(b("k"), parent("Standard1"), column(b("c"), b("v"), ts()), ONE));
    expect_ire_containing("bob uses Secret", bob.set_keyspace("Secret".into()), &["bob", "Secret"]);
    let ks = t::KsDef::new("BobsOwn".to_string(), "SimpleStrategy".to_string(), None, None, vec![], None);
    expect_ire_containing("bob creates a keyspace", bob.system_add_keyspace(ks.clone()), &["bob", "keyspaces"]);
    let mut anon = node.client();
    expect_ire_containing("describe_keyspaces before login", anon.describe_keyspaces(), &["logged in"]);

    let mut alice = node.client();
    ok("login alice", alice.login(credentials("alice", "wonderland")));
    ok("set_keyspace Secret", alice.set_keyspace("Secret".into()));
    let mut ks = ks;
    ks.strategy_options = Some([("replication_factor".to_string(), "1".to_string())].into_iter().collect());
    ok("alice creates a keyspace", alice.system_add_keyspace(ks));
}
