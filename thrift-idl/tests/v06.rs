//! The 0.6 API (`thrift_idl::v06`, from `cassandra-0.6.thrift`) checked against the fact sheet
//! (shared/reference/thrift-api-0.6.md): version, enum numbers, the field ids and wire types of every
//! struct, every method's name, argument ids and types and exception ids, argument defaults,
//! round trips, and byte equality with the generated Python 0.6 client.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Cursor, Write};
use std::rc::Rc;

use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol, TFieldIdentifier,
    TInputProtocol, TMessageType, TOutputProtocol, TSerializable, TStructIdentifier, TType,
};
use thrift_idl::v06::*;

/// Output of `thrift-idl/tests/make_golden_06.py`: what the generated Python 0.6 client sends.
const PY_BATCH_MUTATE: &str = "800100010000000c62617463685f6d7574617465000000010b0001000000094b65797370616365310d00020b0d0000000100000004726f77310b0f00000001000000095374616e64617264310c000000020c00010c00010b00010000000263310b00020000000276310a000300000000000004d20000000c00020a000100000000000004d30c00030f00010b000000010000000263320000000800030000000000";
const PY_GET_RANGE_SLICE: &str = "800100010000000f6765745f72616e67655f736c696365000000010b0001000000094b65797370616365310c00020b0003000000065375706572310b0004000000027363000c00030c00020b0001000000000b000200000000020003000800040000006400000b000400000001610b0005000000017a0800060000000a0800070000000200";

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn encode<T: TSerializable>(value: &T) -> Vec<u8> {
    let mut bytes = Vec::new();
    value.write_to_out_protocol(&mut TBinaryOutputProtocol::new(&mut bytes, true)).expect("encode");
    bytes
}

/// (field id, wire type) of each top-level field of one encoded struct, in wire order.
fn field_layout(i: &mut dyn TInputProtocol) -> Vec<(i16, TType)> {
    let mut fields = Vec::new();
    i.read_struct_begin().expect("struct begin");
    loop {
        let field = i.read_field_begin().expect("field begin");
        if field.field_type == TType::Stop {
            break;
        }
        fields.push((field.id.expect("field id"), field.field_type));
        i.skip(field.field_type).expect("skip field");
        i.read_field_end().expect("field end");
    }
    i.read_struct_end().expect("struct end");
    fields
}

fn layout_of<T: TSerializable>(value: &T) -> Vec<(i16, TType)> {
    field_layout(&mut TBinaryInputProtocol::new(Cursor::new(encode(value)), true))
}

fn column(name: &str, value: &str, timestamp: i64) -> Column {
    Column::new(name.as_bytes().to_vec(), value.as_bytes().to_vec(), timestamp)
}

fn full_predicate() -> SlicePredicate {
    SlicePredicate::new(vec![b"a".to_vec()], SliceRange::new(b"a".to_vec(), b"z".to_vec(), true, 7))
}

fn super_cosc() -> ColumnOrSuperColumn {
    ColumnOrSuperColumn::new(column("c", "v", 1), SuperColumn::new(b"sc".to_vec(), vec![column("a", "1", 2)]))
}

#[test]
fn version_is_2_2_0() {
    assert_eq!(VERSION, "2.2.0");
}

#[test]
fn consistency_levels_have_their_0_6_numbers() {
    let levels = [
        (ConsistencyLevel::ZERO, 0),
        (ConsistencyLevel::ONE, 1),
        (ConsistencyLevel::QUORUM, 2),
        (ConsistencyLevel::DCQUORUM, 3),
        (ConsistencyLevel::DCQUORUMSYNC, 4),
        (ConsistencyLevel::ALL, 5),
        (ConsistencyLevel::ANY, 6),
    ];
    for (level, number) in levels {
        assert_eq!(encode(&level), i32::to_be_bytes(number), "{level:?}");
    }
    assert_eq!(ConsistencyLevel::ENUM_VALUES.len(), levels.len(), "0.6 has exactly these seven levels");
}

/// Asserts the (id, wire type) of each field of `value` as encoded.
fn assert_layout<T: TSerializable>(name: &str, value: &T, want: &[(i16, TType)]) {
    assert_eq!(layout_of(value), want, "{name}");
}

