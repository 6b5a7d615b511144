//! The measured requests without the generated blocking client: calls encoded by hand (the
//! generated argument structs are private) into one reusable buffer, replies decoded from
//! bytes, and an asynchronous connection that sends each call with one write.
//!
//! Why: 64 blocking clients on 64 OS threads spent about 24 µs of CPU per request, mostly in
//! thread wake-ups, on the same two cores as the server being measured. A few tokio tasks on one
//! thread send the same bytes (see the byte-for-byte tests against the generated client) with
//! one request in flight per connection, as before, for about half of that.
//!
//! The wire format written here is the one `CassandraSyncClient` writes: strict binary protocol
//! (`TBinaryOutputProtocol::new(_, true)`), message header (name, `Call`, sequence number), the
//! argument struct's fields in id order, a stop byte; framed transport puts the body's length in
//! 4 big-endian bytes in front.

use std::time::Duration;

use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TFieldIdentifier, TInputProtocol, TListIdentifier, TMapIdentifier,
    TMessageIdentifier, TMessageType, TOutputProtocol, TSerializable, TType,
};
use thrift::{
    ApplicationError, ApplicationErrorKind, ProtocolError, ProtocolErrorKind, TransportError, TransportErrorKind,
};
use thrift_idl as t;
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::TcpStream;

/// Largest reply frame accepted (the server's own default frame limit is 16 MiB).
const MAX_FRAME: usize = 64 * 1024 * 1024;

/// A call being written into a reusable buffer: the frame-length placeholder (framed only) and
/// the message header are written by [`Call::begin`], the argument fields by the caller through
/// [`Call::prot`], the stop byte and the frame length by [`Call::finish`].
pub struct Call<'a> {
    prot: TBinaryOutputProtocol<&'a mut Vec<u8>>,
    framed: bool,
}

impl<'a> Call<'a> {
    pub fn begin(buf: &'a mut Vec<u8>, framed: bool, name: &str, seq: i32) -> thrift::Result<Call<'a>> {
        buf.clear();
        if framed {
            buf.extend_from_slice(&[0; 4]);
        }
        let mut prot = TBinaryOutputProtocol::new(buf, true);
        prot.write_message_begin(&TMessageIdentifier::new(name, TMessageType::Call, seq))?;
        Ok(Call { prot, framed })
    }

    pub fn prot(&mut self) -> &mut TBinaryOutputProtocol<&'a mut Vec<u8>> {
        &mut self.prot
    }

    /// Writes a struct-valued argument field.
    pub fn struct_field<S: TSerializable>(&mut self, id: i16, value: &S) -> thrift::Result<()> {
        self.prot.write_field_begin(&TFieldIdentifier::new("", TType::Struct, id))?;
        value.write_to_out_protocol(&mut self.prot)?;
        self.prot.write_field_end()
    }

    pub fn bytes_field(&mut self, id: i16, value: &[u8]) -> thrift::Result<()> {
        self.prot.write_field_begin(&TFieldIdentifier::new("", TType::String, id))?;
        self.prot.write_bytes(value)?;
        self.prot.write_field_end()
    }

    pub fn i32_field(&mut self, id: i16, value: i32) -> thrift::Result<()> {
        self.prot.write_field_begin(&TFieldIdentifier::new("", TType::I32, id))?;
        self.prot.write_i32(value)?;
        self.prot.write_field_end()
    }

    /// Ends the argument struct and the message and fills in the frame length.
    pub fn finish(mut self) -> thrift::Result<()> {
        self.prot.write_field_stop()?;
        self.prot.write_struct_end()?;
        self.prot.write_message_end()?;
        let framed = self.framed;
        let buf: &mut Vec<u8> = self.prot.transport;
        if framed {
            let len = i32::try_from(buf.len() - 4).map_err(|_| {
                thrift::Error::Protocol(ProtocolError::new(ProtocolErrorKind::SizeLimit, "call too large"))
            })?;
            buf[..4].copy_from_slice(&len.to_be_bytes());
        }
        Ok(())
    }
}

