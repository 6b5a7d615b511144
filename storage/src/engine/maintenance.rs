//! Keeping the data in shape, and reporting on it: flush, major compaction, truncate, and the
//! statistics an operator reads (`sibyltool cfstats`, `info`, `tpstats`).

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tracing::{error, info, warn};

use super::Storage;
use crate::block_cache::BlockCache;
use crate::cfs::ColumnFamilyStore;
use crate::commitlog::ReplayPosition;
use crate::compaction::{self, CleanupSummary};
use crate::error::{Result, StorageError};
use crate::index::SecondaryIndex;
use crate::memtable::Memtable;
use crate::sstable::{self, SsTableReader, SsTableWriter, WriterOptions};

/// One column family's figures since the node started, and its data now.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CfStats {
    pub keyspace: String,
    pub name: String,
    pub sstable_count: u64,
    /// Bytes of every SSTable component on disk.
    pub disk_bytes: u64,
    /// Bytes of the SSTables' Data components.
    pub data_bytes: u64,
    pub key_estimate: u64,
    pub sstable_cells: u64,
    pub sstable_tombstones: u64,
    pub memtable_operations: u64,
    pub memtable_bytes: u64,
    pub memtable_partitions: u64,
    pub flushes: u64,
    pub compactions: u64,
    pub reads: u64,
    pub writes: u64,
    /// The timed reads and writes (one in [`crate::cfs::LATENCY_SAMPLE_EVERY`]).
    pub read_latency: LatencyTotals,
    pub write_latency: LatencyTotals,
    /// Oldest and newest cell timestamps in the SSTables.
    pub min_timestamp: Option<i64>,
    pub max_timestamp: Option<i64>,
    /// Under leveled compaction: per level (0 to 8), its SSTables and how many it should hold
    /// at most. Empty under other strategies.
    pub sstables_in_each_level: Vec<(u64, u64)>,
}

/// Timed operations: how many, and their nanoseconds in all. Totals of several column families
/// add up, so a keyspace's mean weighs each by its timed operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LatencyTotals {
    pub count: u64,
    pub nanos: u64,
}

impl LatencyTotals {
    /// The mean in milliseconds; `None` before the first timed operation.
    pub fn mean_ms(self) -> Option<f64> {
        (self.count > 0).then(|| self.nanos as f64 / self.count as f64 / 1e6)
    }
}

impl std::ops::AddAssign for LatencyTotals {
    fn add_assign(&mut self, other: LatencyTotals) {
        self.count += other.count;
        self.nanos += other.nanos;
    }
}

