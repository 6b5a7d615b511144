//! Writes one SSTable from partitions given in key order (a memtable flush or a compaction).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::sync::Arc;

use crate::block_cache::BlockCache;

use crate::data::{encode_cell, encode_deletion, encode_range_tombstone, CellKind, Row};
use crate::dht::DecoratedKey;
use crate::error::{Result, StorageError};

use super::bloom::BloomFilter;
use super::chunk::ChunkWriter;
use super::format::{self, Metadata, ReplayPosition, SummaryEntry};
use super::{sync_dir, Component, Descriptor, SsTableError, SsTableReader};

/// How an SSTable is laid out. The defaults suit most column families.
#[derive(Clone, Debug)]
pub struct WriterOptions {
    /// Index entries per index block, hence per summary entry (kept in memory). Default 128.
    pub index_interval: u32,
    /// Target false positive chance of the bloom filter, 0 < p <= 1 (1: no filter, every key
    /// "maybe" present). Default 0.01.
    pub bloom_fp_chance: f64,
    /// Bytes of partition data per checksummed chunk of the Data component. Default 4 KiB: a
    /// point read reads and checksums one whole chunk, so smaller chunks make point reads
    /// cheaper (measured: 16 KiB chunks cost ~50% more per random get); scans read many chunks
    /// per system call anyway.
    pub chunk_size: u32,
    /// A partition gets a column index, with one entry per this many bytes of cells, when its
    /// cells take more than this. Default 64 KiB.
    pub column_index_size: u32,
    /// A partition whose encoded size is above this many bytes is logged as a warning when it
    /// is written, naming keyspace, column family, key and size (Cassandra's "Compacting large
    /// row" warning): such partitions are slow to read whole, to compact and to repair, and
    /// usually point at a data model problem. Default 512 MiB.
    pub large_partition_warning: u64,
    /// Compaction level recorded in Statistics. Default 0.
    pub level: u32,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            index_interval: 128,
            bloom_fp_chance: 0.01,
            chunk_size: 4 * 1024,
            column_index_size: 64 * 1024,
            large_partition_warning: 512 << 20,
            level: 0,
        }
    }
}

impl WriterOptions {
    fn validate(&self) -> Result<(), SsTableError> {
        let bad = |name, value: String| Err(SsTableError::InvalidOption { name, value });
        if self.index_interval == 0 {
            return bad("index_interval", self.index_interval.to_string());
        }
        if !(self.bloom_fp_chance > 0.0 && self.bloom_fp_chance <= 1.0) {
            return bad("bloom_fp_chance", self.bloom_fp_chance.to_string());
        }
        if self.chunk_size == 0 {
            return bad("chunk_size", self.chunk_size.to_string());
        }
        if self.column_index_size == 0 {
            return bad("column_index_size", self.column_index_size.to_string());
        }
        Ok(())
    }
}

/// Running totals for the Statistics component.
struct Stats {
    key_count: u64,
    cell_count: u64,
    tombstone_count: u64,
    min_timestamp: i64,
    max_timestamp: i64,
    max_local_deletion_time: i32,
}

impl Stats {
    fn timestamp(&mut self, t: i64) {
        self.min_timestamp = self.min_timestamp.min(t);
        self.max_timestamp = self.max_timestamp.max(t);
    }

    fn add_row(&mut self, row: &Row) {
        self.key_count += 1;
        self.cell_count += row.cells.len() as u64;
        if !row.deletion.is_live() {
            self.tombstone_count += 1;
            self.timestamp(row.deletion.marked_at);
            self.max_local_deletion_time = self.max_local_deletion_time.max(row.deletion.local_deletion_time);
        }
        for rt in &row.range_tombstones {
            self.tombstone_count += 1;
            self.timestamp(rt.deletion.marked_at);
            self.max_local_deletion_time = self.max_local_deletion_time.max(rt.deletion.local_deletion_time);
        }
        for c in &row.cells {
            self.timestamp(c.timestamp);
            if matches!(c.kind, CellKind::Tombstone { .. }) {
                self.tombstone_count += 1;
            }
            let ldt = c.local_deletion_time().unwrap_or(i32::MAX);
            self.max_local_deletion_time = self.max_local_deletion_time.max(ldt);
        }
    }
}

/// A run of whole cells of one partition, as indices into its cells and a byte range.
#[derive(Clone, Copy)]
struct Span {
    first: usize,
    last: usize,
    offset: u64,
    size: u64,
}

