//! A small client of Cassandra's native protocol (v3/v4) for end-to-end tests: frames written
//! and read by hand over a blocking socket, bodies built with [`Body`] and read with [`Cursor`].
//! It trusts nothing: every read is checked, and a short or malformed answer fails the test
//! with what was received.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::CLIENT_IO_TIMEOUT;

pub const ERROR: u8 = 0x00;
pub const STARTUP: u8 = 0x01;
pub const READY: u8 = 0x02;
pub const AUTHENTICATE: u8 = 0x03;
pub const OPTIONS: u8 = 0x05;
pub const SUPPORTED: u8 = 0x06;
pub const QUERY: u8 = 0x07;
pub const RESULT: u8 = 0x08;
pub const PREPARE: u8 = 0x09;
pub const EXECUTE: u8 = 0x0A;
pub const REGISTER: u8 = 0x0B;
pub const EVENT: u8 = 0x0C;
pub const BATCH: u8 = 0x0D;
pub const AUTH_RESPONSE: u8 = 0x0F;
pub const AUTH_SUCCESS: u8 = 0x10;

pub const FLAG_COMPRESSED: u8 = 0x01;
pub const FLAG_TRACING: u8 = 0x02;
pub const FLAG_WARNING: u8 = 0x08;

pub const CL_ONE: u16 = 0x0001;
pub const CL_QUORUM: u16 = 0x0004;

/// A frame as received: the version byte as sent (0x80 set), and the body decompressed. With
/// the WARNING flag, the [string list] of warnings is taken out of the body (which keeps a
/// trace session id before it, if there is one) into `warnings`.
#[derive(Debug, Clone)]
pub struct Frame {
    pub version: u8,
    pub flags: u8,
    pub stream: i16,
    pub opcode: u8,
    pub body: Vec<u8>,
    pub warnings: Vec<String>,
}

impl Frame {
    pub fn cursor(&self) -> Cursor<'_> {
        Cursor { b: &self.body, at: 0 }
    }

    /// (code, message) of an ERROR frame; panics on anything else.
    pub fn error(&self) -> (i32, String) {
        assert_eq!(self.opcode, ERROR, "expected an ERROR, got {self:?}");
        let mut c = self.cursor();
        (c.int(), c.string())
    }

    /// The RESULT kind; panics on anything else (an ERROR shows its message).
    pub fn result_kind(&self) -> i32 {
        if self.opcode == ERROR {
            panic!("expected a RESULT, got error {:?}", self.error());
        }
        assert_eq!(self.opcode, RESULT, "expected a RESULT, got {self:?}");
        self.cursor().int()
    }
}

/// Which compression a connection agreed on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    Lz4,
    Snappy,
}

impl Compression {
    fn name(self) -> &'static str {
        match self {
            Compression::Lz4 => "lz4",
            Compression::Snappy => "snappy",
        }
    }

    fn compress(self, body: &[u8]) -> Vec<u8> {
        match self {
            Compression::Lz4 => {
                let mut out = (body.len() as u32).to_be_bytes().to_vec();
                out.extend(lz4_flex::block::compress(body));
                out
            }
            Compression::Snappy => snap::raw::Encoder::new().compress_vec(body).expect("snappy compresses"),
        }
    }

    fn decompress(self, body: &[u8]) -> Vec<u8> {
        match self {
            Compression::Lz4 => {
                let len = u32::from_be_bytes(body[..4].try_into().expect("lz4 length")) as usize;
                lz4_flex::block::decompress(&body[4..], len).expect("valid lz4 block")
            }
            Compression::Snappy => snap::raw::Decoder::new().decompress_vec(body).expect("valid snappy block"),
        }
    }
}

/// A connection speaking one protocol version.
pub struct NativeClient {
    socket: TcpStream,
    pub version: u8,
    compression: Option<Compression>,
    /// Compressed frames received so far (to check the server compresses).
    pub compressed_frames: usize,
}

