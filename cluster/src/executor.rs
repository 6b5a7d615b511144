//! The request executor: a small pool of plain OS threads that run the coordinator's blocking
//! engine work (scans, big reads, schema changes, writes while a write may block), so that no
//! event loop or tokio runtime thread ever runs code that may block on disk (SSTable preads,
//! batch-mode commit-log fsync, a memtable flush under back-pressure).
//!
//! Why not `block_in_place` or `spawn_blocking`: both cost about as much CPU as the request
//! itself on a small machine. `block_in_place` hands the worker's core to another thread on every
//! call; `spawn_blocking` parks and wakes a pool thread per request. Here, a connection task
//! pushes its job onto one shared queue and awaits a oneshot; a thread that finishes a job takes
//! the next one straight from the queue, so under load no executor sleeps or needs waking, and a
//! futex wake happens only when a job arrives while some executor is idle.
//!
//! Slow requests: a fixed pool could be filled by a few long requests (a big `get_range_slices`)
//! while every other connection waits behind them. A watchdog thread checks every 20 ms whether
//! queued jobs made no progress since its last look; if so it starts an
//! extra executor (up to `max_threads`), which retires after being idle for a while. The queue is
//! bounded in practice by the number of connections (each has at most one request in flight),
//! and jobs never submit to the executor themselves, so it cannot deadlock on itself.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use tracing::{debug, warn};

/// A unit of work: runs on an executor thread and reports through whatever it captured.
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// How often the watchdog looks for a stalled queue.
const WATCHDOG_PERIOD: Duration = Duration::from_millis(20);
/// An extra (non-core) executor exits after this long without work.
const EXTRA_IDLE_TIMEOUT: Duration = Duration::from_secs(10);

/// Handle to the pool; cloning shares it. The threads stop once every handle is gone.
#[derive(Clone)]
pub struct Executor {
    inner: Arc<Owner>,
}

/// Dropping the last owner stops the threads (they finish queued jobs first).
struct Owner {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    work: Condvar,
    /// Jobs completed since start: the watchdog's measure of progress.
    completed: AtomicU64,
    stopping: AtomicBool,
    max_threads: usize,
    /// Thread name prefix.
    name: &'static str,
}

struct State {
    jobs: VecDeque<Job>,
    /// Executors parked on `work`.
    idle: usize,
    /// Executors alive (core + extra).
    threads: usize,
}

/// Why a job was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error("the request executor is shutting down")]
    Stopping,
}

impl Executor {
    /// Starts `core_threads` executors that live as long as the pool, allowing up to
    /// `max_threads` in all when the watchdog sees the queue stalled.
    /// Starts `core_threads` threads named `<name>-N` (extra ones `<name>-xN`, the watchdog
    /// `<name>-watchdog`), growing to `max_threads` when the queue stalls.
    pub fn new(name: &'static str, core_threads: usize, max_threads: usize) -> std::io::Result<Executor> {
        let core_threads = core_threads.max(1);
        let shared = Arc::new(Shared {
            state: Mutex::new(State { jobs: VecDeque::new(), idle: 0, threads: 0 }),
            work: Condvar::new(),
            completed: AtomicU64::new(0),
            stopping: AtomicBool::new(false),
            max_threads: max_threads.max(core_threads),
            name,
        });
        for i in 0..core_threads {
            spawn_executor(&shared, true, i)?;
        }
        let watched = Arc::downgrade(&shared);
        thread::Builder::new().name(format!("{name}-watchdog")).spawn(move || watchdog(watched))?;
        Ok(Executor { inner: Arc::new(Owner { shared }) })
    }

    /// The pool sized for this machine: one executor per core (more only add context switches;
    /// measured with bench/redis-vs-sibyl.sh), up to 64 when the watchdog sees the queue stalled.
    pub fn for_this_machine(name: &'static str) -> std::io::Result<Executor> {
        let cores = thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
        Executor::new(name, cores, 64.max(2 * cores))
    }

    /// Queues `job`; it runs on an executor thread.
    pub fn submit(&self, job: Job) -> Result<(), SubmitError> {
        let shared = &self.inner.shared;
        if shared.stopping.load(Ordering::Relaxed) {
            return Err(SubmitError::Stopping);
        }
        let wake = {
            let mut state = shared.state.lock();
            state.jobs.push_back(job);
            // Only a parked executor needs a wake-up; busy ones look at the queue when done.
            state.idle > state.jobs.len() - 1
        };
        if wake {
            shared.work.notify_one();
        }
        Ok(())
    }

    /// Runs `f` on an executor and awaits its result.
    pub async fn run<T, F>(&self, f: F) -> Result<T, SubmitError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.submit(Box::new(move || {
            let _ = tx.send(f());
        }))?;
        // The sender is dropped without sending only if the job panicked or the pool stopped
        // before running it.
        rx.await.map_err(|_| SubmitError::Stopping)
    }

    /// Executor threads alive now (core + extra), for tests and diagnostics.
    pub fn threads(&self) -> usize {
        self.inner.shared.state.lock().threads
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::Relaxed);
        // Take the lock so no executor is between its check and its wait.
        drop(self.shared.state.lock());
        self.shared.work.notify_all();
    }
}

