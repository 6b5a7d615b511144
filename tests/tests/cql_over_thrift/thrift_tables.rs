//! What each API sees of the other's tables: a Thrift column family as a compact table,
//! ALTER TABLE, and the system tables that describe the schema and the node as 3.11.

use super::*;

#[test]
fn a_thrift_column_family_is_a_compact_table_in_cql() {
    let mut cf = cf_def("Shared", "Standard1", "UTF8Type");
    cf.default_validation_class = Some("UTF8Type".into());
    cf.key_validation_class = Some("UTF8Type".into());
    let (node, mut c) = Node::start_with_keyspace(Config::default(), "Shared", vec![cf]);
    let parent = t::ColumnParent { column_family: "Standard1".into(), super_column: None };
    for (name, value) in [("b", "2"), ("a", "1")] {
        let col = t::Column { name: name.into(), value: Some(value.into()), timestamp: Some(5), ttl: None };
        c.insert(b"row".to_vec(), parent.clone(), col, t::ConsistencyLevel::ONE).expect("inserts");
    }
    let r = rows(&run(&mut c, "SELECT * FROM \"Shared\".\"Standard1\""));
    assert_eq!(r, [vec!["key=row", "column1=a", "value=1"], vec!["key=row", "column1=b", "value=2"]]);
    let one = rows(&run(&mut c, "SELECT value FROM \"Standard1\" WHERE key = 'row' AND column1 = 'b'"));
    assert_eq!(one, [vec!["value=2"]]);
    // Written from CQL, read back over Thrift.
    void(run(&mut c, "INSERT INTO \"Standard1\" (key, column1, value) VALUES ('row', 'c', '3')"));
    let slice = c
        .get_slice(
            b"row".to_vec(),
            parent,
            t::SlicePredicate { column_names: None, slice_range: Some(t::SliceRange::new(vec![], vec![], false, 100)) },
            t::ConsistencyLevel::ONE,
        )
        .expect("reads");
    let seen: Vec<(String, String)> = slice
        .iter()
        .map(|cosc| {
            let col = cosc.column.as_ref().expect("a column");
            (
                String::from_utf8_lossy(&col.name).into_owned(),
                String::from_utf8_lossy(col.value.as_deref().unwrap_or_default()).into_owned(),
            )
        })
        .collect();
    assert_eq!(seen, [("a".into(), "1".into()), ("b".into(), "2".into()), ("c".into(), "3".into())]);
    drop(node);
}

#[test]
fn alter_table_and_what_thrift_sees_of_cql_tables() {
    let node = Node::start_default();
    let mut c = node.client();
    void(run(&mut c, "CREATE KEYSPACE a WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"));
    void(run(&mut c, "USE a"));
    void(run(&mut c, "CREATE TABLE people (id int PRIMARY KEY, name text, age int)"));
    void(run(&mut c, "CREATE TABLE compacted (id int, at int, v text, PRIMARY KEY (id, at)) WITH COMPACT STORAGE"));
    void(run(&mut c, "INSERT INTO people (id, name, age) VALUES (1, 'ann', 30)"));
    void(run(&mut c, "ALTER TABLE people ADD email text"));
    void(run(&mut c, "INSERT INTO people (id, email) VALUES (2, 'b@x')"));
    assert_eq!(
        rows(&run(&mut c, "SELECT * FROM people WHERE id = 1")),
        [vec!["id=1", "age=30", "email=null", "name=ann"]]
    );
    // A dropped column's data stays gone when a column of that name comes back.
    void(run(&mut c, "ALTER TABLE people DROP age"));
    assert_eq!(refused(&mut c, "SELECT age FROM people"), "Undefined column name age");
    void(run(&mut c, "ALTER TABLE people ADD age int"));
    assert_eq!(rows(&run(&mut c, "SELECT age FROM people WHERE id = 1")), [vec!["age=null"]]);
    void(run(&mut c, "ALTER TABLE people RENAME id TO person"));
    assert_eq!(rows(&run(&mut c, "SELECT person, name FROM people WHERE person = 1")), [vec!["person=1", "name=ann"]]);
    void(run(&mut c, "ALTER TABLE people WITH comment = 'the people' AND gc_grace_seconds = 3600"));
    assert_eq!(refused(&mut c, "ALTER TABLE people DROP person"), "Cannot drop PRIMARY KEY part person");
    assert_eq!(
        refused(&mut c, "ALTER TABLE people RENAME name TO full_name"),
        "Cannot rename non PRIMARY KEY part name"
    );
    assert_eq!(
        refused(&mut c, "ALTER TABLE people ADD name text"),
        "Invalid column name name because it conflicts with an existing column"
    );
    assert_eq!(refused(&mut c, "ALTER TABLE compacted ADD w text"), "Cannot add new column to a COMPACT STORAGE table");

    // Thrift sees the COMPACT STORAGE table, not the CQL one (3.11's CASSANDRA-4377), and may
    // not change the CQL one.
    let ks = c.describe_keyspace("a".into()).expect("describes");
    let names: Vec<&str> = ks.cf_defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["compacted"]);
    let mut update = cf_def("a", "people", "UTF8Type");
    update.comment = Some("from thrift".into());
    let why = match c.system_update_column_family(update) {
        Err(thrift::Error::User(e)) => e.downcast::<t::InvalidRequestException>().expect("an IRE").why,
        other => panic!("{other:?}"),
    };
    assert_eq!(why, "Cannot modify CQL3 table people as it may break the schema. You should use cqlsh to modify CQL3 tables instead.");
    // The compact table's cells are plain Thrift columns: the clustering value names each.
    void(run(&mut c, "INSERT INTO compacted (id, at, v) VALUES (5, 9, 'nine')"));
    let got = c
        .get(
            5i32.to_be_bytes().to_vec(),
            t::ColumnPath {
                column_family: "compacted".into(),
                super_column: None,
                column: Some(9i32.to_be_bytes().to_vec()),
            },
            t::ConsistencyLevel::ONE,
        )
        .expect("a column");
    assert_eq!(got.column.expect("column").value.as_deref(), Some(&b"nine"[..]));
}

