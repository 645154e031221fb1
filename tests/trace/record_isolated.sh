#!/bin/sh
# A recording holds its own workload's events alone: two recordings made at
# once, beside a third traced process that no session asked for, each get
# exactly their own run (the session tracks the workload's pid only).
. "$(dirname "$0")/lib.sh"
ensure_sessiond
# a traced process outside any recording, emitting all along
( while :; do LTTNG_UST_REGISTER_TIMEOUT=0 FATHOM_TRACE=1 "$TRACE_MLP" run 20 1 >/dev/null 2>&1 || exit; done ) &
OWN_PIDS="$OWN_PIDS $!"
"$TRACE_MLP" record --dir "$T/a" 30 1 >"$T/a.out" 2>"$T/a.err" &
pa=$!
"$TRACE_MLP" record --dir "$T/b" 50 1 >"$T/b.out" 2>"$T/b.err" &
pb=$!
wait "$pa" || fail "recording a: $(cat "$T/a.err")"
wait "$pb" || fail "recording b: $(cat "$T/b.err")"
extract "$(tail -1 "$T/a.out")" "$T/xa"
extract "$(tail -1 "$T/b.out")" "$T/xb"
check_trace "$T/xa/trace" "$T/bta" 30
check_trace "$T/xb/trace" "$T/btb" 50
for x in a b; do
    n=$(grep -c 'fathom:run_begin' "$T/bt$x.txt")
    [ "$n" = 1 ] || fail "recording $x holds $n runs"
    np=$(sed -n 's/.*vpid = \([0-9]*\).*/\1/p' "$T/bt$x.txt" | sort -u | wc -l)
    [ "$np" = 1 ] || fail "recording $x holds events of $np processes"
done
note "two concurrent recordings beside a third traced process: one run and one process each"
check_no_session_left
echo PASS
