//! What the 0.6 end-to-end tests share: a client of the 0.6 API (generated from
//! `cassandra-0.6.thrift`, `thrift_idl::v06`) over framed or unframed transport, and helpers to
//! build its structs and check its exceptions, in the style of the harness' 20.1.0 helpers.

#![allow(dead_code, reason = "each test file uses part of this module")]

use std::collections::BTreeMap;
use std::net::TcpStream;

use e2e::Node;
use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol, TInputProtocol, TOutputProtocol};
use thrift::transport::{
    TBufferedReadTransport, TBufferedWriteTransport, TFramedReadTransport, TFramedWriteTransport, TIoChannel,
    TTcpChannel,
};
use thrift_idl::v06 as v;

/// A connected 0.6 client; framed and unframed clients have this one type.
pub type Client06 = v::CassandraSyncClient<Box<dyn TInputProtocol + Send>, Box<dyn TOutputProtocol + Send>>;

pub const ONE06: v::ConsistencyLevel = v::ConsistencyLevel::ONE;

/// A 0.6 client over a new connection; unframed is 0.6's default transport.
pub fn client06(node: &Node, framed: bool) -> Client06 {
    over(node.raw_socket(), framed)
}

/// A 0.6 client over `stream` (for instance a clone of a 20.1.0 client's socket).
pub fn over(stream: TcpStream, framed: bool) -> Client06 {
    let (r, w) = TTcpChannel::with_stream(stream).split().expect("split channel");
    let (input, output): (Box<dyn TInputProtocol + Send>, Box<dyn TOutputProtocol + Send>) = if framed {
        (
            Box::new(TBinaryInputProtocol::new(TFramedReadTransport::new(r), true)),
            Box::new(TBinaryOutputProtocol::new(TFramedWriteTransport::new(w), true)),
        )
    } else {
        (
            Box::new(TBinaryInputProtocol::new(TBufferedReadTransport::new(r), true)),
            Box::new(TBinaryOutputProtocol::new(TBufferedWriteTransport::new(w), true)),
        )
    };
    v::CassandraSyncClient::new(input, output)
}

pub fn path06(cf: &str, column: impl Into<Vec<u8>>) -> v::ColumnPath {
    v::ColumnPath::new(cf.to_string(), None, Some(column.into()))
}

pub fn super_path06(cf: &str, super_column: impl Into<Vec<u8>>, column: Option<Vec<u8>>) -> v::ColumnPath {
    v::ColumnPath::new(cf.to_string(), Some(super_column.into()), column)
}

pub fn parent06(cf: &str) -> v::ColumnParent {
    v::ColumnParent::new(cf.to_string(), None)
}

pub fn super_parent06(cf: &str, super_column: impl Into<Vec<u8>>) -> v::ColumnParent {
    v::ColumnParent::new(cf.to_string(), Some(super_column.into()))
}

pub fn column06(name: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>, timestamp: i64) -> v::Column {
    v::Column::new(name.into(), value.into(), timestamp)
}

pub fn slice06(start: impl Into<Vec<u8>>, finish: impl Into<Vec<u8>>, reversed: bool, count: i32) -> v::SlicePredicate {
    v::SlicePredicate::new(None, v::SliceRange::new(start.into(), finish.into(), reversed, count))
}

pub fn all06(count: i32) -> v::SlicePredicate {
    slice06(Vec::new(), Vec::new(), false, count)
}

pub fn insert06(c: v::Column) -> v::Mutation {
    v::Mutation::new(v::ColumnOrSuperColumn::new(c, None), None)
}

pub fn super_insert06(name: impl Into<Vec<u8>>, columns: Vec<v::Column>) -> v::Mutation {
    v::Mutation::new(v::ColumnOrSuperColumn::new(None, v::SuperColumn::new(name.into(), columns)), None)
}

/// A batch_mutate map with one row in one column family.
pub fn batch06(
    key: &str,
    cf: &str,
    mutations: Vec<v::Mutation>,
) -> BTreeMap<String, BTreeMap<String, Vec<v::Mutation>>> {
    BTreeMap::from([(key.to_string(), BTreeMap::from([(cf.to_string(), mutations)]))])
}

/// (name, value) of plain columns, as strings; panics on anything else.
pub fn str_pairs06(cols: &[v::ColumnOrSuperColumn]) -> Vec<(String, String)> {
    cols.iter()
        .map(|c| {
            let col = c.column.as_ref().unwrap_or_else(|| panic!("expected a column, got {c:?}"));
            (String::from_utf8_lossy(&col.name).into_owned(), String::from_utf8_lossy(&col.value).into_owned())
        })
        .collect()
}

/// The `why` of a 0.6 InvalidRequestException; panics (naming `what`) on anything else.
pub fn expect_ire06<T: std::fmt::Debug>(what: &str, r: thrift::Result<T>) -> String {
    match r {
        Ok(v) => panic!("{what}: expected InvalidRequestException, got Ok({v:?})"),
        Err(thrift::Error::User(e)) => match e.downcast_ref::<v::InvalidRequestException>() {
            Some(ire) => ire.why.clone(),
            None => panic!("{what}: expected InvalidRequestException, got user error {e:?}"),
        },
        Err(e) => panic!("{what}: expected InvalidRequestException, got {e:?}"),
    }
}

/// Asserts the call failed with the declared 0.6 exception `E`.
pub fn expect06<E: std::error::Error + 'static, T: std::fmt::Debug>(what: &str, r: thrift::Result<T>) {
    match r {
        Ok(v) => panic!("{what}: expected {}, got Ok({v:?})", std::any::type_name::<E>()),
        Err(thrift::Error::User(e)) => {
            assert!(e.downcast_ref::<E>().is_some(), "{what}: expected {}, got {e:?}", std::any::type_name::<E>())
        }
        Err(e) => panic!("{what}: expected {}, got {e:?}", std::any::type_name::<E>()),
    }
}
