//! Lightweight transactions, batches, functions and token ranges, static columns,
//! materialized views, multi-column relations, and JSON.

use super::*;

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

    // `IF c IN ?` binds a list of the column's type, named `in(c)` as 3.11 names it.
    let p = c
        .prepare_cql3_query(
            b"UPDATE l.users SET email = ? WHERE name = 'ann' AND rev = 1 IF email IN ?".to_vec(),
            t::Compression::NONE,
        )
        .expect("prepares");
    assert_eq!(p.variable_names.clone().unwrap_or_default(), ["email", "in(email)"]);
    assert_eq!(
        p.variable_types.as_ref().expect("types")[1],
        "org.apache.cassandra.db.marshal.ListType(org.apache.cassandra.db.marshal.UTF8Type)"
    );
    let update = |c: &mut Client, email: &str, among: &[&str]| {
        let r = c
            .execute_prepared_cql3_query(
                p.item_id,
                vec![email.as_bytes().to_vec(), e2e::native::text_list(among)],
                t::ConsistencyLevel::ONE,
            )
            .expect("executes");
        rows(&r)[0][0].clone()
    };
    assert_eq!(update(&mut c, "e@x", &["a@x", "b@x"]), "[applied]=false");
    assert_eq!(update(&mut c, "e@x", &[]), "[applied]=false");
    assert_eq!(update(&mut c, "e@x", &["z@x", "c@x"]), "[applied]=true");
    assert_eq!(rows(&run(&mut c, "SELECT email FROM l.users WHERE name = 'ann' AND rev = 1")), [vec!["email=e@x"]]);
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
