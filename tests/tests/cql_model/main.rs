//! CQL 3 over Thrift against an in-memory model, as 3.11 behaves.
//!
//! Random tables: a partition key of one or two columns, zero to two clustering columns each
//! ASC or DESC (`WITH CLUSTERING ORDER BY`), one to three regular columns, of the types int,
//! bigint, text, blob, boolean and double (and, for regular columns, `set<int>`, kept one cell
//! per element: whole-set writes, `s = s + {..}`, `s = s - {..}`), declared in a random order.
//! Random writes: INSERT
//! of some, all or none of the regular columns (nulls included), UPDATE ... SET, DELETE of a
//! partition, of a row, of a clustering prefix or of an IN list, DELETE of single columns;
//! each `USING TIMESTAMP` the newest yet or, sometimes, an older one, so that last-write-wins
//! decides. After every step:
//! - the touched partition: `SELECT *` (rows in the declared clustering order, DESC
//!   included), `SELECT COUNT(*)`, `ORDER BY ck0` reversed;
//! - a random probe of it (with IN, of other partitions too): `=` on a clustering prefix, then
//!   `>`, `>=`, `<`, `<=` (one or two bounds) or IN on the next clustering column, all
//!   columns or some in any order, optional `ORDER BY` either way and `LIMIT`; and its count;
//! - the whole table: `SELECT *` as a multiset, `COUNT(*)`, `SELECT DISTINCT` of the
//!   partition key, and `LIMIT n` (any n of its rows).
//!
//! About every tenth step flushes the table with sibyltool (half of them compact it too) and
//! compares every partition the keys can make; every case ends so.
//!
//! The model keeps 3.11's rules: an INSERT writes a row marker, so its row outlives its
//! regular columns (it shows with nulls), while a row made only by UPDATE goes with its last
//! column; a deletion hides every write in its scope with an older timestamp; of two writes of
//! a cell the newer wins. Timestamps are unique, so no tie needs breaking. Values are kept as
//! the bytes CQL encodes them in and compared as bytes.
//!
//! A failing case reports the table, every statement so far and the query that differed; the
//! steps shrink, the table does not. `PROPTEST_CASES=n` runs n cases instead of [`CASES`].
//!
//! It covers ORDER BY on tables whose clustering columns go in mixed directions (the table's
//! order or its reverse, as 3.11) and DELETE of a range of clustering values (3.0's range
//! tombstones), which it found answered wrongly at first.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::time::{Duration, Instant};

use e2e::*;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::Union;
use proptest::test_runner::{Config as ProptestConfig, TestCaseError, TestRunner};
use thrift_idl as t;

const KS: &str = "model";
const CASES: u32 = 32;
const MAX_STEPS: usize = 40;
/// Past this, the remaining cases (and shrinking runs) pass without running.
const RUN_LIMIT: Duration = Duration::from_secs(60);

mod case;
mod ops;
mod oracle;
mod table;
mod values;

use case::*;
use ops::*;
use oracle::*;
use table::*;
use values::*;

pub(crate) static TABLES: AtomicUsize = AtomicUsize::new(0);
/// Statements written, queries compared and sibyltool runs, over the whole test.
pub(crate) static WRITES: AtomicUsize = AtomicUsize::new(0);
pub(crate) static READS: AtomicUsize = AtomicUsize::new(0);
pub(crate) static TOOL_RUNS: AtomicUsize = AtomicUsize::new(0);

fn run_case(node: &Node, schema: &Schema, steps: &[(Op, Probe)]) -> Result<(), TestCaseError> {
    let table = format!("t{}", TABLES.fetch_add(1, AtomicOrdering::Relaxed));
    let mut case = Case {
        node,
        c: node.client(),
        table: table.clone(),
        model: Model { schema: schema.clone(), partitions: BTreeMap::new() },
        log: Vec::new(),
    };
    case.write(schema.create(&table))?;
    for (i, (op, probe)) in steps.iter().enumerate() {
        // Step i writes at (i + 1) * 1000; a stale write of step i, d steps back, at
        // (i + 1 - d) * 1000 + i + 1: older than what the steps since wrote, and unique.
        let step = i as i64 + 1;
        let ts = match op.stale() {
            None => step * 1000,
            Some(d) => (step - i64::from(d)).max(0) * 1000 + step,
        };
        match op {
            Op::Flush { compact } => case.flush(*compact)?,
            _ => {
                case.write(op.statement(schema, &table, ts))?;
                case.model.apply(op, ts);
            }
        }
        let pk = op.partition().unwrap_or(&probe.pk).to_vec();
        case.check_partition(&pk)?;
        case.check_probe(&pk, probe)?;
        case.check_table(probe.limit)?;
    }
    case.flush(true)
}

#[test]
fn cql_tables_behave_as_the_model() {
    let node = Node::start_default();
    let mut c = node.client();
    let create =
        format!("CREATE KEYSPACE {KS} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}");
    cql(&mut c, &create).unwrap_or_else(|e| panic!("{create}: {e:?}"));
    let started = Instant::now();
    // PROPTEST_CASES=n runs n cases instead (with no time limit), to look harder.
    let asked: Option<u32> = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok());
    let limit = if asked.is_some() { Duration::MAX } else { RUN_LIMIT };
    let cases = asked.unwrap_or(CASES);
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        max_shrink_iters: 5000,
        max_shrink_time: 60_000,
        ..ProptestConfig::default()
    };
    let mut runner = TestRunner::new(config);
    let ran = AtomicUsize::new(0);
    let result = runner.run(&case(), |(schema, steps)| {
        // Bounded in time as well as in count: past the limit the remaining cases are not
        // run, and the count of those that were is checked below.
        if started.elapsed() > limit {
            return Ok(());
        }
        ran.fetch_add(1, AtomicOrdering::Relaxed);
        run_case(&node, &schema, &steps)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let ran = ran.load(AtomicOrdering::Relaxed);
    assert!(
        ran >= (cases as usize / 8).max(1),
        "only {ran} of {cases} cases ran within {limit:?}: the machine is too slow for this test's bound"
    );
    assert!(!node.log().contains("panicked"), "sibyl panicked:\n{}", node.log());
    eprintln!(
        "{ran} of {cases} cases in {:?}: {} statements, {} queries compared, {} sibyltool runs",
        started.elapsed(),
        WRITES.load(AtomicOrdering::Relaxed),
        READS.load(AtomicOrdering::Relaxed),
        TOOL_RUNS.load(AtomicOrdering::Relaxed)
    );
}
