//! Error positions and messages for typical mistakes, in Cassandra 3.11's words.

mod common;

use common::{error, parsed};
use cql::{parse, SyntaxErrorKind, MAX_NESTING};

#[test]
fn misspelt_keyword() {
    assert_eq!(error("SELECT * FROMM t"), "line 1:9 mismatched input 'FROMM' expecting K_FROM (SELECT * [FROMM]...)");
    assert_eq!(
        error("SELECT a, b, c FROMM t"),
        "line 1:15 mismatched input 'FROMM' expecting K_FROM (SELECT a, b, c [FROMM]...)"
    );
    assert_eq!(error("SELEC * FROM t"), "line 1:0 no viable alternative at input 'SELEC' ([SELEC]...)");
    // The statement's decision is an ANTLR DFA, which rewinds before reporting: the header
    // names the word it gave up at, the snippet marks where the statement began.
    assert_eq!(
        error("CREATE TABEL t (a int PRIMARY KEY)"),
        "line 1:7 no viable alternative at input 'TABEL' ([CREATE] TABEL...)"
    );
    assert_eq!(error("DROP TABEL t"), "line 1:5 no viable alternative at input 'TABEL' ([DROP] TABEL...)");
    assert_eq!(
        error("SELECT * FROM t WHERE a 1"),
        "line 1:24 no viable alternative at input '1' (SELECT * FROM t WHERE [a] 1)"
    );
    assert_eq!(
        error("INSERT INTO t (a) VALEUS (1)"),
        "line 1:18 mismatched input 'VALEUS' expecting K_VALUES (INSERT INTO t (a) [VALEUS]...)"
    );
}

#[test]
fn missing_from() {
    assert_eq!(error("SELECT * t"), "line 1:9 mismatched input 't' expecting K_FROM (SELECT * [t])");
    assert_eq!(error("SELECT a b"), "line 1:9 mismatched input 'b' expecting K_FROM (SELECT a [b])");
    assert_eq!(
        error("DELETE a WHERE k = 1"),
        "line 1:9 mismatched input 'WHERE' expecting K_FROM (DELETE a [WHERE]...)"
    );
}

#[test]
fn unterminated_literals_are_lexer_errors() {
    let e = parse("SELECT * FROM t WHERE a = 'abc").expect_err("unterminated");
    assert_eq!(e.kind, SyntaxErrorKind::Lexer);
    assert_eq!(e.message, "line 1:30 mismatched character '<EOF>' expecting '''");
    assert_eq!(error("SELECT \"abc FROM t"), "line 1:18 mismatched character '<EOF>' expecting '\"'");
    assert_eq!(error("INSERT INTO t (a) VALUES ($$abc"), "line 1:31 mismatched character '<EOF>' expecting '$'");
    assert_eq!(error("SELECT * FROM t /* never closed"), "line 1:31 mismatched character '<EOF>' expecting '*'");
    assert_eq!(error("SELECT * FROM t WHERE a = #"), "line 1:26 no viable alternative at character '#'");
}

#[test]
fn stray_token_at_the_end() {
    assert_eq!(error("SELECT * FROM t x"), "line 1:16 mismatched input 'x' expecting EOF (SELECT * FROM t [x])");
    assert_eq!(
        error("SELECT * FROM t; SELECT"),
        "line 1:17 mismatched input 'SELECT' expecting EOF (SELECT * FROM t; [SELECT])"
    );
    assert_eq!(
        error("SELECT * FROM t WHERE a = 1 b = 2"),
        "line 1:28 mismatched input 'b' expecting EOF (...t WHERE a = 1 [b]...)"
    );
}

#[test]
fn reserved_keywords_are_not_names() {
    assert_eq!(
        error("CREATE TABLE t (from int PRIMARY KEY)"),
        "line 1:16 no viable alternative at input 'from' (CREATE TABLE t ([from]...)"
    );
    assert_eq!(
        error("SELECT * FROM select"),
        "line 1:14 no viable alternative at input 'select' (SELECT * FROM [select])"
    );
    assert_eq!(
        error("INSERT INTO t (limit) VALUES (1)"),
        "line 1:15 no viable alternative at input 'limit' (INSERT INTO t ([limit]...)"
    );
    // Quoted, a reserved keyword is a name like any other.
    parsed("CREATE TABLE t (\"from\" int PRIMARY KEY)");
}

#[test]
fn unreserved_keywords_are_names() {
    parsed(
        "CREATE TABLE t (key int PRIMARY KEY, ttl text, type int, values set<int>, json text, distinct int, count int)",
    );
    parsed("SELECT key, ttl, type, values, json, count FROM t WHERE key = 1");
    parsed("CREATE TABLE keyspaces.role (user text PRIMARY KEY, password text, options map<text, text>)");
    parsed("UPDATE t SET options = options + {'a': 'b'}, static = 1 WHERE login = 'x'");
}

