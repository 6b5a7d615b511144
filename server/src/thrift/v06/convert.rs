//! 0.6's structs as the 20.1.0 structs that [`crate::thrift::reads`], [`crate::thrift::writes`]
//! and [`crate::thrift::validate`] take, and 20.1.0 results back as 0.6's; 0.6's consistency
//! levels as the coordinator's.
//!
//! What changes on the way: 0.6's row keys are strings (their UTF-8 bytes are the key); 0.6's
//! Column has no TTL (a write gets the column family's default, a read drops it); KeyRange's keys
//! become bytes. A key written through 20.1.0 that is not UTF-8 reads back through 0.6 with
//! U+FFFD in place of the bad bytes, the one thing 0.6's string keys cannot carry.

use std::collections::BTreeMap;

use thrift_idl as t;
use thrift_idl::v06 as v;

use crate::thrift::error::{ire, TResult, ThriftError};

// ----- consistency levels -----

/// A 0.6 write's consistency level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteLevel {
    /// ZERO: accept, apply in the background, answer at once.
    FireAndForget,
    Wait(t::ConsistencyLevel),
}

/// The levels 0.6 defines; any other number decodes (enums are plain i32) and is refused by
/// the dispatcher as 0.6's processor refused it.
pub fn is_known_level(cl: v::ConsistencyLevel) -> bool {
    (0..=6).contains(&cl.0)
}

/// ONE, QUORUM, ALL and ANY keep their meaning. DCQUORUM (a quorum in the local data centre)
/// is LOCAL_QUORUM, and DCQUORUMSYNC (a quorum in every data centre) is EACH_QUORUM.
fn common_level(cl: v::ConsistencyLevel) -> Option<t::ConsistencyLevel> {
    Some(match cl {
        v::ConsistencyLevel::ONE => t::ConsistencyLevel::ONE,
        v::ConsistencyLevel::QUORUM => t::ConsistencyLevel::QUORUM,
        v::ConsistencyLevel::DCQUORUM => t::ConsistencyLevel::LOCAL_QUORUM,
        v::ConsistencyLevel::DCQUORUMSYNC => t::ConsistencyLevel::EACH_QUORUM,
        v::ConsistencyLevel::ALL => t::ConsistencyLevel::ALL,
        v::ConsistencyLevel::ANY => t::ConsistencyLevel::ANY,
        _ => return None,
    })
}

/// A read's level, refused with 0.6's reasons for ZERO and ANY.
pub fn read_level(cl: v::ConsistencyLevel) -> TResult<t::ConsistencyLevel> {
    match cl {
        v::ConsistencyLevel::ZERO => Err(ire("Consistency level zero may not be applied to read operations")),
        v::ConsistencyLevel::ANY => Err(ire("Consistency level any may not be applied to read operations")),
        other => common_level(other).ok_or_else(|| unknown_level(other)),
    }
}

pub fn write_level(cl: v::ConsistencyLevel) -> TResult<WriteLevel> {
    match cl {
        v::ConsistencyLevel::ZERO => Ok(WriteLevel::FireAndForget),
        other => common_level(other).map(WriteLevel::Wait).ok_or_else(|| unknown_level(other)),
    }
}

/// Only `remove` lets an unknown level reach the server (its level is not `required`); 0.6
/// failed there with an internal error.
fn unknown_level(cl: v::ConsistencyLevel) -> ThriftError {
    ThriftError::Internal(format!("unknown consistency level {}", cl.0))
}

// ----- requests: 0.6 → 20.1.0 -----

pub fn key(k: String) -> Vec<u8> {
    k.into_bytes()
}

pub fn keys(ks: Vec<String>) -> Vec<Vec<u8>> {
    ks.into_iter().map(key).collect()
}

pub fn column(c: v::Column) -> t::Column {
    t::Column { name: c.name, value: Some(c.value), timestamp: Some(c.timestamp), ttl: None }
}

pub fn super_column(sc: v::SuperColumn) -> t::SuperColumn {
    t::SuperColumn { name: sc.name, columns: sc.columns.into_iter().map(column).collect() }
}

pub fn cosc(c: v::ColumnOrSuperColumn) -> t::ColumnOrSuperColumn {
    t::ColumnOrSuperColumn {
        column: c.column.map(column),
        super_column: c.super_column.map(super_column),
        counter_column: None,
        counter_super_column: None,
    }
}

pub fn parent(p: v::ColumnParent) -> t::ColumnParent {
    t::ColumnParent { column_family: p.column_family, super_column: p.super_column }
}

pub fn path(p: v::ColumnPath) -> t::ColumnPath {
    t::ColumnPath { column_family: p.column_family, super_column: p.super_column, column: p.column }
}

