//! One suite run against every strategy over many rings, checked against simple models of
//! Cassandra's rules, plus hand-worked examples of placement and pending ranges.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use model::dht::{Partitioner, Range};
use rand::rngs::StdRng;
use rand::SeedableRng;

use super::*;
use crate::locator::snitch::{Location, PropertyFileSnitch, SimpleSnitch};
use crate::locator::token_metadata::random_tokens_with;

/// A test cluster: a ring and the snitch that places its nodes.
pub(super) struct Cluster {
    pub tm: TokenMetadata,
    pub snitch: PropertyFileSnitch,
    pub local: Endpoint,
    /// Data centre names present in the ring, `DC1`..`DCn`.
    pub dcs: Vec<String>,
}

pub(super) fn node(i: usize) -> Endpoint {
    let [a, b] = u16::try_from(i + 1).unwrap_or(u16::MAX).to_be_bytes();
    Endpoint::from(([10, 0, a, b], 7000))
}

/// The topology file for `nodes` nodes spread round-robin over `dcs` data centres, and within a
/// data centre round-robin over `racks` racks.
pub(super) fn topology(nodes: usize, dcs: usize, racks: usize) -> String {
    let mut text = String::from("# generated\n");
    for i in 0..nodes {
        let (dc, rack) = (i % dcs, (i / dcs) % racks);
        text.push_str(&format!("{}=DC{}:RAC{}\n", node(i).ip(), dc + 1, rack + 1));
    }
    text
}

/// `nodes` nodes with `vnodes` random Murmur3 tokens each. With `file`, the snitch is loaded from
/// a topology file written there; otherwise it is parsed from memory.
pub(super) fn cluster(
    nodes: usize,
    vnodes: usize,
    dcs: usize,
    racks: usize,
    seed: u64,
    file: Option<&Path>,
) -> Cluster {
    let text = topology(nodes, dcs, racks);
    let snitch = match file {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &text) {
                panic!("{}: {e}", path.display());
            }
            PropertyFileSnitch::load(path, node(0))
        }
        None => PropertyFileSnitch::parse(Path::new("generated.properties"), &text),
    };
    let snitch = match snitch {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let mut tm = TokenMetadata::new(Partitioner::Murmur3);
    for i in 0..nodes {
        let tokens = random_tokens_with(Partitioner::Murmur3, vnodes, &tm, &mut rng);
        if let Err(e) = tm.update_normal_tokens(node(i), tokens) {
            panic!("{e}");
        }
    }
    Cluster { tm, snitch, local: node(0), dcs: (1..=dcs.min(nodes)).map(|d| format!("DC{d}")).collect() }
}

pub(super) fn t(v: i64) -> Token {
    match Partitioner::Murmur3.token_from_string(&v.to_string()) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    }
}

/// Cassandra's SimpleStrategy, written as plainly as possible.
fn model_simple(rf: usize, tm: &TokenMetadata, token: &Token) -> Vec<Endpoint> {
    let mut out = Vec::new();
    for (_, ep) in tm.ring_walk(token) {
        if out.len() < rf && !out.contains(&ep) {
            out.push(ep);
        }
    }
    out
}

/// Cassandra's OldNetworkTopologyStrategy, walking the whole ring as it does.
fn model_old_network_topology(rf: usize, c: &Cluster, token: &Token) -> Vec<Endpoint> {
    let walk: Vec<Endpoint> = c.tm.ring_walk(token).map(|(_, ep)| ep).collect();
    let Some(&primary) = walk.first() else { return Vec::new() };
    if rf == 0 {
        return Vec::new();
    }
    let here = c.snitch.location(primary);
    let mut out = vec![primary];
    let (mut found_dc, mut found_rack) = (false, false);
    for &ep in walk.iter().skip(1) {
        if out.len() >= rf {
            break;
        }
        let there = c.snitch.location(ep);
        if there.datacenter != here.datacenter {
            if !found_dc {
                out.push(ep);
                found_dc = true;
            }
            continue;
        }
        if there.rack != here.rack && !found_rack {
            out.push(ep);
            found_rack = true;
        }
    }
    for &ep in &walk {
        if out.len() < rf && !out.contains(&ep) {
            out.push(ep);
        }
    }
    out
}

