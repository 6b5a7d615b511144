//! `system_traces` (Cassandra's TraceKeyspace): what each traced request did, one row of
//! `sessions` per request and its steps as rows of `events`, both keyed by the trace session id
//! that `trace_next_query` gave the client.
//!
//! These are CQL tables, as in 3.11.10 (its columns and types, so a CQL client and a driver's
//! schema metadata read them as 3.11 shows them; Thrift's describe_keyspace leaves them out):
//!
//! ```text
//! sessions (session_id uuid, client inet, command text, coordinator inet, coordinator_port int,
//!           duration int, parameters map<text, text>, request text, started_at timestamp,
//!           PRIMARY KEY ((session_id)))
//! events   (session_id uuid, event_id timeuuid, activity text, source inet, source_port int,
//!           source_elapsed int, thread text, PRIMARY KEY ((session_id), event_id))
//! ```
//!
//! Stored in 3.11's legacy layout, which a Thrift client of 3.11 reads:
//!
//! ```text
//! sessions  key = session_id (UUIDType)
//!           comparator CompositeType(UTF8Type, ColumnToCollectionType(parameters: map)); one
//!           cell per CQL column, named (column) — client, command, coordinator, duration,
//!           request, started_at — and one per entry of the `parameters` map, named
//!           ("parameters", map key)
//! events    key = session_id (UUIDType)
//!           comparator CompositeType(TimeUUIDType,UTF8Type); one cell per column of each event,
//!           named (event_id, column) — activity, source, source_elapsed, thread
//! ```
//!
//! Values are the CQL types' bytes: inet 4 or 16 address bytes, int 4 bytes big-endian,
//! timestamp 8 bytes of milliseconds, text UTF-8. As in 3.11 the rows have no row marker (they
//! are updates, not INSERTs) and the port columns stay empty (3.11 writes them only once no 3.x
//! node is left).
//!
//! Every cell lives 86400 s, as Cassandra writes them. The keyspace is local to each node
//! (LocalStrategy): a trace is kept by the node that coordinated the request, and read back
//! through it.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::net::IpAddr;

use uuid::Uuid;

use crate::data::Cell;
use crate::marshal::AbstractType;
use crate::mutation::RowMutation;
use crate::schema::{CfDef, ColumnDef, CqlLayout, KeyspaceDef};

pub const KEYSPACE: &str = "system_traces";
pub const SESSIONS_CF: &str = "sessions";
pub const EVENTS_CF: &str = "events";

/// How long trace data lives (Cassandra's TTL for every trace write).
pub const TTL_SECONDS: i32 = 86_400;

pub(super) const SESSIONS_CF_ID: Uuid = Uuid::from_u128(0x5bb1_0000_0000_4000_8000_0000_0000_0b01);
pub(super) const EVENTS_CF_ID: Uuid = Uuid::from_u128(0x5bb1_0000_0000_4000_8000_0000_0000_0b02);

const M: &str = "org.apache.cassandra.db.marshal.";

/// A table of `system_traces`: name, fixed id, comment, clustering columns and the other
/// columns (CQL name, marshal type without the package); the partition key is `session_id`.
struct TraceTable {
    name: &'static str,
    id: Uuid,
    comment: &'static str,
    clustering: &'static [(&'static str, &'static str)],
    columns: &'static [(&'static str, &'static str)],
}

const TABLES: [TraceTable; 2] = [
    TraceTable {
        name: SESSIONS_CF,
        id: SESSIONS_CF_ID,
        comment: "tracing sessions",
        clustering: &[],
        columns: &[
            ("client", "InetAddressType"),
            ("command", "UTF8Type"),
            ("coordinator", "InetAddressType"),
            ("coordinator_port", "Int32Type"),
            ("duration", "Int32Type"),
            ("parameters", "MapType(UTF8Type,UTF8Type)"),
            ("request", "UTF8Type"),
            ("started_at", "TimestampType"),
        ],
    },
    TraceTable {
        name: EVENTS_CF,
        id: EVENTS_CF_ID,
        comment: "tracing events",
        clustering: &[("event_id", "TimeUUIDType")],
        columns: &[
            ("activity", "UTF8Type"),
            ("source", "InetAddressType"),
            ("source_elapsed", "Int32Type"),
            ("source_port", "Int32Type"),
            ("thread", "UTF8Type"),
        ],
    },
];

