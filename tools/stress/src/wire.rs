//! The measured Thrift requests without the generated blocking client: each call is the
//! generated argument struct (`thrift_idl::Cassandra<Method>Args`) written into one reusable
//! buffer, each reply the generated result struct (`Cassandra<Method>Result`) read from the
//! received bytes, over an asynchronous connection that sends each call with one write.
//!
//! Why not the generated client: 64 blocking clients on 64 OS threads spent about 24 µs of CPU
//! per request, mostly in thread wake-ups, on the same two cores as the server being measured. A
//! few tokio tasks on one thread send the same bytes (see the byte-for-byte tests against the
//! generated client) with one request in flight per connection, as before, for about half of
//! that. Until the generated structs were public this module encoded the calls by hand; see
//! `bench/README.md` ("Client cost") for what that saved (nothing measurable).
//!
//! The wire format is the one `CassandraSyncClient` writes: strict binary protocol
//! (`TBinaryOutputProtocol::new(_, true)`), message header (name, `Call`, sequence number), the
//! argument struct; framed transport puts the body's length in 4 big-endian bytes in front.

use std::time::Duration;

use thrift::protocol::{TInputProtocol, TMessageIdentifier, TMessageType, TOutputProtocol};
use thrift::{
    ApplicationError, ApplicationErrorKind, ProtocolError, ProtocolErrorKind, TransportError, TransportErrorKind,
};
use thrift_idl as t;
use thrift_idl::{MessageInput, MessageOutput};
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::TcpStream;

/// Largest reply frame accepted (the server's own default frame limit is 16 MiB).
const MAX_FRAME: usize = 64 * 1024 * 1024;

/// What a successful reply carried that the stress run looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// A `void` method answered.
    Done,
    /// A list-valued method answered with this many elements.
    List(usize),
}

/// The protocol calls are written with: the server's reply writer, concrete and inlined, so the
/// generated writers inline into it (as the readers do into [`MessageInput`]).
pub type Output<'a> = MessageOutput<'a>;

