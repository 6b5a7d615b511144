//! The node's state, its peers and its hints in the system keyspace: each survives a restart
//! (clean or not), the generation grows at every start, hints expire and never reach a dropped
//! column family.
#![expect(clippy::unwrap_used, reason = "test")]

use std::path::Path;
use std::time::Duration;

use model::data::Cell;
use model::dht::Partitioner;
use model::mutation::RowMutation;
use model::schema::{CfDef, KeyspaceDef};
use storage::engine::{PeerInfo, Storage, StorageConfig};
use storage::StorageError;
use uuid::Uuid;

fn config(dir: &Path) -> StorageConfig {
    let mut c = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    c.partitioner = Partitioner::Murmur3;
    c.auto_compaction = false;
    c.segment_size = 1 << 20;
    let mut ks = KeyspaceDef::new("ks");
    ks.cf_defs.push(CfDef::new("ks", "cf"));
    ks.cf_defs.push(CfDef::new("ks", "other"));
    let mut short = CfDef::new("ks", "short_grace");
    short.gc_grace_seconds = 1;
    ks.cf_defs.push(short);
    let mut none = CfDef::new("ks", "no_grace");
    none.gc_grace_seconds = 0;
    ks.cf_defs.push(none);
    c.initial_keyspaces = vec![ks];
    c
}

fn open(dir: &Path) -> Storage {
    Storage::open(config(dir)).unwrap()
}

fn mutation(key: &str, cfs: &[&str], value: &str) -> RowMutation {
    let mut m = RowMutation::new("ks", key.as_bytes().to_vec());
    for cf in cfs {
        m.row_mut(cf).cells.push(Cell::live(&b"c"[..], value.as_bytes().to_vec(), 7));
    }
    m
}

#[test]
fn local_state_survives_restarts_and_the_generation_grows() {
    let d = tempfile::tempdir().unwrap();
    let s = open(d.path());
    let first = s.local_state();
    assert!(!first.host_id.is_nil(), "no host id made at first start");
    assert!(first.tokens.is_empty());
    assert_eq!(first.cluster_name, None);
    assert!(first.generation >= model::data::now_seconds() - 5);
    s.save_tokens(vec!["10".into(), "20".into(), "30".into()]).unwrap();
    s.check_cluster_name("Test Cluster").unwrap();
    s.shutdown().unwrap();
    s.abandon();

    // Restarts within the same second still get a greater generation; a crash keeps the state.
    let s = open(d.path());
    let second = s.local_state();
    assert_eq!(second.host_id, first.host_id);
    assert_eq!(second.tokens, vec!["10".to_string(), "20".into(), "30".into()]);
    assert_eq!(second.cluster_name.as_deref(), Some("Test Cluster"));
    assert!(second.generation > first.generation, "{} then {}", first.generation, second.generation);
    s.check_cluster_name("Test Cluster").unwrap();
    s.abandon(); // no clean shutdown

    let s = open(d.path());
    let third = s.local_state();
    assert_eq!(third.host_id, first.host_id);
    assert!(third.generation > second.generation);
    // Gossip started again while the node runs takes a newer one, saved: the next start's is
    // newer still.
    let renewed = s.renew_generation().unwrap();
    assert!(renewed > third.generation, "{} then {renewed}", third.generation);
    assert_eq!(s.local_state().generation, renewed);
    s.abandon();
    let s = open(d.path());
    let fourth = s.local_state();
    assert!(fourth.generation > renewed, "{renewed} then {}", fourth.generation);
    let err = s.check_cluster_name("Other").unwrap_err();
    assert!(
        matches!(&err, StorageError::ClusterNameMismatch { saved, configured } if saved == "Test Cluster" && configured == "Other")
    );
    assert_eq!(err.to_string(), "Saved cluster name Test Cluster != configured name Other");
    // The single-token calls read and write the same column.
    assert_eq!(s.saved_token().as_deref(), Some("10"));
    s.save_token("99".into()).unwrap();
    assert_eq!(s.local_state().tokens, vec!["99".to_string()]);
    s.shutdown().unwrap();
}

