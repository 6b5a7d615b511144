//! The system keyspaces of 3.11 beside the user's: describe_keyspaces lists `system`,
//! `system_schema`, `system_auth`, `system_distributed` and `system_traces` with their column
//! families; `system_schema` holds rows of the live schema (a keyspace created by a client appears
//! and disappears with it), `system_auth` the SimpleAuthenticator's users and grants (nothing
//! without one), `system_distributed` is readable and empty; no client may write any of them.

use std::collections::BTreeMap;

use e2e::*;
use thrift_idl as t;
use thrift_idl::TCassandraSyncClient;

const SYSTEM_KEYSPACES: [&str; 5] = ["system", "system_auth", "system_distributed", "system_schema", "system_traces"];

/// CompositeType name → its components joined by ':'.
fn composite(mut name: &[u8]) -> String {
    let mut parts = Vec::new();
    while name.len() >= 3 {
        let len = usize::from(u16::from_be_bytes([name[0], name[1]]));
        assert!(name.len() > 2 + len, "truncated composite {name:?}");
        parts.push(String::from_utf8_lossy(&name[2..2 + len]).into_owned());
        name = &name[3 + len..];
    }
    assert!(name.is_empty(), "trailing bytes: {name:?}");
    parts.join(":")
}

/// A row of composite-named columns: name → value.
fn row(c: &mut Client, key: &str, cf: &str) -> BTreeMap<String, Vec<u8>> {
    let cols = ok(&format!("get_slice {cf}"), c.get_slice(b(key), parent(cf), all(1000), ONE));
    cols.into_iter()
        .map(|c| c.column.expect("a standard column"))
        .map(|col| (composite(&col.name), col.value.expect("value")))
        .collect()
}

/// Keys of the rows of `cf` holding live columns (range scans also return deleted rows, empty).
fn live_keys(c: &mut Client, cf: &str) -> Vec<String> {
    let rows =
        ok(&format!("get_range_slices {cf}"), c.get_range_slices(parent(cf), all(1), key_range("", "", 1000), ONE));
    rows.into_iter().filter(|r| !r.columns.is_empty()).map(|r| String::from_utf8_lossy(&r.key).into_owned()).collect()
}

/// The elements of a frozen set or the entries of a frozen map (CQL serialization), flattened.
fn frozen_items(v: &[u8]) -> Vec<String> {
    let mut items = Vec::new();
    let mut rest = &v[4..];
    while !rest.is_empty() {
        let len = i32::from_be_bytes(rest[..4].try_into().expect("length")) as usize;
        items.push(String::from_utf8_lossy(&rest[4..4 + len]).into_owned());
        rest = &rest[4 + len..];
    }
    items
}

fn refuse_writes(c: &mut Client) {
    for (ks, cf) in [
        ("system", "local"),
        ("system_schema", "keyspaces"),
        ("system_auth", "roles"),
        ("system_distributed", "repair_history"),
        ("system_traces", "sessions"),
    ] {
        ok(&format!("set_keyspace {ks}"), c.set_keyspace(ks.into()));
        let why = expect_ire(
            &format!("insert into {ks}.{cf}"),
            c.insert(b("k"), parent(cf), column(b("c"), b("v"), ts()), ONE),
        );
        assert!(why.contains(ks), "{ks}: {why}");
        expect_ire_containing(&format!("drop {ks}"), c.system_drop_keyspace(ks.into()), &[ks]);
        let cf_def = cf_def(ks, "Mine", "UTF8Type");
        expect_ire_containing(&format!("add a column family to {ks}"), c.system_add_column_family(cf_def), &[ks]);
    }
}

