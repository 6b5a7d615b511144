//! Reads an SSTable: point gets through summary, index block and data chunk; ordered scans.
//!
//! A reader is shared (`Arc`) by many threads: every read uses positioned reads (`read_at`) and
//! its own buffers, so there is no shared cursor and no lock.

use std::cell::RefCell;
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use crate::block_cache::{self, BlockCache};
use crate::data::{decode_cell, decode_deletion, decode_range_tombstone, decode_row, Reader, Row};
use crate::dht::DecoratedKey;
use crate::error::{CorruptData, Result, StorageError};

use super::bloom::BloomFilter;
use super::chunk::{ChunkCache, DataFile};
use super::format::{self, IndexBlock, IndexEntryRef, Metadata, SummaryEntry, CRC_LEN, INDEX_HEADER_LEN, INDEX_MAGIC};
use super::{corrupt, delete_components, CellFilter, Component, Descriptor};

/// An open, complete SSTable.
pub struct SsTableReader {
    inner: Arc<Inner>,
}

struct Inner {
    desc: Descriptor,
    meta: Metadata,
    data: DataFile,
    /// The engine's cache of verified blocks (shared with `data`).
    cache: Arc<BlockCache>,
    index: File,
    index_path: PathBuf,
    /// The Index, mapped (`DiskAccess::maps_index`): point reads find their entry in place.
    index_map: Option<memmap2::Mmap>,
    /// The Index file's id in the block cache, and the id of this SSTable's key-cache entries
    /// there.
    index_cache_id: u64,
    key_cache_id: u64,
    /// First key and position of every index block, in key order.
    summary: Vec<SummaryEntry>,
    filter: BloomFilter,
    data_disk_size: u64,
    disk_size: u64,
}

/// Per-thread buffers for point reads, so a get allocates only for what it returns.
#[derive(Default)]
struct Scratch {
    /// The index block of the last point read, verified, shared with the block cache.
    index_block: Option<Arc<[u8]>>,
    cache: ChunkCache,
    spill: Vec<u8>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Bytes of Data a scan reads per system call.
const SCAN_READ_AHEAD: u64 = 64 * 1024;

/// Buffers above this size are not kept between reads.
const MAX_KEPT_SCRATCH: usize = 1 << 20;

impl SsTableReader {
    /// Opens a complete SSTable, verifying every component: Statistics, Summary and Filter by
    /// their CRC, Data by header and length, Index block by block (and against the summary and
    /// the statistics). Data chunks are verified when read. Point reads keep verified blocks in
    /// `cache`, the opening engine's.
    ///
    /// A damaged or missing Summary or Filter does not keep the SSTable from opening: both are
    /// derived from the Index, so they are rebuilt from it (once every Index block has passed
    /// its checks) and the damaged files replaced, with a warning naming them.
    pub fn open(desc: Descriptor, cache: &Arc<BlockCache>) -> Result<SsTableReader> {
        let version = desc.version;
        let stats_path = desc.path(Component::Statistics);
        let meta = format::read_metadata(&stats_path)?;

        let summary_path = desc.path(Component::Summary);
        let summary = format::read_sealed(&summary_path, format::SUMMARY_MAGIC, version).and_then(|body| {
            let (_interval, summary) = format::decode_summary(&body).map_err(|e| corrupt(&summary_path, e))?;
            Ok(summary)
        });
        let filter_path = desc.path(Component::Filter);
        let filter = format::read_sealed(&filter_path, format::FILTER_MAGIC, version)
            .and_then(|body| BloomFilter::decode(&body).map_err(|e| corrupt(&filter_path, e)));

        let data_path = desc.path(Component::Data);
        let data = DataFile::open(&data_path, version, meta.data_size, Arc::clone(cache))?;

        let index_path = desc.path(Component::Index);
        let index = File::open(&index_path).map_err(|e| StorageError::io(&index_path, e))?;
        let (summary, filter) = match (summary, filter) {
            (Ok(summary), Ok(filter)) => {
                verify_index(&index, &index_path, &desc, &meta, &summary)?;
                (summary, filter)
            }
            (summary, filter) => rebuild_derived(&desc, &meta, &index, &index_path, summary, filter)?,
        };
        let index_map =
            if cache.disk_access().maps_index() { Some(format::map_file(&index, &index_path)?) } else { None };

        let mut disk_size = 0;
        let mut data_disk_size = 0;
        for c in Component::ALL {
            let path = desc.path(c);
            let len = std::fs::metadata(&path).map_err(|e| StorageError::io(&path, e))?.len();
            disk_size += len;
            if c == Component::Data {
                data_disk_size = len;
            }
        }
        let index_cache_id = block_cache::next_file_id();
        let key_cache_id = block_cache::next_file_id();
        let inner = Inner {
            desc,
            meta,
            data,
            cache: Arc::clone(cache),
            index,
            index_path,
            index_map,
            index_cache_id,
            key_cache_id,
            summary,
            filter,
            data_disk_size,
            disk_size,
        };
        Ok(SsTableReader { inner: Arc::new(inner) })
    }

