//! `server::config`: reads Cassandra 0.6's `storage-conf.xml` (see
//! `shared/reference/storage-conf-0.6.md`) into a [`Config`].
//!
//! The rules (DESIGN decision 4): a user's existing 0.6 file must start a node.
//! - Elements that 0.6 (or an earlier release) accepted but that mean nothing to us are accepted
//!   with a warning ([`Config::warnings`], also logged through `tracing`).
//! - An element nobody ever defined stops startup with its name, line and the nearest known
//!   name; a bad value (non-number, bad boolean, unknown enum or class) stops startup naming the
//!   element, line and value; a missing required element names the element.
//! - Differences from 0.6 on purpose: an empty (or absent) `<Keyspaces>` is valid, several
//!   elements 0.6 required get defaults (listed on each field), and some newer options are
//!   accepted as extensions (listed on each field and in `conf/storage-conf.xml`).
//!
//! Relative paths are kept relative, so they resolve against the server's working directory.
//! Host names in `ListenAddress` and `Seeds` are resolved once, at load; a name that does not
//! resolve stops startup ([`ConfigError::UnknownHost`]).

mod column_names;
mod endpoints;
mod error;
mod keyspaces;
mod node;
mod tokens;
mod values;
mod xml;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_cluster;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use model::schema::KeyspaceDef;

pub use crate::auth::PasswordMode;
pub use error::ConfigError;

/// The wait for gossip to settle before a node opens its client ports: at least `min_wait_ms`,
/// then polls `poll_interval_ms` apart until `polls_required` polls in a row found gossip's
/// view unchanged (the same endpoints with the same statuses) and every live peer placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GossipSettle {
    /// Extension `GossipSettleMinWaitInMillis`; default 5000.
    pub min_wait_ms: u64,
    /// Extension `GossipSettlePollIntervalInMillis`; default 1000.
    pub poll_interval_ms: u64,
    /// Extension `GossipSettlePollSuccessesRequired`; default 3.
    pub polls_required: u32,
    /// Extension `SkipWaitForGossipToSettle`: -1 (default) waits until gossip settles; 0 does
    /// not wait at all; N > 0 opens after N polls even if gossip has not settled.
    pub force_after_polls: i64,
}

/// When the commit log is fsynced (`CommitLogSync` and its companion element).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CommitLogSync {
    /// `periodic` with `CommitLogSyncPeriodInMS`: writes are acknowledged at once and the log is
    /// fsynced every `period_ms`.
    Periodic { period_ms: u64 },
    /// `batch` with `CommitLogSyncBatchWindowInMS`: writes wait for an fsync, which groups the
    /// writes arriving within `window_ms`.
    Batch { window_ms: f64 },
}

/// `DiskAccessMode`: how data and index files are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiskAccessMode {
    /// mmap on 64-bit platforms, standard I/O otherwise.
    Auto,
    Mmap,
    /// Index files mmapped, data files through standard I/O.
    MmapIndexOnly,
    Standard,
}

/// 0.6's per-CF cache size (`KeysCached`, `RowsCached`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CacheSize {
    Off,
    /// A fraction in (0, 1] of the estimated number of keys (`0.5`, `50%`, and `1` = 100%).
    Fraction(f64),
    /// An absolute number of entries (a value above 1).
    Count(u64),
}

/// The 0.6 cache settings of one CF, as read; the schema only keeps a `caching` mode. The engine
/// uses none of them: it has no row cache, saves no cache, and keeps key positions in the block
/// cache shared by every CF (`BlockCacheSizeInMB`). Settings that ask for something else (no key
/// cache, a row cache, saved caches, `Caching` other than `KEYS_ONLY`) get one warning per kind;
/// a positive `KeysCached` is what Sibyl does anyway, sized globally, and loads silently.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CfCacheSettings {
    /// `KeysCached`, default 200000 entries.
    pub keys_cached: CacheSize,
    /// `RowsCached`, default off.
    pub rows_cached: CacheSize,
    /// `KeyCacheSavePeriodInSeconds`, default 0 (never saved).
    pub key_cache_save_period_seconds: u32,
    /// `RowCacheSavePeriodInSeconds`, default 0 (never saved).
    pub row_cache_save_period_seconds: u32,
}

