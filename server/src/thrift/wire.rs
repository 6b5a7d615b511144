//! Finding where one Thrift binary-protocol message ends, without decoding it.
//!
//! Framed clients prefix each message with its length; unframed clients do not, so for them we
//! walk the message's structure (field types and lengths) over the bytes received so far. This
//! lets the front end read a whole message into memory asynchronously and hand it to the
//! method table (`thrift::dispatch`) in one piece.
//!
//! Byte order: big-endian, as the binary protocol defines.

/// The result of measuring a buffer.
#[derive(Debug, PartialEq, Eq)]
pub enum Measure {
    /// A complete message of this many bytes is at the start of the buffer.
    Complete(usize),
    /// More bytes are needed.
    Incomplete,
    /// The bytes are not a binary-protocol message.
    Invalid(&'static str),
}

/// Thrift's wire types, the binary protocol's type byte: for the codecs written by hand (the
/// 0.6 router's look at arguments, the point reads' replies).
pub(crate) mod ttype {
    pub const STOP: u8 = 0;
    pub const BOOL: u8 = 2;
    pub const I32: u8 = 8;
    pub const I64: u8 = 10;
    /// String or binary.
    pub const STRING: u8 = 11;
    pub const STRUCT: u8 = 12;
    pub const MAP: u8 = 13;
    pub const LIST: u8 = 15;
}

const VERSION_MASK: u32 = 0xffff_0000;
const VERSION_1: u32 = 0x8001_0000;
/// Nesting deeper than this is refused.
const MAX_DEPTH: usize = 64;

/// A walk over the unframed message at the start of a buffer that can stop for want of bytes and
/// go on from there once more have arrived. Walking again from the start after every read would
/// cost time in the square of the message's size: a big message trickled in small pieces (a slow
/// or hostile client) kept the event loop busy for seconds.
#[derive(Debug, Default)]
pub struct Scan {
    /// Bytes walked: every item before this offset is whole.
    pos: usize,
    /// The containers open at `pos`, innermost last; empty before the header is read.
    open: Vec<Open>,
    /// The message ended at `pos`.
    complete: bool,
}

#[derive(Debug, Clone, Copy)]
enum Open {
    /// A struct's fields, up to its STOP byte.
    Fields,
    /// `left` more values of type `ttype` (a list or set).
    Values { ttype: u8, left: usize },
    /// `left` more keys and values, alternating, starting with a key when `left` is even.
    Entries { key: u8, value: u8, left: usize },
}

enum Step {
    Incomplete,
    Invalid(&'static str),
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], Step> {
        if self.buf.len() - self.pos < n {
            return Err(Step::Incomplete);
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, Step> {
        Ok(self.take(1)?[0])
    }

    fn i32(&mut self) -> Result<i32, Step> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn skip(&mut self, n: usize) -> Result<(), Step> {
        self.take(n).map(|_| ())
    }

    fn len(&mut self) -> Result<usize, Step> {
        let n = self.i32()?;
        usize::try_from(n).map_err(|_| Step::Invalid("negative length"))
    }

    /// Reads the start of one value of type `ttype`: a whole scalar or string, or a container's
    /// header, returned to be walked next.
    fn value(&mut self, ttype: u8) -> Result<Option<Open>, Step> {
        match ttype {
            2 | 3 => self.skip(1)?,  // bool, byte
            6 => self.skip(2)?,      // i16
            8 => self.skip(4)?,      // i32
            4 | 10 => self.skip(8)?, // double, i64
            11 => {
                // string / binary
                let n = self.len()?;
                self.skip(n)?;
            }
            12 => return Ok(Some(Open::Fields)),
            13 => {
                let key = self.u8()?;
                let value = self.u8()?;
                let n = self.len()?;
                return Ok(Some(Open::Entries { key, value, left: n.saturating_mul(2) }));
            }
            14 | 15 => {
                let ttype = self.u8()?;
                let left = self.len()?;
                return Ok(Some(Open::Values { ttype, left }));
            }
            _ => return Err(Step::Invalid("unknown field type")),
        }
        Ok(None)
    }
}

impl Scan {
    /// Walks on over `buf`, which must hold the bytes of the earlier walks unchanged, plus more.
    /// Once a message is complete, this keeps answering `Complete` without walking; start a new
    /// `Scan` for the next message.
    pub fn measure(&mut self, buf: &[u8]) -> Measure {
        match self.walk(buf) {
            Ok(()) => Measure::Complete(self.pos),
            Err(Step::Incomplete) => Measure::Incomplete,
            Err(Step::Invalid(why)) => Measure::Invalid(why),
        }
    }

    fn walk(&mut self, buf: &[u8]) -> Result<(), Step> {
        if self.complete {
            return Ok(());
        }
        if self.open.is_empty() {
            let mut c = Cursor { buf, pos: 0 };
            let header = c.i32()? as u32;
            if header & VERSION_MASK != VERSION_1 {
                return Err(Step::Invalid("not a strict binary-protocol message (bad version)"));
            }
            let name_len = c.len()?;
            c.skip(name_len)?;
            c.skip(4)?; // sequence id
            self.pos = c.pos;
            self.open.push(Open::Fields);
        }
        // Each pass consumes one whole item and records it, so a pass that runs out of bytes
        // leaves the walk at the last item boundary.
        while let Some(top) = self.open.last().copied() {
            let mut c = Cursor { buf, pos: self.pos };
            let (rest, inner) = match top {
                Open::Fields => {
                    let ttype = c.u8()?;
                    if ttype == 0 {
                        (None, None) // STOP
                    } else {
                        c.skip(2)?; // field id
                        (Some(top), c.value(ttype)?)
                    }
                }
                Open::Values { left: 0, .. } | Open::Entries { left: 0, .. } => (None, None),
                Open::Values { ttype, left } => (Some(Open::Values { ttype, left: left - 1 }), c.value(ttype)?),
                Open::Entries { key, value, left } => {
                    let ttype = if left % 2 == 0 { key } else { value };
                    (Some(Open::Entries { key, value, left: left - 1 }), c.value(ttype)?)
                }
            };
            self.pos = c.pos;
            self.open.pop();
            self.open.extend(rest);
            if let Some(inner) = inner {
                if self.open.len() >= MAX_DEPTH {
                    return Err(Step::Invalid("nesting too deep"));
                }
                self.open.push(inner);
            }
            if self.open.is_empty() {
                self.complete = true;
                return Ok(());
            }
        }
        Ok(())
    }
}

/// Measures the unframed message at the start of `buf` (strict binary protocol, which every
/// Cassandra client sends) in one walk.
pub fn measure_unframed(buf: &[u8]) -> Measure {
    Scan::default().measure(buf)
}

/// True when a connection's first byte says it speaks unframed strict binary protocol (the
/// version word starts with 0x80); framed connections start with a positive length.
pub fn looks_unframed(first_byte: u8) -> bool {
    first_byte & 0x80 != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(body: &[u8]) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend_from_slice(&0x8001_0001u32.to_be_bytes());
        m.extend_from_slice(&3i32.to_be_bytes());
        m.extend_from_slice(b"get");
        m.extend_from_slice(&7i32.to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    #[test]
    fn measures_nested_message_and_needs_every_byte() {
        // field 1: string "key"; field 2: struct { field 3: list<i32> [1, 2] }; STOP
        let mut body = vec![11, 0, 1];
        body.extend_from_slice(&3i32.to_be_bytes());
        body.extend_from_slice(b"key");
        body.extend_from_slice(&[12, 0, 2, 15, 0, 3, 8]);
        body.extend_from_slice(&2i32.to_be_bytes());
        body.extend_from_slice(&1i32.to_be_bytes());
        body.extend_from_slice(&2i32.to_be_bytes());
        body.extend_from_slice(&[0, 0]);
        let m = message(&body);
        assert_eq!(measure_unframed(&m), Measure::Complete(m.len()));
        for cut in 0..m.len() {
            assert_eq!(measure_unframed(&m[..cut]), Measure::Incomplete, "cut at {cut}");
        }
        let mut two = m.clone();
        two.extend_from_slice(&m);
        assert_eq!(measure_unframed(&two), Measure::Complete(m.len()));
    }

    #[test]
    fn rejects_garbage_without_panicking() {
        assert!(matches!(measure_unframed(b"GET / HTTP/1.1\r\n"), Measure::Invalid(_)));
        let mut m = message(&[]);
        m.extend_from_slice(&[99, 0, 1]); // a field of unknown type 99
        assert!(matches!(measure_unframed(&m), Measure::Invalid(_)));
        let mut m = message(&[11, 0, 1]);
        m.extend_from_slice(&(-5i32).to_be_bytes());
        assert!(matches!(measure_unframed(&m), Measure::Invalid(_)));
        // Deep nesting is refused, not recursed without bound.
        let mut m = message(&[]);
        for _ in 0..1000 {
            m.extend_from_slice(&[12, 0, 1]);
        }
        assert!(matches!(measure_unframed(&m), Measure::Invalid(_) | Measure::Incomplete));
    }

    #[test]
    fn a_walk_goes_on_where_the_last_one_stopped() {
        // field 1: list<struct> of 300 structs { field 1: string "v"; field 2: map<i32,i32> {1: 2} }
        let mut body = vec![15, 0, 1, 12];
        body.extend_from_slice(&300i32.to_be_bytes());
        for _ in 0..300 {
            body.extend_from_slice(&[
                11, 0, 1, 0, 0, 0, 1, b'v', 13, 0, 2, 8, 8, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0,
            ]);
        }
        body.push(0);
        let m = message(&body);
        for piece in [1, 3, 7, 64, 1000] {
            let mut scan = Scan::default();
            let mut have = 0;
            let found = loop {
                have = (have + piece).min(m.len());
                match scan.measure(&m[..have]) {
                    Measure::Incomplete => assert!(have < m.len(), "incomplete with every byte, pieces of {piece}"),
                    other => break other,
                }
            };
            assert_eq!(found, Measure::Complete(m.len()), "pieces of {piece}");
        }
    }

    proptest::proptest! {
        /// Any bytes, fed in pieces of any size: the resumed walk agrees with one walk.
        #[test]
        fn a_resumed_walk_agrees_with_one_walk(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300), piece in 1usize..40) {
            let mut m = message(&[]);
            m.extend_from_slice(&bytes);
            let whole = measure_unframed(&m);
            let mut scan = Scan::default();
            let mut have = 0;
            let resumed = loop {
                have = (have + piece).min(m.len());
                match scan.measure(&m[..have]) {
                    Measure::Incomplete if have < m.len() => continue,
                    other => break other,
                }
            };
            proptest::prop_assert_eq!(resumed, whole);
        }

        /// Any bytes at all: measuring never panics, and a complete message never claims more
        /// bytes than the buffer holds.
        #[test]
        fn measuring_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            if let Measure::Complete(n) = measure_unframed(&bytes) {
                proptest::prop_assert!(n <= bytes.len());
            }
        }

        /// A valid message with one byte changed anywhere: still no panic.
        #[test]
        fn measuring_a_damaged_message_never_panics(at in 0usize..40, byte in proptest::num::u8::ANY) {
            let mut body = vec![11, 0, 1];
            body.extend_from_slice(&3i32.to_be_bytes());
            body.extend_from_slice(b"key");
            body.extend_from_slice(&[15, 0, 2, 11]);
            body.extend_from_slice(&2i32.to_be_bytes());
            for _ in 0..2 {
                body.extend_from_slice(&1i32.to_be_bytes());
                body.push(b'x');
            }
            body.push(0);
            let mut m = message(&body);
            let at = at % m.len();
            m[at] = byte;
            let _ = measure_unframed(&m);
        }
    }
}
