//! Counter contexts: the value of a counter cell (Cassandra 2.1+'s `CounterContext`, global
//! shards only).
//!
//! A counter is not stored as a number but as one shard per node that ever led an increment of
//! it: (node id, logical clock, count). Only the node a shard belongs to writes it, one
//! increment at a time under a lock, each time with its clock one higher and its count the old
//! count plus the increment. Every copy of the cell anywhere (commit log, memtables, SSTables,
//! other replicas, hints, read repair) therefore holds *absolute* shards, and two versions of
//! one node's shard are reconciled by keeping the higher clock, never by adding them: merging is
//! idempotent, commutative and associative, so replaying a commit log, applying a hint twice or
//! repairing a replica never counts an increment twice. The value a client reads is the sum of
//! the shards' counts.
//!
//! ```text
//! context := shard*            sorted by node id (unsigned bytes), each id at most once
//! shard   := node_id[16] clock:i64 count:i64        big-endian; 32 bytes
//! ```
//!
//! The node id is the node's host id (`system.local`), which it keeps for life.
//!
//! Two shards of one node with the same clock and different counts should never exist; if they
//! do (a bug, or a node that lost its data and reused its id), the greater count is kept so that
//! every replica picks the same one, as Cassandra does.

use std::cmp::Ordering;

use uuid::Uuid;

use crate::error::CorruptData;

/// Bytes of one shard: node id, clock, count.
pub const SHARD_LEN: usize = 32;

/// One node's part of a counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shard {
    pub node: Uuid,
    pub clock: i64,
    pub count: i64,
}

impl Shard {
    fn read(bytes: &[u8; SHARD_LEN]) -> Shard {
        // Fixed offsets inside a fixed-size array: these copies cannot fail.
        let (mut id, mut clock, mut count) = ([0u8; 16], [0u8; 8], [0u8; 8]);
        id.copy_from_slice(&bytes[..16]);
        clock.copy_from_slice(&bytes[16..24]);
        count.copy_from_slice(&bytes[24..]);
        Shard { node: Uuid::from_bytes(id), clock: i64::from_be_bytes(clock), count: i64::from_be_bytes(count) }
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.node.as_bytes());
        out.extend_from_slice(&self.clock.to_be_bytes());
        out.extend_from_slice(&self.count.to_be_bytes());
    }
}

/// The shards of a context, in order. A trailing partial shard (only in bytes that failed
/// [`validate`]) is ignored rather than read.
pub fn shards(context: &[u8]) -> impl Iterator<Item = Shard> + '_ {
    context.chunks_exact(SHARD_LEN).filter_map(|c| <&[u8; SHARD_LEN]>::try_from(c).ok()).map(Shard::read)
}

/// A context of one shard.
pub fn single(node: Uuid, clock: i64, count: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(SHARD_LEN);
    Shard { node, clock, count }.write(&mut out);
    out
}

/// A context of the given shards; they must be sorted by node id with no id twice.
pub fn from_shards(list: &[Shard]) -> Vec<u8> {
    let mut out = Vec::with_capacity(list.len() * SHARD_LEN);
    for s in list {
        s.write(&mut out);
    }
    out
}

/// The counter's value: the sum of its shards' counts (wrapping, as Cassandra's long arithmetic).
pub fn total(context: &[u8]) -> i64 {
    shards(context).fold(0i64, |sum, s| sum.wrapping_add(s.count))
}

/// `node`'s shard of the counter, if it has one.
pub fn shard_of(context: &[u8], node: &Uuid) -> Option<Shard> {
    shards(context).find(|s| s.node == *node)
}

/// Checks a context read from outside (disk, network): whole shards, node ids strictly
/// ascending.
pub fn validate(context: &[u8]) -> Result<(), CorruptData> {
    if !context.chunks_exact(SHARD_LEN).remainder().is_empty() {
        return Err(CorruptData::BadValue { what: "counter context length", value: context.len() as u64 });
    }
    let mut previous: Option<Uuid> = None;
    for s in shards(context) {
        if previous.is_some_and(|p| p.as_bytes() >= s.node.as_bytes()) {
            return Err(CorruptData::BadValue { what: "counter context shard order", value: s.clock as u64 });
        }
        previous = Some(s.node);
    }
    Ok(())
}

