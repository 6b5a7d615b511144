#![allow(clippy::unwrap_used)]
// `is_multiple_of` is newer than the workspace's rust-version.
#![allow(clippy::manual_is_multiple_of)]

use std::cell::Cell as StdCell;
use std::fs;
use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;

use super::bloom::{murmur3_x64_128, BloomFilter};
use super::*;
use crate::block_cache::{BlockCache, DiskAccess};
use crate::data::{Cell, DeletionTime, RangeTombstone, Row};
use crate::dht::Token;

fn key(i: u32) -> DecoratedKey {
    // Tokens that sort like the numbers, keys that do not: order must come from the token.
    DecoratedKey::new(Token::from_bytes(&i.to_be_bytes()), format!("k{}", u32::MAX - i).into_bytes())
}

/// A varied partition: plain, expiring and deleted cells, range tombstones, and rows that are
/// only a row deletion.
fn row_for(i: u32) -> Row {
    if i % 11 == 0 {
        return Row { deletion: DeletionTime::new(i as i64 * 10, 1000 + i as i32), ..Row::new() };
    }
    let mut row = Row::new();
    for c in 0..(i % 6) {
        let name = format!("col{c:03}").into_bytes();
        let cell = match (i + c) % 4 {
            0 => Cell::expiring(name, format!("v{i}"), i as i64 + 1, 60, 5000),
            1 => Cell::tombstone(name, i as i64 + 2, 4000),
            _ => Cell::live(name, vec![i as u8; (c * 10) as usize], i as i64 + 3),
        };
        row.cells.push(cell);
    }
    if i % 7 == 0 {
        row.range_tombstones.push(RangeTombstone {
            start: b"a".to_vec(),
            end: b"c".to_vec(),
            deletion: DeletionTime::new(i as i64, 3000),
        });
    }
    if i % 13 == 0 {
        row.deletion = DeletionTime::new(1, 2);
    }
    row
}

fn small_options() -> WriterOptions {
    WriterOptions { index_interval: 16, chunk_size: 1024, ..WriterOptions::default() }
}

/// A block cache of the default size for one test's readers.
fn cache() -> Arc<BlockCache> {
    Arc::new(BlockCache::new(crate::block_cache::DEFAULT_CAPACITY))
}

fn write(dir: &Path, generation: u64, keys: impl Iterator<Item = u32>, options: WriterOptions) -> SsTableReader {
    write_cached(dir, generation, keys, options, &cache())
}

fn write_cached(
    dir: &Path,
    generation: u64,
    keys: impl Iterator<Item = u32>,
    options: WriterOptions,
    cache: &Arc<BlockCache>,
) -> SsTableReader {
    let desc = Descriptor::new(dir, "ks", "cf", generation);
    let keys: Vec<u32> = keys.collect();
    let mut w = SsTableWriter::create(desc, keys.len(), options).unwrap();
    for i in keys {
        w.append(&key(i), &row_for(i)).unwrap();
    }
    w.finish((7, 42), vec![], cache).unwrap()
}

fn corrupt_detail(e: &StorageError) -> (&Option<std::path::PathBuf>, &CorruptData) {
    match e {
        StorageError::Corrupt { file, detail } => (file, detail),
        other => panic!("expected a corruption error, got {other:?}"),
    }
}

fn flip_byte(path: &Path, at: usize) {
    let mut bytes = fs::read(path).unwrap();
    bytes[at] ^= 0x5a;
    fs::write(path, bytes).unwrap();
}

