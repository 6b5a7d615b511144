//! Compare-and-set's Paxos state in `system.paxos` ([`crate::system::paxos`] has the layout): read
//! whole, written one field at a time through the commit log. The cluster crate decides what
//! to write (the promise and accept rules) and serialises the rounds of one partition; the
//! engine only keeps what it is told, so that a replica that restarts remembers what it promised.

use super::Storage;
use crate::data::now_seconds;
use crate::data::Cell;
use crate::error::{Result, StorageError};
use crate::mutation::RowMutation;
use crate::system::{self, paxos};

use crate::system::paxos::{PaxosRecord, StoredCommit};

impl Storage {
    /// This replica's Paxos state for partition `key` of `keyspace.cf` (all absent before the
    /// first round). Fails if the column family does not exist.
    pub fn paxos_state(&self, keyspace: &str, cf: &str, key: &[u8]) -> Result<PaxosRecord> {
        let target = self.store(keyspace, cf)?;
        let store = self.store(system::KEYSPACE, system::PAXOS_CF)?;
        let cells = store.read(&self.decorate(key), &paxos::state_filter(&target.id), now_seconds())?;
        paxos::decode_state(&target.id, &cells).map_err(|e| StorageError::CorruptSystemRow {
            cf: system::PAXOS_CF,
            key: String::from_utf8_lossy(key).into_owned(),
            detail: e.to_string(),
        })
    }

    /// Records the promise of `ballot`; durable when this returns.
    pub fn save_paxos_promise(&self, keyspace: &str, cf: &str, key: &[u8], ballot: &uuid::Uuid) -> Result<()> {
        self.save_paxos_cell(keyspace, cf, key, |id, ttl| paxos::promise_cell(id, ballot, ttl))
    }

    /// Records the acceptance of `proposal`; durable when this returns.
    pub fn save_paxos_proposal(&self, keyspace: &str, cf: &str, key: &[u8], proposal: &StoredCommit) -> Result<()> {
        self.save_paxos_cell(keyspace, cf, key, |id, ttl| paxos::proposal_cell(id, proposal, ttl))
    }

    /// Records `commit` as committed (the most recent commit unless a newer one is known); the
    /// caller applies its update to the column family itself. Durable when this returns.
    pub fn save_paxos_commit(&self, keyspace: &str, cf: &str, key: &[u8], commit: &StoredCommit) -> Result<()> {
        self.save_paxos_cell(keyspace, cf, key, |id, ttl| paxos::commit_cell(id, commit, ttl))
    }

    fn save_paxos_cell(
        &self,
        keyspace: &str,
        cf: &str,
        key: &[u8],
        cell: impl FnOnce(&uuid::Uuid, i32) -> Cell,
    ) -> Result<()> {
        let target = self.store(keyspace, cf)?;
        let ttl = paxos::ttl_for(target.gc_grace_seconds());
        let mut m = RowMutation::new(system::KEYSPACE, key.to_vec());
        m.row_mut(system::PAXOS_CF).cells.push(cell(&target.id, ttl));
        self.apply(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Row;
    use crate::engine::StorageConfig;
    use crate::schema::{CfDef, KeyspaceDef};

    fn open(dir: &std::path::Path) -> Storage {
        let mut ks = KeyspaceDef::new("ks");
        ks.cf_defs.push(CfDef::new("ks", "cf"));
        ks.cf_defs.push(CfDef::new("ks", "other"));
        let mut config = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
        config.initial_keyspaces = vec![ks];
        Storage::open(config).expect("opens")
    }

    fn ballot(micros: i64, tail: u8) -> uuid::Uuid {
        let ticks = 0x01B2_1DD2_1381_4000u64 + (micros as u64) * 10;
        uuid::Builder::from_gregorian_timestamp(ticks, 0, &[0, 0, 0, 0, 0, tail]).into_uuid()
    }

    fn commit(micros: i64, value: &str) -> StoredCommit {
        let mut update = Row::new();
        update.cells.push(Cell::live("c", value, micros));
        StoredCommit { ballot: ballot(micros, 1), update }
    }

    #[test]
    fn state_survives_a_restart_and_keeps_the_highest_ballots() {
        let dir = tempfile::tempdir().expect("tempdir");
        {
            let s = open(dir.path());
            assert_eq!(s.paxos_state("ks", "cf", b"k").expect("reads"), PaxosRecord::default());
            s.save_paxos_promise("ks", "cf", b"k", &ballot(20, 0)).expect("promise");
            // A late promise of an older ballot changes nothing.
            s.save_paxos_promise("ks", "cf", b"k", &ballot(10, 0)).expect("old promise");
            s.save_paxos_proposal("ks", "cf", b"k", &commit(20, "a")).expect("accept");
            s.save_paxos_commit("ks", "cf", b"k", &commit(15, "old")).expect("commit");
            // Another column family and another key are separate.
            s.save_paxos_promise("ks", "other", b"k", &ballot(99, 0)).expect("other cf");
            s.save_paxos_promise("ks", "cf", b"j", &ballot(98, 0)).expect("other key");
            // No clean shutdown: the state comes back from the commit log.
        }
        let s = open(dir.path());
        let record = s.paxos_state("ks", "cf", b"k").expect("reads");
        assert_eq!(record.promised, Some(ballot(20, 0)));
        assert_eq!(record.accepted, Some(commit(20, "a")));
        assert_eq!(record.committed, Some(commit(15, "old")));
        assert_eq!(record.in_progress(), Some(&commit(20, "a")));
        s.save_paxos_commit("ks", "cf", b"k", &commit(20, "a")).expect("commit");
        s.flush_all().expect("flush");
        let record = s.paxos_state("ks", "cf", b"k").expect("reads");
        assert_eq!(record.committed, Some(commit(20, "a")));
        assert_eq!(record.in_progress(), None, "the commit ends the round");
        assert_eq!(s.paxos_state("ks", "other", b"k").expect("reads").promised, Some(ballot(99, 0)));
        assert!(matches!(s.paxos_state("ks", "nope", b"k"), Err(StorageError::UnknownColumnFamily { .. })));
    }
}
