//! Schema agreement between engines: schema changes made on any engine, exchanged as schema
//! table mutations in any order, end in the same schema and the same version everywhere; dropped
//! definitions stay dropped; data in the old schema layout is converted.
#![expect(clippy::unwrap_used, reason = "test")]

use std::path::Path;

use model::data::{now_seconds, Cell, DeletionTime};
use model::dht::Partitioner;
use model::filter::ReadFilter;
use model::mutation::RowMutation;
use model::schema::{CfDef, KeyspaceDef};
use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use storage::engine::{Storage, StorageConfig};
use storage::system::schema_tables;
use storage::StorageError;

fn config(dir: &Path, initial: Vec<KeyspaceDef>) -> StorageConfig {
    let mut c = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    c.partitioner = Partitioner::Murmur3;
    c.auto_compaction = false;
    c.segment_size = 1 << 20;
    c.initial_keyspaces = initial;
    c
}

fn open(dir: &Path) -> Storage {
    Storage::open(config(dir, Vec::new())).unwrap()
}

fn keyspace(name: &str, cfs: &[&str]) -> KeyspaceDef {
    let mut ks = KeyspaceDef::new(name);
    ks.cf_defs = cfs.iter().map(|cf| CfDef::new(name, *cf)).collect();
    ks
}

fn put(s: &Storage, ks: &str, cf: &str, key: &str, value: &str) {
    let mut m = RowMutation::new(ks, key.as_bytes().to_vec());
    m.row_mut(cf).cells.push(Cell::live(&b"c"[..], value.as_bytes().to_vec(), 1));
    s.apply(m).unwrap();
}

fn get(s: &Storage, ks: &str, cf: &str, key: &str) -> Vec<Vec<u8>> {
    s.read(ks, cf, key.as_bytes(), &ReadFilter::all()).unwrap().into_iter().map(|c| c.value).collect()
}

/// Every engine merges every other's rows (taken before any merge), each in its own order.
fn exchange_all(nodes: &[Storage], seed: u64) {
    let rows: Vec<Vec<RowMutation>> = nodes.iter().map(|n| n.schema_mutations().unwrap()).collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for (i, node) in nodes.iter().enumerate() {
        let mut order: Vec<usize> = (0..nodes.len()).filter(|j| *j != i).collect();
        order.shuffle(&mut rng);
        for j in order {
            node.merge_schema(rows[j].clone()).unwrap();
        }
    }
}

