//! The read path: one partition, or partitions in token order, merged from memtables and
//! SSTables; plus the key-count estimate range splitting needs.

use super::Storage;
use crate::data::{now_seconds, Cell, Row};
use crate::dht::{DecoratedKey, KeyBound, Range};
use crate::error::Result;
use crate::filter::ReadFilter;

impl Storage {
    pub fn decorate(&self, key: &[u8]) -> DecoratedKey {
        self.inner.config.partitioner.decorate(key)
    }

    /// The live cells of one row that `filter` selects.
    pub fn read(&self, keyspace: &str, cf: &str, key: &[u8], filter: &ReadFilter) -> Result<Vec<Cell>> {
        self.read_at(keyspace, cf, &self.decorate(key), filter)
    }

    /// As [`Storage::read`], for a caller that already decorated the key with this engine's
    /// partitioner (a coordinator placed the read by its token).
    pub fn read_at(&self, keyspace: &str, cf: &str, key: &DecoratedKey, filter: &ReadFilter) -> Result<Vec<Cell>> {
        let store = self.store(keyspace, cf)?;
        store.read(key, filter, now_seconds())
    }

    /// What a replica answers for a read of one partition: the part `filter` selects, tombstones
    /// included ([`crate::filter::slice_row`]), for a coordinator to reconcile with other
    /// replicas' answers. An absent partition is an empty row.
    pub fn read_slice(&self, keyspace: &str, cf: &str, key: &[u8], filter: &ReadFilter) -> Result<Row> {
        let store = self.store(keyspace, cf)?;
        let row = store.read_row(&self.decorate(key), filter)?;
        Ok(crate::filter::slice_row(&store.cmp, &row, filter, now_seconds()))
    }

    /// What a replica answers for a range read: every partition present between `start` and `end`
    /// (non-wrapping), in key order, each sliced by `filter` with its tombstones
    /// ([`Storage::read_slice`]), at most `max_rows` of them. A partition whose data is all
    /// deleted is present until compaction purges its tombstones, as in Cassandra.
    pub fn scan_slices(
        &self,
        keyspace: &str,
        cf: &str,
        start: &KeyBound,
        end: &KeyBound,
        filter: &ReadFilter,
        max_rows: usize,
    ) -> Result<Vec<(DecoratedKey, Row)>> {
        let now = now_seconds();
        let mut out = Vec::new();
        self.for_each_partition(keyspace, cf, start, end, |cmp, key, row| {
            if out.len() >= max_rows {
                return false;
            }
            out.push((key, crate::filter::slice_row(cmp, &row, filter, now)));
            out.len() < max_rows
        })?;
        Ok(out)
    }

    /// An MD5 of every partition between `start` and `end` (non-wrapping) as a range read of all
    /// cells returns it (tombstones included, in the engine's row encoding), with its key, and
    /// how many partitions there are. Replicas holding the same data give the same digest:
    /// repair compares these before it moves any partition.
    pub fn digest_range(&self, keyspace: &str, cf: &str, start: &KeyBound, end: &KeyBound) -> Result<([u8; 16], u64)> {
        use md5::{Digest, Md5};
        let now = now_seconds();
        let all = ReadFilter::all();
        let mut md5 = Md5::new();
        let mut partitions = 0u64;
        let mut encoded = Vec::new();
        self.for_each_partition(keyspace, cf, start, end, |cmp, key, row| {
            encoded.clear();
            crate::data::encode_row(&crate::filter::slice_row(cmp, &row, &all, now), &mut encoded);
            md5.update((key.key.len() as u64).to_be_bytes());
            md5.update(&key.key);
            md5.update((encoded.len() as u64).to_be_bytes());
            md5.update(&encoded);
            partitions += 1;
            true
        })?;
        Ok((md5.finalize().into(), partitions))
    }

    /// Rows in key order between `start` and `end` (non-wrapping), with the cells `filter`
    /// selects; rows with no such live cell are left out. At most `max_rows` rows.
    pub fn scan(
        &self,
        keyspace: &str,
        cf: &str,
        start: &KeyBound,
        end: &KeyBound,
        filter: &ReadFilter,
        max_rows: usize,
    ) -> Result<Vec<(DecoratedKey, Vec<Cell>)>> {
        let now = now_seconds();
        let mut out = Vec::new();
        self.for_each_partition(keyspace, cf, start, end, |cmp, key, row| {
            if out.len() >= max_rows {
                return false;
            }
            let cells = crate::filter::collect_live(cmp, &row, filter, now);
            if !cells.is_empty() {
                out.push((key, cells));
            }
            out.len() < max_rows
        })?;
        Ok(out)
    }

    /// Hands every merged partition between `start` and `end` (non-wrapping) to `f`, in key order,
    /// until `f` says to stop.
    fn for_each_partition(
        &self,
        keyspace: &str,
        cf: &str,
        start: &KeyBound,
        end: &KeyBound,
        mut f: impl FnMut(&crate::comparator::CellComparator, DecoratedKey, Row) -> bool,
    ) -> Result<()> {
        let store = self.store(keyspace, cf)?;
        for item in store.scan(start)? {
            let (key, row) = item?;
            if !start.admits_from_below(&key) {
                continue;
            }
            if !end.admits_from_above(&key) || !f(&store.cmp, key, row) {
                break;
            }
        }
        Ok(())
    }

    /// About how many partitions of a column family lie in `range`: each SSTable's key count
    /// scaled by the share of its key samples inside the range, plus the active memtable's
    /// partitions (all counted: they are few next to SSTables, and an estimate).
    pub fn estimate_keys(&self, keyspace: &str, cf: &str, range: &Range) -> Result<u64> {
        let store = self.store(keyspace, cf)?;
        let mut total = 0u64;
        for s in store.sstables() {
            let samples = s.sample_keys();
            if samples.is_empty() {
                continue;
            }
            let inside = samples.iter().filter(|k| range.contains(&k.token)).count() as u64;
            total += s.metadata().key_count * inside / samples.len() as u64;
        }
        Ok(total + store.active_memtable().partitions() as u64)
    }
}
