//! The Rust `scylla` driver (crates.io, unmodified) against a real node's native port: it
//! connects (reading system.local, system.peers and the system_schema tables for its
//! metadata), runs seed 001's magazine tables, prepares and binds, pages through 2,000 rows of
//! one partition in clustering order (DESC), and round-trips collections.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use e2e::Node;
use futures::TryStreamExt;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;

/// Every request and the whole run are bounded.
const LIMIT: Duration = Duration::from_secs(120);

async fn seed_001(addr: String) -> Result<(), Box<dyn std::error::Error>> {
    let session: Session =
        SessionBuilder::new().known_node(addr).connection_timeout(Duration::from_secs(10)).build().await?;
    let (release,): (String,) = session
        .query_unpaged("SELECT release_version FROM system.local", &[])
        .await?
        .into_rows_result()?
        .first_row()?;
    assert_eq!(release, "3.11.10");
    session
        .query_unpaged(
            "CREATE KEYSPACE seed WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            &[],
        )
        .await?;
    session
        .query_unpaged(
            "CREATE TABLE seed.magazine_name (id int PRIMARY KEY, name text, publicationFrequency text)",
            &[],
        )
        .await?;
    session
        .query_unpaged(
            "CREATE TABLE seed.magazine_publisher (publisher text,id int,name text, publicationFrequency text, \
             PRIMARY KEY (publisher, id)) WITH CLUSTERING ORDER BY (id DESC)",
            &[],
        )
        .await?;
    let names =
        session.prepare("INSERT INTO seed.magazine_name (id, name, publicationFrequency) VALUES (?, ?, ?)").await?;
    session.execute_unpaged(&names, (1i32, "Tech Weekly", "Weekly")).await?;
    let (name, frequency): (String, String) = session
        .query_unpaged("SELECT name, publicationFrequency FROM seed.magazine_name WHERE id = 1", &[])
        .await?
        .into_rows_result()?
        .single_row()?;
    assert_eq!((name.as_str(), frequency.as_str()), ("Tech Weekly", "Weekly"));

    let insert = session
        .prepare("INSERT INTO seed.magazine_publisher (publisher, id, name, publicationFrequency) VALUES (?, ?, ?, ?)")
        .await?;
    for id in 0..2000i32 {
        session.execute_unpaged(&insert, ("Acme", id, format!("magazine {id}"), "Monthly")).await?;
    }
    let mut select = session.prepare("SELECT id, name FROM seed.magazine_publisher WHERE publisher = ?").await?;
    select.set_page_size(300);
    let mut rows = session.execute_iter(select, ("Acme",)).await?.rows_stream::<(i32, String)>()?;
    let mut ids = Vec::new();
    while let Some((id, name)) = rows.try_next().await? {
        assert_eq!(name, format!("magazine {id}"));
        ids.push(id);
    }
    assert_eq!(ids, (0..2000).rev().collect::<Vec<_>>(), "every row once, newest id first");

    session
        .query_unpaged(
            "CREATE TABLE seed.kinds (id int PRIMARY KEY, tags set<text>, scores map<text, int>, l list<int>)",
            &[],
        )
        .await?;
    let kinds = session.prepare("INSERT INTO seed.kinds (id, tags, scores, l) VALUES (?, ?, ?, ?)").await?;
    let tags: BTreeSet<String> = ["a", "b"].map(String::from).into();
    let scores: BTreeMap<String, i32> = [("x".to_string(), 1), ("y".to_string(), 2)].into();
    session.execute_unpaged(&kinds, (7i32, &tags, &scores, vec![3i32, 1, 2])).await?;
    let back: (BTreeSet<String>, BTreeMap<String, i32>, Vec<i32>) = session
        .query_unpaged("SELECT tags, scores, l FROM seed.kinds WHERE id = 7", &[])
        .await?
        .into_rows_result()?
        .single_row()?;
    assert_eq!(back, (tags, scores, vec![3, 1, 2]));

    let missing = session.query_unpaged("SELECT * FROM seed.no_such_table", &[]).await;
    let e = missing.expect_err("a missing table is an error").to_string();
    assert!(e.contains("unconfigured table no_such_table"), "{e}");
    Ok(())
}

#[test]
fn the_scylla_rust_driver_runs_seed_001() {
    let node = Node::start_default();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let run = runtime.block_on(async { tokio::time::timeout(LIMIT, seed_001(node.native_addr().to_string())).await });
    match run {
        Ok(Ok(())) => {}
        Ok(Err(e)) => panic!("the scylla driver failed: {e}\nnode log:\n{}", node.log()),
        Err(_) => panic!("the scylla driver ran longer than {LIMIT:?}\nnode log:\n{}", node.log()),
    }
}
