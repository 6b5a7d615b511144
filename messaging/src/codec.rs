//! The internode wire format: encoding and decoding, no I/O. Every integer is big-endian.
//! `docs/internode-protocol.md` describes the same format for readers of the protocol.
//!
//! A connection carries one handshake each way, then message frames one way only (from the
//! node that opened it); replies travel on the replier's own connection to the requester.
//!
//! Handshake, initiator → acceptor, once at the start of a connection:
//! ```text
//!  0       4       5      6        8                    8+n      9+n          +2       +4
//!  +-------+-------+------+--------+--------------------+--------+------------+--------+-------+
//!  | magic | vers. | kind | n: u16 | cluster name       | family | address    | port   | crc32 |
//!  | SBYH  | u8    | u8   |        | n bytes, UTF-8     | 4 | 6  | 4 | 16 B   | u16    | u32   |
//!  +-------+-------+------+--------+--------------------+--------+------------+--------+-------+
//! ```
//! `kind` is the connection's use (0 small messages, 1 gossip); the address and port are where
//! the initiator listens (replies go there), not the TCP source port. The crc32 covers every byte
//! before it. This layout is the same in every protocol version, so a peer can always read it.
//!
//! Handshake reply, acceptor → initiator:
//! ```text
//!  0       4       5        6        8                    8+n
//!  +-------+-------+--------+--------+--------------------+-------+
//!  | magic | vers. | status | n: u16 | cluster name       | crc32 |
//!  | SBYA  | u8    | u8     |        | n bytes, UTF-8     | u32   |
//!  +-------+-------+--------+--------+--------------------+-------+
//! ```
//! `status` 0 accepted, 1 cluster name mismatch, 2 unsupported version; the name is the
//! acceptor's, so the initiator can log both. After a refusal the acceptor closes.
//!
//! Message frame, after an accepted handshake:
//! ```text
//!  0       4       5      6       7             15           19                 19+len
//!  +-------+-------+------+-------+-------------+------------+------------------+-------+
//!  | magic | vers. | verb | flags | request id  | len: u32   | payload          | crc32 |
//!  | SBYM  | u8    | u8   | u8    | u64         |            | len bytes        | u32   |
//!  +-------+-------+------+-------+-------------+------------+------------------+-------+
//! ```
//! flags: 0x01 REQUEST (a reply is awaited), 0x02 RESPONSE, 0x04 FAILURE (only with RESPONSE;
//! the payload is the reason, UTF-8). Other bits and combinations are malformed. A response
//! carries the request's id and verb. The crc32 covers the header and the payload.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::error::{FrameError, HandshakeError};
use crate::verb::ConnectionKind;
use crate::Endpoint;

/// "SBYH": a handshake.
pub const HANDSHAKE_MAGIC: u32 = 0x5342_5948;
/// "SBYA": a handshake reply.
pub const HANDSHAKE_REPLY_MAGIC: u32 = 0x5342_5941;
/// "SBYM": a message frame.
pub const FRAME_MAGIC: u32 = 0x5342_594D;
/// Bytes of a frame before its payload.
pub const FRAME_HEADER_BYTES: usize = 19;
/// Bytes a frame adds to its payload (header and CRC).
pub const FRAME_OVERHEAD_BYTES: usize = FRAME_HEADER_BYTES + 4;
/// Longest cluster name a handshake may carry.
pub const MAX_CLUSTER_NAME_BYTES: usize = 1024;

/// The protocol versions this node speaks; frames carry the version agreed in the handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum ProtocolVersion {
    V1 = 1,
}

impl ProtocolVersion {
    pub const CURRENT: ProtocolVersion = ProtocolVersion::V1;
}

impl TryFrom<u8> for ProtocolVersion {
    type Error = u8;

    fn try_from(v: u8) -> Result<ProtocolVersion, u8> {
        match v {
            1 => Ok(ProtocolVersion::V1),
            other => Err(other),
        }
    }
}

