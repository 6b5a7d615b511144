//! Request bodies (spec §4.1) decoded into [`Request`]s: every field read, every flag's field
//! parsed and checked, nothing left over.

use cluster::consistency::ConsistencyLevel;
use cql::ast::BatchKind;
use cql::exec::Value;

use super::frame::{flags, Frame, Opcode, Version};
use super::wire::{self, BodyError, BodyResult, Reader};

/// Flags of a QUERY's or EXECUTE's parameters (spec §4.1.4).
mod query_flags {
    pub const VALUES: u8 = 0x01;
    pub const SKIP_METADATA: u8 = 0x02;
    pub const PAGE_SIZE: u8 = 0x04;
    pub const PAGING_STATE: u8 = 0x08;
    pub const SERIAL_CONSISTENCY: u8 = 0x10;
    pub const DEFAULT_TIMESTAMP: u8 = 0x20;
    pub const NAMES_FOR_VALUES: u8 = 0x40;
}

/// A decoded request.
#[derive(Debug)]
pub enum Request {
    Startup(Vec<(String, String)>),
    Options,
    /// SASL token of an AUTH_RESPONSE.
    AuthResponse(Option<Vec<u8>>),
    Query {
        query: String,
        params: QueryParams,
    },
    Prepare {
        query: String,
    },
    Execute {
        id: Vec<u8>,
        params: QueryParams,
    },
    Batch(BatchRequest),
    Register(Vec<String>),
}

/// Bound values: by position, or by marker name (flag 0x40).
#[derive(Debug, Default)]
pub enum Values {
    #[default]
    None,
    Positional(Vec<Value>),
    Named(Vec<(String, Value)>),
}

/// `<query_parameters>` of QUERY and EXECUTE.
#[derive(Debug)]
pub struct QueryParams {
    pub consistency: ConsistencyLevel,
    pub values: Values,
    pub skip_metadata: bool,
    /// Read and checked; results are not paged yet (every row in one page).
    pub page_size: Option<i32>,
    pub paging_state: Option<Vec<u8>>,
    pub serial_consistency: Option<ConsistencyLevel>,
    /// Microseconds; used as the write's timestamp when the statement sets none.
    pub default_timestamp: Option<i64>,
}

/// One statement of a BATCH: its text or a prepared id, and its values.
#[derive(Debug)]
pub enum BatchQuery {
    Text(String),
    Prepared(Vec<u8>),
}

#[derive(Debug)]
pub struct BatchRequest {
    pub kind: BatchKind,
    pub statements: Vec<(BatchQuery, Vec<Value>)>,
    pub consistency: ConsistencyLevel,
    pub serial_consistency: Option<ConsistencyLevel>,
    pub default_timestamp: Option<i64>,
}

/// Why a frame is not a request this connection can take.
#[derive(Debug)]
pub enum DecodeError {
    /// A body that does not hold its message: PROTOCOL_ERROR.
    Protocol(String),
    /// A known opcode that only servers send, or an unknown one.
    UnknownOpcode(u8),
}

impl From<BodyError> for DecodeError {
    fn from(e: BodyError) -> DecodeError {
        DecodeError::Protocol(e.0)
    }
}

/// A [consistency] code (spec §3).
pub fn consistency(code: u16) -> BodyResult<ConsistencyLevel> {
    use ConsistencyLevel as CL;
    Ok(match code {
        0x0000 => CL::Any,
        0x0001 => CL::One,
        0x0002 => CL::Two,
        0x0003 => CL::Three,
        0x0004 => CL::Quorum,
        0x0005 => CL::All,
        0x0006 => CL::LocalQuorum,
        0x0007 => CL::EachQuorum,
        0x0008 => CL::Serial,
        0x0009 => CL::LocalSerial,
        0x000A => CL::LocalOne,
        other => return Err(BodyError(format!("Unknown code {other} for a consistency level"))),
    })
}

/// The [consistency] code of a level, for error bodies.
pub fn consistency_code(cl: ConsistencyLevel) -> u16 {
    use ConsistencyLevel as CL;
    match cl {
        CL::Any => 0x0000,
        CL::One => 0x0001,
        CL::Two => 0x0002,
        CL::Three => 0x0003,
        CL::Quorum => 0x0004,
        CL::All => 0x0005,
        CL::LocalQuorum => 0x0006,
        CL::EachQuorum => 0x0007,
        CL::Serial => 0x0008,
        CL::LocalSerial => 0x0009,
        CL::LocalOne => 0x000A,
    }
}

fn owned(v: wire::Value<'_>) -> Value {
    match v {
        wire::Value::Bytes(b) => Value::Bytes(b.to_vec()),
        wire::Value::Null => Value::Null,
        wire::Value::Unset => Value::Unset,
    }
}

