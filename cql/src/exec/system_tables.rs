//! `system.local` and `system.peers` as CQL reads them in 3.11: what the drivers ask first,
//! to learn the cluster's name, each node's tokens, data centre, rack, host id and schema
//! version. The engine keeps its own record of both (`storage::system::local`, `peers`) in a
//! layout of its own, so the CQL tables are built from what the node knows now (its membership
//! view and schema) each time they are read, rather than stored.

use std::net::IpAddr;

use model::data::Cell;
use model::marshal::{write_elements, AbstractType};
use model::schema::{CfDef, ColumnDef, CqlLayout};

use super::Context;
use crate::schema::Table;

/// The Cassandra release whose behaviour Sibyl's CQL follows, as `release_version` reports it:
/// drivers choose their code paths (schema tables, protocol versions) by it.
pub const CASSANDRA_RELEASE: &str = "3.11.10";

/// CQL's version (3.11's `QueryProcessor.CQL_VERSION`).
pub const CQL_VERSION: &str = "3.4.4";

const LOCAL_COLUMNS: &[(&str, &str)] = &[
    ("bootstrapped", "UTF8Type"),
    ("broadcast_address", "InetAddressType"),
    ("cluster_name", "UTF8Type"),
    ("cql_version", "UTF8Type"),
    ("data_center", "UTF8Type"),
    ("gossip_generation", "Int32Type"),
    ("host_id", "UUIDType"),
    ("listen_address", "InetAddressType"),
    ("native_protocol_version", "UTF8Type"),
    ("partitioner", "UTF8Type"),
    ("rack", "UTF8Type"),
    ("release_version", "UTF8Type"),
    ("rpc_address", "InetAddressType"),
    ("schema_version", "UUIDType"),
    ("thrift_version", "UTF8Type"),
    ("tokens", "SetType(UTF8Type)"),
    ("truncated_at", "MapType(UUIDType,BytesType)"),
];

const PEERS_COLUMNS: &[(&str, &str)] = &[
    ("data_center", "UTF8Type"),
    ("host_id", "UUIDType"),
    ("preferred_ip", "InetAddressType"),
    ("rack", "UTF8Type"),
    ("release_version", "UTF8Type"),
    ("rpc_address", "InetAddressType"),
    ("schema_version", "UUIDType"),
    ("tokens", "SetType(UTF8Type)"),
];

/// The CQL table `system.<name>` if it is one built here.
pub(super) fn table(keyspace: &str, name: &str) -> Option<Table> {
    let (key, key_type, columns) = match (keyspace, name) {
        ("system", "local") => ("key", "UTF8Type", LOCAL_COLUMNS),
        ("system", "peers") => ("peer", "InetAddressType", PEERS_COLUMNS),
        _ => return None,
    };
    let mut def = CfDef::new(keyspace, name);
    let class = |t: &str| AbstractType::parse(t).map(|t| t.class_name()).unwrap_or_default();
    def.key_validation_class = class(key_type);
    def.comparator_type = AbstractType::Composite(vec![AbstractType::Utf8]).class_name();
    def.column_metadata = columns
        .iter()
        .map(|(n, t)| ColumnDef {
            name: n.as_bytes().to_vec(),
            validation_class: class(t),
            index_type: None,
            index_name: None,
            index_options: Default::default(),
        })
        .collect();
    def.cql = Some(CqlLayout { key_aliases: vec![key.to_string()], ..CqlLayout::default() });
    Table::from_def(&def).ok()
}

/// Whether `table` is one of the tables built here.
pub(super) fn is_virtual(table: &Table) -> bool {
    table.keyspace == "system" && matches!(table.name.as_str(), "local" | "peers")
}

/// One row's cells, in cell name order.
struct RowCells<'t> {
    table: &'t Table,
    cells: Vec<Cell>,
}