fn assert_agree(nodes: &[Storage]) {
    let first = nodes[0].schema();
    for (i, n) in nodes.iter().enumerate() {
        let schema = n.schema();
        assert_eq!(schema.keyspaces, first.keyspaces, "node {i} disagrees on the definitions");
        assert_eq!(schema.version, first.version, "node {i} disagrees on the version");
        assert_eq!(schema.version, schema_tables::schema_version(&schema.keyspaces).unwrap());
        // The stores match the definitions: every column family takes writes.
        let mut expected: Vec<(String, String)> = schema
            .keyspaces
            .values()
            .flat_map(|k| k.cf_defs.iter().map(|c| (c.keyspace.clone(), c.name.clone())))
            .collect();
        expected.sort();
        assert_eq!(n.column_families(), expected, "node {i}'s stores differ from its schema");
        for (ks, cf) in expected.iter().filter(|(ks, _)| ks != "system") {
            put(n, ks, cf, "probe", "v");
            assert_eq!(get(n, ks, cf, "probe"), vec![b"v".to_vec()]);
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    AddKeyspace {
        node: usize,
        ks: usize,
    },
    UpdateKeyspace {
        node: usize,
        ks: usize,
        durable: bool,
    },
    DropKeyspace {
        node: usize,
        ks: usize,
    },
    AddCf {
        node: usize,
        ks: usize,
        cf: usize,
    },
    UpdateCf {
        node: usize,
        ks: usize,
        cf: usize,
        gc_grace: i32,
    },
    DropCf {
        node: usize,
        ks: usize,
        cf: usize,
    },
    /// `to` merges what `from` has now (a partial exchange, as gossip would do).
    Exchange {
        from: usize,
        to: usize,
    },
}

const NODES: usize = 3;

fn op() -> impl Strategy<Value = Op> {
    let n = 0..NODES;
    prop_oneof![
        (n.clone(), 0..3usize).prop_map(|(node, ks)| Op::AddKeyspace { node, ks }),
        (n.clone(), 0..3usize, any::<bool>()).prop_map(|(node, ks, durable)| Op::UpdateKeyspace { node, ks, durable }),
        (n.clone(), 0..3usize).prop_map(|(node, ks)| Op::DropKeyspace { node, ks }),
        (n.clone(), 0..3usize, 0..3usize).prop_map(|(node, ks, cf)| Op::AddCf { node, ks, cf }),
        (n.clone(), 0..3usize, 0..3usize, 1..1000i32).prop_map(|(node, ks, cf, gc_grace)| Op::UpdateCf {
            node,
            ks,
            cf,
            gc_grace
        }),
        (n.clone(), 0..3usize, 0..3usize).prop_map(|(node, ks, cf)| Op::DropCf { node, ks, cf }),
        (n.clone(), n).prop_map(|(from, to)| Op::Exchange { from, to }),
    ]
}

/// Errors a change may meet because of what this node knows now; anything else is a bug.
fn expected_refusal(e: &StorageError) -> bool {
    matches!(
        e,
        StorageError::UnknownKeyspace(_)
            | StorageError::UnknownColumnFamily { .. }
            | StorageError::KeyspaceExists { .. }
            | StorageError::ColumnFamilyExists { .. }
    )
}

fn run(nodes: &[Storage], op: &Op) {
    let name = |ks: usize| format!("ks{ks}");
    let cf_name = |cf: usize| format!("cf{cf}");
    let result = match op {
        Op::AddKeyspace { node, ks } => nodes[*node].add_keyspace(keyspace(&name(*ks), &["base"])),
        Op::UpdateKeyspace { node, ks, durable } => {
            let mut def = KeyspaceDef::new(name(*ks));
            def.durable_writes = *durable;
            nodes[*node].update_keyspace(def)
        }
        Op::DropKeyspace { node, ks } => nodes[*node].drop_keyspace(&name(*ks)),
        Op::AddCf { node, ks, cf } => nodes[*node].add_column_family(CfDef::new(name(*ks), cf_name(*cf))),
        Op::UpdateCf { node, ks, cf, gc_grace } => {
            match nodes[*node].keyspace(&name(*ks)).and_then(|k| k.cf(&cf_name(*cf)).cloned()) {
                Some(mut def) => {
                    def.gc_grace_seconds = *gc_grace;
                    nodes[*node].update_column_family(def)
                }
                None => return,
            }
        }
        Op::DropCf { node, ks, cf } => nodes[*node].drop_column_family(&name(*ks), &cf_name(*cf)),
        Op::Exchange { from, to } => nodes[*to].merge_schema(nodes[*from].schema_mutations().unwrap()),
    };
    if let Err(e) = result {
        assert!(expected_refusal(&e), "{op:?} failed: {e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn engines_exchanging_schema_rows_in_any_order_converge(
        ops in proptest::collection::vec(op(), 1..14),
        seed in any::<u64>(),
    ) {
        let dirs: Vec<tempfile::TempDir> = (0..NODES).map(|_| tempfile::tempdir().unwrap()).collect();
        let nodes: Vec<Storage> = dirs.iter().map(|d| open(d.path())).collect();
        for op in &ops {
            run(&nodes, op);
        }
        exchange_all(&nodes, seed);
        assert_agree(&nodes);

        // Merging again changes nothing.
        let version = nodes[0].schema_version();
        for n in &nodes[1..] {
            prop_assert_eq!(nodes[0].merge_schema(n.schema_mutations().unwrap()).unwrap(), version);
        }
        // The version is a function of the content: it survives a restart.
        let keyspaces = nodes[0].schema().keyspaces;
        for n in &nodes {
            n.shutdown().unwrap();
        }
        drop(nodes);
        let reopened = open(dirs[0].path());
        prop_assert_eq!(reopened.schema_version(), version);
        prop_assert_eq!(reopened.schema().keyspaces, keyspaces);
        reopened.shutdown().unwrap();
    }
}

#[test]
fn concurrent_changes_to_one_keyspace_keep_both() {
    let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b) = (open(da.path()), open(db.path()));
    a.add_keyspace(keyspace("ks", &["shared"])).unwrap();
    b.merge_schema(a.schema_mutations().unwrap()).unwrap();
    assert_eq!(a.schema_version(), b.schema_version());

    // Before hearing of each other: a adds a column family, b drops one and changes the keyspace.
    a.add_column_family(CfDef::new("ks", "from_a")).unwrap();
    b.drop_column_family("ks", "shared").unwrap();
    let mut attributes = KeyspaceDef::new("ks");
    attributes.durable_writes = false;
    b.update_keyspace(attributes).unwrap();
    assert_ne!(a.schema_version(), b.schema_version());

    let (rows_a, rows_b) = (a.schema_mutations().unwrap(), b.schema_mutations().unwrap());
    let va = a.merge_schema(rows_b).unwrap();
    let vb = b.merge_schema(rows_a).unwrap();
    assert_eq!(va, vb);
    let ks = a.keyspace("ks").unwrap();
    let names: Vec<&str> = ks.cf_defs.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, vec!["from_a"]);
    assert!(!ks.durable_writes);
    assert_eq!(b.keyspace("ks").unwrap(), ks);
    // b opened a store for the merged column family.
    put(&b, "ks", "from_a", "k", "v");
    assert_eq!(get(&b, "ks", "from_a", "k"), vec![b"v".to_vec()]);
    a.shutdown().unwrap();
    b.shutdown().unwrap();
}

#[test]
fn a_dropped_keyspace_stays_dropped_when_an_old_node_sends_its_rows() {
    let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b) = (open(da.path()), open(db.path()));
    a.add_keyspace(keyspace("doomed", &["cf"])).unwrap();
    a.add_keyspace(keyspace("kept", &["cf"])).unwrap();
    b.merge_schema(a.schema_mutations().unwrap()).unwrap();
    put(&b, "doomed", "cf", "k", "v");
    b.flush("doomed", "cf").unwrap();
    let old_rows = b.schema_mutations().unwrap();

    a.drop_keyspace("doomed").unwrap();
    a.drop_column_family("kept", "cf").unwrap();
    let version = a.schema_version();
    // The old node pushes what it has: nothing comes back.
    assert_eq!(a.merge_schema(old_rows).unwrap(), version);
    assert!(a.keyspace("doomed").is_none());
    assert!(a.keyspace("kept").unwrap().cf_defs.is_empty());

    // The old node learns of the drops: its store and files go, but for the snapshot
    // AutoSnapshot takes of what it held.
    assert_eq!(b.merge_schema(a.schema_mutations().unwrap()).unwrap(), version);
    assert!(b.keyspace("doomed").is_none());
    assert!(matches!(b.read("doomed", "cf", b"k", &ReadFilter::all()), Err(StorageError::UnknownKeyspace(_))));
    let kept = b.list_snapshots(Some("doomed")).unwrap();
    assert!(kept.len() == 1 && kept[0].tag.ends_with("-dropped-cf"), "{kept:?}");
    let outside_snapshots = files_outside_snapshots(&db.path().join("data").join("doomed"));
    assert!(outside_snapshots.is_empty(), "the dropped keyspace's files are still there: {outside_snapshots:?}");

    // Still dropped after a restart, and after the old rows arrive again.
    a.shutdown().unwrap();
    drop(a);
    let a = open(da.path());
    assert!(a.keyspace("doomed").is_none());
    let before_drop = {
        let dc = tempfile::tempdir().unwrap();
        let c = open(dc.path());
        c.add_keyspace(keyspace("doomed", &["cf"])).unwrap();
        let rows = c.schema_mutations().unwrap();
        c.shutdown().unwrap();
        rows
    };
    // A keyspace of the same name created later elsewhere is a new keyspace: it does come in.
    a.merge_schema(before_drop).unwrap();
    assert!(a.keyspace("doomed").is_some());
    a.shutdown().unwrap();
    b.shutdown().unwrap();
}