/// Decodes a request frame's body.
pub fn decode(frame: &Frame) -> Result<(Opcode, Request), DecodeError> {
    let opcode = Opcode::from_byte(frame.opcode).ok_or(DecodeError::UnknownOpcode(frame.opcode))?;
    let mut r = Reader::new(&frame.body);
    if frame.flags & flags::CUSTOM_PAYLOAD != 0 && frame.version >= Version::V4 {
        r.skip_bytes_map()?;
    }
    let v4 = frame.version >= Version::V4;
    let request = match opcode {
        Opcode::Startup => {
            Request::Startup(r.string_map()?.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
        }
        Opcode::Options => Request::Options,
        Opcode::AuthResponse => Request::AuthResponse(r.bytes()?.map(<[u8]>::to_vec)),
        Opcode::Query => {
            let query = r.long_string()?.to_string();
            Request::Query { query, params: query_params(&mut r, v4)? }
        }
        Opcode::Prepare => Request::Prepare { query: r.long_string()?.to_string() },
        Opcode::Execute => {
            let id = r.short_bytes()?.to_vec();
            Request::Execute { id, params: query_params(&mut r, v4)? }
        }
        Opcode::Batch => Request::Batch(batch(&mut r, v4)?),
        Opcode::Register => Request::Register(r.string_list()?.into_iter().map(str::to_string).collect()),
        Opcode::Error
        | Opcode::Ready
        | Opcode::Authenticate
        | Opcode::Supported
        | Opcode::Result
        | Opcode::Event
        | Opcode::AuthChallenge
        | Opcode::AuthSuccess => return Err(DecodeError::UnknownOpcode(frame.opcode)),
    };
    r.finish(opcode.name())?;
    Ok((opcode, request))
}

fn query_params(r: &mut Reader<'_>, v4: bool) -> BodyResult<QueryParams> {
    use query_flags::*;
    let consistency = consistency(r.short()?)?;
    let flags = r.byte()?;
    let values = if flags & VALUES != 0 {
        let n = r.short()? as usize;
        if flags & NAMES_FOR_VALUES != 0 {
            let mut named = Vec::with_capacity(n.min(r.remaining() / 6));
            for _ in 0..n {
                let name = r.string()?.to_string();
                named.push((name, owned(r.value(v4)?)));
            }
            Values::Named(named)
        } else {
            let mut positional = Vec::with_capacity(n.min(r.remaining() / 4));
            for _ in 0..n {
                positional.push(owned(r.value(v4)?));
            }
            Values::Positional(positional)
        }
    } else {
        Values::None
    };
    let page_size = if flags & PAGE_SIZE != 0 {
        let n = r.int()?;
        if n == 0 {
            return Err(BodyError("The page size cannot be 0".into()));
        }
        Some(n)
    } else {
        None
    };
    let paging_state = if flags & PAGING_STATE != 0 { r.bytes()?.map(<[u8]>::to_vec) } else { None };
    let serial_consistency = if flags & SERIAL_CONSISTENCY != 0 { Some(serial(r.short()?)?) } else { None };
    let default_timestamp = if flags & DEFAULT_TIMESTAMP != 0 { Some(timestamp(r.long()?)?) } else { None };
    Ok(QueryParams {
        consistency,
        values,
        skip_metadata: flags & SKIP_METADATA != 0,
        page_size,
        paging_state,
        serial_consistency,
        default_timestamp,
    })
}

fn serial(code: u16) -> BodyResult<ConsistencyLevel> {
    let cl = consistency(code)?;
    if !cl.is_serial() {
        return Err(BodyError(format!("Serial consistency must be SERIAL or LOCAL_SERIAL, got {cl}")));
    }
    Ok(cl)
}

/// 3.11 refuses `Long.MIN_VALUE`, its "no timestamp".
fn timestamp(ts: i64) -> BodyResult<i64> {
    if ts == i64::MIN {
        return Err(BodyError(format!(
            "Out of bound timestamp, must be in [{}, {}] (got {ts})",
            i64::MIN + 1,
            i64::MAX
        )));
    }
    Ok(ts)
}

fn batch(r: &mut Reader<'_>, v4: bool) -> BodyResult<BatchRequest> {
    use query_flags::*;
    let kind = match r.byte()? {
        0 => BatchKind::Logged,
        1 => BatchKind::Unlogged,
        2 => BatchKind::Counter,
        other => return Err(BodyError(format!("Invalid BATCH message type {other}"))),
    };
    let n = r.short()? as usize;
    let mut statements = Vec::with_capacity(n.min(r.remaining() / 5));
    for _ in 0..n {
        let query = match r.byte()? {
            0 => BatchQuery::Text(r.long_string()?.to_string()),
            1 => BatchQuery::Prepared(r.short_bytes()?.to_vec()),
            other => {
                return Err(BodyError(format!("Invalid query kind in BATCH messages. Must be 0 or 1 but got {other}")))
            }
        };
        let count = r.short()? as usize;
        let mut values = Vec::with_capacity(count.min(r.remaining() / 4));
        for _ in 0..count {
            values.push(owned(r.value(v4)?));
        }
        statements.push((query, values));
    }
    let consistency = consistency(r.short()?)?;
    let flags = r.byte()?;
    if flags & NAMES_FOR_VALUES != 0 {
        return Err(BodyError("Alternative syntax for batch statements with names for values is not supported".into()));
    }
    if flags & (VALUES | SKIP_METADATA | PAGE_SIZE | PAGING_STATE) != 0 {
        return Err(BodyError(format!("Invalid flags for a BATCH message: 0x{flags:02x}")));
    }
    let serial_consistency = if flags & SERIAL_CONSISTENCY != 0 { Some(serial(r.short()?)?) } else { None };
    let default_timestamp = if flags & DEFAULT_TIMESTAMP != 0 { Some(timestamp(r.long()?)?) } else { None };
    Ok(BatchRequest { kind, statements, consistency, serial_consistency, default_timestamp })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::wire::Writer;

    fn frame(opcode: Opcode, body: Vec<u8>) -> Frame {
        Frame { version: Version::V4, flags: 0, stream: 1, opcode: opcode as u8, body }
    }

    #[test]
    fn every_query_parameter_is_read() {
        let mut b = Vec::new();
        b.put_long_string("SELECT * FROM t WHERE k = :k");
        b.put_short(0x0004);
        b.push(0x7F);
        b.put_short(1);
        b.put_string("k");
        b.put_int(-2);
        b.put_int(100);
        b.put_bytes(Some(b"state"));
        b.put_short(0x0009);
        b.extend_from_slice(&1234i64.to_be_bytes());
        let (_, req) = decode(&frame(Opcode::Query, b)).expect("decodes");
        let Request::Query { query, params } = req else { panic!("a query") };
        assert_eq!(query, "SELECT * FROM t WHERE k = :k");
        assert_eq!(params.consistency, ConsistencyLevel::Quorum);
        assert!(matches!(&params.values, Values::Named(v) if v == &[("k".to_string(), Value::Unset)]));
        assert!(params.skip_metadata);
        assert_eq!(params.page_size, Some(100));
        assert_eq!(params.paging_state.as_deref(), Some(&b"state"[..]));
        assert_eq!(params.serial_consistency, Some(ConsistencyLevel::LocalSerial));
        assert_eq!(params.default_timestamp, Some(1234));
    }

    #[test]
    fn bad_parameters_are_protocol_errors() {
        let query = |cl: u16, flags: u8, tail: &[u8]| {
            let mut b = Vec::new();
            b.put_long_string("x");
            b.put_short(cl);
            b.push(flags);
            b.extend_from_slice(tail);
            decode(&frame(Opcode::Query, b))
        };
        assert!(matches!(query(0x77, 0, &[]), Err(DecodeError::Protocol(m)) if m.contains("consistency")));
        assert!(
            matches!(query(1, 0x04, &0i32.to_be_bytes()), Err(DecodeError::Protocol(m)) if m.contains("page size"))
        );
        assert!(matches!(query(1, 0x10, &1u16.to_be_bytes()), Err(DecodeError::Protocol(m)) if m.contains("SERIAL")));
        assert!(matches!(query(1, 0x20, &i64::MIN.to_be_bytes()), Err(DecodeError::Protocol(_))));
        assert!(matches!(query(1, 0, &[0]), Err(DecodeError::Protocol(m)) if m.contains("left over")));
        assert!(matches!(decode(&frame(Opcode::Result, Vec::new())), Err(DecodeError::UnknownOpcode(0x08))));
    }

    #[test]
    fn a_batch_reads_texts_and_ids() {
        let mut b = vec![1];
        b.put_short(2);
        b.push(0);
        b.put_long_string("INSERT INTO t (k) VALUES (?)");
        b.put_short(1);
        b.put_bytes(Some(&[0, 0, 0, 1]));
        b.push(1);
        b.put_short_bytes(&[9; 16]);
        b.put_short(0);
        b.put_short(1);
        b.push(0x20);
        b.extend_from_slice(&77i64.to_be_bytes());
        let (_, req) = decode(&frame(Opcode::Batch, b)).expect("decodes");
        let Request::Batch(batch) = req else { panic!("a batch") };
        assert_eq!(batch.kind, BatchKind::Unlogged);
        assert_eq!(batch.statements.len(), 2);
        assert!(matches!(&batch.statements[1].0, BatchQuery::Prepared(id) if id == &[9; 16]));
        assert_eq!(batch.default_timestamp, Some(77));
    }
}