#[test]
fn round_trip_of_many_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let n = 3000u32;
    let reader = write(dir.path(), 1, (0..n).map(|i| i * 2), small_options());

    let scanned: Vec<_> = reader.scan(None).unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(scanned.len(), n as usize);
    for (j, (k, row)) in scanned.iter().enumerate() {
        let i = j as u32 * 2;
        assert_eq!(*k, key(i));
        assert_eq!(*row, row_for(i), "partition {i}");
    }
    for i in (0..n).map(|i| i * 2) {
        assert_eq!(reader.get(&key(i), &AllCells).unwrap(), Some(row_for(i)), "get {i}");
    }

    let m = reader.metadata();
    let rows: Vec<Row> = (0..n).map(|i| row_for(i * 2)).collect();
    assert_eq!(m.key_count, n as u64);
    assert_eq!(m.cell_count, rows.iter().map(|r| r.cells.len() as u64).sum::<u64>());
    let tombstones: u64 = rows
        .iter()
        .map(|r| {
            r.cells.iter().filter(|c| matches!(c.kind, crate::data::CellKind::Tombstone { .. })).count() as u64
                + r.range_tombstones.len() as u64
                + u64::from(!r.deletion.is_live())
        })
        .sum();
    assert_eq!(m.tombstone_count, tombstones);
    assert_eq!(m.first_key, key(0));
    assert_eq!(m.last_key, key((n - 1) * 2));
    let timestamps = || {
        rows.iter().flat_map(|r| {
            let deletions = [r.deletion].into_iter().chain(r.range_tombstones.iter().map(|rt| rt.deletion));
            r.cells.iter().map(|c| c.timestamp).chain(deletions.filter(|d| !d.is_live()).map(|d| d.marked_at))
        })
    };
    assert_eq!(m.min_timestamp, timestamps().min().unwrap());
    assert_eq!(m.min_timestamp, 0); // the row deletion of key 0
    assert_eq!(m.max_timestamp, timestamps().max().unwrap());
    assert_eq!(m.max_local_deletion_time, i32::MAX); // live cells exist
    assert_eq!(m.replay_position, ReplayPosition { segment_id: 7, offset: 42 });
    assert!(m.ancestors.is_empty());
    assert!(reader.data_size() > m.data_size); // chunk CRCs and header on top
    assert!(reader.disk_size() > reader.data_size());

    // The summary samples every 16th key.
    let samples = reader.sample_keys();
    assert_eq!(samples.len(), (n as usize).div_ceil(16));
    assert_eq!(samples[1], key(32));

    // A reopened reader sees the same.
    let again = SsTableReader::open(reader.descriptor().clone(), &cache()).unwrap();
    assert_eq!(again.metadata(), reader.metadata());
    assert_eq!(again.get(&key(1000), &AllCells).unwrap(), Some(row_for(1000)));
}

/// A block cache of the default size whose readers reach their files as `access` says.
fn cache_with(access: DiskAccess) -> Arc<BlockCache> {
    Arc::new(BlockCache::with_disk_access(crate::block_cache::DEFAULT_CAPACITY, access))
}

#[test]
fn repeated_reads_come_from_the_key_and_block_caches() {
    for access in [DiskAccess::Standard, DiskAccess::MmapIndexOnly, DiskAccess::Mmap] {
        repeated_reads_are_cached(access);
    }
}

fn repeated_reads_are_cached(access: DiskAccess) {
    let dir = tempfile::tempdir().unwrap();
    let cache = cache_with(access);
    let reader = write_cached(dir.path(), 1, (0..500).map(|i| i * 2), small_options(), &cache);
    let mut hits = Vec::new();
    for pass in 0..2 {
        hits.push(cache.hits_and_misses().0);
        for i in (0..500).map(|i| i * 2) {
            assert_eq!(reader.get(&key(i), &AllCells).unwrap(), Some(row_for(i)), "{access:?}: pass {pass}, get {i}");
        }
    }
    let second_pass = cache.hits_and_misses().0 - hits[1];
    if access.maps_data() {
        // Each key's entry is found; its Data chunk is read in place, never cached.
        assert_eq!(second_pass, 500, "{hits:?}");
    } else {
        // Each key's entry and its Data chunk are found.
        assert!(second_pass >= 2 * 500, "{access:?}: {hits:?}");
    }
    for i in (0..500).map(|i| i * 2 + 1) {
        assert_eq!(reader.get(&key(i), &AllCells).unwrap(), None, "absent key {i}");
    }
    // Entries belong to one SSTable: another one with other keys is not answered from them.
    let other = write(dir.path(), 2, (0..500).map(|i| i * 2 + 1), small_options());
    assert_eq!(other.get(&key(2), &AllCells).unwrap(), None);
    assert_eq!(other.get(&key(3), &AllCells).unwrap(), Some(row_for(3)));
}

#[test]
fn absent_keys_read_as_none() {
    let dir = tempfile::tempdir().unwrap();
    let reader = write(dir.path(), 1, (1..2000).map(|i| i * 2), small_options());
    for i in (0..2000).map(|i| i * 2 + 1) {
        assert_eq!(reader.get(&key(i), &AllCells).unwrap(), None, "key {i}");
    }
    assert!(!reader.might_contain(&key(0)), "before the first key");
    assert_eq!(reader.get(&key(0), &AllCells).unwrap(), None);
    assert!(!reader.might_contain(&key(5000)), "after the last key");
    assert_eq!(reader.get(&key(5000), &AllCells).unwrap(), None);
    // Same token, different key bytes: not the same partition.
    let twin = DecoratedKey::new(key(100).token, b"other".to_vec());
    assert_eq!(reader.get(&twin, &AllCells).unwrap(), None);
}

