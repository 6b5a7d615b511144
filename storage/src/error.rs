//! The storage engine's error type. Each variant carries what a caller needs to decide what the
//! client sees (InvalidRequestException for bad input, a server error for I/O or corruption).

use std::path::PathBuf;

pub use model::error::CorruptData;

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("I/O error on {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("corrupt data{}: {detail}", file.as_ref().map(|f| format!(" in {}", f.display())).unwrap_or_default())]
    Corrupt { file: Option<PathBuf>, detail: CorruptData },
    /// Commit log damage that a crash cannot explain (see `commitlog::replay`): replay stops,
    /// and the segment stays where it is.
    #[error(
        "commit log segment {} is damaged at offset {offset} ({detail}): {after}. Refusing to replay it, since \
         skipping the damage would lose acknowledged writes; the segment is left as it is. To replay the records \
         that verify, skip the damaged ones and keep the segment aside as {}{}, start with {}=true",
        file.display(),
        file.display(),
        crate::commitlog::SET_ASIDE_SUFFIX,
        crate::commitlog::IGNORE_REPLAY_ERRORS_ENV
    )]
    DamagedCommitLog { file: PathBuf, offset: u64, detail: CorruptData, after: crate::commitlog::AfterDamage },
    #[error("keyspace {0} does not exist")]
    UnknownKeyspace(String),
    #[error("column family {keyspace}.{cf} does not exist")]
    UnknownColumnFamily { keyspace: String, cf: String },
    #[error("column family {keyspace}.{cf} has no index {index}")]
    UnknownIndex { keyspace: String, cf: String, index: String },
    /// Keyspace names are unique regardless of case (they name directories): `existing` is the
    /// name already taken, `name` the one refused.
    #[error("keyspace {name} already exists (as {existing})")]
    KeyspaceExists { name: String, existing: String },
    #[error("column family {keyspace}.{cf} already exists")]
    ColumnFamilyExists { keyspace: String, cf: String },
    #[error("invalid schema: {0}")]
    InvalidSchema(String),
    /// `merge_schema` was given a mutation of something else than a keyspace's rows of the
    /// schema tables.
    #[error(
        "a schema mutation may change only rows of system.schema_keyspaces and system.schema_columnfamilies \
         keyed by a keyspace name, not {keyspace}.{cf} row {key:?}"
    )]
    InvalidSchemaMutation { keyspace: String, cf: String, key: String },
    /// The node's data belongs to another cluster than the configuration names (Cassandra's
    /// start-up check, with its message).
    #[error("Saved cluster name {saved} != configured name {configured}")]
    ClusterNameMismatch { saved: String, configured: String },
    /// The data was written with another partitioner: its keys would be looked for in the
    /// wrong places (Cassandra's start-up check, with its message).
    #[error("Detected partitioner mismatch! Did you change the partitioner? (the data was written with {saved}; the configuration says {configured})")]
    PartitionerMismatch { saved: String, configured: String },
    /// A row of the system keyspace holds a value the engine cannot read.
    #[error("system.{cf} row {key:?}: {detail}")]
    CorruptSystemRow { cf: &'static str, key: String, detail: String },
    #[error(transparent)]
    Marshal(#[from] crate::marshal::MarshalError),
    #[error(transparent)]
    Dht(#[from] crate::dht::DhtError),
    #[error("the commit log failed earlier ({0}); writes are refused until restart")]
    Poisoned(String),
    #[error("storage is shutting down")]
    ShuttingDown,
    /// `sibyltool stop` stopped a compaction, cleanup or scrub (Cassandra's
    /// CompactionInterruptedException): what it wrote is removed, its inputs stay.
    #[error(transparent)]
    CompactionInterrupted(#[from] crate::compaction::CompactionInterrupted),
    /// A write refused because the column family's memtable reached its hard limit (twice a flush
    /// threshold) while flushing it fails, typically on a full or unwritable data directory.
    #[error("writes to {keyspace}.{cf} are refused until its memtable can be flushed: {reason}")]
    FlushFailing { keyspace: String, cf: String, reason: String },
    /// A counter increment ([`crate::data::CellKind::CounterUpdate`]) reached the engine as it
    /// is: only a counter's leader may turn it into a stored counter cell.
    #[error("a counter update of {keyspace}.{cf} must be applied by its leader, not stored as it is")]
    UnledCounterUpdate { keyspace: String, cf: String },
    #[error("invalid snapshot name {tag:?}: {reason}")]
    InvalidSnapshotTag { tag: String, reason: String },
    #[error("snapshot {} already exists", path.display())]
    SnapshotExists { path: PathBuf },
    #[error("cannot import SSTables from {path}: {reason}")]
    InvalidImport { path: PathBuf, reason: String },
}

impl StorageError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> StorageError {
        StorageError::Io { path: path.into(), source }
    }

    /// Attaches a file name to a corruption error that lacks one.
    pub fn in_file(self, path: impl Into<PathBuf>) -> StorageError {
        match self {
            StorageError::Corrupt { file: None, detail } => StorageError::Corrupt { file: Some(path.into()), detail },
            other => other,
        }
    }
}

pub type Result<T, E = StorageError> = std::result::Result<T, E>;
impl From<CorruptData> for StorageError {
    fn from(e: CorruptData) -> Self {
        StorageError::Corrupt { file: None, detail: e }
    }
}
