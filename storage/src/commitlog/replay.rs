//! Replay of the segments left by an earlier run.
//!
//! Recovery policy (Cassandra's, made explicit):
//! - Segments are read in id order; every record's CRC is checked.
//! - A **torn tail** is tolerated: in the last segment, a record that is short or fails its CRC
//!   with nothing after it that verifies (only the rest of that record, zeros, garbage or an
//!   incomplete record) is a write cut short by a crash. Replay keeps everything before it and
//!   reports it in [`ReplayReport::truncated_at`]. A last segment shorter than its header (a
//!   crash while the segment was created) is treated the same way, at offset 0.
//! - Any other bad record is **damage**: followed by a record that verifies (found by trying
//!   every later offset, [`segment::find_next_record`]), or in a segment that is not the last (a
//!   segment is fsynced before the next one is created, so a crash cannot tear it). Dropping it
//!   and what follows would lose acknowledged writes, so replay fails with
//!   [`StorageError::DamagedCommitLog`] naming the file and offset, and the segment stays where
//!   it is. So does a bad magic, header CRC, or a header id that disagrees with the file name.
//!   An unknown format version is an error in every mode (it is not damage: a newer Sibyl wrote
//!   it).
//! - [`RecoveryMode::SkipDamaged`], the operator's explicit choice (Cassandra's
//!   `-Dcassandra.commitlog.ignorereplayerrors=true`; here the environment variable
//!   [`IGNORE_REPLAY_ERRORS_ENV`]), replays every record that verifies, skips from each bad
//!   record to the next one that verifies, and lists each damaged segment in
//!   [`ReplayReport::damaged`] so the engine keeps it aside ([`super::CommitLog::set_aside_segments`])
//!   instead of deleting it.
//!
//! Replay itself logs nothing: the engine replays the directory twice at start (the system
//! keyspace first) and logs the report once ([`ReplayReport::log`]).

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use super::segment::{self, FormatVersion, Next, Resync, SegmentReader};
use super::ReplayPosition;
use crate::error::{CorruptData, Result, StorageError};

/// Read buffer for replay; segments are read front to back once.
const REPLAY_READ_BUFFER: usize = 1 << 20;

/// The environment variable that makes replay skip damaged records (`true` or `1`):
/// [`RecoveryMode::from_env`].
pub const IGNORE_REPLAY_ERRORS_ENV: &str = "SIBYL_COMMITLOG_IGNORE_REPLAY_ERRORS";

/// Suffix given to a damaged segment kept aside after a replay that skipped its damage.
pub const SET_ASIDE_SUFFIX: &str = ".corrupt";

/// What replay does with damage (anything but a torn tail).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RecoveryMode {
    /// Refuse: replay fails naming the segment and offset (the default).
    #[default]
    Strict,
    /// Replay the records that verify, skip the damaged ones and report the segments, to be kept
    /// aside rather than deleted.
    SkipDamaged,
}

impl RecoveryMode {
    /// [`RecoveryMode::SkipDamaged`] if [`IGNORE_REPLAY_ERRORS_ENV`] is `true` or `1`, else
    /// strict (another value is ignored with a warning).
    pub fn from_env() -> RecoveryMode {
        RecoveryMode::from_env_value(std::env::var(IGNORE_REPLAY_ERRORS_ENV).ok().as_deref())
    }

    /// [`RecoveryMode::from_env`] for the variable's value (`None` when unset).
    pub fn from_env_value(value: Option<&str>) -> RecoveryMode {
        match value {
            Some(v) if v.eq_ignore_ascii_case("true") || v == "1" => RecoveryMode::SkipDamaged,
            None | Some("" | "0") => RecoveryMode::Strict,
            Some(v) if v.eq_ignore_ascii_case("false") => RecoveryMode::Strict,
            Some(v) => {
                tracing::warn!(
                    "{IGNORE_REPLAY_ERRORS_ENV}={v:?} is neither true nor false; damaged commit log segments stop the start"
                );
                RecoveryMode::Strict
            }
        }
    }
}