#[test]
fn the_end_of_input_is_line_0_column_minus_1() {
    let e = parse("SELECT * FROM t WHERE").expect_err("incomplete");
    assert_eq!((e.line, e.column, e.token.as_str()), (0, -1, "<EOF>"));
    assert_eq!(e.message, "line 0:-1 no viable alternative at input '<EOF>'");
    assert_eq!(error("INSERT INTO t (a) VALUES (1"), "line 0:-1 mismatched input '<EOF>' expecting ')'");
    assert_eq!(error("SELECT * FROM"), "line 0:-1 no viable alternative at input '<EOF>'");
    assert_eq!(error(""), "line 0:-1 no viable alternative at input '<EOF>'");
    assert_eq!(
        error("BEGIN BATCH INSERT INTO t (a) VALUES (1)"),
        "line 0:-1 mismatched input '<EOF>' expecting K_APPLY"
    );
}

#[test]
fn positions_on_later_lines() {
    let e = parse("SELECT a,\n       b\nFROMM t").expect_err("misspelt");
    assert_eq!((e.line, e.column), (3, 0));
    assert_eq!(e.kind, SyntaxErrorKind::Mismatched { expected: "K_FROM".into() });
    assert_eq!(e.token, "FROMM");
    assert_eq!(e.offset, 19);
    // Cassandra's snippet joins the lines without their line breaks.
    assert_eq!(e.message, "line 3:0 mismatched input 'FROMM' expecting K_FROM (SELECT a,       b[FROMM]...)");
}

#[test]
fn rules_of_the_grammar_actions() {
    assert_eq!(error("SELECT * FROM ? WHERE a = 1"), "Bind variables cannot be used for table names");
    assert_eq!(error("USE ?"), "Bind variables cannot be used for keyspace names");
    assert_eq!(error("DROP INDEX ks.?"), "Bind variables cannot be used for index names");
    assert_eq!(error("GRANT ? TO bob"), "Bind variables cannot be used for role names");
    assert_eq!(
        error("UPDATE t SET a = b + 1 WHERE k = 1"),
        "Only expressions of the form X = X +<value> are supported."
    );
    assert_eq!(
        error("UPDATE t SET a = b - 1 WHERE k = 1"),
        "Only expressions of the form X = X -<value> are supported."
    );
    assert_eq!(
        error("UPDATE t SET a = b -1 WHERE k = 1"),
        "Only expressions of the form X = X - <value> are supported."
    );
    assert_eq!(
        error("UPDATE t SET a = [1] + b WHERE k = 1"),
        "Only expressions of the form X = <value> + X are supported."
    );
    assert_eq!(
        error("CREATE KEYSPACE ks WITH durable_writes = true AND durable_writes = false"),
        "Multiple definition for property durable_writes"
    );
    assert_eq!(
        error("CREATE KEYSPACE ks WITH replication = {'class': 'x', 'class': 'y'}"),
        "Multiple definition for property class"
    );
    assert_eq!(
        error("CREATE KEYSPACE ks WITH replication = {'class': ?}"),
        "Invalid property value: ? for property: 'class' (bind variables are not supported in DDL queries)"
    );
    assert_eq!(error("CREATE ROLE r WITH LOGIN = true AND LOGIN = false"), "Multiple definition for property LOGIN");
    assert_eq!(
        error("CREATE USER \"Bob\""),
        "Quoted strings are are not supported for user names and USER is deprecated, please use ROLE"
    );
    assert_eq!(error("CREATE TYPE enum (a int)"), "Invalid (reserved) user type name enum");
    assert_eq!(
        error("CREATE TABLE t (k frozen<int> PRIMARY KEY)"),
        "frozen<> is only allowed on collections, tuples, and user-defined types (got int)"
    );
    // A syntax error before the rule's error is the one reported.
    assert_eq!(error("SELECT * FROMM ?"), "line 1:9 mismatched input 'FROMM' expecting K_FROM (SELECT * [FROMM]...)");
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    let deep = MAX_NESTING + 1;
    let types = format!("CREATE TABLE t (k int PRIMARY KEY, v {}int{})", "list<".repeat(deep), ">".repeat(deep));
    assert_eq!(parse(&types).expect_err("too deep").kind, SyntaxErrorKind::TooDeep);
    let ok = MAX_NESTING - 2;
    parsed(&format!("CREATE TABLE t (k int PRIMARY KEY, v {}int{})", "list<".repeat(ok), ">".repeat(ok)));

    let terms = format!("SELECT * FROM t WHERE a = {}1{}", "(".repeat(deep), ")".repeat(deep));
    let e = parse(&terms).expect_err("too deep");
    assert_eq!(e.kind, SyntaxErrorKind::TooDeep);
    assert!(e.message.contains("nesting deeper than 64 levels"), "{}", e.message);
    parsed(&format!("SELECT * FROM t WHERE a = {}1{}", "[".repeat(ok), "]".repeat(ok)));

    for text in [
        format!("SELECT * FROM t WHERE {}a = 1{}", "(".repeat(deep), ")".repeat(deep)),
        format!("SELECT {}a{} FROM t", "f(".repeat(deep), ")".repeat(deep)),
        format!("SELECT * FROM t WHERE a = {}?", "(int)".repeat(deep)),
        format!("INSERT INTO t (a) VALUES ({}1{})", "{".repeat(deep), "}".repeat(deep)),
    ] {
        assert_eq!(parse(&text).expect_err("too deep").kind, SyntaxErrorKind::TooDeep, "{text}");
    }
}
