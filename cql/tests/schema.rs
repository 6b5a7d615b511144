//! Schema statements in every form of CQL 3.4.4, the samples of CQL.textile, and the tables
//! of the user's document (seed 001).

mod common;

use common::parsed;
use cql::ast::{
    AlterTableAction, AlterTypeAction, Constant, CqlType, CreateTable, Identifier, IndexTargetKind, NativeType,
    PrimaryKey, PropertyValue, Relation, Selection, TableElement, TableOption,
};
use cql::Statement;

fn col(name: &str) -> Identifier {
    Identifier::unquoted(name)
}

fn create_table(text: &str) -> CreateTable {
    match parsed(text) {
        Statement::CreateTable(t) => t,
        other => panic!("{text:?} is not a CREATE TABLE: {other:?}"),
    }
}

fn primary_key(t: &CreateTable) -> PrimaryKey {
    let clause = t.elements.iter().find_map(|e| match e {
        TableElement::PrimaryKey(pk) => Some(pk.clone()),
        TableElement::Column(_) => None,
    });
    let inline = t
        .columns()
        .find(|c| c.primary_key)
        .map(|c| PrimaryKey { partition_key: vec![c.name.clone()], clustering: vec![] });
    clause.or(inline).expect("a primary key")
}

#[test]
fn seed_001_tables() {
    let t = create_table("CREATE TABLE t (id int, k int, v text, PRIMARY KEY (id))");
    assert_eq!(t.columns().count(), 3);
    assert_eq!(primary_key(&t), PrimaryKey { partition_key: vec![col("id")], clustering: vec![] });

    let t = create_table("CREATE TABLE t (id int, c text, k int, v text, PRIMARY KEY (id,c))");
    assert_eq!(primary_key(&t), PrimaryKey { partition_key: vec![col("id")], clustering: vec![col("c")] });

    let t = create_table(
        "CREATE TABLE t (id1 int, id2 int, c1 text, c2 text, k int, v text, PRIMARY KEY ((id1,id2),c1,c2))",
    );
    assert_eq!(
        primary_key(&t),
        PrimaryKey { partition_key: vec![col("id1"), col("id2")], clustering: vec![col("c1"), col("c2")] }
    );

    let t = create_table("CREATE TABLE magazine_name (id int PRIMARY KEY, name text, publicationFrequency text)");
    assert_eq!(primary_key(&t).partition_key, [col("id")]);
    assert_eq!(t.columns().nth(2).map(|c| c.name.name().to_string()).as_deref(), Some("publicationfrequency"));

    let t = create_table(
        "CREATE TABLE magazine_publisher (publisher text,id int,name text, publicationFrequency text,\nPRIMARY KEY (publisher, id)) WITH CLUSTERING ORDER BY (id DESC)",
    );
    assert_eq!(primary_key(&t), PrimaryKey { partition_key: vec![col("publisher")], clustering: vec![col("id")] });
    assert_eq!(t.options, [TableOption::ClusteringOrder(vec![(col("id"), true)])]);
}

#[test]
fn seed_001_view() {
    let Statement::CreateView(v) = parsed(
        "CREATE MATERIALIZED VIEW magazine_by_name AS SELECT id, name, publicationFrequency FROM magazine_publisher \
         WHERE name IS NOT NULL AND publisher IS NOT NULL AND id IS NOT NULL PRIMARY KEY (name, publisher, id) \
         WITH CLUSTERING ORDER BY (publisher ASC, id DESC)",
    ) else {
        panic!("not a view")
    };
    assert_eq!(v.base_table.name.name(), "magazine_publisher");
    assert_eq!(v.where_clause[0], Relation::IsNotNull(col("name")));
    assert_eq!(v.primary_key.partition_key, [col("name")]);
    assert_eq!(v.primary_key.clustering, [col("publisher"), col("id")]);
    assert!(matches!(v.selection, Selection::Selectors(ref s) if s.len() == 3));
}

