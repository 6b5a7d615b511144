//! The commit log: every mutation is appended here before it reaches a memtable, so that a crash
//! loses nothing that was acknowledged.
//!
//! Records are opaque bytes (the engine serializes row mutations; this module never looks inside).
//! They go to segment files `CommitLog-<version>-<id>.log` in one directory (layout in
//! [`segment`]); a new segment starts when the current one would pass
//! [`CommitLogConfig::segment_size`]. A record larger than a whole segment gets a segment of its
//! own rather than being refused (only records over 4 GiB, which the u32 length cannot describe,
//! are refused).
//!
//! Durability follows Cassandra's `CommitLogSync`:
//! - [`SyncMode::Periodic`]: `append` returns once the record is handed to the OS with one
//!   write(2), so it survives a crash of the process; a background thread fsyncs every `period`.
//! - [`SyncMode::Batch`]: `append` returns only after an fsync covering its record. The first
//!   appender of a batch waits `window` for others to join, then one write and one fsync cover
//!   all of them (group commit); appenders arriving during that fsync form the next batch.
//!
//! In both modes concurrent appenders share writes: appenders encode into one userspace buffer
//! under a mutex, and whoever finds no write in progress writes the whole buffer with one syscall
//! outside the lock, on behalf of everyone queued (leader/follower). A failed write or fsync
//! poisons the log: every later append returns [`StorageError::Poisoned`].
//!
//! A server thread need not wait for another thread's write: inside [`defer_acks`], a
//! periodic-mode append that finds a write in progress returns at once, and the caller awaits
//! the returned [`Written`] before acknowledging (see there).
//!
//! Segment removal follows Cassandra's dirty tracking: each append names the column families it
//! touches; [`CommitLog::discard_completed`] says a CF's memtable was flushed up to a position.
//! A segment is deleted once no CF is dirty in it and it is not the active segment.
//!
//! Startup order for the engine: [`CommitLog::replay_with`] the directory, apply the records to
//! memtables, [`CommitLog::cut_torn_tail`], [`CommitLog::open`] for writing, flush the
//! memtables, then [`CommitLog::delete_segments`] the replayed segments and
//! [`CommitLog::set_aside_segments`] the damaged ones (what counts as damage: `commitlog/replay.rs`).
//!
//! [`StorageError::Poisoned`]: crate::error::StorageError::Poisoned

mod replay;
pub mod segment;
mod writer;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_damage;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use replay::{
    AfterDamage, DamagedSegment, RecoveryMode, ReplayReport, SkippedRange, IGNORE_REPLAY_ERRORS_ENV, SET_ASIDE_SUFFIX,
};
pub use segment::FormatVersion;
pub use writer::{defer_acks, CommitLog, Written};

use crate::error::{Result, StorageError};

/// Cassandra's default segment size in recent versions (`commitlog_segment_size_in_mb: 32`).
pub const DEFAULT_SEGMENT_SIZE: u64 = 32 * 1024 * 1024;
/// Cassandra's default `CommitLogSyncPeriodInMS`.
pub const DEFAULT_SYNC_PERIOD: Duration = Duration::from_secs(10);

/// When an appended record is durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncMode {
    /// Acknowledge after the write to the OS; fsync in the background every `period`.
    Periodic { period: Duration },
    /// Acknowledge after an fsync; appenders arriving within `window` of a batch's first record
    /// share its fsync. `Duration::ZERO` syncs at once (still grouping appenders that arrive
    /// while a previous fsync runs).
    Batch { window: Duration },
}

impl Default for SyncMode {
    fn default() -> Self {
        SyncMode::Periodic { period: DEFAULT_SYNC_PERIOD }
    }
}

/// A place in the commit log: a segment and a byte offset in it. Positions grow with every
/// append, so they order records; the position of a record is the offset of its frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReplayPosition {
    pub segment_id: u64,
    pub offset: u64,
}

impl ReplayPosition {
    /// Before every record of every segment.
    pub const ZERO: ReplayPosition = ReplayPosition { segment_id: 0, offset: 0 };
}

