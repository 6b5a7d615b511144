# Helpers the bench scripts share; source it after setting ROOT (the repository's root).

# The Thrift call of an insert against Sibyl: `insert` of one column, the counterpart of Redis'
# SET and what pycassa sends for a one-column write (figures before 29 November 2026 used
# `batch_mutate`, sibyl-stress's default; WRITE_CALL=batch_mutate measures that again).
THRIFT_LOAD=(--protocol thrift --columns 1 --write-call "${WRITE_CALL:-insert}")

# free_port [IP]: a TCP port free on IP (default 127.0.0.1) at this moment.
free_port() {
    python3 -c 'import socket,sys; s = socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1])' \
        "${1:-127.0.0.1}"
}

# private_conf OUT DIR THRIFT_PORT ADMIN_PORT [SED_ARG...]: writes to OUT the sample
# conf/storage-conf.xml with the given Thrift and admin ports, a free storage port, its data
# and commit log under DIR, and any further sed arguments applied; fails if a port was not set.
private_conf() {
    local out=$1 dir=$2 thrift=$3 admin=$4
    shift 4
    sed -e "s#<ThriftPort>9160</ThriftPort>#<ThriftPort>$thrift</ThriftPort>#" \
        -e "s#<AdminPort>7199</AdminPort>#<AdminPort>$admin</AdminPort>#" \
        -e "s#<StoragePort>7000</StoragePort>#<StoragePort>$(free_port)</StoragePort>#" \
        -e "s#var/lib/sibyl/#$dir/#g" \
        "$@" \
        "$ROOT/conf/storage-conf.xml" >"$out"
    grep -q "<ThriftPort>$thrift</ThriftPort>" "$out" && grep -q "<AdminPort>$admin</AdminPort>" "$out" || {
        echo "bench: could not set the ports in $out (has conf/storage-conf.xml changed?)" >&2
        return 1
    }
}

# await_log PID LOG PATTERN [TENTHS]: waits until LOG holds PATTERN (a server's "ready" line),
# at most TENTHS tenths of a second (default 600). Fails, after printing LOG to stderr, if
# process PID exits first; fails quietly if the time runs out.
await_log() {
    local pid=$1 log=$2 pattern=$3 tenths=${4:-600} i
    for ((i = 0; i < tenths; i++)); do
        grep -qs "$pattern" "$log" && return 0
        kill -0 "$pid" 2>/dev/null || {
            cat "$log" >&2
            return 1
        }
        sleep 0.1
    done
    return 1
}
