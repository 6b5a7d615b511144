//! Paged SELECTs (the native protocol's `page_size` and `paging_state`): where a page ended,
//! as opaque bytes the client sends back for the next one.
//!
//! A scan of partitions resumes where it stopped: at the last partition's key, after the last
//! row's clustering, so each page reads only what it answers. A SELECT of named partitions
//! (`=` or `IN`, maybe sorted by ORDER BY) runs again and skips the rows already sent: it
//! reads its partitions whole each time, which is fine for partitions of ordinary size and
//! slow for huge ones.

use super::{invalid, CqlError};

const VERSION: u8 = 1;

/// Where a page ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct PageState {
    /// How the next page finds its start.
    pub resume: Resume,
    /// Rows sent by the pages so far (for the statement's LIMIT).
    pub sent: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Resume {
    /// After this row of this partition, of which `in_partition` rows were sent.
    After { key: Vec<u8>, clustering: Vec<Vec<u8>>, in_partition: u64 },
    /// After the first `sent` rows of the answer.
    Skip,
}

fn bad() -> Result<PageState, CqlError> {
    invalid("Invalid value for the paging state")
}

impl PageState {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![VERSION];
        out.extend(self.sent.to_be_bytes());
        match &self.resume {
            Resume::Skip => out.push(0),
            Resume::After { key, clustering, in_partition } => {
                out.push(1);
                out.extend(in_partition.to_be_bytes());
                for part in std::iter::once(key).chain(clustering) {
                    out.extend((part.len() as u32).to_be_bytes());
                    out.extend(part);
                }
            }
        }
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<PageState, CqlError> {
        let mut rest = bytes;
        let mut take = |n: usize| -> Option<&[u8]> {
            let (head, tail) = rest.split_at_checked(n)?;
            rest = tail;
            Some(head)
        };
        let Some([VERSION]) = take(1).map(|v| [v[0]]) else { return bad() };
        let Some(sent) = take(8).and_then(|b| b.try_into().ok()).map(u64::from_be_bytes) else { return bad() };
        let resume = match take(1) {
            Some([0]) => Resume::Skip,
            Some([1]) => {
                let Some(in_partition) = take(8).and_then(|b| b.try_into().ok()).map(u64::from_be_bytes) else {
                    return bad();
                };
                let mut parts = Vec::new();
                while let Some(len) = take(4) {
                    let len = u32::from_be_bytes(len.try_into().unwrap_or_default()) as usize;
                    let Some(part) = take(len) else { return bad() };
                    parts.push(part.to_vec());
                }
                if parts.is_empty() {
                    return bad();
                }
                let key = parts.remove(0);
                Resume::After { key, clustering: parts, in_partition }
            }
            _ => return bad(),
        };
        Ok(PageState { resume, sent })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_and_garbage_is_refused() {
        for state in [
            PageState { resume: Resume::Skip, sent: 7 },
            PageState { resume: Resume::After { key: b"k".to_vec(), clustering: vec![], in_partition: 2 }, sent: 3 },
            PageState {
                resume: Resume::After { key: vec![], clustering: vec![b"a".to_vec(), vec![]], in_partition: 0 },
                sent: 0,
            },
        ] {
            assert_eq!(PageState::decode(&state.encode()).ok(), Some(state));
        }
        for garbage in
            [&b""[..], b"\x02", b"\x01\0\0\0\0\0\0\0\0\x07", b"\x01\0\0\0\0\0\0\0\0\x01\0\0\0\0\0\0\0\0\0\0\0\x09k"]
        {
            assert!(PageState::decode(garbage).is_err(), "{garbage:?}");
        }
    }
}
