//! Point reads: one or several partitions, each its filter's live cells.

use std::collections::BTreeSet;

use storage::data::{split_super, Cell};
use storage::filter::{CountUnit, ReadFilter};

use super::{Coordinator, CoordinatorError, ReadCommand, Result, INLINE_MAX_COLUMNS, INLINE_MAX_KEYS};
use crate::consistency::ConsistencyLevel;

impl Coordinator {
    /// The live cells each command selects, in the commands' order.
    pub async fn read(&self, commands: Vec<ReadCommand>, cl: ConsistencyLevel) -> Result<Vec<Vec<Cell>>> {
        cl.validate_for_read().map_err(CoordinatorError::Invalid)?;
        let keyspaces: BTreeSet<&str> = commands.iter().map(|c| c.keyspace.as_str()).collect();
        for ks in keyspaces {
            self.check_available(ks, cl)?;
        }
        if is_small(&commands) {
            return read_all(&self.storage, &commands);
        }
        self.blocking(move |storage| read_all(storage, &commands)).await
    }

    /// How many columns each command's read returns (super columns, for a read of a super
    /// column family at the top level), as get_count and multiget_count answer.
    pub async fn count(&self, commands: Vec<ReadCommand>, cl: ConsistencyLevel) -> Result<Vec<usize>> {
        let units: Vec<CountUnit> = commands.iter().map(|c| c.filter.count_unit).collect();
        let rows = self.read(commands, cl).await?;
        Ok(rows.iter().zip(units).map(|(cells, unit)| count_cells(cells, unit)).collect())
    }
}

/// A read that is cheap enough to run on the caller's thread.
fn is_small(commands: &[ReadCommand]) -> bool {
    commands.len() <= INLINE_MAX_KEYS && commands.iter().all(|c| filter_is_small(&c.filter))
}

fn filter_is_small(filter: &ReadFilter) -> bool {
    let names_only = filter.ranges.iter().all(|(low, high)| !low.is_empty() && low == high);
    filter.count <= INLINE_MAX_COLUMNS || (names_only && filter.ranges.len() <= INLINE_MAX_COLUMNS)
}

fn read_all(storage: &storage::engine::Storage, commands: &[ReadCommand]) -> Result<Vec<Vec<Cell>>> {
    commands.iter().map(|c| Ok(storage.read(&c.keyspace, &c.cf, &c.key, &c.filter)?)).collect()
}

/// Cells, or distinct super columns among them.
pub(super) fn count_cells(cells: &[Cell], unit: CountUnit) -> usize {
    match unit {
        CountUnit::Cells => cells.len(),
        CountUnit::SuperColumns => {
            let mut n = 0;
            let mut last: Option<&[u8]> = None;
            for c in cells {
                let (sc, _) = split_super(&c.name);
                if last != Some(sc) {
                    n += 1;
                    last = Some(sc);
                }
            }
            n
        }
    }
}
