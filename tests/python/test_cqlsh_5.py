"""cqlsh 5.0.4 from PyPI (Cassandra 3.x's own cqlsh, "cqlsh 5.0.1", Python 2.7 only), unmodified,
against a running node: the connection, seed 001 through `cqlsh -f`, DESCRIBE (keyspaces, a
keyspace, tables, a materialized view, the schema, the cluster), SELECT output of several types,
and errors. The expected texts are what this cqlsh prints against Cassandra 3.11 for the same
schema: its DESCRIBE is the driver's export of system_schema, so they hold 3.11's rows.

This file runs under Python 3; cqlsh runs as `SIBYL_PY27 SIBYL_CQLSH5_DIR/bin/cqlsh`, with the
packages of tests/python/requirements-py27.txt installed in SIBYL_CQLSH5_DIR (scripts/test.sh
does it). The node is started by tests/tests/cqlsh_5.rs, which passes its native address in
SIBYL_NATIVE_HOST and SIBYL_NATIVE_PORT.
"""

import os
import re
import subprocess
import tempfile
import unittest

from seed_001 import SEED_001, SEED_001_SELECTS

HOST = os.environ.get("SIBYL_NATIVE_HOST", "127.0.0.1")
PORT = os.environ.get("SIBYL_NATIVE_PORT", "9042")
PY27 = os.environ.get("SIBYL_PY27", "python2.7")
CQLSH5_DIR = os.environ.get("SIBYL_CQLSH5_DIR", "/var/tmp/sibyl-py27")

# One cqlsh run, connection included.
RUN_LIMIT = 120

# cqlsh 5.0.4 asks for CQL 3.3.1 by default, which 3.11 does not offer (its SUPPORTED lists
# only 3.4.4), so against 3.11 it is run with --cqlversion, as its users do.
CQL_VERSION = "--cqlversion=3.4.4"


# A keyspace with what DESCRIBE must render: clustering order, compact storage, a static
# column, the three collections, options away from their defaults, and a view.
SHOP = """
CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1} AND durable_writes = true;
CREATE TABLE shop.items (
  id int, at timestamp, shelf text static, tags set<text>, props map<text, int>, seen list<timestamp>, price decimal,
  PRIMARY KEY (id, at)
) WITH CLUSTERING ORDER BY (at DESC) AND comment = 'items by time' AND gc_grace_seconds = 3600
  AND caching = {'keys': 'NONE', 'rows_per_partition': '10'} AND crc_check_chance = 0.5
  AND compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': '16'} AND default_time_to_live = 86400
  AND speculative_retry = 'ALWAYS' AND bloom_filter_fp_chance = 0.05 AND read_repair_chance = 0.2
  AND dclocal_read_repair_chance = 0.0 AND memtable_flush_period_in_ms = 60000
  AND min_index_interval = 64 AND max_index_interval = 1024;
CREATE TABLE shop.legacy (k text, c int, v blob, PRIMARY KEY (k, c)) WITH COMPACT STORAGE;
CREATE TABLE shop.users (id uuid PRIMARY KEY, name text, age int, admin boolean, photo blob, joined timestamp,
  prefs map<text, text>);
CREATE MATERIALIZED VIEW shop.users_by_name AS SELECT name, id, age FROM shop.users
  WHERE name IS NOT NULL AND id IS NOT NULL PRIMARY KEY (name, id);
INSERT INTO shop.users (id, name, age, admin, photo, joined, prefs) VALUES
  (8a1e0f4c-3b2d-4c5e-9f60-112233445566, 'Ann', 41, true, 0xcafe, '2017-03-04 05:06:07+0000', {'theme': 'dark', 'lang': 'en'});
INSERT INTO shop.users (id, name, age, admin, photo, joined) VALUES
  (00000000-0000-0000-0000-000000000001, 'Bob', -7, false, 0x, '1969-12-31 23:59:59.5+0000');
"""

# 3.11 compresses a table created without compression options, and says so:
#   {'chunk_length_in_kb': '64', 'class': 'org.apache.cassandra.io.compress.LZ4Compressor'}
# Sibyl's SSTables are not compressed, and it says that in 3.11's words for compression off.
# The one place where the texts below are not 3.11's; only tables made without the option.
DEFAULT_COMPRESSION = "{'enabled': 'false'}"

