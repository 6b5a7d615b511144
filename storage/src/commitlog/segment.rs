//! The commit-log segment format: file names, the segment header and the record frame.
//!
//! All integers are big-endian.
//!
//! ```text
//! segment file  CommitLog-<version>-<id>.log
//! ┌──────────────────────────── header (21 bytes) ─────────────────────────────┐
//! │ magic "SIBYLCLG" (8) │ version u8 (1) │ segment id u64 (8) │ crc32 u32 (4) │   crc over bytes 0..17
//! └────────────────────────────────────────────────────────────────────────────┘
//! ┌──────────── record ────────────┬───────────────┐
//! │ length u32 (4) │ crc32 u32 (4) │ payload (len) │   crc over the 4 length bytes, then the payload
//! └────────────────────────────────┴───────────────┘
//! … records follow each other up to the end of the file; there is no trailer and no padding.
//! ```
//!
//! The record CRC covers the length so that a torn or zeroed length is caught: the CRC of four
//! zero bytes is not zero, so a zero-filled tail never passes for an empty record.
//!
//! Nothing marks where records start, so after a bad record [`find_next_record`] looks for the
//! next one by trying every later offset: a frame whose length fits in the file and whose CRC
//! matches. Random bytes pass that test with odds of about 2^-32 per offset.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::error::CorruptData;

/// First bytes of every segment.
pub const MAGIC: [u8; 8] = *b"SIBYLCLG";
/// Bytes before the first record of a segment.
pub const HEADER_LEN: u64 = 21;
/// Bytes before a record's payload (length + CRC).
pub const RECORD_HEADER_LEN: u64 = 8;

const FILE_PREFIX: &str = "CommitLog-";
const FILE_SUFFIX: &str = ".log";

/// Version of the segment format, written in the header and in the file name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum FormatVersion {
    V1 = 1,
    /// As V1, and records (record version 2) may hold expiring cells whose expiry lies past 2038
    /// and counter cells (cell flags 3 to 5).
    V2 = 2,
}

impl FormatVersion {
    /// The version new segments are written with.
    pub const CURRENT: FormatVersion = FormatVersion::V2;
}

impl TryFrom<u8> for FormatVersion {
    type Error = CorruptData;

    fn try_from(value: u8) -> Result<Self, CorruptData> {
        match value {
            1 => Ok(FormatVersion::V1),
            2 => Ok(FormatVersion::V2),
            other => Err(CorruptData::InvalidFormatVersion(other)),
        }
    }
}

/// The name of segment `id` written in format `version`.
pub fn file_name(version: FormatVersion, id: u64) -> String {
    format!("{FILE_PREFIX}{}-{id}{FILE_SUFFIX}", version as u8)
}

/// What a directory entry's name says about it.
#[derive(Debug, PartialEq, Eq)]
pub enum ParsedName {
    /// Not a commit-log segment (another file in the directory); ignored.
    Other,
    /// A segment: its version number as written in the name (not yet checked) and its id.
    Segment { version: u8, id: u64 },
}

/// Parses `CommitLog-<version>-<id>.log`.
pub fn parse_file_name(name: &str) -> ParsedName {
    let Some(middle) = name.strip_prefix(FILE_PREFIX).and_then(|rest| rest.strip_suffix(FILE_SUFFIX)) else {
        return ParsedName::Other;
    };
    let Some((version, id)) = middle.split_once('-') else {
        return ParsedName::Other;
    };
    match (version.parse::<u8>(), id.parse::<u64>()) {
        (Ok(version), Ok(id)) => ParsedName::Segment { version, id },
        _ => ParsedName::Other,
    }
}

/// The segments in `dir` as (id, version byte from the name, path), sorted by id.
pub fn list_segments(dir: &Path) -> io::Result<Vec<(u64, u8, PathBuf)>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let ParsedName::Segment { version, id } = parse_file_name(name) {
            found.push((id, version, entry.path()));
        }
    }
    found.sort_by_key(|(id, _, _)| *id);
    Ok(found)
}

