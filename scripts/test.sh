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

# cqlsh 5.0.4 (Cassandra 3.x's own cqlsh; tests/tests/cqlsh_5.rs) runs under Python 2.7 only:
# its pinned packages go to a directory outside the checkout, kept between runs and installed
# again only when tests/python/requirements-py27.txt changes. Without Python 2.7 nothing is
# installed and that test fails, saying how to get it.
PY27_DIR=${SIBYL_PY27_DIR:-/var/tmp/sibyl-py27}
PY27=""
for candidate in ${SIBYL_PY27:-} /root/.pyenv/versions/2.7.18/bin/python python2.7; do
    if "$candidate" -c 'import sys; assert sys.version_info[:2] == (2, 7)' >/dev/null 2>&1; then
        PY27=$candidate
        break
    fi
done
if [ -z "$PY27" ]; then
    echo "warning: no Python 2.7 (pyenv's 2.7.18 or python2.7 on PATH); tests/tests/cqlsh_5.rs will fail." >&2
    echo "         Install one (e.g. \`pyenv install 2.7.18\`) or set SIBYL_PY27." >&2
elif ! cmp -s tests/python/requirements-py27.txt "$PY27_DIR/requirements-py27.txt"; then
    rm -rf "$PY27_DIR"
    CASS_DRIVER_NO_CYTHON=1 CASS_DRIVER_NO_EXTENSIONS=1 "$PY27" -m pip install --quiet --no-warn-script-location \
        --no-deps --target "$PY27_DIR" -r tests/python/requirements-py27.txt
    # Written last: a marker that the whole set is in.
    cp tests/python/requirements-py27.txt "$PY27_DIR/requirements-py27.txt"
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