#[test]
fn a_new_node_s_configured_keyspaces_do_not_undo_the_cluster_s_changes() {
    // The same storage-conf.xml on every node: the same definitions, the same ids.
    let initial = vec![keyspace("conf", &["kept", "doomed"])];
    let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Storage::open(config(da.path(), initial.clone())).unwrap();
    a.drop_column_family("conf", "doomed").unwrap();
    let mut attributes = KeyspaceDef::new("conf");
    attributes.durable_writes = false;
    a.update_keyspace(attributes).unwrap();
    let version = a.schema_version();

    // A node starting for the first time with the file (a new node, or one whose data was
    // wiped) has the file's schema until it hears from the cluster; then the cluster's.
    let b = Storage::open(config(db.path(), initial)).unwrap();
    assert_eq!(b.keyspace("conf").unwrap().cf_defs.len(), 2);
    assert_eq!(b.merge_schema(a.schema_mutations().unwrap()).unwrap(), version);
    assert_eq!(a.merge_schema(b.schema_mutations().unwrap()).unwrap(), version, "the file's rows changed the cluster");
    let ks = a.keyspace("conf").unwrap();
    assert_eq!(ks.cf_defs.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), vec!["kept"]);
    assert!(!ks.durable_writes);
    assert_eq!(b.keyspace("conf").unwrap(), ks);
    a.shutdown().unwrap();
    b.shutdown().unwrap();
}

