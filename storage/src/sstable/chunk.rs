//! The Data component as a stream of fixed-size chunks, each followed by its CRC32.
//!
//! Chunks are not compressed, so chunk `i` always starts at `DATA_HEADER_LEN + i * (chunk_size +
//! 4)` and no table of chunk offsets is needed: a logical offset maps to its chunk by division.
//! A reader verifies every chunk it touches; a bad chunk spoils only the partitions in it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use memmap2::Mmap;

use crate::block_cache::{self, BlockCache};
use crate::error::{CorruptData, Result, StorageError};

use super::corrupt;
use super::format::{self, FormatVersion, CRC_LEN, DATA_HEADER_LEN, DATA_MAGIC};

/// Writes the logical partition stream as checksummed chunks.
pub struct ChunkWriter {
    out: BufWriter<File>,
    path: PathBuf,
    chunk_size: usize,
    /// Payload of the chunk being filled.
    chunk: Vec<u8>,
    /// Logical bytes written so far.
    position: u64,
}

impl ChunkWriter {
    pub fn create(path: &Path, chunk_size: u32, version: FormatVersion) -> Result<ChunkWriter> {
        let file = File::options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| StorageError::io(path, e))?;
        let mut out = BufWriter::with_capacity(256 * 1024, file);
        let mut header = format::header(DATA_MAGIC, version);
        header.extend_from_slice(&chunk_size.to_be_bytes());
        format::seal(&mut header);
        out.write_all(&header).map_err(|e| StorageError::io(path, e))?;
        Ok(ChunkWriter {
            out,
            path: path.to_path_buf(),
            chunk_size: chunk_size as usize,
            chunk: Vec::with_capacity(chunk_size as usize),
            position: 0,
        })
    }

    /// Logical offset of the next byte written.
    pub fn position(&self) -> u64 {
        self.position
    }

    pub fn write(&mut self, mut bytes: &[u8]) -> Result<()> {
        while !bytes.is_empty() {
            let room = self.chunk_size - self.chunk.len();
            let (now, later) = bytes.split_at(room.min(bytes.len()));
            self.chunk.extend_from_slice(now);
            self.position += now.len() as u64;
            bytes = later;
            if self.chunk.len() == self.chunk_size {
                self.write_chunk()?;
            }
        }
        Ok(())
    }

    fn write_chunk(&mut self) -> Result<()> {
        let crc = crc32fast::hash(&self.chunk);
        self.out.write_all(&self.chunk).map_err(|e| StorageError::io(&self.path, e))?;
        self.out.write_all(&crc.to_be_bytes()).map_err(|e| StorageError::io(&self.path, e))?;
        self.chunk.clear();
        Ok(())
    }

    /// Writes the last (short) chunk and fsyncs the file.
    pub fn finish(mut self) -> Result<()> {
        if !self.chunk.is_empty() {
            self.write_chunk()?;
        }
        self.out.flush().map_err(|e| StorageError::io(&self.path, e))?;
        self.out.get_ref().sync_all().map_err(|e| StorageError::io(&self.path, e))
    }
}

/// File length of a Data component holding `len` logical bytes in chunks of `chunk_size`.
fn stored_len(len: u64, chunk_size: u64) -> u64 {
    DATA_HEADER_LEN + len + len.div_ceil(chunk_size) * CRC_LEN
}

/// The payload of one stored chunk (payload, then its CRC), if the CRC matches; `at` is where
/// the read started, for the error.
fn checked_payload(stored: &[u8], at: u64) -> Result<&[u8], CorruptData> {
    let (payload, crc) = stored.split_at(stored.len().saturating_sub(CRC_LEN as usize));
    let expected = u32::from_be_bytes(crc.try_into().unwrap_or_default());
    let got = crc32fast::hash(payload);
    if expected != got {
        return Err(CorruptData::ChecksumMismatch { offset: at, expected, got });
    }
    Ok(payload)
}

/// An open Data component.
pub struct DataFile {
    file: File,
    path: PathBuf,
    chunk_size: u64,
    /// Logical bytes (from Statistics).
    len: u64,
    /// The engine's block cache, and this file's id in it.
    cache: Arc<BlockCache>,
    cache_id: u64,
    /// The whole file, mapped (`DiskAccess::Mmap`): chunks are read in place, not through the
    /// block cache.
    mapped: Option<MappedChunks>,
}