/// The 21 header bytes of segment `id`.
pub fn encode_header(version: FormatVersion, id: u64) -> [u8; HEADER_LEN as usize] {
    let mut header = [0u8; HEADER_LEN as usize];
    header[0..8].copy_from_slice(&MAGIC);
    header[8] = version as u8;
    header[9..17].copy_from_slice(&id.to_be_bytes());
    let crc = crc32fast::hash(&header[0..17]);
    header[17..21].copy_from_slice(&crc.to_be_bytes());
    header
}

/// Checks a segment header and returns its version and segment id.
pub fn decode_header(header: &[u8; HEADER_LEN as usize]) -> Result<(FormatVersion, u64), CorruptData> {
    let (magic, rest) = header.split_at(8);
    if magic != MAGIC {
        return Err(CorruptData::BadMagic);
    }
    let (body, crc) = header.split_at(17);
    let expected = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
    let got = crc32fast::hash(body);
    if expected != got {
        return Err(CorruptData::ChecksumMismatch { offset: 0, expected, got });
    }
    let version = FormatVersion::try_from(rest[0])?;
    let mut id = [0u8; 8];
    id.copy_from_slice(&rest[1..9]);
    Ok((version, u64::from_be_bytes(id)))
}

/// CRC of a record: its big-endian length, then its payload.
pub fn record_crc(payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&(payload.len() as u32).to_be_bytes());
    hasher.update(payload);
    hasher.finalize()
}

/// Appends the frame of `payload` to `out`. The caller has checked that the length fits in a u32.
pub fn encode_record(out: &mut Vec<u8>, payload: &[u8]) {
    debug_assert!(u32::try_from(payload.len()).is_ok());
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(&record_crc(payload).to_be_bytes());
    out.extend_from_slice(payload);
}

/// Reads the records of one segment in order, checking each CRC.
pub struct SegmentReader<R> {
    input: R,
    /// Offset of the next record.
    offset: u64,
    /// Length of the file; records may not claim more bytes than remain.
    len: u64,
}

/// One step of [`SegmentReader::next_record`].
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// A valid record starting at `offset`; its payload is in the caller's buffer.
    Record { offset: u64 },
    /// Clean end of the segment, exactly at a record boundary.
    End,
    /// The record at `offset` is torn or corrupt; nothing after it can be trusted.
    Bad { offset: u64, detail: CorruptData },
}

impl<R: Read> SegmentReader<R> {
    /// Reads and checks the header of a segment of `len` bytes. A segment shorter than a header
    /// gives `Truncated` at offset 0.
    pub fn open(mut input: R, len: u64) -> io::Result<Result<(Self, FormatVersion, u64), CorruptData>> {
        if len < HEADER_LEN {
            return Ok(Err(CorruptData::Truncated { at: 0, wanted: HEADER_LEN as usize }));
        }
        let mut header = [0u8; HEADER_LEN as usize];
        input.read_exact(&mut header)?;
        Ok(decode_header(&header).map(|(version, id)| (SegmentReader { input, offset: HEADER_LEN, len }, version, id)))
    }

    /// Reads the next record into `payload` (replacing its contents).
    pub fn next_record(&mut self, payload: &mut Vec<u8>) -> io::Result<Next> {
        let offset = self.offset;
        let remaining = self.len - offset;
        if remaining == 0 {
            return Ok(Next::End);
        }
        if remaining < RECORD_HEADER_LEN {
            let detail = CorruptData::Truncated { at: offset as usize, wanted: RECORD_HEADER_LEN as usize };
            return Ok(Next::Bad { offset, detail });
        }
        let mut frame = [0u8; RECORD_HEADER_LEN as usize];
        self.input.read_exact(&mut frame)?;
        let length = u32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]);
        let expected = u32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
        // A torn or garbled length may point past the end of the file; never allocate for it.
        if u64::from(length) > remaining - RECORD_HEADER_LEN {
            let detail = CorruptData::Truncated {
                at: offset as usize,
                wanted: (RECORD_HEADER_LEN + u64::from(length)) as usize,
            };
            return Ok(Next::Bad { offset, detail });
        }
        payload.clear();
        payload.resize(length as usize, 0);
        self.input.read_exact(payload)?;
        let got = record_crc(payload);
        if got != expected {
            return Ok(Next::Bad { offset, detail: CorruptData::ChecksumMismatch { offset, expected, got } });
        }
        self.offset = offset + RECORD_HEADER_LEN + u64::from(length);
        Ok(Next::Record { offset })
    }
}