#[test]
fn murmur3_matches_the_reference_implementation() {
    for len in [0usize, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100] {
        let data: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
        let expected = murmur3::murmur3_x64_128(&mut &data[..], 0).unwrap();
        let (h1, h2) = murmur3_x64_128(&data, 0);
        assert_eq!(((h2 as u128) << 64) | h1 as u128, expected, "length {len}");
    }
}

#[test]
fn bloom_filter_has_no_false_negatives_and_few_false_positives() {
    let mut f = BloomFilter::new(10_000, 0.01);
    for i in 0..10_000u32 {
        f.add(format!("key{i}").as_bytes());
    }
    for i in 0..10_000u32 {
        assert!(f.might_contain(format!("key{i}").as_bytes()), "false negative for key{i}");
    }
    let fp = (10_000..110_000u32).filter(|i| f.might_contain(format!("key{i}").as_bytes())).count();
    assert!(fp < 2000, "false positive rate {}% for a 1% filter", fp as f64 / 1000.0);

    let encoded = f.encode(FormatVersion::CURRENT);
    let decoded = BloomFilter::decode(&encoded[5..encoded.len() - 4]).unwrap();
    assert_eq!(decoded, f);
}

#[test]
fn reader_rejects_keys_through_its_filter() {
    let dir = tempfile::tempdir().unwrap();
    let reader = write(dir.path(), 1, (0..5000).map(|i| i * 2), WriterOptions::default());
    for i in (0..5000).map(|i| i * 2) {
        assert!(reader.might_contain(&key(i)));
    }
    let fp = (0..4999).filter(|i| reader.might_contain(&key(i * 2 + 1))).count();
    assert!(fp < 150, "{fp} false positives among 4999 absent keys");
}

#[test]
fn scan_starts_at_the_first_key_not_below_start() {
    let dir = tempfile::tempdir().unwrap();
    let reader = write(dir.path(), 1, (0..500).map(|i| i * 3), small_options());
    let keys_from = |start: Option<&DecoratedKey>| -> Vec<DecoratedKey> {
        reader.scan(start).unwrap().map(|r| r.unwrap().0).collect()
    };
    // A present start key.
    let from = keys_from(Some(&key(600)));
    assert_eq!(from.first(), Some(&key(600)));
    assert_eq!(from.len(), 300);
    // An absent start key, in the middle of an index block and at a block boundary.
    assert_eq!(keys_from(Some(&key(601))).first(), Some(&key(603)));
    assert_eq!(keys_from(Some(&key(16 * 3 - 1))).first(), Some(&key(16 * 3)));
    // Outside the range.
    assert_eq!(keys_from(Some(&key(0))).len(), 500);
    assert!(keys_from(Some(&key(5000))).is_empty());
    assert_eq!(keys_from(None).len(), 500);
    // Rows come whole.
    let (k, row) = reader.scan(Some(&key(601))).unwrap().next().unwrap().unwrap();
    assert_eq!((k, row), (key(603), row_for(603)));
}

/// Wants the blocks that may hold `name`, counting how often it is asked.
struct WantsName<'a> {
    name: &'a [u8],
    asked: StdCell<usize>,
}

impl CellFilter for WantsName<'_> {
    fn wants_block(&self, first_name: &[u8], last_name: &[u8]) -> bool {
        self.asked.set(self.asked.get() + 1);
        first_name <= self.name && self.name <= last_name
    }
}

