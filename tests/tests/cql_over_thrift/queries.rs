//! Seed 001's tables and queries as written, writes and what they leave, Cassandra's
//! errors, prepared statements and compressed queries.

use std::io::Write;

use super::*;

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
    // What Sibyl cannot do yet says so, and changes nothing.
    let why = refused(&mut c, "ALTER TABLE u WITH cdc = true");
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
