use super::*;

fn parse(s: &str) -> Statement {
    match parse_statement(s) {
        Ok(stmt) => stmt,
        Err(e) => panic!("{s:?} did not parse: {e}"),
    }
}

fn text(s: &str) -> Term {
    Term::Text(s.to_string())
}

fn call(name: &str, arg: Option<&str>) -> Term {
    Term::Call { name: name.to_string(), arg: arg.map(str::to_string) }
}

fn path(cf: &str, key: Term, columns: Vec<Term>) -> PathExpr {
    PathExpr { cf: cf.to_string(), key, columns }
}

#[test]
fn set_forms() {
    assert_eq!(
        parse("set Users['jsmith']['first'] = 'John';"),
        Statement::Set { path: path("Users", text("jsmith"), vec![text("first")]), value: text("John"), ttl: None }
    );
    assert_eq!(
        parse("SET Users[jsmith][age] = 42 WITH TTL = 3600"),
        Statement::Set { path: path("Users", text("jsmith"), vec![text("age")]), value: text("42"), ttl: Some(3600) }
    );
    assert_eq!(
        parse("set Super1['k']['sc']['c'] = long(-5);"),
        Statement::Set {
            path: path("Super1", text("k"), vec![text("sc"), text("c")]),
            value: call("long", Some("-5")),
            ttl: None
        }
    );
    assert_eq!(
        parse("set cf[utf8('key')][timeuuid()] = bytes('00ff')"),
        Statement::Set {
            path: path("cf", call("utf8", Some("key")), vec![call("timeuuid", None)]),
            value: call("bytes", Some("00ff")),
            ttl: None
        }
    );
    // Escapes inside quoted values.
    assert_eq!(
        parse(r"set cf['k']['c'] = 'it\'s a \'test\'\n';"),
        Statement::Set { path: path("cf", text("k"), vec![text("c")]), value: text("it's a 'test'\n"), ttl: None }
    );
}

#[test]
fn get_forms() {
    assert_eq!(
        parse("get Users['jsmith'];"),
        Statement::Get { path: path("Users", text("jsmith"), vec![]), as_type: None, limit: None }
    );
    assert_eq!(
        parse("get Users['jsmith']['age'] as LongType;"),
        Statement::Get {
            path: path("Users", text("jsmith"), vec![text("age")]),
            as_type: Some("LongType".into()),
            limit: None
        }
    );
    assert_eq!(
        parse("get Super1['k']['sc'] limit 5"),
        Statement::Get { path: path("Super1", text("k"), vec![text("sc")]), as_type: None, limit: Some(5) }
    );
    assert_eq!(
        parse("get users where user_name = 'bob' and age > long(30) limit 10;"),
        Statement::GetWhere {
            cf: "users".into(),
            conditions: vec![
                Condition { column: text("user_name"), op: CompareOp::Eq, value: text("bob") },
                Condition { column: text("age"), op: CompareOp::Gt, value: call("long", Some("30")) },
            ],
            limit: Some(10)
        }
    );
    assert!(parse_statement("get users['k'] limit 0").is_err());
}

