"""A sibyl process for the Python tests, started the way the Rust harness does it: a
storage-conf.xml in a temporary directory, free ports on 127.0.0.1, output in sibyl.log there,
bounded waits.

    from sibyl_node import Node
    node = Node(binary, cluster="Python Interop", partitioner=BYTE_ORDERED)
    ... node.port (Thrift), node.admin_port, node.conf, node.log() ...
    code = node.stop()   # SIGTERM, then the exit code
"""

import os
import signal
import socket
import subprocess
import tempfile
import time

READY_LINE = "Listening for thrift clients on"
START_TIMEOUT_S = 30
STOP_TIMEOUT_S = 30

CONF = """<?xml version="1.0" encoding="UTF-8"?>
<Storage>
  <ClusterName>{cluster}</ClusterName>
  <AutoBootstrap>false</AutoBootstrap>
  <Partitioner>{partitioner}</Partitioner>
  <InitialToken></InitialToken>
  <CommitLogDirectory>{dir}/commitlog</CommitLogDirectory>
  <DataFileDirectories><DataFileDirectory>{dir}/data</DataFileDirectory></DataFileDirectories>
  <SavedCachesDirectory>{dir}/saved_caches</SavedCachesDirectory>
  <Seeds><Seed>127.0.0.1</Seed></Seeds>
  <ListenAddress>127.0.0.1</ListenAddress>
  <StoragePort>{storage_port}</StoragePort>
  <ThriftAddress>127.0.0.1</ThriftAddress>
  <ThriftPort>{port}</ThriftPort>
  <AdminPort>{admin_port}</AdminPort>
  <!-- These tests speak Thrift only; a native port would be 9042 for every node. -->
  <StartNativeTransport>false</StartNativeTransport>
  <CommitLogSync>periodic</CommitLogSync>
  <CommitLogSyncPeriodInMS>1000</CommitLogSyncPeriodInMS>
  {keyspaces}
</Storage>
"""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Node:
    """A sibyl process in a temporary directory: `keyspaces` is the config's `<Keyspaces>`
    element, `prefix` names the directory."""

    def __init__(self, binary, cluster, partitioner, keyspaces="<Keyspaces/>", prefix="sibyl-py-"):
        self.tmp = tempfile.TemporaryDirectory(prefix=prefix)
        self.dir = self.tmp.name
        for sub in ("data", "commitlog", "saved_caches"):
            os.makedirs(os.path.join(self.dir, sub))
        self.port = free_port()
        self.admin_port = free_port()
        self.conf = os.path.join(self.dir, "storage-conf.xml")
        with open(self.conf, "w") as f:
            f.write(CONF.format(dir=self.dir, port=self.port, storage_port=free_port(), admin_port=self.admin_port,
                                cluster=cluster, partitioner=partitioner, keyspaces=keyspaces))
        self.log_path = os.path.join(self.dir, "sibyl.log")
        self.log_file = open(self.log_path, "wb")
        env = dict(os.environ, NO_COLOR="1")
        env.setdefault("SIBYL_LOG", "info")
        self.proc = subprocess.Popen(
            [binary, "--config", self.conf], cwd=self.dir, stdin=subprocess.DEVNULL,
            stdout=self.log_file, stderr=subprocess.STDOUT, env=env,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while READY_LINE not in self.log():
            if self.proc.poll() is not None:
                raise RuntimeError(f"sibyl exited ({self.proc.returncode}) before serving:\n{self.log()}")
            if time.monotonic() > deadline:
                self.proc.kill()
                self.proc.wait(STOP_TIMEOUT_S)
                raise RuntimeError(f"sibyl did not log {READY_LINE!r} in {START_TIMEOUT_S} s:\n{self.log()}")
            time.sleep(0.025)

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(STOP_TIMEOUT_S)
                raise RuntimeError(f"sibyl ignored SIGTERM for {STOP_TIMEOUT_S} s:\n{self.log()}")
        self.log_file.close()
        code = self.proc.returncode
        self.tmp.cleanup()
        return code
