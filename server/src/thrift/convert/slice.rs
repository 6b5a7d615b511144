//! get_slice's arguments, read in place when they have the usual shape: a key, a column parent,
//! a predicate holding a slice range, a consistency level. The generated reader spent about
//! 1,100 of a point read's 7,900 instructions on them (bench/instructions-sibyl.sh), most of it
//! moving `Result`s of its nested structs and the allocation of the column family's name, which
//! is only looked up; here the name stays a slice of the message. A predicate of names, or any
//! other shape, goes to the generated reader ([`super::in_place`]).

use std::borrow::Cow;

use thrift::protocol::TInputProtocol;
use thrift_idl as t;
use thrift_idl::MessageInput;

use super::in_place::{
    expect_field, expect_stop, read_key_and_parent, read_last_consistency_level, try_read, KeyAndParent,
};
use crate::thrift::wire::ttype::{BOOL, I32, STRING, STRUCT};

/// get_slice's arguments, however they were read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GetSliceArgs<'a> {
    pub key: Vec<u8>,
    pub column_family: Cow<'a, str>,
    pub super_column: Option<Vec<u8>>,
    pub predicate: t::SlicePredicate,
    pub consistency_level: t::ConsistencyLevel,
}

impl<'a> GetSliceArgs<'a> {
    /// Reads the arguments at the front of `input` (the method table's reader).
    pub fn read_from_in_protocol(input: &mut MessageInput<'a>) -> thrift::Result<GetSliceArgs<'a>> {
        if let Some(args) = try_read(input, read_plain) {
            return Ok(args);
        }
        t::CassandraGetSliceArgs::read_from_in_protocol(input).map(GetSliceArgs::from)
    }
}

impl From<t::CassandraGetSliceArgs> for GetSliceArgs<'_> {
    fn from(a: t::CassandraGetSliceArgs) -> Self {
        GetSliceArgs {
            key: a.key,
            column_family: Cow::Owned(a.column_parent.column_family),
            super_column: a.column_parent.super_column,
            predicate: a.predicate,
            consistency_level: a.consistency_level,
        }
    }
}