#[test]
fn peers_survive_restart_and_are_replaced_whole() {
    let d = tempfile::tempdir().unwrap();
    let s = open(d.path());
    let two = PeerInfo {
        tokens: vec!["1".into(), "2".into()],
        data_center: Some("dc1".into()),
        rack: Some("rack1".into()),
        rpc_address: Some("127.0.0.2".into()),
        host_id: Some(Uuid::new_v4()),
        schema_version: Some(s.schema_version()),
        release_version: Some("0.1.0".into()),
    };
    let three = PeerInfo { tokens: vec!["3".into()], ..PeerInfo::default() };
    s.save_peer("127.0.0.2:7000", &two).unwrap();
    s.save_peer("127.0.0.3:7000", &three).unwrap();
    s.save_peer("127.0.0.4:7000", &three).unwrap();
    s.remove_peer("127.0.0.4:7000").unwrap();
    s.abandon(); // no clean shutdown: the commit log has them

    let s = open(d.path());
    assert_eq!(s.peers().unwrap(), vec![("127.0.0.2:7000".to_string(), two.clone()), ("127.0.0.3:7000".into(), three)]);
    // Saving again replaces every field: what was left out is gone.
    let moved = PeerInfo { tokens: vec!["5".into()], rack: Some("rack2".into()), ..PeerInfo::default() };
    s.save_peer("127.0.0.2:7000", &moved).unwrap();
    s.shutdown().unwrap();
    s.abandon();
    let s = open(d.path());
    assert_eq!(s.peers().unwrap()[0], ("127.0.0.2:7000".to_string(), moved));
    s.shutdown().unwrap();
}

#[test]
fn hints_come_back_in_order_and_survive_restart() {
    let d = tempfile::tempdir().unwrap();
    let s = open(d.path());
    let to_a: Vec<RowMutation> =
        (0..5).map(|i| mutation(&format!("k{i}"), &["cf", "other"], &format!("v{i}"))).collect();
    for m in &to_a {
        s.store_hint("10.0.0.1:7000", m).unwrap();
    }
    s.store_hint("10.0.0.2:7000", &mutation("b", &["cf"], "vb")).unwrap();
    assert!(matches!(
        s.store_hint("10.0.0.2:7000", &mutation("b", &["missing"], "x")),
        Err(StorageError::UnknownColumnFamily { .. })
    ));
    s.abandon(); // no clean shutdown

    let s = open(d.path());
    let mut targets = s.hinted_targets().unwrap();
    targets.sort();
    assert_eq!(targets, vec!["10.0.0.1:7000".to_string(), "10.0.0.2:7000".into()]);
    assert_eq!(s.hint_count("10.0.0.1:7000").unwrap(), 5);
    let all = s.hints_for("10.0.0.1:7000", 100).unwrap();
    assert_eq!(all.iter().map(|h| h.mutation.clone()).collect::<Vec<_>>(), to_a, "hints out of order or changed");
    assert!(all.windows(2).all(|w| w[0].id < w[1].id));
    // Pages: the first two, then the rest after deleting them.
    let page = s.hints_for("10.0.0.1:7000", 2).unwrap();
    assert_eq!(page, all[..2].to_vec());
    for h in &page {
        s.delete_hint("10.0.0.1:7000", h.id).unwrap();
    }
    assert_eq!(s.hints_for("10.0.0.1:7000", 100).unwrap(), all[2..].to_vec());
    assert!(s.hints_for("10.0.0.1:7000", 0).unwrap().is_empty());
    for h in s.hints_for("10.0.0.2:7000", 100).unwrap() {
        s.delete_hint("10.0.0.2:7000", h.id).unwrap();
    }
    assert_eq!(s.hinted_targets().unwrap(), vec!["10.0.0.1:7000".to_string()]);
    s.shutdown().unwrap();
    s.abandon();

    let s = open(d.path());
    assert_eq!(s.hint_count("10.0.0.1:7000").unwrap(), 3);
    assert_eq!(s.hint_count("10.0.0.2:7000").unwrap(), 0);
    s.shutdown().unwrap();
}

#[test]
fn data_written_with_one_partitioner_refuses_another() {
    let d = tempfile::tempdir().unwrap();
    let s = open(d.path());
    assert_eq!(s.local_state().partitioner.as_deref(), Some(Partitioner::Murmur3.class_name()));
    s.apply(mutation("k", &["cf"], "v")).unwrap();
    s.abandon(); // the row is in the commit log only

    let mut other = config(d.path());
    other.partitioner = Partitioner::ByteOrdered;
    let err = Storage::open(other).map(|_| ()).unwrap_err();
    assert!(
        matches!(&err, StorageError::PartitionerMismatch { saved, configured }
            if saved == Partitioner::Murmur3.class_name() && configured == Partitioner::ByteOrdered.class_name()),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("Detected partitioner mismatch! Did you change the partitioner?"), "{err}");

    // Back with the partitioner it was written with, everything is there.
    let s = open(d.path());
    let cells = s.read("ks", "cf", b"k", &model::filter::ReadFilter::all()).unwrap();
    assert_eq!(cells.len(), 1, "{cells:?}");
    s.shutdown().unwrap();
}

