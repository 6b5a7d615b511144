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

const VERSION_MASK: u32 = 0xffff_0000;
const VERSION_1: u32 = 0x8001_0000;
/// Nesting deeper than this is refused rather than recursed into.
const MAX_DEPTH: usize = 64;

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

enum Step {
    Incomplete,
    Invalid(&'static str),
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

    fn value(&mut self, ttype: u8, depth: usize) -> Result<(), Step> {
        if depth > MAX_DEPTH {
            return Err(Step::Invalid("nesting too deep"));
        }
        match ttype {
            2 | 3 => self.skip(1),  // bool, byte
            6 => self.skip(2),      // i16
            8 => self.skip(4),      // i32
            4 | 10 => self.skip(8), // double, i64
            11 => {
                // string / binary
                let n = self.len()?;
                self.skip(n)
            }
            12 => self.fields(depth + 1),
            13 => {
                let k = self.u8()?;
                let v = self.u8()?;
                let n = self.len()?;
                for _ in 0..n {
                    self.value(k, depth + 1)?;
                    self.value(v, depth + 1)?;
                }
                Ok(())
            }
            14 | 15 => {
                let e = self.u8()?;
                let n = self.len()?;
                for _ in 0..n {
                    self.value(e, depth + 1)?;
                }
                Ok(())
            }
            _ => Err(Step::Invalid("unknown field type")),
        }
    }

    fn fields(&mut self, depth: usize) -> Result<(), Step> {
        loop {
            let ttype = self.u8()?;
            if ttype == 0 {
                return Ok(()); // STOP
            }
            self.skip(2)?; // field id
            self.value(ttype, depth)?;
        }
    }
}

/// Measures the unframed message at the start of `buf` (strict binary protocol, which every
/// Cassandra client sends).
pub fn measure_unframed(buf: &[u8]) -> Measure {
    let mut c = Cursor { buf, pos: 0 };
    let step = (|| {
        let header = c.i32()? as u32;
        if header & VERSION_MASK != VERSION_1 {
            return Err(Step::Invalid("not a strict binary-protocol message (bad version)"));
        }
        let name_len = c.len()?;
        c.skip(name_len)?;
        c.skip(4)?; // sequence id
        c.fields(0)
    })();
    match step {
        Ok(()) => Measure::Complete(c.pos),
        Err(Step::Incomplete) => Measure::Incomplete,
        Err(Step::Invalid(why)) => Measure::Invalid(why),
    }
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

    proptest::proptest! {
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
