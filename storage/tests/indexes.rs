//! KEYS secondary indexes in the engine: kept up to date by inserts, overwrites, deletions and
//! TTLs (a stale entry never shows), durable across a crash, a restart and compaction, built in
//! the background for rows that existed before the index, and dropped with their files.
#![expect(clippy::unwrap_used, reason = "test")]

use std::path::Path;
use std::time::{Duration, Instant};

use model::data::{now_seconds, Cell, DeletionTime};
use model::dht::{KeyBound, Partitioner};
use model::filter::{collect_live, CountUnit, ReadFilter};
use model::mutation::RowMutation;
use model::schema::{CfDef, ColumnDef, IndexType, KeyspaceDef};
use storage::engine::{Storage, StorageConfig};
use storage::index::{IndexExpression, IndexOperator};

mod common;

const UTF8: &str = "org.apache.cassandra.db.marshal.UTF8Type";
const LONG: &str = "org.apache.cassandra.db.marshal.LongType";

fn column(name: &str, validation: &str, indexed: bool) -> ColumnDef {
    ColumnDef {
        name: name.as_bytes().to_vec(),
        validation_class: validation.into(),
        index_type: indexed.then_some(IndexType::Keys),
        index_name: None,
        index_options: Default::default(),
    }
}

fn users(indexed: bool) -> CfDef {
    let mut cf = CfDef::new("ks", "users");
    cf.comparator_type = UTF8.into();
    cf.column_metadata = vec![column("user_name", UTF8, indexed), column("age", LONG, false)];
    cf
}

fn config(dir: &Path, indexed: bool) -> StorageConfig {
    let mut c = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    c.partitioner = Partitioner::Murmur3;
    c.auto_compaction = false;
    let mut ks = KeyspaceDef::new("ks");
    ks.cf_defs.push(users(indexed));
    c.initial_keyspaces = vec![ks];
    c
}

/// Writes `cells` (sorted by name, as the engine expects) to row `key`.
fn put(s: &Storage, key: &str, cells: Vec<Cell>) {
    let mut m = RowMutation::new("ks", key.as_bytes().to_vec());
    m.row_mut("users").cells = cells;
    s.apply(m).unwrap();
}

fn set_name(s: &Storage, key: &str, value: &str, ts: i64) {
    put(s, key, vec![Cell::live("user_name", value, ts)]);
}

/// The keys whose rows the engine finds for `expressions`, in the order returned, with the value
/// of `user_name` each carries (checked to be the one asked for when there is an EQ on it).
fn search(s: &Storage, expressions: &[IndexExpression], start: &KeyBound, max: usize) -> Vec<String> {
    let meta = s.cf_metadata("ks", "users").unwrap();
    let rows = s.search("ks", "users", start, &KeyBound::Unbounded, expressions, &ReadFilter::all(), max).unwrap();
    let now = now_seconds();
    let mut keys = Vec::new();
    for (key, row) in rows {
        let cells = collect_live(&meta.cmp, &row, &ReadFilter::all(), now);
        for e in expressions.iter().filter(|e| e.op == IndexOperator::Eq) {
            let held = cells.iter().find(|c| c.name == e.column).map(|c| c.value.clone());
            assert_eq!(held.as_deref(), Some(e.value.as_slice()), "a returned row does not match");
        }
        keys.push(String::from_utf8(key.key).unwrap());
    }
    keys
}

fn eq(value: &str) -> Vec<IndexExpression> {
    vec![IndexExpression::new("user_name", IndexOperator::Eq, value)]
}

fn by_name(s: &Storage, value: &str) -> Vec<String> {
    let mut keys = search(s, &eq(value), &KeyBound::Unbounded, 10_000);
    keys.sort();
    keys
}

