//! The writing side of the commit log: appends with group writes and group commit, segment
//! rotation, the periodic sync loop, dirty tracking and segment removal.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::future::Future;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use parking_lot::{Condvar, Mutex, MutexGuard};
use rustc_hash::FxHashMap;
use uuid::Uuid;

use super::segment::{self, FormatVersion, HEADER_LEN, RECORD_HEADER_LEN};
use super::{CommitLogConfig, ReplayPosition, SyncMode};
use crate::error::{Result, StorageError};

/// A write buffer whose capacity grew past this (one huge record) is dropped after use rather
/// than kept for the next batch.
const MAX_KEPT_BUFFER: usize = 4 * 1024 * 1024;

/// A log and the sequence number of the newest record deferred in it.
type Deferred = (Arc<Shared>, u64);

thread_local! {
    /// `Some` while [`defer_acks`] runs on this thread, holding the newest record an append
    /// only queued (if any).
    static DEFERRED: RefCell<Option<Option<Deferred>>> = const { RefCell::new(None) };
}

/// Runs `f` with deferred acknowledgement: in periodic mode, an append made by `f` on this
/// thread only queues its record and returns; it neither writes nor waits for another thread's
/// write (which would block this thread, and on a small machine leave a core idle). The caller
/// must then await the returned [`Written`] before it acknowledges anything `f` did: only then
/// is every record of `f` in a file, so that it survives a crash of the process. An event loop
/// that first serves its other ready connections gets one write(2) for all their records, as
/// Redis writes its append-only file once per loop. Appends outside such a scope, and all
/// appends in batch mode, still return only when their record is written (or fsynced).
pub fn defer_acks<T>(f: impl FnOnce() -> T) -> (T, Option<Written>) {
    struct Scope(bool);
    impl Drop for Scope {
        fn drop(&mut self) {
            if self.0 {
                DEFERRED.with(|d| d.borrow_mut().take());
            }
        }
    }
    let outermost = DEFERRED.with(|d| {
        let mut d = d.borrow_mut();
        d.is_none().then(|| *d = Some(None)).is_some()
    });
    let scope = Scope(outermost);
    let value = f();
    let pending = if outermost { DEFERRED.with(|d| d.borrow_mut().take().flatten()) } else { None };
    drop(scope);
    (value, pending.map(|(shared, seq)| Written { shared, seq }))
}

/// Notes `seq` of `shared` as deferred if this thread is in a [`defer_acks`] scope that has not
/// yet deferred a record of another log; false means the caller must wait itself.
fn defer(shared: &Arc<Shared>, seq: u64) -> bool {
    DEFERRED.with(|d| match d.borrow_mut().as_mut() {
        Some(slot @ None) => {
            *slot = Some((Arc::clone(shared), seq));
            true
        }
        Some(Some((same, newest))) if Arc::ptr_eq(same, shared) => {
            *newest = (*newest).max(seq);
            true
        }
        _ => false,
    })
}

/// Resolves once every record deferred in a [`defer_acks`] scope is written to the OS, or to
/// the error that poisoned the log first. If no write is in progress when it is polled, it
/// writes the queued records itself (one write(2)), so nothing waits for a writer that is not
/// coming.
pub struct Written {
    shared: Arc<Shared>,
    seq: u64,
}

impl Written {
    /// Test hook: the sequence number this waits for.
    #[cfg(test)]
    pub(super) fn seq(&self) -> u64 {
        self.seq
    }
}

impl Future for Written {
    type Output = Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let shared = &*self.shared;
        let mut st = shared.state.lock();
        loop {
            if st.written >= self.seq {
                return Poll::Ready(Ok(()));
            }
            if let Some(reason) = &st.poisoned {
                return Poll::Ready(Err(StorageError::Poisoned(reason.clone())));
            }
            if st.writing {
                st.waiters.push((self.seq, cx.waker().clone()));
                return Poll::Pending;
            }
            if let Err(error) = shared.write_queued(&mut st, None) {
                return Poll::Ready(Err(error));
            }
        }
    }
}

/// An append-only, segmented, checksummed log of opaque records. `Send + Sync`: share it
/// (e.g. in an `Arc`) between all writing threads.
pub struct CommitLog {
    shared: Arc<Shared>,
    /// The periodic sync loop (periodic mode only); taken and joined by `shutdown`.
    sync_thread: Mutex<Option<JoinHandle<()>>>,
}

