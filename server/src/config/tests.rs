//! Tests of the whole interpretation: defaults, every error kind with its line, 0.6 quirks and
//! the extensions.

use super::*;
use model::schema::{ColumnType, IndexType};

/// The smallest file 0.6 would accept (plus one keyspace), with `extra` node elements and
/// `keyspace_body` inside keyspace "KS".
pub(super) fn doc(extra: &str, keyspace_body: &str) -> String {
    format!(
        "<Storage>\n\
         <ClusterName>Test Cluster</ClusterName>\n\
         <Partitioner>org.apache.cassandra.dht.RandomPartitioner</Partitioner>\n\
         <CommitLogDirectory>var/commitlog</CommitLogDirectory>\n\
         <DataFileDirectories><DataFileDirectory>var/data</DataFileDirectory></DataFileDirectories>\n\
         <Seeds><Seed>127.0.0.1</Seed></Seeds>\n\
         {extra}\n\
         <Keyspaces>\n\
         <Keyspace Name=\"KS\">\n\
         <ReplicaPlacementStrategy>org.apache.cassandra.locator.RackUnawareStrategy</ReplicaPlacementStrategy>\n\
         <ReplicationFactor>1</ReplicationFactor>\n\
         <EndPointSnitch>org.apache.cassandra.locator.EndPointSnitch</EndPointSnitch>\n\
         {keyspace_body}\n\
         </Keyspace>\n\
         </Keyspaces>\n\
         </Storage>\n"
    )
}

/// The system resolver, except that this machine's host name is `localhost`: a file without
/// `<ListenAddress>` then listens on 127.0.0.1 wherever the tests run.
struct LocalhostMachine;

impl endpoints::Resolve for LocalhostMachine {
    fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        endpoints::Resolve::resolve(&endpoints::SystemResolver, host, port)
    }

    fn local_host_name(&self) -> std::io::Result<String> {
        Ok("localhost".to_string())
    }
}

pub(super) fn ok(xml: &str) -> Config {
    match parse_with(xml, "test", &LocalhostMachine) {
        Ok(c) => c,
        Err(e) => panic!("expected success, got: {e}\n{xml}"),
    }
}

pub(super) fn err(xml: &str) -> ConfigError {
    match parse_with(xml, "test", &LocalhostMachine) {
        Ok(_) => panic!("expected an error for\n{xml}"),
        Err(e) => e,
    }
}

#[test]
fn defaults_of_a_minimal_file() {
    let c = ok(&doc("", ""));
    assert_eq!(c.cluster_name, "Test Cluster");
    assert_eq!(c.partitioner, "org.apache.cassandra.dht.RandomPartitioner");
    assert_eq!(c.initial_token, None);
    assert!(!c.auto_bootstrap);
    assert!(c.hinted_handoff_enabled);
    assert_eq!(c.authenticator, "org.apache.cassandra.auth.AllowAllAuthenticator");
    assert_eq!(c.passwd_mode, PasswordMode::Plain);
    assert_eq!(c.commit_log_directory, PathBuf::from("var/commitlog"));
    assert_eq!(c.data_file_directories, vec![PathBuf::from("var/data")]);
    assert_eq!(c.saved_caches_directory, None);
    assert_eq!(c.seeds, vec!["127.0.0.1".to_string()]);
    assert_eq!(c.listen_address, "127.0.0.1");
    assert_eq!(c.storage_port, 7000);
    assert_eq!(c.thrift_address, "127.0.0.1");
    assert_eq!(c.thrift_port, 9160);
    assert!(!c.thrift_framed_transport);
    assert_eq!(c.thrift_max_message_length_mb, 15);
    assert_eq!((c.thrift_event_loops, c.block_cache_size_mb), (0, 64));
    assert_eq!(c.commit_log_total_space_mb, 8192);
    assert_eq!((c.admin_address.as_str(), c.admin_port), ("127.0.0.1", 7199));
    assert_eq!(c.disk_access_mode, DiskAccessMode::Auto);
    assert_eq!(c.commit_log_sync, CommitLogSync::Periodic { period_ms: 10_000 });
    assert_eq!(c.commit_log_rotation_threshold_mb, 128);
    assert_eq!(c.memtable_throughput_mb, 64);
    assert_eq!(c.binary_memtable_throughput_mb, 256);
    assert_eq!(c.memtable_operations_millions, 0.1);
    assert_eq!(c.memtable_flush_after_minutes, 60);
    assert_eq!(c.gc_grace_seconds, 864_000);
    assert_eq!(c.rpc_timeout_ms, 2000);
    assert_eq!(c.phi_convict_threshold, 8);
    assert_eq!(c.index_interval, 128);
    assert_eq!(c.column_index_size_kb, 64);
    assert_eq!(c.sliced_buffer_size_kb, 64);
    assert_eq!(c.flush_data_buffer_size_mb, 32.0);
    assert_eq!(c.flush_index_buffer_size_mb, 8.0);
    assert_eq!(c.row_warning_threshold_mb, 512);
    assert_eq!((c.concurrent_reads, c.concurrent_writes), (8, 32));
    assert!(c.do_consistency_checks);
    assert!(!c.snapshot_before_compaction);
    assert_eq!(c.endpoint_snitch, "org.apache.cassandra.locator.RackInferringSnitch");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let ks = c.keyspace("KS").expect("keyspace");
    assert_eq!(ks.strategy_class, "org.apache.cassandra.locator.SimpleStrategy");
    assert_eq!(ks.strategy_options.get("replication_factor").map(String::as_str), Some("1"));
    assert!(ks.durable_writes);
}

