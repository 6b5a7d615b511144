//! The binary protocol (strict) read in place from received bytes: the server's calls, the load
//! generator's replies.
//!
//! Both hold the message's bytes already, so the generated readers need not go through
//! `TBinaryInputProtocol`'s byte-stream machinery: here every read is a bounds check and a copy
//! out of the slice, and a string or binary is one allocation of its exact size
//! (`TBinaryInputProtocol` zeroes a buffer of the declared size, then fills it). Being a concrete
//! type, it lets the generic generated readers inline.
//!
//! Bounds: nothing is read past the slice's end (a read that would is a transport `EndOfFile`
//! error, so a reader of partial input can tell "wait for more" from "malformed"), and a declared
//! length or element count is refused when the bytes left could not hold it (each element takes
//! at least the encoded size of its type). So a framed message needs no walk over its structure
//! before decoding: a count or length that lies fails here, before anything is allocated for it.

use thrift::protocol::{
    TFieldIdentifier, TInputProtocol, TListIdentifier, TMapIdentifier, TMessageIdentifier, TMessageType,
    TSetIdentifier, TStructIdentifier, TType,
};
use thrift::{ProtocolError, ProtocolErrorKind, TransportError, TransportErrorKind};

/// A message header read in place ([`MessageInput::read_header`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header<'a> {
    pub name: &'a str,
    pub kind: TMessageType,
    pub sequence_number: i32,
}

/// A reader over one message. A clone reads on from where the original stands, which lets a
/// caller try one reading of the bytes and fall back to another.
#[derive(Clone)]
pub struct MessageInput<'a> {
    rest: &'a [u8],
}

impl<'a> MessageInput<'a> {
    #[inline(always)]
    pub fn new(message: &'a [u8]) -> MessageInput<'a> {
        MessageInput { rest: message }
    }

    /// How many bytes are left unread.
    #[inline(always)]
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// The next field header as its wire type's byte and its id (id 0 for the end of a struct),
    /// without the checks and the identifier struct of `read_field_begin`: for a reader in place
    /// that compares it with the header it expects. `None` if the message ends first.
    #[inline(always)]
    pub fn read_field_header(&mut self) -> Option<(u8, i16)> {
        let (&field_type, rest) = self.rest.split_first()?;
        if field_type == 0 {
            self.rest = rest;
            return Some((0, 0));
        }
        let (id, rest) = rest.split_first_chunk::<2>()?;
        self.rest = rest;
        Some((field_type, i16::from_be_bytes(*id)))
    }

    /// A string or binary borrowed from the message: no allocation, same checks as `read_bytes`.
    #[inline(always)]
    pub fn read_binary_ref(&mut self) -> thrift::Result<&'a [u8]> {
        let n = self.length()?;
        self.take(n)
    }