/// Why a bad record is damage rather than a torn tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterDamage {
    /// A record that verifies follows, at this offset.
    ValidRecordAt(u64),
    /// The segment is not the last one, so a crash cannot have torn it.
    NotLastSegment,
    /// The search for a valid record after it gave up ([`segment::RESYNC_BUDGET_BYTES`]), so the
    /// bytes after it cannot be shown to be a torn write.
    SearchGaveUp,
    /// The segment header itself is bad.
    BadHeader,
}

impl std::fmt::Display for AfterDamage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AfterDamage::ValidRecordAt(offset) => {
                write!(f, "records that verify follow it (the next at offset {offset}), so it is not a torn write")
            }
            AfterDamage::NotLastSegment => {
                write!(f, "the segment is not the last one, which a crash cannot tear")
            }
            AfterDamage::SearchGaveUp => write!(
                f,
                "the search for records after it gave up after checksumming {} MiB, so it cannot be shown to be a torn write",
                segment::RESYNC_BUDGET_BYTES >> 20
            ),
            AfterDamage::BadHeader => write!(f, "the segment header is damaged"),
        }
    }
}

/// A run of bytes replay skipped in [`RecoveryMode::SkipDamaged`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRange {
    /// Offset of the bad record (0 for a bad header).
    pub offset: u64,
    /// Where replay went on; `None` if nothing after it was replayed.
    pub resumed_at: Option<u64>,
    /// What was wrong at `offset`.
    pub detail: CorruptData,
}

/// A segment replayed in [`RecoveryMode::SkipDamaged`] despite damage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DamagedSegment {
    pub path: PathBuf,
    pub skipped: Vec<SkippedRange>,
}

/// What [`super::CommitLog::replay`] found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReplayReport {
    /// Every segment replayed whole, in id order; pass them to
    /// [`super::CommitLog::delete_segments`] once the replayed data is flushed. Damaged segments
    /// are not here but in `damaged`.
    pub segments: Vec<PathBuf>,
    /// Number of valid records handed to the callback.
    pub records: u64,
    /// Where replay stopped early at a torn tail: the last segment and the offset of its first bad
    /// record (0 if its header was incomplete).
    pub truncated_at: Option<(PathBuf, u64)>,
    /// Segments whose damage was skipped ([`RecoveryMode::SkipDamaged`] only); pass them to
    /// [`super::CommitLog::set_aside_segments`] once the replayed data is flushed.
    pub damaged: Vec<DamagedSegment>,
}

impl ReplayReport {
    /// Logs the torn tail and every skipped range, once each.
    pub fn log(&self) {
        if let Some((path, offset)) = &self.truncated_at {
            tracing::warn!(
                file = %path.display(),
                offset,
                "commit log ends with a write torn by a crash; replay kept every record before it"
            );
        }
        for segment in &self.damaged {
            for skipped in &segment.skipped {
                let resumed =
                    skipped.resumed_at.map_or("the end of the segment".to_string(), |o| format!("offset {o}"));
                tracing::error!(
                    file = %segment.path.display(),
                    offset = skipped.offset,
                    detail = %skipped.detail,
                    "{IGNORE_REPLAY_ERRORS_ENV} is set: skipped damaged commit log records from offset {} to {resumed}; \
                     writes in them are lost",
                    skipped.offset
                );
            }
        }
    }
}

