//! The `system` keyspace: where the engine keeps the schema, the node's own state, what it knows
//! of its peers and the hints it holds for them, written through the ordinary write path (commit
//! log, memtable, SSTables) like any other data.
//!
//! - `schema_keyspaces` and `schema_columnfamilies` ([`schema_tables`]): the schema as rows that
//!   any node can send to any other and that merge by Cassandra's reconciliation rules.
//! - `local` ([`local`]): one row, key `local`: tokens, host id, cluster name, gossip generation,
//!   schema version, the `bootstrapped` flag and truncation points.
//! - `peers` ([`peers`]): one row per known peer, keyed by its endpoint.
//! - `hints` ([`hints`]): one row per target endpoint, one expiring cell per hinted mutation.
//! - `paxos` ([`paxos`]): compare-and-set's Paxos state, one row per partition key, three
//!   cells per column family (promise, accepted proposal, most recent commit).
//!
//! Every column family here has a fixed id, so the engine can replay their commit log records
//! before it knows any other part of the schema.
//!
//! Beside `system`, the engine defines in code the other keyspaces Cassandra 3.11 has on every
//! node ([`builtin_keyspaces`]): `system_traces` ([`traces`]), and `system_schema`, `system_auth`
//! and `system_distributed` ([`derived`]), whose rows are derived from the schema and the
//! server's authenticator. Like `system`, they are never
//! written to the schema tables nor counted in the schema version, and cannot be changed.

pub mod derived;
pub mod hints;
pub mod local;
pub mod paxos;
pub mod peers;
pub mod schema_tables;
pub mod traces;

use std::collections::BTreeMap;

use uuid::Uuid;

use crate::schema::{CfDef, KeyspaceDef};

pub use local::{LocalState, SystemState};
pub use peers::PeerInfo;

pub const KEYSPACE: &str = "system";
pub const SCHEMA_KEYSPACES_CF: &str = "schema_keyspaces";
pub const SCHEMA_COLUMNFAMILIES_CF: &str = "schema_columnfamilies";
pub const LOCAL_CF: &str = "local";
pub const PEERS_CF: &str = "peers";
pub const HINTS_CF: &str = "hints";
pub const PAXOS_CF: &str = "paxos";
pub const LOCAL_KEY: &[u8] = b"local";

const SCHEMA_KEYSPACES_CF_ID: Uuid = Uuid::from_u128(0x5bb1_0000_0000_4000_8000_0000_0000_0001);
const LOCAL_CF_ID: Uuid = Uuid::from_u128(0x5bb1_0000_0000_4000_8000_0000_0000_0002);
const SCHEMA_COLUMNFAMILIES_CF_ID: Uuid = Uuid::from_u128(0x5bb1_0000_0000_4000_8000_0000_0000_0003);
const PEERS_CF_ID: Uuid = Uuid::from_u128(0x5bb1_0000_0000_4000_8000_0000_0000_0004);
const HINTS_CF_ID: Uuid = Uuid::from_u128(0x5bb1_0000_0000_4000_8000_0000_0000_0005);
// Well apart from the others, so column families added beside it on other branches cannot
// take the same id.
const PAXOS_CF_ID: Uuid = Uuid::from_u128(0x5bb1_0000_0000_4000_8000_0000_0000_0a05);

/// How long schema tombstones are kept (Cassandra's schema tables use 7 days): a node that was
/// away for less than this cannot bring a dropped keyspace or column family back by sending its
/// old rows.
pub const SCHEMA_GC_GRACE_SECONDS: i32 = 7 * 24 * 3600;

const UTF8: &str = "org.apache.cassandra.db.marshal.UTF8Type";
const BYTES: &str = "org.apache.cassandra.db.marshal.BytesType";

