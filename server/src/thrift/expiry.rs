//! The TTL a written column gets, with Cassandra 3.11's rules (ThriftValidation.validateTtl and
//! ExpirationDateOverflowHandling): a TTL given with the column wins, 0 included, which means "no
//! expiry" even on a column family with a default_time_to_live (CASSANDRA-11207); a column without
//! one takes the column family's default. TTLs run up to 20 years.
//!
//! Cassandra keeps expiry dates in 32-bit seconds, so an expiry past 2038-01-19T03:14:06Z (its
//! largest) is capped there, with a rate-limited warning naming the table. Sibyl's cells hold
//! 64-bit expiries and keep it whole, but log the warning in 3.11's words up to the date, so a log
//! watcher written for 3.11 still finds it, then say what Sibyl does instead of capping (see
//! docs/design.md, "Expiry past 2038").

use std::collections::HashMap;
use std::sync::Mutex;

use model::schema::CfMetadata;
use tracing::warn;

use super::error::{ire, TResult};
use super::validate::MAX_TTL;

/// Cassandra's largest expiry date (Cell.MAX_DELETION_TIME, `Integer.MAX_VALUE - 1` seconds).
pub const MAX_DELETION_TIME: i32 = i32::MAX - 1;

/// Cassandra's NoSpamLogger interval for the overflow warning (5 minutes), in seconds.
const OVERFLOW_WARNING_INTERVAL_SECS: i32 = 5 * 60;

/// The TTL of a column written with `requested` (the Thrift Column's ttl) at `now` (node seconds):
/// 0 for none. Refuses what 3.11 refuses, with its reasons; warns of an expiry past 2038.
pub fn column_ttl(meta: &CfMetadata, requested: Option<i32>, now: i32) -> TResult<i32> {
    let (ttl, is_default) = match requested {
        Some(ttl) if ttl < 0 => return Err(ire("ttl must be greater or equal to 0")),
        Some(ttl) if ttl > MAX_TTL => {
            return Err(ire(format!("ttl is too large. requested ({ttl}) maximum ({MAX_TTL})")));
        }
        Some(ttl) => (ttl, false),
        None => (meta.validators.default_time_to_live, true),
    };
    if ttl > 0 && i64::from(now) + i64::from(ttl) > i64::from(MAX_DELETION_TIME) {
        warn_expiry_overflow(meta.keyspace(), meta.name(), ttl, is_default, now);
    }
    Ok(ttl)
}

/// 3.11's warning in its words up to the date (`Request on table KS.CF with [default ]ttl of N
/// seconds exceeds maximum supported expiration date of 2038-01-19T03:14:06+00:00`), then what
/// Sibyl does: 3.11 goes on "and will have its expiration capped to that date", which Sibyl does
/// not do.
pub fn expiry_overflow_warning(keyspace: &str, cf: &str, ttl: i32, is_default: bool) -> String {
    let default = if is_default { "default " } else { "" };
    format!(
        "Request on table {keyspace}.{cf} with {default}ttl of {ttl} seconds exceeds maximum supported expiration \
         date of 2038-01-19T03:14:06+00:00 of Cassandra 3.11, which would cap its expiration to that date; Sibyl \
         keeps the expiration as given. See CASSANDRA-14092 for more details."
    )
}

/// (keyspace, column family, whether the TTL was the CF's default).
type WarnedFor = (String, String, bool);

/// Logs [`expiry_overflow_warning`] at most once per interval for each table and kind of TTL (3.11
/// rate-limits the message as a whole; one per table keeps each table's first warning visible).
fn warn_expiry_overflow(keyspace: &str, cf: &str, ttl: i32, is_default: bool, now: i32) {
    static LAST_WARNED: Mutex<Option<HashMap<WarnedFor, i32>>> = Mutex::new(None);
    let mut last = LAST_WARNED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let last = last.get_or_insert_with(HashMap::new);
    let slot = last.entry((keyspace.to_string(), cf.to_string(), is_default)).or_insert(i32::MIN);
    if now.saturating_sub(*slot) < OVERFLOW_WARNING_INTERVAL_SECS {
        return;
    }
    *slot = now;
    warn!("{}", expiry_overflow_warning(keyspace, cf, ttl, is_default));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_reads_as_cassandra_3_11_writes_it() {
        let w = expiry_overflow_warning("KS", "CF", 630_720_000, true);
        assert!(w.starts_with(
            "Request on table KS.CF with default ttl of 630720000 seconds exceeds maximum supported expiration date \
             of 2038-01-19T03:14:06+00:00 of Cassandra 3.11"
        ));
        assert!(expiry_overflow_warning("KS", "CF", 5, false).starts_with("Request on table KS.CF with ttl of 5 "));
    }
}