impl NativeClient {
    pub fn connect(addr: SocketAddr, version: u8) -> NativeClient {
        let socket = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("connect to the native port {addr}: {e}"));
        socket.set_read_timeout(Some(CLIENT_IO_TIMEOUT)).expect("read timeout");
        socket.set_write_timeout(Some(CLIENT_IO_TIMEOUT)).expect("write timeout");
        let _ = socket.set_nodelay(true);
        NativeClient { socket, version, compression: None, compressed_frames: 0 }
    }

    /// Connects, STARTUPs (with `compression` if any) and expects READY.
    pub fn ready(addr: SocketAddr, version: u8, compression: Option<Compression>) -> NativeClient {
        let mut c = NativeClient::connect(addr, version);
        let answer = c.startup(compression);
        assert_eq!(answer.opcode, READY, "STARTUP answered {answer:?}");
        c
    }

    pub fn set_read_timeout(&self, t: Duration) {
        self.socket.set_read_timeout(Some(t)).expect("read timeout");
    }

    /// The raw bytes of a frame header and body, uncompressed.
    pub fn frame_bytes(version: u8, flags: u8, stream: i16, opcode: u8, body: &[u8]) -> Vec<u8> {
        let mut out = vec![version, flags];
        out.extend(stream.to_be_bytes());
        out.push(opcode);
        out.extend((body.len() as u32).to_be_bytes());
        out.extend(body);
        out
    }

    pub fn write_raw(&mut self, bytes: &[u8]) {
        self.socket.write_all(bytes).expect("write to the native port");
    }

    /// Sends a request, compressed when compression was agreed (STARTUP never is).
    pub fn send(&mut self, flags: u8, stream: i16, opcode: u8, body: &[u8]) {
        let bytes = match self.compression {
            Some(c) if opcode != STARTUP => {
                Self::frame_bytes(self.version, flags | FLAG_COMPRESSED, stream, opcode, &c.compress(body))
            }
            _ => Self::frame_bytes(self.version, flags, stream, opcode, body),
        };
        self.write_raw(&bytes);
    }

    /// The next frame, or None when the server closed the connection.
    pub fn try_recv(&mut self) -> Option<Frame> {
        let mut first = [0u8; 1];
        match self.socket.read(&mut first) {
            Ok(0) => return None,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::ConnectionReset) => return None,
            Err(e) => panic!("reading a frame: {e}"),
        }
        Some(self.rest_of_frame(first[0]))
    }

    /// The next frame if one starts within `within` (None if none did); a close panics.
    pub fn recv_within(&mut self, within: Duration) -> Option<Frame> {
        self.set_read_timeout(within.max(Duration::from_millis(1)));
        let mut first = [0u8; 1];
        let read = self.socket.read(&mut first);
        self.set_read_timeout(CLIENT_IO_TIMEOUT);
        match read {
            Ok(0) => panic!("the server closed the connection"),
            Ok(_) => Some(self.rest_of_frame(first[0])),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => None,
            Err(e) => panic!("reading a frame: {e}"),
        }
    }

    /// The frame whose first byte (the version) was `first`.
    fn rest_of_frame(&mut self, first: u8) -> Frame {
        // Versions 1 and 2 answer with an 8-byte header.
        let short = first & 0x7F < 3;
        let mut rest = vec![0u8; if short { 7 } else { 8 }];
        self.socket.read_exact(&mut rest).expect("a whole frame header");
        let (stream, opcode, len) = if short {
            (i16::from(rest[1] as i8), rest[2], u32::from_be_bytes(rest[3..7].try_into().expect("4 bytes")))
        } else {
            (
                i16::from_be_bytes([rest[1], rest[2]]),
                rest[3],
                u32::from_be_bytes(rest[4..8].try_into().expect("4 bytes")),
            )
        };
        let mut body = vec![0u8; len as usize];
        self.socket.read_exact(&mut body).expect("a whole frame body");
        let flags = rest[0];
        if flags & FLAG_COMPRESSED != 0 {
            let c = self.compression.expect("a compressed frame on a connection without compression");
            body = c.decompress(&body);
            self.compressed_frames += 1;
        }
        let mut warnings = Vec::new();
        if flags & FLAG_WARNING != 0 {
            let at = if flags & FLAG_TRACING != 0 { 16 } else { 0 };
            let mut c = Cursor { b: &body, at };
            warnings = c.string_list();
            body.drain(at..c.at);
        }
        Frame { version: first, flags, stream, opcode, body, warnings }
    }

    /// The next frame if one comes within the read timeout; None on a close, a timeout or a
    /// reset (for tests that send garbage and only bound what comes back).
    pub fn recv_quietly(&mut self) -> Option<Frame> {
        let mut header = [0u8; 9];
        self.socket.read_exact(&mut header).ok()?;
        let len = u32::from_be_bytes(header[5..9].try_into().expect("4 bytes")) as usize;
        assert!(len < 1 << 20, "a response of {len} bytes to a small request");
        let mut body = vec![0u8; len];
        self.socket.read_exact(&mut body).ok()?;
        let stream = i16::from_be_bytes([header[2], header[3]]);
        Some(Frame { version: header[0], flags: header[1], stream, opcode: header[4], body, warnings: Vec::new() })
    }

    pub fn recv(&mut self) -> Frame {
        self.try_recv().expect("the server closed the connection")
    }

    /// Sends and waits for the answer on the same stream (events in between are skipped).
    pub fn request(&mut self, flags: u8, opcode: u8, body: &[u8]) -> Frame {
        self.send(flags, 1, opcode, body);
        loop {
            let f = self.recv();
            if f.stream == 1 {
                return f;
            }
            assert_eq!(f.opcode, EVENT, "unexpected frame on stream {}: {f:?}", f.stream);
        }
    }

    pub fn startup(&mut self, compression: Option<Compression>) -> Frame {
        let mut options = vec![("CQL_VERSION", "3.0.0")];
        if let Some(c) = compression {
            options.push(("COMPRESSION", c.name()));
        }
        self.send(0, 1, STARTUP, &Body::new().string_map(&options).0);
        self.compression = compression;
        self.recv()
    }

    /// QUERY with no values at `cl`.
    pub fn query(&mut self, q: &str) -> Frame {
        self.request(0, QUERY, &Body::new().long_string(q).short(CL_ONE).byte(0).0)
    }

    /// QUERY that must answer a RESULT of `kind`; returns the frame.
    pub fn query_ok(&mut self, q: &str, kind: i32) -> Frame {
        let f = self.query(q);
        assert_eq!(f.result_kind(), kind, "{q}");
        f
    }

    /// PREPARE; returns the id and the whole frame.
    pub fn prepare(&mut self, q: &str) -> (Vec<u8>, Frame) {
        let f = self.request(0, PREPARE, &Body::new().long_string(q).0);
        assert_eq!(f.result_kind(), 4, "PREPARE {q}");
        let mut c = f.cursor();
        c.int();
        (c.short_bytes(), f)
    }

    /// EXECUTE with positional values (None: null).
    pub fn execute(&mut self, id: &[u8], values: &[Option<&[u8]>]) -> Frame {
        let mut b = Body::new().short_bytes(id).short(CL_ONE);
        b = if values.is_empty() { b.byte(0) } else { b.byte(0x01).short(values.len() as u16) };
        for v in values {
            b = b.value(*v);
        }
        self.request(0, EXECUTE, &b.0)
    }
}

