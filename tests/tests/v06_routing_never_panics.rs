//! A property test against the real server: sequences of arbitrary well-formed calls of either
//! API generation (0.6's every method, 20.1.0's data and description methods) and arbitrary
//! bytes, framed and unframed, never panic it, and each well-formed call is answered by the
//! generation that sent it: never PROTOCOL_ERROR (what a call decoded by the other generation's
//! table gets) nor UNKNOWN_METHOD, and `describe_version` answers the version the routing rule
//! gives the connection (0.6 after a 0.6 call, 20.1.0 after a 20.1.0 call, else by transport).

mod v06_support;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use e2e::CallValues as Sample;
use e2e::*;
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, TestCaseError, TestRunner};
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TInputProtocol, TMessageIdentifier, TMessageType, TOutputProtocol,
    TType,
};
use thrift::transport::{TBufferedReadTransport, TFramedReadTransport};
use thrift::ApplicationErrorKind;
use thrift_idl as t;
use thrift_idl::v06 as v;
use thrift_idl::v06::TCassandraSyncClient as _;
use v06_support::*;

const KS: &str = "Keyspace1";
/// The whole property run stops adding cases past this (it is bounded by the case count too).
const RUN_LIMIT: Duration = Duration::from_secs(240);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gen {
    V06,
    V20,
}

fn name_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![Just(b"a".to_vec()), Just(b"b".to_vec()), Just(Vec::new()), prop::collection::vec(any::<u8>(), 0..6)]
}

fn sample() -> impl Strategy<Value = Sample> {
    (
        (
            prop_oneof![Just(KS.to_string()), Just("system".to_string()), Just("Nope".to_string()), "[a-z]{0,4}"],
            prop_oneof![Just("k1".to_string()), Just("k2".to_string()), Just(String::new()), "\\PC{0,5}"],
            prop_oneof![Just("Standard1".to_string()), Just("Super1".to_string()), "[A-Za-z]{0,6}"],
        ),
        (
            prop::option::of(name_bytes()),
            prop::option::of(name_bytes()),
            prop::option::of(prop::collection::vec(name_bytes(), 0..3)),
        ),
        ((name_bytes(), name_bytes(), any::<bool>(), -2..20i32), any::<bool>(), any::<i64>(), 0..7i32, name_bytes()),
    )
        .prop_map(Sample::from)
}

const METHODS_06: [&str; 21] = [
    "login",
    "get",
    "get_slice",
    "multiget",
    "multiget_slice",
    "get_count",
    "get_range_slice",
    "get_range_slices",
    "insert",
    "batch_insert",
    "remove",
    "batch_mutate",
    "get_string_property",
    "get_string_list_property",
    "describe_keyspaces",
    "describe_cluster_name",
    "describe_version",
    "describe_ring",
    "describe_partitioner",
    "describe_keyspace",
    "describe_splits",
];

const METHODS_20: [&str; 19] = [
    "login",
    "set_keyspace",
    "get",
    "get_slice",
    "get_count",
    "multiget_slice",
    "multiget_count",
    "get_range_slices",
    "insert",
    "remove",
    "batch_mutate",
    "describe_keyspaces",
    "describe_cluster_name",
    "describe_version",
    "describe_ring",
    "describe_partitioner",
    "describe_keyspace",
    "describe_splits",
    "describe_schema_versions",
];

/// Methods whose arguments are the same in both generations: they decide nothing.
const SAME_LAYOUT: [&str; 6] = [
    "describe_keyspace",
    "describe_keyspaces",
    "describe_ring",
    "describe_version",
    "describe_cluster_name",
    "describe_partitioner",
];

/// What this test builds of a sample beyond the shared structs: a column named by the sample's
/// column, mutations that write super columns too, and every method's arguments.
trait Calls {
    fn column06(&self) -> v::Column;
    fn column20(&self) -> t::Column;
    fn mutations06(&self) -> BTreeMap<String, BTreeMap<String, Vec<v::Mutation>>>;
    fn mutations20(&self) -> BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>>;
    fn write_args(&self, g: Gen, method: &str, o: &mut dyn TOutputProtocol) -> thrift::Result<()>;
}

