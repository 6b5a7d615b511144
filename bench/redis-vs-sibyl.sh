#!/usr/bin/env bash
# Redis vs Sibyl: writes and reads of N keys with 100-byte values from 64 connections, one
# request per round trip, both servers on 127.0.0.1 with durable writes fsynced about once a
# second. See bench/README.md for what is compared and how to read the table.
#
# Environment (all optional):
#   N=200000            keys written, then the number of reads
#   VALUE_SIZE=100      bytes per value
#   CONCURRENCY=64      client connections
#   SKIP_BUILD=1        use the existing release binaries instead of running cargo build
#   KEEP=1              keep the temporary directory (logs, data) for inspection
#   GRAPH=report.html   also append Sibyl's two runs to this sibyl-stress HTML report
#   CARGO_TARGET_DIR    where the release binaries are (default: <repo>/target)
#
# Installs nothing. Needs redis-server and redis-benchmark (Debian: redis-server and
# redis-tools), python3 (to read the JSON and CSV results) and cargo.
set -euo pipefail

N=${N:-200000}
VALUE_SIZE=${VALUE_SIZE:-100}
CONCURRENCY=${CONCURRENCY:-64}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET/release

say() { printf '== %s\n' "$*" >&2; }
die() { printf 'redis-vs-sibyl: %s\n' "$*" >&2; exit 1; }