#[test]
fn node_values_are_read() {
    let c = ok(&doc(
        "<AutoBootstrap>TRUE</AutoBootstrap><HintedHandoffEnabled>false</HintedHandoffEnabled>\
         <InitialToken>1234</InitialToken><ListenAddress>10.0.0.1</ListenAddress><ThriftAddress>0.0.0.0</ThriftAddress>\
         <ThriftPort>9161</ThriftPort><ThriftFramedTransport>true</ThriftFramedTransport>\
         <DiskAccessMode>mmap_index_only</DiskAccessMode><RpcTimeoutInMillis>10000</RpcTimeoutInMillis>\
         <MemtableOperationsInMillions>0.3</MemtableOperationsInMillions><AdminPort>8199</AdminPort>\
         <Authenticator>SimpleAuthenticator</Authenticator><PasswdMode>MD5</PasswdMode>\
         <PasswdProperties>/etc/sibyl/passwd.properties</PasswdProperties>",
        "",
    ));
    assert!(c.auto_bootstrap);
    assert!(!c.hinted_handoff_enabled);
    assert_eq!(c.initial_token.as_deref(), Some("1234"));
    assert_eq!(c.listen_address, "10.0.0.1");
    assert_eq!(c.thrift_address, "0.0.0.0");
    assert_eq!(c.thrift_port, 9161);
    assert!(c.thrift_framed_transport);
    assert_eq!(c.disk_access_mode, DiskAccessMode::MmapIndexOnly);
    assert_eq!(c.rpc_timeout_ms, 10_000);
    assert_eq!(c.memtable_operations_millions, 0.3);
    assert_eq!(c.admin_port, 8199);
    assert_eq!(c.authenticator, "org.apache.cassandra.auth.SimpleAuthenticator");
    assert_eq!(c.passwd_mode, PasswordMode::Md5);
    let (passwd, access) = c.auth_files(Path::new("conf"));
    assert_eq!(passwd, PathBuf::from("/etc/sibyl/passwd.properties"));
    assert_eq!(access, PathBuf::from("conf/access.properties"));
}

#[test]
fn thrift_address_defaults_to_listen_address() {
    let c = ok(&doc("<ListenAddress>10.1.2.3</ListenAddress>", ""));
    assert_eq!(c.thrift_address, "10.1.2.3");
}

#[test]
fn empty_elements_count_as_absent() {
    let c = ok(&doc("<InitialToken></InitialToken><ThriftPort> </ThriftPort><ListenAddress/>", ""));
    assert_eq!(c.initial_token, None);
    assert_eq!(c.thrift_port, 9160);
    assert_eq!(c.listen_address, "127.0.0.1");
}

#[test]
fn unknown_element_names_line_and_suggestion() {
    let xml = doc("<ThriftPrt>9160</ThriftPrt>", "");
    match err(&xml) {
        ConfigError::UnknownElement { name, parent, line, suggestion } => {
            assert_eq!(name, "ThriftPrt");
            assert_eq!(parent, "Storage");
            assert_eq!(line, 7);
            assert_eq!(suggestion.as_deref(), Some("ThriftPort"));
        }
        other => panic!("wrong error {other:?}"),
    }
    let msg = err(&xml).to_string();
    assert!(
        msg.contains("<ThriftPrt>") && msg.contains("line 7") && msg.contains("did you mean <ThriftPort>?"),
        "{msg}"
    );
}

#[test]
fn unknown_element_far_from_everything_has_no_suggestion() {
    assert!(matches!(err(&doc("<Zookeeper>x</Zookeeper>", "")), ConfigError::UnknownElement { suggestion: None, .. }));
}

#[test]
fn leftover_elements_only_warn() {
    let c = ok(&doc(
        "<ControlPort>7001</ControlPort>\n<RackAware>false</RackAware>\n<CalloutLocation>/x</CalloutLocation>\
         <StagingFileDirectory>/y</StagingFileDirectory><BootstrapFileDirectory>/z</BootstrapFileDirectory>\
         <JobTrackerHost>h</JobTrackerHost>",
        "",
    ));
    assert_eq!(c.warnings.len(), 6, "{:?}", c.warnings);
    assert!(c.warnings[0].contains("ControlPort") && c.warnings[0].contains("line 7"));
    assert!(c.warnings[1].contains("line 8"));
}

