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

mod column_names;
mod error;
mod keyspaces;
mod node;
mod values;
mod xml;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use storage::schema::KeyspaceDef;

pub use crate::auth::PasswordMode;
pub use error::ConfigError;

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

/// The 0.6 cache settings of one CF. The schema only keeps a `caching` mode, so the sizes are
/// kept here for the engine.
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
    /// `InitialToken`; default `None` (the node picks one). Empty counts as absent.
    pub initial_token: Option<String>,
    /// `AutoBootstrap`, strict boolean; default false.
    pub auto_bootstrap: bool,
    /// `HintedHandoffEnabled`, strict boolean; default true.
    pub hinted_handoff_enabled: bool,
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
    /// `SavedCachesDirectory`; default `None` (caches are not saved). 0.6 required it.
    pub saved_caches_directory: Option<PathBuf>,
    /// `Seeds/Seed`, host names or addresses as written (resolved by the cluster layer). At
    /// least one is required.
    pub seeds: Vec<String>,
    /// `ListenAddress` for internode traffic; `0.0.0.0` is refused. Default `127.0.0.1` (0.6
    /// used the address of the machine's host name; set it explicitly for a real cluster).
    pub listen_address: String,
    /// `StoragePort`; default 7000.
    pub storage_port: u16,
    /// `ThriftAddress`; `0.0.0.0` is allowed. Default: the listen address.
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
    /// Extension `BlockCacheSizeInMB`: verified SSTable index blocks and data chunks kept in
    /// memory for point reads (storage::block_cache); default 64, 0 turns it off.
    pub block_cache_size_mb: u32,
    /// Extension `AdminAddress` for the admin interface; default `127.0.0.1`.
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
    pub rpc_timeout_ms: u64,
    /// `PhiConvictThreshold` (5..=16); default 8.
    pub phi_convict_threshold: u32,
    /// `IndexInterval` (> 0); default 128.
    pub index_interval: u32,
    /// `ColumnIndexSizeInKB`; default 64.
    pub column_index_size_kb: u32,
    /// `SlicedBufferSizeInKB`; default 64.
    pub sliced_buffer_size_kb: u32,
    /// `FlushDataBufferSizeInMB` (> 0); default 32.
    pub flush_data_buffer_size_mb: f64,
    /// `FlushIndexBufferSizeInMB` (> 0); default 8.
    pub flush_index_buffer_size_mb: f64,
    /// `RowWarningThresholdInMB` (> 0); default 512.
    pub row_warning_threshold_mb: u64,
    /// `ConcurrentReads` (>= 2); default 8.
    pub concurrent_reads: u32,
    /// `ConcurrentWrites` (>= 2); default 32.
    pub concurrent_writes: u32,
    /// `DoConsistencyChecksBoolean` (read repair); default true. As in 0.6 any value other than
    /// `true` means false, with a warning for values other than `false`. Sets the default of
    /// every CF's `ReadRepairChance` (1.0 or 0.0).
    pub do_consistency_checks: bool,
    /// `SnapshotBeforeCompaction`, strict boolean; default false.
    pub snapshot_before_compaction: bool,
    /// `Keyspaces/Keyspace`; may be empty (0.6 refused that). The `system` keyspace is not here.
    pub keyspaces: Vec<KeyspaceDef>,
    /// The 0.6 cache sizes of each CF, by (keyspace, column family).
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
pub fn parse(xml: &str, source_name: &str) -> Result<Config, ConfigError> {
    let root = xml::parse_document(xml)?;
    let config = node::interpret(&root, source_name)?;
    for w in &config.warnings {
        tracing::warn!("{source_name}: {w}");
    }
    Ok(config)
}
