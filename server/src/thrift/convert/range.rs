//! Key ranges: a Thrift KeyRange (keys or tokens) as the non-wrapping scan bounds the
//! coordinator takes, with Cassandra's checks and reasons (3.11's validateKeyRange).

use model::dht::{KeyBound, Partitioner, Token};
use thrift_idl as t;

use crate::thrift::error::{ire, TResult};

/// 3.11's refusal of a key range whose start key's token comes after its end key's, under a
/// hashing partitioner (0.6 words it differently: `v06::convert::START_KEY_MD5_AFTER_END`).
pub const START_KEY_TOKEN_AFTER_END: &str = "start key's token sorts after end key's token.  this is not allowed; you \
     probably should not specify end key at all except with an ordered partitioner";

/// Start and end bounds of a KeyRange, as one or two non-wrapping pieces: keys `[start, end]`,
/// a key and a token `[start, end]`, or tokens `(start, end]`, which wrap past the end of the
/// ring when `start >= end`. An empty key, or the minimum token at the end, is the ring's end.
pub fn key_range_bounds(p: Partitioner, range: &t::KeyRange) -> TResult<Vec<(KeyBound, KeyBound)>> {
    let parse = |s: &str| p.token_from_string(s).map_err(|e| ire(e.to_string()));
    if range.start_key.is_some() == range.start_token.is_some() || range.end_key.is_some() == range.end_token.is_some()
    {
        return Err(ire("exactly one each of {start key, start token} and {end key, end token} must be specified"));
    }
    // (key, token) serves wide-row Hadoop input; (token, key) was never supported.
    if range.start_token.is_some() && range.end_key.is_some() {
        return Err(ire("start token + end key is not a supported key range"));
    }
    let min = p.min_token();
    if let Some(start_key) = &range.start_key {
        let start = (!start_key.is_empty()).then(|| p.decorate(start_key));
        let end = match (&range.end_key, &range.end_token) {
            (Some(k), _) if !k.is_empty() => {
                let end_key = p.decorate(k);
                if let Some(start) = &start {
                    // Tokens only, as 3.11: keys sharing a token are not compared.
                    if start.token > end_key.token {
                        return Err(ire(if p.preserves_order() {
                            "start key must sort before (or equal to) finish key in your partitioner!"
                        } else {
                            START_KEY_TOKEN_AFTER_END
                        }));
                    }
                }
                KeyBound::Key { key: end_key, inclusive: true }
            }
            (_, Some(tok)) => {
                let t = parse(tok)?;
                if t == min {
                    KeyBound::Unbounded
                } else {
                    // Keys and a token do not wrap, unlike two tokens.
                    if start.as_ref().is_some_and(|s| s.token > t) {
                        return Err(ire("Start key's token sorts after end token"));
                    }
                    KeyBound::Token { token: t, inclusive: true }
                }
            }
            _ => KeyBound::Unbounded,
        };
        check_count(range)?;
        let start = match start {
            Some(key) => KeyBound::Key { key, inclusive: true },
            None => KeyBound::Unbounded,
        };
        return Ok(vec![(start, end)]);
    }
    check_count(range)?;
    let start = parse(range.start_token.as_deref().unwrap_or_default())?;
    let end = parse(range.end_token.as_deref().unwrap_or_default())?;
    let lower = |t: &Token| {
        if *t == min {
            KeyBound::Unbounded
        } else {
            KeyBound::Token { token: t.clone(), inclusive: false }
        }
    };
    let upper = |t: &Token| {
        if *t == min {
            KeyBound::Unbounded
        } else {
            KeyBound::Token { token: t.clone(), inclusive: true }
        }
    };
    // (start, end]: wraps when start >= end, unless end is the minimum (the ring's end).
    // start == end is the whole ring, starting after that token.
    if end != min && start >= end {
        return Ok(vec![(lower(&start), KeyBound::Unbounded), (KeyBound::Unbounded, upper(&end))]);
    }
    Ok(vec![(lower(&start), upper(&end))])
}

