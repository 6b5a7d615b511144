//! Drain (Cassandra's `StorageService.drain`, `nodetool drain`): every column family is flushed,
//! then the engine refuses writes and flushes what arrived meanwhile, so that a node about to
//! stop leaves nothing in its commit log to replay. Reads keep working; writes are refused until
//! the node restarts. Decommission ends the same way, once the node has left the ring.
//!
//! Engine calls block on disk, so each runs on tokio's blocking pool, one column family at a
//! time, as a step of its own.

use storage::StorageError;

use super::operation::{OperationEvent, OperationMode, Report};
use super::Coordinator;

/// Why a drain (or a decommission's last flush) failed.
#[derive(Debug, thiserror::Error)]
pub enum DrainError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The blocking task running an engine call panicked or was cancelled.
    #[error("a drain task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// What a drain did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DrainOutcome {
    /// Every column family flushed, as `keyspace.cf`, in order.
    pub flushed: Vec<String>,
}

impl Coordinator {
    /// Drains the engine: reports [`OperationMode::Draining`], flushes every column family,
    /// stops the engine, then reports [`OperationMode::Drained`]. A failed flush stops nothing:
    /// the node keeps serving as before, back in [`OperationMode::Normal`]. Once the engine
    /// stop has begun the node is drained, whether it succeeded or not.
    pub async fn drain(&self, progress: impl FnMut(OperationEvent)) -> Result<DrainOutcome, DrainError> {
        let mut report = Report(progress);
        report.mode(OperationMode::Draining);
        let flushed = match self.flush_all(&mut report).await {
            Ok(flushed) => flushed,
            Err(e) => {
                report.mode(OperationMode::Normal);
                return Err(e);
            }
        };
        let stopped = self.stop_engine(&mut report, flushed.len() as u64).await;
        report.mode(OperationMode::Drained);
        stopped?;
        let total = flushed.len() as u64 + 1;
        report.once(total, total, "drained".into());
        tracing::info!("node drained: writes are refused until restart");
        Ok(DrainOutcome { flushed })
    }

    /// Flushes every column family in turn, a step each (step `i` of one per column family
    /// plus one, for [`Coordinator::stop_engine`]); their names.
    pub(super) async fn flush_all<F: FnMut(OperationEvent)>(
        &self,
        report: &mut Report<F>,
    ) -> Result<Vec<String>, DrainError> {
        let stores = self.storage.column_families();
        let total = stores.len() as u64 + 1;
        let mut flushed = Vec::new();
        for (i, (ks, cf)) in stores.into_iter().enumerate() {
            let name = format!("{ks}.{cf}");
            report.lasting(i as u64, total, format!("flushing {name}"));
            let storage = self.storage.clone();
            tokio::task::spawn_blocking(move || storage.flush(&ks, &cf)).await??;
            flushed.push(name);
        }
        Ok(flushed)
    }

    /// Makes the engine refuse writes and flushes what arrived since [`Coordinator::flush_all`]
    /// flushed `flushed` column families (the last step of its count).
    pub(super) async fn stop_engine<F: FnMut(OperationEvent)>(
        &self,
        report: &mut Report<F>,
        flushed: u64,
    ) -> Result<(), DrainError> {
        report.lasting(flushed, flushed + 1, "refusing writes, flushing the rest".into());
        let storage = self.storage.clone();
        tokio::task::spawn_blocking(move || storage.shutdown()).await??;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use storage::StorageError;

    use super::super::operation::{OperationEvent, OperationMode, OperationStep};
    use super::super::tests::single_node;

    /// The steps and modes of a drain, in order, and a drained engine refusing writes.
    #[tokio::test]
    async fn drain_flushes_each_column_family_then_stops_the_engine() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (storage, coordinator) = single_node(dir.path());
        let mut events = Vec::new();
        let done = coordinator.drain(|e| events.push(e)).await.expect("drains");
        let names: Vec<String> = storage.column_families().into_iter().map(|(k, c)| format!("{k}.{c}")).collect();
        assert_eq!(done.flushed, names);
        let n = names.len() as u64;
        let step = |done, what: String, lasts| OperationEvent::Step(OperationStep { done, total: n + 1, what, lasts });
        let mut expected = vec![OperationEvent::Mode(OperationMode::Draining)];
        expected.extend(names.iter().enumerate().map(|(i, name)| step(i as u64, format!("flushing {name}"), true)));
        expected.push(step(n, "refusing writes, flushing the rest".into(), true));
        expected.push(OperationEvent::Mode(OperationMode::Drained));
        expected.push(step(n + 1, "drained".into(), false));
        assert_eq!(events, expected);
        let refused = storage.apply(model::mutation::RowMutation::new("ks", b"k".to_vec()));
        assert!(matches!(refused, Err(StorageError::ShuttingDown)), "{refused:?}");
    }
}