impl<R: Read + Seek> SegmentReader<R> {
    /// Goes on reading at `offset`, a record boundary [`find_next_record`] found.
    pub fn resume_at(&mut self, offset: u64) -> io::Result<()> {
        debug_assert!((HEADER_LEN..=self.len).contains(&offset));
        self.input.seek(SeekFrom::Start(offset))?;
        self.offset = offset;
        Ok(())
    }
}

/// Most bytes [`find_next_record`] checksums before it gives up. Each candidate offset costs its
/// claimed length, so bytes that happen to read as many long plausible lengths (a large blob in
/// a record) could otherwise cost time quadratic in the segment's size; real damage is followed
/// by a valid record within one record's length, which costs far less than this.
pub const RESYNC_BUDGET_BYTES: u64 = 1 << 30;

/// Bytes read at a time while looking for a record.
const RESYNC_WINDOW: usize = 1 << 20;

/// What [`find_next_record`] found after a bad record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resync {
    /// A record that verifies starts at this offset.
    Found(u64),
    /// No later offset holds a record that verifies.
    NotFound,
    /// The search checksummed [`RESYNC_BUDGET_BYTES`] without an answer.
    GaveUp,
}

/// Looks for the first offset in `from..len` of the segment `file` (of `len` bytes) where a
/// whole record verifies, checksumming at most `budget` bytes.
pub fn find_next_record(file: &File, from: u64, len: u64, budget: u64) -> io::Result<Resync> {
    let mut window = Vec::new();
    let mut window_start = from;
    let mut spent = 0u64;
    let mut offset = from;
    while offset + RECORD_HEADER_LEN <= len {
        if offset + RECORD_HEADER_LEN > window_start + window.len() as u64 {
            window_start = offset;
            let wanted = (len - offset).min(RESYNC_WINDOW as u64) as usize;
            window.resize(wanted, 0);
            file.read_exact_at(&mut window, offset)?;
        }
        let at = (offset - window_start) as usize;
        let frame = window.get(at..at + RECORD_HEADER_LEN as usize).unwrap_or_default();
        let [l0, l1, l2, l3, c0, c1, c2, c3] = frame else {
            return Err(io::Error::other("commit log resync window shorter than a record header"));
        };
        let length = u64::from(u32::from_be_bytes([*l0, *l1, *l2, *l3]));
        let expected = u32::from_be_bytes([*c0, *c1, *c2, *c3]);
        if length <= len - offset - RECORD_HEADER_LEN {
            spent += length + 4;
            if spent > budget {
                return Ok(Resync::GaveUp);
            }
            let payload_start = offset + RECORD_HEADER_LEN;
            let mut hasher = crc32fast::Hasher::new();
            hasher.update(&[*l0, *l1, *l2, *l3]);
            let in_window = (payload_start - window_start) as usize..(payload_start - window_start + length) as usize;
            match window.get(in_window) {
                Some(payload) => hasher.update(payload),
                None => hash_file_range(file, payload_start, length, &mut hasher)?,
            }
            if hasher.finalize() == expected {
                return Ok(Resync::Found(offset));
            }
        }
        offset += 1;
    }
    Ok(Resync::NotFound)
}

/// Feeds `length` bytes of `file` from `start` to `hasher`.
fn hash_file_range(file: &File, start: u64, length: u64, hasher: &mut crc32fast::Hasher) -> io::Result<()> {
    let mut chunk = vec![0u8; (length as usize).min(RESYNC_WINDOW)];
    let mut done = 0u64;
    while done < length {
        let n = ((length - done) as usize).min(chunk.len());
        let part = chunk.get_mut(..n).unwrap_or_default();
        file.read_exact_at(part, start + done)?;
        hasher.update(part);
        done += n as u64;
    }
    Ok(())
}