#[test]
fn struct_field_ids_and_types_match_the_fact_sheet() {
    use TType::{Bool, List, Map, String as Str, Struct, I32, I64};
    // Every struct with every field set, so each id appears on the wire.
    assert_layout("Column", &column("n", "v", 1), &[(1, Str), (2, Str), (3, I64)]);
    assert_layout("SuperColumn", &SuperColumn::new(b"s".to_vec(), vec![]), &[(1, Str), (2, List)]);
    assert_layout("ColumnOrSuperColumn", &super_cosc(), &[(1, Struct), (2, Struct)]);
    assert_layout("ColumnParent", &ColumnParent::new("cf".to_owned(), b"s".to_vec()), &[(3, Str), (4, Str)]);
    let path = ColumnPath::new("cf".to_owned(), b"s".to_vec(), b"c".to_vec());
    assert_layout("ColumnPath", &path, &[(3, Str), (4, Str), (5, Str)]);
    let range = SliceRange::new(vec![], vec![], false, 100);
    assert_layout("SliceRange", &range, &[(1, Str), (2, Str), (3, Bool), (4, I32)]);
    assert_layout("SlicePredicate", &full_predicate(), &[(1, List), (2, Struct)]);
    let keys = KeyRange::new("a".to_owned(), "b".to_owned(), "1".to_owned(), "2".to_owned(), 5);
    assert_layout("KeyRange", &keys, &[(1, Str), (2, Str), (3, Str), (4, Str), (5, I32)]);
    assert_layout("KeySlice", &KeySlice::new("k".to_owned(), vec![]), &[(1, Str), (2, List)]);
    let deletion = Deletion::new(9, b"s".to_vec(), full_predicate());
    assert_layout("Deletion", &deletion, &[(1, I64), (2, Str), (3, Struct)]);
    let mutation = Mutation::new(super_cosc(), Deletion::new(9, None, None));
    assert_layout("Mutation", &mutation, &[(1, Struct), (2, Struct)]);
    let ring = TokenRange::new("1".to_owned(), "2".to_owned(), vec!["127.0.0.1".to_owned()]);
    assert_layout("TokenRange", &ring, &[(1, Str), (2, Str), (3, List)]);
    assert_layout("AuthenticationRequest", &AuthenticationRequest::new(BTreeMap::new()), &[(1, Map)]);
    assert_layout("NotFoundException", &NotFoundException::new(), &[]);
    assert_layout("InvalidRequestException", &InvalidRequestException::new("w".to_owned()), &[(1, Str)]);
    assert_layout("UnavailableException", &UnavailableException::new(), &[]);
    assert_layout("TimedOutException", &TimedOutException::new(), &[]);
    assert_layout("AuthenticationException", &AuthenticationException::new("w".to_owned()), &[(1, Str)]);
    assert_layout("AuthorizationException", &AuthorizationException::new("w".to_owned()), &[(1, Str)]);
}

#[test]
fn column_bytes_have_no_ttl_and_column_parent_starts_at_id_3() {
    // 0x0b string, 0x0a i64; ids 1..3, then stop.
    assert_eq!(
        to_hex(&encode(&column("n", "v", 2))),
        concat!("0b0001", "00000001", "6e", "0b0002", "00000001", "76", "0a0003", "0000000000000002", "00")
    );
    assert_eq!(to_hex(&encode(&ColumnParent::new("cf".to_owned(), None))), concat!("0b0003", "00000002", "6366", "00"));
}

fn binary_round_trip<T: TSerializable>(value: &T) -> T {
    let mut input = TBinaryInputProtocol::new(Cursor::new(encode(value)), true);
    T::read_from_in_protocol(&mut input).expect("decode")
}

fn compact_round_trip<T: TSerializable>(value: &T) -> T {
    let mut bytes = Vec::new();
    value.write_to_out_protocol(&mut TCompactOutputProtocol::new(&mut bytes)).expect("encode");
    T::read_from_in_protocol(&mut TCompactInputProtocol::new(Cursor::new(bytes))).expect("decode")
}

fn assert_round_trips<T: TSerializable + PartialEq + std::fmt::Debug>(value: T) {
    assert_eq!(binary_round_trip(&value), value, "binary");
    assert_eq!(compact_round_trip(&value), value, "compact");
}

