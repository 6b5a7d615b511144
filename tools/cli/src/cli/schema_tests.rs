use super::*;
use crate::cli::ast::Statement;
use crate::cli::parser::parse_statement;
use crate::cli::shell::split_script;

/// The `create column family` statements of seed 002 (a music app schema), as written there.
pub(crate) const SEED_002: &str = include_str!("../../tests/data/seed_002_schema.txt");

fn cf_defs(script: &str) -> Vec<CfDef> {
    split_script(script)
        .into_iter()
        .map(|p| match parse_statement(&p.text) {
            Ok(Statement::CreateColumnFamily { name, attrs }) => {
                apply_cf_attrs(empty_cf_def("music", &name), &attrs).unwrap_or_else(|e| panic!("{name}: {e}"))
            }
            other => panic!("{:?} parsed as {other:?}", p.text),
        })
        .collect()
}

fn col(name: &str, class: &str, index: Option<IndexType>) -> ColumnDef {
    ColumnDef {
        name: name.as_bytes().to_vec(),
        validation_class: class.into(),
        index_type: index,
        index_name: None,
        index_options: None,
    }
}

#[test]
fn seed_002_statements_build_the_expected_cf_defs() {
    let defs = cf_defs(SEED_002);
    let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["users", "songs", "comments", "user_likes", "song_data"]);
    for d in &defs {
        assert_eq!(d.keyspace, "music");
        assert_eq!(d.column_type, None, "Standard by default");
    }
    let [users, songs, comments, user_likes, song_data] = defs.as_slice() else { panic!() };

    for cf in [users, songs] {
        assert_eq!(cf.comparator_type.as_deref(), Some("UTF8Type"));
        assert_eq!(
            cf.column_metadata,
            Some(vec![col("user_name", "UTF8Type", Some(IndexType::KEYS)), col("json_data", "UTF8Type", None)])
        );
        assert_eq!(cf.default_validation_class, None);
    }

    assert_eq!(comments.comparator_type.as_deref(), Some("UTF8Type"), "quoted class names are unquoted");
    assert_eq!(
        comments.column_metadata,
        Some(vec![
            col("user", "UUIDType", Some(IndexType::KEYS)),
            col("song", "UUIDType", Some(IndexType::KEYS)),
            col("timestamp", "DateType", None),
            col("comment", "UTF8Type", None),
        ])
    );

    assert_eq!(user_likes.comparator_type.as_deref(), Some("UUIDType"));
    assert_eq!(user_likes.default_validation_class.as_deref(), Some("IntegerType"));
    assert_eq!(user_likes.column_metadata, None);

    // No comparator (BytesType) and names that are not hex: taken as UTF-8; no validation_class:
    // the CF's default validator.
    assert_eq!(song_data.comparator_type, None);
    assert_eq!(song_data.default_validation_class.as_deref(), Some("CounterColumnType"));
    let expected: Vec<ColumnDef> = ["likes", "dislikes", "favorites", "views", "downloads"]
        .iter()
        .map(|n| col(n, "CounterColumnType", None))
        .collect();
    assert_eq!(song_data.column_metadata, Some(expected));
}

