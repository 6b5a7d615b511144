//! Byte layouts of the SSTable components, and the codecs of the small ones.
//!
//! ```text
//! Byte order: big-endian for every integer (the bloom filter's hash reads its input as
//! little-endian words internally; that is part of the hash function, not of the file layout).
//! short := len:u16 bytes[len]                       CRC32 = crc32fast (IEEE)
//!
//! Every component starts with magic:[u8;4] version:u8 (FormatVersion).
//!
//! Data       magic "SBDA" version chunk_size:u32 header_crc:u32      (crc of the 9 bytes before)
//!            chunk*  := payload crc:u32                               (crc of payload)
//!            payload := chunk_size bytes; the last chunk may be shorter, never empty.
//!            The payloads, concatenated, are the logical stream of partitions:
//!            partition := key:short token:short row
//!            row       := deletion rt_count:u32 rt* cell_count:u32 cell*  (codec of crate::data)
//!            Chunk i starts at file offset 13 + i * (chunk_size + 4).
//!
//! Index      magic "SBIX" version header_crc:u32
//!            block*  := entry_count:u32 entry* entry_start:u32* crc:u32
//!                       (entry_start: one per entry, from the first entry, for binary
//!                        search; crc of everything before it in the block)
//!            entry   := key:short token:short offset:u64 size:u64 colindex_len:u32 colblock*
//!                       (offset and size of the partition in the logical data stream;
//!                        colindex_len = bytes of colblock*, 0 for small partitions)
//!            colblock := first_name:short last_name:short offset:u64 size:u64
//!                       (a run of whole cells; offset from the partition's start)
//!
//! Summary    magic "SBSM" version interval:u32 count:u32 sentry* crc:u32  (crc of all before)
//!            sentry  := key:short token:short block_offset:u64 block_size:u64
//!                       (one per index block: its first key, where it is, how long with crc)
//!
//! Filter     magic "SBFL" version hash_count:u32 bit_count:u64 word:u64* crc:u32
//!            (bit i of the filter is bit i % 64 of word i / 64; crc of all before)
//!
//! Statistics magic "SBST" version key_count:u64 cell_count:u64 tombstone_count:u64
//!            data_size:u64 index_size:u64 first_key last_key min_timestamp:i64
//!            max_timestamp:i64 max_local_deletion_time:i32 replay_segment:u64
//!            replay_offset:u64 level:u32 ancestor_count:u32 ancestor:u64* crc:u32
//!            (key := key:short token:short; crc of all before)
//! ```

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::data::Reader;
use crate::dht::{DecoratedKey, Token};
use crate::error::{CorruptData, Result, StorageError};

use super::corrupt;

pub const DATA_MAGIC: [u8; 4] = *b"SBDA";
pub const INDEX_MAGIC: [u8; 4] = *b"SBIX";
pub const SUMMARY_MAGIC: [u8; 4] = *b"SBSM";
pub const FILTER_MAGIC: [u8; 4] = *b"SBFL";
pub const STATISTICS_MAGIC: [u8; 4] = *b"SBST";

/// Data header: magic, version, chunk size, crc.
pub const DATA_HEADER_LEN: u64 = 13;
/// Index header: magic, version, crc.
pub const INDEX_HEADER_LEN: u64 = 9;
/// Bytes after each data chunk and each index block.
pub const CRC_LEN: u64 = 4;

/// On-disk format versions. The file name carries it as a letter (`a` for 1, `b` for 2, ...),
/// every component's header as a byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum FormatVersion {
    /// The first format: uncompressed CRC'd chunks, column index in the Index component.
    A = 1,
    /// As `A`, and a cell may be an expiring cell whose expiry lies past 2038 (64-bit, cell flag
    /// 3) or a counter (flags 4 and 5), which a build knowing only `A` would misread as
    /// corruption. Format `a` files never hold one, so both read with the same code.
    B = 2,
}

impl FormatVersion {
    pub const CURRENT: FormatVersion = FormatVersion::B;

    /// The letter of this version in file names.
    pub fn tag(self) -> char {
        (b'a' + (self as u8) - 1) as char
    }