/// A list or set of texts as a CQL value, as protocol v3 on (and Thrift's CQL calls) serialize
/// it: an int count, then each element as an int length and its bytes.
pub fn text_list(items: &[&str]) -> Vec<u8> {
    let mut out = (items.len() as i32).to_be_bytes().to_vec();
    for i in items {
        out.extend((i.len() as i32).to_be_bytes());
        out.extend(i.as_bytes());
    }
    out
}

/// Builds a body.
#[derive(Default)]
pub struct Body(pub Vec<u8>);

impl Body {
    pub fn new() -> Body {
        Body(Vec::new())
    }
    pub fn byte(mut self, v: u8) -> Body {
        self.0.push(v);
        self
    }
    pub fn short(mut self, v: u16) -> Body {
        self.0.extend(v.to_be_bytes());
        self
    }
    pub fn int(mut self, v: i32) -> Body {
        self.0.extend(v.to_be_bytes());
        self
    }
    pub fn long(mut self, v: i64) -> Body {
        self.0.extend(v.to_be_bytes());
        self
    }
    pub fn string(self, s: &str) -> Body {
        let mut b = self.short(s.len() as u16);
        b.0.extend(s.as_bytes());
        b
    }
    pub fn long_string(self, s: &str) -> Body {
        let mut b = self.int(s.len() as i32);
        b.0.extend(s.as_bytes());
        b
    }
    pub fn short_bytes(self, v: &[u8]) -> Body {
        let mut b = self.short(v.len() as u16);
        b.0.extend(v);
        b
    }
    /// [value]/[bytes]: None is null.
    pub fn value(self, v: Option<&[u8]>) -> Body {
        match v {
            None => self.int(-1),
            Some(v) => {
                let mut b = self.int(v.len() as i32);
                b.0.extend(v);
                b
            }
        }
    }
    pub fn string_map(self, pairs: &[(&str, &str)]) -> Body {
        let mut b = self.short(pairs.len() as u16);
        for (k, v) in pairs {
            b = b.string(k).string(v);
        }
        b
    }
    pub fn string_list(self, items: &[&str]) -> Body {
        let mut b = self.short(items.len() as u16);
        for s in items {
            b = b.string(s);
        }
        b
    }
}