fn wait_built(s: &Storage, limit: Duration) {
    let started = Instant::now();
    loop {
        let status = s.index_status(Some("ks"));
        if status.iter().all(|i| i.built) && !status.is_empty() {
            return;
        }
        assert!(started.elapsed() < limit, "index not built after {limit:?}: {status:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn inserts_overwrites_deletions_and_ttls_keep_the_index_exact() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path(), true)).unwrap();
    let status = s.index_status(None);
    assert_eq!(status.len(), 1);
    assert_eq!(status[0].index, "users_user_name_idx", "Cassandra's default name");
    assert!(status[0].built, "an index of an empty column family is built at once");

    for (k, v) in [("u1", "alice"), ("u2", "bob"), ("u3", "alice"), ("u4", "carol")] {
        set_name(&s, k, v, 10);
    }
    assert_eq!(by_name(&s, "alice"), ["u1", "u3"]);
    assert_eq!(by_name(&s, "bob"), ["u2"]);
    assert!(by_name(&s, "nobody").is_empty());

    // Overwrite: u1 is no longer alice.
    set_name(&s, "u1", "bob", 20);
    assert_eq!(by_name(&s, "alice"), ["u3"]);
    assert_eq!(by_name(&s, "bob"), ["u1", "u2"]);
    // An older write loses to the newer value: no entry makes it show.
    set_name(&s, "u1", "alice", 15);
    assert_eq!(by_name(&s, "alice"), ["u3"]);
    // The value comes back, newer: found again (the stale entry's clean-up did not hide it).
    set_name(&s, "u1", "alice", 30);
    assert_eq!(by_name(&s, "alice"), ["u1", "u3"]);

    // Column deletion and row deletion.
    put(&s, "u3", vec![Cell::tombstone("user_name", 40, now_seconds())]);
    assert_eq!(by_name(&s, "alice"), ["u1"]);
    let mut m = RowMutation::new("ks", b"u2".to_vec());
    m.row_mut("users").deletion = DeletionTime::new(40, now_seconds());
    s.apply(m).unwrap();
    assert!(by_name(&s, "bob").is_empty(), "u1 was overwritten to alice, u2 deleted");

    // TTL: the entry expires with the column.
    put(&s, "u5", vec![Cell::expiring("user_name", "dave", 50, 1, now_seconds())]);
    assert_eq!(by_name(&s, "dave"), ["u5"]);
    std::thread::sleep(Duration::from_millis(2100));
    assert!(by_name(&s, "dave").is_empty(), "an expired column's row was returned");

    // The same, after a flush: the entries and the data come from SSTables.
    s.flush("ks", "users").unwrap();
    assert_eq!(by_name(&s, "alice"), ["u1"]);
    assert_eq!(by_name(&s, "carol"), ["u4"]);
    set_name(&s, "u4", "erin", 60);
    assert!(by_name(&s, "carol").is_empty());
    assert_eq!(by_name(&s, "erin"), ["u4"]);
    s.shutdown().unwrap();
}

#[test]
fn results_come_in_token_order_page_by_start_key_and_filter_further_expressions() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path(), true)).unwrap();
    for i in 0..50i64 {
        let name = if i % 2 == 0 { "even" } else { "odd" };
        put(&s, &format!("k{i:02}"), vec![Cell::live("age", i.to_be_bytes(), 1), Cell::live("user_name", name, 1)]);
    }
    s.flush("ks", "users").unwrap();
    let all = search(&s, &eq("even"), &KeyBound::Unbounded, 1000);
    assert_eq!(all.len(), 25);
    let tokens: Vec<_> = all.iter().map(|k| Partitioner::Murmur3.decorate(k.as_bytes())).collect();
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "not in token order");

    // Pages of 7, each starting at the last key of the previous one (inclusive, as Thrift does).
    let mut paged: Vec<String> = Vec::new();
    let mut start = KeyBound::Unbounded;
    loop {
        let page = search(&s, &eq("even"), &start, 7);
        let fresh: Vec<String> = page.iter().filter(|k| paged.last() != Some(k)).cloned().collect();
        if fresh.is_empty() {
            break;
        }
        paged.extend(fresh);
        let last = page.last().unwrap();
        start = KeyBound::Key { key: Partitioner::Murmur3.decorate(last.as_bytes()), inclusive: true };
    }
    assert_eq!(paged, all);

    // Further expressions compare by the column's validator (LongType).
    let age = |op, v: i64| IndexExpression::new("age", op, v.to_be_bytes().to_vec());
    let mut e = eq("even");
    e.push(age(IndexOperator::Gte, 10));
    e.push(age(IndexOperator::Lt, 20));
    let mut found = search(&s, &e, &KeyBound::Unbounded, 1000);
    found.sort();
    assert_eq!(found, ["k10", "k12", "k14", "k16", "k18"]);
    let mut gt = eq("odd");
    gt.push(age(IndexOperator::Gt, 45));
    let mut found = search(&s, &gt, &KeyBound::Unbounded, 1000);
    found.sort();
    assert_eq!(found, ["k47", "k49"]);
    let mut lte = eq("odd");
    lte.push(age(IndexOperator::Lte, 3));
    let mut found = search(&s, &lte, &KeyBound::Unbounded, 1000);
    found.sort();
    assert_eq!(found, ["k01", "k03"]);

    // The answer carries what the filter selects, plus the expressions' columns.
    let only_age =
        ReadFilter::names(&s.cf_metadata("ks", "users").unwrap().cmp, vec![b"age".to_vec()], CountUnit::Cells);
    let rows = s.search("ks", "users", &KeyBound::Unbounded, &KeyBound::Unbounded, &eq("odd"), &only_age, 3).unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|(_, r)| r.cells.iter().any(|c| c.name == b"user_name")));
    s.shutdown().unwrap();
}

