//! Wire facts checked byte by byte: field ids and types, enum ordinals, result-struct layout,
//! argument defaults, byte equality with what the generated Python client sends, and the public
//! Args/Result structs encoding and decoding the same messages as the generated client and processor.

mod common;

use std::collections::BTreeMap;
use std::io::Cursor;

use common::{recording_processor, Call, Harness, SliceAnswer};
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TFieldIdentifier, TInputProtocol, TMessageIdentifier, TMessageType,
    TOutputProtocol, TSerializable, TStructIdentifier, TType,
};
use thrift::{ApplicationErrorKind, TThriftClient};
use thrift_idl::*;

/// Output of `tests/python/make_golden_calls.py`: the bytes the generated Python client sends.
const PY_GET_SLICE: &str = "80010001000000096765745f736c696365000000010b000100000004726f77310c00020b0003000000095374616e6461726431000c00030c00020b0001000000000b000200000000020003010800040000000a00000800040000000200";
const PY_BATCH_MUTATE: &str = "800100010000000c62617463685f6d7574617465000000010d00010b0d0000000100000004726f77310b0f00000001000000095374616e64617264310c000000020c00010c00010b00010000000263310b00020000000276310a000300000000000004d20800040000003c0000000c00020a000100000000000004d30c00030f00010b000000010000000263320000000800020000000600";

fn encode<T: TSerializable>(value: &T) -> Vec<u8> {
    let mut bytes = Vec::new();
    value.write_to_out_protocol(&mut TBinaryOutputProtocol::new(&mut bytes, true)).expect("encode");
    bytes
}

fn hex_of<T: TSerializable>(value: &T) -> String {
    common::to_hex(&encode(value))
}

/// The arguments of the Python golden calls, built on the Rust side.
fn golden_get_slice_args() -> (Vec<u8>, ColumnParent, SlicePredicate, ConsistencyLevel) {
    (
        b"row1".to_vec(),
        ColumnParent::new("Standard1".to_owned(), None),
        SlicePredicate::new(None, SliceRange::new(Vec::new(), Vec::new(), true, 10)),
        ConsistencyLevel::QUORUM,
    )
}

fn golden_mutation_map() -> BTreeMap<Vec<u8>, BTreeMap<String, Vec<Mutation>>> {
    let insert = Mutation::new(
        ColumnOrSuperColumn::new(Column::new(b"c1".to_vec(), b"v1".to_vec(), 1234, 60), None, None, None),
        None,
    );
    let delete = Mutation::new(None, Deletion::new(1235, None, SlicePredicate::new(vec![b"c2".to_vec()], None)));
    BTreeMap::from([(b"row1".to_vec(), BTreeMap::from([("Standard1".to_owned(), vec![insert, delete])]))])
}

#[test]
fn column_parent_uses_field_ids_3_and_4() {
    let parent = ColumnParent::new("cf".to_owned(), b"sc".to_vec());
    // 0x0b = string/binary, then the i16 field id, i32 length, bytes; 0x00 = stop.
    assert_eq!(hex_of(&parent), concat!("0b0003", "00000002", "6366", "0b0004", "00000002", "7363", "00"));
    let path = ColumnPath::new("cf".to_owned(), None, b"c".to_vec());
    assert_eq!(hex_of(&path), concat!("0b0003", "00000002", "6366", "0b0005", "00000001", "63", "00"));
}

#[test]
fn enum_ordinals_match_cassandra() {
    let cases: [(Vec<u8>, i32); 10] = [
        (encode(&ConsistencyLevel::ONE), 1),
        (encode(&ConsistencyLevel::ANY), 6),
        (encode(&ConsistencyLevel::SERIAL), 9),
        (encode(&ConsistencyLevel::LOCAL_ONE), 11),
        (encode(&IndexOperator::EQ), 0),
        (encode(&IndexOperator::LT), 4),
        (encode(&IndexType::COMPOSITES), 2),
        (encode(&Compression::GZIP), 1),
        (encode(&Compression::NONE), 2),
        (encode(&CqlResultType::INT), 3),
    ];
    for (bytes, ordinal) in cases {
        assert_eq!(bytes, ordinal.to_be_bytes(), "ordinal {ordinal}");
    }
}

#[test]
fn slice_range_and_column_field_types() {
    let range = SliceRange::new(b"a".to_vec(), Vec::new(), false, 100);
    assert_eq!(
        hex_of(&range),
        concat!("0b0001", "00000001", "61", "0b0002", "00000000", "020003", "00", "080004", "00000064", "00")
    );
    let col = Column::new(b"n".to_vec(), b"v".to_vec(), 2, 3);
    assert_eq!(
        hex_of(&col),
        concat!(
            "0b0001",
            "00000001",
            "6e",
            "0b0002",
            "00000001",
            "76",
            "0a0003",
            "0000000000000002",
            "080004",
            "00000003",
            "00"
        )
    );
    // Optional fields left unset are not written at all.
    assert_eq!(hex_of(&Column::new(b"n".to_vec(), None, None, None)), "0b0001000000016e00");
}