#[test]
fn large_partition_reads_only_wanted_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let desc = Descriptor::new(dir.path(), "ks", "cf", 1);
    let mut w = SsTableWriter::create(desc, 3, WriterOptions::default()).unwrap();
    let mut big = Row::new();
    big.deletion = DeletionTime::new(5, 6);
    big.range_tombstones.push(RangeTombstone {
        start: b"c1".to_vec(),
        end: b"c2".to_vec(),
        deletion: DeletionTime::new(9, 9),
    });
    for c in 0..50_000u32 {
        big.cells.push(Cell::live(format!("c{c:06}"), format!("value{c}"), c as i64));
    }
    w.append(&key(1), &row_for(1)).unwrap();
    w.append(&key(2), &big).unwrap();
    w.append(&key(3), &row_for(3)).unwrap();
    let reader = w.finish((0, 0), vec![], &cache()).unwrap();

    assert_eq!(reader.get(&key(2), &AllCells).unwrap(), Some(big.clone()));
    let filter = WantsName { name: b"c025000", asked: StdCell::new(0) };
    let part = reader.get(&key(2), &filter).unwrap().unwrap();
    assert!(filter.asked.get() > 10, "the column index has many blocks, asked {}", filter.asked.get());
    assert_eq!(part.deletion, big.deletion);
    assert_eq!(part.range_tombstones, big.range_tombstones);
    assert!(!part.cells.is_empty() && part.cells.len() < 5000, "{} cells returned", part.cells.len());
    assert!(part.cells.iter().any(|c| c.name == b"c025000"));
    // The cells returned are one contiguous run of the partition.
    let start = big.cells.iter().position(|c| c.name == part.cells[0].name).unwrap();
    assert_eq!(part.cells[..], big.cells[start..start + part.cells.len()]);

    // A filter wanting nothing still gets the header.
    struct Nothing;
    impl CellFilter for Nothing {
        fn wants_block(&self, _: &[u8], _: &[u8]) -> bool {
            false
        }
    }
    let header = reader.get(&key(2), &Nothing).unwrap().unwrap();
    assert!(header.cells.is_empty());
    assert_eq!(header.deletion, big.deletion);

    // Neighbours and a full scan are unaffected.
    assert_eq!(reader.get(&key(3), &AllCells).unwrap(), Some(row_for(3)));
    let all: Vec<_> = reader.scan(None).unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(all.len(), 3);
    assert_eq!(all[1].1, big);
}

#[test]
fn out_of_order_and_duplicate_keys_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let desc = Descriptor::new(dir.path(), "ks", "cf", 1);
    let mut w = SsTableWriter::create(desc, 10, small_options()).unwrap();
    w.append(&key(5), &row_for(5)).unwrap();
    for bad in [key(4), key(5)] {
        let err = w.append(&bad, &row_for(4)).unwrap_err();
        assert!(
            matches!(SsTableError::of(&err), Some(SsTableError::KeyOutOfOrder { previous, key: k }) if *previous == key(5) && *k == bad),
            "{err:?}"
        );
    }
    // The rejected appends left no trace: the SSTable is valid.
    w.append(&key(6), &row_for(6)).unwrap();
    let reader = w.finish((0, 0), vec![], &cache()).unwrap();
    let keys: Vec<_> = reader.scan(None).unwrap().map(|r| r.unwrap().0).collect();
    assert_eq!(keys, vec![key(5), key(6)]);
}

#[test]
fn oversized_names_are_refused_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let desc = Descriptor::new(dir.path(), "ks", "cf", 1);
    let mut w = SsTableWriter::create(desc, 10, small_options()).unwrap();
    let mut row = Row::new();
    row.cells.push(Cell::live(vec![b'x'; 70_000], "v", 1));
    let err = w.append(&key(1), &row).unwrap_err();
    assert!(matches!(SsTableError::of(&err), Some(SsTableError::TooLong { what: "column name", .. })), "{err:?}");
}

#[test]
fn corrupt_data_chunk_spoils_only_its_partitions() {
    for access in [DiskAccess::Standard, DiskAccess::Mmap] {
        corrupt_data_chunk_is_found(access);
    }
}

