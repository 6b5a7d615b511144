//! Test plumbing shared by the integration tests: an in-memory "wire" that connects the generated
//! client to the generated processor, and a handler that records what it was called with.

#![allow(dead_code)] // each test file uses a different part of this module

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{self, Cursor, Read, Write};
use std::rc::Rc;

use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
use thrift::server::TProcessor;
use thrift_idl::*;

/// A call as the handler saw it (only the methods the tests exercise).
#[derive(Clone, Debug, PartialEq)]
pub enum Call {
    Login(AuthenticationRequest),
    GetSlice(Vec<u8>, ColumnParent, SlicePredicate, ConsistencyLevel),
    Remove(Vec<u8>, ColumnPath, i64, ConsistencyLevel),
    BatchMutate(BTreeMap<Vec<u8>, BTreeMap<String, Vec<Mutation>>>, ConsistencyLevel),
    Cas(Vec<u8>, String, Vec<Column>, Vec<Column>, ConsistencyLevel, ConsistencyLevel),
}

/// What the recording handler answers to `get_slice`.
#[derive(Clone, Debug)]
pub enum SliceAnswer {
    Columns(Vec<ColumnOrSuperColumn>),
    Unavailable,
    /// NotFoundException is not declared by get_slice: must become a TApplicationException.
    UndeclaredNotFound,
}

pub struct Recorder {
    pub calls: Rc<RefCell<Vec<Call>>>,
    pub slice_answer: SliceAnswer,
}

fn record(calls: &Rc<RefCell<Vec<Call>>>, call: Call) {
    calls.borrow_mut().push(call);
}

macro_rules! not_in_test {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        $(fn $name(&self, $($arg: $ty),*) -> thrift::Result<$ret> {
            $(let _ = $arg;)*
            Err(invalid_request(concat!(stringify!($name), " is not used by this test")))
        })*
    };
}

impl CassandraSyncHandler for Recorder {
    fn handle_login(&self, auth_request: AuthenticationRequest) -> thrift::Result<()> {
        let ok = auth_request.credentials.get("password").map(String::as_str) == Some("secret");
        record(&self.calls, Call::Login(auth_request));
        if ok {
            Ok(())
        } else {
            Err(user_error(AuthenticationException::new("bad password".to_owned())))
        }
    }

    fn handle_get_slice(
        &self,
        key: Vec<u8>,
        column_parent: ColumnParent,
        predicate: SlicePredicate,
        consistency_level: ConsistencyLevel,
    ) -> thrift::Result<Vec<ColumnOrSuperColumn>> {
        record(&self.calls, Call::GetSlice(key, column_parent, predicate, consistency_level));
        match &self.slice_answer {
            SliceAnswer::Columns(columns) => Ok(columns.clone()),
            SliceAnswer::Unavailable => Err(user_error(UnavailableException::new())),
            SliceAnswer::UndeclaredNotFound => Err(user_error(NotFoundException::new())),
        }
    }

    fn handle_remove(
        &self,
        key: Vec<u8>,
        column_path: ColumnPath,
        timestamp: i64,
        consistency_level: ConsistencyLevel,
    ) -> thrift::Result<()> {
        record(&self.calls, Call::Remove(key, column_path, timestamp, consistency_level));
        Ok(())
    }

    fn handle_batch_mutate(
        &self,
        mutation_map: BTreeMap<Vec<u8>, BTreeMap<String, Vec<Mutation>>>,
        consistency_level: ConsistencyLevel,
    ) -> thrift::Result<()> {
        record(&self.calls, Call::BatchMutate(mutation_map, consistency_level));
        Ok(())
    }

    fn handle_cas(
        &self,
        key: Vec<u8>,
        column_family: String,
        expected: Vec<Column>,
        updates: Vec<Column>,
        serial_consistency_level: ConsistencyLevel,
        commit_consistency_level: ConsistencyLevel,
    ) -> thrift::Result<CASResult> {
        record(
            &self.calls,
            Call::Cas(key, column_family, expected, updates, serial_consistency_level, commit_consistency_level),
        );
        Ok(CASResult::new(true, None))
    }

