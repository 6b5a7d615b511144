#!/usr/bin/env bash
# Redis vs Sibyl with one load generator: sibyl-stress speaks RESP to Redis (SET/GET) and
# Thrift to Sibyl (insert/get_slice of one 100-byte column), with the same runner, keys,
# value sizes, connections (one request in flight each, no pipelining) and round lengths.
# Rounds are interleaved between the two servers, RUNS times, each run on fresh servers.
# See bench/README.md for what each measure means and how to read the tables.
#
# Usage: bench/redis-vs-sibyl.sh [--json]
#   --json   print the figures as one JSON document on stdout (the tables go to stderr)
#
# Environment (all optional):
#   KEYS=100000          keys preloaded, and the key space of every round
#   VALUE_SIZE=100       bytes per value
#   CONNECTIONS=64       client connections
#   ROUND=8              seconds per measured round
#   RUNS=5               runs (fresh servers each)
#   BLOCK_CACHE_MB=4     Sibyl's BlockCacheSizeInMB, lowered from the sample's 64 so that the
#                        flushed data set is larger than the cache in the SSTable round
#   DISK_ACCESS=auto     Sibyl's DiskAccessMode: auto (the sample's; mmap on 64-bit, so the
#                        SSTable round reads the page cache in place and the block cache holds
#                        only key-cache entries) or standard (pread through the block cache)
#   EVENT_LOOPS=0        Sibyl's ThriftEventLoops (0: the sample's default, half the cores)
#   WRITE_CALL=insert    the Thrift call of Sibyl's inserts: insert (of one column, Redis' SET's
#                        counterpart) or batch_mutate (sibyl-stress's default)
#   HALF_PEAK=1          also run the half-peak-rate rounds (0 skips them)
#   FLOOR=1              also measure bench/null-server in the same rounds (0 skips it), once
#                        speaking RESP and once Thrift as Sibyl does: a server that stores
#                        nothing, one thread on a tokio runtime as each of Sibyl's event loops
#                        is, one read and one write per request. Its rate against Redis is the
#                        most any server built this way reaches on this machine with this
#                        client: the physical limit the ratios sit under.
#   SKIP_BUILD=1         use the existing release binaries instead of running cargo build
#   KEEP=1               keep the temporary directory (logs, data, raw JSON) for inspection
#   CARGO_TARGET_DIR     where the release binaries are (default: <repo>/target)
#   PGO=1                measure the daemon built with profile-guided optimization: builds
#                        it with scripts/build-pgo.sh (about 12 minutes; needs llvm-profdata of
#                        rustc's LLVM) unless SIBYL_BIN names one already built
#   SIBYL_BIN=PATH       the sibyl daemon to measure (default: the release build's), e.g. an
#                        older commit's build, to compare two versions with the same client
#
# Installs nothing. Needs redis-server (Debian package redis-server), python3 and cargo.
set -euo pipefail

KEYS=${KEYS:-100000}
VALUE_SIZE=${VALUE_SIZE:-100}
CONNECTIONS=${CONNECTIONS:-64}
ROUND=${ROUND:-8}
RUNS=${RUNS:-5}
BLOCK_CACHE_MB=${BLOCK_CACHE_MB:-4}
DISK_ACCESS=${DISK_ACCESS:-auto}
HALF_PEAK=${HALF_PEAK:-1}
FLOOR=${FLOOR:-1}
EVENT_LOOPS=${EVENT_LOOPS:-0}
JSON=0
for arg in "$@"; do
    case $arg in
    --json) JSON=1 ;;
    -h | --help)
        sed -n '2,32p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        printf 'redis-vs-sibyl: unknown argument %s (see --help)\n' "$arg" >&2
        exit 2
        ;;
    esac
done
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET/release

say() { printf '== %s\n' "$*" >&2; }
die() {
    printf 'redis-vs-sibyl: %s\n' "$*" >&2
    exit 1
}

