//! Partitioners: how a row key becomes a [`Token`], the ring position that decides which node owns
//! the row and the order rows are stored and scanned in (Cassandra's `org.apache.cassandra.dht`).
//!
//! | Partitioner | Token | Printed as | Minimum |
//! |---|---|---|---|
//! | Random | `abs(BigInteger(md5(key)))`, `0..=2^127` | decimal | `-1` |
//! | Murmur3 | `h1` of Cassandra's MurmurHash3 x64/128, an `i64` | decimal | `i64::MIN` |
//! | ByteOrdered | the key bytes | lowercase hex | empty |
//! | OrderPreserving | the key as a UTF-8 string | the string | `""` |
//!
//! Tokens are stored in a byte-comparable encoding (see [`token`]): comparing the bytes gives the
//! partitioner's token order. Every minimum token is the empty encoding. The others are:
//! - Random: 16 big-endian bytes of the unsigned value;
//! - Murmur3: 8 big-endian bytes of the value with its sign bit flipped (`i64::MIN` itself is the
//!   empty encoding, and no key hashes to it: Cassandra maps a hash of `i64::MIN` to `i64::MAX`);
//! - ByteOrdered: the bytes themselves;
//! - OrderPreserving: the string's UTF-16 code units, 2 big-endian bytes each. Java compares
//!   strings by UTF-16 code unit, which differs from UTF-8 byte order when a supplementary
//!   character (U+10000 and up, a surrogate pair D800..DFFF) meets a character in U+E000..U+FFFF;
//!   this encoding reproduces Java's order exactly, and lets midpoints be computed per code unit as
//!   Cassandra does, at the cost of two bytes per ASCII character.
//!
//! Functions that take tokens are total: a token not produced by the partitioner at hand (wrong
//! length, out of range) is read leniently instead of panicking; [`Partitioner::validate_token`]
//! says whether a token is well formed.

pub(crate) mod murmur3;
/// The reference MurmurHash3 x64/128, which SSTable bloom filters hash keys with.
pub use murmur3::reference_x64_128;
mod ordered;
mod range;
mod token;

#[cfg(test)]
mod tests;

use md5::{Digest, Md5};
use num_bigint::BigInt;