#[test]
fn the_index_survives_a_crash_a_restart_and_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path(), true)).unwrap();
    for i in 0..100 {
        set_name(&s, &format!("a{i}"), if i % 10 == 0 { "ten" } else { "other" }, 1);
    }
    s.flush("ks", "users").unwrap();
    for i in 0..100 {
        set_name(&s, &format!("b{i}"), if i % 10 == 0 { "ten" } else { "other" }, 1);
    }
    set_name(&s, "a0", "moved", 2); // in the commit log only: the SSTable's entry is stale
    s.abandon(); // a crash: the commit log is replayed
    let s = Storage::open(config(dir.path(), true)).unwrap();
    assert!(s.index_status(None).iter().all(|i| i.built));
    let ten = by_name(&s, "ten");
    assert_eq!(ten.len(), 19, "{ten:?}");
    assert_eq!(by_name(&s, "moved"), ["a0"]);
    s.flush("ks", "users").unwrap();
    set_name(&s, "b10", "moved", 3);
    s.flush("ks", "users").unwrap();
    s.major_compact("ks", "users").unwrap();
    assert_eq!(by_name(&s, "ten").len(), 18);
    assert_eq!(by_name(&s, "moved"), ["a0", "b10"]);
    s.shutdown().unwrap();
    let s = Storage::open(config(dir.path(), true)).unwrap();
    assert_eq!(by_name(&s, "ten").len(), 18);
    assert_eq!(by_name(&s, "other").len(), 180);
    s.shutdown().unwrap();
}

#[test]
fn an_index_added_to_existing_rows_is_built_in_the_background_and_dropped_with_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path(), false)).unwrap();
    for i in 0..10_000 {
        set_name(&s, &format!("r{i}"), &format!("n{}", i % 100), 1);
        if i == 5_000 {
            s.flush("ks", "users").unwrap();
        }
    }
    assert!(s.index_status(None).is_empty());
    s.update_column_family(users(true)).unwrap();
    // Rows written while the build runs are indexed too.
    for i in 10_000..10_100 {
        set_name(&s, &format!("r{i}"), &format!("n{}", i % 100), 1);
    }
    wait_built(&s, Duration::from_secs(60));
    let status = s.index_status(None);
    assert!(status[0].rows_done >= 10_000 && status[0].rows_done == status[0].rows_total, "{status:?}");
    for n in [0, 7, 99] {
        assert_eq!(by_name(&s, &format!("n{n}")).len(), 101, "n{n}");
    }
    // Durable: a restart finds it built, without building again.
    s.shutdown().unwrap();
    let s = Storage::open(config(dir.path(), false)).unwrap();
    let status = s.index_status(None);
    assert!(status[0].built && !status[0].building, "{status:?}");
    assert_eq!(by_name(&s, "n42").len(), 101);

    let index_dir = s.cf_directory("ks", "users").unwrap().join(".users_user_name_idx");
    assert!(index_dir.join("Built").exists());
    s.update_column_family(users(false)).unwrap();
    assert!(s.index_status(None).is_empty());
    assert!(!index_dir.exists(), "a dropped index's files stay");
    // Without the index, a row filter still answers (by reading the rows).
    assert_eq!(by_name(&s, "n42").len(), 101);
    s.shutdown().unwrap();
}

#[test]
fn duplicate_index_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path(), true)).unwrap();
    let mut other = CfDef::new("ks", "songs");
    let mut c = column("user_name", UTF8, true);
    c.index_name = Some("users_user_name_idx".into());
    other.column_metadata = vec![c];
    let err = s.add_column_family(other).unwrap_err().to_string();
    assert!(err.contains("Duplicate index name users_user_name_idx"), "{err}");
    let mut bad = users(true);
    bad.column_metadata[0].index_name = Some("no spaces".into());
    let err = s.update_column_family(bad).unwrap_err().to_string();
    assert!(err.contains("Illegal index name"), "{err}");
    s.shutdown().unwrap();
}

#[test]
fn rebuild_index_replaces_a_damaged_index_by_one_built_from_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open(config(dir.path(), true)).unwrap();
    for i in 0..3000 {
        set_name(&s, &format!("k{i}"), &format!("name{}", i % 100), 1);
    }
    s.flush("ks", "users").unwrap();
    let index = s.index_status(Some("ks"))[0].index.clone();
    let cf_dir = s.cf_directory("ks", "users").unwrap();
    s.shutdown().unwrap();
    // Damage the index's Data file.
    let index_dir = cf_dir.join(format!(".{index}"));
    let data = common::damage_data_file_in(&index_dir);

    let s = Storage::open(config(dir.path(), true)).unwrap();
    let failing = (0..100)
        .filter(|i| {
            let expressions = eq(&format!("name{i}"));
            s.search("ks", "users", &KeyBound::Unbounded, &KeyBound::Unbounded, &expressions, &ReadFilter::all(), 100)
                .is_err()
        })
        .count();
    assert!(failing > 0, "the damage went unnoticed");

    assert!(matches!(
        s.rebuild_indexes("ks", "users", &["nope".to_string()]),
        Err(storage::StorageError::UnknownIndex { .. })
    ));
    assert_eq!(s.rebuild_indexes("ks", "users", &[]).unwrap(), std::slice::from_ref(&index));
    wait_built(&s, Duration::from_secs(30));
    for i in 0..100 {
        assert_eq!(by_name(&s, &format!("name{i}")).len(), 30, "name{i}");
    }
    assert!(!data.exists(), "the damaged index SSTable is gone");
    s.shutdown().unwrap();
    let s = Storage::open(config(dir.path(), true)).unwrap();
    assert!(s.index_status(None).iter().all(|i| i.built));
    assert_eq!(by_name(&s, "name7").len(), 30);
    s.shutdown().unwrap();
}
