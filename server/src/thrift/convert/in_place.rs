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