struct Shared {
    dir: PathBuf,
    segment_size: u64,
    mode: SyncMode,
    /// Lock protocol: `state` guards all mutable bookkeeping and the userspace write buffer.
    /// It is held for bookkeeping and for copying a record into the buffer. The write(2) and
    /// fsync of the hot path run *outside* it, by the one appender holding the writer role
    /// (`State::writing`), or by the periodic sync loop (fsync only, which may overlap a write).
    /// Segment rotation, which is rare, writes and fsyncs the old segment while holding it, after
    /// waiting for the writer role to be free. No other lock is taken while holding it.
    state: Mutex<State>,
    /// Notified (all) when `written`/`synced` advance, the writer role is released, or the log
    /// is poisoned. Appenders waiting for their record wait here.
    progress: Condvar,
    /// Set by `shutdown`; the periodic sync loop sleeps on it. Never held together with `state`
    /// (the loop releases it before calling `sync_now`).
    stop: Mutex<bool>,
    stop_signal: Condvar,
}

/// The segment being appended to.
struct ActiveSegment {
    id: u64,
    path: PathBuf,
    file: File,
}

/// A live segment file and the column families with unflushed records in it.
struct SegmentState {
    path: PathBuf,
    /// Bytes in the file once rotated out (the active segment's are `State::end`).
    len: u64,
    /// CF → offset of the last record touching it in this segment.
    /// FxHash: updated on every append, keyed by the node's own column-family ids.
    dirty: FxHashMap<Uuid, u64>,
}

struct State {
    active: Arc<ActiveSegment>,
    /// Offset the next record gets in the active segment (buffered records included).
    end: u64,
    /// Encoded records not yet handed to a writer; they belong at the end of the active segment.
    buffer: Vec<u8>,
    /// An empty buffer kept to swap in while the writer writes the other one.
    spare: Vec<u8>,
    /// Sequence numbers: records appended / handed to the OS / fsynced. `synced <= written`
    /// except transiently; every record `<= written` is in a file, in order.
    appended: u64,
    written: u64,
    synced: u64,
    /// Someone (an appender acting for all queued records) is writing outside the lock.
    writing: bool,
    /// When the first record of the current buffer arrived (the batch window runs from here).
    batch_started: Option<Instant>,
    /// All live segments, the active one included, by id.
    segments: BTreeMap<u64, SegmentState>,
    /// Deferred appends ([`Written`]) waiting for `written` to reach their sequence number.
    waiters: Vec<(u64, Waker)>,
    /// Set by a failed write or fsync; the reason is returned to every later append.
    poisoned: Option<String>,
    closed: bool,
    /// Test hook: the next write or fsync fails.
    #[cfg(test)]
    fail_next_io: bool,
    /// Test counter: group-commit fsyncs done by appenders.
    #[cfg(test)]
    batch_fsyncs: u64,
}

impl State {
    /// Bytes in the live segment files, the active one's buffered records included.
    fn live_bytes(&self) -> u64 {
        let active = self.active.id;
        self.segments.iter().map(|(id, s)| if *id == active { self.end } else { s.len }).sum()
    }

    fn check_open(&self) -> Result<()> {
        if let Some(reason) = &self.poisoned {
            return Err(StorageError::Poisoned(reason.clone()));
        }
        if self.closed {
            return Err(StorageError::ShuttingDown);
        }
        Ok(())
    }

    /// Records a write or fsync failure; the log accepts nothing more.
    fn poison(&mut self, path: &Path, what: &str, error: io::Error) -> StorageError {
        let error = StorageError::io(path, error);
        tracing::error!(%error, "commit log {what} failed; refusing further writes");
        if self.poisoned.is_none() {
            self.poisoned = Some(format!("{what}: {error}"));
        }
        error
    }

    #[cfg(test)]
    fn injected_failure(&mut self) -> io::Result<()> {
        if std::mem::take(&mut self.fail_next_io) {
            return Err(io::Error::other("injected I/O failure"));
        }
        Ok(())
    }

