//! INSERT, UPDATE, DELETE and BATCH in every form of CQL 3.4.4, with the samples of CQL.textile.

mod common;

use common::parsed;
use cql::ast::{
    Assignment, BatchKind, BatchStatement, BindMarker, Condition, ConditionTarget, Conditions, Deletion, Identifier,
    InValues, InsertValues, Operator, Predicate, Term,
};
use cql::Statement;

fn col(name: &str) -> Identifier {
    Identifier::unquoted(name)
}

#[test]
fn textile_samples() {
    for text in [
        "INSERT INTO NerdMovies (movie, director, main_actor, year)\n                VALUES ('Serenity', 'Joss Whedon', 'Nathan Fillion', 2005)\nUSING TTL 86400;",
        "INSERT INTO NerdMovies JSON '{\"movie\": \"Serenity\", \"director\": \"Joss Whedon\", \"year\": 2005}'",
        "UPDATE NerdMovies USING TTL 400\nSET director = 'Joss Whedon',\n    main_actor = 'Nathan Fillion',\n    year = 2005\nWHERE movie = 'Serenity';",
        "UPDATE UserActions SET total = total + 2 WHERE user = B70DE1D0-9908-4AE3-BE34-5573E5B09F14 AND action = 'click';",
        "DELETE FROM NerdMovies USING TIMESTAMP 1240003134 WHERE movie = 'Serenity';",
        "DELETE phone FROM Users WHERE userid IN (C73DE1D3-AF08-40F3-B124-3FF3E5109F22, B70DE1D0-9908-4AE3-BE34-5573E5B09F14);",
        "BEGIN BATCH\n  INSERT INTO users (userid, password, name) VALUES ('user2', 'ch@ngem3b', 'second user');\n  UPDATE users SET password = 'ps22dhds' WHERE userid = 'user3';\n  INSERT INTO users (userid, password) VALUES ('user4', 'ch@ngem3c');\n  DELETE name FROM users WHERE userid = 'user1';\nAPPLY BATCH;",
        "INSERT INTO test(pk, t, v, s) VALUES (0, 0, 'val0', 'static0');",
        "INSERT INTO users (id, given, surname, favs)\n           VALUES ('jsmith', 'John', 'Smith', { 'fruit' : 'apple', 'band' : 'Beatles' })",
        "UPDATE users SET favs['author'] = 'Ed Poe' WHERE id = 'jsmith'",
        "UPDATE users SET favs = favs +  { 'movie' : 'Cassablanca' } WHERE id = 'jsmith'",
        "UPDATE users USING TTL 10 SET favs['color'] = 'green' WHERE id = 'jsmith'",
        "DELETE favs['author'] FROM users WHERE id = 'jsmith'",
        "INSERT INTO images (name, owner, date, tags)\n            VALUES ('cat.jpg', 'jsmith', 'now', { 'kitten', 'cat', 'pet' });",
        "UPDATE images SET tags = tags + { 'cute', 'cuddly' } WHERE name = 'cat.jpg';",
        "UPDATE images SET tags = tags - { 'lame' } WHERE name = 'cat.jpg';",
        "INSERT INTO plays (id, game, players, scores)\n           VALUES ('123-afde', 'quake', 3, [17, 4, 2]);",
        "UPDATE plays SET players = 5, scores = scores + [ 14, 21 ] WHERE id = '123-afde';",
        "UPDATE plays SET players = 5, scores = [ 12 ] + scores WHERE id = '123-afde';",
        "UPDATE plays SET scores[1] = 7 WHERE id = '123-afde';",
        "DELETE scores[1] FROM plays WHERE id = '123-afde';",
        "UPDATE plays SET scores = scores - [ 12, 21 ] WHERE id = '123-afde';",
        "INSERT INTO RiderResults (rider, race, result) VALUES ('Christopher Froome', 'Tour de France', 89h4m48s);",
        "INSERT INTO RiderResults (rider, race, result) VALUES ('BARDET Romain', 'Tour de France', PT89H8M53S);",
        "INSERT INTO RiderResults (rider, race, result) VALUES ('QUINTANA Nairo', 'Tour de France', P0000-00-00T89:09:09);",
        "INSERT INTO atable (pk, val) VALUES (1,1);",
        "UPDATE atable SET col = some_function(?) WHERE k = 1",
        "INSERT INTO mytable JSON '{\"\\\"myKey\\\"\": 0, \"value\": 0}'",
    ] {
        parsed(text);
    }
}

#[test]
fn insert_forms() {
    let Statement::Insert(i) =
        parsed("INSERT INTO ks.t (a, \"B\") VALUES (?, :b) IF NOT EXISTS USING TTL ? AND TIMESTAMP 123")
    else {
        panic!("not an insert")
    };
    assert!(i.if_not_exists);
    assert_eq!(i.attributes.ttl, Some(Term::BindMarker(BindMarker::Anonymous)));
    assert_eq!(i.attributes.timestamp, Some(Term::integer(123)));
    assert!(
        matches!(&i.values, InsertValues::Values { columns, values } if columns[1].name() == "B" && values.len() == 2)
    );

    for (text, unset) in [
        ("INSERT INTO t JSON '{}'", false),
        ("INSERT INTO t JSON '{}' DEFAULT NULL", false),
        ("INSERT INTO t JSON ? DEFAULT UNSET IF NOT EXISTS USING TIMESTAMP :ts", true),
    ] {
        let Statement::Insert(i) = parsed(text) else { panic!("not an insert") };
        assert!(matches!(i.values, InsertValues::Json { default_unset, .. } if default_unset == unset), "{text}");
    }
}

