//! Issue 11, points 2 and 3: the TTL edges as Cassandra 3.11 answers them over Thrift.
//! - ttl 0 given with a column means "no expiry", even where the column family has a
//!   default_time_to_live (CASSANDRA-11207); a negative ttl is refused in 3.11's words.
//! - TTLs up to 20 years (630,720,000 s), per column or as a CF's default, are accepted and read
//!   back as given, after a restart and from an SSTable too; one more second is refused. An expiry
//!   past 2038-01-19T03:14:06Z is logged in 3.11's words ("with ttl of" / "with default ttl of").

use e2e::*;
use thrift_idl::{self as t, TCassandraSyncClient};

const KS: &str = "TtlEdges";
const TWENTY_YEARS: i32 = 630_720_000;

/// The TTL the column `name` of row `k` reads back with.
fn ttl_of(c: &mut Client, cf: &str, name: &str) -> Option<i32> {
    ok("get", c.get(b("k"), path(cf, b(name)), ONE)).column.expect("a column").ttl
}

fn with_default_ttl(name: &str, ttl: i32) -> t::CfDef {
    let mut cf = cf_def(KS, name, "UTF8Type");
    cf.default_time_to_live = Some(ttl);
    cf
}

#[test]
fn ttl_zero_means_no_expiry_even_with_a_default() {
    let (_node, mut c) = Node::start_with_keyspace(
        Config::random(),
        KS,
        vec![cf_def(KS, "Standard1", "UTF8Type"), with_default_ttl("Hourly", 3600)],
    );
    ok("insert ttl 0", c.insert(b("k"), parent("Hourly"), column_ttl(b("kept"), b("v"), ts(), 0), ONE));
    ok("insert, no ttl", c.insert(b("k"), parent("Hourly"), column(b("defaulted"), b("v"), ts()), ONE));
    let zero = insert_mutation(column_ttl(b("batched"), b("v"), ts(), 0));
    ok("batch ttl 0", c.batch_mutate(batch("k", "Hourly", vec![zero]), ONE));
    assert_eq!(ttl_of(&mut c, "Hourly", "kept"), None, "ttl 0 overrides the default: no expiry");
    assert_eq!(ttl_of(&mut c, "Hourly", "batched"), None, "ttl 0 in a batch too");
    assert_eq!(ttl_of(&mut c, "Hourly", "defaulted"), Some(3600), "no ttl given: the default applies");
    ok("insert ttl 0, no default", c.insert(b("k"), parent("Standard1"), column_ttl(b("plain"), b("v"), ts(), 0), ONE));
    assert_eq!(ttl_of(&mut c, "Standard1", "plain"), None);

    let why = expect_ire("negative ttl", c.insert(b("k"), parent("Hourly"), column_ttl(b("x"), b("v"), ts(), -1), ONE));
    assert_eq!(why, "ttl must be greater or equal to 0");
}

#[test]
fn twenty_year_ttls_are_accepted_and_past_2038_warned_of_in_3_11_words() {
    let (mut node, mut c) = Node::start_with_keyspace(
        Config::random(),
        KS,
        vec![
            cf_def(KS, "Standard1", "UTF8Type"),
            with_default_ttl("Decades", TWENTY_YEARS),
            cf_def(KS, "Short", "UTF8Type"),
        ],
    );
    ok(
        "insert 20 years",
        c.insert(b("k"), parent("Standard1"), column_ttl(b("long"), b("v"), ts(), TWENTY_YEARS), ONE),
    );
    assert_eq!(ttl_of(&mut c, "Standard1", "long"), Some(TWENTY_YEARS));
    ok("insert, default 20 years", c.insert(b("k"), parent("Decades"), column(b("x"), b("v"), ts()), ONE));
    assert_eq!(ttl_of(&mut c, "Decades", "x"), Some(TWENTY_YEARS));
    ok("insert 1 day", c.insert(b("k"), parent("Short"), column_ttl(b("day"), b("v"), ts(), 86_400), ONE));
    // The columns are live, in a slice as in a point read.
    let got = ok("get_slice", c.get_slice(b("k"), parent("Standard1"), all(10), ONE));
    assert_eq!(col_names(&got), vec!["long".to_string()]);

    let why = expect_ire(
        "ttl past 20 years",
        c.insert(b("k"), parent("Standard1"), column_ttl(b("x"), b("v"), ts(), TWENTY_YEARS + 1), ONE),
    );
    assert_eq!(why, "ttl is too large. requested (630720001) maximum (630720000)");

    // Any 20-year TTL given after 2018 ends past 2038: both variants of the warning are logged.
    let log = node.log();
    let tail = "seconds exceeds maximum supported expiration date of 2038-01-19T03:14:06+00:00";
    assert!(log.contains(&format!("Request on table {KS}.Standard1 with ttl of 630720000 {tail}")), "{log}");
    assert!(log.contains(&format!("Request on table {KS}.Decades with default ttl of 630720000 {tail}")), "{log}");
    assert!(!log.contains(&format!("Request on table {KS}.Short")), "a one-day TTL is not warned of: {log}");

    // The expiry past 2038 is held whole (64-bit cell format): replayed from the commit log after
    // a kill, then read from an SSTable after a drain, the columns are there with their TTL.
    node.kill9();
    node.start_again();
    let mut c = node.client_in(KS);
    assert_eq!(ttl_of(&mut c, "Standard1", "long"), Some(TWENTY_YEARS), "after commit log replay");
    node.restart();
    let mut c = node.client_in(KS);
    assert_eq!(ttl_of(&mut c, "Standard1", "long"), Some(TWENTY_YEARS), "read from an SSTable");
    assert_eq!(ttl_of(&mut c, "Decades", "x"), Some(TWENTY_YEARS));
}
