//! Text forms shared by the scalar types: Java-style number formatting, `BigDecimal` parsing
//! and ordering, and ISO-8601 dates and times (always UTC: Cassandra would use the server's
//! zone for a date without one; a fixed zone keeps Sibyl nodes consistent with each other).

use std::cmp::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

use num_bigint::{BigInt, Sign};

// ---- decimals ----

fn decimal_digits(n: &BigInt) -> i64 {
    i64::try_from(n.magnitude().to_string().len()).unwrap_or(i64::MAX)
}

/// `BigDecimal.compareTo` of `ua × 10^-sa` and `ub × 10^-sb`: numeric, scale-blind, and never
/// builds a power of ten larger than the digits already present (scales can be ±2^31).
pub(super) fn decimal_cmp(ua: &BigInt, sa: i32, ub: &BigInt, sb: i32) -> Ordering {
    let sign_rank = |s: Sign| match s {
        Sign::Minus => -1,
        Sign::NoSign => 0,
        Sign::Plus => 1,
    };
    let by_sign = sign_rank(ua.sign()).cmp(&sign_rank(ub.sign()));
    if by_sign != Ordering::Equal || ua.sign() == Sign::NoSign {
        return by_sign;
    }
    // Same non-zero sign: compare magnitudes by their decimal exponent first.
    let (da, db) = (decimal_digits(ua), decimal_digits(ub));
    let (ea, eb) = (da - i64::from(sa), db - i64::from(sb));
    let magnitude = ea.cmp(&eb).then_with(|| {
        // Equal exponents: the scale gap equals the digit-count gap, so it is small.
        let (ma, mb) = (ua.magnitude(), ub.magnitude());
        let gap = u32::try_from((i64::from(sa) - i64::from(sb)).unsigned_abs()).unwrap_or(u32::MAX);
        let ten = num_bigint::BigUint::from(10u32).pow(gap);
        match sa.cmp(&sb) {
            Ordering::Greater => ma.cmp(&(mb * ten)),
            Ordering::Less => (ma * ten).cmp(mb),
            Ordering::Equal => ma.cmp(mb),
        }
    });
    if ua.sign() == Sign::Minus {
        magnitude.reverse()
    } else {
        magnitude
    }
}

/// `BigDecimal.toString`: plain notation when the scale is non-negative and the exponent is at
/// least -6, scientific (`1.23E+5`) otherwise.
pub(super) fn decimal_to_string(unscaled: &BigInt, scale: i32) -> String {
    let coeff = unscaled.magnitude().to_string();
    let sign = if unscaled.sign() == Sign::Minus { "-" } else { "" };
    if scale == 0 {
        return format!("{sign}{coeff}");
    }
    let len = i64::try_from(coeff.len()).unwrap_or(i64::MAX);
    let scale64 = i64::from(scale);
    let adjusted = -scale64 + (len - 1);
    if scale > 0 && adjusted >= -6 {
        let pad = scale64 - len;
        if pad >= 0 {
            let zeros = "0".repeat(usize::try_from(pad).unwrap_or(0));
            format!("{sign}0.{zeros}{coeff}")
        } else {
            let split = usize::try_from(len - scale64).unwrap_or(0);
            let (int_part, frac_part) = coeff.split_at(split.min(coeff.len()));
            format!("{sign}{int_part}.{frac_part}")
        }
    } else {
        let (first, rest) = coeff.split_at(1.min(coeff.len()));
        let mut out = format!("{sign}{first}");
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        if adjusted != 0 {
            out.push('E');
            if adjusted > 0 {
                out.push('+');
            }
            out.push_str(&adjusted.to_string());
        }
        out
    }
}

/// Parses `java.math.BigDecimal`'s string grammar: `[+-]digits[.digits][(e|E)[+-]digits]`.
pub(super) fn decimal_from_string(s: &str) -> Result<(BigInt, i32), String> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => {
            let exp = &body[i + 1..];
            let exp: i64 = exp.parse().map_err(|_| format!("bad exponent '{exp}'"))?;
            (&body[..i], exp)
        }
        None => (body, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if int_part.is_empty() && frac_part.is_empty() || !all_digits(int_part) || !all_digits(frac_part) {
        return Err("not a decimal number".to_string());
    }
    let digits = format!("{}{int_part}{frac_part}", if negative { "-" } else { "" });
    let unscaled: BigInt = digits.parse().map_err(|e| format!("{e}"))?;
    let scale = i64::try_from(frac_part.len()).unwrap_or(i64::MAX).saturating_sub(exponent);
    let scale = i32::try_from(scale).map_err(|_| "exponent out of range".to_string())?;
    Ok((unscaled, scale))
}

// ---- floating point ----

