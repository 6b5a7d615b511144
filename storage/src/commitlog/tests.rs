#![expect(clippy::unwrap_used, reason = "tests")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use uuid::Uuid;

use super::segment::{self, FormatVersion, HEADER_LEN, RECORD_HEADER_LEN};
use super::{AfterDamage, CommitLog, CommitLogConfig, ReplayPosition, ReplayReport, SyncMode};
use crate::error::{CorruptData, StorageError};

const BATCH: SyncMode = SyncMode::Batch { window: Duration::ZERO };
const PERIODIC: SyncMode = SyncMode::Periodic { period: Duration::from_millis(5) };

fn open(dir: &Path, segment_size: u64, sync: SyncMode) -> CommitLog {
    CommitLog::open(CommitLogConfig { dir: dir.to_path_buf(), segment_size, sync }).unwrap()
}

/// Payload of record `i`: a deterministic length (0..300) and content.
pub(super) fn payload(i: u64) -> Vec<u8> {
    let len = (i * 37 % 300) as usize;
    (0..len).map(|j| (i as usize * 31 + j * 7) as u8).collect()
}

pub(super) fn replay_all(dir: &Path) -> (Vec<(ReplayPosition, Vec<u8>)>, ReplayReport) {
    let mut records = Vec::new();
    let report = CommitLog::replay(dir, |pos, bytes| {
        records.push((pos, bytes.to_vec()));
        Ok(())
    })
    .unwrap();
    (records, report)
}

pub(super) fn segment_files(dir: &Path) -> Vec<PathBuf> {
    segment::list_segments(dir).unwrap().into_iter().map(|(_, _, p)| p).collect()
}

