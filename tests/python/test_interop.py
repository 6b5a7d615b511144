"""Interop: the Python client generated from our IDL talks to a real sibyl node.

Run:  pip install -r tests/python/requirements.txt
      SIBYL_BIN=target/debug/sibyl python3 tests/python/test_interop.py
(or SIBYL_HOST/SIBYL_PORT to use a node that is already running; its keyspace "PyInterop" is
dropped and re-created). The Rust test tests/tests/python_interop.rs runs this file.

The node is started the way the Rust harness does it (sibyl_node.py).
"""

import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "gen-py"))

from sibyl_client import connect  # noqa: E402
from sibyl_node import Node  # noqa: E402
from cassandra.ttypes import (  # noqa: E402
    CfDef, Column, ColumnOrSuperColumn, ColumnParent, ColumnPath, ConsistencyLevel, Deletion,
    InvalidRequestException, KeyRange, KsDef, Mutation, NotFoundException, SlicePredicate,
    SliceRange, SuperColumn,
)

KS = "PyInterop"
ONE = ConsistencyLevel.ONE

NODE = None
HOST = "127.0.0.1"
PORT = None


def setUpModule():
    global NODE, HOST, PORT
    if os.environ.get("SIBYL_PORT"):
        HOST = os.environ.get("SIBYL_HOST", "127.0.0.1")
        PORT = int(os.environ["SIBYL_PORT"])
        return
    binary = os.environ.get("SIBYL_BIN")
    if not binary:
        raise RuntimeError("set SIBYL_BIN to the sibyl executable (or SIBYL_PORT to use a running node)")
    NODE = Node(binary, cluster="Python Interop", partitioner="org.apache.cassandra.dht.ByteOrderedPartitioner")
    PORT = NODE.port


def tearDownModule():
    if NODE is not None:
        log = NODE.log()
        code = NODE.stop()
        if code != 0:
            raise RuntimeError(f"sibyl exited with {code} on SIGTERM:\n{log}")