/// [`Storage::write_memtable`] for callers without a `Storage` (commit log replay).
pub(super) fn write_memtable_with(
    store: &Arc<ColumnFamilyStore>,
    memtable: &Arc<Memtable>,
    position: ReplayPosition,
    config: &super::StorageConfig,
    cache: &Arc<BlockCache>,
) -> Result<()> {
    let desc = store.new_descriptor();
    let options = crate::compaction::writer_options_for(writer_options(config), &store.metadata());
    let mut writer = SsTableWriter::create(desc, memtable.partitions(), options)?;
    let written = (|| {
        for (key, row) in memtable.range(std::ops::Bound::Unbounded) {
            writer.append(&key, &row)?;
        }
        Ok::<_, StorageError>(())
    })();
    if let Err(e) = written {
        writer.abort();
        return Err(e);
    }
    let reader = Arc::new(writer.finish((position.segment_id, position.offset), Vec::new(), cache)?);
    info!(keyspace = %store.keyspace, cf = %store.name, file = %reader.descriptor().path(sstable::Component::Data).display(),
          partitions = memtable.partitions(), "flushed memtable");
    if config.incremental_backups {
        // The SSTable is written and durable: a missing backup link is the operator's to
        // notice, never a reason to refuse the flush (and with it, writes).
        if let Err(e) = super::snapshot::back_up(&reader) {
            error!(keyspace = %store.keyspace, cf = %store.name, error = %e, "incremental backup of a flushed SSTable failed");
        }
    }
    store.finish_flush(memtable, Some(reader));
    store.counters.flushes.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// How flushes and compactions lay out SSTables, from the engine's configuration.
pub(super) fn writer_options(config: &super::StorageConfig) -> WriterOptions {
    WriterOptions {
        index_interval: config.index_interval as u32,
        // 0 would be refused by the writer (and fail every flush); the smallest index is one
        // entry per cell.
        column_index_size: config.column_index_size.max(1),
        large_partition_warning: config.large_partition_warning,
        ..WriterOptions::default()
    }
}

/// Wants no column index block: a point read then reads a large partition's header only.
struct NoCells;

impl sstable::CellFilter for NoCells {
    fn wants_block(&self, _first_name: &[u8], _last_name: &[u8]) -> bool {
        false
    }
}

/// Whether `sstable` holds partition `key`: its bloom filter admits it (which a key it lacks
/// may pass) and its index lists it.
fn holds_key(sstable: &SsTableReader, key: &crate::dht::DecoratedKey) -> Result<bool> {
    if !sstable.might_contain(key) {
        return Ok(false);
    }
    let data = sstable.descriptor().path(sstable::Component::Data);
    match sstable.get(key, &NoCells) {
        Ok(found) => Ok(found.is_some()),
        // Data is read only for a partition the index listed (or the key cache, filled from
        // the index, knew): the key is here, in data that fails its checks.
        Err(StorageError::Corrupt { file: Some(file), .. }) if file == data => Ok(true),
        Err(StorageError::Io { path, .. }) if path == data => Ok(true),
        Err(e) => Err(e),
    }
}

/// The block cache's size and use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub bytes: u64,
    pub capacity_bytes: u64,
    pub hits: u64,
    pub misses: u64,
}

impl Storage {
    /// Writes the column family's current memtable to an SSTable and waits for it.
    pub fn flush(&self, keyspace: &str, cf: &str) -> Result<()> {
        let store = self.store(keyspace, cf)?;
        self.flush_store(&store)
    }

    pub fn flush_all(&self) -> Result<()> {
        for s in self.all_stores() {
            self.flush_store(&s)?;
        }
        Ok(())
    }

    pub(super) fn flush_store(&self, store: &Arc<ColumnFamilyStore>) -> Result<()> {
        self.flush_store_if(store, |_| true)
    }

    /// Flushes the column family and its indexes when `wanted` holds for it, judged under its
    /// flush lock (a writer that waited for another flush finds out there whether that one
    /// already took its data). Memtables a failed flush left switched out are
    /// written first, each with its own replay position, so an SSTable never claims a position
    /// that an unwritten memtable's data comes before.
    pub(super) fn flush_store_if(
        &self,
        store: &Arc<ColumnFamilyStore>,
        wanted: impl Fn(&ColumnFamilyStore) -> bool,
    ) -> Result<()> {
        let indexes = store.indexes();
        let _flushing = store.flush_lock.lock();
        // Lock order: the base's flush lock, then its indexes' (an index flushed on its own, by
        // a build, takes only its own).
        let _index_flushing: Vec<_> = indexes.iter().map(|i| i.store.flush_lock.lock()).collect();
        let flushed = self.flush_locked(store, &indexes, wanted);
        store.record_flush(flushed.as_ref().err());
        flushed
    }