/// Cassandra 2.x's NetworkTopologyStrategy (racks first, then the skipped nodes in the order
/// they were met): a different formulation from 3.11's that picks the same set of nodes.
fn model_network_topology(datacenters: &BTreeMap<String, usize>, c: &Cluster, token: &Token) -> BTreeSet<Endpoint> {
    let mut members: BTreeMap<String, usize> = BTreeMap::new();
    let mut racks: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for ep in c.tm.endpoints() {
        let l = c.snitch.location(ep);
        *members.entry(l.datacenter.clone()).or_default() += 1;
        racks.entry(l.datacenter).or_default().insert(l.rack);
    }
    let wanted = |dc: &str| datacenters.get(dc).copied().unwrap_or(0).min(members.get(dc).copied().unwrap_or(0));
    let mut chosen: BTreeMap<String, Vec<Endpoint>> = BTreeMap::new();
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut skipped: BTreeMap<String, Vec<Endpoint>> = BTreeMap::new();
    for (_, ep) in c.tm.ring_walk(token) {
        let l = c.snitch.location(ep);
        let dc = l.datacenter.clone();
        let have = chosen.entry(dc.clone()).or_default();
        if have.len() >= wanted(&dc) || have.contains(&ep) {
            continue;
        }
        let seen_racks = seen.entry(dc.clone()).or_default();
        let all_racks = racks.get(&dc).map_or(0, BTreeSet::len);
        if seen_racks.len() == all_racks {
            have.push(ep);
        } else if seen_racks.contains(&l.rack) {
            let s = skipped.entry(dc.clone()).or_default();
            if !s.contains(&ep) {
                s.push(ep);
            }
        } else {
            have.push(ep);
            seen_racks.insert(l.rack);
            if seen_racks.len() == all_racks {
                for s in skipped.get(&dc).into_iter().flatten() {
                    if have.len() < wanted(&dc) {
                        have.push(*s);
                    }
                }
            }
        }
    }
    chosen.into_values().flatten().collect()
}

/// Checks one token's replicas against the rules every strategy must keep, and against the
/// models above. Errors are messages, so property tests can report them too.
pub(super) fn check_replicas(
    strategy: &ReplicationStrategy,
    c: &Cluster,
    token: &Token,
    replicas: &[Endpoint],
) -> Result<(), String> {
    let distinct: BTreeSet<Endpoint> = replicas.iter().copied().collect();
    if distinct.len() != replicas.len() {
        return Err(format!("repeated replica in {replicas:?}"));
    }
    if *strategy == ReplicationStrategy::Local {
        return if replicas == [c.local] { Ok(()) } else { Err(format!("LocalStrategy gave {replicas:?}")) };
    }
    if let Some(stranger) = replicas.iter().find(|ep| !c.tm.is_member(**ep)) {
        return Err(format!("{stranger} is not a member"));
    }
    let members = c.tm.member_count();
    let locations: BTreeMap<Endpoint, Location> = c.tm.endpoints().map(|ep| (ep, c.snitch.location(ep))).collect();
    let expected = match strategy {
        ReplicationStrategy::NetworkTopology { datacenters } => datacenters
            .iter()
            .map(|(dc, rf)| (*rf).min(locations.values().filter(|l| l.datacenter == *dc).count()))
            .sum(),
        _ => strategy.replication_factor().min(members),
    };
    if replicas.len() != expected {
        return Err(format!("{} replicas where {expected} are due: {replicas:?}", replicas.len()));
    }
    if let Some(first) = replicas.first() {
        let owner = c.tm.owner_of(token);
        let primary_dc_wanted = match strategy {
            ReplicationStrategy::NetworkTopology { datacenters } => owner
                .and_then(|o| locations.get(&o))
                .is_some_and(|l| datacenters.get(&l.datacenter).is_some_and(|rf| *rf > 0)),
            _ => true,
        };
        // NetworkTopologyStrategy's first replica is the owner unless the owner's DC holds none.
        if primary_dc_wanted && Some(*first) != owner {
            return Err(format!("primary {first} is not the owner {owner:?}"));
        }
    }
    match strategy {
        ReplicationStrategy::Simple { replication_factor } => {
            let model = model_simple(*replication_factor, &c.tm, token);
            if model != replicas {
                return Err(format!("SimpleStrategy model says {model:?}, got {replicas:?}"));
            }
        }
        ReplicationStrategy::OldNetworkTopology { replication_factor } => {
            let model = model_old_network_topology(*replication_factor, c, token);
            if model != replicas {
                return Err(format!("OldNetworkTopologyStrategy model says {model:?}, got {replicas:?}"));
            }
            check_old_network_topology_spread(*replication_factor, &locations, replicas)?;
        }
        ReplicationStrategy::NetworkTopology { datacenters } => {
            let model = model_network_topology(datacenters, c, token);
            if model != distinct {
                return Err(format!("NetworkTopologyStrategy model says {model:?}, got {replicas:?}"));
            }
            check_network_topology_spread(datacenters, &locations, replicas)?;
        }
        ReplicationStrategy::Local => {}
    }
    Ok(())
}