    pub fn descriptor(&self) -> &Descriptor {
        &self.inner.desc
    }

    pub fn metadata(&self) -> &Metadata {
        &self.inner.meta
    }

    /// False when `key` is certainly not here (outside the key range, or rejected by the bloom
    /// filter).
    pub fn might_contain(&self, key: &DecoratedKey) -> bool {
        let m = &self.inner.meta;
        *key >= m.first_key && *key <= m.last_key && self.inner.filter.might_contain(&key.key)
    }

    /// The partition of `key`: its header (deletion, range tombstones) and the cells of every
    /// column index block `filter` wants, whole blocks (the caller trims). A partition without a
    /// column index is one block and returned whole. `None` if the key is not here.
    pub fn get(&self, key: &DecoratedKey, filter: &dyn CellFilter) -> Result<Option<Row>> {
        if !self.might_contain(key) {
            return Ok(None);
        }
        self.get_admitted(key, filter)
    }

    /// [`SsTableReader::get`] for a caller that has asked [`SsTableReader::might_contain`]
    /// already (it hashes the key again for the Bloom filter).
    pub(crate) fn get_admitted(&self, key: &DecoratedKey, filter: &dyn CellFilter) -> Result<Option<Row>> {
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => {
                let result = self.get_with(key, filter, &mut scratch);
                scratch.shrink();
                result
            }
            // A CellFilter that reads another SSTable from inside wants_block: use fresh buffers.
            Err(_) => self.get_with(key, filter, &mut Scratch::default()),
        })
    }

    fn get_with(&self, key: &DecoratedKey, filter: &dyn CellFilter, scratch: &mut Scratch) -> Result<Option<Row>> {
        let inner = &*self.inner;
        // The key cache knows where a small partition read before lies: no summary search and
        // no index block. (The partition's own key, checked on read, still guards the result.)
        let cache = &inner.cache;
        let slot = key_slot(&key.key);
        if let Some((offset, size)) = cache.position(inner.key_cache_id, slot) {
            let entry = IndexEntryRef { key: &key.key, token: &key.token.0, offset, size, columns: &[] };
            scratch.cache.reset();
            let bytes = inner.data.read(&mut scratch.cache, &mut scratch.spill, offset, size)?;
            // The slot is a hash of the key: a position another key left under the same slot
            // leads to that key's partition, and the index below finds the right one.
            if partition_key(bytes) == Some(key.key.as_slice()) {
                return inner.decode_partition(&entry, bytes).map(Some);
            }
        }
        let block_no = inner.summary.partition_point(|e| e.key <= *key);
        let Some(block) = block_no.checked_sub(1).and_then(|b| inner.summary.get(b)) else {
            return Ok(None);
        };
        let index_block = match &inner.index_map {
            Some(map) => inner.mapped_index_block(map, block)?,
            None => inner.read_index_block(block, &mut scratch.index_block)?,
        };
        let Some(entry) = index_block.find(key).map_err(|e| corrupt(&inner.index_path, e))? else {
            return Ok(None);
        };
        scratch.cache.reset();
        let row = if entry.columns.is_empty() {
            let row = inner.read_partition(&entry, &mut scratch.cache, &mut scratch.spill)?;
            cache.insert_position(inner.key_cache_id, slot, entry.offset, entry.size);
            row
        } else {
            inner.read_partition_blocks(&entry, filter, &mut scratch.cache, &mut scratch.spill)?
        };
        Ok(Some(row))
    }

    /// Partitions in key order from the first key `>= start` (from the beginning if `None`).
    pub fn scan(&self, start: Option<&DecoratedKey>) -> Result<SsTableScanner> {
        let summary = &self.inner.summary;
        let block = match start {
            Some(k) => summary.partition_point(|e| e.key <= *k).saturating_sub(1),
            None => 0,
        };
        Ok(SsTableScanner {
            inner: Arc::clone(&self.inner),
            next_block: block,
            start: start.cloned(),
            block: None,
            next_entry: 0,
            left: 0,
            cache: ChunkCache::with_read_ahead(SCAN_READ_AHEAD),
            spill: Vec::new(),
            done: false,
            tolerant: false,
            damaged: None,
        })
    }

    /// The first key of every index block (every `index_interval`-th key), for split estimates.
    pub fn sample_keys(&self) -> Vec<DecoratedKey> {
        self.inner.summary.iter().map(|e| e.key.clone()).collect()
    }

    /// Bytes of the Data component on disk.
    pub fn data_size(&self) -> u64 {
        self.inner.data_disk_size
    }

    /// Bytes of all components on disk.
    pub fn disk_size(&self) -> u64 {
        self.inner.disk_size
    }

    /// Removes this SSTable's files (Statistics first, see [`super::cleanup_leftovers`]). Reads
    /// already holding this reader keep working: open files outlive their names.
    pub fn delete_files(&self) -> Result<()> {
        delete_components(&self.inner.desc)
    }
}

