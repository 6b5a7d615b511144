//! `DurationType` (Cassandra 3.10+): months, days and nanoseconds, kept apart because a month's
//! days and a day's hours vary.
//!
//! Serialization (3.11's `DurationSerializer`): three signed vints, months then days then
//! nanoseconds, each zigzag-encoded and written as Cassandra's unsigned vint (the count of
//! leading one bits of the first byte says how many bytes follow, big-endian). The three values
//! are all >= 0 or all <= 0. Text forms (3.11's `Duration.from`): `12h30m` units in decreasing
//! order (`y mo w d h m s ms us µs ns`), ISO 8601 `P1Y2M3DT4H5M6S`, `P2W` and
//! `P0001-02-03T04:05:06`, each maybe with a leading `-`.

/// A duration's three parts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Duration {
    /// Months.
    pub months: i32,
    /// Days.
    pub days: i32,
    /// Nanoseconds.
    pub nanoseconds: i64,
}

const NANOS_PER_MICRO: i64 = 1_000;
const NANOS_PER_MILLI: i64 = 1_000 * NANOS_PER_MICRO;
const NANOS_PER_SECOND: i64 = 1_000 * NANOS_PER_MILLI;
const NANOS_PER_MINUTE: i64 = 60 * NANOS_PER_SECOND;
const NANOS_PER_HOUR: i64 = 60 * NANOS_PER_MINUTE;

/// Writes `v` as Cassandra's unsigned vint.
pub fn write_unsigned_vint(v: u64, out: &mut Vec<u8>) {
    let magnitude = (v | 1).leading_zeros() as usize;
    let size = (639 - magnitude * 9) >> 6;
    if size == 1 {
        out.push(v as u8);
        return;
    }
    let extra = size - 1;
    let bytes = v.to_be_bytes();
    let start = 8usize.saturating_sub(size);
    let first = if size == 9 { 0xFF } else { bytes[start] | !(0xFFu8 >> extra) };
    out.push(first);
    out.extend_from_slice(&bytes[8 - extra..]);
}

