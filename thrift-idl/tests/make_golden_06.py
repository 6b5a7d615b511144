"""Print the bytes the generated *Python* 0.6 client (package cassandra06) sends for a few calls.

thrift-idl/tests/v06.rs embeds this output to prove that the Rust (thrift_idl::v06) and Python
bindings of cassandra-0.6.thrift put identical bytes on the wire (binary protocol, no framing).
It imports both Python generations in one process, as interop tests of both APIs will.
Re-run after changing the IDL:  python3 thrift-idl/tests/make_golden_06.py
"""

import os
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(root, "tests", "python", "gen-py"))
sys.path.insert(0, os.path.join(root, "tests", "python", "gen-py-06"))

from thrift.protocol import TBinaryProtocol  # noqa: E402
from thrift.transport import TTransport  # noqa: E402

import cassandra.constants  # noqa: E402
import cassandra06.constants  # noqa: E402
from cassandra06 import Cassandra  # noqa: E402
from cassandra06.ttypes import (  # noqa: E402
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
    # Both generations live side by side under distinct package names.
    assert cassandra.constants.VERSION == "20.1.0", cassandra.constants.VERSION
    assert cassandra06.constants.VERSION == "2.2.0", cassandra06.constants.VERSION

    batch_mutate = encode(lambda c: c.send_batch_mutate(
        "Keyspace1",
        {"row1": {"Standard1": [
            Mutation(column_or_supercolumn=ColumnOrSuperColumn(
                column=Column(name=b"c1", value=b"v1", timestamp=1234))),
            Mutation(deletion=Deletion(timestamp=1235, predicate=SlicePredicate(column_names=[b"c2"]))),
        ]}},
        ConsistencyLevel.ZERO))
    get_range_slice = encode(lambda c: c.send_get_range_slice(
        "Keyspace1",
        ColumnParent(column_family="Super1", super_column=b"sc"),
        SlicePredicate(slice_range=SliceRange(start=b"", finish=b"", reversed=False, count=100)),
        "a", "z", 10, ConsistencyLevel.QUORUM))
    print(f"BATCH_MUTATE={batch_mutate}")
    print(f"GET_RANGE_SLICE={get_range_slice}")


if __name__ == "__main__":
    main()
