//! Golden files of released on-disk formats: SSTable format `a` and commit log format 1, written
//! by the build of commit a3b56a4 (before the expiry became 64-bit), must still read, cell for
//! cell, after every later format change.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use model::data::{Cell, DeletionTime, RangeTombstone, Row};
use model::dht::{DecoratedKey, Token};
use model::mutation::decode_record;
use storage::block_cache::{BlockCache, DEFAULT_CAPACITY};
use storage::commitlog::CommitLog;
use storage::sstable::{list_sstables, FormatVersion, SsTableReader};
use uuid::Uuid;

/// The column family id the golden commit log records carry.
const CF_ID: Uuid = Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures")
}

/// The partitions both golden files hold: a plain, an expiring and a deleted cell, a range
/// tombstone, and a partition that is only a row deletion.
fn golden_rows() -> Vec<(DecoratedKey, Row)> {
    let mut first = Row::new();
    first.cells.push(Cell::live(b"a".to_vec(), b"plain".to_vec(), 10));
    first.cells.push(Cell::expiring(b"b".to_vec(), b"expiring".to_vec(), 11, 60, 1_700_000_000));
    first.cells.push(Cell::tombstone(b"c".to_vec(), 12, 1_700_000_001));
    first.range_tombstones.push(RangeTombstone {
        start: b"d".to_vec(),
        end: b"f".to_vec(),
        deletion: DeletionTime::new(13, 1_700_000_002),
    });
    let second = Row { deletion: DeletionTime::new(14, 1_700_000_003), ..Row::new() };
    vec![
        (DecoratedKey::new(Token::from_bytes(b"k1"), b"k1".to_vec()), first),
        (DecoratedKey::new(Token::from_bytes(b"k2"), b"k2".to_vec()), second),
    ]
}

/// A copy of fixture directory `name` (reading must not depend on writing next to the files).
fn copy_of(name: &str) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixtures().join(name)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), copy.path().join(entry.file_name())).unwrap();
    }
    copy
}

#[test]
fn sstable_format_a_still_reads() {
    let dir = copy_of("sstable-a");
    let descs = list_sstables(dir.path()).unwrap();
    assert_eq!(descs.len(), 1, "{descs:?}");
    let desc = descs.into_iter().next().unwrap();
    assert_eq!(desc.version, FormatVersion::A);
    let reader = SsTableReader::open(desc, &Arc::new(BlockCache::new(DEFAULT_CAPACITY))).unwrap();
    let rows: Vec<(DecoratedKey, Row)> = reader.scan(None).unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(rows, golden_rows());
}

#[test]
fn commit_log_format_1_still_replays() {
    let dir = copy_of("commitlog-1");
    let mut replayed = Vec::new();
    let report = CommitLog::replay(dir.path(), |_, bytes| {
        let record = decode_record(bytes).unwrap();
        assert_eq!(record.updates.len(), 1);
        let (id, row) = record.updates.into_iter().next().unwrap();
        assert_eq!(id, CF_ID);
        replayed.push((record.key, row));
        Ok(())
    })
    .unwrap();
    assert_eq!(report.truncated_at, None);
    let expected: Vec<(Vec<u8>, Row)> = golden_rows().into_iter().map(|(k, r)| (k.key, r)).collect();
    assert_eq!(replayed, expected);
}
