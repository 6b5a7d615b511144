//! CQL 3 through Thrift's `execute_cql3_query`, `prepare_cql3_query` and
//! `execute_prepared_cql3_query`, against a real node: seed 001's tables and queries as written,
//! the statements a user tries next, the errors Cassandra 3.11 gives, and one column family
//! seen from both APIs.

use std::io::Write;

use e2e::*;
use thrift_idl as t;

fn cql(c: &mut Client, text: &str) -> thrift::Result<t::CqlResult> {
    c.execute_cql3_query(text.as_bytes().to_vec(), t::Compression::NONE, t::ConsistencyLevel::ONE)
}

fn run(c: &mut Client, text: &str) -> t::CqlResult {
    match cql(c, text) {
        Ok(r) => r,
        Err(e) => panic!("{text}: {e:?}"),
    }
}

/// The message of the InvalidRequestException a statement answers.
fn refused(c: &mut Client, text: &str) -> String {
    match cql(c, text) {
        Err(thrift::Error::User(e)) => match e.downcast::<t::InvalidRequestException>() {
            Ok(ire) => ire.why,
            Err(other) => panic!("{text}: not an InvalidRequestException: {other:?}"),
        },
        other => panic!("{text}: expected an InvalidRequestException, got {other:?}"),
    }
}

/// Each row as `column=value` texts, values shown by the result's own value types.
fn rows(r: &t::CqlResult) -> Vec<Vec<String>> {
    assert_eq!(r.type_, t::CqlResultType::ROWS, "{r:?}");
    let schema = r.schema.as_ref().expect("ROWS carry their metadata");
    r.rows
        .as_ref()
        .expect("rows")
        .iter()
        .map(|row| {
            assert!(row.key.is_empty(), "CQL 3 rows have an empty key, as in 3.11");
            row.columns
                .iter()
                .map(|col| {
                    let ty = &schema.value_types[&col.name];
                    let name = String::from_utf8_lossy(&col.name);
                    let shown = match &col.value {
                        None => "null".to_string(),
                        Some(v) => show(ty, v),
                    };
                    format!("{name}={shown}")
                })
                .collect()
        })
        .collect()
}

fn show(ty: &str, v: &[u8]) -> String {
    let short = ty.rsplit('.').next().unwrap_or(ty);
    match short {
        "Int32Type" => i32::from_be_bytes(v.try_into().expect("4 bytes")).to_string(),
        "LongType" | "CounterColumnType" => i64::from_be_bytes(v.try_into().expect("8 bytes")).to_string(),
        "UTF8Type" | "AsciiType" => String::from_utf8(v.to_vec()).expect("text"),
        "BooleanType" => (v == [1]).to_string(),
        _ => v.iter().map(|b| format!("{b:02x}")).collect(),
    }
}

fn void(r: t::CqlResult) {
    assert_eq!(r.type_, t::CqlResultType::VOID, "{r:?}");
}