impl RowCells<'_> {
    fn put(&mut self, column: &str, value: Option<Vec<u8>>) {
        let (Some(c), Some(v)) = (self.table.column(column), value) else { return };
        self.cells.push(Cell::live(self.table.cell_name(&[], Some(c)), v, 0));
    }

    fn finish(mut self) -> Vec<Cell> {
        self.cells.push(Cell::live(self.table.cell_name(&[], None), Vec::new(), 0));
        let cmp = AbstractType::Composite(vec![AbstractType::Utf8]);
        self.cells.sort_by(|a, b| cmp.compare(&a.name, &b.name));
        self.cells
    }
}

fn inet(ip: IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => v6.octets().to_vec(),
    }
}

fn text(s: impl Into<String>) -> Option<Vec<u8>> {
    Some(s.into().into_bytes())
}

fn uuid(s: &str) -> Option<Vec<u8>> {
    uuid::Uuid::parse_str(s).ok().map(|u| u.as_bytes().to_vec())
}

/// A set of text, sorted as the set's type sorts it.
fn text_set(mut items: Vec<String>) -> Option<Vec<u8>> {
    items.sort();
    items.dedup();
    Some(write_elements(items.len(), items.iter().map(|s| s.as_bytes())))
}

/// The partitions of a table built here: (key, cells), in no particular order.
pub(super) fn partitions(ctx: &Context<'_>, table: &Table) -> Vec<(Vec<u8>, Vec<Cell>)> {
    let membership = ctx.coordinator.membership();
    let ring = membership.ring();
    let partitioner = ctx.coordinator.partitioner();
    let snitch = membership.snitch();
    let tokens = |ep| ring.tokens_of(ep).iter().map(|t| partitioner.token_to_string(t)).collect::<Vec<_>>();
    let local = membership.local();
    match table.name.as_str() {
        "local" => {
            let info = membership.local_info();
            let mut row = RowCells { table, cells: Vec::new() };
            row.put("bootstrapped", text("COMPLETED"));
            row.put("broadcast_address", Some(inet(local.ip())));
            row.put("cluster_name", text(ctx.coordinator.cluster_name()));
            row.put("cql_version", text(CQL_VERSION));
            row.put("data_center", text(snitch.datacenter(local)));
            row.put("host_id", uuid(&info.host_id));
            row.put("listen_address", Some(inet(local.ip())));
            row.put("native_protocol_version", text("4"));
            row.put("partitioner", text(partitioner.class_name()));
            row.put("rack", text(snitch.rack(local)));
            row.put("release_version", text(CASSANDRA_RELEASE));
            row.put("rpc_address", info.rpc_address.parse::<IpAddr>().ok().map(inet));
            row.put("schema_version", Some(ctx.coordinator.schema_version().as_bytes().to_vec()));
            row.put("thrift_version", text("20.1.0"));
            row.put("tokens", text_set(tokens(local)));
            vec![(b"local".to_vec(), row.finish())]
        }
        _ => {
            let mut out = Vec::new();
            for ep in membership.all_endpoints() {
                if ep == local {
                    continue;
                }
                let peer = membership.peer(ep).unwrap_or_default();
                let member_tokens = tokens(ep);
                // A node that left or was removed is no peer any more.
                if member_tokens.is_empty() && peer.status.as_deref().is_some_and(|s| s.starts_with("LEFT")) {
                    continue;
                }
                let mut row = RowCells { table, cells: Vec::new() };
                row.put("data_center", text(snitch.datacenter(ep)));
                row.put("host_id", peer.host_id.as_deref().and_then(uuid));
                row.put("rack", text(snitch.rack(ep)));
                row.put("release_version", text(CASSANDRA_RELEASE));
                row.put("rpc_address", membership.rpc_address(ep).parse::<IpAddr>().ok().map(inet));
                row.put("schema_version", peer.schema_version.as_deref().and_then(uuid));
                row.put("tokens", text_set(member_tokens));
                out.push((inet(ep.ip()), row.finish()));
            }
            out
        }
    }
}