/// `batch_mutate` of one row of one column family: `{key: {cf: mutations}}`.
pub fn encode_batch_mutate(
    buf: &mut Vec<u8>,
    framed: bool,
    seq: i32,
    key: &[u8],
    cf: &str,
    mutations: &[t::Mutation],
    cl: t::ConsistencyLevel,
) -> thrift::Result<()> {
    let mut c = Call::begin(buf, framed, "batch_mutate", seq)?;
    let p = c.prot();
    p.write_field_begin(&TFieldIdentifier::new("", TType::Map, 1))?;
    p.write_map_begin(&TMapIdentifier::new(TType::String, TType::Map, 1))?;
    p.write_bytes(key)?;
    p.write_map_begin(&TMapIdentifier::new(TType::String, TType::List, 1))?;
    p.write_string(cf)?;
    p.write_list_begin(&TListIdentifier::new(TType::Struct, mutations.len() as i32))?;
    for m in mutations {
        m.write_to_out_protocol(p)?;
    }
    p.write_list_end()?;
    p.write_map_end()?;
    p.write_map_end()?;
    p.write_field_end()?;
    c.i32_field(2, cl.0)?;
    c.finish()
}

pub fn encode_get_slice(
    buf: &mut Vec<u8>,
    framed: bool,
    seq: i32,
    key: &[u8],
    parent: &t::ColumnParent,
    predicate: &t::SlicePredicate,
    cl: t::ConsistencyLevel,
) -> thrift::Result<()> {
    let mut c = Call::begin(buf, framed, "get_slice", seq)?;
    c.bytes_field(1, key)?;
    c.struct_field(2, parent)?;
    c.struct_field(3, predicate)?;
    c.i32_field(4, cl.0)?;
    c.finish()
}

pub fn encode_get_range_slices(
    buf: &mut Vec<u8>,
    framed: bool,
    seq: i32,
    parent: &t::ColumnParent,
    predicate: &t::SlicePredicate,
    range: &t::KeyRange,
    cl: t::ConsistencyLevel,
) -> thrift::Result<()> {
    let mut c = Call::begin(buf, framed, "get_range_slices", seq)?;
    c.struct_field(1, parent)?;
    c.struct_field(2, predicate)?;
    c.struct_field(3, range)?;
    c.i32_field(4, cl.0)?;
    c.finish()
}

pub fn encode_set_keyspace(buf: &mut Vec<u8>, framed: bool, seq: i32, keyspace: &str) -> thrift::Result<()> {
    let mut c = Call::begin(buf, framed, "set_keyspace", seq)?;
    c.bytes_field(1, keyspace.as_bytes())?;
    c.finish()
}

/// What a successful reply carried that the stress run looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// A `void` method answered.
    Done,
    /// A list-valued method answered with this many elements.
    List(i32),
}

fn protocol_error(message: String) -> thrift::Error {
    thrift::Error::Protocol(ProtocolError::new(ProtocolErrorKind::InvalidData, message))
}

/// Decodes one reply to `method` (call number `seq`) from the front of `bytes`; returns the
/// reply (or the error it carries, as the generated client would return it) and how many bytes
/// it took. The outer `Err` is for bytes that are not a whole, well-formed reply (a transport
/// `EndOfFile` error when `bytes` ends too early).
pub fn decode_reply(
    bytes: &[u8],
    method: &str,
    seq: i32,
    returns_list: bool,
) -> thrift::Result<(Result<Reply, thrift::Error>, usize)> {
    let mut rest = bytes;
    let result = {
        let mut p = TBinaryInputProtocol::new(&mut rest, true);
        let header = p.read_message_begin()?;
        if header.sequence_number != seq {
            return Err(protocol_error(format!(
                "reply to call {} when call {seq} was expected",
                header.sequence_number
            )));
        }
        if header.name != method {
            return Err(protocol_error(format!("reply to {} when {method} was expected", header.name)));
        }
        match header.message_type {
            TMessageType::Exception => {
                let e = thrift::Error::read_application_error_from_in_protocol(&mut p)?;
                p.read_message_end()?;
                Err(thrift::Error::Application(e))
            }
            TMessageType::Reply => {
                let r = read_result(&mut p, returns_list)?;
                p.read_message_end()?;
                r
            }
            other => return Err(protocol_error(format!("expected a reply, got a {other:?} message"))),
        }
    };
    Ok((result, bytes.len() - rest.len()))
}

