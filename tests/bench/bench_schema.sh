#!/bin/sh
# bench_schema.sh FATHOM SCHEMA1_DIR -- trace schema 1 against schema 2 on
# the same workloads (ctest label bench; not a timed test):
#   - archive bytes per op: each schema-1 fixture archive (small preset,
#     6 steps, 2 threads) against a schema-2 recording made now with the
#     same settings;
#   - `fathom analyze breakdown` speed: op records per second of CPU time
#     (user + sys, the median of 5 runs) on each archive.
# Prints one row per workload and exits 0 unless something could not be
# measured.
set -u
FATHOM=$1 S1=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/bench-schema-XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export LTTNG_UST_REGISTER_TIMEOUT=0

ops_of() { "$FATHOM" info --format json "$1" | sed -n 's/.*"run_end_ops": \([0-9]*\).*/\1/p'; }
# CPU seconds of one `analyze breakdown`, the median of 5
cpu_of() {
    for _ in 1 2 3 4 5; do
        /usr/bin/time -f '%U %S' "$FATHOM" analyze breakdown "$1" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}'
    done | sort -n | sed -n 3p
}

printf '%-10s %12s %12s %8s %16s %16s %8s\n' workload "s1 B/op" "s2 B/op" "s2/s1" "s1 ops/s" "s2 ops/s" "s2/s1"
for a1 in "$S1"/*-train-small-*.tar.zst; do
    model=$(basename "$a1" | cut -d- -f1)
    a2="$T/$model.tar.zst"
    "$FATHOM" record "$model" --preset small --steps 6 --threads 2 --quiet -o "$a2" >/dev/null 2>"$T/err" ||
        { echo "bench_schema: record $model: $(cat "$T/err")" >&2; exit 1; }
    o1=$(ops_of "$a1") o2=$(ops_of "$a2")
    b1=$(stat -c %s "$a1") b2=$(stat -c %s "$a2")
    c1=$(cpu_of "$a1") c2=$(cpu_of "$a2")
    awk -v m="$model" -v o1="$o1" -v o2="$o2" -v b1="$b1" -v b2="$b2" -v c1="$c1" -v c2="$c2" 'BEGIN {
        r1 = c1 > 0 ? o1 / c1 : 0; r2 = c2 > 0 ? o2 / c2 : 0
        printf "%-10s %12.2f %12.2f %8.3f %16.0f %16.0f %8.2f\n", m, b1 / o1, b2 / o2, (b2 / o2) / (b1 / o1), r1, r2,
               r1 > 0 ? r2 / r1 : 0 }'
done
