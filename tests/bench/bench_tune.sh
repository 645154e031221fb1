#!/bin/sh
# bench_tune.sh FATHOM [MODEL:MODE ...] -- `fathom tune` against an
# exhaustive sweep of the knob space (`fathom tune --sweep`), per workload at
# the small preset, train and infer (all nine workloads when none is named).
# Each row: the sweep's best point and its step time, the tuner's pick and
# the pick's step time in the sweep (pick/best: the target is within 3%),
# both wall times (the target: the tuner in at most a quarter of the
# sweep's), and the tuner's measured speedups over fathom's defaults and the
# vendors' settings. Env: BUDGET (tuner, seconds; default 20), ROUNDS (sweep
# rounds per point; default 5), PRESET (default small), OUT (a folder for
# the JSON; default a temporary one). Benchmark only (label bench): the
# numbers depend on the machine and its load.
set -u
FATHOM=$1
shift
BUDGET=${BUDGET:-20} ROUNDS=${ROUNDS:-5} PRESET=${PRESET:-small}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
specs=$*
if [ -z "$specs" ]; then
    for m in seq2seq memnet speech autoenc residual vgg alexnet deepq transformer; do
        specs="$specs $m:train $m:infer"
    done
fi
now() { date +%s.%N; }
printf '%-18s %-44s %9s %-44s %9s %7s %7s %7s %6s %8s %8s\n' workload "sweep best" "best ms" "tuner pick" \
    "pick ms" "pick/bst" "sweep s" "tune s" "ratio" "x dflt" "x vendor"
fails=0
for spec in $specs; do
    m=${spec%%:*} mode=${spec#*:}
    t0=$(now)
    "$FATHOM" tune "$m" --mode "$mode" --preset "$PRESET" --sweep --rounds "$ROUNDS" --format json \
        >"$OUT/$m-$mode-sweep.json" 2>"$OUT/err" || { echo "$m $mode: sweep failed: $(cat "$OUT/err")"; fails=$((fails + 1)); continue; }
    t1=$(now)
    "$FATHOM" tune "$m" --mode "$mode" --preset "$PRESET" --budget "$BUDGET" --format json \
        >"$OUT/$m-$mode-tune.json" 2>"$OUT/err" || { echo "$m $mode: tune failed: $(cat "$OUT/err")"; fails=$((fails + 1)); continue; }
    t2=$(now)
    sweep_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') tune_s=$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')
    # the pick's time in the sweep (the same point of the knob space)
    jq -r --slurpfile t "$OUT/$m-$mode-tune.json" --arg sw "$sweep_s" --arg tu "$tune_s" --arg w "$m $mode" '
        ($t[0].recommendation.knobs) as $k
        | (.candidates | min_by(.step_ms)) as $b
        | (.candidates | map(select(.knobs == $k)) | first) as $p
        | [$w, $b.flags, $b.step_ms, $t[0].recommendation.flags, ($p.step_ms // -1),
           (if $p then $p.step_ms / $b.step_ms else -1 end), ($sw | tonumber), ($tu | tonumber),
           (($tu | tonumber) / ($sw | tonumber)), $t[0].recommendation.speedup_defaults,
           $t[0].recommendation.speedup_vendors]
        | "\(.[0])\t\(.[1])\t\(.[2])\t\(.[3])\t\(.[4])\t\(.[5])\t\(.[6])\t\(.[7])\t\(.[8])\t\(.[9])\t\(.[10])"' \
        "$OUT/$m-$mode-sweep.json" |
        awk -F'\t' '{ printf "%-18s %-44s %9.2f %-44s %9.2f %7.3f %7.1f %7.1f %6.2f %8.2f %8.2f\n",
                      $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 }'
done
echo "(JSON in $OUT; tuner budget $BUDGET s, sweep $ROUNDS rounds a point, preset $PRESET)"
exit $fails
