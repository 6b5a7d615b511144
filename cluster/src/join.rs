//! What a starting node must know before it takes tokens or serves clients (Cassandra's
//! `StorageService.joinTokenRing` checks and `Gossiper.waitToSettle`).
//!
//! ```text
//! first start:  learn the ring ─▶ check_new_tokens ─▶ join (or bootstrap) ─▶ settle ─▶ check_held_tokens ─▶ serve
//! restart:      join at the saved tokens ───────────────────────────────────▶ settle ─▶ check_held_tokens ─▶ serve
//! ```
//!
//! - A node never takes a token another member holds: on a first start every token it would
//!   take is checked against the ring it learned (live or dead owner alike: only removenode or
//!   decommission hand a token over), and once settled, against every live peer's claim. Peers
//!   keep a live owner's token whatever a newcomer announces
//!   ([`crate::storage_service::StorageService`]).
//! - Gossip has settled when polls `poll_interval` apart, after `min_wait`, found the same
//!   endpoints with the same statuses `polls_required` times in a row and no live peer whose
//!   place in the ring is unknown. A node serves only then, so it never routes a request with a
//!   ring it has not learned.

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant};

use model::dht::{Partitioner, Token};
use tracing::{info, warn};

use crate::Endpoint;
use membership::gossip::Status;
use membership::locator::token_metadata::TokenMetadata;

/// What gossip says of one peer.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerView {
    pub status: Option<Status>,
    pub alive: bool,
    /// Its TOKENS, decoded (empty when it announced none).
    pub tokens: Vec<Token>,
}

impl PeerView {
    /// Whether the peer is alive and has not said where it stands in the ring: no STATUS yet,
    /// or a status that holds tokens without any. A bootstrapping node is placed even before
    /// it names its tokens: what is written meanwhile, it fetches.
    pub fn awaiting_placement(&self) -> bool {
        self.alive
            && match self.status {
                None => true,
                Some(Status::Boot) => false,
                Some(s) => holds_tokens(s) && self.tokens.is_empty(),
            }
    }

    /// The tokens it claims as a member or joiner, up or shut down (none for a node that left,
    /// was removed or hibernates).
    fn claimed_tokens(&self) -> &[Token] {
        match self.status {
            Some(s) if holds_tokens(s) || s == Status::Shutdown => &self.tokens,
            _ => &[],
        }
    }
}

fn holds_tokens(status: Status) -> bool {
    matches!(status, Status::Normal | Status::Boot | Status::Leaving | Status::Moving)
}

/// Gossip's view of every peer (this node excluded).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GossipView {
    pub peers: BTreeMap<Endpoint, PeerView>,
}

impl GossipView {
    /// The live peers whose place in the ring is not known yet.
    pub fn awaiting_placement(&self) -> Vec<Endpoint> {
        self.peers.iter().filter(|(_, p)| p.awaiting_placement()).map(|(ep, _)| *ep).collect()
    }

    /// What must stay unchanged between polls for gossip to count as settled: the endpoints and
    /// their statuses (liveness is left out: a flapping peer would hold a start forever).
    fn fingerprint(&self) -> Vec<(Endpoint, Option<&'static str>)> {
        self.peers.iter().map(|(ep, p)| (*ep, p.status.map(Status::name))).collect()
    }
}

/// A token this node may not take, and who has it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct TokenConflict {
    /// The token, as the partitioner writes it.
    pub token: String,
    pub holder: Endpoint,
    pub holder_alive: bool,
    pub kind: ConflictKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConflictKind {
    /// A first start, bootstrapping to a held token.
    Bootstrap,
    /// A first start without bootstrap (or a seed) at a held token.
    Join,
    /// A token this node held before, now claimed by a live peer: it was replaced or removed
    /// while down.
    Held,
}

impl fmt::Display for TokenConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (token, holder) = (&self.token, self.holder);
        let state = if self.holder_alive { "up" } else { "down" };
        match self.kind {
            // Cassandra's words, with who holds it.
            ConflictKind::Bootstrap => write!(
                f,
                "Bootstrapping to existing token {token} is not allowed (decommission/removenode the old node first): \
                 {holder} holds it and is {state}"
            ),
            ConflictKind::Join => write!(
                f,
                "Joining the ring at existing token {token} is not allowed (decommission/removenode the old node \
                 first): {holder} holds it and is {state}; choose another InitialToken, or none"
            ),
            ConflictKind::Held => write!(
                f,
                "This node's token {token} is now held by {holder}, which is {state}: this node was removed or \
                 replaced while it was down. Nothing was changed; to join again as a new node, clear its data and \
                 commit log directories first"
            ),
        }
    }
}

