#!/usr/bin/env bash
# Three nodes at QUORUM with RF 3 against one node with RF 1: sibyl-stress inserts and reads
# through one node, the same client and load for both, rounds of fixed time, several runs.
# All nodes and the load generator share this machine, so a cluster write does three times the
# work of a single-node one; issue 9 asks that the three-node figure be at least 0.30 of the
# single-node one, for writes and reads. See bench/README.md.
#
# Environment (all optional):
#   KEYS=100000          distinct row keys (written once before the read rounds)
#   VALUE_SIZE=100       bytes per value, one column per row
#   CONNECTIONS=64       client connections, all to node 1
#   ROUND=8              seconds per measured round
#   RUNS=3               runs (fresh nodes each time); min/median/max over them
#   SKIP_BUILD=1         use the release binaries already built
#   KEEP=1               keep the temporary directory (configs, logs, JSON)
#   CARGO_TARGET_DIR     where the release binaries are (default: <repo>/target)
#
# Needs python3 and cargo; nodes on 127.0.0.1-3 (Linux routes all of 127.0.0.0/8 to loopback).
set -euo pipefail

KEYS=${KEYS:-100000}
VALUE_SIZE=${VALUE_SIZE:-100}
CONNECTIONS=${CONNECTIONS:-64}
ROUND=${ROUND:-8}
RUNS=${RUNS:-3}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET/release

say() { printf '== %s\n' "$*" >&2; }
die() { printf 'cluster-vs-single: %s\n' "$*" >&2; exit 1; }

command -v python3 >/dev/null 2>&1 || die "missing python3"
for v in KEYS VALUE_SIZE CONNECTIONS ROUND RUNS; do
    [[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 ]] || die "$v must be a positive whole number, not '${!v}'"
done
if [[ ${SKIP_BUILD:-} != 1 ]]; then
    say "building release binaries (cargo build --release -p server -p sibyl-stress -p sibyltool)"
    (cd "$ROOT" && cargo build --release -p server -p sibyl-stress -p sibyltool >&2)
