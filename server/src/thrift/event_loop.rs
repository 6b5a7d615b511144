//! The event-loop threads that serve Thrift connections: one single-threaded tokio runtime per
//! core, each owning the connections given to it, like Redis' one loop (times the cores).
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

pub struct EventLoops {
    handles: Vec<Handle>,
    next: AtomicUsize,
    stop: watch::Sender<bool>,
    threads: Vec<JoinHandle<()>>,
}

impl EventLoops {
    /// Starts `count` loops on threads named `thrift-loop-N`.
    pub fn start(count: usize) -> std::io::Result<EventLoops> {
        let (stop, stopped) = watch::channel(false);
        let mut handles = Vec::new();
        let mut threads = Vec::new();
        for i in 0..count.max(1) {
            let runtime = Builder::new_current_thread().enable_all().build()?;
            handles.push(runtime.handle().clone());
            let mut stopped = stopped.clone();
            let thread = thread::Builder::new().name(format!("thrift-loop-{i}")).spawn(move || {
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

    /// One loop per core.
    pub fn for_this_machine() -> std::io::Result<EventLoops> {
        EventLoops::start(thread::available_parallelism().map(|n| n.get()).unwrap_or(2))
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
                warn!("a thrift event-loop thread panicked");
            }
        }
    }
}
