//! The strict binary protocol written straight into a byte vector: the server's replies.
//!
//! The counterpart of [`crate::MessageInput`]. `TBinaryOutputProtocol` writes through a
//! transport trait and checks each field identifier at run time; here every write is an append
//! to the vector, and being a concrete type with inlined methods, it lets the generated writers
//! inline it. The bytes are the same as `TBinaryOutputProtocol`'s in strict mode (a test below
//! compares them).

use thrift::protocol::{
    TFieldIdentifier, TListIdentifier, TMapIdentifier, TMessageIdentifier, TOutputProtocol, TSetIdentifier,
    TStructIdentifier, TType,
};
use thrift::{ProtocolError, ProtocolErrorKind};

/// The strict binary protocol's version word, or-ed with the message type.
const VERSION_1: u32 = 0x8001_0000;

/// A writer appending one or more messages to `out`.
pub struct MessageOutput<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> MessageOutput<'a> {
    #[inline(always)]
    pub fn new(out: &'a mut Vec<u8>) -> MessageOutput<'a> {
        MessageOutput { out }
    }

    /// The bytes written so far, for a body encoded without the protocol's calls (the server
    /// writes its point reads' replies straight from its cells).
    #[inline(always)]
    pub fn buffer(&mut self) -> &mut Vec<u8> {
        self.out
    }
}

#[inline(always)]
fn wire_type(t: TType) -> u8 {
    match t {
        TType::Stop => 0,
        TType::Void => 1,
        TType::Bool => 2,
        TType::I08 => 3,
        TType::Double => 4,
        TType::I16 => 6,
        TType::I32 => 8,
        TType::I64 => 10,
        TType::String | TType::Utf7 => 11,
        TType::Struct => 12,
        TType::Map => 13,
        TType::Set => 14,
        TType::List => 15,
        TType::Utf8 => 16,
        TType::Utf16 => 17,
    }
}

#[cold]
fn missing(what: &str) -> thrift::Error {
    thrift::Error::Protocol(ProtocolError::new(ProtocolErrorKind::Unknown, format!("cannot write a {what}")))
}