fn check_count(range: &t::KeyRange) -> TResult<()> {
    if range.count <= 0 {
        return Err(ire("maxRows must be positive"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thrift::error::ThriftError;

    fn range(keys: (Option<&str>, Option<&str>), tokens: (Option<&str>, Option<&str>), count: i32) -> t::KeyRange {
        t::KeyRange {
            start_key: keys.0.map(|k| k.as_bytes().to_vec()),
            end_key: keys.1.map(|k| k.as_bytes().to_vec()),
            start_token: tokens.0.map(str::to_string),
            end_token: tokens.1.map(str::to_string),
            count,
            row_filter: None,
        }
    }

    fn why(p: Partitioner, r: &t::KeyRange) -> String {
        match key_range_bounds(p, r) {
            Err(ThriftError::Invalid(why)) => why,
            other => panic!("expected InvalidRequestException for {r:?}, got {other:?}"),
        }
    }

    const EXACTLY_ONE: &str = "exactly one each of {start key, start token} and {end key, end token} must be specified";

    #[test]
    fn a_range_has_exactly_one_start_and_one_end() {
        let p = Partitioner::Random;
        assert_eq!(why(p, &range((Some("a"), None), (None, None), 10)), EXACTLY_ONE);
        assert_eq!(why(p, &range((None, Some("a")), (None, None), 10)), EXACTLY_ONE);
        assert_eq!(why(p, &range((Some("a"), Some("b")), (Some("0"), None), 10)), EXACTLY_ONE);
        assert_eq!(why(p, &range((Some("a"), Some("b")), (None, Some("0")), 10)), EXACTLY_ONE);
        assert_eq!(why(p, &range((None, None), (Some("0"), None), 10)), EXACTLY_ONE);
        assert_eq!(
            why(p, &range((None, Some("a")), (Some("0"), None), 10)),
            "start token + end key is not a supported key range"
        );
        assert!(key_range_bounds(p, &range((Some(""), Some("")), (None, None), 10)).is_ok());
        assert!(key_range_bounds(p, &range((Some(""), None), (None, Some("0")), 10)).is_ok());
        assert!(key_range_bounds(p, &range((None, None), (Some("0"), Some("0")), 10)).is_ok());
    }

    #[test]
    fn a_start_key_past_the_end_token_is_refused() {
        let p = Partitioner::ByteOrdered;
        // ByteOrdered tokens are the keys' bytes in hex: "b" is 62.
        assert_eq!(
            why(p, &range((Some("c"), None), (None, Some("62")), 10)),
            "Start key's token sorts after end token"
        );
        assert!(key_range_bounds(p, &range((Some("b"), None), (None, Some("62")), 10)).is_ok());
        assert!(key_range_bounds(p, &range((Some("a"), None), (None, Some("62")), 10)).is_ok());
        // The minimum token ends the ring: nothing sorts after it.
        assert!(key_range_bounds(p, &range((Some("c"), None), (None, Some("")), 10)).is_ok());
    }

    #[test]
    fn start_and_end_keys_are_in_token_order() {
        assert_eq!(
            why(Partitioner::ByteOrdered, &range((Some("b"), Some("a")), (None, None), 10)),
            "start key must sort before (or equal to) finish key in your partitioner!"
        );
        let p = Partitioner::Random;
        let (x, y) = if p.token_for_key(b"a") > p.token_for_key(b"b") { ("a", "b") } else { ("b", "a") };
        assert!(why(p, &range((Some(x), Some(y)), (None, None), 10))
            .starts_with("start key's token sorts after end key's token"));
        assert!(key_range_bounds(p, &range((Some(y), Some(x)), (None, None), 10)).is_ok());
        // An empty end key is the end of the ring.
        assert!(key_range_bounds(p, &range((Some(x), Some("")), (None, None), 10)).is_ok());
    }

    #[test]
    fn a_range_returns_at_least_one_row() {
        for count in [0, -1] {
            assert_eq!(
                why(Partitioner::Random, &range((Some(""), Some("")), (None, None), count)),
                "maxRows must be positive"
            );
        }
    }
}