#[test]
fn textile_samples() {
    for text in [
        "CREATE KEYSPACE Excelsior\n           WITH replication = {'class': 'SimpleStrategy', 'replication_factor' : 3};",
        "CREATE KEYSPACE Excalibur\n           WITH replication = {'class': 'NetworkTopologyStrategy', 'DC1' : 1, 'DC2' : 3}\n            AND durable_writes = false;",
        "USE myApp;",
        "ALTER KEYSPACE Excelsior\n          WITH replication = {'class': 'SimpleStrategy', 'replication_factor' : 4};",
        "DROP KEYSPACE myApp;",
        "CREATE TABLE monkeySpecies (\n    species text PRIMARY KEY,\n    common_name text,\n    population varint,\n    average_size int\n) WITH comment='Important biological records';",
        "CREATE TABLE timeline (\n    userid uuid,\n    posted_month int,\n    posted_time uuid,\n    body text,\n    posted_by text,\n    PRIMARY KEY (userid, posted_month, posted_time)\n) WITH compaction = { 'class' : 'LeveledCompactionStrategy' };",
        "CREATE TABLE t (\n    k int PRIMARY KEY,\n    other text\n)",
        "CREATE TABLE test (\n    pk int,\n    t int,\n    v text,\n    s text static,\n    PRIMARY KEY (pk, t)\n);",
        "ALTER TABLE addamsFamily\nADD gravesite varchar;",
        "ALTER TABLE addamsFamily\nWITH comment = 'A most excellent and useful column family';",
        "DROP TABLE worldSeriesAttendees;",
        "TRUNCATE superImportantData;",
        "CREATE INDEX userIndex ON NerdMovies (user);",
        "CREATE INDEX ON Mutants (abilityId);",
        "CREATE INDEX ON users (keys(favs));",
        "CREATE CUSTOM INDEX ON users (email) USING 'path.to.the.IndexClass';",
        "CREATE CUSTOM INDEX ON users (email) USING 'path.to.the.IndexClass' WITH OPTIONS = {'storage': '/mnt/ssd/indexes/'};",
        "DROP INDEX userIndex;",
        "DROP INDEX userkeyspace.address_index;",
        "CREATE MATERIALIZED VIEW monkeySpecies_by_population AS\n    SELECT *\n    FROM monkeySpecies\n    WHERE population IS NOT NULL AND species IS NOT NULL\n    PRIMARY KEY (population, species)\n    WITH comment='Allow query by population instead of species';",
        "DROP MATERIALIZED VIEW monkeySpecies_by_population;",
        "CREATE TYPE address (\n    street_name text,\n    street_number int,\n    city text,\n    state text,\n    zip int\n)",
        "CREATE TYPE work_and_home_addresses (\n    home_address address,\n    work_address address\n)",
        "ALTER TYPE address ADD country text",
        "ALTER TYPE address RENAME zip TO zipcode AND street_name TO street",
        "CREATE TRIGGER myTrigger ON myTable USING 'org.apache.cassandra.triggers.InvertedIndex';",
        "DROP TRIGGER myTrigger ON myTable;",
        "CREATE TABLE users (\n    id text PRIMARY KEY,\n    given text,\n    surname text,\n    favs map<text, text>   // A map of text keys, and text values\n)",
        "CREATE TABLE images (\n    name text PRIMARY KEY,\n    owner text,\n    date timestamp,\n    tags set<text>\n);",
        "CREATE TABLE plays (\n    id text PRIMARY KEY,\n    game text,\n    players int,\n    scores list<int>\n)",
        "CREATE TABLE posts (\n    userid text,\n    blog_title text,\n    posted_at timestamp,\n    entry_title text,\n    content text,\n    category int,\n    PRIMARY KEY (userid, blog_title, posted_at)\n)",
        "CREATE INDEX ON users(birth_year);",
        "CREATE TYPE custom_type (txt text, i int);",
        "CREATE TABLE atable (\n  pk int PRIMARY KEY,\n  val int);",
    ] {
        parsed(text);
    }
}

