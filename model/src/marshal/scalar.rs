//! Ordering, validation and text forms of the non-composite types.
//!
//! Each `compare_*` follows the `compare`/`compareCustom` of the Cassandra 3.11 class it is
//! named after. Cassandra assumes valid input there (it asserts or throws on wrong lengths); we
//! must stay total, so a value of the wrong length falls back to a plain byte comparison. That
//! fallback is symmetric in its arguments, so the order stays antisymmetric.

use std::cmp::Ordering;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use num_bigint::BigInt;
use uuid::Uuid;

use super::text;
use super::AbstractType;

/// Empty values sort before everything else in most of Cassandra's comparators.
fn empty_first(a: &[u8], b: &[u8]) -> Option<Ordering> {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => Some(Ordering::Equal),
        (true, false) => Some(Ordering::Less),
        (false, true) => Some(Ordering::Greater),
        (false, false) => None,
    }
}

/// `LongType.compareLongs` (also Int32Type, TimestampType, ShortType, ByteType): the first byte
/// signed, the rest unsigned, which is numeric order for equal-length two's-complement values.
pub(super) fn compare_signed_first_byte(a: &[u8], b: &[u8]) -> Ordering {
    match (a.first(), b.first()) {
        (Some(&x), Some(&y)) => (x as i8).cmp(&(y as i8)).then_with(|| a.cmp(b)),
        _ => a.len().cmp(&b.len()),
    }
}

/// Splits a two's-complement big-endian integer into (is_negative, significant bytes), dropping
/// redundant sign-extension bytes so equal numbers give equal byte strings.
fn significant_varint(v: &[u8]) -> (bool, &[u8]) {
    let negative = v.first().is_some_and(|b| b & 0x80 != 0);
    let pad = if negative { 0xFF } else { 0x00 };
    let mut rest = v;
    // A pad byte is redundant when the next byte carries the same sign bit.
    while let [first, second, ..] = rest {
        if *first != pad || (second & 0x80 != 0) != negative {
            break;
        }
        if let Some((_, tail)) = rest.split_first() {
            rest = tail;
        }
    }
    (negative, rest)
}

/// `IntegerType.compareIntegers`: numeric order of varints of any length; empty first.
pub(super) fn compare_varint(a: &[u8], b: &[u8]) -> Ordering {
    if let Some(o) = empty_first(a, b) {
        return o;
    }
    let (neg_a, sig_a) = significant_varint(a);
    let (neg_b, sig_b) = significant_varint(b);
    if neg_a != neg_b {
        return if neg_a { Ordering::Less } else { Ordering::Greater };
    }
    // Same sign: more significant bytes means larger magnitude, i.e. smaller when negative. With
    // equal lengths, two's-complement bytes of one sign compare numerically as unsigned bytes.
    let by_len = sig_a.len().cmp(&sig_b.len());
    let by_len = if neg_a { by_len.reverse() } else { by_len };
    by_len.then_with(|| sig_a.cmp(sig_b))
}

/// Splits a DecimalType value into (unscaled, scale); `None` if shorter than the scale.
pub(super) fn decode_decimal(v: &[u8]) -> Option<(BigInt, i32)> {
    let (scale, unscaled) = v.split_first_chunk::<4>()?;
    Some((BigInt::from_signed_bytes_be(unscaled), i32::from_be_bytes(*scale)))
}

/// `DecimalType.compareCustom`: `BigDecimal.compareTo`, numeric and blind to scale; empty first.
pub(super) fn compare_decimal(a: &[u8], b: &[u8]) -> Ordering {
    if let Some(o) = empty_first(a, b) {
        return o;
    }
    match (decode_decimal(a), decode_decimal(b)) {
        (Some((ua, sa)), Some((ub, sb))) => text::decimal_cmp(&ua, sa, &ub, sb),
        _ => a.cmp(b),
    }
}

fn uuid_halves(v: &[u8]) -> Option<(u64, u64)> {
    let bytes: &[u8; 16] = v.try_into().ok()?;
    let (hi, lo) = bytes.split_at(8);
    Some((u64::from_be_bytes(hi.try_into().ok()?), u64::from_be_bytes(lo.try_into().ok()?)))
}