fn corrupt_data_chunk_is_found(access: DiskAccess) {
    let dir = tempfile::tempdir().unwrap();
    let reader = write(dir.path(), 1, 0..2000, small_options());
    let data_path = reader.descriptor().path(Component::Data);
    let chunk_size = 1024usize;
    let bad_chunk = 5usize;
    let chunk_pos = 13 + bad_chunk * (chunk_size + 4);
    flip_byte(&data_path, chunk_pos + 100);

    // Opening does not read chunks; reads that touch the bad chunk fail, the rest succeed.
    let reader = SsTableReader::open(reader.descriptor().clone(), &cache_with(access)).unwrap();
    let (mut good, mut bad) = (0, 0);
    // Twice: a mapped chunk that failed its check is checked again, never trusted.
    for i in (0..2000).chain(0..2000) {
        match reader.get(&key(i), &AllCells) {
            Ok(row) => {
                assert_eq!(row, Some(row_for(i)));
                good += 1;
            }
            Err(e) => {
                let (file, detail) = corrupt_detail(&e);
                assert_eq!(file.as_deref(), Some(data_path.as_path()));
                assert!(
                    matches!(detail, CorruptData::ChecksumMismatch { offset, .. } if *offset == chunk_pos as u64),
                    "{detail:?}"
                );
                bad += 1;
            }
        }
    }
    assert!((2..80).contains(&bad), "{access:?}: {bad} reads failed");
    assert!(good > 2 * 1900, "{access:?}");
    assert!(reader.get(&key(0), &AllCells).is_ok());
    // A scan returns every partition before the bad chunk, then the error, then stops.
    let scanned: Vec<_> = reader.scan(None).unwrap().collect();
    let first_bad = (0..2000).find(|&i| reader.get(&key(i), &AllCells).is_err()).unwrap();
    assert_eq!(scanned.len(), first_bad as usize + 1);
    for (i, item) in scanned.iter().enumerate().take(first_bad as usize) {
        assert_eq!(item.as_ref().unwrap(), &(key(i as u32), row_for(i as u32)));
    }
    assert!(e_is_corrupt(scanned.into_iter().last().and_then(|r| r.err())));
    // A scan starting after the bad chunk does not touch it.
    let last_bad = (0..2000).rev().find(|&i| reader.get(&key(i), &AllCells).is_err()).unwrap();
    assert!(reader.scan(Some(&key(last_bad + 1))).unwrap().all(|r| r.is_ok()));
}

fn e_is_corrupt(e: Option<StorageError>) -> bool {
    matches!(e, Some(StorageError::Corrupt { .. }))
}

#[test]
fn corrupt_components_are_detected_on_open() {
    for (component, at) in [
        (Component::Index, 200),
        (Component::Statistics, 20),
        (Component::Data, 6), // the header's chunk size
    ] {
        let dir = tempfile::tempdir().unwrap();
        let reader = write(dir.path(), 1, 0..500, small_options());
        let desc = reader.descriptor().clone();
        drop(reader);
        flip_byte(&desc.path(component), at);
        let err = SsTableReader::open(desc.clone(), &cache()).unwrap_err();
        let (file, detail) = corrupt_detail(&err);
        assert_eq!(file.as_deref(), Some(desc.path(component).as_path()), "{component:?}: {err}");
        assert!(matches!(detail, CorruptData::ChecksumMismatch { .. }), "{component:?}: {detail:?}");
    }
}

/// Every key of `0..n` is found, with its row, through `reader`.
fn assert_all_readable(reader: &SsTableReader, n: u32) {
    for i in 0..n {
        let row = reader.get(&key(i), &AllCells).unwrap();
        assert_eq!(row.as_ref(), Some(&row_for(i)), "key {i}");
    }
}

#[test]
fn damaged_or_missing_summary_and_filter_are_rebuilt_from_the_index() {
    enum Damage {
        Flip(usize),
        Remove,
        Truncate,
    }
    for (components, damage) in [
        (&[Component::Summary][..], Damage::Flip(12)),
        (&[Component::Filter][..], Damage::Flip(40)),
        (&[Component::Summary][..], Damage::Remove),
        (&[Component::Filter][..], Damage::Truncate),
        (&[Component::Summary, Component::Filter][..], Damage::Remove),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let reader = write(dir.path(), 1, 0..500, small_options());
        let desc = reader.descriptor().clone();
        drop(reader);
        let original_summary = fs::read(desc.path(Component::Summary)).unwrap();
        for &c in components {
            let path = desc.path(c);
            match damage {
                Damage::Flip(at) => flip_byte(&path, at),
                Damage::Remove => fs::remove_file(&path).unwrap(),
                Damage::Truncate => fs::write(&path, b"").unwrap(),
            }
        }
        let reader = SsTableReader::open(desc.clone(), &cache()).unwrap();
        assert_all_readable(&reader, 500);
        assert!(!reader.might_contain(&key(600)), "key 600 lies past the last key");
        // The rebuilt summary is the one the writer made; the rebuilt files pass the checks
        // of a later open, and no temporary file is left.
        assert_eq!(fs::read(desc.path(Component::Summary)).unwrap(), original_summary);
        for &c in components {
            assert!(!desc.tmp_path(c).exists(), "{c:?}'s temporary file is left");
        }
        let format = desc.version;
        format::read_sealed(&desc.path(Component::Summary), format::SUMMARY_MAGIC, format).unwrap();
        format::read_sealed(&desc.path(Component::Filter), format::FILTER_MAGIC, format).unwrap();
        drop(reader);
        assert_all_readable(&SsTableReader::open(desc, &cache()).unwrap(), 500);
    }
}