#[test]
fn every_type() {
    let t = create_table(
        "CREATE TABLE IF NOT EXISTS ks.types (a ascii, b bigint, c blob, d boolean, e counter, f date, g decimal, \
         h double, i duration, j float, k inet, l int, m smallint, n text, o time, p timestamp, q timeuuid, \
         r tinyint, s uuid, t varchar, u varint, v list<int>, w set<frozen<list<text>>>, x map<text, frozen<addr>>, \
         y tuple<int, text, ks.addr>, z frozen<tuple<int>>, zz 'org.apache.cassandra.db.marshal.UTF8Type', \
         PRIMARY KEY ((a, b), c))",
    );
    assert!(t.if_not_exists);
    let types: Vec<CqlType> = t.columns().map(|c| c.ty.clone()).collect();
    for (i, native) in NativeType::ALL.iter().enumerate() {
        assert_eq!(types[i], CqlType::Native(*native));
    }
    assert!(matches!(&types[22], CqlType::Set(inner) if matches!(**inner, CqlType::Frozen(_))));
    assert!(
        matches!(&types[24], CqlType::Tuple(v) if matches!(&v[2], CqlType::UserDefined(n) if n.keyspace.is_some()))
    );
    assert_eq!(types[26], CqlType::Custom("org.apache.cassandra.db.marshal.UTF8Type".into()));
}

#[test]
fn table_options() {
    let t = create_table(
        "CREATE TABLE t (k int, c int, s int STATIC, v int, PRIMARY KEY (k, c),) WITH COMPACT STORAGE AND \
         CLUSTERING ORDER BY (c ASC) AND gc_grace_seconds = 10 AND caching = {'keys': 'ALL'} AND \
         bloom_filter_fp_chance = 0.01 AND compact = 1 AND keys = ALL",
    );
    assert!(t.columns().any(|c| c.is_static));
    assert_eq!(t.options[0], TableOption::CompactStorage);
    assert!(
        matches!(&t.options[3], TableOption::Property(p) if matches!(&p.value, PropertyValue::Map(m) if m.len() == 1))
    );
    assert!(matches!(&t.options[5], TableOption::Property(p) if p.name.name() == "compact"));
    assert!(matches!(&t.options[6], TableOption::Property(p) if p.value == PropertyValue::Keyword("ALL".into())));
    // A bare word that is no keyword is no property value, in Cassandra too.
    assert!(cql::parse("CREATE TABLE t (k int PRIMARY KEY) WITH speculative_retry = NONE").is_err());
}

#[test]
fn alter_table_actions() {
    let action = |text: &str| match parsed(text) {
        Statement::AlterTable(a) => a.action,
        other => panic!("{other:?}"),
    };
    assert!(matches!(action("ALTER TABLE t ALTER c TYPE blob"), AlterTableAction::AlterType { .. }));
    assert!(matches!(action("ALTER TABLE t ADD c int"), AlterTableAction::Add(c) if c.len() == 1));
    assert!(matches!(action("ALTER TABLE t ADD (a int, b text static)"), AlterTableAction::Add(c) if c[1].is_static));
    assert!(
        matches!(action("ALTER TABLE t DROP c"), AlterTableAction::Drop { columns, timestamp: None } if columns.len() == 1)
    );
    assert!(matches!(
        action("ALTER TABLE ks.t DROP (a, b) USING TIMESTAMP 123"),
        AlterTableAction::Drop { columns, timestamp: Some(ts) } if columns.len() == 2 && ts == "123"
    ));
    assert_eq!(action("ALTER TABLE t DROP COMPACT STORAGE"), AlterTableAction::DropCompactStorage);
    assert!(matches!(action("ALTER TABLE t DROP compact"), AlterTableAction::Drop { .. }));
    assert!(matches!(action("ALTER TABLE t RENAME a TO b AND c TO d"), AlterTableAction::Rename(r) if r.len() == 2));
    assert!(
        matches!(action("ALTER COLUMNFAMILY t WITH comment = 'x' AND default_time_to_live = 5"), AlterTableAction::With(p) if p.len() == 2)
    );
}