impl std::fmt::Debug for SsTableReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SsTableReader").field("descriptor", &self.inner.desc).finish_non_exhaustive()
    }
}

impl Scratch {
    fn shrink(&mut self) {
        self.index_block = None;
        if self.spill.capacity() > MAX_KEPT_SCRATCH {
            self.spill = Vec::new();
        }
        if self.cache.capacity() > MAX_KEPT_SCRATCH {
            self.cache = ChunkCache::default();
        }
    }
}

impl Inner {
    /// One index block, verified: from the block cache, or read, checked and added to it.
    fn read_index_block<'b>(&self, block: &SummaryEntry, held: &'b mut Option<Arc<[u8]>>) -> Result<IndexBlock<'b>> {
        let cache = &self.cache;
        let body = match cache.get(self.index_cache_id, block.block_offset) {
            Some(body) => body,
            None => {
                let size = usize::try_from(block.block_size).unwrap_or(usize::MAX);
                let mut buf = vec![0; size];
                format::read_exact_at(&self.index, &self.index_path, &mut buf, block.block_offset)?;
                let body: Arc<[u8]> =
                    format::check_block_crc(&buf, block.block_offset).map_err(|e| corrupt(&self.index_path, e))?.into();
                cache.insert(self.index_cache_id, block.block_offset, Arc::clone(&body));
                body
            }
        };
        let body = held.insert(body);
        IndexBlock::parse(body).map_err(|e| corrupt(&self.index_path, e))
    }

    /// One index block of the mapped Index, in place. Its CRC is not checked again: the whole
    /// Index was verified block by block when the SSTable was opened ([`verify_index`]).
    fn mapped_index_block<'m>(&self, map: &'m memmap2::Mmap, block: &SummaryEntry) -> Result<IndexBlock<'m>> {
        let truncated = || {
            let wanted = usize::try_from(block.block_size).unwrap_or(usize::MAX);
            corrupt(&self.index_path, CorruptData::Truncated { at: block.block_offset as usize, wanted })
        };
        let from = usize::try_from(block.block_offset).map_err(|_| truncated())?;
        let size = usize::try_from(block.block_size).map_err(|_| truncated())?;
        let stored = from.checked_add(size).and_then(|end| map.get(from..end)).ok_or_else(truncated)?;
        let body = &stored[..stored.len().saturating_sub(CRC_LEN as usize)];
        IndexBlock::parse(body).map_err(|e| corrupt(&self.index_path, e))
    }

    /// Reads and decodes a whole partition, checking that it holds the key the index promised.
    fn read_partition(&self, entry: &IndexEntryRef<'_>, cache: &mut ChunkCache, spill: &mut Vec<u8>) -> Result<Row> {
        let bytes = self.data.read(cache, spill, entry.offset, entry.size)?;
        self.decode_partition(entry, bytes)
    }

    /// The partition `entry` points to, from its Data `bytes`.
    fn decode_partition(&self, entry: &IndexEntryRef<'_>, bytes: &[u8]) -> Result<Row> {
        let decode = || -> Result<Row, CorruptData> {
            let mut r = Reader::new(bytes);
            check_key(&mut r, entry)?;
            let row = decode_row(&mut r)?;
            format::expect_end(&r)?;
            Ok(row)
        };
        decode().map_err(|e| self.corrupt_at(entry.offset, e))
    }

    /// Reads a large partition's header and the column index blocks `filter` wants.
    fn read_partition_blocks(
        &self,
        entry: &IndexEntryRef<'_>,
        filter: &dyn CellFilter,
        cache: &mut ChunkCache,
        spill: &mut Vec<u8>,
    ) -> Result<Row> {
        let blocks = format::decode_column_blocks(entry.columns).map_err(|e| corrupt(&self.index_path, e))?;
        let header_size = blocks.first().map_or(entry.size, |b| b.offset);
        if blocks.iter().any(|b| b.offset.checked_add(b.size).filter(|&end| end <= entry.size).is_none()) {
            let e = CorruptData::BadValue { what: "column index block beyond its partition", value: entry.offset };
            return Err(corrupt(&self.index_path, e));
        }

        let bytes = self.data.read(cache, spill, entry.offset, header_size)?;
        let mut row = Row::new();
        let decode_header = |row: &mut Row| -> Result<(), CorruptData> {
            let mut r = Reader::new(bytes);
            check_key(&mut r, entry)?;
            row.deletion = decode_deletion(&mut r)?;
            let n = r.u32()?;
            for _ in 0..n {
                row.range_tombstones.push(decode_range_tombstone(&mut r)?);
            }
            let _cell_count = r.u32()?;
            format::expect_end(&r)
        };
        decode_header(&mut row).map_err(|e| self.corrupt_at(entry.offset, e))?;

        for b in blocks.iter().filter(|b| filter.wants_block(&b.first_name, &b.last_name)) {
            let offset = entry.offset + b.offset;
            let bytes = self.data.read(cache, spill, offset, b.size)?;
            let mut r = Reader::new(bytes);
            while !r.is_empty() {
                row.cells.push(decode_cell(&mut r).map_err(|e| self.corrupt_at(offset, e))?);
            }
        }
        Ok(row)
    }

    /// A decoding error inside the partition at logical offset `offset` of the Data component.
    fn corrupt_at(&self, offset: u64, detail: CorruptData) -> StorageError {
        let detail = match detail {
            CorruptData::Truncated { at, wanted } => CorruptData::Truncated { at: offset as usize + at, wanted },
            other => other,
        };
        corrupt(self.data.path(), detail)
    }
}

