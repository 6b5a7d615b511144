"""Three nodes through the DataStax Python driver, unmodified: it learns the ring from
system.local and system.peers, sends each statement to a replica of its partition
(token-aware routing), and keeps a QUORUM load running while one node is killed.

Started by tests/tests/native_protocol_three_nodes.rs, which passes the nodes' native
addresses (SIBYL_NATIVE_HOSTS, all on SIBYL_NATIVE_PORT) and the process to kill
(SIBYL_VICTIM_PID, the node at SIBYL_VICTIM_HOST). For each key of the RF 1 table it prints
`ROUTED <key> <host>` (on stderr, unittest's stream), which the Rust side checks against the
server's own placement (sibyltool getendpoints).
"""

import os
import signal
import sys
import time
import unittest

from cassandra import ConsistencyLevel
from cassandra.cluster import Cluster, ExecutionProfile, EXEC_PROFILE_DEFAULT
from cassandra.policies import RoundRobinPolicy, TokenAwarePolicy

HOSTS = os.environ["SIBYL_NATIVE_HOSTS"].split(",")
PORT = int(os.environ["SIBYL_NATIVE_PORT"])
VICTIM_PID = int(os.environ["SIBYL_VICTIM_PID"])
VICTIM = os.environ["SIBYL_VICTIM_HOST"]

# Bounds of the load around the kill: operations before it, and how long it goes on after.
BEFORE_KILL = 300
AFTER_DOWN = 5.0
LOAD_LIMIT = 90.0


class ThreeNodes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        policy = TokenAwarePolicy(RoundRobinPolicy(), shuffle_replicas=False)
        profile = ExecutionProfile(load_balancing_policy=policy, request_timeout=30)
        cls.cluster = Cluster([HOSTS[0]], port=PORT, protocol_version=4, connect_timeout=20,
                              execution_profiles={EXEC_PROFILE_DEFAULT: profile})
        cls.session = cls.cluster.connect()

    @classmethod
    def tearDownClass(cls):
        cls.cluster.shutdown()

    def test_a_token_aware_routing_reaches_the_replica(self):
        hosts = sorted(h.endpoint.address for h in self.cluster.metadata.all_hosts())
        self.assertEqual(hosts, sorted(HOSTS), "the driver learns every node from system.peers")
        self.assertTrue(all(h.is_up for h in self.cluster.metadata.all_hosts()))
        self.assertEqual(len(self.cluster.metadata.token_map.ring), 3)
        s = self.session
        s.execute("CREATE KEYSPACE routing WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE routing.kv (k text PRIMARY KEY, v int)")
        insert = s.prepare("INSERT INTO routing.kv (k, v) VALUES (?, ?)")
        select = s.prepare("SELECT v FROM routing.kv WHERE k = ?")
        coordinators = set()
        for i in range(30):
            key = "key%d" % i
            bound = insert.bind((key, i))
            replicas = self.cluster.metadata.get_replicas("routing", bound.routing_key)
            self.assertEqual(len(replicas), 1, key)
            rs = s.execute(bound)
            host = rs.response_future.coordinator_host
            self.assertEqual(host, replicas[0], "%s went to %s, not its replica" % (key, host))
            coordinators.add(host.endpoint.address)
            self.assertEqual(s.execute(select, (key,)).one().v, i)
            # On unittest's stream, whole lines, so the two never interleave.
            print("ROUTED %s %s" % (key, replicas[0].endpoint.address), file=sys.stderr, flush=True)
        self.assertEqual(len(coordinators), 3, "thirty keys spread over every node")

    def test_b_a_quorum_load_goes_on_while_a_node_is_killed(self):
        s = self.session
        s.execute("CREATE KEYSPACE load WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
        s.execute("CREATE TABLE load.kv (k int PRIMARY KEY, v text)")
        insert = s.prepare("INSERT INTO load.kv (k, v) VALUES (?, ?)")
        insert.consistency_level = ConsistencyLevel.QUORUM
        insert.is_idempotent = True
        select = s.prepare("SELECT v FROM load.kv WHERE k = ?")
        select.consistency_level = ConsistencyLevel.QUORUM
        select.is_idempotent = True

        victim = [h for h in self.cluster.metadata.all_hosts() if h.endpoint.address == VICTIM][0]
        written = 0
        killed_at = down_at = None
        started = time.monotonic()
        while True:
            now = time.monotonic()
            self.assertLess(now - started, LOAD_LIMIT, "the driver never saw %s go down" % VICTIM)
            if written == BEFORE_KILL:
                os.kill(VICTIM_PID, signal.SIGKILL)
                killed_at = now
            if killed_at is not None and down_at is None and not victim.is_up:
                down_at = now
            if down_at is not None and now - down_at > AFTER_DOWN:
                break
            value = "v%d" % written
            s.execute(insert, (written, value))
            self.assertEqual(s.execute(select, (written,)).one().v, value, "key %d" % written)
            written += 1
        print("LOAD %d operations, %d after the kill; the driver saw the node down after %.1f s"
              % (2 * written, 2 * (written - BEFORE_KILL), down_at - killed_at), file=sys.stderr, flush=True)
        for k in range(written):
            self.assertEqual(s.execute(select, (k,)).one().v, "v%d" % k, "key %d after the load" % k)


if __name__ == "__main__":
    unittest.main(verbosity=2)
