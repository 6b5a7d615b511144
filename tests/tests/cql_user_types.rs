//! User-defined types and the duration type over the native protocol, on one real node:
//! CREATE/ALTER/DROP TYPE with 3.11's refusals, frozen UDT columns (in a clustering key and
//! inside collections), literals, bound values in the protocol serialization, field selection,
//! JSON, result metadata (type option 0x0030, duration 0x0015), `system_schema.types`, and
//! types that survive a restart; then the DataStax Python driver on the same node.

use e2e::native::*;
use e2e::*;

const V4: u8 = 4;

/// A type option of result metadata, read whole, written as text: `int`, `list<..>`,
/// `udt ks.name{f:type,...}`, `duration`, `custom(class)`.
fn type_option(c: &mut Cursor<'_>) -> String {
    match c.short() {
        0x0000 => format!("custom({})", c.string()),
        0x0009 => "int".into(),
        0x000D => "text".into(),
        0x0015 => "duration".into(),
        0x0020 => format!("list<{}>", type_option(c)),
        0x0022 => format!("set<{}>", type_option(c)),
        0x0021 => {
            let k = type_option(c);
            format!("map<{k}, {}>", type_option(c))
        }
        0x0030 => {
            let (ks, name) = (c.string(), c.string());
            let fields: Vec<String> = (0..c.short())
                .map(|_| {
                    let f = c.string();
                    format!("{f}:{}", type_option(c))
                })
                .collect();
            format!("udt {ks}.{name}{{{}}}", fields.join(","))
        }
        0x0031 => {
            let parts: Vec<String> = (0..c.short()).map(|_| type_option(c)).collect();
            format!("tuple<{}>", parts.join(", "))
        }
        other => format!("0x{other:04x}"),
    }
}

/// A row's values, `None` for null.
type Row = Vec<Option<Vec<u8>>>;

/// A ROWS result's column names with their full types, and its rows.
fn typed_rows(f: &Frame) -> (Vec<(String, String)>, Vec<Row>) {
    assert_eq!(f.result_kind(), 2, "a ROWS result: {:?}", f.error());
    let mut c = f.cursor();
    c.int();
    let flags = c.int();
    let count = c.int() as usize;
    if flags & 0x0001 != 0 {
        c.string();
        c.string();
    }
    let mut columns = Vec::new();
    for _ in 0..count {
        if flags & 0x0001 == 0 {
            c.string();
            c.string();
        }
        let name = c.string();
        columns.push((name, type_option(&mut c)));
    }
    let n = c.int();
    let rows = (0..n).map(|_| (0..count).map(|_| c.bytes()).collect()).collect();
    assert!(c.is_done());
    (columns, rows)
}

/// A UDT or tuple value: each field `[bytes]`.
fn fields(values: &[Option<&[u8]>]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        match v {
            Some(b) => {
                out.extend((b.len() as i32).to_be_bytes());
                out.extend_from_slice(b);
            }
            None => out.extend((-1i32).to_be_bytes()),
        }
    }
    out
}

fn int(v: i32) -> Vec<u8> {
    v.to_be_bytes().to_vec()
}

fn invalid(c: &mut NativeClient, q: &str, message: &str) {
    let f = c.query(q);
    assert_eq!(f.error(), (0x2200, message.to_string()), "{q}");
}