/// Reads the key at the start of a partition and checks it is the one the index entry names.
/// Where the key cache keeps `key` among its SSTable's entries: a hash of the key. Two keys may
/// share a slot; the entry holds its key, so the other one just misses.
fn key_slot(key: &[u8]) -> u64 {
    use std::hash::{DefaultHasher, Hasher};
    let mut h = DefaultHasher::new();
    h.write(key);
    h.finish()
}

/// The key a partition's Data bytes start with, if they can be read.
fn partition_key(bytes: &[u8]) -> Option<&[u8]> {
    Reader::new(bytes).short_bytes().ok()
}

fn check_key(r: &mut Reader<'_>, entry: &IndexEntryRef<'_>) -> Result<(), CorruptData> {
    let key = r.short_bytes()?;
    let token = r.short_bytes()?;
    if key != entry.key || token != entry.token {
        return Err(CorruptData::BadValue { what: "partition key differs from its index entry", value: entry.offset });
    }
    Ok(())
}

/// Walks the whole Index component at open: every block's CRC, the summary pointing at each
/// block's first key, keys strictly increasing, partitions contiguous and covering the Data
/// component, counts and first/last keys matching Statistics.
/// Whether `e` leaves a derived component to be rebuilt: damage found by its checks, or the
/// file missing. Other I/O failures (a disk error, a permission) are reported as they are.
fn rebuildable(e: &StorageError) -> bool {
    match e {
        StorageError::Corrupt { .. } => true,
        StorageError::Io { source, .. } => source.kind() == std::io::ErrorKind::NotFound,
        _ => false,
    }
}