    #[cfg(not(test))]
    fn injected_failure(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Wakes the deferred appends whose records are written, or all of them when `all` (the log
    /// is poisoned, or the writer role is free with records still queued: one of them takes it).
    fn wake_waiters(&mut self, all: bool) {
        let written = self.written;
        self.waiters.retain(|(seq, waker)| {
            let ready = all || *seq <= written;
            if ready {
                waker.wake_by_ref();
            }
            !ready
        });
    }

    /// After a write, with the writer role given back: wakes the deferred appends whose records
    /// are written, or all of them if the log is poisoned or records are still queued (appended
    /// during the write), so that one of them takes the role and writes the rest. Without that
    /// last case a deferred append whose record missed the write would wait for a writer that
    /// may never come.
    fn wake_after_write(&mut self) {
        let all = self.poisoned.is_some() || self.written < self.appended;
        self.wake_waiters(all);
    }

    /// Takes the buffered bytes, leaving the spare buffer in their place.
    fn take_buffer(&mut self) -> Vec<u8> {
        let spare = std::mem::take(&mut self.spare);
        std::mem::replace(&mut self.buffer, spare)
    }

    fn recycle_buffer(&mut self, mut bytes: Vec<u8>) {
        if bytes.capacity() <= MAX_KEPT_BUFFER && self.spare.capacity() < bytes.capacity() {
            bytes.clear();
            self.spare = bytes;
        }
    }
}

impl CommitLog {
    /// Opens `config.dir` for writing (creating it if needed) and starts a fresh segment whose id
    /// is greater than every segment already there. Replay and delete old segments first.
    pub fn open(config: CommitLogConfig) -> Result<CommitLog> {
        let CommitLogConfig { dir, segment_size, sync } = config;
        std::fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
        let existing = segment::list_segments(&dir).map_err(|e| StorageError::io(&dir, e))?;
        let newest = existing.last().map_or(0, |(id, _, _)| *id);
        let active = create_segment(&dir, next_segment_id(newest))?;
        let mut segments = BTreeMap::new();
        segments.insert(active.id, SegmentState { path: active.path.clone(), len: 0, dirty: FxHashMap::default() });
        let state = State {
            active: Arc::new(active),
            end: HEADER_LEN,
            buffer: Vec::new(),
            spare: Vec::new(),
            appended: 0,
            written: 0,
            synced: 0,
            writing: false,
            batch_started: None,
            segments,
            waiters: Vec::new(),
            poisoned: None,
            closed: false,
            #[cfg(test)]
            fail_next_io: false,
            #[cfg(test)]
            batch_fsyncs: 0,
        };
        let shared = Arc::new(Shared {
            dir,
            segment_size,
            mode: sync,
            state: Mutex::new(state),
            progress: Condvar::new(),
            stop: Mutex::new(false),
            stop_signal: Condvar::new(),
        });
        let sync_thread = match sync {
            SyncMode::Periodic { period } => {
                let shared = Arc::clone(&shared);
                let handle = thread::Builder::new()
                    .name("commitlog-sync".into())
                    .spawn(move || periodic_sync_loop(&shared, period))
                    .map_err(|e| StorageError::io(Path::new("<commitlog-sync thread>"), e))?;
                Some(handle)
            }
            SyncMode::Batch { .. } => None,
        };
        Ok(CommitLog { shared, sync_thread: Mutex::new(sync_thread) })
    }

    /// Appends one record touching the column families `cf_ids` and returns its position. When it
    /// returns, the record is written to the OS (periodic mode) or fsynced (batch mode).
    pub fn append(&self, record: &[u8], cf_ids: &[Uuid]) -> Result<ReplayPosition> {
        let shared = &*self.shared;
        if u32::try_from(record.len()).is_err() {
            let error = io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a commit log record of {} bytes is over the 4 GiB limit", record.len()),
            );
            return Err(StorageError::io(&shared.dir, error));
        }
        let frame_len = RECORD_HEADER_LEN + record.len() as u64;
        let mut guard = shared.state.lock();
        guard.check_open()?;
        // A record that does not fit starts a new segment, unless the segment is still empty:
        // then the record (larger than a segment) gets this segment to itself.
        if guard.end + frame_len > shared.segment_size && guard.end > HEADER_LEN {
            shared.rotate(&mut guard)?;
        }
        let st = &mut *guard;
        let position = ReplayPosition { segment_id: st.active.id, offset: st.end };
        segment::encode_record(&mut st.buffer, record);
        st.end += frame_len;
        st.appended += 1;
        let seq = st.appended;
        if st.batch_started.is_none() {
            st.batch_started = Some(Instant::now());
        }
        if let Some(segment) = st.segments.get_mut(&position.segment_id) {
            for cf_id in cf_ids {
                segment.dirty.insert(*cf_id, position.offset);
            }
        }
        // Periodic mode within a `defer_acks` scope: the writer in progress or the scope's
        // `Written` writes this record, together with whatever else is queued by then.
        if matches!(shared.mode, SyncMode::Periodic { .. }) && defer(&self.shared, seq) {
            return Ok(position);
        }
        shared.wait_durable(guard, seq)?;
        Ok(position)
    }

    /// The position the next append will get (or a smaller one, if that append starts a new
    /// segment). A flush records it before switching memtables: everything before it is in the
    /// old memtable. That holds only if the engine keeps appends from straddling the switch
    /// (an append that got a position before this call must reach the old memtable), e.g. with
    /// a lock that writers share and the memtable switch takes exclusively.
    pub fn current_position(&self) -> ReplayPosition {
        let st = self.shared.state.lock();
        ReplayPosition { segment_id: st.active.id, offset: st.end }
    }

    /// Column family `cf_id` is flushed: its records before `position` are in SSTables. Segments
    /// in which no column family is dirty any more are deleted (never the active one).
    pub fn discard_completed(&self, cf_id: Uuid, position: ReplayPosition) -> Result<()> {
        let mut st = self.shared.state.lock();
        for (&id, segment) in st.segments.range_mut(..=position.segment_id) {
            let flushed =
                id < position.segment_id || segment.dirty.get(&cf_id).is_some_and(|&last| last < position.offset);
            if flushed {
                segment.dirty.remove(&cf_id);
            }
        }
        delete_clean_segments(&mut st)
    }

    /// The column family is gone (dropped or truncated): it keeps no segment alive any more.
    pub fn forget_cf(&self, cf_id: Uuid) -> Result<()> {
        let mut st = self.shared.state.lock();
        for segment in st.segments.values_mut() {
            segment.dirty.remove(&cf_id);
        }
        delete_clean_segments(&mut st)
    }

    /// Bytes in the live segment files, the active one's buffered records included.
    pub fn live_bytes(&self) -> u64 {
        self.shared.state.lock().live_bytes()
    }

    /// When the live segments hold more than `limit` bytes: the column families with records
    /// in the oldest one, whose flushes would let it (and maybe more) be deleted. Empty when
    /// under the limit, or when the oldest segment is the active one.
    pub fn dirty_in_oldest_over(&self, limit: u64) -> Vec<Uuid> {
        let st = self.shared.state.lock();
        if st.live_bytes() <= limit {
            return Vec::new();
        }
        match st.segments.iter().next() {
            Some((id, oldest)) if *id != st.active.id => oldest.dirty.keys().copied().collect(),
            _ => Vec::new(),
        }
    }

    /// The live segment files, oldest first (the last is the active one).
    pub fn segment_paths(&self) -> Vec<PathBuf> {
        self.shared.state.lock().segments.values().map(|s| s.path.clone()).collect()
    }

    /// Fsyncs everything written so far (used at clean shutdown, and by the periodic loop).
    pub fn sync(&self) -> Result<()> {
        self.shared.sync_now()
    }

    /// Refuses further appends, lets appends in flight finish, stops the sync loop and fsyncs.
    /// Calling it again does nothing more.
    pub fn shutdown(&self) -> Result<()> {
        let shared = &*self.shared;
        {
            let mut st = shared.state.lock();
            st.closed = true;
            // Appenders that got in before `closed` are finishing; the final fsync must cover them
            // (deferred records included: nobody may be left to write them).
            while st.poisoned.is_none() && (st.writing || st.written < st.appended) {
                if st.writing {
                    shared.progress.wait(&mut st);
                } else if shared.write_queued(&mut st, None).is_err() {
                    break;
                }
            }
        }
        *shared.stop.lock() = true;
        shared.stop_signal.notify_all();
        if let Some(handle) = self.sync_thread.lock().take() {
            if handle.join().is_err() {
                tracing::error!("the commit log sync thread panicked");
            }
        }
        shared.sync_now()
    }

    /// Test hook: the next write or fsync fails as if the disk did.
    #[cfg(test)]
    pub(super) fn inject_io_failure(&self) {
        self.shared.state.lock().fail_next_io = true;
    }

    /// Test hook: marks the writer role taken (or free) as if another thread were writing.
    #[cfg(test)]
    pub(super) fn set_writing(&self, writing: bool) {
        self.shared.state.lock().writing = writing;
    }

    /// Test hook: the writer role comes free as at the end of a write that did not take the
    /// records queued now.
    #[cfg(test)]
    pub(super) fn finish_simulated_write(&self) {
        let mut st = self.shared.state.lock();
        st.writing = false;
        st.wake_after_write();
    }

    /// Test hook: records written to the OS and records fsynced.
    #[cfg(test)]
    pub(super) fn written_and_synced(&self) -> (u64, u64) {
        let st = self.shared.state.lock();
        (st.written, st.synced)
    }

    /// Test hook: how many group-commit fsyncs appenders have done.
    #[cfg(test)]
    pub(super) fn batch_fsyncs(&self) -> u64 {
        self.shared.state.lock().batch_fsyncs
    }
}

impl Drop for CommitLog {
    fn drop(&mut self) {
        if let Err(error) = self.shutdown() {
            tracing::warn!(%error, "commit log shutdown on drop failed");
        }
    }
}

impl Shared {
    /// Waits until record `seq` is durable per the sync mode, doing the write (and in batch mode
    /// the fsync) itself for everyone queued when no write is in progress.
    fn wait_durable(&self, mut st: MutexGuard<'_, State>, seq: u64) -> Result<()> {
        let batch_window = match self.mode {
            SyncMode::Batch { window } => Some(window),
            SyncMode::Periodic { .. } => None,
        };
        loop {
            // Records queued behind this one are not left behind: deferred appends are woken by
            // the write (`wake_after_write`), blocking ones by `progress`, and take the role.
            let done = if batch_window.is_some() { st.synced >= seq } else { st.written >= seq };
            if done {
                return Ok(());
            }
            if let Some(reason) = &st.poisoned {
                return Err(StorageError::Poisoned(reason.clone()));
            }
            if st.writing {
                self.progress.wait(&mut st);
            } else {
                self.write_queued(&mut st, batch_window)?;
            }
        }
    }