#[test]
fn structs_survive_binary_and_compact_round_trips() {
    assert_round_trips(super_cosc());
    assert_round_trips(Column::new(vec![0, 255], vec![], i64::MIN));
    assert_round_trips(ColumnPath::new("Super1".to_owned(), b"sc".to_vec(), None));
    assert_round_trips(ColumnParent::new("Standard1".to_owned(), None));
    assert_round_trips(full_predicate());
    assert_round_trips(SliceRange::new(vec![], b"\xff".to_vec(), false, 0));
    assert_round_trips(KeyRange::new(
        None,
        None,
        "0".to_owned(),
        "170141183460469231731687303715884105727".to_owned(),
        100,
    ));
    assert_round_trips(KeySlice::new("row\u{e9}".to_owned(), vec![super_cosc(), ColumnOrSuperColumn::new(None, None)]));
    assert_round_trips(Mutation::new(None, Deletion::new(-1, b"sc".to_vec(), full_predicate())));
    assert_round_trips(TokenRange::new(
        "a".to_owned(),
        "b".to_owned(),
        vec!["10.0.0.1".to_owned(), "10.0.0.2".to_owned()],
    ));
    let credentials =
        BTreeMap::from([("username".to_owned(), "u".to_owned()), ("password".to_owned(), "p".to_owned())]);
    assert_round_trips(AuthenticationRequest::new(credentials));
    assert_round_trips(InvalidRequestException::new("Keyspace Foo does not exist in this schema.".to_owned()));
    assert_round_trips(AuthorizationException::new("no".to_owned()));
    assert_round_trips(NotFoundException::new());
}

#[test]
fn public_args_struct_round_trips_a_batch_mutate() {
    let mutation_map = BTreeMap::from([(
        "row1".to_owned(),
        BTreeMap::from([("Standard1".to_owned(), vec![Mutation::new(super_cosc(), None)])]),
    )]);
    let args = CassandraBatchMutateArgs {
        keyspace: "Keyspace1".to_owned(),
        mutation_map,
        consistency_level: ConsistencyLevel::DCQUORUMSYNC,
    };
    let mut bytes = Vec::new();
    args.write_to_out_protocol(&mut TCompactOutputProtocol::new(&mut bytes)).expect("encode");
    let back = CassandraBatchMutateArgs::read_from_in_protocol(&mut TCompactInputProtocol::new(Cursor::new(bytes)))
        .expect("decode");
    assert_eq!(back, args);
}

/// An exception a method declares, by the name its result struct gives it.
#[derive(Clone, Copy, Debug)]
enum Throws {
    Ire,
    Nfe,
    Ue,
    Te,
    Authnx,
    Authzx,
}

impl Throws {
    fn encoded(self) -> Vec<u8> {
        match self {
            Throws::Ire => encode(&InvalidRequestException::new("why".to_owned())),
            Throws::Nfe => encode(&NotFoundException::new()),
            Throws::Ue => encode(&UnavailableException::new()),
            Throws::Te => encode(&TimedOutException::new()),
            Throws::Authnx => encode(&AuthenticationException::new("who".to_owned())),
            Throws::Authzx => encode(&AuthorizationException::new("what".to_owned())),
        }
    }
}

struct MethodFact {
    name: &'static str,
    args: &'static [(i16, TType)],
    throws: &'static [(i16, Throws)],
}