/// One replica in a second DC when there is one, and one on another rack of the primary's DC
/// when there is one, as far as the replication factor allows (with two replicas, whichever of
/// the two the ring walk meets first).
fn check_old_network_topology_spread(
    rf: usize,
    locations: &BTreeMap<Endpoint, Location>,
    replicas: &[Endpoint],
) -> Result<(), String> {
    let Some(primary) = replicas.first().and_then(|p| locations.get(p)) else { return Ok(()) };
    let at = |ep: &Endpoint| locations.get(ep);
    let other_dc_exists = locations.values().any(|l| l.datacenter != primary.datacenter);
    let other_rack_exists = locations.values().any(|l| l.datacenter == primary.datacenter && l.rack != primary.rack);
    let has_other_dc = replicas.iter().filter_map(at).any(|l| l.datacenter != primary.datacenter);
    let has_other_rack =
        replicas.iter().filter_map(at).any(|l| l.datacenter == primary.datacenter && l.rack != primary.rack);
    if other_dc_exists && (rf >= 3 || (rf == 2 && !other_rack_exists)) && !has_other_dc {
        return Err(format!("no replica outside {} in {replicas:?}", primary.datacenter));
    }
    if other_rack_exists && (rf >= 3 || (rf == 2 && !other_dc_exists)) && !has_other_rack {
        return Err(format!("no replica on another rack of {} in {replicas:?}", primary.datacenter));
    }
    if rf == 2 && other_dc_exists && other_rack_exists && !(has_other_dc || has_other_rack) {
        return Err(format!("second replica neither in another DC nor on another rack: {replicas:?}"));
    }
    Ok(())
}

/// Per DC: exactly min(rf, members) replicas, on as many distinct racks as the DC has, up to that.
fn check_network_topology_spread(
    datacenters: &BTreeMap<String, usize>,
    locations: &BTreeMap<Endpoint, Location>,
    replicas: &[Endpoint],
) -> Result<(), String> {
    let dcs: BTreeSet<&String> = locations.values().map(|l| &l.datacenter).collect();
    for dc in dcs {
        let rf = datacenters.get(dc).copied().unwrap_or(0);
        let members = locations.values().filter(|l| l.datacenter == *dc).count();
        let racks: BTreeSet<&String> = locations.values().filter(|l| l.datacenter == *dc).map(|l| &l.rack).collect();
        let here: Vec<&Location> =
            replicas.iter().filter_map(|ep| locations.get(ep)).filter(|l| l.datacenter == *dc).collect();
        if here.len() != rf.min(members) {
            return Err(format!("{dc} holds {} replicas, wants min({rf}, {members}): {replicas:?}", here.len()));
        }
        let used: BTreeSet<&String> = here.iter().map(|l| &l.rack).collect();
        if used.len() != here.len().min(racks.len()) {
            return Err(format!(
                "{dc}: {} replicas on {} of {} racks: {replicas:?}",
                here.len(),
                used.len(),
                racks.len()
            ));
        }
    }
    Ok(())
}

/// Builds the replica map and checks every range, the ring's own tokens and some tokens between
/// them against `natural_endpoints` and [`check_replicas`].
pub(super) fn check_cluster(strategy: &ReplicationStrategy, c: &Cluster, probes: &[Token]) -> Result<(), String> {
    let map = ReplicaMap::build(strategy, &c.tm, &c.snitch, c.local);
    let ranges: Vec<(Range, Vec<Endpoint>)> = map.ranges().map(|(r, eps)| (r, eps.to_vec())).collect();
    let expected_ranges = if *strategy == ReplicationStrategy::Local { 1 } else { c.tm.sorted_tokens().len() };
    if ranges.len() != expected_ranges {
        return Err(format!("{} ranges for {expected_ranges} tokens", ranges.len()));
    }
    // Ranges tile the ring: each starts where the previous one ended.
    for (i, (range, _)) in ranges.iter().enumerate() {
        let previous = ranges.get((i + ranges.len() - 1) % ranges.len()).map(|(r, _)| &r.right);
        if Some(&range.left) != previous {
            return Err(format!("range {i} {range:?} does not follow {previous:?}"));
        }
    }
    let mut tokens: Vec<Token> = ranges.iter().map(|(r, _)| r.right.clone()).collect();
    tokens.extend(probes.iter().cloned());
    for token in &tokens {
        let natural = strategy.natural_endpoints(token, &c.tm, &c.snitch, c.local);
        let mapped = map.endpoints_for(token);
        if natural != mapped {
            return Err(format!("token {token:?}: ReplicaMap {mapped:?} but natural_endpoints {natural:?}"));
        }
        if map.write_endpoints(token) != mapped {
            return Err(format!("token {token:?}: write endpoints differ without pending ranges"));
        }
        check_replicas(strategy, c, token, mapped)
            .map_err(|e| format!("{} at {token:?}: {e}", strategy.class_name()))?;
    }
    for (range, eps) in &ranges {
        for ep in eps {
            if !map.ranges_of(*ep).contains(range) {
                return Err(format!("ranges_of({ep}) misses {range:?}"));
            }
        }
    }
    let ownership = map.effective_ownership();
    let total: f64 = ownership.values().sum();
    let replicas_per_range = ranges.first().map_or(0, |(_, eps)| eps.len());
    let uniform = ranges.iter().all(|(_, eps)| eps.len() == replicas_per_range);
    if uniform && (total - replicas_per_range as f64).abs() > 1e-4 {
        return Err(format!("ownership sums to {total}, expected {replicas_per_range}"));
    }
    Ok(())
}

