//! Range scans: partitions in token order, limited by rows (get_range_slices) or by columns
//! (get_paged_slice).

use std::cmp::Ordering;

use storage::data::Cell;
use storage::dht::DecoratedKey;
use storage::filter::ReadFilter;

use super::{Coordinator, CoordinatorError, PagedRangeCommand, RangeCommand, Result};
use crate::consistency::ConsistencyLevel;

/// Partitions with the cells a scan selected.
pub type Rows = Vec<(DecoratedKey, Vec<Cell>)>;

impl Coordinator {
    /// Partitions of `command.pieces`, in order, each with the live cells its filter selects;
    /// partitions with none are left out. At most `max_rows`.
    pub async fn scan(&self, command: RangeCommand, cl: ConsistencyLevel) -> Result<Rows> {
        cl.validate_for_read().map_err(CoordinatorError::Invalid)?;
        self.check_available(&command.keyspace, cl)?;
        self.blocking(move |storage| {
            let mut out = Vec::new();
            for (start, end) in &command.pieces {
                if out.len() >= command.max_rows {
                    break;
                }
                let rows = storage.scan(
                    &command.keyspace,
                    &command.cf,
                    start,
                    end,
                    &command.filter,
                    command.max_rows - out.len(),
                )?;
                out.extend(rows);
            }
            Ok(out)
        })
        .await
    }

    /// Every column of the partitions of `command.pieces`, in order, until `max_columns` are
    /// collected; in the range's start partition, only columns from the start column on.
    pub async fn scan_paged(&self, command: PagedRangeCommand, cl: ConsistencyLevel) -> Result<Rows> {
        cl.validate_for_read().map_err(CoordinatorError::Invalid)?;
        self.check_available(&command.keyspace, cl)?;
        let cmp = self.cf_metadata(&command.keyspace, &command.cf)?.cmp.clone();
        self.blocking(move |storage| {
            let mut budget = command.max_columns;
            let mut out = Vec::new();
            for (start, end) in &command.pieces {
                if budget == 0 {
                    break;
                }
                // Every row returned has a live column, so `budget` rows fill the budget; one
                // more covers a first row whose columns all sort before the start column.
                let rows = storage.scan(&command.keyspace, &command.cf, start, end, &ReadFilter::all(), budget + 1)?;
                for (key, cells) in rows {
                    if budget == 0 {
                        break;
                    }
                    let skip_before = command
                        .start
                        .as_ref()
                        .filter(|(first_key, column)| *first_key == key.key && !column.is_empty())
                        .map(|(_, column)| column);
                    let mut columns = Vec::new();
                    for c in cells {
                        if skip_before.is_some_and(|s| cmp.compare(&c.name, s) == Ordering::Less) {
                            continue;
                        }
                        if budget == 0 {
                            break;
                        }
                        budget -= 1;
                        columns.push(c);
                    }
                    if !columns.is_empty() {
                        out.push((key, columns));
                    }
                }
            }
            Ok(out)
        })
        .await
    }
}
