//! `--rate`: paces the run at a target number of operations per second over all connections.
//!
//! How: a `stress-pacer` thread wakes every [`TICK`] and releases as many permits as the
//! schedule (`rate` × time since the start) says are due; each connection takes one permit
//! before each request. Tokio's semaphore is fair (waiters are served in order), so the permits
//! go round the idle connections in turn: the rate is spread evenly over the connections, and
//! requests leave in groups of at most `rate` × [`TICK`] (8 requests at 80,000 op/s), not in
//! bursts.
//!
//! Why a thread and not tokio timers: tokio's timer wheel has a resolution of one millisecond,
//! so timers would release a whole millisecond's requests at once (80 at 80,000 op/s), and the
//! last of each burst would wait for the 79 before it — a queueing delay the benchmark would
//! then blame on the server.
//!
//! This is a paced closed loop, not an open loop: a connection has one request in flight (the
//! benchmark compares servers without pipelining), so a request whose permit is due while every
//! connection is busy waits for one to free up; permits accumulate meanwhile and are used as
//! soon as connections are free, so the run catches up with its schedule. Latency is measured
//! from the moment a request is sent, so that waiting is not counted; a run whose achieved rate
//! falls short of the target (see the summary's `op_rate`) was limited by the server or the
//! connections, and its latencies are then not those of the target rate.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

/// How often the pacer releases the permits that have come due.
pub const TICK: Duration = Duration::from_micros(100);

/// Permits for requests, released on schedule by a thread.
pub struct Pacer {
    permits: Arc<Semaphore>,
    done: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Pacer {
    /// Starts releasing `rate` permits per second from now until `should_stop` says so (checked
    /// every tick) or the pacer is dropped; then waiters are woken with "no more permits".
    pub fn start(rate: f64, should_stop: impl Fn() -> bool + Send + 'static) -> std::io::Result<Pacer> {
        let permits = Arc::new(Semaphore::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let thread = {
            let permits = permits.clone();
            let done = done.clone();
            thread::Builder::new().name("stress-pacer".into()).spawn(move || {
                let start = Instant::now();
                let mut released: u64 = 0;
                while !done.load(Ordering::Relaxed) && !should_stop() {
                    // Due since the start; float precision is far finer than one permit for
                    // any run shorter than the 24 h limit at the maximum rate.
                    let due = (start.elapsed().as_secs_f64() * rate) as u64;
                    if due > released {
                        let n = usize::try_from(due - released).unwrap_or(usize::MAX).min(Semaphore::MAX_PERMITS / 2);
                        // Permits not taken pile up, bounded by the semaphore's limit.
                        if permits.available_permits() < Semaphore::MAX_PERMITS / 2 {
                            permits.add_permits(n);
                        }
                        released = due;
                    }
                    thread::sleep(TICK);
                }
                permits.close();
            })?
        };
        Ok(Pacer { permits, done, thread: Some(thread) })
    }

    /// A handle the connections wait on.
    pub fn permits(&self) -> Arc<Semaphore> {
        self.permits.clone()
    }
}

/// Waits for the next permit; `false` once the pacer has stopped.
pub async fn next_permit(permits: &Semaphore) -> bool {
    match permits.acquire().await {
        Ok(p) => {
            p.forget();
            true
        }
        Err(_) => false,
    }
}

impl Drop for Pacer {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_the_rate_evenly_and_stops() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let pacer = {
            let stop = stop.clone();
            Pacer::start(2000.0, move || stop.load(Ordering::Relaxed)).unwrap()
        };
        let permits = pacer.permits();
        // Four "connections" take permits for 0.5 s: 1000 in all, about 250 each.
        let counts = rt.block_on(async {
            let began = Instant::now();
            let mut tasks = Vec::new();
            for _ in 0..4 {
                let permits = permits.clone();
                tasks.push(tokio::spawn(async move {
                    let mut n = 0u32;
                    while began.elapsed() < Duration::from_millis(500) && next_permit(&permits).await {
                        n += 1;
                    }
                    n
                }));
            }
            let mut counts = Vec::new();
            for t in tasks {
                counts.push(t.await.unwrap());
            }
            counts
        });
        let total: u32 = counts.iter().sum();
        // Never more than the schedule (+ the one permit each task may take just at the end);
        // a loaded test machine may deliver somewhat fewer (unpaced, the tasks would take
        // millions).
        assert!((600..=1010).contains(&total), "{counts:?}");
        assert!(counts.iter().all(|&n| n >= total / 5), "uneven: {counts:?}");

        // After the stop condition, waiting connections are released with "no more".
        stop.store(true, Ordering::Relaxed);
        let more = rt.block_on(async {
            tokio::time::timeout(Duration::from_secs(5), async { while next_permit(&permits).await {} }).await
        });
        assert!(more.is_ok(), "waiters were not released after the stop");
        drop(pacer);
    }
}