#[test]
fn bad_values_name_element_line_and_value() {
    let cases = [
        ("<ThriftPort>91x60</ThriftPort>", "ThriftPort", "91x60"),
        ("<ThriftPort>70000</ThriftPort>", "ThriftPort", "70000"),
        ("<AutoBootstrap>yes</AutoBootstrap>", "AutoBootstrap", "yes"),
        ("<DiskAccessMode>MMAP</DiskAccessMode>", "DiskAccessMode", "MMAP"),
        ("<CommitLogSync>sometimes</CommitLogSync>", "CommitLogSync", "sometimes"),
        ("<PhiConvictThreshold>20</PhiConvictThreshold>", "PhiConvictThreshold", "20"),
        ("<ConcurrentReads>1</ConcurrentReads>", "ConcurrentReads", "1"),
        ("<Partitioner2/><Authenticator>Kerberos</Authenticator>", "", ""),
        ("<ListenAddress>0.0.0.0</ListenAddress>", "ListenAddress", "0.0.0.0"),
        ("<PasswdMode>SHA1</PasswdMode>", "PasswdMode", "SHA1"),
    ];
    for (extra, element, value) in cases {
        let e = err(&doc(extra, ""));
        if element.is_empty() {
            // The first problem in document order wins: the unknown element.
            assert!(matches!(e, ConfigError::UnknownElement { .. }), "{e:?}");
            continue;
        }
        match &e {
            ConfigError::BadValue { element: el, line, value: v, .. } => {
                assert_eq!((el.as_str(), *line, v.as_str()), (element, 7, value), "{e}");
            }
            other => panic!("{extra}: wrong error {other:?}"),
        }
    }
}

#[test]
fn unknown_partitioner_suggests_the_close_one() {
    let xml = doc("", "").replace("RandomPartitioner<", "RandomPartitoner<");
    let msg = err(&xml).to_string();
    assert!(msg.contains("line 3") && msg.contains("did you mean RandomPartitioner?"), "{msg}");
}

#[test]
fn short_partitioner_name_is_expanded() {
    let xml = doc("", "").replace("org.apache.cassandra.dht.RandomPartitioner", "OrderPreservingPartitioner");
    assert_eq!(ok(&xml).partitioner, "org.apache.cassandra.dht.OrderPreservingPartitioner");
}

#[test]
fn missing_required_elements_are_named() {
    for (element, needle) in [
        ("ClusterName", "<ClusterName>Test Cluster</ClusterName>"),
        ("Partitioner", "<Partitioner>org.apache.cassandra.dht.RandomPartitioner</Partitioner>"),
        ("CommitLogDirectory", "<CommitLogDirectory>var/commitlog</CommitLogDirectory>"),
        (
            "DataFileDirectories",
            "<DataFileDirectories><DataFileDirectory>var/data</DataFileDirectory></DataFileDirectories>",
        ),
        ("Seeds", "<Seeds><Seed>127.0.0.1</Seed></Seeds>"),
    ] {
        let xml = doc("", "").replace(needle, "");
        match err(&xml) {
            ConfigError::Missing { element: e, .. } => assert_eq!(e, format!("<{element}>")),
            other => panic!("{element}: wrong error {other:?}"),
        }
    }
    let no_seed = doc("", "").replace("<Seed>127.0.0.1</Seed>", "");
    assert!(matches!(err(&no_seed), ConfigError::Missing { element, .. } if element == "<Seed>"));
    let text_seeds = doc("", "").replace("<Seed>127.0.0.1</Seed>", "127.0.0.1");
    assert!(matches!(err(&text_seeds), ConfigError::BadValue { element, .. } if element == "Seeds"));
}

#[test]
fn duplicates_are_refused() {
    let e = err(&doc("<ThriftPort>1</ThriftPort>\n<ThriftPort>2</ThriftPort>", ""));
    assert!(matches!(e, ConfigError::Duplicate { line: 8, first_line: 7, .. }), "{e:?}");
}

#[test]
fn commit_log_sync_modes() {
    let c = ok(&doc(
        "<CommitLogSync>batch</CommitLogSync><CommitLogSyncBatchWindowInMS>1</CommitLogSyncBatchWindowInMS>",
        "",
    ));
    assert_eq!(c.commit_log_sync, CommitLogSync::Batch { window_ms: 1.0 });
    let c =
        ok(&doc("<CommitLogSync>periodic</CommitLogSync><CommitLogSyncPeriodInMS>500</CommitLogSyncPeriodInMS>", ""));
    assert_eq!(c.commit_log_sync, CommitLogSync::Periodic { period_ms: 500 });
    // Each mode's companion is required, and the other mode's is refused.
    assert!(matches!(err(&doc("<CommitLogSync>batch</CommitLogSync>", "")), ConfigError::Missing { .. }));
    assert!(matches!(err(&doc("<CommitLogSync>periodic</CommitLogSync>", "")), ConfigError::Missing { .. }));
    assert!(matches!(
        err(&doc("<CommitLogSync>periodic</CommitLogSync><CommitLogSyncPeriodInMS>5</CommitLogSyncPeriodInMS><CommitLogSyncBatchWindowInMS>1</CommitLogSyncBatchWindowInMS>", "")),
        ConfigError::BadValue { .. }
    ));
}

#[test]
fn commit_log_must_not_be_a_data_directory() {
    let xml = doc("", "").replace("var/commitlog", "var/data");
    assert!(matches!(err(&xml), ConfigError::BadValue { element, .. } if element == "CommitLogDirectory"));
}