#[test]
fn a_damaged_index_is_reported_even_when_the_summary_must_be_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let desc = write(dir.path(), 1, 0..500, small_options()).descriptor().clone();
    let summary = fs::read(desc.path(Component::Summary)).unwrap();
    flip_byte(&desc.path(Component::Summary), 12);
    flip_byte(&desc.path(Component::Index), 200);
    let err = SsTableReader::open(desc.clone(), &cache()).unwrap_err();
    let (file, detail) = corrupt_detail(&err);
    assert_eq!(file.as_deref(), Some(desc.path(Component::Index).as_path()), "{err}");
    assert!(matches!(detail, CorruptData::ChecksumMismatch { .. }), "{detail:?}");
    // Nothing was rebuilt from the damaged Index: the damaged Summary is left as it was.
    let mut damaged = summary;
    damaged[12] ^= 0x5a;
    assert_eq!(fs::read(desc.path(Component::Summary)).unwrap(), damaged);
}

#[test]
fn truncated_index_is_detected_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let desc = write(dir.path(), 1, 0..500, small_options()).descriptor().clone();
    let path = desc.path(Component::Index);
    let bytes = fs::read(&path).unwrap();
    fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
    let err = SsTableReader::open(desc, &cache()).unwrap_err();
    assert_eq!(corrupt_detail(&err).0.as_deref(), Some(path.as_path()));
}

#[test]
fn unknown_versions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let desc = write(dir.path(), 1, 0..50, small_options()).descriptor().clone();
    // In a header.
    let path = desc.path(Component::Statistics);
    let mut bytes = fs::read(&path).unwrap();
    bytes[4] = 99;
    fs::write(&path, bytes).unwrap();
    let err = SsTableReader::open(desc, &cache()).unwrap_err();
    assert!(matches!(corrupt_detail(&err).1, CorruptData::InvalidFormatVersion(99)), "{err}");
    assert!(matches!(FormatVersion::try_from(0), Err(CorruptData::InvalidFormatVersion(0))));
    assert_eq!(FormatVersion::try_from(1), Ok(FormatVersion::A));
    assert_eq!(FormatVersion::try_from(2), Ok(FormatVersion::B));
    assert!(matches!(FormatVersion::try_from(3), Err(CorruptData::InvalidFormatVersion(3))));

    // In a file name: listing refuses rather than skip data it cannot read.
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("ks-cf-z-3-Statistics.db"), b"").unwrap();
    let err = list_sstables(dir.path()).unwrap_err();
    assert!(matches!(corrupt_detail(&err).1, CorruptData::InvalidFormatVersion(26)), "{err}");
}

#[test]
fn file_names_round_trip() {
    let desc = Descriptor::new("/x", "Keyspace1", "Standard-1", 42);
    assert_eq!(desc.file_name(Component::Data), "Keyspace1-Standard-1-b-42-Data.db");
    let parsed = Descriptor::parse(Path::new("/x"), "Keyspace1-Standard-1-b-42-Data.db").unwrap().unwrap();
    assert_eq!((parsed.desc, parsed.component, parsed.tmp), (desc.clone(), Component::Data, false));
    let parsed = Descriptor::parse(Path::new("/x"), "Keyspace1-Standard-1-b-42-Index.db.tmp").unwrap().unwrap();
    assert_eq!((parsed.desc, parsed.component, parsed.tmp), (desc.clone(), Component::Index, true));
    // Files of the first format keep their name and are read as such.
    let parsed = Descriptor::parse(Path::new("/x"), "Keyspace1-Standard-1-a-42-Data.db").unwrap().unwrap();
    assert_eq!(parsed.desc, Descriptor { version: FormatVersion::A, ..desc });
    for other in ["CommitLog-1-2.log", "ks-cf-a-x-Data.db", "ks-cf-a-1-Other.db", "ks-a-1-Data.db", "readme"] {
        assert!(Descriptor::parse(Path::new("/x"), other).unwrap().is_none(), "{other}");
    }
}

