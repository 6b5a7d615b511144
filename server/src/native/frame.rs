//! Frames of Cassandra's native protocol, versions 3 and 4 (`native_protocol_v4.spec` §2, §5).
//!
//! Every frame is a 9-byte header then its body; big-endian throughout:
//!
//! ```text
//!  0         1       2        4        5                 9
//!  +---------+-------+--------+--------+-----------------+----------------------+
//!  | version | flags | stream | opcode | length (u32)    | body (length bytes)  |
//!  +---------+-------+--------+--------+-----------------+----------------------+
//! ```
//!
//! `version` is 3 or 4 in a request and has 0x80 added in a response; `stream` (i16) is the
//! client's id for the request, echoed in its response (events use -1); `length` counts the
//! body as sent, compressed when flag 0x01 is set. Versions 1 and 2 had an 8-byte header with a
//! one-byte stream: a client of those gets its refusal in that header, so that it can read it
//! and step up (the drivers step down from v4/v5 the same way).
//!
//! A compressed body is, for lz4, a 4-byte big-endian uncompressed length then one lz4 block;
//! for snappy, one raw (unframed) snappy block. Decompression is bounded by the frame limit,
//! whatever the block claims.

use std::fmt;

/// Bytes of a v3/v4 header.
pub const HEADER_LEN: usize = 9;

/// Flag bits of the header.
pub mod flags {
    /// The body is compressed with the algorithm agreed at STARTUP.
    pub const COMPRESSED: u8 = 0x01;
    /// The request asks to be traced; in a response, the body starts with the session id.
    pub const TRACING: u8 = 0x02;
    /// v4: the body starts with a [bytes map] of custom payload.
    pub const CUSTOM_PAYLOAD: u8 = 0x04;
    /// v4: the response body starts with a [string list] of warnings.
    pub const WARNING: u8 = 0x08;
}

/// The protocol versions served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    V3 = 3,
    V4 = 4,
}

impl TryFrom<u8> for Version {
    type Error = u8;

    fn try_from(v: u8) -> Result<Version, u8> {
        match v {
            3 => Ok(Version::V3),
            4 => Ok(Version::V4),
            other => Err(other),
        }
    }
}

impl Version {
    pub fn byte(self) -> u8 {
        self as u8
    }
}

/// What a version refusal lists (3.11 would add "5/v5-beta"; Sibyl has no v5).
pub const SUPPORTED_VERSIONS: &[&str] = &["3/v3", "4/v4"];

/// Message kinds (spec §2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opcode {
    Error = 0x00,
    Startup = 0x01,
    Ready = 0x02,
    Authenticate = 0x03,
    Options = 0x05,
    Supported = 0x06,
    Query = 0x07,
    Result = 0x08,
    Prepare = 0x09,
    Execute = 0x0A,
    Register = 0x0B,
    Event = 0x0C,
    Batch = 0x0D,
    AuthChallenge = 0x0E,
    AuthResponse = 0x0F,
    AuthSuccess = 0x10,
}

impl Opcode {
    pub fn from_byte(b: u8) -> Option<Opcode> {
        use Opcode::*;
        Some(match b {
            0x00 => Error,
            0x01 => Startup,
            0x02 => Ready,
            0x03 => Authenticate,
            0x05 => Options,
            0x06 => Supported,
            0x07 => Query,
            0x08 => Result,
            0x09 => Prepare,
            0x0A => Execute,
            0x0B => Register,
            0x0C => Event,
            0x0D => Batch,
            0x0E => AuthChallenge,
            0x0F => AuthResponse,
            0x10 => AuthSuccess,
            _ => return None,
        })
    }

    /// The name 3.11 gives it in its messages.
    pub fn name(self) -> &'static str {
        use Opcode::*;
        match self {
            Error => "ERROR",
            Startup => "STARTUP",
            Ready => "READY",
            Authenticate => "AUTHENTICATE",
            Options => "OPTIONS",
            Supported => "SUPPORTED",
            Query => "QUERY",
            Result => "RESULT",
            Prepare => "PREPARE",
            Execute => "EXECUTE",
            Register => "REGISTER",
            Event => "EVENT",
            Batch => "BATCH",
            AuthChallenge => "AUTH_CHALLENGE",
            AuthResponse => "AUTH_RESPONSE",
            AuthSuccess => "AUTH_SUCCESS",
        }
    }
}

