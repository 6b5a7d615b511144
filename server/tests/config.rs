//! The shipped sample configuration and 0.6-era fixture files load as documented, and the
//! sample auth files work with the sample users.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use model::schema::{ColumnType, IndexType};
use server::auth::{AuthError, Authenticator};
use server::config::{self, CacheSize, CommitLogSync, ConfigError};

fn repo_conf() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conf")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

const M: &str = "org.apache.cassandra.db.marshal.";

fn addr(s: &str) -> std::net::SocketAddr {
    s.parse().expect("test address")
}

fn t(short: &str) -> String {
    format!("{M}{short}")
}

#[test]
fn sample_config_is_a_single_local_node() {
    let c = config::load(&repo_conf().join("storage-conf.xml")).expect("sample parses");
    // The sample asks for nothing Sibyl does not do: it starts without a warning.
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(c.cluster_name, "Test Cluster");
    assert_eq!(c.partitioner, "org.apache.cassandra.dht.RandomPartitioner");
    assert_eq!((c.listen_address.as_str(), c.storage_port), ("127.0.0.1", 7000));
    assert_eq!((c.thrift_address.as_str(), c.thrift_port), ("127.0.0.1", 9160));
    assert!(!c.thrift_framed_transport);
    assert_eq!(
        (
            c.batch_size_warn_threshold_kb,
            c.batch_size_fail_threshold_kb,
            c.unlogged_batch_across_partitions_warn_threshold
        ),
        (5, 50, 10),
        "the sample documents 3.11's batch thresholds"
    );
    assert_eq!(c.commit_log_sync, CommitLogSync::Periodic { period_ms: 10_000 });
    assert!(c.commit_log_directory.is_relative());
    assert!(c.data_file_directories.iter().all(|d| d.is_relative()));
    assert_eq!(c.seeds, vec!["127.0.0.1"]);
    assert_eq!(c.seed_endpoints, [addr("127.0.0.1:7000")]);
    assert_eq!(c.listen_endpoint, addr("127.0.0.1:7000"));
    // AdminAddress is left to its default, the listen address.
    assert_eq!((c.admin_address.as_str(), c.admin_port), ("127.0.0.1", 7199));
    assert_eq!(c.commit_log_total_space_mb, 8192);
    assert_eq!(c.authenticator, "org.apache.cassandra.auth.AllowAllAuthenticator");
    let names: Vec<&str> = c.keyspaces.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["Keyspace1", "BloggyAppy", "MusicApp"]);
}

#[test]
fn sample_keyspace1_has_one_cf_of_each_kind() {
    let c = config::load(&repo_conf().join("storage-conf.xml")).expect("sample parses");
    let ks = c.keyspace("Keyspace1").expect("Keyspace1");
    let cf = |n: &str| ks.cf(n).unwrap_or_else(|| panic!("missing CF {n}"));
    assert_eq!(cf("Standard1").comparator_type, t("BytesType"));
    assert_eq!(cf("Standard2").comparator_type, t("UTF8Type"));
    assert_eq!(cf("StandardByUUID1").comparator_type, t("TimeUUIDType"));
    let super1 = cf("Super1");
    assert_eq!(super1.column_type, ColumnType::Super);
    assert_eq!(super1.subcomparator_type.as_deref(), Some(t("BytesType").as_str()));
    assert!(cf("Super2").comment.is_some());
    assert_eq!(cf("Counter1").default_validation_class, t("CounterColumnType"));
    assert_eq!(cf("SuperCounter1").column_type, ColumnType::Super);
    let indexed = cf("Indexed1");
    assert_eq!(indexed.column_metadata.len(), 1);
    assert_eq!(indexed.column_metadata[0].name, b"birthdate");
    assert_eq!(indexed.column_metadata[0].index_type, Some(IndexType::Keys));
    let caches = c.cf_caches.get(&("Keyspace1".to_string(), "Standard1".to_string())).expect("caches");
    assert_eq!(caches.keys_cached, CacheSize::Count(1000));
}

