//! The admin interface's dispatch: each request goes to the one function of its kind,
//! `statistics` (reports), `maintenance` (work on the node's data), `topology` (ring changes) or
//! `toggles` (services stopped and started). What they share is in `state`.

use admin_protocol::*;
use serde::Serialize;
use tokio::io::AsyncWrite;

use super::maintenance::{self, Work};
use super::reply::ReplyWriter;
use super::state::{AdminState, OpError};
use super::{statistics, toggles, topology};

/// Runs one request; progress lines go to `out`, the final reply is returned.
pub(crate) async fn execute<W: AsyncWrite + Unpin>(
    state: &AdminState,
    request: Request,
    out: &mut ReplyWriter<W>,
) -> Reply {
    match run(state, request, out).await {
        Ok(value) => Reply::Ok(value),
        Err(e) => Reply::error(e.kind(), e.to_string()),
    }
}

fn to_value<T: Serialize>(result: T) -> Result<serde_json::Value, OpError> {
    serde_json::to_value(result).map_err(|e| OpError::Internal(format!("cannot encode result: {e}")))
}

async fn run<W: AsyncWrite + Unpin>(
    state: &AdminState,
    request: Request,
    out: &mut ReplyWriter<W>,
) -> Result<serde_json::Value, OpError> {
    let node = &state.node;
    match request {
        Request::Ring => to_value(statistics::ring(node)),
        Request::Info => to_value(statistics::info(state)),
        Request::DescribeCluster => to_value(statistics::describe_cluster(node)),
        Request::CfStats { keyspace, cf } => to_value(statistics::cf_stats(node, keyspace.as_deref(), cf.as_deref())?),
        Request::TpStats => to_value(statistics::tp_stats(node)),
        Request::IndexStatus { keyspace } => to_value(statistics::index_status(node, keyspace.as_deref())?),
        Request::Flush { keyspace, cfs } => {
            to_value(maintenance::flush_or_compact(state, Work::Flush, keyspace.as_deref(), &cfs, out).await?)
        }
        Request::Compact { keyspace, cfs } => {
            to_value(maintenance::flush_or_compact(state, Work::Compact, keyspace.as_deref(), &cfs, out).await?)
        }
        Request::Cleanup { keyspace } => to_value(maintenance::cleanup(state, keyspace.as_deref(), out).await?),
        Request::Drain => to_value(maintenance::drain(state, out).await?),
        Request::NetStats => to_value(statistics::net_stats(state)),
        Request::GetEndpoints { keyspace, cf, key } => to_value(statistics::get_endpoints(node, &keyspace, &cf, &key)?),
        Request::Version => to_value(statistics::version()),
        Request::Move { token } => to_value(topology::move_node(state, Some(&token), out).await?),
        Request::Decommission => to_value(topology::decommission(state, out).await?),
        Request::RemoveNode { node: which } => to_value(topology::remove_node(state, &which, out).await?),
        Request::LoadBalance => to_value(topology::move_node(state, None, out).await?),
        Request::Repair { keyspace, cfs, primary_range } => {
            to_value(maintenance::repair(state, keyspace.as_deref(), &cfs, primary_range, out).await?)
        }
        Request::Join => topology::join(state),
        Request::Snapshot { keyspaces, tag } => to_value(maintenance::snapshot(state, &keyspaces, tag, out).await?),
        Request::ClearSnapshot { keyspaces, tag } => {
            to_value(maintenance::clear_snapshot(node, &keyspaces, tag.as_deref())?)
        }
        Request::ListSnapshots => to_value(maintenance::list_snapshots(node)?),
        Request::GossipInfo => to_value(statistics::gossip_info(node)?),
        Request::GetStreamThroughput => to_value(maintenance::stream_throughput(node)),
        Request::SetStreamThroughput { megabits_per_sec } => {
            to_value(maintenance::set_stream_throughput(node, megabits_per_sec))
        }
        Request::DescribeRing { keyspace } => to_value(statistics::describe_ring(node, keyspace)?),
        Request::RebuildIndex { keyspace, cf, indexes } => {
            to_value(maintenance::rebuild_index(state, keyspace, cf, &indexes)?)
        }
        Request::CompactionStats => to_value(maintenance::compaction_stats(node)),
        Request::GetCompactionThroughput => to_value(maintenance::compaction_throughput(node)),
        Request::SetCompactionThroughput { mb_per_sec } => {
            to_value(maintenance::set_compaction_throughput(node, mb_per_sec))
        }
        Request::DisableAutoCompaction { keyspace, cfs } => {
            to_value(toggles::set_auto_compaction(node, keyspace.as_deref(), &cfs, false)?)
        }
        Request::EnableAutoCompaction { keyspace, cfs } => {
            to_value(toggles::set_auto_compaction(node, keyspace.as_deref(), &cfs, true)?)
        }
        Request::GetCompactionThreshold { keyspace, cf } => {
            to_value(maintenance::compaction_threshold(node, keyspace, cf)?)
        }
        Request::SetCompactionThreshold { keyspace, cf, min, max } => {
            to_value(maintenance::set_compaction_threshold(node, keyspace, cf, min, max)?)
        }
        Request::GetSsTables { keyspace, cf, key, hex_format } => {
            to_value(maintenance::get_sstables(node, &keyspace, &cf, &key, hex_format).await?)
        }
        Request::Stop { compaction_type } => to_value(maintenance::stop(node, &compaction_type)?),
        Request::Scrub { keyspace, cfs } => to_value(maintenance::scrub(state, keyspace.as_deref(), &cfs, out).await?),
        Request::Import { keyspace, cf, directory } => {
            to_value(maintenance::import(state, keyspace, cf, directory, out).await?)
        }
        Request::DisableThrift => to_value(toggles::disable_thrift(node).await?),
        Request::EnableThrift => to_value(toggles::enable_thrift(state).await?),
        Request::StatusThrift => to_value(toggles::status_thrift(node)?),
        Request::DisableBinary => to_value(toggles::disable_binary(node).await?),
        Request::EnableBinary => to_value(toggles::enable_binary(state).await?),
        Request::StatusBinary => to_value(toggles::status_binary(node)?),
        Request::DisableGossip => to_value(toggles::disable_gossip(state).await?),
        Request::EnableGossip => to_value(toggles::enable_gossip(state).await?),
        Request::StatusGossip => to_value(toggles::status_gossip(node)?),
        Request::DisableHandoff => to_value(toggles::set_handoff(node, false)?),
        Request::EnableHandoff => to_value(toggles::set_handoff(node, true)?),
        Request::StatusHandoff => to_value(toggles::status_handoff(node)?),
        Request::PauseHandoff => to_value(toggles::pause_handoff(node, true)?),
        Request::ResumeHandoff => to_value(toggles::pause_handoff(node, false)?),
        Request::TruncateHints { endpoint } => to_value(toggles::truncate_hints(node, endpoint.as_deref()).await?),
    }
}