/// On a first start, before announcing `tokens`: the first one that a ring member (live or
/// dead), a joining node or a live peer's claim already has.
pub fn check_new_tokens(
    partitioner: Partitioner,
    ring: &TokenMetadata,
    view: &GossipView,
    local: Endpoint,
    tokens: &[Token],
    bootstrapping: bool,
) -> Result<(), TokenConflict> {
    let kind = if bootstrapping { ConflictKind::Bootstrap } else { ConflictKind::Join };
    for token in tokens {
        let owner =
            ring.normal_owner(token).or_else(|| ring.bootstrap_tokens().get(token).copied()).filter(|ep| *ep != local);
        let owner = owner.or_else(|| claimant(view, token, false));
        if let Some(holder) = owner {
            let holder_alive = view.peers.get(&holder).is_some_and(|p| p.alive);
            return Err(TokenConflict { token: partitioner.token_to_string(token), holder, holder_alive, kind });
        }
    }
    Ok(())
}

/// Once gossip has settled: the first of this node's `tokens` that a live peer claims too.
pub fn check_held_tokens(partitioner: Partitioner, view: &GossipView, tokens: &[Token]) -> Result<(), TokenConflict> {
    for token in tokens {
        if let Some(holder) = claimant(view, token, true) {
            return Err(TokenConflict {
                token: partitioner.token_to_string(token),
                holder,
                holder_alive: true,
                kind: ConflictKind::Held,
            });
        }
    }
    Ok(())
}

/// A peer (a live one, with `live_only`) whose gossip state claims `token`.
fn claimant(view: &GossipView, token: &Token, live_only: bool) -> Option<Endpoint> {
    view.peers.iter().find(|(_, p)| (p.alive || !live_only) && p.claimed_tokens().contains(token)).map(|(ep, _)| *ep)
}

/// How a starting node waits for gossip to settle before serving (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SettleWait {
    pub min_wait: Duration,
    pub poll_interval: Duration,
    pub polls_required: u32,
    /// Serve after this many polls even if gossip has not settled; `None` waits for it.
    pub force_after_polls: Option<u32>,
    /// Do not wait at all (Cassandra's `-Dcassandra.skip_wait_for_gossip_to_settle=0`).
    pub skip: bool,
}

/// How a wait for gossip ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settled {
    Skipped,
    /// After this many polls past the required ones.
    After {
        extra_polls: u32,
    },
    /// Not settled, but the configured number of polls passed.
    Forced {
        polls: u32,
    },
}

