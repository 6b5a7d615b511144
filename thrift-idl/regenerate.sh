#!/usr/bin/env bash
# Regenerate every binding of our Cassandra Thrift IDL (thrift-idl/cassandra.thrift):
#
#   thrift-idl/src/cassandra.rs   Rust, used by the server and tools (via the thrift-idl crate)
#   tests/python/gen-py/cassandra Python, used by the Python client tests (`import cassandra`)
#
# Needs the Apache Thrift compiler 0.17.0 (`thrift --version`; Debian/Ubuntu package `thrift-compiler`)
# and python3. The Rust output must match the `thrift = "0.17"` crate, so other compiler versions are
# refused. After generation, apply_arg_defaults.py makes the Rust argument readers use the IDL default
# of arguments a client leaves out (as Cassandra's server does); see that script for why.
#
# Idempotent: output directories are rewritten from scratch, so running it twice gives the same files.
# Run from anywhere:  thrift-idl/regenerate.sh   then commit the regenerated files.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

idl=thrift-idl/cassandra.thrift
want="Thrift version 0.17.0"
have="$(thrift --version 2>/dev/null || true)"
if [[ "$have" != "$want" ]]; then
    echo "regenerate.sh: need '$want', found '${have:-no thrift compiler}'" >&2
    exit 1
fi

# Rust: one module, cassandra.rs, re-exported by thrift-idl/src/lib.rs.
thrift --gen rs -out thrift-idl/src "$idl"
python3 thrift-idl/apply_arg_defaults.py "$idl" thrift-idl/src/cassandra.rs
# The generated readers reserve a list's declared size before reading any element; a client could
# declare 2^31 elements in a tiny message. Cap the up-front reservation (the Vec still grows).
sed -i 's/Vec::with_capacity(list_ident.size as usize)/Vec::with_capacity((list_ident.size as usize).min(1024))/g' \
  thrift-idl/src/cassandra.rs

# Python: package `cassandra` (from `namespace py cassandra`) under tests/python/gen-py.
rm -rf tests/python/gen-py
mkdir -p tests/python/gen-py
thrift --gen py -out tests/python/gen-py "$idl"

echo "regenerate.sh: done; review 'git status' and commit the regenerated files"
