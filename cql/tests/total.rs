//! The parser is total: any input gets a tree or a `SyntaxError`, never a panic, a hang or a
//! stack overflow; and whatever it accepts prints back as CQL that parses to the same tree.

use cql::{all_keywords, parse, parse_statements, SyntaxError, SyntaxErrorKind};
use proptest::collection::vec;
use proptest::prelude::*;

/// The error's numbers are the ones Cassandra would print, and point into the text.
fn check_error(text: &str, e: &SyntaxError) -> Result<(), TestCaseError> {
    prop_assert!(e.offset <= text.len(), "offset {} past the end of {:?}", e.offset, text);
    prop_assert!(text.is_char_boundary(e.offset), "offset {} inside a character", e.offset);
    let at_end = e.line == 0 && e.column == -1;
    let lines = text.split('\n').count() as u32;
    prop_assert!(at_end || (e.line >= 1 && e.line <= lines && e.column >= 0), "bad position {}:{}", e.line, e.column);
    prop_assert!(!e.message.is_empty());
    Ok(())
}

fn check(text: &str) -> Result<(), TestCaseError> {
    match parse(text) {
        Ok(statement) => {
            let shown = statement.to_string();
            match parse(&shown) {
                Ok(again) => prop_assert_eq!(again, statement, "{:?} printed as {:?}", text, shown),
                Err(e) => return Err(TestCaseError::fail(format!("{text:?} printed as {shown:?}, which fails: {e}"))),
            }
        }
        Err(e) => check_error(text, &e)?,
    }
    if let Err(e) = parse_statements(text) {
        check_error(text, &e)?;
    }
    Ok(())
}

