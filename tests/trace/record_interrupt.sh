#!/bin/sh
# Ctrl-C during a recording (docs/design.md, "The trace"):
#  1. one SIGINT: the workload stops at its next op boundary, flushes its
#     op records and ends its run; the trace is archived with
#     status=interrupted, passes the lossless checks and `fathom analyze`
#     reads it; exit status 130; no session or temporary file left;
#  2. SIGTERM then SIGTERM again: the recording is abandoned: no archive,
#     no session, no temporary file, the workload gone; exit status 143
#     (130 and 143 are 128 + the signal).
. "$(dirname "$0")/lib.sh"
ensure_sessiond

# waits until recorder $1 has its session and the workload has run a step
wait_running() {
    for _ in $(seq 200); do
        [ -n "$("$TRACE_MLP" sessions | grep -F -- "-$1-")" ] && break
        sleep 0.05
    done
    sleep 1.5
}

"$FATHOM" record memnet --preset tiny --steps 100000000 --dir "$T/out" >"$T/out.txt" 2>"$T/err" &
rp=$!
wait_running $rp
kill -INT $rp
wait $rp
rc=$?
[ $rc = 130 ] || fail "want exit status 130 after SIGINT, got $rc: $(cat "$T/err")"
grep -q "interrupted by signal 2 .*archived with status=interrupted" "$T/err" || fail "no message: $(cat "$T/err")"
arch=$(cat "$T/out.txt")
[ -f "$arch" ] || fail "no archive for an interrupted run: '$arch'"
extract "$arch" "$T/x"
grep -q '^status=interrupted$' "$T/x/MANIFEST" || fail "MANIFEST: $(grep status "$T/x/MANIFEST")"
steps=$(grep -c ' fathom:step_end: ' "$(babeltrace2 "$T/x/trace" >"$T/plain.txt"; echo "$T/plain.txt")")
[ "$steps" -ge 1 ] || fail "the interrupted run recorded no step"
check_trace "$T/x/trace" "$T/bt" "$steps"
grep -q ' fathom:run_end: .*status = 7,' "$T/bt.txt" || fail "run_end does not say interrupted: $(grep run_end "$T/bt.txt")"
"$FATHOM" analyze breakdown "$arch" >"$T/bd.txt" 2>"$T/bd.err" || fail "analyze breakdown of the interrupted run: $(cat "$T/bd.err")"
grep -q "^steps: $steps kept of $steps" "$T/bd.txt" || fail "breakdown: $(head -3 "$T/bd.txt")"
check_no_session_left
[ -z "$(ls -A "$TMPDIR")" ] || fail "temporary files left: $(ls -A "$TMPDIR")"
note "SIGINT: $steps steps archived as interrupted"

"$FATHOM" record memnet --preset tiny --steps 100000000 --dir "$T/out2" >"$T/out2.txt" 2>"$T/err2" &
rp=$!
wait_running $rp
kill -TERM $rp
sleep 0.01
kill -TERM $rp
wait $rp
rc=$?
[ $rc = 143 ] || fail "want exit status 143 after two SIGTERMs, got $rc: $(cat "$T/err2")"
[ ! -e "$T/out2" ] || [ -z "$(ls -A "$T/out2")" ] || fail "an archive was written for an abandoned run: $(ls -A "$T/out2")"
check_no_session_left
[ -z "$(ls -A "$TMPDIR")" ] || fail "temporary files left: $(ls -A "$TMPDIR")"
pgrep -f "fathom run memnet --preset tiny --steps 100000000" >/dev/null && fail "the workload is still running"
echo PASS