/// `LexicalUUIDType`: empty first, then `java.util.UUID.compareTo` (signed msb, signed lsb).
pub(super) fn compare_lexical_uuid(a: &[u8], b: &[u8]) -> Ordering {
    if let Some(o) = empty_first(a, b) {
        return o;
    }
    match (uuid_halves(a), uuid_halves(b)) {
        (Some((ma, la)), Some((mb, lb))) => (ma as i64).cmp(&(mb as i64)).then((la as i64).cmp(&(lb as i64))),
        _ => a.cmp(b),
    }
}

/// Moves time_hi (with the version nibble) to the top, then time_mid, then time_low, so the
/// 60-bit v1 timestamp reads as one number (`TimeUUIDType.reorderTimestampBytes`).
fn reorder_timestamp(msb: u64) -> u64 {
    (msb << 48) | ((msb << 16) & 0xFFFF_0000_0000) | (msb >> 32)
}

/// Cassandra's UUID comparators treat anything but 16 bytes as "empty": it sorts first and
/// equal to every other non-16-byte value.
fn sixteen_or_empty(a: &[u8], b: &[u8]) -> Option<Ordering> {
    let (pa, pb) = (a.len() == 16, b.len() == 16);
    if pa && pb {
        None
    } else {
        Some(pa.cmp(&pb))
    }
}

/// `TimeUUIDType`: by timestamp, then the last 8 bytes compared as *signed* bytes (kept for
/// compatibility with older Cassandra, see CASSANDRA-8730).
pub(super) fn compare_time_uuid(a: &[u8], b: &[u8]) -> Ordering {
    if let Some(o) = sixteen_or_empty(a, b) {
        return o;
    }
    let (Some((ma, _)), Some((mb, _))) = (uuid_halves(a), uuid_halves(b)) else {
        return a.cmp(b);
    };
    (reorder_timestamp(ma) as i64).cmp(&(reorder_timestamp(mb) as i64)).then_with(|| {
        let sa = a.iter().skip(8).map(|&x| x as i8);
        let sb = b.iter().skip(8).map(|&x| x as i8);
        sa.cmp(sb)
    })
}

/// `UUIDType`: version first; v1 by timestamp, others by unsigned msb; then unsigned lsb.
pub(super) fn compare_uuid(a: &[u8], b: &[u8]) -> Ordering {
    if let Some(o) = sixteen_or_empty(a, b) {
        return o;
    }
    let (Some((ma, la)), Some((mb, lb))) = (uuid_halves(a), uuid_halves(b)) else {
        return a.cmp(b);
    };
    let (va, vb) = ((ma >> 12) & 0xF, (mb >> 12) & 0xF);
    va.cmp(&vb)
        .then_with(|| {
            if va == 1 {
                (reorder_timestamp(ma) as i64).cmp(&(reorder_timestamp(mb) as i64))
            } else {
                ma.cmp(&mb)
            }
        })
        .then(la.cmp(&lb))
}

/// `BooleanType`: empty first, then false (0) before true (anything else).
pub(super) fn compare_boolean(a: &[u8], b: &[u8]) -> Ordering {
    match (a.first(), b.first()) {
        (Some(&x), Some(&y)) => (x != 0).cmp(&(y != 0)),
        _ => a.len().cmp(&b.len()),
    }
}

/// `java.lang.Double.compare`: -0.0 < 0.0, NaN above +infinity and equal to every NaN.
pub(super) fn java_double_cmp(x: f64, y: f64) -> Ordering {
    x.partial_cmp(&y).filter(|o| o.is_ne()).unwrap_or_else(|| {
        let bits = |v: f64| if v.is_nan() { 0x7ff8_0000_0000_0000_i64 } else { v.to_bits() as i64 };
        bits(x).cmp(&bits(y))
    })
}

