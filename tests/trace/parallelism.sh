#!/bin/sh
# `fathom analyze parallelism`: the average parallelism of hand-made traces
# with known answers (a chain 1.0, two equal independent branches 2.0, a
# diamond 50/40 = 1.25), of recorded workloads (speech's bidirectional RNN
# runs its two directions side by side: 1.58-1.64 measured on a quiet
# machine, 1.26 seen at a load average of 12 and 1.15 beside a compile, so
# its least disturbed step, the highest, is judged, more than 1.15 asked;
# trace_mlp's plain 2-layer MLP: its forward pass a chain, 1.0 whatever the
# ops' times; its training step, whose backward runs a layer's weight
# gradient beside the gradient it passes down, at least 1 and below
# speech's), and the one-line
# errors (schema 1, no data flow).
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)

# the parallelism column of the CSV's one row
par() { "$FATHOM" analyze parallelism --format csv "$@" | awk -F, 'NR == 2 { print $12 }'; }
# the highest step's: a step that no preemption stretched on its critical path
par_max() { "$FATHOM" analyze parallelism --format csv "$@" | awk -F, 'NR == 2 { print $14 }'; }
near() { awk -v a="$1" -v b="$2" -v e="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= e) }'; }

for spec in chain:1.0 branches:2.0 diamond:1.25; do
    kind=${spec%%:*} want=${spec#*:}
    "$PARALLELISM_FIXTURES" "$T/$kind" "$kind" || fail "cannot write the $kind fixture"
    got=$(par "$T/$kind") || fail "$kind: analyze parallelism failed"
    near "$got" "$want" 0.01 || fail "$kind: parallelism $got, want $want"
    note "$kind: $got (want $want)"
done
# text and JSON say the same
"$FATHOM" analyze parallelism "$T/diamond" | grep -q 'average parallelism 1.25' || fail "diamond: text output"
"$FATHOM" analyze parallelism --format json "$T/diamond" | grep -q '"parallelism": 1.25' || fail "diamond: JSON output"
# the critical path of the diamond is A, B, D: 40 us of 50
"$FATHOM" analyze parallelism --format csv "$T/diamond" | awk -F, 'NR == 2 && $9 == "0.040000" && $11 == "3.0" { ok = 1 } END { exit !ok }' ||
    fail "diamond: critical path is not 0.040 ms in 3 ops"

# the Babeltrace2 plugin's sink gives the same number (the profiles follow
# the data flow there too)
if [ -n "${PLUGINS:-}" ] && command -v babeltrace2 >/dev/null; then
    # under ASan the uninstrumented babeltrace2 needs the runtime first (BT_PRELOAD)
    bt=$(env ${BT_PRELOAD:+LD_PRELOAD=$BT_PRELOAD ASAN_OPTIONS=detect_leaks=0} \
        babeltrace2 --plugin-path="$PLUGINS" "$T/diamond" -c sink.fathom.parallelism -p 'format="json"' 2>"$T/bt.err" |
        jq -r '.traces[0].parallelism') || fail "sink.fathom.parallelism: $(cat "$T/bt.err")"
    near "${bt:-0}" 1.25 0.01 || fail "sink.fathom.parallelism: $bt, want 1.25"
    note "sink.fathom.parallelism: $bt"
fi

# errors: one line, non-zero exit
one_line_error() {
    what=$1
    shift
    if "$FATHOM" analyze parallelism "$@" >"$T/out" 2>"$T/err"; then fail "$what: exit 0"; fi
    [ "$(wc -l <"$T/err")" = 1 ] || fail "$what: not one line: $(cat "$T/err")"
    note "$what: $(cat "$T/err")"
}
"$PARALLELISM_FIXTURES" "$T/noflow" noflow || fail "cannot write the noflow fixture"
one_line_error "no data flow" "$T/noflow"
grep -q 'no data flow' "$T/err" || fail "noflow: $(cat "$T/err")"
s1=$(ls "$SRC"/tests/fixtures/schema1/*-train-*.tar.zst | head -1)
one_line_error "schema 1" "$s1"
grep -q 'schema-1 trace has no data flow' "$T/err" || fail "schema 1: $(cat "$T/err")"
one_line_error "missing trace" "$T/nothing-here"
one_line_error "no trace" --format csv
one_line_error "bad format" --format xml "$T/chain"

# recorded workloads (tiny preset)
ensure_sessiond
"$FATHOM" record speech --preset tiny --steps 5 --threads 1 -o "$T/speech.tar.zst" --quiet >/dev/null 2>"$T/err" ||
    fail "record speech: $(cat "$T/err")"
got=$(par_max --skip-first 1 "$T/speech.tar.zst") || fail "speech: analyze parallelism failed"
awk -v p="$got" 'BEGIN { exit !(p > 1.15) }' ||
    fail "speech: parallelism $got in its highest step, want more than 1.15 (its two RNN directions)"
note "speech train tiny: $got (the highest step; all steps $(par --skip-first 1 "$T/speech.tar.zst"))"
speech=$got
mlp=$("$TRACE_MLP" record --dir "$T" 3 1 infer) || fail "trace_mlp record (inference)"
got=$(par --skip-first 1 "$mlp") || fail "mlp inference: analyze parallelism failed"
near "$got" 1.0 0.01 || fail "mlp inference: parallelism $got, want 1.0 (a chain)"
note "2-layer MLP, inference: $got"
mlp=$("$TRACE_MLP" record --dir "$T" 3) || fail "trace_mlp record"
got=$(par --skip-first 1 "$mlp") || fail "mlp: analyze parallelism failed"
# training: backward, a layer's weight gradient beside the gradient it passes down, and each update beside
# the gradients after its own: how much of the op time that is depends on the ops' relative times (1.31 with
# sgemm's products and 1.39-1.46 with MatMul's register tiles on AMD EPYC VMs, 1.57-1.61 with AVX-512's
# on an Intel Xeon VM), so it is judged against speech's bidirectional RNN and 1
awk -v p="$got" -v s="$speech" 'BEGIN { exit !(p >= 0.99 && p < s) }' ||
    fail "mlp: parallelism $got, want at least 1 and below speech's $speech"
note "2-layer MLP, training: $got"
