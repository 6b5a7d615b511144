"""User-defined types and durations through the DataStax Python driver, unmodified: the
driver reads system_schema.types into its metadata, decodes UDT values as named tuples by
default and into a registered class when asked, binds them in prepared statements, and decodes
durations.

Run by tests/tests/cql_user_types.rs, which passes the node's native address in
SIBYL_NATIVE_HOST and SIBYL_NATIVE_PORT.
"""

import os
import unittest

from cassandra.cluster import Cluster, ExecutionProfile, EXEC_PROFILE_DEFAULT
from cassandra.policies import RoundRobinPolicy
from cassandra.util import Duration

HOST = os.environ.get("SIBYL_NATIVE_HOST", "127.0.0.1")
PORT = int(os.environ.get("SIBYL_NATIVE_PORT", "9042"))


class Address(object):
    def __init__(self, street, zip):
        self.street = street
        self.zip = zip


class UserTypesThroughTheDriver(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=20)
        cls.cluster = Cluster([HOST], port=PORT, protocol_version=4,
                              execution_profiles={EXEC_PROFILE_DEFAULT: profile}, connect_timeout=20)
        cls.session = cls.cluster.connect()
        cls.session.execute(
            "CREATE KEYSPACE udt_py WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        cls.session.set_keyspace("udt_py")
        cls.session.execute("CREATE TYPE address (street text, zip int)")
        cls.session.execute("CREATE TABLE homes (k int PRIMARY KEY, home frozen<address>, "
                            "olds list<frozen<address>>, took duration)")

    @classmethod
    def tearDownClass(cls):
        cls.cluster.shutdown()

    def test_metadata_knows_the_type(self):
        self.cluster.refresh_schema_metadata()
        ks = self.cluster.metadata.keyspaces["udt_py"]
        t = ks.user_types["address"]
        self.assertEqual(t.field_names, ["street", "zip"])
        self.assertEqual(t.field_types, ["text", "int"])
        self.assertIn("CREATE TYPE udt_py.address (\n    street text,\n    zip int\n);", ks.export_as_string())
        self.assertEqual(ks.tables["homes"].columns["home"].cql_type, "frozen<address>")

    def test_values_decode_as_named_tuples_and_bind_back(self):
        s = self.session
        s.execute("INSERT INTO homes (k, home, olds, took) VALUES (1, {street: 'rue', zip: 75001}, "
                  "[{street: 'old'}], 1h30m)")
        row = s.execute("SELECT home, olds, took, home.zip FROM homes WHERE k = 1").one()
        self.assertEqual((row.home.street, row.home.zip), ("rue", 75001))
        self.assertEqual((row.olds[0].street, row.olds[0].zip), ("old", None))
        self.assertEqual(row.took, Duration(0, 0, 90 * 60 * 10 ** 9))
        self.assertEqual(row.home_zip, 75001)
        insert = s.prepare("INSERT INTO homes (k, home, took) VALUES (?, ?, ?)")
        s.execute(insert, (2, Address("lane", 7), Duration(1, 2, 3)))
        row = s.execute("SELECT home, took FROM homes WHERE k = 2").one()
        self.assertEqual((row.home.street, row.home.zip), ("lane", 7))
        self.assertEqual(row.took, Duration(1, 2, 3))

    def test_a_registered_class_receives_the_values(self):
        cluster = Cluster([HOST], port=PORT, protocol_version=4, connect_timeout=20)
        try:
            cluster.register_user_type("udt_py", "address", Address)
            session = cluster.connect("udt_py")
            session.execute("INSERT INTO homes (k, home) VALUES (3, {street: 'way', zip: 3})")
            home = session.execute("SELECT home FROM homes WHERE k = 3").one().home
            self.assertIsInstance(home, Address)
            self.assertEqual((home.street, home.zip), ("way", 3))
        finally:
            cluster.shutdown()


if __name__ == "__main__":
    unittest.main()
