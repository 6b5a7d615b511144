//! Results of the work an operator has a node do on its data: flush and compact, cleanup,
//! drain, repair, snapshots, scrub, import and index rebuilds; compaction's statistics,
//! thresholds and `stop`; and the throughput limits of compaction and streaming.

use serde::{Deserialize, Serialize};

/// Flush and compact: what was done to each column family.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CfWork {
    /// `keyspace.cf`.
    pub name: String,
    pub sstables_before: u64,
    pub sstables_after: u64,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkResult {
    pub column_families: Vec<CfWork>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CleanupKeyspace {
    pub keyspace: String,
    pub column_families: u64,
    pub removed_bytes: u64,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CleanupResult {
    pub keyspaces: Vec<CleanupKeyspace>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DrainResult {
    /// The node had been drained before this request.
    pub already_drained: bool,
    pub flushed: Vec<String>,
    /// What clients see now.
    pub effect: String,
}

/// What repair did to one column family.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepairCf {
    /// `keyspace.cf`.
    pub name: String,
    /// Ranges compared (ranges with one replica need no repair and are not counted).
    pub ranges: u64,
    /// Partitions found on any replica of those ranges.
    pub partitions: u64,
    /// Partition versions written to replicas that were behind.
    pub writes: u64,
    /// Sub-ranges (64 per range) whose replicas' digests differed: only those were compared
    /// partition by partition.
    #[serde(default)]
    pub mismatched: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepairResult {
    pub column_families: Vec<RepairCf>,
}

/// One column family's snapshot: taken (`snapshot`) or found on disk (`list_snapshots`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapshotCf {
    pub keyspace: String,
    /// The column family's name (`snapshot`), or its directory's (`<cf>-<id>`, `list_snapshots`:
    /// a dropped column family's snapshots are there too).
    pub column_family: String,
    pub tag: String,
    /// Hard links (SSTable components, its indexes' included) and their bytes.
    pub files: u64,
    pub bytes: u64,
    /// Its directory in each data directory holding part of it, joined by ", ".
    pub directory: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapshotResult {
    pub tag: String,
    pub column_families: Vec<SnapshotCf>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClearSnapshotResult {
    /// The snapshot directories removed.
    pub removed: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ListSnapshotsResult {
    pub snapshots: Vec<SnapshotCf>,
}

/// What scrub found in one column family.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScrubCf {
    /// `keyspace.cf`.
    pub name: String,
    /// SSTables read through, and those replaced because they held damaged partitions.
    pub checked: u64,
    pub rewritten: u64,
    /// Partitions read back whole.
    pub partitions: u64,
    /// Partitions left out (their data could not be read): how many, and their keys (UTF-8,
    /// lossy), at most [`SCRUB_KEYS_LISTED`] of them.
    pub lost: u64,
    pub lost_keys: Vec<String>,
}

/// The most lost keys a [`ScrubCf`] lists.
pub const SCRUB_KEYS_LISTED: usize = 100;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScrubResult {
    pub column_families: Vec<ScrubCf>,
}

/// What an import loaded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportResult {
    pub keyspace: String,
    pub column_family: String,
    /// The new Data files in the column family's directory, one per SSTable loaded.
    pub files: Vec<String>,
    pub partitions: u64,
    pub bytes: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RebuildIndexResult {
    /// `keyspace.cf`.
    pub column_family: String,
    /// The indexes emptied and being built again (`index_status` follows them).
    pub rebuilt: Vec<String>,
}

/// One running compaction, cleanup or scrub.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActiveCompaction {
    /// `Compaction`, `Cleanup` or `Scrub`.
    pub kind: String,
    pub keyspace: String,
    pub column_family: String,
    /// Bytes of partitions (uncompressed) processed, out of the inputs' total.
    pub bytes_done: u64,
    pub bytes_total: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompactionStatsResult {
    /// Compactions due: size tiers holding at least the minimum threshold of SSTables.
    pub pending_tasks: u64,
    pub compactions: Vec<ActiveCompaction>,
    /// The write rate limit they run under, in MB/s (0: unthrottled).
    pub throughput_mb_per_sec: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompactionThroughputResult {
    pub mb_per_sec: u32,
}

/// The compaction thresholds of one column family, as they apply now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionThresholdResult {
    pub keyspace: String,
    pub column_family: String,
    /// SSTables a background compaction merges at least and at most; 0 in either: background
    /// compaction is off.
    pub min: i32,
    pub max: i32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GetSsTablesResult {
    /// The Data files (paths on the node) of the SSTables holding the key, in no order that
    /// means anything.
    pub files: Vec<String>,
}

/// What `stop` stopped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StopResult {
    /// The type asked for, as Cassandra names it (`COMPACTION`, ...).
    pub compaction_type: String,
    /// The operations asked to give up, as they were then.
    pub stopped: Vec<ActiveCompaction>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StreamThroughputResult {
    pub megabits_per_sec: u32,
}