const FLAG_REQUEST: u8 = 0x01;
const FLAG_RESPONSE: u8 = 0x02;
const FLAG_FAILURE: u8 = 0x04;

/// What a frame is, from its flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// No reply is awaited.
    OneWay,
    /// The sender awaits a reply with the same id.
    Request,
    /// A reply; the payload is the handler's answer.
    Response,
    /// A reply; the handler failed and the payload is the reason (UTF-8).
    Failure,
}

impl MessageKind {
    pub fn flags(self) -> u8 {
        match self {
            MessageKind::OneWay => 0,
            MessageKind::Request => FLAG_REQUEST,
            MessageKind::Response => FLAG_RESPONSE,
            MessageKind::Failure => FLAG_RESPONSE | FLAG_FAILURE,
        }
    }

    pub fn from_flags(flags: u8) -> Result<MessageKind, FrameError> {
        match flags {
            0 => Ok(MessageKind::OneWay),
            FLAG_REQUEST => Ok(MessageKind::Request),
            FLAG_RESPONSE => Ok(MessageKind::Response),
            f if f == FLAG_RESPONSE | FLAG_FAILURE => Ok(MessageKind::Failure),
            other => Err(FrameError::BadFlags(other)),
        }
    }

    pub fn is_reply(self) -> bool {
        matches!(self, MessageKind::Response | MessageKind::Failure)
    }
}

/// A decoded message frame. The verb stays a number here: an unknown verb is a well-formed
/// frame that the dispatcher logs and drops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub verb: u8,
    pub kind: MessageKind,
    pub id: u64,
    pub payload: Vec<u8>,
}

/// The opening of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handshake {
    /// The highest version the initiator speaks.
    pub version: u8,
    pub kind: ConnectionKind,
    pub cluster_name: String,
    /// Where the initiator listens.
    pub from: Endpoint,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum HandshakeStatus {
    Accepted = 0,
    ClusterNameMismatch = 1,
    UnsupportedVersion = 2,
}

impl TryFrom<u8> for HandshakeStatus {
    type Error = HandshakeError;

    fn try_from(v: u8) -> Result<HandshakeStatus, HandshakeError> {
        match v {
            0 => Ok(HandshakeStatus::Accepted),
            1 => Ok(HandshakeStatus::ClusterNameMismatch),
            2 => Ok(HandshakeStatus::UnsupportedVersion),
            other => Err(HandshakeError::BadStatus(other)),
        }
    }
}

/// The acceptor's answer to a handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeReply {
    /// The version the acceptor will speak on this connection (its own when it refuses).
    pub version: u8,
    pub status: HandshakeStatus,
    /// The acceptor's cluster name.
    pub cluster_name: String,
}

/// The result of decoding from the front of a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded<T> {
    /// A whole item, which took the first `used` bytes.
    Complete { value: T, used: usize },
    /// The buffer holds a valid prefix; at least `need` bytes in all are needed.
    Incomplete { need: usize },
}

/// Appends one frame to `out`. Fails only if the payload does not fit the u32 length field.
pub fn encode_frame(
    out: &mut Vec<u8>,
    version: ProtocolVersion,
    verb: u8,
    kind: MessageKind,
    id: u64,
    payload: &[u8],
) -> Result<(), FrameError> {
    let len = u32::try_from(payload.len())
        .map_err(|_| FrameError::TooLarge { len: payload.len() as u64, max: u32::MAX as usize })?;
    let start = out.len();
    out.reserve(FRAME_OVERHEAD_BYTES + payload.len());
    out.extend_from_slice(&FRAME_MAGIC.to_be_bytes());
    out.push(version as u8);
    out.push(verb);
    out.push(kind.flags());
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(payload);
    push_crc(out, start);
    Ok(())
}

