//! Writes to non-frozen collections, one cell per element as 3.11's legacy layout keeps them:
//! a list's element is named by a fresh time UUID (in insertion order; a prepended one by a
//! time before every append), a set's by the element with an empty value, a map's by the key.
//! Setting a whole collection first deletes the old one with a range tombstone one
//! microsecond older than the new elements, as 3.11's `setComplexDeletionTimeForOverwrite`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use model::marshal::{read_elements, CollectionKind};

use super::{invalid, CqlError};
use crate::schema::Column;

/// 100-ns intervals between the UUID epoch (1582-10-15) and the Unix epoch.
const GREGORIAN_OFFSET: u64 = 0x01B2_1DD2_1381_4000;

/// 3.11's `Lists.PrecisionTime.REFERENCE_TIME` (2010-01-01, in ms): prepended elements are
/// named by times mirrored before it, so that each prepend goes before the last.
const PREPEND_REFERENCE_MS: u64 = 1_262_304_000_000;

/// The last time UUID tick handed out for an append, so that two appends never share one.
static LAST_APPEND: AtomicU64 = AtomicU64::new(0);
/// The same for prepends, going down.
static LAST_PREPEND: AtomicU64 = AtomicU64::new(u64::MAX);

/// This process's clock sequence and node: random, so that two coordinators appending at the
/// same tick still name their elements apart.
fn node_part() -> &'static [u8; 8] {
    static NODE: OnceLock<[u8; 8]> = OnceLock::new();
    NODE.get_or_init(|| {
        let random = uuid::Uuid::new_v4();
        let mut out = [0u8; 8];
        out.copy_from_slice(&random.as_bytes()[8..]);
        out[0] = (out[0] & 0x3F) | 0x80; // the RFC 4122 variant
        out[2] |= 0x01; // a multicast node id, as RFC 4122 asks of random ones
        out
    })
}

fn time_uuid(ticks: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[0..4].copy_from_slice(&((ticks & 0xFFFF_FFFF) as u32).to_be_bytes());
    out[4..6].copy_from_slice(&(((ticks >> 32) & 0xFFFF) as u16).to_be_bytes());
    out[6..8].copy_from_slice(&((((ticks >> 48) & 0x0FFF) as u16) | 0x1000).to_be_bytes());
    out[8..].copy_from_slice(node_part());
    out
}

fn now_ticks() -> u64 {
    let micros = u64::try_from(model::data::now_micros()).unwrap_or(0);
    micros * 10 + GREGORIAN_OFFSET
}

/// `n` fresh keys for appended list elements, increasing, after every key given before.
pub(super) fn append_keys(n: usize) -> Vec<[u8; 16]> {
    let n = n as u64;
    let mut start = 0;
    let _ = LAST_APPEND.fetch_update(Ordering::AcqRel, Ordering::Acquire, |last| {
        start = now_ticks().max(last + 1);
        Some(start + n)
    });
    (0..n).map(|i| time_uuid(start + i)).collect()
}

/// `n` fresh keys for prepended list elements, increasing among themselves, all before every
/// key handed out earlier (appended or prepended).
pub(super) fn prepend_keys(n: usize) -> Vec<[u8; 16]> {
    let n = n as u64;
    let reference = PREPEND_REFERENCE_MS * 10_000 + GREGORIAN_OFFSET;
    let mirrored = reference.saturating_sub(now_ticks().saturating_sub(reference));
    let mut end = 0;
    let _ = LAST_PREPEND.fetch_update(Ordering::AcqRel, Ordering::Acquire, |last| {
        end = mirrored.min(last.saturating_sub(1));
        Some(end.saturating_sub(n))
    });
    (0..n).map(|i| time_uuid(end.saturating_sub(n) + i)).collect()
}

/// One element's cell: its key (the end of its name) and its value.
pub(super) type ElementCell = (Vec<u8>, Vec<u8>);

/// The element cells of a whole collection value for column `c`.
pub(super) fn cells_of(c: &Column, value: &[u8], prepend: bool) -> Result<Vec<ElementCell>, CqlError> {
    let Some(kind) = c.ty.collection_kind() else {
        return invalid(format!("column {} is not a collection", c.name));
    };
    let elements = read_elements(kind, value).or_else(|e| invalid(format!("Invalid value for {}: {e}", c.name)))?;
    Ok(match kind {
        CollectionKind::List => {
            let keys = if prepend { prepend_keys(elements.len()) } else { append_keys(elements.len()) };
            keys.into_iter().zip(elements).map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
        }
        CollectionKind::Set => elements.into_iter().map(|e| (e.to_vec(), Vec::new())).collect(),
        CollectionKind::Map => elements.chunks(2).map(|kv| (kv[0].to_vec(), kv[1].to_vec())).collect(),
    })
}

/// The keys a `c = c - v` removes: a set's elements, or a map's keys (`v` a set of keys).
pub(super) fn removed_keys(c: &Column, value: &[u8]) -> Result<Vec<Vec<u8>>, CqlError> {
    let kind = match c.ty.collection_kind() {
        Some(CollectionKind::Set | CollectionKind::Map) => CollectionKind::Set,
        _ => return invalid(format!("column {} has no keys to remove", c.name)),
    };
    let elements = read_elements(kind, value).or_else(|e| invalid(format!("Invalid value for {}: {e}", c.name)))?;
    Ok(elements.into_iter().map(<[u8]>::to_vec).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::marshal::AbstractType;

    #[test]
    fn list_keys_keep_insertion_order_with_prepends_first() {
        let t = AbstractType::TimeUuid;
        let first = append_keys(3);
        let later = append_keys(2);
        let front = prepend_keys(2);
        let fronter = prepend_keys(1);
        let order = [&fronter[..], &front[..], &first[..], &later[..]].concat();
        for pair in order.windows(2) {
            assert_eq!(t.compare(&pair[0], &pair[1]), std::cmp::Ordering::Less);
        }
        for k in &order {
            assert_eq!(t.validate(k), Ok(()));
        }
    }
}
