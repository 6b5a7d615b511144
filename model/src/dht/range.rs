//! Token ranges and key-scan bounds, with Cassandra's ring semantics (`dht.Range`, `dht.Bounds`).
//!
//! Tokens compare as bytes in every partitioner and the minimum token is always the empty
//! encoding, so these types work without knowing the partitioner.
//!
//! A [`Range`] `(left, right]` wraps around the end of the ring when `left >= right`. Two special
//! cases follow from that rule, as in Cassandra:
//! - `left == right` is the whole ring (for any token, not just the minimum);
//! - a range whose `right` is the minimum token runs to the end of the ring: `(t, min]` holds every
//!   token after `t` and is not split further by [`Range::unwrap`].

use super::token::{DecoratedKey, Token};

/// The tokens in `(left, right]`, wrapping past the end of the ring when `left >= right`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Range {
    pub left: Token,
    pub right: Token,
}

/// The tokens in `[left, right]`, used for key-based scans where the start key is included.
/// `right` is expected to be `>= left`, or the minimum token meaning "to the end of the ring";
/// `[min, min]` is the whole ring.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bounds {
    pub left: Token,
    pub right: Token,
}

/// Whether `point` lies in `(left, right]`, wrapping when `left >= right`.
fn range_contains(left: &Token, right: &Token, point: &Token) -> bool {
    if left >= right {
        point > left || point <= right
    } else {
        point > left && point <= right
    }
}

impl Range {
    pub fn new(left: Token, right: Token) -> Range {
        Range { left, right }
    }

    /// `(min, min]`: every token.
    pub fn full_ring() -> Range {
        Range::new(Token::minimum(), Token::minimum())
    }

    /// Cassandra's `isWrapAround`: `left >= right`. True for the full ring and for ranges that
    /// end at the minimum token.
    pub fn is_wrapping(&self) -> bool {
        self.left >= self.right
    }

    pub fn is_full_ring(&self) -> bool {
        self.left == self.right
    }

    pub fn contains(&self, token: &Token) -> bool {
        range_contains(&self.left, &self.right, token)
    }

    /// Whether every token of `that` is also in `self`.
    pub fn contains_range(&self, that: &Range) -> bool {
        if self.is_full_ring() {
            return true;
        }
        match (self.is_wrapping(), that.is_wrapping()) {
            (a, b) if a == b => self.left <= that.left && that.right <= self.right,
            // A wrapping range holds a non-wrapping one that fits in either of its two segments.
            (true, false) => self.left <= that.left || that.right <= self.right,
            // A non-wrapping range cannot hold a wrapping one.
            _ => false,
        }
    }

    /// Splits a wrapping range at the minimum token into `(left, min]` and `(min, right]`.
    /// Non-wrapping ranges, ranges ending at the minimum and `(min, min]` come back unchanged.
    pub fn unwrap(&self) -> Vec<Range> {
        if !self.is_wrapping() || self.right.is_minimum() {
            return vec![self.clone()];
        }
        vec![Range::new(self.left.clone(), Token::minimum()), Range::new(Token::minimum(), self.right.clone())]
    }

    /// The ranges both `self` and `that` cover: empty, one range, or two disjoint ranges when one
    /// wraps and the other covers both of its ends.
    pub fn intersection_with(&self, that: &Range) -> Vec<Range> {
        if that.contains_range(self) {
            return vec![self.clone()];
        }
        if self.contains_range(that) {
            return vec![that.clone()];
        }
        match (self.is_wrapping(), that.is_wrapping()) {
            (false, false) => {
                if self.left < that.right && that.left < self.right {
                    let left = (&self.left).max(&that.left).clone();
                    let right = (&self.right).min(&that.right).clone();
                    vec![Range::new(left, right)]
                } else {
                    Vec::new()
                }
            }
            (true, true) => {
                // Two wrapping ranges always meet near the end of the ring. Equal lefts would mean
                // one contains the other, which was ruled out above.
                if self.left < that.left {
                    both_wrapping(self, that)
                } else {
                    both_wrapping(that, self)
                }
            }
            (true, false) => one_wrapping(self, that),
            (false, true) => one_wrapping(that, self),
        }
    }

    pub fn intersects(&self, that: &Range) -> bool {
        !self.intersection_with(that).is_empty()
    }

    pub fn intersects_bounds(&self, bounds: &Bounds) -> bool {
        // A Range built from equal bounds would be the whole ring, so that case is only the point.
        self.contains(&bounds.left)
            || (bounds.left != bounds.right && self.intersects(&Range::new(bounds.left.clone(), bounds.right.clone())))
    }
}

/// Intersection of two wrapping ranges where `first.left < second.left`.
fn both_wrapping(first: &Range, second: &Range) -> Vec<Range> {
    let mut out = Vec::with_capacity(2);
    if second.right > first.left {
        out.push(Range::new(first.left.clone(), second.right.clone()));
    }
    out.push(Range::new(second.left.clone(), first.right.clone()));
    out
}

fn one_wrapping(wrapping: &Range, other: &Range) -> Vec<Range> {
    let mut out = Vec::with_capacity(2);
    if other.contains(&wrapping.right) {
        out.push(Range::new(other.left.clone(), wrapping.right.clone()));
    }
    // wrapping.left itself is outside the wrapping range, hence the extra comparison.
    if other.contains(&wrapping.left) && wrapping.left < other.right {
        out.push(Range::new(wrapping.left.clone(), other.right.clone()));
    }
    out
}

impl Bounds {
    pub fn new(left: Token, right: Token) -> Bounds {
        Bounds { left, right }
    }

    pub fn contains(&self, token: &Token) -> bool {
        // As a Range, equal ends would mean the whole ring; for Bounds that only holds for
        // [min, min], any other [t, t] is the single token t.
        *token == self.left
            || ((self.right.is_minimum() || self.left != self.right) && range_contains(&self.left, &self.right, token))
    }
}

/// Where a scan of partitions starts or stops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyBound {
    Unbounded,
    Key { key: DecoratedKey, inclusive: bool },
    Token { token: Token, inclusive: bool },
}

impl KeyBound {
    /// The smallest decorated key a scan starting at this bound must look at.
    pub fn as_lower_key(&self) -> DecoratedKey {
        match self {
            KeyBound::Unbounded => DecoratedKey::new(Token::minimum(), Vec::new()),
            KeyBound::Key { key, .. } => key.clone(),
            KeyBound::Token { token, .. } => DecoratedKey::new(token.clone(), Vec::new()),
        }
    }

    /// True when `key` is at or after this bound taken as a lower bound.
    pub fn admits_from_below(&self, key: &DecoratedKey) -> bool {
        match self {
            KeyBound::Unbounded => true,
            KeyBound::Key { key: k, inclusive } => {
                if *inclusive {
                    key >= k
                } else {
                    key > k
                }
            }
            KeyBound::Token { token, inclusive } => {
                if *inclusive {
                    &key.token >= token
                } else {
                    &key.token > token
                }
            }
        }
    }

    /// True when `key` is at or before this bound taken as an upper bound.
    pub fn admits_from_above(&self, key: &DecoratedKey) -> bool {
        match self {
            KeyBound::Unbounded => true,
            KeyBound::Key { key: k, inclusive } => {
                if *inclusive {
                    key <= k
                } else {
                    key < k
                }
            }
            KeyBound::Token { token, inclusive } => {
                if *inclusive {
                    &key.token <= token
                } else {
                    &key.token < token
                }
            }
        }
    }
}