impl Calls for Sample {
    fn column06(&self) -> v::Column {
        v::Column::new(self.column.clone().unwrap_or_default(), self.value.clone(), self.number)
    }

    fn column20(&self) -> t::Column {
        t::Column::new(self.column.clone().unwrap_or_default(), self.value.clone(), self.number, None)
    }

    fn mutations06(&self) -> BTreeMap<String, BTreeMap<String, Vec<v::Mutation>>> {
        let insert = match &self.super_column {
            Some(sc) => v::Mutation::new(
                v::ColumnOrSuperColumn::new(None, v::SuperColumn::new(sc.clone(), vec![self.column06()])),
                None,
            ),
            None => v::Mutation::new(v::ColumnOrSuperColumn::new(self.column06(), None), None),
        };
        let delete =
            v::Mutation::new(None, v::Deletion::new(self.number, self.super_column.clone(), self.predicate06()));
        BTreeMap::from([(self.key.clone(), BTreeMap::from([(self.cf.clone(), vec![insert, delete])]))])
    }

    fn mutations20(&self) -> BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>> {
        let insert = match &self.super_column {
            Some(sc) => t::Mutation::new(
                t::ColumnOrSuperColumn::new(None, t::SuperColumn::new(sc.clone(), vec![self.column20()]), None, None),
                None,
            ),
            None => t::Mutation::new(t::ColumnOrSuperColumn::new(self.column20(), None, None, None), None),
        };
        let delete =
            t::Mutation::new(None, t::Deletion::new(self.number, self.super_column.clone(), self.predicate20()));
        BTreeMap::from([(self.key.clone().into_bytes(), BTreeMap::from([(self.cf.clone(), vec![insert, delete])]))])
    }

