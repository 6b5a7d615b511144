use rand::rngs::StdRng;
use rand::SeedableRng;

use super::*;

fn ep(n: u8) -> Endpoint {
    Endpoint::from(([127, 0, 0, n], 7000))
}

/// A Murmur3 token from its printed value.
fn t(v: i64) -> Token {
    match Partitioner::Murmur3.token_from_string(&v.to_string()) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    }
}

fn ring(nodes: &[(u8, &[i64])]) -> TokenMetadata {
    let mut tm = TokenMetadata::new(Partitioner::Murmur3);
    for (n, tokens) in nodes {
        let taken = tm.update_normal_tokens(ep(*n), tokens.iter().map(|v| t(*v)));
        assert_eq!(taken, Ok(Vec::new()));
    }
    tm
}

#[test]
fn tokens_sort_across_endpoints_and_each_endpoint_keeps_its_own() {
    let tm = ring(&[(1, &[300, -100]), (2, &[0, 500])]);
    assert_eq!(tm.sorted_tokens(), &[t(-100), t(0), t(300), t(500)]);
    assert_eq!(tm.sorted_owners(), &[ep(1), ep(2), ep(1), ep(2)]);
    assert_eq!(tm.tokens_of(ep(1)), &[t(-100), t(300)]);
    assert_eq!(tm.tokens_of(ep(2)), &[t(0), t(500)]);
    assert_eq!(tm.endpoints().collect::<Vec<_>>(), vec![ep(1), ep(2)]);
    assert!(tm.is_member(ep(1)) && !tm.is_member(ep(3)));
    assert!(tm.tokens_of(ep(3)).is_empty());
}

#[test]
fn updating_an_endpoint_replaces_its_tokens() {
    let mut tm = ring(&[(1, &[10, 20]), (2, &[30])]);
    assert_eq!(tm.update_normal_tokens(ep(1), [t(40)]), Ok(Vec::new()));
    assert_eq!(tm.sorted_tokens(), &[t(30), t(40)]);
    assert_eq!(tm.tokens_of(ep(1)), &[t(40)]);
}

#[test]
fn a_token_claimed_by_another_endpoint_moves_to_it() {
    let mut tm = ring(&[(1, &[10, 20]), (2, &[30])]);
    let taken = tm.update_normal_tokens(ep(3), [t(20), t(30)]);
    assert_eq!(taken, Ok(vec![(t(20), ep(1)), (t(30), ep(2))]));
    assert_eq!(tm.tokens_of(ep(1)), &[t(10)]);
    // Endpoint 2 lost its only token, so it is no longer a member.
    assert!(!tm.is_member(ep(2)));
    assert_eq!(tm.sorted_owners(), &[ep(1), ep(3), ep(3)]);
    assert_eq!(tm.normal_owner(&t(30)), Some(ep(3)));
}

#[test]
fn no_tokens_is_refused() {
    let mut tm = ring(&[(1, &[10])]);
    assert_eq!(tm.update_normal_tokens(ep(2), []), Err(RingError::NoTokens { endpoint: ep(2) }));
    assert_eq!(tm.add_bootstrap_tokens(ep(2), []), Err(RingError::NoTokens { endpoint: ep(2) }));
    assert_eq!(tm.member_count(), 1);
}

#[test]
fn removing_an_endpoint_forgets_every_state_of_it() {
    let mut tm = ring(&[(1, &[10]), (2, &[20, 40])]);
    tm.add_leaving_endpoint(ep(2));
    assert_eq!(tm.add_bootstrap_tokens(ep(3), [t(30)]), Ok(()));
    tm.remove_endpoint(ep(2));
    tm.remove_endpoint(ep(3));
    assert_eq!(tm.sorted_tokens(), &[t(10)]);
    assert!(!tm.is_member(ep(2)) && !tm.is_leaving(ep(2)));
    assert!(tm.bootstrap_tokens().is_empty());
    // Removing an unknown endpoint changes nothing.
    tm.remove_endpoint(ep(9));
    assert_eq!(tm.sorted_owners(), &[ep(1)]);
}

#[test]
fn joining_makes_bootstrap_tokens_normal_and_ends_leaving() {
    let mut tm = ring(&[(1, &[10])]);
    assert_eq!(tm.add_bootstrap_tokens(ep(2), [t(20)]), Ok(()));
    assert_eq!(tm.bootstrap_tokens().get(&t(20)), Some(&ep(2)));
    assert!(!tm.is_member(ep(2)));
    // Bootstrap tokens are not part of the ring.
    assert_eq!(tm.owner_of(&t(15)), Some(ep(1)));

    assert_eq!(tm.update_normal_tokens(ep(2), [t(20)]), Ok(Vec::new()));
    assert!(tm.bootstrap_tokens().is_empty());
    assert_eq!(tm.owner_of(&t(15)), Some(ep(2)));

    tm.add_leaving_endpoint(ep(2));
    assert!(tm.is_leaving(ep(2)));
    assert_eq!(tm.update_normal_tokens(ep(2), [t(25)]), Ok(Vec::new()));
    assert!(!tm.is_leaving(ep(2)));
}

