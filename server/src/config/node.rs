//! The node-level elements directly under `<Storage>`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::endpoints::{self, Resolve};
use super::keyspaces::{self, KeyspaceFallbacks};
use super::tokens;
use super::values::{bad, class_from_table, container, leaf, one_of, Elements, Ignored};
use super::xml::Node;
use super::{CommitLogSync, Config, ConfigError, DiskAccessMode, GossipSettle, PasswordMode};

/// Elements that may appear once under `<Storage>`: 0.6's own, then our extensions.
const NODE_ELEMENTS: &[&str] = &[
    "ClusterName",
    "AutoBootstrap",
    "HintedHandoffEnabled",
    "IndexInterval",
    "Keyspaces",
    "Authenticator",
    "Partitioner",
    "InitialToken",
    "SavedCachesDirectory",
    "CommitLogDirectory",
    "DataFileDirectories",
    "Seeds",
    "RpcTimeoutInMillis",
    "PhiConvictThreshold",
    "CommitLogRotationThresholdInMB",
    "ListenAddress",
    "StoragePort",
    "ThriftAddress",
    "ThriftPort",
    "ThriftFramedTransport",
    "DiskAccessMode",
    "RowWarningThresholdInMB",
    "SlicedBufferSizeInKB",
    "FlushDataBufferSizeInMB",
    "FlushIndexBufferSizeInMB",
    "ColumnIndexSizeInKB",
    "MemtableThroughputInMB",
    "BinaryMemtableThroughputInMB",
    "MemtableOperationsInMillions",
    "MemtableFlushAfterMinutes",
    "ConcurrentReads",
    "ConcurrentWrites",
    "CommitLogSync",
    "CommitLogSyncPeriodInMS",
    "CommitLogSyncBatchWindowInMS",
    "GCGraceSeconds",
    "DoConsistencyChecksBoolean",
    "SnapshotBeforeCompaction",
    // 0.5 declared these globally; 0.6 moved them into <Keyspace>. We take them as defaults for
    // keyspaces that do not set them (with a warning), and EndPointSnitch as the global snitch.
    "ReplicaPlacementStrategy",
    "ReplicationFactor",
    "EndPointSnitch",
    // Extensions.
    "ThriftMaxMessageLengthInMB",
    "ThriftEventLoops",
    "StartNativeTransport",
    "NativeTransportAddress",
    "NativeTransportPort",
    "NativeTransportMaxFrameSizeInMB",
    "NativeTransportMaxConcurrentConnections",
    "BatchSizeWarnThresholdInKB",
    "BatchSizeFailThresholdInKB",
    "UnloggedBatchAcrossPartitionsWarnThreshold",
    "BlockCacheSizeInMB",
    "CommitLogTotalSpaceInMB",
    "AutoSnapshot",
    "CompactionThroughputMbPerSec",
    "IncrementalBackups",
    "AdminAddress",
    "AdminPort",
    "PasswdProperties",
    "AccessProperties",
    "PasswdMode",
    // Extensions a cluster needs, from Cassandra 1.x and later (see `Config`).
    "NumTokens",
    "MaxHintWindowInMs",
    "HintedHandoffThrottleInKB",
    "ReadRequestTimeoutInMillis",
    "WriteRequestTimeoutInMillis",
    "RangeRequestTimeoutInMillis",
    "TruncateRequestTimeoutInMillis",
    "StreamThroughputOutboundMegabitsPerSec",
    "RingDelayInMillis",
    "GossipSettleMinWaitInMillis",
    "GossipSettlePollIntervalInMillis",
    "GossipSettlePollSuccessesRequired",
    "SkipWaitForGossipToSettle",
    "OutboundBindAny",
];

/// Elements earlier releases defined that 0.6 silently ignored; we say so.
const IGNORED_NODE_ELEMENTS: &[Ignored] = &[
    Ignored {
        name: "ControlPort",
        why: "the control port was removed before 0.6; use the admin interface (AdminPort)",
    },
    Ignored { name: "BootstrapFileDirectory", why: "bootstrap streams directly into the data directories" },
    Ignored { name: "RackAware", why: "choose a ReplicaPlacementStrategy per keyspace instead" },
    Ignored { name: "CalloutLocation", why: "callouts were removed before 0.6" },
    Ignored { name: "StagingFileDirectory", why: "streaming does not stage files" },
    Ignored { name: "JobTrackerHost", why: "Hadoop settings are not read by the server" },
    Ignored { name: "JobJarFileLocation", why: "Hadoop settings are not read by the server" },
    Ignored { name: "MemtableSizeInMB", why: "renamed MemtableThroughputInMB in 0.6" },
    Ignored { name: "MemtableObjectCountInMillions", why: "renamed MemtableOperationsInMillions in 0.6" },
    Ignored { name: "CommitLogFastSync", why: "replaced by CommitLogSync in 0.5" },
];

