#!/usr/bin/env bash
# Two Sibyl builds side by side on one node: which one spends less CPU per request.
#
# Each round starts one build on a fresh data directory, pinned to CPU 1, preloads KEYS keys with
# sibyl-stress pinned to CPU 0, then measures one 8-second round of memtable reads or of inserts.
# Rounds alternate A, B, A, B... so that the machine's drift falls on both. The figure is the
# server's user and system CPU time per operation from /proc (pinning keeps the client's threads
# off the server's core, which otherwise makes the per-request cost swing by half).
#
# Usage: bench/ab-sibyl.sh A_BIN B_BIN [ROUNDS]
#   e.g. bench/ab-sibyl.sh /var/tmp/old/release/sibyl target/release/sibyl 5
#
# Environment (optional): KEYS=100000, ROUND=8 (seconds), OPS="read insert", CARGO_TARGET_DIR
# (where sibyl-stress is), WRITE_CALL=insert (or batch_mutate: the Thrift call of an insert, see
# bench/lib.sh). Needs 2 or more CPUs, python3 and taskset. Installs nothing.
set -euo pipefail

if [[ $# -lt 2 || $1 == -h || $1 == --help ]]; then
    sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 2
fi
A=$1
B=$2
ROUNDS=${3:-5}
KEYS=${KEYS:-100000}
ROUND=${ROUND:-8}
OPS=${OPS:-read insert}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
STRESS=${CARGO_TARGET_DIR:-$ROOT/target}/release/sibyl-stress
for f in "$A" "$B" "$STRESS"; do
    [[ -x $f ]] || {
        printf 'ab-sibyl: %s is not an executable (build with cargo build --release)\n' "$f" >&2
        exit 1
    }
done
command -v taskset >/dev/null || {
    echo "ab-sibyl: needs taskset (util-linux)" >&2
    exit 1
}

WORK=$(mktemp -d /tmp/sibyl-ab.XXXXXX)
PID=
cleanup() {
    [[ -n $PID ]] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# user and system clock ticks a process has used so far
ticks() { awk '{ sub(/^.*\) /, ""); print $12, $13 }' "/proc/$1/stat"; }

# one_round LABEL BIN OP: prints "LABEL OP op_rate user_us sys_us"
one_round() {
    local label=$1 bin=$2 op=$3 dir=$WORK/$1 port u0 s0 u1 s1
    rm -rf "$dir" && mkdir -p "$dir"
    port=$(free_port)
    private_conf "$dir/conf.xml" "$dir" "$port" "$(free_port)" \
        -e "s#<CommitLogSyncPeriodInMS>[0-9]*</CommitLogSyncPeriodInMS>#<CommitLogSyncPeriodInMS>1000</CommitLogSyncPeriodInMS>#" ||
        exit 1
    taskset -c 1 "$bin" --config "$dir/conf.xml" >"$dir/log" 2>&1 &
    PID=$!
    local i
    for ((i = 0; i < 600; i++)); do
        grep -q "Listening for thrift clients on" "$dir/log" && break
        kill -0 "$PID" 2>/dev/null || {
            echo "ab-sibyl: $bin exited at startup; see its log:" >&2
            cat "$dir/log" >&2
            exit 1
        }
        sleep 0.1
    done
    local -a stress=(taskset -c 0 "$STRESS" "${THRIFT_LOAD[@]}" --host 127.0.0.1 --port "$port"
        --num-keys "$KEYS" --threads 64 --value-size 100 --timeout 10 --json --quiet)
    timeout 300 "${stress[@]}" --operation insert --distribution sequential --count "$KEYS" >/dev/null 2>&1
    read -r u0 s0 < <(ticks "$PID")
    timeout $((ROUND + 60)) "${stress[@]}" --operation "$op" --distribution uniform --duration "${ROUND}s" \
        >"$dir/round.json" 2>/dev/null
    read -r u1 s1 < <(ticks "$PID")
    kill "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=
    python3 - "$dir/round.json" "$label" "$op" $((u1 - u0)) $((s1 - s0)) "$(getconf CLK_TCK)" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
label, op, user, system, tck = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
per_op = 1e6 / tck / j["ops"]
print(f"{label} {op} {j['op_rate']:.0f} {user * per_op:.2f} {system * per_op:.2f}")
PY
}

printf '%-2s %-7s %10s %8s %8s\n' build op "op/s" "user us" "sys us" >&2
for ((r = 1; r <= ROUNDS; r++)); do
    for op in $OPS; do
        for label in A B; do
            bin=$A
            [[ $label == B ]] && bin=$B
            line=$(one_round "$label" "$bin" "$op")
            echo "$line" >>"$WORK/results"
            read -r l o rate u s <<<"$line"
            printf '%-2s %-7s %10s %8s %8s   (round %d/%d)\n' "$l" "$o" "$rate" "$u" "$s" "$r" "$ROUNDS" >&2
        done
    done
done

python3 - "$WORK/results" "$A" "$B" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print(f"\nA = {sys.argv[2]}\nB = {sys.argv[3]}")
print(f"{'op':8}{'build':6}{'op/s median':>12}{'user us/op median (min-max)':>30}{'sys us/op median':>18}")
for op in dict.fromkeys(r[1] for r in rows):
    for build in "AB":
        sel = [r for r in rows if r[0] == build and r[1] == op]
        rate = statistics.median(float(r[2]) for r in sel)
        user = [float(r[3]) for r in sel]
        system = statistics.median(float(r[4]) for r in sel)
        span = f"{statistics.median(user):.2f} ({min(user):.2f}-{max(user):.2f})"
        print(f"{op:8}{build:6}{rate:12.0f}{span:>30}{system:18.2f}")
PY