pub(super) fn flip_byte(path: &Path, offset: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[offset as usize] ^= 0x40;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn header_and_record_layout() {
    let header = segment::encode_header(FormatVersion::V1, 0x0102_0304_0506_0708);
    assert_eq!(&header[0..8], b"SIBYLCLG");
    assert_eq!(header[8], 1);
    assert_eq!(&header[9..17], &[1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(&header[17..21], &crc32fast::hash(&header[0..17]).to_be_bytes());
    assert_eq!(segment::decode_header(&header), Ok((FormatVersion::V1, 0x0102_0304_0506_0708)));

    let mut frame = Vec::new();
    segment::encode_record(&mut frame, b"123456789");
    assert_eq!(&frame[0..4], &[0, 0, 0, 9]);
    let mut covered = vec![0, 0, 0, 9];
    covered.extend_from_slice(b"123456789");
    assert_eq!(&frame[4..8], &crc32fast::hash(&covered).to_be_bytes());
    assert_eq!(&frame[8..], b"123456789");
    // The CRC of an all-zero length is not zero: a zeroed tail cannot pass as an empty record.
    assert_ne!(segment::record_crc(b""), 0);

    assert_eq!(segment::file_name(FormatVersion::V1, 42), "CommitLog-1-42.log");
    assert_eq!(segment::parse_file_name("CommitLog-1-42.log"), segment::ParsedName::Segment { version: 1, id: 42 });
    assert_eq!(segment::parse_file_name("CommitLog-1-42.log.tmp"), segment::ParsedName::Other);
    assert_eq!(segment::parse_file_name("CommitLog-x-42.log"), segment::ParsedName::Other);
}

#[test]
fn format_version_try_from() {
    assert_eq!(FormatVersion::try_from(1), Ok(FormatVersion::V1));
    assert_eq!(FormatVersion::try_from(0), Err(CorruptData::InvalidFormatVersion(0)));
    assert_eq!(FormatVersion::try_from(2), Ok(FormatVersion::V2));
    assert_eq!(FormatVersion::try_from(3), Err(CorruptData::InvalidFormatVersion(3)));
}

#[test]
fn round_trip_across_segments() {
    for sync in [BATCH, PERIODIC] {
        let dir = tempfile::tempdir().unwrap();
        let log = open(dir.path(), 4096, sync);
        let cf = Uuid::new_v4();
        let mut expected = Vec::new();
        for i in 0..400 {
            let position = log.append(&payload(i), &[cf]).unwrap();
            expected.push((position, payload(i)));
        }
        log.shutdown().unwrap();
        drop(log);

        assert!(segment_files(dir.path()).len() > 10, "small segments should rotate often");
        let (records, report) = replay_all(dir.path());
        assert_eq!(records, expected);
        assert_eq!(report.records, 400);
        assert_eq!(report.truncated_at, None);
        assert_eq!(report.segments, segment_files(dir.path()));
        // Positions grow strictly.
        assert!(records.windows(2).all(|w| w[0].0 < w[1].0));

        CommitLog::delete_segments(&report.segments).unwrap();
        assert!(segment_files(dir.path()).is_empty());
    }
}

#[test]
fn rotation_when_a_record_would_pass_the_segment_size() {
    let dir = tempfile::tempdir().unwrap();
    let frame = RECORD_HEADER_LEN + 400;
    let log = open(dir.path(), HEADER_LEN + 2 * frame, BATCH);
    // A dirty CF keeps the segments from being deleted as soon as they are rotated out.
    let cf = [Uuid::new_v4()];
    let first = log.current_position();
    assert_eq!(first.offset, HEADER_LEN);
    let a = log.append(&[1; 400], &cf).unwrap();
    let b = log.append(&[2; 400], &cf).unwrap();
    assert_eq!(a, ReplayPosition { segment_id: first.segment_id, offset: HEADER_LEN });
    assert_eq!(b, ReplayPosition { segment_id: first.segment_id, offset: HEADER_LEN + frame });
    assert_eq!(log.current_position(), ReplayPosition { segment_id: first.segment_id, offset: HEADER_LEN + 2 * frame });
    // Exactly full: the next record starts a new segment.
    let c = log.append(&[3; 400], &cf).unwrap();
    assert!(c.segment_id > a.segment_id);
    assert_eq!(c.offset, HEADER_LEN);

    // A record larger than a whole segment gets a segment of its own.
    let big = log.append(&[4; 5000], &cf).unwrap();
    assert!(big.segment_id > c.segment_id);
    assert_eq!(big.offset, HEADER_LEN);
    let after = log.append(&[5; 10], &cf).unwrap();
    assert!(after.segment_id > big.segment_id);
    log.shutdown().unwrap();
    drop(log);

    let (records, _) = replay_all(dir.path());
    let positions: Vec<_> = records.iter().map(|(p, _)| *p).collect();
    assert_eq!(positions, vec![a, b, c, big, after]);
    assert_eq!(records[3].1, vec![4; 5000]);
    assert_eq!(std::fs::metadata(&segment_files(dir.path())[2]).unwrap().len(), HEADER_LEN + RECORD_HEADER_LEN + 5000);
}

#[test]
fn the_oldest_segments_dirty_column_families_are_named_once_the_log_is_over_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let frame = RECORD_HEADER_LEN + 400;
    let segment = HEADER_LEN + 2 * frame;
    let log = open(dir.path(), segment, BATCH);
    let (idle, busy) = (Uuid::new_v4(), Uuid::new_v4());
    // One record of an idle column family, then a busy one fills segments.
    log.append(&[1; 400], &[idle, busy]).unwrap();
    for _ in 0..7 {
        log.append(&[2; 400], &[busy]).unwrap();
    }
    // Four full segments; the active one just got its second record.
    assert_eq!(log.live_bytes(), 4 * segment);
    assert!(log.dirty_in_oldest_over(4 * segment).is_empty(), "at the limit, not over it");
    let mut named = log.dirty_in_oldest_over(3 * segment);
    named.sort();
    let mut both = vec![idle, busy];
    both.sort();
    assert_eq!(named, both);
    // Flushing the busy one is not enough: the idle one still holds the oldest segment.
    log.discard_completed(busy, log.current_position()).unwrap();
    assert_eq!(log.dirty_in_oldest_over(0), vec![idle]);
    log.discard_completed(idle, log.current_position()).unwrap();
    assert_eq!(log.live_bytes(), segment, "only the active segment is left");
    assert!(log.dirty_in_oldest_over(0).is_empty(), "the active segment is never named");
    log.shutdown().unwrap();
}

#[test]
fn discard_completed_deletes_exactly_the_clean_segments() {
    let dir = tempfile::tempdir().unwrap();
    let (cf_a, cf_b, cf_c) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
    // Room for two 100-byte records per segment.
    let log = open(dir.path(), HEADER_LEN + 2 * (RECORD_HEADER_LEN + 100), BATCH);
    let rec = [0u8; 100];
    let a1 = log.append(&rec, &[cf_a, cf_b]).unwrap(); // segment 1
    let b1 = log.append(&rec, &[cf_b]).unwrap(); // segment 1
    let a2 = log.append(&rec, &[cf_a]).unwrap(); // segment 2
    let c2 = log.append(&rec, &[cf_c]).unwrap(); // segment 2
    let b3 = log.append(&rec, &[cf_b]).unwrap(); // segment 3 (active)
    assert_eq!(a1.segment_id, b1.segment_id);
    assert_eq!(a2.segment_id, c2.segment_id);
    assert!(a1.segment_id < a2.segment_id && a2.segment_id < b3.segment_id);
    let [s1, s2, s3]: [PathBuf; 3] = log.segment_paths().try_into().unwrap();
    assert_eq!(segment_files(dir.path()), vec![s1.clone(), s2.clone(), s3.clone()]);

    // B flushed up to its record in segment 3: segment 1 still holds A's data.
    log.discard_completed(cf_b, b3).unwrap();
    assert_eq!(segment_files(dir.path()), vec![s1.clone(), s2.clone(), s3.clone()]);

    // A flushed up to (not including) its record in segment 2: segment 1 is clean, segment 2 is
    // still dirty for A (the record at the flush position is not covered) and for C.
    log.discard_completed(cf_a, a2).unwrap();
    assert_eq!(segment_files(dir.path()), vec![s2.clone(), s3.clone()]);

    // A fully flushed: segment 2 still needed by C.
    log.discard_completed(cf_a, log.current_position()).unwrap();
    assert_eq!(segment_files(dir.path()), vec![s2.clone(), s3.clone()]);

    // C dropped: segment 2 goes; segment 3 is active (and dirty for B) and stays.
    log.forget_cf(cf_c).unwrap();
    assert_eq!(segment_files(dir.path()), vec![s3.clone()]);

    // Even clean, the active segment is never deleted.
    log.discard_completed(cf_b, log.current_position()).unwrap();
    assert_eq!(segment_files(dir.path()), vec![s3.clone()]);

    // Once rotated out, a segment that is already clean is deleted at once.
    log.append(&rec, &[]).unwrap();
    log.append(&rec, &[]).unwrap();
    assert_eq!(segment_files(dir.path()).len(), 1);
    assert_ne!(segment_files(dir.path())[0], s3);
}

/// Writes `n` records in one segment, returns (segment path, record positions).
pub(super) fn write_one_segment(dir: &Path, n: u64) -> (PathBuf, Vec<ReplayPosition>) {
    let log = open(dir, 1 << 20, BATCH);
    let positions = (0..n).map(|i| log.append(&payload(i + 1), &[]).unwrap()).collect();
    log.shutdown().unwrap();
    let [path]: [PathBuf; 1] = log.segment_paths().try_into().unwrap();
    (path, positions)
}

#[test]
fn torn_tail_keeps_everything_before_it() {
    // Cut inside the last payload, inside the last record header, and between header and payload.
    for cut in ["payload", "header", "after header"] {
        let dir = tempfile::tempdir().unwrap();
        let (path, positions) = write_one_segment(dir.path(), 20);
        let len = std::fs::metadata(&path).unwrap().len();
        let last = positions[19].offset;
        assert!(payload(20).len() > 3);
        let new_len = match cut {
            "payload" => len - 3,
            "header" => last + 4,
            _ => last + RECORD_HEADER_LEN,
        };
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(new_len).unwrap();

        let (records, report) = replay_all(dir.path());
        assert_eq!(report.records, 19, "{cut}");
        assert_eq!(records.len(), 19);
        for (i, (pos, bytes)) in records.iter().enumerate() {
            assert_eq!(*pos, positions[i]);
            assert_eq!(*bytes, payload(i as u64 + 1));
        }
        assert_eq!(report.truncated_at, Some((path.clone(), last)), "{cut}");
    }
}

#[test]
fn zeroed_tail_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let (path, positions) = write_one_segment(dir.path(), 5);
    let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    std::io::Write::write_all(&mut file, &[0u8; 64]).unwrap();
    let end = positions[4].offset + RECORD_HEADER_LEN + payload(5).len() as u64;
    let (records, report) = replay_all(dir.path());
    assert_eq!(records.len(), 5);
    assert_eq!(report.truncated_at, Some((path, end)));
}

#[test]
fn flipped_payload_byte_is_caught_by_crc() {
    let dir = tempfile::tempdir().unwrap();
    let (path, positions) = write_one_segment(dir.path(), 10);
    // Record 7 (0-based 6) has a non-empty payload; flip its third byte. Records 8 to 10 still
    // verify, so this is damage, not a torn tail (more in `tests_damage`).
    assert!(payload(7).len() > 3);
    flip_byte(&path, positions[6].offset + RECORD_HEADER_LEN + 2);
    let mut seen = 0;
    let error = CommitLog::replay(dir.path(), |_, _| {
        seen += 1;
        Ok(())
    })
    .unwrap_err();
    assert_eq!(seen, 6);
    assert!(
        matches!(
            &error,
            StorageError::DamagedCommitLog { file, offset, detail: CorruptData::ChecksumMismatch { .. }, after }
                if *file == path && *offset == positions[6].offset && *after == AfterDamage::ValidRecordAt(positions[7].offset)
        ),
        "{error:?}"
    );
}

#[test]
fn corruption_in_a_segment_that_is_not_the_last_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (first, positions) = write_one_segment(dir.path(), 10);
    let (second, _) = write_one_segment(dir.path(), 3);
    assert!(segment_files(dir.path()) == vec![first.clone(), second]);
    flip_byte(&first, positions[4].offset + RECORD_HEADER_LEN);
    let mut seen = 0;
    let error = CommitLog::replay(dir.path(), |_, _| {
        seen += 1;
        Ok(())
    })
    .unwrap_err();
    assert_eq!(seen, 4);
    match error {
        StorageError::DamagedCommitLog {
            file,
            offset,
            detail: CorruptData::ChecksumMismatch { offset: crc_offset, expected, got },
            after,
        } => {
            assert_eq!(file, first);
            assert_eq!(offset, positions[4].offset);
            assert_eq!(crc_offset, offset);
            assert_ne!(expected, got);
            assert_eq!(after, AfterDamage::ValidRecordAt(positions[5].offset));
        }
        other => panic!("expected a checksum mismatch, got {other:?}"),
    }
}