#[test]
fn sample_bloggyappy_matches_the_article() {
    let c = config::load(&repo_conf().join("storage-conf.xml")).expect("sample parses");
    let ks = c.keyspace("BloggyAppy").expect("BloggyAppy");
    let names: Vec<&str> = ks.cf_defs.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Authors", "BlogEntries", "TaggedPosts", "Comments"]);
    let cf = |n: &str| ks.cf(n).unwrap_or_else(|| panic!("missing CF {n}"));
    assert_eq!(cf("Authors").comparator_type, t("BytesType"));
    assert_eq!(cf("BlogEntries").comparator_type, t("BytesType"));
    assert_eq!(cf("TaggedPosts").comparator_type, t("TimeUUIDType"));
    assert_eq!(cf("TaggedPosts").column_type, ColumnType::Standard);
    let comments = cf("Comments");
    assert_eq!(comments.column_type, ColumnType::Super);
    assert_eq!(comments.comparator_type, t("TimeUUIDType"));
    assert_eq!(comments.subcomparator_type.as_deref(), Some(t("BytesType").as_str()));
    assert_eq!(ks.strategy_class, "org.apache.cassandra.locator.SimpleStrategy");
}

#[test]
fn sample_music_app_matches_the_seed_schema() {
    let c = config::load(&repo_conf().join("storage-conf.xml")).expect("sample parses");
    let ks = c.keyspace("MusicApp").expect("MusicApp");
    for name in ["users", "songs"] {
        let cf = ks.cf(name).expect("cf");
        assert_eq!(cf.comparator_type, t("UTF8Type"));
        let user_name = cf.column_metadata.iter().find(|c| c.name == b"user_name").expect("user_name");
        assert_eq!(user_name.index_type, Some(IndexType::Keys));
        assert_eq!(user_name.validation_class, t("UTF8Type"));
    }
    let comments = ks.cf("comments").expect("comments");
    assert_eq!(comments.column_metadata.iter().filter(|c| c.index_type.is_some()).count(), 2);
    let likes = ks.cf("user_likes").expect("user_likes");
    assert_eq!(
        (likes.comparator_type.as_str(), likes.default_validation_class.as_str()),
        (t("UUIDType").as_str(), t("IntegerType").as_str())
    );
    let song_data = ks.cf("song_data").expect("song_data");
    assert_eq!(song_data.default_validation_class, t("CounterColumnType"));
    assert_eq!(song_data.column_metadata.len(), 5);
}

#[test]
fn sample_config_ids_are_stable_across_loads() {
    let a = config::load(&repo_conf().join("storage-conf.xml")).expect("parses");
    let b = config::load(&repo_conf().join("storage-conf.xml")).expect("parses");
    assert_eq!(a.keyspaces, b.keyspaces);
}

#[test]
fn a_full_0_6_file_loads_with_warnings_for_leftovers() {
    let c = config::load(&fixture("cassandra-0.6-full.xml")).expect("0.6 file loads");
    assert_eq!(c.cluster_name, "Old Cluster");
    assert_eq!(c.data_file_directories.len(), 2);
    assert_eq!(c.seeds.len(), 2);
    assert_eq!(c.listen_address, "localhost");
    assert_eq!(c.listen_endpoint, addr("127.0.0.1:7000"));
    assert_eq!(c.seed_endpoints, [addr("127.0.0.1:7000"), addr("127.0.0.2:7000")]);
    assert_eq!(c.memtable_operations_millions, 0.3);
    // The engine flushes by all three memtable thresholds.
    let engine = server::daemon::storage_config(&c, model::dht::Partitioner::Random);
    assert_eq!(engine.memtable_flush_bytes, 64 << 20);
    assert_eq!(engine.memtable_flush_operations, 300_000);
    assert_eq!(engine.memtable_flush_after, std::time::Duration::from_secs(60 * 60));
    let mut five = c.clone();
    five.memtable_flush_after_minutes = 5;
    five.memtable_operations_millions = 0.00002;
    let engine = server::daemon::storage_config(&five, model::dht::Partitioner::Random);
    assert_eq!((engine.memtable_flush_after.as_secs(), engine.memtable_flush_operations), (300, 20));
    assert_eq!(c.endpoint_snitch, "org.apache.cassandra.locator.RackInferringSnitch");
    assert_eq!(c.warnings.len(), 7, "{:?}", c.warnings);
    for leftover in ["ControlPort", "RackAware", "BootstrapFileDirectory", "StagingFileDirectory", "CalloutLocation"] {
        assert!(c.warnings.iter().any(|w| w.contains(leftover)), "no warning for {leftover}");
    }
    // Two column families ask for a row cache, one for a saved key cache: one warning each.
    assert!(c
        .warnings
        .iter()
        .any(|w| w.contains("RowsCached=\"100\" (on Keyspace1.Standard1 and 1 more column family)")));
    assert!(c.warnings.iter().any(|w| w.contains("KeyCacheSavePeriodInSeconds=\"3600\" (on Keyspace1.Standard1)")));
    let ks = c.keyspace("Keyspace1").expect("ks");
    assert_eq!(ks.cf_defs.len(), 5);
    // The attribute form of Comment, which real 0.6 ignored, is accepted.
    assert!(ks.cf("Super2").and_then(|c| c.comment.as_deref()).is_some_and(|c| c.starts_with("A column family")));
}