/// Reads a `<method>_result` struct: field 0 the success value, 1–3 the declared exceptions
/// shared by every method the stress run calls (`ire`, `ue`, `te`).
fn read_result(p: &mut dyn TInputProtocol, returns_list: bool) -> thrift::Result<Result<Reply, thrift::Error>> {
    p.read_struct_begin()?;
    let mut out: Option<Result<Reply, thrift::Error>> = None;
    loop {
        let f = p.read_field_begin()?;
        if f.field_type == TType::Stop {
            break;
        }
        let user = |e: Box<dyn std::error::Error + Send + Sync>| Some(Err(thrift::Error::User(e)));
        match (f.id, f.field_type) {
            (Some(0), TType::List) if returns_list => {
                let list = p.read_list_begin()?;
                for _ in 0..list.size {
                    skip(p, list.element_type, MAX_SKIP_DEPTH)?;
                }
                p.read_list_end()?;
                out = Some(Ok(Reply::List(list.size)));
            }
            (Some(1), TType::Struct) => out = user(Box::new(t::InvalidRequestException::read_from_in_protocol(p)?)),
            (Some(2), TType::Struct) => out = user(Box::new(t::UnavailableException::read_from_in_protocol(p)?)),
            (Some(3), TType::Struct) => out = user(Box::new(t::TimedOutException::read_from_in_protocol(p)?)),
            _ => skip(p, f.field_type, MAX_SKIP_DEPTH)?,
        }
        p.read_field_end()?;
    }
    p.read_struct_end()?;
    Ok(match out {
        Some(r) => r,
        None if !returns_list => Ok(Reply::Done),
        None => Err(thrift::Error::Application(ApplicationError::new(
            ApplicationErrorKind::MissingResult,
            "reply carried neither a result nor an exception",
        ))),
    })
}

/// Nesting accepted when skipping a value.
const MAX_SKIP_DEPTH: u32 = 64;

/// Skips one value of type `ty`. Unlike `TInputProtocol::skip`, which reads strings as UTF-8
/// and fails on binary column names and values, strings are skipped as bytes.
fn skip(p: &mut dyn TInputProtocol, ty: TType, depth: u32) -> thrift::Result<()> {
    let depth = depth.checked_sub(1).ok_or_else(|| protocol_error("reply nested too deeply".into()))?;
    match ty {
        TType::Bool => p.read_bool().map(drop),
        TType::I08 => p.read_i8().map(drop),
        TType::I16 => p.read_i16().map(drop),
        TType::I32 => p.read_i32().map(drop),
        TType::I64 => p.read_i64().map(drop),
        TType::Double => p.read_double().map(drop),
        TType::String => p.read_bytes().map(drop),
        TType::Struct => {
            p.read_struct_begin()?;
            loop {
                let f = p.read_field_begin()?;
                if f.field_type == TType::Stop {
                    break;
                }
                skip(p, f.field_type, depth)?;
                p.read_field_end()?;
            }
            p.read_struct_end()
        }
        TType::List => {
            let l = p.read_list_begin()?;
            for _ in 0..l.size {
                skip(p, l.element_type, depth)?;
            }
            p.read_list_end()
        }
        TType::Set => {
            let l = p.read_set_begin()?;
            for _ in 0..l.size {
                skip(p, l.element_type, depth)?;
            }
            p.read_set_end()
        }
        TType::Map => {
            let m = p.read_map_begin()?;
            if m.size > 0 {
                let (Some(k), Some(v)) = (m.key_type, m.value_type) else {
                    return Err(protocol_error("map without element types".into()));
                };
                for _ in 0..m.size {
                    skip(p, k, depth)?;
                    skip(p, v, depth)?;
                }
            }
            p.read_map_end()
        }
        other => Err(protocol_error(format!("cannot skip a value of type {other:?}"))),
    }
}

fn transport_error(kind: TransportErrorKind, message: impl Into<String>) -> thrift::Error {
    thrift::Error::Transport(TransportError::new(kind, message))
}

fn is_end_of_input(e: &thrift::Error) -> bool {
    matches!(e, thrift::Error::Transport(TransportError { kind: TransportErrorKind::EndOfFile, .. }))
}

/// One asynchronous Thrift connection with one call in flight at a time.
pub struct AsyncConn {
    stream: TcpStream,
    framed: bool,
    timeout: Duration,
    seq: i32,
    /// The call being sent (reused).
    out: Vec<u8>,
    /// Reply bytes received and not yet decoded.
    inbuf: Vec<u8>,
}

impl AsyncConn {
    /// Connects (with `timeout`) and sets `TCP_NODELAY`: one small request per round trip.
    pub async fn connect(host: &str, port: u16, framed: bool, timeout: Duration) -> std::io::Result<AsyncConn> {
        let stream = tokio::time::timeout(timeout, TcpStream::connect((host, port)))
            .await
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out"))??;
        stream.set_nodelay(true)?;
        Ok(AsyncConn {
            stream,
            framed,
            timeout,
            seq: 0,
            out: Vec::with_capacity(4096),
            inbuf: Vec::with_capacity(64 * 1024),
        })
    }