const PARTITIONERS: &[(&str, &str)] = &[
    ("org.apache.cassandra.dht.RandomPartitioner", "org.apache.cassandra.dht.RandomPartitioner"),
    ("org.apache.cassandra.dht.OrderPreservingPartitioner", "org.apache.cassandra.dht.OrderPreservingPartitioner"),
    (
        "org.apache.cassandra.dht.CollatingOrderPreservingPartitioner",
        "org.apache.cassandra.dht.CollatingOrderPreservingPartitioner",
    ),
    ("org.apache.cassandra.dht.ByteOrderedPartitioner", "org.apache.cassandra.dht.ByteOrderedPartitioner"),
    ("org.apache.cassandra.dht.Murmur3Partitioner", "org.apache.cassandra.dht.Murmur3Partitioner"),
];

const AUTHENTICATORS: &[(&str, &str)] = &[
    ("org.apache.cassandra.auth.AllowAllAuthenticator", "org.apache.cassandra.auth.AllowAllAuthenticator"),
    ("org.apache.cassandra.auth.SimpleAuthenticator", "org.apache.cassandra.auth.SimpleAuthenticator"),
];

/// `ConcurrentReads` and `ConcurrentWrites` of the sample file (and 0.6's defaults), which
/// load without a warning although Sibyl does not use them.
const SAMPLE_CONCURRENT_READS: u32 = 8;
const SAMPLE_CONCURRENT_WRITES: u32 = 32;

pub(crate) const DEFAULT_SNITCH: &str = "org.apache.cassandra.locator.SimpleSnitch";

/// Cassandra's limit on `num_tokens`: a node's tokens travel in one gossip state, which must
/// stay small enough for the wire (Cassandra's figure: about 1700 tokens).
pub(crate) const MAX_NUM_TOKENS: u32 = 1536;