#[test]
fn a_configuration_that_no_longer_matches_the_schema_is_reported() {
    let mut initial = vec![keyspace("conf", &["a", "b"])];
    // An index without a name: the engine names it, which is no difference.
    initial[0].cf_defs[0].column_metadata.push(model::schema::ColumnDef {
        name: b"state".to_vec(),
        validation_class: "org.apache.cassandra.db.marshal.BytesType".into(),
        index_type: Some(model::schema::IndexType::Keys),
        index_name: None,
        index_options: Default::default(),
    });
    let d = tempfile::tempdir().unwrap();
    let s = Storage::open(config(d.path(), initial.clone())).unwrap();
    assert_eq!(s.configured_schema_drift(), Vec::<String>::new(), "first start");
    s.shutdown().unwrap();
    drop(s);
    let s = Storage::open(config(d.path(), initial.clone())).unwrap();
    assert_eq!(s.configured_schema_drift(), Vec::<String>::new(), "an unchanged file and schema");

    // The schema changed through the API: the file no longer says what is in effect.
    s.drop_column_family("conf", "b").unwrap();
    let notes = s.configured_schema_drift();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("keyspace conf differs from its definition in the configuration"), "{notes:?}");
    assert!(notes[0].contains("read only at a node's first start"), "{notes:?}");
    s.drop_keyspace("conf").unwrap();
    let notes = s.configured_schema_drift();
    assert!(
        notes.len() == 1 && notes[0].starts_with("keyspace conf of the configuration is not in the schema"),
        "{notes:?}"
    );
    s.shutdown().unwrap();
}

#[test]
fn merging_refuses_anything_but_schema_rows() {
    let d = tempfile::tempdir().unwrap();
    let s = open(d.path());
    s.add_keyspace(keyspace("ks", &["cf"])).unwrap();
    let version = s.schema_version();

    let mut user_data = RowMutation::new("ks", b"k".to_vec());
    user_data.row_mut("cf").cells.push(Cell::live("c", "v", 1));
    let mut local_row = RowMutation::new("system", b"local".to_vec());
    local_row.row_mut("local").deletion = DeletionTime::new(i64::MAX, now_seconds());
    let mut bad_key = RowMutation::new("system", b"not a keyspace".to_vec());
    bad_key.row_mut("schema_keyspaces").deletion = DeletionTime::new(1, now_seconds());
    let mut drop_ks = RowMutation::new("system", b"ks".to_vec());
    drop_ks.row_mut("schema_keyspaces").deletion = DeletionTime::new(i64::MAX - 1, now_seconds());
    for bad in [user_data, local_row, bad_key] {
        let err = s.merge_schema(vec![drop_ks.clone(), bad]).unwrap_err();
        assert!(matches!(err, StorageError::InvalidSchemaMutation { .. }), "{err}");
    }
    // Nothing of a refused batch was applied.
    assert_eq!(s.schema_version(), version);
    assert!(s.keyspace("ks").is_some());
    s.shutdown().unwrap();
}