/// Which of two versions of one node's shard a merge keeps: the higher clock; on equal clocks
/// the greater count (they should be equal; see the module comment).
fn newer(a: Shard, b: Shard) -> Shard {
    match a.clock.cmp(&b.clock) {
        Ordering::Greater => a,
        Ordering::Less => b,
        Ordering::Equal if b.count > a.count => b,
        Ordering::Equal => a,
    }
}

/// Merges two contexts shard by shard: every node's shard once, the newer version of it when
/// both have one. Never sums two versions of a shard.
pub fn merge(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    let mut left = shards(a).peekable();
    let mut right = shards(b).peekable();
    loop {
        let next = match (left.peek(), right.peek()) {
            (Some(x), Some(y)) => match x.node.as_bytes().cmp(y.node.as_bytes()) {
                Ordering::Less => left.next(),
                Ordering::Greater => right.next(),
                Ordering::Equal => match (left.next(), right.next()) {
                    (Some(x), Some(y)) => Some(newer(x, y)),
                    (x, y) => x.or(y),
                },
            },
            (Some(_), None) => left.next(),
            (None, Some(_)) => right.next(),
            (None, None) => break,
        };
        if let Some(shard) = next {
            shard.write(&mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn id(n: u8) -> Uuid {
        Uuid::from_bytes([n; 16])
    }

    #[test]
    fn merging_keeps_the_higher_clock_and_never_sums() {
        let a = from_shards(&[Shard { node: id(1), clock: 3, count: 30 }, Shard { node: id(2), clock: 1, count: 5 }]);
        let b = from_shards(&[Shard { node: id(1), clock: 2, count: 20 }, Shard { node: id(3), clock: 7, count: -4 }]);
        let m = merge(&a, &b);
        assert_eq!(
            shards(&m).collect::<Vec<_>>(),
            vec![
                Shard { node: id(1), clock: 3, count: 30 },
                Shard { node: id(2), clock: 1, count: 5 },
                Shard { node: id(3), clock: 7, count: -4 },
            ]
        );
        assert_eq!(total(&m), 31);
        // The same increment merged again changes nothing.
        assert_eq!(merge(&m, &a), m);
        assert_eq!(merge(&m, &m), m);
        assert_eq!(shard_of(&m, &id(3)), Some(Shard { node: id(3), clock: 7, count: -4 }));
        assert_eq!(shard_of(&m, &id(9)), None);
    }

    #[test]
    fn equal_clocks_keep_the_greater_count_either_way() {
        let a = single(id(1), 5, 10);
        let b = single(id(1), 5, 12);
        assert_eq!(merge(&a, &b), b);
        assert_eq!(merge(&b, &a), b);
    }

    #[test]
    fn validation_refuses_partial_shards_and_disorder() {
        assert!(validate(&[]).is_ok());
        assert!(validate(&single(id(1), 1, 1)).is_ok());
        assert!(validate(&[0u8; 31]).is_err());
        let mut disordered = single(id(2), 1, 1);
        disordered.extend(single(id(1), 1, 1));
        assert!(validate(&disordered).is_err());
        let mut twice = single(id(1), 1, 1);
        twice.extend(single(id(1), 2, 1));
        assert!(validate(&twice).is_err());
        // Garbage never panics the readers.
        assert_eq!(total(&[1u8; 40]), total(&[1u8; 32]));
    }

    #[test]
    fn totals_wrap_like_java_longs() {
        let c =
            from_shards(&[Shard { node: id(1), clock: 1, count: i64::MAX }, Shard { node: id(2), clock: 1, count: 1 }]);
        assert_eq!(total(&c), i64::MIN);
    }

    fn context() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::btree_map(0u8..6, (0i64..5, -100i64..100), 0..6).prop_map(|m| {
            let list: Vec<Shard> =
                m.into_iter().map(|(n, (clock, count))| Shard { node: id(n), clock, count }).collect();
            from_shards(&list)
        })
    }

    proptest! {
        /// Merge is a join: commutative (up to the equal-clock tie rule, which is symmetric),
        /// associative and idempotent, so the order and number of times versions meet never
        /// matters.
        #[test]
        fn merge_is_commutative_associative_and_idempotent(a in context(), b in context(), c in context()) {
            prop_assert_eq!(merge(&a, &b), merge(&b, &a));
            prop_assert_eq!(merge(&merge(&a, &b), &c), merge(&a, &merge(&b, &c)));
            prop_assert_eq!(merge(&a, &a), a.clone());
            prop_assert!(validate(&merge(&a, &b)).is_ok());
        }
    }
}