    /// Takes the writer role and writes the whole buffer with one write(2), then (batch mode)
    /// one fsync, outside the lock. In batch mode it first lets the window run out so that more
    /// appenders join the batch.
    fn write_queued(&self, st: &mut MutexGuard<'_, State>, batch_window: Option<Duration>) -> Result<()> {
        st.writing = true;
        if let (Some(window), Some(started)) = (batch_window, st.batch_started) {
            let deadline = started + window;
            let now = Instant::now();
            if deadline > now {
                MutexGuard::unlocked(st, || thread::sleep(deadline - now));
            }
        }
        let bytes = st.take_buffer();
        let target = st.appended;
        st.batch_started = None;
        let segment = Arc::clone(&st.active);
        let sync = batch_window.is_some();
        let injected = st.injected_failure();
        let result = MutexGuard::unlocked(st, || injected.and_then(|()| write_and_sync(&segment.file, &bytes, sync)));
        st.writing = false;
        let outcome = match result {
            Ok(()) => {
                st.written = st.written.max(target);
                if sync {
                    st.synced = st.synced.max(target);
                    #[cfg(test)]
                    {
                        st.batch_fsyncs += 1;
                    }
                }
                Ok(())
            }
            Err(error) => Err(st.poison(&segment.path, if sync { "write and fsync" } else { "write" }, error)),
        };
        st.recycle_buffer(bytes);
        st.wake_after_write();
        self.progress.notify_all();
        outcome
    }