    /// `None` when `tag` is not a version letter at all; an error when it is one this build does
    /// not know (a newer format: refuse rather than misread).
    pub(crate) fn from_tag(tag: &str) -> Option<Result<FormatVersion>> {
        let &[letter] = tag.as_bytes() else { return None };
        if !letter.is_ascii_lowercase() {
            return None;
        }
        let byte = letter - b'a' + 1;
        Some(FormatVersion::try_from(byte).map_err(StorageError::from))
    }
}

impl TryFrom<u8> for FormatVersion {
    type Error = CorruptData;

    fn try_from(v: u8) -> Result<Self, CorruptData> {
        match v {
            1 => Ok(FormatVersion::A),
            2 => Ok(FormatVersion::B),
            other => Err(CorruptData::InvalidFormatVersion(other)),
        }
    }
}

/// The commit log position up to which an SSTable holds every write (for replay on restart).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ReplayPosition {
    pub segment_id: u64,
    pub offset: u64,
}

impl From<(u64, u64)> for ReplayPosition {
    fn from((segment_id, offset): (u64, u64)) -> Self {
        ReplayPosition { segment_id, offset }
    }
}

/// What the `Statistics` component records about an SSTable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// Partitions.
    pub key_count: u64,
    /// Cells, tombstones included.
    pub cell_count: u64,
    /// Cell tombstones + range tombstones + row deletions.
    pub tombstone_count: u64,
    /// Bytes of the logical (uncompressed, unchecksummed) partition stream.
    pub data_size: u64,
    /// Bytes of the Index component.
    pub index_size: u64,
    pub first_key: DecoratedKey,
    pub last_key: DecoratedKey,
    /// Over cells, row deletions and range tombstones (`i64::MAX` if there are none).
    pub min_timestamp: i64,
    /// Over cells, row deletions and range tombstones (`i64::MIN` if there are none).
    pub max_timestamp: i64,
    /// The latest time (node seconds) at which something here is or becomes a tombstone; a
    /// live cell counts as `i32::MAX`. When it is before gc_before, everything here is purgeable.
    pub max_local_deletion_time: i32,
    pub replay_position: ReplayPosition,
    /// Compaction level (0 for memtable flushes).
    pub level: u32,
    /// Generations this SSTable was compacted from.
    pub ancestors: Vec<u64>,
}

// ---------------------------------------------------------------------------------------------
// Small helpers shared by the codecs.

pub fn put_short(out: &mut Vec<u8>, bytes: &[u8]) {
    // Callers check lengths before encoding (see SsTableWriter::append).
    out.extend_from_slice(&(bytes.len().min(u16::MAX as usize) as u16).to_be_bytes());
    out.extend_from_slice(bytes);
}

pub fn put_key(out: &mut Vec<u8>, key: &DecoratedKey) {
    put_short(out, &key.key);
    put_short(out, key.token.as_bytes());
}

pub fn get_key(r: &mut Reader<'_>) -> Result<DecoratedKey, CorruptData> {
    let key = r.short_bytes()?.to_vec();
    let token = Token::from_bytes(r.short_bytes()?);
    Ok(DecoratedKey::new(token, key))
}

/// Reads exactly `buf.len()` bytes at `offset`; a file too short is corruption, not I/O trouble.
/// Maps `file` (opened read-only from `path`) into memory, read-only.
pub fn map_file(file: &File, path: &Path) -> Result<memmap2::Mmap> {
    // SAFETY: the mapping is only ever read, and SSTable components are immutable once written:
    // the engine never writes, truncates or reuses a component's file after it is complete (a
    // deleted one stays mapped until its last reader is dropped). Another program shortening
    // the file under a running node would make a read of the lost pages a SIGBUS, as with
    // Cassandra's mmap mode (see `DiskAccess`).
    unsafe { memmap2::Mmap::map(file) }.map_err(|e| StorageError::io(path, e))
}

pub fn read_exact_at(file: &File, path: &Path, buf: &mut [u8], offset: u64) -> Result<()> {
    file.read_exact_at(buf, offset).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            corrupt(path, CorruptData::Truncated { at: offset as usize, wanted: buf.len() })
        } else {
            StorageError::io(path, e)
        }
    })
}