    /// The arguments of `method` in generation `g`, written to `o`.
    fn write_args(&self, g: Gen, method: &str, o: &mut dyn TOutputProtocol) -> thrift::Result<()> {
        let (ks, key, kb) = (self.keyspace.clone(), self.key.clone(), self.key.clone().into_bytes());
        let creds = BTreeMap::from([("username".to_string(), self.key.clone())]);
        match (g, method) {
            (Gen::V06, "login") => {
                v::CassandraLoginArgs { keyspace: ks, auth_request: v::AuthenticationRequest::new(creds) }
                    .write_to_out_protocol(o)
            }
            (Gen::V06, "get") => {
                v::CassandraGetArgs { keyspace: ks, key, column_path: self.path06(), consistency_level: self.cl06() }
                    .write_to_out_protocol(o)
            }
            (Gen::V06, "get_slice") => v::CassandraGetSliceArgs {
                keyspace: ks,
                key,
                column_parent: self.parent06(),
                predicate: self.predicate06(),
                consistency_level: self.cl06(),
            }
            .write_to_out_protocol(o),
            (Gen::V06, "multiget") => v::CassandraMultigetArgs {
                keyspace: ks,
                keys: vec![key, "k2".into()],
                column_path: self.path06(),
                consistency_level: self.cl06(),
            }
            .write_to_out_protocol(o),
            (Gen::V06, "multiget_slice") => v::CassandraMultigetSliceArgs {
                keyspace: ks,
                keys: vec![key],
                column_parent: self.parent06(),
                predicate: self.predicate06(),
                consistency_level: self.cl06(),
            }
            .write_to_out_protocol(o),
            (Gen::V06, "get_count") => v::CassandraGetCountArgs {
                keyspace: ks,
                key,
                column_parent: self.parent06(),
                consistency_level: self.cl06(),
            }
            .write_to_out_protocol(o),
            (Gen::V06, "get_range_slice") => v::CassandraGetRangeSliceArgs {
                keyspace: ks,
                column_parent: self.parent06(),
                predicate: self.predicate06(),
                start_key: key,
                finish_key: String::new(),
                row_count: self.range.3,
                consistency_level: self.cl06(),
            }
            .write_to_out_protocol(o),
            (Gen::V06, "get_range_slices") => {
                let range = if self.by_token {
                    v::KeyRange::new(None, None, "0".to_string(), key, self.range.3)
                } else {
                    v::KeyRange::new(key, String::new(), None, None, self.range.3)
                };
                v::CassandraGetRangeSlicesArgs {
                    keyspace: ks,
                    column_parent: self.parent06(),
                    predicate: self.predicate06(),
                    range,
                    consistency_level: self.cl06(),
                }
                .write_to_out_protocol(o)
            }
            (Gen::V06, "insert") => v::CassandraInsertArgs {
                keyspace: ks,
                key,
                column_path: self.path06(),
                value: self.value.clone(),
                timestamp: self.number,
                consistency_level: self.cl06(),
            }
            .write_to_out_protocol(o),
            (Gen::V06, "batch_insert") => {
                let cosc = match &self.super_column {
                    Some(sc) => {
                        v::ColumnOrSuperColumn::new(None, v::SuperColumn::new(sc.clone(), vec![self.column06()]))
                    }
                    None => v::ColumnOrSuperColumn::new(self.column06(), None),
                };
                v::CassandraBatchInsertArgs {
                    keyspace: ks,
                    key,
                    cfmap: BTreeMap::from([(self.cf.clone(), vec![cosc])]),
                    consistency_level: self.cl06(),
                }
                .write_to_out_protocol(o)
            }
            (Gen::V06, "remove") => v::CassandraRemoveArgs {
                keyspace: ks,
                key,
                column_path: self.path06(),
                timestamp: self.number,
                consistency_level: self.cl06(),
            }
            .write_to_out_protocol(o),
            (Gen::V06, "batch_mutate") => v::CassandraBatchMutateArgs {
                keyspace: ks,
                mutation_map: self.mutations06(),
                consistency_level: self.cl06(),
            }
            .write_to_out_protocol(o),
            (Gen::V06, "get_string_property") => v::CassandraGetStringPropertyArgs {
                property: ["cluster name", "config file", "token map", "version", "x"][self.level as usize % 5].into(),
            }
            .write_to_out_protocol(o),
            (Gen::V06, "get_string_list_property") => {
                v::CassandraGetStringListPropertyArgs { property: if self.by_token { "keyspaces".into() } else { key } }
                    .write_to_out_protocol(o)
            }
            (Gen::V06, "describe_keyspaces") => v::CassandraDescribeKeyspacesArgs {}.write_to_out_protocol(o),
            (Gen::V06, "describe_cluster_name") => v::CassandraDescribeClusterNameArgs {}.write_to_out_protocol(o),
            (Gen::V06, "describe_version") => v::CassandraDescribeVersionArgs {}.write_to_out_protocol(o),
            (Gen::V06, "describe_ring") => v::CassandraDescribeRingArgs { keyspace: ks }.write_to_out_protocol(o),
            (Gen::V06, "describe_partitioner") => v::CassandraDescribePartitionerArgs {}.write_to_out_protocol(o),
            (Gen::V06, "describe_keyspace") => {
                v::CassandraDescribeKeyspaceArgs { keyspace: ks }.write_to_out_protocol(o)
            }
            (Gen::V06, "describe_splits") => v::CassandraDescribeSplitsArgs {
                start_token: "0".into(),
                end_token: "0".into(),
                keys_per_split: self.range.3,
            }
            .write_to_out_protocol(o),
            (Gen::V20, "login") => {
                t::CassandraLoginArgs { auth_request: t::AuthenticationRequest::new(creds) }.write_to_out_protocol(o)
            }
            (Gen::V20, "set_keyspace") => t::CassandraSetKeyspaceArgs { keyspace: ks }.write_to_out_protocol(o),
            (Gen::V20, "get") => {
                t::CassandraGetArgs { key: kb, column_path: self.path20(), consistency_level: self.cl20() }
                    .write_to_out_protocol(o)
            }
            (Gen::V20, "get_slice") => t::CassandraGetSliceArgs {
                key: kb,
                column_parent: self.parent20(),
                predicate: self.predicate20(),
                consistency_level: self.cl20(),
            }
            .write_to_out_protocol(o),
            (Gen::V20, "get_count") => t::CassandraGetCountArgs {
                key: kb,
                column_parent: self.parent20(),
                predicate: self.predicate20(),
                consistency_level: self.cl20(),
            }
            .write_to_out_protocol(o),
            (Gen::V20, "multiget_slice") => t::CassandraMultigetSliceArgs {
                keys: vec![kb],
                column_parent: self.parent20(),
                predicate: self.predicate20(),
                consistency_level: self.cl20(),
            }
            .write_to_out_protocol(o),
            (Gen::V20, "multiget_count") => t::CassandraMultigetCountArgs {
                keys: vec![kb],
                column_parent: self.parent20(),
                predicate: self.predicate20(),
                consistency_level: self.cl20(),
            }
            .write_to_out_protocol(o),
            (Gen::V20, "get_range_slices") => {
                let range = if self.by_token {
                    t::KeyRange::new(None, None, "0".to_string(), "0".to_string(), self.range.3, None)
                } else {
                    t::KeyRange::new(kb, None, None, None, self.range.3, None)
                };
                t::CassandraGetRangeSlicesArgs {
                    column_parent: self.parent20(),
                    predicate: self.predicate20(),
                    range,
                    consistency_level: self.cl20(),
                }
                .write_to_out_protocol(o)
            }
            (Gen::V20, "insert") => t::CassandraInsertArgs {
                key: kb,
                column_parent: self.parent20(),
                column: self.column20(),
                consistency_level: self.cl20(),
            }
            .write_to_out_protocol(o),
            (Gen::V20, "remove") => t::CassandraRemoveArgs {
                key: kb,
                column_path: self.path20(),
                timestamp: self.number,
                consistency_level: self.cl20(),
            }
            .write_to_out_protocol(o),
            (Gen::V20, "batch_mutate") => {
                t::CassandraBatchMutateArgs { mutation_map: self.mutations20(), consistency_level: self.cl20() }
                    .write_to_out_protocol(o)
            }
            (Gen::V20, "describe_keyspaces") => t::CassandraDescribeKeyspacesArgs {}.write_to_out_protocol(o),
            (Gen::V20, "describe_cluster_name") => t::CassandraDescribeClusterNameArgs {}.write_to_out_protocol(o),
            (Gen::V20, "describe_version") => t::CassandraDescribeVersionArgs {}.write_to_out_protocol(o),
            (Gen::V20, "describe_ring") => t::CassandraDescribeRingArgs { keyspace: ks }.write_to_out_protocol(o),
            (Gen::V20, "describe_partitioner") => t::CassandraDescribePartitionerArgs {}.write_to_out_protocol(o),
            (Gen::V20, "describe_keyspace") => {
                t::CassandraDescribeKeyspaceArgs { keyspace: ks }.write_to_out_protocol(o)
            }
            (Gen::V20, "describe_splits") => t::CassandraDescribeSplitsArgs {
                cf_name: self.cf.clone(),
                start_token: "0".into(),
                end_token: "0".into(),
                keys_per_split: self.range.3,
            }
            .write_to_out_protocol(o),
            (Gen::V20, "describe_schema_versions") => {
                t::CassandraDescribeSchemaVersionsArgs {}.write_to_out_protocol(o)
            }
            (g, m) => panic!("no arguments for {g:?} {m}"),
        }
    }
}

