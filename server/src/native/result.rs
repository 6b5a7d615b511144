//! RESULT bodies (spec §4.2.5) and EVENT bodies (§4.2.6) from the executor's outcomes.

use cql::exec::{ColumnSpec, Outcome, Prepared, SchemaChange};
use storage::marshal::AbstractType;

use super::events::Event;
use super::frame::Version;
use super::wire::Writer;

/// RESULT kinds.
const VOID: i32 = 0x0001;
const ROWS: i32 = 0x0002;
const SET_KEYSPACE: i32 = 0x0003;
const PREPARED: i32 = 0x0004;
const SCHEMA_CHANGE: i32 = 0x0005;

/// Metadata flags.
const GLOBAL_TABLES_SPEC: i32 = 0x0001;
const HAS_MORE_PAGES: i32 = 0x0002;
const NO_METADATA: i32 = 0x0004;

/// The body of an outcome's RESULT; `skip_metadata` leaves the rows' column specifications
/// out, as the client asked.
pub fn outcome(outcome: &Outcome, skip_metadata: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(match outcome {
        // Sized once: grown from empty, a one-row answer reallocated six times.
        Outcome::Rows(rows) => {
            64 + rows.columns.len() * 32
                + rows.rows.iter().flatten().map(|c| 4 + c.as_ref().map_or(0, Vec::len)).sum::<usize>()
        }
        _ => 64,
    });
    match outcome {
        Outcome::Void => out.put_int(VOID),
        Outcome::Rows(rows) => {
            out.put_int(ROWS);
            let more = rows.paging_state.as_deref();
            if skip_metadata {
                out.put_int(NO_METADATA | if more.is_some() { HAS_MORE_PAGES } else { 0 });
                out.put_int(rows.columns.len() as i32);
                if let Some(state) = more {
                    out.put_bytes(Some(state));
                }
            } else {
                metadata(&mut out, &rows.columns, None, more);
            }
            out.put_int(rows.rows.len() as i32);
            for row in &rows.rows {
                for cell in row {
                    out.put_bytes(cell.as_deref());
                }
            }
        }
        Outcome::SetKeyspace(ks) => {
            out.put_int(SET_KEYSPACE);
            out.put_string(ks);
        }
        Outcome::SchemaChange(change) => {
            out.put_int(SCHEMA_CHANGE);
            schema_change(&mut out, change);
        }
    }
    out
}

/// `<flags><columns_count>[<paging_state>][<pk_count><pk_index>...][<global_table_spec>]<col_spec>...`;
/// the partition key indexes only for a v4 PREPARED (`pk`: `Some(None)` when the markers do
/// not bind the whole key), the paging state only for rows with more pages.
fn metadata(out: &mut Vec<u8>, columns: &[ColumnSpec], pk: Option<Option<&[u16]>>, paging_state: Option<&[u8]>) {
    let global =
        columns.first().filter(|first| columns.iter().all(|c| c.keyspace == first.keyspace && c.table == first.table));
    let more = if paging_state.is_some() { HAS_MORE_PAGES } else { 0 };
    out.put_int(if global.is_some() { GLOBAL_TABLES_SPEC } else { 0 } | more);
    out.put_int(columns.len() as i32);
    if let Some(state) = paging_state {
        out.put_bytes(Some(state));
    }
    if let Some(pk) = pk {
        // Markers of several tables route by none (3.11 sends no indexes then).
        let pk = pk.filter(|_| global.is_some()).unwrap_or_default();
        out.put_int(pk.len() as i32);
        for i in pk {
            out.put_short(*i);
        }
    }
    if let Some(first) = global {
        out.put_string(&first.keyspace);
        out.put_string(&first.table);
    }
    for c in columns {
        if global.is_none() {
            out.put_string(&c.keyspace);
            out.put_string(&c.table);
        }
        out.put_string(&c.name);
        type_option(out, &c.ty);
    }
}

