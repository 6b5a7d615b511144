#!/usr/bin/env bash
# The storage engine against RocksDB's db_bench, same workload, same machine, same run:
# fillrandom then readrandom, NUM rows (default 1M), 16-byte keys, 100-byte values, WAL /
# commit log on without per-write sync, no compression, one thread. Prints both and the ratios.
#
#   bench/storage-vs-rocksdb.sh [NUM]
#
# Needs db_bench (Debian package rocksdb-tools).
set -euo pipefail
cd "$(dirname "$0")/.."
NUM=${1:-1000000}
command -v db_bench >/dev/null || { echo "db_bench not found: apt-get install rocksdb-tools" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cargo build --release -q -p storage --example db_bench
target=${CARGO_TARGET_DIR:-target}

echo "== RocksDB db_bench $(db_bench --version 2>&1 | head -1)"
db_bench --benchmarks=fillrandom,readrandom --num="$NUM" --key_size=16 --value_size=100 \
  --compression_type=none --db="$work/rocksdb" --threads=1 2>&1 | grep -E '^(fillrandom|readrandom) ' | tee "$work/rocks.txt"
echo "== Sibyl storage engine"
"$target/release/examples/db_bench" --num "$NUM" --dir "$work/sibyl" | tee "$work/sibyl.txt"

rate() { awk -v b="$1" '$1==b {for(i=1;i<=NF;i++) if($(i+1) ~ /^ops\/sec/) print $i}' "$2"; }
echo
printf '%-12s %14s %14s %8s\n' benchmark rocksdb_ops/s sibyl_ops/s ratio
for b in fillrandom readrandom; do
  r=$(rate "$b" "$work/rocks.txt"); s=$(rate "$b" "$work/sibyl.txt")
  printf '%-12s %14s %14s %8s\n' "$b" "$r" "$s" "$(awk -v s="$s" -v r="$r" 'BEGIN{printf "%.2f", s/r}')"
done
