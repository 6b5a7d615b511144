//! Compaction on real stores: merges, purging, strategies' choices and their controls.

use super::rewrite::holds_span;
use super::*;
use crate::dht::{Range, Token};

fn t(b: u8) -> Token {
    Token::from_bytes(&[b])
}

#[test]
fn thresholds_set_at_run_time_follow_cassandras_rule() {
    assert_eq!(check_thresholds(2, 32), Ok(()));
    assert_eq!(check_thresholds(0, 0), Ok(()), "0 turns background compaction off");
    assert_eq!(check_thresholds(8, 0), Ok(()), "so does a maximum of 0, whatever the minimum");
    assert_eq!(
        check_thresholds(5, 4),
        Err("The min_compaction_threshold cannot be larger than the max_compaction_threshold. Min is '5', Max is '4'."
            .into())
    );
    assert!(check_thresholds(1, 4).is_err());
    assert!(check_thresholds(-2, 4).is_err());
    assert!(check_thresholds(2, -4).is_err());
}

#[test]
fn an_interruption_is_told_from_other_errors() {
    let interrupted = CompactionInterrupted {
        kind: "Cleanup",
        keyspace: "ks".into(),
        cf: "cf".into(),
        cf_id: uuid::Uuid::nil(),
        bytes_done: 5,
        bytes_total: 10,
    };
    let err = StorageError::from(interrupted.clone());
    assert_eq!(CompactionInterrupted::of(&err), Some(&interrupted));
    assert_eq!(
        interrupted.to_string(),
        "Compaction interrupted: Cleanup@00000000-0000-0000-0000-000000000000(ks, cf, 5/10)bytes"
    );
    let other = StorageError::io("/data", std::io::Error::new(std::io::ErrorKind::Interrupted, "EINTR"));
    assert_eq!(CompactionInterrupted::of(&other), None);
    assert_eq!(CompactionInterrupted::of(&StorageError::ShuttingDown), None);
}

#[test]
fn a_span_is_held_only_if_no_token_between_its_ends_falls_outside() {
    let plain = Range::new(t(10), t(20));
    assert!(holds_span(&plain, &t(11), &t(20)));
    assert!(holds_span(&plain, &t(15), &t(15)));
    assert!(!holds_span(&plain, &t(10), &t(15)), "the left end is excluded");
    assert!(!holds_span(&plain, &t(15), &t(21)));
    // (200, 5] wraps: it holds (200, max] and [min, 5], not the tokens in between.
    let wrapping = Range::new(t(200), t(5));
    assert!(holds_span(&wrapping, &t(201), &t(255)));
    assert!(holds_span(&wrapping, &t(1), &t(5)));
    assert!(!holds_span(&wrapping, &t(1), &t(201)), "the span crosses the tokens the range skips");
    assert!(!holds_span(&wrapping, &t(6), &t(6)));
    assert!(holds_span(&Range::full_ring(), &t(0), &t(255)));
    // (100, min] runs to the end of the ring.
    let to_end = Range::new(t(100), Token::minimum());
    assert!(holds_span(&to_end, &t(101), &t(255)));
    assert!(!holds_span(&to_end, &t(50), &t(255)));
}