pub(crate) fn interpret(root: &Node, source_name: &str, resolver: &dyn Resolve) -> Result<Config, ConfigError> {
    if root.name != "Storage" {
        return Err(ConfigError::Xml {
            line: root.line,
            reason: format!("the root element must be <Storage>, found <{}>", root.name),
        });
    }
    let mut warnings = Vec::new();
    let els = Elements::collect(root, NODE_ELEMENTS, &[], IGNORED_NODE_ELEMENTS, &mut warnings)?;

    let cluster_name = els.required_text("ClusterName")?.0.to_string();

    let (partitioner_text, partitioner_line) = els.required_text("Partitioner")?;
    // 0.6 expands a short partitioner name into the dht package.
    let partitioner_full = if partitioner_text.contains('.') {
        partitioner_text.to_string()
    } else {
        format!("org.apache.cassandra.dht.{partitioner_text}")
    };
    let partitioner = class_from_table("Partitioner", partitioner_line, &partitioner_full, PARTITIONERS)?;

    let authenticator = match els.text("Authenticator")? {
        Some((v, line)) => class_from_table("Authenticator", line, v, AUTHENTICATORS)?,
        None => "org.apache.cassandra.auth.AllowAllAuthenticator".to_string(),
    };
    let passwd_mode = match els.text("PasswdMode")? {
        Some((v, line)) => {
            one_of("PasswdMode", line, v, &[("PLAIN", PasswordMode::Plain), ("MD5", PasswordMode::Md5)])?
        }
        None => PasswordMode::Plain,
    };

    let commit_log_directory = PathBuf::from(els.required_text("CommitLogDirectory")?.0);
    let data_file_directories = data_directories(&els)?;
    if let Some(dup) = data_file_directories.iter().find(|d| **d == commit_log_directory) {
        let line = els.node("CommitLogDirectory").map_or(root.line, |n| n.line);
        return Err(bad(
            "CommitLogDirectory",
            line,
            &dup.display().to_string(),
            "the commit log directory must not also be a data file directory",
        ));
    }
    let storage_port = els.number("StoragePort", 7000, 1, u16::MAX)?;
    let seeds = endpoints::seeds(&els, storage_port, resolver, &mut warnings)?;
    let (listen_address, listen_endpoint) = endpoints::listen_address(&els, storage_port, resolver, &mut warnings)?;
    // Blank or absent: the listen address, as 0.6 (which also fell back to the machine's host
    // name when both were blank; `listen_address` did that already).
    let thrift_address = els.text("ThriftAddress")?.map_or_else(|| listen_address.clone(), |(v, _)| v.to_string());
    // Each node of a cluster has its own ListenAddress, so by default the admin interface
    // listens there too: nodes sharing a machine (127.0.0.1, .2, .3) then do not collide.
    // The native port listens beside the Thrift one unless told otherwise, as Cassandra's
    // both listen on rpc_address.
    let native_transport_address =
        els.text("NativeTransportAddress")?.map_or_else(|| thrift_address.clone(), |(v, _)| v.to_string());
    let native_transport_max_concurrent_connections =
        match els.number("NativeTransportMaxConcurrentConnections", -1i64, -1, i64::from(u32::MAX))? {
            // Cassandra's rule: 0 or below is no limit.
            n if n <= 0 => None,
            n => Some(n as u32),
        };
    let admin_address = els.text("AdminAddress")?.map_or_else(|| listen_address.clone(), |(v, _)| v.to_string());

    let num_tokens = els.number("NumTokens", 1, 1, MAX_NUM_TOKENS)?;
    let initial_tokens = tokens::initial_tokens(&els, &partitioner, num_tokens)?;
    let rpc_timeout_ms = els.number("RpcTimeoutInMillis", 2000, 1, u64::MAX)?;

    let disk_access_mode = match els.text("DiskAccessMode")? {
        Some((v, line)) => one_of(
            "DiskAccessMode",
            line,
            v,
            &[
                ("auto", DiskAccessMode::Auto),
                ("mmap", DiskAccessMode::Mmap),
                ("mmap_index_only", DiskAccessMode::MmapIndexOnly),
                ("standard", DiskAccessMode::Standard),
            ],
        )?,
        None => DiskAccessMode::Auto,
    };

    let commit_log_sync = commit_log_sync(&els)?;

    let do_consistency_checks = match els.text("DoConsistencyChecksBoolean")? {
        Some((v, line)) => {
            let on = v.eq_ignore_ascii_case("true");
            if !on && !v.eq_ignore_ascii_case("false") {
                warnings.push(format!(
                    "line {line}: <DoConsistencyChecksBoolean> value {v:?} is not true or false; taken as false, as 0.6 did"
                ));
            }
            on
        }
        None => true,
    };

    let endpoint_snitch_node = match els.text("EndPointSnitch")? {
        Some((v, line)) => Some((keyspaces::snitch_class(line, v)?, line)),
        None => None,
    };
    let fallbacks = KeyspaceFallbacks::from_node_level(&els, &mut warnings)?;

    let gc_grace_seconds = els.number("GCGraceSeconds", 864_000, 0, i32::MAX)?;
    let concurrent_reads = els.number("ConcurrentReads", SAMPLE_CONCURRENT_READS, 2, u32::MAX)?;
    let concurrent_writes = els.number("ConcurrentWrites", SAMPLE_CONCURRENT_WRITES, 2, u32::MAX)?;
    for (element, value, sample) in [
        ("ConcurrentReads", concurrent_reads, SAMPLE_CONCURRENT_READS),
        ("ConcurrentWrites", concurrent_writes, SAMPLE_CONCURRENT_WRITES),
    ] {
        // The sample's values (0.6's defaults too) are in every file copied from it; they ask
        // for nothing in particular, so only a tuned value is worth a warning.
        if let (true, Some(node)) = (value != sample, els.node(element)) {
            warnings.push(format!(
                "line {}: <{element}> {value} is ignored: Sibyl has no separate read and write stages; short \
                 requests run on the Thrift event loops (ThriftEventLoops), longer ones on one request executor \
                 shared by reads and writes, sized by the machine (a thread per core, more while requests stall)",
                node.line
            ));
        }
    }
    let mut config = Config {
        source_name: source_name.to_string(),
        cluster_name,
        partitioner,
        initial_token: els.text("InitialToken")?.map(|(v, _)| v.to_string()),
        auto_bootstrap: els.bool("AutoBootstrap", false)?,
        hinted_handoff_enabled: els.bool("HintedHandoffEnabled", true)?,
        authenticator,
        passwd_properties: els.text("PasswdProperties")?.map(|(v, _)| PathBuf::from(v)),
        access_properties: els.text("AccessProperties")?.map(|(v, _)| PathBuf::from(v)),
        passwd_mode,
        commit_log_directory,
        data_file_directories,
        saved_caches_directory: els.text("SavedCachesDirectory")?.map(|(v, _)| PathBuf::from(v)),
        seeds: seeds.written,
        seed_endpoints: seeds.endpoints,
        listen_address,
        storage_port,
        listen_endpoint,
        thrift_address,
        thrift_port: els.number("ThriftPort", 9160, 1, u16::MAX)?,
        thrift_framed_transport: els.bool("ThriftFramedTransport", false)?,
        thrift_max_message_length_mb: els.number("ThriftMaxMessageLengthInMB", 15, 1, 2047)?,
        thrift_event_loops: els.number("ThriftEventLoops", 0, 0, 1024)?,
        start_native_transport: els.bool("StartNativeTransport", true)?,
        native_transport_address,
        native_transport_port: els.number("NativeTransportPort", 9042, 1, u16::MAX)?,
        native_transport_max_frame_size_mb: els.number("NativeTransportMaxFrameSizeInMB", 256, 1, 2047)?,
        native_transport_max_concurrent_connections,
        batch_size_warn_threshold_kb: els.number("BatchSizeWarnThresholdInKB", 5, 1, u32::MAX >> 10)?,
        batch_size_fail_threshold_kb: els.number("BatchSizeFailThresholdInKB", 50, 1, u32::MAX >> 10)?,
        unlogged_batch_across_partitions_warn_threshold: els.number(
            "UnloggedBatchAcrossPartitionsWarnThreshold",
            10,
            0,
            u32::MAX,
        )?,
        block_cache_size_mb: els.number("BlockCacheSizeInMB", 64, 0, 1 << 20)?,
        commit_log_total_space_mb: els.number("CommitLogTotalSpaceInMB", 8192, 1, u32::MAX)?,
        admin_address,
        admin_port: els.number("AdminPort", 7199, 1, u16::MAX)?,
        endpoint_snitch: DEFAULT_SNITCH.to_string(),
        disk_access_mode,
        commit_log_sync,
        commit_log_rotation_threshold_mb: els.number("CommitLogRotationThresholdInMB", 128, 1, u32::MAX)?,
        memtable_throughput_mb: els.number("MemtableThroughputInMB", 64, 1, u32::MAX)?,
        binary_memtable_throughput_mb: els.number("BinaryMemtableThroughputInMB", 256, 1, u32::MAX)?,
        memtable_operations_millions: els.number("MemtableOperationsInMillions", 0.1, f64::MIN_POSITIVE, f64::MAX)?,
        memtable_flush_after_minutes: els.number("MemtableFlushAfterMinutes", 60, 1, u32::MAX)?,
        gc_grace_seconds,
        rpc_timeout_ms,
        read_request_timeout_ms: els.number("ReadRequestTimeoutInMillis", rpc_timeout_ms, 1, u64::MAX)?,
        write_request_timeout_ms: els.number("WriteRequestTimeoutInMillis", rpc_timeout_ms, 1, u64::MAX)?,
        range_request_timeout_ms: els.number("RangeRequestTimeoutInMillis", rpc_timeout_ms, 1, u64::MAX)?,
        truncate_request_timeout_ms: els.number("TruncateRequestTimeoutInMillis", 60_000, 1, u64::MAX)?,
        phi_convict_threshold: els.number("PhiConvictThreshold", 8, 5, 16)?,
        gossip_settle: GossipSettle {
            min_wait_ms: els.number("GossipSettleMinWaitInMillis", 5000, 0, 3_600_000)?,
            poll_interval_ms: els.number("GossipSettlePollIntervalInMillis", 1000, 1, 3_600_000)?,
            polls_required: els.number("GossipSettlePollSuccessesRequired", 3, 1, 1000)?,
            force_after_polls: els.number("SkipWaitForGossipToSettle", -1, -1, i64::MAX)?,
        },
        outbound_bind_any: els.bool("OutboundBindAny", false)?,
        num_tokens,
        initial_tokens,
        max_hint_window_ms: els.number("MaxHintWindowInMs", 3 * 3600 * 1000, 0, u64::MAX)?,
        hinted_handoff_throttle_kb: els.number("HintedHandoffThrottleInKB", 1024, 0, u32::MAX)?,
        stream_throughput_outbound_megabits_per_sec: els.number(
            "StreamThroughputOutboundMegabitsPerSec",
            200,
            0,
            u32::MAX,
        )?,
        ring_delay_ms: els.number("RingDelayInMillis", 30_000, 0, 3_600_000)?,
        index_interval: els.number("IndexInterval", 128, 1, u32::MAX)?,
        column_index_size_kb: els.number("ColumnIndexSizeInKB", 64, 1, u32::MAX)?,
        sliced_buffer_size_kb: els.number("SlicedBufferSizeInKB", 64, 1, u32::MAX)?,
        flush_data_buffer_size_mb: els.number("FlushDataBufferSizeInMB", 32.0, f64::MIN_POSITIVE, f64::MAX)?,
        flush_index_buffer_size_mb: els.number("FlushIndexBufferSizeInMB", 8.0, f64::MIN_POSITIVE, f64::MAX)?,
        row_warning_threshold_mb: els.number("RowWarningThresholdInMB", 512, 1, u64::MAX)?,
        concurrent_reads,
        concurrent_writes,
        do_consistency_checks,
        snapshot_before_compaction: els.bool("SnapshotBeforeCompaction", false)?,
        auto_snapshot: els.bool("AutoSnapshot", true)?,
        compaction_throughput_mb_per_sec: els.number("CompactionThroughputMbPerSec", 16, 0, u32::MAX)?,
        incremental_backups: els.bool("IncrementalBackups", false)?,
        keyspaces: Vec::new(),
        cf_caches: BTreeMap::new(),
        warnings: Vec::new(),
    };

    let parsed = match els.node("Keyspaces") {
        Some(node) => keyspaces::parse_keyspaces(node, &config, &fallbacks, endpoint_snitch_node, &mut warnings)?,
        None => keyspaces::Parsed { snitch: endpoint_snitch_node, ..Default::default() },
    };
    config.endpoint_snitch = parsed.snitch.map_or_else(|| DEFAULT_SNITCH.to_string(), |(s, _)| s);
    config.keyspaces = parsed.keyspaces;
    config.cf_caches = parsed.caches;
    config.warnings = warnings;
    Ok(config)
}