    /// [`Storage::flush_store_if`] with the flush locks held.
    fn flush_locked(
        &self,
        store: &Arc<ColumnFamilyStore>,
        indexes: &[Arc<SecondaryIndex>],
        wanted: impl Fn(&ColumnFamilyStore) -> bool,
    ) -> Result<()> {
        // While the memtables of an earlier failed flush still cannot be written, the active
        // memtable stays in service: a disk that stays full then holds one failed memtable per
        // column family, and writers are refused once the active one reaches the hard limit
        // (`Storage::apply_at`), where switching it out too would pile memtables up without end.
        if let Some(position) = self.write_all_switched(store, indexes)? {
            self.inner.commitlog.discard_completed(store.id, position)?;
        }
        let position = {
            let _switch = self.inner.switch_lock.write();
            if !wanted(store) {
                return Ok(());
            }
            let active = store.active_memtable();
            let position = self.inner.commitlog.current_position();
            if store.flush_pending.swap(false, Ordering::SeqCst) {
                self.inner.pending_flushes.fetch_sub(1, Ordering::SeqCst);
            }
            for index in indexes.iter() {
                if !index.store.active_memtable().is_empty() {
                    self.switch_memtable(&index.store, position);
                }
            }
            if !active.is_empty() {
                self.switch_memtable(store, position);
            }
            position
        };
        self.write_all_switched(store, indexes)?;
        // Everything of this column family before `position` is in SSTables now.
        self.inner.commitlog.discard_completed(store.id, position)?;
        Ok(())
    }

    /// Writes the switched-out memtables of the column family's indexes, then its own; the
    /// replay position of the newest one it wrote.
    ///
    /// IMPORTANT: the index SSTables are committed before the base's: replay re-derives index
    /// entries only from records after the base's replay position, so the index must already
    /// hold everything before it.
    fn write_all_switched(
        &self,
        store: &Arc<ColumnFamilyStore>,
        indexes: &[Arc<SecondaryIndex>],
    ) -> Result<Option<ReplayPosition>> {
        for index in indexes.iter() {
            if self.write_switched(&index.store)?.is_some() {
                self.request_compaction(&index.store);
            }
        }
        let written = self.write_switched(store)?;
        if written.is_some() {
            self.request_compaction(store);
        }
        Ok(written)
    }

    /// Switches the store's active memtable out for a flush. The caller holds the switch lock
    /// and the store's flush lock; `position` is the commit log's position under them.
    pub(super) fn switch_memtable(&self, store: &ColumnFamilyStore, position: ReplayPosition) {
        self.inner.flushing_memtables.fetch_add(1, Ordering::SeqCst);
        store.switch_memtable(position);
    }

    /// Writes the store's switched-out memtables to SSTables, oldest first; stops at the first
    /// failure, which leaves that memtable and the ones after it for the next flush to retry.
    /// The replay position of the last one written, if any. The caller holds the store's flush
    /// lock.
    pub(super) fn write_switched(&self, store: &Arc<ColumnFamilyStore>) -> Result<Option<ReplayPosition>> {
        let switched = store.switched();
        for (memtable, position) in &switched {
            self.write_memtable(store, memtable, *position)?;
            self.inner.flushing_memtables.fetch_sub(1, Ordering::SeqCst);
        }
        Ok(switched.last().map(|(_, position)| *position))
    }

    /// The flush thread's periodic check: flushes every column family whose memtable is older
    /// than `MemtableFlushAfterMinutes` and holds data, as Cassandra does so that an idle
    /// column family does not keep old commit log segments alive, and retries flushes that
    /// failed (their memtables are still switched out).
    pub(super) fn flush_expired(&self) {
        let after = self.inner.config.memtable_flush_after;
        let due = |store: &ColumnFamilyStore| {
            let m = store.memtables.read();
            !m.flushing.is_empty() || (!m.active.is_empty() && m.active.age() >= after)
        };
        for store in self.all_stores() {
            if !due(&store) {
                continue;
            }
            if let Err(e) = self.flush_store_if(&store, due) {
                warn!(keyspace = %store.keyspace, cf = %store.name, error = %e, "flush failed; retried later");
            }
        }
    }

