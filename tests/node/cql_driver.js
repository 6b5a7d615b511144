// What a Node.js application does with DataStax's cassandra-driver 4.x from npm, unmodified, against
// one sibyl node's native port: connect (protocol negotiation, local data center), run seed 001's
// CQL, prepared statements with every common type, paging, batches, conditional writes, schema
// metadata, the token map and the object mapper, errors with Cassandra's codes, schema change
// events, and a query's trace.
//
// Usage: node cql_driver.js HOST NATIVE_PORT
// Each check prints "ok - NAME"; the first that fails prints "FAILED: NAME" with the reason and
// the process exits 1. "cql driver: OK" is printed last when every check passed.
'use strict';

const assert = require('assert');
const cassandra = require('cassandra-driver');

const { types } = cassandra;
const { Uuid, TimeUuid, Long, Integer, BigDecimal, InetAddress, Tuple, LocalDate, LocalTime } = types;

const [host, port] = process.argv.slice(2);
if (!host || !port) {
  console.error('usage: node cql_driver.js HOST NATIVE_PORT');
  process.exit(2);
}
const contactPoints = [`${host}:${port}`];

// Messages the driver logs at level 'error' (a metadata query it could not parse, a failed
// refresh): any of them fails the run at the end, as they mean Sibyl answered something the
// driver did not expect even where no check looks.
const driverErrors = [];

function newClient(options) {
  const client = new cassandra.Client(Object.assign({ contactPoints }, options));
  client.on('log', (level, className, message, furtherInfo) => {
    if (level === 'error') {
      driverErrors.push(`${className}: ${message} ${furtherInfo || ''}`);
    }
  });
  return client;
}

async function check(name, body) {
  try {
    await body();
    console.log(`ok - ${name}`);
  } catch (e) {
    console.log(`FAILED: ${name}`);
    console.log(e && e.stack ? e.stack : e);
    process.exit(1);
  }
}

// The ResponseError a statement fails with (the check fails if it succeeds).
async function responseError(client, query, params, options) {
  try {
    await client.execute(query, params, options);
  } catch (e) {
    assert.ok(e instanceof cassandra.errors.ResponseError, `${query}: not a ResponseError: ${e}`);
    return e;
  }
  assert.fail(`${query} succeeded; an error was expected`);
}