/// Decodes the frame at the front of `buf`. The length is checked against `max_payload` before
/// any payload is awaited, so an oversized frame is refused from its header alone.
pub fn decode_frame(buf: &[u8], version: ProtocolVersion, max_payload: usize) -> Result<Decoded<Frame>, FrameError> {
    let mut r = Reader::new(buf);
    let step = (|| {
        let magic = r.u32()?;
        if magic != FRAME_MAGIC {
            return Err(Step::Bad(FrameError::BadMagic { got: magic }));
        }
        let got_version = r.u8()?;
        if got_version != version as u8 {
            return Err(Step::Bad(FrameError::WrongVersion { got: got_version, expected: version as u8 }));
        }
        let verb = r.u8()?;
        let kind = MessageKind::from_flags(r.u8()?).map_err(Step::Bad)?;
        let id = r.u64()?;
        let len = r.u32()?;
        let len_usize = usize::try_from(len).unwrap_or(usize::MAX);
        if len_usize > max_payload {
            return Err(Step::Bad(FrameError::TooLarge { len: u64::from(len), max: max_payload }));
        }
        let payload = r.take(len_usize)?;
        let covered = r.pos;
        let expected = r.u32()?;
        check_crc(buf, covered, expected).map_err(|(expected, got)| FrameError::ChecksumMismatch { expected, got })?;
        Ok(Frame { verb, kind, id, payload: payload.to_vec() })
    })();
    finish(step, r.pos)
}

/// Appends a handshake to `out`.
pub fn encode_handshake(out: &mut Vec<u8>, handshake: &Handshake) -> Result<(), HandshakeError> {
    let start = out.len();
    out.extend_from_slice(&HANDSHAKE_MAGIC.to_be_bytes());
    out.push(handshake.version);
    out.push(handshake.kind as u8);
    push_name(out, &handshake.cluster_name)?;
    match handshake.from.ip() {
        IpAddr::V4(ip) => {
            out.push(4);
            out.extend_from_slice(&ip.octets());
        }
        IpAddr::V6(ip) => {
            out.push(6);
            out.extend_from_slice(&ip.octets());
        }
    }
    out.extend_from_slice(&handshake.from.port().to_be_bytes());
    push_crc(out, start);
    Ok(())
}

/// Decodes the handshake at the front of `buf`.
pub fn decode_handshake(buf: &[u8]) -> Result<Decoded<Handshake>, HandshakeError> {
    let mut r = Reader::new(buf);
    let step = (|| {
        let magic = r.u32()?;
        if magic != HANDSHAKE_MAGIC {
            return Err(Step::Bad(HandshakeError::BadMagic { got: magic }));
        }
        let version = r.u8()?;
        let kind_code = r.u8()?;
        let name = r.name()?;
        let ip = match r.u8()? {
            4 => IpAddr::V4(Ipv4Addr::from(r.array::<4, HandshakeError>()?)),
            6 => IpAddr::V6(Ipv6Addr::from(r.array::<16, HandshakeError>()?)),
            other => return Err(Step::Bad(HandshakeError::BadAddressFamily(other))),
        };
        let port = r.u16()?;
        let covered = r.pos;
        let expected = r.u32()?;
        check_crc(buf, covered, expected)
            .map_err(|(expected, got)| HandshakeError::ChecksumMismatch { expected, got })?;
        let kind = ConnectionKind::try_from(kind_code).map_err(HandshakeError::BadConnectionKind)?;
        let cluster_name = String::from_utf8(name.to_vec()).map_err(|_| HandshakeError::NameNotUtf8)?;
        Ok(Handshake { version, kind, cluster_name, from: Endpoint::new(ip, port) })
    })();
    finish(step, r.pos)
}

/// Appends a handshake reply to `out`.
pub fn encode_handshake_reply(out: &mut Vec<u8>, reply: &HandshakeReply) -> Result<(), HandshakeError> {
    let start = out.len();
    out.extend_from_slice(&HANDSHAKE_REPLY_MAGIC.to_be_bytes());
    out.push(reply.version);
    out.push(reply.status as u8);
    push_name(out, &reply.cluster_name)?;
    push_crc(out, start);
    Ok(())
}

