//! Bloom filter over partition key bytes, so most reads of absent keys touch no file.
//!
//! Probes use double hashing (`h1 + i * h2`) over the two halves of MurmurHash3 x64/128 of the
//! key, as Cassandra does. The hash (`dht::reference_x64_128`) is part of the file format:
//! a filter written today must probe the same bits in every later build.

use crate::data::Reader;
use crate::error::CorruptData;

use super::format::{self, FormatVersion, FILTER_MAGIC};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BloomFilter {
    hash_count: u32,
    bit_count: u64,
    words: Vec<u64>,
}

/// Filters larger than this are refused on read: a corrupt bit count must not allocate the world.
const MAX_BITS: u64 = 1 << 40;

impl BloomFilter {
    /// A filter sized for `expected_keys` keys at false positive chance `fp_chance` (0 < p <= 1).
    /// At 1 (Cassandra's way to turn filters off) it is one word of set bits: every key may be
    /// present, and reads go to the index.
    pub fn new(expected_keys: usize, fp_chance: f64) -> BloomFilter {
        if fp_chance >= 1.0 {
            return BloomFilter { hash_count: 1, bit_count: 64, words: vec![u64::MAX] };
        }
        let n = expected_keys.max(1) as f64;
        let ln2 = std::f64::consts::LN_2;
        let bits_per_key = (-fp_chance.ln() / (ln2 * ln2)).max(1.0);
        let hash_count = ((bits_per_key * ln2).round() as u32).clamp(1, 20);
        let bit_count = ((n * bits_per_key).ceil() as u64).clamp(64, MAX_BITS);
        let words = vec![0u64; bit_count.div_ceil(64) as usize];
        BloomFilter { hash_count, bit_count, words }
    }

    pub fn add(&mut self, key: &[u8]) {
        let (h1, h2) = murmur3_x64_128(key, 0);
        for i in 0..self.hash_count as u64 {
            let bit = h1.wrapping_add(i.wrapping_mul(h2)) % self.bit_count;
            if let Some(w) = self.words.get_mut((bit / 64) as usize) {
                *w |= 1 << (bit % 64);
            }
        }
    }

    /// False means the key was never added; true means it probably was.
    pub fn might_contain(&self, key: &[u8]) -> bool {
        let (h1, h2) = murmur3_x64_128(key, 0);
        (0..self.hash_count as u64).all(|i| {
            let bit = h1.wrapping_add(i.wrapping_mul(h2)) % self.bit_count;
            self.words.get((bit / 64) as usize).is_some_and(|w| w & (1 << (bit % 64)) != 0)
        })
    }

    pub fn encode(&self, version: FormatVersion) -> Vec<u8> {
        let mut out = format::header(FILTER_MAGIC, version);
        out.reserve(self.words.len() * 8 + 16);
        out.extend_from_slice(&self.hash_count.to_be_bytes());
        out.extend_from_slice(&self.bit_count.to_be_bytes());
        for w in &self.words {
            out.extend_from_slice(&w.to_be_bytes());
        }
        format::seal(&mut out);
        out
    }

    /// Decodes the body of a verified Filter component (after magic and version, before the CRC).
    pub fn decode(body: &[u8]) -> Result<BloomFilter, CorruptData> {
        let mut r = Reader::new(body);
        let hash_count = r.u32()?;
        let bit_count = r.u64()?;
        if hash_count == 0 || hash_count > 64 {
            return Err(CorruptData::BadValue { what: "bloom filter hash count", value: hash_count as u64 });
        }
        if bit_count == 0 || bit_count > MAX_BITS {
            return Err(CorruptData::BadValue { what: "bloom filter bit count", value: bit_count });
        }
        let n = bit_count.div_ceil(64) as usize;
        if r.remaining() != n * 8 {
            return Err(CorruptData::Truncated { at: r.position(), wanted: n * 8 });
        }
        let mut words = Vec::with_capacity(n);
        for _ in 0..n {
            words.push(r.u64()?);
        }
        Ok(BloomFilter { hash_count, bit_count, words })
    }
}

/// Reference MurmurHash3 x64/128; returns (h1, h2). Part of the Filter format: a test pins it
/// to the `murmur3` crate's output.
pub fn murmur3_x64_128(data: &[u8], seed: u64) -> (u64, u64) {
    crate::dht::reference_x64_128(data, seed)
}
