//! The schema is kept by the engine in the `system` keyspace: a Thrift client can read it there
//! (but not write it), and a schema change shows up in it.

use e2e::*;
use thrift_idl::TCassandraSyncClient;

#[test]
fn schema_is_stored_in_the_system_keyspace() {
    let node = Node::start(Config::random());
    let mut c = node.client();
    create_keyspace(&mut c, "Shop", vec![cf_def("Shop", "Orders", "UTF8Type")]);
    let names: Vec<String> = ok("describe_keyspaces", c.describe_keyspaces()).into_iter().map(|k| k.name).collect();
    assert!(names.contains(&"system".to_string()) && names.contains(&"Shop".to_string()), "{names:?}");

    ok("set_keyspace system", c.set_keyspace("system".into()));
    // One row per keyspace in schema_keyspaces (its attributes), and one cell per column family
    // in schema_columnfamilies (its definition).
    let row = ok("get_slice", c.get_slice(b("Shop"), parent("schema_keyspaces"), all(10), ONE));
    let cols = str_pairs(&row);
    let (name, json) = cols.first().expect("the keyspace's row");
    assert_eq!(name, "attributes");
    assert!(json.contains("SimpleStrategy"), "{json}");
    let row = ok("get_slice", c.get_slice(b("Shop"), parent("schema_columnfamilies"), all(10), ONE));
    let cols = str_pairs(&row);
    let (name, json) = cols.first().expect("the column family's cell");
    assert_eq!(name, "Orders");
    assert!(json.contains("UTF8Type"), "{json}");

    expect_ire_containing(
        "insert into system",
        c.insert(b("Shop"), parent("schema_keyspaces"), column(b("definition"), b("{}"), ts()), ONE),
        &["not user-modifiable"],
    );
    expect_ire_containing("drop system", c.system_drop_keyspace("system".into()), &["system"]);

    // A dropped keyspace's rows are deleted.
    ok("drop Shop", c.system_drop_keyspace("Shop".into()));
    for cf in ["schema_keyspaces", "schema_columnfamilies"] {
        let row = ok("get_slice", c.get_slice(b("Shop"), parent(cf), all(10), ONE));
        assert!(row.is_empty(), "{cf}: {row:?}");
    }
}