    /// Closes the active segment and starts a new one. Runs under the lock: waits for the writer
    /// role, writes what is buffered and fsyncs the old segment, so that a crash can only ever
    /// tear the last segment (replay relies on this).
    fn rotate(&self, st: &mut MutexGuard<'_, State>) -> Result<()> {
        while st.writing {
            self.progress.wait(st);
        }
        st.check_open()?;
        let old = Arc::clone(&st.active);
        let bytes = st.take_buffer();
        let target = st.appended;
        let result = st.injected_failure().and_then(|()| write_and_sync(&old.file, &bytes, true));
        st.recycle_buffer(bytes);
        if let Err(error) = result {
            let error = st.poison(&old.path, "write and fsync at segment rotation", error);
            st.wake_waiters(true);
            self.progress.notify_all();
            return Err(error);
        }
        st.written = target;
        st.synced = target;
        st.batch_started = None;
        st.wake_waiters(false);
        self.progress.notify_all();

        let segment = match create_segment(&self.dir, next_segment_id(old.id)) {
            Ok(segment) => segment,
            Err(StorageError::Io { path, source }) => return Err(st.poison(&path, "segment creation", source)),
            Err(other) => return Err(other),
        };
        tracing::debug!(old = %old.path.display(), new = %segment.path.display(), "commit log segment rotated");
        let end = st.end;
        if let Some(rotated) = st.segments.get_mut(&old.id) {
            rotated.len = end;
        }
        st.segments
            .insert(segment.id, SegmentState { path: segment.path.clone(), len: 0, dirty: FxHashMap::default() });
        st.active = Arc::new(segment);
        st.end = HEADER_LEN;
        // The old segment may hold only records of already flushed or forgotten CFs.
        delete_clean_segments(st)
    }