/// Reads one unsigned vint from the front of `buf`.
pub fn read_unsigned_vint(buf: &mut &[u8]) -> Option<u64> {
    let (&first, rest) = buf.split_first()?;
    let extra = first.leading_ones() as usize;
    if rest.len() < extra {
        return None;
    }
    let mut v = u64::from(first & (0xFFu8.checked_shr(extra as u32).unwrap_or(0)));
    for &b in &rest[..extra] {
        v = (v << 8) | u64::from(b);
    }
    *buf = &rest[extra..];
    Some(v)
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

impl Duration {
    /// The value's bytes.
    pub fn to_bytes(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(12);
        for v in [i64::from(self.months), i64::from(self.days), self.nanoseconds] {
            write_unsigned_vint(zigzag(v), &mut out);
        }
        out
    }

    /// Reads a value, refusing it with 3.11's `DurationSerializer.validate` messages.
    pub fn from_bytes(v: &[u8]) -> Result<Duration, String> {
        if v.len() < 3 {
            return Err(format!("Expected at least 3 bytes for a duration ({})", v.len()));
        }
        let mut buf = v;
        let mut next = || read_unsigned_vint(&mut buf).map(unzigzag).ok_or_else(|| "Truncated duration".to_string());
        let (months, days, nanoseconds) = (next()?, next()?, next()?);
        let months = i32::try_from(months)
            .map_err(|_| format!("The duration months must be a 32 bits integer but was: {months}"))?;
        let days =
            i32::try_from(days).map_err(|_| format!("The duration days must be a 32 bits integer but was: {days}"))?;
        if !((months >= 0 && days >= 0 && nanoseconds >= 0) || (months <= 0 && days <= 0 && nanoseconds <= 0)) {
            return Err(format!(
                "The duration months, days and nanoseconds must be all of the same sign ({months}, {days}, {nanoseconds})"
            ));
        }
        Ok(Duration { months, days, nanoseconds })
    }

    /// Parses 3.11's text forms; the error is 3.11's InvalidRequestException message.
    pub fn parse(input: &str) -> Result<Duration, String> {
        let negative = input.starts_with('-');
        let source = if negative { &input[1..] } else { input };
        let unable = || format!("Unable to convert '{source}' to a duration");
        let mut b = Builder { negative, ..Builder::default() };
        if let Some(iso) = source.strip_prefix('P') {
            if let Some(weeks) = iso.strip_suffix('W') {
                b.add(3, digits(weeks).ok_or_else(unable)?)?;
            } else if iso.contains('-') {
                parse_iso_alternative(iso, &mut b).ok_or_else(unable)??;
            } else {
                parse_iso(iso, &mut b).ok_or_else(unable)??;
            }
        } else {
            let mut rest = source;
            if rest.is_empty() {
                return Err(unable());
            }
            while !rest.is_empty() {
                let n = rest.bytes().take_while(u8::is_ascii_digit).count();
                if n == 0 {
                    return Err(unable());
                }
                let number = digits(&rest[..n]).ok_or_else(unable)?;
                rest = &rest[n..];
                let (unit, len) = unit_of(rest).ok_or_else(unable)?;
                rest = &rest[len..];
                b.add(unit, number)?;
            }
        }
        Ok(b.build())
    }
}

/// The unit at the start of `s` (3.11's order index) and its length; `mo` and `ms` before `m`.
fn unit_of(s: &str) -> Option<(usize, usize)> {
    let lower: String = s.chars().take(2).collect::<String>().to_lowercase();
    let two = [("mo", 2), ("ms", 8), ("us", 9), ("µs", 9), ("ns", 10)];
    for (text, unit) in two {
        if lower.starts_with(text) {
            return Some((unit, text.len()));
        }
    }
    let unit = match lower.chars().next()? {
        'y' => 1,
        'w' => 3,
        'd' => 4,
        'h' => 5,
        'm' => 6,
        's' => 7,
        _ => return None,
    };
    Some((unit, 1))
}

fn digits(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `[nY][nM][nD][T[nH][nM][nS]]` after the `P`: `None` if it does not match.
fn parse_iso(s: &str, b: &mut Builder) -> Option<Result<(), String>> {
    let (date, time) = match s.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let mut parts = Vec::new();
    let mut take = |text: &str, units: &[(char, usize)]| -> Option<()> {
        let mut rest = text;
        let mut allowed = units.iter();
        while !rest.is_empty() {
            let n = rest.bytes().take_while(u8::is_ascii_digit).count();
            let number = digits(&rest[..n])?;
            let designator = rest[n..].chars().next()?;
            let (_, unit) = allowed.by_ref().find(|(c, _)| *c == designator)?;
            parts.push((*unit, number));
            rest = &rest[n + 1..];
        }
        Some(())
    };
    take(date, &[('Y', 1), ('M', 2), ('D', 4)])?;
    if let Some(time) = time {
        take(time, &[('H', 5), ('M', 6), ('S', 7)])?;
    }
    Some(parts.into_iter().try_for_each(|(unit, n)| b.add(unit, n)))
}

/// `YYYY-MM-DDThh:mm:ss` after the `P`.
fn parse_iso_alternative(s: &str, b: &mut Builder) -> Option<Result<(), String>> {
    let bytes = s.as_bytes();
    if bytes.len() != 19 || bytes[4] != b'-' || bytes[7] != b'-' || bytes[10] != b'T' {
        return None;
    }
    if bytes[13] != b':' || bytes[16] != b':' {
        return None;
    }
    let fields = [(0..4, 1), (5..7, 2), (8..10, 4), (11..13, 5), (14..16, 6), (17..19, 7)];
    let mut values = Vec::new();
    for (range, unit) in fields {
        values.push((unit, digits(s.get(range)?)?));
    }
    Some(values.into_iter().try_for_each(|(unit, n)| b.add(unit, n)))
}

#[derive(Default)]
struct Builder {
    negative: bool,
    months: i64,
    days: i64,
    nanoseconds: i64,
    current: usize,
}

const UNIT_NAMES: [&str; 11] = [
    "",
    "years",
    "months",
    "weeks",
    "days",
    "hours",
    "minutes",
    "seconds",
    "milliseconds",
    "microseconds",
    "nanoseconds",
];

impl Builder {
    /// Adds `n` of unit `unit` (3.11's index: years 1 ... nanoseconds 10), in order.
    fn add(&mut self, unit: usize, n: i64) -> Result<(), String> {
        if unit == self.current {
            return Err(format!("Invalid duration. The {} are specified multiple times", UNIT_NAMES[unit]));
        }
        if unit < self.current {
            return Err(format!(
                "Invalid duration. The {} should be after {}",
                UNIT_NAMES[self.current], UNIT_NAMES[unit]
            ));
        }
        self.current = unit;
        let (total, per, what, max) = match unit {
            1 => (&mut self.months, 12, "months", i64::from(i32::MAX)),
            2 => (&mut self.months, 1, "months", i64::from(i32::MAX)),
            3 => (&mut self.days, 7, "days", i64::from(i32::MAX)),
            4 => (&mut self.days, 1, "days", i64::from(i32::MAX)),
            5 => (&mut self.nanoseconds, NANOS_PER_HOUR, "nanoseconds", i64::MAX),
            6 => (&mut self.nanoseconds, NANOS_PER_MINUTE, "nanoseconds", i64::MAX),
            7 => (&mut self.nanoseconds, NANOS_PER_SECOND, "nanoseconds", i64::MAX),
            8 => (&mut self.nanoseconds, NANOS_PER_MILLI, "nanoseconds", i64::MAX),
            9 => (&mut self.nanoseconds, NANOS_PER_MICRO, "nanoseconds", i64::MAX),
            _ => (&mut self.nanoseconds, 1, "nanoseconds", i64::MAX),
        };
        if n > (max - *total) / per {
            return Err(format!("Invalid duration. The total number of {what} must be less or equal to {}", i32::MAX));
        }
        *total += n * per;
        Ok(())
    }

    fn build(&self) -> Duration {
        // Each total was checked against its bound when added.
        let months = i32::try_from(self.months).unwrap_or(i32::MAX);
        let days = i32::try_from(self.days).unwrap_or(i32::MAX);
        if self.negative {
            Duration { months: -months, days: -days, nanoseconds: -self.nanoseconds }
        } else {
            Duration { months, days, nanoseconds: self.nanoseconds }
        }
    }
}

impl std::fmt::Display for Duration {
    /// 3.11's `Duration.toString`: `1y2mo3d4h5m6s7ms8us9ns`, zero parts left out.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = String::new();
        if self.months < 0 || self.days < 0 || self.nanoseconds < 0 {
            out.push('-');
        }
        let mut append = |dividend: u64, divisor: u64, unit: &str| -> u64 {
            if dividend == 0 || dividend < divisor {
                return dividend;
            }
            out.push_str(&format!("{}{unit}", dividend / divisor));
            dividend % divisor
        };
        let rest = append(u64::from(self.months.unsigned_abs()), 12, "y");
        append(rest, 1, "mo");
        append(u64::from(self.days.unsigned_abs()), 1, "d");
        if self.nanoseconds != 0 {
            let mut rest = self.nanoseconds.unsigned_abs();
            for (per, unit) in [
                (NANOS_PER_HOUR, "h"),
                (NANOS_PER_MINUTE, "m"),
                (NANOS_PER_SECOND, "s"),
                (NANOS_PER_MILLI, "ms"),
                (NANOS_PER_MICRO, "us"),
                (1, "ns"),
            ] {
                rest = append(rest, per as u64, unit);
            }
        }
        f.write_str(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(months: i32, days: i32, nanoseconds: i64) -> Duration {
        Duration { months, days, nanoseconds }
    }

    #[test]
    fn text_forms_parse_as_3_11() {
        assert_eq!(Duration::parse("1h30m"), Ok(d(0, 0, 90 * NANOS_PER_MINUTE)));
        assert_eq!(Duration::parse("1y2mo3w4d"), Ok(d(14, 25, 0)));
        assert_eq!(Duration::parse("-2d10ms"), Ok(d(0, -2, -10 * NANOS_PER_MILLI)));
        assert_eq!(Duration::parse("3µs4NS"), Ok(d(0, 0, 3004)));
        assert_eq!(Duration::parse("P1DT2H"), Ok(d(0, 1, 2 * NANOS_PER_HOUR)));
        assert_eq!(Duration::parse("P1Y2M"), Ok(d(14, 0, 0)));
        assert_eq!(Duration::parse("PT5M"), Ok(d(0, 0, 5 * NANOS_PER_MINUTE)));
        assert_eq!(Duration::parse("P1W"), Ok(d(0, 7, 0)));
        assert_eq!(Duration::parse("P0001-02-03T04:05:06"), Ok(d(14, 3, 4 * NANOS_PER_HOUR + 306 * NANOS_PER_SECOND)));
        assert_eq!(Duration::parse("1m1h"), Err("Invalid duration. The minutes should be after hours".into()));
        assert_eq!(Duration::parse("1h1h"), Err("Invalid duration. The hours are specified multiple times".into()));
        assert_eq!(Duration::parse("1x"), Err("Unable to convert '1x' to a duration".into()));
        assert_eq!(Duration::parse("P1H"), Err("Unable to convert 'P1H' to a duration".into()));
        assert!(Duration::parse("3000000000mo").expect_err("too many months").contains("total number of months"));
    }

    #[test]
    fn display_is_3_11s_to_string() {
        assert_eq!(d(14, 3, 90 * NANOS_PER_MINUTE + 5).to_string(), "1y2mo3d1h30m5ns");
        assert_eq!(d(0, -1, -NANOS_PER_MILLI).to_string(), "-1d1ms");
        assert_eq!(d(0, 0, 0).to_string(), "");
    }

    #[test]
    fn vints_round_trip_and_match_cassandra() {
        assert_eq!(d(1, 2, 3).to_bytes(), [2, 4, 6]);
        assert_eq!(d(-1, 0, 0).to_bytes(), [1, 0, 0]);
        // 1 hour = 3.6e12 ns, zigzag 7.2e12: seven bytes, the first with six leading ones.
        assert_eq!(d(0, 0, NANOS_PER_HOUR).to_bytes(), [0, 0, 0xFC, 0x06, 0x8C, 0x61, 0x71, 0x40, 0x00]);
        for v in [d(0, 0, 0), d(i32::MAX, i32::MAX, i64::MAX), d(i32::MIN, i32::MIN, i64::MIN), d(-7, -300, -1)] {
            assert_eq!(Duration::from_bytes(&v.to_bytes()), Ok(v));
        }
        for n in [0u64, 1, 127, 128, 16383, 16384, u64::MAX, 1 << 56, (1 << 56) - 1] {
            let mut out = Vec::new();
            write_unsigned_vint(n, &mut out);
            let mut buf = &out[..];
            assert_eq!(read_unsigned_vint(&mut buf), Some(n), "{n}");
            assert!(buf.is_empty());
        }
        assert_eq!(Duration::from_bytes(&[2, 0]), Err("Expected at least 3 bytes for a duration (2)".into()));
        assert!(Duration::from_bytes(&[2, 1, 0]).expect_err("mixed signs").contains("same sign"));
        assert!(Duration::from_bytes(&[0, 0, 0xFF]).is_err());
    }
}