/// How to open a commit log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitLogConfig {
    /// Directory holding the segments; created if missing.
    pub dir: PathBuf,
    /// A new segment starts when a record would take the current one past this size
    /// (default [`DEFAULT_SEGMENT_SIZE`]).
    pub segment_size: u64,
    /// Durability of `append` (default periodic, every [`DEFAULT_SYNC_PERIOD`]).
    pub sync: SyncMode,
}

impl CommitLogConfig {
    /// A config with the defaults for everything but the directory.
    pub fn new(dir: impl Into<PathBuf>) -> CommitLogConfig {
        CommitLogConfig { dir: dir.into(), segment_size: DEFAULT_SEGMENT_SIZE, sync: SyncMode::default() }
    }
}

impl CommitLog {
    /// Replays all existing segments in `dir` in id order, calling `f(position of the record,
    /// payload)` for each valid record. A torn tail of the last segment ends replay (see
    /// [`ReplayReport::truncated_at`]); any other damage is an error naming file and offset
    /// ([`StorageError::DamagedCommitLog`]). An error from `f` stops replay and is returned.
    pub fn replay(dir: &Path, f: impl FnMut(ReplayPosition, &[u8]) -> Result<()>) -> Result<ReplayReport> {
        replay::replay_segments(dir, RecoveryMode::Strict, f)
    }

    /// [`CommitLog::replay`] with the given policy for damage: [`RecoveryMode::SkipDamaged`]
    /// replays around it and lists the damaged segments in [`ReplayReport::damaged`].
    pub fn replay_with(
        dir: &Path,
        mode: RecoveryMode,
        f: impl FnMut(ReplayPosition, &[u8]) -> Result<()>,
    ) -> Result<ReplayReport> {
        replay::replay_segments(dir, mode, f)
    }

    /// Cuts the torn tail replay found (see [`ReplayReport::truncated_at`]) off its segment, so
    /// that the segment ends at a record boundary even once it is no longer the last one (a crash
    /// after [`CommitLog::open`] and before the replayed segments are deleted). A torn header
    /// (`offset` 0) is left alone: the segment holds no records either way.
    pub fn cut_torn_tail(path: &Path, offset: u64) -> Result<()> {
        if offset < segment::HEADER_LEN {
            return Ok(());
        }
        let file = std::fs::OpenOptions::new().write(true).open(path).map_err(|e| StorageError::io(path, e))?;
        file.set_len(offset).and_then(|()| file.sync_all()).map_err(|e| StorageError::io(path, e))
    }

    /// Keeps damaged segments aside once their replayed records are flushed: each is renamed with
    /// [`SET_ASIDE_SUFFIX`] (and a number, should that name be taken), so it is never replayed,
    /// deleted or reused again, and stays for the operator. Returns the new paths.
    pub fn set_aside_segments(damaged: &[DamagedSegment]) -> Result<Vec<PathBuf>> {
        let mut kept = Vec::new();
        for segment in damaged {
            let path = &segment.path;
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let target = (0u32..)
                .map(|n| match n {
                    0 => path.with_file_name(format!("{name}{SET_ASIDE_SUFFIX}")),
                    n => path.with_file_name(format!("{name}{SET_ASIDE_SUFFIX}.{n}")),
                })
                .find(|candidate| !candidate.exists())
                .unwrap_or_else(|| path.with_file_name(format!("{name}{SET_ASIDE_SUFFIX}")));
            std::fs::rename(path, &target).map_err(|e| StorageError::io(path, e))?;
            if let Some(dir) = path.parent() {
                std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| StorageError::io(dir, e))?;
            }
            tracing::warn!(file = %target.display(), "damaged commit log segment kept aside");
            kept.push(target);
        }
        Ok(kept)
    }

    /// Deletes replayed segments once their data is flushed. Missing files are not an error.
    pub fn delete_segments(paths: &[PathBuf]) -> Result<()> {
        for path in paths {
            match std::fs::remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(StorageError::io(path, e)),
            }
        }
        Ok(())
    }
}