/// The Summary and Filter of an SSTable whose Summary or Filter (or both) failed to load:
/// the failed ones are rebuilt from the Index, which must pass every check first, and written
/// in place of the damaged files.
fn rebuild_derived(
    desc: &Descriptor,
    meta: &Metadata,
    index: &File,
    index_path: &std::path::Path,
    summary: Result<Vec<SummaryEntry>>,
    filter: Result<BloomFilter>,
) -> Result<(Vec<SummaryEntry>, BloomFilter)> {
    let summary = match summary {
        Err(e) if !rebuildable(&e) => return Err(e),
        other => other,
    };
    let filter = match filter {
        Err(e) if !rebuildable(&e) => return Err(e),
        other => other,
    };
    for (component, result) in
        [(Component::Summary, summary.as_ref().err()), (Component::Filter, filter.as_ref().err())]
    {
        if let Some(e) = result {
            tracing::warn!(
                file = %desc.path(component).display(),
                error = %e,
                "SSTable component damaged or missing; rebuilding it from the Index"
            );
        }
    }
    let (interval, rebuilt_summary, keys) = summary_from_index(index, index_path, desc, meta)?;
    verify_index(index, index_path, desc, meta, &rebuilt_summary)?;
    let version = desc.version;
    let summary = match summary {
        Ok(summary) => summary,
        Err(_) => {
            replace_component(desc, Component::Summary, &format::encode_summary(interval, &rebuilt_summary, version))?;
            rebuilt_summary
        }
    };
    let filter = match filter {
        Ok(filter) => filter,
        Err(_) => {
            // The column family's own false-positive chance is not known here; the default
            // serves until compaction rewrites the SSTable.
            let mut filter = BloomFilter::new(keys.len(), super::WriterOptions::default().bloom_fp_chance);
            for key in &keys {
                filter.add(key);
            }
            replace_component(desc, Component::Filter, &filter.encode(version))?;
            filter
        }
    };
    Ok((summary, filter))
}

/// Writes `bytes` as `component` of `desc` through a temporary file, then renames it over the
/// old one and makes the rename durable.
fn replace_component(desc: &Descriptor, component: Component, bytes: &[u8]) -> Result<()> {
    let tmp = desc.tmp_path(component);
    let path = desc.path(component);
    super::remove_file_if_exists(&tmp)?;
    format::write_synced(&tmp, bytes)?;
    std::fs::rename(&tmp, &path).map_err(|e| StorageError::io(&path, e))?;
    super::sync_dir(&desc.dir)?;
    tracing::info!(file = %path.display(), "rebuilt SSTable component written");
    Ok(())
}

/// Walks the Index block after block, checking each one's CRC, and returns the summary it
/// implies (with the largest block's entry count as the interval) and every partition key.
fn summary_from_index(
    index: &File,
    path: &std::path::Path,
    desc: &Descriptor,
    meta: &Metadata,
) -> Result<(u32, Vec<SummaryEntry>, Vec<Vec<u8>>)> {
    let mut header = [0u8; INDEX_HEADER_LEN as usize];
    format::read_exact_at(index, path, &mut header, 0)?;
    format::check_header(&header, INDEX_MAGIC, desc.version).map_err(|e| corrupt(path, e))?;
    let map = format::map_file(index, path)?;
    if map.len() as u64 != meta.index_size {
        return Err(corrupt(
            path,
            CorruptData::BadValue { what: "Index file length (expected from Statistics)", value: map.len() as u64 },
        ));
    }
    let mut summary = Vec::new();
    let mut keys = Vec::with_capacity(usize::try_from(meta.key_count).unwrap_or(0).min(1 << 24));
    let mut interval = 0;
    let mut position = INDEX_HEADER_LEN as usize;
    while position < map.len() {
        let rest = &map[position..];
        let mut r = crate::data::Reader::new(rest);
        let count = r.u32().map_err(|e| corrupt(path, e))?;
        let mut first = None;
        for _ in 0..count {
            let entry = format::decode_index_entry(&mut r).map_err(|e| corrupt(path, e))?;
            first.get_or_insert_with(|| entry.decorated_key());
            keys.push(entry.key.to_vec());
        }
        let size = (r.position() as u64).saturating_add(u64::from(count) * 4).saturating_add(CRC_LEN);
        let Some(block) = usize::try_from(size).ok().and_then(|size| rest.get(..size)) else {
            return Err(corrupt(path, CorruptData::Truncated { at: position, wanted: size as usize }));
        };
        format::verify_index_block(block, position as u64).map_err(|e| corrupt(path, e))?;
        let Some(key) = first else {
            return Err(corrupt(path, CorruptData::BadValue { what: "empty index block", value: position as u64 }));
        };
        summary.push(SummaryEntry { key, block_offset: position as u64, block_size: size });
        interval = interval.max(count);
        position += block.len();
    }
    Ok((interval, summary, keys))
}

