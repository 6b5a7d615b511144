//! Torn tails against damage: a bad record with nothing valid after it in the last segment is
//! a crash's torn write and is cut; a bad record followed by one that verifies is damage, which
//! replay refuses naming the file and offset, leaving the segment untouched, unless the operator
//! chose [`RecoveryMode::SkipDamaged`], which replays around it and keeps the segment aside.
#![expect(clippy::unwrap_used, reason = "tests")]

use std::path::{Path, PathBuf};

use super::segment::{self, find_next_record, Resync, HEADER_LEN, RECORD_HEADER_LEN};
use super::tests::{flip_byte, payload, replay_all, segment_files, write_one_segment};
use super::{
    AfterDamage, CommitLog, DamagedSegment, RecoveryMode, ReplayPosition, ReplayReport, SkippedRange,
    IGNORE_REPLAY_ERRORS_ENV,
};
use crate::error::{CorruptData, StorageError};

fn append(path: &Path, bytes: &[u8]) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    std::io::Write::write_all(&mut file, bytes).unwrap();
}

/// Deterministic bytes that are no record frame (a linear congruential generator).
fn garbage(n: usize) -> Vec<u8> {
    let mut x: u32 = 0x9E37_79B9;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (x >> 24) as u8
        })
        .collect()
}

fn replay_skipping(dir: &Path) -> (Vec<(ReplayPosition, Vec<u8>)>, ReplayReport) {
    let mut records = Vec::new();
    let report = CommitLog::replay_with(dir, RecoveryMode::SkipDamaged, |pos, bytes| {
        records.push((pos, bytes.to_vec()));
        Ok(())
    })
    .unwrap();
    (records, report)
}

fn end_of(positions: &[ReplayPosition], index: usize) -> u64 {
    positions[index].offset + RECORD_HEADER_LEN + payload(index as u64 + 1).len() as u64
}

#[test]
fn torn_tails_are_tolerated_and_cut() {
    let mut frame = Vec::new();
    segment::encode_record(&mut frame, &payload(77));
    let mut bad_crc = frame.clone();
    bad_crc[5] ^= 1;
    let tails: [(&str, Vec<u8>); 5] = [
        ("zeros", vec![0; 4096]),
        ("garbage", garbage(3000)),
        ("a record cut short", frame[..frame.len() - 10].to_vec()),
        ("a record header alone", frame[..RECORD_HEADER_LEN as usize].to_vec()),
        ("a whole record with a bad checksum", bad_crc),
    ];
    for (what, tail) in tails {
        let dir = tempfile::tempdir().unwrap();
        let (path, positions) = write_one_segment(dir.path(), 12);
        append(&path, &tail);
        let end = end_of(&positions, 11);

        let (records, report) = replay_all(dir.path());
        assert_eq!(records.len(), 12, "{what}");
        assert_eq!(report.truncated_at, Some((path.clone(), end)), "{what}");
        assert_eq!(report.segments, vec![path.clone()], "{what}");
        assert!(report.damaged.is_empty(), "{what}");

        CommitLog::cut_torn_tail(&path, end).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), end, "{what}");
        let (records, report) = replay_all(dir.path());
        assert_eq!((records.len(), report.truncated_at), (12, None), "{what}: the cut segment ends cleanly");
    }
}

#[test]
fn a_torn_header_is_not_cut() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(segment::file_name(segment::FormatVersion::V2, 7));
    std::fs::write(&path, &segment::encode_header(segment::FormatVersion::V2, 7)[..9]).unwrap();
    let (_, report) = replay_all(dir.path());
    assert_eq!(report.truncated_at, Some((path.clone(), 0)));
    CommitLog::cut_torn_tail(&path, 0).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 9);
}