/// One thing a client sends.
#[derive(Clone, Debug)]
enum Msg {
    Call { g: Gen, method: &'static str, seq: i32, sample: Box<Sample> },
    Noise(Vec<u8>),
}

fn msg() -> impl Strategy<Value = Msg> {
    prop_oneof![
        8 => (0..METHODS_06.len(), any::<i32>(), sample())
            .prop_map(|(i, seq, sample)| Msg::Call { g: Gen::V06, method: METHODS_06[i], seq, sample: Box::new(sample) }),
        8 => (0..METHODS_20.len(), any::<i32>(), sample())
            .prop_map(|(i, seq, sample)| Msg::Call { g: Gen::V20, method: METHODS_20[i], seq, sample: Box::new(sample) }),
        1 => prop::collection::vec(any::<u8>(), 0..120).prop_map(Msg::Noise),
    ]
}

fn encode(g: Gen, method: &str, seq: i32, sample: &Sample, framed: bool) -> Vec<u8> {
    let mut m = Vec::new();
    let mut o = TBinaryOutputProtocol::new(&mut m, true);
    o.write_message_begin(&TMessageIdentifier::new(method, TMessageType::Call, seq)).expect("header");
    sample.write_args(g, method, &mut o).expect("arguments");
    if framed {
        let mut f = (m.len() as u32).to_be_bytes().to_vec();
        f.extend(m);
        f
    } else {
        m
    }
}

/// What the routing rule says a connection is, for the messages both generations share.
fn generation_for_shared(current: Option<Gen>, framed: bool) -> Gen {
    current.unwrap_or(if framed { Gen::V20 } else { Gen::V06 })
}

/// Sends one case's messages over a new connection and checks every answer.
fn run_case(node: &Node, framed: bool, msgs: &[Msg]) -> Result<(), TestCaseError> {
    let stream = node.raw_socket();
    let reader = stream.try_clone().expect("clone the socket");
    let mut input: Box<dyn TInputProtocol> = if framed {
        Box::new(TBinaryInputProtocol::new(TFramedReadTransport::new(reader), true))
    } else {
        Box::new(TBinaryInputProtocol::new(TBufferedReadTransport::new(reader), true))
    };
    let mut writer = stream;
    let mut current: Option<Gen> = None;
    for m in msgs {
        match m {
            Msg::Noise(bytes) => {
                // The stream is out of step after noise: this connection ends here.
                let _ = writer.write_all(bytes);
                drain(writer);
                return Ok(());
            }
            Msg::Call { g, method, seq, sample } => {
                writer.write_all(&encode(*g, method, *seq, sample, framed)).expect("send a call");
                let header = input.read_message_begin().map_err(|e| fail(format!("{g:?} {method}: no reply: {e}")))?;
                prop_assert_eq!(header.name.as_str(), *method);
                prop_assert_eq!(header.sequence_number, *seq);
                let shared = SAME_LAYOUT.contains(method);
                if !shared {
                    current = Some(*g);
                }
                match header.message_type {
                    TMessageType::Exception => {
                        let e = thrift::Error::read_application_error_from_in_protocol(&mut *input)
                            .map_err(|e| fail(format!("{method}: unreadable exception: {e}")))?;
                        prop_assert!(
                            !matches!(
                                e.kind,
                                ApplicationErrorKind::ProtocolError | ApplicationErrorKind::UnknownMethod
                            ),
                            "{:?} {} with {:?} answered {:?}",
                            g,
                            method,
                            sample,
                            e
                        );
                    }
                    TMessageType::Reply if *method == "describe_version" => {
                        let want = match generation_for_shared(current, framed) {
                            Gen::V06 => v::VERSION,
                            Gen::V20 => t::VERSION,
                        };
                        prop_assert_eq!(read_string_result(&mut *input)?, want, "framed {}", framed);
                    }
                    TMessageType::Reply => {
                        skip(&mut *input, TType::Struct, 0).map_err(|e| fail(format!("{method}: {e}")))?
                    }
                    other => return Err(fail(format!("{method}: a {other:?} message"))),
                }
                input.read_message_end().map_err(|e| fail(e.to_string()))?;
            }
        }
    }
    Ok(())
}

fn fail(why: String) -> TestCaseError {
    TestCaseError::fail(why)
}

/// Field 0 of a result struct, a string.
fn read_string_result(i: &mut dyn TInputProtocol) -> Result<String, TestCaseError> {
    let mut found = None;
    i.read_struct_begin().map_err(|e| fail(e.to_string()))?;
    loop {
        let f = i.read_field_begin().map_err(|e| fail(e.to_string()))?;
        if f.field_type == TType::Stop {
            break;
        }
        if f.id == Some(0) && f.field_type == TType::String {
            found = Some(i.read_string().map_err(|e| fail(e.to_string()))?);
        } else {
            i.skip(f.field_type).map_err(|e| fail(e.to_string()))?;
        }
        i.read_field_end().map_err(|e| fail(e.to_string()))?;
    }
    i.read_struct_end().map_err(|e| fail(e.to_string()))?;
    found.ok_or_else(|| fail("no string in field 0".into()))
}

/// Skips one value. Thrift's own `skip` reads every string as UTF-8, but binary fields (keys,
/// names, values) travel as strings too and may hold any bytes: read those as bytes.
fn skip(input: &mut dyn TInputProtocol, ttype: TType, depth: usize) -> thrift::Result<()> {
    if depth > 64 {
        return Err(thrift::Error::Protocol(thrift::ProtocolError::new(
            thrift::ProtocolErrorKind::DepthLimit,
            "nesting too deep",
        )));
    }
    match ttype {
        TType::String => input.read_bytes().map(|_| ()),
        TType::Struct => {
            input.read_struct_begin()?;
            loop {
                let field = input.read_field_begin()?;
                if field.field_type == TType::Stop {
                    break;
                }
                skip(input, field.field_type, depth + 1)?;
                input.read_field_end()?;
            }
            input.read_struct_end()
        }
        TType::List => {
            let list = input.read_list_begin()?;
            for _ in 0..list.size {
                skip(input, list.element_type, depth + 1)?;
            }
            input.read_list_end()
        }
        TType::Set => {
            let set = input.read_set_begin()?;
            for _ in 0..set.size {
                skip(input, set.element_type, depth + 1)?;
            }
            input.read_set_end()
        }
        TType::Map => {
            let map = input.read_map_begin()?;
            for _ in 0..map.size {
                if let (Some(k), Some(v)) = (map.key_type, map.value_type) {
                    skip(input, k, depth + 1)?;
                    skip(input, v, depth + 1)?;
                }
            }
            input.read_map_end()
        }
        other => input.skip(other),
    }
}

/// Ends our side and waits (bounded) until the server has closed its side.
fn drain(mut s: TcpStream) {
    let _ = s.shutdown(Shutdown::Write);
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let mut sink = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        match s.read(&mut sink) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

#[test]
fn arbitrary_messages_of_both_generations_never_panic_and_route_right() {
    let xml = keyspace_xml(
        KS,
        &[
            r#"<ColumnFamily Name="Standard1" CompareWith="BytesType"/>"#,
            r#"<ColumnFamily Name="Super1" ColumnType="Super" CompareWith="BytesType" CompareSubcolumnsWith="BytesType"/>"#,
        ],
    );
    let mut node = Node::start(Config::ordered().keyspaces(xml));
    let started = Instant::now();
    let config = ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() };
    let mut runner = TestRunner::new(config);
    let strategy = (any::<bool>(), prop::collection::vec(msg(), 1..8));
    let result = runner.run(&strategy, |(framed, msgs)| {
        if started.elapsed() > RUN_LIMIT {
            return Ok(()); // out of time: the remaining cases pass without running
        }
        run_case(&node, framed, &msgs)
    });
    if let Err(e) = result {
        panic!("{e}\n==== sibyl log ====\n{}", node.log());
    }
    assert!(node.is_running(), "sibyl exited:\n{}", node.log());
    assert!(!node.log().contains("panicked"), "sibyl panicked:\n{}", node.log());
    // Both generations still work.
    let mut new = node.client_in(KS);
    assert_eq!(ok("describe_version", new.describe_version()), "20.1.0");
    let mut old = client06(&node, false);
    assert_eq!(ok("version", old.get_string_property("version".into())), "2.2.0");
    let status = node.stop();
    assert!(status.success(), "exit status after the run: {status}");
}
