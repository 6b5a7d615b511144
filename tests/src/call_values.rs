//! The values an arbitrary Thrift call is built from, and the structs of both API generations
//! (0.6's `thrift_idl::v06`, 20.1.0's `thrift_idl`) made of one set of them, so that the same
//! values become the same request in either. The router's unit tests (`server`) and the routing
//! property test against a real node draw these with strategies of their own (any bytes, or small
//! alphabets that hit real data) and build their calls from them.

use thrift_idl as t;
use thrift_idl::v06 as v;

/// Values a call is built from.
#[derive(Clone, Debug)]
pub struct CallValues {
    pub keyspace: String,
    pub key: String,
    pub cf: String,
    pub super_column: Option<Vec<u8>>,
    pub column: Option<Vec<u8>>,
    /// A list of names; without one, the slice `range`.
    pub names: Option<Vec<Vec<u8>>>,
    /// Start, finish, reversed, count.
    pub range: (Vec<u8>, Vec<u8>, bool, i32),
    pub by_token: bool,
    /// A timestamp, a count, whatever number a call takes.
    pub number: i64,
    /// A consistency level's number, valid or not.
    pub level: i32,
    pub value: Vec<u8>,
}

impl CallValues {
    pub fn predicate06(&self) -> v::SlicePredicate {
        let (start, finish, reversed, count) = self.range.clone();
        match &self.names {
            Some(n) => v::SlicePredicate::new(n.clone(), None),
            None => v::SlicePredicate::new(None, v::SliceRange::new(start, finish, reversed, count)),
        }
    }

    pub fn predicate20(&self) -> t::SlicePredicate {
        let (start, finish, reversed, count) = self.range.clone();
        match &self.names {
            Some(n) => t::SlicePredicate::new(n.clone(), None),
            None => t::SlicePredicate::new(None, t::SliceRange::new(start, finish, reversed, count)),
        }
    }

    pub fn parent06(&self) -> v::ColumnParent {
        v::ColumnParent::new(self.cf.clone(), self.super_column.clone())
    }

    pub fn parent20(&self) -> t::ColumnParent {
        t::ColumnParent::new(self.cf.clone(), self.super_column.clone())
    }

    pub fn path06(&self) -> v::ColumnPath {
        v::ColumnPath::new(self.cf.clone(), self.super_column.clone(), self.column.clone())
    }

    pub fn path20(&self) -> t::ColumnPath {
        t::ColumnPath::new(self.cf.clone(), self.super_column.clone(), self.column.clone())
    }

    pub fn cl06(&self) -> v::ConsistencyLevel {
        v::ConsistencyLevel(self.level)
    }

    pub fn cl20(&self) -> t::ConsistencyLevel {
        t::ConsistencyLevel(self.level)
    }
}

/// The parts a strategy draws, in groups of at most three (proptest's tuples): names, the
/// column's place and selection, then the numbers and the value.
pub type CallParts = (
    (String, String, String),
    (Option<Vec<u8>>, Option<Vec<u8>>, Option<Vec<Vec<u8>>>),
    ((Vec<u8>, Vec<u8>, bool, i32), bool, i64, i32, Vec<u8>),
);

impl From<CallParts> for CallValues {
    fn from(parts: CallParts) -> CallValues {
        let ((keyspace, key, cf), (super_column, column, names), (range, by_token, number, level, value)) = parts;
        CallValues { keyspace, key, cf, super_column, column, names, range, by_token, number, level, value }
    }
}
