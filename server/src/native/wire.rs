//! The notations of spec §3 ([int], [short], [string], [bytes], [value], [string map], ...):
//! a [`Reader`] over a request body that refuses any length the bytes left cannot hold, and
//! writers appending to a response body. Big-endian throughout.

use std::net::IpAddr;

use uuid::Uuid;

/// A body that does not hold what its message needs: a protocol error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BodyError(pub String);

pub type BodyResult<T> = Result<T, BodyError>;

fn short_of(what: &str) -> BodyError {
    BodyError(format!("Not enough bytes to read {what}"))
}

/// A bound value: bytes, null, or (v4) "not set".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    Bytes(&'a [u8]),
    Null,
    Unset,
}

/// Reads a body from the front; every length is checked against the bytes left.
pub struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(body: &'a [u8]) -> Reader<'a> {
        Reader { rest: body }
    }

    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    fn take(&mut self, n: usize, what: &str) -> BodyResult<&'a [u8]> {
        if n > self.rest.len() {
            return Err(short_of(what));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self, what: &str) -> BodyResult<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub fn byte(&mut self) -> BodyResult<u8> {
        Ok(self.array::<1>("a byte")?[0])
    }

    pub fn short(&mut self) -> BodyResult<u16> {
        Ok(u16::from_be_bytes(self.array("a [short]")?))
    }

    pub fn int(&mut self) -> BodyResult<i32> {
        Ok(i32::from_be_bytes(self.array("an [int]")?))
    }

    pub fn long(&mut self) -> BodyResult<i64> {
        Ok(i64::from_be_bytes(self.array("a [long]")?))
    }

    /// [string]: a [short] length then UTF-8.
    pub fn string(&mut self) -> BodyResult<&'a str> {
        let n = self.short()? as usize;
        utf8(self.take(n, "a [string]")?)
    }

    /// [long string]: an [int] length then UTF-8.
    pub fn long_string(&mut self) -> BodyResult<&'a str> {
        let n = self.int()?;
        let n = usize::try_from(n).map_err(|_| BodyError(format!("Invalid [long string] length {n}")))?;
        utf8(self.take(n, "a [long string]")?)
    }

    /// [bytes]: an [int] length then bytes; a negative length is null.
    pub fn bytes(&mut self) -> BodyResult<Option<&'a [u8]>> {
        let n = self.int()?;
        match usize::try_from(n) {
            Ok(n) => Ok(Some(self.take(n, "a [bytes]")?)),
            Err(_) => Ok(None),
        }
    }

    /// [short bytes].
    pub fn short_bytes(&mut self) -> BodyResult<&'a [u8]> {
        let n = self.short()? as usize;
        self.take(n, "a [short bytes]")
    }

    /// [value]: -1 is null, -2 (v4 only: `unset_allowed`) not set, any other negative an error.
    pub fn value(&mut self, unset_allowed: bool) -> BodyResult<Value<'a>> {
        let n = self.int()?;
        match n {
            -1 => Ok(Value::Null),
            -2 if unset_allowed => Ok(Value::Unset),
            n if n < 0 => Err(BodyError(format!("Invalid length for a value: {n}"))),
            n => Ok(Value::Bytes(self.take(n as usize, "a [value]")?)),
        }
    }

    /// [string map]: pairs of [string], in the order sent.
    pub fn string_map(&mut self) -> BodyResult<Vec<(&'a str, &'a str)>> {
        let n = self.short()? as usize;
        // Each entry takes at least 4 bytes: no count reserves more than the body could hold.
        let mut out = Vec::with_capacity(n.min(self.remaining() / 4));
        for _ in 0..n {
            out.push((self.string()?, self.string()?));
        }
        Ok(out)
    }

    /// [string list].
    pub fn string_list(&mut self) -> BodyResult<Vec<&'a str>> {
        let n = self.short()? as usize;
        let mut out = Vec::with_capacity(n.min(self.remaining() / 2));
        for _ in 0..n {
            out.push(self.string()?);
        }
        Ok(out)
    }

    /// [bytes map] (a v4 custom payload): read and dropped, as no handler uses one.
    pub fn skip_bytes_map(&mut self) -> BodyResult<()> {
        let n = self.short()?;
        for _ in 0..n {
            self.string()?;
            self.bytes()?;
        }
        Ok(())
    }

    /// Refuses bytes left over after a message.
    pub fn finish(&self, message: &str) -> BodyResult<()> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(BodyError(format!("{} bytes left over after the {message} message", self.rest.len())))
        }
    }
}

