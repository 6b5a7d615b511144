"""Tiny helper for Python tests: a Thrift client for Sibyl (or Cassandra) over framed binary.

Usage (with tests/python and tests/python/gen-py on sys.path, e.g. via PYTHONPATH):

    from sibyl_client import connect
    with connect("127.0.0.1", 9160, keyspace="Keyspace1") as client:
        client.describe_version()

The generated bindings live in gen-py/cassandra (regenerate with thrift-idl/regenerate.sh).
"""

import os
import sys

_GEN_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen-py")
if _GEN_PY not in sys.path:
    sys.path.insert(0, _GEN_PY)

from thrift.protocol import TBinaryProtocol  # noqa: E402
from thrift.transport import TSocket, TTransport  # noqa: E402

from cassandra import Cassandra  # noqa: E402


class connect:
    """Open a framed-transport, binary-protocol connection as Cassandra's clients do; a context
    manager yielding the client.

    Not a contextlib.contextmanager: the generated exceptions are immutable, and contextlib sets
    `__traceback__` on an exception leaving the block, which turned every Thrift exception
    escaping a `with connect(...)` into "TypeError: can't modify immutable instance"."""

    def __init__(self, host="127.0.0.1", port=9160, keyspace=None, timeout_s=10.0):
        sock = TSocket.TSocket(host, port)
        sock.setTimeout(timeout_s * 1000.0)
        self._transport = TTransport.TFramedTransport(sock)
        self._client = Cassandra.Client(TBinaryProtocol.TBinaryProtocol(self._transport))
        self._keyspace = keyspace

    def __enter__(self):
        self._transport.open()
        try:
            if self._keyspace is not None:
                self._client.set_keyspace(self._keyspace)
        except BaseException:
            self._transport.close()
            raise
        return self._client

    def __exit__(self, exc_type, exc, tb):
        self._transport.close()
        return False