#[test]
fn indexes() {
    let index = |text: &str| match parsed(text) {
        Statement::CreateIndex(i) => i,
        other => panic!("{other:?}"),
    };
    let i = index("CREATE INDEX IF NOT EXISTS idx ON ks.t (values(c))");
    assert!(i.if_not_exists && i.name.is_some());
    assert_eq!(i.targets[0].kind, IndexTargetKind::Values);
    assert_eq!(index("CREATE INDEX ON t (entries(m))").targets[0].kind, IndexTargetKind::Entries);
    assert_eq!(index("CREATE INDEX ON t (full(l))").targets[0].kind, IndexTargetKind::Full);
    assert_eq!(index("CREATE INDEX ON t (keys)").targets[0].kind, IndexTargetKind::Simple);
    assert_eq!(index("CREATE INDEX ON t (a, keys(b))").targets.len(), 2);
    let i = index("CREATE CUSTOM INDEX fn_idx ON t (v) USING 'org.apache.cassandra.index.sasi.SASIIndex' WITH OPTIONS = {'mode': 'CONTAINS'}");
    assert!(i.custom);
    assert_eq!(i.class.as_deref(), Some("org.apache.cassandra.index.sasi.SASIIndex"));
    assert!(matches!(&i.properties[0].value, PropertyValue::Map(m) if m[0].1 == Constant::String("CONTAINS".into())));
    assert!(
        matches!(parsed("DROP INDEX IF EXISTS ks.idx"), Statement::DropIndex(d) if d.if_exists && d.name.keyspace.is_some())
    );
}

#[test]
fn types_views_triggers_and_drops() {
    assert!(
        matches!(parsed("CREATE TYPE IF NOT EXISTS ks.addr (street text, \"Zip\" int,)"), Statement::CreateType(t) if t.fields.len() == 2)
    );
    let alter = |text: &str| match parsed(text) {
        Statement::AlterType(a) => a.action,
        other => panic!("{other:?}"),
    };
    assert!(matches!(alter("ALTER TYPE ks.addr ALTER zip TYPE varint"), AlterTypeAction::AlterField(..)));
    assert!(matches!(alter("ALTER TYPE addr ADD country text"), AlterTypeAction::Add(..)));
    assert!(matches!(parsed("DROP TYPE IF EXISTS ks.addr"), Statement::DropType(d) if d.if_exists));
    assert!(matches!(parsed("ALTER MATERIALIZED VIEW ks.v WITH comment = 'x'"), Statement::AlterView { .. }));
    assert!(matches!(parsed("DROP MATERIALIZED VIEW IF EXISTS ks.v"), Statement::DropView(d) if d.if_exists));
    assert!(
        matches!(parsed("CREATE TRIGGER IF NOT EXISTS trg ON ks.t USING 'Cls'"), Statement::CreateTrigger(t) if t.if_not_exists)
    );
    assert!(matches!(parsed("DROP TRIGGER IF EXISTS trg ON ks.t"), Statement::DropTrigger { if_exists: true, .. }));
    assert!(matches!(parsed("DROP KEYSPACE IF EXISTS ks"), Statement::DropKeyspace { if_exists: true, .. }));
    assert!(matches!(parsed("DROP COLUMNFAMILY IF EXISTS ks.t"), Statement::DropTable(d) if d.if_exists));
    assert!(matches!(parsed("TRUNCATE TABLE ks.t"), Statement::Truncate(t) if t.keyspace.is_some()));
    assert!(matches!(parsed("TRUNCATE COLUMNFAMILY t"), Statement::Truncate(_)));
    assert!(
        matches!(parsed("CREATE SCHEMA IF NOT EXISTS ks WITH replication = {'class': 'SimpleStrategy'}"), Statement::CreateKeyspace(k) if k.if_not_exists)
    );
    assert!(
        matches!(parsed("CREATE MATERIALIZED VIEW IF NOT EXISTS v AS SELECT * FROM t PRIMARY KEY ((a, b), c) WITH COMPACT STORAGE"), Statement::CreateView(v) if v.primary_key.partition_key.len() == 2)
    );
}