/// See [`super::CommitLog::replay`].
pub fn replay_segments(
    dir: &Path,
    mode: RecoveryMode,
    mut f: impl FnMut(ReplayPosition, &[u8]) -> Result<()>,
) -> Result<ReplayReport> {
    let segments = segment::list_segments(dir).map_err(|e| StorageError::io(dir, e))?;
    let mut report = ReplayReport::default();
    let mut payload = Vec::new();
    let count = segments.len();
    for (index, (id, name_version, path)) in segments.into_iter().enumerate() {
        let is_last = index + 1 == count;
        FormatVersion::try_from(name_version)
            .map_err(|detail| StorageError::Corrupt { file: Some(path.clone()), detail })?;
        let mut damage = Damage { path: &path, mode, skipped: Vec::new() };

        let file = File::open(&path).map_err(|e| StorageError::io(&path, e))?;
        let len = file.metadata().map_err(|e| StorageError::io(&path, e))?.len();
        let input =
            BufReader::with_capacity(REPLAY_READ_BUFFER, file.try_clone().map_err(|e| StorageError::io(&path, e))?);
        let opened = SegmentReader::open(input, len).map_err(|e| StorageError::io(&path, e))?;
        let mut reader = match opened {
            Ok((reader, _version, header_id)) if header_id == id => Some(reader),
            Ok((_, _, header_id)) => {
                let detail = CorruptData::BadValue { what: "segment id in header", value: header_id };
                damage.found(0, detail, AfterDamage::BadHeader)?;
                None
            }
            Err(CorruptData::Truncated { .. }) if is_last => {
                report.truncated_at = Some((path.clone(), 0));
                None
            }
            Err(detail @ CorruptData::InvalidFormatVersion(_)) => {
                return Err(StorageError::Corrupt { file: Some(path.clone()), detail })
            }
            Err(detail) => {
                damage.found(0, detail, AfterDamage::BadHeader)?;
                None
            }
        };

        while let Some(segment_reader) = reader.as_mut() {
            match segment_reader.next_record(&mut payload).map_err(|e| StorageError::io(&path, e))? {
                Next::Record { offset } => {
                    f(ReplayPosition { segment_id: id, offset }, &payload).map_err(|e| e.in_file(&path))?;
                    report.records += 1;
                }
                Next::End => break,
                Next::Bad { offset, detail } => {
                    let resync = segment::find_next_record(&file, offset + 1, len, segment::RESYNC_BUDGET_BYTES)
                        .map_err(|e| StorageError::io(&path, e))?;
                    match (resync, is_last) {
                        (Resync::NotFound, true) => {
                            report.truncated_at = Some((path.clone(), offset));
                            break;
                        }
                        (Resync::Found(next), _) => {
                            damage.found(offset, detail, AfterDamage::ValidRecordAt(next))?;
                            segment_reader.resume_at(next).map_err(|e| StorageError::io(&path, e))?;
                        }
                        (Resync::NotFound, false) => {
                            damage.found(offset, detail, AfterDamage::NotLastSegment)?;
                            break;
                        }
                        (Resync::GaveUp, _) => {
                            damage.found(offset, detail, AfterDamage::SearchGaveUp)?;
                            break;
                        }
                    }
                }
            }
        }
        let skipped = damage.skipped;
        if skipped.is_empty() {
            report.segments.push(path);
        } else {
            report.damaged.push(DamagedSegment { path, skipped });
        }
    }
    Ok(report)
}

/// The damage found in one segment, and what the mode does with it.
struct Damage<'p> {
    path: &'p Path,
    mode: RecoveryMode,
    skipped: Vec<SkippedRange>,
}

impl Damage<'_> {
    /// Damage at `offset`: an error in strict mode, else a skipped range that ends where replay
    /// goes on.
    fn found(&mut self, offset: u64, detail: CorruptData, after: AfterDamage) -> Result<()> {
        match self.mode {
            RecoveryMode::Strict => {
                Err(StorageError::DamagedCommitLog { file: self.path.to_path_buf(), offset, detail, after })
            }
            RecoveryMode::SkipDamaged => {
                let resumed_at = match after {
                    AfterDamage::ValidRecordAt(next) => Some(next),
                    _ => None,
                };
                self.skipped.push(SkippedRange { offset, resumed_at, detail });
                Ok(())
            }
        }
    }
}