/// The definition of `system_traces` (never stored: the same on every node).
pub fn keyspace_def() -> KeyspaceDef {
    let mut ks = KeyspaceDef::new(KEYSPACE);
    ks.strategy_class = "org.apache.cassandra.locator.LocalStrategy".into();
    ks.strategy_options = BTreeMap::new();
    ks.cf_defs.extend(TABLES.iter().map(table_def));
    ks
}

/// A marshal type of this file's tables (they are all well formed).
fn marshal_type(short: &str) -> AbstractType {
    AbstractType::parse(short).unwrap_or(AbstractType::Bytes)
}

/// One table as CQL's CREATE TABLE would make it: the sparse comparator, the columns declared,
/// the CQL names kept.
fn table_def(t: &TraceTable) -> CfDef {
    let mut cf = CfDef::new(KEYSPACE, t.name);
    cf.id = t.id;
    cf.thrift_id = crate::schema::thrift_id_of(&t.id);
    cf.comparator_type = comparator(t).class_name();
    cf.key_validation_class = format!("{M}UUIDType");
    cf.column_metadata = t
        .columns
        .iter()
        .map(|(name, ty)| ColumnDef {
            name: name.as_bytes().to_vec(),
            validation_class: marshal_type(ty).class_name(),
            index_type: None,
            index_name: None,
            index_options: BTreeMap::new(),
        })
        .collect();
    cf.cql = Some(CqlLayout {
        key_aliases: vec!["session_id".into()],
        column_aliases: t.clustering.iter().map(|(name, _)| name.to_string()).collect(),
        ..CqlLayout::default()
    });
    cf.comment = Some(t.comment.into());
    // Cells expire and are never deleted: nothing for tombstones to wait for.
    cf.gc_grace_seconds = 0;
    cf
}

/// The sparse comparator of a table: its clustering types, the column name, then its
/// non-frozen collections.
fn comparator(t: &TraceTable) -> AbstractType {
    let mut parts: Vec<AbstractType> = t.clustering.iter().map(|(_, ty)| marshal_type(ty)).collect();
    parts.push(AbstractType::Utf8);
    let collections: Vec<(Vec<u8>, AbstractType)> = t
        .columns
        .iter()
        .map(|(name, ty)| (name.as_bytes().to_vec(), marshal_type(ty)))
        .filter(|(_, ty)| ty.is_multi_cell())
        .collect();
    if !collections.is_empty() {
        parts.push(AbstractType::ColumnToCollection(collections));
    }
    AbstractType::Composite(parts)
}

/// One traced request, as its `sessions` row records it.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSession {
    pub session_id: Uuid,
    /// Where the request came from (None when unknown).
    pub client: Option<IpAddr>,
    /// The node that coordinated it.
    pub coordinator: IpAddr,
    /// The Thrift method, e.g. `get_slice`.
    pub request: String,
    /// Cassandra's trace type: `QUERY` for every Thrift request.
    pub command: String,
    pub parameters: BTreeMap<String, String>,
    /// Milliseconds since the epoch.
    pub started_at: i64,
    /// Microseconds from receipt to the answer.
    pub duration_micros: i32,
}

/// One step of a traced request, as its `events` row records it.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEvent {
    /// A version 1 UUID taken when the step happened: events read back in time order.
    pub event_id: Uuid,
    pub activity: String,
    /// The node the step ran on.
    pub source: IpAddr,
    /// Microseconds since the request was received.
    pub source_elapsed_micros: i32,
    pub thread: String,
}

/// A composite name of UTF-8 or raw components, each `u16 length, bytes, 0` (CompositeType).
pub fn composite_name(components: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for c in components {
        let len = u16::try_from(c.len()).unwrap_or(u16::MAX);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&c[..usize::from(len)]);
        out.push(0);
    }
    out
}

fn inet_bytes(ip: IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => v6.octets().to_vec(),
    }
}