pub fn predicate(p: v::SlicePredicate) -> t::SlicePredicate {
    t::SlicePredicate {
        column_names: p.column_names,
        slice_range: p.slice_range.map(|r| t::SliceRange {
            start: r.start,
            finish: r.finish,
            reversed: r.reversed,
            count: r.count,
        }),
    }
}

/// A KeyRange, after 0.6's own pairing rules (0.6 wants keys or tokens as pairs, where 20.1.0
/// also takes a start key with an end token).
pub fn key_range(r: v::KeyRange) -> TResult<t::KeyRange> {
    if r.start_key.is_some() != r.end_key.is_some() {
        return Err(ire("start key and end key must either both be non-null, or both be null"));
    }
    if r.start_token.is_some() != r.end_token.is_some() {
        return Err(ire("start token and end token must either both be non-null, or both be null"));
    }
    if r.start_key.is_some() == r.start_token.is_some() {
        return Err(ire("exactly one of {start key, end key} or {start token, end token} must be specified"));
    }
    Ok(t::KeyRange {
        start_key: r.start_key.map(key),
        end_key: r.end_key.map(key),
        start_token: r.start_token,
        end_token: r.end_token,
        count: r.count,
        row_filter: None,
    })
}

/// 0.6's refusal of a key range whose start key hashes after its end key (RandomPartitioner,
/// 0.6's only hashing partitioner).
pub const START_KEY_MD5_AFTER_END: &str = "start key's md5 sorts after end key's md5.  this is not allowed; you \
     probably should not specify end key at all, under RandomPartitioner";

/// A range read's error in 0.6's words where 0.6 worded it differently from 3.11.
pub fn range_error_06(e: ThriftError) -> ThriftError {
    match e {
        ThriftError::Invalid(why) if why == crate::thrift::convert::START_KEY_TOKEN_AFTER_END => {
            ire(START_KEY_MD5_AFTER_END)
        }
        other => other,
    }
}

/// A batch_mutate Mutation; a Deletion by SliceRange is refused, as 0.6 refused it.
pub fn mutation(m: v::Mutation) -> TResult<t::Mutation> {
    let deletion = match m.deletion {
        Some(d) => {
            if d.predicate.as_ref().is_some_and(|p| p.slice_range.is_some()) {
                return Err(ire("Deletion does not yet support SliceRange predicates."));
            }
            Some(t::Deletion {
                timestamp: Some(d.timestamp),
                super_column: d.super_column,
                predicate: d.predicate.map(predicate),
            })
        }
        None => None,
    };
    Ok(t::Mutation { column_or_supercolumn: m.column_or_supercolumn.map(cosc), deletion })
}

pub type MutationMap20 = BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>>;

pub fn mutation_map(map: BTreeMap<String, BTreeMap<String, Vec<v::Mutation>>>) -> TResult<MutationMap20> {
    map.into_iter()
        .map(|(k, by_cf)| {
            let by_cf = by_cf
                .into_iter()
                .map(|(cf, list)| Ok((cf, list.into_iter().map(mutation).collect::<TResult<Vec<_>>>()?)))
                .collect::<TResult<BTreeMap<_, _>>>()?;
            Ok((key(k), by_cf))
        })
        .collect()
}

/// batch_insert's map (column family → columns or super columns) as one row's batch_mutate.
pub fn batch_insert_map(k: String, cfmap: BTreeMap<String, Vec<v::ColumnOrSuperColumn>>) -> MutationMap20 {
    let by_cf = cfmap
        .into_iter()
        .map(|(cf, list)| {
            let mutations = list
                .into_iter()
                .map(|c| t::Mutation { column_or_supercolumn: Some(cosc(c)), deletion: None })
                .collect();
            (cf, mutations)
        })
        .collect();
    BTreeMap::from([(key(k), by_cf)])
}

// ----- results: 20.1.0 → 0.6 -----

