//! Collections and tuples, one cell per element.

use super::*;

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