/// The frame compressions of spec §5.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    Lz4,
    Snappy,
}

impl Compression {
    /// The STARTUP option's value (case-insensitive, as 3.11 lower-cases it).
    pub fn from_name(name: &str) -> Option<Compression> {
        match name.to_ascii_lowercase().as_str() {
            "lz4" => Some(Compression::Lz4),
            "snappy" => Some(Compression::Snappy),
            _ => None,
        }
    }

    pub fn compress(self, body: &[u8]) -> Vec<u8> {
        match self {
            Compression::Lz4 => {
                let mut out = Vec::with_capacity(4 + lz4_flex::block::get_maximum_output_size(body.len()));
                out.extend_from_slice(&(body.len() as u32).to_be_bytes());
                out.extend_from_slice(&lz4_flex::block::compress(body));
                out
            }
            Compression::Snappy => snap::raw::Encoder::new().compress_vec(body).unwrap_or_else(|_| {
                // Only a body over snappy's 4 GiB limit fails, and frames are far smaller.
                Vec::new()
            }),
        }
    }

    /// The body of a compressed frame, refused when it would inflate past `max` bytes.
    pub fn decompress(self, body: &[u8], max: usize) -> Result<Vec<u8>, FrameError> {
        let bad = |why: String| FrameError::BadCompression(why);
        match self {
            Compression::Lz4 => {
                let Some((len, block)) = body.split_first_chunk::<4>() else {
                    return Err(bad("lz4 body shorter than its 4-byte length".into()));
                };
                let len = u32::from_be_bytes(*len) as usize;
                if len > max {
                    return Err(FrameError::TooLong { length: len as u64, max: max as u64 });
                }
                lz4_flex::block::decompress(block, len).map_err(|e| bad(format!("lz4: {e}")))
            }
            Compression::Snappy => {
                let len = snap::raw::decompress_len(body).map_err(|e| bad(format!("snappy: {e}")))?;
                if len > max {
                    return Err(FrameError::TooLong { length: len as u64, max: max as u64 });
                }
                snap::raw::Decoder::new().decompress_vec(body).map_err(|e| bad(format!("snappy: {e}")))
            }
        }
    }
}

/// A request frame, its body decompressed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub version: Version,
    pub flags: u8,
    pub stream: i16,
    /// The raw opcode: an unknown one is answered by the connection, not refused here.
    pub opcode: u8,
    pub body: Vec<u8>,
}

/// Why bytes are not a request frame. `stream` is where the client can read the answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// A version other than 3 and 4: answered in that version's header if it is 1 to 4, else
    /// in v4's, then the connection closes.
    UnsupportedVersion {
        version: u8,
        stream: i16,
    },
    /// The direction bit says this is a response.
    NotARequest {
        stream: i16,
    },
    /// The body is longer than `NativeTransportMaxFrameSizeInMB` (declared or inflated).
    TooLong {
        length: u64,
        max: u64,
    },
    /// Compressed, but no compression was agreed.
    CompressedWithout {
        stream: i16,
    },
    BadCompression(String),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::UnsupportedVersion { version, .. } => write!(
                f,
                "Invalid or unsupported protocol version ({version}); supported versions are ({})",
                SUPPORTED_VERSIONS.join(", ")
            ),
            FrameError::NotARequest { .. } => f.write_str("Wrong message direction: a response sent to the server"),
            FrameError::TooLong { length, max } => {
                write!(f, "Request is too big: length {length} exceeds maximum allowed length {max}.")
            }
            FrameError::CompressedWithout { .. } => {
                f.write_str("Received a compressed frame, but no compression was agreed in STARTUP")
            }
            FrameError::BadCompression(why) => write!(f, "Cannot decompress the frame body: {why}"),
        }
    }
}

impl FrameError {
    /// The stream the refusal goes to.
    pub fn stream(&self) -> i16 {
        match self {
            FrameError::UnsupportedVersion { stream, .. }
            | FrameError::NotARequest { stream }
            | FrameError::CompressedWithout { stream } => *stream,
            FrameError::TooLong { .. } | FrameError::BadCompression(_) => 0,
        }
    }
}

