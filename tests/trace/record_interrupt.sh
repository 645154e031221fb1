#!/bin/sh
# SIGINT or SIGTERM during a recording: the workload stops, the session is destroyed,
# the temporary directory removed, the exit status says so.
. "$(dirname "$0")/lib.sh"
ensure_sessiond
# SIGINT exits 130, SIGTERM 143 (128 + the signal)
for sig in INT:130 TERM:143; do
    want=${sig#*:}
    sig=${sig%:*}
    "$TRACE_MLP" record --dir "$T/out" 100000000 >"$T/out.txt" 2>"$T/err" &
    rp=$!
    for _ in $(seq 100); do
        [ -n "$("$TRACE_MLP" sessions | grep -F -- "-$rp-")" ] && break
        sleep 0.05
    done
    sleep 0.5
    kill -$sig $rp
    wait $rp
    rc=$?
    [ $rc = $want ] || fail "want exit status $want after SIG$sig, got $rc: $(cat "$T/err")"
    grep -q "interrupted" "$T/err" || fail "no message: $(cat "$T/err")"
    check_no_session_left
    [ -z "$(ls -A "$TMPDIR")" ] || fail "temporary files left: $(ls -A "$TMPDIR")"
    [ ! -e "$T/out" ] || [ -z "$(ls -A "$T/out")" ] || fail "an archive was written for an interrupted run"
done
pgrep -f "trace_mlp run 100000000" >/dev/null && fail "the workload is still running"
echo PASS