/// `java.lang.Float.compare`, see [`java_double_cmp`].
pub(super) fn java_float_cmp(x: f32, y: f32) -> Ordering {
    x.partial_cmp(&y).filter(|o| o.is_ne()).unwrap_or_else(|| {
        let bits = |v: f32| if v.is_nan() { 0x7fc0_0000_i32 } else { v.to_bits() as i32 };
        bits(x).cmp(&bits(y))
    })
}

pub(super) fn compare_double(a: &[u8], b: &[u8]) -> Ordering {
    if let Some(o) = empty_first(a, b) {
        return o;
    }
    match (<[u8; 8]>::try_from(a), <[u8; 8]>::try_from(b)) {
        (Ok(x), Ok(y)) => java_double_cmp(f64::from_be_bytes(x), f64::from_be_bytes(y)),
        _ => a.cmp(b),
    }
}

pub(super) fn compare_float(a: &[u8], b: &[u8]) -> Ordering {
    if let Some(o) = empty_first(a, b) {
        return o;
    }
    match (<[u8; 4]>::try_from(a), <[u8; 4]>::try_from(b)) {
        (Ok(x), Ok(y)) => java_float_cmp(f32::from_be_bytes(x), f32::from_be_bytes(y)),
        _ => a.cmp(b),
    }
}

// ---- validation: each returns the reason a value is invalid, in 3.11's words ----
//
// The reasons are the messages of Cassandra 3.11's serializers (`MarshalException`), word for
// word: they are what a client reads in the InvalidRequestException that refuses the value.

/// A length not among `allowed` is refused with `expected` and the length in parentheses, as
/// 3.11's fixed-size serializers say it, e.g. "Expected 8 or 0 byte long (3)".
pub(super) fn check_len(v: &[u8], allowed: &[usize], expected: &str) -> Option<String> {
    if allowed.contains(&v.len()) {
        None
    } else {
        Some(format!("{expected} ({})", v.len()))
    }
}

/// `UUIDSerializer` (UUIDType, LexicalUUIDType, and the first check of TimeUUIDType).
pub(super) fn check_uuid(v: &[u8]) -> Option<String> {
    check_len(v, &[16, 0], "UUID should be 16 or 0 bytes")
}

/// `AsciiSerializer`: the first byte above 127, printed as Java prints a (signed) byte.
pub(super) fn check_ascii(v: &[u8]) -> Option<String> {
    let byte = v.iter().find(|b| **b >= 0x80)?;
    Some(format!("Invalid byte for ascii: {}", *byte as i8))
}

/// `TimeUUIDSerializer`: a UUID's length, then version 1.
pub(super) fn check_time_uuid(v: &[u8]) -> Option<String> {
    if let Some(reason) = check_uuid(v) {
        return Some(reason);
    }
    match v.get(6) {
        Some(b) if b & 0xF0 != 0x10 => Some("Invalid version for TimeUUID type.".to_string()),
        _ => None,
    }
}

/// `DecimalSerializer`: empty, or at least the 4 bytes of the scale.
pub(super) fn check_decimal(v: &[u8]) -> Option<String> {
    if v.is_empty() || v.len() >= 4 {
        None
    } else {
        Some(format!("Expected 0 or at least 4 bytes ({})", v.len()))
    }
}

/// `InetAddressSerializer`: empty, or 4 or 16 address bytes; the refusal shows the value in hex.
pub(super) fn check_inet_address(v: &[u8]) -> Option<String> {
    if matches!(v.len(), 0 | 4 | 16) {
        None
    } else {
        Some(format!("Expected 4 or 16 byte inetaddress; got {}", hex::encode(v)))
    }
}

/// `EmptySerializer`.
pub(super) fn check_empty(v: &[u8]) -> Option<String> {
    if v.is_empty() {
        None
    } else {
        Some("EmptyType only accept empty values".to_string())
    }
}

/// `UTF8Serializer`, see [`is_cassandra_utf8`].
pub(super) fn check_utf8(v: &[u8]) -> Option<String> {
    if is_cassandra_utf8(v) {
        None
    } else {
        Some("String didn't validate.".to_string())
    }
}