    fn handle_describe_version(&self) -> thrift::Result<String> {
        Ok(VERSION.to_owned())
    }

    not_in_test! {
        handle_set_keyspace(keyspace: String) -> ();
        handle_get(key: Vec<u8>, column_path: ColumnPath, consistency_level: ConsistencyLevel) -> ColumnOrSuperColumn;
        handle_get_count(key: Vec<u8>, column_parent: ColumnParent, predicate: SlicePredicate, consistency_level: ConsistencyLevel) -> i32;
        handle_multiget_slice(keys: Vec<Vec<u8>>, column_parent: ColumnParent, predicate: SlicePredicate, consistency_level: ConsistencyLevel) -> BTreeMap<Vec<u8>, Vec<ColumnOrSuperColumn>>;
        handle_multiget_count(keys: Vec<Vec<u8>>, column_parent: ColumnParent, predicate: SlicePredicate, consistency_level: ConsistencyLevel) -> BTreeMap<Vec<u8>, i32>;
        handle_get_range_slices(column_parent: ColumnParent, predicate: SlicePredicate, range: KeyRange, consistency_level: ConsistencyLevel) -> Vec<KeySlice>;
        handle_get_paged_slice(column_family: String, range: KeyRange, start_column: Vec<u8>, consistency_level: ConsistencyLevel) -> Vec<KeySlice>;
        handle_get_indexed_slices(column_parent: ColumnParent, index_clause: IndexClause, column_predicate: SlicePredicate, consistency_level: ConsistencyLevel) -> Vec<KeySlice>;
        handle_insert(key: Vec<u8>, column_parent: ColumnParent, column: Column, consistency_level: ConsistencyLevel) -> ();
        handle_add(key: Vec<u8>, column_parent: ColumnParent, column: CounterColumn, consistency_level: ConsistencyLevel) -> ();
        handle_remove_counter(key: Vec<u8>, path: ColumnPath, consistency_level: ConsistencyLevel) -> ();
        handle_atomic_batch_mutate(mutation_map: BTreeMap<Vec<u8>, BTreeMap<String, Vec<Mutation>>>, consistency_level: ConsistencyLevel) -> ();
        handle_truncate(cfname: String) -> ();
        handle_get_multi_slice(request: MultiSliceRequest) -> Vec<ColumnOrSuperColumn>;
        handle_describe_schema_versions() -> BTreeMap<String, Vec<String>>;
        handle_describe_keyspaces() -> Vec<KsDef>;
        handle_describe_cluster_name() -> String;
        handle_describe_ring(keyspace: String) -> Vec<TokenRange>;
        handle_describe_local_ring(keyspace: String) -> Vec<TokenRange>;
        handle_describe_token_map() -> BTreeMap<String, String>;
        handle_describe_partitioner() -> String;
        handle_describe_snitch() -> String;
        handle_describe_keyspace(keyspace: String) -> KsDef;
        handle_describe_splits(cf_name: String, start_token: String, end_token: String, keys_per_split: i32) -> Vec<String>;
        handle_trace_next_query() -> Vec<u8>;
        handle_describe_splits_ex(cf_name: String, start_token: String, end_token: String, keys_per_split: i32) -> Vec<CfSplit>;
        handle_system_add_column_family(cf_def: CfDef) -> String;
        handle_system_drop_column_family(column_family: String) -> String;
        handle_system_add_keyspace(ks_def: KsDef) -> String;
        handle_system_drop_keyspace(keyspace: String) -> String;
        handle_system_update_keyspace(ks_def: KsDef) -> String;
        handle_system_update_column_family(cf_def: CfDef) -> String;
        handle_execute_cql_query(query: Vec<u8>, compression: Compression) -> CqlResult;
        handle_execute_cql3_query(query: Vec<u8>, compression: Compression, consistency: ConsistencyLevel) -> CqlResult;
        handle_prepare_cql_query(query: Vec<u8>, compression: Compression) -> CqlPreparedResult;
        handle_prepare_cql3_query(query: Vec<u8>, compression: Compression) -> CqlPreparedResult;
        handle_execute_prepared_cql_query(item_id: i32, values: Vec<Vec<u8>>) -> CqlResult;
        handle_execute_prepared_cql3_query(item_id: i32, values: Vec<Vec<u8>>, consistency: ConsistencyLevel) -> CqlResult;
        handle_set_cql_version(version: String) -> ();
    }
}

