//! CQL 3 through Thrift's `execute_cql3_query`, `prepare_cql3_query` and
//! `execute_prepared_cql3_query`, against a real node: seed 001's tables and queries as written,
//! the statements a user tries next, the errors Cassandra 3.11 gives, and one column family
//! seen from both APIs.

use e2e::*;
use thrift_idl as t;

mod collections;
mod queries;
mod statements;
mod thrift_tables;

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

/// One column's value of a one-row SELECT JSON.
fn json_of(c: &mut Client, query: &str) -> String {
    let got = rows(&run(c, query));
    assert_eq!(got.len(), 1, "{query}: {got:?}");
    got[0][0].strip_prefix("[json]=").expect("a [json] column").to_string()
}