    /// A string borrowed from the message: same checks as `read_string`.
    #[inline(always)]
    pub fn read_str_ref(&mut self) -> thrift::Result<&'a str> {
        let n = self.length()?;
        utf8(self.take(n)?)
    }

    #[inline(always)]
    fn take(&mut self, n: usize) -> thrift::Result<&'a [u8]> {
        if n > self.rest.len() {
            return Err(ends_early(n, self.rest.len()));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    #[inline(always)]
    fn array<const N: usize>(&mut self) -> thrift::Result<[u8; N]> {
        match self.rest.split_first_chunk::<N>() {
            Some((head, tail)) => {
                self.rest = tail;
                Ok(*head)
            }
            None => Err(ends_early(N, self.rest.len())),
        }
    }

    /// A string or binary's length.
    #[inline(always)]
    fn length(&mut self) -> thrift::Result<usize> {
        let n = i32::from_be_bytes(self.array()?);
        usize::try_from(n).map_err(|_| negative(n))
    }

    /// A container's element count, each element at least `each` bytes.
    #[inline(always)]
    fn count(&mut self, each: usize) -> thrift::Result<i32> {
        let n = i32::from_be_bytes(self.array()?);
        let Ok(wanted) = usize::try_from(n) else { return Err(negative(n)) };
        // Like a read past the end, this is "ends early": on partial input, more bytes may come.
        if wanted.saturating_mul(each) > self.rest.len() {
            return Err(thrift::Error::Transport(TransportError::new(
                TransportErrorKind::EndOfFile,
                format!("container of {n} elements cannot fit in the {} bytes left of the message", self.rest.len()),
            )));
        }
        Ok(n)
    }

    /// The message header, its method name borrowed from the message: what a server needs to
    /// route a call, without the copy of the name `read_message_begin` makes. Same checks.
    pub fn read_header(&mut self) -> thrift::Result<Header<'a>> {
        let [v0, v1, _, kind] = self.array()?;
        if [v0, v1] != [0x80, 0x01] {
            return Err(thrift::Error::Protocol(ProtocolError::new(
                ProtocolErrorKind::BadVersion,
                format!("not a strict binary-protocol message (version bytes {v0:#04x} {v1:#04x})"),
            )));
        }
        let kind = TMessageType::try_from(kind)?;
        let n = self.length()?;
        let name = utf8(self.take(n)?)?;
        let sequence_number = self.read_i32()?;
        Ok(Header { name, kind, sequence_number })
    }

    #[inline(always)]
    fn field_type(&mut self) -> thrift::Result<TType> {
        let [b] = self.array()?;
        field_type(b)
    }
}

#[cold]
fn ends_early(wanted: usize, left: usize) -> thrift::Error {
    thrift::Error::Transport(TransportError::new(
        TransportErrorKind::EndOfFile,
        format!("message ends early: {wanted} more bytes wanted, {left} left"),
    ))
}

/// `std::str::from_utf8` with a shortcut for ASCII. The strings of requests (method, keyspace
/// and column family names) are short and ASCII, and the general check walks them a byte at a
/// time: about 100 instructions for a 9-byte name, three times per `get_slice`.
#[inline(always)]
pub fn str_from_utf8(bytes: &[u8]) -> Result<&str, std::str::Utf8Error> {
    if bytes.is_ascii() {
        // SAFETY: ASCII bytes are valid UTF-8.
        return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes)
}

#[inline(always)]
fn utf8(bytes: &[u8]) -> thrift::Result<&str> {
    str_from_utf8(bytes).map_err(|e| {
        thrift::Error::Protocol(ProtocolError::new(ProtocolErrorKind::InvalidData, format!("string is not UTF-8: {e}")))
    })
}

#[cold]
fn negative(n: i32) -> thrift::Error {
    thrift::Error::Protocol(ProtocolError::new(ProtocolErrorKind::NegativeSize, format!("negative size {n}")))
}

#[inline(always)]
fn field_type(b: u8) -> thrift::Result<TType> {
    Ok(match b {
        0 => TType::Stop,
        1 => TType::Void,
        2 => TType::Bool,
        3 => TType::I08,
        4 => TType::Double,
        6 => TType::I16,
        8 => TType::I32,
        10 => TType::I64,
        11 => TType::String,
        12 => TType::Struct,
        13 => TType::Map,
        14 => TType::Set,
        15 => TType::List,
        16 => TType::Utf8,
        17 => TType::Utf16,
        other => {
            return Err(thrift::Error::Protocol(ProtocolError::new(
                ProtocolErrorKind::InvalidData,
                format!("unknown field type {other}"),
            )))
        }
    })
}

/// The fewest bytes one value of type `t` takes on the wire.
#[inline(always)]
fn smallest(t: TType) -> usize {
    match t {
        TType::I16 => 2,
        TType::I32 | TType::String | TType::Utf7 | TType::Utf8 | TType::Utf16 => 4,
        TType::I64 | TType::Double => 8,
        TType::Set | TType::List => 5,
        TType::Map => 6,
        TType::Stop | TType::Void | TType::Bool | TType::I08 | TType::Struct => 1,
    }
}

