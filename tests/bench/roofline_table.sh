#!/bin/sh
# roofline_table.sh FATHOM [DIR] -- every workload against this machine's
# roofline: which op types are still far from their roof.
#
# Records all nine workloads, train and infer, at the small preset (6 steps)
# into DIR (default: a temporary folder; an existing DIR with .tar.zst
# archives is analyzed as it is), measures the ceilings (`fathom peak`), and
# prints per recording: the step's ops against the roof (all ops together),
# the share of op time in op types at half their roof or more, and each op
# type of at least MIN_SHARE of the time (default 0.03) that reaches less
# than half its roof, with its intensity and bound. The first and last step
# are left out. Benchmark only: the fractions depend on the machine and its
# load. Env: PRESET (default small), STEPS (default 6), MIN_SHARE.
set -eu
FATHOM=$1
DIR=${2:-$(mktemp -d)}
PRESET=${PRESET:-small} STEPS=${STEPS:-6} MIN_SHARE=${MIN_SHARE:-0.03}
mkdir -p "$DIR"
if ! ls "$DIR"/*.tar.zst >/dev/null 2>&1; then
    LTTNG_UST_REGISTER_TIMEOUT=${LTTNG_UST_REGISTER_TIMEOUT:-0} \
        "$FATHOM" record --all --modes train,infer --preset "$PRESET" --steps "$STEPS" --dir "$DIR" >/dev/null
fi
[ -f "$DIR/peak.json" ] || "$FATHOM" peak --format json >"$DIR/peak.json"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); ceilings from $DIR/peak.json"
"$FATHOM" analyze roofline --peak "$DIR/peak.json" --skip-first 1 --skip-last 1 --top 0 --format csv "$DIR"/*.tar.zst |
    awk -F, -v min="$MIN_SHARE" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    {
        t = $col["trace"]
        if (!(t in seen)) { seen[t] = 1; order[++n] = t }
        if ($col["level"] == "total") {
            total[t] = $col["of_roof"]; gf[t] = $col["gflops"]; pk = $col["peak_gflops"]; bw = $col["peak_gbs"]
        } else if ($col["level"] == "op") {
            if ($col["of_roof"] >= 0.5) near[t] += $col["share"]
            else if ($col["share"] >= min)
                far[t] = far[t] sprintf("%s%s %.0f%% at %.2f (%s, %.2g FLOP/B)", far[t] == "" ? "" : "; ",
                                        $col["name"], 100 * $col["share"], $col["of_roof"], $col["bound"],
                                        $col["intensity"])
        }
    }
    END {
        printf "ceilings: %s GFLOP/s, %s GB/s\n", pk, bw
        printf "%-18s %8s %8s %8s  %s\n", "workload", "GFLOP/s", "of roof", "near", "op types below half their roof (share of op time, fraction of roof)"
        for (i = 1; i <= n; i++) {
            t = order[i]
            printf "%-18s %8.1f %8.2f %7.0f%%  %s\n", t, gf[t], total[t], 100 * near[t], far[t] == "" ? "-" : far[t]
        }
    }'
