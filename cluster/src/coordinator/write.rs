//! Writes: mutations applied by every replica the consistency level needs.

use std::collections::BTreeSet;

use storage::mutation::RowMutation;

use super::{Coordinator, CoordinatorError, Result};
use crate::consistency::ConsistencyLevel;

impl Coordinator {
    /// Applies `mutations` and returns once `cl` is met: here, once the local commit log holds
    /// them as durably as its sync mode promises. Every keyspace is checked for availability
    /// before anything is applied.
    pub async fn mutate(&self, mutations: Vec<RowMutation>, cl: ConsistencyLevel) -> Result<()> {
        cl.validate_for_write().map_err(CoordinatorError::Invalid)?;
        let keyspaces: BTreeSet<&str> = mutations.iter().map(|m| m.keyspace.as_str()).collect();
        for ks in keyspaces {
            self.check_available(ks, cl)?;
        }
        if self.storage.writes_may_block() {
            // Batch-mode commit log (a write waits for its fsync), or flushes behind (a writer may
            // have to flush): the caller's thread must not be the one that waits.
            return self
                .blocking(move |storage| {
                    for m in mutations {
                        storage.apply(m)?;
                    }
                    Ok(())
                })
                .await;
        }
        let mut pending = Vec::with_capacity(mutations.len());
        for m in mutations {
            pending.push(self.storage.apply_deferred(m)?);
        }
        if pending.iter().any(|d| d.is_deferred()) {
            // Let the loop's other connections queue their records first: the first of them to
            // await its acknowledgement then writes them all with one write(2).
            tokio::task::yield_now().await;
            for durable in pending {
                durable.await?;
            }
        }
        Ok(())
    }

    /// Removes every row of a column family on every node holding it.
    pub async fn truncate(&self, keyspace: &str, cf: &str) -> Result<()> {
        let (keyspace, cf) = (keyspace.to_string(), cf.to_string());
        self.blocking(move |storage| Ok(storage.truncate(&keyspace, &cf)?)).await
    }
}