/// Checks magic bytes and version at the start of `bytes` (version before anything else, so an
/// unknown version is reported as such and not as a checksum error).
pub fn check_header(bytes: &[u8], magic: [u8; 4], expected: FormatVersion) -> Result<(), CorruptData> {
    let mut r = Reader::new(bytes);
    if r.bytes(4)? != magic {
        return Err(CorruptData::BadMagic);
    }
    let version = FormatVersion::try_from(r.u8()?)?;
    if version != expected {
        return Err(CorruptData::BadValue {
            what: "format version differs from file name",
            value: version as u8 as u64,
        });
    }
    Ok(())
}

pub fn header(magic: [u8; 4], version: FormatVersion) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&magic);
    out.push(version as u8);
    out
}

/// Appends the CRC32 of everything in `out`.
pub fn seal(out: &mut Vec<u8>) {
    let crc = crc32fast::hash(out);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// Reads a whole-file-checksummed component; returns the bytes after magic and version, up to
/// (not including) the trailing CRC.
pub fn read_sealed(path: &Path, magic: [u8; 4], version: FormatVersion) -> Result<Vec<u8>> {
    let mut bytes = std::fs::read(path).map_err(|e| StorageError::io(path, e))?;
    check_header(&bytes, magic, version).map_err(|e| corrupt(path, e))?;
    let body_end = bytes.len().saturating_sub(CRC_LEN as usize);
    if body_end < 5 {
        return Err(corrupt(path, CorruptData::Truncated { at: bytes.len(), wanted: 5 + CRC_LEN as usize }));
    }
    let (body, crc) = bytes.split_at(body_end);
    let expected = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
    let got = crc32fast::hash(body);
    if expected != got {
        return Err(corrupt(path, CorruptData::ChecksumMismatch { offset: body_end as u64, expected, got }));
    }
    bytes.truncate(body_end);
    bytes.drain(..5);
    Ok(bytes)
}

/// Writes `bytes` to a new file at `path` and fsyncs it.
pub fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = File::options().write(true).create_new(true).open(path).map_err(|e| StorageError::io(path, e))?;
    f.write_all(bytes).map_err(|e| StorageError::io(path, e))?;
    f.sync_all().map_err(|e| StorageError::io(path, e))
}

/// Fails with `Truncated` unless `r` is fully consumed (trailing garbage means a bad length).
pub fn expect_end(r: &Reader<'_>) -> Result<(), CorruptData> {
    if r.is_empty() {
        Ok(())
    } else {
        Err(CorruptData::BadValue { what: "trailing bytes", value: r.remaining() as u64 })
    }
}

// ---------------------------------------------------------------------------------------------
// Statistics.

pub fn encode_metadata(m: &Metadata, version: FormatVersion) -> Vec<u8> {
    let mut out = header(STATISTICS_MAGIC, version);
    for v in [m.key_count, m.cell_count, m.tombstone_count, m.data_size, m.index_size] {
        out.extend_from_slice(&v.to_be_bytes());
    }
    put_key(&mut out, &m.first_key);
    put_key(&mut out, &m.last_key);
    out.extend_from_slice(&m.min_timestamp.to_be_bytes());
    out.extend_from_slice(&m.max_timestamp.to_be_bytes());
    out.extend_from_slice(&m.max_local_deletion_time.to_be_bytes());
    out.extend_from_slice(&m.replay_position.segment_id.to_be_bytes());
    out.extend_from_slice(&m.replay_position.offset.to_be_bytes());
    out.extend_from_slice(&m.level.to_be_bytes());
    out.extend_from_slice(&(m.ancestors.len() as u32).to_be_bytes());
    for a in &m.ancestors {
        out.extend_from_slice(&a.to_be_bytes());
    }
    seal(&mut out);
    out
}

