//! The services an operator stops and starts while the node runs, as with Cassandra's nodetool
//! before a rolling restart: `disablethrift`/`enablethrift`/`statusthrift` (the Thrift front
//! end, [`ThriftServer`]), `disablebinary`/`enablebinary`/`statusbinary` (the native protocol,
//! [`NativeService`]) and `disablegossip`/`enablegossip`/`statusgossip` (gossip, in
//! `StorageService`); and hinted handoff: `disablehandoff`/`enablehandoff` (whether writes
//! keep hints), `pausehandoff`/`resumehandoff` (whether kept hints are replayed),
//! `statushandoff` and `truncatehints`; and background compaction per column family:
//! `disableautocompaction`/`enableautocompaction`. Each stop and start is idempotent: asked
//! again, it answers `changed: false` (or changes nothing).
//!
//! Starts are refused as Cassandra refuses them: while the node drains or once it is drained
//! (its engine refuses writes), and, for gossip, once it is leaving the ring or has left it.
//! Gossip is not stopped while a move or decommission runs (they need the ring to hear them),
//! and those refuse to run while gossip is stopped.

use std::sync::Arc;

use admin_protocol::{AutoCompactionResult, HandoffStatus, ServiceStatus, TruncateHintsResult};
use tracing::{info, warn};

use super::state::{
    cluster_service, select_stores, AdminState, OpError, MODE_DECOMMISSIONED, MODE_DRAINED, MODE_DRAINING,
    MODE_LEAVING, MODE_MOVING,
};
use crate::native::NativeService;
use crate::node::Node;
use crate::thrift::server::{ThriftServer, ThriftServerError};

fn unchanged(running: bool) -> ServiceStatus {
    ServiceStatus { running, changed: false }
}

fn thrift_server<'n>(node: &'n Node, op: &str) -> Result<&'n Arc<ThriftServer>, OpError> {
    node.thrift.as_ref().ok_or_else(|| OpError::NotBuilt(format!("{op}: this node runs without a Thrift server")))
}

/// Cassandra's refusal to start `service` on a node that drains or was drained.
fn check_may_start(state: &AdminState, op: &'static str, service: &str) -> Result<(), OpError> {
    match state.mode() {
        MODE_DRAINING => {
            Err(OpError::DrainedNode(format!("{op}: unable to start {service} because the node is draining")))
        }
        MODE_DRAINED => {
            Err(OpError::DrainedNode(format!("{op}: unable to start {service} because the node was drained")))
        }
        _ => Ok(()),
    }
}

pub(super) async fn disable_thrift(node: &Node) -> Result<ServiceStatus, OpError> {
    let thrift = thrift_server(node, "disablethrift")?;
    let changed = thrift.stop().await;
    if changed {
        warn!("stopped serving thrift clients by operator request");
    }
    Ok(ServiceStatus { running: thrift.is_running(), changed })
}

pub(super) async fn enable_thrift(state: &AdminState) -> Result<ServiceStatus, OpError> {
    let thrift = thrift_server(&state.node, "enablethrift")?;
    if thrift.is_running() {
        return Ok(unchanged(true));
    }
    check_may_start(state, "enablethrift", "thrift")?;
    let changed = thrift.start().await.map_err(|e| match e {
        ThriftServerError::Bind { .. } => OpError::Internal(format!("enablethrift: {e}")),
        ThriftServerError::ShuttingDown => OpError::Unavailable(format!("enablethrift: {e}")),
    })?;
    if changed {
        info!("serving thrift clients again by operator request");
    }
    Ok(ServiceStatus { running: thrift.is_running(), changed })
}

pub(super) fn status_thrift(node: &Node) -> Result<ServiceStatus, OpError> {
    Ok(unchanged(thrift_server(node, "statusthrift")?.is_running()))
}

fn native_service<'n>(node: &'n Node, op: &str) -> Result<&'n Arc<NativeService>, OpError> {
    node.native.as_ref().ok_or_else(|| {
        OpError::NotBuilt(format!("{op}: this node runs without the native transport (StartNativeTransport is false)"))
    })
}

pub(super) async fn disable_binary(node: &Node) -> Result<ServiceStatus, OpError> {
    let native = native_service(node, "disablebinary")?;
    let changed = native.stop().await;
    if changed {
        warn!("stopped serving native protocol clients by operator request");
    }
    Ok(ServiceStatus { running: native.is_running(), changed })
}

pub(super) async fn enable_binary(state: &AdminState) -> Result<ServiceStatus, OpError> {
    let native = native_service(&state.node, "enablebinary")?;
    if native.is_running() {
        return Ok(unchanged(true));
    }
    check_may_start(state, "enablebinary", "the native transport")?;
    let changed = native.start().await.map_err(|e| OpError::Internal(format!("enablebinary: {e}")))?;
    if changed {
        info!("serving native protocol clients again by operator request");
    }
    Ok(ServiceStatus { running: native.is_running(), changed })
}

pub(super) fn status_binary(node: &Node) -> Result<ServiceStatus, OpError> {
    Ok(unchanged(native_service(node, "statusbinary")?.is_running()))
}