#[test]
fn unfinished_writers_leave_nothing_visible() {
    let dir = tempfile::tempdir().unwrap();
    let complete = write(dir.path(), 1, 0..100, small_options());

    // A writer that crashed (never dropped) leaves temp files.
    let mut crashed = SsTableWriter::create(Descriptor::new(dir.path(), "ks", "cf", 2), 10, small_options()).unwrap();
    crashed.append(&key(1), &row_for(1)).unwrap();
    std::mem::forget(crashed);
    // A crash in the middle of the renames leaves final names without Statistics.
    let half = Descriptor::new(dir.path(), "ks", "cf", 3);
    fs::copy(complete.descriptor().path(Component::Data), half.path(Component::Data)).unwrap();
    fs::copy(complete.descriptor().path(Component::Index), half.path(Component::Index)).unwrap();
    // Someone else's file stays.
    fs::write(dir.path().join("notes.txt"), b"keep me").unwrap();

    assert_eq!(list_sstables(dir.path()).unwrap(), vec![complete.descriptor().clone()]);
    assert!(dir.path().join("ks-cf-b-2-Data.db.tmp").exists());
    cleanup_leftovers(dir.path()).unwrap();
    let mut names: Vec<String> =
        fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    let mut expected: Vec<String> = Component::ALL.iter().map(|c| complete.descriptor().file_name(*c)).collect();
    expected.push("notes.txt".into());
    expected.sort();
    assert_eq!(names, expected);
    assert_eq!(complete.get(&key(5), &AllCells).unwrap(), Some(row_for(5)));
}

#[test]
fn abort_and_empty_finish_remove_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = SsTableWriter::create(Descriptor::new(dir.path(), "ks", "cf", 1), 10, small_options()).unwrap();
    w.append(&key(1), &row_for(1)).unwrap();
    assert!(fs::read_dir(dir.path()).unwrap().count() > 0);
    w.abort();
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);

    let w = SsTableWriter::create(Descriptor::new(dir.path(), "ks", "cf", 2), 10, small_options()).unwrap();
    let err = w.finish((0, 0), vec![], &cache()).unwrap_err();
    assert!(matches!(SsTableError::of(&err), Some(SsTableError::Empty)), "{err:?}");
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn writer_refuses_bad_options_and_existing_tables() {
    let dir = tempfile::tempdir().unwrap();
    let desc = Descriptor::new(dir.path(), "ks", "cf", 1);
    for options in [
        WriterOptions { index_interval: 0, ..WriterOptions::default() },
        WriterOptions { bloom_fp_chance: 1.5, ..WriterOptions::default() },
        WriterOptions { chunk_size: 0, ..WriterOptions::default() },
    ] {
        let err = SsTableWriter::create(desc.clone(), 10, options).unwrap_err();
        assert!(matches!(SsTableError::of(&err), Some(SsTableError::InvalidOption { .. })), "{err:?}");
    }
    write(dir.path(), 1, 0..3, small_options());
    let err = SsTableWriter::create(desc, 10, small_options()).unwrap_err();
    assert!(matches!(SsTableError::of(&err), Some(SsTableError::AlreadyExists(_))), "{err:?}");
}

#[test]
fn cleanup_removes_compaction_inputs_once_the_output_is_committed() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), 1, 0..10, small_options());
    write(dir.path(), 2, 10..20, small_options());
    let other_cf = Descriptor::new(dir.path(), "ks", "other", 1);
    let mut w = SsTableWriter::create(other_cf.clone(), 10, small_options()).unwrap();
    w.append(&key(1), &row_for(1)).unwrap();
    w.finish((0, 0), vec![], &cache()).unwrap();

    let mut w = SsTableWriter::create(Descriptor::new(dir.path(), "ks", "cf", 3), 20, small_options()).unwrap();
    for i in 0..20 {
        w.append(&key(i), &row_for(i)).unwrap();
    }
    let merged = w.finish((1, 2), vec![1, 2], &cache()).unwrap();
    assert_eq!(merged.metadata().ancestors, vec![1, 2]);
    assert_eq!(list_sstables(dir.path()).unwrap().len(), 4);

    cleanup_leftovers(dir.path()).unwrap();
    let left = list_sstables(dir.path()).unwrap();
    // Ordered by keyspace, column family, generation.
    assert_eq!(left, vec![merged.descriptor().clone(), other_cf]);
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 10);
}

#[test]
fn delete_files_removes_every_component() {
    let dir = tempfile::tempdir().unwrap();
    let reader = write(dir.path(), 1, 0..100, small_options());
    reader.delete_files().unwrap();
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    // Open files outlive their names.
    assert_eq!(reader.get(&key(3), &AllCells).unwrap(), Some(row_for(3)));
}