missing=()
for tool in redis-server python3 timeout; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
[[ ${SKIP_BUILD:-} == 1 ]] || command -v cargo >/dev/null 2>&1 || missing+=(cargo)
if ((${#missing[@]})); then
    printf 'redis-vs-sibyl: missing: %s\n' "${missing[*]}" >&2
    printf 'On Debian/Ubuntu: apt-get install redis-server python3 coreutils (and Rust for cargo)\n' >&2
    exit 1
fi
for v in KEYS VALUE_SIZE CONNECTIONS ROUND RUNS BLOCK_CACHE_MB; do
    [[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 ]] || die "$v must be a positive whole number, not '${!v}'"
done
[[ $FLOOR =~ ^[01]$ ]] || die "FLOOR must be 0 or 1, not '$FLOOR'"
[[ $EVENT_LOOPS =~ ^[0-9]+$ ]] || die "EVENT_LOOPS must be a whole number, not '$EVENT_LOOPS'"
[[ $DISK_ACCESS =~ ^(auto|mmap|mmap_index_only|standard)$ ]] ||
    die "DISK_ACCESS must be auto, mmap, mmap_index_only or standard, not '$DISK_ACCESS'"

if [[ ${SKIP_BUILD:-} != 1 ]]; then
    say "building release binaries (cargo build --release -p server -p sibyl-stress -p sibyltool -p null-server)"
    (cd "$ROOT" && cargo build --release -p server -p sibyl-stress -p sibyltool -p null-server >&2)
fi
bins=(sibyl sibyl-stress sibyltool)
if ((FLOOR)); then bins+=(null-server); fi
for b in "${bins[@]}"; do
    [[ -x $BIN/$b ]] || die "$BIN/$b not found (build it, or set CARGO_TARGET_DIR)"
done
if [[ ${PGO:-} == 1 && -z ${SIBYL_BIN:-} ]]; then
    say "building sibyl with profile-guided optimization (scripts/build-pgo.sh)"
    SIBYL_BIN=$("$ROOT/scripts/build-pgo.sh") || die "scripts/build-pgo.sh failed"
fi
SIBYL_BIN=${SIBYL_BIN:-$BIN/sibyl}
[[ -x $SIBYL_BIN ]] || die "SIBYL_BIN=$SIBYL_BIN is not an executable"
say "sibyl daemon measured: $SIBYL_BIN"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sibyl-bench.XXXXXX")
REDIS_PID=
SIBYL_PID=
FLOOR_PIDS=()
# Stops a server: SIGTERM, at most 30 s to exit, then SIGKILL.
stop_pid() {
    local pid=$1 i
    [[ -n $pid ]] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 300; i++)); do
        kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
stop_servers() {
    stop_pid "$SIBYL_PID"
    SIBYL_PID=
    stop_pid "$REDIS_PID"
    REDIS_PID=
    local pid
    for pid in "${FLOOR_PIDS[@]}"; do stop_pid "$pid"; done
    FLOOR_PIDS=()
}
cleanup() {
    stop_servers
    if [[ ${KEEP:-} == 1 ]]; then
        say "kept $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits until something accepts connections on 127.0.0.1:$1 (at most $2 seconds).
wait_port() {
    local port=$1 limit=$2 i
    for ((i = 0; i < limit * 10; i++)); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    return 1
}

# CPU time (user + system, in clock ticks) a process has used so far.
cpu_ticks() {
    awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo -1
}
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)
# Each thread's CPU ticks so far, one "TID TICKS" line per thread.
thread_ticks() {
    local t
    for t in /proc/"$1"/task/*; do
        awk -v tid="${t##*/}" '{ sub(/^.*\) /, ""); print tid, $12 + $13 }' "$t/stat" 2>/dev/null
    done
}
# The largest CPU ticks any one thread used between two thread_ticks listings (files BEFORE
# AFTER): the event loop for both servers, whose share of a core tells whether it was the limit.
busiest_thread() {
    awk 'NR == FNR { before[$1] = $2; next } { d = $2 - before[$1]; if (d > max) max = d } END { print max + 0 }' "$1" "$2"
}
# Times the process's threads have gone to sleep waiting (voluntary context switches) so far.
sleeps() {
    cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'
}

start_redis() {
    local dir=$WORK/run$1/redis
    mkdir -p "$dir"
    REDIS_PORT=$(free_port)
    redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$dir" \
        --appendonly yes --appendfsync everysec --save "" \
        --daemonize no --logfile "$dir/redis.log" >/dev/null 2>&1 &
    REDIS_PID=$!
    wait_port "$REDIS_PORT" 30 || die "redis-server did not start within 30 s; see $dir/redis.log"
}

# start_floor RUN: null-server twice, speaking RESP (floor_resp) and Thrift (floor_thrift).
start_floor() {
    local log=$WORK/run$1/null-server
    FLOOR_RESP_PORT=$(free_port)
    "$BIN/null-server" --port "$FLOOR_RESP_PORT" --protocol resp --value-size "$VALUE_SIZE" >"$log-resp.log" 2>&1 &
    FLOOR_RESP_PID=$!
    FLOOR_THRIFT_PORT=$(free_port)
    "$BIN/null-server" --port "$FLOOR_THRIFT_PORT" --protocol thrift --value-size "$VALUE_SIZE" >"$log-thrift.log" 2>&1 &
    FLOOR_THRIFT_PID=$!
    FLOOR_PIDS=("$FLOOR_RESP_PID" "$FLOOR_THRIFT_PID")
    wait_port "$FLOOR_RESP_PORT" 30 || die "null-server did not start within 30 s; see $log-resp.log"
    wait_port "$FLOOR_THRIFT_PORT" 30 || die "null-server did not start within 30 s; see $log-thrift.log"
}

start_sibyl() {
    local dir=$WORK/run$1/sibyl i
    mkdir -p "$dir"
    SIBYL_PORT=$(free_port)
    ADMIN_PORT=$(free_port)
    local conf=$dir/storage-conf.xml
    # The sample configuration on private ports and directories; the commit log synced every
    # second like appendfsync everysec (the sample says 10 s); the block cache lowered so that
    # the SSTable round reads more data than it holds.
    private_conf "$conf" "$dir" "$SIBYL_PORT" "$ADMIN_PORT" \
        -e "s#<CommitLogSyncPeriodInMS>[0-9]*</CommitLogSyncPeriodInMS>#<CommitLogSyncPeriodInMS>1000</CommitLogSyncPeriodInMS>#" \
        -e "s#<BlockCacheSizeInMB>[0-9]*</BlockCacheSizeInMB>#<BlockCacheSizeInMB>$BLOCK_CACHE_MB</BlockCacheSizeInMB>#" \
        -e "s#<DiskAccessMode>[a-z_]*</DiskAccessMode>#<DiskAccessMode>$DISK_ACCESS</DiskAccessMode>#" \
        -e "s#<ThriftEventLoops>[0-9]*</ThriftEventLoops>#<ThriftEventLoops>$EVENT_LOOPS</ThriftEventLoops>#" ||
        die "could not write $conf"
    grep -q "<BlockCacheSizeInMB>$BLOCK_CACHE_MB</BlockCacheSizeInMB>" "$conf" ||
        die "could not set BlockCacheSizeInMB in $conf"
    grep -q "<DiskAccessMode>$DISK_ACCESS</DiskAccessMode>" "$conf" || die "could not set DiskAccessMode in $conf"
    grep -q "<ThriftEventLoops>$EVENT_LOOPS</ThriftEventLoops>" "$conf" || die "could not set ThriftEventLoops in $conf"
    grep -q "<CommitLogSync>periodic</CommitLogSync>" "$conf" || die "the sample no longer uses the periodic commit log"
    grep -q "$dir/data" "$conf" || die "could not set the data directory in $conf"
    : >"$dir/sibyl.log"
    "$SIBYL_BIN" --config "$conf" >>"$dir/sibyl.log" 2>&1 &
    SIBYL_PID=$!
    for ((i = 0; i < 600; i++)); do
        if grep -q "Listening for thrift clients on" "$dir/sibyl.log"; then return 0; fi
        kill -0 "$SIBYL_PID" 2>/dev/null || die "sibyl exited during startup; see $dir/sibyl.log"
        sleep 0.1
    done
    die "sibyl did not start within 60 s; see $dir/sibyl.log"
}

# stress SERVER OUT ARGS...: one sibyl-stress run against SERVER (redis, sibyl, floor_resp or
# floor_thrift), its JSON summary in OUT.json and the server's CPU ticks over the run in
# OUT.ticks. Bounded by its own stop rule and, should that fail, by timeout(1).
stress() {
    local server=$1 out=$2 pid port before after sleeps_before
    local -a proto
    shift 2
    if [[ $server == redis ]]; then
        pid=$REDIS_PID
        port=$REDIS_PORT
        proto=(--protocol resp)
    elif [[ $server == floor_resp ]]; then
        pid=$FLOOR_RESP_PID
        port=$FLOOR_RESP_PORT
        proto=(--protocol resp)
    elif [[ $server == floor_thrift ]]; then
        pid=$FLOOR_THRIFT_PID
        port=$FLOOR_THRIFT_PORT
        proto=("${THRIFT_LOAD[@]}")
    else
        pid=$SIBYL_PID
        port=$SIBYL_PORT
        proto=("${THRIFT_LOAD[@]}")
    fi
    before=$(cpu_ticks "$pid")
    sleeps_before=$(sleeps "$pid")
    thread_ticks "$pid" >"$out.threads-before"
    timeout $((ROUND + 120)) "$BIN/sibyl-stress" "${proto[@]}" --host 127.0.0.1 --port "$port" \
        --num-keys "$KEYS" --threads "$CONNECTIONS" --value-size "$VALUE_SIZE" --timeout 10 \
        --json --quiet "$@" >"$out.json" 2>"$out.err" ||
        die "sibyl-stress against $server failed (exit $?); see $out.err"
    after=$(cpu_ticks "$pid")
    thread_ticks "$pid" >"$out.threads-after"
    busiest_thread "$out.threads-before" "$out.threads-after" >"$out.busiest"
    echo $(($(sleeps "$pid") - sleeps_before)) >"$out.sleeps"
    ((before >= 0 && after >= 0)) || die "cannot read /proc/$pid/stat: is the $server server still running?"
    echo $((after - before)) >"$out.ticks"
}

op_rate() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["op_rate"])' "$1"; }

