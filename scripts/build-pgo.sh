#!/usr/bin/env bash
# Builds the sibyl daemon with profile-guided optimization (PGO) and prints the binary's path.
#
# A request crosses the Thrift front end, the coordinator, the storage engine, tokio and the
# allocator: far more code than a 32 KB instruction cache holds. Built plainly, a memtable read
# missed that cache about 300 times (callgrind's simulation; a Redis GET 45). Built with a
# profile of the daemon under load, the compiler lays the hot paths out together and inlines
# along them: the misses fall to 7-24 in the builds measured and the instructions by a fifth
# (docs/benchmarks.md, "29 November, morning").
#
# Three steps, each in its own target directory under PGO_DIR (the flags differ, so nothing is
# shared with the plain build):
#   1. build sibyl instrumented (-Cprofile-generate);
#   2. train it: a node on private ports and a temporary directory, driven by sibyl-stress
#      through writes (batch_mutate of five columns, insert of one), reads of one and of five
#      columns, a mixed load, range slices and counter increments, then a flush and reads from
#      SSTables, then a major compaction; the node is stopped with SIGTERM, which writes the
#      profile;
#   3. merge the profile (llvm-profdata) and build sibyl again with it (-Cprofile-use).
# sibyl-stress and sibyltool come from the plain release build (CARGO_TARGET_DIR).
#
# Usage: scripts/build-pgo.sh            (progress on stderr, the binary's path on stdout)
#   e.g. SIBYL_BIN=$(scripts/build-pgo.sh) SKIP_BUILD=1 bench/redis-vs-sibyl.sh
#
# Environment (optional): PGO_DIR=/var/tmp/sibyl-pgo, CARGO_TARGET_DIR (default <repo>/target),
# TRAIN_SECONDS=3 (per training load), TRAIN_KEYS=50000.
# Needs llvm-profdata of the LLVM that rustc uses (`rustc -vV`; on Debian bookworm, LLVM 22 is
# the package llvm-22). Installs nothing. About 12 minutes on 2 cores.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
PGO_DIR=${PGO_DIR:-/var/tmp/sibyl-pgo}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
TRAIN_SECONDS=${TRAIN_SECONDS:-3}
TRAIN_KEYS=${TRAIN_KEYS:-50000}

die() {
    printf 'build-pgo: %s\n' "$*" >&2
    exit 1
}
say() { printf 'build-pgo: %s\n' "$*" >&2; }

for v in TRAIN_SECONDS TRAIN_KEYS; do
    [[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 ]] || die "$v must be a positive whole number, not '${!v}'"
done

# llvm-profdata must read what rustc's LLVM writes: the same major version.
llvm_major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
[[ -n $llvm_major ]] || die "could not read rustc's LLVM version from 'rustc -vV'"
PROFDATA=
for candidate in "llvm-profdata-$llvm_major" "/usr/lib/llvm-$llvm_major/bin/llvm-profdata"; do
    if command -v "$candidate" >/dev/null; then
        PROFDATA=$(command -v "$candidate")
        break
    fi
done
[[ -n $PROFDATA ]] || die "needs llvm-profdata of LLVM $llvm_major, as rustc uses (Debian: apt-get install llvm-$llvm_major)"

RAW=$PGO_DIR/raw
PROFILE=$PGO_DIR/sibyl.profdata
mkdir -p "$PGO_DIR"

say "plain release build of sibyl-stress and sibyltool ($TARGET)"
(cd "$ROOT" && CARGO_TARGET_DIR=$TARGET cargo build --release --bin sibyl-stress --bin sibyltool >&2)

say "instrumented build of sibyl ($PGO_DIR/generate)"
(cd "$ROOT" && CARGO_TARGET_DIR=$PGO_DIR/generate RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$RAW" \
    cargo build --release --bin sibyl >&2)
# Build scripts ran instrumented too and left their own profiles: only the daemon's count.
rm -rf "$RAW"
mkdir -p "$RAW"

WORK=$(mktemp -d /tmp/sibyl-pgo-train.XXXXXX)
PID=
cleanup() {
    [[ -n $PID ]] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PORT=$(free_port)
ADMIN_PORT=$(free_port)
private_conf "$WORK/conf.xml" "$WORK" "$PORT" "$ADMIN_PORT" || exit 1
"$PGO_DIR/generate/release/sibyl" --config "$WORK/conf.xml" >"$WORK/server.log" 2>&1 &
PID=$!
await_log "$PID" "$WORK/server.log" "Listening for thrift clients on" ||
    die "the instrumented sibyl did not start (its log, if it exited, is above; $WORK/server.log)"

stress() {
    say "training: sibyl-stress $*"
    timeout $((TRAIN_SECONDS + 120)) "$TARGET/release/sibyl-stress" --host 127.0.0.1 --port "$PORT" \
        --num-keys "$TRAIN_KEYS" --threads 16 --value-size 100 --timeout 30 --quiet "$@" >/dev/null ||
        die "sibyl-stress $* failed (server log: $WORK/server.log)"
}
sibyltool() {
    say "training: sibyltool $*"
    timeout 300 "$TARGET/release/sibyltool" -h 127.0.0.1 -p "$ADMIN_PORT" --timeout 240 "$@" >/dev/null ||
        die "sibyltool $* failed (server log: $WORK/server.log)"
}
run=(--duration "${TRAIN_SECONDS}s" --distribution uniform)
stress --operation insert --distribution sequential --count "$TRAIN_KEYS"
stress --operation insert --write-call insert --columns 1 "${run[@]}"
stress --operation read --columns 1 "${run[@]}"
stress --operation read "${run[@]}"
stress --operation mixed "${run[@]}"
stress --operation range --range-rows 20 "${run[@]}"
stress --operation counter_add "${run[@]}"
sibyltool flush Stress
stress --operation read --columns 1 "${run[@]}"
stress --operation read "${run[@]}"
sibyltool compact Stress
stress --operation read --columns 1 "${run[@]}"

say "stopping the trained node (it writes its profile on exit)"
kill -TERM "$PID"
wait "$PID" || die "the instrumented sibyl did not exit cleanly; see $WORK/server.log"
PID=
shopt -s nullglob
raws=("$RAW"/*.profraw)
((${#raws[@]} > 0)) || die "the instrumented sibyl wrote no profile under $RAW"
"$PROFDATA" merge -o "$PROFILE" "${raws[@]}"

say "optimized build of sibyl with $PROFILE ($PGO_DIR/use)"
(cd "$ROOT" && CARGO_TARGET_DIR=$PGO_DIR/use RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$PROFILE" \
    cargo build --release --bin sibyl >&2)
echo "$PGO_DIR/use/release/sibyl"
