//! The replica's promise and accept rules, checked against a model of what Paxos requires, and
//! a simulation of several coordinators and replicas losing messages at random: a value chosen
//! (accepted by a majority) is never replaced by another one.

use model::data::Cell;
use proptest::prelude::*;

use super::*;

fn ballot(micros: i64) -> Ballot {
    Ballot::at_micros(micros)
}

fn update(value: &str) -> Row {
    let mut row = Row::new();
    row.cells.push(Cell::live("c", value, 1));
    row
}

/// What a replica did, for the model.
#[derive(Clone, Debug)]
enum Op {
    Prepare(i64),
    Propose(i64),
    Commit(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![(1i64..20).prop_map(Op::Prepare), (1i64..20).prop_map(Op::Propose), (1i64..20).prop_map(Op::Commit),]
}

/// One replica step: the decision, and the state it leaves (as the engine would keep it).
fn step(state: PaxosState, op: &Op, ballots: &mut std::collections::HashMap<i64, Ballot>) -> (PaxosState, bool) {
    let mut b = |m: i64| *ballots.entry(m).or_insert_with(|| ballot(m));
    match *op {
        Op::Prepare(m) => {
            let r = state.prepare(b(m));
            let ok = r.promised;
            (if ok { state.with_promise(b(m)) } else { state }, ok)
        }
        Op::Propose(m) => {
            let p = Commit::proposal(b(m), update(&m.to_string()));
            let ok = state.accepts(&p);
            (if ok { state.with_proposal(p) } else { state }, ok)
        }
        Op::Commit(m) => (state.with_commit(Commit::proposal(b(m), update(&m.to_string()))), true),
    }
}

proptest! {
    /// Promise: granted exactly when the ballot is newer than every ballot seen (promised,
    /// accepted or committed). Accept: exactly when the ballot is at least every promise and
    /// acceptance and newer than every commit. The promise never goes back.
    #[test]
    fn decisions_follow_the_rules(ops in proptest::collection::vec(op(), 1..60)) {
        let mut ballots = std::collections::HashMap::new();
        let mut state = PaxosState::default();
        let (mut max_promised, mut max_accepted, mut max_committed) = (0i64, 0i64, 0i64);
        for op in &ops {
            let before = state.promised;
            let (next, ok) = step(state, op, &mut ballots);
            match *op {
                Op::Prepare(m) => {
                    prop_assert_eq!(ok, m > max_promised.max(max_accepted).max(max_committed), "prepare {}", m);
                    if ok { max_promised = m; }
                }
                Op::Propose(m) => {
                    prop_assert_eq!(ok, m >= max_promised.max(max_accepted) && m > max_committed, "propose {}", m);
                    if ok { max_accepted = m; }
                }
                Op::Commit(m) => max_committed = max_committed.max(m),
            }
            prop_assert!(next.promised >= before);
            // A refused prepare names a ballot at least as new as the one refused.
            if let Op::Prepare(m) = *op {
                let refusal = next.prepare(ballot(m));
                if !refusal.promised {
                    prop_assert!(refusal.in_progress.ballot.micros() >= m);
                }
            }
            state = next;
        }
        // The round in progress is the accepted proposal newer than the commit, if any.
        let expected = (max_accepted > max_committed).then_some(max_accepted);
        prop_assert_eq!(state.in_progress().map(|c| c.ballot.micros()), expected);
    }

    /// Several coordinators run single rounds (prepare, adopt the newest in-progress proposal or
    /// propose their own value, propose) against three replicas; every message may be lost.
    /// Whatever the interleaving, all the values accepted by a majority are the same value.
    #[test]
    fn a_chosen_value_is_never_replaced(
        rounds in proptest::collection::vec((0usize..4, proptest::collection::vec(any::<bool>(), 6)), 1..12),
    ) {
        let mut replicas = vec![PaxosState::default(); 3];
        let mut chosen: Option<Row> = None;
        for (n, (coordinator, delivered)) in rounds.iter().enumerate() {
            let b = ballot(n as i64 + 1);
            let delivered = |i: usize| delivered.get(i).copied().unwrap_or(false);
            // Phase 1.
            let mut promises = Vec::new();
            for (i, r) in replicas.iter_mut().enumerate() {
                if !delivered(i) { continue; }
                let answer = r.prepare(b);
                if answer.promised {
                    *r = r.clone().with_promise(b);
                    promises.push(answer);
                }
            }
            if promises.len() < 2 { continue; }
            let newest = promises.iter().map(|p| p.in_progress.clone()).max_by_key(|c| c.ballot);
            let value = match newest {
                Some(c) if c.ballot != Ballot::NONE => c.update,
                _ => update(&format!("from {coordinator} in round {n}")),
            };
            // Phase 2.
            let proposal = Commit::proposal(b, value);
            let mut accepted = 0;
            for (i, r) in replicas.iter_mut().enumerate() {
                if !delivered(3 + i) { continue; }
                if r.accepts(&proposal) {
                    *r = r.clone().with_proposal(proposal.clone());
                    accepted += 1;
                }
            }
            if accepted >= 2 {
                // Values compare without their timestamps (each proposal restamps them).
                let value: Vec<Vec<u8>> = proposal.update.cells.iter().map(|c| c.value.clone()).collect();
                if let Some(first) = &chosen {
                    let first: Vec<Vec<u8>> = first.cells.iter().map(|c| c.value.clone()).collect();
                    prop_assert_eq!(first, value, "round {} chose another value", n);
                } else {
                    chosen = Some(proposal.update.clone());
                }
            }
        }
    }
}

#[test]
fn ballots_increase_and_order_by_time_then_bytes() {
    let a = Ballot::next(0);
    let b = Ballot::next(0);
    assert!(b > a, "{b} after {a}");
    let far = Ballot::next(b.micros() + 1_000_000);
    assert!(far.micros() >= b.micros() + 1_000_000);
    assert!(Ballot::NONE < a);
    assert_eq!(a.uuid().get_version_num(), 1);
}

#[test]
fn a_proposal_takes_the_ballot_time() {
    let b = ballot(1234);
    let mut row = update("v");
    row.deletion = model::data::DeletionTime::new(5, 5);
    let p = Commit::proposal(b, row);
    assert!(p.update.cells.iter().all(|c| c.timestamp == 1234));
    assert_eq!(p.update.deletion.marked_at, 1234);
}

#[test]
fn the_engine_handlers_keep_their_decisions() {
    use model::schema::{CfDef, KeyspaceDef};
    use storage::engine::StorageConfig;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut ks = KeyspaceDef::new("ks");
    ks.cf_defs.push(CfDef::new("ks", "cf"));
    let mut config = StorageConfig::new(dir.path().join("data"), dir.path().join("commitlog"));
    config.initial_keyspaces = vec![ks];
    let storage = Storage::open(config).expect("opens");
    let request = |commit: Commit| PaxosRequest { keyspace: "ks".into(), cf: "cf".into(), key: b"k".to_vec(), commit };
    let (b1, b2) = (ballot(100), ballot(200));
    assert!(prepare(&storage, &request(Commit::empty(b2))).expect("prepare").promised);
    assert!(!prepare(&storage, &request(Commit::empty(b1))).expect("prepare").promised, "older ballot refused");
    assert!(!propose(&storage, &request(Commit::proposal(b1, update("old")))).expect("propose"));
    let p = Commit::proposal(b2, update("new"));
    assert!(propose(&storage, &request(p.clone())).expect("propose"));
    let again = prepare(&storage, &request(Commit::empty(ballot(300)))).expect("prepare");
    assert!(again.promised);
    assert_eq!(again.in_progress, p, "the accepted proposal is reported as in progress");
    commit(&storage, &request(p.clone())).expect("commit");
    let cells = storage.read("ks", "cf", b"k", &model::filter::ReadFilter::all()).expect("reads");
    assert_eq!(cells.iter().map(|c| c.value.clone()).collect::<Vec<_>>(), vec![b"new".to_vec()]);
    let after = prepare(&storage, &request(Commit::empty(ballot(400)))).expect("prepare");
    assert_eq!(after.in_progress, Commit::empty(Ballot::NONE), "the commit ended the round");
    assert_eq!(after.most_recent_commit, p);
}
