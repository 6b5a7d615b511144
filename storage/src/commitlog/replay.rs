//! Replay of the segments left by an earlier run.
//!
//! Recovery policy (Cassandra's, made explicit):
//! - Segments are read in id order; every record's CRC is checked.
//! - In the **last** segment, the first record that is short or fails its CRC ends replay: it is
//!   a write torn by a crash. It is logged with file and offset (`tracing::warn!`), reported in
//!   [`ReplayReport::truncated_at`], and everything before it is kept. A last segment shorter than
//!   its header (a crash while the segment was created) is treated the same way, at offset 0.
//! - In any **other** segment a bad record is an error naming file and offset: a segment is
//!   fsynced before the next one is created, so a crash cannot tear it; damage there is corruption
//!   with acknowledged data after it, and silently skipping it would lose writes.
//! - A bad magic, header CRC, unknown format version, or a header id that disagrees with the file
//!   name is an error in every segment.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use super::segment::{self, FormatVersion, Next, SegmentReader};
use super::ReplayPosition;
use crate::error::{CorruptData, Result, StorageError};

/// Read buffer for replay; segments are read front to back once.
const REPLAY_READ_BUFFER: usize = 1 << 20;

/// What [`super::CommitLog::replay`] found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReplayReport {
    /// Every segment replayed, in id order; pass them to [`super::CommitLog::delete_segments`]
    /// once the replayed data is flushed.
    pub segments: Vec<PathBuf>,
    /// Number of valid records handed to the callback.
    pub records: u64,
    /// Where replay stopped early at a torn tail: the last segment and the offset of its first bad
    /// record (0 if its header was incomplete).
    pub truncated_at: Option<(PathBuf, u64)>,
}

/// See [`super::CommitLog::replay`].
pub fn replay_segments(dir: &Path, mut f: impl FnMut(ReplayPosition, &[u8]) -> Result<()>) -> Result<ReplayReport> {
    let segments = segment::list_segments(dir).map_err(|e| StorageError::io(dir, e))?;
    let mut report = ReplayReport::default();
    let mut payload = Vec::new();
    let count = segments.len();
    for (index, (id, name_version, path)) in segments.into_iter().enumerate() {
        let is_last = index + 1 == count;
        let corrupt = |detail: CorruptData| StorageError::Corrupt { file: Some(path.clone()), detail };
        FormatVersion::try_from(name_version).map_err(corrupt)?;

        let file = File::open(&path).map_err(|e| StorageError::io(&path, e))?;
        let len = file.metadata().map_err(|e| StorageError::io(&path, e))?.len();
        let input = BufReader::with_capacity(REPLAY_READ_BUFFER, file);
        let opened = SegmentReader::open(input, len).map_err(|e| StorageError::io(&path, e))?;
        report.segments.push(path.clone());
        let mut reader = match opened {
            Ok((reader, _version, header_id)) => {
                if header_id != id {
                    return Err(corrupt(CorruptData::BadValue { what: "segment id in header", value: header_id }));
                }
                reader
            }
            Err(CorruptData::Truncated { .. }) if is_last => {
                tracing::warn!(file = %path.display(), offset = 0, "commit log segment header is incomplete (torn by a crash); it holds no records");
                report.truncated_at = Some((path, 0));
                break;
            }
            Err(detail) => return Err(corrupt(detail)),
        };

        loop {
            match reader.next_record(&mut payload).map_err(|e| StorageError::io(&path, e))? {
                Next::Record { offset } => {
                    f(ReplayPosition { segment_id: id, offset }, &payload)?;
                    report.records += 1;
                }
                Next::End => break,
                Next::Bad { offset, detail } if is_last => {
                    tracing::warn!(file = %path.display(), offset, %detail, "commit log ends with a torn record; replay keeps everything before it");
                    report.truncated_at = Some((path.clone(), offset));
                    break;
                }
                Next::Bad { detail, .. } => return Err(corrupt(detail)),
            }
        }
    }
    Ok(report)
}
