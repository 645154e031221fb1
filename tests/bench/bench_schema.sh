#!/bin/sh
# bench_schema.sh FATHOM SCHEMA1_DIR CTFGEN_TOOL [STEPS] -- trace schema 1
# against schemas 2 and 3 (ctest label bench; not a timed test):
#   - archive bytes per op: each schema-1 fixture archive (small preset,
#     6 steps, 2 threads) against a recording made now (schema 3) with the
#     same settings;
#   - `fathom analyze breakdown` speed: op records per second of CPU time
#     (user + sys, the median of 5 runs) on the same op sequence written in
#     the three schemas (ctfgen's conv training scenario, STEPS steps,
#     default 20000: 240,000 ops).
# Prints one row per workload and exits 0 unless something could not be
# measured.
set -u
FATHOM=$1 S1=$2 GEN=$3 STEPS=${4:-20000}
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

printf '%-10s %12s %12s %8s\n' workload "s1 B/op" "s3 B/op" "s3/s1"
for a1 in "$S1"/*-train-small-*.tar.zst; do
    model=$(basename "$a1" | cut -d- -f1)
    a2="$T/$model.tar.zst"
    "$FATHOM" record "$model" --preset small --steps 6 --threads 2 --quiet -o "$a2" >/dev/null 2>"$T/err" ||
        { echo "bench_schema: record $model: $(cat "$T/err")" >&2; exit 1; }
    o1=$(ops_of "$a1") o2=$(ops_of "$a2")
    b1=$(stat -c %s "$a1") b2=$(stat -c %s "$a2")
    awk -v m="$model" -v o1="$o1" -v o2="$o2" -v b1="$b1" -v b2="$b2" 'BEGIN {
        printf "%-10s %12.2f %12.2f %8.3f\n", m, b1 / o1, b2 / o2, (b2 / o2) / (b1 / o1) }'
done

"$GEN" "$T/g1" conv bench train "$STEPS" >/dev/null || exit 1
"$GEN" "$T/g2" conv bench train "$STEPS" schema=2 >/dev/null || exit 1
"$GEN" "$T/g3" conv bench train "$STEPS" schema=3 >/dev/null || exit 1
ops=$(ops_of "$T/g1")
c1=$(cpu_of "$T/g1") c2=$(cpu_of "$T/g2") c3=$(cpu_of "$T/g3")
d1=$(du -sk "$T/g1" | cut -f1) d2=$(du -sk "$T/g2" | cut -f1) d3=$(du -sk "$T/g3" | cut -f1)
awk -v n="$ops" -v c1="$c1" -v c2="$c2" -v d1="$d1" -v d2="$d2" 'BEGIN {
    printf "analyze breakdown, %d ops: schema 1 %.2f s (%.0f ops/s, %d KiB of CTF), schema 2 %.2f s (%.0f ops/s, %d KiB): %.2fx\n",
           n, c1, n / c1, d1, c2, n / c2, d2, c1 / c2 }'
awk -v n="$ops" -v c2="$c2" -v c3="$c3" -v d3="$d3" 'BEGIN {
    printf "analyze breakdown, %d ops: schema 3 %.2f s (%.0f ops/s, %d KiB of CTF): %.2fx schema 2\n",
           n, c3, n / c3, d3, c2 / c3 }'
