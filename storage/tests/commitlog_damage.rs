//! The engine and a damaged commit log: one byte flipped in the middle of the last segment,
//! with acknowledged writes after it, stops `Storage::open` with the file and offset and
//! leaves the segment alone; the operator's override (`RecoveryMode::SkipDamaged`) replays the
//! records that verify and keeps the segment aside as `.corrupt` instead of deleting it.
#![expect(clippy::unwrap_used, reason = "test")]

use std::path::{Path, PathBuf};

use model::data::Cell;
use model::dht::Partitioner;
use model::filter::ReadFilter;
use model::mutation::RowMutation;
use model::schema::{CfDef, KeyspaceDef};
use storage::commitlog::{AfterDamage, RecoveryMode};
use storage::engine::{Storage, StorageConfig};
use storage::StorageError;

const ROWS: usize = 300;
/// The row whose commit log record is damaged.
const DAMAGED: usize = 150;

fn config(dir: &Path, recovery: RecoveryMode) -> StorageConfig {
    let mut c = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    c.partitioner = Partitioner::Murmur3;
    c.auto_compaction = false;
    c.commitlog_recovery = recovery;
    let mut ks = KeyspaceDef::new("ks");
    ks.cf_defs.push(CfDef::new("ks", "cf"));
    c.initial_keyspaces = vec![ks];
    c
}

/// The rows that read back.
fn present(s: &Storage) -> Vec<usize> {
    (0..ROWS)
        .filter(|i| {
            let cells = s.read("ks", "cf", format!("key{i:04}").as_bytes(), &ReadFilter::all()).unwrap();
            cells.iter().any(|c| c.value == format!("value {i}").into_bytes())
        })
        .collect()
}

fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> =
        std::fs::read_dir(dir.join("commitlog")).unwrap().map(|e| e.unwrap().path()).collect();
    found.sort();
    found
}

/// Writes ROWS unflushed rows, "crashes" (no shutdown), and flips one byte of the record of
/// row DAMAGED, in the middle of the newest segment's rows. Returns that segment and its bytes
/// after the flip.
fn crash_with_damage(dir: &Path) -> (PathBuf, Vec<u8>) {
    let s = Storage::open(config(dir, RecoveryMode::Strict)).unwrap();
    for i in 0..ROWS {
        let mut m = RowMutation::new("ks", format!("key{i:04}").into_bytes());
        m.row_mut("cf").cells.push(Cell::live("c", format!("value {i}").into_bytes(), 1));
        s.apply(m).unwrap();
    }
    s.abandon(); // no flush: the rows live in the commit log only
    let last = segments(dir).pop().unwrap();
    let mut bytes = std::fs::read(&last).unwrap();
    let key = format!("key{DAMAGED:04}").into_bytes();
    let at = bytes.windows(key.len()).position(|w| w == key.as_slice()).unwrap();
    bytes[at + 1] ^= 0xFF;
    std::fs::write(&last, &bytes).unwrap();
    (last, bytes)
}

#[test]
fn damage_in_the_middle_stops_the_engine_and_keeps_the_segment() {
    let dir = tempfile::tempdir().unwrap();
    let (segment, bytes) = crash_with_damage(dir.path());

    for attempt in 0..2 {
        let Err(error) = Storage::open(config(dir.path(), RecoveryMode::Strict)) else {
            panic!("attempt {attempt}: the engine opened over a damaged commit log");
        };
        let StorageError::DamagedCommitLog { file, offset, after, .. } = &error else {
            panic!("attempt {attempt}: expected DamagedCommitLog, got {error:?}");
        };
        assert_eq!(file, &segment);
        assert!(matches!(after, AfterDamage::ValidRecordAt(next) if next > offset), "{error}");
        let message = error.to_string();
        assert!(message.contains(&segment.display().to_string()) && message.contains(&format!("offset {offset}")));
        assert_eq!(std::fs::read(&segment).unwrap(), bytes, "attempt {attempt}: the segment was changed");
    }
}

#[test]
fn the_override_replays_what_verifies_and_keeps_the_segment_aside() {
    let dir = tempfile::tempdir().unwrap();
    let (segment, bytes) = crash_with_damage(dir.path());

    let s = Storage::open(config(dir.path(), RecoveryMode::SkipDamaged)).unwrap();
    let after_override = present(&s);
    let expected: Vec<usize> = (0..ROWS).filter(|i| *i != DAMAGED).collect();
    assert_eq!(after_override, expected, "every row but the damaged one's is replayed");
    let kept = PathBuf::from(format!("{}.corrupt", segment.display()));
    assert_eq!(std::fs::read(&kept).unwrap(), bytes, "the damaged segment is kept whole");
    assert!(!segment.exists());
    s.shutdown().unwrap();
    s.abandon();

    // The replayed rows were flushed; the kept segment is never replayed again.
    let s = Storage::open(config(dir.path(), RecoveryMode::Strict)).unwrap();
    assert_eq!(present(&s), after_override);
    assert!(kept.exists());
    s.shutdown().unwrap();
}