/// The mutation that records `session` and its `events` (one row key, both column families),
/// written at `timestamp` (µs) and expiring [`TTL_SECONDS`] after `now` (node seconds).
pub fn session_mutation(session: &TraceSession, events: &[TraceEvent], timestamp: i64, now: i32) -> RowMutation {
    let cell = |name: Vec<u8>, value: Vec<u8>| Cell::expiring(name, value, timestamp, TTL_SECONDS, now);
    let mut m = RowMutation::new(KEYSPACE, session.session_id.as_bytes().to_vec());

    let mut sessions = Vec::new();
    if let Some(client) = session.client {
        sessions.push(cell(composite_name(&[b"client"]), inet_bytes(client)));
    }
    sessions.push(cell(composite_name(&[b"command"]), session.command.clone().into_bytes()));
    sessions.push(cell(composite_name(&[b"coordinator"]), inet_bytes(session.coordinator)));
    sessions.push(cell(composite_name(&[b"duration"]), session.duration_micros.to_be_bytes().to_vec()));
    for (k, v) in &session.parameters {
        sessions.push(cell(composite_name(&[b"parameters", k.as_bytes()]), v.clone().into_bytes()));
    }
    sessions.push(cell(composite_name(&[b"request"]), session.request.clone().into_bytes()));
    sessions.push(cell(composite_name(&[b"started_at"]), session.started_at.to_be_bytes().to_vec()));
    sort_cells(&mut sessions, &comparator(&TABLES[0]));
    m.row_mut(SESSIONS_CF).cells = sessions;

    if !events.is_empty() {
        let mut cells = Vec::with_capacity(events.len() * 4);
        for e in events {
            let id = e.event_id.as_bytes();
            cells.push(cell(composite_name(&[id, b"activity"]), e.activity.clone().into_bytes()));
            cells.push(cell(composite_name(&[id, b"source"]), inet_bytes(e.source)));
            cells.push(cell(composite_name(&[id, b"source_elapsed"]), e.source_elapsed_micros.to_be_bytes().to_vec()));
            cells.push(cell(composite_name(&[id, b"thread"]), e.thread.clone().into_bytes()));
        }
        sort_cells(&mut cells, &comparator(&TABLES[1]));
        m.row_mut(EVENTS_CF).cells = cells;
    }
    m
}