#[test]
fn empty_and_absent_keyspaces_are_valid() {
    let base = doc("", "");
    let start = base.find("<Keyspaces>").expect("has keyspaces");
    let end = base.find("</Keyspaces>").expect("has end") + "</Keyspaces>".len();
    let empty = format!("{}<Keyspaces/>{}", &base[..start], &base[end..]);
    assert!(ok(&empty).keyspaces.is_empty());
    let absent = format!("{}{}", &base[..start], &base[end..]);
    let c = ok(&absent);
    assert!(c.keyspaces.is_empty());
    assert_eq!(c.endpoint_snitch, "org.apache.cassandra.locator.SimpleSnitch");
}

#[test]
fn column_families_with_0_6_attributes() {
    let c = ok(&doc(
        "<GCGraceSeconds>3600</GCGraceSeconds>",
        "<ColumnFamily Name=\"Standard1\" CompareWith=\"BytesType\" KeysCached=\"1000\" RowsCached=\"50%\" KeyCacheSavePeriodInSeconds=\"3600\"/>\n\
         <ColumnFamily Name=\"Super2\" ColumnType=\"Super\" CompareWith=\"UTF8Type\" CompareSubcolumnsWith=\"UTF8Type\" Comment=\"attr form\"/>\n\
         <ColumnFamily Name=\"Super1\" ColumnType=\"Super\"><Comment>element form</Comment></ColumnFamily>\n\
         <ColumnFamily Name=\"Custom\" CompareWith=\"AsciiType\" KeysCached=\"0\"/>",
    ));
    let ks = c.keyspace("KS").expect("ks");
    let s1 = ks.cf("Standard1").expect("cf");
    assert_eq!(s1.column_type, ColumnType::Standard);
    assert_eq!(s1.comparator_type, "org.apache.cassandra.db.marshal.BytesType");
    assert_eq!(s1.subcomparator_type, None);
    assert_eq!(s1.gc_grace_seconds, 3600);
    assert_eq!(s1.read_repair_chance, 1.0);
    assert_eq!(s1.caching, "ALL");
    let caches = c.cf_caches.get(&("KS".to_string(), "Standard1".to_string())).expect("caches");
    assert_eq!(caches.keys_cached, CacheSize::Count(1000));
    assert_eq!(caches.rows_cached, CacheSize::Fraction(0.5));
    assert_eq!(caches.key_cache_save_period_seconds, 3600);
    let s2 = ks.cf("Super2").expect("cf");
    assert_eq!(s2.column_type, ColumnType::Super);
    assert_eq!(s2.subcomparator_type.as_deref(), Some("org.apache.cassandra.db.marshal.UTF8Type"));
    assert_eq!(s2.comment.as_deref(), Some("attr form"));
    let su1 = ks.cf("Super1").expect("cf");
    assert_eq!(su1.comment.as_deref(), Some("element form"));
    assert_eq!(su1.subcomparator_type.as_deref(), Some("org.apache.cassandra.db.marshal.BytesType"));
    let custom = ks.cf("Custom").expect("cf");
    assert_eq!(custom.comparator_type, "org.apache.cassandra.db.marshal.AsciiType");
    assert_eq!(custom.caching, "NONE");
    // A comparator class we cannot load (a user's Java class) stops startup, naming it and the line.
    let err = parse(&doc("", "<ColumnFamily Name=\"Custom\" CompareWith=\"com.example.MyType\"/>"), "t")
        .expect_err("custom type");
    let msg = err.to_string();
    assert!(msg.contains("com.example.MyType") && msg.contains("line"), "{msg}");
    // Ids are stable across loads.
    assert_eq!(ok(&doc("", "<ColumnFamily Name=\"Standard1\"/>")).keyspaces[0].cf_defs[0].id, s1.id);
}

#[test]
fn cache_settings_sibyl_does_not_honour_warn_once_per_kind() {
    let c = ok(&doc(
        "",
        "<ColumnFamily Name=\"A\" KeysCached=\"0\" RowsCached=\"100\" KeyCacheSavePeriodInSeconds=\"3600\" RowCacheSavePeriodInSeconds=\"60\"/>\n\
         <ColumnFamily Name=\"B\" KeysCached=\"0%\" RowsCached=\"0.5\"/>\n\
         <ColumnFamily Name=\"C\" KeysCachedFraction=\"0.2\" Caching=\"ALL\"/>\n\
         <ColumnFamily Name=\"D\" Caching=\"NONE\"/>\n\
         <ColumnFamily Name=\"E\" Caching=\"ROWS_ONLY\" KeysCachedFraction=\"0\"/>\n\
         <ColumnFamily Name=\"F\" KeysCached=\"1000\" RowsCached=\"0\" KeyCacheSavePeriodInSeconds=\"0\" Caching=\"KEYS_ONLY\"/>",
    ));
    let expected = [
        ("line 15: KeysCachedFraction=\"0.2\" (on KS.C and 1 more column family) is deprecated", "BlockCacheSizeInMB"),
        (
            "line 13: KeysCached=\"0\" (on KS.A and 2 more column families) does not turn the key cache off",
            "BlockCacheSizeInMB",
        ),
        ("line 13: RowsCached=\"100\" (on KS.A and 1 more column family) asks for a row cache", "does not have"),
        ("line 13: KeyCacheSavePeriodInSeconds=\"3600\" (on KS.A) is ignored", "SavedCachesDirectory"),
        ("line 13: RowCacheSavePeriodInSeconds=\"60\" (on KS.A) is ignored", "no row cache"),
        ("line 15: Caching=\"ALL\" (on KS.C and 1 more column family) asks for a row cache", "does not have"),
        ("line 16: Caching=\"NONE\" (on KS.D) does not turn the key cache off", "BlockCacheSizeInMB"),
    ];
    assert_eq!(c.warnings.len(), expected.len(), "{:#?}", c.warnings);
    for (w, (start, why)) in c.warnings.iter().zip(expected) {
        assert!(w.starts_with(start) && w.contains(why), "{w:?} should start with {start:?} and name {why:?}");
    }
    // The settings are still read as 0.6 did.
    let caches = |cf: &str| c.cf_caches[&("KS".to_string(), cf.to_string())];
    assert_eq!(caches("A").keys_cached, CacheSize::Off);
    assert_eq!(caches("C").keys_cached, CacheSize::Fraction(0.2));
    assert_eq!(caches("E").keys_cached, CacheSize::Off);
}

