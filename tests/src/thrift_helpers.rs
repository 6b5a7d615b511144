//! Thrift helpers for the scenarios: expected errors, builders of request structs and readers
//! of results, so a test states its calls and checks in a line each.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use thrift_idl as t;

use crate::{Client, TCassandraSyncClient};

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// The `why` of an `InvalidRequestException`; panics (naming `what`) on success or another error.
pub fn expect_ire<T: std::fmt::Debug>(what: &str, r: thrift::Result<T>) -> String {
    match r {
        Ok(v) => panic!("{what}: expected InvalidRequestException, got Ok({v:?})"),
        Err(thrift::Error::User(e)) => match e.downcast_ref::<t::InvalidRequestException>() {
            Some(ire) => ire.why.clone(),
            None => panic!("{what}: expected InvalidRequestException, got user error {e:?}"),
        },
        Err(e) => panic!("{what}: expected InvalidRequestException, got {e:?}"),
    }
}

/// Asserts an `InvalidRequestException` whose `why` contains every one of `needles`
/// (ASCII case-insensitive); returns the `why`.
pub fn expect_ire_containing<T: std::fmt::Debug>(what: &str, r: thrift::Result<T>, needles: &[&str]) -> String {
    let why = expect_ire(what, r);
    let lower = why.to_ascii_lowercase();
    for n in needles {
        assert!(lower.contains(&n.to_ascii_lowercase()), "{what}: why {why:?} does not mention {n:?}");
    }
    why
}

/// Asserts the call failed with the declared exception `E`.
pub fn expect_user_error<E: std::error::Error + 'static, T: std::fmt::Debug>(what: &str, r: thrift::Result<T>) {
    match r {
        Ok(v) => panic!("{what}: expected {}, got Ok({v:?})", std::any::type_name::<E>()),
        Err(thrift::Error::User(e)) => {
            assert!(e.downcast_ref::<E>().is_some(), "{what}: expected {}, got {e:?}", std::any::type_name::<E>())
        }
        Err(e) => panic!("{what}: expected {}, got {e:?}", std::any::type_name::<E>()),
    }
}

pub fn expect_not_found<T: std::fmt::Debug>(what: &str, r: thrift::Result<T>) {
    expect_user_error::<t::NotFoundException, T>(what, r)
}

pub fn expect_unavailable<T: std::fmt::Debug>(what: &str, r: thrift::Result<T>) {
    expect_user_error::<t::UnavailableException, T>(what, r)
}

/// Calls `f` until it answers anything but UnavailableException, pausing 50 ms between tries,
/// for at most `limit`, as a client retries a request a starting cluster could not place yet;
/// then unwraps the answer like [`ok`]. Returns it with the number of Unavailable answers.
pub fn retry_unavailable<T>(
    what: &str,
    limit: std::time::Duration,
    mut f: impl FnMut() -> thrift::Result<T>,
) -> (T, usize) {
    let deadline = std::time::Instant::now() + limit;
    let mut refused = 0;
    loop {
        match f() {
            Err(thrift::Error::User(e))
                if e.downcast_ref::<t::UnavailableException>().is_some() && std::time::Instant::now() < deadline =>
            {
                refused += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            r => return (ok(what, r), refused),
        }
    }
}

/// Unwraps a Thrift result, panicking with the call's name and the error.
pub fn ok<T>(what: &str, r: thrift::Result<T>) -> T {
    r.unwrap_or_else(|e| panic!("{what} failed: {e:?}"))
}

// ---------------------------------------------------------------------------------------------
// Builders for Thrift structs
// ---------------------------------------------------------------------------------------------

pub const ONE: t::ConsistencyLevel = t::ConsistencyLevel::ONE;

/// A strictly increasing timestamp in microseconds since the epoch (Cassandra's convention).
pub fn ts() -> i64 {
    static LAST: AtomicI64 = AtomicI64::new(0);
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_micros() as i64).unwrap_or(0);
    let mut prev = LAST.load(Ordering::SeqCst);
    loop {
        let next = now.max(prev + 1);
        match LAST.compare_exchange(prev, next, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => return next,
            Err(p) => prev = p,
        }
    }
}

pub fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

pub fn column(name: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>, timestamp: i64) -> t::Column {
    t::Column::new(name.into(), Some(value.into()), Some(timestamp), None)
}

pub fn column_ttl(name: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>, timestamp: i64, ttl: i32) -> t::Column {
    t::Column::new(name.into(), Some(value.into()), Some(timestamp), Some(ttl))
}

pub fn parent(cf: &str) -> t::ColumnParent {
    t::ColumnParent::new(cf.to_string(), None)
}

pub fn super_parent(cf: &str, super_column: impl Into<Vec<u8>>) -> t::ColumnParent {
    t::ColumnParent::new(cf.to_string(), Some(super_column.into()))
}

pub fn path(cf: &str, column: impl Into<Vec<u8>>) -> t::ColumnPath {
    t::ColumnPath::new(cf.to_string(), None, Some(column.into()))
}

pub fn row_path(cf: &str) -> t::ColumnPath {
    t::ColumnPath::new(cf.to_string(), None, None)
}

pub fn super_path(cf: &str, super_column: impl Into<Vec<u8>>, column: Option<Vec<u8>>) -> t::ColumnPath {
    t::ColumnPath::new(cf.to_string(), Some(super_column.into()), column)
}

