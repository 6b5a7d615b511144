//! Row keys: which index each operation touches, and how an index becomes a key.
//!
//! Keys are the index as 10-digit zero-padded decimal text (`0000000042`), like
//! cassandra-stress' legacy mode, so a key written by one run is found by the next run's reads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rand::Rng;

use super::settings::Distribution;

/// Width of generated keys; longer indexes (≥ 10^10) are never generated, see `into_settings`.
pub const KEY_WIDTH: usize = 10;

/// The key of row `index`.
pub fn key_of(index: u64) -> Vec<u8> {
    format!("{index:0width$}", width = KEY_WIDTH).into_bytes()
}

/// Chooses key indexes in `0..num_keys`. Cloned into every worker thread; the sequential
/// position is shared so that threads together walk the keys once.
#[derive(Clone, Debug)]
pub struct KeyGenerator {
    distribution: Distribution,
    num_keys: u64,
    /// Standard deviation of the gaussian distribution, in keys.
    sigma: f64,
    next: Arc<AtomicU64>,
}

impl KeyGenerator {
    /// `stdev` is a fraction of `num_keys` (cassandra-stress' default is 0.1).
    pub fn new(distribution: Distribution, num_keys: u64, stdev: f64) -> KeyGenerator {
        let num_keys = num_keys.max(1);
        KeyGenerator { distribution, num_keys, sigma: stdev * num_keys as f64, next: Arc::new(AtomicU64::new(0)) }
    }

    pub fn num_keys(&self) -> u64 {
        self.num_keys
    }

    /// The next key index, always `< num_keys`.
    pub fn next_index<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match self.distribution {
            Distribution::Uniform => rng.gen_range(0..self.num_keys),
            Distribution::Sequential => self.next.fetch_add(1, Ordering::Relaxed) % self.num_keys,
            Distribution::Gaussian => self.gaussian(rng),
        }
    }

    fn gaussian<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        let mean = (self.num_keys - 1) as f64 / 2.0;
        let max = (self.num_keys - 1) as f64;
        // Draws outside the key range are drawn again (a truncated normal); after a few misses,
        // which only happen with a very wide --stdev, the value is clamped instead.
        let mut x = mean;
        for _ in 0..16 {
            x = mean + self.sigma * standard_normal(rng);
            if (0.0..=max).contains(&x) {
                break;
            }
        }
        x.round().clamp(0.0, max) as u64
    }
}

/// One standard normal draw (Box–Muller); `rand` 0.8 without `rand_distr` has no normal.
fn standard_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    // u1 in (0, 1] keeps ln() finite.
    let u1: f64 = 1.0 - rng.gen::<f64>();
    let u2: f64 = rng.gen::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    #[test]
    fn keys_are_ten_digit_decimal() {
        assert_eq!(key_of(0), b"0000000000");
        assert_eq!(key_of(42), b"0000000042");
        assert_eq!(key_of(9_999_999_999), b"9999999999");
    }

    #[test]
    fn uniform_stays_in_range_and_covers_it() {
        let g = KeyGenerator::new(Distribution::Uniform, 10, 0.1);
        let mut rng = StdRng::seed_from_u64(1);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            let i = g.next_index(&mut rng);
            assert!(i < 10);
            seen[i as usize] += 1;
        }
        // Each key ~1000 times; 700 is far outside what a fair draw produces.
        assert!(seen.iter().all(|&n| n > 700), "{seen:?}");
    }

    #[test]
    fn gaussian_stays_in_range_and_peaks_in_the_middle() {
        let n = 1000;
        let g = KeyGenerator::new(Distribution::Gaussian, n, 0.1);
        let mut rng = StdRng::seed_from_u64(2);
        let mut middle = 0;
        let draws = 20_000;
        for _ in 0..draws {
            let i = g.next_index(&mut rng);
            assert!(i < n);
            if (400..=600).contains(&i) {
                middle += 1;
            }
        }
        // ±1σ around the mean holds ~68% of a normal distribution; uniform would give ~20%.
        let share = middle as f64 / draws as f64;
        assert!((0.63..0.73).contains(&share), "share within 1 sigma: {share}");

        // A very wide distribution is truncated, never out of range; tiny key spaces work.
        let wide = KeyGenerator::new(Distribution::Gaussian, 3, 1.0);
        let one = KeyGenerator::new(Distribution::Gaussian, 1, 0.5);
        for _ in 0..5_000 {
            assert!(wide.next_index(&mut rng) < 3);
            assert_eq!(one.next_index(&mut rng), 0);
        }
    }

    #[test]
    fn sequential_is_shared_between_clones_and_wraps() {
        let g = KeyGenerator::new(Distribution::Sequential, 5, 0.1);
        let h = g.clone();
        let mut rng = StdRng::seed_from_u64(3);
        let got: Vec<u64> =
            (0..7).map(|i| if i % 2 == 0 { g.next_index(&mut rng) } else { h.next_index(&mut rng) }).collect();
        assert_eq!(got, vec![0, 1, 2, 3, 4, 0, 1]);
    }

    #[test]
    fn sequential_across_threads_hands_out_each_key_once() {
        let n = 4000;
        let g = KeyGenerator::new(Distribution::Sequential, n, 0.1);
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let g = g.clone();
                std::thread::spawn(move || {
                    let mut rng = StdRng::seed_from_u64(4);
                    (0..n / 4).map(|_| g.next_index(&mut rng)).collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<u64> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
        all.sort_unstable();
        assert_eq!(all, (0..n).collect::<Vec<_>>());
    }
}
