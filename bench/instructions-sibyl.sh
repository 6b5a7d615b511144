#!/usr/bin/env bash
# Instructions per request of Sibyl builds, counted by valgrind's callgrind: a figure that does
# not move with the machine's load, where CPU time per request moves by a third from run to run
# on a shared 2-core machine. It counts work, not cache misses or system calls, so it tells
# whether a change made the code path shorter; bench/ab-sibyl.sh and bench/redis-vs-sibyl.sh
# still tell what that is worth in time.
#
# Each build runs once per operation under callgrind on a fresh data directory: KEYS keys are
# preloaded, the counters are zeroed, COUNT uniform requests are sent (16 connections), and the
# counters are dumped. The figure is every instruction of every server thread in that window
# divided by COUNT (background threads included, which at these sizes do almost nothing).
#
# Usage: bench/instructions-sibyl.sh BIN [BIN...]
#   e.g. bench/instructions-sibyl.sh /var/tmp/old/release/sibyl target/release/sibyl
#   A BIN of `redis` counts redis-server instead (appendonly, appendfsync everysec, as
#   bench/redis-vs-sibyl.sh runs it), driven by the same client over RESP: SET for insert, GET
#   for read.
#
# Environment (optional): KEYS=20000, COUNT=20000, OPS="read insert", CARGO_TARGET_DIR (where
# sibyl-stress is), KEEP=1 (keep the callgrind files, to read with callgrind_annotate),
# WRITE_CALL=insert (or batch_mutate: the Thrift call of an insert, see bench/lib.sh),
# CALLGRIND_ARGS (more callgrind options: "--cache-sim=yes --LL=2097152,16,64" also counts each
# function's simulated cache misses, to read with callgrind_annotate from a KEEP=1 directory).
# PROTOCOL=cql sends the same load over the native protocol instead (sibyl-stress's prepared
# INSERT and SELECT of stress_cql.standard1), so CQL and Thrift can be compared build by build;
# COLUMNS=5 (with WRITE_CALL=batch_mutate for Thrift) writes and reads five columns per row, as
# bench/cql-vs-thrift.sh does.
# Needs valgrind (Debian package valgrind) and python3. Installs nothing. About 15 s per build
# and operation.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
KEYS=${KEYS:-20000}
COUNT=${COUNT:-20000}
OPS=${OPS:-read insert}
STRESS=${CARGO_TARGET_DIR:-$ROOT/target}/release/sibyl-stress