def col(name, value, ts=None, ttl=None):
    return Column(name=name, value=value, timestamp=ts if ts is not None else time.time_ns() // 1000, ttl=ttl)


def names(cols):
    return [c.column.name for c in cols]


class InteropTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with connect(HOST, PORT) as c:
            if any(k.name == KS for k in c.describe_keyspaces()):
                c.system_drop_keyspace(KS)
            ks = KsDef(
                name=KS,
                strategy_class="org.apache.cassandra.locator.SimpleStrategy",
                strategy_options={"replication_factor": "1"},
                cf_defs=[
                    CfDef(keyspace=KS, name="Standard1", comparator_type="UTF8Type"),
                    CfDef(keyspace=KS, name="Super1", column_type="Super", comparator_type="UTF8Type",
                          subcomparator_type="BytesType"),
                ],
            )
            cls.schema_version = c.system_add_keyspace(ks)

    def client(self):
        return connect(HOST, PORT, keyspace=KS)

    def test_describe(self):
        with self.client() as c:
            self.assertEqual(c.describe_version(), "20.1.0")
            versions = c.describe_schema_versions()
            self.assertEqual(len(versions), 1, versions)
            ks = c.describe_keyspace(KS)
            self.assertEqual(sorted(cf.name for cf in ks.cf_defs), ["Standard1", "Super1"])
            sup = [cf for cf in ks.cf_defs if cf.name == "Super1"][0]
            self.assertEqual(sup.column_type, "Super")
            self.assertEqual(sup.subcomparator_type, "org.apache.cassandra.db.marshal.BytesType")
            if NODE is not None:
                self.assertEqual(c.describe_cluster_name(), "Python Interop")
                self.assertEqual(c.describe_partitioner(), "org.apache.cassandra.dht.ByteOrderedPartitioner")

    def test_insert_get_and_slices(self):
        with self.client() as c:
            parent = ColumnParent(column_family="Standard1")
            for n, v in [("b", b"2"), ("a", b"1"), ("c", b"3"), ("é", "accent".encode())]:
                c.insert(b"py-k1", parent, col(n.encode(), v), ONE)
            got = c.get(b"py-k1", ColumnPath(column_family="Standard1", column=b"b"), ONE)
            self.assertEqual((got.column.name, got.column.value), (b"b", b"2"))
            allcols = c.get_slice(b"py-k1", parent, SlicePredicate(slice_range=SliceRange(b"", b"", False, 100)), ONE)
            self.assertEqual(names(allcols), [b"a", b"b", b"c", "é".encode()])
            rev = c.get_slice(b"py-k1", parent, SlicePredicate(slice_range=SliceRange(b"c", b"a", True, 2)), ONE)
            self.assertEqual(names(rev), [b"c", b"b"])
            some = c.get_slice(b"py-k1", parent, SlicePredicate(column_names=[b"c", b"a", b"zz"]), ONE)
            self.assertEqual(names(some), [b"a", b"c"])
            self.assertEqual(c.get_count(b"py-k1", parent, SlicePredicate(slice_range=SliceRange(b"", b"", False, 100)), ONE), 4)
            with self.assertRaises(NotFoundException):
                c.get(b"py-k1", ColumnPath(column_family="Standard1", column=b"zz"), ONE)

    def test_batch_mutate_and_range_slices(self):
        with self.client() as c:
            ts = time.time_ns() // 1000
            mutations = {}
            for k in ["r1", "r2", "r3", "r4"]:
                mutations[k.encode()] = {"Standard1": [
                    Mutation(column_or_supercolumn=ColumnOrSuperColumn(column=col(b"x", k.encode(), ts))),
                    Mutation(column_or_supercolumn=ColumnOrSuperColumn(column=col(b"y", b"why", ts))),
                ]}
            mutations[b"r1"]["Super1"] = [Mutation(column_or_supercolumn=ColumnOrSuperColumn(
                super_column=SuperColumn(name=b"sc", columns=[col(b"\x00\x01", b"sub", ts)])))]
            c.batch_mutate(mutations, ONE)
            # Deletion by names inside a batch.
            c.batch_mutate({b"r2": {"Standard1": [
                Mutation(deletion=Deletion(timestamp=ts + 1, predicate=SlicePredicate(column_names=[b"y"])))
            ]}}, ONE)
            parent = ColumnParent(column_family="Standard1")
            pred = SlicePredicate(slice_range=SliceRange(b"", b"", False, 10))
            rows = c.get_range_slices(parent, pred, KeyRange(start_key=b"r1", end_key=b"r3", count=100), ONE)
            self.assertEqual([r.key for r in rows], [b"r1", b"r2", b"r3"])
            self.assertEqual(names(rows[0].columns), [b"x", b"y"])
            self.assertEqual(names(rows[1].columns), [b"x"])
            # Token range (start, end] over ByteOrderedPartitioner: tokens are hex keys.
            if NODE is not None:
                rows = c.get_range_slices(parent, pred, KeyRange(start_token=b"r1".hex(), end_token=b"r3".hex(), count=100), ONE)
                self.assertEqual([r.key for r in rows], [b"r2", b"r3"])
            sup = c.get(b"r1", ColumnPath(column_family="Super1", super_column=b"sc"), ONE)
            self.assertEqual([(s.name, s.value) for s in sup.super_column.columns], [(b"\x00\x01", b"sub")])

    def test_errors_are_invalid_request_exceptions(self):
        with self.client() as c:
            with self.assertRaises(InvalidRequestException) as e:
                c.insert(b"", ColumnParent(column_family="Standard1"), col(b"a", b"v"), ONE)
            self.assertIn("key", e.exception.why.lower())
            with self.assertRaises(InvalidRequestException) as e:
                c.insert(b"k", ColumnParent(column_family="NoSuchCF"), col(b"a", b"v"), ONE)
            self.assertIn("NoSuchCF", e.exception.why)
            with self.assertRaises(InvalidRequestException):
                c.get_slice(b"k", ColumnParent(column_family="Standard1"), SlicePredicate(), ONE)
            # The connection is still usable.
            self.assertEqual(c.describe_version(), "20.1.0")
        with connect(HOST, PORT) as c:
            with self.assertRaises(InvalidRequestException) as e:
                c.set_keyspace("NoSuchKeyspace")
            self.assertIn("NoSuchKeyspace", e.exception.why)
        # An exception leaving the client's block is still the server's exception.
        with self.assertRaises(InvalidRequestException):
            with self.client() as c:
                c.insert(b"", ColumnParent(column_family="Standard1"), col(b"a", b"v"), ONE)
        with self.assertRaises(InvalidRequestException):
            with connect(HOST, PORT, keyspace="NoSuchKeyspace"):
                pass


if __name__ == "__main__":
    unittest.main(verbosity=2)
