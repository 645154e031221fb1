#!/bin/sh
# analyze_recorded.sh PLUGIN_DIR -- fathom analyze on traces really recorded
# with LTTng (tests/trace_mlp through the recorder behind `fathom record`):
# the counts agree with the recorder's own tally, a clean trace earns no
# warning, the plugin agrees with the CLI, the roofline reads it against
# `fathom peak`'s ceilings, the Perfetto export holds every op as a nested
# slice, and a recording made with a tiny
# discarding channel is flagged with the exact number of lost events.
# Env as tests/trace/lib.sh: FATHOM, TRACE_MLP, TEST_TMP.
. "$(dirname "$0")/trace/lib.sh"
PLUGINS=$1
command -v jq >/dev/null || skip "jq is not installed"
ensure_sessiond

# a clean recording: 8 steps, 2 inter-op workers (ops interleave on threads)
arch=$("$TRACE_MLP" record --dir "$T/rec" 8 2 2>"$T/rec.err" | tail -1) || fail "record: $(cat "$T/rec.err")"
pairs=$(sed -n 's/.*events, \([0-9]*\) op pairs.*/\1/p' "$T/rec.err")
[ -n "$pairs" ] && [ "$pairs" -gt 0 ] || fail "no op pair count from the recorder: $(cat "$T/rec.err")"
"$FATHOM" analyze breakdown --format json "$arch" >"$T/a.json" 2>"$T/a.err" || fail "analyze: $(cat "$T/a.err")"
[ ! -s "$T/a.err" ] || fail "warnings on a clean recording: $(cat "$T/a.err")"
sum=$(jq '[.traces[0].op_types[].count] | add' "$T/a.json")
[ "$sum" = "$pairs" ] || fail "fathom analyze counts $sum ops, the recorder $pairs"
[ "$(jq -r '.traces[0].model + "/" + .traces[0].mode + "/" + (.traces[0].steps|tostring)' "$T/a.json")" = mlp/train/8 ] \
    || fail "metadata: $(jq -c '.traces[0] | del(.op_types, .classes)' "$T/a.json")"
[ "$(jq '[.traces[0].op_types[].share] | add | . * 1e6 | round' "$T/a.json")" = 1000000 ] || fail "shares do not sum to 1"
note "clean recording: $pairs ops, $(jq '.traces[0].op_types | length' "$T/a.json") op types"
# skipping steps: the MLP runs the same ops every step
"$FATHOM" analyze breakdown --format json --skip-first 1 --skip-last 1 "$arch" >"$T/s.json" || fail "analyze --skip"
kept=$(jq '[.traces[0].op_types[].count] | add' "$T/s.json")
[ $((kept * 8)) -eq $((pairs * 6)) ] || fail "6 of 8 steps hold $kept of $pairs ops"
# the plugin in babeltrace2 and the CLI on the extracted directory agree
extract "$arch" "$T/x"
"$FATHOM" analyze breakdown --format json "$T/x" >"$T/dir.json" || fail "analyze on the directory"
cmp -s "$T/a.json" "$T/dir.json" || fail "archive and directory give different results"
babeltrace2 --plugin-path="$PLUGINS" "$T/x/trace" -c sink.fathom.breakdown -p 'format="json"' >"$T/bt.json" 2>"$T/bt.err" \
    || fail "babeltrace2 -c sink.fathom.breakdown: $(head -5 "$T/bt.err")"
cmp -s "$T/a.json" "$T/bt.json" || fail "the plugin and fathom analyze disagree: $(diff "$T/a.json" "$T/bt.json" | head -5)"

# the roofline of the recording against this machine's ceilings, measured by fathom peak
"$FATHOM" peak --format json --size 256 >"$T/peak.json" 2>/dev/null || fail "fathom peak --format json"
"$FATHOM" analyze roofline --peak "$T/peak.json" --format json "$arch" >"$T/rl.json" 2>"$T/rl.err" \
    || fail "analyze roofline: $(cat "$T/rl.err")"
[ ! -s "$T/rl.err" ] || fail "roofline of this machine's recording warned: $(cat "$T/rl.err")"
jq -e --argjson n "$pairs" '.traces[0] | ([.op_types[].count] | add) == $n and .peak_gflops > 0 and .peak_gbs > 0
      and (.op_types | map(select(.op == "MatMul"))[0] | .intensity > 1 and .gflops > 0 and .bound != "none")' \
    "$T/rl.json" >/dev/null || fail "roofline of the recording: $(jq -c '.traces[0].op_types[0]' "$T/rl.json")"
note "roofline: MatMul at $(jq '.traces[0].op_types | map(select(.op == "MatMul"))[0].of_roof' "$T/rl.json") of its roof"
# the recording as a Perfetto timeline: every op a slice on its thread, nested
"$FATHOM" export --perfetto -o "$T/rec.json" "$arch" >/dev/null 2>"$T/ex.err" || fail "export: $(cat "$T/ex.err")"
jq -e --argjson n "$pairs" '[.traceEvents[] | select(.ph == "X")] | length == $n' "$T/rec.json" \
    >/dev/null || fail "export: not $pairs op slices"