    /// While the commit log holds more than `commitlog_total_space`, flushes the column families
    /// with records in its oldest segment, so that segment is deleted; then looks again. Without
    /// it a column family written once keeps every segment since alive until its memtable is
    /// `MemtableFlushAfterMinutes` old, however fast the others fill the log (Cassandra 1.0+
    /// bounds the log the same way). Stops at a flush that fails: its flush is retried by the
    /// timer, and the segments stay until it succeeds.
    pub(super) fn reclaim_commitlog(&self) {
        let limit = self.inner.config.commitlog_total_space;
        let log = &self.inner.commitlog;
        // Each round frees the oldest segment or stops, so this many rounds suffice.
        for _ in 0..log.segment_paths().len() {
            let pinning = log.dirty_in_oldest_over(limit);
            if pinning.is_empty() {
                return;
            }
            let stores = self.all_stores();
            for id in pinning {
                let Some(store) = stores.iter().find(|s| s.id == id) else {
                    warn!(cf_id = %id, "a column family unknown to the schema holds the oldest commit log segment");
                    return;
                };
                info!(keyspace = %store.keyspace, cf = %store.name, live_bytes = log.live_bytes(), limit,
                      "commit log over its total space; flushing to free its oldest segment");
                if let Err(e) = self.flush_store(store) {
                    warn!(keyspace = %store.keyspace, cf = %store.name, error = %e, "flush failed; retried later");
                    return;
                }
            }
        }
    }

    /// Writes a switched-out memtable to an SSTable recording `position` as its replay position,
    /// and puts it in place of the memtable.
    pub(super) fn write_memtable(
        &self,
        store: &Arc<ColumnFamilyStore>,
        memtable: &Arc<Memtable>,
        position: ReplayPosition,
    ) -> Result<()> {
        write_memtable_with(store, memtable, position, &self.inner.config, &self.inner.cache)
    }

    pub(super) fn writer_options(&self) -> WriterOptions {
        writer_options(&self.inner.config)
    }

    /// Flushes, then merges every SSTable of the column family: into one, or under leveled
    /// compaction into SSTables of its size, filling level 1, then 2, and so on.
    pub fn major_compact(&self, keyspace: &str, cf: &str) -> Result<()> {
        let store = self.store(keyspace, cf)?;
        self.flush_store(&store)?;
        compaction::compact_all(&self.compaction_env(), &store)?;
        // The column family's indexes too: they are part of its data.
        for index in store.indexes().iter() {
            compaction::compact_all(&self.compaction_env(), &index.store)?;
        }
        Ok(())
    }

    /// Runs, on this thread, the compactions the column family's strategy asks for now, as the
    /// background worker would after a flush (which it does not while auto-compaction is off).
    pub fn compact_due(&self, keyspace: &str, cf: &str) -> Result<()> {
        let store = self.store(keyspace, cf)?;
        compaction::compact_if_needed(&self.compaction_env(), &store)
    }

    /// Drops the partitions outside `owned` from the column family (cleanup, after the node gave
    /// ranges away): flushes, then rewrites each SSTable that may hold such a partition on its
    /// own (`compaction::cleanup`). Secondary index entries of dropped partitions are left to
    /// the index reads, which delete an entry whose base row is gone.
    pub fn cleanup(&self, keyspace: &str, cf: &str, owned: &[crate::dht::Range]) -> Result<CleanupSummary> {
        let store = self.store(keyspace, cf)?;
        self.flush_store(&store)?;
        compaction::cleanup(&self.compaction_env(), &store, owned)
    }

    /// The compactions, cleanups and scrubs running now, and how many compactions the column
    /// families are due (`nodetool compactionstats`' pending tasks).
    pub fn compaction_stats(&self) -> (Vec<crate::CompactionInfo>, u64) {
        let pending = self.all_stores().iter().map(|s| compaction::pending_tasks(s)).sum();
        (self.inner.active_compactions.list(), pending)
    }

    /// Compaction's write rate limit in MB/s (0: unthrottled).
    pub fn compaction_throughput(&self) -> u32 {
        self.inner.compaction_throughput.load(Ordering::Relaxed)
    }