/// Waits as [`SettleWait`] says, asking `view` for gossip's view at each poll, and logs how it
/// went.
pub async fn wait_to_settle(wait: &SettleWait, view: impl Fn() -> GossipView) -> Settled {
    if wait.skip {
        info!("not waiting for gossip to settle (SkipWaitForGossipToSettle is 0)");
        return Settled::Skipped;
    }
    let started = Instant::now();
    info!(min_wait = ?wait.min_wait, "waiting for gossip to settle before serving clients...");
    tokio::time::sleep(wait.min_wait).await;
    let mut last = view().fingerprint();
    let (mut polls, mut okay) = (0u32, 0u32);
    while okay < wait.polls_required {
        tokio::time::sleep(wait.poll_interval).await;
        polls += 1;
        let now = view();
        let awaiting = now.awaiting_placement();
        let fingerprint = now.fingerprint();
        if fingerprint == last && awaiting.is_empty() {
            okay += 1;
        } else {
            okay = 0;
            if awaiting.is_empty() {
                info!(polls, "gossip not settled after {polls} polls");
            } else {
                info!(
                    polls,
                    ?awaiting,
                    "gossip not settled after {polls} polls: live nodes not yet placed in the ring"
                );
            }
        }
        last = fingerprint;
        if wait.force_after_polls.is_some_and(|n| polls >= n) && okay < wait.polls_required {
            warn!(polls, "gossip not settled, but serving anyway: SkipWaitForGossipToSettle allows {polls} polls");
            return Settled::Forced { polls };
        }
    }
    let extra_polls = polls - wait.polls_required;
    if extra_polls > 0 {
        info!(waited = ?started.elapsed(), "gossip settled after {extra_polls} extra polls; proceeding");
    } else {
        info!(waited = ?started.elapsed(), "no gossip backlog; proceeding");
    }
    Settled::After { extra_polls }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn ep(i: u8) -> Endpoint {
        Endpoint::from(([127, 0, 0, i], 7000))
    }

    fn token(p: Partitioner, key: &str) -> Token {
        p.token_for_key(key.as_bytes())
    }

    fn peer(status: Option<Status>, alive: bool, tokens: Vec<Token>) -> PeerView {
        PeerView { status, alive, tokens }
    }

    #[test]
    fn a_live_peer_without_a_place_is_awaited() {
        let p = Partitioner::Random;
        let mut view = GossipView::default();
        view.peers.insert(ep(2), peer(Some(Status::Normal), true, vec![token(p, "b")]));
        view.peers.insert(ep(3), peer(None, false, vec![]));
        view.peers.insert(ep(4), peer(Some(Status::Shutdown), false, vec![token(p, "d")]));
        assert!(view.awaiting_placement().is_empty(), "a dead peer without status is not awaited");
        view.peers.insert(ep(3), peer(None, true, vec![]));
        view.peers.insert(ep(5), peer(Some(Status::Normal), true, vec![]));
        view.peers.insert(ep(6), peer(Some(Status::Left { expire_at_ms: 1 }), true, vec![]));
        view.peers.insert(ep(7), peer(Some(Status::Boot), true, vec![]));
        assert_eq!(view.awaiting_placement(), vec![ep(3), ep(5)]);
    }

    #[test]
    fn new_tokens_held_by_any_member_or_live_claimant_are_refused() {
        let p = Partitioner::Random;
        let (t2, t3, t9) = (token(p, "two"), token(p, "three"), token(p, "nine"));
        let mut ring = TokenMetadata::new(p);
        ring.update_normal_tokens(ep(2), vec![t2.clone()]).unwrap_or_else(|e| panic!("{e}"));
        let mut view = GossipView::default();
        view.peers.insert(ep(2), peer(Some(Status::Normal), true, vec![t2.clone()]));
        view.peers.insert(ep(3), peer(Some(Status::Boot), true, vec![t3.clone()]));

        let err = check_new_tokens(p, &ring, &view, ep(1), &[t9.clone(), t2.clone()], true)
            .err()
            .unwrap_or_else(|| panic!("a live member's token"));
        assert_eq!((err.holder, err.holder_alive, err.kind), (ep(2), true, ConflictKind::Bootstrap));
        assert!(err.to_string().starts_with("Bootstrapping to existing token"), "{err}");
        let err = check_new_tokens(p, &ring, &view, ep(1), std::slice::from_ref(&t3), false)
            .err()
            .unwrap_or_else(|| panic!("a joining node's token"));
        assert_eq!((err.holder, err.kind), (ep(3), ConflictKind::Join));
        // A dead member keeps its token too.
        view.peers.insert(ep(2), peer(Some(Status::Normal), false, vec![t2.clone()]));
        let err = check_new_tokens(p, &ring, &view, ep(1), std::slice::from_ref(&t2), false)
            .err()
            .unwrap_or_else(|| panic!("a dead member's token"));
        assert_eq!((err.holder, err.holder_alive), (ep(2), false));
        assert!(err.to_string().contains("is down"), "{err}");
        assert_eq!(check_new_tokens(p, &ring, &view, ep(1), std::slice::from_ref(&t9), false), Ok(()));
        // A member that announced its shutdown, known from gossip only, keeps its token too.
        view.peers.insert(ep(9), peer(Some(Status::Shutdown), false, vec![t9.clone()]));
        let err = check_new_tokens(p, &TokenMetadata::new(p), &view, ep(1), std::slice::from_ref(&t9), false)
            .err()
            .unwrap_or_else(|| panic!("a shut-down member's token"));
        assert_eq!((err.holder, err.holder_alive), (ep(9), false));
        // Our own tokens (a restart) are ours; gossip's view never holds this node.
        view.peers.remove(&ep(2));
        assert_eq!(check_new_tokens(p, &ring, &view, ep(2), std::slice::from_ref(&t2), false), Ok(()));
    }

    #[test]
    fn held_tokens_conflict_only_with_live_claims() {
        let p = Partitioner::Random;
        let t = token(p, "mine");
        let mut view = GossipView::default();
        view.peers.insert(ep(2), peer(Some(Status::Normal), false, vec![t.clone()]));
        view.peers.insert(ep(3), peer(Some(Status::Left { expire_at_ms: 1 }), true, vec![t.clone()]));
        assert_eq!(check_held_tokens(p, &view, std::slice::from_ref(&t)), Ok(()));
        view.peers.insert(ep(4), peer(Some(Status::Normal), true, vec![t.clone()]));
        let err = check_held_tokens(p, &view, &[t]).err().unwrap_or_else(|| panic!("a live claim"));
        assert_eq!((err.holder, err.kind), (ep(4), ConflictKind::Held));
    }

    fn wait(polls_required: u32, force_after_polls: Option<u32>) -> SettleWait {
        SettleWait {
            min_wait: Duration::from_millis(5),
            poll_interval: Duration::from_millis(5),
            polls_required,
            force_after_polls,
            skip: false,
        }
    }

    #[tokio::test]
    async fn settling_needs_unchanged_polls_in_a_row() {
        // The view changes at polls 1 and 2 (a peer appears, then announces NORMAL), then holds.
        let calls = AtomicU32::new(0);
        let view = || {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            let mut v = GossipView::default();
            if n >= 1 {
                let status = (n >= 2).then_some(Status::Normal);
                v.peers.insert(ep(2), peer(status, true, vec![token(Partitioner::Random, "x")]));
            }
            v
        };
        assert_eq!(wait_to_settle(&wait(3, None), view).await, Settled::After { extra_polls: 2 });
        assert_eq!(calls.load(Ordering::SeqCst), 6, "the first look, then five polls");
    }

    #[tokio::test]
    async fn a_peer_awaiting_placement_holds_the_wait_until_forced() {
        let view = || {
            let mut v = GossipView::default();
            v.peers.insert(ep(2), peer(None, true, vec![]));
            v
        };
        assert_eq!(wait_to_settle(&wait(3, Some(7)), view).await, Settled::Forced { polls: 7 });
        let skip = SettleWait { skip: true, ..wait(3, None) };
        assert_eq!(wait_to_settle(&skip, view).await, Settled::Skipped);
    }
}
