//! The placement rules of each strategy, walking the ring from a range's primary token.
//!
//! The walks work on a [`RingView`]: the ring's owners as small integers with their data centre
//! and rack numbered, so that a walk compares integers instead of asking the snitch for strings at
//! every step. Each rule is Cassandra 3.11's, step for step; where a walk can stop early without
//! changing its answer, it does, and the comment says why.

use std::collections::HashMap;

use crate::locator::snitch::Snitch;
use crate::locator::token_metadata::TokenMetadata;
use crate::Endpoint;

use super::ReplicationStrategy;

/// The normal ring with every member's location resolved once.
#[derive(Debug, Clone)]
pub(super) struct RingView {
    /// Node number of the owner of each token, in ring order.
    owner: Vec<usize>,
    /// Node number → endpoint.
    pub(super) nodes: Vec<Endpoint>,
    /// Node number → data centre number.
    dc: Vec<usize>,
    /// Node number → rack number. Racks are numbered per (DC, rack) pair, so two data centres'
    /// racks of the same name stay apart.
    rack: Vec<usize>,
    /// Data centre number → name.
    dc_names: Vec<String>,
    /// Data centre number → members in it.
    dc_nodes: Vec<usize>,
    /// Data centre number → distinct racks in it.
    dc_racks: Vec<usize>,
    rack_count: usize,
}

impl RingView {
    pub(super) fn new(tm: &TokenMetadata, snitch: &dyn Snitch) -> RingView {
        let mut view = RingView {
            owner: Vec::with_capacity(tm.sorted_owners().len()),
            nodes: Vec::new(),
            dc: Vec::new(),
            rack: Vec::new(),
            dc_names: Vec::new(),
            dc_nodes: Vec::new(),
            dc_racks: Vec::new(),
            rack_count: 0,
        };
        let mut node_of: HashMap<Endpoint, usize> = HashMap::new();
        let mut dc_of: HashMap<String, usize> = HashMap::new();
        let mut rack_of: HashMap<(usize, String), usize> = HashMap::new();
        for ep in tm.sorted_owners() {
            let node = match node_of.get(ep) {
                Some(&n) => n,
                None => {
                    let location = snitch.location(*ep);
                    let next_dc = dc_of.len();
                    let dc = *dc_of.entry(location.datacenter.clone()).or_insert(next_dc);
                    if dc == view.dc_names.len() {
                        view.dc_names.push(location.datacenter);
                        view.dc_nodes.push(0);
                        view.dc_racks.push(0);
                    }
                    let next_rack = rack_of.len();
                    let rack = *rack_of.entry((dc, location.rack)).or_insert(next_rack);
                    if rack == next_rack {
                        view.rack_count += 1;
                        if let Some(racks) = view.dc_racks.get_mut(dc) {
                            *racks += 1;
                        }
                    }
                    if let Some(count) = view.dc_nodes.get_mut(dc) {
                        *count += 1;
                    }
                    let n = view.nodes.len();
                    view.nodes.push(*ep);
                    view.dc.push(dc);
                    view.rack.push(rack);
                    node_of.insert(*ep, n);
                    n
                }
            };
            view.owner.push(node);
        }
        view
    }

    pub(super) fn token_count(&self) -> usize {
        self.owner.len()
    }

    /// The owner of the token `k` steps after `start`, wrapping.
    fn owner_at(&self, start: usize, k: usize) -> usize {
        let n = self.owner.len();
        self.owner.get((start + k) % n).copied().unwrap_or(0)
    }

    fn dc_of(&self, node: usize) -> usize {
        self.dc.get(node).copied().unwrap_or(0)
    }

    fn rack_of(&self, node: usize) -> usize {
        self.rack.get(node).copied().unwrap_or(0)
    }
}

/// A strategy's rule bound to one ring view.
pub(super) enum Placement {
    /// Walk the ring taking distinct endpoints.
    Simple { rf: usize },
    /// Primary, one in another DC, one in another rack of the primary's DC, then ring order.
    OldNetworkTopology { rf: usize, other_dc_exists: bool },
    /// Per DC: distinct racks first, repeats allowed once racks run out.
    NetworkTopology { dc_rf: Vec<usize> },
    /// Not ring-based (LocalStrategy); callers handle it themselves.
    None,
}

impl Placement {
    pub(super) fn new(strategy: &ReplicationStrategy, view: &RingView) -> Placement {
        match strategy {
            ReplicationStrategy::Simple { replication_factor } => Placement::Simple { rf: *replication_factor },
            ReplicationStrategy::OldNetworkTopology { replication_factor } => {
                Placement::OldNetworkTopology { rf: *replication_factor, other_dc_exists: view.dc_names.len() > 1 }
            }
            ReplicationStrategy::NetworkTopology { datacenters } => Placement::NetworkTopology {
                dc_rf: view.dc_names.iter().map(|dc| datacenters.get(dc).copied().unwrap_or(0)).collect(),
            },
            ReplicationStrategy::Local => Placement::None,
        }
    }