#[test]
fn del_count_incr_list() {
    assert_eq!(parse("del users['k'];"), Statement::Del { path: path("users", text("k"), vec![]) });
    assert_eq!(parse("del users['k']['c'];"), Statement::Del { path: path("users", text("k"), vec![text("c")]) });
    assert_eq!(parse("count users['k']"), Statement::Count { path: path("users", text("k"), vec![]) });
    assert_eq!(parse("incr c['k']['hits']"), Statement::Incr { path: path("c", text("k"), vec![text("hits")]), by: 1 });
    assert_eq!(
        parse("incr c['k']['hits'] by 5"),
        Statement::Incr { path: path("c", text("k"), vec![text("hits")]), by: 5 }
    );
    assert_eq!(
        parse("decr c['k']['hits'] by 3;"),
        Statement::Incr { path: path("c", text("k"), vec![text("hits")]), by: -3 }
    );
    let list = |start: Option<&str>, end: Option<&str>, limit, columns, reversed| Statement::List {
        cf: "users".into(),
        start: start.map(str::to_string),
        end: end.map(str::to_string),
        limit,
        columns,
        reversed,
    };
    assert_eq!(parse("list users;"), list(None, None, None, None, false));
    assert_eq!(parse("list users[a:z] limit 20;"), list(Some("a"), Some("z"), Some(20), None, false));
    assert_eq!(parse("list users[:'m']"), list(None, Some("m"), None, None, false));
    // cassandra-cli 1.1+: `columns N [reversed]` after the limit.
    assert_eq!(parse("list users columns 5"), list(None, None, None, Some(5), false));
    assert_eq!(parse("LIST users[a:] LIMIT 3 COLUMNS 2 REVERSED;"), list(Some("a"), None, Some(3), Some(2), true));
    // `limit 0` is refused when the statement runs, with cassandra-cli's message.
    assert_eq!(parse("list users limit 0"), list(None, None, Some(0), None, false));
    assert!(parse_statement("list users columns 2 limit 3").is_err(), "columns comes after limit");
    assert!(parse_statement("list users columns").is_err());
    assert!(parse_statement("list users limit 99999999999").is_err());
    assert!(parse_statement("get cf['k']['a']['b']['c']").is_err(), "at most two column levels");
}

#[test]
fn session_and_info_statements() {
    assert_eq!(parse("trace next query;"), Statement::TraceNextQuery);
    assert_eq!(parse("TRACE NEXT QUERY"), Statement::TraceNextQuery);
    assert!(parse_statement("trace next").is_err());
    assert_eq!(
        parse("connect localhost/9160;"),
        Statement::Connect { host: "localhost".into(), port: 9160, credentials: None }
    );
    assert_eq!(
        parse("connect 127.0.0.1/9170"),
        Statement::Connect { host: "127.0.0.1".into(), port: 9170, credentials: None }
    );
    assert_eq!(
        parse("connect db-1.example.com/9160 jsmith 'secret'"),
        Statement::Connect {
            host: "db-1.example.com".into(),
            port: 9160,
            credentials: Some(("jsmith".into(), "secret".into()))
        }
    );
    assert_eq!(parse("use Keyspace1;"), Statement::Use { keyspace: "Keyspace1".into(), credentials: None });
    assert_eq!(
        parse("use Keyspace1 jsmith 'havebadpass';"),
        Statement::Use { keyspace: "Keyspace1".into(), credentials: Some(("jsmith".into(), "havebadpass".into())) }
    );
    assert_eq!(parse("describe;"), Statement::Describe { name: None });
    assert_eq!(parse("describe Keyspace1"), Statement::Describe { name: Some("Keyspace1".into()) });
    assert_eq!(parse("describe keyspace Keyspace1"), Statement::Describe { name: Some("Keyspace1".into()) });
    assert_eq!(parse("DESCRIBE CLUSTER;"), Statement::DescribeCluster);
    assert_eq!(parse("describe ring ks"), Statement::DescribeRing { keyspace: Some("ks".into()) });
    assert_eq!(parse("show keyspaces;"), Statement::ShowKeyspaces);
    assert_eq!(parse("show cluster name;"), Statement::ShowClusterName);
    assert_eq!(parse("show api version;"), Statement::ShowApiVersion);
    assert_eq!(parse("show schema ks;"), Statement::ShowSchema { keyspace: Some("ks".into()) });
    assert_eq!(parse("help;"), Statement::Help { topic: None });
    assert_eq!(parse("?"), Statement::Help { topic: None });
    assert_eq!(parse("help create column family;"), Statement::Help { topic: Some("create column family".into()) });
    assert_eq!(parse("quit;"), Statement::Exit);
    assert_eq!(parse("EXIT"), Statement::Exit);
    assert_eq!(parse("  -- just a comment"), Statement::NoOp);
    assert_eq!(
        parse("assume users keys as utf8;"),
        Statement::Assume { cf: "users".into(), target: AssumeTarget::Keys, type_name: "utf8".into() }
    );
    assert_eq!(
        parse("assume users sub_comparator as LongType"),
        Statement::Assume { cf: "users".into(), target: AssumeTarget::SubComparator, type_name: "LongType".into() }
    );
    assert_eq!(parse("consistencylevel as QUORUM"), Statement::ConsistencyLevel { level: "QUORUM".into() });
    assert_eq!(parse("truncate users;"), Statement::Truncate { cf: "users".into() });
    assert_eq!(
        parse("drop index on users.user_name;"),
        Statement::DropIndex { cf: "users".into(), column: "user_name".into() }
    );
    assert_eq!(parse("drop keyspace ks"), Statement::DropKeyspace { name: "ks".into() });
    assert_eq!(parse("drop column family 'cf'"), Statement::DropColumnFamily { name: "cf".into() });
}