impl Default for CfCacheSettings {
    fn default() -> Self {
        CfCacheSettings {
            keys_cached: CacheSize::Count(200_000),
            rows_cached: CacheSize::Off,
            key_cache_save_period_seconds: 0,
            row_cache_save_period_seconds: 0,
        }
    }
}

/// Everything storage-conf.xml says. Each field names its element and its default.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Where this was read from (file path or a test's name), for messages.
    pub source_name: String,
    /// `ClusterName`. Required (0.6 had no usable default either).
    pub cluster_name: String,
    /// `Partitioner`, normalized to the full class name (a name without a dot gets
    /// `org.apache.cassandra.dht.`). Required.
    pub partitioner: String,
    /// `InitialToken` as written; default `None` (the node picks one). Empty counts as absent.
    pub initial_token: Option<String>,
    /// `InitialToken` split at commas (a list gives one token per virtual node, as Cassandra
    /// 1.2+ reads `initial_token`), each checked against the partitioner; the list must hold
    /// exactly `num_tokens` tokens, none twice. Empty when `InitialToken` is absent.
    pub initial_tokens: Vec<String>,
    /// Extension `NumTokens` (Cassandra 1.2+ `num_tokens`): how many tokens (virtual nodes)
    /// this node owns, 1 to 1536 (Cassandra's limit, so a node's tokens fit in one gossip
    /// state). Default 1, the single token of 0.6.
    pub num_tokens: u32,
    /// `AutoBootstrap`, strict boolean; default false.
    pub auto_bootstrap: bool,
    /// `HintedHandoffEnabled`, strict boolean; default true.
    pub hinted_handoff_enabled: bool,
    /// Extension `MaxHintWindowInMs` (later Cassandra's `max_hint_window_in_ms`): a replica down
    /// for longer than this gets no more hints (repair must fix it); default 10800000 (3 hours).
    pub max_hint_window_ms: u64,
    /// Extension `HintedHandoffThrottleInKB` (Cassandra 1.2+ `hinted_handoff_throttle_in_kb`):
    /// KB per second of hints replayed to a node that came back, so the replay does not swamp
    /// it; default 1024, 0 = unthrottled.
    pub hinted_handoff_throttle_kb: u32,
    /// `Authenticator`, normalized to the full class name; default
    /// `org.apache.cassandra.auth.AllowAllAuthenticator`. Also `SimpleAuthenticator`.
    pub authenticator: String,
    /// Extension `PasswdProperties`: the SimpleAuthenticator's user file (0.6 took it from the
    /// `passwd.properties` JVM property); default `passwd.properties` next to the config file.
    pub passwd_properties: Option<PathBuf>,
    /// Extension `AccessProperties`: the SimpleAuthenticator's keyspace access file (0.6:
    /// `access.properties` JVM property); default `access.properties` next to the config file.
    pub access_properties: Option<PathBuf>,
    /// Extension `PasswdMode`: `PLAIN` (default) or `MD5` (0.6: `passwd.mode` JVM property).
    pub passwd_mode: PasswordMode,
    /// `CommitLogDirectory`. Required; must differ from every data directory.
    pub commit_log_directory: PathBuf,
    /// `DataFileDirectories/DataFileDirectory`, at least one. Required.
    pub data_file_directories: Vec<PathBuf>,
    /// `SavedCachesDirectory`; default `None`. 0.6 required it. Not used: Sibyl saves no caches
    /// (a cache save period names it in its warning; the element alone loads silently).
    pub saved_caches_directory: Option<PathBuf>,
    /// `Seeds/Seed` as written, in file order without repeats. At least one is required.
    pub seeds: Vec<String>,
    /// The seeds' internode endpoints, one per entry of `seeds`, resolved at load. A seed is an
    /// address or host name at `StoragePort` (0.6's meaning), or (extension) `address:port`,
    /// `host:port`, `[ipv6]` or `[ipv6]:port`. A name with IPv4 and IPv6 addresses takes the
    /// IPv4 one, as Java's resolver did for 0.6. Two seeds naming one endpoint keep the first
    /// with a warning.
    pub seed_endpoints: Vec<SocketAddr>,
    /// `ListenAddress` for internode traffic as written; `0.0.0.0` is refused. Blank or absent:
    /// as 0.6, the address the machine's host name resolves to (IPv4 first), written as an
    /// address; if the host name cannot be read or resolved, `127.0.0.1` with a warning.
    pub listen_address: String,
    /// `StoragePort`; default 7000.
    pub storage_port: u16,
    /// `ListenAddress:StoragePort` resolved at load: the endpoint this node is known by to the
    /// others (its gossip identity) and listens on for internode traffic.
    pub listen_endpoint: SocketAddr,
    /// `ThriftAddress`; `0.0.0.0` is allowed. Blank or absent: the listen address (which, blank
    /// too, is the machine's, as in 0.6).
    pub thrift_address: String,
    /// `ThriftPort`; default 9160.
    pub thrift_port: u16,
    /// `ThriftFramedTransport`, strict boolean; default false. Informational: the server detects
    /// framed or unframed transport per connection.
    pub thrift_framed_transport: bool,
    /// Extension `ThriftMaxMessageLengthInMB`: largest frame or message accepted; default 15.
    pub thrift_max_message_length_mb: u32,
    /// Extension `ThriftEventLoops`: threads serving Thrift connections; 0 (the default) means
    /// half the cores, at least one.
    pub thrift_event_loops: u32,
    /// Extension `StartNativeTransport` (Cassandra's `start_native_transport`): serve CQL
    /// clients over the native protocol; default true.
    pub start_native_transport: bool,
    /// Extension `NativeTransportAddress` (Cassandra's `rpc_address` for the native port);
    /// blank or absent: the ThriftAddress.
    pub native_transport_address: String,
    /// Extension `NativeTransportPort`: default 9042.
    pub native_transport_port: u16,
    /// Extension `NativeTransportMaxFrameSizeInMB`: larger frames are refused and their
    /// connection closed; default 256.
    pub native_transport_max_frame_size_mb: u32,
    /// Extension `NativeTransportMaxConcurrentConnections`: connections past it are closed
    /// at once with a warning; None (-1, the default) is unlimited.
    pub native_transport_max_concurrent_connections: Option<u32>,
    /// Extension `BatchSizeWarnThresholdInKB` (Cassandra 3.11's
    /// `batch_size_warn_threshold_in_kb`): a batch over several partitions whose data is
    /// larger warns its client (and the log); default 5.
    pub batch_size_warn_threshold_kb: u32,
    /// Extension `BatchSizeFailThresholdInKB` (`batch_size_fail_threshold_in_kb`): such a batch
    /// larger than this is refused, "Batch too large"; default 50.
    pub batch_size_fail_threshold_kb: u32,
    /// Extension `UnloggedBatchAcrossPartitionsWarnThreshold`
    /// (`unlogged_batch_across_partitions_warn_threshold`): an unlogged batch over more
    /// partitions warns its client; default 10.
    pub unlogged_batch_across_partitions_warn_threshold: u32,
    /// Extension `BlockCacheSizeInMB`: verified SSTable index blocks and data chunks kept in
    /// memory for point reads (the engine's block cache); default 64, 0 turns it off.
    pub block_cache_size_mb: u32,
    /// Extension `CommitLogTotalSpaceInMB` (Cassandra 1.0+'s `commitlog_total_space_in_mb`):
    /// once the commit log segments hold more, the column families keeping the oldest segment
    /// alive are flushed; default 8192.
    pub commit_log_total_space_mb: u32,
    /// Extension `AdminAddress` for the admin interface; default the `ListenAddress` as
    /// written, so nodes sharing a machine on 127.0.0.1, 127.0.0.2, ... each get their own.
    pub admin_address: String,
    /// Extension `AdminPort`; default 7199.
    pub admin_port: u16,
    /// The endpoint snitch, normalized to its 0.7+ name: `EndPointSnitch` →
    /// `RackInferringSnitch`, `PropertyFileEndPointSnitch` → `PropertyFileSnitch`. Taken from a
    /// node-level `EndPointSnitch` element (extension, as in 0.7 where the snitch is global) or
    /// else from the keyspaces' `EndPointSnitch` (0.6 declared it per keyspace; they must
    /// agree). Default `org.apache.cassandra.locator.SimpleSnitch`.
    pub endpoint_snitch: String,
    /// `DiskAccessMode` (`auto`, `mmap`, `mmap_index_only`, `standard`); default auto.
    pub disk_access_mode: DiskAccessMode,
    /// `CommitLogSync` with `CommitLogSyncPeriodInMS` / `CommitLogSyncBatchWindowInMS`; default
    /// periodic every 10000 ms (0.6 required the element).
    pub commit_log_sync: CommitLogSync,
    /// `CommitLogRotationThresholdInMB`; default 128.
    pub commit_log_rotation_threshold_mb: u32,
    /// `MemtableThroughputInMB`; default 64.
    pub memtable_throughput_mb: u32,
    /// `BinaryMemtableThroughputInMB`; default 256.
    pub binary_memtable_throughput_mb: u32,
    /// `MemtableOperationsInMillions` (> 0); default 0.1.
    pub memtable_operations_millions: f64,
    /// `MemtableFlushAfterMinutes`; default 60.
    pub memtable_flush_after_minutes: u32,
    /// `GCGraceSeconds`; default 864000 (10 days). Also the default of every CF's
    /// `GCGraceSeconds` attribute.
    pub gc_grace_seconds: i32,
    /// `RpcTimeoutInMillis`; default 2000 (0.6's code default; its sample file used 10000).
    /// How long a coordinator waits for replicas, and the default of the three request
    /// timeouts below, so a 0.6 file behaves as it did.
    pub rpc_timeout_ms: u64,
    /// Extension `ReadRequestTimeoutInMillis` (Cassandra 1.2+): single-row reads; default
    /// `rpc_timeout_ms`.
    pub read_request_timeout_ms: u64,
    /// Extension `WriteRequestTimeoutInMillis` (Cassandra 1.2+): writes; default
    /// `rpc_timeout_ms`.
    pub write_request_timeout_ms: u64,
    /// Extension `RangeRequestTimeoutInMillis` (Cassandra 1.2+): range and index scans;
    /// default `rpc_timeout_ms`.
    pub range_request_timeout_ms: u64,
    /// Extension `TruncateRequestTimeoutInMillis` (Cassandra 1.2+): truncate, which waits for
    /// every node to flush; default 60000, as Cassandra.
    pub truncate_request_timeout_ms: u64,
    /// Extension `StreamThroughputOutboundMegabitsPerSec` (Cassandra 1.x+): cap on the data a
    /// node writes to others when it hands ranges over (decommission, move, removenode) and
    /// in repair, so streaming does not starve client traffic; default 200, 0 = unthrottled.
    /// The ranges a joining or moving node fetches are read, not streamed, and not capped.
    pub stream_throughput_outbound_megabits_per_sec: u32,
    /// Extension `RingDelayInMillis` (Cassandra's `cassandra.ring_delay_ms` system property):
    /// how long a starting node listens to gossip before it picks tokens or streams, so it has
    /// seen the ring; default 30000. Up to 3600000; tests on one machine set it low.
    pub ring_delay_ms: u64,
    /// `PhiConvictThreshold` (5..=16); default 8.
    pub phi_convict_threshold: u32,
    /// How a starting node waits for gossip to settle before it serves clients (Cassandra's
    /// `Gossiper.waitToSettle` and its `cassandra.gossip_settle_*` and
    /// `cassandra.skip_wait_for_gossip_to_settle` system properties).
    pub gossip_settle: GossipSettle,
    /// Extension `OutboundBindAny` (Cassandra's `outbound_bind_any`): internode connections
    /// leave from any address the kernel picks instead of `ListenAddress`; default false.
    pub outbound_bind_any: bool,
    /// `IndexInterval` (> 0); default 128.
    pub index_interval: u32,
    /// `ColumnIndexSizeInKB`; default 64. A partition whose cells take more gets a column index
    /// with one entry per this many KB in the SSTables flushes and compactions write.
    pub column_index_size_kb: u32,
    /// `SlicedBufferSizeInKB`; default 64.
    pub sliced_buffer_size_kb: u32,
    /// `FlushDataBufferSizeInMB` (> 0); default 32.
    pub flush_data_buffer_size_mb: f64,
    /// `FlushIndexBufferSizeInMB` (> 0); default 8.
    pub flush_index_buffer_size_mb: f64,
    /// `RowWarningThresholdInMB` (> 0); default 512. Flushes and compactions log a warning
    /// naming each partition they write that is larger (keyspace, column family, key in hex,
    /// bytes).
    pub row_warning_threshold_mb: u64,
    /// `ConcurrentReads` (>= 2); default 8. Not used: Sibyl has no read stage; requests run on
    /// the Thrift event loops and one executor shared by reads and writes, sized by the
    /// machine. A value other than the sample's 8 gets a warning.
    pub concurrent_reads: u32,
    /// `ConcurrentWrites` (>= 2); default 32. Not used, as `ConcurrentReads`; a value other than
    /// the sample's 32 gets a warning.
    pub concurrent_writes: u32,
    /// `DoConsistencyChecksBoolean` (read repair); default true. As in 0.6 any value other than
    /// `true` means false, with a warning for values other than `false`. Sets the default of
    /// every CF's `ReadRepairChance` (1.0 or 0.0).
    pub do_consistency_checks: bool,
    /// `SnapshotBeforeCompaction`, strict boolean; default false. When true, each compaction
    /// first links the column family's SSTables into snapshot `<ms>-compact-<cf>-<generation>`
    /// (`sibyltool clearsnapshot` removes them; nothing else does).
    pub snapshot_before_compaction: bool,
    /// Extension `AutoSnapshot` (Cassandra 1.0+'s `auto_snapshot`), strict boolean; default
    /// true. Truncating or dropping a column family first snapshots it, as
    /// `<ms>-truncated-<cf>` or `<ms>-dropped-<cf>`.
    pub auto_snapshot: bool,
    /// Extension `CompactionThroughputMbPerSec` (Cassandra 1.0+'s
    /// `compaction_throughput_mb_per_sec`): compaction's write rate limit; default 16, 0 =
    /// unthrottled. `sibyltool setcompactionthroughput` changes it until the next start.
    pub compaction_throughput_mb_per_sec: u32,
    /// Extension `IncrementalBackups` (Cassandra 1.0+'s `incremental_backups`), strict boolean;
    /// default false. Each SSTable a flush writes is also linked into the column family's
    /// `backups/` directory; only the operator removes them.
    pub incremental_backups: bool,
    /// `Keyspaces/Keyspace`; may be empty (0.6 refused that). The `system` keyspace is not here.
    pub keyspaces: Vec<KeyspaceDef>,
    /// The 0.6 cache settings of each CF, by (keyspace, column family), as read (not used; see
    /// [`CfCacheSettings`]).
    pub cf_caches: BTreeMap<(String, String), CfCacheSettings>,
    /// What was accepted but ignored or adjusted, one message per item, with line numbers.
    pub warnings: Vec<String>,
}