#[test]
fn system_tables_describe_the_schema_and_the_node_as_3_11() {
    let node = Node::start_default();
    let mut c = node.client();
    void(run(&mut c, "CREATE KEYSPACE sys WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"));
    void(run(
        &mut c,
        "CREATE TABLE sys.t (id int, c text, tags set<int>, v int static, PRIMARY KEY (id, c)) WITH CLUSTERING ORDER BY (c DESC)",
    ));
    void(run(&mut c, "ALTER TABLE sys.t DROP tags"));
    assert_eq!(
        json_of(
            &mut c,
            "SELECT JSON durable_writes, replication FROM system_schema.keyspaces WHERE keyspace_name = 'sys'"
        ),
        r#"{"durable_writes": true, "replication": {"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "1"}}"#
    );
    assert_eq!(
        json_of(
            &mut c,
            "SELECT JSON table_name, flags, gc_grace_seconds FROM system_schema.tables WHERE keyspace_name = 'sys'"
        ),
        r#"{"table_name": "t", "flags": ["compound"], "gc_grace_seconds": 864000}"#
    );
    assert_eq!(
        json_of(
            &mut c,
            "SELECT JSON caching FROM system_schema.tables WHERE keyspace_name = 'sys' AND table_name = 't'"
        ),
        r#"{"caching": {"keys": "ALL", "rows_per_partition": "NONE"}}"#
    );
    let columns = rows(&run(
        &mut c,
        "SELECT column_name, kind, position, clustering_order, type FROM system_schema.columns WHERE keyspace_name = 'sys' AND table_name = 't'",
    ));
    assert_eq!(
        columns,
        [
            vec!["column_name=c", "kind=clustering", "position=0", "clustering_order=desc", "type=text"],
            vec!["column_name=id", "kind=partition_key", "position=0", "clustering_order=none", "type=int"],
            vec!["column_name=v", "kind=static", "position=-1", "clustering_order=none", "type=int"],
        ]
    );
    assert_eq!(
        rows(&run(&mut c, "SELECT column_name, kind FROM system_schema.dropped_columns WHERE keyspace_name = 'sys'")),
        [vec!["column_name=tags", "kind=regular"]]
    );
    // A Thrift-made column family shows as 3.11 shows a compact table.
    c.set_keyspace("sys".into()).expect("set_keyspace");
    c.system_add_column_family(cf_def("sys", "Legacy", "UTF8Type")).expect("add a column family");
    assert_eq!(
        json_of(
            &mut c,
            "SELECT JSON flags FROM system_schema.tables WHERE keyspace_name = 'sys' AND table_name = 'Legacy'"
        ),
        r#"{"flags": ["dense"]}"#
    );
    let legacy = rows(&run(
        &mut c,
        "SELECT column_name, kind FROM system_schema.columns WHERE keyspace_name = 'sys' AND table_name = 'Legacy'",
    ));
    assert_eq!(
        legacy,
        [
            vec!["column_name=column1", "kind=clustering"],
            vec!["column_name=key", "kind=partition_key"],
            vec!["column_name=value", "kind=regular"]
        ]
    );
    // Every table a driver reads is there, empty where Sibyl has nothing to show.
    for table in ["types", "functions", "aggregates", "triggers", "views", "indexes"] {
        assert!(
            rows(&run(&mut c, &format!("SELECT * FROM system_schema.{table} WHERE keyspace_name = 'sys'"))).is_empty()
        );
    }

    // system.local: this node as the drivers read it.
    let local = json_of(
        &mut c,
        "SELECT JSON key, bootstrapped, cluster_name, cql_version, release_version, partitioner, tokens FROM system.local WHERE key = 'local'",
    );
    let local: serde_json::Value = serde_json::from_str(&local).expect("JSON");
    assert_eq!(local["key"], "local");
    assert_eq!(local["bootstrapped"], "COMPLETED");
    assert_eq!(local["cql_version"], "3.4.4");
    assert_eq!(local["release_version"], "3.11.10");
    assert_eq!(local["partitioner"], "org.apache.cassandra.dht.RandomPartitioner");
    assert_eq!(local["tokens"].as_array().map(Vec::len), Some(1), "{local}");
    let ring = node.tool(&["ring"]).ok().stdout;
    let token = local["tokens"][0].as_str().expect("a token");
    assert!(ring.contains(token), "system.local's token {token} is not in the ring:\n{ring}");
    let versions = rows(&run(&mut c, "SELECT schema_version FROM system.local"));
    assert_eq!(versions.len(), 1);
    assert!(rows(&run(&mut c, "SELECT * FROM system.peers")).is_empty(), "one node has no peers");
    // None of them takes writes.
    for statement in [
        "INSERT INTO system.local (key) VALUES ('x')",
        "INSERT INTO system_schema.types (keyspace_name, type_name) VALUES ('sys', 'x')",
    ] {
        assert!(refused(&mut c, statement).ends_with("keyspace is not user-modifiable"), "{statement}");
    }
}