fn decode_metadata(body: &[u8]) -> Result<Metadata, CorruptData> {
    let mut r = Reader::new(body);
    let key_count = r.u64()?;
    let cell_count = r.u64()?;
    let tombstone_count = r.u64()?;
    let data_size = r.u64()?;
    let index_size = r.u64()?;
    let first_key = get_key(&mut r)?;
    let last_key = get_key(&mut r)?;
    let min_timestamp = r.i64()?;
    let max_timestamp = r.i64()?;
    let max_local_deletion_time = r.i32()?;
    let replay_position = ReplayPosition { segment_id: r.u64()?, offset: r.u64()? };
    let level = r.u32()?;
    let n = r.u32()? as usize;
    let mut ancestors = Vec::with_capacity(n.min(r.remaining() / 8));
    for _ in 0..n {
        ancestors.push(r.u64()?);
    }
    expect_end(&r)?;
    Ok(Metadata {
        key_count,
        cell_count,
        tombstone_count,
        data_size,
        index_size,
        first_key,
        last_key,
        min_timestamp,
        max_timestamp,
        max_local_deletion_time,
        replay_position,
        level,
        ancestors,
    })
}

/// Reads and verifies a Statistics component. The version comes from the file itself, checked
/// against the file name.
pub fn read_metadata(path: &Path) -> Result<Metadata> {
    let version = version_from_path(path)?;
    let body = read_sealed(path, STATISTICS_MAGIC, version)?;
    decode_metadata(&body).map_err(|e| corrupt(path, e))
}

fn version_from_path(path: &Path) -> Result<FormatVersion> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let dir = path.parent().unwrap_or(Path::new("."));
    match super::Descriptor::parse(dir, name)? {
        Some(p) => Ok(p.desc.version),
        None => Err(corrupt(path, CorruptData::BadValue { what: "SSTable file name", value: 0 })),
    }
}

// ---------------------------------------------------------------------------------------------
// Summary.

/// One summary entry: the first key of an index block and where the block is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryEntry {
    pub key: DecoratedKey,
    pub block_offset: u64,
    /// Bytes of the block, its CRC included.
    pub block_size: u64,
}

pub fn encode_summary(interval: u32, entries: &[SummaryEntry], version: FormatVersion) -> Vec<u8> {
    let mut out = header(SUMMARY_MAGIC, version);
    out.extend_from_slice(&interval.to_be_bytes());
    out.extend_from_slice(&(entries.len() as u32).to_be_bytes());
    for e in entries {
        put_key(&mut out, &e.key);
        out.extend_from_slice(&e.block_offset.to_be_bytes());
        out.extend_from_slice(&e.block_size.to_be_bytes());
    }
    seal(&mut out);
    out
}

pub fn decode_summary(body: &[u8]) -> Result<(u32, Vec<SummaryEntry>), CorruptData> {
    let mut r = Reader::new(body);
    let interval = r.u32()?;
    let n = r.u32()? as usize;
    let mut entries = Vec::with_capacity(n.min(r.remaining() / 20));
    for _ in 0..n {
        let key = get_key(&mut r)?;
        entries.push(SummaryEntry { key, block_offset: r.u64()?, block_size: r.u64()? });
    }
    expect_end(&r)?;
    Ok((interval, entries))
}

// ---------------------------------------------------------------------------------------------
// Index entries.

/// One column index block: a run of whole cells of a large partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnBlock {
    pub first_name: Vec<u8>,
    pub last_name: Vec<u8>,
    /// From the start of the partition.
    pub offset: u64,
    pub size: u64,
}

pub fn encode_index_entry(key: &DecoratedKey, offset: u64, size: u64, columns: &[ColumnBlock], out: &mut Vec<u8>) {
    put_key(out, key);
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&size.to_be_bytes());
    let len_at = out.len();
    out.extend_from_slice(&0u32.to_be_bytes());
    for b in columns {
        put_short(out, &b.first_name);
        put_short(out, &b.last_name);
        out.extend_from_slice(&b.offset.to_be_bytes());
        out.extend_from_slice(&b.size.to_be_bytes());
    }
    let len = (out.len() - len_at - 4) as u32;
    out[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
}

/// An index entry borrowed from a verified index block.
pub struct IndexEntryRef<'a> {
    pub key: &'a [u8],
    pub token: &'a [u8],
    pub offset: u64,
    pub size: u64,
    /// Encoded column blocks (empty for small partitions); see [`decode_column_blocks`].
    pub columns: &'a [u8],
}

