//! Token arithmetic for the order-preserving partitioners, whose tokens are strings of digits:
//! bytes (8 bits) for ByteOrderedPartitioner, UTF-16 code units (16 bits) for
//! OrderPreservingPartitioner.
//!
//! Cassandra's midpoint pads both tokens with zero digits to the same length `n`, reads them as
//! big-endian numbers on a ring of size `2^(bits * n)`, takes the midpoint (wrapping when
//! `left >= right`), and appends one extra digit with only its top bit set when the halving left
//! a remainder, so the result still sorts strictly between the two tokens.

use num_bigint::BigUint;

/// Reads `digits`, zero-padded on the right to `sig` digits, as a big-endian number.
fn to_big(digits: &[u32], sig: usize, bits: u32) -> BigUint {
    let mut v = BigUint::default();
    for i in 0..sig {
        v <<= bits;
        v += digits.get(i).copied().unwrap_or(0);
    }
    v
}

/// The `sig` low digits of `v`, most significant first.
fn from_big(v: &BigUint, sig: usize, bits: u32) -> Vec<u32> {
    let limbs = v.to_u32_digits();
    let mask = (1u64 << bits) - 1;
    (0..sig)
        .rev()
        .map(|k| {
            let bit = k as u64 * u64::from(bits);
            let limb = limbs.get((bit / 32) as usize).copied().unwrap_or(0);
            ((u64::from(limb) >> (bit % 32)) & mask) as u32
        })
        .collect()
}

/// Cassandra's `FBUtilities.midpoint` followed by `bytesForBig` / `stringForBig`.
pub(crate) fn midpoint(left: &[u32], right: &[u32], bits: u32) -> Vec<u32> {
    let sig = left.len().max(right.len());
    let l = to_big(left, sig, bits);
    let r = to_big(right, sig, bits);
    let (mid, remainder) = if l < r {
        let sum = l + r;
        let rem = sum.bit(0);
        (sum >> 1u32, rem)
    } else {
        let ring = BigUint::from(1u32) << (u64::from(bits) * sig as u64);
        let distance = &ring + r - &l;
        let rem = distance.bit(0);
        (((distance >> 1u32) + l) % ring, rem)
    };
    let mut out = from_big(&mid, sig, bits);
    if remainder {
        out.push(1 << (bits - 1));
    }
    out
}

/// The point `i / n` of the way from `left` to `right` (wrapping as a Range does), with enough
/// extra digits of precision that `n` pieces are distinct when the range allows it. Trailing zero
/// digits are dropped: they do not change where the token falls between its neighbours.
pub(crate) fn split_point(left: &[u32], right: &[u32], bits: u32, i: usize, n: usize) -> Vec<u32> {
    // Extra digits: enough for 2^(bits * extra) >= 256 * n.
    let needed_bits = usize::BITS - n.leading_zeros() + 8;
    let extra = needed_bits.div_ceil(bits) as usize;
    let sig = left.len().max(right.len()) + extra;
    let l = to_big(left, sig, bits);
    let r = to_big(right, sig, bits);
    let ring = BigUint::from(1u32) << (u64::from(bits) * sig as u64);
    let distance = if l < r { &r - &l } else { &ring + &r - &l };
    let pos = (l + distance * BigUint::from(i) / BigUint::from(n)) % ring;
    let mut out = from_big(&pos, sig, bits);
    while out.last() == Some(&0) {
        out.pop();
    }
    out
}

/// The token as a fraction of the ring in `[0, 1)`: `0.d1 d2 d3 ...` in base `2^bits`. Digits past
/// f64 precision do not matter.
pub(crate) fn fraction(digits: &[u32], bits: u32) -> f64 {
    let base = f64::from(1u32 << bits);
    let mut scale = 1.0 / base;
    let mut f = 0.0;
    for &d in digits.iter().take(64 / bits as usize + 1) {
        f += f64::from(d) * scale;
        scale /= base;
    }
    f
}