pub use murmur3::hash3_x64_128;
pub use range::{Bounds, KeyBound, Range};
pub use token::{DecoratedKey, Token, TokenBytes};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DhtError {
    #[error("unknown partitioner class {0:?}")]
    UnknownPartitioner(String),
    /// A real Cassandra partitioner that Sibyl does not implement.
    #[error("partitioner {0} is not supported")]
    UnsupportedPartitioner(String),
    #[error("invalid token {token:?} for {partitioner}: {reason}")]
    InvalidToken { partitioner: &'static str, token: String, reason: String },
    /// The partitioner cannot make a token from this key (OrderPreserving needs UTF-8).
    #[error("invalid key for {partitioner}: {reason}")]
    InvalidKey { partitioner: &'static str, reason: String },
}

const PACKAGE: &str = "org.apache.cassandra.dht.";

/// Cassandra partitioners that exist but that Sibyl does not implement.
const UNSUPPORTED: [&str; 2] = ["CollatingOrderPreservingPartitioner", "LocalPartitioner"];

/// Random tokens live in `0..=2^127`.
const RANDOM_MAX: u128 = 1 << 127;

/// Murmur3Partitioner computes its wrap-around arithmetic on a ring of `MAX - MIN` = 2^64 - 1.
const MURMUR_RING: i128 = i64::MAX as i128 - i64::MIN as i128;

/// UTF-16 code unit width, in bits, for OrderPreserving token arithmetic.
const UTF16_BITS: u32 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Partitioner {
    Random,
    Murmur3,
    ByteOrdered,
    OrderPreserving,
}

impl Partitioner {
    pub const ALL: [Partitioner; 4] =
        [Partitioner::Random, Partitioner::Murmur3, Partitioner::ByteOrdered, Partitioner::OrderPreserving];

    /// Short ("RandomPartitioner") or full ("org.apache.cassandra.dht.RandomPartitioner") class
    /// name. As in Cassandra's config loader, a name without a dot gets the `dht` package prefix.
    pub fn from_class_name(s: &str) -> Result<Partitioner, DhtError> {
        let name = s.trim();
        let full = if name.contains('.') { name.to_string() } else { format!("{PACKAGE}{name}") };
        if let Some(p) = Partitioner::ALL.into_iter().find(|p| p.class_name() == full) {
            return Ok(p);
        }
        match full.strip_prefix(PACKAGE) {
            Some(short) if UNSUPPORTED.contains(&short) => Err(DhtError::UnsupportedPartitioner(full)),
            _ => Err(DhtError::UnknownPartitioner(s.to_string())),
        }
    }

    /// The full class name, as `describe_partitioner` returns it.
    pub fn class_name(&self) -> &'static str {
        match self {
            Partitioner::Random => "org.apache.cassandra.dht.RandomPartitioner",
            Partitioner::Murmur3 => "org.apache.cassandra.dht.Murmur3Partitioner",
            Partitioner::ByteOrdered => "org.apache.cassandra.dht.ByteOrderedPartitioner",
            Partitioner::OrderPreserving => "org.apache.cassandra.dht.OrderPreservingPartitioner",
        }
    }

    pub fn short_name(&self) -> &'static str {
        match self {
            Partitioner::Random => "RandomPartitioner",
            Partitioner::Murmur3 => "Murmur3Partitioner",
            Partitioner::ByteOrdered => "ByteOrderedPartitioner",
            Partitioner::OrderPreserving => "OrderPreservingPartitioner",
        }
    }

    /// The key's token. The empty key maps to the minimum token, as in Cassandra.
    ///
    /// OrderPreserving needs UTF-8 keys (Cassandra throws otherwise); here an invalid key is
    /// decoded lossily (U+FFFD for bad sequences) so this stays total. Request paths should call
    /// [`Partitioner::try_token_for_key`] or [`Partitioner::validate_key`] to reject such keys.
    pub fn token_for_key(&self, key: &[u8]) -> Token {
        if key.is_empty() {
            return Token::minimum();
        }
        match self {
            Partitioner::Random => random_encode(md5_token(key)),
            Partitioner::Murmur3 => murmur_encode(murmur_normalize(hash3_x64_128(key, 0).0)),
            Partitioner::ByteOrdered => Token::from_bytes(key),
            Partitioner::OrderPreserving => utf16_encode(&String::from_utf8_lossy(key)),
        }
    }

    /// Like [`Partitioner::token_for_key`], but refuses keys the partitioner cannot take.
    pub fn try_token_for_key(&self, key: &[u8]) -> Result<Token, DhtError> {
        self.validate_key(key)?;
        Ok(self.token_for_key(key))
    }

    pub fn validate_key(&self, key: &[u8]) -> Result<(), DhtError> {
        match self {
            Partitioner::OrderPreserving => match std::str::from_utf8(key) {
                Ok(_) => Ok(()),
                Err(e) => Err(DhtError::InvalidKey {
                    partitioner: self.short_name(),
                    reason: format!("the key is not valid UTF-8 ({e})"),
                }),
            },
            _ => Ok(()),
        }
    }

    pub fn decorate(&self, key: &[u8]) -> DecoratedKey {
        DecoratedKey::new(self.token_for_key(key), key.to_vec())
    }

    /// The token as Cassandra's `TokenFactory.toString` prints it.
    pub fn token_to_string(&self, t: &Token) -> String {
        match self {
            Partitioner::Random => match random_decode(t) {
                None => "-1".to_string(),
                Some(v) => v.to_string(),
            },
            Partitioner::Murmur3 => murmur_decode(t).to_string(),
            Partitioner::ByteOrdered => hex::encode(&t.0),
            Partitioner::OrderPreserving => String::from_utf16_lossy(&utf16_units(t)),
        }
    }

    /// The range as Cassandra prints one, `(left, right]`, with tokens as
    /// [`Partitioner::token_to_string`] prints them.
    pub fn range_to_string(&self, r: &Range) -> String {
        format!("({}, {}]", self.token_to_string(&r.left), self.token_to_string(&r.right))
    }

    /// Parses a token as Cassandra's `TokenFactory.fromString` does, refusing values outside the
    /// partitioner's token space.
    pub fn token_from_string(&self, s: &str) -> Result<Token, DhtError> {
        let invalid =
            |reason: String| DhtError::InvalidToken { partitioner: self.short_name(), token: s.to_string(), reason };
        match self {
            Partitioner::Random => {
                if let Some(magnitude) = s.strip_prefix('-').filter(|m| !m.starts_with('+')) {
                    // Only -1 (the minimum) and -0 are negative numbers a Random token may be.
                    return match magnitude.parse::<u128>() {
                        Ok(1) => Ok(Token::minimum()),
                        Ok(0) => Ok(random_encode(0)),
                        _ => Err(invalid("Token must be >= 0 and <= 2**127".to_string())),
                    };
                }
                match s.parse::<u128>() {
                    Ok(v) if v <= RANDOM_MAX => Ok(random_encode(v)),
                    Ok(_) => Err(invalid("Token must be >= 0 and <= 2**127".to_string())),
                    Err(e) => Err(invalid(format!("not an integer: {e}"))),
                }
            }
            Partitioner::Murmur3 => s.parse::<i64>().map(murmur_encode).map_err(|_| {
                invalid(format!(
                    "Invalid token for Murmur3Partitioner. Got {s} but expected a long value (unsigned 8 bytes integer)."
                ))
            }),
            Partitioner::ByteOrdered => {
                // Cassandra left-pads an odd-length string with one zero digit.
                let padded = if s.len() % 2 == 1 { format!("0{s}") } else { s.to_string() };
                hex::decode(padded)
                    .map(|bytes| Token(bytes.into()))
                    .map_err(|_| invalid(format!("Token {s} contains non-hex digits")))
            }
            Partitioner::OrderPreserving => Ok(utf16_encode(s)),
        }
    }

    /// Whether `t` is a token this partitioner produces (canonical encoding, in range).
    pub fn validate_token(&self, t: &Token) -> Result<(), DhtError> {
        let invalid = |reason: &str| DhtError::InvalidToken {
            partitioner: self.short_name(),
            token: hex::encode(&t.0),
            reason: reason.to_string(),
        };
        match self {
            Partitioner::Random => match t.0.len() {
                0 => Ok(()),
                16 if random_decode(t).is_some_and(|v| v <= RANDOM_MAX) => Ok(()),
                16 => Err(invalid("value above 2**127")),
                _ => Err(invalid("a RandomPartitioner token is 16 bytes")),
            },
            Partitioner::Murmur3 => match t.0.len() {
                0 => Ok(()),
                8 if murmur_decode(t) != i64::MIN => Ok(()),
                8 => Err(invalid("the minimum token must use the empty encoding")),
                _ => Err(invalid("a Murmur3Partitioner token is 8 bytes")),
            },
            Partitioner::ByteOrdered => Ok(()),
            Partitioner::OrderPreserving if t.0.len() % 2 == 1 => {
                Err(invalid("an OrderPreservingPartitioner token is UTF-16 code units"))
            }
            Partitioner::OrderPreserving => Ok(()),
        }
    }

    /// Sorts before (and is not equal to) every key's token except the empty key's.
    pub fn min_token(&self) -> Token {
        Token::minimum()
    }

    /// A random token, drawn as Cassandra draws them: Random hashes random bytes with MD5,
    /// Murmur3 takes a random long (never the minimum), ByteOrdered takes 16 random bytes and
    /// OrderPreserving 16 random letters and digits.
    pub fn random_token(&self, rng: &mut impl rand::Rng) -> Token {
        match self {
            Partitioner::Random => random_encode(md5_token(&rng.gen::<[u8; 16]>())),
            Partitioner::Murmur3 => murmur_encode(murmur_normalize(rng.gen::<i64>())),
            Partitioner::ByteOrdered => Token::from_bytes(&rng.gen::<[u8; 16]>()),
            Partitioner::OrderPreserving => {
                const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
                let s: String = (0..16).map(|_| char::from(CHARS[rng.gen_range(0..CHARS.len())])).collect();
                utf16_encode(&s)
            }
        }
    }

    /// A token halfway from `left` to `right`, wrapping past the end of the ring when
    /// `left >= right`, as Cassandra's `midpoint`. For Random and Murmur3 the result is rounded
    /// down, so it equals `left` when the two are adjacent. ByteOrdered and OrderPreserving append
    /// a half digit instead, so the result is strictly inside the range.
    pub fn midpoint(&self, left: &Token, right: &Token) -> Token {
        match self {
            Partitioner::Random => {
                // The symbolic minimum (-1) acts as zero.
                let l = random_decode(left).unwrap_or(0);
                let r = random_decode(right).unwrap_or(0);
                let mid = if l < r {
                    // l < r <= 2^127, so the sum fits.
                    (l + r) >> 1
                } else {
                    let distance = RANDOM_MAX + r - l;
                    ((distance >> 1) + l) % RANDOM_MAX
                };
                random_encode(mid)
            }
            Partitioner::Murmur3 => {
                let l = i128::from(murmur_decode(left));
                let r = i128::from(murmur_decode(right));
                let mid = if l < r {
                    (l + r) >> 1
                } else {
                    // Cassandra's wrapped midpoint: (L + R + MAX - MIN) / 2, folded back past MAX.
                    let m = (MURMUR_RING + l + r) >> 1;
                    if m > i128::from(i64::MAX) {
                        i128::from(i64::MIN) + (m - i128::from(i64::MAX))
                    } else {
                        m
                    }
                };
                murmur_encode(i128_to_i64(mid))
            }
            Partitioner::ByteOrdered => {
                let mid = ordered::midpoint(&byte_digits(left), &byte_digits(right), 8);
                Token(mid.into_iter().map(|d| d as u8).collect())
            }
            Partitioner::OrderPreserving => {
                let mid = ordered::midpoint(&unit_digits(left), &unit_digits(right), UTF16_BITS);
                utf16_encode_units(mid.into_iter().map(|d| d as u16))
            }
        }
    }

    pub fn preserves_order(&self) -> bool {
        matches!(self, Partitioner::ByteOrdered | Partitioner::OrderPreserving)
    }

    /// Fraction of the ring each token owns, token `i` owning `(token_{i-1}, token_i]` and the
    /// first token owning the wrap-around range from the last one. An empty list gives an empty
    /// answer (Cassandra throws); one token owns everything.
    ///
    /// Random and Murmur3 follow Cassandra's arithmetic exactly, including its rounding to
    /// `float` (and Murmur3's rounding to 6 decimals). Cassandra weighs ByteOrdered and
    /// OrderPreserving ownership by sampling the keys stored in each range, which needs the data;
    /// here those two measure the key space instead, reading each token as a fraction
    /// `0.d1 d2 ...` of the ring (base 256, or base 65536 per UTF-16 unit).
    pub fn describe_ownership(&self, sorted_tokens: &[Token]) -> Vec<f64> {
        match sorted_tokens.len() {
            0 => return Vec::new(),
            1 => return vec![1.0],
            _ => {}
        }
        // Pairs (previous, current), the first token's previous being the last token.
        let previous = sorted_tokens.iter().cycle().skip(sorted_tokens.len() - 1);
        let pairs = previous.zip(sorted_tokens.iter());
        match self {
            Partitioner::Random => {
                let ring = BigInt::from(RANDOM_MAX);
                let value = |t: &Token| random_decode(t).map(BigInt::from).unwrap_or(BigInt::from(-1));
                pairs
                    .map(|(p, t)| {
                        let owned = ((value(t) - value(p)) % &ring + &ring) % &ring;
                        // owned < 2^127 so it fits; dividing by a power of two is exact in f32.
                        let owned = u128::try_from(owned).unwrap_or(0);
                        f64::from(owned as f32 / RANDOM_MAX as f32)
                    })
                    .collect()
            }
            Partitioner::Murmur3 => {
                // Cassandra's ring size here is MAX - (MIN + 1) = 2^64 - 2.
                let ring = i128::from(i64::MAX) - (i128::from(i64::MIN) + 1);
                pairs
                    .map(|(p, t)| {
                        let owned = (i128::from(murmur_decode(t)) - i128::from(murmur_decode(p))).rem_euclid(ring);
                        let millionths = div_round_half_even(owned * 1_000_000, ring);
                        f64::from((millionths as f64 / 1e6) as f32)
                    })
                    .collect()
            }
            Partitioner::ByteOrdered | Partitioner::OrderPreserving => {
                let fraction = |t: &Token| match self {
                    Partitioner::OrderPreserving => ordered::fraction(&unit_digits(t), UTF16_BITS),
                    _ => ordered::fraction(&byte_digits(t), 8),
                };
                pairs.map(|(p, t)| (fraction(t) - fraction(p)).rem_euclid(1.0)).collect()
            }
        }
    }

    /// Boundaries splitting `(left, right]` into about `n` pieces of equal token distance:
    /// `[left, t1, ..., right]`, strictly advancing around the ring. Fewer pieces come back when
    /// the range holds fewer tokens than `n`; `n == 0` is taken as 1. Wrapping ranges wrap, and
    /// `left == right` splits the whole ring.
    ///
    /// Cassandra's `describe_splits` picks boundaries from sampled keys; this is the token-space
    /// split (Cassandra's `IPartitioner.split`, and a byte/code-unit version of it for the
    /// order-preserving partitioners, which Cassandra does not offer).
    pub fn split(&self, left: &Token, right: &Token, n: usize) -> Vec<Token> {
        let n = n.max(1);
        let mut out = vec![left.clone()];
        for i in 1..n {
            let t = self.split_point(left, right, i, n);
            let is_new = out.last() != Some(&t) && t != *left && t != *right;
            if is_new {
                out.push(t);
            }
        }
        out.push(right.clone());
        out
    }

    fn split_point(&self, left: &Token, right: &Token, i: usize, n: usize) -> Token {
        match self {
            Partitioner::Random => {
                let l = random_decode(left).unwrap_or(0);
                let r = random_decode(right).unwrap_or(0);
                let t = if l < r {
                    l + fraction_of(r - l, i, n)
                } else {
                    (l + fraction_of(RANDOM_MAX + r - l, i, n)) % RANDOM_MAX
                };
                random_encode(t)
            }
            Partitioner::Murmur3 => {
                let l = i128::from(murmur_decode(left));
                let r = i128::from(murmur_decode(right));
                let t = if l < r {
                    l + fraction_of_i128(r - l, i, n)
                } else {
                    let t = l + fraction_of_i128(MURMUR_RING + r - l, i, n);
                    if t > i128::from(i64::MAX) {
                        i128::from(i64::MIN) + (t - i128::from(i64::MAX))
                    } else {
                        t
                    }
                };
                murmur_encode(i128_to_i64(t))
            }
            Partitioner::ByteOrdered => {
                let t = ordered::split_point(&byte_digits(left), &byte_digits(right), 8, i, n);
                Token(t.into_iter().map(|d| d as u8).collect())
            }
            Partitioner::OrderPreserving => {
                let t = ordered::split_point(&unit_digits(left), &unit_digits(right), UTF16_BITS, i, n);
                utf16_encode_units(t.into_iter().map(|d| d as u16))
            }
        }
    }
}