#[test]
fn bootstrap_token_collisions_are_refused() {
    let mut tm = ring(&[(1, &[10])]);
    assert_eq!(tm.add_bootstrap_tokens(ep(2), [t(20), t(30)]), Ok(()));
    let with_normal = tm.add_bootstrap_tokens(ep(3), [t(10)]);
    assert!(
        matches!(&with_normal, Err(RingError::BootstrapTokenCollision { token, existing, endpoint })
            if token == "10" && *existing == ep(1) && *endpoint == ep(3)),
        "{with_normal:?}"
    );
    let with_joining = tm.add_bootstrap_tokens(ep(3), [t(30)]);
    assert!(matches!(with_joining, Err(RingError::BootstrapTokenCollision { existing, .. }) if existing == ep(2)));
    // A node may restate its own bootstrap tokens; the new set replaces the old one.
    assert_eq!(tm.add_bootstrap_tokens(ep(2), [t(30), t(40)]), Ok(()));
    assert_eq!(tm.bootstrap_tokens().keys().cloned().collect::<Vec<_>>(), vec![t(30), t(40)]);
}

#[test]
fn only_a_one_token_member_moves_and_only_to_a_free_token() {
    let mut tm = ring(&[(1, &[10]), (2, &[20, 25]), (3, &[30])]);
    tm.add_bootstrap_tokens(ep(4), [t(40)]).expect("bootstrap");
    assert!(matches!(tm.add_moving_endpoint(ep(2), t(50)), Err(RingError::NotMovable { tokens: 2, .. })));
    assert!(matches!(tm.add_moving_endpoint(ep(9), t(50)), Err(RingError::NotMovable { tokens: 0, .. })));
    for (taken, holder) in [(20, ep(2)), (40, ep(4)), (10, ep(1))] {
        let refused = tm.add_moving_endpoint(ep(1), t(taken));
        assert!(
            matches!(&refused, Err(RingError::MoveTokenCollision { existing, .. }) if *existing == holder),
            "{refused:?}"
        );
    }
    assert_eq!(tm.add_moving_endpoint(ep(1), t(15)), Ok(()));
    let claimed = tm.add_moving_endpoint(ep(3), t(15));
    assert!(matches!(claimed, Err(RingError::MoveTokenCollision { existing, .. }) if existing == ep(1)));
    assert_eq!(tm.moving_endpoints().get(&ep(1)), Some(&t(15)));
    assert_eq!(tm.tokens_of(ep(1)), &[t(10)], "the old token stays until the move ends");
    assert!(tm.normal_ring().moving_endpoints().is_empty());
    // Taking the new token as normal ends the move.
    tm.update_normal_tokens(ep(1), [t(15)]).expect("normal");
    assert!(!tm.is_moving(ep(1)));
    assert_eq!(tm.tokens_of(ep(1)), &[t(15)]);
}

#[test]
fn ring_walk_starts_at_the_first_token_at_or_after_and_wraps() {
    let tm = ring(&[(1, &[10, 40]), (2, &[20]), (3, &[30])]);
    let walk = |start: i64| tm.ring_walk(&t(start)).map(|(tok, ep)| (tok.clone(), ep)).collect::<Vec<_>>();
    assert_eq!(walk(20), vec![(t(20), ep(2)), (t(30), ep(3)), (t(40), ep(1)), (t(10), ep(1))]);
    assert_eq!(walk(21), vec![(t(30), ep(3)), (t(40), ep(1)), (t(10), ep(1)), (t(20), ep(2))]);
    // Past the last token the walk starts over at the first.
    assert_eq!(walk(41), walk(5));
    assert_eq!(walk(41).first(), Some(&(t(10), ep(1))));
    // The minimum token starts at the first token too.
    let from_min: Vec<_> = tm.ring_walk(&Token::minimum()).map(|(tok, _)| tok.clone()).collect();
    assert_eq!(from_min, tm.sorted_tokens());
    assert_eq!(tm.ring_walk(&t(0)).len(), 4);
    assert_eq!(TokenMetadata::new(Partitioner::Murmur3).ring_walk(&t(0)).count(), 0);
}

