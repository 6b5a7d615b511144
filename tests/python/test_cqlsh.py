"""cqlsh from PyPI (the `cqlsh` package, unmodified, run as `python -m cqlshlib`) against a
running node: seed 001's statements as written through `cqlsh -f`, the tables it prints for
SELECT, and COPY TO / COPY FROM round trips.

The node is started by tests/tests/cqlsh.rs, which passes its native address in
SIBYL_NATIVE_HOST and SIBYL_NATIVE_PORT.
"""

import csv
import os
import subprocess
import sys
import tempfile
import unittest

from seed_001 import SEED_001, SEED_001_SELECTS

HOST = os.environ.get("SIBYL_NATIVE_HOST", "127.0.0.1")
PORT = os.environ.get("SIBYL_NATIVE_PORT", "9042")

# One cqlsh run, connection and COPY's worker processes included.
RUN_LIMIT = 120



def cqlsh(script, *options):
    """Runs cqlsh on `script` (text); its exit code, stdout and stderr."""
    with tempfile.NamedTemporaryFile("w", suffix=".cql", delete=False) as f:
        f.write(script)
    try:
        run = subprocess.run([sys.executable, "-m", "cqlshlib", HOST, PORT, "--no-color", "-f", f.name] + list(options),
                             capture_output=True, text=True, timeout=RUN_LIMIT)
    finally:
        os.unlink(f.name)
    return run.returncode, run.stdout, run.stderr


class Cqlsh(unittest.TestCase):
    def test_seed_001_through_cqlsh_f(self):
        code, out, err = cqlsh(SEED_001)
        self.assertEqual(code, 2, "cqlsh -f exits 2 after a statement failed:\n%s\n%s" % (out, err))
        # Only the statement with the missing comma fails, with Cassandra's words.
        errors = [line for line in err.splitlines() if "Error" in line or "Exception" in line]
        self.assertEqual(len(errors), 2, err)
        self.assertIn("SyntaxException: line 6:3 mismatched input 'k' expecting ')'", errors[0])
        self.assertIn("unconfigured table t", errors[1], "part3.t was never made")
        # cqlsh 6 warns on stdout that it was built for Cassandra 5.0, not the 3.11 it meets.
        lines = [line for line in out.splitlines() if not line.startswith("WARNING: cqlsh was built against")]
        self.assertEqual("\n".join(lines).strip(), SEED_001_SELECTS.strip())

    def test_copy_to_and_from_round_trip(self):
        with tempfile.TemporaryDirectory() as tmp:
            source = os.path.join(tmp, "source.csv")
            exported = os.path.join(tmp, "exported.csv")
            rows = [[str(i), "name %d, with a comma" % i, "2017-0%d-1%d 10:00:00.000000+0000" % (i % 9 + 1, i % 10),
                     "{%d, %d}" % (i, i + 1), "{'a': %d}" % i, str(i % 2 == 0), "%d.5" % i]
                    for i in range(600)]
            with open(source, "w", newline="") as f:
                csv.writer(f).writerows(rows)
            columns = "(id, name, at, tags, counts, even, score)"
            code, out, err = cqlsh("""
CREATE KEYSPACE copies WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE copies.items (id int PRIMARY KEY, name text, at timestamp, tags set<int>,
    counts map<text, int>, even boolean, score double);
COPY copies.items %s FROM '%s';
SELECT count(*) FROM copies.items;
SELECT id, name, tags, counts, even, score FROM copies.items WHERE id = 7;
COPY copies.items %s TO '%s';
""" % (columns, source, columns, exported))
            self.assertEqual(code, 0, out + err)
            self.assertIn("600 rows imported from 1 files", out)
            self.assertIn("600 rows exported to 1 files", out)
            self.assertIn(" 600\n", out, "count(*) sees every imported row")
            self.assertIn("  7 | name 7, with a comma | {7, 8} | {'a': 7} | False |   7.5", out)
            with open(exported, newline="") as f:
                back = sorted(csv.reader(f), key=lambda r: int(r[0]))
            self.assertEqual(len(back), 600)
            for want, got in zip(rows, back):
                self.assertEqual(got[:2] + got[3:], want[:2] + want[3:], "row %s" % want[0])
                # Timestamps come back in cqlsh's own format; the instant is the same.
                self.assertEqual(got[2][:19], want[2][:19], "row %s" % want[0])


if __name__ == "__main__":
    unittest.main(verbosity=2)