/// Cuts request frames off the front of a connection's bytes.
#[derive(Clone, Copy, Debug)]
pub struct Decoder {
    /// Largest body accepted, compressed or not.
    pub max_body: usize,
}

impl Decoder {
    /// The first frame of `buf` and the bytes it took, `Ok(None)` while it is incomplete. A
    /// refused frame ends the connection, so the error need not say how long it was. The body
    /// is decompressed with `compression` when the frame says it is compressed.
    pub fn decode(&self, buf: &[u8], compression: Option<Compression>) -> Result<Option<(Frame, usize)>, FrameError> {
        let Some(&first) = buf.first() else { return Ok(None) };
        let raw_version = first & 0x7F;
        let version = match Version::try_from(raw_version) {
            Ok(v) => v,
            Err(version) => {
                // Versions 1 and 2 have a one-byte stream; every later one two bytes.
                return match (version < 3, buf.get(2), buf.get(3)) {
                    (true, Some(&s), _) => Err(FrameError::UnsupportedVersion { version, stream: i16::from(s as i8) }),
                    (false, Some(&hi), Some(&lo)) => {
                        Err(FrameError::UnsupportedVersion { version, stream: i16::from_be_bytes([hi, lo]) })
                    }
                    _ => Ok(None),
                };
            }
        };
        let Some(header) = buf.first_chunk::<HEADER_LEN>() else { return Ok(None) };
        let stream = i16::from_be_bytes([header[2], header[3]]);
        if first & 0x80 != 0 {
            return Err(FrameError::NotARequest { stream });
        }
        let length = u32::from_be_bytes([header[5], header[6], header[7], header[8]]) as usize;
        if length > self.max_body {
            return Err(FrameError::TooLong { length: length as u64, max: self.max_body as u64 });
        }
        let Some(body) = buf.get(HEADER_LEN..HEADER_LEN + length) else { return Ok(None) };
        let flags = header[1];
        let body = if flags & flags::COMPRESSED != 0 {
            let Some(c) = compression else { return Err(FrameError::CompressedWithout { stream }) };
            c.decompress(body, self.max_body)?
        } else {
            body.to_vec()
        };
        let frame = Frame { version, flags: flags & !flags::COMPRESSED, stream, opcode: header[4], body };
        Ok(Some((frame, HEADER_LEN + length)))
    }
}

