//! Round trips through the generated code: structs encoded and decoded with the binary and compact
//! protocols, and whole calls from the generated client through the generated processor to a
//! handler and back.

mod common;

use std::collections::BTreeMap;
use std::io::Cursor;

use common::{Call, Harness, SliceAnswer};
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol, TSerializable,
};
use thrift::OrderedFloat;
use thrift_idl::*;

fn binary_round_trip<T: TSerializable>(value: &T) -> T {
    let mut bytes = Vec::new();
    value.write_to_out_protocol(&mut TBinaryOutputProtocol::new(&mut bytes, true)).expect("encode");
    let mut input = TBinaryInputProtocol::new(Cursor::new(bytes), true);
    T::read_from_in_protocol(&mut input).expect("decode")
}

fn compact_round_trip<T: TSerializable>(value: &T) -> T {
    let mut bytes = Vec::new();
    value.write_to_out_protocol(&mut TCompactOutputProtocol::new(&mut bytes)).expect("encode");
    let mut input = TCompactInputProtocol::new(Cursor::new(bytes));
    T::read_from_in_protocol(&mut input).expect("decode")
}

fn column(name: &str, value: &str, timestamp: i64) -> Column {
    Column::new(name.as_bytes().to_vec(), value.as_bytes().to_vec(), timestamp, None)
}

fn sample_super_cosc() -> ColumnOrSuperColumn {
    ColumnOrSuperColumn {
        super_column: Some(SuperColumn::new(
            b"sc1".to_vec(),
            vec![column("a", "1", 10), Column::new(b"b".to_vec(), b"\x00\xff".to_vec(), -5, 3600)],
        )),
        ..Default::default()
    }
}

fn sample_mutation_map() -> BTreeMap<Vec<u8>, BTreeMap<String, Vec<Mutation>>> {
    let insert = Mutation::new(ColumnOrSuperColumn::new(column("c1", "v1", 1234), None, None, None), None);
    let delete =
        Mutation::new(None, Deletion::new(1235, None, SlicePredicate::new(vec![b"c2".to_vec(), b"c3".to_vec()], None)));
    let counter =
        Mutation::new(ColumnOrSuperColumn::new(None, None, CounterColumn::new(b"hits".to_vec(), -7), None), None);
    let mut row1 = BTreeMap::new();
    row1.insert("Standard1".to_owned(), vec![insert, delete]);
    row1.insert("Counter1".to_owned(), vec![counter]);
    let mut row2 = BTreeMap::new();
    row2.insert("Standard1".to_owned(), vec![Mutation::new(None, Deletion::new(99, None, None))]);
    let mut map = BTreeMap::new();
    map.insert(b"row1".to_vec(), row1);
    map.insert(vec![0u8, 1, 2, 255], row2);
    map
}

#[test]
fn column_or_super_column_survives_binary_and_compact() {
    let value = sample_super_cosc();
    assert_eq!(binary_round_trip(&value), value);
    assert_eq!(compact_round_trip(&value), value);
}

#[test]
fn schema_definitions_survive_round_trip() {
    let mut cf = CfDef::new(
        "Keyspace1".to_owned(),
        "Super1".to_owned(),
        "Super".to_owned(),
        "UTF8Type".to_owned(),
        "LongType".to_owned(),
        None,
        None,
        None,
        OrderedFloat(0.25),
        vec![ColumnDef::new(b"age".to_vec(), "LongType".to_owned(), IndexType::KEYS, "age_idx".to_owned(), None)],
        864000,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        "BytesType".to_owned(),
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        OrderedFloat(0.1),
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
    );
    cf.triggers =
        Some(vec![TriggerDef::new("audit".to_owned(), BTreeMap::from([("class".to_owned(), "X".to_owned())]))]);
    let ks = KsDef::new(
        "Keyspace1".to_owned(),
        "org.apache.cassandra.locator.SimpleStrategy".to_owned(),
        BTreeMap::from([("replication_factor".to_owned(), "3".to_owned())]),
        None,
        vec![cf],
        false,
    );
    assert_eq!(binary_round_trip(&ks), ks);
    assert_eq!(compact_round_trip(&ks), ks);
}

