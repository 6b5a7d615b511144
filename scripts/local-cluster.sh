#!/usr/bin/env bash
# Runs N Sibyl nodes side by side on 127.0.0.1 .. 127.0.0.N, without Docker.
#
#   scripts/local-cluster.sh start N     build sibyl (release) if needed, write each node's
#                                        config, start the nodes, wait until they serve Thrift
#                                        and each sees every other Up/Normal
#   scripts/local-cluster.sh stop [N]    SIGTERM each node (SIGKILL after a bounded wait)
#   scripts/local-cluster.sh status [N]  pid, up/down and ports of each node, and
#                                        `sibyltool status` when sibyltool is built
#
# 1 <= N <= 9. Without N, stop and status cover every node under var/local-cluster/.
# Node K lives in var/local-cluster/node<K>/: storage-conf.xml (made from
# conf/storage-conf.xml), data/, commitlog/, saved_caches/, system.log and sibyl.pid.
# Every node listens on its own address with the sample's ports (Thrift 9160, internode 7000,
# admin 7199), seeds from 127.0.0.1 and takes an evenly spaced InitialToken (Random and
# Murmur3 partitioners; other partitioners leave it empty). InitialToken is only read on a
# node's first start: after changing N, remove var/local-cluster/ to start afresh.
# Linux routes all of 127.0.0.0/8 to the loopback interface; on macOS add the addresses
# first (sudo ifconfig lo0 alias 127.0.0.K).
#
# Environment: SIBYL_BIN (a sibyl binary to use instead of building one), CARGO_TARGET_DIR,
# START_TIMEOUT / STOP_TIMEOUT (seconds, default 60 / 30).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
base="$root/var/local-cluster"
template="$root/conf/storage-conf.xml"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
start_timeout="${START_TIMEOUT:-60}"
stop_timeout="${STOP_TIMEOUT:-30}"

usage() {
    echo "usage: $0 start N | stop [N] | status [N]    (1 <= N <= 9)" >&2
    exit 2
}

die() {
    echo "local-cluster: $*" >&2
    exit 1
}

# ---------------------------------------------------------------------------------------------
# Token arithmetic on unsigned decimal strings (bash integers stop at 2^63).

big_strip() { # removes leading zeros
    local s="${1#"${1%%[!0]*}"}"
    echo "${s:-0}"
}