#[test]
fn the_five_system_keyspaces_are_listed_readable_and_refuse_writes() {
    let node = Node::start(Config::random());
    let mut c = node.client();
    create_keyspace(&mut c, "Shop", vec![cf_def("Shop", "Orders", "UTF8Type")]);

    let keyspaces = ok("describe_keyspaces", c.describe_keyspaces());
    let by_name: BTreeMap<&str, &t::KsDef> = keyspaces.iter().map(|k| (k.name.as_str(), k)).collect();
    assert_eq!(
        by_name.keys().copied().collect::<Vec<_>>(),
        [
            "Shop",
            SYSTEM_KEYSPACES[0],
            SYSTEM_KEYSPACES[1],
            SYSTEM_KEYSPACES[2],
            SYSTEM_KEYSPACES[3],
            SYSTEM_KEYSPACES[4]
        ]
    );
    let cfs = |ks: &str| {
        let mut names: Vec<String> = by_name[ks].cf_defs.iter().map(|c| c.name.clone()).collect();
        names.sort();
        names
    };
    // system_schema's tables are CQL tables, which Thrift's describe leaves out as 3.11 does;
    // their rows still read over Thrift.
    assert!(cfs("system_schema").is_empty(), "{:?}", cfs("system_schema"));
    assert_eq!(cfs("system_auth"), ["role_permissions", "roles"]);
    // repair_history is a CQL table (its key named as 3.11 names it), left out likewise.
    assert_eq!(cfs("system_distributed"), ["parent_repair_history"]);
    // So are system_traces' sessions and events.
    assert!(cfs("system_traces").is_empty(), "{:?}", cfs("system_traces"));

    ok("set_keyspace system_schema", c.set_keyspace("system_schema".into()));
    let ks = row(&mut c, "Shop", "keyspaces");
    assert_eq!(ks["durable_writes"], [1]);
    let replication = frozen_items(&ks["replication"]);
    assert!(replication.windows(2).any(|w| w[0] == "class" && w[1].ends_with("SimpleStrategy")), "{replication:?}");
    let tables = row(&mut c, "Shop", "tables");
    assert!(tables.contains_key("Orders:comment") && tables.contains_key("Orders:gc_grace_seconds"), "{tables:?}");
    assert_eq!(tables["Orders:gc_grace_seconds"], 864_000i32.to_be_bytes());
    let columns = row(&mut c, "Shop", "columns");
    assert_eq!(columns["Orders:key:kind"], b"partition_key");
    assert_eq!(columns["Orders:column1:kind"], b"clustering");
    assert_eq!(columns["Orders:column1:type"], b"text", "the comparator, UTF8Type, is CQL's text");
    assert_eq!(columns["Orders:value:kind"], b"regular");
    // The built-in keyspaces are described too, as 3.11 does.
    assert!(live_keys(&mut c, "keyspaces").contains(&"system_traces".to_string()));

    // A column family added and a keyspace dropped show at once.
    ok("set_keyspace Shop", c.set_keyspace("Shop".into()));
    ok("add Items", c.system_add_column_family(cf_def("Shop", "Items", "BytesType")));
    ok("set_keyspace system_schema", c.set_keyspace("system_schema".into()));
    assert!(row(&mut c, "Shop", "tables").contains_key("Items:comment"));
    assert_eq!(row(&mut c, "Shop", "columns")["Items:column1:type"], b"blob");
    ok("drop Shop", c.system_drop_keyspace("Shop".into()));
    for cf in ["keyspaces", "tables", "columns"] {
        assert!(row(&mut c, "Shop", cf).is_empty(), "{cf} still describes a dropped keyspace");
        assert!(!live_keys(&mut c, cf).contains(&"Shop".to_string()), "{cf}");
    }

    // No authenticator: no roles. No repair ever ran: no repair history.
    ok("set_keyspace system_auth", c.set_keyspace("system_auth".into()));
    assert!(live_keys(&mut c, "roles").is_empty());
    assert!(live_keys(&mut c, "role_permissions").is_empty());
    ok("set_keyspace system_distributed", c.set_keyspace("system_distributed".into()));
    assert!(live_keys(&mut c, "parent_repair_history").is_empty());
    assert!(live_keys(&mut c, "repair_history").is_empty());

    refuse_writes(&mut c);
}

fn credentials(user: &str, password: &str) -> t::AuthenticationRequest {
    t::AuthenticationRequest::new(BTreeMap::from([
        ("username".to_string(), user.to_string()),
        ("password".to_string(), password.to_string()),
    ]))
}

#[test]
fn system_auth_holds_the_simple_authenticators_users_and_grants() {
    let config = Config::random()
        .extra("  <Authenticator>org.apache.cassandra.auth.SimpleAuthenticator</Authenticator>\n")
        .keyspaces(keyspace_xml("Open", &[r#"<ColumnFamily Name="Standard1" CompareWith="UTF8Type"/>"#]));
    let node = Node::start_with_files(
        config,
        &[
            ("passwd.properties", "alice=wonderland\nbob=builder\n"),
            ("access.properties", "<modify-keyspaces>=alice\nOpen=alice,bob\nsystem_auth=alice\n"),
        ],
    );
    let mut c = node.client();
    ok("login alice", c.login(credentials("alice", "wonderland")));
    ok("set_keyspace system_auth", c.set_keyspace("system_auth".into()));
    assert_eq!(live_keys(&mut c, "roles").len(), 2);
    let alice = row(&mut c, "alice", "roles");
    assert_eq!((alice["can_login"].as_slice(), alice["is_superuser"].as_slice()), (&[1u8][..], &[1u8][..]));
    let bob = row(&mut c, "bob", "roles");
    assert_eq!(bob["is_superuser"], [0], "bob may not change keyspaces");
    let grants = row(&mut c, "bob", "role_permissions");
    assert_eq!(grants.keys().collect::<Vec<_>>(), ["data/Open:permissions"]);
    assert_eq!(frozen_items(&grants["data/Open:permissions"]), ["MODIFY", "SELECT"]);
    assert!(row(&mut c, "alice", "role_permissions").contains_key("data/system_auth:permissions"));
    // A grant on the keyspace does not make it writable.
    let why =
        expect_ire("alice writes system_auth", c.insert(b("eve"), parent("roles"), column(b("c"), b("v"), ts()), ONE));
    assert!(why.contains("system_auth"), "{why}");
}
