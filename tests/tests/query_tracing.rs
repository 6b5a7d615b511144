//! trace_next_query returns a time-based session id, and the next request on that connection is
//! traced into `system_traces` as 3.11 does: a `sessions` row and `events` rows keyed by that id,
//! read back over Thrift, every cell living 86400 s. The request after it is not traced, and
//! clients cannot write the keyspace.

use std::collections::BTreeMap;

use e2e::*;
use thrift_idl as t;
use thrift_idl::TCassandraSyncClient;

/// The components of a CompositeType name (`u16 length, bytes, end-of-component byte`)*.
fn components(mut name: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while name.len() >= 3 {
        let len = usize::from(u16::from_be_bytes([name[0], name[1]]));
        assert!(name.len() > 2 + len, "truncated composite {name:?}");
        out.push(name[2..2 + len].to_vec());
        name = &name[3 + len..];
    }
    assert!(name.is_empty(), "trailing bytes in a composite name: {name:?}");
    out
}

/// Column name → value.
type Cells = BTreeMap<String, Vec<u8>>;

fn columns(cols: &[t::ColumnOrSuperColumn]) -> Vec<t::Column> {
    cols.iter().map(|c| c.column.clone().expect("a standard column")).collect()
}

/// The `sessions` row of `id`: column (or `parameters:key`) → value.
fn session_row(c: &mut Client, id: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let row = ok("get_slice sessions", c.get_slice(id.to_vec(), parent("sessions"), all(100), ONE));
    columns(&row)
        .into_iter()
        .map(|col| {
            assert_eq!(col.ttl, Some(86_400), "trace data lives a day: {col:?}");
            let parts: Vec<String> = components(&col.name).iter().map(|p| String::from_utf8_lossy(p).into()).collect();
            (parts.join(":"), col.value.expect("value"))
        })
        .collect()
}

/// The `events` of `id`, in event id order: (activity, source_elapsed µs).
fn events(c: &mut Client, id: &[u8]) -> Vec<(String, i32)> {
    let row = ok("get_slice events", c.get_slice(id.to_vec(), parent("events"), all(1000), ONE));
    let mut by_event: Vec<(Vec<u8>, Cells)> = Vec::new();
    for col in columns(&row) {
        assert_eq!(col.ttl, Some(86_400), "trace data lives a day: {col:?}");
        let parts = components(&col.name);
        assert_eq!(parts.len(), 2, "(event_id, column): {parts:?}");
        let uuid = uuid::Uuid::from_slice(&parts[0]).expect("event_id is a UUID");
        assert_eq!(uuid.get_version_num(), 1, "event ids are time-based");
        if by_event.last().is_none_or(|(e, _)| *e != parts[0]) {
            by_event.push((parts[0].clone(), BTreeMap::new()));
        }
        let (_, cols) = by_event.last_mut().expect("pushed");
        cols.insert(String::from_utf8_lossy(&parts[1]).into(), col.value.expect("value"));
    }
    by_event
        .into_iter()
        .map(|(_, cols)| {
            assert_eq!(cols.keys().collect::<Vec<_>>(), ["activity", "source", "source_elapsed", "thread"]);
            assert_eq!(cols["source"], [127, 0, 0, 1], "the event ran on this node");
            let elapsed = i32::from_be_bytes(cols["source_elapsed"].as_slice().try_into().expect("an int"));
            (String::from_utf8_lossy(&cols["activity"]).into_owned(), elapsed)
        })
        .collect()
}

fn session_count(c: &mut Client) -> usize {
    ok("get_range_slices sessions", c.get_range_slices(parent("sessions"), all(1), key_range("", "", 100), ONE)).len()
}