/// Reads a body; panics (failing the test) on anything short.
pub struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        assert!(self.at + n <= self.b.len(), "body too short: need {n} at {} of {:?}", self.at, self.b);
        let out = &self.b[self.at..self.at + n];
        self.at += n;
        out
    }
    pub fn byte(&mut self) -> u8 {
        self.take(1)[0]
    }
    pub fn short(&mut self) -> u16 {
        u16::from_be_bytes(self.take(2).try_into().expect("2 bytes"))
    }
    pub fn int(&mut self) -> i32 {
        i32::from_be_bytes(self.take(4).try_into().expect("4 bytes"))
    }
    pub fn string(&mut self) -> String {
        let n = self.short() as usize;
        String::from_utf8(self.take(n).to_vec()).expect("UTF-8 string")
    }
    pub fn string_list(&mut self) -> Vec<String> {
        let n = self.short();
        (0..n).map(|_| self.string()).collect()
    }
    pub fn short_bytes(&mut self) -> Vec<u8> {
        let n = self.short() as usize;
        self.take(n).to_vec()
    }
    pub fn bytes(&mut self) -> Option<Vec<u8>> {
        let n = self.int();
        (n >= 0).then(|| self.take(n as usize).to_vec())
    }
    /// An [inet]: address length, address, port.
    pub fn inet(&mut self) -> SocketAddr {
        let ip: std::net::IpAddr = match self.byte() {
            4 => <[u8; 4]>::try_from(self.take(4)).expect("4 bytes").into(),
            16 => <[u8; 16]>::try_from(self.take(16)).expect("16 bytes").into(),
            n => panic!("an inet of {n} bytes"),
        };
        SocketAddr::new(ip, self.int() as u16)
    }
    pub fn uuid(&mut self) -> [u8; 16] {
        self.take(16).try_into().expect("16 bytes")
    }
    pub fn is_done(&self) -> bool {
        self.at == self.b.len()
    }
}

/// A ROWS result decoded: column (keyspace, table, name, type id) and rows.
#[derive(Debug, PartialEq)]
pub struct Rows {
    pub columns: Vec<(String, String, String, u16)>,
    pub rows: Vec<Vec<Option<Vec<u8>>>>,
    /// Whether the metadata had the global table spec flag.
    pub global: bool,
}

/// Decodes a RESULT of kind Rows (custom types' class names are skipped).
pub fn rows(f: &Frame) -> Rows {
    assert_eq!(f.result_kind(), 2, "a ROWS result");
    let mut c = f.cursor();
    c.int();
    let flags = c.int();
    let count = c.int() as usize;
    let global = flags & 0x0001 != 0;
    assert_eq!(flags & 0x0004, 0, "metadata is present");
    let table = if global { Some((c.string(), c.string())) } else { None };
    let mut columns = Vec::new();
    for _ in 0..count {
        let (ks, t) = table.clone().unwrap_or_else(|| (c.string(), c.string()));
        let name = c.string();
        let ty = c.short();
        if ty == 0 {
            c.string();
        }
        columns.push((ks, t, name, ty));
    }
    let n = c.int();
    let rows = (0..n).map(|_| (0..count).map(|_| c.bytes()).collect()).collect();
    assert!(c.is_done(), "bytes left after the rows");
    Rows { columns, rows, global }
}