pub fn names<N: AsRef<[u8]>>(names: &[N]) -> t::SlicePredicate {
    t::SlicePredicate::new(Some(names.iter().map(|n| n.as_ref().to_vec()).collect::<Vec<_>>()), None)
}

pub fn slice(start: impl Into<Vec<u8>>, finish: impl Into<Vec<u8>>, reversed: bool, count: i32) -> t::SlicePredicate {
    t::SlicePredicate::new(None, Some(t::SliceRange::new(start.into(), finish.into(), reversed, count)))
}

/// Every column (up to `count`).
pub fn all(count: i32) -> t::SlicePredicate {
    slice(Vec::new(), Vec::new(), false, count)
}

pub fn key_range(start: &str, end: &str, count: i32) -> t::KeyRange {
    t::KeyRange::new(Some(b(start)), Some(b(end)), None, None, count, None)
}

pub fn token_range(start: &str, end: &str, count: i32) -> t::KeyRange {
    t::KeyRange::new(None, None, Some(start.to_string()), Some(end.to_string()), count, None)
}

pub fn insert_mutation(c: t::Column) -> t::Mutation {
    t::Mutation::new(Some(t::ColumnOrSuperColumn::new(Some(c), None, None, None)), None)
}

pub fn super_insert_mutation(name: impl Into<Vec<u8>>, columns: Vec<t::Column>) -> t::Mutation {
    t::Mutation::new(
        Some(t::ColumnOrSuperColumn::new(None, Some(t::SuperColumn::new(name.into(), columns)), None, None)),
        None,
    )
}

pub fn delete_mutation(
    timestamp: i64,
    super_column: Option<Vec<u8>>,
    predicate: Option<t::SlicePredicate>,
) -> t::Mutation {
    t::Mutation::new(None, Some(t::Deletion::new(Some(timestamp), super_column, predicate)))
}

/// A batch_mutate map with one row in one column family.
pub fn batch(
    key: &str,
    cf: &str,
    mutations: Vec<t::Mutation>,
) -> BTreeMap<Vec<u8>, BTreeMap<String, Vec<t::Mutation>>> {
    let mut by_cf = BTreeMap::new();
    by_cf.insert(cf.to_string(), mutations);
    let mut m = BTreeMap::new();
    m.insert(b(key), by_cf);
    m
}

/// A `CfDef` with only the keyspace, name and comparator set (the server applies defaults).
pub fn cf_def(keyspace: &str, name: &str, comparator: &str) -> t::CfDef {
    t::CfDef { comparator_type: Some(comparator.to_string()), ..thrift_idl::bare_cf_def(keyspace, name) }
}

/// `def` with read repair off (both chances 0): in a test where only an operation under test
/// may bring a replica up to date.
pub fn without_read_repair(def: t::CfDef) -> t::CfDef {
    t::CfDef { read_repair_chance: Some(0.0.into()), dclocal_read_repair_chance: Some(0.0.into()), ..def }
}

/// A super column family definition.
pub fn super_cf_def(keyspace: &str, name: &str, comparator: &str, subcomparator: &str) -> t::CfDef {
    let mut d = cf_def(keyspace, name, comparator);
    d.column_type = Some("Super".into());
    d.subcomparator_type = Some(subcomparator.to_string());
    d
}

/// A SimpleStrategy keyspace with replication factor `rf`.
pub fn ks_def(name: &str, rf: u32, cf_defs: Vec<t::CfDef>) -> t::KsDef {
    let mut options = BTreeMap::new();
    options.insert("replication_factor".to_string(), rf.to_string());
    t::KsDef::new(
        name.to_string(),
        "org.apache.cassandra.locator.SimpleStrategy".to_string(),
        Some(options),
        None,
        cf_defs,
        Some(true),
    )
}

/// Creates keyspace `name` (RF 1) with `cf_defs` through `system_add_keyspace`; returns the new
/// schema version.
pub fn create_keyspace(client: &mut Client, name: &str, cf_defs: Vec<t::CfDef>) -> String {
    ok(&format!("system_add_keyspace({name})"), client.system_add_keyspace(ks_def(name, 1, cf_defs)))
}

// ---------------------------------------------------------------------------------------------
// Reading results
// ---------------------------------------------------------------------------------------------

/// The (name, value) pairs of plain columns in a result, panicking on anything else.
pub fn pairs(cols: &[t::ColumnOrSuperColumn]) -> Vec<(Vec<u8>, Vec<u8>)> {
    cols.iter()
        .map(|c| {
            let col = c.column.as_ref().unwrap_or_else(|| panic!("expected a column, got {c:?}"));
            (col.name.clone(), col.value.clone().unwrap_or_default())
        })
        .collect()
}

/// The (name, value) pairs as UTF-8 strings.
pub fn str_pairs(cols: &[t::ColumnOrSuperColumn]) -> Vec<(String, String)> {
    pairs(cols)
        .into_iter()
        .map(|(n, v)| (String::from_utf8_lossy(&n).into_owned(), String::from_utf8_lossy(&v).into_owned()))
        .collect()
}

/// Column names as UTF-8 strings.
pub fn col_names(cols: &[t::ColumnOrSuperColumn]) -> Vec<String> {
    str_pairs(cols).into_iter().map(|(n, _)| n).collect()
}

/// Keys of range-scan results as UTF-8 strings.
pub fn slice_keys(rows: &[t::KeySlice]) -> Vec<String> {
    rows.iter().map(|r| String::from_utf8_lossy(&r.key).into_owned()).collect()
}