/// The service table of the fact sheet, in IDL order.
const METHODS: &[MethodFact] = {
    use TType::{List, Map, String as Str, Struct, I32, I64};
    use Throws::*;
    const DATA: &[(i16, Throws)] = &[(1, Ire), (2, Ue), (3, Te)];
    &[
        MethodFact { name: "login", args: &[(1, Str), (2, Struct)], throws: &[(1, Authnx), (2, Authzx)] },
        MethodFact {
            name: "get",
            args: &[(1, Str), (2, Str), (3, Struct), (4, I32)],
            throws: &[(1, Ire), (2, Nfe), (3, Ue), (4, Te)],
        },
        MethodFact { name: "get_slice", args: &[(1, Str), (2, Str), (3, Struct), (4, Struct), (5, I32)], throws: DATA },
        MethodFact { name: "multiget", args: &[(1, Str), (2, List), (3, Struct), (4, I32)], throws: DATA },
        MethodFact {
            name: "multiget_slice",
            args: &[(1, Str), (2, List), (3, Struct), (4, Struct), (5, I32)],
            throws: DATA,
        },
        MethodFact { name: "get_count", args: &[(1, Str), (2, Str), (3, Struct), (4, I32)], throws: DATA },
        MethodFact {
            name: "get_range_slice",
            args: &[(1, Str), (2, Struct), (3, Struct), (4, Str), (5, Str), (6, I32), (7, I32)],
            throws: DATA,
        },
        MethodFact {
            name: "get_range_slices",
            args: &[(1, Str), (2, Struct), (3, Struct), (4, Struct), (5, I32)],
            throws: DATA,
        },
        MethodFact {
            name: "insert",
            args: &[(1, Str), (2, Str), (3, Struct), (4, Str), (5, I64), (6, I32)],
            throws: DATA,
        },
        MethodFact { name: "batch_insert", args: &[(1, Str), (2, Str), (3, Map), (4, I32)], throws: DATA },
        MethodFact { name: "remove", args: &[(1, Str), (2, Str), (3, Struct), (4, I64), (5, I32)], throws: DATA },
        MethodFact { name: "batch_mutate", args: &[(1, Str), (2, Map), (3, I32)], throws: DATA },
        MethodFact { name: "get_string_property", args: &[(1, Str)], throws: &[] },
        MethodFact { name: "get_string_list_property", args: &[(1, Str)], throws: &[] },
        MethodFact { name: "describe_keyspaces", args: &[], throws: &[] },
        MethodFact { name: "describe_cluster_name", args: &[], throws: &[] },
        MethodFact { name: "describe_version", args: &[], throws: &[] },
        MethodFact { name: "describe_ring", args: &[(1, Str)], throws: &[(1, Ire)] },
        MethodFact { name: "describe_partitioner", args: &[], throws: &[] },
        MethodFact { name: "describe_keyspace", args: &[(1, Str)], throws: &[(1, Nfe)] },
        MethodFact { name: "describe_splits", args: &[(1, Str), (2, Str), (3, I32)], throws: &[] },
    ]
};

