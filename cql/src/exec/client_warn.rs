//! Warnings for the client that sent a statement (3.11's `ClientWarn`): a statement that runs
//! but should not be run this way (a large batch, an unlogged batch over many partitions, an
//! aggregate over the whole table) says so.
//!
//! Every warning is logged, as 3.11 logs them. A front end that can carry them (the native
//! protocol from v4, in a RESULT's WARNING flag) runs the statement inside [`capture`] and
//! gets them back; elsewhere (Thrift's CQL calls, native v3) they are only logged.

use std::cell::RefCell;
use std::future::Future;

tokio::task_local! {
    static CAPTURED: RefCell<Vec<String>>;
}

/// Runs `statement`, returning its output and the warnings it gave, in the order given.
pub async fn capture<F: Future>(statement: F) -> (F::Output, Vec<String>) {
    CAPTURED
        .scope(RefCell::new(Vec::new()), async {
            let out = statement.await;
            let warnings = CAPTURED.with(|w| std::mem::take(&mut *w.borrow_mut()));
            (out, warnings)
        })
        .await
}

/// Logs `message` and, inside [`capture`], keeps it for the client.
pub(crate) fn warn(message: String) {
    tracing::warn!("{message}");
    let _ = CAPTURED.try_with(|w| w.borrow_mut().push(message));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_reach_only_the_statement_that_captures_them() {
        let rt = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
        rt.block_on(async {
            warn("nobody listens".into());
            let ((), got) = capture(async {
                warn("first".into());
                tokio::task::yield_now().await;
                warn("second".into());
            })
            .await;
            assert_eq!(got, ["first", "second"]);
            let ((), none) = capture(async {}).await;
            assert!(none.is_empty(), "a capture starts empty");
        });
    }
}