/// Announces the shutdown to the live peers and stops gossiping; waits (at most
/// `SHUTDOWN_ANNOUNCEMENT_GRACE`) until the announcement is written to them, as a stopping
/// node does, so they mark this node down at once.
pub(super) async fn disable_gossip(state: &AdminState) -> Result<ServiceStatus, OpError> {
    let node = &state.node;
    let service = cluster_service(node, "disablegossip")?;
    if !service.is_gossip_running() {
        return Ok(unchanged(false));
    }
    // Held while gossip stops, so no move or decommission starts meanwhile; one that runs
    // holds the lock exclusively.
    let Ok(_shared) = state.ops_lock.try_read() else {
        return Err(OpError::Unavailable(
            "disablegossip: unable to stop gossip while the node drains, moves or leaves the ring; \
             wait until it is done, or stop the node instead"
                .into(),
        ));
    };
    if matches!(state.mode(), MODE_MOVING | MODE_LEAVING) {
        return Err(OpError::Unavailable(
            "disablegossip: unable to stop gossip because the node is not in the normal state; \
             try to stop the node instead"
                .into(),
        ));
    }
    let Some(told) = service.stop_gossiping() else { return Ok(unchanged(false)) };
    service.wait_for_announcement(&told).await;
    Ok(ServiceStatus { running: service.is_gossip_running(), changed: true })
}

/// Gossips again with a newer generation, saved first (a later start takes a newer one
/// still), so peers take this node's state whole and mark it up.
pub(super) async fn enable_gossip(state: &AdminState) -> Result<ServiceStatus, OpError> {
    let node = &state.node;
    let service = cluster_service(node, "enablegossip")?;
    if service.is_gossip_running() {
        return Ok(unchanged(true));
    }
    // A drain running holds it exclusively: the start then sees the drained mode.
    let _shared = state.ops_lock.read().await;
    check_may_start(state, "enablegossip", "gossip")?;
    if matches!(state.mode(), MODE_LEAVING | MODE_DECOMMISSIONED) {
        return Err(OpError::Left("enablegossip"));
    }
    let generation = renew_generation(node).await?;
    let changed =
        service.start_gossiping(generation).map_err(|e| OpError::Unavailable(format!("enablegossip: {e}")))?;
    Ok(ServiceStatus { running: service.is_gossip_running(), changed })
}

async fn renew_generation(node: &Node) -> Result<i32, OpError> {
    let storage = node.storage.clone();
    let renewed = tokio::task::spawn_blocking(move || storage.renew_generation())
        .await
        .map_err(|e| OpError::Internal(format!("enablegossip: saving the new generation: {e}")))?;
    Ok(renewed?)
}

pub(super) fn status_gossip(node: &Node) -> Result<ServiceStatus, OpError> {
    Ok(unchanged(cluster_service(node, "statusgossip")?.is_gossip_running()))
}

fn handoff_status(node: &Node, changed: bool) -> Result<HandoffStatus, OpError> {
    let service = cluster_service(node, "statushandoff")?;
    Ok(HandoffStatus {
        enabled: node.coordinator.hinted_handoff_enabled(),
        paused: service.is_hint_delivery_paused(),
        changed,
    })
}

/// `enablehandoff`/`disablehandoff`: whether writes keep hints for down replicas, until the
/// node restarts (HintedHandoffEnabled decides at start). Hints kept stay, and are replayed.
pub(super) fn set_handoff(node: &Node, enabled: bool) -> Result<HandoffStatus, OpError> {
    let changed = node.coordinator.set_hinted_handoff(enabled);
    if changed {
        warn!(enabled, "hinted handoff {} by operator request", if enabled { "enabled" } else { "disabled" });
    }
    handoff_status(node, changed)
}

pub(super) fn status_handoff(node: &Node) -> Result<HandoffStatus, OpError> {
    handoff_status(node, false)
}

/// `pausehandoff`/`resumehandoff`: whether kept hints are replayed to replicas that came back.
pub(super) fn pause_handoff(node: &Node, paused: bool) -> Result<HandoffStatus, OpError> {
    let op = if paused { "pausehandoff" } else { "resumehandoff" };
    let changed = cluster_service(node, op)?.pause_hint_delivery(paused);
    handoff_status(node, changed)
}

/// `truncatehints [endpoint]`: deletes the hints kept for the replica at `endpoint` (an IP
/// address; hints are kept per `ip:port`), or every hint.
pub(super) async fn truncate_hints(node: &Node, endpoint: Option<&str>) -> Result<TruncateHintsResult, OpError> {
    let ip = match endpoint {
        None => None,
        Some(text) => Some(
            text.trim()
                .parse::<std::net::IpAddr>()
                .map_err(|_| OpError::BadRequest(format!("truncatehints: '{text}' is not an IP address")))?,
        ),
    };
    let storage = node.storage.clone();
    let deleted = tokio::task::spawn_blocking(move || -> Result<Vec<(String, u64)>, storage::StorageError> {
        let mut deleted = Vec::new();
        for target in storage.hinted_targets()? {
            let target_ip = target.parse::<std::net::SocketAddr>().map(|a| a.ip()).ok();
            if ip.is_some_and(|ip| target_ip != Some(ip)) {
                continue;
            }
            let n = storage.delete_hints_for(&target)?;
            deleted.push((target, n as u64));
        }
        deleted.sort();
        Ok(deleted)
    })
    .await
    .map_err(|e| OpError::Internal(format!("truncatehints: {e}")))??;
    Ok(TruncateHintsResult { deleted })
}

/// `disableautocompaction`/`enableautocompaction [keyspace [cf...]]`: background compaction of
/// the column families named (every one when no keyspace is), and of their indexes, until the
/// node restarts; every name is checked before any changes. Enabling asks for a compaction
/// check of each at once.
pub(super) fn set_auto_compaction(
    node: &Node,
    keyspace: Option<&str>,
    cfs: &[String],
    enabled: bool,
) -> Result<AutoCompactionResult, OpError> {
    let stores = select_stores(node, keyspace, cfs)?;
    let mut result = AutoCompactionResult { enabled, column_families: Vec::new(), changed: Vec::new() };
    for (ks, cf) in stores {
        let name = format!("{ks}.{cf}");
        if node.storage.set_auto_compaction(&ks, &cf, enabled)? {
            result.changed.push(name.clone());
        }
        result.column_families.push(name);
    }
    Ok(result)
}