    /// The replicas (node numbers, primary first) of the range ending at token index `start`.
    pub(super) fn place(&self, view: &RingView, start: usize, out: &mut Vec<usize>) {
        out.clear();
        if view.token_count() == 0 {
            return;
        }
        match self {
            Placement::Simple { rf } => simple(view, start, *rf, out),
            Placement::OldNetworkTopology { rf, other_dc_exists } => {
                old_network_topology(view, start, *rf, *other_dc_exists, out)
            }
            Placement::NetworkTopology { dc_rf } => network_topology(view, start, dc_rf, out),
            Placement::None => {}
        }
    }
}

/// SimpleStrategy: the first `rf` distinct owners from the primary token on.
fn simple(view: &RingView, start: usize, rf: usize, out: &mut Vec<usize>) {
    // Cassandra walks the whole ring when rf exceeds the members; stopping once every member is
    // taken gives the same answer.
    let want = rf.min(view.nodes.len());
    for k in 0..view.token_count() {
        if out.len() >= want {
            break;
        }
        let node = view.owner_at(start, k);
        if !out.contains(&node) {
            out.push(node);
        }
    }
}

/// OldNetworkTopologyStrategy: the primary; the first node met in another DC; the first node met
/// in the primary's DC on another rack; then the first unused nodes in ring order.
///
/// Differs from Cassandra in one case: with `rf` = 0 Cassandra still returns the primary (it adds
/// it before looking at `rf`); here a replication factor of zero means no replicas.
fn old_network_topology(view: &RingView, start: usize, rf: usize, other_dc_exists: bool, out: &mut Vec<usize>) {
    if rf == 0 {
        return;
    }
    let primary = view.owner_at(start, 0);
    let (primary_dc, primary_rack) = (view.dc_of(primary), view.rack_of(primary));
    let other_rack_exists = view.dc_racks.get(primary_dc).is_some_and(|&r| r > 1);
    out.push(primary);
    let (mut found_dc, mut found_rack) = (false, false);
    for k in 1..view.token_count() {
        if out.len() >= rf {
            break;
        }
        // Cassandra keeps walking to the end of the ring; once both picks are made, or cannot be
        // made, the rest of that walk adds nothing.
        if (found_dc || !other_dc_exists) && (found_rack || !other_rack_exists) {
            break;
        }
        let node = view.owner_at(start, k);
        if view.dc_of(node) != primary_dc {
            if !found_dc {
                out.push(node);
                found_dc = true;
            }
            continue;
        }
        if view.rack_of(node) != primary_rack && !found_rack {
            out.push(node);
            found_rack = true;
        }
    }
    let want = rf.min(view.nodes.len());
    for k in 0..view.token_count() {
        if out.len() >= want {
            break;
        }
        let node = view.owner_at(start, k);
        if !out.contains(&node) {
            out.push(node);
        }
    }
}

/// NetworkTopologyStrategy, as Cassandra 3.11's `DatacenterEndpoints`: one walk of the ring
/// serving every DC at once. In each DC a node on a rack not seen yet is always taken; a node on a
/// seen rack is taken only while the DC has more replicas to place than racks
/// (`rf - racks` such repeats, taken as they are met). A DC needs `min(rf, its members)` replicas.
fn network_topology(view: &RingView, start: usize, dc_rf: &[usize], out: &mut Vec<usize>) {
    struct Dc {
        left: usize,
        repeats: i64,
    }
    let mut dcs: Vec<Option<Dc>> = dc_rf
        .iter()
        .zip(view.dc_nodes.iter().zip(&view.dc_racks))
        .map(|(&rf, (&nodes, &racks))| {
            (rf > 0 && nodes > 0).then(|| Dc {
                left: rf.min(nodes),
                repeats: i64::try_from(rf).unwrap_or(i64::MAX).saturating_sub(i64::try_from(racks).unwrap_or(0)),
            })
        })
        .collect();
    let mut to_fill = dcs.iter().flatten().count();
    let mut seen_racks = vec![false; view.rack_count];
    for k in 0..view.token_count() {
        if to_fill == 0 {
            break;
        }
        let node = view.owner_at(start, k);
        let Some(Some(dc)) = dcs.get_mut(view.dc_of(node)) else {
            continue;
        };
        if dc.left == 0 {
            continue;
        }
        let rack_seen = seen_racks.get_mut(view.rack_of(node));
        match rack_seen {
            Some(seen) if !*seen => {
                // A rack not met before: its node cannot have been taken yet.
                *seen = true;
                out.push(node);
            }
            _ => {
                if dc.repeats <= 0 || out.contains(&node) {
                    continue;
                }
                dc.repeats -= 1;
                out.push(node);
            }
        }
        dc.left -= 1;
        if dc.left == 0 {
            to_fill -= 1;
        }
    }
}