/// A mapped Data file and which of its chunks have passed their CRC check.
struct MappedChunks {
    map: Mmap,
    /// Bit `i % 64` of word `i / 64` is set once chunk `i` has been verified.
    verified: Box<[AtomicU64]>,
}

impl MappedChunks {
    fn is_verified(&self, i: u64) -> bool {
        self.verified[(i / 64) as usize].load(Ordering::Relaxed) & (1 << (i % 64)) != 0
    }

    fn set_verified(&self, i: u64) {
        self.verified[(i / 64) as usize].fetch_or(1 << (i % 64), Ordering::Relaxed);
    }
}

/// Verified chunks from the last read, as stored (each payload followed by its CRC), so that
/// sequential reads verify each chunk once and read several per system call.
#[derive(Default)]
pub struct ChunkCache {
    /// First chunk held and how many.
    first: u64,
    count: u64,
    /// Chunks to read per system call when a chunk is missing (at least 1).
    read_ahead: u64,
    buf: Vec<u8>,
    /// Point reads (no read-ahead): the one chunk held, verified, shared with the block cache.
    held: Option<(u64, Arc<[u8]>)>,
}

impl ChunkCache {
    /// A cache reading about `bytes` at a time (for scans), or one chunk at a time when 0.
    pub fn with_read_ahead(bytes: u64) -> ChunkCache {
        ChunkCache { read_ahead: bytes, ..ChunkCache::default() }
    }

    /// Forgets the cached chunks (the buffer is kept for reuse). Needed before using a cache
    /// with another file.
    pub fn reset(&mut self) {
        self.count = 0;
        self.held = None;
    }

    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }
}