    pub fn framed(&self) -> bool {
        self.framed
    }

    /// The buffer and sequence number for the next call; encode into it with the `encode_*`
    /// functions, then [`AsyncConn::exchange`].
    pub fn next_call(&mut self) -> (&mut Vec<u8>, i32) {
        self.seq = self.seq.wrapping_add(1);
        (&mut self.out, self.seq)
    }

    /// Sends the encoded call and waits for its reply, all within the timeout. An outer
    /// transport or protocol error means the connection is out of step and must be dropped.
    pub async fn exchange(&mut self, method: &str, returns_list: bool) -> Result<Reply, thrift::Error> {
        let timeout = self.timeout;
        let r = match tokio::time::timeout(timeout, self.exchange_inner(method, returns_list)).await {
            Ok(r) => r,
            Err(_) => Err(transport_error(
                TransportErrorKind::TimedOut,
                format!("no reply within {} s", timeout.as_secs_f64()),
            )),
        };
        // The whole reply has been read and nothing more can arrive before the next call, but
        // tokio still believes the socket readable and would start the next read with a recv
        // that fails with EAGAIN; clearing the readiness here saves that syscall per request.
        let _ = self
            .stream
            .try_io(Interest::READABLE, || Err::<(), _>(std::io::Error::from(std::io::ErrorKind::WouldBlock)));
        r
    }

    async fn exchange_inner(&mut self, method: &str, returns_list: bool) -> Result<Reply, thrift::Error> {
        self.stream.write_all(&self.out).await?;
        let seq = self.seq;
        // One call in flight: whatever arrives belongs to this reply, which usually comes in
        // one read.
        self.inbuf.clear();
        loop {
            if self.framed {
                if let Some(head) = self.inbuf.get(..4) {
                    let mut len = [0u8; 4];
                    len.copy_from_slice(head);
                    let len = i32::from_be_bytes(len);
                    let len = usize::try_from(len)
                        .ok()
                        .filter(|&l| l <= MAX_FRAME)
                        .ok_or_else(|| protocol_error(format!("reply frame length {len} out of range")))?;
                    if let Some(body) = self.inbuf.get(4..4 + len) {
                        if self.inbuf.len() != 4 + len {
                            return Err(protocol_error("bytes after the reply frame".into()));
                        }
                        let (reply, used) = decode_reply(body, method, seq, returns_list)?;
                        if used != len {
                            return Err(protocol_error(format!(
                                "reply frame of {len} bytes holds a {used}-byte message"
                            )));
                        }
                        return reply;
                    }
                    self.inbuf.reserve(4 + len - self.inbuf.len());
                }
            } else if !self.inbuf.is_empty() {
                // Unframed: the reply is complete when the bytes received decode as one.
                match decode_reply(&self.inbuf, method, seq, returns_list) {
                    Ok((reply, used)) => {
                        if used != self.inbuf.len() {
                            return Err(protocol_error("bytes after the reply".into()));
                        }
                        return reply;
                    }
                    Err(e) if is_end_of_input(&e) => {}
                    Err(e) => return Err(e),
                }
                if self.inbuf.len() > MAX_FRAME {
                    return Err(protocol_error("reply too large".into()));
                }
            }
            if self.inbuf.capacity() == self.inbuf.len() {
                self.inbuf.reserve(self.inbuf.len().max(4096));
            }
            let n = self.stream.read_buf(&mut self.inbuf).await?;
            if n == 0 {
                return Err(transport_error(TransportErrorKind::EndOfFile, "server closed the connection"));
            }
        }
    }

