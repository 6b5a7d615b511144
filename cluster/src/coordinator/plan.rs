//! Which replicas a request goes to, how many must answer, and whether enough are alive
//! (Cassandra's `ConsistencyLevel.blockFor`, `assureSufficientLiveNodes` and the response
//! handlers' counting).

use std::collections::BTreeMap;

use smallvec::SmallVec;

use crate::consistency::{quorum, ConsistencyLevel};
use crate::Endpoint;
use membership::locator::replication::{ReplicaMap, ReplicationStrategy};
use membership::Membership;

use super::CoordinatorError;

/// Counts acknowledgements until a consistency level is met.
#[derive(Clone, Debug)]
pub(super) enum Quota {
    /// Any `n` of the counted replicas (all replicas, or only the local data centre's for the
    /// LOCAL_ levels).
    Count { n: usize, local_dc: Option<String> },
    /// A quorum of each data centre's replicas (EACH_QUORUM).
    EachDc(BTreeMap<String, usize>),
}

pub(super) struct Tracker<'a> {
    quota: &'a Quota,
    membership: &'a Membership,
    received: usize,
    per_dc: BTreeMap<String, usize>,
}

impl<'a> Tracker<'a> {
    pub fn new(quota: &'a Quota, membership: &'a Membership) -> Tracker<'a> {
        Tracker { quota, membership, received: 0, per_dc: BTreeMap::new() }
    }

    /// Counts `from`'s acknowledgement; true once the level is met.
    pub fn ack(&mut self, from: Endpoint) -> bool {
        match self.quota {
            Quota::Count { local_dc: Some(dc), .. } => {
                if self.membership.snitch().datacenter(from) == *dc {
                    self.received += 1;
                }
            }
            Quota::Count { local_dc: None, .. } => self.received += 1,
            Quota::EachDc(_) => {
                self.received += 1;
                *self.per_dc.entry(self.membership.snitch().datacenter(from)).or_default() += 1;
            }
        }
        self.is_met()
    }

    /// Whether an acknowledgement from `ep` would count towards a part of the level not yet
    /// met: false for a replica of a data centre whose EACH_QUORUM share is already there.
    pub fn wants(&self, ep: Endpoint) -> bool {
        match self.quota {
            Quota::EachDc(need) => {
                let dc = self.membership.snitch().datacenter(ep);
                need.get(&dc).is_some_and(|n| self.per_dc.get(&dc).copied().unwrap_or(0) < *n)
            }
            Quota::Count { .. } => true,
        }
    }

    pub fn is_met(&self) -> bool {
        match self.quota {
            Quota::Count { n, .. } => self.received >= *n,
            Quota::EachDc(need) => need.iter().all(|(dc, n)| self.per_dc.get(dc).copied().unwrap_or(0) >= *n),
        }
    }

    pub fn received(&self) -> usize {
        self.received
    }
}

impl Quota {
    /// Acknowledgements needed in total (for error reports).
    pub fn required(&self) -> usize {
        match self {
            Quota::Count { n, .. } => *n,
            Quota::EachDc(need) => need.values().sum(),
        }
    }
}

/// The quota of `cl` for a keyspace replicated by `strategy`, seen from `local_dc`; `pending`
/// replicas (taking over ranges) raise it, as Cassandra does for writes.
pub(super) fn quota(cl: ConsistencyLevel, strategy: &ReplicationStrategy, local_dc: &str, pending: usize) -> Quota {
    match cl {
        ConsistencyLevel::EachQuorum => match strategy {
            ReplicationStrategy::NetworkTopology { datacenters } => Quota::EachDc(
                datacenters.iter().filter(|(_, rf)| **rf > 0).map(|(dc, rf)| (dc.clone(), quorum(*rf))).collect(),
            ),
            // Without data centres, EACH_QUORUM is QUORUM.
            _ => Quota::Count { n: quorum(strategy.replication_factor()) + pending, local_dc: None },
        },
        cl if cl.is_datacenter_local() => Quota::Count {
            n: cl.block_for(strategy.replication_factor(), strategy.dc_replication_factor(local_dc)) + pending,
            local_dc: Some(local_dc.to_string()),
        },
        cl => Quota::Count {
            n: cl.block_for(strategy.replication_factor(), strategy.dc_replication_factor(local_dc)) + pending,
            local_dc: None,
        },
    }
}

/// Fails with Unavailable unless the `alive` replicas can meet `quota` (ANY is always met: a hint
/// stands in for a replica).
pub(super) fn check_alive(
    cl: ConsistencyLevel,
    quota: &Quota,
    alive: &[Endpoint],
    membership: &Membership,
) -> Result<(), CoordinatorError> {
    if cl == ConsistencyLevel::Any {
        return Ok(());
    }
    let mut tracker = Tracker::new(quota, membership);
    for ep in alive {
        tracker.ack(*ep);
    }
    if tracker.is_met() {
        return Ok(());
    }
    Err(CoordinatorError::Unavailable { cl, required: quota.required(), alive: tracker.received() })
}