#[test]
fn cache_settings_sibyl_honours_load_silently() {
    // A key cache of any size is what Sibyl has (sized by BlockCacheSizeInMB); no row cache,
    // no saving and KEYS_ONLY ask for nothing it lacks; SavedCachesDirectory alone neither.
    let c = ok(&doc(
        "<SavedCachesDirectory>var/saved_caches</SavedCachesDirectory>",
        "<ColumnFamily Name=\"A\" KeysCached=\"1000\" RowsCached=\"0\" KeyCacheSavePeriodInSeconds=\"0\" RowCacheSavePeriodInSeconds=\"0\"/>\n\
         <ColumnFamily Name=\"B\" KeysCached=\"100%\" Caching=\"KEYS_ONLY\"/>\n\
         <ColumnFamily Name=\"C\" KeysCached=\"0.5\" RowsCached=\"0%\"/>\n\
         <ColumnFamily Name=\"D\"/>",
    ));
    assert!(c.warnings.is_empty(), "{:#?}", c.warnings);
    assert_eq!(c.saved_caches_directory, Some(PathBuf::from("var/saved_caches")));
}

#[test]
fn concurrent_reads_and_writes_warn_unless_the_samples() {
    let sample = ok(&doc("<ConcurrentReads>8</ConcurrentReads><ConcurrentWrites>32</ConcurrentWrites>", ""));
    assert!(sample.warnings.is_empty(), "{:?}", sample.warnings);
    let c = ok(&doc("<ConcurrentReads>16</ConcurrentReads>\n<ConcurrentWrites>64</ConcurrentWrites>", ""));
    assert_eq!((c.concurrent_reads, c.concurrent_writes), (16, 64));
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    assert!(c.warnings[0].starts_with("line 7: <ConcurrentReads> 16 is ignored"), "{}", c.warnings[0]);
    assert!(c.warnings[1].starts_with("line 8: <ConcurrentWrites> 64 is ignored"), "{}", c.warnings[1]);
    assert!(c.warnings.iter().all(|w| w.contains("request executor")), "{:?}", c.warnings);
}

#[test]
fn consistency_checks_off_turns_read_repair_off() {
    let c = ok(&doc("<DoConsistencyChecksBoolean>false</DoConsistencyChecksBoolean>", "<ColumnFamily Name=\"A\"/>"));
    assert!(!c.do_consistency_checks);
    assert_eq!(c.keyspaces[0].cf_defs[0].read_repair_chance, 0.0);
    let c = ok(&doc("<DoConsistencyChecksBoolean>maybe</DoConsistencyChecksBoolean>", ""));
    assert!(!c.do_consistency_checks);
    assert_eq!(c.warnings.len(), 1);
}

#[test]
fn column_family_errors() {
    let sub_on_standard = err(&doc("", "<ColumnFamily Name=\"A\" CompareSubcolumnsWith=\"UTF8Type\"/>"));
    assert!(
        matches!(sub_on_standard, ConfigError::BadValue { element, line: 13, .. } if element == "CompareSubcolumnsWith")
    );
    let bad_type = err(&doc("", "<ColumnFamily Name=\"A\" ColumnType=\"super\"/>"));
    assert!(matches!(bad_type, ConfigError::BadValue { element, .. } if element == "ColumnType"));
    let sort = err(&doc("", "<ColumnFamily Name=\"A\" ColumnSort=\"Time\"/>"));
    assert!(matches!(sort, ConfigError::BadValue { element, .. } if element == "ColumnSort"));
    let typo = err(&doc("", "<ColumnFamily Name=\"A\" CompareWit=\"UTF8Type\"/>"));
    assert!(
        matches!(typo, ConfigError::UnknownAttribute { ref suggestion, line: 13, .. } if suggestion.as_deref() == Some("CompareWith"))
    );
    let dash = err(&doc("", "<ColumnFamily Name=\"Bad-Name\"/>"));
    assert!(
        matches!(dash, ConfigError::InvalidSchema { ref cf, line: 13, .. } if cf.as_deref() == Some("Bad-Name")),
        "{dash:?}"
    );
    let dup = err(&doc("", "<ColumnFamily Name=\"A\"/>\n<ColumnFamily Name=\"A\"/>"));
    assert!(matches!(dup, ConfigError::Duplicate { line: 14, first_line: 13, .. }));
    let no_name = err(&doc("", "<ColumnFamily CompareWith=\"UTF8Type\"/>"));
    assert!(matches!(no_name, ConfigError::Missing { line: 13, .. }));
    let thresholds = err(&doc("", "<ColumnFamily Name=\"A\" MinCompactionThreshold=\"1\"/>"));
    assert!(matches!(thresholds, ConfigError::InvalidSchema { .. }), "{thresholds:?}");
    let child = err(&doc("", "<ColumnFamily Name=\"A\"><Colum Name=\"x\"/></ColumnFamily>"));
    assert!(
        matches!(child, ConfigError::UnknownElement { ref suggestion, .. } if suggestion.as_deref() == Some("Column"))
    );
}