die() {
    printf 'instructions-sibyl: %s\n' "$*" >&2
    exit 1
}
(($# >= 1)) || die "usage: bench/instructions-sibyl.sh BIN [BIN...]"
for f in "$@" "$STRESS"; do
    [[ $f == redis ]] && { command -v redis-server >/dev/null || die "redis needs redis-server (apt-get install redis-server)"; continue; }
    [[ -x $f ]] || die "$f is not an executable (build with cargo build --release)"
done
for tool in valgrind callgrind_control python3; do
    command -v "$tool" >/dev/null || die "needs $tool (apt-get install valgrind python3)"
done
for v in KEYS COUNT; do
    [[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 ]] || die "$v must be a positive whole number, not '${!v}'"
done

WORK=$(mktemp -d /tmp/sibyl-instructions.XXXXXX)
PID=
cleanup() {
    [[ -n $PID ]] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    if [[ ${KEEP:-} == 1 ]]; then
        printf 'instructions-sibyl: kept %s\n' "$WORK" >&2
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# count N BIN OP: prints the instructions per request of BIN serving COUNT requests of OP
count() {
    local n=$1 bin=$2 op=$3 dir=$WORK/$1-$3 port
    mkdir -p "$dir"
    port=$(free_port)
    local ready
    local -a protocol
    if [[ $bin == redis ]]; then
        # shellcheck disable=SC2086 # CALLGRIND_ARGS is a list of options
        valgrind --tool=callgrind ${CALLGRIND_ARGS:-} --callgrind-out-file="$dir/callgrind.out" redis-server --bind 127.0.0.1 \
            --port "$port" --dir "$dir" --appendonly yes --appendfsync everysec --save "" --daemonize no \
            >"$dir/log" 2>&1 &
        ready="Ready to accept connections"
        protocol=(--protocol resp)
    else
        # The load goes to $port: the Thrift port, or with PROTOCOL=cql the native one.
        local thrift_port=$port native_port
        native_port=$(free_port)
        if [[ ${PROTOCOL:-thrift} == cql ]]; then
            native_port=$port
            thrift_port=$(free_port)
        fi
        private_conf "$dir/conf.xml" "$dir" "$thrift_port" "$(free_port)" \
            -e "s#<NativeTransportPort>9042</NativeTransportPort>#<NativeTransportPort>$native_port</NativeTransportPort>#" ||
            exit 1
        grep -q "<NativeTransportPort>$native_port<" "$dir/conf.xml" || die "could not set the native port in $dir/conf.xml"

        # shellcheck disable=SC2086 # CALLGRIND_ARGS is a list of options
        valgrind --tool=callgrind ${CALLGRIND_ARGS:-} --callgrind-out-file="$dir/callgrind.out" "$bin" --config "$dir/conf.xml" \
            >"$dir/log" 2>&1 &
        ready="Listening for thrift clients on"
        case ${PROTOCOL:-thrift} in
        thrift) protocol=(--protocol thrift --columns "${COLUMNS:-1}" --write-call "${WRITE_CALL:-insert}") ;;
        cql) protocol=(--protocol cql --columns "${COLUMNS:-1}") ;;
        *) die "PROTOCOL is thrift or cql, not '$PROTOCOL'" ;;
        esac
    fi
    PID=$!
    await_log "$PID" "$dir/log" "$ready" 1200 ||
        die "$bin did not start under valgrind (its log, if it exited, is above; $dir/log)"
    local -a stress=("$STRESS" "${protocol[@]}" --host 127.0.0.1 --port "$port"
        --num-keys "$KEYS" --threads 16 --value-size 100 --timeout 60 --json --quiet)
    timeout 600 "${stress[@]}" --operation insert --distribution sequential --count "$KEYS" >/dev/null 2>&1 ||
        die "$bin: the preload failed (log: $dir/log)"
    callgrind_control --zero "$PID" >/dev/null 2>&1
    timeout 600 "${stress[@]}" --operation "$op" --distribution uniform --count "$COUNT" >"$dir/round.json" 2>/dev/null ||
        die "$bin: the $op round failed (log: $dir/log)"
    callgrind_control --dump "$PID" >/dev/null 2>&1
    kill "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=
    # The dump after the zeroing is the one file with a ".1" part suffix.
    python3 - "$dir" "$COUNT" <<'PY'
import glob, json, sys
directory, count = sys.argv[1], int(sys.argv[2])
errors = json.load(open(f"{directory}/round.json"))["errors"]
if errors:
    sys.exit(f"instructions-sibyl: {errors} requests failed in {directory}")
dumps = [f for f in glob.glob(f"{directory}/callgrind.out.*") if f.endswith(".1")]
if len(dumps) != 1:
    sys.exit(f"instructions-sibyl: expected one dump in {directory}, found {dumps}")
for line in open(dumps[0]):
    if line.startswith("totals:") or line.startswith("summary:"):
        print(f"{int(line.split()[1]) / count:.0f}")
        break
else:
    sys.exit(f"instructions-sibyl: no totals in {dumps[0]}")
PY
}

printf '%-8s %14s  %s\n' op "instr/request" build
n=0
for bin in "$@"; do
    n=$((n + 1))
    for op in $OPS; do
        printf '%-8s %14s  %s\n' "$op" "$(count "$n" "$bin" "$op")" "$bin"
    done
done
