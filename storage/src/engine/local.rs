//! The node's own saved state in `system.local`: tokens, host id, cluster name, gossip
//! generation. Every setter writes the whole row and flushes it before it returns.

use tracing::info;
use uuid::Uuid;

use super::Storage;
use crate::data::now_seconds;
use crate::error::{Result, StorageError};
use crate::mutation::RowMutation;
use crate::system::{self, LocalState, SystemState};

impl Storage {
    /// This node's tokens, host id, saved cluster name, this start's gossip generation and the
    /// schema version.
    pub fn local_state(&self) -> LocalState {
        self.inner.state_lock.lock().local.clone()
    }

    /// Records this node's tokens durably (several with virtual nodes).
    pub fn save_tokens(&self, tokens: Vec<String>) -> Result<()> {
        self.update_local(|state| {
            state.local.tokens = tokens;
            Ok(())
        })
    }

    /// The first of this node's saved tokens (nodes with one token), if any.
    pub fn saved_token(&self) -> Option<String> {
        self.inner.state_lock.lock().local.tokens.first().cloned()
    }

    /// Records a single token durably (replaces all saved tokens).
    pub fn save_token(&self, token: String) -> Result<()> {
        self.save_tokens(vec![token])
    }

    /// Records the cluster name the data belongs to, replacing any saved one.
    pub fn save_cluster_name(&self, name: &str) -> Result<()> {
        self.update_local(|state| {
            state.local.cluster_name = Some(name.to_string());
            Ok(())
        })
    }

    /// Cassandra's start-up check: saves `configured` when no cluster name is saved yet, and
    /// refuses ([`StorageError::ClusterNameMismatch`], "Saved cluster name X != configured name
    /// Y") when the saved one differs, so a node never joins another cluster with its data.
    pub fn check_cluster_name(&self, configured: &str) -> Result<()> {
        self.update_local(|state| match &state.local.cluster_name {
            Some(saved) if saved == configured => Ok(()),
            Some(saved) => {
                Err(StorageError::ClusterNameMismatch { saved: saved.clone(), configured: configured.to_string() })
            }
            None => {
                state.local.cluster_name = Some(configured.to_string());
                Ok(())
            }
        })
    }

    /// At every start: refuses a partitioner other than the one the data was written with
    /// (saving it when none is saved yet), makes the host id if the node has none yet, and
    /// takes this start's gossip generation, max(now in seconds, saved + 1), saved durably
    /// before anyone sees it.
    pub(super) fn start_local_state(&self) -> Result<()> {
        let version = self.schema_version();
        let configured = self.partitioner().class_name();
        self.update_local(|state| {
            match &state.local.partitioner {
                Some(saved) if saved != configured => {
                    return Err(StorageError::PartitionerMismatch {
                        saved: saved.clone(),
                        configured: configured.to_string(),
                    });
                }
                Some(_) => {}
                None => state.local.partitioner = Some(configured.to_string()),
            }
            if state.local.host_id.is_nil() {
                state.local.host_id = Uuid::new_v4();
                info!(host_id = %state.local.host_id, "made this node's host id");
            }
            state.local.generation = now_seconds().max(state.local.generation.saturating_add(1));
            state.local.schema_version = version;
            state.bootstrapped = true;
            Ok(())
        })
    }

    /// A newer gossip generation for this running node, which starts gossiping again after it
    /// stopped (`nodetool enablegossip` after `disablegossip`): max(now in seconds, current + 1),
    /// saved durably before it is returned, so peers that saw the current one accept it and a
    /// later start takes a newer one still. Fails once the engine is shut down (drain).
    pub fn renew_generation(&self) -> Result<i32> {
        self.update_local(|state| {
            state.local.generation = now_seconds().max(state.local.generation.saturating_add(1));
            Ok(state.local.generation)
        })
    }

    /// Changes the node's state and writes the whole `local` row, flushed before this returns.
    /// When `change` fails nothing changes. The row's timestamp is taken under the state lock,
    /// so of two concurrent updates the later (which includes the earlier) also wins on disk.
    pub(super) fn update_local<R>(&self, change: impl FnOnce(&mut SystemState) -> Result<R>) -> Result<R> {
        let (result, row) = {
            let mut state = self.inner.state_lock.lock();
            let mut changed = state.clone();
            let result = change(&mut changed)?;
            let row = system::local::local_row(&changed, self.next_system_timestamp(), now_seconds())?;
            *state = changed;
            (result, row)
        };
        let mut m = RowMutation::new(system::KEYSPACE, system::LOCAL_KEY.to_vec());
        *m.row_mut(system::LOCAL_CF) = row;
        self.apply(m)?;
        let store = self.store(system::KEYSPACE, system::LOCAL_CF)?;
        self.flush_store(&store)?;
        Ok(result)
    }

    /// Strictly increasing timestamps for system writes, even within one microsecond.
    pub(super) fn next_system_timestamp(&self) -> i64 {
        let mut last = self.inner.last_system_timestamp.lock();
        *last = last.saturating_add(1).max(crate::data::now_micros());
        *last
    }

    /// Makes later system writes newer than `seen` (a timestamp that came from elsewhere).
    pub(super) fn advance_system_timestamp(&self, seen: i64) {
        let mut last = self.inner.last_system_timestamp.lock();
        *last = (*last).max(seen);
    }
}
