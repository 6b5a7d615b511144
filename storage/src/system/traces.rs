//! `system_traces` (Cassandra's TraceKeyspace): what each traced request did, one row of
//! `sessions` per request and its steps as rows of `events`, both keyed by the trace session id
//! that `trace_next_query` gave the client.
//!
//! In 3.11 these are CQL tables; a Thrift client of 3.11 sees them through the legacy layout,
//! which is what is stored here:
//!
//! ```text
//! sessions  key = session_id (UUIDType)
//!           comparator CompositeType(UTF8Type,UTF8Type); one cell per CQL column, named
//!           (column) — client, command, coordinator, duration, request, started_at — and one
//!           per entry of the `parameters` map, named ("parameters", map key)
//! events    key = session_id (UUIDType)
//!           comparator CompositeType(TimeUUIDType,UTF8Type); one cell per column of each event,
//!           named (event_id, column) — activity, source, source_elapsed, thread
//! ```
//!
//! Values are the CQL types' bytes: inet 4 or 16 address bytes, int 4 bytes big-endian,
//! timestamp 8 bytes of milliseconds, text UTF-8. 3.11's comparator for `sessions` names the
//! map through `ColumnToCollectionType(...)` as its second component; both order the map keys
//! as UTF-8, so the order of cells a client reads is the same.
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
use crate::schema::{CfDef, KeyspaceDef};

pub const KEYSPACE: &str = "system_traces";
pub const SESSIONS_CF: &str = "sessions";
pub const EVENTS_CF: &str = "events";

/// How long trace data lives (Cassandra's TTL for every trace write).
pub const TTL_SECONDS: i32 = 86_400;

pub(super) const SESSIONS_CF_ID: Uuid = Uuid::from_u128(0x5bb1_0000_0000_4000_8000_0000_0000_0b01);
pub(super) const EVENTS_CF_ID: Uuid = Uuid::from_u128(0x5bb1_0000_0000_4000_8000_0000_0000_0b02);

const SESSIONS_COMPARATOR: &str = "org.apache.cassandra.db.marshal.CompositeType(\
org.apache.cassandra.db.marshal.UTF8Type,org.apache.cassandra.db.marshal.UTF8Type)";
const EVENTS_COMPARATOR: &str = "org.apache.cassandra.db.marshal.CompositeType(\
org.apache.cassandra.db.marshal.TimeUUIDType,org.apache.cassandra.db.marshal.UTF8Type)";
const UUID_TYPE: &str = "org.apache.cassandra.db.marshal.UUIDType";

/// The definition of `system_traces` (never stored: the same on every node).
pub fn keyspace_def() -> KeyspaceDef {
    let mut ks = KeyspaceDef::new(KEYSPACE);
    ks.strategy_class = "org.apache.cassandra.locator.LocalStrategy".into();
    ks.strategy_options = BTreeMap::new();
    for (name, id, comparator, comment) in [
        (SESSIONS_CF, SESSIONS_CF_ID, SESSIONS_COMPARATOR, "tracing sessions"),
        (EVENTS_CF, EVENTS_CF_ID, EVENTS_COMPARATOR, "tracing events"),
    ] {
        let mut cf = CfDef::new(KEYSPACE, name);
        cf.id = id;
        cf.thrift_id = crate::schema::thrift_id_of(&id);
        cf.comparator_type = comparator.into();
        cf.key_validation_class = UUID_TYPE.into();
        cf.comment = Some(comment.into());
        // Cells expire and are never deleted: nothing for tombstones to wait for.
        cf.gc_grace_seconds = 0;
        ks.cf_defs.push(cf);
    }
    ks
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
    sort_cells(&mut sessions, SESSIONS_COMPARATOR);
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
        sort_cells(&mut cells, EVENTS_COMPARATOR);
        m.row_mut(EVENTS_CF).cells = cells;
    }
    m
}

/// An update's cells must be in comparator order (and unique): events could share an id only if
/// the clock went back, in which case the later one is kept.
fn sort_cells(cells: &mut Vec<Cell>, comparator: &str) {
    let Ok(ty) = AbstractType::parse(comparator) else { return };
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