missing=()
for tool in redis-server redis-benchmark python3 cargo; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if ((${#missing[@]})); then
    printf 'redis-vs-sibyl: missing: %s\n' "${missing[*]}" >&2
    printf 'On Debian/Ubuntu: sudo apt-get install redis-server redis-tools python3\n' >&2
    exit 1
fi
[[ $N =~ ^[0-9]+$ && $N -gt 0 ]] || die "N must be a positive whole number, not '$N'"

if [[ ${SKIP_BUILD:-} != 1 ]]; then
    say "building release binaries (cargo build --release --bin sibyl --bin sibyl-stress)"
    (cd "$ROOT" && cargo build --release --bin sibyl --bin sibyl-stress)
fi
for b in sibyl sibyl-stress; do
    [[ -x $BIN/$b ]] || die "$BIN/$b not found (build it, or set CARGO_TARGET_DIR)"
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sibyl-bench.XXXXXX")
REDIS_PID=
SIBYL_PID=
stop_pid() {
    local pid=$1
    [[ -n $pid ]] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 300); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}
cleanup() {
    stop_pid "$SIBYL_PID"
    stop_pid "$REDIS_PID"
    if [[ ${KEEP:-} == 1 ]]; then
        say "kept $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until something accepts connections on 127.0.0.1:$1 (at most $2 seconds).
wait_port() {
    local port=$1 limit=$2 i
    for ((i = 0; i < limit * 10; i++)); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    return 1
}

# CPU time (user + system, in clock ticks) a process has used so far; 0 where /proc is missing.
cpu_ticks() {
    awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0
}
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)

# ---------------------------------------------------------------- Redis
REDIS_PORT=$(free_port)
mkdir -p "$WORK/redis"
say "starting redis-server on 127.0.0.1:$REDIS_PORT (appendonly, fsync everysec)"
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$WORK/redis" \
    --appendonly yes --appendfsync everysec --save "" \
    --daemonize no --logfile "$WORK/redis.log" &
REDIS_PID=$!
wait_port "$REDIS_PORT" 30 || die "redis-server did not start; see $WORK/redis.log"

# SET and GET run separately so the server's CPU time can be read around each.
for t in set get; do
    say "redis-benchmark -t $t -n $N -r $N -d $VALUE_SIZE -c $CONCURRENCY -P 1"
    before=$(cpu_ticks "$REDIS_PID")
    redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -t "$t" -n "$N" -r "$N" -d "$VALUE_SIZE" \
        -c "$CONCURRENCY" -P 1 --csv >"$WORK/redis-$t.csv"
    echo $(($(cpu_ticks "$REDIS_PID") - before)) >"$WORK/redis-$t.ticks"
done
stop_pid "$REDIS_PID"
REDIS_PID=

# ---------------------------------------------------------------- Sibyl
SIBYL_PORT=$(free_port)
ADMIN_PORT=$(free_port)
STORAGE_PORT=$(free_port)
mkdir -p "$WORK/sibyl"
CONF=$WORK/sibyl/storage-conf.xml
# Same schema and settings as the sample, on private ports and directories; the commit log
# is synced every second like Redis' appendfsync everysec (the sample says 10 s).
sed -e "s#<ThriftPort>9160</ThriftPort>#<ThriftPort>$SIBYL_PORT</ThriftPort>#" \
    -e "s#<AdminPort>7199</AdminPort>#<AdminPort>$ADMIN_PORT</AdminPort>#" \
    -e "s#<StoragePort>7000</StoragePort>#<StoragePort>$STORAGE_PORT</StoragePort>#" \
    -e "s#<CommitLogSyncPeriodInMS>[0-9]*</CommitLogSyncPeriodInMS>#<CommitLogSyncPeriodInMS>1000</CommitLogSyncPeriodInMS>#" \
    -e "s#var/lib/sibyl/#$WORK/sibyl/#g" \
    "$ROOT/conf/storage-conf.xml" >"$CONF"
grep -q "<ThriftPort>$SIBYL_PORT</ThriftPort>" "$CONF" || die "could not set the Thrift port in $CONF"
grep -q "$WORK/sibyl/data" "$CONF" || die "could not set the data directory in $CONF"

start_sibyl() {
    local log=$WORK/sibyl-$1.log i
    "$BIN/sibyl" --config "$CONF" >"$log" 2>&1 &
    SIBYL_PID=$!
    for ((i = 0; i < 600; i++)); do
        if grep -q "Listening for thrift clients on" "$log"; then return 0; fi
        kill -0 "$SIBYL_PID" 2>/dev/null || die "sibyl exited during startup; see $log"
        sleep 0.1
    done
    die "sibyl did not start within 60 s; see $log"
}

GRAPH_ARGS=()
[[ -n ${GRAPH:-} ]] && GRAPH_ARGS=(--graph "$GRAPH")
stress() {
    "$BIN/sibyl-stress" --host 127.0.0.1 --port "$SIBYL_PORT" --num-keys "$N" --count "$N" \
        --threads "$CONCURRENCY" --value-size "$VALUE_SIZE" --columns 1 --json "${GRAPH_ARGS[@]}" "$@"
}

say "starting sibyl on 127.0.0.1:$SIBYL_PORT"
start_sibyl 1
say "sibyl-stress --operation insert (sequential keys: each of the $N keys written once)"
before=$(cpu_ticks "$SIBYL_PID")
stress --operation insert --distribution sequential --title "sibyl insert" >"$WORK/sibyl-insert.json"
echo $(($(cpu_ticks "$SIBYL_PID") - before)) >"$WORK/sibyl-insert.ticks"

# Reads should come from SSTables, not only from the memtable the inserts filled.
flushed=
if [[ -x $BIN/sibyltool ]]; then
    say "flushing with sibyltool"
    if "$BIN/sibyltool" -h 127.0.0.1 -p "$ADMIN_PORT" flush Stress >"$WORK/flush.log" 2>&1; then
        flushed=sibyltool
    else
        say "sibyltool flush failed ($(tail -1 "$WORK/flush.log")); restarting instead"
    fi
fi
if [[ -z $flushed ]]; then
    say "flushing by restarting sibyl (SIGTERM flushes memtables on shutdown)"
    stop_pid "$SIBYL_PID"
    SIBYL_PID=
    grep -q "shutdown complete" "$WORK/sibyl-1.log" || die "sibyl did not shut down cleanly; see $WORK/sibyl-1.log"
    start_sibyl 2
    flushed=restart
fi
SSTABLES=$(find "$WORK/sibyl/data/Stress" -name '*Standard1*-Data.db' 2>/dev/null | wc -l)
say "Stress.Standard1 has $SSTABLES SSTable(s) before the read phase"

say "sibyl-stress --operation read (uniform keys)"
before=$(cpu_ticks "$SIBYL_PID")
stress --operation read --distribution uniform --title "sibyl read" >"$WORK/sibyl-read.json"
echo $(($(cpu_ticks "$SIBYL_PID") - before)) >"$WORK/sibyl-read.ticks"
stop_pid "$SIBYL_PID"
SIBYL_PID=

# ---------------------------------------------------------------- table
python3 - "$WORK" "$N" "$VALUE_SIZE" "$CONCURRENCY" "$flushed" "$CLK_TCK" "$(nproc 2>/dev/null || echo '?')" <<'PY'
import csv, json, os, sys

work, n, size, conc, flushed, tck, cores = sys.argv[1:8]
n, tck = int(n), int(tck)

def redis_row(t):
    with open(os.path.join(work, f"redis-{t}.csv")) as f:
        for row in csv.DictReader(f):
            return row
    return {}

def us_per_op(name):
    ticks = int(open(os.path.join(work, name + ".ticks")).read().strip() or 0)
    return ticks / tck * 1e6 / n if ticks > 0 else float("nan")

print(f"\nN={n} keys, {size}-byte values, {conc} connections, no pipelining, {cores} cores; "
      f"Sibyl memtables flushed by {flushed} before reads")
print("server CPU = user+system time of the server process per operation (less sensitive to other load)\n")
head = (f"{'op':<13}{'Redis op/s':>11}{'Sibyl op/s':>11}{'Sibyl/Redis':>12}{'target':>7}"
        f"{'Redis p99':>10}{'Sibyl p99':>10}{'Redis CPU':>10}{'Sibyl CPU':>10}{'errors':>7}")
print(head)
print("-" * len(head))
for label, t, name, target in (("insert/SET", "set", "sibyl-insert", 1.0), ("read/GET", "get", "sibyl-read", 0.8)):
    r = redis_row(t)
    s = json.load(open(os.path.join(work, name + ".json")))
    rrate = float(r.get("rps", "nan"))
    ratio = s["op_rate"] / rrate if rrate > 0 else float("nan")
    verdict = "meets target" if ratio >= target else "below target"
    print(f"{label:<13}{rrate:>11.0f}{s['op_rate']:>11.0f}{ratio:>11.2f}x{'>=' + str(target):>7}"
          f"{float(r.get('p99_latency_ms', 'nan')):>7.2f} ms{s['p99_ms']:>7.2f} ms"
          f"{us_per_op('redis-' + t):>7.1f} us{us_per_op(name):>7.1f} us{s['errors']:>7}  {verdict}")
    if s.get("aborted") or s.get("errors"):
        print(f"  Sibyl {name}: {s['errors']} errors {s.get('error_kinds')} {s.get('aborted') or ''}")
PY