#[test]
fn owner_and_primary_ranges_follow_the_predecessor_rule() {
    let tm = ring(&[(1, &[10, 40]), (2, &[20])]);
    assert_eq!(tm.owner_of(&t(10)), Some(ep(1)));
    assert_eq!(tm.owner_of(&t(11)), Some(ep(2)));
    assert_eq!(tm.owner_of(&t(41)), Some(ep(1)));
    assert_eq!(tm.normal_owner(&t(11)), None);
    assert_eq!(tm.primary_ranges(ep(1)), vec![Range::new(t(40), t(10)), Range::new(t(20), t(40))]);
    assert_eq!(tm.primary_ranges(ep(2)), vec![Range::new(t(10), t(20))]);
    assert!(tm.primary_ranges(ep(3)).is_empty());

    let single = ring(&[(1, &[7])]);
    let ranges = single.primary_ranges(ep(1));
    assert_eq!(ranges, vec![Range::new(t(7), t(7))]);
    assert!(ranges.iter().all(Range::is_full_ring));
    assert_eq!(TokenMetadata::new(Partitioner::Murmur3).owner_of(&t(1)), None);
}

#[test]
fn normal_ring_drops_joining_and_leaving_state() {
    let mut tm = ring(&[(1, &[10]), (2, &[20])]);
    tm.add_leaving_endpoint(ep(2));
    assert_eq!(tm.add_bootstrap_tokens(ep(3), [t(30)]), Ok(()));
    let normal = tm.normal_ring();
    assert_eq!(normal.sorted_tokens(), tm.sorted_tokens());
    assert!(normal.bootstrap_tokens().is_empty() && normal.leaving_endpoints().is_empty());
    // The original is untouched: a clone is an independent snapshot.
    assert!(tm.is_leaving(ep(2)));
}

#[test]
fn choose_token_splits_the_largest_range_of_the_heaviest_node() {
    // Node 1 owns (-1000, 0] and (600, -1000] wrapping (most of the ring); its largest range is
    // the wrapping one, whose Murmur3 midpoint is half a ring away from the middle of 600..-1000.
    let tm = ring(&[(1, &[-1000, 0]), (2, &[200]), (3, &[600])]);
    let mut rng = StdRng::seed_from_u64(1);
    let chosen = choose_token_with(Partitioner::Murmur3, &tm, &mut rng);
    assert_eq!(chosen, Partitioner::Murmur3.midpoint(&t(600), &t(-1000)));
    assert_eq!(Partitioner::Murmur3.token_to_string(&chosen), (i64::MAX - 200).to_string());
    assert!(Range::new(t(600), t(-1000)).contains(&chosen));

    // A ring where one non-wrapping range dominates.
    let tm = ring(&[(1, &[i64::MIN + 1]), (2, &[i64::MAX - 1_000_000]), (3, &[i64::MAX - 1000])]);
    let chosen = choose_token_with(Partitioner::Murmur3, &tm, &mut rng);
    assert_eq!(chosen, t(((i128::from(i64::MIN + 1) + i128::from(i64::MAX - 1_000_000)) / 2) as i64));
}

#[test]
fn choose_token_is_random_for_an_empty_or_single_node_ring_and_never_taken() {
    let mut rng = StdRng::seed_from_u64(7);
    let empty = TokenMetadata::new(Partitioner::Random);
    let a = choose_token_with(Partitioner::Random, &empty, &mut rng);
    let b = choose_token_with(Partitioner::Random, &empty, &mut rng);
    assert_ne!(a, b);
    assert_eq!(Partitioner::Random.validate_token(&a), Ok(()));

    let mut one = TokenMetadata::new(Partitioner::Random);
    assert!(one.update_normal_tokens(ep(1), [a.clone()]).is_ok());
    let c = choose_token_with(Partitioner::Random, &one, &mut rng);
    assert_ne!(c, a);

    // Adjacent tokens have no midpoint between them: a random free token comes back instead.
    let tm = ring(&[(1, &[5]), (2, &[6])]);
    let shrunk = ring(&[(1, &[5, 7]), (2, &[6])]);
    for tm in [tm, shrunk] {
        let chosen = choose_token_with(Partitioner::Murmur3, &tm, &mut rng);
        assert_eq!(tm.normal_owner(&chosen), None);
    }
}

#[test]
fn random_tokens_are_distinct_and_free() {
    let mut rng = StdRng::seed_from_u64(3);
    for p in Partitioner::ALL {
        let mut tm = TokenMetadata::new(p);
        let first = random_tokens_with(p, 16, &tm, &mut rng);
        assert_eq!(first.len(), 16);
        assert_eq!(first.iter().collect::<BTreeSet<_>>().len(), 16);
        assert!(tm.update_normal_tokens(ep(1), first.clone()).is_ok());
        let second = random_tokens(p, 16, &tm);
        assert_eq!(second.len(), 16);
        assert!(second.iter().all(|t| !first.contains(t) && p.validate_token(t).is_ok() && !t.is_minimum()));
    }
    assert!(random_tokens(Partitioner::Murmur3, 0, &TokenMetadata::new(Partitioner::Murmur3)).is_empty());
}