#[test]
fn rust_client_sends_the_same_bytes_as_python_client() {
    let mut h = Harness::new(SliceAnswer::Columns(Vec::new()));
    let (key, parent, predicate, cl) = golden_get_slice_args();
    h.client.get_slice(key, parent, predicate, cl).expect("get_slice");
    let mut h2 = Harness::new(SliceAnswer::Columns(Vec::new()));
    h2.client.batch_mutate(golden_mutation_map(), ConsistencyLevel::ANY).expect("batch_mutate");
    assert_eq!(common::to_hex(&h.requests()[0]), PY_GET_SLICE);
    assert_eq!(common::to_hex(&h2.requests()[0]), PY_BATCH_MUTATE);
}

#[test]
fn processor_decodes_python_client_bytes() {
    let (processor, calls) = recording_processor(SliceAnswer::Columns(Vec::new()));
    let request = common::from_hex(PY_BATCH_MUTATE);
    common::process_bytes(&processor, &request).expect("process");
    let request = common::from_hex(PY_GET_SLICE);
    let reply = common::process_bytes(&processor, &request).expect("process");
    let (key, parent, predicate, cl) = golden_get_slice_args();
    assert_eq!(
        *calls.borrow(),
        vec![
            Call::BatchMutate(golden_mutation_map(), ConsistencyLevel::ANY),
            Call::GetSlice(key, parent, predicate, cl)
        ]
    );
    // REPLY, same name and sequence id; result field 0 = empty list of structs (0x0c), then stop.
    assert_eq!(
        common::to_hex(&reply),
        concat!("80010002", "00000009", "6765745f736c696365", "00000001", "0f0000", "0c", "00000000", "00")
    );
}

#[test]
fn declared_exception_sits_at_its_result_field_id() {
    let (processor, _) = recording_processor(SliceAnswer::Unavailable);
    let reply = common::process_bytes(&processor, &common::from_hex(PY_GET_SLICE)).expect("process");
    // get_slice throws (1: ire, 2: ue, 3: te): UnavailableException is struct field 2, no fields.
    assert_eq!(
        common::to_hex(&reply),
        concat!("80010002", "00000009", "6765745f736c696365", "00000001", "0c0002", "00", "00")
    );
}

/// Writes a `remove` call by hand, leaving out argument 4 (consistency_level).
fn remove_call_without_consistency(seq: i32) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut o = TBinaryOutputProtocol::new(&mut bytes, true);
    o.write_message_begin(&TMessageIdentifier::new("remove", TMessageType::Call, seq)).expect("w");
    o.write_struct_begin(&TStructIdentifier::new("remove_args")).expect("w");
    o.write_field_begin(&TFieldIdentifier::new("key", TType::String, 1)).expect("w");
    o.write_bytes(b"k1").expect("w");
    o.write_field_end().expect("w");
    o.write_field_begin(&TFieldIdentifier::new("column_path", TType::Struct, 2)).expect("w");
    ColumnPath::new("Standard1".to_owned(), None, b"c".to_vec()).write_to_out_protocol(&mut o).expect("w");
    o.write_field_end().expect("w");
    o.write_field_begin(&TFieldIdentifier::new("timestamp", TType::I64, 3)).expect("w");
    o.write_i64(42).expect("w");
    o.write_field_end().expect("w");
    o.write_field_stop().expect("w");
    o.write_struct_end().expect("w");
    o.write_message_end().expect("w");
    bytes
}

#[test]
fn omitted_consistency_level_takes_idl_default() {
    let (processor, calls) = recording_processor(SliceAnswer::Columns(Vec::new()));
    let reply = common::process_bytes(&processor, &remove_call_without_consistency(9)).expect("process");
    assert_eq!(
        *calls.borrow(),
        vec![Call::Remove(
            b"k1".to_vec(),
            ColumnPath::new("Standard1".to_owned(), None, b"c".to_vec()),
            42,
            ConsistencyLevel::ONE
        )]
    );
    // void success: REPLY with an empty result struct.
    assert_eq!(common::to_hex(&reply), concat!("80010002", "00000006", "72656d6f7665", "00000009", "00"));
}

#[test]
fn missing_required_argument_is_answered_with_exception_message() {
    // A get_slice call whose argument struct is empty: key, column_parent, predicate are required.
    let mut bytes = Vec::new();
    let mut o = TBinaryOutputProtocol::new(&mut bytes, true);
    o.write_message_begin(&TMessageIdentifier::new("get_slice", TMessageType::Call, 5)).expect("w");
    o.write_struct_begin(&TStructIdentifier::new("get_slice_args")).expect("w");
    o.write_field_stop().expect("w");
    o.write_struct_end().expect("w");
    o.write_message_end().expect("w");

    let (processor, calls) = recording_processor(SliceAnswer::Columns(Vec::new()));
    let reply = common::process_bytes(&processor, &bytes).expect("processor answers instead of failing");
    assert!(calls.borrow().is_empty(), "handler must not be called");
    let mut i = TBinaryInputProtocol::new(Cursor::new(reply), true);
    let ident = i.read_message_begin().expect("message");
    assert_eq!(
        (ident.name.as_str(), ident.message_type, ident.sequence_number),
        ("get_slice", TMessageType::Exception, 5)
    );
    let app = thrift::Error::read_application_error_from_in_protocol(&mut i).expect("application error");
    assert!(app.message.contains("key"), "{app:?}");
}