/// The definition of the system keyspace (never stored: it is the same on every node).
pub fn keyspace_def() -> KeyspaceDef {
    let mut ks = KeyspaceDef::new(KEYSPACE);
    ks.strategy_class = "org.apache.cassandra.locator.LocalStrategy".into();
    ks.strategy_options = BTreeMap::new();
    for (name, id, comparator, gc_grace, comment) in [
        (
            SCHEMA_KEYSPACES_CF,
            SCHEMA_KEYSPACES_CF_ID,
            UTF8,
            SCHEMA_GC_GRACE_SECONDS,
            "keyspace attributes, one row per keyspace",
        ),
        (
            SCHEMA_COLUMNFAMILIES_CF,
            SCHEMA_COLUMNFAMILIES_CF_ID,
            UTF8,
            SCHEMA_GC_GRACE_SECONDS,
            "column family definitions, one row per keyspace, one column per column family",
        ),
        // The local row is rewritten whole by every change: let compaction drop what it replaces.
        (LOCAL_CF, LOCAL_CF_ID, UTF8, 0, "this node's tokens, host id, generation and truncation points"),
        // Only this node reads its peers and hints: their tombstones need not reach anyone.
        (PEERS_CF, PEERS_CF_ID, UTF8, 0, "what this node knows of each peer, one row per endpoint"),
        (HINTS_CF, HINTS_CF_ID, BYTES, 0, "mutations kept for replicas that were down, one row per target"),
        // Paxos cells expire (system::paxos::ttl_for) and are replaced, never deleted.
        (PAXOS_CF, PAXOS_CF_ID, BYTES, 0, "compare-and-set state: promised, accepted and committed ballots"),
    ] {
        let mut cf = CfDef::new(KEYSPACE, name);
        cf.id = id;
        cf.thrift_id = crate::schema::thrift_id_of(&id);
        cf.comparator_type = comparator.into();
        cf.comment = Some(comment.into());
        cf.gc_grace_seconds = gc_grace;
        ks.cf_defs.push(cf);
    }
    ks
}

/// Every keyspace defined in code rather than in the schema tables: `system` first.
pub fn builtin_keyspaces() -> Vec<KeyspaceDef> {
    let mut all = vec![keyspace_def(), traces::keyspace_def()];
    all.extend(derived::keyspace_defs());
    all
}

/// Whether `name` is a keyspace of [`builtin_keyspaces`].
pub fn is_builtin_keyspace(name: &str) -> bool {
    [KEYSPACE, traces::KEYSPACE, derived::SCHEMA_KEYSPACE, derived::AUTH_KEYSPACE, derived::DISTRIBUTED_KEYSPACE]
        .contains(&name)
}

/// Whether `id` is a column family of a built-in keyspace (replayed before the rest).
pub fn is_system_cf(id: &Uuid) -> bool {
    [
        SCHEMA_KEYSPACES_CF_ID,
        LOCAL_CF_ID,
        SCHEMA_COLUMNFAMILIES_CF_ID,
        PEERS_CF_ID,
        HINTS_CF_ID,
        PAXOS_CF_ID,
        traces::SESSIONS_CF_ID,
        traces::EVENTS_CF_ID,
    ]
    .contains(id)
        || derived::cf_ids().any(|d| d == *id)
}

/// The column families whose rows make up the schema (what nodes exchange to agree on it).
pub fn is_schema_cf(name: &str) -> bool {
    name == SCHEMA_KEYSPACES_CF || name == SCHEMA_COLUMNFAMILIES_CF
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_keyspace_is_valid() {
        let ks = keyspace_def();
        ks.validate().expect("valid");
        assert_eq!(ks.cf_defs.len(), 6);
        assert!(ks.cf_defs.iter().all(|c| is_system_cf(&c.id)));
        let schema_cfs: Vec<&CfDef> = ks.cf_defs.iter().filter(|c| is_schema_cf(&c.name)).collect();
        assert_eq!(schema_cfs.len(), 2);
        assert!(schema_cfs.iter().all(|c| c.gc_grace_seconds == SCHEMA_GC_GRACE_SECONDS));
    }

    #[test]
    fn builtin_keyspaces_have_distinct_fixed_ids() {
        let all = builtin_keyspaces();
        assert!(all.iter().all(|k| is_builtin_keyspace(&k.name)));
        let ids: Vec<Uuid> = all.iter().flat_map(|k| k.cf_defs.iter().map(|c| c.id)).collect();
        assert!(ids.iter().all(is_system_cf));
        let unique: std::collections::BTreeSet<&Uuid> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len());
        assert!(!is_builtin_keyspace("system_tracesx"));
    }
}