# round RUN MEASURE ORDER ARGS...: the same round against both servers, one after the other.
round() {
    local run=$1 measure=$2 order=$3 server
    shift 3
    for server in $order; do
        say "run $run/$RUNS: $measure on $server"
        stress "$server" "$WORK/run$run/$measure-$server" "$@"
    done
}

# half RUN MEASURE PEAK_MEASURE ORDER ARGS...: the round at half of each server's own peak rate
# measured in PEAK_MEASURE of the same run.
half() {
    local run=$1 measure=$2 peak=$3 order=$4 server rate
    shift 4
    for server in $order; do
        rate=$(python3 -c 'import sys; print(round(float(sys.argv[1]) / 2))' "$(op_rate "$WORK/run$run/$peak-$server.json")")
        say "run $run/$RUNS: $measure on $server (paced at $rate op/s, half its peak)"
        stress "$server" "$WORK/run$run/$measure-$server" --rate "$rate" "$@"
    done
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
START_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
for ((run = 1; run <= RUNS; run++)); do
    # Alternate which server goes first in each round, so neither always follows the other.
    # (The floors, when measured, take their rounds last in odd runs and first in even ones;
    # they need no preload, and have no half-peak rounds.)
    if ((run % 2)); then pair="redis sibyl"; else pair="sibyl redis"; fi
    order=$pair
    if ((FLOOR)); then
        if ((run % 2)); then order="$pair floor_resp floor_thrift"; else order="floor_thrift floor_resp $pair"; fi
    fi
    mkdir -p "$WORK/run$run"
    start_redis "$run"
    start_sibyl "$run"
    say "run $run/$RUNS: redis on $REDIS_PORT (pid $REDIS_PID), sibyl on $SIBYL_PORT (pid $SIBYL_PID)"
    if ((FLOOR)); then
        start_floor "$run"
        say "run $run/$RUNS: null-server on $FLOOR_RESP_PORT (RESP, pid $FLOOR_RESP_PID) and $FLOOR_THRIFT_PORT (Thrift, pid $FLOOR_THRIFT_PID)"
    fi
    # Every key written once, so that every read finds its key.
    round "$run" preload "$pair" --operation insert --distribution sequential --count "$KEYS"
    # Right after the preload Sibyl holds everything in its memtable.
    round "$run" read_mem "$order" --operation read --distribution uniform --duration "${ROUND}s"
    if [[ $HALF_PEAK == 1 ]]; then
        half "$run" read_mem_half read_mem "$pair" --operation read --distribution uniform --duration "${ROUND}s"
    fi
    say "run $run/$RUNS: sibyltool flush Stress"
    timeout 180 "$BIN/sibyltool" -h 127.0.0.1 -p "$ADMIN_PORT" --timeout 120 flush Stress \
        >"$WORK/run$run/flush.log" 2>&1 || die "sibyltool flush failed; see $WORK/run$run/flush.log"
    data_bytes=$(find "$WORK/run$run/sibyl/data/Stress" -name '*Standard1*-Data.db' -printf '%s\n' 2>/dev/null |
        awk '{ s += $1 } END { print s + 0 }')
    sstables=$(find "$WORK/run$run/sibyl/data/Stress" -name '*Standard1*-Data.db' 2>/dev/null | wc -l)
    ((sstables > 0)) || die "no Standard1 SSTable after the flush"
    echo "$sstables $data_bytes" >"$WORK/run$run/sstables"
    ((data_bytes > BLOCK_CACHE_MB * 1024 * 1024)) ||
        say "warning: $data_bytes bytes of SSTable data fit in the ${BLOCK_CACHE_MB} MB block cache"
    round "$run" read_sst "$order" --operation read --distribution uniform --duration "${ROUND}s"
    round "$run" insert "$order" --operation insert --distribution uniform --duration "${ROUND}s"
    if [[ $HALF_PEAK == 1 ]]; then
        half "$run" insert_half insert "$pair" --operation insert --distribution uniform --duration "${ROUND}s"
    fi
    stop_servers
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')

python3 - "$WORK" "$JSON" <<PY
import json, os, statistics, sys

work, as_json = sys.argv[1], sys.argv[2] == "1"
runs, tck = $RUNS, $CLK_TCK
meta = {
    "date": "$START_DATE", "keys": $KEYS, "value_size": $VALUE_SIZE, "connections": $CONNECTIONS,
    "round_s": $ROUND, "runs": runs, "block_cache_mb": $BLOCK_CACHE_MB, "disk_access": "$DISK_ACCESS", "event_loops": $EVENT_LOOPS, "cores": os.cpu_count(),
    "write_call": "${WRITE_CALL:-insert}",
    "load_before": "$LOAD_BEFORE", "load_after": "$LOAD_AFTER",
    "redis": "$(redis-server --version | sed 's/"//g')",
}
MEASURES = [
    ("insert", "insert vs SET (uniform keys, ${ROUND} s)"),
    ("read_mem", "get vs GET, Sibyl reading its memtable (right after the preload)"),
    ("read_sst", "get vs GET, Sibyl reading SSTables after sibyltool flush (DiskAccessMode ${DISK_ACCESS}, block cache ${BLOCK_CACHE_MB} MB)"),
]
# Issue 13's targets: (minimum median ratio Sibyl/Redis); every measure: Sibyl's max/min over
# the runs within 15 %; the half-peak rounds: Sibyl's p99 under 1 ms.
RATIO_TARGET = {"insert": 1.2, "read_mem": 1.0, "read_sst": 1.0}
SPREAD_TARGET = 1.15
P99_TARGET_MS = 1.0
HALVES = [("insert_half", "insert vs SET at half each server's peak rate"),
          ("read_mem_half", "get vs GET (memtable) at half each server's peak rate")]

def load(run, measure, server):
    base = os.path.join(work, f"run{run}", f"{measure}-{server}")
    if not os.path.exists(base + ".json"):
        return None
    s = json.load(open(base + ".json"))
    ticks = int(open(base + ".ticks").read())
    try:
        server_sleeps = int(open(base + ".sleeps").read())
    except (OSError, ValueError):
        server_sleeps = None
    try:
        busiest = int(open(base + ".busiest").read())
    except (OSError, ValueError):
        busiest = None
    ops = s["ops"]
    elapsed = s.get("elapsed_s") or 0
    return {
        "ops_s": s["op_rate"], "ops": ops, "errors": s["errors"], "p50_ms": s["p50_ms"], "p99_ms": s["p99_ms"],
        "target_rate": s.get("target_rate"),
        "server_cpu_us_per_op": ticks / tck * 1e6 / ops if ops else None,
        "client_cpu_us_per_op": s["client_cpu_s"] * 1e6 / ops if ops and s.get("client_cpu_s") is not None else None,
        "server_sleeps_per_op": server_sleeps / ops if ops and server_sleeps is not None else None,
        "client_sleeps_per_op": s["client_sleeps"] / ops if ops and s.get("client_sleeps") is not None else None,
        "busiest_thread_share": busiest / tck / elapsed if elapsed and busiest is not None else None,
        "client_share": s["client_cpu_s"] / elapsed if elapsed and s.get("client_cpu_s") is not None else None,
        "aborted": s.get("aborted"), "error_kinds": s.get("error_kinds"),
    }

doc = {"meta": meta, "runs": [], "summary": {}}
for run in range(1, runs + 1):
    r = {"run": run}
    for m, _ in MEASURES + HALVES + [("preload", "")]:
        pair = {srv: load(run, m, srv) for srv in ("redis", "sibyl")}
        if pair["redis"] and pair["sibyl"]:
            pair["ratio"] = pair["sibyl"]["ops_s"] / pair["redis"]["ops_s"] if pair["redis"]["ops_s"] else None
            for name in ("floor_resp", "floor_thrift"):
                floor = load(run, m, name)
                if floor and floor["ops_s"]:
                    pair[name] = floor
                    pair[name + "_ratio"] = floor["ops_s"] / pair["redis"]["ops_s"] if pair["redis"]["ops_s"] else None
                    pair["sibyl_of_" + name] = pair["sibyl"]["ops_s"] / floor["ops_s"]
            r[m] = pair
    try:
        n, size = open(os.path.join(work, f"run{run}", "sstables")).read().split()
        r["sibyl_sstables"], r["sibyl_sstable_bytes"] = int(n), int(size)
    except OSError:
        pass
    doc["runs"].append(r)

def spread(values):
    v = [x for x in values if x is not None]
    return {"min": min(v), "median": statistics.median(v), "max": max(v)} if v else None

for m, _ in MEASURES + HALVES:
    rows = [r[m] for r in doc["runs"] if m in r]
    if not rows:
        continue
    doc["summary"][m] = {
        f"{srv}_{k}": spread([row[srv][k] for row in rows])
        for srv in ("redis", "sibyl")
        for k in ("ops_s", "p50_ms", "p99_ms", "server_cpu_us_per_op", "client_cpu_us_per_op",
                  "server_sleeps_per_op", "client_sleeps_per_op", "busiest_thread_share", "client_share")
    }
    doc["summary"][m]["ratio"] = spread([row["ratio"] for row in rows])
    for name in ("floor_resp", "floor_thrift"):
        floors = [row for row in rows if name in row]
        if floors:
            doc["summary"][m][name] = {
                **{k: spread([row[name][k] for row in floors])
                   for k in ("ops_s", "server_cpu_us_per_op", "client_cpu_us_per_op", "busiest_thread_share")},
                "ratio_to_redis": spread([row[name + "_ratio"] for row in floors]),
                "sibyl_of_floor": spread([row["sibyl_of_" + name] for row in floors]),
            }

out = sys.stderr if as_json else sys.stdout
def p(line=""):
    print(line, file=out)

p(f"\nRedis vs Sibyl, one load generator (sibyl-stress: RESP to Redis, Thrift to Sibyl), {meta['date']}")
p(f"SET and GET to Redis; {meta['write_call']} and get_slice of one column to Sibyl")
p(f"{meta['keys']} keys, {meta['value_size']}-byte values, {meta['connections']} connections, no pipelining, "
  f"{meta['round_s']} s rounds interleaved, {runs} runs on fresh servers; {meta['cores']} cores; "
  f"load average {meta['load_before']} before, {meta['load_after']} after")
p(f"{meta['redis']}, appendonly yes, appendfsync everysec; Sibyl: periodic commit log synced every 1000 ms, "
  f"BlockCacheSizeInMB {meta['block_cache_mb']}, ThriftEventLoops {meta['event_loops']}")
p("CPU = user+system time of the process per operation (server from /proc/PID/stat around the round; "
  "client = sibyl-stress itself); sleeps = voluntary context switches per operation, each a wakeup "
  "the other side's reply or request paid for")

def f(x, spec):
    return format(x, spec) if x is not None else "-"

for m, title in MEASURES:
    if m not in doc["summary"]:
        continue
    p(f"\n{title}")
    head = (f"{'run':<7}{'Redis op/s':>11}{'Sibyl op/s':>11}{'ratio':>7}{'Redis p50/p99 ms':>18}"
            f"{'Sibyl p50/p99 ms':>18}{'srv CPU us/op R/S':>19}{'cli CPU us/op R/S':>19}"
            f"{'srv sleeps/op R/S':>19}{'cli sleeps/op R/S':>19}")
    p(head)
    p("-" * len(head))
    for r in doc["runs"]:
        if m not in r:
            continue
        x = r[m]; R, S = x["redis"], x["sibyl"]
        extra = ""
        if R["errors"] or S["errors"]:
            extra = f"  errors R {R['errors']} S {S['errors']} {S['error_kinds'] or ''}{R['error_kinds'] or ''}"
        p(f"{r['run']:<7}{R['ops_s']:>11.0f}{S['ops_s']:>11.0f}{x['ratio']:>6.2f}x"
          f"{R['p50_ms']:>9.3f}/{R['p99_ms']:<8.3f}{S['p50_ms']:>9.3f}/{S['p99_ms']:<8.3f}"
          f"{f(R['server_cpu_us_per_op'], '.2f'):>10}/{f(S['server_cpu_us_per_op'], '<8.2f')}"
          f"{f(R['client_cpu_us_per_op'], '.2f'):>10}/{f(S['client_cpu_us_per_op'], '<8.2f')}"
          f"{f(R['server_sleeps_per_op'], '.3f'):>10}/{f(S['server_sleeps_per_op'], '<8.3f')}"
          f"{f(R['client_sleeps_per_op'], '.3f'):>10}/{f(S['client_sleeps_per_op'], '<8.3f')}{extra}")
    s = doc["summary"][m]
    for k in ("min", "median", "max"):
        g = lambda key: (s[key] or {}).get(k)
        p(f"{k:<7}{f(g('redis_ops_s'), '.0f'):>11}{f(g('sibyl_ops_s'), '.0f'):>11}{f(g('ratio'), '.2f'):>6}x"
          f"{f(g('redis_p50_ms'), '.3f'):>9}/{f(g('redis_p99_ms'), '<8.3f')}"
          f"{f(g('sibyl_p50_ms'), '.3f'):>9}/{f(g('sibyl_p99_ms'), '<8.3f')}"
          f"{f(g('redis_server_cpu_us_per_op'), '.2f'):>10}/{f(g('sibyl_server_cpu_us_per_op'), '<8.2f')}"
          f"{f(g('redis_client_cpu_us_per_op'), '.2f'):>10}/{f(g('sibyl_client_cpu_us_per_op'), '<8.2f')}"
          f"{f(g('redis_server_sleeps_per_op'), '.3f'):>10}/{f(g('sibyl_server_sleeps_per_op'), '<8.3f')}"
          f"{f(g('redis_client_sleeps_per_op'), '.3f'):>10}/{f(g('sibyl_client_sleeps_per_op'), '<8.3f')}")
    so, ro, ratio = s["sibyl_ops_s"], s["redis_ops_s"], s["ratio"]
    spread_s = so["max"] / so["min"] if so and so["min"] else None
    spread_r = ro["max"] / ro["min"] if ro and ro["min"] else None
    s["targets"] = {
        "ratio_median_min": RATIO_TARGET[m], "ratio_met": bool(ratio and ratio["median"] >= RATIO_TARGET[m]),
        "sibyl_max_over_min": spread_s, "spread_met": bool(spread_s and spread_s <= SPREAD_TARGET),
    }
    verdict = lambda ok: "met" if ok else "NOT met"
    pct = lambda key: f((s[key] or {}).get("median") and 100 * s[key]["median"], ".0f")
    p(f"share of a core, median: busiest server thread Redis {pct('redis_busiest_thread_share')}%, "
      f"Sibyl {pct('sibyl_busiest_thread_share')}%; client {pct('redis_client_share')}% / "
      f"{pct('sibyl_client_share')}% (two cores in all)")
    p(f"max/min over the runs: Sibyl {f(spread_s, '.2f')}, Redis {f(spread_r, '.2f')}")
    mmm = lambda x, spec: f"{f(x['median'], spec)} ({f(x['min'], spec)}-{f(x['max'], spec)})"
    for name, proto in (("floor_resp", "RESP"), ("floor_thrift", "Thrift")):
        fl = s.get(name)
        if not fl:
            continue
        p(f"floor over {proto} (null-server, stores nothing), op/s per run: "
          f"{' '.join(f(r[m][name]['ops_s'], '.0f') for r in doc['runs'] if name in r.get(m, {}))}; "
          f"floor/Redis {mmm(fl['ratio_to_redis'], '.2f')}x, Sibyl/floor {mmm(fl['sibyl_of_floor'], '.2f')}x; "
          f"its server CPU {f(fl['server_cpu_us_per_op']['median'], '.2f')} us/op, client "
          f"{f(fl['client_cpu_us_per_op']['median'], '.2f')} us/op, its thread "
          f"{f(fl['busiest_thread_share']['median'] and 100 * fl['busiest_thread_share']['median'], '.0f')}% of a core")
    p(f"targets: median ratio >= {RATIO_TARGET[m]}x: {verdict(s['targets']['ratio_met'])}; "
      f"Sibyl max/min <= {SPREAD_TARGET}: {verdict(s['targets']['spread_met'])}")

for m, title in HALVES:
    if m not in doc["summary"]:
        continue
    p(f"\n{title}")
    head = f"{'run':<7}{'Redis target':>13}{'achieved':>10}{'p50/p99 ms':>18}{'Sibyl target':>14}{'achieved':>10}{'p50/p99 ms':>18}"
    p(head)
    p("-" * len(head))
    for r in doc["runs"]:
        if m not in r:
            continue
        R, S = r[m]["redis"], r[m]["sibyl"]
        p(f"{r['run']:<7}{R['target_rate']:>13.0f}{R['ops_s']:>10.0f}{R['p50_ms']:>9.3f}/{R['p99_ms']:<8.3f}"
          f"{S['target_rate']:>14.0f}{S['ops_s']:>10.0f}{S['p50_ms']:>9.3f}/{S['p99_ms']:<8.3f}")
    s = doc["summary"][m]
    p(f"p99 median (max): Redis {s['redis_p99_ms']['median']:.3f} ({s['redis_p99_ms']['max']:.3f}) ms, "
      f"Sibyl {s['sibyl_p99_ms']['median']:.3f} ({s['sibyl_p99_ms']['max']:.3f}) ms")
    s["targets"] = {"sibyl_p99_max_ms": P99_TARGET_MS, "p99_met": s["sibyl_p99_ms"]["median"] < P99_TARGET_MS}
    p(f"target: Sibyl median p99 < {P99_TARGET_MS} ms: {'met' if s['targets']['p99_met'] else 'NOT met'}")

sst = [(r.get("sibyl_sstables"), r.get("sibyl_sstable_bytes")) for r in doc["runs"] if "sibyl_sstables" in r]
if sst:
    p(f"\nSSTable round: Standard1 had {', '.join(str(n) for n, _ in sst)} SSTable(s) of "
      f"{', '.join(f'{b / 1048576:.1f}' for _, b in sst)} MB after the flush (block cache {meta['block_cache_mb']} MB)")
if as_json:
    print(json.dumps(doc, indent=1))
PY
