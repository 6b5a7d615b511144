//! The write path: a mutation goes to the commit log, then to the memtables of the column
//! families it touches; a full memtable is handed to the flush worker.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};

use smallvec::SmallVec;
use tracing::warn;
use uuid::Uuid;

use super::{Storage, Work, MAX_FLUSHING_MEMTABLES, MEMTABLE_HARD_LIMIT_FACTOR};
use crate::cfs::{ColumnFamilyStore, LatencySamples};
use crate::commitlog::{self, SyncMode, Written};
use crate::data::{Cell, Row};
use crate::dht::{DecoratedKey, Token};
use crate::error::{Result, StorageError};
use crate::mutation::{encode_record, RowMutation};

/// Resolves once a mutation applied with [`Storage::apply_deferred`] is as durable as the commit
/// log's sync mode promises (written to the OS in periodic mode). Acknowledge the write to
/// anyone only after it resolved `Ok`.
pub struct Durable(Option<Written>);

impl Durable {
    /// Already durable (nothing was deferred).
    pub fn now() -> Durable {
        Durable(None)
    }

    /// False when the write is durable already and awaiting this costs nothing.
    pub fn is_deferred(&self) -> bool {
        self.0.is_some()
    }
}

impl Future for Durable {
    type Output = Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        match self.0.as_mut() {
            None => Poll::Ready(Ok(())),
            Some(written) => Pin::new(written).poll(cx),
        }
    }
}

impl Storage {
    /// Applies a mutation: durable per the commit log's sync mode when this returns.
    pub fn apply(&self, m: RowMutation) -> Result<()> {
        let token = self.inner.config.partitioner.token_for_key(&m.key);
        self.apply_at(m, token)
    }

    /// As [`Storage::apply`], for a caller that already computed the key's token with this
    /// engine's partitioner (a coordinator placed the mutation by it): the hash is not computed
    /// twice on the write path.
    pub fn apply_at(&self, m: RowMutation, token: Token) -> Result<()> {
        debug_assert!(token == self.inner.config.partitioner.token_for_key(&m.key), "a token of another key");
        if self.is_shutting_down() {
            return Err(StorageError::ShuttingDown);
        }
        if let Some((cf, _)) = m.updates.iter().find(|(_, row)| row.cells.iter().any(Cell::is_counter_update)) {
            return Err(StorageError::UnledCounterUpdate { keyspace: m.keyspace.clone(), cf: cf.clone() });
        }
        // Nearly every mutation touches one column family: these per-CF lists stay inline.
        let mut targets: SmallVec<[(Arc<ColumnFamilyStore>, Row); 1]> = SmallVec::with_capacity(m.updates.len());
        for (cf, row) in m.updates {
            let store = self.store(&m.keyspace, &cf)?;
            self.check_flushing(&store)?;
            targets.push((store, row));
        }
        let started = targets.first().and_then(|(store, _)| LatencySamples::start(&store.counters.writes));
        // Asked with the column family looked up last, which the thread remembers.
        let durable = targets.last().is_none_or(|(store, _)| self.durable_writes(&m.keyspace, &store.name));
        let dk = DecoratedKey::new(token, m.key);
        let mut fill: SmallVec<[(usize, usize); 1]> = SmallVec::with_capacity(targets.len());
        {
            let _switch = self.inner.switch_lock.read();
            if durable {
                let ids: SmallVec<[Uuid; 1]> = targets.iter().map(|(s, _)| s.id).collect();
                let parts: SmallVec<[(Uuid, &Row); 1]> = targets.iter().map(|(s, r)| (s.id, r)).collect();
                let record = encode_record(&dk.key, &parts);
                let position = self.inner.commitlog.append(&record, &ids)?;
                // The first record of a new segment: the log grew by one segment.
                if position.offset == commitlog::segment::HEADER_LEN && !self.is_shutting_down() {
                    self.submit(Work::ReclaimCommitLog);
                }
            }
            for (store, row) in targets.iter_mut() {
                // The memtable's size after this write; a flush is started after the lock.
                fill.push(store.apply(&dk, std::mem::take(row)));
            }
        }
        let took = started.map(|started| started.elapsed());
        for ((store, _), (bytes, operations)) in targets.iter().zip(fill) {
            store.counters.writes.fetch_add(1, Ordering::Relaxed);
            if let Some(took) = took {
                store.counters.write_latency.record(took);
            }
            if self.over_flush_threshold(bytes, operations, 1) {
                // The write itself is durable in the commit log; the flush thread retries a
                // failed flush.
                if let Err(e) = self.schedule_flush(store, bytes, operations) {
                    warn!(keyspace = %store.keyspace, cf = %store.name, error = %e, "flush failed");
                }
            }
        }
        Ok(())
    }

    /// Refuses a write to a column family whose flushes fail once its memtable has reached the
    /// hard limit: the memtable would otherwise grow until the node runs out of memory. Cassandra
    /// stops taking writes on a disk failure too (its writers block on the full flush queue, or
    /// the node stops under `disk_failure_policy: stop`). The flush thread keeps retrying, and
    /// writes are taken again once a flush succeeds.
    fn check_flushing(&self, store: &ColumnFamilyStore) -> Result<()> {
        if !store.flush_failing.load(Ordering::Acquire) {
            return Ok(());
        }
        let m = store.active_memtable();
        if !self.over_flush_threshold(m.size(), m.operations(), MEMTABLE_HARD_LIMIT_FACTOR) {
            return Ok(());
        }
        Err(StorageError::FlushFailing {
            keyspace: store.keyspace.clone(),
            cf: store.name.clone(),
            reason: store.flush_failure().unwrap_or_else(|| "the last flush failed".into()),
        })
    }