#[test]
fn unknown_method_is_answered_with_unknown_method_exception() {
    let mut bytes = Vec::new();
    let mut o = TBinaryOutputProtocol::new(&mut bytes, true);
    o.write_message_begin(&TMessageIdentifier::new("get_everything", TMessageType::Call, 11)).expect("w");
    o.write_struct_begin(&TStructIdentifier::new("args")).expect("w");
    o.write_field_stop().expect("w");
    o.write_struct_end().expect("w");
    o.write_message_end().expect("w");

    let (processor, _) = recording_processor(SliceAnswer::Columns(Vec::new()));
    let reply = common::process_bytes(&processor, &bytes).expect("process");
    let mut i = TBinaryInputProtocol::new(Cursor::new(reply), true);
    let ident = i.read_message_begin().expect("message");
    assert_eq!((ident.message_type, ident.sequence_number), (TMessageType::Exception, 11));
    let app = thrift::Error::read_application_error_from_in_protocol(&mut i).expect("application error");
    assert_eq!(app.kind, ApplicationErrorKind::UnknownMethod);
}

#[test]
fn rust_client_first_sequence_id_is_one() {
    // The golden vectors assume this; if the thrift crate changes it, regenerate them.
    let mut h = Harness::new(SliceAnswer::Columns(Vec::new()));
    assert_eq!(h.client.sequence_number(), 0);
    h.client.describe_version().expect("describe_version");
    assert_eq!(h.client.sequence_number(), 1);
}

/// The bytes of a CALL/REPLY message `name` with sequence id `seq` whose body `write` writes.
fn message(name: &str, kind: TMessageType, seq: i32, write: impl FnOnce(&mut dyn TOutputProtocol)) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut o = TBinaryOutputProtocol::new(&mut bytes, true);
    o.write_message_begin(&TMessageIdentifier::new(name, kind, seq)).expect("w");
    write(&mut o);
    o.write_message_end().expect("w");
    bytes
}

#[test]
fn public_args_structs_encode_and_decode_python_client_calls() {
    let (key, column_parent, predicate, consistency_level) = golden_get_slice_args();
    let args = CassandraGetSliceArgs { key, column_parent, predicate, consistency_level };
    let call = message("get_slice", TMessageType::Call, 1, |o| args.write_to_out_protocol(o).expect("encode"));
    assert_eq!(common::to_hex(&call), PY_GET_SLICE);

    let mut i = TBinaryInputProtocol::new(Cursor::new(common::from_hex(PY_BATCH_MUTATE)), true);
    let ident = i.read_message_begin().expect("message");
    assert_eq!((ident.name.as_str(), ident.message_type), ("batch_mutate", TMessageType::Call));
    let args = CassandraBatchMutateArgs::read_from_in_protocol(&mut i).expect("decode");
    assert_eq!(
        args,
        CassandraBatchMutateArgs { mutation_map: golden_mutation_map(), consistency_level: ConsistencyLevel::ANY }
    );
}

#[test]
fn public_result_structs_match_the_processor_replies() {
    // Decode the processor's exception reply with the public result struct.
    let (processor, _) = recording_processor(SliceAnswer::Unavailable);
    let reply = common::process_bytes(&processor, &common::from_hex(PY_GET_SLICE)).expect("process");
    let mut i = TBinaryInputProtocol::new(Cursor::new(reply.clone()), true);
    let ident = i.read_message_begin().expect("message");
    let result = CassandraGetSliceResult::read_from_in_protocol(&mut i).expect("decode");
    assert_eq!(
        (result.result_value, result.ire, result.ue, result.te),
        (None, None, Some(UnavailableException::new()), None)
    );

    // Encode a success the way a dispatcher of our own would, and compare with the processor's.
    let column = ColumnOrSuperColumn::new(Column::new(b"c".to_vec(), b"v".to_vec(), 7, None), None, None, None);
    let (processor, _) = recording_processor(SliceAnswer::Columns(vec![column.clone()]));
    let expected = common::process_bytes(&processor, &common::from_hex(PY_GET_SLICE)).expect("process");
    let result = CassandraGetSliceResult { result_value: Some(vec![column]), ire: None, ue: None, te: None };
    let ours = message("get_slice", TMessageType::Reply, ident.sequence_number, |o| {
        result.write_to_out_protocol(o).expect("w")
    });
    assert_eq!(common::to_hex(&ours), common::to_hex(&expected));
}
