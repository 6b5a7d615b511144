//! Scanners for the tokens that start with a digit, a sign or an ISO 8601 `P`: integers, floats,
//! durations, UUIDs and hex blobs.
//!
//! Each scanner looks at the bytes from a position and returns where its token would end, or
//! `None` if the token cannot start there. The lexer runs them all and keeps the longest match,
//! which is how Cassandra's ANTLR lexer decides between `1` (INTEGER), `1h30m` (DURATION) and
//! `123e4567-e89b-...` (UUID).

fn digits(b: &[u8], at: usize) -> usize {
    b.get(at..).map_or(0, |rest| rest.iter().take_while(|c| c.is_ascii_digit()).count())
}

fn byte(b: &[u8], at: usize) -> Option<u8> {
    b.get(at).copied()
}

/// `'-'? DIGIT+`
pub(super) fn integer(b: &[u8], at: usize) -> Option<usize> {
    let start = if byte(b, at) == Some(b'-') { at + 1 } else { at };
    let n = digits(b, start);
    (n > 0).then_some(start + n)
}

/// `E ('+' | '-')? DIGIT+`
fn exponent(b: &[u8], at: usize) -> Option<usize> {
    if !matches!(byte(b, at), Some(b'e' | b'E')) {
        return None;
    }
    let start = if matches!(byte(b, at + 1), Some(b'+' | b'-')) { at + 2 } else { at + 1 };
    let n = digits(b, start);
    (n > 0).then_some(start + n)
}

/// `INTEGER EXPONENT | INTEGER '.' DIGIT* EXPONENT?` (Cassandra 3.11's FLOAT).
pub(super) fn float(b: &[u8], at: usize) -> Option<usize> {
    let int_end = integer(b, at)?;
    if let Some(end) = exponent(b, int_end) {
        return Some(end);
    }
    if byte(b, int_end) != Some(b'.') {
        return None;
    }
    let frac_end = int_end + 1 + digits(b, int_end + 1);
    Some(exponent(b, frac_end).unwrap_or(frac_end))
}

/// A duration unit after the digits of `1h30m`: `y mo w d h m s ms us µs ns`, any case.
/// Returns the unit's length in bytes; the longest unit wins (`ms` over `m`).
fn duration_unit(b: &[u8], at: usize) -> Option<usize> {
    let c0 = byte(b, at).map(|c| c.to_ascii_lowercase());
    let c1 = byte(b, at + 1).map(|c| c.to_ascii_lowercase());
    match (c0, c1) {
        (Some(b'm'), Some(b'o' | b's')) | (Some(b'u' | b'n'), Some(b's')) => Some(2),
        (Some(b'y' | b'w' | b'd' | b'h' | b'm' | b's'), _) => Some(1),
        // U+00B5 MICRO SIGN is two bytes in UTF-8.
        (Some(0xC2), _) if byte(b, at + 1) == Some(0xB5) && matches!(byte(b, at + 2), Some(b's' | b'S')) => Some(3),
        _ => None,
    }
}

/// `'-'? (DIGIT+ UNIT)+`, the `12h30m` form.
fn duration_units(b: &[u8], at: usize) -> Option<usize> {
    let mut pos = if byte(b, at) == Some(b'-') { at + 1 } else { at };
    let mut end = None;
    loop {
        let n = digits(b, pos);
        if n == 0 {
            return end;
        }
        match duration_unit(b, pos + n) {
            Some(unit) => {
                pos += n + unit;
                end = Some(pos);
            }
            None => return end,
        }
    }
}

/// `DIGIT+ letter` for one upper-case ISO 8601 designator.
fn designated(b: &[u8], at: usize, letter: u8) -> Option<usize> {
    let n = digits(b, at);
    (n > 0 && byte(b, at + n) == Some(letter)).then_some(at + n + 1)
}

/// Matches the designators in order, each optional once the first has matched; the first one
/// present decides where the sequence starts (`Y (M)? (D)?`, `M (D)?`, `D`).
fn designator_chain(b: &[u8], at: usize, letters: &[u8]) -> Option<usize> {
    for (i, first) in letters.iter().enumerate() {
        if let Some(mut end) = designated(b, at, *first) {
            for next in letters.iter().skip(i + 1) {
                if let Some(e) = designated(b, end, *next) {
                    end = e;
                }
            }
            return Some(end);
        }
    }
    None
}