    /// True when a memtable of `bytes` and `operations` has reached `factor` times either flush
    /// threshold (`MemtableThroughputInMB`, `MemtableOperationsInMillions`).
    fn over_flush_threshold(&self, bytes: usize, operations: usize, factor: usize) -> bool {
        let c = &self.inner.config;
        bytes >= c.memtable_flush_bytes.saturating_mul(factor)
            || operations >= c.memtable_flush_operations.saturating_mul(factor)
    }

    /// Applies a mutation without waiting for the commit log write in periodic mode: the record
    /// is queued and the returned [`Durable`] resolves once it is in a file. Many mutations
    /// applied in a row by one event loop then share one write(2), which the first `Durable`
    /// polled makes if no write is under way. In batch mode this waits for the fsync like
    /// [`Storage::apply`] and the `Durable` is ready at once.
    ///
    /// IMPORTANT: the mutation is visible to reads when this returns, but it may be
    /// acknowledged to a client only after its `Durable` resolved `Ok`.
    pub fn apply_deferred(&self, m: RowMutation) -> Result<Durable> {
        let token = self.inner.config.partitioner.token_for_key(&m.key);
        self.apply_deferred_at(m, token)
    }

    /// [`Storage::apply_deferred`] with the key's token already known ([`Storage::apply_at`]).
    pub fn apply_deferred_at(&self, m: RowMutation, token: Token) -> Result<Durable> {
        let (applied, written) = commitlog::defer_acks(|| self.apply_at(m, token));
        applied.map(|()| Durable(written))
    }

    /// True when a write now might block for long: the commit log is in batch mode (a write
    /// waits for an fsync), or flushes are behind: as many memtables as allowed are being
    /// written or waiting for the flush thread, over all column families, so a writer may soon
    /// have to wait for one (back-pressure, `MEMTABLE_HARD_LIMIT_FACTOR`). A caller that must
    /// not block, such as an event loop, sends writes elsewhere while this holds.
    ///
    /// One flush in progress is not enough: its column family's next memtable has just begun to
    /// fill. Sending every write to the executor during each ordinary flush only added two
    /// thread hand-offs per write, and latency, on a busy machine.
    pub fn writes_may_block(&self) -> bool {
        matches!(self.inner.config.sync, SyncMode::Batch { .. })
            || self.inner.flushing_memtables.load(Ordering::Relaxed)
                + self.inner.pending_flushes.load(Ordering::Relaxed)
                >= MAX_FLUSHING_MEMTABLES
    }

    /// Queues a flush of a full memtable for the flush thread, once per column family. When the
    /// memtable has grown to `MEMTABLE_HARD_LIMIT_FACTOR` times its threshold (the flush
    /// thread is behind: still writing an earlier memtable, or other column families'), the
    /// writer waits and flushes it itself, as Cassandra's writers wait on a full flush queue:
    /// memory stays bounded under a write load the disk cannot keep up with.
    fn schedule_flush(&self, store: &Arc<ColumnFamilyStore>, bytes: usize, operations: usize) -> Result<()> {
        if self.over_flush_threshold(bytes, operations, MEMTABLE_HARD_LIMIT_FACTOR) {
            return self.flush_store_if(store, |store| {
                let m = store.active_memtable();
                self.over_flush_threshold(m.size(), m.operations(), MEMTABLE_HARD_LIMIT_FACTOR)
            });
        }
        // The flag is cleared when a flush switches this memtable out. The count goes up first,
        // so that a flush clearing the flag at once never takes it below zero.
        if !store.flush_pending.load(Ordering::SeqCst) {
            self.inner.pending_flushes.fetch_add(1, Ordering::SeqCst);
            if store.flush_pending.swap(true, Ordering::SeqCst) {
                self.inner.pending_flushes.fetch_sub(1, Ordering::SeqCst);
            } else {
                self.submit(Work::Flush(store.clone()));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::engine::StorageConfig;

    fn open(dir: &std::path::Path, sync: SyncMode) -> Storage {
        let mut c = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
        c.sync = sync;
        Storage::open(c).expect("opens")
    }

    /// A column family flushes one memtable at a time, so one flush in progress cannot make a
    /// writer flush: writes then stay on the caller's thread. Only as many flushes as allowed, or
    /// a batch-mode commit log, send them elsewhere.
    #[test]
    fn one_flush_in_progress_does_not_make_writes_block() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = open(dir.path(), SyncMode::Periodic { period: Duration::from_secs(10) });
        assert!(!s.writes_may_block());
        s.inner.flushing_memtables.store(1, Ordering::Relaxed);
        assert!(!s.writes_may_block(), "one memtable being flushed");
        s.inner.flushing_memtables.store(MAX_FLUSHING_MEMTABLES, Ordering::Relaxed);
        assert!(s.writes_may_block(), "as many memtables being flushed as allowed");
        s.inner.flushing_memtables.store(0, Ordering::Relaxed);
        drop(s);

        let dir = tempfile::tempdir().expect("tempdir");
        let s = open(dir.path(), SyncMode::Batch { window: Duration::from_millis(1) });
        assert!(s.writes_may_block(), "batch mode waits for fsync");
    }
}