    /// Fsyncs the active segment up to what is written now (older segments were fsynced when
    /// they were rotated out).
    fn sync_now(&self) -> Result<()> {
        let mut st = self.state.lock();
        if let Some(reason) = &st.poisoned {
            return Err(StorageError::Poisoned(reason.clone()));
        }
        let target = st.written;
        if st.synced >= target {
            return Ok(());
        }
        let segment = Arc::clone(&st.active);
        let injected = st.injected_failure();
        let result = MutexGuard::unlocked(&mut st, || injected.and_then(|()| segment.file.sync_data()));
        match result {
            Ok(()) => {
                st.synced = st.synced.max(target);
                Ok(())
            }
            Err(error) => {
                let error = st.poison(&segment.path, "fsync", error);
                st.wake_waiters(true);
                self.progress.notify_all();
                Err(error)
            }
        }
    }
}

/// Periodic mode: fsync every `period` until shutdown. A failed fsync poisons the log and ends
/// the loop.
fn periodic_sync_loop(shared: &Shared, period: Duration) {
    let mut stop = shared.stop.lock();
    loop {
        let deadline = Instant::now() + period;
        while !*stop && Instant::now() < deadline {
            shared.stop_signal.wait_until(&mut stop, deadline);
        }
        if *stop {
            return;
        }
        if let Err(error) = MutexGuard::unlocked(&mut stop, || shared.sync_now()) {
            tracing::error!(%error, "periodic commit log sync failed; the sync loop stops");
            return;
        }
    }
}

fn write_and_sync(file: &File, bytes: &[u8], sync: bool) -> io::Result<()> {
    let mut writer = file;
    writer.write_all(bytes)?;
    if sync {
        file.sync_data()?;
    }
    Ok(())
}

/// Ids are milliseconds since the epoch at creation, bumped past `previous` so they always grow
/// (several segments per millisecond, or a clock that went back).
fn next_segment_id(previous: u64) -> u64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    now.max(previous + 1)
}

/// Creates segment `id` with its header, durably: the file and its directory entry are fsynced
/// before any record goes in.
fn create_segment(dir: &Path, id: u64) -> Result<ActiveSegment> {
    let path = dir.join(segment::file_name(FormatVersion::CURRENT, id));
    let io_err = |e| StorageError::io(&path, e);
    let mut file = OpenOptions::new().write(true).create_new(true).open(&path).map_err(io_err)?;
    file.write_all(&segment::encode_header(FormatVersion::CURRENT, id)).map_err(io_err)?;
    file.sync_all().map_err(io_err)?;
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| StorageError::io(dir, e))?;
    Ok(ActiveSegment { id, path, file })
}

/// Deletes every segment, other than the active one, in which no column family is dirty.
fn delete_clean_segments(st: &mut State) -> Result<()> {
    let active = st.active.id;
    let clean: Vec<u64> =
        st.segments.iter().filter(|(id, s)| **id != active && s.dirty.is_empty()).map(|(id, _)| *id).collect();
    for id in clean {
        let Some(segment) = st.segments.get(&id) else {
            continue;
        };
        match std::fs::remove_file(&segment.path) {
            Ok(()) => {
                tracing::debug!(file = %segment.path.display(), "commit log segment no longer needed; deleted")
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(StorageError::io(&segment.path, e)),
        }
        st.segments.remove(&id);
    }
    Ok(())
}