#[test]
fn keyspace_rules() {
    let missing_rf = doc("", "").replace("<ReplicationFactor>1</ReplicationFactor>", "");
    assert!(
        matches!(err(&missing_rf), ConfigError::Missing { element, line: 9, .. } if element == "<ReplicationFactor>")
    );
    let rack_aware = doc("", "").replace("RackUnawareStrategy", "RackAwareStrategy");
    assert_eq!(ok(&rack_aware).keyspaces[0].strategy_class, "org.apache.cassandra.locator.OldNetworkTopologyStrategy");
    let system = doc("", "").replace("Name=\"KS\"", "Name=\"System\"");
    assert!(matches!(err(&system), ConfigError::BadValue { .. }));
    let bad_name = doc("", "").replace("Name=\"KS\"", "Name=\"my.ks\"");
    assert!(matches!(err(&bad_name), ConfigError::InvalidSchema { cf: None, line: 9, .. }));
    let durable = ok(&doc("", "<DurableWrites>false</DurableWrites>"));
    assert!(!durable.keyspaces[0].durable_writes);
    let durable_attr = ok(&doc("", "").replace("Name=\"KS\"", "Name=\"KS\" DurableWrites=\"false\""));
    assert!(!durable_attr.keyspaces[0].durable_writes);
    let nts = doc("", "<StrategyOption Name=\"DC1\" Value=\"3\"/><StrategyOptions><StrategyOption Name=\"DC2\" Value=\"2\"/></StrategyOptions>")
        .replace("org.apache.cassandra.locator.RackUnawareStrategy", "NetworkTopologyStrategy");
    let c = ok(&nts);
    let ks = &c.keyspaces[0];
    assert_eq!(ks.strategy_class, "org.apache.cassandra.locator.NetworkTopologyStrategy");
    assert_eq!(ks.strategy_options.len(), 2);
    assert_eq!(ks.strategy_options.get("DC1").map(String::as_str), Some("3"));
    assert_eq!(c.warnings.len(), 1, "ReplicationFactor is ignored with NTS: {:?}", c.warnings);
}

#[test]
fn snitches_must_agree() {
    let two = doc("", "").replace(
        "</Keyspaces>",
        "<Keyspace Name=\"Other\"><ReplicaPlacementStrategy>org.apache.cassandra.locator.RackUnawareStrategy</ReplicaPlacementStrategy>\
         <ReplicationFactor>1</ReplicationFactor><EndPointSnitch>org.apache.cassandra.locator.PropertyFileEndPointSnitch</EndPointSnitch></Keyspace></Keyspaces>",
    );
    assert!(matches!(err(&two), ConfigError::BadValue { element, .. } if element == "EndPointSnitch"));
}

#[test]
fn node_level_0_5_replication_settings_become_keyspace_defaults() {
    let xml = doc(
        "<ReplicaPlacementStrategy>org.apache.cassandra.locator.RackUnawareStrategy</ReplicaPlacementStrategy><ReplicationFactor>3</ReplicationFactor>",
        "",
    )
    .replace("<ReplicationFactor>1</ReplicationFactor>\n", "")
    .replace("<ReplicaPlacementStrategy>org.apache.cassandra.locator.RackUnawareStrategy</ReplicaPlacementStrategy>\n<ReplicationFactor>", "<ReplicationFactor>");
    let c = ok(&xml);
    assert_eq!(c.keyspaces[0].strategy_options.get("replication_factor").map(String::as_str), Some("3"));
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
}

