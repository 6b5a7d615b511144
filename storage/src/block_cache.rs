//! An engine's cache of verified SSTable blocks: index blocks and Data chunks, as they are
//! after their CRC check, so that a read of a hot partition needs neither a pread nor a CRC; and
//! key-cache entries (a small partition's Data position, by key), which spare a read the summary
//! search and the index block. It plays the part of Cassandra's key cache and chunk cache (or
//! RocksDB's block cache); the page cache still holds whatever this one evicts.
//!
//! Blocks are keyed by a file id, unique per opened SSTable component in this process (never
//! reused, so a deleted SSTable's blocks can never be served for another; they age out), and
//! the block's offset. Sixteen shards, each a map plus an insertion queue: eviction is FIFO,
//! which keeps hits cheap (no reordering under the lock) and does well enough for the uniform
//! and skewed point-read loads this serves. Capacity is in bytes of block data.
//!
//! Each [`crate::engine::Storage`] owns one cache and hands it to the SSTable readers it opens,
//! so two engines in one process (tests, tools) neither share nor evict each other's blocks.
//! The cache also tells those readers how to reach their files ([`DiskAccess`], storage-conf's
//! `DiskAccessMode`): a mapped component is read in place, so its blocks never come here; only
//! key-cache entries and the blocks of components read with pread do.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

const SHARDS: usize = 16;
/// Capacity when the engine's configuration does not say (BlockCacheSizeInMB).
pub const DEFAULT_CAPACITY: usize = 64 << 20;

type Key = (u64, u64);

/// Keys are two integers that [`mix`] spreads already; SipHash would cost more than the lookup.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = mix(self.0 ^ n);
    }
}

fn mix(x: u64) -> u64 {
    let x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// What the cache holds under a key.
enum Cached {
    /// A verified block.
    Block(Arc<[u8]>),
    /// A key-cache entry: a partition's Data offset and size, held in the map itself. Behind an
    /// `Arc` it cost each SSTable point read one more cache miss and an atomic increment (about
    /// 0.2 us of 0.53 in the cache lookup, bench/profile-vs-redis.sh sibyl read_sst).
    Position { offset: u64, size: u64 },
}

/// Bytes a key-cache entry counts against the capacity: its key and its position.
const POSITION_BYTES: usize = 32;

impl Cached {
    fn len(&self) -> usize {
        match self {
            Cached::Block(block) => block.len(),
            Cached::Position { .. } => POSITION_BYTES,
        }
    }
}

#[derive(Default)]
struct Shard {
    blocks: HashMap<Key, Cached, BuildHasherDefault<KeyHasher>>,
    order: VecDeque<Key>,
    bytes: usize,
    /// Lookups that found their block, and that did not (counted under the shard's lock, so
    /// that no counter shared by all cores sits on the read path).
    hits: u64,
    misses: u64,
}

pub struct BlockCache {
    shards: Box<[Mutex<Shard>]>,
    /// Bytes each shard may hold.
    shard_capacity: AtomicUsize,
    disk_access: DiskAccess,
}

/// How SSTable readers reach their files (Cassandra's `disk_access_mode`).
///
/// Mapped, a point read slices its index block and its Data chunk out of the page cache: no
/// system call and no copy, where pread costs two of each (bench/redis-vs-sibyl.sh). Each Data
/// chunk's CRC is still checked, the first time the reader reads it; the Index is checked whole
/// when the SSTable is opened, as in every mode. The price, as in Cassandra: an I/O error on a
/// mapped page, or a file shortened under a running node by another program, is a SIGBUS that
/// stops the process instead of an error that names the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DiskAccess {
    /// Index and Data mapped (`mmap`; what `auto` means on a 64-bit platform).
    #[default]
    Mmap,
    /// Index mapped, Data read with pread through the block cache (`mmap_index_only`).
    MmapIndexOnly,
    /// Both read with pread through the block cache (`standard`).
    Standard,
}

impl DiskAccess {
    pub fn maps_index(self) -> bool {
        self != DiskAccess::Standard
    }

    pub fn maps_data(self) -> bool {
        self == DiskAccess::Mmap
    }
}

/// File ids are unique in the process, not just in one cache: an id can then never name
/// another file's blocks, whichever engine's cache a reader is given.
static NEXT_FILE_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh id for an opened file's blocks.
pub fn next_file_id() -> u64 {
    NEXT_FILE_ID.fetch_add(1, Ordering::Relaxed)
}

impl BlockCache {
    /// A cache of `capacity` bytes, for readers that map their files ([`DiskAccess::Mmap`]).
    pub fn new(capacity: usize) -> BlockCache {
        BlockCache::with_disk_access(capacity, DiskAccess::default())
    }

    pub fn with_disk_access(capacity: usize, disk_access: DiskAccess) -> BlockCache {
        BlockCache {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            shard_capacity: AtomicUsize::new(capacity / SHARDS),
            disk_access,
        }
    }

    /// How the SSTables opened with this cache read their files.
    pub fn disk_access(&self) -> DiskAccess {
        self.disk_access
    }

