//! insert's arguments, read in place when they have the usual shape: a key, a column parent, a
//! column, a consistency level, every field in id order. The generated reader spent about 1,000
//! of an insert's 10,000 instructions on them (bench/instructions-sibyl.sh, more than a one-column
//! batch_mutate read in place costs in all), allocating the column family's name, which is only
//! looked up, and the column's name and value, which are copied into the cell again; here they
//! stay slices of the message until the cell is built. Any other shape goes to the generated
//! reader ([`super::in_place`]).

use std::borrow::Cow;

use model::data::Cell;
use model::schema::CfMetadata;
use thrift_idl as t;
use thrift_idl::MessageInput;

use super::batch::read_column;
use super::in_place::{expect_field, read_key_and_parent, read_last_consistency_level, try_read, KeyAndParent};
use super::mutation::column_cell;
use crate::thrift::error::TResult;
use crate::thrift::wire::ttype::STRUCT;

/// insert's arguments, however they were read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InsertArgs<'a> {
    pub key: Vec<u8>,
    pub column_family: Cow<'a, str>,
    pub super_column: Option<Vec<u8>>,
    pub column: ColumnParts<'a>,
    pub consistency_level: t::ConsistencyLevel,
}

/// A `Column`'s fields, borrowed from the message or owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnParts<'a> {
    pub name: Cow<'a, [u8]>,
    pub value: Option<Cow<'a, [u8]>>,
    pub timestamp: Option<i64>,
    pub ttl: Option<i32>,
}

impl ColumnParts<'_> {
    /// The cell this column becomes in `meta` (under `super_column`), validated as
    /// [`super::cell_of`] validates a decoded column.
    pub fn cell(self, meta: &CfMetadata, super_column: Option<&[u8]>, now: i32) -> TResult<Cell> {
        column_cell(meta, super_column, self.name, self.value, self.timestamp, self.ttl, now)
    }
}

impl<'a> InsertArgs<'a> {
    /// Reads the arguments at the front of `input` (the method table's reader).
    pub fn read_from_in_protocol(input: &mut MessageInput<'a>) -> thrift::Result<InsertArgs<'a>> {
        if let Some(args) = try_read(input, read_plain) {
            return Ok(args);
        }
        t::CassandraInsertArgs::read_from_in_protocol(input).map(InsertArgs::from)
    }
}

impl From<t::CassandraInsertArgs> for InsertArgs<'_> {
    fn from(a: t::CassandraInsertArgs) -> Self {
        let t::Column { name, value, timestamp, ttl } = a.column;
        InsertArgs {
            key: a.key,
            column_family: Cow::Owned(a.column_parent.column_family),
            super_column: a.column_parent.super_column,
            column: ColumnParts { name: Cow::Owned(name), value: value.map(Cow::Owned), timestamp, ttl },
            consistency_level: a.consistency_level,
        }
    }
}

