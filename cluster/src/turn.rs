//! Letting the other tasks of a single-threaded event loop have their turn.

use std::future::Future;
use std::task::Poll;

/// Puts the calling task behind the loop's other runnable ones, as `tokio::task::yield_now`
/// does, but through the run queue: a task that wakes itself while it runs is queued again at
/// the back once it returns pending. `yield_now` instead parks the waker in the runtime's
/// deferred list, which cost about 300 instructions per request, a vector regrown every time
/// among them (a fifteenth of a point read under callgrind, bench/instructions-sibyl.sh). The
/// tasks already known ready run first either way; those whose I/O completes meanwhile wait for
/// the next poll of the I/O driver, as at any other turn of the loop.
///
/// The front end yields so that a loop's replies go out in one burst; a local write yields so
/// that the loop's other writes queue their commit log records before the first is awaited, and
/// one write(2) carries them all.
pub fn yield_to_ready_tasks() -> impl Future<Output = ()> {
    let mut yielded = false;
    std::future::poll_fn(move |cx| {
        if yielded {
            return Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
}