/// Where each kind of damage goes in record `index` of a segment written by `write_one_segment`.
fn damage_offsets(positions: &[ReplayPosition], index: usize) -> [(&'static str, u64); 4] {
    let at = positions[index].offset;
    [
        ("payload byte", at + RECORD_HEADER_LEN + 2),
        ("high length byte", at),
        ("low length byte", at + 3),
        ("checksum byte", at + 5),
    ]
}

#[test]
fn damage_followed_by_valid_records_is_refused_and_left_in_place() {
    for index in [0, 6, 10] {
        let probe = tempfile::tempdir().unwrap();
        let (_, positions) = write_one_segment(probe.path(), 12);
        for (what, offset) in damage_offsets(&positions, index) {
            let dir = tempfile::tempdir().unwrap();
            let (path, positions) = write_one_segment(dir.path(), 12);
            flip_byte(&path, offset);
            let before = std::fs::read(&path).unwrap();

            let mut seen = 0;
            let error = CommitLog::replay(dir.path(), |_, _| {
                seen += 1;
                Ok(())
            })
            .unwrap_err();
            assert_eq!(seen, index, "{what} of record {index}: the records before it were replayed");
            match &error {
                StorageError::DamagedCommitLog { file, offset, after, .. } => {
                    assert_eq!(file, &path, "{what}");
                    assert_eq!(*offset, positions[index].offset, "{what}");
                    assert_eq!(*after, AfterDamage::ValidRecordAt(positions[index + 1].offset), "{what}");
                }
                other => panic!("{what} of record {index}: expected DamagedCommitLog, got {other:?}"),
            }
            let message = error.to_string();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(message.contains(&name), "{message}");
            assert!(message.contains(&format!("offset {}", positions[index].offset)), "{message}");
            assert!(message.contains(IGNORE_REPLAY_ERRORS_ENV), "{message}");
            assert_eq!(std::fs::read(&path).unwrap(), before, "{what}: replay changed the segment");
        }
    }
}

#[test]
fn damage_in_the_last_record_looks_like_a_torn_tail() {
    // Nothing after it verifies, so it cannot be told from a crash mid-write: tolerated.
    let dir = tempfile::tempdir().unwrap();
    let (path, positions) = write_one_segment(dir.path(), 12);
    flip_byte(&path, positions[11].offset + RECORD_HEADER_LEN + 1);
    let (records, report) = replay_all(dir.path());
    assert_eq!(records.len(), 11);
    assert_eq!(report.truncated_at, Some((path, positions[11].offset)));
}

#[test]
fn skipping_replays_every_record_that_verifies_and_keeps_the_segment_aside() {
    let dir = tempfile::tempdir().unwrap();
    let (path, positions) = write_one_segment(dir.path(), 12);
    flip_byte(&path, positions[3].offset + RECORD_HEADER_LEN + 1);
    flip_byte(&path, positions[8].offset + 2); // a length byte
    let before = std::fs::read(&path).unwrap();

    let (records, report) = replay_skipping(dir.path());
    let replayed: Vec<ReplayPosition> = records.iter().map(|(p, _)| *p).collect();
    let expected: Vec<ReplayPosition> =
        positions.iter().enumerate().filter(|(i, _)| *i != 3 && *i != 8).map(|(_, p)| *p).collect();
    assert_eq!(replayed, expected);
    for (pos, bytes) in &records {
        let i = positions.iter().position(|p| p == pos).unwrap();
        assert_eq!(*bytes, payload(i as u64 + 1));
    }
    assert!(report.segments.is_empty(), "a damaged segment is never handed out for deletion");
    assert_eq!(report.truncated_at, None);
    let [DamagedSegment { path: damaged, skipped }] = report.damaged.as_slice() else {
        panic!("one damaged segment expected: {:?}", report.damaged)
    };
    assert_eq!(damaged, &path);
    let ranges: Vec<(u64, Option<u64>)> = skipped.iter().map(|s| (s.offset, s.resumed_at)).collect();
    assert_eq!(
        ranges,
        vec![(positions[3].offset, Some(positions[4].offset)), (positions[8].offset, Some(positions[9].offset))]
    );
    assert!(matches!(skipped[0].detail, CorruptData::ChecksumMismatch { .. }), "{:?}", skipped[0]);
    report.log();

    // Kept aside whole, out of replay's sight; a second one of the same name gets a number.
    let kept = CommitLog::set_aside_segments(&report.damaged).unwrap();
    assert_eq!(kept, vec![PathBuf::from(format!("{}.corrupt", path.display()))]);
    assert_eq!(std::fs::read(&kept[0]).unwrap(), before);
    assert!(!path.exists());
    assert!(segment_files(dir.path()).is_empty());
    std::fs::write(&path, &before).unwrap();
    let again = CommitLog::set_aside_segments(&report.damaged).unwrap();
    assert_eq!(again, vec![PathBuf::from(format!("{}.corrupt.1", path.display()))]);
    assert_eq!(std::fs::read(&kept[0]).unwrap(), before, "the first copy is kept");
}

#[test]
fn skipping_a_bad_header_skips_its_segment_only() {
    let dir = tempfile::tempdir().unwrap();
    let (first, _) = write_one_segment(dir.path(), 4);
    let (second, _) = write_one_segment(dir.path(), 5);
    flip_byte(&first, 2); // magic

    let error = CommitLog::replay(dir.path(), |_, _| Ok(())).unwrap_err();
    assert!(
        matches!(&error, StorageError::DamagedCommitLog { file, offset: 0, after: AfterDamage::BadHeader, .. } if *file == first),
        "{error:?}"
    );
    let (records, report) = replay_skipping(dir.path());
    assert_eq!(records.len(), 5);
    assert_eq!(report.segments, vec![second]);
    assert_eq!(
        report.damaged,
        vec![DamagedSegment {
            path: first,
            skipped: vec![SkippedRange { offset: 0, resumed_at: None, detail: CorruptData::BadMagic }]
        }]
    );
}

#[test]
fn a_bad_last_record_of_an_earlier_segment_is_damage() {
    let dir = tempfile::tempdir().unwrap();
    let (first, positions) = write_one_segment(dir.path(), 6);
    write_one_segment(dir.path(), 2);
    flip_byte(&first, positions[5].offset + RECORD_HEADER_LEN);

    let error = CommitLog::replay(dir.path(), |_, _| Ok(())).unwrap_err();
    assert!(
        matches!(&error, StorageError::DamagedCommitLog { file, offset, after: AfterDamage::NotLastSegment, .. }
            if *file == first && *offset == positions[5].offset),
        "{error:?}"
    );
    let (records, report) = replay_skipping(dir.path());
    assert_eq!(records.len(), 5 + 2);
    assert_eq!(report.damaged.len(), 1);
    assert_eq!(report.damaged[0].skipped[0].resumed_at, None);
}

#[test]
fn resync_finds_the_next_record_and_gives_up_past_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let (path, positions) = write_one_segment(dir.path(), 12);
    let len = std::fs::metadata(&path).unwrap().len();
    let file = std::fs::File::open(&path).unwrap();
    let budget = segment::RESYNC_BUDGET_BYTES;
    // From inside record 4, the next boundary is record 5.
    assert_eq!(
        find_next_record(&file, positions[4].offset + 1, len, budget).unwrap(),
        Resync::Found(positions[5].offset)
    );
    assert_eq!(find_next_record(&file, HEADER_LEN, len, budget).unwrap(), Resync::Found(HEADER_LEN));
    assert_eq!(find_next_record(&file, positions[11].offset + 1, len, budget).unwrap(), Resync::NotFound);

    // Garbage that reads as many long plausible lengths exhausts a small budget.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.truncate(HEADER_LEN as usize);
    bytes.extend((0..10_000).flat_map(|_| [0x00, 0x00, 0x40, 0x00]));
    std::fs::write(&path, &bytes).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let len = bytes.len() as u64;
    assert_eq!(find_next_record(&file, HEADER_LEN, len, 1 << 20).unwrap(), Resync::GaveUp);
    assert_eq!(find_next_record(&file, HEADER_LEN, len, budget).unwrap(), Resync::NotFound);
}

#[test]
fn recovery_mode_from_the_environment_value() {
    assert_eq!(RecoveryMode::from_env_value(None), RecoveryMode::Strict);
    for on in ["true", "TRUE", "1"] {
        assert_eq!(RecoveryMode::from_env_value(Some(on)), RecoveryMode::SkipDamaged, "{on}");
    }
    for off in ["false", "0", "", "yes please"] {
        assert_eq!(RecoveryMode::from_env_value(Some(off)), RecoveryMode::Strict, "{off}");
    }
}