fn spawn_executor(shared: &Arc<Shared>, core: bool, n: usize) -> std::io::Result<()> {
    shared.state.lock().threads += 1;
    let s = shared.clone();
    let name = if core { format!("{}-{n}", shared.name) } else { format!("{}-x{n}", shared.name) };
    match thread::Builder::new().name(name).spawn(move || executor_loop(s, core)) {
        Ok(_) => Ok(()),
        Err(e) => {
            shared.state.lock().threads -= 1;
            Err(e)
        }
    }
}

fn executor_loop(shared: Arc<Shared>, core: bool) {
    loop {
        let Some(job) = next_job(&shared, core) else { break };
        // A panicking handler must not take the executor with it; the caller sees its oneshot
        // dropped and closes the connection.
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).is_err() {
            warn!("a request handler panicked");
        }
        shared.completed.fetch_add(1, Ordering::Relaxed);
    }
    shared.state.lock().threads -= 1;
}

/// The next job, or `None` when this executor should exit.
fn next_job(shared: &Shared, core: bool) -> Option<Job> {
    // No spinning before parking: on a small machine a spinning executor steals the CPU the
    // runtime threads need to produce the next job, and under load the queue is rarely empty.
    let mut state = shared.state.lock();
    loop {
        if let Some(job) = state.jobs.pop_front() {
            return Some(job);
        }
        if shared.stopping.load(Ordering::Relaxed) {
            return None;
        }
        state.idle += 1;
        let timed_out = if core {
            shared.work.wait(&mut state);
            false
        } else {
            shared.work.wait_for(&mut state, EXTRA_IDLE_TIMEOUT).timed_out()
        };
        state.idle -= 1;
        if timed_out && state.jobs.is_empty() {
            return None;
        }
    }
}

/// Starts an extra executor whenever jobs wait and none completed during a whole period.
fn watchdog(shared: std::sync::Weak<Shared>) {
    let mut last = u64::MAX;
    loop {
        thread::sleep(WATCHDOG_PERIOD);
        let Some(shared) = shared.upgrade() else { return };
        if shared.stopping.load(Ordering::Relaxed) {
            return;
        }
        let completed = shared.completed.load(Ordering::Relaxed);
        let (waiting, threads) = {
            let state = shared.state.lock();
            (state.jobs.len() > state.idle, state.threads)
        };
        if waiting && completed == last && threads < shared.max_threads {
            debug!(threads, "request executors all busy; starting another");
            if let Err(e) = spawn_executor(&shared, false, threads) {
                warn!(error = %e, "could not start another request executor");
            }
        }
        last = completed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Instant;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_jobs_and_returns_results() {
        let ex = Executor::new("thrift-exec", 2, 4).expect("pool");
        let mut handles = Vec::new();
        for i in 0..100u64 {
            let ex = ex.clone();
            handles.push(tokio::spawn(async move { ex.run(move || i * 2).await }));
        }
        for (i, h) in handles.into_iter().enumerate() {
            assert_eq!(h.await.expect("task").expect("ran"), i as u64 * 2);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn jobs_do_not_run_on_runtime_threads() {
        let ex = Executor::new("thrift-exec", 1, 1).expect("pool");
        let name = ex.run(|| thread::current().name().map(str::to_string)).await.expect("ran");
        assert_eq!(name.as_deref(), Some("thrift-exec-0"));
    }

    /// Every core executor stuck in a slow job: a quick job must still run soon, on an extra
    /// executor started by the watchdog, instead of waiting for the slow ones.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn slow_jobs_do_not_stall_others() {
        let ex = Executor::new("thrift-exec", 2, 8).expect("pool");
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let release_rx = Arc::new(std::sync::Mutex::new(release_rx));
        let mut slow = Vec::new();
        for _ in 0..2 {
            let rx = release_rx.clone();
            let ex = ex.clone();
            slow.push(tokio::spawn(async move {
                ex.run(move || {
                    let _ = rx.lock().map(|r| r.recv_timeout(Duration::from_secs(20)));
                })
                .await
            }));
        }
        // Let both slow jobs start.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let started = Instant::now();
        let quick = tokio::time::timeout(Duration::from_secs(2), ex.run(|| 7)).await;
        assert_eq!(quick.expect("quick job ran in time").expect("ran"), 7);
        assert!(started.elapsed() < Duration::from_secs(1), "took {:?}", started.elapsed());
        assert!(ex.threads() > 2, "an extra executor was started");
        for _ in 0..2 {
            release_tx.send(()).expect("release");
        }
        for s in slow {
            s.await.expect("task").expect("ran");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panicking_job_reports_an_error_and_the_pool_survives() {
        let ex = Executor::new("thrift-exec", 1, 1).expect("pool");
        assert!(ex.run(|| -> u32 { panic!("boom") }).await.is_err());
        assert_eq!(ex.run(|| 5).await.expect("ran"), 5);
    }

    #[test]
    fn threads_stop_when_the_pool_is_dropped() {
        let ex = Executor::new("thrift-exec", 3, 3).expect("pool");
        let shared = Arc::downgrade(&ex.inner.shared);
        drop(ex);
        let deadline = Instant::now() + Duration::from_secs(5);
        while shared.strong_count() > 0 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(shared.strong_count(), 0, "executor threads exited");
    }
}