/// A column's [option] type (spec §4.2.5.2): a native type id, or custom with its class
/// name. A descending column is its base type; DateType is `timestamp`, as 3.11 sends it.
fn type_option(out: &mut Vec<u8>, ty: &AbstractType) {
    let id: u16 = match ty {
        AbstractType::Reversed(base) => return type_option(out, base),
        AbstractType::Ascii => 0x0001,
        AbstractType::Long => 0x0002,
        AbstractType::Bytes => 0x0003,
        AbstractType::Boolean => 0x0004,
        AbstractType::CounterColumn => 0x0005,
        AbstractType::Decimal => 0x0006,
        AbstractType::Double => 0x0007,
        AbstractType::Float => 0x0008,
        AbstractType::Int32 => 0x0009,
        AbstractType::Timestamp | AbstractType::Date => 0x000B,
        AbstractType::Uuid => 0x000C,
        AbstractType::Utf8 => 0x000D,
        AbstractType::Integer => 0x000E,
        AbstractType::TimeUuid => 0x000F,
        AbstractType::InetAddress => 0x0010,
        AbstractType::SimpleDate => 0x0011,
        AbstractType::Time => 0x0012,
        AbstractType::Short => 0x0013,
        AbstractType::Byte => 0x0014,
        // Collections name their element types (frozen or not, the same ids), tuples each
        // component's.
        AbstractType::List { element, .. } | AbstractType::Set { element, .. } => {
            out.put_short(if matches!(ty, AbstractType::List { .. }) { 0x0020 } else { 0x0022 });
            return type_option(out, element);
        }
        AbstractType::Map { key, value, .. } => {
            out.put_short(0x0021);
            type_option(out, key);
            return type_option(out, value);
        }
        AbstractType::Tuple(types) => {
            out.put_short(0x0031);
            out.put_short(types.len() as u16);
            for t in types {
                type_option(out, t);
            }
            return;
        }
        AbstractType::Duration => 0x0015,
        // A user type: its keyspace, name and each field's name and type (frozen or not).
        AbstractType::User(u) => {
            out.put_short(0x0030);
            out.put_string(&u.keyspace);
            out.put_string(&u.name_str());
            out.put_short(u.fields.len() as u16);
            for (name, t) in &u.fields {
                out.put_string(&String::from_utf8_lossy(name));
                type_option(out, t);
            }
            return;
        }
        // Types without a native id (composites, LexicalUUIDType, EmptyType) and any type
        // added later until it gets its own arm (udt 0x30): custom, named by class, which
        // every driver reads (as a blob).
        other => {
            out.put_short(0x0000);
            out.put_string(&other.class_name());
            return;
        }
    };
    out.put_short(id);
}

/// A PREPARED result (spec §4.2.5.4): the id, the markers' metadata (v4: with the partition
/// key's marker indexes), and the result metadata: a SELECT's columns, which a client may then
/// ask EXECUTE to skip, or for other statements flag No_metadata and no columns (as 3.11).
pub fn prepared(version: Version, id: &[u8], p: &Prepared) -> Vec<u8> {
    let mut out = Vec::new();
    out.put_int(PREPARED);
    out.put_short_bytes(id);
    metadata(&mut out, &p.markers, (version >= Version::V4).then_some(p.partition_key.as_deref()), None);
    if p.columns.is_empty() {
        out.put_int(NO_METADATA);
        out.put_int(0);
    } else {
        metadata(&mut out, &p.columns, None, None);
    }
    out
}

/// `<change_type><target><options>`, the same in a RESULT and in an EVENT (v3 and v4).
pub fn schema_change(out: &mut Vec<u8>, change: &SchemaChange) {
    out.put_string(change.change);
    out.put_string(change.target);
    out.put_string(&change.keyspace);
    if change.target != "KEYSPACE" {
        out.put_string(change.name.as_deref().unwrap_or(""));
    }
}

/// An EVENT body.
pub fn event(event: &Event) -> Vec<u8> {
    let mut out = Vec::new();
    out.put_string(event.kind());
    match event {
        Event::Topology(change, addr) | Event::Status(change, addr) => {
            out.put_string(change);
            out.put_inet(addr.ip(), i32::from(addr.port()));
        }
        Event::Schema(change) => schema_change(&mut out, change),
    }
    out
}

