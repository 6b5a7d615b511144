#!/usr/bin/env bash
# Runs every test of the workspace: unit and property tests, crash tests, end-to-end tests that
# start real sibyl processes, and the Python interop test. Extra arguments go to `cargo test`.
# Before the tests, the habits CI enforces: rustfmt's layout and clippy without warnings.
set -euo pipefail
cd "$(dirname "$0")/.."

# The jemalloc allocator (tikv-jemalloc-sys) is built from C sources: it needs cc and make.
if ! command -v cc >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq build-essential
fi

# The network partition test runs nodes in network namespaces (`ip netns`, as root).
if ! command -v ip >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq iproute2
fi

if ! python3 -c 'import thrift, cassandra, cqlshlib' 2>/dev/null; then
    if ! python3 -m pip --version >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq python3-pip
    fi
    python3 -m pip install --quiet -r tests/python/requirements.txt
fi

# The helenus and cassandra-driver tests (tests/tests/helenus_music_app.rs, node_driver.rs) run
# Node.js clients, installed from tests/node/package-lock.json.
if ! command -v npm >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq nodejs npm
fi
if [ ! -d tests/node/node_modules/helenus ] || [ ! -d tests/node/node_modules/cassandra-driver ]; then
    (cd tests/node && npm ci --no-audit --no-fund --silent)
fi

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace --no-fail-fast "$@"