#[test]
fn keyspace_statements() {
    assert_eq!(
        parse("create keyspace demo with placement_strategy = 'org.apache.cassandra.locator.SimpleStrategy' and strategy_options = {replication_factor:1};"),
        Statement::CreateKeyspace {
            name: "demo".into(),
            attrs: vec![
                ("placement_strategy".into(), AttrValue::Text("org.apache.cassandra.locator.SimpleStrategy".into())),
                ("strategy_options".into(), AttrValue::Hash(vec![("replication_factor".into(), AttrValue::Int("1".into()))])),
            ]
        }
    );
    assert_eq!(
        parse("create keyspace old with replication_factor = 1"),
        Statement::CreateKeyspace {
            name: "old".into(),
            attrs: vec![("replication_factor".into(), AttrValue::Int("1".into()))]
        }
    );
    assert_eq!(parse("create keyspace bare;"), Statement::CreateKeyspace { name: "bare".into(), attrs: vec![] });
    assert!(matches!(parse("update keyspace demo with durable_writes = false"), Statement::UpdateKeyspace { .. }));
}

#[test]
fn column_family_attributes() {
    let stmt = parse(
        "create column family Super1 with comparator = UTF8Type and column_type = Super and subcomparator = LongType \
         and default_validation_class = 'BytesType' and key_validation_class = UTF8Type and gc_grace = 864000 \
         and read_repair_chance = 0.5 and comment = 'A \\'super\\' CF' \
         and compression_options = {sstable_compression: SnappyCompressor, chunk_length_kb: 64};",
    );
    let Statement::CreateColumnFamily { name, attrs } = stmt else { panic!("not a create column family") };
    assert_eq!(name, "Super1");
    let get = |k: &str| attrs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(get("comparator"), Some(AttrValue::Text("UTF8Type".into())));
    assert_eq!(get("column_type"), Some(AttrValue::Text("Super".into())));
    assert_eq!(get("gc_grace"), Some(AttrValue::Int("864000".into())));
    assert_eq!(get("read_repair_chance"), Some(AttrValue::Double("0.5".into())));
    assert_eq!(get("comment"), Some(AttrValue::Text("A 'super' CF".into())));
    assert_eq!(
        get("compression_options"),
        Some(AttrValue::Hash(vec![
            ("sstable_compression".into(), AttrValue::Text("SnappyCompressor".into())),
            ("chunk_length_kb".into(), AttrValue::Int("64".into())),
        ]))
    );
    // Attribute names are case-insensitive (lower-cased).
    let Statement::UpdateColumnFamily { attrs, .. } = parse("update column family x with GC_GRACE = 5") else {
        panic!()
    };
    assert_eq!(attrs, vec![("gc_grace".to_string(), AttrValue::Int("5".into()))]);
}

#[test]
fn syntax_errors_are_reported() {
    assert!(matches!(parse_statement("frobnicate x;"), Err(ParseError::UnknownCommand { .. })));
    assert!(matches!(parse_statement("set users['k']['c'] 'v'"), Err(ParseError::Syntax { .. })));
    assert!(matches!(parse_statement("create column family x with = 5"), Err(ParseError::Syntax { .. })));
    assert!(matches!(parse_statement("set users['k]"), Err(ParseError::Lex(_))));
    assert!(matches!(parse_statement("get users['k'] extra"), Err(ParseError::Syntax { .. })));
    assert!(matches!(parse_statement("connect localhost/99999"), Err(ParseError::Syntax { .. })));
    let msg = parse_statement("frobnicate x;").unwrap_err().to_string();
    assert_eq!(msg, "Command not found: `frobnicate x`. Type 'help;' or '?' for help.");
}
