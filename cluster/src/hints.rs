//! Hinted handoff: a write for a replica that is down is kept on the coordinator as a hint
//! (`system.hints`, through the commit log, see [`Storage::store_hint`]) and replayed to that
//! replica once gossip says it is up again (Cassandra's HintedHandOffManager).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use storage::engine::Storage;
use tokio::sync::watch;
use tracing::{debug, info, warn};

use crate::messages;
use crate::Endpoint;
use membership::Membership;
use messaging::{MessagingService, Verb};

/// How often the hints are checked for replicas that came back.
const HINT_CHECK_INTERVAL: Duration = Duration::from_secs(2);
/// Hints read and sent per round trip to the hints table.
const HINT_PAGE: usize = 64;

/// The key hints for `ep` are kept under.
pub fn target_key(ep: Endpoint) -> String {
    ep.to_string()
}

/// Replays hints to replicas that are up, until `stop`, at most `throttle_kb` KB/s per node
/// (0 = unthrottled); nothing while `paused` (`sibyltool pausehandoff`), which also ends a
/// replay under way after the hint being sent.
pub async fn delivery_loop(
    storage: Storage,
    messaging: Arc<MessagingService>,
    membership: Arc<Membership>,
    throttle_kb: u32,
    paused: Arc<AtomicBool>,
    mut stop: watch::Receiver<bool>,
) {
    let mut ticker = tokio::time::interval(HINT_CHECK_INTERVAL);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = stop.changed() => return,
        }
        if paused.load(Ordering::Relaxed) {
            continue;
        }
        let s = storage.clone();
        let targets = match tokio::task::spawn_blocking(move || s.hinted_targets()).await {
            Ok(Ok(targets)) => targets,
            Ok(Err(e)) => {
                warn!(error = %e, "cannot list hinted replicas");
                continue;
            }
            Err(_) => continue,
        };
        for target in targets {
            let Ok(ep) = target.parse::<Endpoint>() else { continue };
            if !membership.is_alive(ep) || ep == membership.local() {
                continue;
            }
            deliver(&storage, &messaging, ep, &target, throttle_kb, Some(&paused)).await;
        }
    }
}

/// What a leaving node did with the hints it kept.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct HintHandover {
    /// Replayed to their replicas, which were up.
    pub delivered: usize,
    /// Handed to another node, which keeps them until their replicas are up.
    pub handed_over: usize,
}

/// Before this node leaves the ring (decommission), so that no hint, sometimes a write's only
/// copy (consistency ANY), leaves with it: replays the hints of replicas that are up, and hands
/// every other hint to a live node that keeps it and replays it once its replica is back
/// (Cassandra hands its hints to another node on decommission as well). Each hint is deleted
/// here once delivered or taken. Fails when no other live node can take a hint, or one refuses;
/// the hints not yet taken stay here.
pub async fn hand_over_hints(
    storage: &Storage,
    messaging: &MessagingService,
    membership: &Membership,
    mut progress: impl FnMut(String),
) -> Result<HintHandover, String> {
    let local = membership.local();
    let s = storage.clone();
    let targets = tokio::task::spawn_blocking(move || s.hinted_targets())
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("cannot list hinted replicas: {e}"))?;
    let mut done = HintHandover::default();
    for target in targets {
        let Ok(ep) = target.parse::<Endpoint>() else { continue };
        if membership.is_alive(ep) && ep != local {
            progress(format!("replaying hints to {}", ep.ip()));
            done.delivered += deliver(storage, messaging, ep, &target, 0, None).await;
        }
        // What is left: the replica is down, or stopped taking them.
        let keeper = membership
            .ring()
            .sorted_owners()
            .iter()
            .copied()
            .find(|other| *other != local && *other != ep && membership.is_alive(*other));
        loop {
            let (s, t) = (storage.clone(), target.clone());
            let hints = tokio::task::spawn_blocking(move || s.hints_for(&t, HINT_PAGE))
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| format!("cannot read the hints for {target}: {e}"))?;
            if hints.is_empty() {
                break;
            }
            let keeper =
                keeper.ok_or_else(|| format!("hints for {target} are left and no other live node can take them"))?;
            progress(format!("handing hints for {} to {}", ep.ip(), keeper.ip()));
            for hint in hints {
                let payload = messages::encode_store_hint(ep, &hint.mutation);
                messaging
                    .send_request(keeper, Verb::StoreHint, payload)
                    .await
                    .map_err(|e| format!("{keeper} did not take a hint for {target}: {e}"))?;
                let (s, t) = (storage.clone(), target.clone());
                tokio::task::spawn_blocking(move || s.delete_hint(&t, hint.id))
                    .await
                    .map_err(|e| e.to_string())?
                    .map_err(|e| format!("cannot delete a hint handed over for {target}: {e}"))?;
                done.handed_over += 1;
            }
        }
    }
    if done.handed_over > 0 {
        info!(hints = done.handed_over, "handed hints over to other nodes before leaving");
    }
    Ok(done)
}

/// Sends every hint kept for `ep`, deleting each once `ep` acknowledged it; stops at the first
/// failure (the replica went down again, or is overloaded) to retry on a later round, and when
/// `paused` turns true. Returns how many were delivered.
async fn deliver(
    storage: &Storage,
    messaging: &MessagingService,
    ep: Endpoint,
    target: &str,
    throttle_kb: u32,
    paused: Option<&AtomicBool>,
) -> usize {
    let started = Instant::now();
    let mut sent_bytes = 0u64;
    let mut delivered = 0usize;
    loop {
        let (s, t) = (storage.clone(), target.to_string());
        let hints = match tokio::task::spawn_blocking(move || s.hints_for(&t, HINT_PAGE)).await {
            Ok(Ok(hints)) => hints,
            _ => break,
        };
        if hints.is_empty() {
            break;
        }
        for hint in hints {
            if paused.is_some_and(|p| p.load(Ordering::Relaxed)) {
                debug!(%ep, "hint replay paused by operator request");
                log_delivered(ep, delivered);
                return delivered;
            }
            let payload = messages::encode_mutation(&hint.mutation);
            sent_bytes += payload.len() as u64;
            if let Err(e) = messaging.send_request(ep, Verb::Hint, payload).await {
                debug!(%ep, error = %e, "hint replay stopped; retrying later");
                log_delivered(ep, delivered);
                return delivered;
            }
            let (s, t) = (storage.clone(), target.to_string());
            if let Ok(Err(e)) = tokio::task::spawn_blocking(move || s.delete_hint(&t, hint.id)).await {
                warn!(%ep, error = %e, "cannot delete a delivered hint; it will be replayed again");
            }
            delivered += 1;
            if throttle_kb > 0 {
                let due = Duration::from_secs_f64(sent_bytes as f64 / (throttle_kb as f64 * 1024.0));
                if let Some(wait) = due.checked_sub(started.elapsed()) {
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }
    log_delivered(ep, delivered);
    delivered
}

fn log_delivered(ep: Endpoint, delivered: usize) {
    if delivered > 0 {
        info!(%ep, hints = delivered, "replayed hints to a replica that came back");
    }
}