#[test]
fn user_types_and_durations_as_3_11_has_them() {
    let mut node = Node::start(Config::random());
    let mut c = NativeClient::ready(node.native_addr(), V4, None);
    c.query_ok("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", 5);
    c.query_ok("USE ks", 3);

    // CREATE TYPE answers a TYPE schema change.
    let f = c.query("CREATE TYPE address (street text, zip int)");
    let mut cur = f.cursor();
    assert_eq!(cur.int(), 5);
    let change = (cur.string(), cur.string(), cur.string(), cur.string());
    assert_eq!(change, ("CREATED".into(), "TYPE".into(), "ks".into(), "address".into()));
    c.query_ok("CREATE TYPE IF NOT EXISTS address (other int)", 1);
    invalid(&mut c, "CREATE TYPE address (a int)", "A user type of name ks.address already exists");
    invalid(&mut c, "CREATE TYPE bad (a int, a text)", "Duplicate field name a in type bad");
    invalid(&mut c, "CREATE TYPE bad (a counter)", "A user type cannot contain counters");
    invalid(&mut c, "CREATE TYPE bad (a address)", "A user type cannot contain non-frozen UDTs");
    invalid(&mut c, "CREATE TYPE bad (a frozen<nope>)", "Unknown type ks.nope");
    c.query_ok("CREATE TYPE person (name text, home frozen<address>, tags list<text>)", 5);

    // Tables: 3.11's refusals, then frozen UDTs in a clustering key and in collections.
    invalid(
        &mut c,
        "CREATE TABLE bad (k address PRIMARY KEY)",
        "Invalid non-frozen user-defined type for PRIMARY KEY component k",
    );
    invalid(
        &mut c,
        "CREATE TABLE bad (k int PRIMARY KEY, v list<address>)",
        "Non-frozen UDTs are not allowed inside collections: list<address>",
    );
    invalid(&mut c, "CREATE TABLE bad (k int PRIMARY KEY, v frozen<nope>)", "Unknown type ks.nope");
    invalid(
        &mut c,
        "CREATE TABLE bad (k int PRIMARY KEY, v frozen<other.address>)",
        "Statement on keyspace ks cannot refer to a user type in keyspace other; user types can only be used in the keyspace they are defined in",
    );
    invalid(
        &mut c,
        "CREATE TABLE bad (k int, d duration, PRIMARY KEY (k, d))",
        "duration type is not supported for PRIMARY KEY part d",
    );
    invalid(
        &mut c,
        "CREATE TABLE bad (k int PRIMARY KEY, s set<duration>)",
        "Durations are not allowed inside sets: set<duration>",
    );
    c.query_ok(
        "CREATE TABLE people (k int, home frozen<address>, who frozen<person>, many map<text, frozen<address>>, \
         took duration, PRIMARY KEY (k, home))",
        5,
    );

    // Literals (fields in any order, missing ones null), then a value bound whole.
    c.query_ok(
        "INSERT INTO people (k, home, who, many, took) VALUES (1, {zip: 75001, street: 'rue'}, \
         {name: 'ann', home: {street: 'x'}}, {'w': {zip: 2}}, 1h30m)",
        1,
    );
    invalid(
        &mut c,
        "INSERT INTO people (k, home) VALUES (2, {nope: 1})",
        "Unknown field 'nope' in value of user defined type address",
    );
    invalid(
        &mut c,
        "INSERT INTO people (k, home, took) VALUES (2, {zip: 1}, 1m1h)",
        "Invalid duration. The minutes should be after hours",
    );
    let (id, _) = c.prepare("INSERT INTO people (k, home, took) VALUES (?, ?, ?)");
    let home = fields(&[Some(b"avenue"), Some(&int(7))]);
    // P1DT2H: 1 day, 2 hours as signed vints (zigzag): months 0, days 2, nanoseconds 14.4e12.
    let mut took = vec![0x00, 0x02];
    took.extend([0xFC, 0x0D, 0x18, 0xC2, 0xE2, 0x80, 0x00]);
    let f = c.execute(&id, &[Some(&int(2)), Some(&home), Some(&took)]);
    assert_eq!(f.result_kind(), 1, "{:?}", f.error());
    // A value missing its trailing field is a valid UDT value too.
    let short = fields(&[Some(b"lane")]);
    let f = c.execute(&id, &[Some(&int(3)), Some(&short), None]);
    assert_eq!(f.result_kind(), 1, "{:?}", f.error());
    let extra = fields(&[Some(b"a"), Some(&int(1)), Some(b"b")]);
    let f = c.execute(&id, &[Some(&int(4)), Some(&extra), None]);
    assert_eq!(f.error().0, 0x2200);
    assert!(f.error().1.contains("Invalid remaining data after end of UDT value"), "{:?}", f.error());

    // The metadata names the type whole; values come back in the protocol serialization.
    let (columns, rows) = typed_rows(&c.query("SELECT home, took, many FROM people WHERE k = 2"));
    assert_eq!(
        columns,
        [
            ("home".to_string(), "udt ks.address{street:text,zip:int}".to_string()),
            ("took".to_string(), "duration".to_string()),
            ("many".to_string(), "map<text, udt ks.address{street:text,zip:int}>".to_string()),
        ]
    );
    assert_eq!(rows, vec![vec![Some(home.clone()), Some(took.clone()), None]]);

    // Field selection, nulls in fields, the clustering order of frozen UDTs.
    let (columns, rows) = typed_rows(&c.query("SELECT home.zip, home.street, who.home FROM people WHERE k = 1"));
    assert_eq!(columns[0], ("home.zip".to_string(), "int".to_string()));
    assert_eq!(rows[0][0], Some(int(75001)));
    assert_eq!(rows[0][1], Some(b"rue".to_vec()));
    assert_eq!(rows[0][2], Some(fields(&[Some(b"x"), None])));
    let (_, rows) = typed_rows(&c.query("SELECT home.zip FROM people WHERE k = 3"));
    assert_eq!(rows, vec![vec![None]]);
    invalid(&mut c, "SELECT home.nope FROM people", "home of type frozen<address> has no field nope");
    invalid(&mut c, "SELECT k.zip FROM people", "Invalid field selection: k of type int is not a user type");
    invalid(
        &mut c,
        "SELECT * FROM people WHERE k = 1 AND home = {street: 'rue', zip: 75001} AND took > 1h ALLOW FILTERING",
        "Slice restrictions are not supported on duration columns",
    );
    let (_, rows) = typed_rows(&c.query("SELECT k FROM people WHERE k = 1 AND home = {street: 'rue', zip: 75001}"));
    assert_eq!(rows, vec![vec![Some(int(1))]]);

    // JSON both ways.
    let (_, rows) = typed_rows(&c.query("SELECT JSON home, took FROM people WHERE k = 1"));
    let json = String::from_utf8(rows[0][0].clone().expect("a JSON row")).expect("utf-8");
    assert_eq!(json, r#"{"home": {"street": "rue", "zip": 75001}, "took": "1h30m"}"#);
    c.query_ok(r#"INSERT INTO people JSON '{"k": 5, "home": {"street": "j", "zip": null}, "took": "P1W"}'"#, 1);
    let (_, rows) = typed_rows(&c.query("SELECT home, took FROM people WHERE k = 5"));
    assert_eq!(rows[0][0], Some(fields(&[Some(b"j"), None])));
    assert_eq!(rows[0][1], Some(vec![0, 14, 0]));

    // ALTER TYPE: ADD, RENAME; the tables using it follow.
    invalid(&mut c, "ALTER TYPE nope ADD a int", "No user type named ks.nope exists.");
    invalid(
        &mut c,
        "ALTER TYPE address ADD zip int",
        "Cannot add new field zip to type ks.address: a field of the same name already exists",
    );
    invalid(&mut c, "ALTER TYPE address RENAME nope TO b", "Unknown field nope in type ks.address");
    c.query_ok("ALTER TYPE person ADD nick text", 5);
    c.query_ok("ALTER TYPE person RENAME nick TO alias AND name TO full_name", 5);
    let (columns, rows) = typed_rows(&c.query("SELECT who.full_name, who.alias FROM people WHERE k = 1"));
    assert_eq!(columns[1], ("who.alias".to_string(), "text".to_string()));
    assert_eq!(rows, vec![vec![Some(b"ann".to_vec()), None]]);

    // DROP TYPE is refused while a type or a table uses it.
    invalid(&mut c, "DROP TYPE address", "Cannot drop user type ks.address as it is still used by user type person");
    c.query_ok("CREATE TYPE lonely (a int)", 5);
    c.query_ok("CREATE TABLE uses (k int PRIMARY KEY, v frozen<lonely>)", 5);
    invalid(&mut c, "DROP TYPE lonely", "Cannot drop user type ks.lonely as it is still used by table ks.uses");
    c.query_ok("DROP TABLE uses", 5);
    c.query_ok("DROP TYPE lonely", 5);
    c.query_ok("DROP TYPE IF EXISTS lonely", 1);
    invalid(&mut c, "DROP TYPE lonely", "No user type named ks.lonely exists.");

    // system_schema.types, and the same after a restart.
    let types_query = "SELECT type_name, field_names, field_types FROM system_schema.types WHERE keyspace_name = 'ks'";
    let before = typed_rows(&c.query(types_query)).1;
    let names: Vec<Vec<u8>> = before.iter().map(|r| r[0].clone().unwrap_or_default()).collect();
    assert_eq!(names, [b"address".to_vec(), b"person".to_vec()]);
    let person_types = before[1][2].clone().expect("field types");
    assert_eq!(before[1][1], Some(text_list(&["full_name", "home", "tags", "alias"])));
    assert_eq!(person_types, text_list(&["text", "frozen<address>", "list<text>", "text"]));

    node.restart();
    let mut c = NativeClient::ready(node.native_addr(), V4, None);
    assert_eq!(typed_rows(&c.query(types_query)).1, before);
    let (_, rows) = typed_rows(&c.query("SELECT home, who.full_name FROM ks.people WHERE k = 1"));
    assert_eq!(rows, vec![vec![Some(fields(&[Some(b"rue"), Some(&int(75001))])), Some(b"ann".to_vec())]]);

    // The same node through the DataStax Python driver: metadata, named tuples, a registered
    // class, prepared UDT and duration values (tests/python/test_cql_user_types.py).
    run_python_unittest_on(&node, "test_cql_user_types.py", "cassandra", std::time::Duration::from_secs(120));
}