fn verify_index(
    index: &File,
    path: &std::path::Path,
    desc: &Descriptor,
    meta: &Metadata,
    summary: &[SummaryEntry],
) -> Result<()> {
    let bad = |what: &'static str, value: u64| corrupt(path, CorruptData::BadValue { what, value });
    let mut header = [0u8; INDEX_HEADER_LEN as usize];
    format::read_exact_at(index, path, &mut header, 0)?;
    format::check_header(&header, INDEX_MAGIC, desc.version).map_err(|e| corrupt(path, e))?;
    let (body, crc) = header.split_at(5);
    let expected = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
    let got = crc32fast::hash(body);
    if expected != got {
        return Err(corrupt(path, CorruptData::ChecksumMismatch { offset: 0, expected, got }));
    }
    let len = index.metadata().map_err(|e| StorageError::io(path, e))?.len();
    if len != meta.index_size {
        return Err(bad("Index file length (expected from Statistics)", len));
    }

    let mut position = INDEX_HEADER_LEN;
    let mut data_end = 0u64;
    let mut keys = 0u64;
    let mut previous: Option<DecoratedKey> = None;
    let mut buf = Vec::new();
    for block in summary {
        if block.block_offset != position {
            return Err(bad("summary entry offset", block.block_offset));
        }
        let size = usize::try_from(block.block_size).map_err(|_| bad("index block size", block.block_size))?;
        if block.block_offset.saturating_add(block.block_size) > len {
            return Err(bad("index block beyond end of file", block.block_offset));
        }
        buf.resize(size, 0);
        format::read_exact_at(index, path, &mut buf, block.block_offset)?;
        let index_block = format::verify_index_block(&buf, block.block_offset).map_err(|e| corrupt(path, e))?;
        let count = index_block.count;
        let mut r = index_block.entries();
        for i in 0..count {
            let start = r.position();
            if index_block.entry_offset(i).map_err(|e| corrupt(path, e))? != start {
                return Err(bad("index entry start", block.block_offset));
            }
            let entry = format::decode_index_entry(&mut r).map_err(|e| corrupt(path, e))?;
            let key = entry.decorated_key();
            if i == 0 && key != block.key {
                return Err(bad("summary key differs from its index block", block.block_offset));
            }
            if previous.as_ref().is_some_and(|p| *p >= key) {
                return Err(bad("index keys out of order", block.block_offset));
            }
            if entry.offset != data_end {
                return Err(bad("partition offset", entry.offset));
            }
            data_end = entry.offset.saturating_add(entry.size);
            previous = Some(key);
        }
        format::expect_end(&r).map_err(|e| corrupt(path, e))?;
        keys += count as u64;
        position += block.block_size;
    }
    if position != len {
        return Err(bad("index blocks do not cover the Index file", position));
    }
    if keys != meta.key_count {
        return Err(bad("key count differs from Statistics", keys));
    }
    if data_end != meta.data_size {
        return Err(bad("partitions do not cover the Data file", data_end));
    }
    if summary.first().map(|e| &e.key) != Some(&meta.first_key) || previous.as_ref() != Some(&meta.last_key) {
        return Err(bad("first or last key differs from Statistics", 0));
    }
    Ok(())
}

/// Partitions of one SSTable in key order, read through the index (so each partition is read
/// with its exact size) with data chunks verified once each.
pub struct SsTableScanner {
    inner: Arc<Inner>,
    /// Index of the next summary entry (index block) to load.
    next_block: usize,
    /// Entries before this key are skipped (cleared once passed).
    start: Option<DecoratedKey>,
    /// The current index block (verified, CRC removed), the next entry in it and how many are left.
    block: Option<Arc<[u8]>>,
    next_entry: u32,
    left: u32,
    cache: ChunkCache,
    spill: Vec<u8>,
    /// After an error the scanner stops: positions after a corrupt spot are not trusted.
    done: bool,
    /// Scrub's mode: a partition whose data cannot be read is reported, and the scan goes on
    /// with the next index entry (the index is verified on its own, so its positions hold).
    tolerant: bool,
    /// The key of the partition whose read failed last (in tolerant mode).
    damaged: Option<DecoratedKey>,
}

