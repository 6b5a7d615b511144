"""Range ghosts as pycassa sees them (issue 11, point 1), through the client generated from our IDL.

pycassa's ColumnFamily.get_range (1.x) is documented as a generator over (key, columns) that pages
through get_range_slices `buffer_size` rows at a time, each page starting at the last key of the
one before (whose first row, a repeat, it drops), and stopping at a short page or `row_count` rows.
With filter_empty=False it yields the rows whose column list is empty -- rows the predicate selects
nothing from, and "range ghosts", rows whose columns were deleted but not yet purged -- and they
count towards row_count; with filter_empty=True (its default) it skips them and they do not count.
`pycassa_get_range` below is our own rendering of that documented behaviour, so the scenario
checks what a pycassa program would see against Sibyl, as against Cassandra 3.11.

Run:  SIBYL_BIN=target/debug/sibyl SIBYLTOOL_BIN=target/debug/sibyltool python3 tests/python/test_range_ghosts.py
The Rust test tests/tests/python_range_ghosts.rs runs this file.
"""

import os
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "gen-py"))

from sibyl_client import connect  # noqa: E402
from sibyl_node import Node  # noqa: E402
from cassandra.ttypes import (  # noqa: E402
    CfDef, Column, ColumnParent, ColumnPath, ConsistencyLevel, KeyRange, KsDef, SlicePredicate, SliceRange,
)

KS = "PyGhosts"
CF = "Standard1"
ONE = ConsistencyLevel.ONE
NODE = None


def setUpModule():
    global NODE
    binary = os.environ.get("SIBYL_BIN")
    if not binary:
        raise RuntimeError("set SIBYL_BIN to the sibyl executable")
    NODE = Node(binary, cluster="Python Interop", partitioner="org.apache.cassandra.dht.ByteOrderedPartitioner")


def tearDownModule():
    log = NODE.log()
    code = NODE.stop()
    if code != 0:
        raise RuntimeError(f"sibyl exited with {code} on SIGTERM:\n{log}")


def sibyltool(*args):
    """Runs `sibyltool -h 127.0.0.1 -p <admin port> ARGS` (SIBYLTOOL_BIN), bounded in time."""
    tool = os.environ.get("SIBYLTOOL_BIN")
    if not tool:
        raise RuntimeError("set SIBYLTOOL_BIN to the sibyltool executable")
    done = subprocess.run([tool, "-h", "127.0.0.1", "-p", str(NODE.admin_port), *args], stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"sibyltool {args} failed ({done.returncode}): {done.stdout!r} {done.stderr!r}")


def now_us():
    return time.time_ns() // 1000


def predicate(columns=None, column_count=100):
    """pycassa's predicate: the named columns, or a slice of every column up to column_count."""
    if columns is not None:
        return SlicePredicate(column_names=list(columns))
    return SlicePredicate(slice_range=SliceRange(b"", b"", False, column_count))


def pycassa_get_range(client, start=b"", finish=b"", columns=None, column_count=100, row_count=None,
                      buffer_size=1024, filter_empty=True):
    """ColumnFamily.get_range as pycassa documents it (see the module's docstring)."""
    parent = ColumnParent(column_family=CF)
    pred = predicate(columns, column_count)
    count = 0
    page = 0
    last_key = start
    while True:
        if row_count is not None:
            buffer_size = min(row_count - count + 1, buffer_size)
        rows = client.get_range_slices(parent, pred, KeyRange(start_key=last_key, end_key=finish, count=buffer_size), ONE)
        for j, row in enumerate(rows):
            if j == 0 and page != 0:
                continue  # the last row of the page before, asked for again as this page's start
            if filter_empty and not row.columns:
                continue
            yield row.key, {c.column.name: c.column.value for c in row.columns}
            count += 1
            if row_count is not None and count >= row_count:
                return
        if len(rows) != buffer_size:
            return
        last_key = rows[-1].key
        page += 1


class RangeGhostsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with connect("127.0.0.1", NODE.port) as c:
            c.system_add_keyspace(KsDef(
                name=KS, strategy_class="org.apache.cassandra.locator.SimpleStrategy",
                strategy_options={"replication_factor": "1"},
                cf_defs=[CfDef(keyspace=KS, name=CF, comparator_type="UTF8Type", gc_grace_seconds=0)],
            ))

    def setUp(self):
        # Each test starts from an empty column family.
        with connect("127.0.0.1", NODE.port, keyspace=KS) as c:
            c.truncate(CF)

    def client(self):
        return connect("127.0.0.1", NODE.port, keyspace=KS)

    def insert(self, c, key, name, value):
        c.insert(key, ColumnParent(column_family=CF), Column(name=name, value=value, timestamp=now_us()), ONE)

    def test_rows_the_predicate_selects_nothing_from_are_yielded_empty(self):
        with self.client() as c:
            for k in [b"k1", b"k2", b"k3", b"k4", b"k5"]:
                self.insert(c, k, b"x", k)
            self.insert(c, b"k3", b"y", b"only k3")
            # Two rows a page: the pages are k1 k2 | k2 k3 | k3 k4 | k4 k5 | k5.
            got = list(pycassa_get_range(c, columns=[b"y"], buffer_size=2, filter_empty=False))
            self.assertEqual(got, [(b"k1", {}), (b"k2", {}), (b"k3", {b"y": b"only k3"}), (b"k4", {}), (b"k5", {})])
            # pycassa's default drops them, having still paged through every one.
            self.assertEqual(list(pycassa_get_range(c, columns=[b"y"], buffer_size=2)), [(b"k3", {b"y": b"only k3"})])
            # Empty rows count towards row_count when they are yielded.
            got = list(pycassa_get_range(c, columns=[b"y"], row_count=3, buffer_size=2, filter_empty=False))
            self.assertEqual([k for k, _ in got], [b"k1", b"k2", b"k3"])

    def test_deleted_rows_are_ghosts_until_purged(self):
        with self.client() as c:
            for k in [b"g1", b"g2", b"g3", b"g4"]:
                self.insert(c, k, b"x", b"v")
            self.insert(c, b"g2", b"y", b"w")
            # g2 loses its columns one by one, g3 its whole row.
            for name in [b"x", b"y"]:
                c.remove(b"g2", ColumnPath(column_family=CF, column=name), now_us(), ONE)
            c.remove(b"g3", ColumnPath(column_family=CF), now_us(), ONE)
            ghosts = [(b"g1", {b"x": b"v"}), (b"g2", {}), (b"g3", {}), (b"g4", {b"x": b"v"})]
            for buffer_size in [1024, 3, 2]:
                self.assertEqual(list(pycassa_get_range(c, buffer_size=buffer_size, filter_empty=False)), ghosts,
                                 f"buffer_size {buffer_size}")
            self.assertEqual(list(pycassa_get_range(c, buffer_size=2)), [(b"g1", {b"x": b"v"}), (b"g4", {b"x": b"v"})])
            self.assertEqual([k for k, _ in pycassa_get_range(c, row_count=2, filter_empty=False)], [b"g1", b"g2"])
            self.assertEqual([k for k, _ in pycassa_get_range(c, row_count=2)], [b"g1", b"g4"])
            # A point read of a ghost finds nothing.
            self.assertEqual(c.get_slice(b"g2", ColumnParent(column_family=CF), predicate(), ONE), [])

    def test_a_ghost_goes_when_compaction_purges_its_tombstones(self):
        with self.client() as c:
            for k in [b"p1", b"p2"]:
                self.insert(c, k, b"x", b"v")
            c.remove(b"p1", ColumnPath(column_family=CF), now_us(), ONE)
            self.assertEqual(list(pycassa_get_range(c, filter_empty=False)), [(b"p1", {}), (b"p2", {b"x": b"v"})])
            # gc_grace_seconds is 0: a second later a major compaction drops the tombstone.
            time.sleep(1.1)
            sibyltool("flush", KS)
            sibyltool("compact", KS)
            self.assertEqual(list(pycassa_get_range(c, filter_empty=False)), [(b"p2", {b"x": b"v"})])


if __name__ == "__main__":
    unittest.main(verbosity=2)
