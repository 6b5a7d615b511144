//! Index clauses and row filters: Thrift's `IndexExpression`s as the engine's, with Cassandra
//! 3.11's checks (`ThriftValidation.validateFilterClauses` / `validateIndexClauses`) and words.

use model::schema::{CfMetadata, IndexType};
use storage::index::{IndexExpression, IndexOperator};
use thrift_idl as t;

use crate::thrift::error::{ire, TResult};
use crate::thrift::validate::check_name_length;

/// The expressions of a row filter or index clause, each checked: a valid column name, a known
/// operator, a value its column's validator accepts. A name or value its type refuses is
/// answered in 3.11's words: "[name]=[value] failed name (or value) validation (reason)", in hex.
pub fn index_expressions(meta: &CfMetadata, expressions: &[t::IndexExpression]) -> TResult<Vec<IndexExpression>> {
    expressions
        .iter()
        .map(|e| {
            check_name_length(&e.column_name, "column")?;
            meta.cmp.name_type().validate(&e.column_name).map_err(|err| {
                ire(format!("[{}]=[{}] failed name validation ({err})", hex(&e.column_name), hex(&e.value)))
            })?;
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

#[cfg(test)]
mod tests {
    use model::schema::CfDef;

    use super::*;
    use crate::thrift::error::ThriftError;

    fn why<T: std::fmt::Debug>(r: TResult<T>) -> String {
        match r {
            Err(ThriftError::Invalid(why)) => why,
            other => panic!("expected InvalidRequestException, got {other:?}"),
        }
    }

    #[test]
    fn refused_names_and_values_are_answered_in_3_11_words() {
        let mut def = CfDef::new("KS", "Longs");
        def.comparator_type = "org.apache.cassandra.db.marshal.LongType".into();
        def.default_validation_class = "org.apache.cassandra.db.marshal.Int32Type".into();
        let meta = CfMetadata::new(def).expect("valid definition");
        let eq =
            |name: &[u8], value: &[u8]| t::IndexExpression::new(name.to_vec(), t::IndexOperator::EQ, value.to_vec());
        assert_eq!(
            why(index_expressions(&meta, &[eq(&[1, 2, 3], &[0xAB])])),
            "[010203]=[ab] failed name validation (Expected 8 or 0 byte long (3))"
        );
        assert_eq!(
            why(index_expressions(&meta, &[eq(&[0; 8], &[0xAB])])),
            "[0000000000000000]=[ab] failed value validation (Expected 4 or 0 byte int (1))"
        );
        assert_eq!(why(index_expressions(&meta, &[eq(&[], &[])])), "column name must not be empty");
        assert!(index_expressions(&meta, &[eq(&[0; 8], &[0; 4])]).is_ok());
    }
}
