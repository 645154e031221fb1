#!/bin/sh
# bench_ab.sh OLD NEW [SPEC ...] -- two builds of fathom against each other
# on `fathom run` step times: each SPEC ("MODEL MODE INTER [THREADS]", e.g.
# "memnet infer 2") is run by OLD and NEW, ROUNDS times, every spec in
# every round (a slow minute of a shared machine falls on both builds and
# on every spec alike), OLD first in odd rounds and NEW first in even ones
# (use an even ROUNDS). Each run is its own process of STEPS steps at the
# preset (the first step skipped, as `fathom run` reports it). Per spec:
# both builds' mean step times, their medians, the median of NEW/OLD over
# the rounds (each round's pair ran back to back) and the rounds NEW was
# faster in. With no SPEC: the workloads whose steps hand many small ops
# between inter-op workers (memnet, seq2seq) at two workers, and one
# without workers as a control.
# Env: ROUNDS (default 8), STEPS (default 400), PRESET (default small),
# FIELD (default ms, the step's wall time; cpu_ms: its CPU time, which a
# loaded machine disturbs less, with one thread a spec).
# Benchmark only (label bench): the numbers depend on the machine and its load.
set -u
[ $# -ge 2 ] || { echo "usage: bench_ab.sh OLD NEW [\"MODEL MODE INTER [THREADS]\" ...]" >&2; exit 2; }
OLD=$1 NEW=$2
shift 2
ROUNDS=${ROUNDS:-8} STEPS=${STEPS:-400} PRESET=${PRESET:-small} FIELD=${FIELD:-ms}
for b in "$OLD" "$NEW"; do
    [ -x "$b" ] || { echo "bench_ab.sh: $b: not an executable" >&2; exit 2; }
done
[ $# -gt 0 ] || set -- "memnet train 2" "memnet infer 2" "seq2seq train 2" "seq2seq infer 2" "memnet infer 1"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
step() { # step BINARY MODEL MODE INTER [THREADS]: the mean of FIELD over the steps (the first skipped)
    out=$(LTTNG_UST_REGISTER_TIMEOUT=0 "$1" run "$2" --mode "$3" --preset "$PRESET" --steps "$STEPS" \
        --inter "$4" ${5:+--threads "$5"} --format json 2>&1) || { echo "bench_ab.sh: $1 run $2 $3: $out" >&2; return 1; }
    printf '%s\n' "$out" | jq -rs --arg f "$FIELD" '[.[] | select(.step != null and .step > 0) | .[$f]] | add / length'
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for spec in "$@"; do
        # the first of a pair runs faster (alexnet training, one thread:
        # new/old 1.045 with OLD first, 0.985 with NEW first), so odd
        # rounds run OLD first and even rounds NEW first
        if [ $((r % 2)) -eq 1 ]; then
            # shellcheck disable=SC2086 # a spec is words
            a=$(step "$OLD" $spec) || exit 1
            # shellcheck disable=SC2086
            b=$(step "$NEW" $spec) || exit 1
        else
            # shellcheck disable=SC2086
            b=$(step "$NEW" $spec) || exit 1
            # shellcheck disable=SC2086
            a=$(step "$OLD" $spec) || exit 1
        fi
        printf '%s\t%s\t%s\t%s\n' "$(echo "$spec" | tr ' ' '-')" "$r" "$a" "$b" >>"$tmp"
    done
    r=$((r + 1))
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s %9s %9s %9s %9s %9s %7s\n' spec "old mean" "new mean" "old med" "new med" "new/old" faster
# per spec: means, medians, the median of the per-round ratios, the rounds NEW won
sort -t"$(printf '\t')" -k1,1 -s "$tmp" | awk -F'\t' '
    function med(v, n,   i, j, t) {
        for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    function flush() {
        if (!n) return
        printf "%-22s %9.3f %9.3f %9.3f %9.3f %9.3f %4d/%d\n", k, sa / n, sb / n, med(a, n), med(b, n), med(q, n), w, n
    }
    $1 != k { flush(); k = $1; n = 0; sa = sb = w = 0 }
    { n++; a[n] = $3; b[n] = $4; q[n] = $4 / $3; sa += $3; sb += $4; w += $4 < $3 }
    END { flush() }'