pub fn key_string(k: Vec<u8>) -> String {
    match String::from_utf8(k) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

fn column_06(c: t::Column) -> v::Column {
    v::Column { name: c.name, value: c.value.unwrap_or_default(), timestamp: c.timestamp.unwrap_or_default() }
}

/// A read result. Counter columns have no 0.6 form and come back empty (the 20.1.0 front end
/// does not produce them yet either).
pub fn cosc_06(c: t::ColumnOrSuperColumn) -> v::ColumnOrSuperColumn {
    v::ColumnOrSuperColumn {
        column: c.column.map(column_06),
        super_column: c
            .super_column
            .map(|sc| v::SuperColumn { name: sc.name, columns: sc.columns.into_iter().map(column_06).collect() }),
    }
}

pub fn coscs_06(cs: Vec<t::ColumnOrSuperColumn>) -> Vec<v::ColumnOrSuperColumn> {
    cs.into_iter().map(cosc_06).collect()
}

pub fn key_slices_06(rows: Vec<t::KeySlice>) -> Vec<v::KeySlice> {
    rows.into_iter().map(|r| v::KeySlice { key: key_string(r.key), columns: coscs_06(r.columns) }).collect()
}

pub fn token_range_06(r: t::TokenRange) -> v::TokenRange {
    v::TokenRange { start_token: r.start_token, end_token: r.end_token, endpoints: r.endpoints }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_with_0_6_meanings() {
        use v::ConsistencyLevel as V;
        assert_eq!(write_level(V::ZERO), Ok(WriteLevel::FireAndForget));
        assert_eq!(write_level(V::DCQUORUM), Ok(WriteLevel::Wait(t::ConsistencyLevel::LOCAL_QUORUM)));
        assert_eq!(write_level(V::DCQUORUMSYNC), Ok(WriteLevel::Wait(t::ConsistencyLevel::EACH_QUORUM)));
        assert_eq!(write_level(V::ANY), Ok(WriteLevel::Wait(t::ConsistencyLevel::ANY)));
        assert_eq!(read_level(V::ALL), Ok(t::ConsistencyLevel::ALL));
        assert_eq!(read_level(V::QUORUM), Ok(t::ConsistencyLevel::QUORUM));
        assert!(matches!(read_level(V::ZERO), Err(ThriftError::Invalid(why)) if why.contains("zero")));
        assert!(matches!(read_level(V::ANY), Err(ThriftError::Invalid(why)) if why.contains("any")));
        assert!(matches!(write_level(V(9)), Err(ThriftError::Internal(_))));
        assert!(is_known_level(V::ANY) && !is_known_level(V(7)) && !is_known_level(V(-1)));
    }

    #[test]
    fn key_ranges_follow_0_6_pairing() {
        let keys = v::KeyRange::new("a".to_string(), "z".to_string(), None, None, 10);
        let r = key_range(keys).expect("a key pair is a range");
        assert_eq!((r.start_key, r.end_key, r.count), (Some(b"a".to_vec()), Some(b"z".to_vec()), 10));
        let tokens = v::KeyRange::new(None, None, "1".to_string(), "2".to_string(), 5);
        assert_eq!(key_range(tokens).expect("a token pair").start_token.as_deref(), Some("1"));
        for bad in [
            v::KeyRange::new("a".to_string(), None, None, None, 1),
            v::KeyRange::new(None, None, "1".to_string(), None, 1),
            v::KeyRange::new(None, None, None, None, 1),
            v::KeyRange::new("a".to_string(), "b".to_string(), "1".to_string(), "2".to_string(), 1),
        ] {
            assert!(matches!(key_range(bad.clone()), Err(ThriftError::Invalid(_))), "{bad:?}");
        }
    }

    #[test]
    fn deletions_keep_their_parts_and_refuse_slice_ranges() {
        let names = v::SlicePredicate::new(vec![b"c".to_vec()], None);
        let m = v::Mutation::new(None, v::Deletion::new(7, b"sc".to_vec(), names));
        let d = mutation(m).expect("a deletion by names").deletion.expect("a deletion");
        assert_eq!((d.timestamp, d.super_column.as_deref()), (Some(7), Some(&b"sc"[..])));
        assert_eq!(d.predicate.and_then(|p| p.column_names), Some(vec![b"c".to_vec()]));
        let range = v::SlicePredicate::new(None, v::SliceRange::new(vec![], vec![], false, 10));
        let m = v::Mutation::new(None, v::Deletion::new(7, None, range));
        assert!(matches!(mutation(m), Err(ThriftError::Invalid(why)) if why.contains("SliceRange")));
    }

    #[test]
    fn columns_cross_without_ttl_and_keys_as_utf8() {
        let c = column(v::Column::new(b"n".to_vec(), b"v".to_vec(), 3));
        assert_eq!((c.value.as_deref(), c.timestamp, c.ttl), (Some(&b"v"[..]), Some(3), None));
        let back =
            cosc_06(t::ColumnOrSuperColumn::new(t::Column::new(b"n".to_vec(), b"v".to_vec(), 3, 60), None, None, None));
        assert_eq!(back.column, Some(v::Column::new(b"n".to_vec(), b"v".to_vec(), 3)));
        assert_eq!(key_string(b"caf\xc3\xa9".to_vec()), "café");
        assert_eq!(key_string(vec![b'a', 0xff]), "a\u{fffd}");
        let map = batch_insert_map("k".into(), BTreeMap::from([("Cf".to_string(), vec![back])]));
        assert_eq!(map.get(&b"k"[..]).and_then(|m| m.get("Cf")).map(Vec::len), Some(1));
    }
}
