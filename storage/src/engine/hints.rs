//! Hints: mutations kept in `system.hints` for a replica that was down, handed to it when it
//! returns (the cluster's hinted handoff replays them; the engine only keeps them).
//!
//! Nothing here runs on the ordinary write path: a node that writes no hints pays nothing.

use tracing::{info, warn};
use uuid::Uuid;

use super::Storage;
use crate::data::{now_seconds, Cell, DeletionTime};
use crate::dht::KeyBound;
use crate::error::Result;
use crate::filter::{CountUnit, ReadFilter};
use crate::mutation::RowMutation;
use crate::system::{self, hints};

/// A mutation waiting for its target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hint {
    /// Unique, and ordered as the hints were written.
    pub id: Uuid,
    pub mutation: RowMutation,
}

impl Storage {
    /// Keeps `mutation` for `target` (`ip:port`), durable through the commit log. The hint
    /// expires after the smallest gc_grace_seconds of the column families it touches (Cassandra's
    /// hint TTL: replayed later, it could resurrect data whose tombstone was purged meanwhile);
    /// when that is 0, nothing is kept, as in Cassandra. Fails if a column family is unknown.
    pub fn store_hint(&self, target: &str, mutation: &RowMutation) -> Result<()> {
        let mut updates = Vec::with_capacity(mutation.updates.len());
        let mut ttl = i32::MAX;
        for (cf, row) in &mutation.updates {
            let store = self.store(&mutation.keyspace, cf)?;
            ttl = ttl.min(store.gc_grace_seconds());
            updates.push((store.id, cf.clone(), row.clone()));
        }
        if updates.is_empty() {
            return Ok(());
        }
        if ttl <= 0 {
            info!(target, keyspace = %mutation.keyspace, "no hint kept: a column family has gc_grace_seconds 0");
            return Ok(());
        }
        let record = hints::HintRecord { keyspace: mutation.keyspace.clone(), key: mutation.key.clone(), updates };
        let written_at = self.next_system_timestamp();
        let id = hints::hint_id(written_at, rand::random());
        let cell = Cell::expiring(id.as_bytes().to_vec(), hints::encode_hint(&record), written_at, ttl, now_seconds());
        let mut m = RowMutation::new(system::KEYSPACE, target.as_bytes().to_vec());
        m.row_mut(system::HINTS_CF).cells.push(cell);
        self.apply(m)
    }

    /// Up to `limit` hints for `target`, oldest first. A hint whose column families were all
    /// dropped since is deleted and left out (a dropped one among others is left out of the
    /// mutation), so it is never applied; so is a hint that cannot be read, with a warning.
    pub fn hints_for(&self, target: &str, limit: usize) -> Result<Vec<Hint>> {
        let store = self.store(system::KEYSPACE, system::HINTS_CF)?;
        let key = self.decorate(target.as_bytes());
        let mut out = Vec::new();
        let mut from = Vec::new();
        while out.len() < limit {
            let wanted = limit - out.len();
            let filter = ReadFilter::slice(from.clone(), Vec::new(), false, wanted, CountUnit::Cells);
            let cells = store.read(&key, &filter, now_seconds())?;
            let more = cells.len() >= wanted;
            for cell in cells {
                // The next page starts just after this name (BytesType: append a zero byte).
                from = cell.name.clone();
                from.push(0);
                match self.hint_from_cell(target, &cell) {
                    Some(hint) => out.push(hint),
                    None => self.delete_hint_named(target, cell.name, cell.timestamp)?,
                }
            }
            if !more {
                break;
            }
        }
        Ok(out)
    }

    /// Deletes a hint (it was delivered).
    pub fn delete_hint(&self, target: &str, id: Uuid) -> Result<()> {
        self.delete_hint_named(target, id.as_bytes().to_vec(), hints::hint_written_at(&id))
    }

    /// Targets with hints left, in no particular order.
    pub fn hinted_targets(&self) -> Result<Vec<String>> {
        let one = ReadFilter::slice(Vec::new(), Vec::new(), false, 1, CountUnit::Cells);
        let rows = self.scan(
            system::KEYSPACE,
            system::HINTS_CF,
            &KeyBound::Unbounded,
            &KeyBound::Unbounded,
            &one,
            usize::MAX,
        )?;
        Ok(rows.into_iter().filter_map(|(key, _)| String::from_utf8(key.key).ok()).collect())
    }

    /// How many hints `target` has left (hints for dropped column families included until read).
    pub fn hint_count(&self, target: &str) -> Result<usize> {
        Ok(self.read(system::KEYSPACE, system::HINTS_CF, target.as_bytes(), &ReadFilter::all())?.len())
    }

    /// Deletes every hint kept for `target` (`nodetool truncatehints`): one row tombstone newer
    /// than any of them. How many there were.
    pub fn delete_hints_for(&self, target: &str) -> Result<usize> {
        let cells = self.read(system::KEYSPACE, system::HINTS_CF, target.as_bytes(), &ReadFilter::all())?;
        let Some(newest) = cells.iter().map(|c| c.timestamp).max() else {
            return Ok(0);
        };
        let timestamp = self.next_system_timestamp().max(newest.saturating_add(1));
        let mut m = RowMutation::new(system::KEYSPACE, target.as_bytes().to_vec());
        m.row_mut(system::HINTS_CF).deletion = DeletionTime::new(timestamp, now_seconds());
        self.apply(m)?;
        info!(target, hints = cells.len(), "deleted the hints kept for a replica");
        Ok(cells.len())
    }

    fn delete_hint_named(&self, target: &str, name: Vec<u8>, written_at: i64) -> Result<()> {
        let timestamp = self.next_system_timestamp().max(written_at);
        let mut m = RowMutation::new(system::KEYSPACE, target.as_bytes().to_vec());
        m.row_mut(system::HINTS_CF).cells.push(Cell::tombstone(name, timestamp, now_seconds()));
        self.apply(m)
    }

    /// The hint a cell holds, restricted to column families that still exist under the id they
    /// had when it was written; `None` when nothing is left or the cell cannot be read.
    fn hint_from_cell(&self, target: &str, cell: &Cell) -> Option<Hint> {
        let id = match Uuid::from_slice(&cell.name) {
            Ok(id) => id,
            Err(_) => {
                warn!(target, name = ?cell.name, "deleting a hint whose name is not a hint id");
                return None;
            }
        };
        let record = match hints::decode_hint(&cell.value) {
            Ok(r) => r,
            Err(e) => {
                warn!(target, %id, error = %e, "deleting a hint that cannot be read");
                return None;
            }
        };
        let mut mutation = RowMutation::new(record.keyspace, record.key);
        {
            let stores = self.inner.stores.read();
            for (cf_id, name, row) in record.updates {
                let alive = stores.by_id.get(&cf_id).is_some_and(|s| s.keyspace == mutation.keyspace && s.name == name);
                if alive {
                    mutation.updates.push((name, row));
                } else {
                    info!(target, %id, keyspace = %mutation.keyspace, cf = %name, "skipping a hint's update: its column family was dropped");
                }
            }
        }
        (!mutation.updates.is_empty()).then_some(Hint { id, mutation })
    }
}