# The options of a table made with none, 3.11's defaults.
DEFAULT_OPTIONS = """bloom_filter_fp_chance = 0.01
    AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}
    AND comment = ''
    AND compaction = {'class': 'org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy', 'max_threshold': '32', 'min_threshold': '4'}
    AND compression = %s
    AND crc_check_chance = 1.0
    AND dclocal_read_repair_chance = 0.1
    AND default_time_to_live = 0
    AND gc_grace_seconds = 864000
    AND max_index_interval = 2048
    AND memtable_flush_period_in_ms = 0
    AND min_index_interval = 128
    AND read_repair_chance = 0.0
    AND speculative_retry = '99PERCENTILE';""" % DEFAULT_COMPRESSION

ITEMS = """CREATE TABLE shop.items (
    id int,
    at timestamp,
    price decimal,
    props map<text, int>,
    seen list<timestamp>,
    shelf text static,
    tags set<text>,
    PRIMARY KEY (id, at)
) WITH CLUSTERING ORDER BY (at DESC)
    AND bloom_filter_fp_chance = 0.05
    AND caching = {'keys': 'NONE', 'rows_per_partition': '10'}
    AND comment = 'items by time'
    AND compaction = {'class': 'org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy', 'max_threshold': '32', 'min_threshold': '4'}
    AND compression = {'chunk_length_in_kb': '16', 'class': 'org.apache.cassandra.io.compress.LZ4Compressor'}
    AND crc_check_chance = 0.5
    AND dclocal_read_repair_chance = 0.0
    AND default_time_to_live = 86400
    AND gc_grace_seconds = 3600
    AND max_index_interval = 1024
    AND memtable_flush_period_in_ms = 60000
    AND min_index_interval = 64
    AND read_repair_chance = 0.2
    AND speculative_retry = 'ALWAYS';"""

LEGACY = """CREATE TABLE shop.legacy (
    k text,
    c int,
    v blob,
    PRIMARY KEY (k, c)
) WITH COMPACT STORAGE
    AND CLUSTERING ORDER BY (c ASC)
    AND """ + DEFAULT_OPTIONS

USERS = """CREATE TABLE shop.users (
    id uuid PRIMARY KEY,
    admin boolean,
    age int,
    joined timestamp,
    name text,
    photo blob,
    prefs map<text, text>
) WITH """ + DEFAULT_OPTIONS

USERS_BY_NAME = """CREATE MATERIALIZED VIEW shop.users_by_name AS
    SELECT name, id, age
    FROM shop.users
    WHERE name IS NOT NULL AND id IS NOT NULL
    PRIMARY KEY (name, id)
    WITH CLUSTERING ORDER BY (id ASC)
    AND """ + DEFAULT_OPTIONS

KEYSPACE_LINE = ("CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '1'}"
                 "  AND durable_writes = true;")

# DESCRIBE KEYSPACE's export: the keyspace, then its tables in the driver's order (a Python 2
# dict's), each followed by its views.
KEYSPACES = {
    "shop": [KEYSPACE_LINE % "shop", ITEMS, LEGACY, USERS, USERS_BY_NAME],
    "part1": [KEYSPACE_LINE % "part1", """CREATE TABLE part1.t (
    id int PRIMARY KEY,
    k int,
    v text
) WITH """ + DEFAULT_OPTIONS],
    "part2": [KEYSPACE_LINE % "part2", """CREATE TABLE part2.t (
    id int,
    c text,
    k int,
    v text,
    PRIMARY KEY (id, c)
) WITH CLUSTERING ORDER BY (c ASC)
    AND """ + DEFAULT_OPTIONS],
    "part3": [KEYSPACE_LINE % "part3"],
    "magazines": [KEYSPACE_LINE % "magazines", """CREATE TABLE magazines.magazine_name (
    id int PRIMARY KEY,
    name text,
    publicationfrequency text
) WITH """ + DEFAULT_OPTIONS, """CREATE TABLE magazines.magazine_publisher (
    publisher text,
    id int,
    name text,
    publicationfrequency text,
    PRIMARY KEY (publisher, id)
) WITH CLUSTERING ORDER BY (id DESC)
    AND """ + DEFAULT_OPTIONS],
}

SYSTEM_KEYSPACES = {"system", "system_schema", "system_auth", "system_distributed", "system_traces"}

