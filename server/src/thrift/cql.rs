//! Thrift's CQL calls: the query decoded (and inflated when the client compressed it), the
//! session's login and rights checked, the statement handed to the `cql` crate, and its
//! outcome encoded as a `CqlResult` the way 3.11 encodes it.

use std::io::Read;

use cql::exec::{ColumnSpec, Outcome, Prepared};
use cql::CqlError;
use thrift_idl as t;

use super::error::{ire, TResult, ThriftError};

/// Longest query text a compressed query may inflate to.
const MAX_INFLATED_QUERY: u64 = 64 << 20;

/// The text of a query as sent: UTF-8, zlib-compressed for `Compression.GZIP` (3.11 inflates
/// it with `java.util.zip.Inflater`).
pub fn query_text(query: Vec<u8>, compression: t::Compression) -> TResult<String> {
    let bytes = match compression {
        t::Compression::NONE => query,
        t::Compression::GZIP => {
            let mut out = Vec::new();
            // A bomb stops at this much text rather than filling memory.
            let limit = MAX_INFLATED_QUERY;
            flate2::read::ZlibDecoder::new(query.as_slice())
                .take(limit + 1)
                .read_to_end(&mut out)
                .map_err(|e| ire(format!("Error deflating query string: {e}")))?;
            if out.len() as u64 > limit {
                return Err(ire(format!("query decompresses to more than {limit} bytes")));
            }
            out
        }
        other => return Err(ire(format!("Unknown Compression type: {}", other.0))),
    };
    String::from_utf8(bytes).map_err(|_| ire("Invalid UTF-8 in the query string"))
}

/// A statement's outcome as Thrift's `CqlResult` (3.11's `ResultMessage.toThriftResult`):
/// rows carry every column by name with an empty key; schema changes, `USE` and writes are
/// VOID.
pub fn result(outcome: Outcome) -> t::CqlResult {
    match outcome {
        Outcome::Rows(rows) => {
            let utf8 = "UTF8Type".to_string();
            let mut schema = t::CqlMetadata::new(Default::default(), Default::default(), utf8.clone(), utf8.clone());
            for c in &rows.columns {
                schema.name_types.insert(c.name.as_bytes().to_vec(), utf8.clone());
                schema.value_types.insert(c.name.as_bytes().to_vec(), value_type(c));
            }
            let out: Vec<t::CqlRow> = rows
                .rows
                .into_iter()
                .map(|row| {
                    let columns = rows
                        .columns
                        .iter()
                        .zip(row)
                        .map(|(c, v)| t::Column {
                            name: c.name.as_bytes().to_vec(),
                            value: v,
                            timestamp: None,
                            ttl: None,
                        })
                        .collect();
                    t::CqlRow::new(Vec::new(), columns)
                })
                .collect();
            t::CqlResult::new(t::CqlResultType::ROWS, out, None, schema)
        }
        Outcome::Void | Outcome::SetKeyspace(_) | Outcome::SchemaChange(_) => {
            t::CqlResult::new(t::CqlResultType::VOID, None, None, None)
        }
    }
}

/// The type 3.11 names in a result's metadata: the class name, a descending column's base.
fn value_type(c: &ColumnSpec) -> String {
    match &c.ty {
        model::marshal::AbstractType::Reversed(base) => base.class_name(),
        other => other.class_name(),
    }
}

/// A prepared statement as `CqlPreparedResult`.
pub fn prepared_result(id: i32, p: &Prepared) -> t::CqlPreparedResult {
    let types = p.markers.iter().map(|m| m.ty.class_name()).collect();
    let names = p.markers.iter().map(|m| m.name.clone()).collect();
    t::CqlPreparedResult::new(id, p.markers.len() as i32, Some(types), Some(names))
}

impl From<CqlError> for ThriftError {
    fn from(e: CqlError) -> ThriftError {
        match e {
            // Thrift has neither SyntaxException nor AlreadyExistsException: 3.11 answers both
            // with InvalidRequestException and the same message.
            CqlError::Syntax(s) => ThriftError::Invalid(s.to_string()),
            CqlError::Invalid(why) => ThriftError::Invalid(why),
            CqlError::AlreadyExists { message, .. } => ThriftError::Invalid(message),
            CqlError::Coordinator(c) => c.into(),
        }
    }
}