/// Writes an SSTable under temporary names; [`finish`](SsTableWriter::finish) commits it,
/// [`abort`](SsTableWriter::abort) (or dropping the writer) removes what was written.
pub struct SsTableWriter {
    desc: Descriptor,
    options: WriterOptions,
    data: Option<ChunkWriter>,
    index: Option<BufWriter<File>>,
    /// Bytes written to the Index component.
    index_position: u64,
    /// Entries of the index block being filled (without count and CRC).
    block: Vec<u8>,
    block_entries: u32,
    /// Where each entry of the pending block starts (u32 big-endian each).
    block_starts: Vec<u8>,
    block_first_key: Option<DecoratedKey>,
    summary: Vec<SummaryEntry>,
    filter: BloomFilter,
    first_key: Option<DecoratedKey>,
    last_key: Option<DecoratedKey>,
    stats: Stats,
    /// Scratch: the encoded partition and its column spans.
    partition: Vec<u8>,
    spans: Vec<Span>,
    /// Set once the Statistics component has its final name: from then on the files are an
    /// SSTable and must not be removed by Drop.
    committed: bool,
    /// Set when a write failed half-way: the files no longer match the writer's state, so
    /// nothing more may be appended or committed.
    failed: bool,
}

impl SsTableWriter {
    pub fn create(desc: Descriptor, expected_keys: usize, options: WriterOptions) -> Result<SsTableWriter> {
        let stats_path = desc.path(Component::Statistics);
        options.validate().map_err(|e| e.into_storage(&stats_path))?;
        if stats_path.exists() {
            return Err(SsTableError::AlreadyExists(stats_path.clone()).into_storage(&stats_path));
        }
        let data = ChunkWriter::create(&desc.tmp_path(Component::Data), options.chunk_size, desc.version)?;
        let index_path = desc.tmp_path(Component::Index);
        let index_file = File::options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&index_path)
            .map_err(|e| StorageError::io(&index_path, e))?;
        let mut index = BufWriter::with_capacity(256 * 1024, index_file);
        let mut header = format::header(format::INDEX_MAGIC, desc.version);
        format::seal(&mut header);
        index.write_all(&header).map_err(|e| StorageError::io(&index_path, e))?;
        let filter = BloomFilter::new(expected_keys, options.bloom_fp_chance);
        Ok(SsTableWriter {
            desc,
            options,
            data: Some(data),
            index: Some(index),
            index_position: header.len() as u64,
            block: Vec::new(),
            block_entries: 0,
            block_starts: Vec::new(),
            block_first_key: None,
            summary: Vec::new(),
            filter,
            first_key: None,
            last_key: None,
            stats: Stats {
                key_count: 0,
                cell_count: 0,
                tombstone_count: 0,
                min_timestamp: i64::MAX,
                max_timestamp: i64::MIN,
                max_local_deletion_time: i32::MIN,
            },
            partition: Vec::new(),
            spans: Vec::new(),
            committed: false,
            failed: false,
        })
    }

    pub fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    /// Partitions appended so far.
    pub fn key_count(&self) -> u64 {
        self.stats.key_count
    }

    /// Logical bytes of partition data written so far.
    pub fn data_position(&self) -> u64 {
        self.data.as_ref().map_or(0, ChunkWriter::position)
    }

    /// Appends one partition. Keys must arrive in increasing `DecoratedKey` order, and the row's
    /// cells sorted by the column family's comparator (not checked here: this module does not
    /// know the comparator).
    pub fn append(&mut self, key: &DecoratedKey, row: &Row) -> Result<()> {
        self.check_not_failed()?;
        if let Some(previous) = &self.last_key {
            if key <= previous {
                let e = SsTableError::KeyOutOfOrder { previous: previous.clone(), key: key.clone() };
                return Err(self.caller_error(e));
            }
        }
        check_lengths(key, row).map_err(|e| self.caller_error(e))?;

        self.encode_partition(key, row);
        let Some(data) = self.data.as_mut() else {
            let path = self.desc.tmp_path(Component::Data);
            return Err(StorageError::io(path, std::io::Error::other("writer already finished")));
        };
        let offset = data.position();
        if let Err(e) = data.write(&self.partition) {
            self.failed = true;
            return Err(e);
        }
        if self.partition.len() as u64 > self.options.large_partition_warning {
            warn_large_partition(&self.desc, key, self.partition.len(), self.options.large_partition_warning);
        }

        if self.block_entries == 0 {
            self.block_first_key = Some(key.clone());
        }
        let columns: Vec<format::ColumnBlock> = if self.spans.len() > 1 {
            self.spans
                .iter()
                .filter_map(|s| {
                    Some(format::ColumnBlock {
                        first_name: row.cells.get(s.first)?.name.clone(),
                        last_name: row.cells.get(s.last)?.name.clone(),
                        offset: s.offset,
                        size: s.size,
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        let Ok(start) = u32::try_from(self.block.len()) else {
            // The partition is in Data already: this writer cannot produce a valid SSTable.
            self.failed = true;
            let e = SsTableError::TooLong { what: "index block", len: self.block.len(), max: u32::MAX as usize };
            return Err(self.caller_error(e));
        };
        self.block_starts.extend_from_slice(&start.to_be_bytes());
        format::encode_index_entry(key, offset, self.partition.len() as u64, &columns, &mut self.block);
        self.block_entries += 1;
        if self.block_entries >= self.options.index_interval {
            if let Err(e) = self.write_index_block() {
                self.failed = true;
                return Err(e);
            }
        }

        self.filter.add(&key.key);
        self.stats.add_row(row);
        if self.first_key.is_none() {
            self.first_key = Some(key.clone());
        }
        self.last_key = Some(key.clone());
        Ok(())
    }

    /// Encodes `key` and `row` into `self.partition`, recording in `self.spans` the runs of cells
    /// of about `column_index_size` bytes that become the column index.
    fn encode_partition(&mut self, key: &DecoratedKey, row: &Row) {
        let out = &mut self.partition;
        out.clear();
        self.spans.clear();
        format::put_key(out, key);
        encode_deletion(&row.deletion, out);
        out.extend_from_slice(&(row.range_tombstones.len() as u32).to_be_bytes());
        for rt in &row.range_tombstones {
            encode_range_tombstone(rt, out);
        }
        out.extend_from_slice(&(row.cells.len() as u32).to_be_bytes());
        let target = self.options.column_index_size as usize;
        let mut span_start = out.len();
        let mut span_first = 0;
        for (i, cell) in row.cells.iter().enumerate() {
            encode_cell(cell, out);
            if out.len() - span_start >= target {
                self.spans.push(Span {
                    first: span_first,
                    last: i,
                    offset: span_start as u64,
                    size: (out.len() - span_start) as u64,
                });
                span_start = out.len();
                span_first = i + 1;
            }
        }
        if span_start < out.len() {
            self.spans.push(Span {
                first: span_first,
                last: row.cells.len().saturating_sub(1),
                offset: span_start as u64,
                size: (out.len() - span_start) as u64,
            });
        }
    }

    /// Writes the pending index block (count, entries, CRC) and notes it in the summary.
    fn write_index_block(&mut self) -> Result<()> {
        let path = self.desc.tmp_path(Component::Index);
        let (Some(index), Some(first_key)) = (self.index.as_mut(), self.block_first_key.take()) else {
            return Ok(());
        };
        let count = self.block_entries.to_be_bytes();
        let mut crc = crc32fast::Hasher::new();
        crc.update(&count);
        crc.update(&self.block);
        crc.update(&self.block_starts);
        let io = |e| StorageError::io(&path, e);
        index.write_all(&count).map_err(io)?;
        index.write_all(&self.block).map_err(io)?;
        index.write_all(&self.block_starts).map_err(io)?;
        index.write_all(&crc.finalize().to_be_bytes()).map_err(io)?;
        let size = 4 + self.block.len() as u64 + self.block_starts.len() as u64 + format::CRC_LEN;
        self.summary.push(SummaryEntry { key: first_key, block_offset: self.index_position, block_size: size });
        self.index_position += size;
        self.block.clear();
        self.block_starts.clear();
        self.block_entries = 0;
        Ok(())
    }

    /// Writes the remaining components, makes the SSTable visible atomically and opens it with
    /// the engine's block cache.
    ///
    /// `replay_position` is the commit log position up to which this SSTable holds every write;
    /// `ancestors` the generations it was compacted from (they may be deleted once this returns).
    pub fn finish(
        mut self,
        replay_position: (u64, u64),
        ancestors: Vec<u64>,
        cache: &Arc<BlockCache>,
    ) -> Result<SsTableReader> {
        self.check_not_failed()?;
        let stats_path = self.desc.tmp_path(Component::Statistics);
        let (Some(first_key), Some(last_key)) = (self.first_key.clone(), self.last_key.clone()) else {
            return Err(SsTableError::Empty.into_storage(&stats_path));
        };
        self.write_index_block()?;
        let data_size = self.data_position();
        if let Some(data) = self.data.take() {
            data.finish()?;
        }
        if let Some(mut index) = self.index.take() {
            let path = self.desc.tmp_path(Component::Index);
            index.flush().map_err(|e| StorageError::io(&path, e))?;
            index.get_ref().sync_all().map_err(|e| StorageError::io(&path, e))?;
        }

        let meta = Metadata {
            key_count: self.stats.key_count,
            cell_count: self.stats.cell_count,
            tombstone_count: self.stats.tombstone_count,
            data_size,
            index_size: self.index_position,
            first_key,
            last_key,
            min_timestamp: self.stats.min_timestamp,
            max_timestamp: self.stats.max_timestamp,
            max_local_deletion_time: self.stats.max_local_deletion_time,
            replay_position: ReplayPosition::from(replay_position),
            level: self.options.level,
            ancestors,
        };
        let version = self.desc.version;
        let summary = format::encode_summary(self.options.index_interval, &self.summary, version);
        write_tmp(&self.desc.tmp_path(Component::Summary), &summary)?;
        write_tmp(&self.desc.tmp_path(Component::Filter), &self.filter.encode(version))?;
        write_tmp(&stats_path, &format::encode_metadata(&meta, version))?;

        // IMPORTANT: Statistics is renamed last, after the other renames are durable: a
        // Statistics file under its final name means the SSTable is complete.
        for c in [Component::Data, Component::Index, Component::Summary, Component::Filter] {
            rename(&self.desc, c)?;
        }
        sync_dir(&self.desc.dir)?;
        rename(&self.desc, Component::Statistics)?;
        self.committed = true;
        sync_dir(&self.desc.dir)?;
        SsTableReader::open(self.desc.clone(), cache)
    }

    fn caller_error(&self, e: SsTableError) -> StorageError {
        e.into_storage(&self.desc.tmp_path(Component::Data))
    }

    fn check_not_failed(&self) -> Result<()> {
        if self.failed {
            let path = self.desc.tmp_path(Component::Data);
            return Err(StorageError::io(path, std::io::Error::other("an earlier write of this SSTable failed")));
        }
        Ok(())
    }

    /// Removes everything written so far.
    pub fn abort(self) {
        // Drop does the work.
    }
}

/// Logs one partition over [`WriterOptions::large_partition_warning`]. The key is shown in hex
/// (the writer does not know the key validator), cut after [`LARGE_PARTITION_KEY_SHOWN`] bytes.
fn warn_large_partition(desc: &Descriptor, key: &DecoratedKey, bytes: usize, threshold: u64) {
    let shown = key.key.get(..LARGE_PARTITION_KEY_SHOWN).unwrap_or(&key.key);
    let ellipsis = if shown.len() < key.key.len() { "..." } else { "" };
    tracing::warn!(
        keyspace = %desc.keyspace,
        cf = %desc.cf,
        generation = desc.generation,
        "large partition {}/{}:{}{ellipsis} ({bytes} bytes, over the {threshold}-byte warning threshold)",
        desc.keyspace,
        desc.cf,
        hex::encode(shown),
    );
}

/// Key bytes a large-partition warning shows; keys may be up to 64 KiB.
const LARGE_PARTITION_KEY_SHOWN: usize = 64;

fn write_tmp(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    let _ = fs::remove_file(path);
    format::write_synced(path, bytes)
}

fn rename(desc: &Descriptor, c: Component) -> Result<()> {
    let from = desc.tmp_path(c);
    fs::rename(&from, desc.path(c)).map_err(|e| StorageError::io(&from, e))
}

impl std::fmt::Debug for SsTableWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SsTableWriter")
            .field("descriptor", &self.desc)
            .field("keys", &self.stats.key_count)
            .finish_non_exhaustive()
    }
}

impl Drop for SsTableWriter {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        self.data = None;
        self.index = None;
        for c in Component::ALL {
            for path in [self.desc.tmp_path(c), self.desc.path(c)] {
                if let Err(e) = fs::remove_file(&path) {
                    if e.kind() != std::io::ErrorKind::NotFound {
                        tracing::warn!(path = %path.display(), error = %e, "cannot remove unfinished SSTable file");
                    }
                }
            }
        }
    }
}

/// Refuses lengths the format cannot hold, so a bad row is an error and never a corrupt file.
fn check_lengths(key: &DecoratedKey, row: &Row) -> Result<(), SsTableError> {
    let short = u16::MAX as usize;
    let check = |what, len: usize, max: usize| {
        if len > max {
            Err(SsTableError::TooLong { what, len, max })
        } else {
            Ok(())
        }
    };
    check("row key", key.key.len(), short)?;
    check("token", key.token.as_bytes().len(), short)?;
    check("range tombstone count", row.range_tombstones.len(), u32::MAX as usize)?;
    check("cell count", row.cells.len(), u32::MAX as usize)?;
    for rt in &row.range_tombstones {
        check("range tombstone start", rt.start.len(), short)?;
        check("range tombstone end", rt.end.len(), short)?;
    }
    for c in &row.cells {
        check("column name", c.name.len(), short)?;
        check("column value", c.value.len(), u32::MAX as usize)?;
    }
    Ok(())
}