impl SsTableScanner {
    /// Keeps scanning past a partition whose data is damaged: the error is returned for it and
    /// [`SsTableScanner::damaged_key`] names it. A damaged index block still ends the scan.
    pub fn past_damaged_partitions(mut self) -> SsTableScanner {
        self.tolerant = true;
        self
    }

    /// The key of the partition the last error was about, when the scan went past it.
    pub fn damaged_key(&self) -> Option<&DecoratedKey> {
        self.damaged.as_ref()
    }

    fn next_partition(&mut self) -> Result<Option<(DecoratedKey, Row)>> {
        loop {
            while self.left == 0 {
                let Some(block) = self.inner.summary.get(self.next_block) else {
                    return Ok(None);
                };
                // Verified; kept (without its CRC) to be parsed again, cheaply, below.
                let count = self.inner.read_index_block(block, &mut self.block)?.count;
                self.next_entry = 0;
                self.left = count;
                self.next_block += 1;
            }
            let body = self.block.as_deref().unwrap_or_default();
            let index_block = IndexBlock::parse(body).map_err(|e| corrupt(&self.inner.index_path, e))?;
            let entry = index_block.entry(self.next_entry).map_err(|e| corrupt(&self.inner.index_path, e))?;
            self.next_entry += 1;
            self.left -= 1;
            if let Some(start) = &self.start {
                if entry.cmp_key(start) == std::cmp::Ordering::Less {
                    continue;
                }
                self.start = None;
            }
            let key = entry.decorated_key();
            match self.inner.read_partition(&entry, &mut self.cache, &mut self.spill) {
                Ok(row) => return Ok(Some((key, row))),
                Err(e) => {
                    if self.tolerant {
                        self.damaged = Some(key);
                        // Nothing read near the damage is reused.
                        self.cache = ChunkCache::with_read_ahead(SCAN_READ_AHEAD);
                    }
                    return Err(e);
                }
            }
        }
    }
}

impl Iterator for SsTableScanner {
    type Item = Result<(DecoratedKey, Row)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        self.damaged = None;
        match self.next_partition() {
            Ok(Some(item)) => Some(Ok(item)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                // Only a partition's own damage is gone past; anything else ends the scan.
                self.done = !(self.tolerant && self.damaged.is_some());
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod key_cache_tests {
    use super::*;
    use crate::data::Cell;
    use crate::dht::Token;
    use crate::sstable::{AllCells, Descriptor, SsTableWriter, WriterOptions};

    /// Two keys whose hashes meet in one slot: the second is read from the index, not from the
    /// first's position, and a real key-cache hit still answers.
    #[test]
    fn a_position_left_by_another_key_in_the_slot_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Arc::new(BlockCache::new(crate::block_cache::DEFAULT_CAPACITY));
        let keys: Vec<DecoratedKey> =
            (0..3u8).map(|i| DecoratedKey::new(Token::from_bytes(&[i]), format!("key{i}").into_bytes())).collect();
        let row = |i: usize| Row { cells: vec![Cell::live(b"c".to_vec(), vec![i as u8; 4], 1)], ..Row::new() };
        let mut w =
            SsTableWriter::create(Descriptor::new(dir.path(), "ks", "cf", 1), 3, WriterOptions::default()).unwrap();
        for (i, k) in keys.iter().enumerate() {
            w.append(k, &row(i)).unwrap();
        }
        let reader = w.finish((1, 1), vec![], &cache).unwrap();
        assert_eq!(reader.get(&keys[0], &AllCells).unwrap(), Some(row(0)));
        let (offset, size) = cache.position(reader.inner.key_cache_id, key_slot(b"key0")).unwrap();
        // As if key2 hashed to key0's slot: its lookup finds key0's position first.
        cache.insert_position(reader.inner.key_cache_id, key_slot(b"key2"), offset, size);
        assert_eq!(reader.get(&keys[2], &AllCells).unwrap(), Some(row(2)));
        let (hits, _) = cache.hits_and_misses();
        assert_eq!(reader.get(&keys[2], &AllCells).unwrap(), Some(row(2)));
        assert_eq!(cache.hits_and_misses().0, hits + 1, "key2's own position, cached by its index read");
        assert_eq!(key_slot(b"alice"), key_slot(b"alice"));
    }
}
