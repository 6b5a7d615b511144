//! Start-up: opening column family directories, replaying the commit log, and reading the node's
//! state back from the system keyspace.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use tracing::warn;
use uuid::Uuid;

use super::{maintenance, StorageConfig, Stores};
use crate::block_cache::BlockCache;
use crate::cfs::ColumnFamilyStore;
use crate::commitlog::segment::RECORD_HEADER_LEN;
use crate::commitlog::{CommitLog, ReplayPosition, ReplayReport};
use crate::data::{now_seconds, Cell};
use crate::dht::KeyBound;
use crate::error::{Result, StorageError};
use crate::filter::ReadFilter;
use crate::mutation::decode_record;
use crate::schema::CfDef;
use crate::sstable::{self, SsTableReader};
use crate::system::schema_tables::{self, DecodedSchema};
use crate::system::{self, SystemState};

pub(super) fn add_store(stores: &mut Stores, store: Arc<ColumnFamilyStore>) {
    stores.by_name.entry(store.keyspace.clone()).or_default().insert(store.name.clone(), store.clone());
    stores.by_id.insert(store.id, store);
}

/// Replays the commit log into the memtables of the column families `wanted` selects, skipping
/// records their SSTables or a truncate already cover. Returns the records applied. A memtable
/// that reaches a flush threshold (`MemtableThroughputInMB`, `MemtableOperationsInMillions`) is
/// written out on the way, as Cassandra's replay does, so replaying a commit log of any size
/// holds about one memtable per column family in memory.
pub(super) fn replay_into(
    config: &StorageConfig,
    cache: &Arc<BlockCache>,
    stores: &Stores,
    truncated_at: &BTreeMap<Uuid, (u64, u64)>,
    wanted: impl Fn(&Uuid) -> bool,
) -> Result<(u64, ReplayReport)> {
    let mut floors: HashMap<Uuid, ReplayPosition> = HashMap::new();
    for (id, store) in stores.by_id.iter().filter(|(id, _)| wanted(id)) {
        let mut floor = store
            .sstables()
            .iter()
            .map(|s| {
                let rp = s.metadata().replay_position;
                ReplayPosition { segment_id: rp.segment_id, offset: rp.offset }
            })
            .max()
            .unwrap_or(ReplayPosition { segment_id: 0, offset: 0 });
        if let Some(&(segment_id, offset)) = truncated_at.get(id) {
            floor = floor.max(ReplayPosition { segment_id, offset });
        }
        floors.insert(*id, floor);
    }
    let mut replayed = 0u64;
    let report = CommitLog::replay_with(&config.commitlog_dir, config.commitlog_recovery, |pos, bytes| {
        let frame_len = RECORD_HEADER_LEN + bytes.len() as u64;
        let record = decode_record(bytes).map_err(|detail| StorageError::Corrupt { file: None, detail })?;
        let dk = config.partitioner.decorate(&record.key);
        for (id, row) in record.updates {
            let (Some(store), Some(floor)) = (stores.by_id.get(&id), floors.get(&id)) else {
                continue; // not replayed in this pass, or the column family was dropped
            };
            if pos < *floor {
                continue;
            }
            let (bytes, operations) = store.apply(&dk, row);
            replayed += 1;
            if bytes >= config.memtable_flush_bytes || operations >= config.memtable_flush_operations {
                // The SSTable holds every record of this column family up to this one: a replay
                // after a crash from here on starts after it.
                let next = ReplayPosition { segment_id: pos.segment_id, offset: pos.offset + frame_len };
                flush_replayed(config, cache, store, next)?;
            }
        }
        Ok(())
    })?;
    Ok((replayed, report))
}

/// Writes a column family's memtable filled by replay, and its indexes' first, to SSTables with
/// replay position `next`.
fn flush_replayed(
    config: &StorageConfig,
    cache: &Arc<BlockCache>,
    store: &Arc<ColumnFamilyStore>,
    next: ReplayPosition,
) -> Result<()> {
    let indexes = store.indexes();
    for s in indexes.iter().map(|i| &i.store).chain([store]) {
        let memtable = s.active_memtable();
        if memtable.is_empty() {
            continue;
        }
        s.switch_memtable(next);
        maintenance::write_memtable_with(s, &memtable, next, config, cache)?;
    }
    Ok(())
}

