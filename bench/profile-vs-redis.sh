#!/usr/bin/env bash
# Where one server's CPU goes per request: Sibyl, Redis or the floor (bench/null-server speaking
# Thrift, which stores nothing) under the same load, profiled with perf.
#
# Starts a fresh server pinned to CPU 1 (Sibyl on the sample configuration with private ports and
# directories and its commit log synced every second; Redis with appendonly and appendfsync
# everysec, as bench/redis-vs-sibyl.sh runs them), preloads KEYS keys with sibyl-stress pinned to
# CPU 0, then runs ROUND seconds of uniform reads or inserts and records the server with
# `perf record -g` for PERF_SECONDS in the middle of the round. Prints the op/s, the server's CPU
# per operation from /proc, and perf's split of that CPU: kernel against user space (per shared
# object), the system calls' shares, and the top user-space symbols, each in microseconds per
# operation. Pinning keeps the client off the server's core; the kernel's share still moves by a
# quarter from round to round on this kind of machine, so compare servers or builds over several
# rounds (docs/benchmarks.md, "28 November").
#
# Usage: bench/profile-vs-redis.sh sibyl|redis|floor read|insert, or bench/profile-vs-redis.sh sibyl read_sst
#   read_sst: Sibyl's reads after `sibyltool flush`, from SSTables larger than its block cache
#   (BlockCacheSizeInMB 4, as bench/redis-vs-sibyl.sh's SSTable round).
#
# Environment (optional): KEYS=100000, ROUND=8 (seconds), PERF_SECONDS=4, TOP=25 (symbols shown),
# PIN=0 (leave server and client wherever the scheduler puts them, as bench/redis-vs-sibyl.sh does),
# SIBYL_BIN (default: the release build's), CARGO_TARGET_DIR (where sibyl-stress is),
# WRITE_CALL=insert (or batch_mutate: the Thrift call of an insert, see bench/lib.sh), KEEP=1
# (keep the directory with perf.data for perf report). Needs perf (Debian package linux-perf),
# taskset, python3 and, for redis, redis-server. Installs nothing.
set -euo pipefail

