"""cqlsh from PyPI (`python -m cqlshlib`, unmodified) against three nodes: seed 001 run through
`cqlsh -f` on node 1 with its keyspaces at replication factor 3, then its first two SELECTs
(Q1 and Q2) through nodes 2 and 3 at CONSISTENCY QUORUM and ALL, each whole output compared
with what cqlsh prints for Cassandra 3.11's answers.

tests/tests/cql_three_nodes.rs starts the cluster and passes the nodes' native addresses, in
order, as SIBYL_NATIVE_HOSTS (`host:port,host:port,host:port`).
"""

import os
import subprocess
import sys
import tempfile
import unittest

from seed_001 import SEED_001, SEED_001_SELECTS

NODES = [tuple(a.rsplit(":", 1)) for a in os.environ.get("SIBYL_NATIVE_HOSTS", "").split(",") if a]

# One cqlsh run, its connection included.
RUN_LIMIT = 120

# Seed 001 with every keyspace on the three nodes.
SEED_AT_RF_3 = SEED_001.replace("'replication_factor': 1", "'replication_factor': 3")

Q1 = "SELECT id, name, publicationFrequency FROM magazines.magazine_name WHERE id = 2;"
Q2 = "SELECT * FROM magazines.magazine_publisher WHERE publisher = 'Acme';"


def cqlsh(node, script):
    """Runs cqlsh against `node` (host, port) on `script`; its exit code, stdout and stderr."""
    host, port = node
    with tempfile.NamedTemporaryFile("w", suffix=".cql", delete=False) as f:
        f.write(script)
    try:
        run = subprocess.run([sys.executable, "-m", "cqlshlib", host, port, "--no-color", "-f", f.name],
                             capture_output=True, text=True, timeout=RUN_LIMIT)
    finally:
        os.unlink(f.name)
    return run.returncode, run.stdout, run.stderr


def printed(out):
    """stdout without cqlsh 6's warning that it was built for Cassandra 5.0."""
    lines = [line for line in out.splitlines() if not line.startswith("WARNING: cqlsh was built against")]
    return "\n".join(lines).strip()


class CqlshOnThreeNodes(unittest.TestCase):
    def test_seed_001_written_through_one_node_reads_the_same_through_the_others(self):
        self.assertEqual(len(NODES), 3, "SIBYL_NATIVE_HOSTS names three nodes")
        code, out, err = cqlsh(NODES[0], SEED_AT_RF_3)
        self.assertEqual(code, 2, "cqlsh -f exits 2 after a statement failed:\n%s\n%s" % (out, err))
        self.assertIn("SyntaxException: line 6:3 mismatched input 'k' expecting ')'", err)
        self.assertEqual(printed(out), SEED_001_SELECTS.strip())

        # Q1's and Q2's tables are the first two of the seed's SELECTs, as cqlsh printed them.
        blocks = SEED_001_SELECTS.strip("\n").split("\n\n")
        q1_q2 = "\n\n".join(blocks[:4])
        for node in NODES[1:]:
            for level in ["QUORUM", "ALL"]:
                code, out, err = cqlsh(node, "CONSISTENCY %s;\n%s\n%s\n" % (level, Q1, Q2))
                self.assertEqual((code, err), (0, ""), "%s at %s:\n%s" % (node, level, out))
                self.assertEqual(printed(out), "Consistency level set to %s.\n\n%s" % (level, q1_q2),
                                 "%s at %s" % (node, level))


if __name__ == "__main__":
    unittest.main(verbosity=2)
