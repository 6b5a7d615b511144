#!/usr/bin/env bash
# The storage engine against RocksDB's db_bench, same workload, same machine, same run:
# fillrandom then readrandom, NUM rows (default 1M), 16-byte keys, 100-byte values, WAL /
# commit log on without per-write sync, no compression, one thread. RUNS runs (default 3),
# alternating RocksDB and Sibyl on fresh directories; prints each run, then the median, min and
# max of each side and of the ratio.
#
#   bench/storage-vs-rocksdb.sh [NUM]
#
# Both sides use jemalloc: Sibyl's example links it as the `sibyl` daemon does, and RocksDB's
# db_bench gets it by LD_PRELOAD when libjemalloc.so.2 is installed (Debian package libjemalloc2;
# without it RocksDB runs on glibc's malloc, as Debian builds it, and the script says so).
# RocksDB's memtable allocates from its own arena, so its figures move little either way.
#
# Environment: RUNS=3, SKIP_BUILD=1 (use the built example), CARGO_TARGET_DIR.
# Needs db_bench (Debian package rocksdb-tools).
set -euo pipefail
cd "$(dirname "$0")/.."
NUM=${1:-1000000}
RUNS=${RUNS:-3}
[[ $NUM =~ ^[0-9]+$ && $NUM -gt 0 ]] || { echo "NUM must be a positive whole number, not '$NUM'" >&2; exit 2; }
[[ $RUNS =~ ^[0-9]+$ && $RUNS -gt 0 ]] || { echo "RUNS must be a positive whole number, not '$RUNS'" >&2; exit 2; }
command -v db_bench >/dev/null || { echo "db_bench not found: apt-get install rocksdb-tools" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

[[ ${SKIP_BUILD:-} == 1 ]] || cargo build --release -q -p storage --example db_bench
target=${CARGO_TARGET_DIR:-target}

jemalloc=
for lib in /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/aarch64-linux-gnu/libjemalloc.so.2 /usr/lib/libjemalloc.so.2; do
  [[ -e $lib ]] && { jemalloc=$lib; break; }
done
echo "== RocksDB db_bench $(db_bench --version 2>&1 | head -1), allocator: ${jemalloc:-glibc malloc (libjemalloc2 not installed)}"
echo "== $NUM rows, $RUNS runs"

rate() { awk -v b="$1" '$1==b {for(i=1;i<=NF;i++) if($(i+1) ~ /^ops\/sec/) print $i}' "$2"; }
for ((run = 1; run <= RUNS; run++)); do
  LD_PRELOAD=$jemalloc db_bench --benchmarks=fillrandom,readrandom --num="$NUM" --key_size=16 --value_size=100 \
    --compression_type=none --db="$work/rocksdb" --threads=1 2>&1 | grep -E '^(fillrandom|readrandom) ' >"$work/rocks$run.txt"
  rm -rf "$work/rocksdb"
  "$target/release/examples/db_bench" --num "$NUM" --dir "$work/sibyl" >"$work/sibyl$run.txt"
  rm -rf "$work/sibyl"
  for b in fillrandom readrandom; do
    r=$(rate "$b" "$work/rocks$run.txt")
    s=$(rate "$b" "$work/sibyl$run.txt")
    [[ -n $r && -n $s ]] || { echo "run $run: no $b figure; outputs:" >&2; cat "$work/rocks$run.txt" "$work/sibyl$run.txt" >&2; exit 1; }
    echo "$b $r $s" >>"$work/all.txt"
    printf 'run %d %-12s rocksdb %10.0f ops/s  sibyl %10.0f ops/s  ratio %.2f\n' "$run" "$b" "$r" "$s" "$(awk -v s="$s" -v r="$r" 'BEGIN{print s/r}')"
  done
done

echo
printf '%-12s %30s %30s %20s\n' benchmark 'rocksdb ops/s med (min-max)' 'sibyl ops/s med (min-max)' 'ratio med (min-max)'
python3 - "$work/all.txt" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    b, r, s = line.split()
    rows.setdefault(b, []).append((float(r), float(s)))
def cell(xs, fmt):
    return f"{fmt(statistics.median(xs))} ({fmt(min(xs))}-{fmt(max(xs))})"
for b, runs in rows.items():
    r = [x for x, _ in runs]; s = [y for _, y in runs]; q = [y / x for x, y in runs]
    n = lambda v: f"{v:,.0f}"
    print(f"{b:<12} {cell(r, n):>30} {cell(s, n):>30} {cell(q, lambda v: f'{v:.2f}'):>20}")
EOF
