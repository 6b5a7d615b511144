#!/bin/sh
# Runs the Python tests against a sibyl binary: the 20.1.0 interop and range-ghost tests, then the 0.6 API's.
# Usage: tests/python/run.sh [path/to/sibyl]   (default: $SIBYL_BIN, else target/debug/sibyl)
# Needs: python3 -m pip install -r tests/python/requirements.txt
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:-${SIBYL_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/sibyl}}
if [ ! -x "$bin" ]; then
    echo "sibyl binary not found at $bin (build it with: cargo build --bin sibyl)" >&2
    exit 2
fi
SIBYL_BIN=$bin "${PYTHON:-python3}" "$here/test_interop.py"
SIBYL_BIN=$bin SIBYLTOOL_BIN=${SIBYLTOOL_BIN:-$(dirname "$bin")/sibyltool} "${PYTHON:-python3}" "$here/test_range_ghosts.py"
SIBYL_BIN=$bin exec "${PYTHON:-python3}" "$here/test_v06.py"