    /// Changes compaction's write rate limit, for the compactions running too
    /// (`nodetool setcompactionthroughput`); until the next start.
    pub fn set_compaction_throughput(&self, mb_per_sec: u32) {
        self.inner.compaction_throughput.store(mb_per_sec, Ordering::Relaxed);
        info!(mb_per_sec, "compaction throughput changed");
    }

    /// Cassandra's `nodetool disableautocompaction` and `enableautocompaction` for `keyspace.cf`
    /// and its secondary indexes, until the node restarts: background (minor) compactions stop
    /// or start again; one running finishes. Major compaction, cleanup and scrub run either way.
    /// Enabling asks for a compaction check at once, as Cassandra submits a background
    /// compaction. Whether that changed anything.
    pub fn set_auto_compaction(&self, keyspace: &str, cf: &str, enabled: bool) -> Result<bool> {
        let store = self.store(keyspace, cf)?;
        let indexes = store.indexes();
        let mut changed = false;
        for s in std::iter::once(&store).chain(indexes.iter().map(|i| &i.store)) {
            changed |= s.set_auto_compaction(enabled);
            if enabled {
                self.request_compaction(s);
            }
        }
        if changed {
            info!(keyspace, cf, enabled, "background compaction switched by operator request");
        }
        Ok(changed)
    }

    /// Whether background compaction runs for `keyspace.cf` (see [`Storage::set_auto_compaction`]).
    pub fn auto_compaction(&self, keyspace: &str, cf: &str) -> Result<bool> {
        Ok(self.store(keyspace, cf)?.auto_compaction())
    }

    /// The (min, max) SSTables a background compaction of `keyspace.cf` merges (Cassandra's
    /// `nodetool getcompactionthreshold`): as set at run time, else as defined.
    pub fn compaction_thresholds(&self, keyspace: &str, cf: &str) -> Result<(i32, i32)> {
        Ok(self.store(keyspace, cf)?.compaction_thresholds())
    }

    /// Cassandra's `nodetool setcompactionthreshold`: the live thresholds of `keyspace.cf`
    /// change, not its definition, until the node restarts or the definition changes; 0 in
    /// either turns background compaction off. Refused, naming the column family, when the
    /// minimum is over the maximum (but for a maximum of 0), 1, or either is negative. A
    /// compaction check follows at once, as in Cassandra. The secondary indexes keep theirs.
    pub fn set_compaction_thresholds(&self, keyspace: &str, cf: &str, min: i32, max: i32) -> Result<()> {
        let store = self.store(keyspace, cf)?;
        compaction::check_thresholds(min, max)
            .map_err(|reason| StorageError::InvalidSchema(format!("{keyspace}.{cf}: {reason}")))?;
        store.set_compaction_thresholds(min, max);
        info!(keyspace, cf, min, max, "compaction thresholds changed by operator request");
        self.request_compaction(&store);
        Ok(())
    }

    /// Cassandra's `nodetool stop <type>`: asks every running operation of `kind` (as
    /// [`crate::CompactionInfo::kind`] names them: `Compaction`, `Cleanup`, `Scrub`) to give up.
    /// Each stops at its next partition, removes what it wrote and keeps its inputs; its caller
    /// gets an error carrying a [`super::CompactionInterrupted`]. Returns those asked, as they
    /// were.
    pub fn stop_compactions(&self, kind: &str) -> Vec<crate::CompactionInfo> {
        self.inner.active_compactions.stop(kind)
    }