/// Lower-case hex of `bytes` (test vectors are written as hex strings).
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bytes of a hex string written in a test; panics on malformed test data.
pub fn from_hex(hex: &str) -> Vec<u8> {
    hex.as_bytes()
        .chunks(2)
        .map(|pair| {
            let pair = std::str::from_utf8(pair).expect("ascii hex test vector");
            assert_eq!(pair.len(), 2, "odd-length hex test vector");
            u8::from_str_radix(pair, 16).expect("hex digit in test vector")
        })
        .collect()
}

/// Runs one request (a complete binary-protocol message) through a processor; returns the reply bytes.
pub fn process_bytes(processor: &dyn TProcessor, request: &[u8]) -> thrift::Result<Vec<u8>> {
    let mut reply = Vec::new();
    let mut i_prot = TBinaryInputProtocol::new(Cursor::new(request.to_vec()), true);
    let mut o_prot = TBinaryOutputProtocol::new(&mut reply, true);
    processor.process(&mut i_prot, &mut o_prot)?;
    Ok(reply)
}

/// Both directions of an in-memory connection. Each flush by the client hands the request bytes
/// to the processor and queues its reply for the client to read.
struct Wire {
    processor: Box<dyn TProcessor>,
    pending: Vec<u8>,
    reply: Cursor<Vec<u8>>,
    requests: Vec<Vec<u8>>,
}

pub struct WireReader(Rc<RefCell<Wire>>);
pub struct WireWriter(Rc<RefCell<Wire>>);

impl Read for WireReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.borrow_mut().reply.read(buf)
    }
}

impl Write for WireWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().pending.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut wire = self.0.borrow_mut();
        let request = std::mem::take(&mut wire.pending);
        let reply = process_bytes(wire.processor.as_ref(), &request).map_err(io::Error::other)?;
        wire.requests.push(request);
        wire.reply = Cursor::new(reply);
        Ok(())
    }
}

pub type TestClient = CassandraSyncClient<TBinaryInputProtocol<WireReader>, TBinaryOutputProtocol<WireWriter>>;

/// A generated client wired to a generated processor around a [`Recorder`].
pub struct Harness {
    pub client: TestClient,
    pub calls: Rc<RefCell<Vec<Call>>>,
    wire: Rc<RefCell<Wire>>,
}

impl Harness {
    pub fn new(slice_answer: SliceAnswer) -> Harness {
        let calls = Rc::new(RefCell::new(Vec::new()));
        let handler = Recorder { calls: Rc::clone(&calls), slice_answer };
        let wire = Rc::new(RefCell::new(Wire {
            processor: Box::new(CassandraSyncProcessor::new(handler)),
            pending: Vec::new(),
            reply: Cursor::new(Vec::new()),
            requests: Vec::new(),
        }));
        let client = CassandraSyncClient::new(
            TBinaryInputProtocol::new(WireReader(Rc::clone(&wire)), true),
            TBinaryOutputProtocol::new(WireWriter(Rc::clone(&wire)), true),
        );
        Harness { client, calls, wire }
    }

    /// Every request the client put on the wire so far, in order.
    pub fn requests(&self) -> Vec<Vec<u8>> {
        self.wire.borrow().requests.clone()
    }

    pub fn take_calls(&self) -> Vec<Call> {
        std::mem::take(&mut *self.calls.borrow_mut())
    }
}

/// A processor around a fresh [`Recorder`], for tests that feed raw bytes.
pub fn recording_processor(slice_answer: SliceAnswer) -> (CassandraSyncProcessor<Recorder>, Rc<RefCell<Vec<Call>>>) {
    let calls = Rc::new(RefCell::new(Vec::new()));
    let handler = Recorder { calls: Rc::clone(&calls), slice_answer };
    (CassandraSyncProcessor::new(handler), calls)
}