impl TOutputProtocol for MessageOutput<'_> {
    #[inline(always)]
    fn write_message_begin(&mut self, identifier: &TMessageIdentifier) -> thrift::Result<()> {
        let kind: u8 = identifier.message_type.into();
        self.out.extend_from_slice(&(VERSION_1 | u32::from(kind)).to_be_bytes());
        self.write_string(&identifier.name)?;
        self.write_i32(identifier.sequence_number)
    }

    #[inline(always)]
    fn write_message_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    #[inline(always)]
    fn write_struct_begin(&mut self, _: &TStructIdentifier) -> thrift::Result<()> {
        Ok(())
    }

    #[inline(always)]
    fn write_struct_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    #[inline(always)]
    fn write_field_begin(&mut self, identifier: &TFieldIdentifier) -> thrift::Result<()> {
        match identifier.id {
            Some(id) => {
                let [a, b] = id.to_be_bytes();
                self.out.extend_from_slice(&[wire_type(identifier.field_type), a, b]);
                Ok(())
            }
            None if identifier.field_type == TType::Stop => self.write_field_stop(),
            None => Err(missing("field without an id")),
        }
    }

    #[inline(always)]
    fn write_field_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    #[inline(always)]
    fn write_field_stop(&mut self) -> thrift::Result<()> {
        self.out.push(0);
        Ok(())
    }

    #[inline(always)]
    fn write_bool(&mut self, b: bool) -> thrift::Result<()> {
        self.out.push(u8::from(b));
        Ok(())
    }

    #[inline(always)]
    fn write_bytes(&mut self, b: &[u8]) -> thrift::Result<()> {
        self.write_i32(b.len() as i32)?;
        self.out.extend_from_slice(b);
        Ok(())
    }

    #[inline(always)]
    fn write_i8(&mut self, i: i8) -> thrift::Result<()> {
        self.out.extend_from_slice(&i.to_be_bytes());
        Ok(())
    }

    #[inline(always)]
    fn write_i16(&mut self, i: i16) -> thrift::Result<()> {
        self.out.extend_from_slice(&i.to_be_bytes());
        Ok(())
    }

    #[inline(always)]
    fn write_i32(&mut self, i: i32) -> thrift::Result<()> {
        self.out.extend_from_slice(&i.to_be_bytes());
        Ok(())
    }

    #[inline(always)]
    fn write_i64(&mut self, i: i64) -> thrift::Result<()> {
        self.out.extend_from_slice(&i.to_be_bytes());
        Ok(())
    }

    #[inline(always)]
    fn write_double(&mut self, d: f64) -> thrift::Result<()> {
        self.out.extend_from_slice(&d.to_be_bytes());
        Ok(())
    }

    #[inline(always)]
    fn write_string(&mut self, s: &str) -> thrift::Result<()> {
        self.write_bytes(s.as_bytes())
    }

    #[inline(always)]
    fn write_list_begin(&mut self, identifier: &TListIdentifier) -> thrift::Result<()> {
        self.out.push(wire_type(identifier.element_type));
        self.write_i32(identifier.size)
    }

    #[inline(always)]
    fn write_list_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    #[inline(always)]
    fn write_set_begin(&mut self, identifier: &TSetIdentifier) -> thrift::Result<()> {
        self.out.push(wire_type(identifier.element_type));
        self.write_i32(identifier.size)
    }

    #[inline(always)]
    fn write_set_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    #[inline(always)]
    fn write_map_begin(&mut self, identifier: &TMapIdentifier) -> thrift::Result<()> {
        let (Some(k), Some(v)) = (identifier.key_type, identifier.value_type) else {
            return Err(missing("map without its key and value types"));
        };
        self.out.extend_from_slice(&[wire_type(k), wire_type(v)]);
        self.write_i32(identifier.size)
    }

    #[inline(always)]
    fn write_map_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    #[inline(always)]
    fn flush(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    #[inline(always)]
    fn write_byte(&mut self, b: u8) -> thrift::Result<()> {
        self.out.push(b);
        Ok(())
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use thrift::protocol::{TBinaryOutputProtocol, TMessageType};

    use super::*;
    use crate::cassandra as t;

    /// Writes one reply message with `write`, through both protocols.
    fn both(write: impl Fn(&mut dyn TOutputProtocol) -> thrift::Result<()>) -> (Vec<u8>, Vec<u8>) {
        let header = TMessageIdentifier::new("get_slice", TMessageType::Reply, 7);
        let mut ours = Vec::new();
        let mut o = MessageOutput::new(&mut ours);
        o.write_message_begin(&header).unwrap();
        write(&mut o).unwrap();
        o.write_message_end().unwrap();
        let mut theirs = Vec::new();
        let mut o = TBinaryOutputProtocol::new(&mut theirs, true);
        o.write_message_begin(&header).unwrap();
        write(&mut o).unwrap();
        o.write_message_end().unwrap();
        (ours, theirs)
    }

    #[test]
    fn writes_the_bytes_the_thrift_crate_writes() {
        let column =
            t::Column { name: b"name".to_vec(), value: Some(vec![0, 1, 2, 255]), timestamp: Some(-5), ttl: Some(3600) };
        let reply = t::CassandraGetSliceResult {
            result_value: Some(vec![
                t::ColumnOrSuperColumn { column: Some(column.clone()), ..Default::default() },
                t::ColumnOrSuperColumn {
                    super_column: Some(t::SuperColumn { name: b"sc".to_vec(), columns: vec![column] }),
                    ..Default::default()
                },
            ]),
            ..Default::default()
        };
        let (ours, theirs) = both(|o| reply.write_to_out_protocol(o));
        assert_eq!(ours, theirs);

        // Maps, sets, strings, doubles, booleans and an exception field.
        let ks = t::KsDef {
            name: "Keyspace1".into(),
            strategy_class: "SimpleStrategy".into(),
            strategy_options: Some(BTreeMap::from([("replication_factor".to_string(), "1".to_string())])),
            replication_factor: None,
            cf_defs: Vec::new(),
            durable_writes: Some(false),
        };
        let (ours, theirs) = both(|o| ks.write_to_out_protocol(o));
        assert_eq!(ours, theirs);
        let ire = t::CassandraGetSliceResult {
            ire: Some(t::InvalidRequestException { why: "no such column family".into() }),
            ..Default::default()
        };
        let (ours, theirs) = both(|o| ire.write_to_out_protocol(o));
        assert_eq!(ours, theirs);
        let (ours, theirs) = both(|o| {
            o.write_set_begin(&TSetIdentifier::new(TType::String, 2))?;
            for s in BTreeSet::from(["a", "b"]) {
                o.write_string(s)?;
            }
            o.write_set_end()?;
            o.write_map_begin(&TMapIdentifier::new(TType::String, TType::List, 0))?;
            o.write_map_end()?;
            o.write_bool(true)?;
            o.write_bool(false)?;
            o.write_i8(-1)?;
            o.write_i16(-2)?;
            o.write_field_begin(&TFieldIdentifier { name: None, field_type: TType::Stop, id: None })?;
            o.write_double(f64::MIN_POSITIVE)
        });
        assert_eq!(ours, theirs);
    }

    #[test]
    fn a_map_without_types_is_an_error_not_a_panic() {
        let mut out = Vec::new();
        let e = MessageOutput::new(&mut out).write_map_begin(&TMapIdentifier::new(None, None, 0));
        assert!(e.is_err());
    }
}
