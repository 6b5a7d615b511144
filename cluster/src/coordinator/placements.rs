//! Each keyspace's strategy and replicas, kept while the schema and the ring stay as they were.
//!
//! Every request asks for its keyspace's placement. Parsing the strategy and finding its
//! replica map each time cost a read a fifth of a microsecond, so the answers are kept in a
//! map shared by the node's threads; and each thread remembers the last one it was given, which
//! answers nearly every request without the map's lock and hash (the map's read lock, its
//! hash of the name and the entry's reference count were about 100 of a read's 6,600
//! instructions).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;
use rustc_hash::FxHashMap;

use membership::locator::replication::{ReplicaMap, ReplicationStrategy};

/// Where one keyspace's data lives, as of one schema and one ring.
pub(super) struct Placement {
    pub(super) schema_generation: u64,
    pub(super) ring_version: u64,
    pub(super) strategy: ReplicationStrategy,
    pub(super) map: Arc<ReplicaMap>,
    /// This node is every range's only replica: requests skip choosing replicas.
    pub(super) local_only: bool,
}

impl Placement {
    fn current(&self, schema_generation: u64, ring_version: u64) -> bool {
        self.schema_generation == schema_generation && self.ring_version == ring_version
    }
}

/// One coordinator's placements.
pub(super) struct Placements {
    /// Tells this coordinator's entries from another's in a thread's memory (tests run several
    /// nodes in one process, and their schema generations and ring versions may coincide).
    id: u64,
    by_keyspace: RwLock<FxHashMap<String, Arc<Placement>>>,
}

/// A thread's last placement, and whose it is.
struct Last {
    coordinator: u64,
    keyspace: String,
    placement: Arc<Placement>,
}

thread_local! {
    static LAST: RefCell<Option<Last>> = const { RefCell::new(None) };
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

impl Placements {
    pub(super) fn new() -> Placements {
        Placements { id: NEXT_ID.fetch_add(1, Ordering::Relaxed), by_keyspace: RwLock::default() }
    }

    /// The keyspace's placement if one is kept for this schema generation and ring version.
    pub(super) fn get(&self, keyspace: &str, schema_generation: u64, ring_version: u64) -> Option<Arc<Placement>> {
        let remembered = LAST.with_borrow(|last| match last {
            Some(l) if l.coordinator == self.id && l.keyspace == keyspace => {
                l.placement.current(schema_generation, ring_version).then(|| l.placement.clone())
            }
            _ => None,
        });
        if remembered.is_some() {
            return remembered;
        }
        let found =
            self.by_keyspace.read().get(keyspace).filter(|p| p.current(schema_generation, ring_version)).cloned();
        if let Some(p) = &found {
            self.remember(keyspace, p);
        }
        found
    }

    /// Keeps `placement` for the keyspace, for every thread.
    pub(super) fn put(&self, keyspace: &str, placement: &Arc<Placement>) {
        self.by_keyspace.write().insert(keyspace.to_string(), placement.clone());
        self.remember(keyspace, placement);
    }

    fn remember(&self, keyspace: &str, placement: &Arc<Placement>) {
        LAST.with_borrow_mut(|last| match last {
            Some(l) if l.coordinator == self.id && l.keyspace == keyspace => l.placement = placement.clone(),
            _ => {
                *last =
                    Some(Last { coordinator: self.id, keyspace: keyspace.to_string(), placement: placement.clone() })
            }
        });
    }
}
