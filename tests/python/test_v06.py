"""The Cassandra 0.6 API (2.2.0): a Python client generated from our 0.6 IDL (gen-py-06) calls every
0.6 method of a real sibyl node, unframed (0.6's default transport) and framed, next to a 20.1.0
client (gen-py) on the same node and keyspace.

Run:  pip install -r tests/python/requirements.txt
      SIBYL_BIN=target/debug/sibyl python3 tests/python/test_v06.py
The Rust test tests/tests/python_v06.rs runs this file. The node is started as test_interop.py
starts it (sibyl_node.py), its storage-conf.xml declaring the keyspace, as 0.6 users did.
"""

import json
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "gen-py-06"))
sys.path.insert(0, os.path.join(HERE, "gen-py"))

from thrift.Thrift import TApplicationException, TMessageType  # noqa: E402
from thrift.protocol import TBinaryProtocol  # noqa: E402
from thrift.transport import TSocket, TTransport  # noqa: E402

from cassandra06 import Cassandra as Cassandra06  # noqa: E402
from cassandra06.ttypes import (  # noqa: E402
    AuthenticationRequest, Column, ColumnOrSuperColumn, ColumnParent, ColumnPath, ConsistencyLevel, Deletion,
    InvalidRequestException, KeyRange, Mutation, NotFoundException, SlicePredicate, SliceRange, SuperColumn,
)
from cassandra import Cassandra as Cassandra20  # noqa: E402
from cassandra import ttypes as t20  # noqa: E402
from sibyl_node import Node  # noqa: E402

KS = "Keyspace1"
CLUSTER = "Python 0.6"
ONE = ConsistencyLevel.ONE
PARTITIONER = "org.apache.cassandra.dht.OrderPreservingPartitioner"

# The config's keyspaces, as 0.6 declared them.
KEYSPACES = f"""<Keyspaces>
    <Keyspace Name="{KS}">
      <ColumnFamily Name="Standard1" CompareWith="BytesType"/>
      <ColumnFamily Name="Standard2" CompareWith="UTF8Type" Comment="names in UTF-8 order"/>
      <ColumnFamily Name="StandardByLong" CompareWith="LongType"/>
      <ColumnFamily Name="Super1" ColumnType="Super" CompareWith="BytesType" CompareSubcolumnsWith="BytesType"/>
      <ColumnFamily Name="Super2" ColumnType="Super" CompareWith="UTF8Type" CompareSubcolumnsWith="LongType"/>
      <ReplicaPlacementStrategy>org.apache.cassandra.locator.RackUnawareStrategy</ReplicaPlacementStrategy>
      <ReplicationFactor>1</ReplicationFactor>
      <EndPointSnitch>org.apache.cassandra.locator.EndPointSnitch</EndPointSnitch>
    </Keyspace>
  </Keyspaces>"""


NODE = None


def setUpModule():
    global NODE
    binary = os.environ.get("SIBYL_BIN")
    if not binary:
        raise RuntimeError("set SIBYL_BIN to the sibyl executable")
    NODE = Node(binary, cluster=CLUSTER, partitioner=PARTITIONER, keyspaces=KEYSPACES, prefix="sibyl-py06-")


def tearDownModule():
    if NODE is not None:
        log = NODE.log()
        code = NODE.stop()
        if code != 0:
            raise RuntimeError(f"sibyl exited with {code} on SIGTERM:\n{log}")
        if "panicked" in log:
            raise RuntimeError(f"sibyl panicked:\n{log}")


class Client:
    """A generated client over a fresh connection; unframed unless asked."""

    def __init__(self, module, framed=False, accelerated=False):
        sock = TSocket.TSocket("127.0.0.1", NODE.port)
        sock.setTimeout(10_000)
        self.transport = TTransport.TFramedTransport(sock) if framed else TTransport.TBufferedTransport(sock)
        protocol = TBinaryProtocol.TBinaryProtocolAccelerated if accelerated else TBinaryProtocol.TBinaryProtocol
        self.client = module.Client(protocol(self.transport))
        self.transport.open()

    def __enter__(self):
        return self.client

    def __exit__(self, *exc):
        self.transport.close()


