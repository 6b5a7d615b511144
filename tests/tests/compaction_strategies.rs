//! Compaction strategies through the real server: a column family created or changed over
//! Thrift to leveled or time-window compaction keeps its choice (describe_keyspace), bad
//! options get Cassandra's reasons, and a leveled column family's levels show in
//! `sibyltool cfstats` once its background compaction has moved level 0 up.

use std::collections::BTreeMap;
use std::time::Duration;

use e2e::*;
use thrift_idl as t;

const KS: &str = "Compact";
const ONE: t::ConsistencyLevel = t::ConsistencyLevel::ONE;

fn with_strategy(name: &str, class: &str, options: &[(&str, &str)]) -> t::CfDef {
    t::CfDef {
        compaction_strategy: Some(class.into()),
        compaction_strategy_options: Some(options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
        ..cf_def(KS, name, "UTF8Type")
    }
}

fn described(c: &mut Client, cf: &str) -> (Option<String>, BTreeMap<String, String>) {
    let ks = ok("describe_keyspace", c.describe_keyspace(KS.into()));
    let def = ks.cf_defs.into_iter().find(|d| d.name == cf).expect("column family described");
    (def.compaction_strategy, def.compaction_strategy_options.unwrap_or_default())
}

#[test]
fn strategies_are_kept_checked_and_run() {
    let node = Node::start(Config::random());
    let mut c = node.client();
    create_keyspace(
        &mut c,
        KS,
        vec![
            with_strategy("Leveled", "LeveledCompactionStrategy", &[("sstable_size_in_mb", "1")]),
            cf_def(KS, "Plain", "UTF8Type"),
        ],
    );
    ok("set_keyspace", c.set_keyspace(KS.into()));
    let (class, options) = described(&mut c, "Leveled");
    assert_eq!(class.as_deref(), Some("org.apache.cassandra.db.compaction.LeveledCompactionStrategy"));
    assert_eq!(options.get("sstable_size_in_mb").map(String::as_str), Some("1"));

    // Options Cassandra refuses, with its reasons.
    let refused = [
        (
            with_strategy("Bad1", "LeveledCompactionStrategy", &[("sstable_size_in_mb", "-5")]),
            "sstable_size_in_mb must be larger than 0, but was -5",
        ),
        (
            with_strategy("Bad2", "SizeTieredCompactionStrategy", &[("abc", "1")]),
            "Properties specified [abc] are not understood by SizeTieredCompactionStrategy",
        ),
        (
            with_strategy("Bad3", "TimeWindowCompactionStrategy", &[("compaction_window_unit", "SECONDS")]),
            "SECONDS is not valid for compaction_window_unit",
        ),
        (
            with_strategy("Bad4", "NoSuchStrategy", &[]),
            "Unable to find compaction strategy class 'org.apache.cassandra.db.compaction.NoSuchStrategy'",
        ),
    ];
    for (def, reason) in refused {
        let name = def.name.clone();
        assert_eq!(expect_ire(&name, c.system_add_column_family(def)), reason);
    }

    // A column family changes strategy.
    let mut plain = cf_def(KS, "Plain", "UTF8Type");
    let ks = ok("describe_keyspace", c.describe_keyspace(KS.into()));
    plain.id = ks.cf_defs.iter().find(|d| d.name == "Plain").and_then(|d| d.id);
    plain.compaction_strategy = Some("TimeWindowCompactionStrategy".into());
    plain.compaction_strategy_options = Some(BTreeMap::from([("compaction_window_unit".into(), "HOURS".into())]));
    ok("system_update_column_family", c.system_update_column_family(plain));
    let (class, options) = described(&mut c, "Plain");
    assert_eq!(class.as_deref(), Some("org.apache.cassandra.db.compaction.TimeWindowCompactionStrategy"));
    assert_eq!(options.get("compaction_window_unit").map(String::as_str), Some("HOURS"));

    // A 2.x time-series schema: date-tiered compaction, with its options.
    let dated = with_strategy(
        "Dated",
        "DateTieredCompactionStrategy",
        &[("base_time_seconds", "3600"), ("max_sstable_age_days", "30")],
    );
    ok("add a date-tiered column family", c.system_add_column_family(dated));
    let (class, options) = described(&mut c, "Dated");
    assert_eq!(class.as_deref(), Some("org.apache.cassandra.db.compaction.DateTieredCompactionStrategy"));
    assert_eq!(options.get("max_sstable_age_days").map(String::as_str), Some("30"));
    let bad = with_strategy("Bad5", "DateTieredCompactionStrategy", &[("base_time_seconds", "0")]);
    assert_eq!(
        expect_ire("Bad5", c.system_add_column_family(bad)),
        "base_time_seconds must be greater than 0, but was 0"
    );

    // Four flushes of level 0 (1.2 MiB in all) go up to level 1, in SSTables of 1 MiB.
    let value = "x".repeat(1000);
    for f in 0..4 {
        for i in 0..300 {
            let key = format!("row{}", f * 300 + i);
            ok("insert", c.insert(b(&key), parent("Leveled"), column("c", value.as_str(), ts()), ONE));
        }
        node.tool(&["flush", KS, "Leveled"]).ok();
    }
    let mut last = String::new();
    let moved = eventually(Duration::from_secs(30), || {
        last = node.tool(&["cfstats", KS]).ok().stdout;
        last.contains("SSTables in each level: [0, 2, 0, 0, 0, 0, 0, 0, 0]")
    });
    assert!(moved, "level 0 never moved up:\n{last}");
    for key in ["row0", "row599", "row1199"] {
        let got = ok("get", c.get(b(key), path("Leveled", "c"), ONE));
        assert_eq!(got.column.and_then(|col| col.value), Some(b(&value)), "{key}");
    }
}