/// `'T' (DIGIT+ 'H')? (DIGIT+ 'M')? (DIGIT+ 'S')?` with at least one part.
fn time_designators(b: &[u8], at: usize) -> Option<usize> {
    if byte(b, at) != Some(b'T') {
        return None;
    }
    designator_chain(b, at + 1, b"HMS")
}

/// `P[YYYY]-[MM]-[DD]T[hh]:[mm]:[ss]`, the ISO 8601 alternative format (after the `P`).
fn alternative_format(b: &[u8], at: usize) -> Option<usize> {
    let shape = b"dddd-dd-ddTdd:dd:dd";
    let text = b.get(at..at + shape.len())?;
    let fits = shape.iter().zip(text).all(|(s, c)| if *s == b'd' { c.is_ascii_digit() } else { s == c });
    fits.then_some(at + shape.len())
}

/// The ISO 8601 forms: `P1Y2M3DT4H5M6S`, `PT1H`, `P2W`, `P0001-02-03T04:05:06`, each with an
/// optional leading `-`. The designators are upper case, as in Cassandra's lexer.
fn duration_iso(b: &[u8], at: usize) -> Option<usize> {
    let p = if byte(b, at) == Some(b'-') { at + 1 } else { at };
    if byte(b, p) != Some(b'P') {
        return None;
    }
    let body = p + 1;
    let candidates = [
        alternative_format(b, body),
        time_designators(b, body),
        designated(b, body, b'W'),
        designator_chain(b, body, b"YMD").map(|end| time_designators(b, end).unwrap_or(end)),
    ];
    candidates.into_iter().flatten().max()
}

/// Cassandra's DURATION token, in any of its forms.
pub(super) fn duration(b: &[u8], at: usize) -> Option<usize> {
    [duration_units(b, at), duration_iso(b, at)].into_iter().flatten().max()
}

/// `hex{8}-hex{4}-hex{4}-hex{4}-hex{12}`
pub(super) fn uuid(b: &[u8], at: usize) -> Option<usize> {
    let shape = b"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
    let text = b.get(at..at + shape.len())?;
    let fits = shape.iter().zip(text).all(|(s, c)| if *s == b'x' { c.is_ascii_hexdigit() } else { s == c });
    fits.then_some(at + shape.len())
}

/// `'0' X HEX*` (zero hex digits is still a token, as in Cassandra).
pub(super) fn hex(b: &[u8], at: usize) -> Option<usize> {
    if byte(b, at) != Some(b'0') || !matches!(byte(b, at + 1), Some(b'x' | b'X')) {
        return None;
    }
    let n = b.get(at + 2..).map_or(0, |rest| rest.iter().take_while(|c| c.is_ascii_hexdigit()).count());
    Some(at + 2 + n)
}

/// `LETTER (LETTER | DIGIT | '_')*`
pub(super) fn word(b: &[u8], at: usize) -> Option<usize> {
    if !byte(b, at)?.is_ascii_alphabetic() {
        return None;
    }
    let n = b.get(at..).map_or(0, |rest| rest.iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count());
    Some(at + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(f: fn(&[u8], usize) -> Option<usize>, s: &str) -> bool {
        f(s.as_bytes(), 0) == Some(s.len())
    }

    #[test]
    fn durations_in_every_form() {
        for d in ["1h30m", "12mo3d", "1y2mo3w4d5h6m7s8ms9us10ns", "1µs", "-3d", "P1Y2M3DT4H5M6S", "P2W", "PT1H"] {
            assert!(whole(duration, d), "{d}");
        }
        for d in ["P0001-02-03T04:05:06", "-P1D", "P1M", "P1D", "PT5S", "P1YT2M", "89h4m48s", "PT89H8M53S"] {
            assert!(whole(duration, d), "{d}");
        }
        assert_eq!(duration(b"1d2", 0), Some(2));
        assert_eq!(duration(b"P1", 0), None);
        assert_eq!(duration(b"p1d", 0), None);
        assert_eq!(duration(b"12", 0), None);
    }

    #[test]
    fn numbers_uuids_and_blobs() {
        assert!(whole(integer, "-42"));
        assert!(whole(float, "1.5e-3"));
        assert!(whole(float, "1."));
        assert!(whole(float, "2E10"));
        assert_eq!(float(b"12", 0), None);
        assert!(whole(uuid, "123e4567-e89b-12d3-a456-426614174000"));
        assert!(whole(hex, "0xCAFE"));
        assert!(whole(hex, "0x"));
        assert!(whole(word, "a_1B"));
    }
}