/// `{1: binary key, 2: ColumnParent {3: string column_family, 4: binary super_column},
/// 3: Column {1: binary name, 2: binary value, 3: i64 timestamp, 4: i32 ttl},
/// 4: i32 consistency_level}`, every field in id order; the super column, the column's value,
/// timestamp and ttl, and the consistency level (ONE when left out, as the generated reader) may
/// be missing.
fn read_plain<'a>(i: &mut MessageInput<'a>) -> Option<InsertArgs<'a>> {
    let KeyAndParent { key, column_family, super_column } = read_key_and_parent(i)?;
    expect_field(i, STRUCT, 3)?;
    let c = read_column(i)?;
    let consistency_level = read_last_consistency_level(i, 4)?;
    Some(InsertArgs {
        key,
        column_family: Cow::Borrowed(column_family),
        super_column,
        column: ColumnParts {
            name: Cow::Borrowed(c.name),
            value: c.value.map(Cow::Borrowed),
            timestamp: c.timestamp,
            ttl: c.ttl,
        },
        consistency_level,
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use thrift::protocol::{TOutputProtocol, TType};
    use thrift_idl::MessageOutput;

    use super::*;
    use crate::thrift::convert::in_place::{encoded, field, write_key_and_parent};

    fn encode(args: &t::CassandraInsertArgs) -> Vec<u8> {
        encoded(|o| args.write_to_out_protocol(o))
    }

    fn decoded(bytes: &[u8]) -> thrift::Result<InsertArgs<'static>> {
        t::CassandraInsertArgs::read_from_in_protocol(&mut MessageInput::new(bytes)).map(InsertArgs::from)
    }

    fn read(bytes: &[u8]) -> thrift::Result<InsertArgs<'_>> {
        InsertArgs::read_from_in_protocol(&mut MessageInput::new(bytes))
    }

    fn args() -> impl Strategy<Value = t::CassandraInsertArgs> {
        let bytes = || proptest::collection::vec(any::<u8>(), 0..6);
        let column = (
            bytes(),
            proptest::option::weighted(0.9, bytes()),
            proptest::option::weighted(0.9, any::<i64>()),
            proptest::option::weighted(0.3, any::<i32>()),
        )
            .prop_map(|(name, value, timestamp, ttl)| t::Column { name, value, timestamp, ttl });
        let parent = ("[A-Za-z0-9_]{0,8}|é", proptest::option::weighted(0.2, bytes()))
            .prop_map(|(column_family, super_column)| t::ColumnParent { column_family, super_column });
        (bytes(), parent, column, -1..12i32).prop_map(|(key, column_parent, column, cl)| t::CassandraInsertArgs {
            key,
            column_parent,
            column,
            consistency_level: t::ConsistencyLevel(cl),
        })
    }

    proptest! {
        /// Whatever its fields, a call reads in place as the generated reader reads it.
        #[test]
        fn reads_as_the_generated_reader(args in args()) {
            let bytes = encode(&args);
            let mut input = MessageInput::new(&bytes);
            let read = InsertArgs::read_from_in_protocol(&mut input).expect("reads");
            prop_assert_eq!(input.remaining(), 0);
            prop_assert!(matches!(read.column_family, Cow::Borrowed(_)), "read in place");
            prop_assert_eq!(read, decoded(&bytes).expect("decodes"));
        }

        /// A call cut anywhere fails as the generated reader fails.
        #[test]
        fn a_truncated_call_fails_as_decoded(args in args(), cut in any::<prop::sample::Index>()) {
            let bytes = encode(&args);
            let bytes = &bytes[..cut.index(bytes.len())];
            prop_assert_eq!(read(bytes).map_err(|e| e.to_string()), decoded(bytes).map_err(|e| e.to_string()));
        }
    }

    /// A call whose column has `fields` (strings empty, numbers 7), level left out.
    fn with_column(fields: &[(TType, i16)]) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut o = MessageOutput::new(&mut bytes);
        let w = |r: thrift::Result<()>| r.expect("writes");
        w(write_key_and_parent(&mut o));
        w(o.write_field_begin(&field(TType::Struct, 3)));
        for (ty, id) in fields {
            w(o.write_field_begin(&field(*ty, *id)));
            match ty {
                TType::String => w(o.write_bytes(b"")),
                TType::I64 => w(o.write_i64(7)),
                _ => w(o.write_i32(7)),
            }
        }
        w(o.write_field_stop());
        w(o.write_field_stop());
        bytes
    }

    #[test]
    fn a_column_out_of_order_or_without_a_name_is_left_to_the_generated_reader() {
        let (name, value, timestamp) = ((TType::String, 1), (TType::String, 2), (TType::I64, 3));
        let plain = with_column(&[name, value, timestamp]);
        let args = read(&plain).expect("reads");
        assert!(matches!(args.column_family, Cow::Borrowed("Standard1")));
        assert!(matches!(args.column.name, Cow::Borrowed(b"")));
        assert_eq!((args.column.timestamp, args.consistency_level), (Some(7), t::ConsistencyLevel::ONE));

        let swapped = with_column(&[value, name, timestamp]);
        let args = read(&swapped).expect("reads");
        assert!(matches!(args.column_family, Cow::Owned(_)), "decoded by the generated reader");
        assert_eq!(args, decoded(&swapped).expect("decodes"));

        let nameless = with_column(&[value, timestamp]);
        assert!(read(&nameless).is_err(), "a column's name is required");
        assert_eq!(read(&nameless).map_err(|e| e.to_string()), decoded(&nameless).map_err(|e| e.to_string()));
    }
}