# a recording of this version: attributes by name, shapes of every input
jq -e '[.traceEvents[] | select(.ph == "X" and .name == "MatMul")][0].args
       | (.attrs | has("transpose_a") and has("transpose_b")) and (.input_shapes | length == 2)
         and (.input_shapes[0] | length == 2)' "$T/rec.json" >/dev/null \
    || fail "export: MatMul's named attrs and shapes: $(jq -c '[.traceEvents[] | select(.name == "MatMul")][0].args' "$T/rec.json")"
jq -e '.traceEvents | map(select(.ph == "B" or .ph == "E")) | group_by(.tid)
       | map(reduce .[] as $e ({d: 0, low: 0}; .d += (if $e.ph == "B" then 1 else -1 end) | .low = ([.low, .d] | min))
             | .d == 0 and .low == 0) | all' "$T/rec.json" >/dev/null || fail "export: slices do not nest per thread"
note "export: $(jq '.traceEvents | length' "$T/rec.json") trace events over $(jq '[.traceEvents[] | .tid] | unique | length' "$T/rec.json") threads"

# a lossy recording: a tiny channel in discard mode while every core is busy
ncpu=$(getconf _NPROCESSORS_ONLN)
BUSY=""
for _ in $(seq "$ncpu"); do
    sh -c 'while :; do :; done' &
    BUSY="$BUSY $!"
    OWN_PIDS="$OWN_PIDS $!"
done
"$TRACE_MLP" record --discard 1 --subbuf 4096 --nsubbuf 2 --dir "$T/lossy" 400 2 >/dev/null 2>"$T/lossy.err"
lossy=$(ls "$T"/lossy/*.tar.zst 2>/dev/null | head -1)
[ -n "$lossy" ] || fail "no lossy archive: $(cat "$T/lossy.err")"
extract "$lossy" "$T/l"
lost=$(sed -n 's/^discarded=//p' "$T/l/MANIFEST")
if [ -n "$lost" ] && [ "$lost" -gt 0 ]; then
    "$FATHOM" analyze breakdown "$lossy" >/dev/null 2>"$T/l.err" || fail "analyze on a lossy trace: $(cat "$T/l.err")"
    grep -q "warning: .*: $lost events discarded by the tracer" "$T/l.err" || fail "no warning naming $lost lost events: $(cat "$T/l.err")"
    "$FATHOM" analyze breakdown --strict "$lossy" >/dev/null 2>&1 && fail "--strict accepted a lossy trace"
    note "lossy recording: $(grep -c warning "$T/l.err") warnings, $lost events lost"
else
    note "the discarding channel lost nothing this time: lossy check not exercised"
fi

# live: a --live session streaming to our own lttng-relayd, analyzed through
# net:// while the workload runs; the analysis ends when the session does
kill_busy() { for p in $BUSY; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }
kill_busy
command -v lttng-relayd >/dev/null || skip "lttng-relayd is not installed"
start_relayd
S="fathom-$$-analyze-live"
lttng create "$S" --live=100000 --set-url="net://127.0.0.1:$c:$d" >"$T/lttng.log" 2>&1 || fail "lttng create --live: $(cat "$T/lttng.log")"
destroy() { lttng destroy "$S" >/dev/null 2>&1; }
{ lttng enable-channel -u -s "$S" ch --subbuf-size=1M &&
  lttng enable-event -u -s "$S" -c ch 'fathom:*' &&
  lttng add-context -u -s "$S" -c ch -t vpid -t vtid -t procname &&
  lttng untrack -u -s "$S" --vpid --all &&
  lttng start "$S"; } >>"$T/lttng.log" 2>&1 || { destroy; fail "live session setup: $(tail -3 "$T/lttng.log")"; }
timeout 120 "$FATHOM" analyze breakdown --format json "net://127.0.0.1:$l/host/$(hostname)/$S" >"$T/live.json" 2>"$T/live.err" &
apid=$!
sleep 1
# only our workload's events (other traced processes may run beside us): it
# waits at a fifo until its pid is tracked, then execs
mkfifo "$T/gate"
( read -r _ <"$T/gate"; LTTNG_UST_REGISTER_TIMEOUT=-1 FATHOM_TRACE=1 exec "$TRACE_MLP" run 6 2 ) >"$T/live.run" 2>&1 &
wpid=$!
lttng track -u -s "$S" --vpid "$wpid" >>"$T/lttng.log" 2>&1 || { echo >"$T/gate"; wait "$wpid"; destroy; fail "lttng track: $(tail -2 "$T/lttng.log")"; }
echo go >"$T/gate"
wait "$wpid" || { destroy; fail "traced run: $(cat "$T/live.run")"; }
sleep 1
lttng stop "$S" >/dev/null 2>&1
destroy
wait "$apid" || fail "analyze on net://: $(cat "$T/live.err")"
[ ! -s "$T/live.err" ] || fail "warnings on the live trace: $(cat "$T/live.err")"
liveops=$(sed -n 's/.* \([0-9]*\) ops, status ok.*/\1/p' "$T/live.run")
[ "$(jq '[.traces[0].op_types[].count] | add' "$T/live.json")" = "$liveops" ] \
    || fail "live: $(jq '[.traces[0].op_types[].count] | add' "$T/live.json") ops counted, $liveops ran"
[ "$(jq '.traces[0].steps' "$T/live.json")" = 6 ] || fail "live: steps"
note "live session: $liveops ops over net://"
echo PASS
