//! The counter leader's local step (Cassandra's `CounterMutation.applyCounterMutation`): turns
//! each increment ([`CellKind::CounterUpdate`]) of a mutation into this node's new absolute shard
//! of the counter, old count + delta with clock + 1, and applies the result as an ordinary
//! mutation. The commit log therefore holds absolute shards, never deltas, and replaying it
//! cannot count an increment twice (see [`crate::counter`]).

use std::cmp::Ordering;

use parking_lot::{Mutex, MutexGuard};

use super::{Durable, Storage};
use crate::counter;
use crate::data::{Cell, CellKind};
use crate::error::Result;
use crate::filter::{CountUnit, ReadFilter};
use crate::mutation::RowMutation;

/// Striped locks over counters: a counter is read and rewritten by one leader step at a time.
/// The stripe is a hash of (keyspace, cf, key, counter name); a step takes the stripes of all
/// its counters in ascending order (so two steps never wait on each other in a circle) and holds
/// them until its result is in the memtable. Process-wide rather than per engine: two engines in
/// one process (tests) share stripes, which only costs some needless waiting.
const STRIPES: usize = 1024;
static COUNTER_LOCKS: [Mutex<()>; STRIPES] = [const { Mutex::new(()) }; STRIPES];

fn stripe(keyspace: &str, cf: &str, key: &[u8], name: &[u8]) -> usize {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (keyspace, cf, key, name).hash(&mut h);
    (h.finish() % STRIPES as u64) as usize
}

impl Storage {
    /// Leads the counter increments of `m` (see the module comment) and applies the result,
    /// durable per the commit log's sync mode when this returns. Returns the applied mutation,
    /// with absolute counter cells, for the other replicas.
    pub fn lead_counter_write(&self, m: RowMutation) -> Result<RowMutation> {
        self.lead_counter_with(m, |storage, m| storage.apply(m))
    }

    /// As [`Storage::lead_counter_write`], not waiting for the commit log write in periodic
    /// mode (see [`Storage::apply_deferred`]): acknowledge only once the [`Durable`] resolved.
    pub fn lead_counter_write_deferred(&self, m: RowMutation) -> Result<(RowMutation, Durable)> {
        let mut durable = None;
        let led = self.lead_counter_with(m, |storage, m| {
            durable = Some(storage.apply_deferred(m)?);
            Ok(())
        })?;
        Ok((led, durable.unwrap_or_else(Durable::now)))
    }

    fn lead_counter_with(
        &self,
        mut m: RowMutation,
        apply: impl FnOnce(&Storage, RowMutation) -> Result<()>,
    ) -> Result<RowMutation> {
        let node = self.local_state().host_id;
        let mut stripes: Vec<usize> = m
            .updates
            .iter()
            .flat_map(|(cf, row)| {
                row.cells.iter().filter(|c| c.is_counter_update()).map(|c| stripe(&m.keyspace, cf, &m.key, &c.name))
            })
            .collect();
        stripes.sort_unstable();
        stripes.dedup();
        let _guards: Vec<MutexGuard<'_, ()>> =
            stripes.iter().filter_map(|i| COUNTER_LOCKS.get(*i)).map(|l| l.lock()).collect();

        let dk = self.decorate(&m.key);
        for (cf, row) in m.updates.iter_mut() {
            let names: Vec<Vec<u8>> =
                row.cells.iter().filter(|c| c.is_counter_update()).map(|c| c.name.clone()).collect();
            if names.is_empty() {
                continue;
            }
            let store = self.store(&m.keyspace, cf)?;
            let current = store.read_row(&dk, &ReadFilter::names(&store.cmp, names, CountUnit::Cells))?;
            for cell in row.cells.iter_mut() {
                let CellKind::CounterUpdate { delta } = cell.kind else { continue };
                let old = current
                    .cells
                    .binary_search_by(|c| store.cmp.compare(&c.name, &cell.name))
                    .ok()
                    .and_then(|i| current.cells.get(i))
                    .filter(|c| c.kind == CellKind::Counter)
                    .and_then(|c| counter::shard_of(&c.value, &node));
                let (clock, count) = old.map(|s| (s.clock, s.count)).unwrap_or((0, 0));
                let context = counter::single(node, clock.saturating_add(1), count.wrapping_add(delta));
                *cell = Cell::counter(std::mem::take(&mut cell.name), context, cell.timestamp);
            }
            // Cells stay in comparator order: names did not change.
            debug_assert!(row.cells.windows(2).all(|w| store.cmp.compare(&w[0].name, &w[1].name) == Ordering::Less));
        }
        apply(self, m.clone())?;
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Row;
    use crate::engine::StorageConfig;
    use crate::schema::{CfDef, KeyspaceDef};

    const COUNTER: &str = "org.apache.cassandra.db.marshal.CounterColumnType";

    fn open(dir: &std::path::Path) -> Storage {
        let mut c = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
        let mut ks = KeyspaceDef::new("ks");
        let mut cf = CfDef::new("ks", "song_data");
        cf.default_validation_class = COUNTER.into();
        ks.cf_defs.push(cf);
        c.initial_keyspaces = vec![ks];
        Storage::open(c).expect("opens")
    }

    fn increment(by: i64, ts: i64) -> RowMutation {
        let mut row = Row::new();
        row.cells.push(Cell::counter_update("likes", by, ts));
        let mut m = RowMutation::new("ks", b"song1".to_vec());
        *m.row_mut("song_data") = row;
        m
    }

    fn value(s: &Storage) -> Option<i64> {
        let cells = s.read("ks", "song_data", b"song1", &ReadFilter::all()).expect("reads");
        cells.first().map(|c| counter::total(&c.value))
    }

    /// Increments are led and logged as absolute shards: dropping the engine without a flush and
    /// replaying its commit log (twice: the second reopen replays nothing new, or the same records
    /// again) gives the same value, never one counted twice.
    #[test]
    fn replaying_the_commit_log_never_counts_twice() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = open(dir.path());
        let node = s.local_state().host_id;

        let mut last = None;
        for i in 0..10 {
            last = Some(s.lead_counter_write(increment(if i % 3 == 0 { -1 } else { 2 }, i)).expect("leads"));
        }
        assert_eq!(value(&s), Some(8));
        // What goes to the other replicas is this node's absolute shard, not the delta.
        let sent = last.expect("a write");
        let cell = sent.updates.first().and_then(|(_, r)| r.cells.first()).expect("a cell").clone();
        assert_eq!(cell.kind, CellKind::Counter);
        assert_eq!(
            counter::shards(&cell.value).collect::<Vec<_>>(),
            vec![counter::Shard { node, clock: 10, count: 8 }]
        );
        // Applying it again (a replayed message, a hint) changes nothing.
        s.apply(sent.clone()).expect("applies");
        assert_eq!(value(&s), Some(8));
        // The engine refuses a delta not led.
        assert!(s.apply(increment(1, 99)).is_err());
        s.abandon();

        for _ in 0..2 {
            let s = open(dir.path());
            assert_eq!(s.local_state().host_id, node);
            assert_eq!(value(&s), Some(8));
            s.abandon();
        }
        let s = open(dir.path());
        s.lead_counter_write(increment(5, 20)).expect("leads");
        assert_eq!(value(&s), Some(13));
        s.flush_all().expect("flush");
        s.abandon();
        let s = open(dir.path());
        assert_eq!(value(&s), Some(13));
    }
}