#[test]
fn seed_001_tables_and_queries_as_written() {
    let node = Node::start_default();
    let mut c = node.client();
    void(run(
        &mut c,
        "CREATE KEYSPACE magazines WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    ));
    void(run(&mut c, "USE magazines"));
    // The session keyspace is Thrift's too.
    assert!(c.describe_keyspace("magazines".into()).is_ok());

    void(run(&mut c, "CREATE TABLE magazine_name (id int PRIMARY KEY, name text, publicationFrequency text)"));
    void(run(
        &mut c,
        "CREATE TABLE magazine_publisher (publisher text,id int,name text, publicationFrequency text,\nPRIMARY KEY (publisher, id)) WITH CLUSTERING ORDER BY (id DESC)",
    ));
    let magazines = [
        (1, "Apache Cassandra Magazine", "Weekly", "Apache"),
        (2, "Storage Quarterly", "Quarterly", "Apache"),
        (3, "Rust Monthly", "Monthly", "Ferris"),
        (4, "Distributed Digest", "Monthly", "Apache"),
    ];
    for (id, name, frequency, publisher) in magazines {
        void(run(
            &mut c,
            &format!(
                "INSERT INTO magazine_name (id, name, publicationFrequency) VALUES ({id}, '{name}', '{frequency}')"
            ),
        ));
        void(run(
            &mut c,
            &format!(
                "INSERT INTO magazine_publisher (publisher, id, name, publicationFrequency) VALUES ('{publisher}', {id}, '{name}', '{frequency}')"
            ),
        ));
    }

    // Q1: every magazine with its frequency (token order: compared as a set).
    let mut q1 = rows(&run(&mut c, "SELECT id, name, publicationFrequency FROM magazine_name"));
    q1.sort();
    let mut expected: Vec<Vec<String>> = magazines
        .iter()
        .map(|(id, name, f, _)| vec![format!("id={id}"), format!("name={name}"), format!("publicationfrequency={f}")])
        .collect();
    expected.sort();
    assert_eq!(q1, expected);

    // Q2: one publisher's magazines, newest id first (the table's clustering order).
    let q2 = rows(&run(&mut c, "SELECT id, name FROM magazine_publisher WHERE publisher = 'Apache'"));
    assert_eq!(
        q2,
        [
            vec!["id=4".to_string(), "name=Distributed Digest".into()],
            vec!["id=2".into(), "name=Storage Quarterly".into()],
            vec!["id=1".into(), "name=Apache Cassandra Magazine".into()],
        ]
    );
    let ascending = rows(&run(&mut c, "SELECT id FROM magazine_publisher WHERE publisher = 'Apache' ORDER BY id ASC"));
    assert_eq!(ascending, [vec!["id=1"], vec!["id=2"], vec!["id=4"]]);
    let slice =
        rows(&run(&mut c, "SELECT id FROM magazine_publisher WHERE publisher = 'Apache' AND id < 4 AND id >= 2"));
    assert_eq!(slice, [vec!["id=2"]]);
    let limited = rows(&run(&mut c, "SELECT id FROM magazine_publisher WHERE publisher = 'Apache' LIMIT 2"));
    assert_eq!(limited, [vec!["id=4"], vec!["id=2"]]);
    let star = rows(&run(&mut c, "SELECT * FROM magazine_publisher WHERE publisher = 'Ferris'"));
    assert_eq!(star, [vec!["publisher=Ferris", "id=3", "name=Rust Monthly", "publicationfrequency=Monthly"]]);
    let counted = rows(&run(&mut c, "SELECT COUNT(*) FROM magazine_publisher WHERE publisher IN ('Apache', 'Ferris')"));
    assert_eq!(counted, [vec!["count=4"]]);

    // The seed's three versions of `t`; the third, as printed, lacks a comma after `c2 text`.
    void(run(&mut c, "CREATE TABLE t (\n   id int,\n   k int,\n   v text,\n   PRIMARY KEY (id)\n);"));
    void(run(&mut c, "DROP TABLE t"));
    void(run(&mut c, "CREATE TABLE t (\n   id int,\n   c text,\n   k int,\n   v text,\n   PRIMARY KEY (id,c)\n);"));
    void(run(&mut c, "DROP TABLE t"));
    let as_printed = "CREATE TABLE t (\n   id1 int,\n   id2 int,\n   c1 text,\n   c2 text\n   k int,\n   v text,\n   PRIMARY KEY ((id1,id2),c1,c2)\n);";
    let why = refused(&mut c, as_printed);
    assert!(why.starts_with("line 6:3 "), "{why}");
    assert!(why.contains("'k'"), "{why}");
    void(run(&mut c, &as_printed.replace("c2 text\n", "c2 text,\n")));
    for (id1, id2, c1, c2, k) in
        [(1, 2, "a", "x", 10), (1, 2, "a", "y", 11), (1, 2, "b", "x", 12), (1, 3, "a", "x", 13)]
    {
        void(run(
            &mut c,
            &format!("INSERT INTO t (id1, id2, c1, c2, k, v) VALUES ({id1}, {id2}, '{c1}', '{c2}', {k}, 'v{k}')"),
        ));
    }
    let partition = rows(&run(&mut c, "SELECT c1, c2, k FROM t WHERE id1 = 1 AND id2 = 2"));
    assert_eq!(partition, [vec!["c1=a", "c2=x", "k=10"], vec!["c1=a", "c2=y", "k=11"], vec!["c1=b", "c2=x", "k=12"]]);
    let prefix = rows(&run(&mut c, "SELECT k FROM t WHERE id1 = 1 AND id2 = 2 AND c1 = 'a'"));
    assert_eq!(prefix, [vec!["k=10"], vec!["k=11"]]);
    let why = refused(&mut c, "SELECT k FROM t WHERE id1 = 1");
    assert_eq!(why, "Partition key parts: id2 must be restricted as other parts are");
}

#[test]
fn writes_updates_deletes_and_what_they_leave() {
    let node = Node::start_default();
    let mut c = node.client();
    void(run(&mut c, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1} AND durable_writes = true"));
    void(run(&mut c, "CREATE TABLE ks.events (id int, at bigint, what text, n int, PRIMARY KEY (id, at))"));
    for at in 1..=5 {
        void(run(
            &mut c,
            &format!("INSERT INTO ks.events (id, at, what, n) VALUES (7, {at}, 'e{at}', {at}) USING TIMESTAMP 1000"),
        ));
    }
    // UPDATE writes no row marker: a row made only by UPDATE goes when its last cell does.
    void(run(&mut c, "UPDATE ks.events SET what = 'made by update' WHERE id = 8 AND at = 1"));
    assert_eq!(rows(&run(&mut c, "SELECT what FROM ks.events WHERE id = 8")), [vec!["what=made by update"]]);
    void(run(&mut c, "DELETE what FROM ks.events WHERE id = 8 AND at = 1"));
    assert!(rows(&run(&mut c, "SELECT * FROM ks.events WHERE id = 8")).is_empty());
    // An INSERTed row outlives its cells.
    void(run(&mut c, "DELETE what, n FROM ks.events WHERE id = 7 AND at = 1"));
    assert_eq!(
        rows(&run(&mut c, "SELECT at, what, n FROM ks.events WHERE id = 7 AND at = 1")),
        [vec!["at=1", "what=null", "n=null"]]
    );
    // A row deletion, an older write that stays deleted, then a newer one that comes back.
    void(run(&mut c, "DELETE FROM ks.events WHERE id = 7 AND at = 2"));
    void(run(&mut c, "INSERT INTO ks.events (id, at, what) VALUES (7, 2, 'too old') USING TIMESTAMP 999"));
    let ats = rows(&run(&mut c, "SELECT at FROM ks.events WHERE id = 7"));
    assert_eq!(ats, [vec!["at=1"], vec!["at=3"], vec!["at=4"], vec!["at=5"]]);
    let written = rows(&run(&mut c, "SELECT writetime(what) FROM ks.events WHERE id = 7 AND at = 3"));
    assert_eq!(written, [vec!["writetime(what)=1000"]]);
    // TTL: the remaining seconds, at most what was given.
    void(run(&mut c, "UPDATE ks.events USING TTL 600 SET n = 42 WHERE id = 7 AND at = 4"));
    let ttl = rows(&run(&mut c, "SELECT ttl(n), n FROM ks.events WHERE id = 7 AND at = 4"));
    let left: i32 = ttl[0][0].trim_start_matches("ttl(n)=").parse().expect("a number");
    assert!((590..=600).contains(&left), "{ttl:?}");
    assert_eq!(ttl[0][1], "n=42");
    // The whole partition.
    void(run(&mut c, "DELETE FROM ks.events WHERE id = 7"));
    assert!(rows(&run(&mut c, "SELECT * FROM ks.events WHERE id = 7")).is_empty());
    // IN on the partition key, several rows, filtering.
    for id in 1..=3 {
        void(run(&mut c, &format!("INSERT INTO ks.events (id, at, what, n) VALUES ({id}, 1, 'x', {id})")));
    }
    let some = rows(&run(&mut c, "SELECT id FROM ks.events WHERE id IN (3, 1)"));
    assert_eq!(some, [vec!["id=1"], vec!["id=3"]]);
    let why = refused(&mut c, "SELECT id FROM ks.events WHERE n = 2");
    assert!(why.starts_with("Cannot execute this query as it might involve data filtering"), "{why}");
    assert_eq!(rows(&run(&mut c, "SELECT id FROM ks.events WHERE n = 2 ALLOW FILTERING")), [vec!["id=2"]]);
    void(run(&mut c, "TRUNCATE ks.events"));
    assert!(rows(&run(&mut c, "SELECT * FROM ks.events")).is_empty());
    void(run(&mut c, "DROP KEYSPACE ks"));
    assert!(c.describe_keyspace("ks".into()).is_err());
}

#[test]
fn errors_name_the_problem_as_cassandra_does() {
    let node = Node::start_default();
    let mut c = node.client();
    let why = refused(&mut c, "SELECT * FROMM t");
    assert_eq!(why, "line 1:9 mismatched input 'FROMM' expecting K_FROM (SELECT * [FROMM]...)");
    assert_eq!(
        refused(&mut c, "SELECT * FROM t"),
        "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename"
    );
    assert_eq!(refused(&mut c, "USE nowhere"), "Keyspace 'nowhere' does not exist");
    void(run(&mut c, "CREATE KEYSPACE e WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"));
    assert_eq!(
        refused(&mut c, "CREATE KEYSPACE e WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"),
        "Keyspace e already exists"
    );
    void(run(
        &mut c,
        "CREATE KEYSPACE IF NOT EXISTS e WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    ));
    assert_eq!(
        refused(&mut c, "CREATE KEYSPACE f WITH replication = {'class': 'SimpleStrategy'}"),
        "SimpleStrategy requires a replication_factor strategy option."
    );
    void(run(&mut c, "USE e"));
    assert_eq!(refused(&mut c, "SELECT * FROM missing"), "unconfigured table missing");
    void(run(&mut c, "CREATE TABLE u (id int PRIMARY KEY, name text)"));
    assert_eq!(
        refused(&mut c, "CREATE TABLE u (id int PRIMARY KEY)"),
        "Cannot add already existing table \"u\" to keyspace \"e\""
    );
    assert_eq!(refused(&mut c, "CREATE TABLE v (id int, name text)"), "No PRIMARY KEY specifed (exactly one required)");
    assert_eq!(refused(&mut c, "CREATE TABLE v (id int PRIMARY KEY, id text)"), "Multiple definition of identifier id");
    assert_eq!(refused(&mut c, "CREATE TABLE v (id int PRIMARY KEY, n int) WITH foo = 1"), "Unknown property 'foo'");
    assert_eq!(
        refused(&mut c, "INSERT INTO u (id, name) VALUES ('one', 'x')"),
        "Invalid STRING constant ('one') for \"id\" of type int"
    );
    assert_eq!(refused(&mut c, "INSERT INTO u (name) VALUES ('x')"), "Some partition key parts are missing: id");
    assert_eq!(refused(&mut c, "INSERT INTO u (id, nope) VALUES (1, 'x')"), "Undefined column name nope");
    assert_eq!(refused(&mut c, "SELECT * FROM u WHERE id = ?"), "Invalid amount of bind variables");
    assert_eq!(refused(&mut c, "DROP TABLE gone"), "Cannot drop non existing table 'gone' in keyspace 'e'.");
    void(run(&mut c, "DROP TABLE IF EXISTS gone"));
    let why = refused(&mut c, "CREATE TYPE address (street text, city text)");
    assert!(why.contains("not supported yet"), "{why}");
    // CQL 2 is gone, as in 3.11.
    match c.execute_cql_query(b"SELECT * FROM u".to_vec(), t::Compression::NONE) {
        Err(thrift::Error::User(e)) => {
            let ire = e.downcast::<t::InvalidRequestException>().expect("an InvalidRequestException");
            assert_eq!(ire.why, "CQL2 has been removed in Cassandra 2.2. Please use CQL3 instead");
        }
        other => panic!("{other:?}"),
    }
    // IN lists whose combinations would be too many are refused, not read.
    void(run(&mut c, "CREATE TABLE w (a int, b int, v int, PRIMARY KEY ((a, b)))"));
    let many: Vec<String> = (0..300).map(|i| i.to_string()).collect();
    let huge = format!("SELECT * FROM w WHERE a IN ({0}) AND b IN ({0})", many.join(", "));
    let why = refused(&mut c, &huge);
    assert!(why.starts_with("IN restrictions make more than 65535 combinations"), "{why}");
    // The node still answers.
    assert!(rows(&run(&mut c, "SELECT * FROM u")).is_empty());
}

#[test]
fn prepared_statements_and_compressed_queries() {
    let node = Node::start_default();
    let mut c = node.client();
    void(run(&mut c, "CREATE KEYSPACE p WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"));
    void(run(&mut c, "CREATE TABLE p.kv (k text, c int, v blob, PRIMARY KEY (k, c))"));
    let insert = c
        .prepare_cql3_query(b"INSERT INTO p.kv (k, c, v) VALUES (?, ?, :v) USING TTL ?".to_vec(), t::Compression::NONE)
        .expect("prepares");
    assert_eq!(insert.count, 4);
    // The same text again finds the statement kept the first time (this once hung the node).
    let again = c
        .prepare_cql3_query(b"INSERT INTO p.kv (k, c, v) VALUES (?, ?, :v) USING TTL ?".to_vec(), t::Compression::NONE)
        .expect("prepares again");
    assert_eq!(again.item_id, insert.item_id);
    assert_eq!(insert.variable_names.as_deref(), Some(&["k".to_string(), "c".into(), "v".into(), "[ttl]".into()][..]));
    let types = insert.variable_types.clone().expect("types");
    assert_eq!(types[0], "org.apache.cassandra.db.marshal.UTF8Type");
    assert_eq!(types[1], "org.apache.cassandra.db.marshal.Int32Type");
    for i in 0..3i32 {
        let r = c
            .execute_prepared_cql3_query(
                insert.item_id,
                vec![b"key".to_vec(), i.to_be_bytes().to_vec(), vec![0xAB, i as u8], 0i32.to_be_bytes().to_vec()],
                t::ConsistencyLevel::ONE,
            )
            .expect("runs");
        void(r);
    }
    // Wrong count, wrong size: refused, with the reason.
    let short = c.execute_prepared_cql3_query(insert.item_id, vec![b"key".to_vec()], t::ConsistencyLevel::ONE);
    assert!(format!("{short:?}").contains("there were 4 markers(?) in CQL but 1 bound variables"), "{short:?}");
    let bad = c.execute_prepared_cql3_query(
        insert.item_id,
        vec![b"key".to_vec(), vec![1, 2], vec![], 0i32.to_be_bytes().to_vec()],
        t::ConsistencyLevel::ONE,
    );
    assert!(format!("{bad:?}").contains("InvalidRequestException"), "{bad:?}");
    let unknown = c.execute_prepared_cql3_query(123456, vec![], t::ConsistencyLevel::ONE);
    assert!(format!("{unknown:?}").contains("Prepared query with ID 123456 not found"), "{unknown:?}");

    let select = c
        .prepare_cql3_query(b"SELECT c, v FROM p.kv WHERE k = ? AND c > ? LIMIT ?".to_vec(), t::Compression::NONE)
        .expect("prepares");
    let r = c
        .execute_prepared_cql3_query(
            select.item_id,
            vec![b"key".to_vec(), 0i32.to_be_bytes().to_vec(), 5i32.to_be_bytes().to_vec()],
            t::ConsistencyLevel::ONE,
        )
        .expect("runs");
    assert_eq!(rows(&r), [vec!["c=1", "v=ab01"], vec!["c=2", "v=ab02"]]);

    // Compression.GZIP: the query deflated with zlib, as 3.11 inflates it.
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(b"SELECT COUNT(*) FROM p.kv WHERE k = 'key'").expect("compresses");
    let r = c
        .execute_cql3_query(z.finish().expect("compressed"), t::Compression::GZIP, t::ConsistencyLevel::ONE)
        .expect("runs");
    assert_eq!(rows(&r), [vec!["count=3"]]);
    let garbage = c.execute_cql3_query(b"not zlib".to_vec(), t::Compression::GZIP, t::ConsistencyLevel::ONE);
    assert!(format!("{garbage:?}").contains("InvalidRequestException"), "{garbage:?}");
    c.set_cql_version("3.4.4".into()).expect("accepted, as 3.11 ignores it");
}

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
fn lightweight_transactions_answer_with_the_applied_row() {
    let node = Node::start_default();
    let mut c = node.client();
    void(run(&mut c, "CREATE KEYSPACE l WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"));
    void(run(&mut c, "CREATE TABLE l.users (name text, rev int, email text, PRIMARY KEY (name, rev))"));
    let first = rows(&run(&mut c, "INSERT INTO l.users (name, rev, email) VALUES ('ann', 1, 'a@x') IF NOT EXISTS"));
    assert_eq!(first, [vec!["[applied]=true"]]);
    let again = rows(&run(&mut c, "INSERT INTO l.users (name, rev, email) VALUES ('ann', 1, 'other') IF NOT EXISTS"));
    assert_eq!(again, [vec!["[applied]=false", "name=ann", "rev=1", "email=a@x"]]);
    // Another row of the same partition does not exist yet.
    let other_row = rows(&run(&mut c, "INSERT INTO l.users (name, rev, email) VALUES ('ann', 2, 'b@x') IF NOT EXISTS"));
    assert_eq!(other_row, [vec!["[applied]=true"]]);
    let wrong = rows(&run(&mut c, "UPDATE l.users SET email = 'c@x' WHERE name = 'ann' AND rev = 1 IF email = 'nope'"));
    assert_eq!(wrong, [vec!["[applied]=false", "email=a@x"]]);
    let right = rows(&run(&mut c, "UPDATE l.users SET email = 'c@x' WHERE name = 'ann' AND rev = 1 IF email = 'a@x'"));
    assert_eq!(right, [vec!["[applied]=true"]]);
    let missing = rows(&run(&mut c, "UPDATE l.users SET email = 'd@x' WHERE name = 'bob' AND rev = 1 IF EXISTS"));
    assert_eq!(missing, [vec!["[applied]=false"]]);
    let gone = rows(&run(&mut c, "DELETE FROM l.users WHERE name = 'ann' AND rev = 2 IF EXISTS"));
    assert_eq!(gone, [vec!["[applied]=true"]]);
    let now = rows(&run(&mut c, "SELECT rev, email FROM l.users WHERE name = 'ann'"));
    assert_eq!(now, [vec!["rev=1", "email=c@x"]]);
    assert_eq!(
        refused(&mut c, "UPDATE l.users USING TIMESTAMP 5 SET email = 'x' WHERE name = 'ann' AND rev = 1 IF EXISTS"),
        "Cannot provide custom timestamp for conditional updates"
    );
    assert_eq!(
        refused(&mut c, "UPDATE l.users SET email = 'x' WHERE name IN ('ann', 'bob') AND rev = 1 IF EXISTS"),
        "IN on the partition key is not supported with conditional updates"
    );
}

#[test]
fn batches_apply_together_and_keep_3_11s_rules() {
    let node = Node::start_default();
    let mut c = node.client();
    void(run(&mut c, "CREATE KEYSPACE b WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"));
    void(run(&mut c, "USE b"));
    void(run(&mut c, "CREATE TABLE items (list text, pos int, item text, PRIMARY KEY (list, pos))"));
    void(run(&mut c, "CREATE TABLE hits (page text PRIMARY KEY, n counter)"));
    // One partition: atomic without a batchlog.
    void(run(
        &mut c,
        "BEGIN BATCH INSERT INTO items (list, pos, item) VALUES ('todo', 1, 'milk'); INSERT INTO items (list, pos, item) VALUES ('todo', 2, 'eggs'); DELETE FROM items WHERE list = 'todo' AND pos = 1; APPLY BATCH",
    ));
    // Same timestamp for the whole batch: the deletion wins over the insert it follows.
    assert_eq!(rows(&run(&mut c, "SELECT pos, item FROM items WHERE list = 'todo'")), [vec!["pos=2", "item=eggs"]]);
    void(run(
        &mut c,
        "BEGIN UNLOGGED BATCH USING TIMESTAMP 77 INSERT INTO items (list, pos, item) VALUES ('a', 1, 'x') INSERT INTO items (list, pos, item) VALUES ('b', 1, 'y') APPLY BATCH",
    ));
    let written = rows(&run(&mut c, "SELECT writetime(item) FROM items WHERE list IN ('a', 'b')"));
    assert_eq!(written, [vec!["writetime(item)=77"], vec!["writetime(item)=77"]]);
    let why = refused(
        &mut c,
        "BEGIN BATCH INSERT INTO items (list, pos, item) VALUES ('c', 1, 'x') INSERT INTO items (list, pos, item) VALUES ('d', 1, 'y') APPLY BATCH",
    );
    assert!(why.contains("not supported yet"), "{why}");
    assert!(
        rows(&run(&mut c, "SELECT * FROM items WHERE list IN ('c', 'd')")).is_empty(),
        "a refused batch writes nothing"
    );
    void(run(&mut c, "BEGIN COUNTER BATCH UPDATE hits SET n = n + 2 WHERE page = '/'; UPDATE hits SET n = n - 1 WHERE page = '/'; APPLY BATCH"));
    void(run(&mut c, "UPDATE hits SET n = n + 5 WHERE page = '/'"));
    assert_eq!(rows(&run(&mut c, "SELECT n FROM hits WHERE page = '/'")), [vec!["n=6"]]);
    assert_eq!(
        refused(&mut c, "BEGIN BATCH UPDATE hits SET n = n + 1 WHERE page = '/' APPLY BATCH"),
        "Cannot include a counter statement in a logged batch"
    );
    assert_eq!(
        refused(&mut c, "BEGIN COUNTER BATCH INSERT INTO items (list, pos, item) VALUES ('e', 1, 'x') APPLY BATCH"),
        "Cannot include non-counter statement in a counter batch"
    );
    assert_eq!(
        refused(&mut c, "INSERT INTO hits (page, n) VALUES ('/', 1)"),
        "INSERT statements are not allowed on counter tables, use UPDATE instead"
    );
}

#[test]
fn functions_aggregates_and_token_ranges() {
    let node = Node::start_default();
    let mut c = node.client();
    void(run(&mut c, "CREATE KEYSPACE fn WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"));
    void(run(&mut c, "CREATE TABLE fn.n (k int, c int, v int, t text, PRIMARY KEY (k, c))"));
    for (k, cl, v) in [(1, 1, 10), (1, 2, 20), (2, 1, 5), (3, 1, 7)] {
        void(run(&mut c, &format!("INSERT INTO fn.n (k, c, v, t) VALUES ({k}, {cl}, {v}, 't{v}')")));
    }
    let agg = rows(&run(&mut c, "SELECT max(v), min(v), sum(v), avg(v), count(v), count(*) FROM fn.n"));
    assert_eq!(
        agg,
        [vec![
            "system.max(v)=20",
            "system.min(v)=5",
            "system.sum(v)=42",
            "system.avg(v)=10",
            "system.count(v)=4",
            "count=4"
        ]]
    );
    let one = rows(&run(&mut c, "SELECT max(v) AS top FROM fn.n WHERE k = 1"));
    assert_eq!(one[0][0], "top=20");
    let blob = rows(&run(&mut c, "SELECT textAsBlob(t), cast(v AS text) FROM fn.n WHERE k = 2"));
    assert_eq!(blob, [vec!["system.textasblob(t)=7435", "cast(v as text)=5"]]);
    // Token ranges split the table between them, in token order.
    let tokens = rows(&run(&mut c, "SELECT token(k), k FROM fn.n"));
    assert_eq!(tokens.len(), 4);
    let mut keys_by_range: Vec<String> =
        rows(&run(&mut c, "SELECT k FROM fn.n WHERE token(k) <= 85070591730234615865843651857942052864"))
            .into_iter()
            .chain(rows(&run(&mut c, "SELECT k FROM fn.n WHERE token(k) > 85070591730234615865843651857942052864")))
            .map(|r| r[0].clone())
            .collect();
    keys_by_range.sort();
    assert_eq!(keys_by_range, ["k=1", "k=1", "k=2", "k=3"]);
    assert_eq!(
        refused(&mut c, "SELECT k, max(v) FROM fn.n"),
        "the select clause must either contain only aggregates or no aggregate"
    );
    // GROUP BY a prefix of the primary key: one row per group, the first row's other values.
    let grouped = rows(&run(&mut c, "SELECT k, count(*), sum(v) FROM fn.n WHERE k IN (1, 2) GROUP BY k"));
    assert_eq!(grouped, [vec!["k=1", "count=2", "system.sum(v)=30"], vec!["k=2", "count=1", "system.sum(v)=5"]]);
    let first = rows(&run(&mut c, "SELECT k, c FROM fn.n WHERE k = 1 GROUP BY k, c LIMIT 1"));
    assert_eq!(first, [vec!["k=1", "c=1"]]);
    assert_eq!(
        refused(&mut c, "SELECT count(*) FROM fn.n GROUP BY c"),
        "Group by currently only support groups of columns following their declared order in the PRIMARY KEY"
    );
    let why = refused(&mut c, "SELECT k FROM fn.n WHERE token(c) > 0");
    assert!(why.starts_with("The token() function must be applied to all partition key components"), "{why}");
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
fn static_columns_belong_to_the_partition() {
    let node = Node::start_default();
    let mut c = node.client();
    void(run(&mut c, "CREATE KEYSPACE s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"));
    void(run(&mut c, "USE s"));
    void(run(&mut c, "CREATE TABLE bills (user text, expense int, amount int, balance int STATIC, PRIMARY KEY (user, expense)) WITH CLUSTERING ORDER BY (expense DESC)"));
    // Static values alone: the partition shows as one row with null clustering.
    void(run(&mut c, "INSERT INTO bills (user, balance) VALUES ('ann', 100)"));
    assert_eq!(
        rows(&run(&mut c, "SELECT * FROM bills WHERE user = 'ann'")),
        [vec!["user=ann", "expense=null", "amount=null", "balance=100"]]
    );
    void(run(&mut c, "INSERT INTO bills (user, expense, amount) VALUES ('ann', 1, 10)"));
    void(run(&mut c, "INSERT INTO bills (user, expense, amount, balance) VALUES ('ann', 2, 20, 70)"));
    assert_eq!(
        rows(&run(&mut c, "SELECT expense, amount, balance FROM bills WHERE user = 'ann'")),
        [vec!["expense=2", "amount=20", "balance=70"], vec!["expense=1", "amount=10", "balance=70"]]
    );
    // A slice of rows still carries the static value.
    assert_eq!(
        rows(&run(&mut c, "SELECT expense, balance FROM bills WHERE user = 'ann' AND expense < 2")),
        [vec!["expense=1", "balance=70"]]
    );
    void(run(&mut c, "UPDATE bills SET balance = 50 WHERE user = 'ann'"));
    assert_eq!(rows(&run(&mut c, "SELECT DISTINCT user, balance FROM bills")), [vec!["user=ann", "balance=50"]]);
    void(run(&mut c, "DELETE balance FROM bills WHERE user = 'ann'"));
    assert_eq!(
        rows(&run(&mut c, "SELECT balance FROM bills WHERE user = 'ann' AND expense = 1")),
        [vec!["balance=null"]]
    );
    assert_eq!(
        refused(&mut c, "UPDATE bills SET balance = 1 WHERE user = 'ann' AND expense = 1 AND amount = 3"),
        "Non PRIMARY KEY columns found in where clause: amount"
    );
    assert!(refused(&mut c, "CREATE TABLE bad (k int PRIMARY KEY, s int STATIC)")
        .starts_with("Static columns are only useful"));
    assert_eq!(
        refused(&mut c, "CREATE TABLE bad (k int, c int, s int STATIC, PRIMARY KEY (k, c)) WITH COMPACT STORAGE"),
        "Static columns are not allowed in COMPACT STORAGE tables"
    );
}

#[test]
fn a_materialized_view_follows_its_base() {
    let node = Node::start_default();
    let mut c = node.client();
    void(run(&mut c, "CREATE KEYSPACE mv WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"));
    void(run(&mut c, "USE mv"));
    // Seed 001's Q1 table, then a view of it by frequency, built from the rows already there.
    void(run(&mut c, "CREATE TABLE magazine_name (id int PRIMARY KEY, name text, publicationFrequency text)"));
    for (id, name, f) in
        [(1, "Cassandra Weekly", "Weekly"), (2, "Rust Monthly", "Monthly"), (3, "Storage Weekly", "Weekly")]
    {
        void(run(
            &mut c,
            &format!("INSERT INTO magazine_name (id, name, publicationFrequency) VALUES ({id}, '{name}', '{f}')"),
        ));
    }
    void(run(
        &mut c,
        "CREATE MATERIALIZED VIEW magazine_by_frequency AS SELECT * FROM magazine_name WHERE publicationFrequency IS NOT NULL AND id IS NOT NULL PRIMARY KEY (publicationFrequency, id)",
    ));
    let weekly = "SELECT id, name FROM magazine_by_frequency WHERE publicationFrequency = 'Weekly'";
    assert_eq!(
        rows(&run(&mut c, weekly)),
        [vec!["id=1", "name=Cassandra Weekly"], vec!["id=3", "name=Storage Weekly"]]
    );
    // Insert, update of a value, update of the view's key, delete: the view follows each.
    void(run(
        &mut c,
        "INSERT INTO magazine_name (id, name, publicationFrequency) VALUES (4, 'Paxos Weekly', 'Weekly')",
    ));
    void(run(&mut c, "UPDATE magazine_name SET name = 'Cassandra Weekly II' WHERE id = 1"));
    void(run(&mut c, "UPDATE magazine_name SET publicationFrequency = 'Monthly' WHERE id = 3"));
    void(run(&mut c, "DELETE FROM magazine_name WHERE id = 4"));
    assert_eq!(rows(&run(&mut c, weekly)), [vec!["id=1", "name=Cassandra Weekly II"]]);
    assert_eq!(
        rows(&run(&mut c, "SELECT id FROM magazine_by_frequency WHERE publicationFrequency = 'Monthly'")),
        [vec!["id=2"], vec!["id=3"]]
    );
    // A base row whose view key goes null leaves the view.
    void(run(&mut c, "DELETE publicationFrequency FROM magazine_name WHERE id = 2"));
    assert_eq!(
        rows(&run(&mut c, "SELECT id FROM magazine_by_frequency WHERE publicationFrequency = 'Monthly'")),
        [vec!["id=3"]]
    );
    assert_eq!(
        refused(&mut c, "INSERT INTO magazine_by_frequency (publicationFrequency, id, name) VALUES ('Daily', 9, 'x')"),
        "Cannot directly modify a materialized view (magazine_by_frequency)"
    );
    assert_eq!(
        refused(&mut c, "DROP TABLE magazine_name"),
        "Cannot drop table when materialized views still depend on it ({mv.magazine_by_frequency})"
    );
    assert_eq!(
        refused(
            &mut c,
            "CREATE MATERIALIZED VIEW bad AS SELECT * FROM magazine_name WHERE id IS NOT NULL PRIMARY KEY (name, id)"
        ),
        "Primary key column 'name' is required to be filtered by 'IS NOT NULL'"
    );
    assert_eq!(
        refused(&mut c, "TRUNCATE magazine_by_frequency"),
        "Cannot TRUNCATE materialized view directly; must truncate base table instead"
    );
    assert_eq!(
        refused(&mut c, "ALTER TABLE magazine_by_frequency WITH comment = 'x'"),
        "Cannot use ALTER TABLE on Materialized View"
    );
    void(run(&mut c, "DROP MATERIALIZED VIEW magazine_by_frequency"));
    void(run(&mut c, "DROP TABLE magazine_name"));
}

#[test]
fn multi_column_relations_page_through_clustering() {
    let node = Node::start_default();
    let mut c = node.client();
    void(run(&mut c, "CREATE KEYSPACE mc WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"));
    void(run(&mut c, "CREATE TABLE mc.t (k int, a int, b int, v int, PRIMARY KEY (k, a, b)) WITH CLUSTERING ORDER BY (a ASC, b DESC)"));
    for a in 1..=3 {
        for b in 1..=3 {
            void(run(&mut c, &format!("INSERT INTO mc.t (k, a, b, v) VALUES (0, {a}, {b}, {})", a * 10 + b)));
        }
    }
    // A driver's next page: the rows after (2, 2) in value order, then shown in the table's.
    let after = rows(&run(&mut c, "SELECT a, b FROM mc.t WHERE k = 0 AND (a, b) > (2, 2) AND (a, b) <= (3, 2)"));
    assert_eq!(after, [vec!["a=2", "b=3"], vec!["a=3", "b=2"], vec!["a=3", "b=1"]]);
    let picked = rows(&run(&mut c, "SELECT v FROM mc.t WHERE k = 0 AND (a, b) IN ((1, 1), (3, 3))"));
    assert_eq!(picked, [vec!["v=11"], vec!["v=33"]]);
    let exact = rows(&run(&mut c, "SELECT v FROM mc.t WHERE k = 0 AND (a, b) = (2, 1)"));
    assert_eq!(exact, [vec!["v=21"]]);
    assert_eq!(
        refused(&mut c, "SELECT v FROM mc.t WHERE k = 0 AND (b, a) > (1, 1)"),
        "Clustering columns must appear in the PRIMARY KEY order in multi-column relations"
    );
    assert_eq!(
        refused(&mut c, "SELECT v FROM mc.t WHERE k = 0 AND a = 1 AND (a, b) > (1, 1)"),
        "Mixing single column relations and multi column relations on clustering columns is not allowed"
    );
}

#[test]
fn select_json_and_insert_json() {
    let node = Node::start_default();
    let mut c = node.client();
    void(run(&mut c, "CREATE KEYSPACE js WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"));
    void(run(
        &mut c,
        "CREATE TABLE js.t (id int PRIMARY KEY, \"Name\" text, at timestamp, ok boolean, data blob, score double)",
    ));
    void(run(
        &mut c,
        "INSERT INTO js.t JSON '{\"id\": 1, \"\\\"Name\\\"\": \"Ann \\\"A\\\"\", \"at\": \"2011-02-03 04:05:00+0000\", \"ok\": true, \"data\": \"0xcafe\", \"score\": 1.5}'",
    ));
    let got = rows(&run(&mut c, "SELECT JSON id, \"Name\", at, ok, data, score FROM js.t WHERE id = 1"));
    assert_eq!(
        got,
        [vec![
            r#"[json]={"id": 1, "\"Name\"": "Ann \"A\"", "at": "2011-02-03 04:05:00.000Z", "ok": true, "data": "0xcafe", "score": 1.5}"#
        ]]
    );
    // Left-out columns are null by default, untouched with DEFAULT UNSET.
    void(run(&mut c, "INSERT INTO js.t JSON '{\"id\": 1, \"score\": 2}' DEFAULT UNSET"));
    assert_eq!(
        rows(&run(&mut c, "SELECT ok, score FROM js.t WHERE id = 1")),
        [vec!["ok=true", "score=4000000000000000"]]
    );
    void(run(&mut c, "INSERT INTO js.t JSON '{\"id\": 1}'"));
    assert_eq!(rows(&run(&mut c, "SELECT ok FROM js.t WHERE id = 1")), [vec!["ok=null"]]);
    assert_eq!(
        refused(&mut c, "INSERT INTO js.t JSON '{\"id\": 2, \"nope\": 1}'"),
        "JSON values map contains unrecognized column: nope"
    );
    let why = refused(&mut c, "INSERT INTO js.t JSON '{\"id\": \"two\"}'");
    assert!(why.starts_with("Error decoding JSON value for id"), "{why}");
}

/// One column's value of a one-row SELECT JSON.
fn json_of(c: &mut Client, query: &str) -> String {
    let got = rows(&run(c, query));
    assert_eq!(got.len(), 1, "{query}: {got:?}");
    got[0][0].strip_prefix("[json]=").expect("a [json] column").to_string()
}

#[test]
fn collections_and_tuples_one_cell_per_element() {
    let node = Node::start_default();
    let mut c = node.client();
    void(run(&mut c, "CREATE KEYSPACE col WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"));
    void(run(
        &mut c,
        "CREATE TABLE col.u (id int, n int, tags set<int>, l list<text>, m map<text, int>, f frozen<list<int>>, \
         t tuple<int, text>, s map<int, text> static, PRIMARY KEY (id, n))",
    ));
    void(run(
        &mut c,
        "INSERT INTO col.u (id, n, tags, l, m, f, t, s) VALUES (1, 1, {3, -1, 2, 3}, ['b', 'a'], {'z': 1, 'a': 2}, [5, 4], (7, 'x'), {2: 'two'})",
    ));
    // A set sorts by its element type (negative ints first) and keeps no repeats; a map by its
    // key; a list keeps the order written.
    let all = "SELECT JSON tags, l, m, f, t, s FROM col.u WHERE id = 1 AND n = 1";
    assert_eq!(
        json_of(&mut c, all),
        r#"{"tags": [-1, 2, 3], "l": ["b", "a"], "m": {"a": 2, "z": 1}, "f": [5, 4], "t": [7, "x"], "s": {"2": "two"}}"#
    );
    // The protocol's serialization: an int count, then each element with an int length.
    let raw = run(&mut c, "SELECT tags FROM col.u WHERE id = 1 AND n = 1");
    let value = raw.rows.as_ref().expect("rows")[0].columns[0].value.clone().expect("a value");
    let mut expected = 3i32.to_be_bytes().to_vec();
    for v in [-1i32, 2, 3] {
        expected.extend(4i32.to_be_bytes());
        expected.extend(v.to_be_bytes());
    }
    assert_eq!(value, expected);
    let schema = raw.schema.as_ref().expect("metadata");
    assert_eq!(
        schema.value_types[&b"tags".to_vec()],
        "org.apache.cassandra.db.marshal.SetType(org.apache.cassandra.db.marshal.Int32Type)"
    );

    // Element operations.
    void(run(&mut c, "UPDATE col.u SET tags = tags + {-5, 10}, l = l + ['c'], m['q'] = 9 WHERE id = 1 AND n = 1"));
    void(run(&mut c, "UPDATE col.u SET l = ['front'] + l WHERE id = 1 AND n = 1"));
    void(run(&mut c, "UPDATE col.u SET tags = tags - {2}, m = m - {'z'}, s[3] = 'three' WHERE id = 1 AND n = 1"));
    void(run(&mut c, "DELETE m['a'] FROM col.u WHERE id = 1 AND n = 1"));
    assert_eq!(
        json_of(&mut c, all),
        r#"{"tags": [-5, -1, 3, 10], "l": ["front", "b", "a", "c"], "m": {"q": 9}, "f": [5, 4], "t": [7, "x"], "s": {"2": "two", "3": "three"}}"#
    );
    // A second row shares the static map; its own collections start empty (null).
    void(run(&mut c, "INSERT INTO col.u (id, n) VALUES (1, 2)"));
    assert_eq!(
        json_of(&mut c, "SELECT JSON tags, s FROM col.u WHERE id = 1 AND n = 2"),
        r#"{"tags": null, "s": {"2": "two", "3": "three"}}"#
    );
    // Setting a whole collection replaces it; an empty one is null; DELETE removes it.
    void(run(&mut c, "UPDATE col.u SET l = ['only'], tags = {} WHERE id = 1 AND n = 1"));
    void(run(&mut c, "DELETE m FROM col.u WHERE id = 1 AND n = 1"));
    assert_eq!(
        json_of(&mut c, "SELECT JSON tags, l, m FROM col.u WHERE id = 1 AND n = 1"),
        r#"{"tags": null, "l": ["only"], "m": null}"#
    );

    // Filters and conditions see the whole collection.
    void(run(&mut c, "UPDATE col.u SET tags = {1, 2}, m = {'k': 1} WHERE id = 1 AND n = 2"));
    assert_eq!(rows(&run(&mut c, "SELECT n FROM col.u WHERE tags CONTAINS 2 ALLOW FILTERING")), [vec!["n=2"]]);
    assert_eq!(
        rows(&run(&mut c, "SELECT n FROM col.u WHERE m CONTAINS KEY 'k' AND m CONTAINS 1 ALLOW FILTERING")),
        [vec!["n=2"]]
    );
    assert!(rows(&run(&mut c, "SELECT n FROM col.u WHERE tags CONTAINS 7 ALLOW FILTERING")).is_empty());
    let r = run(&mut c, "UPDATE col.u SET tags = tags + {3} WHERE id = 1 AND n = 2 IF tags = {2, 1}");
    assert_eq!(rows(&r), [vec!["[applied]=true"]]);
    let r = run(&mut c, "UPDATE col.u SET tags = tags + {4} WHERE id = 1 AND n = 2 IF tags = {1, 2}");
    assert_eq!(rows(&r)[0][0], "[applied]=false");

    // Prepared: a marker takes a whole collection in the protocol's serialization.
    let p = c
        .prepare_cql3_query(b"UPDATE col.u SET tags = ? WHERE id = 1 AND n = ?".to_vec(), t::Compression::NONE)
        .expect("prepares");
    assert_eq!(
        p.variable_types.as_ref().expect("types")[0],
        "org.apache.cassandra.db.marshal.SetType(org.apache.cassandra.db.marshal.Int32Type)"
    );
    let mut set = 1i32.to_be_bytes().to_vec();
    set.extend(4i32.to_be_bytes());
    set.extend(42i32.to_be_bytes());
    c.execute_prepared_cql3_query(p.item_id, vec![set, 2i32.to_be_bytes().to_vec()], t::ConsistencyLevel::ONE)
        .expect("executes");
    assert_eq!(json_of(&mut c, "SELECT JSON tags FROM col.u WHERE id = 1 AND n = 2"), r#"{"tags": [42]}"#);
    let bad =
        c.execute_prepared_cql3_query(p.item_id, vec![vec![0, 0, 0, 9], vec![0, 0, 0, 2]], t::ConsistencyLevel::ONE);
    assert!(format!("{bad:?}").contains("Not enough bytes to read a set"), "{bad:?}");

    // Survives a flush and a compaction as written.
    node.tool(&["flush", "col"]).ok();
    void(run(&mut c, "UPDATE col.u SET tags = tags + {-7} WHERE id = 1 AND n = 2"));
    node.tool(&["flush", "col"]).ok();
    node.tool(&["compact", "col"]).ok();
    assert_eq!(json_of(&mut c, "SELECT JSON tags FROM col.u WHERE id = 1 AND n = 2"), r#"{"tags": [-7, 42]}"#);

    // INSERT JSON takes arrays and objects.
    void(run(
        &mut c,
        r#"INSERT INTO col.u JSON '{"id": 2, "n": 1, "tags": [3, 1, 3], "m": {"b": 2}, "t": [1, null]}'"#,
    ));
    assert_eq!(
        json_of(&mut c, "SELECT JSON tags, m, t FROM col.u WHERE id = 2 AND n = 1"),
        r#"{"tags": [1, 3], "m": {"b": 2}, "t": [1, null]}"#
    );

    // List operations by index or value read the list first.
    void(run(&mut c, "UPDATE col.u SET l = ['a', 'b', 'c', 'b'] WHERE id = 5 AND n = 1"));
    void(run(&mut c, "UPDATE col.u SET l[1] = 'B' WHERE id = 5 AND n = 1"));
    void(run(&mut c, "DELETE l[0] FROM col.u WHERE id = 5 AND n = 1"));
    assert_eq!(json_of(&mut c, "SELECT JSON l FROM col.u WHERE id = 5 AND n = 1"), r#"{"l": ["B", "c", "b"]}"#);
    void(run(&mut c, "UPDATE col.u SET l = l - ['b', 'x'] WHERE id = 5 AND n = 1"));
    assert_eq!(json_of(&mut c, "SELECT JSON l FROM col.u WHERE id = 5 AND n = 1"), r#"{"l": ["B", "c"]}"#);
    assert_eq!(
        refused(&mut c, "UPDATE col.u SET l[2] = 'x' WHERE id = 5 AND n = 1"),
        "List index 2 out of bound, list has size 2"
    );
    assert_eq!(
        refused(&mut c, "UPDATE col.u SET l[0] = 'x' WHERE id = 6 AND n = 1"),
        "Attempted to set an element on a list which is null"
    );
    assert_eq!(
        refused(&mut c, "DELETE l[0] FROM col.u WHERE id = 6 AND n = 1"),
        "Attempted to delete an element from a list which is null"
    );

    // 3.11's refusals.
    for (statement, why) in [
        (
            "CREATE TABLE col.bad (id list<int> PRIMARY KEY, v int)",
            "Invalid non-frozen collection type for PRIMARY KEY component id",
        ),
        (
            "CREATE TABLE col.bad (id int PRIMARY KEY, v list<list<int>>)",
            "Non-frozen collections are not allowed inside collections: list<list<int>>",
        ),
        (
            "CREATE TABLE col.bad (id int PRIMARY KEY, v set<counter>)",
            "Counters are not allowed inside collections: set<counter>",
        ),
        (
            "CREATE TABLE col.bad (id int PRIMARY KEY, v frozen<int>)",
            "frozen<> is only allowed on collections, tuples, and user-defined types (got int)",
        ),
        ("INSERT INTO col.u (id, n, tags) VALUES (3, 1, {1, null})", "null is not supported inside collections"),
        ("INSERT INTO col.u (id, n, tags) VALUES (3, 1, [1])", "Invalid list literal for tags of type set<int>"),
        (
            "INSERT INTO col.u (id, n, t) VALUES (3, 1, (1, 'a', 3))",
            "Invalid tuple literal for t: too many elements. Type frozen<tuple<int, text>> expects 2 but got 3",
        ),
        (
            "UPDATE col.u SET f = f + [1] WHERE id = 1 AND n = 1",
            "Invalid operation (f = f + [1]) for frozen collection column f",
        ),
        (
            "UPDATE col.u SET tags = {1} + tags WHERE id = 1 AND n = 1",
            "Invalid operation (tags = {1} + tags) for non list column tags",
        ),
        ("SELECT writetime(tags) FROM col.u", "Cannot use selection function writeTime on collections"),
        (
            "SELECT * FROM col.u WHERE tags = {1} ALLOW FILTERING",
            "Collection column 'tags' (set<int>) cannot be restricted by a '=' relation",
        ),
        ("SELECT * FROM col.u WHERE f CONTAINS KEY 1 ALLOW FILTERING", "Cannot use CONTAINS KEY on non-map column f"),
        ("SELECT * FROM col.u WHERE n CONTAINS 1 ALLOW FILTERING", "Cannot use CONTAINS on non-collection column n"),
    ] {
        assert_eq!(refused(&mut c, statement), why, "{statement}");
    }
    // Past 65,535 elements a literal is refused, not stored.
    let huge: Vec<String> = (0..65_536).map(|i| i.to_string()).collect();
    let why = refused(&mut c, &format!("UPDATE col.u SET tags = {{{}}} WHERE id = 9 AND n = 9", huge.join(",")));
    assert!(why.contains("65535"), "{why}");
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