/// Moves Rust's `1.5e-5` exponent form to Java's `1.5E-5`, with a `.0` when no fraction.
fn java_scientific(exp_form: &str) -> String {
    let (mantissa, exp) = exp_form.split_once('e').unwrap_or((exp_form, "0"));
    let mantissa = if mantissa.contains('.') { mantissa.to_string() } else { format!("{mantissa}.0") };
    format!("{mantissa}E{exp}")
}

fn java_plain(plain: String) -> String {
    if plain.contains('.') {
        plain
    } else {
        plain + ".0"
    }
}

/// `Double.toString` layout: `NaN`, `Infinity`, `1.0`, `1.0E7`, `1.0E-4`.
pub(super) fn java_double_to_string(x: f64) -> String {
    java_to_string(x.is_nan(), x.is_infinite(), x.is_sign_negative(), x.abs(), &format!("{x}"), &format!("{x:e}"))
}

/// `Float.toString` layout, see [`java_double_to_string`]. Formatting the `f32` itself keeps the
/// shortest digits for a float, not for the double it widens to.
pub(super) fn java_float_to_string(x: f32) -> String {
    java_to_string(
        x.is_nan(),
        x.is_infinite(),
        x.is_sign_negative(),
        x.abs() as f64,
        &format!("{x}"),
        &format!("{x:e}"),
    )
}

fn java_to_string(nan: bool, infinite: bool, negative: bool, abs: f64, plain: &str, scientific: &str) -> String {
    if nan {
        return "NaN".to_string();
    }
    if infinite {
        return if negative { "-Infinity" } else { "Infinity" }.to_string();
    }
    if abs == 0.0 || (1e-3..1e7).contains(&abs) {
        java_plain(plain.to_string())
    } else {
        java_scientific(scientific)
    }
}

// ---- dates ----

const MS_PER_DAY: i64 = 86_400_000;
const NANOS_PER_DAY: i64 = 86_400_000_000_000;
/// SimpleDateType stores days as an unsigned int with the epoch at 2^31.
const SIMPLE_DATE_EPOCH: i64 = 1 << 31;

/// Days since 1970-01-01 of a proleptic Gregorian date (400-year-era arithmetic).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Inverse of [`days_from_civil`]: (year, month, day).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 { shifted_month + 3 } else { shifted_month - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn format_date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    if y < 0 {
        format!("-{:04}-{m:02}-{d:02}", -y)
    } else {
        format!("{y:04}-{m:02}-{d:02}")
    }
}

/// ISO-8601 UTC with milliseconds, e.g. `2011-02-03T04:05:06.789Z`.
pub(super) fn format_timestamp_ms(ms: i64) -> String {
    let (days, ms_of_day) = (ms.div_euclid(MS_PER_DAY), ms.rem_euclid(MS_PER_DAY));
    let (secs, millis) = (ms_of_day / 1000, ms_of_day % 1000);
    format!("{}T{:02}:{:02}:{:02}.{millis:03}Z", format_date(days), secs / 3600, secs / 60 % 60, secs % 60)
}

/// `yyyy-mm-dd` for a SimpleDateType value.
pub(super) fn format_simple_date(raw: u32) -> String {
    format_date(i64::from(raw) - SIMPLE_DATE_EPOCH)
}

/// `hh:mm:ss.nnnnnnnnn` for a TimeType value; out-of-day values as raw nanoseconds.
pub(super) fn format_time_of_day(nanos: i64) -> String {
    if !(0..NANOS_PER_DAY).contains(&nanos) {
        return nanos.to_string();
    }
    let secs = nanos / 1_000_000_000;
    format!("{:02}:{:02}:{:02}.{:09}", secs / 3600, secs / 60 % 60, secs % 60, nanos % 1_000_000_000)
}

