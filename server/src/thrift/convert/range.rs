//! Key ranges: a Thrift KeyRange (keys or tokens) as the non-wrapping scan bounds the
//! coordinator takes, with Cassandra's checks and reasons.

use storage::dht::{KeyBound, Partitioner, Token};
use thrift_idl as t;

use crate::thrift::error::{ire, TResult};

/// Start and end bounds of a KeyRange, as one or two non-wrapping pieces: keys `[start, end]`,
/// or tokens `(start, end]`, which wrap past the end of the ring when `start >= end`.
pub fn key_range_bounds(p: Partitioner, range: &t::KeyRange) -> TResult<Vec<(KeyBound, KeyBound)>> {
    let parse = |s: &str| p.token_from_string(s).map_err(|e| ire(e.to_string()));
    if range.start_key.is_some() == range.start_token.is_some() {
        return Err(ire("exactly one of {start key, start token} must be specified"));
    }
    if range.end_key.is_some() && range.end_token.is_some() {
        return Err(ire("only one of {end key, end token} may be specified"));
    }
    if range.start_token.is_some() && range.end_key.is_some() {
        return Err(ire("start token + end key is not a supported key range"));
    }
    if range.count <= 0 {
        return Err(ire("maxRows must be positive"));
    }
    if let Some(start_key) = &range.start_key {
        let start = if start_key.is_empty() {
            KeyBound::Unbounded
        } else {
            KeyBound::Key { key: p.decorate(start_key), inclusive: true }
        };
        let end = match (&range.end_key, &range.end_token) {
            (Some(k), _) if !k.is_empty() => {
                let end_key = p.decorate(k);
                if let KeyBound::Key { key, .. } = &start {
                    if key.token > end_key.token && !p.preserves_order() {
                        return Err(ire("start key's token sorts after end key's token.  this is not allowed; you probably should not specify end key at all except with an ordered partitioner"));
                    }
                    if key > &end_key {
                        return Err(ire("start key must sort before (or equal to) end key in your partitioner!"));
                    }
                }
                KeyBound::Key { key: end_key, inclusive: true }
            }
            (_, Some(tok)) => {
                let t = parse(tok)?;
                if t == p.min_token() {
                    KeyBound::Unbounded
                } else {
                    KeyBound::Token { token: t, inclusive: true }
                }
            }
            _ => KeyBound::Unbounded,
        };
        return Ok(vec![(start, end)]);
    }
    let start = parse(range.start_token.as_deref().unwrap_or_default())?;
    let end = parse(range.end_token.as_deref().unwrap_or_default())?;
    let min = p.min_token();
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