/// Collects what a client writes; the client's read of the reply then fails on end of input.
struct Sink(Rc<RefCell<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

type SendOnlyClient = CassandraSyncClient<TBinaryInputProtocol<io::Empty>, TBinaryOutputProtocol<Sink>>;

/// Calls `method` through the generated 0.6 client and returns the bytes of the CALL message.
/// The annotated result types check each method's return type at compile time.
fn bytes_of_call(method: &str) -> Vec<u8> {
    let sent = Rc::new(RefCell::new(Vec::new()));
    let mut c: SendOnlyClient = CassandraSyncClient::new(
        TBinaryInputProtocol::new(io::empty(), true),
        TBinaryOutputProtocol::new(Sink(Rc::clone(&sent)), true),
    );
    let ks = || "Keyspace1".to_owned();
    let path = || ColumnPath::new("Standard1".to_owned(), None, b"c".to_vec());
    let parent = || ColumnParent::new("Standard1".to_owned(), None);
    let cl = ConsistencyLevel::ONE;
    let reply_error = match method {
        "login" => c.login(ks(), AuthenticationRequest::new(BTreeMap::new())).err(),
        "get" => {
            let r: thrift::Result<ColumnOrSuperColumn> = c.get(ks(), "k".to_owned(), path(), cl);
            r.err()
        }
        "get_slice" => {
            let r: thrift::Result<Vec<ColumnOrSuperColumn>> =
                c.get_slice(ks(), "k".to_owned(), parent(), full_predicate(), cl);
            r.err()
        }
        "multiget" => {
            let r: thrift::Result<BTreeMap<String, ColumnOrSuperColumn>> =
                c.multiget(ks(), vec!["k".to_owned()], path(), cl);
            r.err()
        }
        "multiget_slice" => {
            let r: thrift::Result<BTreeMap<String, Vec<ColumnOrSuperColumn>>> =
                c.multiget_slice(ks(), vec!["k".to_owned()], parent(), full_predicate(), cl);
            r.err()
        }
        "get_count" => {
            let r: thrift::Result<i32> = c.get_count(ks(), "k".to_owned(), parent(), cl);
            r.err()
        }
        "get_range_slice" => {
            let r: thrift::Result<Vec<KeySlice>> =
                c.get_range_slice(ks(), parent(), full_predicate(), "a".to_owned(), "z".to_owned(), 10, cl);
            r.err()
        }
        "get_range_slices" => {
            let range = KeyRange::new("a".to_owned(), "z".to_owned(), None, None, 10);
            let r: thrift::Result<Vec<KeySlice>> = c.get_range_slices(ks(), parent(), full_predicate(), range, cl);
            r.err()
        }
        "insert" => c.insert(ks(), "k".to_owned(), path(), b"v".to_vec(), 1, cl).err(),
        "batch_insert" => {
            let cfmap = BTreeMap::from([("Standard1".to_owned(), vec![super_cosc()])]);
            c.batch_insert(ks(), "k".to_owned(), cfmap, cl).err()
        }
        "remove" => c.remove(ks(), "k".to_owned(), path(), 1, cl).err(),
        "batch_mutate" => c.batch_mutate(ks(), BTreeMap::new(), cl).err(),
        "get_string_property" => {
            let r: thrift::Result<String> = c.get_string_property("version".to_owned());
            r.err()
        }
        "get_string_list_property" => {
            let r: thrift::Result<Vec<String>> = c.get_string_list_property("keyspaces".to_owned());
            r.err()
        }
        "describe_keyspaces" => {
            let r: thrift::Result<BTreeSet<String>> = c.describe_keyspaces();
            r.err()
        }
        "describe_cluster_name" => c.describe_cluster_name().err(),
        "describe_version" => c.describe_version().err(),
        "describe_ring" => {
            let r: thrift::Result<Vec<TokenRange>> = c.describe_ring(ks());
            r.err()
        }
        "describe_partitioner" => c.describe_partitioner().err(),
        "describe_keyspace" => {
            let r: thrift::Result<BTreeMap<String, BTreeMap<String, String>>> = c.describe_keyspace(ks());
            r.err()
        }
        "describe_splits" => {
            let r: thrift::Result<Vec<String>> = c.describe_splits("0".to_owned(), "9".to_owned(), 128);
            r.err()
        }
        other => panic!("no client call written for method {other}"),
    };
    // Nothing answers, so every call must fail reading the reply, after sending.
    assert!(matches!(reply_error, Some(thrift::Error::Transport(_))), "{method}: {reply_error:?}");
    let bytes = sent.borrow().clone();
    bytes
}

/// Reads a result struct of `method` from `bytes` with the generated reader and writes it back.
fn reencode_result(method: &str, bytes: &[u8]) -> Vec<u8> {
    macro_rules! reencode {
        ($result:ty) => {{
            let mut input = TBinaryInputProtocol::new(Cursor::new(bytes.to_vec()), true);
            let result = <$result>::read_from_in_protocol(&mut input).expect("decode result");
            let mut out = Vec::new();
            result.write_to_out_protocol(&mut TBinaryOutputProtocol::new(&mut out, true)).expect("encode result");
            out
        }};
    }
    match method {
        "login" => reencode!(CassandraLoginResult),
        "get" => reencode!(CassandraGetResult),
        "get_slice" => reencode!(CassandraGetSliceResult),
        "multiget" => reencode!(CassandraMultigetResult),
        "multiget_slice" => reencode!(CassandraMultigetSliceResult),
        "get_count" => reencode!(CassandraGetCountResult),
        "get_range_slice" => reencode!(CassandraGetRangeSliceResult),
        "get_range_slices" => reencode!(CassandraGetRangeSlicesResult),
        "insert" => reencode!(CassandraInsertResult),
        "batch_insert" => reencode!(CassandraBatchInsertResult),
        "remove" => reencode!(CassandraRemoveResult),
        "batch_mutate" => reencode!(CassandraBatchMutateResult),
        "get_string_property" => reencode!(CassandraGetStringPropertyResult),
        "get_string_list_property" => reencode!(CassandraGetStringListPropertyResult),
        "describe_keyspaces" => reencode!(CassandraDescribeKeyspacesResult),
        "describe_cluster_name" => reencode!(CassandraDescribeClusterNameResult),
        "describe_version" => reencode!(CassandraDescribeVersionResult),
        "describe_ring" => reencode!(CassandraDescribeRingResult),
        "describe_partitioner" => reencode!(CassandraDescribePartitionerResult),
        "describe_keyspace" => reencode!(CassandraDescribeKeyspaceResult),
        "describe_splits" => reencode!(CassandraDescribeSplitsResult),
        other => panic!("no result struct listed for method {other}"),
    }
}

/// A result struct holding only `exception` (already encoded) at field `id`.
fn result_with_exception(id: i16, exception: &[u8]) -> Vec<u8> {
    // Binary protocol: struct type 0x0c, the i16 id, the exception's own bytes, then field stop.
    let mut bytes = vec![0x0c];
    bytes.extend_from_slice(&id.to_be_bytes());
    bytes.extend_from_slice(exception);
    bytes.push(0);
    bytes
}

#[test]
fn methods_and_argument_ids_match_the_fact_sheet() {
    for fact in METHODS {
        let bytes = bytes_of_call(fact.name);
        let mut i = TBinaryInputProtocol::new(Cursor::new(bytes), true);
        let message = i.read_message_begin().expect("message begin");
        assert_eq!((message.name.as_str(), message.message_type), (fact.name, TMessageType::Call));
        assert_eq!(field_layout(&mut i), fact.args, "{}: argument ids and wire types", fact.name);
    }
}

#[test]
fn exceptions_sit_at_the_fact_sheet_ids_of_each_result() {
    for fact in METHODS {
        for &(id, exception) in fact.throws {
            // The wire-type rule and the id check drop a field the result does not declare, so the
            // bytes survive a decode/encode round only if `id` holds a struct there.
            let bytes = result_with_exception(id, &exception.encoded());
            assert_eq!(reencode_result(fact.name, &bytes), bytes, "{}: {exception:?} at id {id}", fact.name);
            let misplaced = result_with_exception(id + 10, &exception.encoded());
            assert_eq!(reencode_result(fact.name, &misplaced), [0], "{}: id {} is not declared", fact.name, id + 10);
        }
    }
}

#[test]
fn method_table_lists_every_method_of_the_idl() {
    // The IDL's service methods, read from its text: a name followed by '(' that is not `throws`.
    let idl = include_str!("../cassandra-0.6.thrift");
    let service = idl.split("service Cassandra {").nth(1).expect("service in the IDL");
    let code: String = service.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let mut names = Vec::new();
    for (at, _) in code.match_indices('(') {
        let name = code[..at].trim_end().rsplit(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
        if name != "throws" && !name.is_empty() {
            names.push(name.to_owned());
        }
    }
    let table: Vec<String> = METHODS.iter().map(|m| m.name.to_owned()).collect();
    assert_eq!(names, table);
}

#[test]
fn rust_client_sends_the_same_bytes_as_python_06_client() {
    let sent = Rc::new(RefCell::new(Vec::new()));
    let mut c: SendOnlyClient = CassandraSyncClient::new(
        TBinaryInputProtocol::new(io::empty(), true),
        TBinaryOutputProtocol::new(Sink(Rc::clone(&sent)), true),
    );
    let mutations = vec![
        Mutation::new(ColumnOrSuperColumn::new(column("c1", "v1", 1234), None), None),
        Mutation::new(None, Deletion::new(1235, None, SlicePredicate::new(vec![b"c2".to_vec()], None))),
    ];
    let mutation_map = BTreeMap::from([("row1".to_owned(), BTreeMap::from([("Standard1".to_owned(), mutations)]))]);
    assert!(c.batch_mutate("Keyspace1".to_owned(), mutation_map, ConsistencyLevel::ZERO).is_err());
    assert_eq!(to_hex(&std::mem::take(&mut *sent.borrow_mut())), PY_BATCH_MUTATE);

    // A fresh client, so the sequence id is 1 again.
    let mut c: SendOnlyClient = CassandraSyncClient::new(
        TBinaryInputProtocol::new(io::empty(), true),
        TBinaryOutputProtocol::new(Sink(Rc::clone(&sent)), true),
    );
    let parent = ColumnParent::new("Super1".to_owned(), b"sc".to_vec());
    let predicate = SlicePredicate::new(None, SliceRange::new(vec![], vec![], false, 100));
    let result = c.get_range_slice(
        "Keyspace1".to_owned(),
        parent,
        predicate,
        "a".to_owned(),
        "z".to_owned(),
        10,
        ConsistencyLevel::QUORUM,
    );
    assert!(result.is_err());
    assert_eq!(to_hex(&sent.borrow()), PY_GET_RANGE_SLICE);
}

/// A get_range_slice argument struct with keyspace, column_parent and predicate only, plus
/// row_count when given: start_key, finish_key and consistency_level are left out.
fn sparse_get_range_slice_args(row_count: Option<i32>) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut o = TBinaryOutputProtocol::new(&mut bytes, true);
    o.write_struct_begin(&TStructIdentifier::new("get_range_slice_args")).expect("w");
    o.write_field_begin(&TFieldIdentifier::new("keyspace", TType::String, 1)).expect("w");
    o.write_string("Keyspace1").expect("w");
    o.write_field_end().expect("w");
    o.write_field_begin(&TFieldIdentifier::new("column_parent", TType::Struct, 2)).expect("w");
    ColumnParent::new("Standard1".to_owned(), None).write_to_out_protocol(&mut o).expect("w");
    o.write_field_end().expect("w");
    o.write_field_begin(&TFieldIdentifier::new("predicate", TType::Struct, 3)).expect("w");
    full_predicate().write_to_out_protocol(&mut o).expect("w");
    o.write_field_end().expect("w");
    if let Some(count) = row_count {
        o.write_field_begin(&TFieldIdentifier::new("row_count", TType::I32, 6)).expect("w");
        o.write_i32(count).expect("w");
        o.write_field_end().expect("w");
    }
    o.write_field_stop().expect("w");
    o.write_struct_end().expect("w");
    bytes
}

fn decode_get_range_slice_args(bytes: Vec<u8>) -> thrift::Result<CassandraGetRangeSliceArgs> {
    CassandraGetRangeSliceArgs::read_from_in_protocol(&mut TBinaryInputProtocol::new(Cursor::new(bytes), true))
}

#[test]
fn omitted_string_and_enum_arguments_take_their_idl_defaults() {
    let args = decode_get_range_slice_args(sparse_get_range_slice_args(Some(10))).expect("decode");
    assert_eq!(
        (args.start_key.as_str(), args.finish_key.as_str(), args.row_count, args.consistency_level),
        ("", "", 10, ConsistencyLevel::ONE)
    );
}

#[test]
fn omitted_required_primitive_argument_is_missing_as_in_java() {
    // Java's 0.6 reader checks required primitives for presence: row_count's default of 100 only
    // serves generated clients.
    let err = decode_get_range_slice_args(sparse_get_range_slice_args(None)).expect_err("row_count is required");
    let thrift::Error::Protocol(err) = err else { panic!("expected a protocol error, got {err:?}") };
    assert_eq!(err.message, "missing required field CassandraGetRangeSliceArgs.row_count");
}

#[test]
fn remove_without_consistency_level_takes_one() {
    let mut bytes = Vec::new();
    let mut o = TBinaryOutputProtocol::new(&mut bytes, true);
    o.write_struct_begin(&TStructIdentifier::new("remove_args")).expect("w");
    for (id, text) in [(1, "Keyspace1"), (2, "row1")] {
        o.write_field_begin(&TFieldIdentifier::new("s", TType::String, id)).expect("w");
        o.write_string(text).expect("w");
        o.write_field_end().expect("w");
    }
    o.write_field_begin(&TFieldIdentifier::new("column_path", TType::Struct, 3)).expect("w");
    ColumnPath::new("Standard1".to_owned(), None, None).write_to_out_protocol(&mut o).expect("w");
    o.write_field_end().expect("w");
    o.write_field_begin(&TFieldIdentifier::new("timestamp", TType::I64, 4)).expect("w");
    o.write_i64(77).expect("w");
    o.write_field_end().expect("w");
    o.write_field_stop().expect("w");
    o.write_struct_end().expect("w");
    let args = CassandraRemoveArgs::read_from_in_protocol(&mut TBinaryInputProtocol::new(Cursor::new(bytes), true))
        .expect("decode");
    assert_eq!(
        args,
        CassandraRemoveArgs {
            keyspace: "Keyspace1".to_owned(),
            key: "row1".to_owned(),
            column_path: ColumnPath::new("Standard1".to_owned(), None, None),
            timestamp: 77,
            consistency_level: ConsistencyLevel::ONE,
        }
    );
}
