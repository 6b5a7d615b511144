#!/usr/bin/env bash
# CQL over the native protocol against Thrift, on one Sibyl node, driven by one client.
#
# One node (pinned to CPU 1) serves both front ends. For each operation, rounds alternate
# Thrift, CQL, Thrift, CQL... so that the machine's drift falls on both. sibyl-stress (pinned
# to CPU 0) sends the same load either way: 5 columns of 34 bytes per row, KEYS keys, 32
# connections with one request in flight each. Thrift writes with batch_mutate and reads with
# get_slice; CQL executes a prepared INSERT and a prepared SELECT (skip-metadata), as
# cassandra-stress does. Each round measures the op rate, the p99 latency and the server's CPU
# time per operation (/proc). Then one paced CQL round at half its peak gives the p99 there.
#
# The figure is the ratio CQL / Thrift: median, min and max over the rounds.
#
# Usage: bench/cql-vs-thrift.sh [ROUNDS] [--json]
# Environment (optional): KEYS=100000, ROUND=8 (seconds), OPS="insert read", CARGO_TARGET_DIR
# (where sibyl and sibyl-stress are). Needs 2 or more CPUs, python3 and taskset.
set -euo pipefail

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 2
fi
ROUNDS=5
JSON=0
for arg in "$@"; do
    case $arg in
    --json) JSON=1 ;;
    *) ROUNDS=$arg ;;
    esac
done
KEYS=${KEYS:-100000}
ROUND=${ROUND:-8}
OPS=${OPS:-insert read}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
for f in "$BIN/sibyl" "$BIN/sibyl-stress"; do
    [[ -x $f ]] || {
        printf 'cql-vs-thrift: %s is not an executable (build with cargo build --release)\n' "$f" >&2
        exit 1
    }
done
command -v taskset >/dev/null || {
    echo "cql-vs-thrift: needs taskset (util-linux)" >&2
    exit 1
}