/// The arguments of one method the load generator calls: the generated `Cassandra<M>Args`.
pub trait CallArgs {
    /// The method's name in the message header.
    const METHOD: &'static str;
    /// The generated result struct of the same method.
    type Result: CallResult;
    fn write(&self, p: &mut Output<'_>) -> thrift::Result<()>;
}

/// The generated `Cassandra<M>Result` of a called method.
pub trait CallResult: Sized {
    fn read(p: &mut MessageInput<'_>) -> thrift::Result<Self>;
    /// The reply as the generated client returns it: a declared exception (in the order the
    /// generated client checks them) as `thrift::Error::User`, a missing return value as
    /// `MissingResult`.
    fn outcome(self) -> Result<Reply, thrift::Error>;
}

fn user(e: impl std::error::Error + Send + Sync + 'static) -> thrift::Error {
    thrift::Error::User(Box::new(e))
}

fn missing_result(method: &str) -> thrift::Error {
    thrift::Error::Application(ApplicationError::new(
        ApplicationErrorKind::MissingResult,
        format!("no result received for {method}"),
    ))
}

/// Implements [`CallArgs`] and [`CallResult`] for one method's generated structs. `list` marks
/// a method whose return value is a list (its length is the [`Reply`]); `void` one without.
macro_rules! method {
    ($args:ty, $result:ty, $name:literal, void, [$($exc:ident),*]) => {
        method!(@args $args, $result, $name);
        impl CallResult for $result {
            fn read(p: &mut MessageInput<'_>) -> thrift::Result<Self> {
                <$result>::read_from_in_protocol(p)
            }
            fn outcome(self) -> Result<Reply, thrift::Error> {
                $(if let Some(e) = self.$exc { return Err(user(e)); })*
                Ok(Reply::Done)
            }
        }
    };
    ($args:ty, $result:ty, $name:literal, list, [$($exc:ident),*]) => {
        method!(@args $args, $result, $name);
        impl CallResult for $result {
            fn read(p: &mut MessageInput<'_>) -> thrift::Result<Self> {
                <$result>::read_from_in_protocol(p)
            }
            fn outcome(self) -> Result<Reply, thrift::Error> {
                $(if let Some(e) = self.$exc { return Err(user(e)); })*
                self.result_value.map(|v| Reply::List(v.len())).ok_or_else(|| missing_result($name))
            }
        }
    };
    (@args $args:ty, $result:ty, $name:literal) => {
        impl CallArgs for $args {
            const METHOD: &'static str = $name;
            type Result = $result;
            fn write(&self, p: &mut Output<'_>) -> thrift::Result<()> {
                self.write_to_out_protocol(p)
            }
        }
    };
}

method!(t::CassandraBatchMutateArgs, t::CassandraBatchMutateResult, "batch_mutate", void, [ire, ue, te]);
method!(t::CassandraInsertArgs, t::CassandraInsertResult, "insert", void, [ire, ue, te]);
method!(t::CassandraGetSliceArgs, t::CassandraGetSliceResult, "get_slice", list, [ire, ue, te]);
method!(t::CassandraGetRangeSlicesArgs, t::CassandraGetRangeSlicesResult, "get_range_slices", list, [ire, ue, te]);
method!(t::CassandraSetKeyspaceArgs, t::CassandraSetKeyspaceResult, "set_keyspace", void, [ire]);

/// Writes call number `seq` of `args`' method into `buf` (cleared first), with the frame length
/// in front when `framed`.
pub fn encode_call<A: CallArgs>(buf: &mut Vec<u8>, framed: bool, seq: i32, args: &A) -> thrift::Result<()> {
    buf.clear();
    if framed {
        buf.extend_from_slice(&[0; 4]);
    }
    {
        let mut p = MessageOutput::new(&mut *buf);
        p.write_message_begin(&TMessageIdentifier::new(A::METHOD, TMessageType::Call, seq))?;
        args.write(&mut p)?;
        p.write_message_end()?;
    }
    if framed {
        let len = i32::try_from(buf.len() - 4)
            .map_err(|_| thrift::Error::Protocol(ProtocolError::new(ProtocolErrorKind::SizeLimit, "call too large")))?;
        if let Some(head) = buf.get_mut(..4) {
            head.copy_from_slice(&len.to_be_bytes());
        }
    }
    Ok(())
}

fn protocol_error(message: String) -> thrift::Error {
    thrift::Error::Protocol(ProtocolError::new(ProtocolErrorKind::InvalidData, message))
}

/// Decodes one reply to `method` (call number `seq`) from the front of `bytes`, with the checks
/// the generated client makes; returns the reply (or the error it carries, as the generated
/// client would return it) and how many bytes it took. The outer `Err` is for bytes that are
/// not a whole, well-formed reply (a transport `EndOfFile` error when `bytes` ends too early).
///
/// The generated readers skip fields they do not know with `TInputProtocol::skip`, which reads
/// strings as UTF-8; every field of these replies is known, so binary names and values decode.
pub fn decode_reply<R: CallResult>(
    bytes: &[u8],
    method: &str,
    seq: i32,
) -> thrift::Result<(Result<Reply, thrift::Error>, usize)> {
    let mut p = MessageInput::new(bytes);
    let result = {
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
                let r = R::read(&mut p)?;
                p.read_message_end()?;
                r.outcome()
            }
            other => return Err(protocol_error(format!("expected a reply, got a {other:?} message"))),
        }
    };
    Ok((result, bytes.len() - p.remaining()))
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
        let stream = connect_nodelay(host, port, timeout).await?;
        Ok(AsyncConn {
            stream,
            framed,
            timeout,
            seq: 0,
            out: Vec::with_capacity(4096),
            inbuf: Vec::with_capacity(64 * 1024),
        })
    }

    /// Sends `args` as the next call and waits for its reply, all within the timeout. An
    /// outer transport or protocol error means the connection is out of step and must be
    /// dropped.
    pub async fn call<A: CallArgs>(&mut self, args: &A) -> Result<Reply, thrift::Error> {
        self.seq = self.seq.wrapping_add(1);
        encode_call(&mut self.out, self.framed, self.seq, args)?;
        let timeout = self.timeout;
        let r = match tokio::time::timeout(timeout, self.exchange::<A::Result>(A::METHOD)).await {
            Ok(r) => r,
            Err(_) => Err(transport_error(
                TransportErrorKind::TimedOut,
                format!("no reply within {} s", timeout.as_secs_f64()),
            )),
        };
        clear_read_readiness(&self.stream);
        r
    }

    async fn exchange<R: CallResult>(&mut self, method: &str) -> Result<Reply, thrift::Error> {
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
                        let (reply, used) = decode_reply::<R>(body, method, seq)?;
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
                match decode_reply::<R>(&self.inbuf, method, seq) {
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
        self.call(&t::CassandraSetKeyspaceArgs { keyspace: keyspace.to_string() }).await.map(|_| ())
    }
}

