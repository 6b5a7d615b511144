//! What this node knows of its peers, kept in `system.peers` (durable through the commit log, as
//! its sync mode promises; not flushed on every change, as gossip updates it often).

use super::Storage;
use crate::data::{now_seconds, DeletionTime};
use crate::dht::KeyBound;
use crate::error::Result;
use crate::filter::ReadFilter;
use crate::mutation::RowMutation;
use crate::system::{self, peers, PeerInfo};

impl Storage {
    /// Saves everything known of the peer at `endpoint` (`ip:port`), replacing what was saved.
    pub fn save_peer(&self, endpoint: &str, info: &PeerInfo) -> Result<()> {
        let mut m = RowMutation::new(system::KEYSPACE, endpoint.as_bytes().to_vec());
        *m.row_mut(system::PEERS_CF) = peers::peer_row(info, self.next_system_timestamp(), now_seconds())?;
        self.apply(m)
    }

    /// Forgets the peer at `endpoint` (it left the ring).
    pub fn remove_peer(&self, endpoint: &str) -> Result<()> {
        let mut m = RowMutation::new(system::KEYSPACE, endpoint.as_bytes().to_vec());
        m.row_mut(system::PEERS_CF).deletion = DeletionTime::new(self.next_system_timestamp(), now_seconds());
        self.apply(m)
    }

    /// Every saved peer, by endpoint.
    pub fn peers(&self) -> Result<Vec<(String, PeerInfo)>> {
        let rows = self.scan(
            system::KEYSPACE,
            system::PEERS_CF,
            &KeyBound::Unbounded,
            &KeyBound::Unbounded,
            &ReadFilter::all(),
            usize::MAX,
        )?;
        let mut out = Vec::with_capacity(rows.len());
        for (key, cells) in rows {
            let endpoint = String::from_utf8_lossy(&key.key).into_owned();
            let info = peers::decode_peer(&endpoint, cells)?;
            out.push((endpoint, info));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }
}