#[test]
fn extension_attributes_and_columns() {
    let c = ok(&doc(
        "",
        "<ColumnFamily Name=\"Indexed1\" CompareWith=\"UTF8Type\" DefaultValidationClass=\"LongType\" KeyValidationClass=\"UTF8Type\"\
           DefaultTimeToLive=\"86400\" MinCompactionThreshold=\"2\" MaxCompactionThreshold=\"8\" Caching=\"KEYS_ONLY\"\
           BloomFilterFpChance=\"0.01\" ReadRepairChance=\"10%\" GCGraceSeconds=\"60\">\n\
           <Column Name=\"birthdate\" ValidationClass=\"LongType\" IndexType=\"KEYS\" IndexName=\"birthdate_idx\"/>\n\
           <Column Name=\"nickname\" ValidationClass=\"UTF8Type\"/>\n\
         </ColumnFamily>\n\
         <ColumnFamily Name=\"Counter1\" DefaultValidationClass=\"CounterColumnType\"><Column Name=\"likes\"/></ColumnFamily>\n\
         <ColumnFamily Name=\"ByLong\" CompareWith=\"LongType\"><Column Name=\"42\" IndexType=\"0\"/></ColumnFamily>",
    ));
    let ks = &c.keyspaces[0];
    let cf = ks.cf("Indexed1").expect("cf");
    let m = "org.apache.cassandra.db.marshal.";
    assert_eq!(cf.default_validation_class, format!("{m}LongType"));
    assert_eq!(cf.key_validation_class, format!("{m}UTF8Type"));
    assert_eq!(cf.default_time_to_live, 86400);
    assert_eq!((cf.min_compaction_threshold, cf.max_compaction_threshold), (2, 8));
    assert_eq!(cf.caching, "KEYS_ONLY");
    assert_eq!(cf.bloom_filter_fp_chance, Some(0.01));
    assert_eq!(cf.read_repair_chance, 0.1);
    assert_eq!(cf.gc_grace_seconds, 60);
    assert_eq!(cf.column_metadata.len(), 2);
    let birthdate = &cf.column_metadata[0];
    assert_eq!(birthdate.name, b"birthdate");
    assert_eq!(birthdate.validation_class, format!("{m}LongType"));
    assert_eq!(birthdate.index_type, Some(IndexType::Keys));
    assert_eq!(birthdate.index_name.as_deref(), Some("birthdate_idx"));
    assert_eq!(cf.column_metadata[1].index_type, None);
    let counter = ks.cf("Counter1").expect("cf");
    assert_eq!(counter.default_validation_class, format!("{m}CounterColumnType"));
    assert_eq!(counter.column_metadata[0].validation_class, format!("{m}CounterColumnType"));
    let by_long = ks.cf("ByLong").expect("cf");
    assert_eq!(by_long.column_metadata[0].name, 42i64.to_be_bytes().to_vec());
}

#[test]
fn column_errors() {
    let bad_index = err(&doc("", "<ColumnFamily Name=\"A\"><Column Name=\"x\" IndexType=\"HASH\"/></ColumnFamily>"));
    assert!(matches!(bad_index, ConfigError::BadValue { element, .. } if element == "IndexType"));
    let super_index = err(&doc(
        "",
        "<ColumnFamily Name=\"A\" ColumnType=\"Super\"><Column Name=\"x\" IndexType=\"KEYS\"/></ColumnFamily>",
    ));
    assert!(matches!(super_index, ConfigError::InvalidSchema { .. }));
    let bad_name =
        err(&doc("", "<ColumnFamily Name=\"A\" CompareWith=\"LongType\"><Column Name=\"x\"/></ColumnFamily>"));
    assert!(matches!(bad_name, ConfigError::BadValue { element, .. } if element == "Column Name"));
    let dup = err(&doc("", "<ColumnFamily Name=\"A\">\n<Column Name=\"x\"/>\n<Column Name=\"x\"/></ColumnFamily>"));
    assert!(matches!(dup, ConfigError::Duplicate { line: 15, first_line: 14, .. }), "{dup:?}");
}

#[test]
fn malformed_xml_reports_a_line() {
    let xml = doc("<ThriftPort>9160</ThriftPortt>", "");
    assert!(matches!(err(&xml), ConfigError::Xml { line: 7, .. }), "{:?}", err(&xml));
    assert!(matches!(err("<Config/>"), ConfigError::Xml { line: 1, .. }));
}

#[test]
fn load_reports_io_errors_with_the_path() {
    let e = load(Path::new("/nonexistent/storage-conf.xml")).expect_err("no file");
    assert!(matches!(e, ConfigError::Io { ref path, .. } if path == Path::new("/nonexistent/storage-conf.xml")));
}

#[test]
fn event_loops_and_block_cache_size() {
    let c = ok(&doc("<ThriftEventLoops>3</ThriftEventLoops><BlockCacheSizeInMB>0</BlockCacheSizeInMB>", ""));
    assert_eq!((c.thrift_event_loops, c.block_cache_size_mb), (3, 0));
    let e = err(&doc("<ThriftEventLoops>-1</ThriftEventLoops>", "")).to_string();
    assert!(e.contains("ThriftEventLoops") && e.contains("-1"), "{e}");
}

#[test]
fn native_transport_defaults_follow_the_thrift_address() {
    let c = ok(&doc("<ThriftAddress>127.0.0.5</ThriftAddress>", ""));
    assert!(c.start_native_transport);
    assert_eq!((c.native_transport_address.as_str(), c.native_transport_port), ("127.0.0.5", 9042));
    assert_eq!(c.native_transport_max_frame_size_mb, 256);
    assert_eq!(c.native_transport_max_concurrent_connections, None);
}