    /// `set_keyspace`, as every connection does before the load starts.
    pub async fn set_keyspace(&mut self, keyspace: &str) -> Result<(), thrift::Error> {
        let framed = self.framed;
        let (buf, seq) = self.next_call();
        encode_set_keyspace(buf, framed, seq, keyspace)?;
        self.exchange("set_keyspace", false).await.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    use std::io::Write;
    use std::rc::Rc;

    use thrift::protocol::TBinaryOutputProtocol;
    use thrift::transport::TFramedWriteTransport;
    use thrift_idl::TCassandraSyncClient;

    use super::*;
    use crate::client::{counter_mutations, row_mutations};

    /// A writer whose bytes the test can still see after handing it to a client.
    #[derive(Clone, Default)]
    struct Shared(Rc<RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// What the generated blocking client writes for its first call (sequence number 1); the
    /// call itself fails reading the (empty) reply, after the request was flushed.
    fn generated(framed: bool, call: impl FnOnce(&mut dyn TCassandraSyncClient)) -> Vec<u8> {
        let out = Shared::default();
        let w: Box<dyn Write> =
            if framed { Box::new(TFramedWriteTransport::new(out.clone())) } else { Box::new(out.clone()) };
        let mut c = t::CassandraSyncClient::new(
            TBinaryInputProtocol::new(std::io::empty(), true),
            TBinaryOutputProtocol::new(w, true),
        );
        call(&mut c);
        let bytes = out.0.borrow().clone();
        assert!(!bytes.is_empty());
        bytes
    }

    fn parent() -> t::ColumnParent {
        t::ColumnParent { column_family: "Standard1".into(), super_column: None }
    }

    fn predicate() -> t::SlicePredicate {
        t::SlicePredicate {
            column_names: None,
            slice_range: Some(t::SliceRange { start: vec![], finish: vec![0xff], reversed: false, count: 3 }),
        }
    }

    #[test]
    fn batch_mutate_is_byte_identical_to_the_generated_client() {
        let key = b"0000000042".to_vec();
        let values = vec![vec![0u8, 0xff, 0x80, 7], vec![1u8; 100]];
        let rows = row_mutations(values, 1_234_567_890_123);
        for framed in [true, false] {
            for (cf, muts) in [("Standard1", rows.clone()), ("Counter1", counter_mutations(3))] {
                let mut map = BTreeMap::new();
                map.insert(key.clone(), BTreeMap::from([(cf.to_string(), muts.clone())]));
                let want = generated(framed, |c| {
                    assert!(c.batch_mutate(map, t::ConsistencyLevel::QUORUM).is_err());
                });
                let mut got = Vec::new();
                encode_batch_mutate(&mut got, framed, 1, &key, cf, &muts, t::ConsistencyLevel::QUORUM).unwrap();
                assert_eq!(got, want, "framed={framed} cf={cf}");
            }
        }
    }

    #[test]
    fn reads_and_set_keyspace_are_byte_identical_to_the_generated_client() {
        let key = vec![0u8, 1, 2, 0xfe];
        let range = t::KeyRange {
            start_key: Some(key.clone()),
            end_key: None,
            start_token: None,
            end_token: None,
            count: 10,
            row_filter: None,
        };
        for framed in [true, false] {
            let want = generated(framed, |c| {
                assert!(c.get_slice(key.clone(), parent(), predicate(), t::ConsistencyLevel::ONE).is_err());
            });
            let mut got = vec![9u8; 3]; // leftovers of an earlier call must go
            encode_get_slice(&mut got, framed, 1, &key, &parent(), &predicate(), t::ConsistencyLevel::ONE).unwrap();
            assert_eq!(got, want, "get_slice framed={framed}");

            let want = generated(framed, |c| {
                assert!(c.get_range_slices(parent(), predicate(), range.clone(), t::ConsistencyLevel::ALL).is_err());
            });
            encode_get_range_slices(&mut got, framed, 1, &parent(), &predicate(), &range, t::ConsistencyLevel::ALL)
                .unwrap();
            assert_eq!(got, want, "get_range_slices framed={framed}");

            let want = generated(framed, |c| assert!(c.set_keyspace("Stress".into()).is_err()));
            encode_set_keyspace(&mut got, framed, 1, "Stress").unwrap();
            assert_eq!(got, want, "set_keyspace framed={framed}");
        }
    }

    /// A reply message as a server writes it: header, then `body` writes the result struct.
    fn reply(name: &str, ty: TMessageType, seq: i32, body: impl FnOnce(&mut dyn TOutputProtocol)) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut p = TBinaryOutputProtocol::new(&mut buf, true);
        p.write_message_begin(&TMessageIdentifier::new(name, ty, seq)).unwrap();
        body(&mut p);
        p.write_message_end().unwrap();
        buf
    }

    fn result_struct(p: &mut dyn TOutputProtocol, field: impl FnOnce(&mut dyn TOutputProtocol)) {
        p.write_struct_begin(&thrift::protocol::TStructIdentifier::new("r")).unwrap();
        field(p);
        p.write_field_stop().unwrap();
        p.write_struct_end().unwrap();
    }

    #[test]
    fn replies_decode_to_counts_and_declared_exceptions() {
        // A slice with binary (non UTF-8) names and values: skipped as bytes.
        let cols = vec![
            t::ColumnOrSuperColumn {
                column: Some(t::Column {
                    name: vec![0xff, 0xfe],
                    value: Some(vec![0x80; 100]),
                    timestamp: Some(1),
                    ttl: None
                }),
                super_column: None,
                counter_column: None,
                counter_super_column: None,
            };
            2
        ];
        let ok = reply("get_slice", TMessageType::Reply, 7, |p| {
            result_struct(p, |p| {
                p.write_field_begin(&TFieldIdentifier::new("success", TType::List, 0)).unwrap();
                p.write_list_begin(&TListIdentifier::new(TType::Struct, 2)).unwrap();
                for c in &cols {
                    c.write_to_out_protocol(p).unwrap();
                }
                p.write_list_end().unwrap();
                p.write_field_end().unwrap();
            })
        });
        let (r, used) = decode_reply(&ok, "get_slice", 7, true).unwrap();
        assert_eq!((r.unwrap(), used), (Reply::List(2), ok.len()));

        // Every proper prefix is "not yet complete", which the unframed reader relies on.
        for cut in 0..ok.len() {
            let e = decode_reply(&ok[..cut], "get_slice", 7, true).unwrap_err();
            assert!(is_end_of_input(&e), "cut {cut}: {e:?}");
        }
        // Wrong sequence number or method: the stream is out of step.
        assert!(matches!(decode_reply(&ok, "get_slice", 8, true), Err(thrift::Error::Protocol(_))));
        assert!(matches!(decode_reply(&ok, "batch_mutate", 7, false), Err(thrift::Error::Protocol(_))));

        let empty = reply("get_slice", TMessageType::Reply, 1, |p| {
            result_struct(p, |p| {
                p.write_field_begin(&TFieldIdentifier::new("success", TType::List, 0)).unwrap();
                p.write_list_begin(&TListIdentifier::new(TType::Struct, 0)).unwrap();
                p.write_list_end().unwrap();
                p.write_field_end().unwrap();
            })
        });
        assert_eq!(decode_reply(&empty, "get_slice", 1, true).unwrap().0.unwrap(), Reply::List(0));

        let void = reply("batch_mutate", TMessageType::Reply, 3, |p| result_struct(p, |_| {}));
        assert_eq!(decode_reply(&void, "batch_mutate", 3, false).unwrap().0.unwrap(), Reply::Done);
        // A list method answering nothing is the generated client's MissingResult.
        let r = decode_reply(&void.clone(), "batch_mutate", 3, true).unwrap().0;
        assert!(matches!(r, Err(thrift::Error::Application(ref a)) if a.kind == ApplicationErrorKind::MissingResult));

        let ire = reply("batch_mutate", TMessageType::Reply, 4, |p| {
            result_struct(p, |p| {
                p.write_field_begin(&TFieldIdentifier::new("ire", TType::Struct, 1)).unwrap();
                t::InvalidRequestException { why: "counters are not supported".into() }
                    .write_to_out_protocol(p)
                    .unwrap();
                p.write_field_end().unwrap();
            })
        });
        let (r, used) = decode_reply(&ire, "batch_mutate", 4, false).unwrap();
        assert_eq!(used, ire.len());
        let e = r.unwrap_err();
        assert_eq!(crate::client::describe_error(&e), "InvalidRequestException: counters are not supported");
        assert!(!crate::client::breaks_connection(&e));

        let te = reply("get_slice", TMessageType::Reply, 5, |p| {
            result_struct(p, |p| {
                p.write_field_begin(&TFieldIdentifier::new("te", TType::Struct, 3)).unwrap();
                t::TimedOutException::default().write_to_out_protocol(p).unwrap();
                p.write_field_end().unwrap();
            })
        });
        let e = decode_reply(&te, "get_slice", 5, true).unwrap().0.unwrap_err();
        assert_eq!(crate::client::describe_error(&e), "TimedOutException");

        let app = reply("get_slice", TMessageType::Exception, 6, |p| {
            thrift::Error::write_application_error_to_out_protocol(
                &ApplicationError::new(ApplicationErrorKind::InternalError, "boom"),
                p,
            )
            .unwrap();
        });
        let e = decode_reply(&app, "get_slice", 6, true).unwrap().0.unwrap_err();
        assert!(matches!(e, thrift::Error::Application(ref a) if a.message == "boom"), "{e:?}");
    }
}