#[test]
fn update_assignments() {
    let Statement::Update(u) = parsed(
        "UPDATE t USING TIMESTAMP 1 SET a = 1, c = c + 1, c = c - 1, c = c -1, l = [1] + l, m['k'] = 'v', l[0] = 2, \
         u.f = 3, s += {1}, s -= {2}, x = now() WHERE k = 1",
    ) else {
        panic!("not an update")
    };
    let a = &u.assignments;
    assert_eq!(a[0], Assignment::Set { column: col("a"), value: Term::integer(1) });
    assert_eq!(a[1], Assignment::Add { column: col("c"), value: Term::integer(1) });
    assert_eq!(a[2], Assignment::Subtract { column: col("c"), value: Term::integer(1) });
    assert_eq!(a[3], Assignment::Add { column: col("c"), value: Term::integer(-1) });
    assert!(matches!(&a[4], Assignment::Prepend { value: Term::List(_), .. }));
    assert!(matches!(&a[5], Assignment::SetElement { key, .. } if *key == Term::string("k")));
    assert!(matches!(&a[7], Assignment::SetField { field, .. } if field.name() == "f"));
    assert!(matches!(&a[8], Assignment::Add { value: Term::Set(_), .. }));
    assert!(matches!(&a[9], Assignment::Subtract { value: Term::Set(_), .. }));
    assert!(matches!(&a[10], Assignment::Set { value: Term::FunctionCall { .. }, .. }));
}

#[test]
fn update_conditions() {
    let Statement::Update(u) = parsed("UPDATE t SET a = 1 WHERE k = 1 IF EXISTS") else { panic!("not an update") };
    assert_eq!(u.conditions, Some(Conditions::Exists));
    let Statement::Update(u) =
        parsed("UPDATE t SET a = 1 WHERE k IN (1, 2) IF a = 1 AND b != 2 AND m['k'] = 'v' AND c IN (1, 2) AND m['j'] IN ? AND u.f > 3 AND u.g IN (4)")
    else {
        panic!("not an update")
    };
    let Some(Conditions::Columns(c)) = u.conditions else { panic!("no conditions") };
    assert_eq!(c.len(), 7);
    assert_eq!(
        c[1],
        Condition {
            column: col("b"),
            target: ConditionTarget::Column,
            predicate: Predicate::Compare(Operator::Neq, Term::integer(2))
        }
    );
    assert!(matches!(&c[2].target, ConditionTarget::Element(k) if *k == Term::string("k")));
    assert!(matches!(&c[3].predicate, Predicate::In(InValues::List(v)) if v.len() == 2));
    assert!(matches!(&c[4].predicate, Predicate::In(InValues::Marker(_))));
    assert!(matches!(&c[5].target, ConditionTarget::Field(f) if f.name() == "f"));
}

#[test]
fn delete_forms() {
    let Statement::Delete(d) =
        parsed("DELETE a, m['k'], l[1], u.f FROM ks.t USING TIMESTAMP ? WHERE k = 1 AND c > 2 IF a = 1")
    else {
        panic!("not a delete")
    };
    assert_eq!(d.deletions.len(), 4);
    assert!(matches!(&d.deletions[1], Deletion::Element(c, _) if c.name() == "m"));
    assert!(matches!(&d.deletions[3], Deletion::Field(_, f) if f.name() == "f"));
    assert_eq!(d.timestamp, Some(Term::BindMarker(BindMarker::Anonymous)));
    let Statement::Delete(d) = parsed("DELETE FROM t WHERE k = 1 IF EXISTS") else { panic!("not a delete") };
    assert!(d.deletions.is_empty());
    assert_eq!(d.conditions, Some(Conditions::Exists));
}

#[test]
fn batch_kinds() {
    for (text, kind) in [
        ("BEGIN BATCH APPLY BATCH", BatchKind::Logged),
        ("BEGIN UNLOGGED BATCH USING TIMESTAMP 5 INSERT INTO t (a) VALUES (1) APPLY BATCH", BatchKind::Unlogged),
        (
            "BEGIN COUNTER BATCH UPDATE t SET c = c + 1 WHERE k = 1; UPDATE t SET c = c - 1 WHERE k = 2; APPLY BATCH",
            BatchKind::Counter,
        ),
    ] {
        let Statement::Batch(b) = parsed(text) else { panic!("not a batch") };
        assert_eq!(b.kind, kind);
    }
    let Statement::Batch(b) = parsed(
        "BEGIN BATCH INSERT INTO t (a) VALUES (1) UPDATE t SET a = 2 WHERE k = 1 DELETE FROM t WHERE k = 3 APPLY BATCH",
    ) else {
        panic!("not a batch")
    };
    assert!(matches!(
        b.statements.as_slice(),
        [BatchStatement::Insert(_), BatchStatement::Update(_), BatchStatement::Delete(_)]
    ));
}