#[test]
fn native_transport_settings_are_read_and_checked() {
    let c = ok(&doc(
        "<StartNativeTransport>false</StartNativeTransport>\
         <NativeTransportAddress>0.0.0.0</NativeTransportAddress>\
         <NativeTransportPort>19042</NativeTransportPort>\
         <NativeTransportMaxFrameSizeInMB>16</NativeTransportMaxFrameSizeInMB>\
         <NativeTransportMaxConcurrentConnections>100</NativeTransportMaxConcurrentConnections>",
        "",
    ));
    assert!(!c.start_native_transport);
    assert_eq!((c.native_transport_address.as_str(), c.native_transport_port), ("0.0.0.0", 19042));
    assert_eq!(c.native_transport_max_frame_size_mb, 16);
    assert_eq!(c.native_transport_max_concurrent_connections, Some(100));
    let unlimited = |n: &str| {
        ok(&doc(&format!("<NativeTransportMaxConcurrentConnections>{n}</NativeTransportMaxConcurrentConnections>"), ""))
            .native_transport_max_concurrent_connections
    };
    assert_eq!((unlimited("-1"), unlimited("0")), (None, None), "Cassandra's rule: 0 or below is no limit");
    for bad in [
        "<NativeTransportPort>0</NativeTransportPort>",
        "<NativeTransportPort>70000</NativeTransportPort>",
        "<NativeTransportMaxFrameSizeInMB>0</NativeTransportMaxFrameSizeInMB>",
        "<NativeTransportMaxConcurrentConnections>-2</NativeTransportMaxConcurrentConnections>",
        "<StartNativeTransport>yes</StartNativeTransport>",
    ] {
        let e = err(&doc(bad, "")).to_string();
        let element = bad.trim_start_matches('<').split('>').next().unwrap_or_default();
        assert!(e.contains(element) && e.contains("line 7"), "{bad}: {e}");
    }
}

#[test]
fn auto_snapshot_backups_and_compaction_throughput() {
    let c = ok(&doc("", ""));
    assert_eq!((c.auto_snapshot, c.incremental_backups), (true, false));
    let c = ok(&doc("<AutoSnapshot>false</AutoSnapshot><IncrementalBackups>true</IncrementalBackups>", ""));
    assert_eq!((c.auto_snapshot, c.incremental_backups), (false, true));
    assert_eq!(ok(&doc("", "")).compaction_throughput_mb_per_sec, 16);
    let c = ok(&doc("<CompactionThroughputMbPerSec>0</CompactionThroughputMbPerSec>", ""));
    assert_eq!(c.compaction_throughput_mb_per_sec, 0);
    let e = err(&doc("<IncrementalBackups>yes</IncrementalBackups>", "")).to_string();
    assert!(e.contains("IncrementalBackups") && e.contains("yes"), "{e}");
}

#[test]
fn commit_log_total_space() {
    let c = ok(&doc("<CommitLogTotalSpaceInMB>512</CommitLogTotalSpaceInMB>", ""));
    assert_eq!(c.commit_log_total_space_mb, 512);
    let e = err(&doc("<CommitLogTotalSpaceInMB>0</CommitLogTotalSpaceInMB>", "")).to_string();
    assert!(e.contains("CommitLogTotalSpaceInMB") && e.contains('0'), "{e}");
}

#[test]
fn every_data_file_directory_reaches_the_engine_the_first_as_primary() {
    let two = "<DataFileDirectories><DataFileDirectory>var/data</DataFileDirectory>\
               <DataFileDirectory>/mnt/disk2/data</DataFileDirectory></DataFileDirectories>";
    let xml = doc("", "")
        .replace("<DataFileDirectories><DataFileDirectory>var/data</DataFileDirectory></DataFileDirectories>", two);
    let c = ok(&xml);
    assert_eq!(c.data_file_directories, vec![PathBuf::from("var/data"), PathBuf::from("/mnt/disk2/data")]);
    let engine = crate::daemon::storage_config(&c, model::dht::Partitioner::Random);
    assert_eq!(engine.data_dir, PathBuf::from("var/data"));
    assert_eq!(engine.extra_data_dirs, vec![PathBuf::from("/mnt/disk2/data")]);
    let one = crate::daemon::storage_config(&ok(&doc("", "")), model::dht::Partitioner::Random);
    assert!(one.extra_data_dirs.is_empty());
}

#[test]
fn batch_thresholds_default_to_cassandra_3_11s() {
    let c = ok(&doc("", ""));
    assert_eq!(
        (
            c.batch_size_warn_threshold_kb,
            c.batch_size_fail_threshold_kb,
            c.unlogged_batch_across_partitions_warn_threshold
        ),
        (5, 50, 10)
    );
    let c = ok(&doc(
        "<BatchSizeWarnThresholdInKB>64</BatchSizeWarnThresholdInKB>\
         <BatchSizeFailThresholdInKB>640</BatchSizeFailThresholdInKB>\
         <UnloggedBatchAcrossPartitionsWarnThreshold>0</UnloggedBatchAcrossPartitionsWarnThreshold>",
        "",
    ));
    assert_eq!(
        (
            c.batch_size_warn_threshold_kb,
            c.batch_size_fail_threshold_kb,
            c.unlogged_batch_across_partitions_warn_threshold
        ),
        (64, 640, 0)
    );
    for bad in [
        "<BatchSizeWarnThresholdInKB>0</BatchSizeWarnThresholdInKB>",
        "<BatchSizeFailThresholdInKB>-1</BatchSizeFailThresholdInKB>",
        "<UnloggedBatchAcrossPartitionsWarnThreshold>ten</UnloggedBatchAcrossPartitionsWarnThreshold>",
    ] {
        let e = err(&doc(bad, "")).to_string();
        let element = bad.trim_start_matches('<').split('>').next().unwrap_or_default();
        assert!(e.contains(element) && e.contains("line 7"), "{bad}: {e}");
    }
}