    /// Sets the capacity in bytes (0 turns the cache off); blocks over it are evicted.
    pub fn set_capacity(&self, bytes: usize) {
        let per_shard = bytes / SHARDS;
        self.shard_capacity.store(per_shard, Ordering::Relaxed);
        for shard in self.shards.iter() {
            evict(&mut shard.lock(), per_shard);
        }
    }

    pub fn capacity(&self) -> usize {
        self.shard_capacity.load(Ordering::Relaxed) * SHARDS
    }

    fn shard(&self, key: Key) -> &Mutex<Shard> {
        &self.shards[(mix(key.0.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ key.1) >> 60) as usize % SHARDS]
    }

    /// The block kept for (`file`, `offset`).
    pub fn get(&self, file: u64, offset: u64) -> Option<Arc<[u8]>> {
        self.find((file, offset), |c| match c {
            Cached::Block(block) => Some(Arc::clone(block)),
            Cached::Position { .. } => None,
        })
    }

    /// The key-cache entry kept for (`file`, `slot`): a partition's Data offset and size.
    pub fn position(&self, file: u64, slot: u64) -> Option<(u64, u64)> {
        self.find((file, slot), |c| match c {
            Cached::Position { offset, size } => Some((*offset, *size)),
            Cached::Block(_) => None,
        })
    }

    fn find<T>(&self, key: Key, take: impl FnOnce(&Cached) -> Option<T>) -> Option<T> {
        let mut shard = self.shard(key).lock();
        let found = shard.blocks.get(&key).and_then(take);
        match found {
            Some(_) => shard.hits += 1,
            None => shard.misses += 1,
        }
        found
    }

    /// Keeps `block` (already verified) for later reads.
    pub fn insert(&self, file: u64, offset: u64, block: Arc<[u8]>) {
        self.keep((file, offset), Cached::Block(block));
    }

    /// Keeps a key-cache entry: the partition whose key hashes to `slot` lies at `offset`, `size`
    /// bytes long, in `file`'s Data.
    pub fn insert_position(&self, file: u64, slot: u64, offset: u64, size: u64) {
        self.keep((file, slot), Cached::Position { offset, size });
    }

    fn keep(&self, key: Key, value: Cached) {
        let capacity = self.shard_capacity.load(Ordering::Relaxed);
        let len = value.len();
        if len > capacity {
            return;
        }
        let mut shard = self.shard(key).lock();
        let shard = &mut *shard;
        if let Some(old) = shard.blocks.insert(key, value) {
            shard.bytes -= old.len();
        } else {
            shard.order.push_back(key);
        }
        shard.bytes += len;
        evict(shard, capacity);
    }

    /// Lookups that found their block, and lookups that did not.
    pub fn hits_and_misses(&self) -> (u64, u64) {
        self.shards.iter().map(|s| s.lock()).fold((0, 0), |(h, m), s| (h + s.hits, m + s.misses))
    }

    /// Bytes of blocks held.
    pub fn size(&self) -> usize {
        self.shards.iter().map(|s| s.lock().bytes).sum()
    }
}

fn evict(shard: &mut Shard, capacity: usize) {
    while shard.bytes > capacity {
        let Some(key) = shard.order.pop_front() else { break };
        if let Some(old) = shard.blocks.remove(&key) {
            shard.bytes -= old.len();
        }
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    fn block(byte: u8, len: usize) -> Arc<[u8]> {
        vec![byte; len].into()
    }

    #[test]
    fn keeps_blocks_until_capacity_then_evicts_oldest_first() {
        let cache = BlockCache::new(SHARDS * 100);
        // Same file, offsets landing in whatever shards; fill well past capacity.
        for i in 0..1000u64 {
            cache.insert(7, i * 4096, block(i as u8, 40));
        }
        assert!(cache.size() <= SHARDS * 100, "{} bytes held", cache.size());
        assert_eq!(cache.get(7, 999 * 4096).as_deref(), Some(&[999u64 as u8; 40][..]), "newest kept");
        assert!(cache.get(7, 0).is_none(), "oldest evicted");
        assert!(cache.get(8, 999 * 4096).is_none(), "another file's block is not this one");
        let (hits, misses) = cache.hits_and_misses();
        assert_eq!((hits, misses), (1, 2));
    }

    #[test]
    fn replacing_and_shrinking() {
        let cache = BlockCache::new(SHARDS * 1000);
        cache.insert(1, 0, block(1, 100));
        cache.insert(1, 0, block(2, 50));
        assert_eq!(cache.size(), 50);
        assert_eq!(cache.get(1, 0).unwrap()[0], 2);
        cache.insert_position(2, 77, 4096, 120);
        assert_eq!(cache.position(2, 77), Some((4096, 120)));
        assert_eq!(cache.size(), 50 + POSITION_BYTES);
        assert!(cache.get(2, 77).is_none() && cache.position(1, 0).is_none(), "a block is not a position");
        cache.insert(1, 4096, block(3, 10_000));
        assert!(cache.get(1, 4096).is_none(), "a block larger than a shard is not kept");
        cache.set_capacity(0);
        assert_eq!(cache.size(), 0);
        assert!(cache.get(1, 0).is_none());
    }
}
