//! The SSTables flushes and compactions write follow the engine's configuration: the column
//! index granularity (`column_index_size`, 0.6's `ColumnIndexSizeInKB`) and the warning for
//! large partitions (`large_partition_warning`, 0.6's `RowWarningThresholdInMB`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use super::{Storage, StorageConfig};
use crate::data::Cell;
use crate::mutation::RowMutation;
use crate::sstable::{format, Component, SsTableReader};

/// Bytes of value per cell; the wide partition's cells take a little more each, encoded.
const VALUE_BYTES: usize = 300;
/// Cells of the wide partition: about 20 KiB, under the default 64 KiB column index size.
const WIDE_CELLS: usize = 64;

fn config(dir: &Path) -> StorageConfig {
    super::tests_flush::config_with(dir, &["cf"])
}

/// Writes the wide partition `wide` (at `timestamp`) and the one-cell partition `narrow`.
fn put_wide_and_narrow(s: &Storage, timestamp: i64) {
    let mut m = RowMutation::new("ks", b"wide".to_vec());
    for i in 0..WIDE_CELLS {
        m.row_mut("cf").cells.push(Cell::live(format!("c{i:03}"), vec![b'v'; VALUE_BYTES], timestamp));
    }
    s.apply(m).expect("applied");
    let mut m = RowMutation::new("ks", b"narrow".to_vec());
    m.row_mut("cf").cells.push(Cell::live("c", b"v".to_vec(), timestamp));
    s.apply(m).expect("applied");
}

/// Each partition key of the SSTable with its column index blocks (first name, size), read
/// from the Summary and Index components as a reader finds them.
fn column_indexes(sstable: &SsTableReader) -> BTreeMap<Vec<u8>, Vec<(Vec<u8>, u64)>> {
    let desc = sstable.descriptor();
    let summary =
        format::read_sealed(&desc.path(Component::Summary), format::SUMMARY_MAGIC, desc.version).expect("summary");
    let (_, blocks) = format::decode_summary(&summary).expect("summary decodes");
    let index = std::fs::read(desc.path(Component::Index)).expect("index");
    let mut found = BTreeMap::new();
    for b in blocks {
        let bytes = &index[b.block_offset as usize..(b.block_offset + b.block_size) as usize];
        let block = format::verify_index_block(bytes, b.block_offset).expect("index block");
        for i in 0..block.count {
            let entry = block.entry(i).expect("entry");
            let columns = format::decode_column_blocks(entry.columns).expect("column blocks");
            found.insert(entry.key.to_vec(), columns.into_iter().map(|c| (c.first_name, c.size)).collect());
        }
    }
    found
}

/// The single SSTable of `ks.cf`.
fn only_sstable(s: &Storage) -> Arc<SsTableReader> {
    let sstables = s.store("ks", "cf").expect("store").sstables();
    assert_eq!(sstables.len(), 1);
    sstables[0].clone()
}

/// Checks that the wide partition is indexed in blocks of about `granularity` bytes and the
/// narrow one not at all.
fn assert_indexed_at(sstable: &SsTableReader, granularity: u64) {
    let indexes = column_indexes(sstable);
    assert_eq!(indexes.get(&b"narrow"[..]).map(Vec::len), Some(0), "a one-cell partition has no column index");
    let wide = indexes.get(&b"wide"[..]).expect("wide partition indexed");
    let cell = (VALUE_BYTES + 64) as u64;
    assert!(wide.len() as u64 >= (WIDE_CELLS * VALUE_BYTES) as u64 / (granularity + cell), "{wide:?}");
    let (last, full) = wide.split_last().expect("blocks");
    for (_, size) in full {
        // A block closes at the first cell that takes it to the granularity.
        assert!((granularity..granularity + cell).contains(size), "block of {size} bytes: {wide:?}");
    }
    assert!(last.1 > 0 && last.1 < granularity + cell);
    assert_eq!(full.first().map_or(&last.0, |(name, _)| name).as_slice(), b"c000");
}

/// Warning messages logged while it is the thread's default subscriber.
#[derive(Clone, Default)]
struct Warnings(Arc<Mutex<Vec<String>>>);

impl Warnings {
    fn during<T>(&self, f: impl FnOnce() -> T) -> T {
        tracing::subscriber::with_default(self.clone(), f)
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock())
    }
}

struct Message<'a>(&'a mut String);

impl tracing::field::Visit for Message<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            *self.0 = format!("{value:?}");
        }
    }
}

impl tracing::Subscriber for Warnings {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        *metadata.level() == tracing::Level::WARN
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut message = String::new();
        event.record(&mut Message(&mut message));
        self.0.lock().push(message);
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

fn large_partition_warnings(warnings: &Warnings) -> Vec<String> {
    warnings.take().into_iter().filter(|w| w.starts_with("large partition")).collect()
}

#[test]
fn flush_and_compaction_index_columns_at_the_configured_size() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = config(dir.path());
    c.column_index_size = 1024;
    let s = Storage::open(c).expect("opens");
    put_wide_and_narrow(&s, 1);
    s.flush("ks", "cf").expect("flush");
    assert_indexed_at(&only_sstable(&s), 1024);

    put_wide_and_narrow(&s, 2);
    s.flush("ks", "cf").expect("flush");
    s.major_compact("ks", "cf").expect("compaction");
    assert_indexed_at(&only_sstable(&s), 1024);
    s.shutdown().expect("shutdown");
}

#[test]
fn by_default_a_20_kib_partition_has_no_column_index() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Storage::open(config(dir.path())).expect("opens");
    put_wide_and_narrow(&s, 1);
    s.flush("ks", "cf").expect("flush");
    let indexes = column_indexes(&only_sstable(&s));
    assert_eq!(indexes.get(&b"wide"[..]).map(Vec::len), Some(0), "{indexes:?}");
    s.shutdown().expect("shutdown");
}

#[test]
fn flush_and_compaction_warn_of_partitions_over_the_threshold() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = config(dir.path());
    c.large_partition_warning = 8 * 1024;
    let s = Storage::open(c).expect("opens");
    let warnings = Warnings::default();

    put_wide_and_narrow(&s, 1);
    warnings.during(|| s.flush("ks", "cf")).expect("flush");
    let logged = large_partition_warnings(&warnings);
    // Only the wide partition, named by keyspace, column family, key in hex and size.
    assert_eq!(logged.len(), 1, "{logged:?}");
    let size = only_sstable(&s).metadata().data_size;
    assert!(logged[0].starts_with(&format!("large partition ks/cf:{} (", hex::encode("wide"))), "{logged:?}");
    let bytes: u64 = logged[0]
        .split(" (")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no size in {logged:?}"));
    assert!(bytes > 8 * 1024 && bytes < size, "{bytes} of {size}");

    put_wide_and_narrow(&s, 2);
    s.flush("ks", "cf").expect("flush");
    warnings.during(|| s.major_compact("ks", "cf")).expect("compaction");
    let logged = large_partition_warnings(&warnings);
    assert_eq!(logged.len(), 1, "compaction warns too: {logged:?}");
    assert!(logged[0].contains(&format!("ks/cf:{}", hex::encode("wide"))), "{logged:?}");
    s.shutdown().expect("shutdown");
}

#[test]
fn partitions_under_the_threshold_are_not_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Storage::open(config(dir.path())).expect("opens");
    let warnings = Warnings::default();
    put_wide_and_narrow(&s, 1);
    warnings.during(|| s.flush("ks", "cf")).expect("flush");
    assert_eq!(large_partition_warnings(&warnings), Vec::<String>::new());
    s.shutdown().expect("shutdown");
}