async function waitFor(what, condition, limitMs = 15000) {
  const deadline = Date.now() + limitMs;
  for (;;) {
    if (await condition()) {
      return;
    }
    if (Date.now() > deadline) {
      assert.fail(`${what}: not within ${limitMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const plain = (rows) => rows.map((r) => Object.fromEntries(r.keys().map((k) => [k, r[k]])));

const SEED_001 = [
  "CREATE KEYSPACE part1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
  "CREATE KEYSPACE part2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
  "CREATE KEYSPACE part3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
  "CREATE KEYSPACE magazines WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
  'CREATE TABLE part1.t (id int, k int, v text, PRIMARY KEY (id))',
  'CREATE TABLE part2.t (id int, c text, k int, v text, PRIMARY KEY (id,c))',
  'CREATE TABLE magazines.magazine_name (id int PRIMARY KEY, name text, publicationFrequency text)',
  'CREATE TABLE magazines.magazine_publisher (publisher text,id int,name text, publicationFrequency text,\n' +
    'PRIMARY KEY (publisher, id)) WITH CLUSTERING ORDER BY (id DESC)',
  "INSERT INTO magazines.magazine_name (id, name, publicationFrequency) VALUES (1, 'Tech Weekly', 'Weekly')",
  "INSERT INTO magazines.magazine_name (id, name, publicationFrequency) VALUES (2, 'Data Monthly', 'Monthly')",
  'INSERT INTO magazines.magazine_publisher (publisher, id, name, publicationFrequency) ' +
    "VALUES ('Acme', 1, 'Tech Weekly', 'Weekly')",
  'INSERT INTO magazines.magazine_publisher (publisher, id, name, publicationFrequency) ' +
    "VALUES ('Acme', 2, 'Data Monthly', 'Monthly')",
  'INSERT INTO magazines.magazine_publisher (publisher, id, name, publicationFrequency) ' +
    "VALUES ('Other', 3, 'Graph Quarterly', 'Quarterly')",
  "INSERT INTO part2.t (id, c, k, v) VALUES (1, 'b', 2, 'second')",
  "INSERT INTO part2.t (id, c, k, v) VALUES (1, 'a', 1, 'first')",
];

// The seed's third table `t`, written with a comma missing after `c2 text`.
const SEED_001_BROKEN = `CREATE TABLE part3.t (
   id1 int,
   id2 int,
   c1 text,
   c2 text
   k int,
   v text,
   PRIMARY KEY ((id1,id2),c1,c2)
)`;

const PAGED_ROWS = 2500;

async function main() {
  let dataCenter;
  let client;

  await check('system.local names the data center (no local data center given)', async () => {
    const probe = newClient({ policies: { loadBalancing: new cassandra.policies.loadBalancing.RoundRobinPolicy() } });
    await probe.connect();
    const rs = await probe.execute('SELECT data_center, rack, release_version, cql_version FROM system.local');
    assert.strictEqual(rs.rowLength, 1);
    dataCenter = rs.first().data_center;
    assert.ok(dataCenter, 'system.local has no data_center');
    assert.match(rs.first().release_version, /^3\.11\./);
    await probe.shutdown();
  });

  await check('connect with contactPoints and localDataCenter; protocol v4 negotiated', async () => {
    client = newClient({ localDataCenter: dataCenter });
    await client.connect();
    // The driver offers a DSE version (or v5) first; Sibyl refuses it and the driver steps down.
    assert.strictEqual(client.controlConnection.protocolVersion, types.protocolVersion.v4);
    const hosts = client.getState().getConnectedHosts();
    assert.strictEqual(hosts.length, 1);
    assert.strictEqual(hosts[0].address, `${host}:${port}`);
    assert.strictEqual(hosts[0].datacenter, dataCenter);
    assert.match(hosts[0].cassandraVersion, /^3\.11\./);
  });

  await check("seed 001's CQL: keyspaces, tables, inserts", async () => {
    for (const query of SEED_001) {
      await client.execute(query);
    }
  });

  await check("seed 001's table with a comma missing is a syntax error (0x2000)", async () => {
    const e = await responseError(client, SEED_001_BROKEN);
    assert.strictEqual(e.code, types.responseErrorCodes.syntaxError, e.message);
    assert.match(e.message, /line 6:3 mismatched input 'k' expecting '\)'/);
  });

  await check("seed 001's queries answer its rows in its order", async () => {
    const byId = await client.execute('SELECT id, name, publicationFrequency FROM magazines.magazine_name WHERE id = 2');
    assert.deepStrictEqual(byId.columns.map((c) => c.name), ['id', 'name', 'publicationfrequency']);
    assert.deepStrictEqual(plain(byId.rows), [{ id: 2, name: 'Data Monthly', publicationfrequency: 'Monthly' }]);

    const acme = await client.execute("SELECT * FROM magazines.magazine_publisher WHERE publisher = 'Acme'");
    assert.deepStrictEqual(acme.columns.map((c) => c.name), ['publisher', 'id', 'name', 'publicationfrequency']);
    assert.deepStrictEqual(plain(acme.rows), [
      { publisher: 'Acme', id: 2, name: 'Data Monthly', publicationfrequency: 'Monthly' },
      { publisher: 'Acme', id: 1, name: 'Tech Weekly', publicationfrequency: 'Weekly' },
    ]);

    const part2 = await client.execute('SELECT * FROM part2.t WHERE id = 1');
    assert.deepStrictEqual(plain(part2.rows), [
      { id: 1, c: 'a', k: 1, v: 'first' },
      { id: 1, c: 'b', k: 2, v: 'second' },
    ]);

    const e = await responseError(client, 'SELECT count(*) FROM part3.t');
    assert.strictEqual(e.code, types.responseErrorCodes.invalid, e.message);
    assert.match(e.message, /unconfigured table t/);
  });

  await check('warnings reach result.info.warnings (v4)', async () => {
    const warned = await client.execute('SELECT count(*) FROM magazines.magazine_name');
    assert.deepStrictEqual(warned.info.warnings, ['Aggregation query used without partition key']);
    const quiet = await client.execute('SELECT count(*) FROM magazines.magazine_name WHERE id = 1');
    assert.ok(!quiet.info.warnings || quiet.info.warnings.length === 0, `warned: ${quiet.info.warnings}`);
  });

  await check('a client bound to a keyspace and a prepared query with a bound value', async () => {
    const inKeyspace = newClient({ localDataCenter: dataCenter, keyspace: 'magazines' });
    await inKeyspace.connect();
    const rs = await inKeyspace.execute('SELECT name FROM magazine_name WHERE id = ?', [1], { prepare: true });
    assert.deepStrictEqual(plain(rs.rows), [{ name: 'Tech Weekly' }]);
    await inKeyspace.shutdown();
  });

  await client.execute(
    "CREATE KEYSPACE nodetest WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");

  await check('prepared statements carry every common type and read back equal', async () => {
    await client.execute(`CREATE TABLE nodetest.typed (
      id uuid PRIMARY KEY, tu timeuuid, ts timestamp, big bigint, vi varint, dec decimal,
      m map<text, int>, s set<text>, l list<int>, fm frozen<map<int, text>>, b blob, flag boolean,
      ip inet, ip6 inet, tup tuple<int, text>, d date, t time, sm smallint, ti tinyint, i int,
      f float, db double, txt text, plain_ascii ascii)`);
    const row = {
      id: Uuid.random(),
      tu: TimeUuid.now(),
      ts: new Date('2017-05-04T10:11:12.345Z'),
      big: Long.fromString('-9007199254740993'),
      vi: Integer.fromString('123456789012345678901234567890'),
      dec: BigDecimal.fromString('-12345678901234567890.0123456789'),
      m: { one: 1, two: 2 },
      s: ['a', 'b', 'c'],
      l: [3, 1, 2, 1],
      fm: { 1: 'x', 2: 'y' },
      b: Buffer.from([0, 1, 2, 0xfe, 0xff]),
      flag: true,
      ip: InetAddress.fromString('10.1.2.3'),
      ip6: InetAddress.fromString('2001:db8::1'),
      tup: new Tuple(7, 'seven'),
      d: LocalDate.fromString('2016-02-29'),
      t: LocalTime.fromString('13:14:15.123456789'),
      sm: -300,
      ti: -7,
      i: 2147483647,
      f: 1.5,
      db: -2.25e300,
      txt: 'Ünïcødé ✓',
      plain_ascii: 'plain ascii',
    };
    const names = Object.keys(row);
    await client.execute(
      `INSERT INTO nodetest.typed (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`,
      names.map((n) => row[n]), { prepare: true });
    const rs = await client.execute('SELECT * FROM nodetest.typed WHERE id = ?', [row.id], { prepare: true });
    assert.strictEqual(rs.rowLength, 1);
    const got = rs.first();
    for (const name of ['id', 'tu', 'vi', 'dec', 'ip', 'ip6', 'd', 't']) {
      assert.ok(got[name] && got[name].equals(row[name]), `${name}: ${got[name]} != ${row[name]}`);
    }
    assert.ok(got.tu instanceof TimeUuid, 'a timeuuid reads back as TimeUuid');
    assert.ok(got.big.equals(row.big), `big: ${got.big} != ${row.big}`);
    assert.strictEqual(got.ts.getTime(), row.ts.getTime());
    assert.deepStrictEqual(got.m, row.m);
    assert.deepStrictEqual(got.s, row.s);
    assert.deepStrictEqual(got.l, row.l);
    assert.deepStrictEqual(got.fm, row.fm);
    assert.ok(got.b.equals(row.b), `b: ${got.b.toString('hex')}`);
    assert.strictEqual(got.flag, true);
    assert.deepStrictEqual(got.tup.values(), [7, 'seven']);
    for (const name of ['sm', 'ti', 'i', 'f', 'db', 'txt', 'plain_ascii']) {
      assert.strictEqual(got[name], row[name], name);
    }
    // Column types as the result metadata names them.
    const typeOf = Object.fromEntries(rs.columns.map((c) => [c.name, c.type.code]));
    const { dataTypes } = types;
    assert.deepStrictEqual(
      [typeOf.id, typeOf.tu, typeOf.ts, typeOf.vi, typeOf.dec, typeOf.m, typeOf.s, typeOf.l, typeOf.tup, typeOf.d],
      [dataTypes.uuid, dataTypes.timeuuid, dataTypes.timestamp, dataTypes.varint, dataTypes.decimal, dataTypes.map,
        dataTypes.set, dataTypes.list, dataTypes.tuple, dataTypes.date]);

    // A null, and a value left unset, leave the column without a value.
    const other = Uuid.random();
    await client.execute('INSERT INTO nodetest.typed (id, txt, i) VALUES (?, ?, ?)', [other, null, types.unset],
      { prepare: true });
    const empty = (await client.execute('SELECT txt, i, m FROM nodetest.typed WHERE id = ?', [other],
      { prepare: true })).first();
    assert.deepStrictEqual([empty.txt, empty.i, empty.m], [null, null, null]);

    // Hinted types on an unprepared query.
    await client.execute('UPDATE nodetest.typed SET big = ? WHERE id = ?', [Long.fromNumber(42), other],
      { hints: ['bigint', 'uuid'] });
    const hinted = (await client.execute('SELECT big FROM nodetest.typed WHERE id = ?', [other],
      { prepare: true })).first();
    assert.ok(hinted.big.equals(Long.fromNumber(42)), `${hinted.big}`);
  });

  let expected;
  await check(`${PAGED_ROWS} rows written concurrently with one prepared insert`, async () => {
    await client.execute('CREATE TABLE nodetest.pages (p int, c int, v text, PRIMARY KEY (p, c))');
    const params = [];
    for (let n = 0; n < PAGED_ROWS; n++) {
      params.push([n % 50, Math.floor(n / 50), `v${n}`]);
    }
    const result = await cassandra.concurrent.executeConcurrent(client,
      'INSERT INTO nodetest.pages (p, c, v) VALUES (?, ?, ?)', params, { concurrencyLevel: 32 });
    assert.strictEqual(result.totalExecuted, PAGED_ROWS);
    assert.strictEqual(result.errors.length, 0, `${result.errors}`);
    expected = new Set(params.map(([p, c]) => `${p}/${c}`));
  });

  const everyRowOnce = (keys, how) => {
    assert.strictEqual(keys.length, PAGED_ROWS, `${how}: ${keys.length} rows`);
    assert.strictEqual(new Set(keys).size, PAGED_ROWS, `${how}: a row came twice`);
    for (const k of keys) {
      assert.ok(expected.has(k), `${how}: unexpected row ${k}`);
    }
  };

  await check('paging by hand: execute with fetchSize and pageState', async () => {
    const keys = [];
    let pageState;
    let pages = 0;
    do {
      const rs = await client.execute('SELECT p, c FROM nodetest.pages', [],
        { prepare: true, fetchSize: 300, pageState });
      assert.ok(rs.rowLength <= 300, `a page of ${rs.rowLength} rows`);
      rs.rows.forEach((r) => keys.push(`${r.p}/${r.c}`));
      pageState = rs.pageState;
      pages++;
      assert.ok(pages < 100, 'paging does not end');
    } while (pageState);
    assert.ok(pages >= PAGED_ROWS / 300, `${pages} pages`);
    everyRowOnce(keys, 'pageState');
  });

  await check('paging with eachRow and autoPage', async () => {
    const keys = [];
    await new Promise((resolve, reject) => {
      client.eachRow('SELECT p, c FROM nodetest.pages', [], { prepare: true, fetchSize: 211, autoPage: true },
        (n, row) => keys.push(`${row.p}/${row.c}`),
        (err) => (err ? reject(err) : resolve()));
    });
    everyRowOnce(keys, 'eachRow');
  });

  await check('paging with client.stream', async () => {
    const keys = [];
    await new Promise((resolve, reject) => {
      client.stream('SELECT p, c FROM nodetest.pages', [], { prepare: true, fetchSize: 500 })
        .on('readable', function read() {
          let row;
          while ((row = this.read()) !== null) {
            keys.push(`${row.p}/${row.c}`);
          }
        })
        .on('end', resolve)
        .on('error', reject);
    });
    everyRowOnce(keys, 'stream');
  });

  await check('paging within one partition keeps clustering order', async () => {
    const cs = [];
    for await (const row of await client.execute('SELECT c FROM nodetest.pages WHERE p = ?', [7],
      { prepare: true, fetchSize: 7 })) {
      cs.push(row.c);
    }
    assert.deepStrictEqual(cs, Array.from({ length: PAGED_ROWS / 50 }, (_, i) => i));
  });

  await check('protocol v3 when the client asks for it: prepared reads and paging', async () => {
    const v3 = newClient({ localDataCenter: dataCenter, protocolOptions: { maxVersion: 3 } });
    await v3.connect();
    assert.strictEqual(v3.controlConnection.protocolVersion, types.protocolVersion.v3);
    const keys = [];
    let pageState;
    do {
      const rs = await v3.execute('SELECT p, c FROM nodetest.pages', [], { prepare: true, fetchSize: 1000, pageState });
      rs.rows.forEach((r) => keys.push(`${r.p}/${r.c}`));
      pageState = rs.pageState;
    } while (pageState);
    everyRowOnce(keys, 'v3');
    await v3.shutdown();
  });

  await check('batches of prepared inserts: logged in one partition, unlogged across partitions', async () => {
    await client.execute('CREATE TABLE nodetest.events (day text, at timeuuid, what text, PRIMARY KEY (day, at))');
    const insert = 'INSERT INTO nodetest.events (day, at, what) VALUES (?, ?, ?)';
    const ats = [TimeUuid.now(), TimeUuid.now(), TimeUuid.now()];
    await client.batch(ats.map((at, i) => ({ query: insert, params: ['monday', at, `e${i}`] })), { prepare: true });
    const monday = await client.execute('SELECT at, what FROM nodetest.events WHERE day = ?', ['monday'],
      { prepare: true });
    assert.deepStrictEqual(monday.rows.map((r) => r.what), ['e0', 'e1', 'e2']);
    assert.ok(monday.rows.every((r, i) => r.at.equals(ats[i])));

    await client.batch([
      { query: insert, params: ['tuesday', TimeUuid.now(), 't'] },
      { query: insert, params: ['wednesday', TimeUuid.now(), 'w'] },
      { query: 'UPDATE nodetest.events SET what = ? WHERE day = ? AND at = ?', params: ['e1 again', 'monday', ats[1]] },
    ], { prepare: true, logged: false });
    const days = await client.execute('SELECT day, what FROM nodetest.events');
    assert.deepStrictEqual(plain(days.rows).map((r) => `${r.day}:${r.what}`).sort(),
      ['monday:e0', 'monday:e1 again', 'monday:e2', 'tuesday:t', 'wednesday:w']);
  });

  await check('a counter batch and named values of a prepared statement', async () => {
    await client.execute('CREATE TABLE nodetest.hits (page text, day int, n counter, PRIMARY KEY (page, day))');
    const bump = 'UPDATE nodetest.hits SET n = n + :amount WHERE page = :page AND day = :day';
    await client.batch([
      { query: bump, params: { amount: Long.fromNumber(2), page: 'home', day: 1 } },
      { query: bump, params: { amount: Long.fromNumber(3), page: 'home', day: 1 } },
      { query: bump, params: { amount: Long.fromNumber(1), page: 'about', day: 1 } },
    ], { prepare: true, counter: true });
    const rs = await client.execute('SELECT page, n FROM nodetest.hits WHERE page IN (?, ?) AND day = ?',
      ['home', 'about', 1], { prepare: true });
    assert.deepStrictEqual(rs.rows.map((r) => `${r.page}=${r.n}`).sort(), ['about=1', 'home=5']);
  });

  await check('a conditional insert answers [applied]', async () => {
    await client.execute('CREATE TABLE nodetest.users (name text PRIMARY KEY, email text)');
    const insert = 'INSERT INTO nodetest.users (name, email) VALUES (?, ?) IF NOT EXISTS';
    const { consistencies } = types;
    const first = await client.execute(insert, ['ada', 'ada@example.com'],
      { prepare: true, consistency: consistencies.localQuorum, serialConsistency: consistencies.localSerial });
    assert.strictEqual(first.wasApplied(), true);
    assert.strictEqual(first.first()['[applied]'], true);
    const second = await client.execute(insert, ['ada', 'other@example.com'], { prepare: true });
    assert.strictEqual(second.wasApplied(), false);
    assert.strictEqual(second.first().email, 'ada@example.com', 'the row that is there comes back');
    const update = await client.execute('UPDATE nodetest.users SET email = ? WHERE name = ? IF email = ?',
      ['ada@new.example.com', 'ada', 'ada@example.com'], { prepare: true });
    assert.strictEqual(update.wasApplied(), true);
  });

  await check('metadata: keyspaces and their replication', async () => {
    const keyspaces = client.metadata.keyspaces;
    // part3 too: only its table failed.
    for (const name of ['system', 'system_schema', 'system_traces', 'magazines', 'part1', 'part2', 'part3',
      'nodetest']) {
      assert.ok(keyspaces[name], `keyspace ${name} is not in the metadata: ${Object.keys(keyspaces)}`);
    }
    const magazines = keyspaces.magazines;
    assert.strictEqual(magazines.strategy, 'org.apache.cassandra.locator.SimpleStrategy');
    assert.deepStrictEqual(magazines.strategyOptions, { replication_factor: '1' });
    assert.strictEqual(magazines.durableWrites, true);
  });

  await check('metadata: getTable gives columns, partition and clustering keys', async () => {
    const table = await client.metadata.getTable('magazines', 'magazine_publisher');
    assert.ok(table, 'magazines.magazine_publisher has no metadata');
    assert.deepStrictEqual(table.columns.map((c) => `${c.name}:${c.type.code}`).sort(), [
      `id:${types.dataTypes.int}`, `name:${types.dataTypes.text}`,
      `publicationfrequency:${types.dataTypes.text}`, `publisher:${types.dataTypes.text}`,
    ]);
    assert.deepStrictEqual(table.partitionKeys.map((c) => c.name), ['publisher']);
    assert.deepStrictEqual(table.clusteringKeys.map((c) => c.name), ['id']);
    assert.deepStrictEqual(table.clusteringOrder, ['DESC']);
    assert.strictEqual(table.isCompact, false);

    const composite = await client.metadata.getTable('nodetest', 'typed');
    const typeOf = Object.fromEntries(composite.columns.map((c) => [c.name, c.type]));
    assert.strictEqual(typeOf.m.code, types.dataTypes.map);
    assert.deepStrictEqual(typeOf.m.info.map((t) => t.code), [types.dataTypes.text, types.dataTypes.int]);
    assert.strictEqual(typeOf.fm.options.frozen, true);
    assert.strictEqual(typeOf.tup.code, types.dataTypes.tuple);

    await client.execute(`CREATE TABLE nodetest.wide (a int, b text, c timeuuid, d int, owner text STATIC,
      v text, PRIMARY KEY ((a, b), c, d)) WITH CLUSTERING ORDER BY (c DESC, d ASC) AND comment = 'wide rows'`);
    const wide = await client.metadata.getTable('nodetest', 'wide');
    assert.deepStrictEqual(wide.partitionKeys.map((c) => c.name), ['a', 'b']);
    assert.deepStrictEqual(wide.clusteringKeys.map((c) => c.name), ['c', 'd']);
    assert.deepStrictEqual(wide.clusteringOrder, ['DESC', 'ASC']);
    assert.strictEqual(wide.columnsByName.owner.isStatic, true);
    assert.strictEqual(wide.columnsByName.v.isStatic, false);
    assert.strictEqual(wide.comment, 'wide rows');

    const sessions = await client.metadata.getTable('system_traces', 'sessions');
    assert.ok(sessions, 'system_traces.sessions has no metadata');
    assert.deepStrictEqual(sessions.partitionKeys.map((c) => c.name), ['session_id']);
    const events = await client.metadata.getTable('system_traces', 'events');
    assert.ok(events, 'system_traces.events has no metadata');
    assert.deepStrictEqual(events.clusteringKeys.map((c) => c.name), ['event_id']);

    assert.strictEqual(await client.metadata.getTable('magazines', 'no_such_table'), null);
  });

  await check('token map: replicas of a key and the token the server computes', async () => {
    const replicas = client.metadata.getReplicas('magazines', Buffer.from('Acme'));
    assert.ok(replicas && replicas.length === 1, `replicas: ${replicas}`);
    assert.strictEqual(replicas[0].address, `${host}:${port}`);
    assert.ok(client.metadata.getTokenRanges().size >= 1);
    const rs = await client.execute("SELECT token(publisher) AS t FROM magazines.magazine_publisher WHERE publisher = 'Acme'");
    const { tokenizer } = client.metadata;
    const serverToken = tokenizer.parse(rs.first().t.toString());
    assert.strictEqual(tokenizer.hash(Buffer.from('Acme')).compare(serverToken), 0,
      `the driver hashes a partition key to the token the server gives it (${rs.first().t})`);
  });

  await check("the driver's object mapper over a table's metadata", async () => {
    const mapper = new cassandra.mapping.Mapper(client,
      { models: { Publisher: { tables: ['magazine_publisher'], keyspace: 'magazines' } } });
    const publishers = mapper.forModel('Publisher');
    const acme = await publishers.find({ publisher: 'Acme' });
    assert.deepStrictEqual(acme.toArray().map((p) => `${p.id} ${p.name}`), ['2 Data Monthly', '1 Tech Weekly']);
    await publishers.insert({ publisher: 'Zed', id: 9, name: 'Zine', publicationfrequency: 'Daily' });
    assert.strictEqual((await publishers.get({ publisher: 'Zed', id: 9 })).name, 'Zine');
    const updated = await publishers.update({ publisher: 'Zed', id: 9, name: 'Zine 2' }, { ifExists: true });
    assert.strictEqual(updated.wasApplied(), true);
    assert.strictEqual((await publishers.get({ publisher: 'Zed', id: 9 })).name, 'Zine 2');
    await publishers.remove({ publisher: 'Zed', id: 9 });
    assert.strictEqual(await publishers.get({ publisher: 'Zed', id: 9 }), null);
  });

  await check('errors carry Cassandra codes and the client stays usable', async () => {
    const syntax = await responseError(client, 'SELEC * FROM magazines.magazine_name');
    assert.strictEqual(syntax.code, types.responseErrorCodes.syntaxError, syntax.message);
    const unknown = await responseError(client, 'SELECT * FROM magazines.no_such_table');
    assert.strictEqual(unknown.code, types.responseErrorCodes.invalid, unknown.message);
    assert.match(unknown.message, /unconfigured table no_such_table/);
    const prepared = await responseError(client, 'SELECT * FROM magazines.no_such_table WHERE id = ?', [1],
      { prepare: true });
    assert.strictEqual(prepared.code, types.responseErrorCodes.invalid, prepared.message);
    const badValue = await responseError(client, 'SELECT * FROM magazines.magazine_name WHERE id = ?', ['x'],
      { hints: ['text'] });
    assert.strictEqual(badValue.code, types.responseErrorCodes.invalid, badValue.message);
    const exists = await responseError(client,
      "CREATE KEYSPACE magazines WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    assert.strictEqual(exists.code, types.responseErrorCodes.alreadyExists, exists.message);
    assert.strictEqual(exists.keyspace, 'magazines');
    const rs = await client.execute('SELECT name FROM magazines.magazine_name WHERE id = 1');
    assert.strictEqual(rs.first().name, 'Tech Weekly');
  });

  await check('schema changes by another client reach this one as events', async () => {
    const other = newClient({ localDataCenter: dataCenter });
    await other.connect();
    await other.execute(
      "CREATE KEYSPACE from_elsewhere WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    await waitFor('the new keyspace in this client\'s metadata', () => !!client.metadata.keyspaces.from_elsewhere);

    await other.execute('CREATE TABLE from_elsewhere.notes (id int PRIMARY KEY, body text)');
    const notes = await client.metadata.getTable('from_elsewhere', 'notes');
    assert.deepStrictEqual(notes.columns.map((c) => c.name).sort(), ['body', 'id']);
    // The table's metadata is cached; the ALTER's event drops it from the cache.
    await other.execute('ALTER TABLE from_elsewhere.notes ADD author text');
    await waitFor('the added column in this client\'s table metadata', async () => {
      const t = await client.metadata.getTable('from_elsewhere', 'notes');
      return t.columns.some((c) => c.name === 'author');
    });

    await other.execute('DROP KEYSPACE from_elsewhere');
    await waitFor('the dropped keyspace gone from this client\'s metadata',
      () => !client.metadata.keyspaces.from_elsewhere);
    await other.shutdown();
  });

  await check('refreshKeyspace after CREATE TABLE', async () => {
    await client.execute('CREATE TABLE nodetest.later (k text PRIMARY KEY, n counter)');
    const ks = await client.metadata.refreshKeyspace('nodetest');
    assert.strictEqual(ks.name, 'nodetest');
    const later = await client.metadata.getTable('nodetest', 'later');
    assert.strictEqual(later.columns.find((c) => c.name === 'n').type.code, types.dataTypes.counter);
    await client.execute('UPDATE nodetest.later SET n = n + 5 WHERE k = ?', ['a'], { prepare: true });
    const rs = await client.execute('SELECT n FROM nodetest.later WHERE k = ?', ['a'], { prepare: true });
    assert.ok(rs.first().n.equals(Long.fromNumber(5)), `${rs.first().n}`);
  });

  await check('a traced query: the driver reads its session and events from system_traces', async () => {
    const rs = await client.execute('SELECT name FROM magazines.magazine_name WHERE id = ?', [2],
      { prepare: true, traceQuery: true });
    assert.ok(rs.info.traceId instanceof Uuid, `trace id: ${rs.info.traceId}`);
    const trace = await client.metadata.getTrace(rs.info.traceId);
    assert.ok(trace, 'no trace');
    assert.strictEqual(typeof trace.duration, 'number');
    assert.ok(trace.startedAt instanceof Date, `started at ${trace.startedAt}`);
    assert.strictEqual(trace.coordinator.toString(), host);
    assert.ok(trace.parameters && typeof trace.parameters === 'object', `parameters: ${trace.parameters}`);
    assert.ok(trace.events.length > 0, 'no trace events');
    for (const e of trace.events) {
      assert.ok(e.id instanceof TimeUuid && typeof e.activity === 'string' && typeof e.elapsed === 'number',
        JSON.stringify(e));
    }
    const ids = trace.events.map((e) => e.id.getDate().getTime());
    assert.deepStrictEqual(ids, [...ids].sort((a, b) => a - b), 'events in time order');
  });

  await check('the driver logged no errors', async () => {
    assert.deepStrictEqual(driverErrors, []);
  });

  await client.shutdown();
  console.log('cql driver: OK');
}

main().catch((e) => {
  console.log(`FAILED: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