/// `{1: binary key, 2: ColumnParent {3: string column_family, 4: binary super_column},
/// 3: SlicePredicate {2: SliceRange {1: binary start, 2: binary finish, 3: bool reversed,
/// 4: i32 count}}, 4: i32 consistency_level}`, every field in id order; only the super column
/// and the consistency level (ONE when left out, as the generated reader) may be missing.
fn read_plain<'a>(i: &mut MessageInput<'a>) -> Option<GetSliceArgs<'a>> {
    let KeyAndParent { key, column_family, super_column } = read_key_and_parent(i)?;
    expect_field(i, STRUCT, 3)?;
    expect_field(i, STRUCT, 2)?; // SlicePredicate.slice_range
    expect_field(i, STRING, 1)?;
    let start = i.read_bytes().ok()?;
    expect_field(i, STRING, 2)?;
    let finish = i.read_bytes().ok()?;
    expect_field(i, BOOL, 3)?;
    let reversed = i.read_bool().ok()?;
    expect_field(i, I32, 4)?;
    let count = i.read_i32().ok()?;
    expect_stop(i)?; // the SliceRange's end
    expect_stop(i)?; // the SlicePredicate's end
    let consistency_level = read_last_consistency_level(i, 4)?;
    Some(GetSliceArgs {
        key,
        column_family: Cow::Borrowed(column_family),
        super_column,
        predicate: t::SlicePredicate {
            column_names: None,
            slice_range: Some(t::SliceRange { start, finish, reversed, count }),
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

    fn encode(args: &t::CassandraGetSliceArgs) -> Vec<u8> {
        encoded(|o| args.write_to_out_protocol(o))
    }

    fn decoded(bytes: &[u8]) -> thrift::Result<GetSliceArgs<'static>> {
        t::CassandraGetSliceArgs::read_from_in_protocol(&mut MessageInput::new(bytes)).map(GetSliceArgs::from)
    }

    fn args() -> impl Strategy<Value = t::CassandraGetSliceArgs> {
        let bytes = || proptest::collection::vec(any::<u8>(), 0..6);
        let range = (bytes(), bytes(), any::<bool>(), any::<i32>())
            .prop_map(|(start, finish, reversed, count)| t::SliceRange { start, finish, reversed, count });
        let predicate = prop_oneof![
            4 => range.prop_map(|r| t::SlicePredicate { column_names: None, slice_range: Some(r) }),
            1 => proptest::collection::vec(bytes(), 0..3)
                .prop_map(|names| t::SlicePredicate { column_names: Some(names), slice_range: None }),
        ];
        let parent = ("[A-Za-z0-9_]{0,8}|é", proptest::option::weighted(0.2, bytes()))
            .prop_map(|(column_family, super_column)| t::ColumnParent { column_family, super_column });
        (bytes(), parent, predicate, -1..12i32).prop_map(|(key, column_parent, predicate, cl)| {
            t::CassandraGetSliceArgs { key, column_parent, predicate, consistency_level: t::ConsistencyLevel(cl) }
        })
    }

    proptest! {
        /// Whatever its shape, a call reads as the generated reader reads it, and a range
        /// predicate is read in place.
        #[test]
        fn reads_as_the_generated_reader(args in args()) {
            let bytes = encode(&args);
            let mut input = MessageInput::new(&bytes);
            let read = GetSliceArgs::read_from_in_protocol(&mut input).expect("reads");
            prop_assert_eq!(input.remaining(), 0);
            prop_assert_eq!(matches!(read.column_family, Cow::Borrowed(_)), args.predicate.slice_range.is_some());
            prop_assert_eq!(read, decoded(&bytes).expect("decodes"));
        }

        /// A call cut anywhere fails as the generated reader fails.
        #[test]
        fn a_truncated_call_fails_as_decoded(args in args(), cut in any::<prop::sample::Index>()) {
            let bytes = encode(&args);
            let bytes = &bytes[..cut.index(bytes.len())];
            let read = GetSliceArgs::read_from_in_protocol(&mut MessageInput::new(bytes)).map_err(|e| e.to_string());
            prop_assert_eq!(read, decoded(bytes).map_err(|e| e.to_string()));
        }
    }

    /// A call whose slice range has `fields` (the start and finish empty), level left out.
    fn with_range(fields: &[(TType, i16)]) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut o = MessageOutput::new(&mut bytes);
        let w = |r: thrift::Result<()>| r.expect("writes");
        w(write_key_and_parent(&mut o));
        w(o.write_field_begin(&field(TType::Struct, 3)));
        w(o.write_field_begin(&field(TType::Struct, 2)));
        for (ty, id) in fields {
            w(o.write_field_begin(&field(*ty, *id)));
            match ty {
                TType::String => w(o.write_bytes(b"")),
                TType::Bool => w(o.write_bool(true)),
                _ => w(o.write_i32(7)),
            }
        }
        for _ in 0..3 {
            w(o.write_field_stop());
        }
        bytes
    }

    fn read(bytes: &[u8]) -> Result<GetSliceArgs<'_>, String> {
        GetSliceArgs::read_from_in_protocol(&mut MessageInput::new(bytes)).map_err(|e| e.to_string())
    }

    #[test]
    fn a_range_out_of_order_or_incomplete_is_left_to_the_generated_reader() {
        let (start, finish, reversed, count) =
            ((TType::String, 1), (TType::String, 2), (TType::Bool, 3), (TType::I32, 4));
        let plain = with_range(&[start, finish, reversed, count]);
        let args = read(&plain).expect("reads");
        assert!(matches!(args.column_family, Cow::Borrowed("Standard1")));
        assert_eq!(args.consistency_level, t::ConsistencyLevel::ONE);
        assert_eq!(args.predicate.slice_range.map(|r| (r.reversed, r.count)), Some((true, 7)));
        let swapped = with_range(&[finish, start, reversed, count]);
        let args = read(&swapped).expect("reads");
        assert!(matches!(args.column_family, Cow::Owned(_)), "decoded by the generated reader");
        assert_eq!(
            read(&with_range(&[start, finish, count])),
            decoded(&with_range(&[start, finish, count])).map_err(|e| e.to_string())
        );
        assert!(read(&with_range(&[start, finish, count])).is_err(), "reversed is required");
    }
}