impl Config {
    pub fn keyspace(&self, name: &str) -> Option<&KeyspaceDef> {
        self.keyspaces.iter().find(|k| k.name == name)
    }

    /// Where the SimpleAuthenticator's files are: the extension elements if given, otherwise
    /// `passwd.properties` / `access.properties` in `conf_dir`.
    pub fn auth_files(&self, conf_dir: &Path) -> (PathBuf, PathBuf) {
        (
            self.passwd_properties.clone().unwrap_or_else(|| conf_dir.join("passwd.properties")),
            self.access_properties.clone().unwrap_or_else(|| conf_dir.join("access.properties")),
        )
    }
}

/// Reads and parses a configuration file.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let xml = std::fs::read_to_string(path).map_err(|source| ConfigError::Io { path: path.to_path_buf(), source })?;
    parse(&xml, &path.display().to_string())
}

/// Parses configuration text; `source_name` is used in warnings. Warnings are also logged.
/// Host names are looked up with the system resolver.
pub fn parse(xml: &str, source_name: &str) -> Result<Config, ConfigError> {
    parse_with(xml, source_name, &endpoints::SystemResolver)
}

/// [`parse`] with a given resolver (tests use a fixed table).
pub(crate) fn parse_with(
    xml: &str,
    source_name: &str,
    resolver: &dyn endpoints::Resolve,
) -> Result<Config, ConfigError> {
    let root = xml::parse_document(xml)?;
    let config = node::interpret(&root, source_name, resolver)?;
    for w in &config.warnings {
        tracing::warn!("{source_name}: {w}");
    }
    Ok(config)
}
