//! Random rings, topologies and strategies: the replica map must agree with
//! `natural_endpoints`, and both with the rules and models of the shared suite.

use model::dht::Partitioner;
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::SeedableRng;

use std::path::Path;

use super::tests::{check_cluster, check_replicas, cluster, node, t, topology};
use super::*;
use crate::locator::snitch::PropertyFileSnitch;
use crate::locator::token_metadata::random_tokens_with;

fn strategy() -> impl proptest::strategy::Strategy<Value = ReplicationStrategy> {
    prop_oneof![
        (0usize..6).prop_map(|rf| ReplicationStrategy::Simple { replication_factor: rf }),
        (0usize..6).prop_map(|rf| ReplicationStrategy::OldNetworkTopology { replication_factor: rf }),
        proptest::collection::vec(0usize..5, 4).prop_map(|rfs| ReplicationStrategy::NetworkTopology {
            // DC4 never has members.
            datacenters: rfs.into_iter().enumerate().map(|(i, rf)| (format!("DC{}", i + 1), rf)).collect(),
        }),
        Just(ReplicationStrategy::Local),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn replica_map_agrees_with_natural_endpoints_on_random_rings(
        nodes in 1usize..12,
        vnodes in 1usize..5,
        dcs in 1usize..4,
        racks in 1usize..4,
        seed in any::<u64>(),
        strategy in strategy(),
        probes in proptest::collection::vec(any::<i64>(), 1..24),
    ) {
        let c = cluster(nodes, vnodes, dcs, racks, seed, None);
        let probes: Vec<Token> = probes.into_iter().map(t).collect();
        if let Err(e) = check_cluster(&strategy, &c, &probes) {
            prop_assert!(false, "{}", e);
        }
    }

    /// With a node joining and another leaving, writes still reach every natural replica, and
    /// each pending replica is one that will hold the token once the changes are done.
    #[test]
    fn write_endpoints_cover_natural_and_only_future_replicas(
        nodes in 2usize..9,
        vnodes in 1usize..4,
        dcs in 1usize..3,
        racks in 1usize..3,
        seed in any::<u64>(),
        strategy in strategy(),
        leaver in 0usize..9,
        probes in proptest::collection::vec(any::<i64>(), 1..24),
    ) {
        let mut c = cluster(nodes, vnodes, dcs, racks, seed, None);
        // Place the joiner too: the topology has one more line.
        let text = topology(nodes + 1, dcs, racks);
        c.snitch = match PropertyFileSnitch::parse(Path::new("generated.properties"), &text) {
            Ok(s) => s,
            Err(e) => return Err(TestCaseError::fail(e.to_string())),
        };
        let mut tm = c.tm.clone();
        let leaver = node(leaver % nodes);
        tm.add_leaving_endpoint(leaver);
        let joiner = node(nodes);
        let mut rng = StdRng::seed_from_u64(seed ^ 1);
        let tokens = random_tokens_with(Partitioner::Murmur3, vnodes, &tm, &mut rng);
        prop_assert_eq!(tm.add_bootstrap_tokens(joiner, tokens.clone()), Ok(()));

        let map = ReplicaMap::build(&strategy, &tm, &c.snitch, c.local);
        let mut after_leave = c.tm.clone();
        after_leave.remove_endpoint(leaver);
        let mut after_join = after_leave.clone();
        prop_assert!(after_join.update_normal_tokens(joiner, tokens.clone()).is_ok());

        let mut all: Vec<Token> = probes.into_iter().map(t).collect();
        all.extend(tokens);
        all.extend(c.tm.sorted_tokens().iter().cloned());
        for token in &all {
            let natural = map.endpoints_for(token);
            prop_assert_eq!(natural, strategy.natural_endpoints(token, &c.tm, &c.snitch, c.local));
            if let Err(e) = check_replicas(&strategy, &c, token, natural) {
                prop_assert!(false, "{}", e);
            }
            let write = map.write_endpoints(token);
            prop_assert_eq!(write.get(..natural.len()), Some(natural));
            let future_leave = strategy.natural_endpoints(token, &after_leave, &c.snitch, c.local);
            let future_join = strategy.natural_endpoints(token, &after_join, &c.snitch, c.local);
            for ep in write.iter().skip(natural.len()) {
                prop_assert!(
                    future_leave.contains(ep) || (*ep == joiner && future_join.contains(ep)),
                    "pending {} for {:?} is no future replica", ep, token
                );
            }
            if future_join.contains(&joiner) {
                prop_assert!(write.contains(&joiner), "joiner missing at {:?}", token);
            }
        }
    }
}
