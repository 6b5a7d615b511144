//! SELECT in every form of CQL 3.4.4, the samples of CQL.textile, and the WHERE clause.

mod common;

use common::parsed;
use cql::ast::{
    BindMarker, Constant, CqlType, Identifier, InValues, NativeType, Operator, Relation, Select, Selectable, Selection,
    Term,
};
use cql::Statement;

fn select(text: &str) -> Select {
    match parsed(text) {
        Statement::Select(s) => s,
        other => panic!("{text:?} is not a SELECT: {other:?}"),
    }
}

fn selectables(s: &Select) -> Vec<Selectable> {
    match &s.selection {
        Selection::Wildcard => Vec::new(),
        Selection::Selectors(v) => v.iter().map(|s| s.selectable.clone()).collect(),
    }
}

fn col(name: &str) -> Identifier {
    Identifier::unquoted(name)
}

#[test]
fn seed_001_selects() {
    let s = select("SELECT id, name, publicationFrequency FROM magazine_name");
    assert_eq!(s.table.name.name(), "magazine_name");
    let names: Vec<String> = selectables(&s)
        .iter()
        .map(|x| match x {
            Selectable::Column(c) => c.name().to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(names, ["id", "name", "publicationfrequency"]);

    let s = select("SELECT * FROM magazine_publisher WHERE publisher = 'x'");
    assert_eq!(s.selection, Selection::Wildcard);
    assert_eq!(
        s.where_clause,
        [Relation::Column { column: col("publisher"), op: Operator::Eq, value: Term::string("x") }]
    );
}

#[test]
fn textile_samples() {
    for text in [
        "SELECT name, occupation FROM users WHERE userid IN (199, 200, 207);",
        "SELECT JSON name, occupation FROM users WHERE userid = 199;",
        "SELECT name AS user_name, occupation AS user_occupation FROM users;",
        "SELECT time, value\nFROM events\nWHERE event_type = 'myEvent'\n  AND time > '2011-02-03'\n  AND time <= '2012-01-01'",
        "SELECT COUNT(*) FROM users;",
        "SELECT COUNT(*) AS user_count FROM users;",
        "SELECT entry_title, content FROM posts WHERE userid='john doe' AND blog_title='John''s Blog' AND posted_at >= '2012-01-01' AND posted_at < '2012-01-31'",
        "SELECT * FROM posts WHERE token(userid) > token('tom') AND token(userid) < token('bob')",
        "SELECT * FROM posts WHERE userid='john doe' AND (blog_title, posted_at) > ('John''s Blog', '2012-01-01')",
        "SELECT * FROM posts WHERE userid='john doe' AND (blog_title, posted_at) IN (('John''s Blog', '2012-01-01'), ('Extreme Chess', '2014-06-01'))",
        "SELECT * FROM users;",
        "SELECT firstname, lastname FROM users WHERE birth_year = 1981;",
        "SELECT firstname, lastname FROM users WHERE birth_year = 1981 AND country = 'FR' ALLOW FILTERING;",
        "SELECT avg(cast(count as double)) FROM myTable",
        "SELECT * FROM myTable WHERE t = now()",
        "SELECT * FROM myTable WHERE t > maxTimeuuid('2013-01-01 00:05+0000') AND t < minTimeuuid('2013-02-02 10:00+0000')",
        "SELECT COUNT(*) FROM plays;",
        "SELECT COUNT(1) FROM plays;",
        "SELECT COUNT(scores) FROM plays;",
        "SELECT MIN(players), MAX(players) FROM plays WHERE game = 'quake';",
        "SELECT SUM(players) FROM plays;",
        "SELECT AVG(players) FROM plays;",
        "SELECT average(val) FROM atable;",
        "SELECT some_function(column) FROM atable",
        "SELECT JSON a, ttl(b) FROM t",
    ] {
        parsed(text);
    }
}

#[test]
fn selectors_of_every_kind() {
    let s = select(
        "SELECT JSON DISTINCT a, WRITETIME(b), TTL(c), COUNT(*), CAST(d AS text), ks.f(e, 1), u.street.number, \
         'lit', ?, :m, (int)?, [1, 2], {'k': 1}, (1, 'a'), NULL, -NaN FROM ks.t",
    );
    assert!(s.json && s.distinct);
    assert_eq!(s.table.keyspace.as_ref().map(Identifier::name), Some("ks"));
    let got = selectables(&s);
    assert_eq!(got[1], Selectable::WriteTime(col("b")));
    assert_eq!(got[2], Selectable::Ttl(col("c")));
    assert_eq!(got[3], Selectable::CountRows);
    assert_eq!(got[4], Selectable::Cast { selector: Box::new(Selectable::Column(col("d"))), to: NativeType::Text });
    assert!(matches!(&got[5], Selectable::Function { name, args } if name.keyspace.is_some() && args.len() == 2));
    assert!(matches!(&got[6], Selectable::Field { field, .. } if field.name() == "number"));
    assert_eq!(got[8], Selectable::Term(Term::BindMarker(BindMarker::Anonymous)));
    assert_eq!(
        got[10],
        Selectable::Term(Term::TypeHint {
            hint: CqlType::Native(NativeType::Int),
            term: Box::new(Term::BindMarker(BindMarker::Anonymous))
        })
    );
    assert_eq!(got[15], Selectable::Term(Term::Constant(Constant::Float("-NaN".into()))));
}

#[test]
fn json_and_distinct_are_also_column_names() {
    let s = select("SELECT json FROM t");
    assert!(!s.json);
    assert_eq!(selectables(&s), [Selectable::Column(col("json"))]);
    let s = select("SELECT JSON json FROM t");
    assert!(s.json);
    let s = select("SELECT distinct, json FROM t");
    assert!(!s.distinct && !s.json);
    let s = select("SELECT DISTINCT distinct FROM t");
    assert!(s.distinct);
    let s = select("SELECT ttl, writetime, count, cast, key, type FROM t");
    assert_eq!(selectables(&s).len(), 6);
}

#[test]
fn clauses_after_where() {
    let s = select(
        "SELECT a FROM t WHERE k = ? GROUP BY k, c ORDER BY c DESC, d PER PARTITION LIMIT 2 LIMIT :lim ALLOW FILTERING",
    );
    assert_eq!(s.group_by, [col("k"), col("c")]);
    assert_eq!(s.order_by.len(), 2);
    assert!(s.order_by[0].descending && !s.order_by[1].descending);
    assert_eq!(s.per_partition_limit, Some(Term::integer(2)));
    assert_eq!(s.limit, Some(Term::BindMarker(BindMarker::Named(col("lim")))));
    assert!(s.allow_filtering);
}

#[test]
fn every_relation() {
    let s = select(
        "SELECT * FROM t WHERE a = 1 AND b < 2 AND c <= 3 AND d > 4 AND e >= 5 AND f != 6 AND g IN (1, 2) AND h IN ? \
         AND i CONTAINS 'x' AND j CONTAINS KEY 'y' AND m['k'] = 'v' AND token(a, b) > ? AND (c1, c2) > (1, 2) \
         AND (c1, c2) IN ((1, 2), (3, 4)) AND (c1) IN (?, ?) AND (c1, c2) IN ? AND (c1, c2) IN () AND (c1, c2) <= :t \
         AND v LIKE 'abc%' AND ((w = 1)) AND expr(my_index, 'query') AND z IN ()",
    );
    let w = &s.where_clause;
    assert_eq!(w.len(), 22);
    assert_eq!(
        w[6],
        Relation::In { column: col("g"), values: InValues::List(vec![Term::integer(1), Term::integer(2)]) }
    );
    assert_eq!(w[7], Relation::In { column: col("h"), values: InValues::Marker(BindMarker::Anonymous) });
    assert!(matches!(&w[9], Relation::Column { op: Operator::ContainsKey, .. }));
    assert!(matches!(&w[10], Relation::MapElement { op: Operator::Eq, .. }));
    assert!(
        matches!(&w[11], Relation::Token { columns, op: Operator::Gt, value: Term::BindMarker(_) } if columns.len() == 2)
    );
    assert!(matches!(&w[12], Relation::MultiColumn { value: Term::Tuple(v), .. } if v.len() == 2));
    assert!(matches!(&w[13], Relation::MultiColumnIn { values: InValues::List(v), .. } if v.len() == 2));
    assert!(matches!(&w[15], Relation::MultiColumnIn { values: InValues::Marker(_), .. }));
    assert!(matches!(&w[16], Relation::MultiColumnIn { values: InValues::List(v), .. } if v.is_empty()));
    assert!(matches!(&w[18], Relation::Column { op: Operator::Like, .. }));
    assert_eq!(w[19], Relation::Column { column: col("w"), op: Operator::Eq, value: Term::integer(1) });
    assert!(matches!(&w[20], Relation::CustomIndex { index, .. } if index.name.name() == "my_index"));
}

#[test]
fn terms_of_every_kind() {
    let s = select(
        "SELECT * FROM t WHERE a = [1, 2] AND b = {1, 2} AND c = {'k': 'v', 'l': 'w'} AND d = {} AND e = (1, 'x') \
         AND f = {street: 'Main', \"Number\": 3} AND g = (text)'x' AND h = blobAsInt(0x0000002a) AND i = ks.f(1) \
         AND j = uuid() AND k = 123e4567-e89b-12d3-a456-426614174000 AND l = -1.5e-3 AND m = true AND n = 1h30m \
         AND o = P1Y2M3DT4H5M6S AND p = NULL AND q = -Infinity AND r = $$it's$$ AND s = 0x AND u = (frozen<list<int>>)?",
    );
    let value = |i: usize| match &s.where_clause[i] {
        Relation::Column { value, .. } => value.clone(),
        other => panic!("{other:?}"),
    };
    assert!(matches!(value(0), Term::List(v) if v.len() == 2));
    assert!(matches!(value(1), Term::Set(v) if v.len() == 2));
    assert!(matches!(value(2), Term::Map(v) if v.len() == 2));
    assert_eq!(value(3), Term::Set(vec![]));
    assert!(matches!(value(4), Term::Tuple(v) if v.len() == 2));
    assert!(matches!(value(5), Term::UserType(f) if f[1].0.name() == "Number"));
    assert!(matches!(value(6), Term::TypeHint { hint: CqlType::Native(NativeType::Text), .. }));
    assert!(
        matches!(value(7), Term::FunctionCall { name, args } if name.name.name() == "blobasint" && args.len() == 1)
    );
    assert!(matches!(value(8), Term::FunctionCall { name, .. } if name.keyspace.is_some()));
    assert!(matches!(value(10), Term::Constant(Constant::Uuid(_))));
    assert_eq!(value(11), Term::Constant(Constant::Float("-1.5e-3".into())));
    assert_eq!(value(12), Term::Constant(Constant::Boolean(true)));
    assert_eq!(value(13), Term::Constant(Constant::Duration("1h30m".into())));
    assert_eq!(value(15), Term::Null);
    assert_eq!(value(16), Term::Constant(Constant::Float("-Infinity".into())));
    assert_eq!(value(17), Term::string("it's"));
    assert_eq!(value(18), Term::Constant(Constant::Hex(String::new())));
}

#[test]
fn durations_in_every_form() {
    for d in ["12mo3d", "P2W", "P0001-02-03T04:05:06", "PT89H8M53S", "89h4m48s", "1µs", "-2d"] {
        let s = select(&format!("SELECT * FROM t WHERE d = {d}"));
        assert_eq!(
            s.where_clause[0],
            Relation::Column {
                column: col("d"),
                op: Operator::Eq,
                value: Term::Constant(Constant::Duration(d.into()))
            }
        );
    }
}

#[test]
fn identifiers_keep_text_and_intern_names() {
    let s = select("SELECT \"My Col\", MyCol, \"quote\"\"d\" FROM \"KS\".Tab");
    let got = selectables(&s);
    assert!(matches!(&got[0], Selectable::Column(c) if c.name() == "My Col" && c.text() == "\"My Col\""));
    assert!(matches!(&got[1], Selectable::Column(c) if c.name() == "mycol" && c.text() == "MyCol"));
    assert!(matches!(&got[2], Selectable::Column(c) if c.name() == "quote\"d"));
    assert_eq!(s.table.keyspace.as_ref().map(Identifier::name), Some("KS"));
    assert_eq!(s.table.name.name(), "tab");
}

#[test]
fn unreserved_keywords_name_tables_and_keyspaces() {
    let s = select("SELECT key, value FROM keyspaces.type WHERE key = 1");
    assert_eq!(s.table.name.name(), "type");
    assert_eq!(s.table.keyspace.as_ref().map(Identifier::name), Some("keyspaces"));
}

#[test]
fn comments_and_semicolons() {
    parsed("-- leading\nSELECT /* inline */ a // trailing\nFROM t;;");
    parsed("select * from t where a = 1 -- no newline at the end");
}