fi
for b in sibyl sibyl-stress sibyltool; do
    [[ -x $BIN/$b ]] || die "$BIN/$b not found (build it, or set CARGO_TARGET_DIR)"
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sibyl-cluster-bench.XXXXXX")
PIDS=()
stop_nodes() {
    local pid i
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do
        for ((i = 0; i < 300; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    PIDS=()
}
cleanup() {
    stop_nodes
    if [[ ${KEEP:-} == 1 ]]; then say "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_node DIR IP SEED TOKEN: writes a configuration and starts a node; its ports go to
# NODE_THRIFT, NODE_ADMIN and NODE_STORAGE (globals: the node must be started by this shell, not a
# subshell, so that its pid is remembered for stop_nodes).
start_node() {
    local dir=$1 ip=$2 seed=$3 token=$4 thrift admin storage i
    mkdir -p "$dir"
    thrift=$(free_port "$ip")
    admin=$(free_port "$ip")
    storage=$(free_port "$ip")
    cat >"$dir/storage-conf.xml" <<XML
<Storage>
  <ClusterName>Cluster Bench</ClusterName>
  <Partitioner>org.apache.cassandra.dht.RandomPartitioner</Partitioner>
  <InitialToken>$token</InitialToken>
  <CommitLogDirectory>$dir/commitlog</CommitLogDirectory>
  <DataFileDirectories><DataFileDirectory>$dir/data</DataFileDirectory></DataFileDirectories>
  <Seeds><Seed>${seed:-$ip:$storage}</Seed></Seeds>
  <ListenAddress>$ip</ListenAddress>
  <StoragePort>$storage</StoragePort>
  <ThriftAddress>$ip</ThriftAddress>
  <ThriftPort>$thrift</ThriftPort>
  <AdminPort>$admin</AdminPort>
  <CommitLogSync>periodic</CommitLogSync>
  <CommitLogSyncPeriodInMS>1000</CommitLogSyncPeriodInMS>
  <Keyspaces/>
</Storage>
XML
    "$BIN/sibyl" --config "$dir/storage-conf.xml" >"$dir/sibyl.log" 2>&1 &
    PIDS+=($!)
    for ((i = 0; i < 600; i++)); do
        if grep -q "Listening for thrift clients on" "$dir/sibyl.log"; then
            NODE_THRIFT=$thrift NODE_ADMIN=$admin NODE_STORAGE=$storage
            return 0
        fi
        sleep 0.1
    done
    die "the node in $dir did not start within 60 s; see $dir/sibyl.log"
}

# wait_ring IP ADMIN N: until the node's `sibyltool status` shows N nodes Up/Normal (60 s).
wait_ring() {
    local i
    for ((i = 0; i < 600; i++)); do
        if (($("$BIN/sibyltool" -h "$1" -p "$2" status 2>/dev/null | grep -c '^UN ') == $3)); then return 0; fi
        sleep 0.1
    done
    die "$1 did not see $3 nodes up within 60 s"
}

# stress OUT PORT RF CL ARGS...: one sibyl-stress run against node 1, its JSON summary in OUT.
stress() {
    local out=$1 port=$2 rf=$3 cl=$4
    shift 4
    timeout $((ROUND + 300)) "$BIN/sibyl-stress" --host 127.0.0.1 --port "$port" --columns 1 \
        --num-keys "$KEYS" --threads "$CONNECTIONS" --value-size "$VALUE_SIZE" --timeout 10 \
        --replication-factor "$rf" --consistency "$cl" --json --quiet "$@" >"$out.json" 2>"$out.err" ||
        die "sibyl-stress failed (exit $?); see $out.err"
}

# measure RUN SETUP PORT RF CL: preload, then timed insert and read rounds.
measure() {
    local run=$1 setup=$2 port=$3 rf=$4 cl=$5 out=$WORK/run$1/$2
    say "run $run/$RUNS: $setup: preload of $KEYS keys"
    stress "$out-preload" "$port" "$rf" "$cl" --operation insert --distribution sequential --count "$KEYS"
    say "run $run/$RUNS: $setup: inserts for ${ROUND}s"
    stress "$out-insert" "$port" "$rf" "$cl" --operation insert --distribution uniform --duration "${ROUND}s"
    say "run $run/$RUNS: $setup: reads for ${ROUND}s"
    stress "$out-read" "$port" "$rf" "$cl" --operation read --distribution uniform --duration "${ROUND}s"
}

read -ra TOKENS < <(python3 -c 'print(" ".join(str((1 << 127) // 3 * i) for i in range(3)))')
START_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for ((run = 1; run <= RUNS; run++)); do
    mkdir -p "$WORK/run$run"
    start_node "$WORK/run$run/single" 127.0.0.1 "" "${TOKENS[0]}"
    measure "$run" single "$NODE_THRIFT" 1 ONE
    stop_nodes

    start_node "$WORK/run$run/node1" 127.0.0.1 "" "${TOKENS[0]}"
    port=$NODE_THRIFT admin=$NODE_ADMIN seed=127.0.0.1:$NODE_STORAGE
    start_node "$WORK/run$run/node2" 127.0.0.2 "$seed" "${TOKENS[1]}"
    start_node "$WORK/run$run/node3" 127.0.0.3 "$seed" "${TOKENS[2]}"
    wait_ring 127.0.0.1 "$admin" 3
    measure "$run" cluster "$port" 3 QUORUM
    stop_nodes
done

python3 - "$WORK" "$RUNS" "$START_DATE" "$LOAD_BEFORE" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import json, os, statistics, sys

work, runs, date, load_before, load_after = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
def rate(run, setup, op):
    s = json.load(open(os.path.join(work, f"run{run}", f"{setup}-{op}.json")))
    return s["op_rate"], s["p99_ms"], s["errors"]

print(f"cluster-vs-single, {date}, {os.cpu_count()} cores, load {load_before} -> {load_after}")
print(f"{'measure':<10}{'1 node RF1 ONE op/s':>22}{'3 nodes RF3 QUORUM op/s':>26}{'ratio':>8}  target")
for op in ("insert", "read"):
    ratios = []
    for run in range(1, runs + 1):
        single, s99, serr = rate(run, "single", op)
        cluster, c99, cerr = rate(run, "cluster", op)
        ratios.append(cluster / single if single else 0.0)
        print(f"{op + ' #' + str(run):<10}{single:>22,.0f}{cluster:>26,.0f}{ratios[-1]:>8.2f}"
              f"  (p99 {s99:.2f} / {c99:.2f} ms, errors {serr} / {cerr})")
    med = statistics.median(ratios)
    verdict = "met" if med >= 0.30 else "NOT met"
    print(f"{op + ' median':<10}{'':>22}{'':>26}{med:>8.2f}  >= 0.30 {verdict} (min {min(ratios):.2f}, max {max(ratios):.2f})")
PY
