//! `sibyltool [-h HOST] [-p PORT] COMMAND [ARGS]`: the node's admin tool (Cassandra's nodetool).
//! It talks to the node's admin interface (`AdminAddress:AdminPort`, default 127.0.0.1:7199);
//! the messages are in the `admin_protocol` crate, the framing in `server::admin` and
//! `docs/admin-protocol.md`.
//!
//! Exit codes: 0 success, 1 the node refused or failed the command, 2 bad usage, 3 the node
//! could not be reached or answered something unreadable.

use std::process::ExitCode;
use std::time::Duration;

use admin_protocol::*;
use clap::{ArgAction, Parser, Subcommand};
use serde::de::DeserializeOwned;
use sibyltool::{render, Client, ProgressDisplay, ToolError};

#[derive(Parser)]
#[command(
    name = "sibyltool",
    version,
    about = "Admin tool for a Sibyl node (like Cassandra's nodetool)",
    disable_help_flag = true
)]
struct Args {
    /// Node to talk to (its AdminAddress).
    #[arg(short = 'h', long, default_value = "127.0.0.1")]
    host: String,
    /// The node's AdminPort.
    #[arg(short = 'p', long, default_value_t = 7199)]
    port: u16,
    /// Give up when the node sends nothing for this many seconds (long operations report
    /// progress every 5 s, so this bounds silence, not duration).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
    /// Print the node's answer as JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    help: Option<bool>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The token ring: address, status, state, load, ownership, token.
    Ring,
    /// Cluster status table (UN = up and normal), with load, ownership and host id.
    Status,
    /// This node: token, mode, uptime, load, memory, memtables.
    Info,
    /// Cluster name, snitch, partitioner and schema versions.
    Describecluster,
    /// Statistics per keyspace and column family.
    #[command(alias = "tablestats")]
    Cfstats {
        /// `keyspace` or `keyspace.cf`; all keyspaces when left out.
        target: Option<String>,
    },
    /// Operation counters per stage.
    Tpstats,
    /// Secondary indexes: built or not, and a running build's progress.
    Indexstatus { keyspace: Option<String> },
    /// Write memtables to SSTables.
    Flush { keyspace: Option<String>, cfs: Vec<String> },
    /// Major compaction: merge each column family's SSTables into one.
    Compact { keyspace: Option<String>, cfs: Vec<String> },
    /// Remove data this node no longer owns.
    Cleanup { keyspace: Option<String> },
    /// Flush all memtables and stop accepting writes (before stopping or upgrading the node).
    Drain,
    /// Streaming status.
    Netstats,
    /// The nodes that hold KEY.
    Getendpoints { keyspace: String, cf: String, key: String },
    /// The node's release and protocol versions.
    Version,
    /// Move this node (one token) to a new token; run cleanup afterwards.
    Move { token: String },
    /// Hand this node's ranges and their data to the nodes that take them over, then leave
    /// the ring (the node stops gossiping and refuses writes; stop it afterwards).
    Decommission,
    /// Remove a dead node from the ring (by address, host id or token), restoring its ranges'
    /// replicas from the other live ones.
    Removenode { node: String },
    /// Remove a dead node's token from the ring (0.6 name of removenode).
    Removetoken { token: String },
    /// Move this node to the middle of the most loaded node's largest range (0.6's loadbalance).
    Loadbalance,
    /// Make every replica of this node's ranges hold the newest data (anti-entropy repair):
    /// of KEYSPACE (all keyspaces when absent), of the column families CFS (all when none).
    Repair {
        keyspace: Option<String>,
        cfs: Vec<String>,
        /// Only the ranges this node is the first replica of (nodetool's -pr): run it on every
        /// node to repair each range once.
        #[arg(long = "partitioner-range", visible_alias = "pr")]
        primary_range: bool,
    },
    /// Join the ring. A node joins as it starts (there is no join_ring=false start), so this
    /// answers as nodetool does on a node that has joined.
    Join,
    /// Flush, then hard-link the SSTables of KEYSPACES (all keyspaces when none) into a
    /// snapshot under each column family's directory (snapshots/TAG).
    Snapshot {
        /// The snapshot's name; the time in milliseconds when left out.
        #[arg(short = 't', long = "tag")]
        tag: Option<String>,
        keyspaces: Vec<String>,
    },
    /// Remove snapshot TAG (every snapshot when left out) of KEYSPACES (all when none).
    Clearsnapshot {
        #[arg(short = 't', long = "tag")]
        tag: Option<String>,
        keyspaces: Vec<String>,
    },
    /// The snapshots on disk, with their files and sizes.
    Listsnapshots,
    /// The limit on data this node streams to others (handovers, repair), in megabits/s.
    Getstreamthroughput,
    /// Set that limit in megabits/s (0: unthrottled), for streams under way too, until the node
    /// restarts (StreamThroughputOutboundMegabitsPerSec sets it for good).
    Setstreamthroughput { megabits_per_sec: u32 },
    /// Gossip's view of every node: generation, heartbeat and application states.
    Gossipinfo,
    /// The token ranges of KEYSPACE and their replicas.
    Describering { keyspace: String },
    /// Empty the secondary indexes INDEXES (all when none) of KEYSPACE.CF and build them again
    /// from the data, in the background (indexstatus follows the build): the remedy for a
    /// damaged index. Indexed queries scan the column family meanwhile.
    #[command(name = "rebuild_index", visible_alias = "rebuildindex")]
    RebuildIndex { keyspace: String, cf: String, indexes: Vec<String> },
    /// The compactions, cleanups and scrubs running, with their progress, and the compactions due.
    Compactionstats,
    /// Compaction's write rate limit in MB/s (0: unthrottled).
    Getcompactionthroughput,
    /// Set compaction's write rate limit in MB/s (0: unthrottled), for running compactions too,
    /// until the node restarts (CompactionThroughputMbPerSec sets it for good).
    Setcompactionthroughput { mb_per_sec: u32 },
    /// Stop background (minor) compaction of KEYSPACE (all keyspaces when absent), of the column
    /// families CFS (all when none), and of their indexes, until enableautocompaction or the
    /// node restarts; a major compaction (compact) still runs.
    Disableautocompaction { keyspace: Option<String>, cfs: Vec<String> },
    /// Run background compaction of KEYSPACE (all keyspaces when absent), of the column families
    /// CFS (all when none), again, starting with what is due now.
    Enableautocompaction { keyspace: Option<String>, cfs: Vec<String> },
    /// The minimum and maximum SSTables a background compaction of KEYSPACE.CF merges.
    Getcompactionthreshold { keyspace: String, cf: String },
    /// Set the minimum and maximum SSTables a background compaction of KEYSPACE.CF merges (0 0:
    /// none), until the node restarts or the column family's definition changes.
    Setcompactionthreshold {
        keyspace: String,
        cf: String,
        #[arg(allow_negative_numbers = true)]
        min: i32,
        #[arg(allow_negative_numbers = true)]
        max: i32,
    },
    /// The Data files of the SSTables of KEYSPACE.CF that hold KEY (memtables aside).
    Getsstables {
        /// KEY is the key's bytes in hexadecimal, not UTF-8 text.
        #[arg(long = "hex-format")]
        hex_format: bool,
        keyspace: String,
        cf: String,
        key: String,
    },
    /// Stop the running operations of COMPACTION_TYPE (COMPACTION, CLEANUP or SCRUB; Cassandra's
    /// other types run nothing here): each gives up, keeping its input SSTables, and the command
    /// that started it fails.
    Stop { compaction_type: String },
    /// Read every SSTable of KEYSPACE (all keyspaces when absent), of the column families CFS
    /// (all when none), through; replace each damaged one by a copy of what can be read (the
    /// damaged files are kept in a pre-scrub snapshot). Run repair afterwards to get the lost
    /// partitions back from the other replicas.
    Scrub { keyspace: Option<String>, cfs: Vec<String> },
    /// Load the SSTables of KEYSPACE.CF found in DIRECTORY (on the node's machine; a relative
    /// path is taken from here) into the column family while the node runs: a snapshot to
    /// restore, or SSTables from another node. All are checked before any is loaded.
    Import { keyspace: String, cf: String, directory: std::path::PathBuf },
    /// Stop serving Thrift: close the Thrift port and every client connection (each after the
    /// call it is serving is answered), so clients fail over to other nodes.
    Disablethrift,
    /// Serve Thrift again on ThriftAddress:ThriftPort.
    Enablethrift,
    /// Whether Thrift is served: `running` or `not running`.
    Statusthrift,
    /// Stop serving the native protocol (CQL): close its port and every client connection.
    Disablebinary,
    /// Serve the native protocol again on NativeTransportAddress:NativeTransportPort.
    Enablebinary,
    /// Whether the native protocol is served: `running` or `not running`.
    Statusbinary,
    /// Announce this node's shutdown to the others and stop gossiping: they see it down
    /// while it keeps serving its own clients.
    Disablegossip,
    /// Gossip again, with a newer generation: the others see this node up again.
    Enablegossip,
    /// Whether this node gossips: `running` or `not running`.
    Statusgossip,
    /// Stop keeping hints for replicas that are down, until the node restarts
    /// (HintedHandoffEnabled decides at start); hints already kept are still replayed.
    Disablehandoff,
    /// Keep hints for replicas that are down again.
    Enablehandoff,
    /// Whether hints are kept, and whether their replay is paused.
    Statushandoff,
    /// Stop replaying kept hints to replicas that came back (they are still kept).
    Pausehandoff,
    /// Replay kept hints again.
    Resumehandoff,
    /// Delete the hints kept for the replica at ENDPOINT (an IP address), or every hint when
    /// ENDPOINT is left out
    Truncatehints { endpoint: Option<String> },
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sibyltool: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn request_for(command: &Command) -> Request {
    match command {
        Command::Ring | Command::Status => Request::Ring,
        Command::Info => Request::Info,
        Command::Describecluster => Request::DescribeCluster,
        Command::Cfstats { target } => {
            let (keyspace, cf) = match target.as_deref().map(|t| t.split_once('.').unwrap_or((t, ""))) {
                None => (None, None),
                Some((k, "")) => (Some(k.to_string()), None),
                Some((k, c)) => (Some(k.to_string()), Some(c.to_string())),
            };
            Request::CfStats { keyspace, cf }
        }
        Command::Tpstats => Request::TpStats,
        Command::Indexstatus { keyspace } => Request::IndexStatus { keyspace: keyspace.clone() },
        Command::Flush { keyspace, cfs } => Request::Flush { keyspace: keyspace.clone(), cfs: cfs.clone() },
        Command::Compact { keyspace, cfs } => Request::Compact { keyspace: keyspace.clone(), cfs: cfs.clone() },
        Command::Cleanup { keyspace } => Request::Cleanup { keyspace: keyspace.clone() },
        Command::Drain => Request::Drain,
        Command::Netstats => Request::NetStats,
        Command::Getendpoints { keyspace, cf, key } => {
            Request::GetEndpoints { keyspace: keyspace.clone(), cf: cf.clone(), key: key.clone() }
        }
        Command::Version => Request::Version,
        Command::Move { token } => Request::Move { token: token.clone() },
        Command::Decommission => Request::Decommission,
        Command::Removenode { node } => Request::RemoveNode { node: node.clone() },
        Command::Removetoken { token } => Request::RemoveNode { node: token.clone() },
        Command::Loadbalance => Request::LoadBalance,
        Command::Repair { keyspace, cfs, primary_range } => {
            Request::Repair { keyspace: keyspace.clone(), cfs: cfs.clone(), primary_range: *primary_range }
        }
        Command::Join => Request::Join,
        Command::Snapshot { tag, keyspaces } => Request::Snapshot { keyspaces: keyspaces.clone(), tag: tag.clone() },
        Command::Clearsnapshot { tag, keyspaces } => {
            Request::ClearSnapshot { keyspaces: keyspaces.clone(), tag: tag.clone() }
        }
        Command::Listsnapshots => Request::ListSnapshots,
        Command::Gossipinfo => Request::GossipInfo,
        Command::Getstreamthroughput => Request::GetStreamThroughput,
        Command::Setstreamthroughput { megabits_per_sec } => {
            Request::SetStreamThroughput { megabits_per_sec: *megabits_per_sec }
        }
        Command::Describering { keyspace } => Request::DescribeRing { keyspace: keyspace.clone() },
        Command::RebuildIndex { keyspace, cf, indexes } => {
            Request::RebuildIndex { keyspace: keyspace.clone(), cf: cf.clone(), indexes: indexes.clone() }
        }
        Command::Compactionstats => Request::CompactionStats,
        Command::Getcompactionthroughput => Request::GetCompactionThroughput,
        Command::Setcompactionthroughput { mb_per_sec } => Request::SetCompactionThroughput { mb_per_sec: *mb_per_sec },
        Command::Disableautocompaction { keyspace, cfs } => {
            Request::DisableAutoCompaction { keyspace: keyspace.clone(), cfs: cfs.clone() }
        }
        Command::Enableautocompaction { keyspace, cfs } => {
            Request::EnableAutoCompaction { keyspace: keyspace.clone(), cfs: cfs.clone() }
        }
        Command::Getcompactionthreshold { keyspace, cf } => {
            Request::GetCompactionThreshold { keyspace: keyspace.clone(), cf: cf.clone() }
        }
        Command::Setcompactionthreshold { keyspace, cf, min, max } => {
            Request::SetCompactionThreshold { keyspace: keyspace.clone(), cf: cf.clone(), min: *min, max: *max }
        }
        Command::Getsstables { hex_format, keyspace, cf, key } => Request::GetSsTables {
            keyspace: keyspace.clone(),
            cf: cf.clone(),
            key: key.clone(),
            hex_format: *hex_format,
        },
        Command::Stop { compaction_type } => Request::Stop { compaction_type: compaction_type.clone() },
        Command::Scrub { keyspace, cfs } => Request::Scrub { keyspace: keyspace.clone(), cfs: cfs.clone() },
        Command::Import { keyspace, cf, directory } => Request::Import {
            keyspace: keyspace.clone(),
            cf: cf.clone(),
            // The node runs elsewhere in the file system: relative to here, not to it.
            directory: std::path::absolute(directory).unwrap_or_else(|_| directory.clone()).display().to_string(),
        },
        Command::Disablethrift => Request::DisableThrift,
        Command::Enablethrift => Request::EnableThrift,
        Command::Statusthrift => Request::StatusThrift,
        Command::Disablebinary => Request::DisableBinary,
        Command::Enablebinary => Request::EnableBinary,
        Command::Statusbinary => Request::StatusBinary,
        Command::Disablegossip => Request::DisableGossip,
        Command::Enablegossip => Request::EnableGossip,
        Command::Statusgossip => Request::StatusGossip,
        Command::Disablehandoff => Request::DisableHandoff,
        Command::Enablehandoff => Request::EnableHandoff,
        Command::Statushandoff => Request::StatusHandoff,
        Command::Pausehandoff => Request::PauseHandoff,
        Command::Resumehandoff => Request::ResumeHandoff,
        Command::Truncatehints { endpoint } => Request::TruncateHints { endpoint: endpoint.clone() },
    }
}

fn run(args: &Args) -> Result<(), ToolError> {
    let request = request_for(&args.command);
    let mut client = Client::connect(&args.host, args.port, Duration::from_secs(args.timeout))?;
    let mut display = ProgressDisplay::new();
    let result = client.call(&request, &mut |p| display.update(p));
    display.finish();
    let value = result?;
    if args.json {
        let text = serde_json::to_string_pretty(&value).map_err(|e| ProtocolError::BadResult(e.to_string()))?;
        println!("{text}");
        return Ok(());
    }
    let text = render_result(&args.command, &request, value)?;
    print!("{text}");
    Ok(())
}

fn decode<T: DeserializeOwned>(request: &Request, value: serde_json::Value) -> Result<T, ToolError> {
    sibyltool::decode_result(request, value)
}

fn render_result(command: &Command, request: &Request, value: serde_json::Value) -> Result<String, ToolError> {
    Ok(match command {
        Command::Ring => render::ring(&decode(request, value)?),
        Command::Status => render::status(&decode(request, value)?),
        Command::Info => render::info(&decode(request, value)?),
        Command::Describecluster => render::describe_cluster(&decode(request, value)?),
        Command::Cfstats { .. } => render::cf_stats(&decode(request, value)?),
        Command::Tpstats => render::tp_stats(&decode(request, value)?),
        Command::Indexstatus { .. } => render::index_status(&decode(request, value)?),
        Command::Flush { .. } => render::work(&decode(request, value)?, false),
        Command::Compact { .. } => render::work(&decode(request, value)?, true),
        Command::Cleanup { .. } => render::cleanup(&decode(request, value)?),
        Command::Drain => render::drain(&decode(request, value)?),
        Command::Netstats => render::net_stats(&decode(request, value)?),
        Command::Getendpoints { .. } => render::get_endpoints(&decode(request, value)?),
        Command::Version => render::version(&decode(request, value)?),
        Command::Repair { .. } => render::repair(&decode(request, value)?),
        Command::Decommission => render::decommission(&decode(request, value)?),
        Command::Move { .. } | Command::Loadbalance => render::moved(&decode(request, value)?),
        Command::Snapshot { .. } => render::snapshot(&decode(request, value)?),
        Command::Clearsnapshot { .. } => render::clear_snapshot(&decode(request, value)?),
        Command::Listsnapshots => render::list_snapshots(&decode(request, value)?),
        Command::Import { .. } => render::import(&decode(request, value)?),
        Command::Scrub { .. } => render::scrub(&decode(request, value)?),
        Command::Getcompactionthreshold { .. } => render::compaction_threshold(&decode(request, value)?),
        Command::Getsstables { .. } => render::get_sstables(&decode(request, value)?),
        // Silent on success, as nodetool is (`--json` shows what changed or stopped).
        Command::Setcompactionthreshold { .. } => {
            decode::<CompactionThresholdResult>(request, value)?;
            String::new()
        }
        Command::Disableautocompaction { .. } | Command::Enableautocompaction { .. } => {
            decode::<AutoCompactionResult>(request, value)?;
            String::new()
        }
        Command::Stop { .. } => {
            decode::<StopResult>(request, value)?;
            String::new()
        }
        Command::Compactionstats => render::compaction_stats(&decode(request, value)?),
        Command::RebuildIndex { .. } => render::rebuild_index(&decode(request, value)?),
        Command::Gossipinfo => render::gossip_info(&decode(request, value)?),
        Command::Getstreamthroughput | Command::Setstreamthroughput { .. } => {
            render::stream_throughput(&decode(request, value)?)
        }
        Command::Describering { .. } => render::describe_ring(&decode(request, value)?),
        Command::Getcompactionthroughput | Command::Setcompactionthroughput { .. } => {
            render::compaction_throughput(&decode(request, value)?)
        }
        Command::Removenode { .. } | Command::Removetoken { .. } => render::remove_node(&decode(request, value)?),
        // The node answers join with an error (not supported yet); a success would carry
        // nothing to show.
        Command::Join => format!("{value}\n"),
        Command::Statusthrift | Command::Statusbinary | Command::Statusgossip => {
            render::service_status(&decode(request, value)?)
        }
        // Silent on success, as nodetool is (`--json` shows whether anything changed).
        Command::Disablethrift
        | Command::Enablethrift
        | Command::Disablebinary
        | Command::Enablebinary
        | Command::Disablegossip
        | Command::Enablegossip => {
            decode::<ServiceStatus>(request, value)?;
            String::new()
        }
        Command::Statushandoff => render::handoff_status(&decode(request, value)?),
        Command::Disablehandoff | Command::Enablehandoff | Command::Pausehandoff | Command::Resumehandoff => {
            decode::<HandoffStatus>(request, value)?;
            String::new()
        }
        Command::Truncatehints { .. } => render::truncate_hints(&decode(request, value)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(args: &[&str]) -> Request {
        let args = Args::try_parse_from(std::iter::once("sibyltool").chain(args.iter().copied())).expect("parses");
        request_for(&args.command)
    }

    #[test]
    fn compaction_commands_make_their_requests() {
        assert_eq!(
            request(&["setcompactionthreshold", "ks", "cf", "-1", "4"]),
            Request::SetCompactionThreshold { keyspace: "ks".into(), cf: "cf".into(), min: -1, max: 4 },
            "a negative threshold reaches the node, which refuses it in nodetool's words"
        );
        assert_eq!(
            request(&["getsstables", "--hex-format", "ks", "cf", "6b6579"]),
            Request::GetSsTables { keyspace: "ks".into(), cf: "cf".into(), key: "6b6579".into(), hex_format: true }
        );
        assert_eq!(
            request(&["getsstables", "ks", "cf", "key"]),
            Request::GetSsTables { keyspace: "ks".into(), cf: "cf".into(), key: "key".into(), hex_format: false }
        );
        assert_eq!(
            request(&["disableautocompaction", "ks", "a", "b"]),
            Request::DisableAutoCompaction { keyspace: Some("ks".into()), cfs: vec!["a".into(), "b".into()] }
        );
        assert_eq!(request(&["enableautocompaction"]), Request::EnableAutoCompaction { keyspace: None, cfs: vec![] });
        assert_eq!(request(&["stop", "COMPACTION"]), Request::Stop { compaction_type: "COMPACTION".into() });
        assert_eq!(
            request(&["getcompactionthreshold", "ks", "cf"]),
            Request::GetCompactionThreshold { keyspace: "ks".into(), cf: "cf".into() }
        );
    }
}