def old(framed=False, accelerated=False):
    return Client(Cassandra06, framed, accelerated)


def new(accelerated=False):
    return Client(Cassandra20, framed=True, accelerated=accelerated)


def now():
    return time.time_ns() // 1000


def col(name, value, ts=None):
    return Column(name=name, value=value, timestamp=ts if ts is not None else now())


def names(cols):
    return [c.column.name for c in cols]


EVERYTHING = SlicePredicate(slice_range=SliceRange(b"", b"", False, 1000))


class V06Test(unittest.TestCase):
    def test_connection_openers_of_0_6_clients(self):
        # pycassa 0.3 asks describe_version first, unframed, and wants major version 2.
        with old() as c:
            self.assertEqual(c.describe_version(), "2.2.0")
        # The Ruby gem's first call on a connection is describe_keyspace, over either transport;
        # the answer carries both generations' forms (the C decoder reads it too).
        for framed in (False, True):
            for accelerated in (False, True):
                with old(framed, accelerated) as c:
                    self.assertEqual(c.describe_keyspace(KS)["Super1"]["Type"], "Super")
                with old(framed, accelerated) as c:
                    self.assertIn(KS, c.describe_keyspaces())
                with old(framed, accelerated) as c:
                    with self.assertRaises(NotFoundException):
                        c.describe_keyspace("NoSuchKeyspace")
        # A 20.1.0 client asking the same first gets its own answers.
        for accelerated in (False, True):
            with new(accelerated) as c:
                self.assertEqual(c.describe_keyspace(KS).name, KS)
            with new(accelerated) as c:
                self.assertIn(KS, [k.name for k in c.describe_keyspaces()])
            with new(accelerated) as c:
                self.assertEqual(c.describe_version(), "20.1.0")
        # Once a call showed 0.6, describe_version is 0.6's on framed transport too.
        with old(framed=True) as c:
            self.assertEqual(c.get_string_property("version"), "2.2.0")
            self.assertEqual(c.describe_version(), "2.2.0")

    def test_properties_and_descriptions(self):
        with old() as c:
            c.login(KS, AuthenticationRequest(credentials={"username": "anyone", "password": "x"}))
            self.assertEqual(c.get_string_property("cluster name"), CLUSTER)
            self.assertEqual(c.get_string_property("version"), "2.2.0")
            self.assertEqual(c.get_string_property("no such property"), "?")
            config = c.get_string_property("config file")
            self.assertIn("<Keyspace Name=\"Keyspace1\">", config)
            with open(NODE.conf) as f:
                self.assertEqual(config, f.read())
            token_map = json.loads(c.get_string_property("token map"))
            self.assertEqual(list(token_map.values()), ["127.0.0.1"])
            self.assertEqual(c.get_string_list_property("keyspaces"), sorted([KS, "system"]))
            self.assertEqual(c.get_string_list_property("other"), [])
            self.assertEqual(c.describe_keyspaces(), {KS, "system"})
            self.assertEqual(c.describe_cluster_name(), CLUSTER)
            self.assertEqual(c.describe_version(), "2.2.0")
            self.assertEqual(c.describe_partitioner(), PARTITIONER)
            d = c.describe_keyspace(KS)
            self.assertEqual(sorted(d), ["Standard1", "Standard2", "StandardByLong", "Super1", "Super2"])
            m = "org.apache.cassandra.db.marshal."
            self.assertEqual(d["Standard2"], {"Type": "Standard", "CompareWith": m + "UTF8Type",
                                              "Desc": "names in UTF-8 order"})
            self.assertEqual(d["Super2"]["CompareSubcolumnsWith"], m + "LongType")
            self.assertIn("Column Family Type: Super", d["Super1"]["Desc"])
            with self.assertRaises(NotFoundException):
                c.describe_keyspace("NoSuchKeyspace")
            ring = c.describe_ring(KS)
            self.assertEqual(len(ring), 1)
            self.assertEqual(ring[0].endpoints, ["127.0.0.1"])
            with self.assertRaises(InvalidRequestException) as e:
                c.describe_ring("system")
            self.assertIn("no ring", e.exception.why)
            splits = c.describe_splits(ring[0].start_token, ring[0].end_token, 128)
            self.assertGreaterEqual(len(splits), 2)
            self.assertEqual((splits[0], splits[-1]), (ring[0].start_token, ring[0].end_token))

    def test_insert_get_count_and_remove(self):
        with old() as c:
            ts = now()
            for n in [b"b", b"a", b"c"]:
                c.insert(KS, "ig-row", ColumnPath("Standard1", column=n), b"v-" + n, ts, ONE)
            got = c.get(KS, "ig-row", ColumnPath("Standard1", column=b"b"), ONE)
            self.assertEqual((got.column.name, got.column.value, got.column.timestamp), (b"b", b"v-b", ts))
            self.assertEqual(names(c.get_slice(KS, "ig-row", ColumnParent("Standard1"), EVERYTHING, ONE)),
                             [b"a", b"b", b"c"])
            rev = SlicePredicate(slice_range=SliceRange(b"c", b"a", True, 2))
            self.assertEqual(names(c.get_slice(KS, "ig-row", ColumnParent("Standard1"), rev, ONE)), [b"c", b"b"])
            by_name = SlicePredicate(column_names=[b"c", b"zz", b"a"])
            self.assertEqual(names(c.get_slice(KS, "ig-row", ColumnParent("Standard1"), by_name, ONE)), [b"a", b"c"])
            self.assertEqual(c.get_count(KS, "ig-row", ColumnParent("Standard1"), ONE), 3)
            c.remove(KS, "ig-row", ColumnPath("Standard1", column=b"a"), ts + 1, ONE)
            with self.assertRaises(NotFoundException):
                c.get(KS, "ig-row", ColumnPath("Standard1", column=b"a"), ONE)
            self.assertEqual(c.get_count(KS, "ig-row", ColumnParent("Standard1"), ONE), 2)
            # A removal older than the data removes nothing; a whole-row removal removes all.
            c.remove(KS, "ig-row", ColumnPath("Standard1", column=b"b"), ts - 1, ONE)
            self.assertEqual(c.get_count(KS, "ig-row", ColumnParent("Standard1"), ONE), 2)
            c.remove(KS, "ig-row", ColumnPath("Standard1"), ts + 2, ONE)
            self.assertEqual(c.get_slice(KS, "ig-row", ColumnParent("Standard1"), EVERYTHING, ONE), [])
            # Typed comparators still validate and order names.
            for n in (3, 1, 2):
                c.insert(KS, "longs", ColumnPath("StandardByLong", column=n.to_bytes(8, "big")), b"x", ts, ONE)
            got = c.get_slice(KS, "longs", ColumnParent("StandardByLong"), EVERYTHING, ONE)
            self.assertEqual([int.from_bytes(n, "big") for n in names(got)], [1, 2, 3])
            with self.assertRaises(InvalidRequestException):
                c.insert(KS, "longs", ColumnPath("StandardByLong", column=b"abc"), b"x", ts, ONE)

    def test_multiget_and_multiget_slice(self):
        with old() as c:
            ts = now()
            for k in ("mg1", "mg2"):
                c.insert(KS, k, ColumnPath("Standard1", column=b"name"), k.encode(), ts, ONE)
                c.insert(KS, k, ColumnPath("Standard1", column=b"other"), b"o", ts, ONE)
            got = c.multiget(KS, ["mg1", "mg2", "mg-none"], ColumnPath("Standard1", column=b"name"), ONE)
            self.assertEqual(got["mg1"].column.value, b"mg1")
            self.assertEqual(got["mg2"].column.value, b"mg2")
            self.assertEqual((got["mg-none"].column, got["mg-none"].super_column), (None, None))
            slices = c.multiget_slice(KS, ["mg1", "mg2", "mg-none"], ColumnParent("Standard1"), EVERYTHING, ONE)
            self.assertEqual({k: names(v) for k, v in slices.items()},
                             {"mg1": [b"name", b"other"], "mg2": [b"name", b"other"], "mg-none": []})

    def test_super_columns_batch_insert_and_batch_mutate(self):
        with old() as c:
            ts = now()
            c.batch_insert(KS, "sup", {"Super2": [
                ColumnOrSuperColumn(super_column=SuperColumn(b"beta", [col((2).to_bytes(8, "big"), b"b2", ts),
                                                                       col((1).to_bytes(8, "big"), b"b1", ts)])),
                ColumnOrSuperColumn(super_column=SuperColumn(b"alpha", [col((7).to_bytes(8, "big"), b"a7", ts)])),
            ], "Standard1": [ColumnOrSuperColumn(column=col(b"plain", b"p", ts))]}, ONE)
            got = c.get_slice(KS, "sup", ColumnParent("Super2"), EVERYTHING, ONE)
            self.assertEqual([s.super_column.name for s in got], [b"alpha", b"beta"])
            self.assertEqual([int.from_bytes(x.name, "big") for x in got[1].super_column.columns], [1, 2])
            whole = c.get(KS, "sup", ColumnPath("Super2", super_column=b"beta"), ONE)
            self.assertEqual(len(whole.super_column.columns), 2)
            one = c.get(KS, "sup", ColumnPath("Super2", super_column=b"beta", column=(1).to_bytes(8, "big")), ONE)
            self.assertEqual(one.column.value, b"b1")
            inside = c.get_slice(KS, "sup", ColumnParent("Super2", b"beta"), EVERYTHING, ONE)
            self.assertEqual([x.column.value for x in inside], [b"b1", b"b2"])
            self.assertEqual(c.get_count(KS, "sup", ColumnParent("Super2"), ONE), 2)
            self.assertEqual(c.get(KS, "sup", ColumnPath("Standard1", column=b"plain"), ONE).column.value, b"p")
            # batch_mutate: inserts, a deletion of sub columns by name, and of a whole super column.
            c.batch_mutate(KS, {
                "sup": {"Super2": [
                    Mutation(deletion=Deletion(ts + 1, b"beta", SlicePredicate(column_names=[(2).to_bytes(8, "big")]))),
                    Mutation(deletion=Deletion(ts + 1, b"alpha")),
                    Mutation(column_or_supercolumn=ColumnOrSuperColumn(
                        super_column=SuperColumn(b"gamma", [col((3).to_bytes(8, "big"), b"g3", ts)]))),
                ]},
                "bm-row": {"Standard1": [Mutation(column_or_supercolumn=ColumnOrSuperColumn(column=col(b"k", b"v", ts)))]},
            }, ONE)
            got = c.get_slice(KS, "sup", ColumnParent("Super2"), EVERYTHING, ONE)
            self.assertEqual([(s.super_column.name, [x.value for x in s.super_column.columns]) for s in got],
                             [(b"beta", [b"b1"]), (b"gamma", [b"g3"])])
            self.assertEqual(c.get(KS, "bm-row", ColumnPath("Standard1", column=b"k"), ONE).column.value, b"v")
            # Deleting super columns by name on a super CF, and the whole row of a standard CF.
            c.batch_mutate(KS, {"sup": {
                "Super2": [Mutation(deletion=Deletion(ts + 2, predicate=SlicePredicate(column_names=[b"gamma"])))],
                "Standard1": [Mutation(deletion=Deletion(ts + 2))],
            }}, ONE)
            got = c.get_slice(KS, "sup", ColumnParent("Super2"), EVERYTHING, ONE)
            self.assertEqual([s.super_column.name for s in got], [b"beta"])
            self.assertEqual(c.get_slice(KS, "sup", ColumnParent("Standard1"), EVERYTHING, ONE), [])
            with self.assertRaises(InvalidRequestException) as e:
                c.batch_mutate(KS, {"sup": {"Super2": [Mutation(deletion=Deletion(
                    ts + 3, b"beta", SlicePredicate(slice_range=SliceRange(b"", b"", False, 10))))]}}, ONE)
            self.assertIn("SliceRange", e.exception.why)

    def test_range_slices_by_key_and_token(self):
        with old() as c:
            ts = now()
            for k in ("rs-a", "rs-b", "rs-c", "rs-d"):
                c.insert(KS, k, ColumnPath("Standard2", column="név".encode()), k.encode(), ts, ONE)
            pred = SlicePredicate(column_names=["név".encode()])
            rows = c.get_range_slices(KS, ColumnParent("Standard2"), pred,
                                      KeyRange(start_key="rs-b", end_key="rs-d", count=100), ONE)
            self.assertEqual([r.key for r in rows], ["rs-b", "rs-c", "rs-d"])
            self.assertEqual(rows[0].columns[0].column.value, b"rs-b")
            rows = c.get_range_slice(KS, ColumnParent("Standard2"), pred, "rs-a", "rs-c", 2, ONE)
            self.assertEqual([r.key for r in rows], ["rs-a", "rs-b"])
            # OrderPreservingPartitioner: the token of a key is the key; token ranges exclude their start.
            rows = c.get_range_slices(KS, ColumnParent("Standard2"), pred,
                                      KeyRange(start_token="rs-a", end_token="rs-c", count=100), ONE)
            self.assertEqual([r.key for r in rows], ["rs-b", "rs-c"])
            with self.assertRaises(InvalidRequestException):
                c.get_range_slices(KS, ColumnParent("Standard2"), pred, KeyRange(start_key="rs-a", count=10), ONE)

    def test_consistency_levels(self):
        with old() as c:
            ts = now()
            for level in (ConsistencyLevel.ONE, ConsistencyLevel.QUORUM, ConsistencyLevel.DCQUORUM,
                          ConsistencyLevel.DCQUORUMSYNC, ConsistencyLevel.ALL, ConsistencyLevel.ANY):
                c.insert(KS, "cl", ColumnPath("Standard1", column=b"l%d" % level), b"v", ts, level)
            for level in (ConsistencyLevel.ONE, ConsistencyLevel.QUORUM, ConsistencyLevel.DCQUORUM, ConsistencyLevel.ALL):
                self.assertEqual(len(c.get_slice(KS, "cl", ColumnParent("Standard1"), EVERYTHING, level)), 6)
            for level, word in ((ConsistencyLevel.ZERO, "zero"), (ConsistencyLevel.ANY, "any")):
                with self.assertRaises(InvalidRequestException) as e:
                    c.get(KS, "cl", ColumnPath("Standard1", column=b"l1"), level)
                self.assertIn(word, e.exception.why)
            # ZERO: answered at once, applied in the background.
            for i in range(20):
                c.insert(KS, "zero", ColumnPath("Standard1", column=b"z%02d" % i), b"v", ts, ConsistencyLevel.ZERO)
            c.batch_mutate(KS, {"zero": {"Standard1": [Mutation(column_or_supercolumn=ColumnOrSuperColumn(
                column=col(b"zb", b"v", ts)))]}}, ConsistencyLevel.ZERO)
            deadline = time.monotonic() + 10
            while c.get_count(KS, "zero", ColumnParent("Standard1"), ONE) != 21:
                self.assertLess(time.monotonic(), deadline, "ZERO writes never became visible")
                time.sleep(0.05)
            # A ZERO write 0.6 would refuse is still refused.
            with self.assertRaises(InvalidRequestException):
                c.insert(KS, "", ColumnPath("Standard1", column=b"z"), b"v", ts, ConsistencyLevel.ZERO)
            # A level outside 0.6's enum in a required argument: 0.6 saw a missing field.
            with self.assertRaises(TApplicationException) as e:
                c.get(KS, "cl", ColumnPath("Standard1", column=b"l1"), 17)
            self.assertEqual(e.exception.type, TApplicationException.PROTOCOL_ERROR)
            self.assertIn("consistency_level", e.exception.message)

    def test_errors_as_0_6_gave_them(self):
        with old() as c:
            with self.assertRaises(InvalidRequestException) as e:
                c.get(KS, "", ColumnPath("Standard1", column=b"a"), ONE)
            self.assertIn("Key", e.exception.why)
            with self.assertRaises(InvalidRequestException) as e:
                c.insert("NoSuchKeyspace", "k", ColumnPath("Standard1", column=b"a"), b"v", now(), ONE)
            self.assertEqual(e.exception.why, "Keyspace NoSuchKeyspace does not exist in this schema.")
            with self.assertRaises(InvalidRequestException) as e:
                c.get_slice(KS, "k", ColumnParent("NoSuchCF"), EVERYTHING, ONE)
            self.assertEqual(e.exception.why, "unconfigured columnfamily NoSuchCF")
            with self.assertRaises(InvalidRequestException):
                c.get_slice(KS, "k", ColumnParent("Standard1"), SlicePredicate(), ONE)
            with self.assertRaises(InvalidRequestException):
                c.insert(KS, "k", ColumnPath("Standard1", super_column=b"sc", column=b"a"), b"v", now(), ONE)
            with self.assertRaises(InvalidRequestException):
                c.insert(KS, "k", ColumnPath("Super1", column=b"a"), b"v", now(), ONE)
            # A missing required argument: PROTOCOL_ERROR naming it, as 0.6's processor did.
            with self.assertRaises(TApplicationException) as e:
                c.get(KS, None, ColumnPath("Standard1", column=b"a"), ONE)
            self.assertEqual(e.exception.type, TApplicationException.PROTOCOL_ERROR)
            self.assertIn("Required field 'key' was not present! Struct: get_args", e.exception.message)
            # The connection is still usable.
            self.assertEqual(c.describe_version(), "2.2.0")

    def test_unknown_methods(self):
        # 0.5's get_key_range, which 0.6.13 no longer has: UNKNOWN_METHOD, connection still usable.
        with old() as c:
            c._oprot.writeMessageBegin("get_key_range", TMessageType.CALL, 0)
            c._oprot.writeStructBegin("get_key_range_args")
            c._oprot.writeFieldStop()
            c._oprot.writeStructEnd()
            c._oprot.writeMessageEnd()
            c._oprot.trans.flush()
            (name, mtype, _) = c._iprot.readMessageBegin()
            self.assertEqual((name, mtype), ("get_key_range", TMessageType.EXCEPTION))
            x = TApplicationException()
            x.read(c._iprot)
            c._iprot.readMessageEnd()
            self.assertEqual(x.type, TApplicationException.UNKNOWN_METHOD)
            self.assertIn("get_key_range", x.message)
            self.assertEqual(c.describe_cluster_name(), CLUSTER)

    def test_both_generations_over_the_same_data(self):
        ts = now()
        with old() as c06, new() as c20:
            c20.set_keyspace(KS)
            c06.insert(KS, "both", ColumnPath("Standard1", column=b"from-0.6"), b"old", ts, ONE)
            c20.insert(b"both", t20.ColumnParent("Standard1"), t20.Column(b"from-20.1", b"new", ts), ONE)
            self.assertEqual(names(c06.get_slice(KS, "both", ColumnParent("Standard1"), EVERYTHING, ONE)),
                             [b"from-0.6", b"from-20.1"])
            got = c20.get_slice(b"both", t20.ColumnParent("Standard1"),
                                t20.SlicePredicate(slice_range=t20.SliceRange(b"", b"", False, 10)), ONE)
            self.assertEqual([(x.column.name, x.column.value) for x in got],
                             [(b"from-0.6", b"old"), (b"from-20.1", b"new")])
            c20.insert(b"both", t20.ColumnParent("Super1", b"sc"), t20.Column(b"sub", b"s", ts), ONE)
            sc = c06.get(KS, "both", ColumnPath("Super1", super_column=b"sc"), ONE).super_column
            self.assertEqual([(x.name, x.value, x.timestamp) for x in sc.columns], [(b"sub", b"s", ts)])
            # A TTL written through 20.1.0 is invisible to 0.6 but still applies.
            c20.insert(b"both", t20.ColumnParent("Standard1"), t20.Column(b"ttl", b"t", ts, 1), ONE)
            self.assertEqual(c06.get(KS, "both", ColumnPath("Standard1", column=b"ttl"), ONE).column.value, b"t")
            deadline = time.monotonic() + 10
            while True:
                try:
                    c06.get(KS, "both", ColumnPath("Standard1", column=b"ttl"), ONE)
                except NotFoundException:
                    break
                self.assertLess(time.monotonic(), deadline, "the TTL never expired")
                time.sleep(0.2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