    /// Cassandra's `nodetool getsstables`: the Data files of the SSTables of `keyspace.cf`
    /// that hold partition `key`: its bloom filter admits it and its index lists it (memtables
    /// are not looked at). An SSTable whose index lists the key but whose data there fails its
    /// checks is listed too: it holds the partition, damaged.
    pub fn sstables_for_key(&self, keyspace: &str, cf: &str, key: &[u8]) -> Result<Vec<PathBuf>> {
        let store = self.store(keyspace, cf)?;
        let key = crate::dht::DecoratedKey::new(self.partitioner().try_token_for_key(key)?, key.to_vec());
        let mut found = Vec::new();
        for sstable in store.sstables() {
            if holds_key(&sstable, &key)? {
                found.push(sstable.descriptor().path(sstable::Component::Data));
            }
        }
        Ok(found)
    }

    /// Cassandra's `nodetool rebuild_index`: empties the indexes `names` of `keyspace.cf` (all
    /// of them when empty) and builds them again from the column family's data, in the
    /// background (`index_status`); indexed queries scan the column family meanwhile. The
    /// remedy for an index SSTable that fails its checks, which scrub does not rewrite. Returns
    /// the indexes rebuilt.
    pub fn rebuild_indexes(&self, keyspace: &str, cf: &str, names: &[String]) -> Result<Vec<String>> {
        let store = self.store(keyspace, cf)?;
        let indexes = store.indexes();
        if let Some(unknown) = names.iter().find(|n| !indexes.iter().any(|i| &i.name == *n)) {
            return Err(StorageError::UnknownIndex {
                keyspace: keyspace.into(),
                cf: cf.into(),
                index: unknown.clone(),
            });
        }
        let mut rebuilt = Vec::new();
        for index in indexes.iter().filter(|i| names.is_empty() || names.contains(&i.name)) {
            index.mark_unbuilt()?;
            self.clear_index_data(index)?;
            info!(keyspace, cf, index = %index.name, "index emptied; building it again");
            self.start_index_build(&store, index.clone());
            rebuilt.push(index.name.clone());
        }
        Ok(rebuilt)
    }

    /// Drops an index's memtables and SSTables (as truncate does a column family's); the base
    /// column family's commit log records stay, and replaying them only adds entries back.
    fn clear_index_data(&self, index: &crate::index::SecondaryIndex) -> Result<()> {
        let store = &index.store;
        let _flushing = store.flush_lock.lock();
        {
            let _switch = self.inner.switch_lock.write();
            let mut m = store.memtables.write();
            m.active = Arc::new(Memtable::new());
            self.inner.flushing_memtables.fetch_sub(m.flushing.len(), Ordering::SeqCst);
            m.flushing.clear();
            drop(m);
            store.record_flush(None);
        }
        let old: Vec<Arc<SsTableReader>> = std::mem::take(&mut *store.sstables.write());
        for s in old {
            s.delete_files()?;
        }
        Ok(())
    }

    /// Cassandra's `nodetool scrub`: flushes, then replaces each SSTable with damaged
    /// partitions by a copy of the rest (`compaction::scrub`).
    pub fn scrub(&self, keyspace: &str, cf: &str) -> Result<crate::ScrubSummary> {
        let store = self.store(keyspace, cf)?;
        self.flush_store(&store)?;
        compaction::scrub(&self.compaction_env(), &store)
    }

    /// Removes all data of a column family, durably: records before this point are never
    /// replayed again. With `AutoSnapshot`, what was there is first flushed and linked into
    /// snapshot `<ms>-truncated-<cf>`; if that fails, nothing is removed.
    pub fn truncate(&self, keyspace: &str, cf: &str) -> Result<()> {
        let store = self.store(keyspace, cf)?;
        self.auto_snapshot(&store, "truncated")?;
        let indexes = store.indexes();
        let _flushing = store.flush_lock.lock();
        let _index_flushing: Vec<_> = indexes.iter().map(|i| i.store.flush_lock.lock()).collect();
        let position = {
            let _switch = self.inner.switch_lock.write();
            let position = self.inner.commitlog.current_position();
            for store in std::iter::once(&*store).chain(indexes.iter().map(|i| &*i.store)) {
                let mut m = store.memtables.write();
                m.active = Arc::new(Memtable::new());
                self.inner.flushing_memtables.fetch_sub(m.flushing.len(), Ordering::SeqCst);
                m.flushing.clear();
            }
            // A failed flush's memtable is gone with the rest.
            store.record_flush(None);
            position
        };
        self.update_local(|state| {
            state.truncated_at.insert(store.id, (position.segment_id, position.offset));
            Ok(())
        })?;
        let old: Vec<Arc<SsTableReader>> = std::mem::take(&mut *store.sstables.write());
        for s in old {
            s.delete_files()?;
        }
        for index in indexes.iter() {
            let old: Vec<Arc<SsTableReader>> = std::mem::take(&mut *index.store.sstables.write());
            for s in old {
                s.delete_files()?;
            }
        }
        self.inner.commitlog.discard_completed(store.id, position)?;
        info!(keyspace, cf, "truncated");
        Ok(())
    }