#[test]
fn unknown_format_version_is_refused() {
    // Version byte in the header (with a valid header CRC).
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = write_one_segment(dir.path(), 2);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[8] = 9;
    let crc = crc32fast::hash(&bytes[0..17]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
    std::fs::write(&path, bytes).unwrap();
    let error = CommitLog::replay(dir.path(), |_, _| Ok(())).unwrap_err();
    assert!(
        matches!(&error, StorageError::Corrupt { file: Some(f), detail: CorruptData::InvalidFormatVersion(9) } if *f == path),
        "{error:?}"
    );

    // Version in the file name.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("CommitLog-7-5.log"), segment::encode_header(FormatVersion::V1, 5)).unwrap();
    let error = CommitLog::replay(dir.path(), |_, _| Ok(())).unwrap_err();
    assert!(matches!(error, StorageError::Corrupt { detail: CorruptData::InvalidFormatVersion(7), .. }), "{error:?}");
}

#[test]
fn bad_headers() {
    // Bad magic, even in the last segment.
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = write_one_segment(dir.path(), 2);
    flip_byte(&path, 0);
    let error = CommitLog::replay(dir.path(), |_, _| Ok(())).unwrap_err();
    assert!(
        matches!(&error, StorageError::DamagedCommitLog { file, offset: 0, detail: CorruptData::BadMagic, after: AfterDamage::BadHeader } if *file == path),
        "{error:?}"
    );

    // Header CRC.
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = write_one_segment(dir.path(), 2);
    flip_byte(&path, 12);
    let error = CommitLog::replay(dir.path(), |_, _| Ok(())).unwrap_err();
    assert!(
        matches!(error, StorageError::DamagedCommitLog { detail: CorruptData::ChecksumMismatch { offset: 0, .. }, .. }),
        "{error:?}"
    );

    // Header id that disagrees with the file name.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("CommitLog-1-5.log"), segment::encode_header(FormatVersion::V1, 6)).unwrap();
    let error = CommitLog::replay(dir.path(), |_, _| Ok(())).unwrap_err();
    assert!(matches!(error, StorageError::DamagedCommitLog { detail: CorruptData::BadValue { value: 6, .. }, .. }));

    // A last segment torn inside its header holds nothing; earlier segments are kept.
    let dir = tempfile::tempdir().unwrap();
    write_one_segment(dir.path(), 3);
    let torn = dir.path().join("CommitLog-1-99999999999999.log");
    std::fs::write(&torn, &segment::encode_header(FormatVersion::V1, 99999999999999)[..10]).unwrap();
    let (records, report) = replay_all(dir.path());
    assert_eq!(records.len(), 3);
    assert_eq!(report.truncated_at, Some((torn, 0)));
    assert_eq!(report.segments.len(), 2);
}

#[test]
fn open_starts_after_existing_segments() {
    let dir = tempfile::tempdir().unwrap();
    let future = 4_000_000_000_000u64;
    std::fs::write(
        dir.path().join(segment::file_name(FormatVersion::V1, future)),
        segment::encode_header(FormatVersion::V1, future),
    )
    .unwrap();
    let log = open(dir.path(), 1 << 20, PERIODIC);
    assert_eq!(log.current_position(), ReplayPosition { segment_id: future + 1, offset: HEADER_LEN });
    let position = log.append(b"x", &[]).unwrap();
    log.sync().unwrap();
    drop(log);
    let (records, _) = replay_all(dir.path());
    assert_eq!(records, vec![(position, b"x".to_vec())]);
}

#[test]
fn concurrent_appenders_share_fsyncs() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(open(dir.path(), 64 * 1024, SyncMode::Batch { window: Duration::from_millis(2) }));
    let threads = 8u64;
    let per_thread = 60u64;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                (0..per_thread)
                    .map(|i| {
                        let id = t * 1000 + i;
                        (log.append(&id.to_be_bytes(), &[]).unwrap(), id)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut acked: Vec<(ReplayPosition, u64)> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
    let fsyncs = log.batch_fsyncs();
    assert!(
        fsyncs * 3 < threads * per_thread,
        "group commit should share fsyncs: {fsyncs} for {}",
        threads * per_thread
    );
    log.shutdown().unwrap();
    drop(log);

    acked.sort();
    let (records, report) = replay_all(dir.path());
    assert_eq!(report.truncated_at, None);
    let replayed: Vec<(ReplayPosition, u64)> =
        records.iter().map(|(p, b)| (*p, u64::from_be_bytes(b.as_slice().try_into().unwrap()))).collect();
    assert_eq!(replayed, acked);
    // Each thread's records appear in the order it appended them.
    for t in 0..threads {
        let ids: Vec<u64> = replayed.iter().map(|(_, id)| *id).filter(|id| id / 1000 == t).collect();
        assert_eq!(ids, (0..per_thread).map(|i| t * 1000 + i).collect::<Vec<_>>());
    }
}

#[test]
fn concurrent_periodic_appends_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(open(dir.path(), 16 * 1024, PERIODIC));
    let handles: Vec<_> = (0..4u64)
        .map(|t| {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                for i in 0..300 {
                    log.append(&payload(t * 1000 + i), &[Uuid::nil()]).unwrap();
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    drop(log);
    let (records, report) = replay_all(dir.path());
    assert_eq!(report.records, 1200);
    assert!(report.segments.len() > 5);
    let mut seen: Vec<Vec<u8>> = records.into_iter().map(|(_, b)| b).collect();
    let mut expected: Vec<Vec<u8>> = (0..4u64).flat_map(|t| (0..300).map(move |i| payload(t * 1000 + i))).collect();
    seen.sort();
    expected.sort();
    assert_eq!(seen, expected);
}

#[test]
fn failed_write_poisons_the_log_in_batch_mode() {
    let dir = tempfile::tempdir().unwrap();
    let log = open(dir.path(), 1 << 20, BATCH);
    log.append(b"before", &[]).unwrap();
    log.inject_io_failure();
    let error = log.append(b"fails", &[]).unwrap_err();
    assert!(matches!(error, StorageError::Io { .. }), "{error:?}");
    let error = log.append(b"after", &[]).unwrap_err();
    assert!(matches!(error, StorageError::Poisoned(_)), "{error:?}");
    assert!(matches!(log.sync(), Err(StorageError::Poisoned(_))));
}

#[test]
fn failed_fsync_poisons_the_log_in_periodic_mode() {
    let dir = tempfile::tempdir().unwrap();
    let log = open(dir.path(), 1 << 20, SyncMode::Periodic { period: Duration::from_secs(3600) });
    log.append(b"before", &[]).unwrap();
    log.inject_io_failure();
    assert!(matches!(log.sync(), Err(StorageError::Io { .. })));
    let error = log.append(b"after", &[]).unwrap_err();
    assert!(matches!(error, StorageError::Poisoned(_)), "{error:?}");
}

#[test]
fn failed_rotation_poisons_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = open(dir.path(), HEADER_LEN + RECORD_HEADER_LEN + 10, PERIODIC);
    log.append(&[0; 10], &[]).unwrap();
    log.inject_io_failure();
    assert!(matches!(log.append(&[1; 10], &[]), Err(StorageError::Io { .. })));
    assert!(matches!(log.append(&[2; 10], &[]), Err(StorageError::Poisoned(_))));
}

#[test]
fn appends_after_shutdown_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let log = open(dir.path(), 1 << 20, PERIODIC);
    log.append(b"a", &[]).unwrap();
    log.shutdown().unwrap();
    log.shutdown().unwrap();
    assert!(matches!(log.append(b"b", &[]), Err(StorageError::ShuttingDown)));
}

#[test]
fn periodic_loop_syncs_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let log = open(dir.path(), 1 << 20, SyncMode::Periodic { period: Duration::from_millis(1) });
    for _ in 0..3 {
        log.append(b"a", &[]).unwrap();
    }
    assert_eq!(log.written_and_synced().0, 3);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while log.written_and_synced().1 < 3 {
        assert!(std::time::Instant::now() < deadline, "the periodic loop never synced");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn commit_log_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<CommitLog>();
}

/// Polls `future` to completion on this thread (the commit log's futures need no runtime),
/// polling again only when woken: a future left pending without a wake-up fails the test
/// instead of being rescued by a timer.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark {
        thread: std::thread::Thread,
        woken: std::sync::atomic::AtomicBool,
    }
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.woken.store(true, std::sync::atomic::Ordering::SeqCst);
            self.thread.unpark();
        }
    }
    let unpark = Arc::new(Unpark { thread: std::thread::current(), woken: false.into() });
    let waker = std::task::Waker::from(Arc::clone(&unpark));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !unpark.woken.swap(false, std::sync::atomic::Ordering::SeqCst) {
            assert!(std::time::Instant::now() < deadline, "a pending Written was never woken");
            std::thread::park_timeout(Duration::from_millis(100));
        }
    }
}