fn utf8(b: &[u8]) -> BodyResult<&str> {
    std::str::from_utf8(b).map_err(|_| BodyError("Invalid UTF-8 in a [string]".into()))
}

/// Appends the notations to a response body.
pub trait Writer {
    fn put_short(&mut self, v: u16);
    fn put_int(&mut self, v: i32);
    fn put_string(&mut self, s: &str);
    fn put_long_string(&mut self, s: &str);
    fn put_bytes(&mut self, b: Option<&[u8]>);
    fn put_short_bytes(&mut self, b: &[u8]);
    fn put_string_list(&mut self, list: &[&str]);
    fn put_uuid(&mut self, id: Uuid);
    fn put_inet(&mut self, ip: IpAddr, port: i32);
}

impl Writer for Vec<u8> {
    fn put_short(&mut self, v: u16) {
        self.extend_from_slice(&v.to_be_bytes());
    }

    fn put_int(&mut self, v: i32) {
        self.extend_from_slice(&v.to_be_bytes());
    }

    /// Strings the server writes are names and messages; one longer than a [short] can count
    /// is cut at a character boundary rather than sent with a wrong length.
    fn put_string(&mut self, s: &str) {
        let mut end = s.len().min(u16::MAX as usize);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.put_short(end as u16);
        self.extend_from_slice(&s.as_bytes()[..end]);
    }

    fn put_long_string(&mut self, s: &str) {
        self.put_int(s.len() as i32);
        self.extend_from_slice(s.as_bytes());
    }

    fn put_bytes(&mut self, b: Option<&[u8]>) {
        match b {
            Some(b) => {
                self.put_int(b.len() as i32);
                self.extend_from_slice(b);
            }
            None => self.put_int(-1),
        }
    }

    fn put_short_bytes(&mut self, b: &[u8]) {
        self.put_short(b.len() as u16);
        self.extend_from_slice(b);
    }

    fn put_string_list(&mut self, list: &[&str]) {
        self.put_short(list.len() as u16);
        for s in list {
            self.put_string(s);
        }
    }

    fn put_uuid(&mut self, id: Uuid) {
        self.extend_from_slice(id.as_bytes());
    }

    /// [inet]: a byte of address length, the address, an [int] port.
    fn put_inet(&mut self, ip: IpAddr, port: i32) {
        match ip {
            IpAddr::V4(a) => {
                self.push(4);
                self.extend_from_slice(&a.octets());
            }
            IpAddr::V6(a) => {
                self.push(16);
                self.extend_from_slice(&a.octets());
            }
        }
        self.put_int(port);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_past_the_body_are_refused() {
        assert!(Reader::new(&[0, 5, b'a']).string().is_err());
        assert!(Reader::new(&[0x7F, 0xFF, 0xFF, 0xFF]).long_string().is_err());
        assert!(Reader::new(&[0, 0, 0, 9, 1]).bytes().is_err());
        assert!(Reader::new(&[0xFF, 0xFF]).string_map().is_err());
        assert_eq!(Reader::new(&[0xFF, 0xFF, 0xFF, 0xFF]).bytes(), Ok(None));
    }

    #[test]
    fn values_know_null_unset_and_bad_lengths() {
        let minus = |n: i32| n.to_be_bytes();
        assert_eq!(Reader::new(&minus(-1)).value(false), Ok(Value::Null));
        assert_eq!(Reader::new(&minus(-2)).value(true), Ok(Value::Unset));
        assert!(Reader::new(&minus(-2)).value(false).is_err(), "v3 has no unset");
        assert!(Reader::new(&minus(-3)).value(true).is_err());
    }

    #[test]
    fn written_strings_read_back() {
        let mut out = Vec::new();
        out.put_string("héllo");
        out.put_long_string("q");
        out.put_bytes(None);
        out.put_short_bytes(b"id");
        let mut r = Reader::new(&out);
        assert_eq!(r.string(), Ok("héllo"));
        assert_eq!(r.long_string(), Ok("q"));
        assert_eq!(r.bytes(), Ok(None));
        assert_eq!(r.short_bytes(), Ok(&b"id"[..]));
        assert!(r.finish("test").is_ok());
    }
}
