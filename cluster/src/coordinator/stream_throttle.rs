//! `StreamThroughputOutboundMegabitsPerSec` (Cassandra's `stream_throughput_outbound_megabits_per_sec`):
//! one limit on the data this node writes to other nodes while moving data (the handovers of
//! decommission, move and removenode, and repair's writes), so that streaming does not starve
//! client traffic. Data a joining or moving node fetches is read through range reads, which the
//! limit does not cover. `sibyltool setstreamthroughput` changes it while the node runs.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

/// Bytes in a megabit, as Cassandra counts them (1024 × 1024 / 8).
const BYTES_PER_MEGABIT: f64 = (1024.0 * 1024.0) / 8.0;

pub struct StreamThrottle {
    megabits_per_sec: AtomicU32,
    /// Since when bytes are counted against the rate in force then, and how many were sent.
    budget: Mutex<Budget>,
}

struct Budget {
    rate: u32,
    since: Instant,
    sent: u64,
}

impl StreamThrottle {
    /// A limit of `megabits_per_sec` (0: unthrottled).
    pub fn new(megabits_per_sec: u32) -> StreamThrottle {
        StreamThrottle {
            megabits_per_sec: AtomicU32::new(megabits_per_sec),
            budget: Mutex::new(Budget { rate: megabits_per_sec, since: Instant::now(), sent: 0 }),
        }
    }

    pub fn megabits_per_sec(&self) -> u32 {
        self.megabits_per_sec.load(Ordering::Relaxed)
    }

    /// Changes the limit, for streams under way too.
    pub fn set_megabits_per_sec(&self, megabits_per_sec: u32) {
        self.megabits_per_sec.store(megabits_per_sec, Ordering::Relaxed);
    }

    /// Waits until `bytes` more may be sent without passing the limit.
    pub async fn pace(&self, bytes: u64) {
        let wait = {
            let rate = self.megabits_per_sec();
            let mut budget = self.budget.lock();
            if budget.rate != rate {
                *budget = Budget { rate, since: Instant::now(), sent: 0 };
            }
            if rate == 0 {
                return;
            }
            budget.sent += bytes;
            let due =
                budget.since + Duration::from_secs_f64(budget.sent as f64 / (f64::from(rate) * BYTES_PER_MEGABIT));
            due.saturating_duration_since(Instant::now())
        };
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn sending_waits_for_the_rate_and_a_new_rate_applies_at_once() {
        // 8 megabits per second: one MiB per second.
        let throttle = StreamThrottle::new(8);
        let started = Instant::now();
        for _ in 0..4 {
            throttle.pace(512 << 10).await;
        }
        assert_eq!(started.elapsed(), Duration::from_secs(2));

        throttle.set_megabits_per_sec(0);
        let unthrottled = Instant::now();
        throttle.pace(100 << 20).await;
        assert_eq!(unthrottled.elapsed(), Duration::ZERO);

        throttle.set_megabits_per_sec(16);
        let faster = Instant::now();
        throttle.pace(4 << 20).await;
        assert_eq!(faster.elapsed(), Duration::from_secs(2));
        assert_eq!(throttle.megabits_per_sec(), 16);
    }
}
