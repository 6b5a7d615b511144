//! Thrift's wire-type rule in the generated readers (applied by `postprocess_rs.py`): a known field
//! id that arrives with another wire type than our writer uses is skipped like an unknown field,
//! so it is absent from the decoded value and the rest of the message still decodes.

mod common;

use std::collections::BTreeMap;
use std::io::Cursor;

use common::{recording_processor, SliceAnswer};
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol, TFieldIdentifier,
    TInputProtocol, TMessageIdentifier, TMessageType, TOutputProtocol, TStructIdentifier, TType,
};
use thrift_idl::*;

/// A binary-protocol reader over the bytes written as `hex`.
fn reader(hex: &str) -> TBinaryInputProtocol<Cursor<Vec<u8>>> {
    TBinaryInputProtocol::new(Cursor::new(common::from_hex(hex)), true)
}

fn missing_field_message(err: thrift::Error) -> String {
    match err {
        thrift::Error::Protocol(e) => e.message,
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[test]
fn mistyped_optional_field_is_skipped_and_absent() {
    // Column: name "n"; ttl (id 4, an i32) sent as the string "abc"; timestamp 5; stop. Then a
    // second Column in the same buffer, which must decode from where the first one ended.
    let hex = concat!(
        "0b0001",
        "00000001",
        "6e",
        "0b0004",
        "00000003",
        "616263",
        "0a0003",
        "0000000000000005",
        "00",
        "0b0001",
        "00000001",
        "6d",
        "00"
    );
    let mut input = reader(hex);
    let first = Column::read_from_in_protocol(&mut input).expect("decode first");
    assert_eq!(first, Column::new(b"n".to_vec(), None, 5, None));
    let second = Column::read_from_in_protocol(&mut input).expect("decode second");
    assert_eq!(second, Column::new(b"m".to_vec(), None, None, None));
}

#[test]
fn mistyped_field_holding_a_container_is_skipped_whole() {
    // Column: value (id 2, a string) sent as a list of one struct {1: i32 7}; then timestamp 9.
    let hex = concat!(
        "0f0002",
        "0c",
        "00000001",
        "080001",
        "00000007",
        "00",
        "0b0001",
        "00000001",
        "6e",
        "0a0003",
        "0000000000000009",
        "00"
    );
    let column = Column::read_from_in_protocol(&mut reader(hex)).expect("decode");
    assert_eq!(column, Column::new(b"n".to_vec(), None, 9, None));
}

#[test]
fn mistyped_required_field_is_reported_missing() {
    // Column: name (id 1, required string) sent as the i32 3; value "v".
    let hex = concat!("080001", "00000003", "0b0002", "00000001", "76", "00");
    let err = Column::read_from_in_protocol(&mut reader(hex)).expect_err("name is required");
    assert_eq!(missing_field_message(err), "missing required field Column.name");
}

#[test]
fn mistyped_nested_struct_field_is_skipped() {
    // Mutation: column_or_supercolumn (id 1, a struct) sent as an i64; deletion {timestamp 4}.
    let hex = concat!("0a0001", "0000000000000001", "0c0002", "0a0001", "0000000000000004", "00", "00");
    let mutation = Mutation::read_from_in_protocol(&mut reader(hex)).expect("decode");
    assert_eq!(mutation, Mutation::new(None, Deletion::new(4, None, None)));
}

#[test]
fn args_reader_skips_mistyped_argument_and_applies_its_default() {
    // get_count args: key "k"; column_parent {3: "cf"}; predicate {1: list<string> []};
    // consistency_level (id 4, an i32) sent as the string "QUORUM": skipped, so the default ONE.
    let hex = concat!(
        "0b0001",
        "00000001",
        "6b",
        "0c0002",
        "0b0003",
        "00000002",
        "6366",
        "00",
        "0c0003",
        "0f0001",
        "0b",
        "00000000",
        "00",
        "0b0004",
        "00000006",
        "51554f52554d",
        "00"
    );
    let args = CassandraGetCountArgs::read_from_in_protocol(&mut reader(hex)).expect("decode");
    assert_eq!(
        args,
        CassandraGetCountArgs {
            key: b"k".to_vec(),
            column_parent: ColumnParent::new("cf".to_owned(), None),
            predicate: SlicePredicate::new(Vec::new(), None),
            consistency_level: ConsistencyLevel::ONE,
        }
    );
}

#[test]
fn result_reader_skips_mistyped_return_value() {
    // get_count result: success (id 0, an i32) sent as a string; ire {why "x"}.
    let hex = concat!("0b0000", "00000001", "31", "0c0001", "0b0001", "00000001", "78", "00", "00");
    let result = CassandraGetCountResult::read_from_in_protocol(&mut reader(hex)).expect("decode");
    assert_eq!(result.result_value, None);
    assert_eq!(result.ire, Some(InvalidRequestException::new("x".to_owned())));
}

/// A Cassandra 0.6 client's batch_mutate arguments: 1: keyspace (string), 2: mutation_map
/// (map<string, map<string, list<Mutation>>>), 3: consistency_level. 20.1.0 declares
/// 1: mutation_map (a map), 2: consistency_level (an i32).
fn cassandra_06_batch_mutate_args() -> Vec<u8> {
    let mutations = vec![thrift_idl::v06::Mutation::new(
        thrift_idl::v06::ColumnOrSuperColumn::new(thrift_idl::v06::Column::new(b"c".to_vec(), b"v".to_vec(), 1), None),
        None,
    )];
    let args = thrift_idl::v06::CassandraBatchMutateArgs {
        keyspace: "Keyspace1".to_owned(),
        mutation_map: BTreeMap::from([("row1".to_owned(), BTreeMap::from([("Standard1".to_owned(), mutations)]))]),
        consistency_level: thrift_idl::v06::ConsistencyLevel::ONE,
    };
    let mut bytes = Vec::new();
    args.write_to_out_protocol(&mut TBinaryOutputProtocol::new(&mut bytes, true)).expect("encode");
    bytes
}

#[test]
fn cassandra_06_batch_mutate_read_as_20_1_0_is_missing_its_map_not_a_short_read() {
    let bytes = cassandra_06_batch_mutate_args();
    let len = bytes.len() as u64;
    let mut cursor = Cursor::new(bytes);
    let err = {
        let mut input = TBinaryInputProtocol::new(&mut cursor, true);
        CassandraBatchMutateArgs::read_from_in_protocol(&mut input).expect_err("not a 20.1.0 batch_mutate")
    };
    assert_eq!(missing_field_message(err), "missing required field CassandraBatchMutateArgs.mutation_map");
    // Every field was skipped whole: the reader stopped exactly at the end of the struct.
    assert_eq!(cursor.position(), len);
}

#[test]
fn processor_answers_a_06_batch_mutate_with_an_exception_message() {
    let mut request = Vec::new();
    {
        let mut o = TBinaryOutputProtocol::new(&mut request, true);
        o.write_message_begin(&TMessageIdentifier::new("batch_mutate", TMessageType::Call, 3)).expect("w");
    }
    request.extend_from_slice(&cassandra_06_batch_mutate_args());

    let (processor, calls) = recording_processor(SliceAnswer::Columns(Vec::new()));
    let reply = common::process_bytes(&processor, &request).expect("the processor answers");
    assert!(calls.borrow().is_empty(), "handler must not be called");
    let mut i = TBinaryInputProtocol::new(Cursor::new(reply), true);
    let ident = i.read_message_begin().expect("message");
    assert_eq!(
        (ident.name.as_str(), ident.message_type, ident.sequence_number),
        ("batch_mutate", TMessageType::Exception, 3)
    );
    let app = thrift::Error::read_application_error_from_in_protocol(&mut i).expect("application error");
    assert!(app.message.contains("mutation_map"), "{app:?}");
}

#[test]
fn compact_protocol_bool_fields_follow_the_rule_too() {
    // In the compact protocol a bool's value rides in its field header; it must still be read
    // when expected, and skipped when it arrives in place of another type.
    for reversed in [false, true] {
        let range = SliceRange::new(b"a".to_vec(), Vec::new(), reversed, 3);
        let mut bytes = Vec::new();
        range.write_to_out_protocol(&mut TCompactOutputProtocol::new(&mut bytes)).expect("encode");
        let back =
            SliceRange::read_from_in_protocol(&mut TCompactInputProtocol::new(Cursor::new(bytes))).expect("decode");
        assert_eq!(back, range);
    }

    // SliceRange with count (id 4, an i32) sent as a bool: count is required, so it is missing.
    let mut bytes = Vec::new();
    {
        let mut o = TCompactOutputProtocol::new(&mut bytes);
        o.write_struct_begin(&TStructIdentifier::new("SliceRange")).expect("w");
        for id in [1, 2] {
            o.write_field_begin(&TFieldIdentifier::new("s", TType::String, id)).expect("w");
            o.write_bytes(b"").expect("w");
            o.write_field_end().expect("w");
        }
        o.write_field_begin(&TFieldIdentifier::new("reversed", TType::Bool, 3)).expect("w");
        o.write_bool(true).expect("w");
        o.write_field_end().expect("w");
        o.write_field_begin(&TFieldIdentifier::new("count", TType::Bool, 4)).expect("w");
        o.write_bool(true).expect("w");
        o.write_field_end().expect("w");
        o.write_field_stop().expect("w");
        o.write_struct_end().expect("w");
    }
    let mut input = TCompactInputProtocol::new(Cursor::new(bytes));
    let err = SliceRange::read_from_in_protocol(&mut input).expect_err("count is required");
    assert_eq!(missing_field_message(err), "missing required field SliceRange.count");
}