#[test]
fn sstable_layout_settings_reach_the_engine() {
    let c = config::load(&fixture("cassandra-0.6-full.xml")).expect("0.6 file loads");
    assert_eq!((c.column_index_size_kb, c.row_warning_threshold_mb), (64, 512));
    let engine = server::daemon::storage_config(&c, model::dht::Partitioner::Random);
    assert_eq!((engine.column_index_size, engine.large_partition_warning), (64 << 10, 512 << 20));
    let mut small = c.clone();
    small.column_index_size_kb = 4;
    small.row_warning_threshold_mb = 1;
    let engine = server::daemon::storage_config(&small, model::dht::Partitioner::Random);
    assert_eq!((engine.column_index_size, engine.large_partition_warning), (4 << 10, 1 << 20));
    // The sample's RowWarningThresholdInMB is 64.
    let sample = config::load(&repo_conf().join("storage-conf.xml")).expect("sample parses");
    let engine = server::daemon::storage_config(&sample, model::dht::Partitioner::Random);
    assert_eq!((engine.column_index_size, engine.large_partition_warning), (64 << 10, 64 << 20));
}

#[test]
fn a_typo_names_element_line_and_suggestion() {
    let e = config::load(&fixture("typo-thrift-port.xml")).expect_err("typo");
    assert!(matches!(&e, ConfigError::UnknownElement { line: 7, .. }), "{e:?}");
    assert_eq!(e.to_string(), "unknown element <ThriftPrt> in <Storage> at line 7 (did you mean <ThriftPort>?)");
}

#[test]
fn sample_auth_files_work_with_simple_authenticator() {
    let a = Authenticator::from_config("org.apache.cassandra.auth.SimpleAuthenticator", &repo_conf()).expect("loads");
    let login = |u: &str, p: &str| {
        a.login(&BTreeMap::from([("username".to_string(), u.to_string()), ("password".to_string(), p.to_string())]))
    };
    let js = login("jsmith", "havebadpass").expect("jsmith");
    let elvis = login("Elvis Presley", "graceland4evar").expect("Elvis");
    let dil = login("dilbert", "nomoovertime").expect("dilbert");
    assert!(matches!(login("jsmith", "nope"), Err(AuthError::BadCredentials(_))));
    assert!(a.authorize(Some(&js), "BloggyAppy", true).is_ok());
    assert!(a.authorize(Some(&elvis), "BloggyAppy", false).is_ok());
    assert!(matches!(a.authorize(Some(&elvis), "BloggyAppy", true), Err(AuthError::NotAuthorized(_))));
    assert!(a.authorize(Some(&dil), "MusicApp", false).is_err());
    assert!(a.authorize_column_family(Some(&dil), "MusicApp", "song_data", true).is_ok());
    assert!(a.authorize_keyspace_list_change(Some(&js)).is_ok());
}