    // ----- statistics -----

    pub fn cf_stats(&self, keyspace: &str, cf: &str) -> Result<CfStats> {
        let store = self.store(keyspace, cf)?;
        let c = &store.counters;
        let sstables = store.sstables();
        let memtable = store.active_memtable();
        Ok(CfStats {
            keyspace: store.keyspace.clone(),
            name: store.name.clone(),
            sstable_count: sstables.len() as u64,
            disk_bytes: sstables.iter().map(|s| s.disk_size()).sum(),
            data_bytes: sstables.iter().map(|s| s.data_size()).sum(),
            key_estimate: sstables.iter().map(|s| s.metadata().key_count).sum(),
            sstable_cells: sstables.iter().map(|s| s.metadata().cell_count).sum(),
            sstable_tombstones: sstables.iter().map(|s| s.metadata().tombstone_count).sum(),
            memtable_operations: memtable.operations() as u64,
            memtable_bytes: memtable.size() as u64,
            memtable_partitions: memtable.partitions() as u64,
            flushes: c.flushes.load(Ordering::Relaxed),
            compactions: c.compactions.load(Ordering::Relaxed),
            reads: c.reads.load(Ordering::Relaxed),
            writes: c.writes.load(Ordering::Relaxed),
            read_latency: c.read_latency.totals(),
            write_latency: c.write_latency.totals(),
            min_timestamp: sstables.iter().map(|s| s.metadata().min_timestamp).filter(|&t| t != i64::MAX).min(),
            max_timestamp: sstables.iter().map(|s| s.metadata().max_timestamp).filter(|&t| t != i64::MIN).max(),
            sstables_in_each_level: compaction::sstables_in_each_level(&store),
        })
    }

    /// Statistics of every column family, in (keyspace, name) order.
    pub fn all_cf_stats(&self) -> Vec<CfStats> {
        self.column_families().iter().filter_map(|(ks, cf)| self.cf_stats(ks, cf).ok()).collect()
    }

    /// Bytes of SSTables on disk, over every column family (what `nodetool` calls load).
    pub fn load_bytes(&self) -> u64 {
        self.all_stores().iter().flat_map(|s| s.sstables()).map(|r| r.disk_size()).sum()
    }

    pub fn cache_stats(&self) -> CacheStats {
        let cache = &self.inner.cache;
        let (hits, misses) = cache.hits_and_misses();
        CacheStats { bytes: cache.size() as u64, capacity_bytes: cache.capacity() as u64, hits, misses }
    }

    /// The directory holding a column family's SSTables.
    pub fn cf_directory(&self, keyspace: &str, cf: &str) -> Result<PathBuf> {
        Ok(self.store(keyspace, cf)?.sstable_dir().to_path_buf())
    }

    /// The Data component of every live SSTable of a column family.
    pub fn data_files(&self, keyspace: &str, cf: &str) -> Result<Vec<PathBuf>> {
        let store = self.store(keyspace, cf)?;
        Ok(store.sstables().iter().map(|s| s.descriptor().path(sstable::Component::Data)).collect())
    }
}