/// Decodes the handshake reply at the front of `buf`.
pub fn decode_handshake_reply(buf: &[u8]) -> Result<Decoded<HandshakeReply>, HandshakeError> {
    let mut r = Reader::new(buf);
    let step = (|| {
        let magic = r.u32()?;
        if magic != HANDSHAKE_REPLY_MAGIC {
            return Err(Step::Bad(HandshakeError::BadMagic { got: magic }));
        }
        let version = r.u8()?;
        let status_code = r.u8()?;
        let name = r.name()?;
        let covered = r.pos;
        let expected = r.u32()?;
        check_crc(buf, covered, expected)
            .map_err(|(expected, got)| HandshakeError::ChecksumMismatch { expected, got })?;
        let status = HandshakeStatus::try_from(status_code)?;
        let cluster_name = String::from_utf8(name.to_vec()).map_err(|_| HandshakeError::NameNotUtf8)?;
        Ok(HandshakeReply { version, status, cluster_name })
    })();
    finish(step, r.pos)
}

fn push_name(out: &mut Vec<u8>, name: &str) -> Result<(), HandshakeError> {
    let len = u16::try_from(name.len())
        .ok()
        .filter(|&n| usize::from(n) <= MAX_CLUSTER_NAME_BYTES)
        .ok_or(HandshakeError::NameTooLong { len: name.len(), max: MAX_CLUSTER_NAME_BYTES })?;
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(name.as_bytes());
    Ok(())
}

/// Appends the CRC32 of `out[start..]`.
fn push_crc(out: &mut Vec<u8>, start: usize) {
    let crc = crc32fast::hash(out.get(start..).unwrap_or_default());
    out.extend_from_slice(&crc.to_be_bytes());
}

/// Compares `expected` with the CRC32 of `buf[..covered]`; on a mismatch gives (expected, got).
fn check_crc(buf: &[u8], covered: usize, expected: u32) -> Result<(), (u32, u32)> {
    let got = crc32fast::hash(buf.get(..covered).unwrap_or_default());
    if got == expected {
        Ok(())
    } else {
        Err((expected, got))
    }
}

/// Why decoding stopped: not enough bytes yet (the total needed), or bad bytes.
enum Step<E> {
    Short(usize),
    Bad(E),
}

impl<E> From<E> for Step<E> {
    fn from(e: E) -> Step<E> {
        Step::Bad(e)
    }
}

fn finish<T, E>(step: Result<T, Step<E>>, used: usize) -> Result<Decoded<T>, E> {
    match step {
        Ok(value) => Ok(Decoded::Complete { value, used }),
        Err(Step::Short(need)) => Ok(Decoded::Incomplete { need }),
        Err(Step::Bad(e)) => Err(e),
    }
}

/// Reads big-endian fields from the front of a buffer, never past its end.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    fn take<E>(&mut self, n: usize) -> Result<&'a [u8], Step<E>> {
        let end = self.pos.saturating_add(n);
        let bytes = self.buf.get(self.pos..end).ok_or(Step::Short(end))?;
        self.pos = end;
        Ok(bytes)
    }

    fn array<const N: usize, E>(&mut self) -> Result<[u8; N], Step<E>> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn u8<E>(&mut self) -> Result<u8, Step<E>> {
        Ok(u8::from_be_bytes(self.array()?))
    }

    fn u16<E>(&mut self) -> Result<u16, Step<E>> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    fn u32<E>(&mut self) -> Result<u32, Step<E>> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    fn u64<E>(&mut self) -> Result<u64, Step<E>> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    /// A u16-length-prefixed cluster name, its length checked before its bytes are awaited.
    fn name(&mut self) -> Result<&'a [u8], Step<HandshakeError>> {
        let len = usize::from(self.u16()?);
        if len > MAX_CLUSTER_NAME_BYTES {
            return Err(Step::Bad(HandshakeError::NameTooLong { len, max: MAX_CLUSTER_NAME_BYTES }));
        }
        self.take(len)
    }
}

#[cfg(test)]
#[path = "codec_tests.rs"]
mod tests;