/// Words a statement is made of: every keyword, punctuation, constants, names and markers.
fn vocabulary() -> Vec<String> {
    let mut words: Vec<String> = all_keywords().map(|k| k.as_str().to_string()).collect();
    words.extend(
        [
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            ",",
            ";",
            ":",
            ".",
            "*",
            "+",
            "-",
            "+=",
            "-=",
            "=",
            "!=",
            "<",
            "<=",
            ">",
            ">=",
            "?",
            ":x",
            "'s'",
            "'it''s'",
            "$$d$$",
            "1",
            "-2",
            "1.5",
            "3e4",
            "true",
            "0xff",
            "1h30m",
            "P1D",
            "NaN",
            "123e4567-e89b-12d3-a456-426614174000",
            "a",
            "b",
            "t",
            "ks",
            "\"Q\"",
            "expr(",
            "token",
            "count",
            "ttl",
            "writetime",
            "key",
            "json",
            "distinct",
            "frozen",
            "list",
            "map",
            "set",
            "tuple",
            "int",
            "text",
            "now",
            "ks.t",
            "m['k']",
            "(int)",
            "--c\n",
            "/*c*/",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    words
}

/// A handful of statements, to start soups from something close to valid.
const SEEDS: &[&str] = &[
    "SELECT a, b FROM ks.t WHERE k = 1 AND c > 2 ORDER BY c DESC LIMIT 10",
    "INSERT INTO t (a, b) VALUES (1, 'x') IF NOT EXISTS USING TTL 5",
    "UPDATE t SET a = a + 1, m['k'] = 'v' WHERE k = 1 IF EXISTS",
    "DELETE a FROM t WHERE k IN (1, 2)",
    "CREATE TABLE t (k int, c text, v list<int>, PRIMARY KEY ((k), c)) WITH CLUSTERING ORDER BY (c DESC)",
    "BEGIN BATCH INSERT INTO t (a) VALUES (1); APPLY BATCH",
    "GRANT SELECT ON KEYSPACE ks TO bob",
    "CREATE MATERIALIZED VIEW v AS SELECT * FROM t WHERE k IS NOT NULL PRIMARY KEY (k)",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in vec(any::<u8>(), 0..300)) {
        check(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn random_text_never_panics(text in "\\PC{0,80}") {
        check(&text)?;
    }

    #[test]
    fn token_soups_never_panic(words in vec(prop::sample::select(vocabulary()), 0..40)) {
        check(&words.join(" "))?;
    }

    #[test]
    fn mutated_statements_never_panic(
        seed in prop::sample::select(SEEDS.to_vec()),
        cut in any::<prop::sample::Index>(),
        insert in vec(prop::sample::select(vocabulary()), 0..4),
    ) {
        let mut words: Vec<String> = seed.split(' ').map(str::to_string).collect();
        let at = cut.index(words.len() + 1);
        words.splice(at..at, insert);
        check(&words.join(" "))?;
        let text = seed.to_string();
        let end = cut.index(text.len() + 1);
        if text.is_char_boundary(end) {
            check(&text[..end])?;
        }
    }
}

#[test]
fn ten_thousand_levels_are_refused_with_a_syntax_error() {
    let n = 10_000;
    let cases = [
        format!("CREATE TABLE t (k int PRIMARY KEY, v {}int{})", "list<".repeat(n), ">".repeat(n)),
        format!("CREATE TABLE t (k int PRIMARY KEY, v {}int{})", "frozen<map<int, ".repeat(n), ">>".repeat(n)),
        format!("SELECT * FROM t WHERE a = {}1{}", "(".repeat(n), ")".repeat(n)),
        format!("SELECT * FROM t WHERE a = {}", "(".repeat(n)),
        format!("SELECT * FROM t WHERE {}a = 1{}", "(".repeat(n), ")".repeat(n)),
        format!("SELECT {} FROM t", "f(".repeat(n)),
        format!("INSERT INTO t (a) VALUES ({})", "[".repeat(n)),
        format!("INSERT INTO t (a) VALUES ({})", "{a: ".repeat(n)),
        format!("SELECT * FROM t WHERE a = {}?", "(list<int>)".repeat(n)),
    ];
    for text in cases {
        let e = parse(&text).expect_err("too deep");
        assert_eq!(e.kind, SyntaxErrorKind::TooDeep, "{}", e.message);
    }
}

#[test]
fn long_flat_inputs_parse_in_linear_time() {
    let n = 20_000;
    let values = vec!["1"; n].join(", ");
    let start = std::time::Instant::now();
    assert!(parse(&format!("SELECT * FROM t WHERE a IN ({values})")).is_ok());
    let relations = vec!["a = 1"; n].join(" AND ");
    assert!(parse(&format!("SELECT * FROM t WHERE {relations}")).is_ok());
    assert!(start.elapsed() < std::time::Duration::from_secs(5), "took {:?}", start.elapsed());
}

#[test]
fn the_nesting_limit_fits_a_small_stack() {
    // The parser runs on server threads: 64 levels of every kind of nesting must fit in half of
    // a Rust thread's default stack, even unoptimised (measured at opt-level 0: at most 640 KiB,
    // for CAST and frozen<>; under 256 KiB at the test profile's opt-level 1).
    let n = cql::MAX_NESTING;
    let texts = [
        format!("SELECT * FROM t WHERE a = {}1{}", "[(".repeat(n / 2), ")]".repeat(n / 2)),
        format!("SELECT {}a{} FROM t", "f(".repeat(n), ")".repeat(n)),
        format!("SELECT {}a{} FROM t", "CAST(".repeat(n), " AS int)".repeat(n)),
        format!("SELECT * FROM t WHERE {}a = 1{}", "(".repeat(n), ")".repeat(n)),
        format!("SELECT * FROM t WHERE a = {}1{}", "{a: ".repeat(n), "}".repeat(n)),
        format!("SELECT * FROM t WHERE a = {}?", "(list<int>)".repeat(n)),
        format!("CREATE TABLE t (k int PRIMARY KEY, v {}int{})", "frozen<".repeat(n), ">".repeat(n)),
    ];
    let worker = std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(move || texts.iter().map(|t| parse(t).map(|_| ()).map_err(|e| e.kind)).collect::<Vec<_>>())
        .expect("spawns");
    let results = worker.join().expect("no stack overflow");
    assert!(
        results.iter().all(|r| matches!(r, Ok(()) | Err(SyntaxErrorKind::TooDeep | SyntaxErrorKind::Invalid))),
        "{results:?}"
    );
}
