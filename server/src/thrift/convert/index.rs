//! Index clauses and row filters: Thrift's `IndexExpression`s as the engine's, with Cassandra
//! 3.11's checks (`ThriftValidation.validateFilterClauses` / `validateIndexClauses`) and words.

use storage::index::{IndexExpression, IndexOperator};
use storage::schema::{CfMetadata, IndexType};
use thrift_idl as t;

use crate::thrift::error::{ire, TResult};
use crate::thrift::validate::validate_name;

/// The expressions of a row filter or index clause, each checked: a valid column name, a known
/// operator, a value its column's validator accepts.
pub fn index_expressions(meta: &CfMetadata, expressions: &[t::IndexExpression]) -> TResult<Vec<IndexExpression>> {
    expressions
        .iter()
        .map(|e| {
            validate_name(&e.column_name, meta.cmp.name_type(), "column")?;
            let op =
                IndexOperator::from_thrift(e.op.0).ok_or_else(|| ire(format!("unknown index operator {}", e.op.0)))?;
            meta.validators.value(&e.column_name).validate(&e.value).map_err(|err| {
                ire(format!("[{}]=[{}] failed value validation ({err})", hex(&e.column_name), hex(&e.value)))
            })?;
            Ok(IndexExpression { column: e.column_name.clone(), op, value: e.value.clone() })
        })
        .collect()
}

/// True when some EQ expression is on a column with a KEYS index: what an index query needs.
pub fn has_indexed_eq(meta: &CfMetadata, expressions: &[IndexExpression]) -> bool {
    expressions.iter().any(|e| {
        e.op == IndexOperator::Eq
            && meta.def.column_metadata.iter().any(|c| c.name == e.column && c.index_type == Some(IndexType::Keys))
    })
}

/// The expressions of a get_indexed_slices clause, which must have an EQ on an indexed column.
pub fn index_clause_expressions(meta: &CfMetadata, clause: &t::IndexClause) -> TResult<Vec<IndexExpression>> {
    if clause.expressions.is_empty() {
        return Err(ire("index clause list may not be empty"));
    }
    let expressions = index_expressions(meta, &clause.expressions)?;
    if !has_indexed_eq(meta, &expressions) {
        return Err(ire("No indexed columns present in index clause with operator EQ"));
    }
    Ok(expressions)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
