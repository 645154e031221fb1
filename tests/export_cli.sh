#!/bin/sh
# export_cli.sh FATHOM CTFGEN_TOOL TMP -- `fathom export --perfetto`: the
# Chrome trace-event JSON of traces with known op sequences (every op and
# step a slice, properly nested per thread, in time order; the op arguments;
# the memory counter; the metadata), the output never overwriting anything,
# and bad input.
set -u
FATHOM=$1 GEN=$2
. "$(dirname "$0")/cli_lib.sh"
cli_begin export-cli "$3"
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

"$GEN" "$T/a" conv alexnet train 3 || exit 1
"$GEN" "$T/f" conv x train 2 only_foreign seed=2 || exit 1
"$GEN" "$T/s9" conv alexnet train 2 schema=9 seed=3 || exit 1
head -c 4096 /dev/urandom >"$T/random.bin"

out=$(cd "$T" && "$FATHOM" export --perfetto a 2>"$T/err") || { fail "export: exit"; cat "$T/err"; }
[ "$out" = "a.json: 57 events (36 ops, 3 steps)" ] || fail "export: says '$out'"
[ ! -s "$T/err" ] || { fail "export: stderr"; cat "$T/err"; }
J="$T/a.json"
jq -e '(.traceEvents | map(.ph) | group_by(.) | map({(.[0]): length}) | add) == {"B":3,"E":3,"X":36,"C":10,"M":3,"i":2}' "$J" \
  >/dev/null || fail "export: event counts $(jq -c '.traceEvents | map(.ph) | group_by(.) | map({(.[0]): length}) | add' "$J")"
# every thread's slices nest: depth never below 0 and back to 0 at the end
jq -e '.traceEvents | map(select(.ph == "B" or .ph == "E")) | group_by(.tid)
       | map(reduce .[] as $e ({d: 0, low: 0}; .d += (if $e.ph == "B" then 1 else -1 end) | .low = ([.low, .d] | min))
             | .d == 0 and .low == 0) | all' "$J" >/dev/null || fail "export: slices do not nest per thread"
# ops are complete slices inside their step's slice, on their thread
jq -e '[.traceEvents[] | select(.ph == "X")] | all(.dur >= 0)' "$J" >/dev/null || fail "export: negative durations"
jq -e '[.traceEvents[] | select(.ph == "B" and .cat == "step") | .ts] as $b | [.traceEvents[] | select(.ph == "E") | .ts] as $e
       | [.traceEvents[] | select(.ph == "X")] | all(. as $x | [range(0; $b | length) | select($b[.] <= $x.ts and $x.ts + $x.dur <= $e[.])] | length == 1)' \
  "$J" >/dev/null || fail "export: an op outside its step"
jq -e '[.traceEvents[] | select(.ph == "X" and .cat == "convolution")][0]
       | .name == "Conv2D" and .args.phase == "forward" and .args.node == 0 and .args.inputs == [1, 5]
         and .args.attrs == [1, -1, 0] and (.tid | type) == "number"
         and .args.flops == 1000000 and .args.bytes == 10000' "$J" >/dev/null || fail "export: op args"
# the memory counter's tensors give every op its input and output shapes
jq -e '[.traceEvents[] | select(.ph == "X")][0].args | .input_shapes == [[16, 8], [4, 16, 8]] and .output_shapes == [[4, 16, 8]]' \
  "$J" >/dev/null || fail "export: op shapes $(jq -c '[.traceEvents[] | select(.ph == "X")][0].args' "$J")"
jq -e '[.traceEvents[] | select(.ph == "B" and .cat == "step") | .name] == ["step 0", "step 1", "step 2"]' "$J" \
  >/dev/null || fail "export: steps"
jq -e '[.traceEvents[] | select(.ph == "C")] | .[3].args == {"weight": 2048} and .[4].args == {"weight": 2048, "activation": 2048}
       and .[5].args.activation == 0' "$J" >/dev/null || fail "export: memory counter $(jq -c '[.traceEvents[] | select(.ph == "C")][3:6]' "$J")"
jq -e '.displayTimeUnit == "ns" and .otherData.model == "alexnet" and .otherData.mode == "train" and .otherData.schema == 1
       and ([.traceEvents[] | select(.name == "process_name")][0].args.name == "fathom alexnet train")' "$J" >/dev/null \
  || fail "export: metadata"
"$FATHOM" export --perfetto -o - "$T/a" | jq -e '.traceEvents | length == 57' >/dev/null || fail "export -o -"

# nothing overwritten, nothing left by a failure
echo keep >"$T/exists.json"
"$FATHOM" export --perfetto -o "$T/exists.json" "$T/a" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && [ "$(cat "$T/exists.json")" = keep ] && grep -q "exists: nothing is overwritten" "$T/err" \
  || fail "export onto an existing file: rc $rc"
for bad in "nope.tar.zst" "random.bin" "f" "s9"; do
    "$FATHOM" export --perfetto -o "$T/out-$bad.json" "$T/$bad" >/dev/null 2>"$T/err"; rc=$?
    [ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] || { fail "export of $bad: rc $rc"; cat "$T/err"; }
    ls "$T" | grep -q "out-$bad" && fail "export of $bad left a file"
done
grep -q "schema 9" "$T/err" || fail "export of a schema-9 trace: message $(cat "$T/err")"

# usage
"$FATHOM" export "$T/a" >/dev/null 2>"$T/err"; [ $? -eq 2 ] && grep -q -- "--perfetto" "$T/err" || fail "export without a format"
"$FATHOM" export --perfetto >/dev/null 2>&1; [ $? -eq 2 ] || fail "export without a trace"
"$FATHOM" export --perfetto "$T/a" "$T/a" >/dev/null 2>&1; [ $? -eq 2 ] || fail "export of two traces"
"$FATHOM" export --perfetto --nope "$T/a" >/dev/null 2>&1; [ $? -eq 2 ] || fail "export --nope"
"$FATHOM" export --help | grep -q "ui.perfetto.dev" || fail "export --help"

cli_end "export"