/// Unavailable unless this node alone meets `quota` (it is the only replica, and alive). As
/// [`check_alive`] answers with `alive` = [this node], for a level other than ANY.
pub(super) fn only_local_meets(cl: ConsistencyLevel, quota: &Quota) -> Result<(), CoordinatorError> {
    match quota.required() {
        0 | 1 => Ok(()),
        required => Err(CoordinatorError::Unavailable { cl, required, alive: 1 }),
    }
}

/// A write's replicas: those alive (the local node first when it is one) and those down.
pub(super) struct WriteTargets {
    /// Inline for one replica: a single-node keyspace's write then allocates no list.
    pub alive: SmallVec<[Endpoint; 1]>,
    pub down: Vec<Endpoint>,
    pub pending: usize,
}

pub(super) fn write_targets(map: &ReplicaMap, token: &model::dht::Token, membership: &Membership) -> WriteTargets {
    let natural = map.endpoints_for(token).len();
    let all = map.write_endpoints(token);
    let local = membership.local();
    let mut alive = SmallVec::with_capacity(all.len());
    let mut down = Vec::new();
    for ep in all {
        if membership.is_alive(*ep) {
            if *ep == local {
                alive.insert(0, *ep);
            } else {
                alive.push(*ep);
            }
        } else {
            down.push(*ep);
        }
    }
    WriteTargets { alive, down, pending: all.len().saturating_sub(natural) }
}

/// A read's live replicas, nearest first (the local node, then its rack, its data centre), and
/// only the local data centre's for the LOCAL_ levels.
pub(super) fn read_replicas(
    map: &ReplicaMap,
    token: &model::dht::Token,
    membership: &Membership,
    cl: ConsistencyLevel,
) -> Vec<Endpoint> {
    let local = membership.local();
    let snitch = membership.snitch();
    let local_dc = cl.is_datacenter_local().then(|| snitch.datacenter(local));
    let mut alive: Vec<Endpoint> = map
        .endpoints_for(token)
        .iter()
        .copied()
        .filter(|ep| membership.is_alive(*ep))
        .filter(|ep| local_dc.as_ref().is_none_or(|dc| snitch.datacenter(*ep) == *dc))
        .collect();
    if alive.len() > 1 {
        snitch.sort_by_proximity(local, &mut alive);
    }
    alive
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use model::dht::{Partitioner, Token};

    use super::*;
    use crate::coordinator::read::first_meeting;
    use membership::locator::snitch::RackInferringSnitch;
    use membership::LocalInfo;

    /// 10.DC.0.N: RackInferringSnitch puts it in data centre "DC".
    fn ep(dc: u8, n: u8) -> Endpoint {
        Endpoint::from(([10, dc, 0, n], 7000))
    }

    fn two_dcs(rf1: usize, rf2: usize) -> ReplicationStrategy {
        let datacenters = BTreeMap::from([("1".to_string(), rf1), ("2".to_string(), rf2)]);
        ReplicationStrategy::NetworkTopology { datacenters }
    }

    #[test]
    fn each_quorum_reads_a_quorum_in_every_data_centre_and_no_more() {
        let info = LocalInfo { cluster_name: "c".into(), rpc_address: "10.1.0.1".into(), host_id: "h".into() };
        let m = Membership::new(
            ep(1, 1),
            info,
            Partitioner::Random,
            Arc::new(RackInferringSnitch),
            vec![Token::from_bytes(&[1])],
        );
        let quota = quota(ConsistencyLevel::EachQuorum, &two_dcs(3, 3), "1", 0);
        // Nearest first: the local data centre's three replicas, then the other's.
        let alive = [ep(1, 1), ep(1, 2), ep(1, 3), ep(2, 1), ep(2, 2), ep(2, 3)];
        check_alive(ConsistencyLevel::EachQuorum, &quota, &alive, &m).expect("every replica is alive");
        assert_eq!(first_meeting(&quota, &alive, &m), [ep(1, 1), ep(1, 2), ep(2, 1), ep(2, 2)]);

        // One replica left in the second data centre: no quorum there, whatever the first has.
        let alive = [ep(1, 1), ep(1, 2), ep(1, 3), ep(2, 1)];
        match check_alive(ConsistencyLevel::EachQuorum, &quota, &alive, &m) {
            Err(CoordinatorError::Unavailable { required: 4, alive: 4, .. }) => {}
            other => panic!("expected Unavailable, got {other:?}"),
        }
    }

    #[test]
    fn each_quorum_without_data_centres_is_a_quorum() {
        let quota =
            quota(ConsistencyLevel::EachQuorum, &ReplicationStrategy::Simple { replication_factor: 3 }, "dc", 0);
        assert_eq!(quota.required(), 2);
        assert!(ConsistencyLevel::EachQuorum.validate_for_read().is_ok());
    }
}