if [[ $# -ne 2 || ! $1 =~ ^(sibyl|redis|floor)$ || ! $2 =~ ^(read|insert|read_sst)$ || ($1 != sibyl && $2 == read_sst) ]]; then
    sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 2
fi
SERVER=$1
OP=$2
KEYS=${KEYS:-100000}
ROUND=${ROUND:-8}
PERF_SECONDS=${PERF_SECONDS:-4}
TOP=${TOP:-25}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
SIBYL_BIN=${SIBYL_BIN:-$BIN/sibyl}
STRESS=$BIN/sibyl-stress
PIN=${PIN:-1}
[[ $PIN == [01] ]] || { echo "profile-vs-redis: PIN must be 0 or 1, not '$PIN'" >&2; exit 2; }
# Command prefixes that put the client on CPU 0 and the server on CPU 1 (none with PIN=0);
# taskset execs its command, so $! stays the server's PID.
client_cpu=()
server_cpu=()
if [[ $PIN == 1 ]]; then
    client_cpu=(taskset -c 0)
    server_cpu=(taskset -c 1)
fi
for v in KEYS ROUND PERF_SECONDS TOP; do
    [[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 ]] || {
        echo "profile-vs-redis: $v must be a positive whole number, not '${!v}'" >&2
        exit 2
    }
done
((PERF_SECONDS + 2 <= ROUND)) || {
    echo "profile-vs-redis: PERF_SECONDS must leave 2 s of the ROUND before it" >&2
    exit 2
}
missing=()
for tool in perf taskset python3; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
[[ $SERVER == redis ]] && { command -v redis-server >/dev/null 2>&1 || missing+=(redis-server); }
[[ -x $STRESS ]] || missing+=("$STRESS (cargo build --release)")
[[ $SERVER == sibyl && ! -x $SIBYL_BIN ]] && missing+=("$SIBYL_BIN (cargo build --release)")
[[ $SERVER == floor && ! -x $BIN/null-server ]] && missing+=("$BIN/null-server (cargo build --release)")
[[ $OP == read_sst && ! -x $BIN/sibyltool ]] && missing+=("$BIN/sibyltool (cargo build --release)")
if ((${#missing[@]})); then
    printf 'profile-vs-redis: missing: %s\n' "${missing[*]}" >&2
    exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sibyl-profile.XXXXXX")
PID=
PERF_PID=
cleanup() {
    [[ -n $PERF_PID ]] && kill "$PERF_PID" 2>/dev/null
    [[ -n $PID ]] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    if [[ ${KEEP:-} == 1 ]]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PORT=$(free_port)
if [[ $SERVER == sibyl ]]; then
    ADMIN_PORT=$(free_port)
    cache=()
    [[ $OP == read_sst ]] && cache=(-e "s#<BlockCacheSizeInMB>[0-9]*</BlockCacheSizeInMB>#<BlockCacheSizeInMB>4</BlockCacheSizeInMB>#")
    private_conf "$WORK/conf.xml" "$WORK" "$PORT" "$ADMIN_PORT" \
        -e "s#<CommitLogSyncPeriodInMS>[0-9]*</CommitLogSyncPeriodInMS>#<CommitLogSyncPeriodInMS>1000</CommitLogSyncPeriodInMS>#" \
        "${cache[@]}"
    "${server_cpu[@]}" "$SIBYL_BIN" --config "$WORK/conf.xml" >"$WORK/server.log" 2>&1 &
    PID=$!
    proto=("${THRIFT_LOAD[@]}")
    ready() { grep -q "Listening for thrift clients on" "$WORK/server.log"; }
elif [[ $SERVER == floor ]]; then
    "${server_cpu[@]}" "$BIN/null-server" --port "$PORT" --protocol thrift >"$WORK/server.log" 2>&1 &
    PID=$!
    proto=("${THRIFT_LOAD[@]}")
    ready() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }
else
    "${server_cpu[@]}" redis-server --bind 127.0.0.1 --port "$PORT" --dir "$WORK" --appendonly yes \
        --appendfsync everysec --save "" --daemonize no --logfile "$WORK/server.log" >/dev/null 2>&1 &
    PID=$!
    proto=(--protocol resp)
    ready() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }
fi
for ((i = 0; i < 600; i++)); do
    ready && break
    kill -0 "$PID" 2>/dev/null || {
        echo "profile-vs-redis: the $SERVER server exited at startup; see $WORK/server.log" >&2
        KEEP=1
        exit 1
    }
    sleep 0.1
done
ready || {
    echo "profile-vs-redis: the $SERVER server did not start within 60 s" >&2
    exit 1
}

stress=("${client_cpu[@]}" "$STRESS" "${proto[@]}" --host 127.0.0.1 --port "$PORT" --num-keys "$KEYS"
    --threads 64 --value-size 100 --timeout 10 --json --quiet)
timeout 300 "${stress[@]}" --operation insert --distribution sequential --count "$KEYS" >/dev/null 2>&1 ||
    { echo "profile-vs-redis: the preload failed" >&2; exit 1; }
if [[ $OP == read_sst ]]; then
    timeout 180 "$BIN/sibyltool" -h 127.0.0.1 -p "$ADMIN_PORT" --timeout 120 flush Stress >"$WORK/flush.log" 2>&1 ||
        { echo "profile-vs-redis: sibyltool flush failed; see $WORK/flush.log" >&2; KEEP=1; exit 1; }
fi
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
t0=$(ticks "$PID")
(
    sleep $(((ROUND - PERF_SECONDS) / 2))
    exec perf record -q -F 1999 -g -p "$PID" -o "$WORK/perf.data" -- sleep "$PERF_SECONDS" >/dev/null 2>&1
) &
PERF_PID=$!
timeout $((ROUND + 60)) "${stress[@]}" --operation "${OP%_sst}" --distribution uniform --duration "${ROUND}s" \
    >"$WORK/round.json" 2>/dev/null || { echo "profile-vs-redis: the round failed" >&2; exit 1; }
t1=$(ticks "$PID")
wait "$PERF_PID" || true
PERF_PID=

us_per_op=$(python3 - "$WORK/round.json" "$t0" "$t1" "$(getconf CLK_TCK)" "$SERVER" "$OP" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
cpu = (int(sys.argv[3]) - int(sys.argv[2])) / int(sys.argv[4])
per = cpu * 1e6 / s["ops"]
print(f"{sys.argv[5]} {sys.argv[6]}: {s['op_rate']:.0f} op/s, server CPU {per:.2f} us/op, "
      f"client CPU {s['client_cpu_s'] * 1e6 / s['ops']:.2f} us/op, p99 {s['p99_ms']} ms", file=sys.stderr)
print(f"{per:.4f}")
PY
)
# Percentages of perf's samples, scaled to the round's CPU per operation.
scale() { awk -v t="$us_per_op" '{ pct = $1; sub(/%/, "", pct); $1 = ""; printf "%7.3f us %s\n", pct * t / 100, $0 }'; }
report() { perf report -i "$WORK/perf.data" --stdio -g none "$@" 2>/dev/null | grep -v '^#' | grep -v '^$'; }
echo "-- by shared object (kernel = [kernel.kallsyms])"
report --no-children --sort dso | scale
echo "-- system calls and the kernel's network paths, with what they call"
report --children --sort sym |
    grep -E '\[k\] (__x64_sys_[a-z_0-9]+|tcp_sendmsg|tcp_recvmsg|handle_softirqs|tcp_v4_rcv|do_epoll_wait)$' |
    awk '{ $2 = ""; print }' | scale
echo "-- top user-space symbols (self)"
report --no-children --sort dso,sym | grep -v 'kernel.kallsyms' | head -n "$TOP" | scale