/// An update's cells must be in comparator order (and unique): events could share an id only if
/// the clock went back, in which case the later one is kept.
fn sort_cells(cells: &mut Vec<Cell>, ty: &AbstractType) {
    cells.sort_by(|a, b| ty.compare(&a.name, &b.name));
    cells.dedup_by(|later, earlier| {
        let same = ty.compare(&later.name, &earlier.name) == Ordering::Equal;
        if same {
            std::mem::swap(later, earlier);
        }
        same
    });
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;
    use crate::data::CellKind;

    fn session() -> TraceSession {
        TraceSession {
            session_id: Uuid::from_u128(7),
            client: Some(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 9))),
            coordinator: IpAddr::V4(Ipv4Addr::LOCALHOST),
            request: "get_slice".into(),
            command: "QUERY".into(),
            parameters: BTreeMap::from([("key".to_string(), "6b31".to_string())]),
            started_at: 1_700_000_000_000,
            duration_micros: 1234,
        }
    }

    #[test]
    fn keyspace_is_valid_and_local() {
        let ks = keyspace_def();
        ks.validate().expect("valid");
        assert_eq!(ks.strategy_class, "org.apache.cassandra.locator.LocalStrategy");
        assert_eq!(ks.cf_defs.iter().map(|c| c.id).collect::<Vec<_>>(), [SESSIONS_CF_ID, EVENTS_CF_ID]);
        // Every type name of the tables parses (marshal_type would make a bad one a blob).
        for t in &TABLES {
            for (name, ty) in t.clustering.iter().chain(t.columns) {
                assert!(AbstractType::parse(ty).is_ok(), "{}.{name}: {ty}", t.name);
            }
        }
    }

    /// Both tables read from CQL as 3.11's CREATE TABLE statements make them, and Thrift's
    /// describe leaves them out.
    #[test]
    fn the_tables_are_cql_tables_of_3_11() {
        use model::cql_table::{cql_name, Layout, Table};
        let ks = keyspace_def();
        let describe = |cf: &CfDef| {
            let t = Table::from_def(cf).expect("a CQL table");
            assert_eq!(t.layout, Layout::Sparse, "{}", cf.name);
            assert!(!cf.is_thrift_compatible(), "{}", cf.name);
            let names = |cols: &[model::cql_table::Column]| {
                cols.iter().map(|c| format!("{} {}", c.name, cql_name(&c.ty))).collect::<Vec<_>>()
            };
            (names(&t.partition_key), names(&t.clustering), names(&t.regular))
        };
        assert_eq!(
            describe(&ks.cf_defs[0]),
            (
                vec!["session_id uuid".to_string()],
                vec![],
                [
                    "client inet",
                    "command text",
                    "coordinator inet",
                    "coordinator_port int",
                    "duration int",
                    "parameters map<text, text>",
                    "request text",
                    "started_at timestamp"
                ]
                .map(String::from)
                .to_vec()
            )
        );
        assert_eq!(
            describe(&ks.cf_defs[1]),
            (
                vec!["session_id uuid".to_string()],
                vec!["event_id timeuuid".to_string()],
                ["activity text", "source inet", "source_elapsed int", "source_port int", "thread text"]
                    .map(String::from)
                    .to_vec()
            )
        );
    }

    /// What a session writes is what the CQL view of its tables reads: each cell names a column
    /// of its table, a parameter an element of the map.
    #[test]
    fn a_session_reads_as_cql_rows() {
        use model::cql_table::Table;
        let ks = keyspace_def();
        let event = TraceEvent {
            event_id: Uuid::now_v1(b"sibyl!"),
            activity: "step".into(),
            source: IpAddr::V4(Ipv4Addr::LOCALHOST),
            source_elapsed_micros: 5,
            thread: "t".into(),
        };
        let m = session_mutation(&session(), std::slice::from_ref(&event), 10, 100);
        for (cf, update) in &m.updates {
            let def = ks.cf_defs.iter().find(|d| &d.name == cf).expect("a table of system_traces");
            let table = Table::from_def(def).expect("a CQL table");
            for c in &update.cells {
                let name = table.split_cell_name(&c.name).expect("a cell name of the table");
                let column = String::from_utf8(name.column.clone().expect("a column")).expect("utf-8");
                assert!(table.column(&column).is_some(), "{cf}: no column {column}");
                if cf == EVENTS_CF {
                    assert_eq!(name.clustering, [event.event_id.as_bytes().to_vec()]);
                }
                assert_eq!(name.element.is_some(), column == "parameters", "{cf}.{column}: {name:?}");
            }
        }
    }

    #[test]
    fn a_session_is_one_row_of_each_table_in_comparator_order() {
        let ids = [Uuid::now_v1(b"sibyl!"), Uuid::now_v1(b"sibyl!")];
        let events: Vec<TraceEvent> = ids
            .iter()
            .map(|id| TraceEvent {
                event_id: *id,
                activity: "step".into(),
                source: IpAddr::V4(Ipv4Addr::LOCALHOST),
                source_elapsed_micros: 5,
                thread: "t".into(),
            })
            .collect();
        let m = session_mutation(&session(), &events, 10, 100);
        assert_eq!(m.keyspace, KEYSPACE);
        assert_eq!(m.key, Uuid::from_u128(7).as_bytes().to_vec());
        let sessions = &m.updates.iter().find(|(cf, _)| cf == SESSIONS_CF).expect("sessions").1;
        let names: Vec<Vec<u8>> = sessions.cells.iter().map(|c| c.name.clone()).collect();
        let expected: Vec<Vec<u8>> = [
            composite_name(&[b"client"]),
            composite_name(&[b"command"]),
            composite_name(&[b"coordinator"]),
            composite_name(&[b"duration"]),
            composite_name(&[b"parameters", b"key"]),
            composite_name(&[b"request"]),
            composite_name(&[b"started_at"]),
        ]
        .to_vec();
        assert_eq!(names, expected);
        let duration = sessions.cells.iter().find(|c| c.name == composite_name(&[b"duration"])).expect("duration");
        assert_eq!(duration.value, 1234i32.to_be_bytes());
        assert!(sessions.cells.iter().all(|c| matches!(c.kind, CellKind::Expiring { ttl: TTL_SECONDS, .. })));
        let ev = &m.updates.iter().find(|(cf, _)| cf == EVENTS_CF).expect("events").1;
        assert_eq!(ev.cells.len(), 8);
        assert_eq!(ev.cells[0].name, composite_name(&[ids[0].as_bytes(), b"activity"]));
        assert_eq!(ev.cells[4].name, composite_name(&[ids[1].as_bytes(), b"activity"]));
    }
}
