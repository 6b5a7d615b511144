//! What the readers of a call's usual arguments in place share ([`super::batch`] for
//! batch_mutate, [`super::slice`] for get_slice). Each checks that the arguments have the one
//! shape it takes before it takes anything, and answers `None` otherwise, leaving the message to
//! the generated reader, its errors included: a call read in place behaves as it would decoded.

use thrift::protocol::TInputProtocol;
use thrift_idl as t;
use thrift_idl::MessageInput;

use crate::thrift::wire::ttype::{I32, STOP, STRING, STRUCT};

/// The next field header is `id` of wire type `field_type` (a [`crate::thrift::wire::ttype`]).
#[inline]
pub(super) fn expect_field(i: &mut MessageInput<'_>, field_type: u8, id: i16) -> Option<()> {
    (i.read_field_header()? == (field_type, id)).then_some(())
}

/// The next field header is the end of a struct.
#[inline]
pub(super) fn expect_stop(i: &mut MessageInput<'_>) -> Option<()> {
    (i.read_field_header()?.0 == STOP).then_some(())
}

/// A row key and a column parent, the column family's name a slice of the message.
pub(super) struct KeyAndParent<'a> {
    pub key: Vec<u8>,
    pub column_family: &'a str,
    pub super_column: Option<Vec<u8>>,
}

/// `1: binary key, 2: ColumnParent {3: string column_family, 4: binary super_column}`, the
/// super column optional: how the arguments of get_slice and insert begin.
// Inlined into each reader: called, it cost get_slice about 100 instructions a read.
#[inline(always)]
pub(super) fn read_key_and_parent<'a>(i: &mut MessageInput<'a>) -> Option<KeyAndParent<'a>> {
    expect_field(i, STRING, 1)?;
    let key = i.read_bytes().ok()?;
    expect_field(i, STRUCT, 2)?;
    expect_field(i, STRING, 3)?;
    let column_family = i.read_str_ref().ok()?;
    let super_column = match i.read_field_header()? {
        (STOP, _) => None,
        (STRING, 4) => {
            let name = i.read_bytes().ok()?;
            expect_stop(i)?;
            Some(name)
        }
        _ => return None,
    };
    Some(KeyAndParent { key, column_family, super_column })
}

/// The arguments' last field, the consistency level of field `id` (its IDL default ONE when
/// left out, as the generated reader), and their end.
// Inlined into each reader: called, it cost get_slice about 100 instructions a read.
#[inline(always)]
pub(super) fn read_last_consistency_level(i: &mut MessageInput<'_>, id: i16) -> Option<t::ConsistencyLevel> {
    match i.read_field_header()? {
        (STOP, _) => Some(t::ConsistencyLevel::ONE),
        (I32, field) if field == id => {
            let level = t::ConsistencyLevel(i.read_i32().ok()?);
            expect_stop(i)?;
            Some(level)
        }
        _ => None,
    }
}

/// What `read` takes from the front of `input`, if it has the shape `read` wants; `input` is
/// moved past it then, and left untouched otherwise (for the generated reader).
#[inline]
pub(super) fn try_read<'a, T>(
    input: &mut MessageInput<'a>,
    read: impl FnOnce(&mut MessageInput<'a>) -> Option<T>,
) -> Option<T> {
    let mut ahead = input.clone();
    let value = read(&mut ahead)?;
    *input = ahead;
    Some(value)
}

/// Whether `next` comes strictly after the `last` key of a map (a decoded map would sort or merge
/// it otherwise), remembering it as the last if so.
#[inline]
pub(super) fn strictly_after<'a, T: Ord + ?Sized>(last: &mut Option<&'a T>, next: &'a T) -> bool {
    if last.is_some_and(|last| last >= next) {
        return false;
    }
    *last = Some(next);
    true
}

/// What `write` writes, for tests.
#[cfg(test)]
pub(super) fn encoded(write: impl FnOnce(&mut thrift_idl::MessageOutput<'_>) -> thrift::Result<()>) -> Vec<u8> {
    let mut bytes = Vec::new();
    write(&mut thrift_idl::MessageOutput::new(&mut bytes)).expect("encodes");
    bytes
}

/// Writes, for tests, what [`read_key_and_parent`] reads: key `k`, column family `Standard1`.
#[cfg(test)]
pub(super) fn write_key_and_parent(o: &mut thrift_idl::MessageOutput<'_>) -> thrift::Result<()> {
    use thrift::protocol::{TOutputProtocol, TType};
    o.write_field_begin(&field(TType::String, 1))?;
    o.write_bytes(b"k")?;
    o.write_field_begin(&field(TType::Struct, 2))?;
    o.write_field_begin(&field(TType::String, 3))?;
    o.write_string("Standard1")?;
    o.write_field_stop()
}

/// A field header to write in tests.
#[cfg(test)]
pub(super) fn field(field_type: thrift::protocol::TType, id: i16) -> thrift::protocol::TFieldIdentifier {
    thrift::protocol::TFieldIdentifier { name: None, field_type, id: Some(id) }
}