#[test]
fn deferred_append_is_written_by_its_future_when_the_writer_left() {
    let dir = tempfile::tempdir().unwrap();
    let log = open(dir.path(), 1 << 20, PERIODIC);
    let cf = Uuid::new_v4();
    log.set_writing(true);
    let (result, written) = super::defer_acks(|| log.append(b"deferred", &[cf]));
    result.unwrap();
    let written = written.expect("an append that found a writer busy is deferred");
    assert_eq!(log.written_and_synced().0, 0, "a deferred record is not written by its appender");
    // The writer in progress goes away without having taken the record: the future writes it.
    log.set_writing(false);
    block_on(written).unwrap();
    assert_eq!(log.written_and_synced().0, 1);
    drop(log);
    let (records, _) = replay_all(dir.path());
    assert_eq!(records.iter().map(|(_, r)| r.as_slice()).collect::<Vec<_>>(), vec![&b"deferred"[..]]);
}

#[test]
fn appends_are_not_deferred_outside_a_scope_or_in_batch_mode() {
    let dir = tempfile::tempdir().unwrap();
    let log = open(dir.path(), 1 << 20, PERIODIC);
    log.append(b"outside a scope", &[]).unwrap();
    assert_eq!(log.written_and_synced().0, 1, "outside a scope an append returns once written");
    let (result, written) = super::defer_acks(|| log.append(b"in a scope", &[]));
    result.unwrap();
    assert_eq!(log.written_and_synced().0, 1, "in a scope an append only queues its record");
    block_on(written.unwrap()).unwrap();
    assert_eq!(log.written_and_synced().0, 2);

    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(open(dir.path(), 1 << 20, BATCH));
    log.set_writing(true);
    let appender = {
        let log = Arc::clone(&log);
        std::thread::spawn(move || super::defer_acks(|| log.append(b"batch", &[])).1.is_none())
    };
    std::thread::sleep(Duration::from_millis(50));
    assert!(!appender.is_finished(), "a batch-mode append waits for its fsync even in a scope");
    // The role comes free; the next append writes (and fsyncs) both records and wakes it.
    log.set_writing(false);
    log.append(b"next", &[]).unwrap();
    assert!(appender.join().unwrap());
    assert_eq!(log.written_and_synced().1, log.written_and_synced().0);
}