impl TInputProtocol for MessageInput<'_> {
    #[inline(always)]
    fn read_message_begin(&mut self) -> thrift::Result<TMessageIdentifier> {
        let h = self.read_header()?;
        Ok(TMessageIdentifier::new(h.name, h.kind, h.sequence_number))
    }

    #[inline(always)]
    fn read_message_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    #[inline(always)]
    fn read_struct_begin(&mut self) -> thrift::Result<Option<TStructIdentifier>> {
        Ok(None)
    }

    #[inline(always)]
    fn read_struct_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    #[inline(always)]
    fn read_field_begin(&mut self) -> thrift::Result<TFieldIdentifier> {
        let field_type = self.field_type()?;
        let id = match field_type {
            TType::Stop => 0,
            _ => self.read_i16()?,
        };
        Ok(TFieldIdentifier { name: None, field_type, id: Some(id) })
    }

    #[inline(always)]
    fn read_field_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    #[inline(always)]
    fn read_bool(&mut self) -> thrift::Result<bool> {
        Ok(self.read_i8()? != 0)
    }

    #[inline(always)]
    fn read_bytes(&mut self) -> thrift::Result<Vec<u8>> {
        let n = self.length()?;
        Ok(self.take(n)?.to_vec())
    }

    #[inline(always)]
    fn read_i8(&mut self) -> thrift::Result<i8> {
        Ok(i8::from_be_bytes(self.array()?))
    }

    #[inline(always)]
    fn read_i16(&mut self) -> thrift::Result<i16> {
        Ok(i16::from_be_bytes(self.array()?))
    }

    #[inline(always)]
    fn read_i32(&mut self) -> thrift::Result<i32> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    #[inline(always)]
    fn read_i64(&mut self) -> thrift::Result<i64> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    #[inline(always)]
    fn read_double(&mut self) -> thrift::Result<f64> {
        Ok(f64::from_be_bytes(self.array()?))
    }

    #[inline(always)]
    fn read_string(&mut self) -> thrift::Result<String> {
        let n = self.length()?;
        Ok(utf8(self.take(n)?)?.to_owned())
    }

    #[inline(always)]
    fn read_list_begin(&mut self) -> thrift::Result<TListIdentifier> {
        let element_type = self.field_type()?;
        let size = self.count(smallest(element_type))?;
        Ok(TListIdentifier::new(element_type, size))
    }

    #[inline(always)]
    fn read_list_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    #[inline(always)]
    fn read_set_begin(&mut self) -> thrift::Result<TSetIdentifier> {
        let element_type = self.field_type()?;
        let size = self.count(smallest(element_type))?;
        Ok(TSetIdentifier::new(element_type, size))
    }

    #[inline(always)]
    fn read_set_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    #[inline(always)]
    fn read_map_begin(&mut self) -> thrift::Result<TMapIdentifier> {
        let key_type = self.field_type()?;
        let value_type = self.field_type()?;
        let size = self.count(smallest(key_type) + smallest(value_type))?;
        Ok(TMapIdentifier::new(key_type, value_type, size))
    }

    #[inline(always)]
    fn read_map_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    #[inline(always)]
    fn read_byte(&mut self) -> thrift::Result<u8> {
        let [b] = self.array()?;
        Ok(b)
    }

    /// Skips a value without decoding it. The provided method reads a skipped string or binary
    /// as a UTF-8 string, so an unknown binary field holding arbitrary bytes failed the call;
    /// the wire type is the same for both, and Java and C++ skip its bytes unread, as here.
    fn skip_till_depth(&mut self, field_type: TType, depth: i8) -> thrift::Result<()> {
        if depth == 0 {
            return Err(thrift::Error::Protocol(ProtocolError::new(
                ProtocolErrorKind::DepthLimit,
                format!("cannot skip a {field_type:?} nested this deep"),
            )));
        }
        match field_type {
            TType::String | TType::Utf7 | TType::Utf8 | TType::Utf16 => {
                let n = self.length()?;
                self.take(n).map(|_| ())
            }
            TType::Struct => loop {
                let field = self.read_field_begin()?;
                if field.field_type == TType::Stop {
                    return Ok(());
                }
                self.skip_till_depth(field.field_type, depth - 1)?;
            },
            TType::List | TType::Set => {
                let element_type = self.field_type()?;
                for _ in 0..self.count(smallest(element_type))? {
                    self.skip_till_depth(element_type, depth - 1)?;
                }
                Ok(())
            }
            TType::Map => {
                let map = self.read_map_begin()?;
                let (Some(k), Some(v)) = (map.key_type, map.value_type) else { return Ok(()) };
                for _ in 0..map.size {
                    self.skip_till_depth(k, depth - 1)?;
                    self.skip_till_depth(v, depth - 1)?;
                }
                Ok(())
            }
            TType::Bool | TType::I08 => self.take(1).map(|_| ()),
            TType::I16 => self.take(2).map(|_| ()),
            TType::I32 => self.take(4).map(|_| ()),
            TType::I64 | TType::Double => self.take(8).map(|_| ()),
            TType::Stop | TType::Void => Err(thrift::Error::Protocol(ProtocolError::new(
                ProtocolErrorKind::InvalidData,
                format!("cannot skip a value of type {field_type:?}"),
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate as t;
    use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol, TOutputProtocol};

    /// A batch_mutate call as clients send it, encoded by the generated writer.
    fn batch_mutate_message() -> Vec<u8> {
        let column = t::Column {
            name: b"c1".to_vec(),
            value: Some(vec![7; 100]),
            timestamp: Some(1_700_000_000_000_000),
            ttl: Some(60),
        };
        let mutation = t::Mutation {
            column_or_supercolumn: Some(t::ColumnOrSuperColumn { column: Some(column), ..Default::default() }),
            deletion: None,
        };
        let mut by_cf = std::collections::BTreeMap::new();
        by_cf.insert("Standard1".to_string(), vec![mutation.clone(), mutation]);
        let mut map = std::collections::BTreeMap::new();
        map.insert(b"row-1".to_vec(), by_cf);
        let args = t::CassandraBatchMutateArgs { mutation_map: map, consistency_level: t::ConsistencyLevel::QUORUM };
        let mut out = Vec::new();
        let mut o = TBinaryOutputProtocol::new(&mut out, true);
        o.write_message_begin(&TMessageIdentifier::new("batch_mutate", TMessageType::Call, 42)).expect("encode");
        args.write_to_out_protocol(&mut o).expect("encode");
        o.write_message_end().expect("encode");
        out
    }

    #[test]
    fn reads_what_the_generated_writer_wrote_as_the_stock_reader_does() {
        let m = batch_mutate_message();
        let mut ours = MessageInput::new(&m);
        let mut stock = TBinaryInputProtocol::new(&m[..], true);
        assert_eq!(ours.read_message_begin().expect("ours"), stock.read_message_begin().expect("stock"));
        let a = t::CassandraBatchMutateArgs::read_from_in_protocol(&mut ours).expect("ours");
        let b = t::CassandraBatchMutateArgs::read_from_in_protocol(&mut stock).expect("stock");
        assert_eq!(a, b);
        assert_eq!(a.mutation_map[&b"row-1".to_vec()]["Standard1"].len(), 2);
        assert_eq!(ours.remaining(), 0, "every byte consumed");
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let m = batch_mutate_message();
        for cut in 0..m.len() {
            let mut input = MessageInput::new(&m[..cut]);
            let read =
                input.read_message_begin().and_then(|_| t::CassandraBatchMutateArgs::read_from_in_protocol(&mut input));
            assert!(read.is_err(), "a message cut at {cut} of {} bytes decoded", m.len());
        }
    }

    #[test]
    fn counts_and_lengths_the_message_cannot_hold_are_refused() {
        // list<binary> of i32::MAX elements with three bytes behind it
        let mut input = MessageInput::new(&[11, 0x7f, 0xff, 0xff, 0xff, 1, 2, 3]);
        match input.read_list_begin() {
            Err(thrift::Error::Transport(e)) => assert!(e.message.contains("cannot fit"), "{}", e.message),
            other => panic!("{other:?}"),
        }
        // map<i64, i64> of 1 element needs 16 bytes
        let mut map = vec![10, 10, 0, 0, 0, 1];
        map.extend_from_slice(&[0; 15]);
        assert!(MessageInput::new(&map).read_map_begin().is_err());
        map.push(0);
        assert_eq!(MessageInput::new(&map).read_map_begin().expect("fits").size, 1);
        // negative sizes
        let mut input = MessageInput::new(&[15, 0xff, 0xff, 0xff, 0xff]);
        assert!(input.read_list_begin().is_err());
        let mut input = MessageInput::new(&[0xff, 0xff, 0xff, 0xf9, 1, 2]);
        assert!(input.read_bytes().is_err());
        // a string longer than what is left
        let mut input = MessageInput::new(&[0, 0, 0, 9, b'a']);
        assert!(input.read_string().is_err());
        // not UTF-8
        let mut input = MessageInput::new(&[0, 0, 0, 2, 0xc3, 0x28]);
        assert!(input.read_string().is_err());
        // unknown field type
        let mut input = MessageInput::new(&[99, 0, 1]);
        assert!(input.read_field_begin().is_err());
        // a bad version
        let mut input = MessageInput::new(&[0x80, 0x02, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert!(input.read_message_begin().is_err());
    }

    #[test]
    fn unknown_fields_are_skipped_whatever_their_bytes() {
        // get_slice's arguments with an unknown binary field (id 99) of bytes that are not UTF-8,
        // a nested unknown struct, list and map, then the real key field.
        let mut args: Vec<u8> = vec![11, 0, 99, 0, 0, 0, 3, 0xff, 0xfe, 0x00];
        args.extend_from_slice(&[12, 0, 98, 11, 0, 1, 0, 0, 0, 1, 0xc3, 0]);
        args.extend_from_slice(&[15, 0, 97, 11, 0, 0, 0, 2, 0, 0, 0, 1, 0x80, 0, 0, 0, 0]);
        args.extend_from_slice(&[13, 0, 96, 11, 8, 0, 0, 0, 1, 0, 0, 0, 1, 0xff, 0, 0, 0, 5]);
        args.extend_from_slice(&[11, 0, 1, 0, 0, 0, 2, b'k', b'1', 0]);
        let mut input = MessageInput::new(&args);
        let read = t::CassandraGetSliceArgs::read_from_in_protocol(&mut input);
        // The key was read past the skipped fields; the missing required fields are what fails.
        match read {
            Err(thrift::Error::Protocol(e)) => assert!(e.message.contains("column_parent"), "{}", e.message),
            other => panic!("{other:?}"),
        }
        assert_eq!(input.remaining(), 0, "every byte consumed");
        // Skipping refuses what cannot fit, as reading does.
        let mut input = MessageInput::new(&[15, 0, 9, 11, 0x7f, 0, 0, 0, 0]);
        assert!(input.read_field_begin().and_then(|f| input.skip(f.field_type)).is_err());
    }

    proptest::proptest! {
        /// Arbitrary bytes behind a valid header: decoding any method's arguments never panics.
        #[test]
        fn decoding_arbitrary_arguments_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..400)) {
            let mut m = batch_mutate_message();
            m.truncate(4 + 4 + "batch_mutate".len() + 4);
            m.extend_from_slice(&bytes);
            let mut input = MessageInput::new(&m);
            input.read_message_begin().expect("a valid header");
            let _ = t::CassandraBatchMutateArgs::read_from_in_protocol(&mut input);
            let mut input = MessageInput::new(&bytes);
            let _ = t::CassandraGetRangeSlicesArgs::read_from_in_protocol(&mut input);
            let mut input = MessageInput::new(&bytes);
            let _ = t::CassandraSystemAddKeyspaceArgs::read_from_in_protocol(&mut input);
        }
    }
}
