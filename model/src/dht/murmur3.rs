//! Cassandra's variant of MurmurHash3 x64/128 (`org.apache.cassandra.utils.MurmurHash.hash3_x64_128`).
//!
//! The Java port reads the 1..15 tail bytes with `(long) key.get(i)`, and Java bytes are signed,
//! so a tail byte >= 0x80 is sign-extended to 64 bits before it is shifted and XORed in. Reference
//! Murmur3 zero-extends. The two agree on every key whose tail bytes are all < 0x80 (all ASCII
//! text, for instance) and differ otherwise. Murmur3Partitioner tokens must match Cassandra's
//! exactly, so this module reproduces the Java behaviour on purpose; do not "fix" it.
//!
//! Full 16-byte blocks are read as unsigned little-endian words, as in the reference algorithm.
//! [`reference_x64_128`] is the reference algorithm itself (SSTable bloom filters use it).

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

/// Cassandra's `hash3_x64_128(key, seed)`: returns `(h1, h2)` as Java's two signed longs.
/// Murmur3Partitioner uses `h1` with seed 0.
pub fn hash3_x64_128(key: &[u8], seed: u64) -> (i64, i64) {
    let (h1, h2) = x64_128(key, seed, sign_extended);
    (h1 as i64, h2 as i64)
}

/// Reference MurmurHash3 x64/128 (tail bytes zero-extended); returns `(h1, h2)`.
pub fn reference_x64_128(key: &[u8], seed: u64) -> (u64, u64) {
    x64_128(key, seed, u64::from)
}

/// The algorithm, with the tail bytes widened to 64 bits by `widen`.
fn x64_128(key: &[u8], seed: u64, widen: fn(u8) -> u64) -> (u64, u64) {
    let mut h1 = seed;
    let mut h2 = seed;

    let mut blocks = key.chunks_exact(16);
    for block in &mut blocks {
        let (lo, hi) = block.split_at(8);
        h1 ^= mix_k1(le_word(lo));
        h1 = h1.rotate_left(27).wrapping_add(h2).wrapping_mul(5).wrapping_add(0x52dc_e729);
        h2 ^= mix_k2(le_word(hi));
        h2 = h2.rotate_left(31).wrapping_add(h1).wrapping_mul(5).wrapping_add(0x3849_5ab5);
    }

    let tail = blocks.remainder();
    if tail.len() > 8 {
        // Tail bytes 8..15 go into k2, byte i at bit 8 * (i - 8), sign-extended like Java.
        let k2 = tail.iter().enumerate().skip(8).fold(0u64, |k, (i, &b)| k ^ widen(b) << (8 * (i - 8)));
        h2 ^= mix_k2(k2);
    }
    if !tail.is_empty() {
        let k1 = tail.iter().take(8).enumerate().fold(0u64, |k, (i, &b)| k ^ widen(b) << (8 * i));
        h1 ^= mix_k1(k1);
    }

    // Java XORs an int length into a long; the length is never negative so this is a plain widen.
    let len = key.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

/// A Java `byte` widened to `long`: values >= 0x80 become negative, filling the high bits with ones.
fn sign_extended(b: u8) -> u64 {
    b as i8 as i64 as u64
}

fn le_word(bytes: &[u8]) -> u64 {
    bytes.iter().rev().fold(0u64, |w, &b| (w << 8) | u64::from(b))
}

fn mix_k1(k: u64) -> u64 {
    k.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2)
}

fn mix_k2(k: u64) -> u64 {
    k.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1)
}

fn fmix(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}