/// Cassandra's `UTF8Serializer.UTF8Validator`, state for state. It is looser than Rust's UTF-8
/// check (it accepts modified UTF-8 `C0 80`, encoded surrogates, and a few odd continuation
/// bytes after `E0` and `F0`); data Cassandra accepted must be accepted here too.
fn is_cassandra_utf8(v: &[u8]) -> bool {
    #[derive(Clone, Copy)]
    enum State {
        Start,
        Two,
        Two80,
        ThreeA0Bf,
        Three80Bf1,
        Three80Bf2,
        Four90Bf,
        Four80Bf3,
    }
    let mut state = State::Start;
    for &b in v {
        let ok = match state {
            State::Start => match b {
                0x00..=0x7F => true,
                0xC0 => {
                    state = State::Two80;
                    true
                }
                0xC1 => false,
                0xC2..=0xDF => {
                    state = State::Two;
                    true
                }
                0xE0 => {
                    state = State::ThreeA0Bf;
                    true
                }
                0xE1..=0xEF => {
                    state = State::Three80Bf2;
                    true
                }
                0xF0 => {
                    state = State::Four90Bf;
                    true
                }
                0xF1..=0xF7 => {
                    state = State::Four80Bf3;
                    true
                }
                _ => false,
            },
            State::Two | State::Three80Bf1 => {
                state = State::Start;
                b & 0xC0 == 0x80
            }
            State::Two80 => {
                state = State::Start;
                b == 0x80
            }
            State::ThreeA0Bf => {
                state = State::Three80Bf1;
                b & 0xE0 != 0x80
            }
            State::Three80Bf2 => {
                state = State::Three80Bf1;
                b & 0xC0 == 0x80
            }
            State::Four90Bf => {
                state = State::Three80Bf2;
                b & 0x30 != 0
            }
            State::Four80Bf3 => {
                state = State::Three80Bf2;
                b & 0xC0 == 0x80
            }
        };
        if !ok {
            return false;
        }
    }
    // A sequence cut short at the end is as invalid as a wrong byte.
    matches!(state, State::Start)
}

// ---- text forms ----

fn int_bytes<const N: usize>(v: &[u8]) -> Option<[u8; N]> {
    v.try_into().ok()
}

/// Human-readable form of a valid, non-empty value of a non-composite type.
pub(super) fn display(t: &AbstractType, v: &[u8]) -> Option<String> {
    use AbstractType as T;
    Some(match t {
        T::Bytes => hex::encode(v),
        T::Ascii | T::Utf8 => String::from_utf8_lossy(v).into_owned(),
        T::Long | T::CounterColumn => i64::from_be_bytes(int_bytes(v)?).to_string(),
        T::Int32 => i32::from_be_bytes(int_bytes(v)?).to_string(),
        T::Short => i16::from_be_bytes(int_bytes(v)?).to_string(),
        T::Byte => i8::from_be_bytes(int_bytes(v)?).to_string(),
        T::Integer => BigInt::from_signed_bytes_be(v).to_string(),
        T::Decimal => {
            let (unscaled, scale) = decode_decimal(v)?;
            text::decimal_to_string(&unscaled, scale)
        }
        T::LexicalUuid | T::TimeUuid | T::Uuid => Uuid::from_slice(v).ok()?.hyphenated().to_string(),
        T::Boolean => (v.first()? != &0).to_string(),
        T::Date | T::Timestamp => text::format_timestamp_ms(i64::from_be_bytes(int_bytes(v)?)),
        T::Double => text::java_double_to_string(f64::from_be_bytes(int_bytes(v)?)),
        T::Float => text::java_float_to_string(f32::from_be_bytes(int_bytes(v)?)),
        T::InetAddress => match v.len() {
            4 => Ipv4Addr::from(int_bytes::<4>(v)?).to_string(),
            _ => Ipv6Addr::from(int_bytes::<16>(v)?).to_string(),
        },
        T::SimpleDate => text::format_simple_date(u32::from_be_bytes(int_bytes(v)?)),
        T::Time => text::format_time_of_day(i64::from_be_bytes(int_bytes(v)?)),
        T::Empty
        | T::Composite(_)
        | T::DynamicComposite(_)
        | T::Reversed(_)
        | T::List { .. }
        | T::Set { .. }
        | T::Map { .. }
        | T::Tuple(_)
        | T::ColumnToCollection(_)
        | T::Duration
        | T::User(_) => return None,
    })
}