USERS_SELECT = """
 id                                   | admin | age | joined                          | name | photo  | prefs
--------------------------------------+-------+-----+---------------------------------+------+--------+---------------------------------
 8a1e0f4c-3b2d-4c5e-9f60-112233445566 |  True |  41 | 2017-03-04 05:06:07.000000+0000 |  Ann | 0xcafe | {'lang': 'en', 'theme': 'dark'}
 00000000-0000-0000-0000-000000000001 | False |  -7 | 1969-12-31 23:59:59.500000+0000 |  Bob |     0x |                            null

(2 rows)
"""


def export(keyspace):
    """What cqlsh prints for DESCRIBE KEYSPACE `keyspace`, less the blank lines around it."""
    return "\n\n".join(KEYSPACES[keyspace])


def cqlsh(*args, **kw):
    """Runs cqlsh 5.0.4 with `args` (after host and port); its exit code, stdout and stderr."""
    home = tempfile.mkdtemp()
    env = dict(os.environ, PYTHONPATH=CQLSH5_DIR, HOME=home, TZ="UTC", PYTHONHASHSEED="0")
    cqlversion = [] if kw.get("default_cql_version") else [CQL_VERSION]
    command = [PY27, os.path.join(CQLSH5_DIR, "bin", "cqlsh"), HOST, PORT, "--no-color"] + cqlversion + list(args)
    run = subprocess.run(command, capture_output=True, text=True, timeout=RUN_LIMIT, env=env, stdin=subprocess.DEVNULL)
    return run.returncode, run.stdout, run.stderr


def cqlsh_f(script):
    """Runs cqlsh -f on `script` (text); its exit code, stdout, stderr and the file's name."""
    with tempfile.NamedTemporaryFile("w", suffix=".cql", delete=False) as f:
        f.write(script)
    try:
        return cqlsh("-f", f.name) + (f.name,)
    finally:
        os.unlink(f.name)


def execute(statement):
    """cqlsh -e `statement`, which must succeed; its stdout."""
    code, out, err = cqlsh("-e", statement)
    assert code == 0 and not err, "cqlsh -e %r exited %d:\n%s\n%s" % (statement, code, out, err)
    return out