fn data_directories(els: &Elements<'_>) -> Result<Vec<PathBuf>, ConfigError> {
    let node = els.node("DataFileDirectories").ok_or_else(|| els.missing("DataFileDirectories"))?;
    container(node, "DataFileDirectory")?;
    let mut dirs = Vec::new();
    for child in &node.children {
        if child.name != "DataFileDirectory" {
            return Err(unknown_child(node, child, &["DataFileDirectory"]));
        }
        leaf(child)?;
        if let Some(v) = child.value() {
            dirs.push(PathBuf::from(v));
        }
    }
    if dirs.is_empty() {
        return Err(ConfigError::Missing {
            element: "<DataFileDirectory>".into(),
            within: "DataFileDirectories".into(),
            line: node.line,
        });
    }
    Ok(dirs)
}

pub(crate) fn unknown_child(parent: &Node, child: &Node, known: &[&str]) -> ConfigError {
    ConfigError::UnknownElement {
        name: child.name.clone(),
        parent: parent.name.clone(),
        line: child.line,
        suggestion: super::error::suggest(&child.name, known.iter().copied()),
    }
}

fn commit_log_sync(els: &Elements<'_>) -> Result<CommitLogSync, ConfigError> {
    #[derive(Clone, Copy)]
    enum Mode {
        Periodic,
        Batch,
    }
    let period = els.text("CommitLogSyncPeriodInMS")?;
    let window = els.text("CommitLogSyncBatchWindowInMS")?;
    let mode = match els.text("CommitLogSync")? {
        Some((v, line)) => one_of("CommitLogSync", line, v, &[("periodic", Mode::Periodic), ("batch", Mode::Batch)])?,
        // 0.6 required the element; without it we take the sample file's periodic mode.
        None if window.is_some() => Mode::Batch,
        None => Mode::Periodic,
    };
    match mode {
        Mode::Periodic => {
            if let Some((v, line)) = window {
                return Err(bad(
                    "CommitLogSyncBatchWindowInMS",
                    line,
                    v,
                    "only valid with <CommitLogSync>batch</CommitLogSync>",
                ));
            }
            let period_ms = match period {
                Some((v, line)) => super::values::number_in("CommitLogSyncPeriodInMS", line, v, 1, u64::MAX)?,
                None if els.node("CommitLogSync").is_some() => return Err(els.missing("CommitLogSyncPeriodInMS")),
                None => 10_000,
            };
            Ok(CommitLogSync::Periodic { period_ms })
        }
        Mode::Batch => {
            if let Some((v, line)) = period {
                return Err(bad(
                    "CommitLogSyncPeriodInMS",
                    line,
                    v,
                    "only valid with <CommitLogSync>periodic</CommitLogSync>",
                ));
            }
            let (v, line) = window.ok_or_else(|| els.missing("CommitLogSyncBatchWindowInMS"))?;
            let window_ms = super::values::number_in("CommitLogSyncBatchWindowInMS", line, v, 0.0, 60_000.0)?;
            Ok(CommitLogSync::Batch { window_ms })
        }
    }
}
