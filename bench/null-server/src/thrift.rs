//! The floor over Cassandra's framed binary Thrift: each reply encoded once at start, and sent
//! with the request's sequence number written into it.

use thrift::protocol::{TMessageIdentifier, TMessageType, TOutputProtocol};
use thrift_idl as t;
use thrift_idl::{MessageInput, MessageOutput};

use crate::{invalid, Protocol};

/// Largest frame accepted; a client sending more is disconnected.
const MAX_FRAME: usize = 16 << 20;

/// The replies, by method: the encoded frame and where its sequence number sits.
pub struct Replies {
    by_method: Vec<(&'static str, Vec<u8>, usize)>,
}

impl Replies {
    /// Encodes every reply, `get_slice`'s with one column of `value_size` bytes.
    pub fn new(value_size: usize) -> thrift::Result<Replies> {
        let keyspace = t::KsDef::new(
            "Stress".to_string(),
            "org.apache.cassandra.locator.SimpleStrategy".to_string(),
            std::collections::BTreeMap::from([("replication_factor".to_string(), "1".to_string())]),
            None,
            sibyl_stress::client::stress_cf_defs("Stress"),
            Some(true),
        );
        let column = t::Column {
            name: sibyl_stress::client::column_name(0),
            value: Some(vec![b'x'; value_size]),
            timestamp: Some(1),
            ttl: None,
        };
        let slice = vec![t::ColumnOrSuperColumn { column: Some(column), ..Default::default() }];
        let mut by_method = Vec::new();
        let mut add = |method: &'static str, body: &dyn Fn(&mut MessageOutput<'_>) -> thrift::Result<()>| {
            let mut frame = vec![0; 4];
            let mut p = MessageOutput::new(&mut frame);
            p.write_message_begin(&TMessageIdentifier::new(method, TMessageType::Reply, 0))?;
            body(&mut p)?;
            p.write_message_end()?;
            let len = u32::try_from(frame.len() - 4).unwrap_or(u32::MAX);
            frame[..4].copy_from_slice(&len.to_be_bytes());
            // The frame length, the version word, the name's length and the name.
            by_method.push((method, frame, 4 + 4 + 4 + method.len()));
            Ok::<_, thrift::Error>(())
        };
        add("describe_keyspace", &|p| {
            t::CassandraDescribeKeyspaceResult { result_value: Some(keyspace.clone()), nfe: None, ire: None }
                .write_to_out_protocol(p)
        })?;
        add("set_keyspace", &|p| t::CassandraSetKeyspaceResult { ire: None }.write_to_out_protocol(p))?;
        add("insert", &|p| t::CassandraInsertResult { ire: None, ue: None, te: None }.write_to_out_protocol(p))?;
        add("batch_mutate", &|p| {
            t::CassandraBatchMutateResult { ire: None, ue: None, te: None }.write_to_out_protocol(p)
        })?;
        add("get_slice", &|p| {
            t::CassandraGetSliceResult { result_value: Some(slice.clone()), ire: None, ue: None, te: None }
                .write_to_out_protocol(p)
        })?;
        Ok(Replies { by_method })
    }

    /// The reply to call `seq` of `method`, appended to `out`; false for a method it has none for.
    fn reply(&self, method: &str, seq: i32, out: &mut Vec<u8>) -> bool {
        let Some((_, frame, at)) = self.by_method.iter().find(|(m, _, _)| *m == method) else {
            return false;
        };
        let start = out.len();
        out.extend_from_slice(frame);
        if let Some(slot) = out.get_mut(start + at..start + at + 4) {
            slot.copy_from_slice(&seq.to_be_bytes());
        }
        true
    }
}

/// A call's method name and sequence number, from a frame's body (strict binary protocol, read
/// as the server's front end reads it).
fn call(frame: &[u8]) -> Option<(&str, i32)> {
    let header = MessageInput::new(frame).read_header().ok()?;
    (header.kind == TMessageType::Call).then_some((header.name, header.sequence_number))
}

impl Protocol for Replies {
    fn answer(&self, input: &[u8], output: &mut Vec<u8>) -> std::io::Result<usize> {
        let mut at = 0;
        while let Some(head) = input.get(at..at + 4) {
            let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
            if len > MAX_FRAME {
                return Err(invalid(format!("frame of {len} bytes (unframed Thrift is not served)")));
            }
            let Some(frame) = input.get(at + 4..at + 4 + len) else { break };
            let (method, seq) = call(frame).ok_or_else(|| invalid("not a strict binary call".into()))?;
            if !self.reply(method, seq, output) {
                return Err(invalid(format!("no reply for {method}")));
            }
            at += 4 + len;
        }
        Ok(at)
    }
}