/// The shared suite: every ring shape, every strategy `build` gives for it.
fn suite(build: &dyn Fn(&Cluster) -> Vec<ReplicationStrategy>) {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("{e}"),
    };
    let file = dir.path().join("cassandra-topology.properties");
    let probes: Vec<Token> = [i64::MIN, i64::MIN + 1, -1, 0, 1, 1 << 40, i64::MAX].into_iter().map(t).collect();
    let mut checked = 0;
    for nodes in [1, 2, 3, 5, 9] {
        for vnodes in [1, 8] {
            for (dcs, racks) in [(1, 1), (1, 3), (2, 2), (3, 3)] {
                let seed = (nodes * 100 + vnodes * 10 + dcs) as u64;
                let c = cluster(nodes, vnodes, dcs, racks, seed, Some(&file));
                for strategy in build(&c) {
                    if let Err(e) = check_cluster(&strategy, &c, &probes) {
                        panic!("{nodes} nodes x {vnodes} tokens, {dcs} DCs x {racks} racks, {strategy:?}: {e}");
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 40, "only {checked} combinations checked");
}

#[test]
fn suite_simple_strategy() {
    suite(&|_| [1, 2, 3, 5].into_iter().map(|rf| ReplicationStrategy::Simple { replication_factor: rf }).collect());
}

#[test]
fn suite_old_network_topology_strategy() {
    suite(&|_| {
        [1, 2, 3, 4].into_iter().map(|rf| ReplicationStrategy::OldNetworkTopology { replication_factor: rf }).collect()
    });
}

#[test]
fn suite_network_topology_strategy() {
    suite(&|c| {
        let uniform = |rf: usize| c.dcs.iter().map(|dc| (dc.clone(), rf)).collect::<BTreeMap<_, _>>();
        let mut uneven: BTreeMap<String, usize> = c.dcs.iter().cloned().zip([3, 1, 0]).collect();
        // A data centre with no members places nothing.
        uneven.insert("DC9".into(), 2);
        [uniform(1), uniform(2), uniform(3), uneven]
            .into_iter()
            .map(|datacenters| ReplicationStrategy::NetworkTopology { datacenters })
            .collect()
    });
}

#[test]
fn suite_local_strategy() {
    suite(&|_| vec![ReplicationStrategy::Local]);
}

fn ks(class: &str, options: &[(&str, &str)]) -> model::schema::KeyspaceDef {
    let mut ks = model::schema::KeyspaceDef::new("Keyspace1");
    ks.strategy_class = class.to_string();
    ks.strategy_options = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    ks
}

#[test]
fn strategies_from_keyspace_definitions() {
    let simple = ReplicationStrategy::Simple { replication_factor: 3 };
    let onts = ReplicationStrategy::OldNetworkTopology { replication_factor: 2 };
    for (class, options, expected) in [
        ("SimpleStrategy", vec![("replication_factor", "3")], simple.clone()),
        ("org.apache.cassandra.locator.SimpleStrategy", vec![("replication_factor", " 3 ")], simple.clone()),
        ("org.apache.cassandra.locator.RackUnawareStrategy", vec![("replication_factor", "3")], simple),
        ("OldNetworkTopologyStrategy", vec![("replication_factor", "2")], onts.clone()),
        ("org.apache.cassandra.locator.RackAwareStrategy", vec![("replication_factor", "2")], onts),
        (
            "NetworkTopologyStrategy",
            vec![("DC1", "3"), ("DC2", "0"), ("replication_factor", "5")],
            ReplicationStrategy::NetworkTopology { datacenters: [("DC1".into(), 3), ("DC2".into(), 0)].into() },
        ),
        (
            "org.apache.cassandra.locator.DatacenterShardStrategy",
            vec![("us-east", "2")],
            ReplicationStrategy::NetworkTopology { datacenters: [("us-east".into(), 2)].into() },
        ),
        ("org.apache.cassandra.locator.LocalStrategy", vec![], ReplicationStrategy::Local),
    ] {
        assert_eq!(ReplicationStrategy::from_keyspace(&ks(class, &options)), Ok(expected), "{class}");
    }
    assert_eq!(
        ReplicationStrategy::from_keyspace(&ks("SimpleStrategy", &[])),
        Err(ReplicationError::MissingReplicationFactor { keyspace: "Keyspace1".into(), strategy: "SimpleStrategy" })
    );
    assert_eq!(
        ReplicationStrategy::from_keyspace(&ks("RackAwareStrategy", &[("replication_factor", "-1")])),
        Err(ReplicationError::InvalidReplicationFactor {
            keyspace: "Keyspace1".into(),
            option: "replication_factor".into(),
            value: "-1".into()
        })
    );
    assert_eq!(
        ReplicationStrategy::from_keyspace(&ks("NetworkTopologyStrategy", &[("DC1", "three")])),
        Err(ReplicationError::InvalidReplicationFactor {
            keyspace: "Keyspace1".into(),
            option: "DC1".into(),
            value: "three".into()
        })
    );
    let unknown = ReplicationStrategy::from_keyspace(&ks("com.example.MyStrategy", &[]));
    assert_eq!(
        unknown,
        Err(ReplicationError::UnknownStrategy { keyspace: "Keyspace1".into(), class: "com.example.MyStrategy".into() })
    );
}

#[test]
fn replication_factors_total_and_per_datacenter() {
    let nts = ReplicationStrategy::NetworkTopology { datacenters: [("DC1".into(), 3), ("DC2".into(), 2)].into() };
    assert_eq!(nts.replication_factor(), 5);
    assert_eq!((nts.dc_replication_factor("DC1"), nts.dc_replication_factor("DC3")), (3, 0));
    let simple = ReplicationStrategy::Simple { replication_factor: 3 };
    assert_eq!((simple.replication_factor(), simple.dc_replication_factor("DC1")), (3, 3));
    assert_eq!(ReplicationStrategy::Local.replication_factor(), 1);
}

/// Ten nodes, one token each, on a hand-drawn topology; the expected replicas are worked out by
/// following Cassandra 3.11's code by hand.
fn hand_ring() -> (TokenMetadata, PropertyFileSnitch) {
    // token -> (node, DC, rack)
    let layout = [
        (10, 1, "DC1", "R1"),
        (20, 2, "DC1", "R1"),
        (30, 3, "DC2", "R1"),
        (40, 4, "DC1", "R2"),
        (50, 5, "DC1", "R1"),
        (60, 6, "DC2", "R2"),
        (70, 7, "DC1", "R3"),
        (80, 8, "DC2", "R1"),
    ];
    let mut text = String::new();
    let mut tm = TokenMetadata::new(Partitioner::Murmur3);
    for (token, n, dc, rack) in layout {
        text.push_str(&format!("{}={dc}:{rack}\n", node(n).ip()));
        if let Err(e) = tm.update_normal_tokens(node(n), [t(token)]) {
            panic!("{e}");
        }
    }
    match PropertyFileSnitch::parse(Path::new("hand.properties"), &text) {
        Ok(s) => (tm, s),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn network_topology_prefers_new_racks_and_takes_repeats_as_met() {
    let (tm, snitch) = hand_ring();
    let local = node(1);
    let place = |dcs: &[(&str, usize)], token: i64| {
        let strategy = ReplicationStrategy::NetworkTopology {
            datacenters: dcs.iter().map(|(dc, rf)| (dc.to_string(), *rf)).collect(),
        };
        strategy.natural_endpoints(&t(token), &tm, &snitch, local)
    };
    let nodes = |ns: &[usize]| ns.iter().map(|&n| node(n)).collect::<Vec<_>>();
    // DC1 has racks R1 (1, 2, 5), R2 (4), R3 (7). RF 3 from token 15: 2 (R1), 4 (R2), 7 (R3);
    // 5 (R1 again) is passed over because three racks cover three replicas.
    assert_eq!(place(&[("DC1", 3)], 15), nodes(&[2, 4, 7]));
    // RF 4 allows one repeat, taken when met: node 5 comes before 7.
    assert_eq!(place(&[("DC1", 4)], 15), nodes(&[2, 4, 5, 7]));
    // DC2 (3: R1, 6: R2, 8: R1) alongside, interleaved in ring order.
    assert_eq!(place(&[("DC1", 2), ("DC2", 2)], 15), nodes(&[2, 3, 4, 6]));
    // More replicas than DC2 has nodes: all three of them.
    assert_eq!(place(&[("DC2", 5)], 75), nodes(&[8, 3, 6]));
    // The owner's DC places nothing: the first replica is further on.
    assert_eq!(place(&[("DC2", 1)], 15), nodes(&[3]));
}

#[test]
fn old_network_topology_takes_another_dc_then_another_rack() {
    let (tm, snitch) = hand_ring();
    let strategy = |rf| ReplicationStrategy::OldNetworkTopology { replication_factor: rf };
    let nodes = |ns: &[usize]| ns.iter().map(|&n| node(n)).collect::<Vec<_>>();
    let at = |rf, token| strategy(rf).natural_endpoints(&t(token), &tm, &snitch, node(1));
    // From 15: primary 2 (DC1/R1); 3 is the first in DC2; 4 the first on another DC1 rack.
    assert_eq!(at(3, 15), nodes(&[2, 3, 4]));
    // The fourth comes from the ring in order from the primary, skipping those taken.
    assert_eq!(at(4, 15), nodes(&[2, 3, 4, 5]));
    // With two, whichever of the two picks comes first on the ring.
    assert_eq!(at(2, 15), nodes(&[2, 3]));
    // From 35 the other rack (5, DC1/R1) comes before another DC (6); from 25 the reverse.
    assert_eq!(at(2, 35), nodes(&[4, 5]));
    assert_eq!(at(2, 25), nodes(&[3, 4]));
    assert_eq!(at(1, 35), nodes(&[4]));
    assert!(at(0, 35).is_empty());
}

#[test]
fn pending_ranges_of_a_joining_node() {
    // A at 10, B at 20, C at 30; D joins at 25. RF 2.
    let mut tm = TokenMetadata::new(Partitioner::Murmur3);
    for (n, token) in [(1, 10), (2, 20), (3, 30)] {
        assert!(tm.update_normal_tokens(node(n), [t(token)]).is_ok());
    }
    assert_eq!(tm.add_bootstrap_tokens(node(4), [t(25)]), Ok(()));
    let strategy = ReplicationStrategy::Simple { replication_factor: 2 };
    let map = ReplicaMap::build(&strategy, &tm, &SimpleSnitch, node(1));
    let nodes = |ns: &[usize]| ns.iter().map(|&n| node(n)).collect::<Vec<_>>();
    // After the join D would replicate (10, 20] (as B's successor) and (20, 25] (its own).
    let mut pending: Vec<(Range, Endpoint)> = map.pending_ranges().to_vec();
    pending.sort_by(|a, b| a.0.right.cmp(&b.0.right));
    assert_eq!(pending, vec![(Range::new(t(10), t(20)), node(4)), (Range::new(t(20), t(25)), node(4))]);
    assert_eq!(map.endpoints_for(&t(15)), nodes(&[2, 3]));
    assert_eq!(map.write_endpoints(&t(15)), nodes(&[2, 3, 4]));
    assert_eq!(map.write_endpoints(&t(22)), nodes(&[3, 1, 4]));
    assert_eq!(map.pending_endpoints_for(&t(25)), nodes(&[4]));
    // (25, 30] stays C's and A's alone, and so does the wrapping range.
    assert_eq!(map.write_endpoints(&t(27)), nodes(&[3, 1]));
    assert_eq!(map.write_endpoints(&t(35)), nodes(&[1, 2]));
    assert!(map.pending_endpoints_for(&t(5)).is_empty());
}

#[test]
fn pending_ranges_of_a_leaving_node() {
    // A 10, B 20, C 30, D 40; C leaves. RF 2.
    let mut tm = TokenMetadata::new(Partitioner::Murmur3);
    for (n, token) in [(1, 10), (2, 20), (3, 30), (4, 40)] {
        assert!(tm.update_normal_tokens(node(n), [t(token)]).is_ok());
    }
    tm.add_leaving_endpoint(node(3));
    let strategy = ReplicationStrategy::Simple { replication_factor: 2 };
    let map = ReplicaMap::build(&strategy, &tm, &SimpleSnitch, node(1));
    let nodes = |ns: &[usize]| ns.iter().map(|&n| node(n)).collect::<Vec<_>>();
    // (10, 20]: B, C now; B, D after: D pending. (20, 30]: C, D now; D, A after: A pending.
    assert_eq!(map.write_endpoints(&t(15)), nodes(&[2, 3, 4]));
    assert_eq!(map.write_endpoints(&t(25)), nodes(&[3, 4, 1]));
    assert_eq!(map.write_endpoints(&t(35)), nodes(&[4, 1]));
    assert_eq!(map.write_endpoints(&t(5)), nodes(&[1, 2]));
    assert_eq!(map.pending_ranges().len(), 2);
    // Reads still go to the natural replicas, the leaving node included.
    assert_eq!(map.endpoints_for(&t(25)), nodes(&[3, 4]));
}

#[test]
fn pending_ranges_of_a_moving_node() {
    // A 10, B 20, C 30, D 40; B moves to 35. RF 2.
    let mut tm = TokenMetadata::new(Partitioner::Murmur3);
    for (n, token) in [(1, 10), (2, 20), (3, 30), (4, 40)] {
        assert!(tm.update_normal_tokens(node(n), [t(token)]).is_ok());
    }
    assert_eq!(tm.add_moving_endpoint(node(2), t(35)), Ok(()));
    let strategy = ReplicationStrategy::Simple { replication_factor: 2 };
    let map = ReplicaMap::build(&strategy, &tm, &SimpleSnitch, node(1));
    let nodes = |ns: &[usize]| ns.iter().map(|&n| node(n)).collect::<Vec<_>>();
    // After: A 10, C 30, B 35, D 40. (10, 20] goes from B, C to C, B: nothing to take.
    // (30, 35] goes from D, A to B, D: B takes it. (35, 40] from D, A to D, A: nothing.
    // (40, 10] from A, B to A, C: C takes it. (20, 30] from C, D to C, B: B takes it.
    let mut pending: Vec<(Range, Endpoint)> = map.pending_ranges().to_vec();
    pending.sort_by(|a, b| a.0.right.cmp(&b.0.right));
    assert_eq!(
        pending,
        vec![
            (Range::new(t(40), t(10)), node(3)),
            (Range::new(t(20), t(30)), node(2)),
            (Range::new(t(30), t(35)), node(2)),
        ]
    );
    assert_eq!(map.write_endpoints(&t(5)), nodes(&[1, 2, 3]));
    assert_eq!(map.write_endpoints(&t(25)), nodes(&[3, 4, 2]));
    assert_eq!(map.write_endpoints(&t(33)), nodes(&[4, 1, 2]));
    assert_eq!(map.write_endpoints(&t(38)), nodes(&[4, 1]));
    // Reads stay on the ring as it is until the move ends.
    assert_eq!(map.endpoints_for(&t(33)), nodes(&[4, 1]));
}

#[test]
fn pending_writes_match_a_model_for_moves() {
    for seed in 0..6u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut tm = TokenMetadata::new(Partitioner::Murmur3);
        for n in 1..=6 {
            let token = random_tokens_with(Partitioner::Murmur3, 1, &tm, &mut rng);
            assert!(tm.update_normal_tokens(node(n), token).is_ok());
        }
        let mover = node(1 + (seed as usize % 6));
        let destination = random_tokens_with(Partitioner::Murmur3, 1, &tm, &mut rng).remove(0);
        let mut moving = tm.clone();
        assert_eq!(moving.add_moving_endpoint(mover, destination.clone()), Ok(()));
        let mut after = tm.clone();
        assert!(after.update_normal_tokens(mover, [destination.clone()]).is_ok());
        let mut probes: Vec<Token> = (0..64).map(|_| Partitioner::Murmur3.random_token(&mut rng)).collect();
        probes.push(destination);
        probes.extend(tm.sorted_tokens().iter().cloned());
        for rf in [1, 2, 3] {
            let strategy = ReplicationStrategy::Simple { replication_factor: rf };
            let map = ReplicaMap::build(&strategy, &moving, &SimpleSnitch, node(1));
            for token in &probes {
                let mut expected: Vec<Endpoint> = model_simple(rf, &tm, token);
                for ep in model_simple(rf, &after, token) {
                    if !expected.contains(&ep) {
                        expected.push(ep);
                    }
                }
                assert_eq!(map.write_endpoints(token), expected, "move, seed {seed}, rf {rf}, token {token:?}");
                assert_eq!(map.endpoints_for(token), model_simple(rf, &tm, token));
            }
        }
    }
}

#[test]
fn pending_writes_match_a_model_for_joins_and_leaves() {
    for seed in 0..6u64 {
        let c = cluster(6, 4, 1, 1, seed, None);
        for rf in [1, 2, 3] {
            let strategy = ReplicationStrategy::Simple { replication_factor: rf };
            let mut rng = StdRng::seed_from_u64(seed + 100);
            let probes: Vec<Token> = (0..64).map(|_| Partitioner::Murmur3.random_token(&mut rng)).collect();

            // A node joining with 4 tokens: writes go to today's replicas plus the joiner where it
            // will replicate.
            let mut joining = c.tm.clone();
            let joiner = node(50);
            let tokens = random_tokens_with(Partitioner::Murmur3, 4, &joining, &mut rng);
            assert_eq!(joining.add_bootstrap_tokens(joiner, tokens.clone()), Ok(()));
            let mut future = c.tm.clone();
            assert!(future.update_normal_tokens(joiner, tokens.clone()).is_ok());
            let map = ReplicaMap::build(&strategy, &joining, &SimpleSnitch, c.local);
            let mut all: Vec<Token> = probes.clone();
            all.extend(tokens);
            all.extend(c.tm.sorted_tokens().iter().cloned());
            for token in &all {
                let mut expected: Vec<Endpoint> = model_simple(rf, &c.tm, token);
                if model_simple(rf, &future, token).contains(&joiner) {
                    expected.push(joiner);
                }
                assert_eq!(map.write_endpoints(token), expected, "join, rf {rf}, token {token:?}");
            }

            // A node leaving: writes also go to whoever replicates after it has gone.
            let mut leaving = c.tm.clone();
            let leaver = node(2);
            leaving.add_leaving_endpoint(leaver);
            let mut after = c.tm.clone();
            after.remove_endpoint(leaver);
            let map = ReplicaMap::build(&strategy, &leaving, &SimpleSnitch, c.local);
            for token in &all {
                let mut expected: Vec<Endpoint> = model_simple(rf, &c.tm, token);
                for ep in model_simple(rf, &after, token) {
                    if !expected.contains(&ep) {
                        expected.push(ep);
                    }
                }
                assert_eq!(map.write_endpoints(token), expected, "leave, rf {rf}, token {token:?}");
            }
        }
    }
}

#[test]
fn local_strategy_is_the_local_node_whatever_the_ring() {
    let empty = TokenMetadata::new(Partitioner::Murmur3);
    let local = node(7);
    let map = ReplicaMap::build(&ReplicationStrategy::Local, &empty, &SimpleSnitch, local);
    assert_eq!(map.endpoints_for(&t(5)), [local]);
    assert_eq!(map.ranges().map(|(r, _)| r.is_full_ring()).collect::<Vec<_>>(), vec![true]);
    assert_eq!(map.effective_ownership().into_iter().collect::<Vec<_>>(), vec![(local, 1.0)]);
    let natural = ReplicationStrategy::Local.natural_endpoints(&t(5), &empty, &SimpleSnitch, local);
    assert_eq!(natural, vec![local]);
}

#[test]
fn an_empty_ring_has_no_replicas() {
    let empty = TokenMetadata::new(Partitioner::Murmur3);
    let strategy = ReplicationStrategy::Simple { replication_factor: 3 };
    let map = ReplicaMap::build(&strategy, &empty, &SimpleSnitch, node(1));
    assert!(map.is_empty() && map.endpoints_for(&t(1)).is_empty() && map.write_endpoints(&t(1)).is_empty());
    assert_eq!(map.ranges().count(), 0);
    assert!(strategy.natural_endpoints(&t(1), &empty, &SimpleSnitch, node(1)).is_empty());
}

#[test]
fn effective_ownership_counts_every_replica() {
    // Four nodes at the quarter points of the Murmur3 ring own a quarter each; RF 2 doubles it.
    let mut tm = TokenMetadata::new(Partitioner::Murmur3);
    let quarter = i64::MAX / 2 + 1;
    for (n, token) in [(1, i64::MIN + 1), (2, i64::MIN + 1 + quarter), (3, 1), (4, quarter + 1)] {
        assert!(tm.update_normal_tokens(node(n), [t(token)]).is_ok());
    }
    let members: HashSet<Endpoint> = tm.endpoints().collect();
    for (rf, share) in [(1, 0.25), (2, 0.5), (4, 1.0), (9, 1.0)] {
        let map =
            ReplicaMap::build(&ReplicationStrategy::Simple { replication_factor: rf }, &tm, &SimpleSnitch, node(1));
        let ownership = map.effective_ownership();
        assert_eq!(ownership.keys().copied().collect::<HashSet<_>>(), members);
        for (ep, owned) in ownership {
            assert!((owned - share).abs() < 1e-5, "rf {rf}: {ep} owns {owned}, expected {share}");
        }
    }
    // A DC the keyspace does not replicate to owns nothing.
    let (tm, snitch) = hand_ring();
    let map = ReplicaMap::build(
        &ReplicationStrategy::NetworkTopology { datacenters: [("DC1".into(), 1)].into() },
        &tm,
        &snitch,
        node(1),
    );
    assert_eq!(map.effective_ownership().get(&node(3)), Some(&0.0));
    assert!(map.effective_ownership().get(&node(1)).is_some_and(|o| *o > 0.0));
}