impl std::fmt::Display for Partitioner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.class_name())
    }
}

impl std::str::FromStr for Partitioner {
    type Err = DhtError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Partitioner::from_class_name(s)
    }
}

// ---- Random ----

/// `abs(new BigInteger(md5(key)))`: the digest read as a signed 128-bit number, made positive.
/// A digest of 0x80 00 .. 00 gives 2^127, which is why the token space includes it.
fn md5_token(data: &[u8]) -> u128 {
    let digest: [u8; 16] = Md5::digest(data).into();
    i128::from_be_bytes(digest).unsigned_abs()
}

fn random_encode(v: u128) -> Token {
    Token::from_bytes(&v.to_be_bytes())
}

/// `None` for the minimum. Malformed tokens are read as big-endian numbers capped at 2^127.
fn random_decode(t: &Token) -> Option<u128> {
    if t.is_minimum() {
        return None;
    }
    let v = t.0.iter().take(16).fold(0u128, |v, &b| (v << 8) | u128::from(b));
    Some(if t.0.len() > 16 { RANDOM_MAX } else { v.min(RANDOM_MAX) })
}

/// `floor(d * i / n)` without overflowing, for `i < n`.
fn fraction_of(d: u128, i: usize, n: usize) -> u128 {
    let (i, n) = (i as u128, n as u128);
    (d / n) * i + (d % n) * i / n
}