big_mul_small() { # $1 * $2, with $2 a small integer
    local a=$1 m=$2 out="" carry=0 i d
    for ((i = ${#a} - 1; i >= 0; i--)); do
        d=$((${a:i:1} * m + carry))
        out="$((d % 10))$out"
        carry=$((d / 10))
    done
    while ((carry > 0)); do
        out="$((carry % 10))$out"
        carry=$((carry / 10))
    done
    big_strip "$out"
}

big_div_small() { # floor($1 / $2), with $2 a small positive integer
    local a=$1 n=$2 out="" rem=0 i d
    for ((i = 0; i < ${#a}; i++)); do
        d=$((rem * 10 + ${a:i:1}))
        out="$out$((d / n))"
        rem=$((d % n))
    done
    big_strip "$out"
}

big_cmp() { # prints -1, 0 or 1
    local a b
    a=$(big_strip "$1")
    b=$(big_strip "$2")
    if ((${#a} != ${#b})); then
        ((${#a} < ${#b})) && echo -1 || echo 1
    elif [[ "$a" == "$b" ]]; then
        echo 0
    elif [[ "$a" < "$b" ]]; then
        echo -1
    else
        echo 1
    fi
}

big_sub() { # $1 - $2, with $1 >= $2
    local a=$1 b=$2 out="" borrow=0 i j d bd
    for ((i = ${#a} - 1, j = ${#b} - 1; i >= 0; i--, j--)); do
        bd=0
        ((j >= 0)) && bd=${b:j:1}
        d=$((${a:i:1} - borrow - bd))
        if ((d < 0)); then
            d=$((d + 10))
            borrow=1
        else
            borrow=0
        fi
        out="$d$out"
    done
    big_strip "$out"
}

readonly TWO_POW_63="9223372036854775808"
readonly TWO_POW_64="18446744073709551616"
readonly TWO_POW_127="170141183460469231731687303715884105728"

# The InitialToken of node i (0-based) of n for the partitioner class $3, or nothing.
initial_token() {
    local i=$1 n=$2 partitioner=$3 q
    case "$partitioner" in
    *RandomPartitioner) # i * 2^127 / n
        big_div_small "$(big_mul_small "$TWO_POW_127" "$i")" "$n"
        ;;
    *Murmur3Partitioner) # -2^63 + i * 2^64 / n
        q=$(big_div_small "$(big_mul_small "$TWO_POW_64" "$i")" "$n")
        if [[ $(big_cmp "$q" "$TWO_POW_63") -ge 0 ]]; then
            big_sub "$q" "$TWO_POW_63"
        else
            echo "-$(big_sub "$TWO_POW_63" "$q")"
        fi
        ;;
    *) echo "" ;;
    esac
}

# ---------------------------------------------------------------------------------------------
# Node configuration.

# The text of the first <$1> element outside comments in $2 (one-line elements only).
xml_value() {
    awk -v el="$1" '
        { line = $0; out = "" }
        {
            # Drop comments, including ones spanning lines.
            while (line != "") {
                if (in_comment) {
                    p = index(line, "-->"); if (p == 0) { line = ""; break }
                    line = substr(line, p + 3); in_comment = 0
                } else {
                    p = index(line, "<!--"); if (p == 0) { out = out line; line = ""; break }
                    out = out substr(line, 1, p - 1); line = substr(line, p + 4); in_comment = 1
                }
            }
            otag = "<" el ">"; ctag = "</" el ">"
            s = index(out, otag); e = index(out, ctag)
            if (s > 0 && e > s) { v = substr(out, s + length(otag), e - s - length(otag)); gsub(/^[ \t]+|[ \t]+$/, "", v); print v; exit }
        }' "$2"
}

# Writes $2 (a node's storage-conf.xml) from the template $1, setting the elements given as
# NAME=VALUE lines on stdin (see docker/set-conf-elements.awk, shared with the Docker image).
write_config() {
    local elements
    elements=$(cat)
    SET_ELEMENTS="$elements" awk -f "$root/docker/set-conf-elements.awk" "$1" >"$2.tmp"
    mv "$2.tmp" "$2"
}

node_dir() { echo "$base/node$1"; }
node_address() { echo "127.0.0.$1"; }

# Ports of a node, from its config (defaults as in the loader).
node_port() { # $1 node, $2 element, $3 default
    local v
    v=$(xml_value "$2" "$(node_dir "$1")/storage-conf.xml" 2>/dev/null || true)
    echo "${v:-$3}"
}

# ---------------------------------------------------------------------------------------------
# Processes.

sibyl_bin() {
    if [[ -n "${SIBYL_BIN:-}" ]]; then
        [[ -x "$SIBYL_BIN" ]] || die "SIBYL_BIN=$SIBYL_BIN is not an executable"
        echo "$SIBYL_BIN"
        return
    fi
    local bin="$target_dir/release/sibyl"
    if command -v cargo >/dev/null 2>&1; then
        # cargo rebuilds only what changed; when nothing did this takes a second.
        echo "building sibyl and sibyltool (release) ..." >&2
        (cd "$root" && cargo build --release --bin sibyl --bin sibyltool >&2) || die "cargo build failed"
    fi
    [[ -x "$bin" ]] || die "no $bin and no cargo to build it; set SIBYL_BIN"
    echo "$bin"
}

# The sibyltool binary built next to sibyl, if any.
tool_bin() {
    local candidate
    for candidate in "$target_dir/release/sibyltool" "$target_dir/debug/sibyltool"; do
        if [[ -x "$candidate" ]]; then
            echo "$candidate"
            return
        fi
    done
    return 1
}

# Waits until every node's `sibyltool status` lists all N nodes Up and Normal (each node waits
# for gossip to settle before it serves, but its peers may still be learning of it).
wait_for_ring() {
    local n=$1 tool k addr admin seen
    tool=$(tool_bin) || {
        echo "(no sibyltool built: not waiting for the nodes to see each other)"
        return 0
    }
    for k in $(nodes "$n"); do
        addr=$(node_address "$k")
        admin=$(node_port "$k" AdminPort 7199)
        until seen=$("$tool" -h "$addr" -p "$admin" --timeout 10 status 2>/dev/null | grep -c '^UN ') && ((seen == n)); do
            if ((SECONDS >= deadline)); then
                echo "node$k: sees ${seen:-0} of $n nodes Up/Normal after ${start_timeout}s" >&2
                return 1
            fi
            sleep 0.5
        done
        echo "node$k: sees all $n nodes Up/Normal"
    done
}

# The node's pid if its pid file names a live sibyl process started with its config.
running_pid() {
    local dir pid
    dir=$(node_dir "$1")
    [[ -f "$dir/sibyl.pid" ]] || return 1
    pid=$(<"$dir/sibyl.pid")
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    # A recycled pid belongs to some other program: never report or signal it as ours.
    ps -o args= -p "$pid" 2>/dev/null | grep -qF -- "$dir/storage-conf.xml" || return 1
    echo "$pid"
}

# Node numbers to act on: 1..N when given, else every existing node directory.
nodes() {
    if [[ -n "${1:-}" ]]; then
        seq 1 "$1"
    elif [[ -d "$base" ]]; then
        find "$base" -maxdepth 1 -name 'node[1-9]' -type d | sed 's/.*node//' | sort -n
    fi
}

check_count() {
    [[ "$1" =~ ^[1-9]$ ]] || usage
}

# ---------------------------------------------------------------------------------------------
# Commands.

cmd_start() {
    local n=$1 bin partitioner k dir addr token pid deadline
    [[ -f "$template" ]] || die "missing $template"
    bin=$(sibyl_bin)
    partitioner=$(xml_value Partitioner "$template")
    local started=() # pids by node number
    for k in $(nodes "$n"); do
        dir=$(node_dir "$k")
        addr=$(node_address "$k")
        if pid=$(running_pid "$k"); then
            echo "node$k: already running (pid $pid)"
            continue
        fi
        mkdir -p "$dir/data" "$dir/commitlog" "$dir/saved_caches"
        [[ -d "$dir/data/system" ]] && echo "node$k: existing data; InitialToken is not read again"
        token=$(initial_token $((k - 1)) "$n" "$partitioner")
        write_config "$template" "$dir/storage-conf.xml" <<EOF
ListenAddress=$addr
ThriftAddress=$addr
AdminAddress=$addr
InitialToken=$token
CommitLogDirectory=$dir/commitlog
SavedCachesDirectory=$dir/saved_caches
DataFileDirectories=<DataFileDirectory>$dir/data</DataFileDirectory>
Seeds=<Seed>127.0.0.1</Seed>
EOF
        # In a session of its own (setsid, where there is one) the node outlives the terminal
        # and does not get the Ctrl-C typed into it later. setsid execs in place here (a
        # background job of a script is no process group leader), so $! is the node's pid.
        if command -v setsid >/dev/null 2>&1; then
            (cd "$dir" && exec setsid "$bin" --config "$dir/storage-conf.xml" >"$dir/system.log" 2>&1 </dev/null) &
        else
            (cd "$dir" && exec nohup "$bin" --config "$dir/storage-conf.xml" >"$dir/system.log" 2>&1 </dev/null) &
        fi
        pid=$!
        echo "$pid" >"$dir/sibyl.pid"
        started[k]=$pid
        echo "node$k: starting (pid $pid, token ${token:-chosen by the node})"
    done
    deadline=$((SECONDS + start_timeout))
    local failed=0
    # ${a[@]+...}: bash before 4.4 calls an empty array unbound under set -u.
    for k in ${started[@]+"${!started[@]}"}; do
        dir=$(node_dir "$k")
        until grep -q "Listening for thrift clients on" "$dir/system.log" 2>/dev/null; do
            # kill -0 rather than running_pid: the process may not have exec'd sibyl yet.
            if ! kill -0 "${started[k]}" 2>/dev/null; then
                echo "node$k: exited during startup; last lines of $dir/system.log:" >&2
                tail -n 20 "$dir/system.log" >&2 || true
                rm -f "$dir/sibyl.pid"
                failed=1
                continue 2
            fi
            if ((SECONDS >= deadline)); then
                echo "node$k: not serving Thrift after ${start_timeout}s; see $dir/system.log" >&2
                failed=1
                continue 2
            fi
            sleep 0.2
        done
    done
    if ((failed == 0)); then
        wait_for_ring "$n" || failed=1
    fi
    cmd_status "$n"
    return "$failed"
}

cmd_stop() {
    local k pid dir deadline any=0
    local pids=() # by node number
    for k in $(nodes "${1:-}"); do
        any=1
        dir=$(node_dir "$k")
        if pid=$(running_pid "$k"); then
            kill -TERM "$pid"
            pids[k]=$pid
            echo "node$k: SIGTERM sent to pid $pid"
        else
            echo "node$k: not running"
            rm -f "$dir/sibyl.pid"
        fi
    done
    ((any)) || echo "no nodes under $base"
    # The nodes flush their memtables on SIGTERM; give them time, then insist.
    deadline=$((SECONDS + stop_timeout))
    for k in ${pids[@]+"${!pids[@]}"}; do
        pid=${pids[$k]}
        while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
            sleep 0.2
        done
        if kill -0 "$pid" 2>/dev/null; then
            echo "node$k: still running after ${stop_timeout}s; SIGKILL" >&2
            kill -KILL "$pid" 2>/dev/null || true
        else
            echo "node$k: stopped"
        fi
        rm -f "$(node_dir "$k")/sibyl.pid"
    done
}

cmd_status() {
    local k pid dir addr tool any=0
    tool=$(tool_bin) || tool=""
    for k in $(nodes "${1:-}"); do
        any=1
        dir=$(node_dir "$k")
        addr=$(node_address "$k")
        local thrift storage admin
        thrift=$(node_port "$k" ThriftPort 9160)
        storage=$(node_port "$k" StoragePort 7000)
        admin=$(node_port "$k" AdminPort 7199)
        if pid=$(running_pid "$k"); then
            echo "node$k: up (pid $pid)  thrift $addr:$thrift  internode $addr:$storage  admin $addr:$admin  log $dir/system.log"
            if [[ -n "$tool" ]]; then
                # --timeout bounds the tool's wait for the node's answer.
                "$tool" -h "$addr" -p "$admin" --timeout 10 status 2>&1 | sed 's/^/    /' || true
            fi
        else
            echo "node$k: down  thrift $addr:$thrift  internode $addr:$storage  admin $addr:$admin"
        fi
    done
    ((any)) || echo "no nodes under $base"
    [[ -n "$tool" ]] || echo "(build sibyltool to see each node's view: cargo build --release --bin sibyltool)"
}

case "${1:-}" in
start)
    [[ $# -eq 2 ]] || usage
    check_count "$2"
    cmd_start "$2"
    ;;
stop)
    [[ $# -le 2 ]] || usage
    [[ $# -eq 1 ]] || check_count "$2"
    cmd_stop "${2:-}"
    ;;
status)
    [[ $# -le 2 ]] || usage
    [[ $# -eq 1 ]] || check_count "$2"
    cmd_status "${2:-}"
    ;;
*) usage ;;
esac
