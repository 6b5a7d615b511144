//! Issue 11, point 4: schema errors Cassandra 3.11 refuses (CFMetaData, TableParams,
//! IndexMetadata and KeyspaceMetadata validation) are InvalidRequestExceptions in its words, over
//! Thrift: two indexes with the same name in a column family or in its keyspace, an illegal index
//! name, a default TTL past 20 years, negative periods, index intervals out of order. What 3.11
//! accepts is accepted (the same index name in two keyspaces), and the connection stays usable.

use e2e::*;
use thrift_idl::{self as t, TCassandraSyncClient};

const KS: &str = "Schemas";

/// A UTF8Type column with a KEYS index named `index_name`.
fn indexed(column: &str, index_name: &str) -> t::ColumnDef {
    t::ColumnDef {
        name: b(column),
        validation_class: "UTF8Type".into(),
        index_type: Some(t::IndexType::KEYS),
        index_name: Some(index_name.into()),
        index_options: None,
    }
}

fn cf_with(ks: &str, name: &str, columns: Vec<t::ColumnDef>) -> t::CfDef {
    let mut cf = cf_def(ks, name, "UTF8Type");
    cf.column_metadata = Some(columns);
    cf
}

#[test]
fn schema_errors_are_refused_in_3_11_words() {
    let node = Node::start(Config::random());
    let mut c = node.client();
    create_keyspace(&mut c, KS, vec![cf_with(KS, "Users", vec![indexed("state", "by_state")])]);
    ok("set_keyspace", c.set_keyspace(KS.into()));

    // Two indexes with one name in a column family.
    let twice = cf_with(KS, "Twice", vec![indexed("a", "same"), indexed("b", "same")]);
    assert_eq!(expect_ire("duplicate in a CF", c.system_add_column_family(twice)), "Duplicate index name same");
    // An index name another column family of the keyspace has, on add and on update.
    let clash = cf_with(KS, "Clash", vec![indexed("x", "by_state")]);
    assert_eq!(
        expect_ire("duplicate in the keyspace", c.system_add_column_family(clash)),
        format!("Duplicate index name by_state in keyspace {KS}")
    );
    ok("add Other", c.system_add_column_family(cf_with(KS, "Other", vec![indexed("x", "by_x")])));
    let mut update = ok("describe_keyspace", c.describe_keyspace(KS.into()))
        .cf_defs
        .into_iter()
        .find(|cf| cf.name == "Other")
        .expect("Other is defined");
    update.column_metadata = Some(vec![indexed("x", "by_x"), indexed("y", "by_state")]);
    assert_eq!(
        expect_ire("duplicate on update", c.system_update_column_family(update)),
        format!("Duplicate index name by_state in keyspace {KS}")
    );
    // A new keyspace whose column families share an index name.
    let shared = ks_def(
        "Shared",
        1,
        vec![cf_with("Shared", "A", vec![indexed("x", "i")]), cf_with("Shared", "B", vec![indexed("x", "i")])],
    );
    assert_eq!(
        expect_ire("duplicate in a new keyspace", c.system_add_keyspace(shared)),
        "Duplicate index name i in keyspace Shared"
    );
    // The same name in another keyspace is fine.
    create_keyspace(&mut c, "Elsewhere", vec![cf_with("Elsewhere", "Users", vec![indexed("state", "by_state")])]);

    let illegal = cf_with(KS, "Illegal", vec![indexed("a", "no-dashes")]);
    assert_eq!(expect_ire("illegal index name", c.system_add_column_family(illegal)), "Illegal index name no-dashes");

    let mut cf = cf_def(KS, "Forever", "UTF8Type");
    cf.default_time_to_live = Some(630_720_001);
    assert_eq!(
        expect_ire("default ttl past 20 years", c.system_add_column_family(cf)),
        "default_time_to_live must be less than or equal to 630720000 (got 630720001)"
    );
    let mut cf = cf_def(KS, "Negative", "UTF8Type");
    cf.gc_grace_seconds = Some(-1);
    assert_eq!(
        expect_ire("negative gc_grace_seconds", c.system_add_column_family(cf)),
        "gc_grace_seconds must be greater than or equal to 0 (got -1)"
    );
    let mut cf = cf_def(KS, "Negative", "UTF8Type");
    cf.memtable_flush_period_in_ms = Some(-5);
    assert_eq!(
        expect_ire("negative memtable_flush_period_in_ms", c.system_add_column_family(cf)),
        "memtable_flush_period_in_ms must be greater than or equal to 0 (got -5)"
    );
    let mut cf = cf_def(KS, "Intervals", "UTF8Type");
    (cf.min_index_interval, cf.max_index_interval) = (Some(256), Some(128));
    assert_eq!(
        expect_ire("index intervals out of order", c.system_add_column_family(cf)),
        "max_index_interval must be greater than or equal to min_index_interval (256) (got 128)"
    );

    // Nothing refused was created, and the connection still works.
    let names: Vec<String> =
        ok("describe_keyspace", c.describe_keyspace(KS.into())).cf_defs.into_iter().map(|cf| cf.name).collect();
    let mut names = names;
    names.sort();
    assert_eq!(names, vec!["Other".to_string(), "Users".to_string()]);
    assert!(!ok("describe_keyspaces", c.describe_keyspaces()).iter().any(|k| k.name == "Shared"));
}