#[test]
fn every_hint_of_a_target_can_be_deleted_at_once() {
    let d = tempfile::tempdir().unwrap();
    let s = open(d.path());
    for i in 0..4 {
        s.store_hint("10.0.0.1:7000", &mutation(&format!("k{i}"), &["cf"], "v")).unwrap();
    }
    s.store_hint("10.0.0.2:7000", &mutation("b", &["cf"], "vb")).unwrap();
    assert_eq!(s.delete_hints_for("10.0.0.1:7000").unwrap(), 4);
    assert_eq!(s.delete_hints_for("10.0.0.1:7000").unwrap(), 0, "nothing left to delete");
    assert_eq!(s.delete_hints_for("10.0.0.9:7000").unwrap(), 0, "a target never hinted");
    assert_eq!(s.hinted_targets().unwrap(), vec!["10.0.0.2:7000".to_string()]);
    // A hint kept afterwards is not covered by the deletion.
    let later = mutation("k9", &["cf"], "later");
    s.store_hint("10.0.0.1:7000", &later).unwrap();
    s.abandon(); // no clean shutdown: the deletion comes back from the commit log

    let s = open(d.path());
    let left = s.hints_for("10.0.0.1:7000", 100).unwrap();
    assert_eq!(left.iter().map(|h| h.mutation.clone()).collect::<Vec<_>>(), vec![later]);
    assert_eq!(s.hint_count("10.0.0.2:7000").unwrap(), 1);
    s.shutdown().unwrap();
}

#[test]
fn hints_expire_after_the_smallest_gc_grace() {
    let d = tempfile::tempdir().unwrap();
    let s = open(d.path());
    s.store_hint("t:1", &mutation("k", &["cf", "short_grace"], "v")).unwrap();
    s.store_hint("t:1", &mutation("k", &["cf"], "long")).unwrap();
    // gc_grace_seconds 0: Cassandra keeps no hint at all.
    s.store_hint("t:2", &mutation("k", &["no_grace"], "v")).unwrap();
    assert_eq!(s.hint_count("t:1").unwrap(), 2);
    assert_eq!(s.hint_count("t:2").unwrap(), 0);
    // The one-second hint is gone once its second has passed (expiry is whole seconds).
    std::thread::sleep(Duration::from_millis(2_100));
    let left = s.hints_for("t:1", 10).unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].mutation, mutation("k", &["cf"], "long"));
    assert_eq!(s.hint_count("t:1").unwrap(), 1);
    assert_eq!(s.hinted_targets().unwrap(), vec!["t:1".to_string()]);
    s.shutdown().unwrap();
}

#[test]
fn hints_for_dropped_column_families_are_skipped_and_deleted() {
    let d = tempfile::tempdir().unwrap();
    let s = open(d.path());
    let both = mutation("k1", &["cf", "other"], "both");
    let only_dropped = mutation("k2", &["other"], "gone");
    let kept = mutation("k3", &["cf"], "kept");
    for m in [&both, &only_dropped, &kept] {
        s.store_hint("t:1", m).unwrap();
    }
    s.drop_column_family("ks", "other").unwrap();
    // Re-created under the same name: a new column family the hints never were for.
    s.add_column_family(CfDef::new("ks", "other")).unwrap();
    assert_eq!(s.hint_count("t:1").unwrap(), 3);

    let hints = s.hints_for("t:1", 10).unwrap();
    let mutations: Vec<RowMutation> = hints.into_iter().map(|h| h.mutation).collect();
    assert_eq!(mutations, vec![mutation("k1", &["cf"], "both"), kept.clone()]);
    assert_eq!(s.hint_count("t:1").unwrap(), 2, "the hint for the dropped column family was not deleted");
    // A limit counts hints returned, not hints skipped.
    s.store_hint("t:2", &mutation("k", &["other"], "new")).unwrap();
    s.drop_column_family("ks", "other").unwrap();
    s.store_hint("t:2", &kept).unwrap();
    assert_eq!(s.hints_for("t:2", 1).unwrap().len(), 1);
    s.shutdown().unwrap();
}