impl IndexEntryRef<'_> {
    pub fn decorated_key(&self) -> DecoratedKey {
        DecoratedKey::new(Token::from_bytes(self.token), self.key.to_vec())
    }

    /// Orders this entry's key against `key` as `DecoratedKey` does, without allocating.
    pub fn cmp_key(&self, key: &DecoratedKey) -> std::cmp::Ordering {
        self.token.cmp(key.token.as_bytes()).then_with(|| self.key.cmp(&key.key))
    }
}

pub fn decode_index_entry<'a>(r: &mut Reader<'a>) -> Result<IndexEntryRef<'a>, CorruptData> {
    let key = r.short_bytes()?;
    let token = r.short_bytes()?;
    let offset = r.u64()?;
    let size = r.u64()?;
    let columns = r.long_bytes()?;
    Ok(IndexEntryRef { key, token, offset, size, columns })
}

pub fn decode_column_blocks(bytes: &[u8]) -> Result<Vec<ColumnBlock>, CorruptData> {
    let mut r = Reader::new(bytes);
    let mut blocks = Vec::new();
    while !r.is_empty() {
        let first_name = r.short_bytes()?.to_vec();
        let last_name = r.short_bytes()?.to_vec();
        blocks.push(ColumnBlock { first_name, last_name, offset: r.u64()?, size: r.u64()? });
    }
    Ok(blocks)
}

/// A verified index block: its entries and where each starts, for binary search.
pub struct IndexBlock<'a> {
    pub count: u32,
    entries: &'a [u8],
    offsets: &'a [u8],
}

impl<'a> IndexBlock<'a> {
    /// Splits a block whose CRC was checked (and removed) into entries and offsets.
    pub fn parse(body: &'a [u8]) -> Result<IndexBlock<'a>, CorruptData> {
        let mut r = Reader::new(body);
        let count = r.u32()?;
        let offsets_len = count as usize * 4;
        let Some(entries_len) = r.remaining().checked_sub(offsets_len) else {
            return Err(CorruptData::Truncated { at: 4, wanted: offsets_len });
        };
        let entries = r.bytes(entries_len)?;
        let offsets = r.bytes(offsets_len)?;
        Ok(IndexBlock { count, entries, offsets })
    }

    /// Where entry `i` starts among the entries.
    pub fn entry_offset(&self, i: u32) -> Result<usize, CorruptData> {
        let at = i as usize * 4;
        let mut r = Reader::new(self.offsets.get(at..).unwrap_or_default());
        Ok(r.u32()? as usize)
    }

    pub fn entry(&self, i: u32) -> Result<IndexEntryRef<'a>, CorruptData> {
        let at = self.entry_offset(i)?;
        let Some(bytes) = self.entries.get(at..) else {
            return Err(CorruptData::BadValue { what: "index entry offset", value: at as u64 });
        };
        decode_index_entry(&mut Reader::new(bytes))
    }

    /// The entry of `key`, by binary search.
    pub fn find(&self, key: &DecoratedKey) -> Result<Option<IndexEntryRef<'a>>, CorruptData> {
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let entry = self.entry(mid)?;
            match entry.cmp_key(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(Some(entry)),
            }
        }
        Ok(None)
    }

    /// The entries in order, decoded one after the other (the offsets are not used).
    pub fn entries(&self) -> Reader<'a> {
        Reader::new(self.entries)
    }
}

/// Checks an index block's CRC and parses it. `offset` is the block's position in the file, for
/// error reports.
pub fn verify_index_block(block: &[u8], offset: u64) -> Result<IndexBlock<'_>, CorruptData> {
    let body = check_block_crc(block, offset)?;
    IndexBlock::parse(body)
}

/// Checks the CRC at the end of `block` and returns what it covers.
pub fn check_block_crc(block: &[u8], offset: u64) -> Result<&[u8], CorruptData> {
    let Some(body_len) = block.len().checked_sub(CRC_LEN as usize) else {
        return Err(CorruptData::Truncated { at: offset as usize, wanted: CRC_LEN as usize });
    };
    let (body, crc) = block.split_at(body_len);
    let expected = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
    let got = crc32fast::hash(body);
    if expected != got {
        return Err(CorruptData::ChecksumMismatch { offset, expected, got });
    }
    Ok(body)
}