// ---- Murmur3 ----

/// Cassandra keeps `i64::MIN` for the minimum token, so no key or random token may take it.
fn murmur_normalize(v: i64) -> i64 {
    if v == i64::MIN {
        i64::MAX
    } else {
        v
    }
}

fn murmur_encode(v: i64) -> Token {
    if v == i64::MIN {
        return Token::minimum();
    }
    Token::from_bytes(&((v as u64) ^ (1 << 63)).to_be_bytes())
}

/// Malformed tokens are zero-padded or cut to 8 bytes.
fn murmur_decode(t: &Token) -> i64 {
    if t.is_minimum() {
        return i64::MIN;
    }
    let mut bytes = [0u8; 8];
    for (dst, src) in bytes.iter_mut().zip(&t.0) {
        *dst = *src;
    }
    (u64::from_be_bytes(bytes) ^ (1 << 63)) as i64
}

fn fraction_of_i128(d: i128, i: usize, n: usize) -> i128 {
    let (i, n) = (i as i128, n as i128);
    (d / n) * i + (d % n) * i / n
}

/// Callers only pass values already folded into the long range.
fn i128_to_i64(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// `num / den` rounded half to even, for `num >= 0`, `den > 0` (BigDecimal.ROUND_HALF_EVEN).
fn div_round_half_even(num: i128, den: i128) -> i128 {
    let (q, r) = (num / den, num % den);
    match (2 * r).cmp(&den) {
        std::cmp::Ordering::Less => q,
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => q + (q & 1),
    }
}

// ---- ByteOrdered and OrderPreserving ----

fn byte_digits(t: &Token) -> Vec<u32> {
    t.0.iter().map(|&b| u32::from(b)).collect()
}

fn utf16_encode(s: &str) -> Token {
    utf16_encode_units(s.encode_utf16())
}

fn utf16_encode_units(units: impl Iterator<Item = u16>) -> Token {
    Token(units.flat_map(u16::to_be_bytes).collect())
}

/// A malformed odd-length token's last byte is read as the high byte of a final unit.
fn utf16_units(t: &Token) -> Vec<u16> {
    t.0.chunks(2)
        .map(|c| u16::from_be_bytes([c.first().copied().unwrap_or(0), c.get(1).copied().unwrap_or(0)]))
        .collect()
}

fn unit_digits(t: &Token) -> Vec<u32> {
    utf16_units(t).into_iter().map(u32::from).collect()
}