/// SUPPORTED's options: what OPTIONS answers.
pub fn supported(version: Version) -> Vec<u8> {
    let mut out = Vec::new();
    let mut entries: Vec<(&str, Vec<&str>)> =
        vec![("CQL_VERSION", vec![super::CQL_VERSION]), ("COMPRESSION", vec!["lz4", "snappy"])];
    if version >= Version::V4 {
        entries.push(("PROTOCOL_VERSIONS", super::frame::SUPPORTED_VERSIONS.to_vec()));
    }
    out.put_short(entries.len() as u16);
    for (key, values) in entries {
        out.put_string(key);
        out.put_string_list(&values);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::wire::Reader;
    use cql::exec::ResultSet;

    fn spec(table: &str, name: &str, ty: AbstractType) -> ColumnSpec {
        ColumnSpec { keyspace: "ks".into(), table: table.into(), name: name.into(), ty }
    }

    #[test]
    fn rows_of_one_table_share_one_table_spec() {
        let rows = ResultSet {
            columns: vec![
                spec("t", "k", AbstractType::Int32),
                spec("t", "c", AbstractType::Reversed(Box::new(AbstractType::Utf8))),
                spec("t", "x", AbstractType::Composite(vec![AbstractType::Bytes])),
            ],
            rows: vec![vec![Some(vec![0, 0, 0, 1]), None, Some(vec![])]],
            paging_state: None,
        };
        let body = outcome(&Outcome::Rows(rows), false);
        let mut r = Reader::new(&body);
        assert_eq!(r.int(), Ok(ROWS));
        assert_eq!(r.int(), Ok(GLOBAL_TABLES_SPEC));
        assert_eq!(r.int(), Ok(3));
        assert_eq!((r.string(), r.string()), (Ok("ks"), Ok("t")));
        assert_eq!((r.string(), r.short()), (Ok("k"), Ok(0x09)));
        assert_eq!((r.string(), r.short()), (Ok("c"), Ok(0x0D)), "a descending column is its base type");
        assert_eq!((r.string(), r.short()), (Ok("x"), Ok(0)));
        assert_eq!(
            r.string(),
            Ok("org.apache.cassandra.db.marshal.CompositeType(org.apache.cassandra.db.marshal.BytesType)")
        );
        assert_eq!(r.int(), Ok(1));
        assert_eq!(r.bytes(), Ok(Some(&[0, 0, 0, 1][..])));
        assert_eq!(r.bytes(), Ok(None));
        assert_eq!(r.bytes(), Ok(Some(&[][..])));
        assert!(r.finish("rows").is_ok());
    }

    #[test]
    fn collections_and_tuples_name_their_element_types() {
        let int = || Box::new(AbstractType::Int32);
        let rows = ResultSet {
            columns: vec![
                spec("t", "l", AbstractType::List { element: int(), frozen: false }),
                spec("t", "m", AbstractType::Map { key: Box::new(AbstractType::Utf8), value: int(), frozen: true }),
                spec("t", "s", AbstractType::Set { element: int(), frozen: false }),
                spec("t", "u", AbstractType::Tuple(vec![AbstractType::Int32, AbstractType::Utf8])),
            ],
            rows: vec![],
            paging_state: None,
        };
        let body = outcome(&Outcome::Rows(rows), false);
        let mut r = Reader::new(&body);
        assert_eq!((r.int(), r.int(), r.int()), (Ok(ROWS), Ok(GLOBAL_TABLES_SPEC), Ok(4)));
        assert_eq!((r.string(), r.string()), (Ok("ks"), Ok("t")));
        assert_eq!((r.string(), r.short(), r.short()), (Ok("l"), Ok(0x20), Ok(0x09)));
        assert_eq!((r.string(), r.short(), r.short(), r.short()), (Ok("m"), Ok(0x21), Ok(0x0D), Ok(0x09)));
        assert_eq!((r.string(), r.short(), r.short()), (Ok("s"), Ok(0x22), Ok(0x09)));
        assert_eq!((r.string(), r.short(), r.short()), (Ok("u"), Ok(0x31), Ok(2)));
        assert_eq!((r.short(), r.short()), (Ok(0x09), Ok(0x0D)));
    }

    #[test]
    fn columns_of_several_tables_name_theirs() {
        let rows = ResultSet {
            columns: vec![spec("a", "k", AbstractType::Long), spec("b", "k", AbstractType::Long)],
            rows: vec![],
            paging_state: Some(b"next".to_vec()),
        };
        let body = outcome(&Outcome::Rows(rows), false);
        let mut r = Reader::new(&body);
        assert_eq!((r.int(), r.int(), r.int()), (Ok(ROWS), Ok(HAS_MORE_PAGES), Ok(2)));
        assert_eq!(r.bytes(), Ok(Some(&b"next"[..])), "the paging state follows the column count");
        assert_eq!((r.string(), r.string(), r.string(), r.short()), (Ok("ks"), Ok("a"), Ok("k"), Ok(2)));
    }

    #[test]
    fn schema_changes_name_their_target() {
        let change = SchemaChange { change: "CREATED", target: "TABLE", keyspace: "ks".into(), name: Some("t".into()) };
        let body = outcome(&Outcome::SchemaChange(change), false);
        let mut r = Reader::new(&body);
        assert_eq!(r.int(), Ok(SCHEMA_CHANGE));
        assert_eq!((r.string(), r.string(), r.string(), r.string()), (Ok("CREATED"), Ok("TABLE"), Ok("ks"), Ok("t")));
        assert!(r.finish("schema change").is_ok());
    }
}