/// A response frame: `version` as the client asked (0x80 is added here), the body compressed
/// with `compression` when one was agreed. Versions 1 and 2 get their 8-byte header (only
/// version refusals are sent in them).
pub fn encode(
    version: u8,
    flags: u8,
    stream: i16,
    opcode: Opcode,
    body: &[u8],
    compression: Option<Compression>,
) -> Vec<u8> {
    let (flags, body) = match compression {
        Some(c) => (flags | flags::COMPRESSED, std::borrow::Cow::Owned(c.compress(body))),
        None => (flags & !flags::COMPRESSED, std::borrow::Cow::Borrowed(body)),
    };
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.push(0x80 | (version & 0x7F));
    out.push(flags);
    if version < 3 {
        out.push(stream as i8 as u8);
    } else {
        out.extend_from_slice(&stream.to_be_bytes());
    }
    out.push(opcode as u8);
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const DECODER: Decoder = Decoder { max_body: 1 << 20 };

    fn request(version: u8, flags: u8, stream: i16, opcode: u8, body: &[u8]) -> Vec<u8> {
        let mut out = vec![version, flags];
        out.extend_from_slice(&stream.to_be_bytes());
        out.push(opcode);
        out.extend_from_slice(&(body.len() as u32).to_be_bytes());
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn a_frame_is_cut_off_whole_and_not_before() {
        let mut bytes = request(4, 0, 7, 0x05, b"abc");
        bytes.extend_from_slice(b"next");
        for short in 0..12 {
            assert_eq!(DECODER.decode(&bytes[..short], None), Ok(None), "{short} bytes");
        }
        let (frame, used) = DECODER.decode(&bytes, None).expect("decodes").expect("complete");
        assert_eq!(used, 12);
        assert_eq!(frame, Frame { version: Version::V4, flags: 0, stream: 7, opcode: 0x05, body: b"abc".to_vec() });
    }

    #[test]
    fn other_versions_are_refused_with_their_stream() {
        let v5 = request(5, 0, 300, 0x05, b"");
        assert_eq!(DECODER.decode(&v5, None), Err(FrameError::UnsupportedVersion { version: 5, stream: 300 }));
        // A v2 header: one-byte stream at offset 2.
        assert_eq!(
            DECODER.decode(&[2, 0, 9, 5, 0, 0, 0, 0], None),
            Err(FrameError::UnsupportedVersion { version: 2, stream: 9 })
        );
        let message = DECODER.decode(&v5, None).unwrap_err().to_string();
        assert_eq!(message, "Invalid or unsupported protocol version (5); supported versions are (3/v3, 4/v4)");
    }

    #[test]
    fn responses_and_long_frames_are_refused() {
        assert_eq!(DECODER.decode(&request(0x84, 0, 1, 0x05, b""), None), Err(FrameError::NotARequest { stream: 1 }));
        let mut huge = request(4, 0, 1, 0x07, b"");
        huge[5..9].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(DECODER.decode(&huge, None), Err(FrameError::TooLong { length: u32::MAX as u64, max: 1 << 20 }));
    }

    #[test]
    fn compressed_bodies_round_trip() {
        let body: Vec<u8> = (0..5000u32).flat_map(|i| (i % 7).to_be_bytes()).collect();
        for c in [Compression::Lz4, Compression::Snappy] {
            let out = encode(4, 0, 3, Opcode::Query, &body, Some(c));
            assert_eq!(out[1], flags::COMPRESSED);
            let mut back = out.clone();
            back[0] = 4;
            let (frame, used) = DECODER.decode(&back, Some(c)).expect("decodes").expect("complete");
            assert_eq!(used, out.len());
            assert_eq!(frame.body, body, "{c:?}");
            assert!(out.len() < body.len(), "{c:?} compresses a repetitive body");
        }
    }

    #[test]
    fn a_compression_bomb_is_refused_before_inflating() {
        let mut body = (u32::MAX).to_be_bytes().to_vec();
        body.extend_from_slice(&[0x1F, 0]);
        let frame = request(4, flags::COMPRESSED, 1, 0x07, &body);
        assert!(matches!(DECODER.decode(&frame, Some(Compression::Lz4)), Err(FrameError::TooLong { .. })));
        assert_eq!(
            DECODER.decode(&frame, None),
            Err(FrameError::CompressedWithout { stream: 1 }),
            "no compression agreed"
        );
    }

    #[test]
    fn v2_refusals_use_the_eight_byte_header() {
        let out = encode(2, 0, 9, Opcode::Error, b"xy", None);
        assert_eq!(out, vec![0x82, 0, 9, 0, 0, 0, 0, 2, b'x', b'y']);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Any bytes: a frame no longer than the input, an error, or a wait for more; never a
        /// panic, never more body than the limit.
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64), lz4 in any::<bool>()) {
            let c = if lz4 { Compression::Lz4 } else { Compression::Snappy };
            let small = Decoder { max_body: 32 };
            if let Ok(Some((frame, used))) = small.decode(&bytes, Some(c)) {
                prop_assert!(used <= bytes.len());
                prop_assert!(frame.body.len() <= 32);
            }
        }

        /// A valid frame with bytes changed, cut or added: the same guarantees.
        #[test]
        fn mutated_frames_never_panic(
            body in proptest::collection::vec(any::<u8>(), 0..200),
            compress in 0u8..3,
            edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6),
            cut in any::<usize>(),
        ) {
            let c = match compress { 0 => None, 1 => Some(Compression::Lz4), _ => Some(Compression::Snappy) };
            let mut bytes = encode(4, 0, 1, Opcode::Query, &body, c);
            bytes[0] = 4;
            for (at, b) in edits {
                let i = at % bytes.len();
                bytes[i] = b;
            }
            bytes.truncate(cut % (bytes.len() + 1));
            let limited = Decoder { max_body: 256 };
            if let Ok(Some((frame, used))) = limited.decode(&bytes, c) {
                prop_assert!(used <= bytes.len());
                prop_assert!(frame.body.len() <= 256);
            }
        }
    }
}