impl DataFile {
    /// Opens and checks the header and the length against `len` logical bytes.
    pub fn open(path: &Path, version: FormatVersion, len: u64, cache: Arc<BlockCache>) -> Result<DataFile> {
        let file = File::open(path).map_err(|e| StorageError::io(path, e))?;
        let mut header = [0u8; DATA_HEADER_LEN as usize];
        format::read_exact_at(&file, path, &mut header, 0)?;
        format::check_header(&header, DATA_MAGIC, version).map_err(|e| corrupt(path, e))?;
        let (body, crc) = header.split_at(DATA_HEADER_LEN as usize - CRC_LEN as usize);
        let expected = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
        let got = crc32fast::hash(body);
        if expected != got {
            return Err(corrupt(path, CorruptData::ChecksumMismatch { offset: 0, expected, got }));
        }
        let chunk_size = u32::from_be_bytes([body[5], body[6], body[7], body[8]]) as u64;
        if chunk_size == 0 {
            return Err(corrupt(path, CorruptData::BadValue { what: "chunk size", value: 0 }));
        }
        let on_disk = file.metadata().map_err(|e| StorageError::io(path, e))?.len();
        let expected_len = stored_len(len, chunk_size);
        if on_disk != expected_len {
            return Err(corrupt(
                path,
                CorruptData::BadValue { what: "Data file length (expected from Statistics)", value: on_disk },
            ));
        }
        let mapped = if cache.disk_access().maps_data() {
            let map = format::map_file(&file, path)?;
            let words = len.div_ceil(chunk_size).div_ceil(64) as usize;
            Some(MappedChunks { map, verified: (0..words).map(|_| AtomicU64::new(0)).collect() })
        } else {
            None
        };
        Ok(DataFile {
            file,
            path: path.to_path_buf(),
            chunk_size,
            len,
            cache,
            cache_id: block_cache::next_file_id(),
            mapped,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn chunk_count(&self) -> u64 {
        self.len.div_ceil(self.chunk_size)
    }

    /// Makes sure chunk `i` is in the cache, verified; returns its payload.
    fn load<'c>(&'c self, cache: &'c mut ChunkCache, i: u64) -> Result<&'c [u8]> {
        if let Some(mapped) = &self.mapped {
            return self.mapped_chunk(mapped, i);
        }
        if cache.read_ahead == 0 {
            if cache.held.as_ref().is_none_or(|(held, _)| *held != i) {
                cache.held = Some((i, self.load_shared(i)?));
            }
            return Ok(cache.held.as_ref().map_or(&[], |(_, chunk)| &chunk[..]));
        }
        let stride = self.chunk_size + CRC_LEN;
        if !(cache.first..cache.first + cache.count).contains(&i) {
            cache.count = 0;
            let wanted = (cache.read_ahead / self.chunk_size).max(1);
            let count = wanted.min(self.chunk_count().saturating_sub(i)).max(1);
            let pos = DATA_HEADER_LEN + i * stride;
            let end = (i + count) * self.chunk_size;
            let stored = (end.min(self.len) - i * self.chunk_size) + count * CRC_LEN;
            cache.buf.resize(stored as usize, 0);
            format::read_exact_at(&self.file, &self.path, &mut cache.buf, pos)?;
            let mut good = 0;
            for chunk in cache.buf.chunks(stride as usize) {
                if let Err(e) = checked_payload(chunk, pos) {
                    // Only a read of the bad chunk itself fails: the good ones before it are kept.
                    if good == 0 {
                        return Err(corrupt(&self.path, e));
                    }
                    break;
                }
                good += 1;
            }
            cache.first = i;
            cache.count = good;
        }
        let from = ((i - cache.first) * stride) as usize;
        let len = self.chunk_size.min(self.len - i * self.chunk_size) as usize;
        Ok(&cache.buf[from..from + len])
    }

    /// Chunk `i`'s payload in the mapped file, its CRC checked the first time it is read.
    fn mapped_chunk<'m>(&self, mapped: &'m MappedChunks, i: u64) -> Result<&'m [u8]> {
        let len = self.chunk_size.min(self.len - i * self.chunk_size);
        let pos = DATA_HEADER_LEN + i * (self.chunk_size + CRC_LEN);
        let stored = usize::try_from(pos)
            .ok()
            .and_then(|from| mapped.map.get(from..from + (len + CRC_LEN) as usize))
            .ok_or_else(|| {
            corrupt(&self.path, CorruptData::Truncated { at: pos as usize, wanted: len as usize })
        })?;
        if mapped.is_verified(i) {
            return Ok(&stored[..len as usize]);
        }
        let payload = checked_payload(stored, pos).map_err(|e| corrupt(&self.path, e))?;
        mapped.set_verified(i);
        Ok(payload)
    }

    /// Chunk `i`'s payload from the block cache, or read, verified and added to it (point reads;
    /// scans read ahead on their own and leave the cache alone).
    fn load_shared(&self, i: u64) -> Result<Arc<[u8]>> {
        let cache = &self.cache;
        if let Some(chunk) = cache.get(self.cache_id, i) {
            return Ok(chunk);
        }
        let len = self.chunk_size.min(self.len - i * self.chunk_size);
        let pos = DATA_HEADER_LEN + i * (self.chunk_size + CRC_LEN);
        let mut stored = vec![0; (len + CRC_LEN) as usize];
        format::read_exact_at(&self.file, &self.path, &mut stored, pos)?;
        let chunk: Arc<[u8]> = checked_payload(&stored, pos).map_err(|e| corrupt(&self.path, e))?.into();
        cache.insert(self.cache_id, i, Arc::clone(&chunk));
        Ok(chunk)
    }

    /// The logical bytes `offset..offset + size`: borrowed from the cache when they lie in one
    /// chunk, otherwise gathered into `spill`.
    pub fn read<'c>(
        &'c self,
        cache: &'c mut ChunkCache,
        spill: &'c mut Vec<u8>,
        offset: u64,
        size: u64,
    ) -> Result<&'c [u8]> {
        let end = offset.checked_add(size).filter(|&e| e <= self.len).ok_or_else(|| {
            corrupt(&self.path, CorruptData::BadValue { what: "partition beyond end of Data", value: offset })
        })?;
        if size == 0 {
            return Ok(&[]);
        }
        let first = offset / self.chunk_size;
        let last = (end - 1) / self.chunk_size;
        if first == last {
            let chunk = self.load(cache, first)?;
            let from = (offset - first * self.chunk_size) as usize;
            return Ok(&chunk[from..from + size as usize]);
        }
        spill.clear();
        spill.reserve(size as usize);
        for i in first..=last {
            let chunk = self.load(cache, i)?;
            let chunk_start = i * self.chunk_size;
            let from = offset.max(chunk_start) - chunk_start;
            let to = end.min(chunk_start + chunk.len() as u64) - chunk_start;
            spill.extend_from_slice(&chunk[from as usize..to as usize]);
        }
        Ok(spill)
    }
}