#[test]
fn concurrent_reads_share_one_reader() {
    let dir = tempfile::tempdir().unwrap();
    let reader = Arc::new(write(dir.path(), 1, 0..4000, small_options()));
    let threads: Vec<_> = (0..4u32)
        .map(|t| {
            let reader = Arc::clone(&reader);
            std::thread::spawn(move || {
                for i in (t..4000).step_by(4) {
                    assert_eq!(reader.get(&key(i), &AllCells).unwrap(), Some(row_for(i)));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

fn arb_cell() -> impl Strategy<Value = Cell> {
    (prop::collection::vec(any::<u8>(), 0..40), any::<i64>(), 0u8..3, any::<i32>(), any::<i64>()).prop_map(
        |(value, ts, kind, a, b)| {
            let kind = match kind {
                0 => crate::data::CellKind::Live,
                1 => crate::data::CellKind::Expiring { ttl: a, expires_at: b },
                _ => crate::data::CellKind::Tombstone { local_deletion_time: a },
            };
            Cell { name: Vec::new(), value, timestamp: ts, kind }
        },
    )
}

fn arb_row() -> impl Strategy<Value = Row> {
    (
        prop::option::of((any::<i64>(), any::<i32>())),
        prop::collection::vec((prop::collection::vec(any::<u8>(), 0..8), any::<i64>()), 0..3),
        prop::collection::vec(arb_cell(), 0..30),
    )
        .prop_map(|(deletion, rts, cells)| Row {
            deletion: deletion.map_or(DeletionTime::LIVE, |(m, l)| DeletionTime::new(m, l)),
            range_tombstones: rts
                .into_iter()
                .map(|(start, m)| RangeTombstone { end: start.clone(), start, deletion: DeletionTime::new(m, 1) })
                .collect(),
            cells: cells
                .into_iter()
                .enumerate()
                .map(|(i, c)| Cell { name: format!("n{i:04}").into_bytes(), ..c })
                .collect(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn proptest_round_trip(
        rows in prop::collection::btree_map(prop::collection::vec(any::<u8>(), 0..12), arb_row(), 1..60),
        chunk_size in 64u32..2048,
        interval in 1u32..8,
        column_index_size in 64u32..1024,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let options = WriterOptions { index_interval: interval, chunk_size, column_index_size, ..WriterOptions::default() };
        let mut w = SsTableWriter::create(Descriptor::new(dir.path(), "ks", "cf", 1), rows.len(), options).unwrap();
        let keyed: Vec<(DecoratedKey, Row)> =
            rows.into_iter().map(|(k, r)| (DecoratedKey::new(Token::from_bytes(&k), k), r)).collect();
        for (k, r) in &keyed {
            w.append(k, r).unwrap();
        }
        let reader = w.finish((0, 0), vec![], &cache()).unwrap();
        for (k, r) in &keyed {
            prop_assert_eq!(reader.get(k, &AllCells).unwrap(), Some(r.clone()));
        }
        let scanned: Vec<_> = reader.scan(None).unwrap().map(|r| r.unwrap()).collect();
        prop_assert_eq!(&scanned, &keyed);
        let mid = &keyed[keyed.len() / 2].0;
        let from_mid: Vec<_> = reader.scan(Some(mid)).unwrap().map(|r| r.unwrap()).collect();
        prop_assert_eq!(&from_mid[..], &keyed[keyed.len() / 2..]);
    }
}

#[test]
fn counter_cells_round_trip_and_first_format_files_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let node = uuid::Uuid::from_bytes([7; 16]);
    let mut row = Row::new();
    row.cells.push(Cell::counter("hits", crate::counter::single(node, 3, 42), 99));
    let desc = Descriptor::new(dir.path(), "ks", "cf", 1);
    assert_eq!(desc.version, FormatVersion::B);
    let mut w = SsTableWriter::create(desc, 1, small_options()).unwrap();
    w.append(&key(1), &row).unwrap();
    let reader = w.finish((0, 0), vec![], &cache()).unwrap();
    assert_eq!(reader.get(&key(1), &AllCells).unwrap(), Some(row));

    // A writer of the first format still works (its files are what older nodes left).
    let old = Descriptor { version: FormatVersion::A, ..Descriptor::new(dir.path(), "ks", "cf", 2) };
    let mut w = SsTableWriter::create(old.clone(), 1, small_options()).unwrap();
    w.append(&key(2), &row_for(2)).unwrap();
    w.finish((0, 0), vec![], &cache()).unwrap();
    assert!(dir.path().join("ks-cf-a-2-Data.db").exists());
    let reopened = SsTableReader::open(old, &cache()).unwrap();
    assert_eq!(reopened.get(&key(2), &AllCells).unwrap(), Some(row_for(2)));
}