class Cqlsh5(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.seed = cqlsh_f(SEED_001)
        code, out, err, _ = cqlsh_f(SHOP)
        assert code == 0 and not err, "the shop schema:\n%s\n%s" % (out, err)

    def test_connects_and_shows_3_11s_versions(self):
        out = execute("SHOW VERSION; SHOW HOST")
        self.assertRegex(out, r"\A\[cqlsh 5\.0\.1 \| Cassandra 3\.11\.\d+ \| CQL spec 3\.4\.4 \| Native protocol v4\]\n"
                              r"Connected to Sibyl E2E at %s:%s\.\n\Z" % (re.escape(HOST), PORT))

    def test_its_default_cql_version_is_refused_as_by_3_11(self):
        code, out, err = cqlsh("-e", "SHOW VERSION", default_cql_version=True)
        self.assertEqual(code, 1, out + err)
        self.assertIn("cql_version '3.3.1' is not supported by remote (w/ native protocol). "
                      "Supported versions: [u'3.4.4']", err)

    def test_seed_001_through_cqlsh_f(self):
        code, out, err, name = self.seed
        self.assertEqual(code, 2, "cqlsh -f exits 2 after a statement failed:\n%s\n%s" % (out, err))
        # Only the statement with the missing comma fails, in Cassandra's words, then the
        # count over the table it did not make.
        self.assertEqual(err.splitlines(), [
            "%s:31:SyntaxException: <Error from server: code=2000 [Syntax error in CQL query] message=\"line 6:3 "
            "mismatched input 'k' expecting ')' (...   c1 text,   c2 text   [k]...)\">" % name,
            "%s:46:InvalidRequest: Error from server: code=2200 [Invalid query] message=\"unconfigured table t\"" % name,
        ])
        self.assertEqual(out.strip("\n"), SEED_001_SELECTS.strip("\n"))

    def test_describe_keyspaces(self):
        out = execute("DESCRIBE KEYSPACES")
        # Every keyspace once, in columns (Python's cmd.Cmd.columnize), between blank lines.
        self.assertTrue(out.startswith("\n") and out.endswith("\n\n") and "\n\n" not in out[1:-2], out)
        self.assertEqual(sorted(out.split()), sorted(SYSTEM_KEYSPACES | set(KEYSPACES)), out)

    def test_describe_keyspace(self):
        for keyspace in KEYSPACES:
            with self.subTest(keyspace=keyspace):
                self.assertEqual(execute("DESCRIBE KEYSPACE %s" % keyspace), "\n" + export(keyspace) + "\n\n")

    def test_describe_tables_and_view(self):
        for what, text in [("TABLE shop.items", ITEMS), ("TABLE shop.legacy", LEGACY), ("TABLE shop.users", USERS + "\n\n" + USERS_BY_NAME),
                           ("COLUMNFAMILY magazines.magazine_publisher", KEYSPACES["magazines"][2]),
                           ("MATERIALIZED VIEW shop.users_by_name", USERS_BY_NAME)]:
            with self.subTest(what=what):
                self.assertEqual(execute("DESCRIBE %s" % what), "\n" + text + "\n\n")

    def test_describe_schema(self):
        # The keyspaces in the driver's order (a Python 2 dict's, fixed for these names), less
        # the system ones.
        order = ["shop", "part1", "part2", "part3", "magazines"]
        want = "\n" + "".join(export(k) + "\n\n" for k in order)
        self.assertEqual(execute("DESCRIBE SCHEMA"), want)

    def test_describe_cluster(self):
        self.assertEqual(execute("DESCRIBE CLUSTER"), "\nCluster: Sibyl E2E\nPartitioner: RandomPartitioner\n\n")
        # In a keyspace, also the ring: the node's one token, owned by it alone (RF 1).
        token = execute("SELECT tokens FROM system.local").split("\n")[3].strip()
        self.assertRegex(token, r"^\{'\d+'\}$")
        code, out, err = cqlsh("-k", "shop", "-e", "DESCRIBE CLUSTER")
        self.assertEqual((code, err), (0, ""), out)
        self.assertEqual(out, "\nCluster: Sibyl E2E\nPartitioner: RandomPartitioner\n\nRange ownership:\n"
                              " %39s  [%s]\n\n" % (token[2:-2], HOST))

    def test_select_formats_each_type_as_3_11s_cqlsh(self):
        out = execute("SELECT id, admin, age, joined, name, photo, prefs FROM shop.users")
        # Partitions come in token order; compare the rows as a set, the layout whole.
        lines = out.split("\n")
        want = USERS_SELECT.split("\n")
        self.assertEqual(lines[:3] + lines[5:], want[:3] + want[5:], out)
        self.assertEqual(sorted(lines[3:5]), sorted(want[3:5]), out)
        self.assertEqual(execute("SELECT name, id, age FROM shop.users_by_name WHERE name = 'Bob'"), """
 name | id                                   | age
------+--------------------------------------+-----
  Bob | 00000000-0000-0000-0000-000000000001 |  -7

(1 rows)
""")

    def test_errors_in_3_11s_words(self):
        code, out, err = cqlsh("-e", "SELECT * FROM shop.nope")
        self.assertEqual((code, out), (2, ""), err)
        self.assertEqual(err, '<stdin>:1:InvalidRequest: Error from server: code=2200 [Invalid query] '
                              'message="unconfigured table nope"\n')
        code, out, err = cqlsh("-e", "CREATE TABLE nowhere.t (k int PRIMARY KEY)")
        self.assertEqual(err, '<stdin>:1:InvalidRequest: Error from server: code=2200 [Invalid query] '
                              'message="Cannot add table \'t\' to non existing keyspace \'nowhere\'."\n')
        code, out, err = cqlsh("-e", "USE nowhere")
        self.assertEqual(err, '<stdin>:1:InvalidRequest: Error from server: code=2200 [Invalid query] '
                              'message="Keyspace \'nowhere\' does not exist"\n')
        # cqlsh's own, from the schema the driver read.
        code, out, err = cqlsh("-e", "DESCRIBE TABLE shop.nope")
        self.assertEqual(err, "<stdin>:1:Column family 'nope' not found\n")
        code, out, err = cqlsh("-e", "DESCRIBE MATERIALIZED VIEW shop.users")
        self.assertEqual(err, "<stdin>:1:Materialized view 'users' not found\n")


if __name__ == "__main__":
    unittest.main(verbosity=2)
