//! What the readers of a call's usual arguments in place share ([`super::batch`] for
//! batch_mutate, [`super::slice`] for get_slice). Each checks that the arguments have the one
//! shape it takes before it takes anything, and answers `None` otherwise, leaving the message to
//! the generated reader, its errors included: a call read in place behaves as it would decoded.

use thrift_idl::MessageInput;

use crate::thrift::wire::ttype::STOP;

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

/// A field header to write in tests.
#[cfg(test)]
pub(super) fn field(field_type: thrift::protocol::TType, id: i16) -> thrift::protocol::TFieldIdentifier {
    thrift::protocol::TFieldIdentifier { name: None, field_type, id: Some(id) }
}