#[test]
fn same_definitions_give_the_same_version_on_fresh_engines() {
    let def = keyspace("ks", &["a", "b"]);
    let mut reordered = def.clone();
    reordered.cf_defs.reverse();
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let one = Storage::open(config(d1.path(), vec![def])).unwrap();
    let two = open(d2.path());
    let empty = two.schema_version();
    two.add_keyspace(reordered).unwrap();
    assert_eq!(one.schema_version(), two.schema_version());
    assert_ne!(one.schema_version(), empty);
    assert_eq!(one.local_state().schema_version, one.schema_version());
    one.shutdown().unwrap();
    two.shutdown().unwrap();
}

/// Data written by the layout before schema tables: `schema_keyspaces` rows with one JSON
/// `definition` column per keyspace, and a single `token` in `local`. Rebuilt here by writing
/// those columns over a current engine's rows (deleting what the current layout wrote).
#[test]
fn the_old_schema_layout_converts_on_start() {
    let d = tempfile::tempdir().unwrap();
    let old = keyspace("legacy", &["cf", "other"]);
    let s = Storage::open(config(d.path(), vec![old.clone()])).unwrap();
    put(&s, "legacy", "cf", "k", "kept");
    let now = now_seconds();
    // Newer than anything the engine wrote so far.
    let ts = model::data::now_micros() + 1_000;
    let mut m = RowMutation::new("system", b"legacy".to_vec());
    m.row_mut("schema_keyspaces").deletion = DeletionTime::new(ts, now);
    m.row_mut("schema_columnfamilies").deletion = DeletionTime::new(ts, now);
    s.apply(m).unwrap();
    let mut m = RowMutation::new("system", b"legacy".to_vec());
    m.row_mut("schema_keyspaces").cells.push(Cell::live("definition", serde_json::to_vec(&old).unwrap(), ts + 1));
    s.apply(m).unwrap();
    let mut m = RowMutation::new("system", b"local".to_vec());
    m.row_mut("local").cells = vec![Cell::live("token", "1234", ts + 2), Cell::tombstone("tokens", ts + 2, now)];
    s.apply(m).unwrap();
    s.abandon(); // no clean shutdown: the old rows come back from the commit log

    let s = open(d.path());
    let mut expected = old.clone();
    expected.cf_defs.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(s.keyspace("legacy"), Some(expected.clone()));
    assert_eq!(get(&s, "legacy", "cf", "k"), vec![b"kept".to_vec()]);
    assert_eq!(s.saved_token().as_deref(), Some("1234"));
    assert_eq!(s.local_state().tokens, vec!["1234".to_string()]);
    let version = s.schema_version();
    let map = [(expected.name.clone(), expected.clone())].into_iter().collect();
    assert_eq!(version, schema_tables::schema_version(&map).unwrap());
    // Converted rows are exchangeable: a fresh engine takes the keyspace from them.
    let fresh_dir = tempfile::tempdir().unwrap();
    let fresh = open(fresh_dir.path());
    assert_eq!(fresh.merge_schema(s.schema_mutations().unwrap()).unwrap(), version);
    fresh.shutdown().unwrap();
    s.shutdown().unwrap();
    s.abandon();

    let s = open(d.path());
    assert_eq!(s.keyspace("legacy"), Some(expected));
    assert_eq!(s.schema_version(), version);
    s.shutdown().unwrap();
}

/// The files under `dir` that are not in a `snapshots` directory.
fn files_outside_snapshots(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().unwrap() != storage::engine::SNAPSHOTS_DIR {
                found.extend(files_outside_snapshots(&path));
            }
        } else {
            found.push(path);
        }
    }
    found
}