#[test]
fn next_query_is_traced_into_system_traces_under_the_returned_session_id() {
    let node = Node::start(Config::random());
    let mut c = node.client();
    create_keyspace(&mut c, "Traced", vec![cf_def("Traced", "Standard1", "UTF8Type")]);
    ok("set_keyspace", c.set_keyspace("Traced".into()));
    ok("insert", c.insert(b("k"), parent("Standard1"), column(b("c"), b("v"), ts()), ONE));

    let before = ts() / 1000;
    let read_id = ok("trace_next_query", c.trace_next_query());
    assert_eq!(read_id.len(), 16, "a session id is a UUID");
    let uuid = uuid::Uuid::from_slice(&read_id).expect("uuid");
    assert_eq!(uuid.get_version_num(), 1, "trace sessions are time-based UUIDs");
    let got = ok("traced get_slice", c.get_slice(b("k"), parent("Standard1"), all(10), ONE));
    assert_eq!(str_pairs(&got), [("c".to_string(), "v".to_string())], "tracing does not change the answer");
    ok("untraced get_slice", c.get_slice(b("k"), parent("Standard1"), all(10), ONE));

    let write_id = ok("trace_next_query", c.trace_next_query());
    assert_ne!(write_id, read_id);
    ok("traced insert", c.insert(b("k2"), parent("Standard1"), column(b("c"), b("v"), ts()), ONE));

    // A CQL query is traced like any call, with its text.
    let cql_id = ok("trace_next_query", c.trace_next_query());
    let query = "SELECT * FROM \"Standard1\" WHERE key = 0x6b";
    ok("traced CQL", c.execute_cql3_query(query.as_bytes().to_vec(), t::Compression::NONE, ONE));

    let mut t = node.client();
    ok("set_keyspace system_traces", t.set_keyspace("system_traces".into()));
    let cql = session_row(&mut t, &cql_id);
    assert_eq!(cql["request"], b"execute_cql3_query");
    assert_eq!(cql["parameters:query"], query.as_bytes());
    assert_eq!(cql["parameters:consistency_level"], b"ONE");
    let session = session_row(&mut t, &read_id);
    assert_eq!(session["request"], b"get_slice");
    assert_eq!(session["command"], b"QUERY");
    assert_eq!(session["coordinator"], [127, 0, 0, 1]);
    assert_eq!(session["client"], [127, 0, 0, 1]);
    assert_eq!(session["parameters:key"], b"6b", "the key in hex");
    assert_eq!(session["parameters:column_family"], b"Standard1");
    assert_eq!(session["parameters:consistency_level"], b"ONE");
    let started_at = i64::from_be_bytes(session["started_at"].as_slice().try_into().expect("a timestamp"));
    assert!((before..before + 60_000).contains(&started_at), "started_at {started_at} ms, asked at {before}");
    let duration = i32::from_be_bytes(session["duration"].as_slice().try_into().expect("an int"));
    assert!(duration > 0, "duration {duration} µs");

    let read_events = events(&mut t, &read_id);
    let activities: Vec<&str> = read_events.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(activities.first(), Some(&"get_slice request received"), "{activities:?}");
    assert_eq!(activities.last(), Some(&"Request complete"), "{activities:?}");
    assert!(activities.iter().any(|a| a.starts_with("Reading 1 partition(s) locally")), "{activities:?}");
    assert!(read_events.windows(2).all(|w| w[0].1 <= w[1].1), "events in time order: {read_events:?}");
    assert!(read_events.iter().all(|(_, e)| *e <= duration), "{read_events:?} within {duration} µs");

    let write = session_row(&mut t, &write_id);
    assert_eq!(write["request"], b"insert");
    assert_eq!(write["parameters:key"], b"6b32");
    let write_events = events(&mut t, &write_id);
    assert!(write_events.iter().any(|(a, _)| a.starts_with("Applying 1 mutation(s) locally")), "{write_events:?}");

    // Three traced requests, three sessions: the untraced get_slice and these reads left none.
    assert_eq!(session_count(&mut t), 3);

    let why = expect_ire(
        "insert into system_traces",
        t.insert(read_id.clone(), parent("sessions"), column(b("x"), b("y"), ts()), ONE),
    );
    assert!(why.contains("system_traces"), "{why}");
    expect_ire_containing("drop system_traces", t.system_drop_keyspace("system_traces".into()), &["system_traces"]);
}