fn attrs_of(stmt: &str) -> Attrs {
    match parse_statement(stmt).unwrap() {
        Statement::CreateColumnFamily { attrs, .. } | Statement::UpdateColumnFamily { attrs, .. } => attrs,
        Statement::CreateKeyspace { attrs, .. } | Statement::UpdateKeyspace { attrs, .. } => attrs,
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_attribute_maps_to_its_field() {
    let cf = apply_cf_attrs(
        empty_cf_def("ks", "all"),
        &attrs_of(
            "create column family all with column_type = Super and comparator = LongType and subcomparator = UTF8Type \
             and comment = 'hi' and rows_cached = 10 and row_cache_save_period = 11 and row_cache_keys_to_save = 12 \
             and keys_cached = 0.5 and key_cache_save_period = 13 and read_repair_chance = 0.25 \
             and dclocal_read_repair_chance = 0 and gc_grace = 14 and memtable_operations = 0.3 \
             and memtable_throughput = 15 and memtable_flush_after = 16 and default_validation_class = AsciiType \
             and min_compaction_threshold = 2 and max_compaction_threshold = 40 and replicate_on_write = true \
             and row_cache_provider = SerializingCacheProvider and key_validation_class = LongType \
             and key_alias = id and compaction_strategy = SizeTieredCompactionStrategy \
             and compaction_strategy_options = {min_sstable_size: 1024} and compression_options = {sstable_compression: ''} \
             and bloom_filter_fp_chance = 0.01 and index_interval = 128 and memtable_flush_period_in_ms = 1000 \
             and caching = 'ALL' and default_time_to_live = 60 and speculative_retry = '99PERCENTILE' \
             and populate_io_cache_on_flush = false and merge_shards_chance = 0.1 \
             and column_metadata = [{column_name: 7, validation_class: LongType, index_name: 'idx', index_type: 0}]",
        ),
    )
    .unwrap();
    assert_eq!(cf.column_type.as_deref(), Some("Super"));
    assert_eq!(cf.comparator_type.as_deref(), Some("LongType"));
    assert_eq!(cf.subcomparator_type.as_deref(), Some("UTF8Type"));
    assert_eq!(cf.comment.as_deref(), Some("hi"));
    assert_eq!(cf.row_cache_size, Some(OrderedFloat(10.0)));
    assert_eq!(cf.row_cache_save_period_in_seconds, Some(11));
    assert_eq!(cf.row_cache_keys_to_save, Some(12));
    assert_eq!(cf.key_cache_size, Some(OrderedFloat(0.5)));
    assert_eq!(cf.key_cache_save_period_in_seconds, Some(13));
    assert_eq!(cf.read_repair_chance, Some(OrderedFloat(0.25)));
    assert_eq!(cf.dclocal_read_repair_chance, Some(OrderedFloat(0.0)));
    assert_eq!(cf.gc_grace_seconds, Some(14));
    assert_eq!(cf.memtable_operations_in_millions, Some(OrderedFloat(0.3)));
    assert_eq!(cf.memtable_throughput_in_mb, Some(15));
    assert_eq!(cf.memtable_flush_after_mins, Some(16));
    assert_eq!(cf.default_validation_class.as_deref(), Some("AsciiType"));
    assert_eq!(cf.min_compaction_threshold, Some(2));
    assert_eq!(cf.max_compaction_threshold, Some(40));
    assert_eq!(cf.replicate_on_write, Some(true));
    assert_eq!(cf.row_cache_provider.as_deref(), Some("SerializingCacheProvider"));
    assert_eq!(cf.key_validation_class.as_deref(), Some("LongType"));
    assert_eq!(cf.key_alias.as_deref(), Some(&b"id"[..]));
    assert_eq!(cf.compaction_strategy.as_deref(), Some("SizeTieredCompactionStrategy"));
    assert_eq!(cf.compaction_strategy_options, Some(BTreeMap::from([("min_sstable_size".into(), "1024".into())])));
    assert_eq!(cf.compression_options, Some(BTreeMap::from([("sstable_compression".into(), String::new())])));
    assert_eq!(cf.bloom_filter_fp_chance, Some(OrderedFloat(0.01)));
    assert_eq!(cf.index_interval, Some(128));
    assert_eq!(cf.memtable_flush_period_in_ms, Some(1000));
    assert_eq!(cf.caching.as_deref(), Some("ALL"));
    assert_eq!(cf.default_time_to_live, Some(60));
    assert_eq!(cf.speculative_retry.as_deref(), Some("99PERCENTILE"));
    assert_eq!(cf.populate_io_cache_on_flush, Some(false));
    assert_eq!(cf.merge_shards_chance, Some(OrderedFloat(0.1)));
    // Super CF: column names use the subcomparator (UTF8Type here, so "7" is the text "7").
    assert_eq!(
        cf.column_metadata,
        Some(vec![ColumnDef {
            name: b"7".to_vec(),
            validation_class: "LongType".into(),
            index_type: Some(IndexType::KEYS),
            index_name: Some("idx".into()),
            index_options: None,
        }])
    );
}

#[test]
fn column_names_follow_the_comparator() {
    let cf = apply_cf_attrs(
        empty_cf_def("ks", "c"),
        &attrs_of("create column family c with column_metadata = [{column_name: 5, validation_class: UTF8Type}] and comparator = LongType"),
    )
    .unwrap();
    // column_metadata is applied after comparator even when written first.
    assert_eq!(cf.column_metadata.unwrap().first().unwrap().name, 5i64.to_be_bytes().to_vec());
    let bytes_cf = apply_cf_attrs(
        empty_cf_def("ks", "b"),
        &attrs_of("create column family b with column_metadata = [{column_name: cafe, validation_class: UTF8Type}]"),
    )
    .unwrap();
    assert_eq!(bytes_cf.column_metadata.unwrap().first().unwrap().name, vec![0xca, 0xfe], "hex stays hex");
    let err = apply_cf_attrs(
        empty_cf_def("ks", "l"),
        &attrs_of("create column family l with comparator = LongType and column_metadata = [{column_name: abc}]"),
    );
    assert!(matches!(err, Err(SchemaError::Value(_))), "{err:?}");
}

#[test]
fn bad_attributes_are_clear_errors() {
    let e =
        apply_cf_attrs(empty_cf_def("ks", "x"), &attrs_of("create column family x with colour = blue")).unwrap_err();
    assert_eq!(e, SchemaError::UnknownCfAttribute("colour".into()));
    assert!(e.to_string().contains("Valid attributes: column_type, comparator"));
    let e =
        apply_cf_attrs(empty_cf_def("ks", "x"), &attrs_of("create column family x with gc_grace = soon")).unwrap_err();
    assert!(matches!(e, SchemaError::BadValue { .. }), "{e:?}");
    let e = apply_cf_attrs(empty_cf_def("ks", "x"), &attrs_of("create column family x with read_repair_chance = 2"))
        .unwrap_err();
    assert_eq!(e, SchemaError::ChanceOutOfRange { attr: "read_repair_chance".into() });
    let e = apply_cf_attrs(empty_cf_def("ks", "x"), &attrs_of("create column family x with column_metadata = {a: b}"))
        .unwrap_err();
    assert_eq!(e, SchemaError::BadColumnMetadata);
    let e = apply_cf_attrs(
        empty_cf_def("ks", "x"),
        &attrs_of(
            "create column family x with column_metadata = [{column_name: a, colour: red}] and comparator = UTF8Type",
        ),
    )
    .unwrap_err();
    assert_eq!(e, SchemaError::UnknownColumnKey("colour".into()));
    let e = apply_cf_attrs(
        empty_cf_def("ks", "x"),
        &attrs_of("create column family x with comparator = UTF8Type and column_metadata = [{column_name: a, index_type: BITMAP}]"),
    )
    .unwrap_err();
    assert_eq!(e, SchemaError::BadIndexType("BITMAP".into()));
    let e = apply_cf_attrs(empty_cf_def("ks", "x"), &attrs_of("create column family x with column_aliases = [{a: b}]"))
        .unwrap_err();
    assert!(matches!(e, SchemaError::RemovedAttribute { .. }));
}

#[test]
fn keyspace_attributes() {
    let ks = new_ks_def(
        "demo",
        &attrs_of("create keyspace demo with placement_strategy = 'org.apache.cassandra.locator.SimpleStrategy' and strategy_options = {replication_factor:1}"),
    )
    .unwrap();
    assert_eq!(ks.strategy_class, "org.apache.cassandra.locator.SimpleStrategy");
    assert_eq!(ks.strategy_options, Some(BTreeMap::from([("replication_factor".into(), "1".into())])));
    assert_eq!(ks.replication_factor, None);
    assert!(ks.cf_defs.is_empty());

    // Default: SimpleStrategy with one replica, writable whatever the snitch's data centres.
    let rf = |n: &str| Some(BTreeMap::from([("replication_factor".to_string(), n.to_string())]));
    let ks = new_ks_def("bare", &Vec::new()).unwrap();
    assert_eq!(ks.strategy_class, "org.apache.cassandra.locator.SimpleStrategy");
    assert_eq!(ks.strategy_options, rf("1"));
    let ks = new_ks_def("bare", &attrs_of("create keyspace bare;")).unwrap();
    assert_eq!((ks.strategy_class.as_str(), ks.strategy_options), (DEFAULT_PLACEMENT_STRATEGY, rf("1")));
    // 0.7's form sets the factor of the default strategy.
    let ks = new_ks_def("old7", &attrs_of("create keyspace old7 with replication_factor = 3")).unwrap();
    assert_eq!((ks.strategy_class.as_str(), ks.strategy_options), (DEFAULT_PLACEMENT_STRATEGY, rf("3")));
    let ks = new_ks_def("durable", &attrs_of("create keyspace durable with durable_writes = false")).unwrap();
    assert_eq!((ks.strategy_options, ks.durable_writes), (rf("1"), Some(false)));
    // SimpleStrategy named without options gets the default factor too.
    let ks = new_ks_def("s", &attrs_of("create keyspace s with placement_strategy = SimpleStrategy")).unwrap();
    assert_eq!((ks.strategy_class.as_str(), ks.strategy_options), ("SimpleStrategy", rf("1")));
    // NetworkTopologyStrategy named explicitly: one replica in datacenter1 unless options say otherwise.
    let ks = new_ks_def("n", &attrs_of("create keyspace n with placement_strategy = NetworkTopologyStrategy")).unwrap();
    assert_eq!(ks.strategy_options, Some(BTreeMap::from([("datacenter1".into(), "1".into())])));
    let ks = new_ks_def(
        "n2",
        &attrs_of("create keyspace n2 with placement_strategy = 'org.apache.cassandra.locator.NetworkTopologyStrategy' and strategy_options = {DC2: 2}"),
    )
    .unwrap();
    assert_eq!(ks.strategy_options, Some(BTreeMap::from([("DC2".into(), "2".into())])));

    // Old style replication_factor.
    let ks = new_ks_def(
        "old",
        &attrs_of("create keyspace old with placement_strategy = SimpleStrategy and replication_factor = 3"),
    )
    .unwrap();
    assert_eq!(ks.strategy_options, Some(BTreeMap::from([("replication_factor".into(), "3".into())])));
    let ks = new_ks_def(
        "nts",
        &attrs_of("create keyspace nts with placement_strategy = NetworkTopologyStrategy and replication_factor = 2"),
    )
    .unwrap();
    assert_eq!(ks.strategy_options, Some(BTreeMap::from([("datacenter1".into(), "2".into())])));

    // Deprecated [{...}] options and durable_writes.
    let ks = new_ks_def(
        "d",
        &attrs_of("create keyspace d with placement_strategy = SimpleStrategy and strategy_options = [{replication_factor:1}] and durable_writes = false"),
    )
    .unwrap();
    assert_eq!(ks.strategy_options, Some(BTreeMap::from([("replication_factor".into(), "1".into())])));
    assert_eq!(ks.durable_writes, Some(false));

    assert_eq!(
        new_ks_def("x", &attrs_of("create keyspace x with colour = 1")).unwrap_err(),
        SchemaError::UnknownKsAttribute("colour".into())
    );
}
