"""Print the bytes the generated *Python* client sends for a few calls, as hex.

The Rust test thrift-idl/tests/wire.rs embeds this output to prove that the Rust and Python
bindings of our IDL put identical bytes on the wire (binary protocol, no framing).
Re-run after changing the IDL: PYTHONPATH=tests/python/gen-py python3 tests/python/make_golden_calls.py
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen-py"))

from thrift.protocol import TBinaryProtocol  # noqa: E402
from thrift.transport import TTransport  # noqa: E402

from cassandra import Cassandra  # noqa: E402
from cassandra.ttypes import (  # noqa: E402
    Column, ColumnOrSuperColumn, ColumnParent, ConsistencyLevel, Deletion, Mutation,
    SlicePredicate, SliceRange,
)


def encode(call):
    buf = TTransport.TMemoryBuffer()
    client = Cassandra.Client(TBinaryProtocol.TBinaryProtocol(buf))
    client._seqid = 1  # same sequence id as the first call of a fresh Rust client
    call(client)
    return buf.getvalue().hex()


def main():
    get_slice = encode(lambda c: c.send_get_slice(
        b"row1",
        ColumnParent(column_family="Standard1"),
        SlicePredicate(slice_range=SliceRange(start=b"", finish=b"", reversed=True, count=10)),
        ConsistencyLevel.QUORUM))
    batch_mutate = encode(lambda c: c.send_batch_mutate(
        {b"row1": {"Standard1": [
            Mutation(column_or_supercolumn=ColumnOrSuperColumn(
                column=Column(name=b"c1", value=b"v1", timestamp=1234, ttl=60))),
            Mutation(deletion=Deletion(timestamp=1235, predicate=SlicePredicate(column_names=[b"c2"]))),
        ]}},
        ConsistencyLevel.ANY))
    print(f"GET_SLICE={get_slice}")
    print(f"BATCH_MUTATE={batch_mutate}")


if __name__ == "__main__":
    main()
