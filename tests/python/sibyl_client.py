"""Tiny helper for Python tests: a Thrift client for Sibyl (or Cassandra) over framed binary.

Usage (with tests/python and tests/python/gen-py on sys.path, e.g. via PYTHONPATH):

    from sibyl_client import connect
    with connect("127.0.0.1", 9160, keyspace="Keyspace1") as client:
        client.describe_version()

The generated bindings live in gen-py/cassandra (regenerate with thrift-idl/regenerate.sh).
"""

import contextlib
import os
import sys

_GEN_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen-py")
if _GEN_PY not in sys.path:
    sys.path.insert(0, _GEN_PY)

from thrift.protocol import TBinaryProtocol  # noqa: E402
from thrift.transport import TSocket, TTransport  # noqa: E402

from cassandra import Cassandra  # noqa: E402


@contextlib.contextmanager
def connect(host="127.0.0.1", port=9160, keyspace=None, timeout_s=10.0):
    """Open a framed-transport, binary-protocol connection as Cassandra's clients do."""
    sock = TSocket.TSocket(host, port)
    sock.setTimeout(timeout_s * 1000.0)
    transport = TTransport.TFramedTransport(sock)
    client = Cassandra.Client(TBinaryProtocol.TBinaryProtocol(transport))
    transport.open()
    try:
        if keyspace is not None:
            client.set_keyspace(keyspace)
        yield client
    finally:
        transport.close()
