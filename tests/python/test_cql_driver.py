"""Seed 001 (Cassandra's data-modeling page) through the DataStax Python driver, unmodified,
against a running node: the driver connects (reading system.local, system.peers and the
system_schema tables), runs the seed's statements as written, prepares, binds collections, and
sees the schema in its metadata as 3.11 would show it.

The node is started by tests/tests/python_driver.rs, which passes its native address in
SIBYL_NATIVE_HOST and SIBYL_NATIVE_PORT.
"""

import os
import unittest
import uuid

from cassandra import ConsistencyLevel, InvalidRequest
from cassandra.cluster import Cluster, ExecutionProfile, EXEC_PROFILE_DEFAULT
from cassandra.query import SimpleStatement
from cassandra.policies import RoundRobinPolicy

HOST = os.environ.get("SIBYL_NATIVE_HOST", "127.0.0.1")
PORT = int(os.environ.get("SIBYL_NATIVE_PORT", "9042"))


def connect(version):
    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=20)
    cluster = Cluster([HOST], port=PORT, protocol_version=version,
                      execution_profiles={EXEC_PROFILE_DEFAULT: profile}, connect_timeout=20)
    return cluster, cluster.connect()


class SeedThroughTheDriver(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster, cls.session = connect(4)
        cls.session.execute(
            "CREATE KEYSPACE seed WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        cls.session.set_keyspace("seed")

    @classmethod
    def tearDownClass(cls):
        cls.cluster.shutdown()

    def test_the_driver_sees_the_node(self):
        hosts = self.cluster.metadata.all_hosts()
        self.assertEqual(len(hosts), 1)
        self.assertEqual(hosts[0].release_version, "3.11.10")
        local = self.session.execute("SELECT cluster_name, tokens FROM system.local WHERE key = 'local'").one()
        self.assertTrue(local.cluster_name)
        self.assertEqual(len(local.tokens), 1)

    def test_seed_001_as_written(self):
        s = self.session
        s.execute("CREATE TABLE t (id int, k int, v text, PRIMARY KEY (id))")
        s.execute("CREATE TABLE t2 (id int, c text, k int, v text, PRIMARY KEY (id, c))")
        s.execute("CREATE TABLE t3 (id1 int, id2 int, c1 text, c2 text, k int, v text, PRIMARY KEY ((id1, id2), c1, c2))")
        s.execute("CREATE TABLE magazine_name (id int PRIMARY KEY, name text, publicationFrequency text)")
        s.execute("CREATE TABLE magazine_publisher (publisher text, id int, name text, "
                  "publicationFrequency text, PRIMARY KEY (publisher, id)) WITH CLUSTERING ORDER BY (id DESC)")
        names = s.prepare("INSERT INTO magazine_name (id, name, publicationFrequency) VALUES (?, ?, ?)")
        by_publisher = s.prepare("INSERT INTO magazine_publisher (publisher, id, name, publicationFrequency) "
                                 "VALUES (?, ?, ?, ?)")
        for i, (name, freq, publisher) in enumerate([("Tech Weekly", "Weekly", "Acme"),
                                                     ("Data Monthly", "Monthly", "Acme"),
                                                     ("Graph Quarterly", "Quarterly", "Other")], start=1):
            s.execute(names, (i, name, freq))
            s.execute(by_publisher, (publisher, i, name, freq))
        # Q1: every magazine with its frequency.
        q1 = sorted((r.id, r.name, r.publicationfrequency) for r in s.execute("SELECT id, name, publicationFrequency FROM magazine_name"))
        self.assertEqual(q1, [(1, "Tech Weekly", "Weekly"), (2, "Data Monthly", "Monthly"), (3, "Graph Quarterly", "Quarterly")])
        # Q2: one publisher's magazines, newest id first.
        q2 = [(r.id, r.name) for r in s.execute("SELECT id, name FROM magazine_publisher WHERE publisher = %s", ["Acme"])]
        self.assertEqual(q2, [(2, "Data Monthly"), (1, "Tech Weekly")])
        table = self.cluster.metadata.keyspaces["seed"].tables["magazine_publisher"]
        self.assertEqual([c.name for c in table.partition_key], ["publisher"])
        self.assertEqual([c.name for c in table.clustering_key], ["id"])
        self.assertIn("WITH CLUSTERING ORDER BY (id DESC)", table.export_as_string())

    def test_describe_as_3_11_cqlsh_prints_it(self):
        # Cassandra 3.11's cqlsh answers DESCRIBE TABLE with the driver's export of its
        # metadata, which these are, read from system_schema.
        s = self.session
        s.execute("CREATE TABLE described (publisher text, id int, name text, PRIMARY KEY (publisher, id)) "
                  "WITH CLUSTERING ORDER BY (id DESC) AND comment = 'Q2' AND gc_grace_seconds = 3600")
        self.cluster.refresh_table_metadata("seed", "described")
        table = self.cluster.metadata.keyspaces["seed"].tables["described"]
        self.assertEqual(table.export_as_string(), """CREATE TABLE seed.described (
    publisher text,
    id int,
    name text,
    PRIMARY KEY (publisher, id)
) WITH CLUSTERING ORDER BY (id DESC)
    AND bloom_filter_fp_chance = 0.01
    AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}
    AND comment = 'Q2'
    AND compaction = {'class': 'org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy', 'max_threshold': '32', 'min_threshold': '4'}
    AND compression = {'enabled': 'false'}
    AND crc_check_chance = 1.0
    AND dclocal_read_repair_chance = 0.1
    AND default_time_to_live = 0
    AND gc_grace_seconds = 3600
    AND max_index_interval = 2048
    AND memtable_flush_period_in_ms = 0
    AND min_index_interval = 128
    AND read_repair_chance = 0.0
    AND speculative_retry = '99PERCENTILE';""")

    def test_collections_tuples_and_types_round_trip(self):
        s = self.session
        s.execute("CREATE TABLE kinds (id uuid PRIMARY KEY, tags set<text>, l list<int>, m map<text, int>, "
                  "f frozen<list<int>>, t tuple<int, text>, b blob, d double, big varint)")
        insert = s.prepare("INSERT INTO kinds (id, tags, l, m, f, t, b, d, big) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
        key = uuid.uuid4()
        s.execute(insert, (key, {"b", "a"}, [3, 1, 2], {"x": 1}, [9, 8], (7, "seven"), b"\x00\xff", 1.5, 10 ** 30))
        s.execute("UPDATE kinds SET tags = tags + {'c'}, l = l + [4], m['y'] = 2 WHERE id = %s", [key])
        row = s.execute("SELECT * FROM kinds WHERE id = %s", [key]).one()
        self.assertEqual(sorted(row.tags), ["a", "b", "c"])
        self.assertEqual(list(row.l), [3, 1, 2, 4])
        self.assertEqual(dict(row.m), {"x": 1, "y": 2})
        self.assertEqual(list(row.f), [9, 8])
        self.assertEqual(tuple(row.t), (7, "seven"))
        self.assertEqual((row.b, row.d, row.big), (b"\x00\xff", 1.5, 10 ** 30))

    def test_paging_sees_every_row_once(self):
        s = self.session
        s.execute("CREATE TABLE paged (p int, c int, v text, PRIMARY KEY (p, c)) WITH CLUSTERING ORDER BY (c DESC)")
        insert = s.prepare("INSERT INTO paged (p, c, v) VALUES (?, ?, 'x')")
        # 10,000 rows: 20 partitions of 500.
        pending = [s.execute_async(insert, (p, c)) for p in range(20) for c in range(500)]
        for f in pending:
            f.result()
        # A scan of the whole table, in pages of 333: every row once.
        result = s.execute(SimpleStatement("SELECT p, c FROM paged", fetch_size=333))
        self.assertEqual(len(result.current_rows), 333)
        self.assertTrue(result.has_more_pages)
        rows = [(r.p, r.c) for r in result]
        self.assertEqual(len(rows), 10000)
        self.assertEqual(set(rows), {(p, c) for p in range(20) for c in range(500)})
        # One partition in its (descending) order, in pages of 7.
        cs = [r.c for r in s.execute(SimpleStatement("SELECT c FROM paged WHERE p = 3", fetch_size=7))]
        self.assertEqual(cs, list(range(499, -1, -1)))
        # LIMIT counts across pages.
        self.assertEqual(len(list(s.execute(SimpleStatement("SELECT p, c FROM paged LIMIT 1000", fetch_size=300)))), 1000)
        # Prepared, IN, ORDER BY, paged.
        prepared = s.prepare("SELECT p, c FROM paged WHERE p IN (1, 2) ORDER BY c ASC")
        prepared.fetch_size = 150
        got = [(r.p, r.c) for r in s.execute(prepared)]
        self.assertEqual(len(got), 1000)
        self.assertEqual([c for _, c in got], sorted(c for _, c in got))
        self.assertEqual(set(got), {(p, c) for p in (1, 2) for c in range(500)})

    def test_errors_reach_the_driver_as_3_11_names_them(self):
        with self.assertRaises(InvalidRequest) as e:
            self.session.execute("SELECT * FROM no_such_table")
        self.assertIn("unconfigured table no_such_table", str(e.exception))

    def test_conditional_writes_take_the_serial_consistency_asked_for(self):
        s = self.session
        s.execute("CREATE TABLE accounts (name text PRIMARY KEY, balance int)")
        for serial in (ConsistencyLevel.SERIAL, ConsistencyLevel.LOCAL_SERIAL):
            name = "acct-%d" % serial
            insert = SimpleStatement("INSERT INTO accounts (name, balance) VALUES (%s, 10) IF NOT EXISTS",
                                     serial_consistency_level=serial)
            self.assertTrue(s.execute(insert, (name,)).was_applied)
            self.assertFalse(s.execute(insert, (name,)).was_applied)
            update = SimpleStatement("UPDATE accounts SET balance = 5 WHERE name = %s IF balance = 10",
                                     serial_consistency_level=serial)
            self.assertTrue(s.execute(update, (name,)).was_applied)
            read = SimpleStatement("SELECT balance FROM accounts WHERE name = %s", consistency_level=serial)
            self.assertEqual(s.execute(read, (name,)).one().balance, 5)

    def test_warnings_reach_the_driver_on_v4_only(self):
        s = self.session
        s.execute("CREATE TABLE counted (k int PRIMARY KEY, v int)")
        warned = s.execute("SELECT count(*) FROM counted")
        self.assertEqual(warned.response_future.warnings, ["Aggregation query used without partition key"])
        self.assertIsNone(s.execute("SELECT count(*) FROM counted WHERE k = 1").response_future.warnings)
        cluster, v3 = connect(3)
        try:
            self.assertIsNone(v3.execute("SELECT count(*) FROM seed.counted").response_future.warnings)
        finally:
            cluster.shutdown()

    def test_prepared_selects_carry_their_result_metadata(self):
        s = self.session
        s.execute("CREATE TABLE with_meta (k int PRIMARY KEY, v text)")
        s.execute("INSERT INTO with_meta (k, v) VALUES (1, 'one')")
        select = s.prepare("SELECT v, k FROM with_meta WHERE k = ?")
        self.assertEqual([(c[0], c[1], c[2]) for c in select.result_metadata],
                         [("seed", "with_meta", "v"), ("seed", "with_meta", "k")])
        self.assertEqual(select.routing_key_indexes, [0])
        # The driver now asks EXECUTE to skip the metadata and decodes by the prepared one.
        self.assertEqual(tuple(s.execute(select, (1,)).one()), ("one", 1))
        self.assertFalse(s.prepare("INSERT INTO with_meta (k, v) VALUES (?, ?)").result_metadata)

    def test_protocol_v3_works_too(self):
        cluster, session = connect(3)
        try:
            self.assertEqual(session.execute("SELECT release_version FROM system.local").one().release_version, "3.11.10")
        finally:
            cluster.shutdown()


if __name__ == "__main__":
    unittest.main(verbosity=2)
