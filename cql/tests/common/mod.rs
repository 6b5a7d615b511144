//! Helpers shared by the integration suites.
#![allow(dead_code)]

use cql::{parse, Statement};

/// Parses `text`, checks that its display parses back to the same tree and prints the same
/// text again, and returns the tree.
pub fn parsed(text: &str) -> Statement {
    let statement = match parse(text) {
        Ok(s) => s,
        Err(e) => panic!("{text:?} should parse, got: {e}"),
    };
    let shown = statement.to_string();
    let again = match parse(&shown) {
        Ok(s) => s,
        Err(e) => panic!("display of {text:?} is {shown:?}, which does not parse: {e}"),
    };
    assert_eq!(again, statement, "display of {text:?} is {shown:?}, which parses to another tree");
    assert_eq!(again.to_string(), shown, "display is not stable for {text:?}");
    statement
}

/// The error message `text` gets.
pub fn error(text: &str) -> String {
    match parse(text) {
        Ok(s) => panic!("{text:?} should not parse, got {s:?}"),
        Err(e) => e.message,
    }
}