/// Connects within `timeout` and sets `TCP_NODELAY`: with one small request per round trip,
/// Nagle would add delayed-ACK stalls to every call. Shared by both protocols.
pub async fn connect_nodelay(host: &str, port: u16, timeout: Duration) -> std::io::Result<TcpStream> {
    let stream = tokio::time::timeout(timeout, TcpStream::connect((host, port)))
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out"))??;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// After a whole reply has been read nothing more can arrive before the next request, but
/// tokio still believes the socket readable and would start the next read with a recv that
/// fails with EAGAIN; clearing the readiness here saves that syscall per request. Shared by
/// both protocols.
pub fn clear_read_readiness(stream: &TcpStream) {
    let _ = stream.try_io(Interest::READABLE, || Err::<(), _>(std::io::Error::from(std::io::ErrorKind::WouldBlock)));
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    use std::io::Write;
    use std::rc::Rc;

    use thrift::protocol::{
        TBinaryInputProtocol, TBinaryOutputProtocol, TFieldIdentifier, TListIdentifier, TStructIdentifier, TType,
    };
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
                    assert!(c.batch_mutate(map.clone(), t::ConsistencyLevel::QUORUM).is_err());
                });
                let mut got = vec![9u8; 3]; // leftovers of an earlier call must go
                let args =
                    t::CassandraBatchMutateArgs { mutation_map: map, consistency_level: t::ConsistencyLevel::QUORUM };
                encode_call(&mut got, framed, 1, &args).unwrap();
                assert_eq!(got, want, "framed={framed} cf={cf}");
            }
        }
        // The frame length is the body's: 4 bytes fewer than the unframed call is not it.
        let mut framed = Vec::new();
        let mut unframed = Vec::new();
        let args = t::CassandraSetKeyspaceArgs { keyspace: "Stress".into() };
        encode_call(&mut framed, true, 5, &args).unwrap();
        encode_call(&mut unframed, false, 5, &args).unwrap();
        assert_eq!(framed[..4], (unframed.len() as i32).to_be_bytes());
        assert_eq!(framed[4..], unframed[..]);
    }

    #[test]
    fn insert_is_byte_identical_to_the_generated_client() {
        let column =
            t::Column { name: b"C0".to_vec(), value: Some(vec![0u8, 0xff, 7]), timestamp: Some(1_234_567), ttl: None };
        for framed in [true, false] {
            let want = generated(framed, |c| {
                assert!(c.insert(b"k1".to_vec(), parent(), column.clone(), t::ConsistencyLevel::ONE).is_err());
            });
            let mut got = Vec::new();
            let args = t::CassandraInsertArgs {
                key: b"k1".to_vec(),
                column_parent: parent(),
                column: column.clone(),
                consistency_level: t::ConsistencyLevel::ONE,
            };
            encode_call(&mut got, framed, 1, &args).unwrap();
            assert_eq!(got, want, "framed={framed}");
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
            let mut got = Vec::new();
            let args = t::CassandraGetSliceArgs {
                key: key.clone(),
                column_parent: parent(),
                predicate: predicate(),
                consistency_level: t::ConsistencyLevel::ONE,
            };
            encode_call(&mut got, framed, 1, &args).unwrap();
            assert_eq!(got, want, "get_slice framed={framed}");

            let want = generated(framed, |c| {
                assert!(c.get_range_slices(parent(), predicate(), range.clone(), t::ConsistencyLevel::ALL).is_err());
            });
            let args = t::CassandraGetRangeSlicesArgs {
                column_parent: parent(),
                predicate: predicate(),
                range: range.clone(),
                consistency_level: t::ConsistencyLevel::ALL,
            };
            encode_call(&mut got, framed, 1, &args).unwrap();
            assert_eq!(got, want, "get_range_slices framed={framed}");

            let want = generated(framed, |c| assert!(c.set_keyspace("Stress".into()).is_err()));
            encode_call(&mut got, framed, 1, &t::CassandraSetKeyspaceArgs { keyspace: "Stress".into() }).unwrap();
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
        p.write_struct_begin(&TStructIdentifier::new("r")).unwrap();
        field(p);
        p.write_field_stop().unwrap();
        p.write_struct_end().unwrap();
    }

    type Slice = t::CassandraGetSliceResult;
    type Mutate = t::CassandraBatchMutateResult;

    #[test]
    fn replies_decode_to_counts_and_declared_exceptions() {
        // A slice with binary (non UTF-8) names and values.
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
            Slice { result_value: Some(cols.clone()), ..Default::default() }.write_to_out_protocol(p).unwrap()
        });
        let (r, used) = decode_reply::<Slice>(&ok, "get_slice", 7).unwrap();
        assert_eq!((r.unwrap(), used), (Reply::List(2), ok.len()));

        // Every proper prefix is "not yet complete", which the unframed reader relies on.
        for cut in 0..ok.len() {
            let e = decode_reply::<Slice>(&ok[..cut], "get_slice", 7).unwrap_err();
            assert!(is_end_of_input(&e), "cut {cut}: {e:?}");
        }
        // Wrong sequence number or method: the stream is out of step.
        assert!(matches!(decode_reply::<Slice>(&ok, "get_slice", 8), Err(thrift::Error::Protocol(_))));
        assert!(matches!(decode_reply::<Mutate>(&ok, "batch_mutate", 7), Err(thrift::Error::Protocol(_))));

        let empty = reply("get_slice", TMessageType::Reply, 1, |p| {
            Slice { result_value: Some(vec![]), ..Default::default() }.write_to_out_protocol(p).unwrap()
        });
        assert_eq!(decode_reply::<Slice>(&empty, "get_slice", 1).unwrap().0.unwrap(), Reply::List(0));

        let void = reply("batch_mutate", TMessageType::Reply, 3, |p| result_struct(p, |_| {}));
        assert_eq!(decode_reply::<Mutate>(&void, "batch_mutate", 3).unwrap().0.unwrap(), Reply::Done);
        // A list method answering nothing is the generated client's MissingResult.
        let r = decode_reply::<Slice>(&void, "batch_mutate", 3).unwrap().0;
        assert!(matches!(r, Err(thrift::Error::Application(ref a)) if a.kind == ApplicationErrorKind::MissingResult));

        let ire = reply("batch_mutate", TMessageType::Reply, 4, |p| {
            let ire = t::InvalidRequestException { why: "counters are not supported".into() };
            Mutate { ire: Some(ire), ..Default::default() }.write_to_out_protocol(p).unwrap()
        });
        let (r, used) = decode_reply::<Mutate>(&ire, "batch_mutate", 4).unwrap();
        assert_eq!(used, ire.len());
        let e = r.unwrap_err();
        assert_eq!(crate::client::describe_error(&e), "InvalidRequestException: counters are not supported");
        assert!(!crate::client::breaks_connection(&e));

        let te = reply("get_slice", TMessageType::Reply, 5, |p| {
            Slice { te: Some(t::TimedOutException::default()), ..Default::default() }.write_to_out_protocol(p).unwrap()
        });
        let e = decode_reply::<Slice>(&te, "get_slice", 5).unwrap().0.unwrap_err();
        assert_eq!(crate::client::describe_error(&e), "TimedOutException");

        // A field of the wrong wire type is skipped (Thrift's rule), not misread.
        let odd = reply("get_slice", TMessageType::Reply, 9, |p| {
            result_struct(p, |p| {
                p.write_field_begin(&TFieldIdentifier::new("success", TType::I32, 0)).unwrap();
                p.write_i32(3).unwrap();
                p.write_field_end().unwrap();
                p.write_field_begin(&TFieldIdentifier::new("x", TType::List, 9)).unwrap();
                p.write_list_begin(&TListIdentifier::new(TType::I64, 1)).unwrap();
                p.write_i64(1).unwrap();
                p.write_list_end().unwrap();
                p.write_field_end().unwrap();
            })
        });
        let (r, used) = decode_reply::<Slice>(&odd, "get_slice", 9).unwrap();
        assert_eq!(used, odd.len());
        assert!(matches!(r, Err(thrift::Error::Application(ref a)) if a.kind == ApplicationErrorKind::MissingResult));

        let app = reply("get_slice", TMessageType::Exception, 6, |p| {
            thrift::Error::write_application_error_to_out_protocol(
                &ApplicationError::new(ApplicationErrorKind::InternalError, "boom"),
                p,
            )
            .unwrap();
        });
        let e = decode_reply::<Slice>(&app, "get_slice", 6).unwrap().0.unwrap_err();
        assert!(matches!(e, thrift::Error::Application(ref a) if a.message == "boom"), "{e:?}");
    }
}