#[test]
fn shutdown_writes_deferred_records() {
    let dir = tempfile::tempdir().unwrap();
    let log = open(dir.path(), 1 << 20, PERIODIC);
    log.set_writing(true);
    let (result, written) = super::defer_acks(|| {
        log.append(b"one", &[]).unwrap();
        log.append(b"two", &[])
    });
    result.unwrap();
    assert!(written.is_some());
    log.set_writing(false);
    log.shutdown().unwrap();
    block_on(written.unwrap()).unwrap();
    drop(log);
    let (records, _) = replay_all(dir.path());
    assert_eq!(records.len(), 2);
}

#[test]
fn a_failed_write_fails_the_deferred_future() {
    let dir = tempfile::tempdir().unwrap();
    let log = open(dir.path(), 1 << 20, PERIODIC);
    log.set_writing(true);
    let (result, written) = super::defer_acks(|| log.append(b"lost", &[]));
    result.unwrap();
    log.set_writing(false);
    log.inject_io_failure();
    let error = block_on(written.unwrap()).unwrap_err();
    assert!(error.to_string().contains("injected"), "{error}");
    assert!(matches!(log.append(b"after", &[]), Err(StorageError::Poisoned(_))));
}

#[test]
fn concurrent_deferred_appends_are_all_written_before_their_futures_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(open(dir.path(), 64 * 1024, PERIODIC));
    // A dirty CF keeps rotated segments from being deleted.
    let cf = Uuid::new_v4();
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                let mut deferred = 0;
                for i in 0..500 {
                    let record = payload(t * 1000 + i);
                    let (result, written) = super::defer_acks(|| log.append(&record, &[cf]));
                    result.unwrap();
                    if let Some(written) = written {
                        deferred += 1;
                        let seq = written.seq();
                        block_on(written).unwrap();
                        // Acknowledged: the record is in a file now.
                        assert!(log.written_and_synced().0 >= seq);
                    }
                }
                deferred
            })
        })
        .collect();
    let deferred: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    drop(log);
    let (records, report) = replay_all(dir.path());
    assert_eq!(report.truncated_at, None);
    let mut got: Vec<Vec<u8>> = records.into_iter().map(|(_, r)| r).collect();
    let mut want: Vec<Vec<u8>> = (0..4u64).flat_map(|t| (0..500).map(move |i| payload(t * 1000 + i))).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
    eprintln!("{deferred} of 2000 appends were deferred");
}

#[test]
fn a_write_that_leaves_records_queued_wakes_their_waiters() {
    struct Flag(std::sync::atomic::AtomicBool);
    impl std::task::Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let log = open(dir.path(), 1 << 20, PERIODIC);
    // Another thread is writing; this record is queued after it took the buffer.
    log.set_writing(true);
    let (result, written) = super::defer_acks(|| log.append(b"missed the write", &[]));
    result.unwrap();
    let mut written = Box::pin(written.unwrap());
    let flag = Arc::new(Flag(false.into()));
    let waker = std::task::Waker::from(Arc::clone(&flag));
    let pending = std::future::Future::poll(written.as_mut(), &mut std::task::Context::from_waker(&waker));
    assert!(pending.is_pending(), "a writer is busy: the future waits for it");
    // That write ends without this record: the future must be woken to take the role over.
    log.finish_simulated_write();
    assert!(flag.0.load(std::sync::atomic::Ordering::SeqCst), "left waiting for a writer that is not coming");
    block_on(written).unwrap();
    assert_eq!(log.written_and_synced().0, 1);
}