/// What the (replayed) system keyspace says at start.
pub(super) struct LoadedSystem {
    pub state: SystemState,
    pub schema: DecodedSchema,
    /// The newest timestamp found in the schema tables and the local row: later system writes
    /// must be newer, even if the clock went back.
    pub newest_write: i64,
}

/// Reads the schema and node state from the (replayed) system keyspace.
pub(super) fn load_system_state(stores: &Stores) -> Result<LoadedSystem> {
    let store_of = |cf: &str| {
        stores
            .by_name
            .get(system::KEYSPACE)
            .and_then(|k| k.get(cf))
            .cloned()
            .ok_or_else(|| StorageError::UnknownColumnFamily { keyspace: system::KEYSPACE.into(), cf: cf.into() })
    };
    let mut newest = i64::MIN;
    let schema = read_schema_tables(
        &store_of(system::SCHEMA_KEYSPACES_CF)?,
        &store_of(system::SCHEMA_COLUMNFAMILIES_CF)?,
        &mut newest,
    )?;
    let local = live_rows(&store_of(system::LOCAL_CF)?, &mut newest)?
        .into_iter()
        .find(|(key, _)| key == system::LOCAL_KEY)
        .map(|(_, cells)| cells)
        .unwrap_or_default();
    Ok(LoadedSystem { state: system::local::decode_local(local)?, schema, newest_write: newest })
}

/// The schema the schema tables hold; raises `newest` to the newest timestamp seen there.
pub(super) fn read_schema_tables(
    keyspaces: &Arc<ColumnFamilyStore>,
    column_families: &Arc<ColumnFamilyStore>,
    newest: &mut i64,
) -> Result<DecodedSchema> {
    let keyspace_rows = live_rows(keyspaces, newest)?;
    let cf_rows = live_rows(column_families, newest)?;
    Ok(schema_tables::decode_schema(keyspace_rows, cf_rows))
}

/// Every row of a (small) system column family as its live cells; raises `newest` to the newest
/// timestamp of any cell or tombstone.
fn live_rows(store: &Arc<ColumnFamilyStore>, newest: &mut i64) -> Result<Vec<(Vec<u8>, Vec<Cell>)>> {
    let now = now_seconds();
    let mut rows = Vec::new();
    for item in store.scan(&KeyBound::Unbounded)? {
        let (key, row) = item?;
        *newest = (*newest)
            .max(row.deletion.marked_at)
            .max(row.cells.iter().map(|c| c.timestamp).max().unwrap_or(i64::MIN))
            .max(row.range_tombstones.iter().map(|r| r.deletion.marked_at).max().unwrap_or(i64::MIN));
        rows.push((key.key, crate::filter::collect_live(&store.cmp, &row, &ReadFilter::all(), now)));
    }
    Ok(rows)
}

/// Opens a column family's directories, one in each data directory: removes leftovers of
/// unfinished writes and SSTables a finished compaction replaced, over all of them at once
/// (`sstable::cleanup_leftovers_in`), then opens the rest.
pub(super) fn open_store(config: &StorageConfig, def: CfDef, cache: &Arc<BlockCache>) -> Result<ColumnFamilyStore> {
    let dirs: Vec<PathBuf> =
        config.data_dirs().iter().map(|d| crate::directories::cf_dir(d, &def.keyspace, &def.name, def.id)).collect();
    for dir in &dirs {
        std::fs::create_dir_all(dir).map_err(|e| StorageError::io(dir, e))?;
    }
    sstable::cleanup_leftovers_in(&dirs)?;
    let mut readers: Vec<Arc<SsTableReader>> = Vec::new();
    for dir in &dirs {
        for desc in sstable::list_sstables(dir)? {
            if let Some(other) = readers.iter().find(|r| r.descriptor().generation == desc.generation) {
                // Not written by this engine (generations are unique over the directories); a
                // copy put there by hand. Both are read; the warning says why a count is off.
                warn!(first = %other.descriptor().dir.display(), second = %dir.display(), generation = desc.generation,
                      "the same SSTable generation is in two data directories");
            }
            readers.push(Arc::new(SsTableReader::open(desc, cache)?));
        }
    }
    ColumnFamilyStore::open_in(def, dirs, config.free_space, readers)
}
