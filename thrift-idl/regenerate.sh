#!/usr/bin/env bash
# Regenerate every binding of our two Cassandra Thrift IDLs:
#
#   thrift-idl/cassandra.thrift      API 20.1.0 (Cassandra 2.1-3.11)
#     -> thrift-idl/src/cassandra.rs          Rust, `thrift_idl::*` (module `thrift_idl::cassandra`)
#     -> tests/python/gen-py/cassandra        Python, `import cassandra`
#   thrift-idl/cassandra-0.6.thrift  API 2.2.0 (Cassandra 0.6)
#     -> thrift-idl/src/cassandra_06.rs       Rust, module `thrift_idl::v06`
#     -> tests/python/gen-py-06/cassandra06   Python, `import cassandra06`
#
# Needs the Apache Thrift compiler 0.17.0 (`thrift --version`; Debian/Ubuntu package `thrift-compiler`)
# and python3. The Rust output must match the `thrift = "0.17"` crate, so other compiler versions are
# refused. After generation, postprocess_rs.py makes the Rust argument/result structs public, applies
# Thrift's wire-type rule to every reader, gives omitted arguments their IDL default, caps list
# reservations, writes identifiers without their names and makes readers and writers generic over the
# protocol; see that script for why, and for how it fails when the generated code changes shape.
#
# Idempotent: output files and directories are rewritten from scratch, so running it twice gives the
# same files. Run from anywhere:  thrift-idl/regenerate.sh   then commit the regenerated files.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

want="Thrift version 0.17.0"
have="$(thrift --version 2>/dev/null || true)"
if [[ "$have" != "$want" ]]; then
    echo "regenerate.sh: need '$want', found '${have:-no thrift compiler}'" >&2
    exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# generate IDL RUST_OUT PY_DIR
generate() {
    local idl=$1 rust_out=$2 py_dir=$3
    # The Rust generator names its file after the IDL (cassandra-0.6.thrift -> cassandra-0.6.rs),
    # not always a valid module name: generate into a scratch directory and move the one file.
    rm -rf "$tmp/rs" && mkdir -p "$tmp/rs"
    thrift --gen rs -out "$tmp/rs" "$idl"
    local generated=("$tmp"/rs/*.rs)
    if [[ ${#generated[@]} -ne 1 ]]; then
        echo "regenerate.sh: expected one .rs file from $idl, got ${generated[*]}" >&2
        exit 1
    fi
    python3 thrift-idl/postprocess_rs.py "$idl" "${generated[0]}"
    mv "${generated[0]}" "$rust_out"

    rm -rf "$py_dir"
    mkdir -p "$py_dir"
    thrift --gen py -out "$py_dir" "$idl"
}

# Python packages come from each IDL's `namespace py`: `cassandra` and `cassandra06`, distinct so
# one test can import both generations.
generate thrift-idl/cassandra.thrift thrift-idl/src/cassandra.rs tests/python/gen-py
generate thrift-idl/cassandra-0.6.thrift thrift-idl/src/cassandra_06.rs tests/python/gen-py-06

echo "regenerate.sh: done; review 'git status' and commit the regenerated files"