#[test]
fn batch_mutate_call_reaches_handler_intact() {
    let mut h = Harness::new(SliceAnswer::Columns(Vec::new()));
    h.client.batch_mutate(sample_mutation_map(), ConsistencyLevel::LOCAL_QUORUM).expect("batch_mutate");
    assert_eq!(h.take_calls(), vec![Call::BatchMutate(sample_mutation_map(), ConsistencyLevel::LOCAL_QUORUM)]);
}

#[test]
fn get_slice_returns_handler_columns_to_client() {
    let answer = vec![sample_super_cosc(), ColumnOrSuperColumn::new(column("x", "y", 1), None, None, None)];
    let mut h = Harness::new(SliceAnswer::Columns(answer.clone()));
    let parent = ColumnParent::new("Super1".to_owned(), b"sc1".to_vec());
    let predicate = SlicePredicate::new(None, SliceRange::new(b"a".to_vec(), Vec::new(), true, 7));
    let got =
        h.client.get_slice(b"k".to_vec(), parent.clone(), predicate.clone(), ConsistencyLevel::TWO).expect("get_slice");
    assert_eq!(got, answer);
    assert_eq!(h.take_calls(), vec![Call::GetSlice(b"k".to_vec(), parent, predicate, ConsistencyLevel::TWO)]);
}

#[test]
fn declared_exception_reaches_client_as_typed_user_error() {
    let mut h = Harness::new(SliceAnswer::Unavailable);
    let err = h
        .client
        .get_slice(
            b"k".to_vec(),
            ColumnParent::new("Standard1".to_owned(), None),
            SlicePredicate::default(),
            ConsistencyLevel::ALL,
        )
        .expect_err("handler answers UnavailableException");
    match err {
        thrift::Error::User(e) => assert!(e.downcast_ref::<UnavailableException>().is_some(), "got {e:?}"),
        other => panic!("expected a user error, got {other:?}"),
    }

    let bad = AuthenticationRequest::new(BTreeMap::from([("password".to_owned(), "wrong".to_owned())]));
    match h.client.login(bad) {
        Err(thrift::Error::User(e)) => {
            let authnx = e.downcast_ref::<AuthenticationException>().expect("AuthenticationException");
            assert_eq!(authnx.why, "bad password");
        }
        other => panic!("expected AuthenticationException, got {other:?}"),
    }
    let good = AuthenticationRequest::new(BTreeMap::from([("password".to_owned(), "secret".to_owned())]));
    h.client.login(good).expect("login with the right password");
}

#[test]
fn undeclared_exception_becomes_application_error_and_connection_survives() {
    let mut h = Harness::new(SliceAnswer::UndeclaredNotFound);
    let err = h
        .client
        .get_slice(
            b"k".to_vec(),
            ColumnParent::new("Standard1".to_owned(), None),
            SlicePredicate::default(),
            ConsistencyLevel::ONE,
        )
        .expect_err("NotFoundException is not declared by get_slice");
    assert!(matches!(err, thrift::Error::Application(_)), "got {err:?}");
    // The processor answered with an EXCEPTION message; the next call on the same client works.
    assert_eq!(h.client.describe_version().expect("describe_version"), "20.1.0");
}

#[test]
fn cas_round_trip_keeps_both_consistency_levels() {
    let mut h = Harness::new(SliceAnswer::Columns(Vec::new()));
    let result = h
        .client
        .cas(
            b"k".to_vec(),
            "Standard1".to_owned(),
            Vec::new(),
            vec![column("c", "v", 5)],
            ConsistencyLevel::LOCAL_SERIAL,
            ConsistencyLevel::LOCAL_ONE,
        )
        .expect("cas");
    assert!(result.success);
    assert_eq!(
        h.take_calls(),
        vec![Call::Cas(
            b"k".to_vec(),
            "Standard1".to_owned(),
            Vec::new(),
            vec![column("c", "v", 5)],
            ConsistencyLevel::LOCAL_SERIAL,
            ConsistencyLevel::LOCAL_ONE
        )]
    );
}