#[cfg(test)]
mod tests {
    use super::{call, Replies};
    use crate::Protocol;
    use sibyl_stress::wire::{decode_reply, encode_call, Reply};
    use thrift_idl as t;

    fn parent() -> t::ColumnParent {
        t::ColumnParent { column_family: "Standard1".into(), super_column: None }
    }

    /// A call as sibyl-stress frames it, answered as the server would, read as sibyl-stress does.
    fn exchange<A: sibyl_stress::wire::CallArgs>(replies: &Replies, seq: i32, args: &A) -> Vec<u8> {
        let mut request = Vec::new();
        encode_call(&mut request, true, seq, args).unwrap();
        let (method, seq) = call(&request[4..]).unwrap();
        let mut out = Vec::new();
        assert!(replies.reply(method, seq, &mut out));
        let len = u32::from_be_bytes(out[..4].try_into().unwrap()) as usize;
        assert_eq!(len, out.len() - 4, "the frame's length");
        out.split_off(4)
    }

    #[test]
    fn replies_carry_the_call_number_and_decode_as_the_client_expects() {
        let replies = Replies::new(100).unwrap();
        let insert = t::CassandraInsertArgs {
            key: b"0000000042".to_vec(),
            column_parent: parent(),
            column: t::Column { name: b"C0".to_vec(), value: Some(vec![1; 100]), timestamp: Some(7), ttl: None },
            consistency_level: t::ConsistencyLevel::ONE,
        };
        for seq in [1, 258, i32::MAX] {
            let reply = exchange(&replies, seq, &insert);
            let (outcome, used) = decode_reply::<t::CassandraInsertResult>(&reply, "insert", seq).unwrap();
            assert!(matches!(outcome, Ok(Reply::Done)));
            assert_eq!(used, reply.len());
        }
        let get = t::CassandraGetSliceArgs {
            key: b"0000000042".to_vec(),
            column_parent: parent(),
            predicate: t::SlicePredicate { column_names: None, slice_range: None },
            consistency_level: t::ConsistencyLevel::ONE,
        };
        let reply = exchange(&replies, 9, &get);
        let (outcome, _) = decode_reply::<t::CassandraGetSliceResult>(&reply, "get_slice", 9).unwrap();
        assert!(matches!(outcome, Ok(Reply::List(1))));
        // The reply holds the column's value in full.
        assert!(reply.windows(100).any(|w| w.iter().all(|&b| b == b'x')));
        assert!(decode_reply::<t::CassandraGetSliceResult>(&reply, "get_slice", 10).is_err(), "another call's number");
    }

    #[test]
    fn whole_frames_are_answered_and_a_partial_one_waits() {
        let replies = Replies::new(10).unwrap();
        let args = t::CassandraSetKeyspaceArgs { keyspace: "Stress".into() };
        let mut input = Vec::new();
        let mut one = Vec::new();
        for seq in [3, 4] {
            encode_call(&mut one, true, seq, &args).unwrap();
            input.extend_from_slice(&one);
        }
        let whole = input.len();
        input.extend_from_slice(&one[..one.len() - 1]);
        let mut out = Vec::new();
        assert_eq!(replies.answer(&input, &mut out).unwrap(), whole);
        let (first, used) = decode_reply::<t::CassandraSetKeyspaceResult>(&out[4..], "set_keyspace", 3).unwrap();
        assert!(matches!(first, Ok(Reply::Done)));
        let second = &out[4 + used + 4..];
        assert!(matches!(
            decode_reply::<t::CassandraSetKeyspaceResult>(second, "set_keyspace", 4),
            Ok((Ok(Reply::Done), _))
        ));
        let mut huge = (u32::MAX).to_be_bytes().to_vec();
        huge.extend_from_slice(&[0; 8]);
        assert!(replies.answer(&huge, &mut Vec::new()).is_err(), "a frame past the limit");
    }

    #[test]
    fn only_strict_calls_are_read() {
        let mut frame = 0x8001_0001u32.to_be_bytes().to_vec();
        frame.extend_from_slice(&6u32.to_be_bytes());
        frame.extend_from_slice(b"insert");
        frame.extend_from_slice(&5i32.to_be_bytes());
        assert_eq!(call(&frame), Some(("insert", 5)));
        let mut reply = frame.clone();
        reply[3] = 2;
        assert_eq!(call(&reply), None, "a reply is not a call");
        assert_eq!(call(&frame[..frame.len() - 1]), None, "cut short");
        assert_eq!(call(&frame[4..]), None, "no version word");
        let replies = Replies::new(1).unwrap();
        assert!(!replies.reply("get_range_slices", 0, &mut Vec::new()));
    }
}