#[test]
fn functions_and_aggregates() {
    for text in [
        "CREATE OR REPLACE FUNCTION somefunction\n    ( somearg int, anotherarg text, complexarg frozen<someUDT>, listarg list<bigint> )\n    RETURNS NULL ON NULL INPUT\n    RETURNS text\n    LANGUAGE java\n    AS $$\n       // some Java code\n    $$;",
        "CREATE FUNCTION IF NOT EXISTS akeyspace.fname\n    ( someArg int )\n    CALLED ON NULL INPUT\n    RETURNS text\n    LANGUAGE java\n    AS $$\n       // some Java code\n    $$;",
        "DROP FUNCTION myfunction;",
        "DROP FUNCTION mykeyspace.afunction;",
        "DROP FUNCTION afunction ( int );",
        "DROP FUNCTION IF EXISTS afunction ( text );",
        "CREATE AGGREGATE myaggregate ( text )\n  SFUNC myaggregate_state\n  STYPE text\n  FINALFUNC myaggregate_final\n  INITCOND 'foo';",
        "DROP AGGREGATE myAggregate;",
        "DROP AGGREGATE myKeyspace.anAggregate;",
        "DROP AGGREGATE someAggregate ( int );",
        "CREATE OR REPLACE FUNCTION averageState ( state tuple<int,bigint>, val int )\n  CALLED ON NULL INPUT\n  RETURNS tuple<int,bigint>\n  LANGUAGE java\n  AS '\n    if (val != null) {\n      state.setInt(0, state.getInt(0)+1);\n    }\n    return state;\n  ';",
        "CREATE OR REPLACE AGGREGATE average ( int )\n  SFUNC averageState\n  STYPE tuple<int,bigint>\n  FINALFUNC averageFinal\n  INITCOND (0, 0);",
        "CREATE FUNCTION some_function ( arg int )\n  RETURNS NULL ON NULL INPUT\n  RETURNS int\n  LANGUAGE java\n  AS $$ return arg; $$;",
        "CREATE FUNCTION fct_using_udt ( udtarg frozen<custom_type> )\n  RETURNS NULL ON NULL INPUT\n  RETURNS text\n  LANGUAGE java\n  AS $$ return udtarg.getString(\"txt\"); $$;",
        "CREATE FUNCTION f () CALLED ON NULL INPUT RETURNS int LANGUAGE JavaScript AS '1'",
    ] {
        parsed(text);
    }
    let Statement::CreateFunction(f) =
        parsed("CREATE FUNCTION ks.f (a int) CALLED ON NULL INPUT RETURNS int LANGUAGE Java AS 'x'")
    else {
        panic!("not a function")
    };
    assert!(f.called_on_null_input);
    assert_eq!(f.language, "java");
    let Statement::CreateAggregate(a) = parsed("CREATE AGGREGATE a (int, text) SFUNC s STYPE int INITCOND 0") else {
        panic!("not an aggregate")
    };
    assert_eq!(a.arguments.len(), 2);
    assert!(a.final_function.is_none() && a.initial_condition.is_some());
}

#[test]
fn property_values_keep_cassandra_raw_text() {
    let Statement::CreateKeyspace(k) = parsed("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3} AND durable_writes = true")
    else {
        panic!("not a keyspace")
    };
    let PropertyValue::Map(m) = &k.properties[0].value else { panic!("not a map") };
    assert_eq!(m[1].1.raw_text(), "3");
    assert_eq!(m[0].1.raw_text(), "SimpleStrategy");
}