WORK=$(mktemp -d /tmp/sibyl-cql-vs-thrift.XXXXXX)
PID=
cleanup() {
    [[ -n $PID ]] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

THRIFT_PORT=$(free_port)
NATIVE_PORT=$(free_port)
private_conf "$WORK/conf.xml" "$WORK" "$THRIFT_PORT" "$(free_port)" \
    -e "s#<NativeTransportPort>9042</NativeTransportPort>#<NativeTransportPort>$NATIVE_PORT</NativeTransportPort>#"
grep -q "<NativeTransportPort>$NATIVE_PORT<" "$WORK/conf.xml" || {
    echo "cql-vs-thrift: could not set the native port (has conf/storage-conf.xml changed?)" >&2
    exit 1
}
taskset -c 1 "$BIN/sibyl" --config "$WORK/conf.xml" >"$WORK/log" 2>&1 &
PID=$!
await_log "$PID" "$WORK/log" "Listening for thrift clients on" || {
    echo "cql-vs-thrift: the node did not start; see its log above" >&2
    exit 1
}

ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$PID/stat"; }

# stress PROTOCOL ARGS...: one sibyl-stress run on CPU 0 against the node (at most 5 minutes
# more than a round), JSON on stdout.
stress() {
    local protocol=$1 port=$THRIFT_PORT
    shift
    [[ $protocol == cql ]] && port=$NATIVE_PORT
    timeout $((ROUND + 300)) taskset -c 0 "$BIN/sibyl-stress" --protocol "$protocol" --host 127.0.0.1 --port "$port" \
        --num-keys "$KEYS" --threads 32 --timeout 10 --json --quiet "$@"
}

# Both tables get every key before anything is measured.
for protocol in thrift cql; do
    stress "$protocol" --operation insert --distribution sequential --count "$KEYS" >/dev/null
done

# round PROTOCOL OP [ARGS...]: prints "op_rate p99_ms server_us_per_op errors"
round() {
    local protocol=$1 op=$2 before after
    shift 2
    before=$(ticks)
    stress "$protocol" --operation "$op" --duration "${ROUND}s" "$@" >"$WORK/round.json"
    after=$(ticks)
    python3 - "$WORK/round.json" "$before" "$after" "$(getconf CLK_TCK)" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
ticks = int(sys.argv[3]) - int(sys.argv[2])
us = ticks / int(sys.argv[4]) * 1e6 / max(s["ops"], 1)
print(f'{s["op_rate"]:.0f} {s["p99_ms"]:.3f} {us:.2f} {s["errors"]}')
EOF
}

printf '%-6s %-6s %5s %10s %8s %10s %6s\n' op proto round op/s p99_ms cpu_us/op errors >&2
: >"$WORK/rounds"
for op in $OPS; do
    for ((r = 1; r <= ROUNDS; r++)); do
        for protocol in thrift cql; do
            read -r rate p99 us errors < <(round "$protocol" "$op")
            printf '%-6s %-6s %5d %10s %8s %10s %6s\n' "$op" "$protocol" "$r" "$rate" "$p99" "$us" "$errors" >&2
            echo "$op $protocol $r $rate $p99 $us $errors" >>"$WORK/rounds"
        done
    done
    # CQL paced at half its median peak: the latency a loaded but not saturated node gives.
    half=$(awk -v op="$op" '$1 == op && $2 == "cql" { print $4 }' "$WORK/rounds" | sort -n |
        awk '{ v[NR] = $1 } END { print int(v[int((NR + 1) / 2)] / 2) }')
    read -r rate p99 us errors < <(round cql "$op" --rate "$half")
    printf '%-6s %-6s %5s %10s %8s %10s %6s   (paced at %s op/s)\n' "$op" cql half "$rate" "$p99" "$us" "$errors" "$half" >&2
    echo "$op cql-half 0 $rate $p99 $us $errors" >>"$WORK/rounds"
done

python3 - "$WORK/rounds" "$JSON" <<'EOF'
import json, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
out = {}
for op in dict.fromkeys(r[0] for r in rows):
    def pick(proto, col):
        return {int(r[2]): float(r[col]) for r in rows if r[0] == op and r[1] == proto}
    t_rate, c_rate = pick("thrift", 3), pick("cql", 3)
    t_cpu, c_cpu = pick("thrift", 5), pick("cql", 5)
    rate_ratio = [c_rate[i] / t_rate[i] for i in t_rate if i in c_rate and t_rate[i] > 0]
    cpu_ratio = [c_cpu[i] / t_cpu[i] for i in t_cpu if i in c_cpu and t_cpu[i] > 0]
    half = [r for r in rows if r[0] == op and r[1] == "cql-half"]
    summary = lambda v: {"median": round(statistics.median(v), 3), "min": round(min(v), 3), "max": round(max(v), 3)}
    out[op] = {
        "thrift_op_rate": summary(list(t_rate.values())),
        "cql_op_rate": summary(list(c_rate.values())),
        "rate_ratio_cql_over_thrift": summary(rate_ratio),
        "server_cpu_us_per_op": {"thrift": summary(list(t_cpu.values())), "cql": summary(list(c_cpu.values()))},
        "cpu_ratio_cql_over_thrift": summary(cpu_ratio),
        "cql_p99_ms_at_half_peak": float(half[0][4]) if half else None,
    }
if sys.argv[2] == "1":
    print(json.dumps(out, indent=1))
else:
    for op, s in out.items():
        r, c = s["rate_ratio_cql_over_thrift"], s["cpu_ratio_cql_over_thrift"]
        print(f'{op}: CQL/Thrift op rate {r["median"]}x (min {r["min"]}, max {r["max"]}); '
              f'server CPU per op {c["median"]}x (min {c["min"]}, max {c["max"]}); '
              f'CQL p99 at half peak {s["cql_p99_ms_at_half_peak"]} ms')
EOF
