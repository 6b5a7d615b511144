//! trace_next_query returns a time-based session id, and the next request on that connection is
//! traced (to the server log, under that id); the one after it is not.

use e2e::*;
use thrift_idl::TCassandraSyncClient;

#[test]
fn next_query_is_traced_under_the_returned_session_id() {
    let node = Node::start(Config::random());
    let mut c = node.client();
    create_keyspace(&mut c, "Traced", vec![cf_def("Traced", "Standard1", "UTF8Type")]);
    ok("set_keyspace", c.set_keyspace("Traced".into()));
    let id = ok("trace_next_query", c.trace_next_query());
    assert_eq!(id.len(), 16, "a session id is a UUID");
    let uuid = uuid::Uuid::from_slice(&id).expect("uuid");
    assert_eq!(uuid.get_version_num(), 1, "trace sessions are time-based UUIDs");
    ok("insert", c.insert(b("k"), parent("Standard1"), column(b("c"), b("v"), ts()), ONE));
    ok("get_slice", c.get_slice(b("k"), parent("Standard1"), all(10), ONE));
    let log = node.log();
    let traced: Vec<&str> = log.lines().filter(|l| l.contains("trace: request complete")).collect();
    assert_eq!(traced.len(), 1, "exactly the next request is traced:\n{log}");
    assert!(traced[0].contains(&uuid.to_string()) && traced[0].contains("insert"), "{}", traced[0]);
}
