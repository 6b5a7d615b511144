//! Type strings nested thousands of levels deep, from a client or from storage-conf.xml, are
//! refused with an error naming the problem ("nested too deeply") instead of overflowing the
//! stack of the thread parsing them, and the node goes on serving.
//!
//! The two requests of the robustness audit: `system_add_column_family` with a comparator of
//! `CompositeType(` nested 2,000 deep, and one insert into a `DynamicCompositeType` column family
//! whose column name carries its component's type as text, `ReversedType(` nested 2,300 deep.

use std::process::{Command, Stdio};
use std::time::Duration;

use e2e::*;
use thrift_idl as t;

const KS: &str = "Hostile";

fn nested(wrapper: &str, leaf: &str, depth: usize) -> String {
    format!("{}{leaf}{}", wrapper.repeat(depth), ")".repeat(depth))
}

/// A DynamicCompositeType column name of one component whose type is written as `type_text`.
fn dynamic_name(type_text: &str, value: &[u8]) -> Vec<u8> {
    let type_len = u16::try_from(type_text.len()).expect("type text under 32 KB");
    assert!(type_len < 0x8000, "bit 15 of the header would make it an alias");
    let mut name = type_len.to_be_bytes().to_vec();
    name.extend_from_slice(type_text.as_bytes());
    name.extend_from_slice(&u16::try_from(value.len()).expect("short value").to_be_bytes());
    name.extend_from_slice(value);
    name.push(0);
    name
}

/// The node answers an ordinary request.
fn assert_serving(node: &mut Node, what: &str) {
    assert!(node.is_running(), "{what}: the node died");
    let mut c = node.client_in(KS);
    let key = b(&format!("alive-{}", what.len()));
    ok("insert", c.insert(key.clone(), parent("Plain"), column(b("c"), b(what), ts()), ONE));
    let got = ok("get", c.get(key, path("Plain", b("c")), ONE));
    assert_eq!(got.column.and_then(|c| c.value), Some(b(what)), "{what}");
}

#[test]
fn deeply_nested_types_from_clients_are_refused_and_the_node_keeps_serving() {
    let schema = vec![cf_def(KS, "Plain", "UTF8Type"), cf_def(KS, "Dyn", "DynamicCompositeType(a=>LongType)")];
    let (mut node, mut c) = Node::start_with_keyspace(Config::random(), KS, schema);

    // The audit's schema request: comparator CompositeType( 2,000 deep.
    let deep = cf_def(KS, "Deep", &nested("CompositeType(", "LongType", 2_000));
    expect_ire_containing("2,000-deep comparator", c.system_add_column_family(deep), &["nested too deeply"]);
    assert_serving(&mut node, "after the deep comparator");

    // The same through every other type-bearing field, and much deeper.
    let mut by_validator = cf_def(KS, "Deep", "UTF8Type");
    by_validator.default_validation_class = Some(nested("ReversedType(", "BytesType", 100_000));
    expect_ire_containing("100,000-deep validator", c.system_add_column_family(by_validator), &["nested too deeply"]);
    let mut by_column = cf_def(KS, "Deep", "UTF8Type");
    by_column.column_metadata = Some(vec![t::ColumnDef::new(
        b("col"),
        nested("DynamicCompositeType(a=>", "LongType", 5_000),
        None,
        None,
        None,
    )]);
    expect_ire_containing(
        "deep column validation_class",
        c.system_add_column_family(by_column),
        &["nested too deeply"],
    );
    let mut by_key = cf_def(KS, "Deep", "UTF8Type");
    by_key.key_validation_class = Some("CompositeType(".repeat(50_000)); // never closed
    expect_ire_containing("deep key validator", c.system_add_column_family(by_key), &["nested too deeply"]);
    assert_serving(&mut node, "after the deep schema requests");

    // The audit's insert: one DynamicCompositeType component typed ReversedType( 2,300 deep.
    let hostile = dynamic_name(&nested("ReversedType(", "BytesType", 2_300), b"x");
    let why = expect_ire_containing(
        "insert with a 2,300-deep component type",
        c.insert(b("k"), parent("Dyn"), column(hostile.clone(), b("v"), ts()), ONE),
        &["nested too deeply"],
    );
    assert!(why.len() < 1_000, "the 30 KB type text is not echoed back whole: {} bytes", why.len());
    // Slices bounded by it are refused or answered, never fatal.
    let range = t::SlicePredicate::new(None, t::SliceRange::new(hostile.clone(), Vec::new(), false, 10));
    let _ = c.get_slice(b("k"), parent("Dyn"), range, ONE);
    assert_serving(&mut node, "after the hostile column name");

    // Components may name DynamicCompositeType itself, with values nesting a level each.
    let mut nested_value = dynamic_name("BytesType", b"leaf");
    for _ in 0..2_000 {
        nested_value = dynamic_name("DynamicCompositeType", &nested_value);
    }
    expect_ire_containing(
        "insert with 2,000 nested dynamic components",
        c.insert(b("k"), parent("Dyn"), column(nested_value, b("v"), ts()), ONE),
        &["nested too deeply"],
    );
    assert_serving(&mut node, "after the nested dynamic components");

    // Ordinary dynamic composite names still work: an alias, and a type written as text.
    let by_alias = [&[0x80, b'a'][..], &8u16.to_be_bytes(), &7i64.to_be_bytes(), &[0]].concat();
    let by_text = dynamic_name("ReversedType(UTF8Type)", b"seven");
    for name in [by_alias, by_text] {
        ok("insert", c.insert(b("k"), parent("Dyn"), column(name.clone(), b("v"), ts()), ONE));
        let got = ok("get", c.get(b("k"), path("Dyn", name.clone()), ONE));
        assert_eq!(got.column.map(|c| c.name), Some(name));
    }
}

#[test]
fn a_deeply_nested_type_in_storage_conf_stops_startup_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let comparator = nested("CompositeType(", "LongType", 2_000);
    let config = Config::random()
        .keyspaces(keyspace_xml("Conf", &[&format!("<ColumnFamily Name=\"DeepCf\" CompareWith=\"{comparator}\"/>")]));
    let conf = dir.path().join("storage-conf.xml");
    std::fs::write(&conf, config.render(dir.path(), free_port(), free_port(), free_port(), free_port()))
        .expect("write conf");
    let log = dir.path().join("sibyl.log");
    let mut child = Command::new(sibyl_bin())
        .arg("--config")
        .arg(&conf)
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).expect("create log"))
        .stderr(std::fs::File::create(dir.path().join("stderr")).expect("create stderr"))
        .spawn()
        .expect("spawn sibyl");
    let status = wait_bounded(&mut child, Duration::from_secs(30)).expect("sibyl exits on a bad config");
    let err = std::fs::read_to_string(dir.path().join("stderr")).unwrap_or_default();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("storage-conf.xml") && err.contains("DeepCf"), "{err}");
    assert!(err.contains("nested too deeply"), "{err}");
    assert!(err.len() < 2_000, "the type string is not echoed back whole: {} bytes", err.len());
}
