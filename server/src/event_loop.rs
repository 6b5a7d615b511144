//! The event-loop threads that serve client connections, Thrift's and the native protocol's:
//! single-threaded tokio runtimes (by default one per two cores, `ThriftEventLoops` in
//! storage-conf.xml), each owning the connections given to it, like Redis' one loop. Each front
//! end starts its own set.
//!
//! Why not one multi-threaded runtime: its workers park and wake each other through futexes
//! and share one I/O driver, and on a small machine that left a fifth of the CPU idle under a
//! full load of small requests. A single-threaded loop picks up every ready connection in one
//! epoll_wait and never needs waking by a sibling. New connections are dealt out round-robin.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::{self, JoinHandle};

use tokio::runtime::{Builder, Handle};
use tokio::sync::watch;
use tracing::warn;

/// Half the cores, at least one. A loop keeps a core busy on its own (kernel TCP work included),
/// and the rest are left for the kernel's network processing, flushes, compaction and the
/// executor. Measured on 2 cores with the client on the same machine (bench/redis-vs-sibyl.sh):
/// one loop served 82k inserts/s at 11.7 us of CPU each, two loops 64k/s at 15.3 us, as the
/// loops then contend for the commit log and wake each other when one writes for both.
pub fn default_count() -> usize {
    (thread::available_parallelism().map(|n| n.get()).unwrap_or(2) / 2).max(1)
}

pub struct EventLoops {
    handles: Vec<Handle>,
    next: AtomicUsize,
    stop: watch::Sender<bool>,
    threads: Vec<JoinHandle<()>>,
}

impl EventLoops {
    /// Starts `count` loops on threads named `{name}-loop-N`; 0 means [`default_count`].
    pub fn start(name: &str, count: usize) -> std::io::Result<EventLoops> {
        let count = if count == 0 { default_count() } else { count };
        let (stop, stopped) = watch::channel(false);
        let mut handles = Vec::new();
        let mut threads = Vec::new();
        for i in 0..count {
            // I/O and timers only: the signal and process drivers would be polled on every pass.
            let runtime = Builder::new_current_thread().enable_io().enable_time().build()?;
            handles.push(runtime.handle().clone());
            let mut stopped = stopped.clone();
            let thread = thread::Builder::new().name(format!("{name}-loop-{i}")).spawn(move || {
                // The loop runs the connections spawned onto its handle until told to stop;
                // dropping the runtime then closes them.
                runtime.block_on(async move {
                    let _ = stopped.wait_for(|stop| *stop).await;
                });
            })?;
            threads.push(thread);
        }
        Ok(EventLoops { handles, next: AtomicUsize::new(0), stop, threads })
    }

    pub fn count(&self) -> usize {
        self.handles.len()
    }

    /// The loop that gets the next connection.
    pub fn next(&self) -> &Handle {
        &self.handles[self.next.fetch_add(1, Ordering::Relaxed) % self.handles.len()]
    }

    /// Stops every loop and closes its connections.
    pub fn stop(self) {
        let _ = self.stop.send(true);
        for thread in self.threads {
            if thread.join().is_err() {
                warn!("an event-loop thread panicked");
            }
        }
    }
}
