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

use std::io::{self, Read};
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