/// A tiny left-to-right reader for date strings.
struct Cursor<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected '{}' at position {}", char::from(c), self.pos))
        }
    }

    /// Reads `min..=max` ASCII digits: (value, how many).
    fn digits(&mut self, min: usize, max: usize) -> Result<(i64, usize), String> {
        let start = self.pos;
        let mut value: i64 = 0;
        while self.pos - start < max {
            match self.peek() {
                Some(c) if c.is_ascii_digit() => {
                    value = value
                        .checked_mul(10)
                        .and_then(|v| v.checked_add(i64::from(c - b'0')))
                        .ok_or("number too large")?;
                    self.pos += 1;
                }
                _ => break,
            }
        }
        let count = self.pos - start;
        if count < min {
            return Err(format!("expected at least {min} digits at position {start}"));
        }
        Ok((value, count))
    }

    fn at_end(&self) -> Result<(), String> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(format!("unexpected character at position {}", self.pos)),
        }
    }

    /// `[-]yyyy-mm-dd` → days since the epoch.
    fn date(&mut self) -> Result<i64, String> {
        let negative = self.eat(b'-');
        let (year, _) = self.digits(4, 9)?;
        let year = if negative { -year } else { year };
        self.expect(b'-')?;
        let (month, _) = self.digits(1, 2)?;
        self.expect(b'-')?;
        let (day, _) = self.digits(1, 2)?;
        if !(1..=12).contains(&month) || !(1..=days_in_month(year, month)).contains(&day) {
            return Err(format!("no such date {year}-{month}-{day}"));
        }
        Ok(days_from_civil(year, month, day))
    }

    /// `hh:mm[:ss[.fffffffff]]` → nanoseconds since midnight.
    fn time(&mut self, seconds_required: bool) -> Result<i64, String> {
        let (hours, _) = self.digits(1, 2)?;
        self.expect(b':')?;
        let (minutes, _) = self.digits(2, 2)?;
        let (mut seconds, mut nanos) = (0, 0);
        if seconds_required || self.peek() == Some(b':') {
            self.expect(b':')?;
            seconds = self.digits(2, 2)?.0;
            if self.eat(b'.') {
                let (fraction, count) = self.digits(1, 9)?;
                nanos = fraction * 10_i64.pow(u32::try_from(9 - count).unwrap_or(0));
            }
        }
        if hours > 23 || minutes > 59 || seconds > 59 {
            return Err(format!("no such time {hours}:{minutes}:{seconds}"));
        }
        Ok(((hours * 60 + minutes) * 60 + seconds) * 1_000_000_000 + nanos)
    }

    /// `Z`, `+hh`, `+hhmm` or `+hh:mm` → offset from UTC in minutes; nothing means UTC.
    fn zone(&mut self) -> Result<i64, String> {
        if self.eat(b'Z') || self.peek().is_none() {
            return Ok(0);
        }
        let sign = match self.peek() {
            Some(b'+') => 1,
            Some(b'-') => -1,
            _ => return Err(format!("unexpected character at position {}", self.pos)),
        };
        self.pos += 1;
        let (hours, _) = self.digits(2, 2)?;
        self.eat(b':');
        let minutes = if self.peek().is_some() { self.digits(2, 2)?.0 } else { 0 };
        Ok(sign * (hours * 60 + minutes))
    }
}

fn is_integer(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Milliseconds since the epoch from `now`, an integer, or an ISO-8601 date with optional time
/// (`T` or a space between) and optional zone (`Z`, `+hhmm`, `+hh:mm`).
pub(super) fn parse_timestamp_ms(s: &str) -> Result<i64, String> {
    if s.eq_ignore_ascii_case("now") {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_err(|e| e.to_string())?;
        return i64::try_from(now.as_millis()).map_err(|e| e.to_string());
    }
    if is_integer(s) {
        return s.parse().map_err(|e| format!("{e}"));
    }
    let mut c = Cursor { s: s.as_bytes(), pos: 0 };
    let days = c.date()?;
    let mut nanos = 0;
    if matches!(c.peek(), Some(b'T' | b' ')) && c.s.get(c.pos + 1).is_some_and(u8::is_ascii_digit) {
        c.pos += 1;
        nanos = c.time(false)?;
    }
    c.eat(b' ');
    let offset_minutes = c.zone()?;
    c.at_end()?;
    days.checked_mul(MS_PER_DAY)
        .and_then(|ms| ms.checked_add(nanos / 1_000_000))
        .and_then(|ms| ms.checked_sub(offset_minutes * 60_000))
        .ok_or_else(|| "date out of range".to_string())
}

/// A SimpleDateType raw value from `yyyy-mm-dd` or the raw unsigned day number.
pub(super) fn parse_simple_date(s: &str) -> Result<u32, String> {
    if is_integer(s) {
        return s.parse::<u32>().map_err(|_| "raw day value out of range".to_string());
    }
    let mut c = Cursor { s: s.as_bytes(), pos: 0 };
    let days = c.date()?;
    c.at_end()?;
    u32::try_from(days + SIMPLE_DATE_EPOCH).map_err(|_| "date out of range".to_string())
}

/// A TimeType value from `hh:mm:ss[.fffffffff]` or raw nanoseconds since midnight.
pub(super) fn parse_time_of_day(s: &str) -> Result<i64, String> {
    if is_integer(s) {
        let nanos: i64 = s.parse().map_err(|e| format!("{e}"))?;
        if !(0..NANOS_PER_DAY).contains(&nanos) {
            return Err("nanoseconds out of the day's range".to_string());
        }
        return Ok(nanos);
    }
    let mut c = Cursor { s: s.as_bytes(), pos: 0 };
    let nanos = c.time(true)?;
    c.at_end()?;
    Ok(nanos)
}

#[cfg(test)]
pub(super) fn days_from_civil_for_tests(year: i64, month: i64, day: i64) -> i64 {
    days_from_civil(year, month, day)
}

#[cfg(test)]
pub(super) fn civil_from_days_for_tests(days: i64) -> (i64, i64, i64) {
    civil_from_days(days)
}