fn parse_num<N: FromStr>(s: &str) -> Result<N, String>
where
    N::Err: std::fmt::Display,
{
    s.trim().parse::<N>().map_err(|e| e.to_string())
}

/// Bytes for a non-empty human string of a non-composite type.
pub(super) fn from_string(t: &AbstractType, s: &str) -> Result<Vec<u8>, String> {
    use AbstractType as T;
    Ok(match t {
        // Cassandra's hexToBytes pads an odd-length string with a leading zero.
        T::Bytes => {
            let padded = if s.len() % 2 == 1 { format!("0{s}") } else { s.to_string() };
            hex::decode(padded).map_err(|e| format!("not hex: {e}"))?
        }
        T::Ascii => {
            if !s.is_ascii() {
                return Err("non-ASCII character".to_string());
            }
            s.as_bytes().to_vec()
        }
        T::Utf8 => s.as_bytes().to_vec(),
        T::Long | T::CounterColumn => parse_num::<i64>(s)?.to_be_bytes().to_vec(),
        T::Int32 => parse_num::<i32>(s)?.to_be_bytes().to_vec(),
        T::Short => parse_num::<i16>(s)?.to_be_bytes().to_vec(),
        T::Byte => parse_num::<i8>(s)?.to_be_bytes().to_vec(),
        T::Integer => parse_num::<BigInt>(s)?.to_signed_bytes_be(),
        T::Decimal => {
            let (unscaled, scale) = text::decimal_from_string(s.trim())?;
            let mut out = scale.to_be_bytes().to_vec();
            out.extend(unscaled.to_signed_bytes_be());
            out
        }
        T::LexicalUuid | T::Uuid => Uuid::parse_str(s.trim()).map_err(|e| e.to_string())?.as_bytes().to_vec(),
        T::TimeUuid => {
            let uuid = if s.trim().eq_ignore_ascii_case("now") {
                fresh_time_uuid()
            } else {
                Uuid::parse_str(s.trim()).map_err(|e| e.to_string())?
            };
            if uuid.get_version_num() != 1 {
                return Err("TimeUUID supports only version 1 UUIDs".to_string());
            }
            uuid.as_bytes().to_vec()
        }
        T::Boolean => match s.trim() {
            b if b.eq_ignore_ascii_case("true") => vec![1],
            b if b.eq_ignore_ascii_case("false") => vec![0],
            _ => return Err("expected true or false".to_string()),
        },
        T::Date | T::Timestamp => text::parse_timestamp_ms(s.trim())?.to_be_bytes().to_vec(),
        T::Double => parse_num::<f64>(s)?.to_be_bytes().to_vec(),
        T::Float => parse_num::<f32>(s)?.to_be_bytes().to_vec(),
        T::InetAddress => match parse_num::<IpAddr>(s)? {
            IpAddr::V4(a) => a.octets().to_vec(),
            IpAddr::V6(a) => a.octets().to_vec(),
        },
        T::SimpleDate => text::parse_simple_date(s.trim())?.to_be_bytes().to_vec(),
        T::Time => text::parse_time_of_day(s.trim())?.to_be_bytes().to_vec(),
        T::Empty => return Err("EmptyType only has the empty value".to_string()),
        T::Composite(_)
        | T::DynamicComposite(_)
        | T::Reversed(_)
        | T::List { .. }
        | T::Set { .. }
        | T::Map { .. }
        | T::Tuple(_)
        | T::ColumnToCollection(_)
        | T::Duration
        | T::User(_) => {
            return Err("not a simple type".to_string());
        }
    })
}

/// A version 1 UUID for now, with a random multicast node id (no MAC address is read).
fn fresh_time_uuid() -> Uuid {
    let mut node: [u8; 6] = rand::random();
    node[0] |= 0x01;
    Uuid::now_v1(&node)
}
