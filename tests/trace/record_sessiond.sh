#!/bin/sh
# Recording works when a session daemon is already running (and leaves it
# running) and when none is (the recorder starts one and stops it after).
. "$(dirname "$0")/lib.sh"
case "${1:-}" in
running)
    ensure_sessiond
    arch=$("$TRACE_MLP" record --dir "$T/out" 3) || fail "record with a running daemon failed"
    sessiond_alive || fail "the recorder stopped a session daemon it did not start"
    [ "$OWN_SESSIOND" = 0 ] || kill -0 "$OWN_SESSIOND_PID" || fail "our session daemon is gone"
    extract "$arch" "$T/x"
    check_trace "$T/x/trace" "$T/bt" 3
    ;;
none)
    sessiond_alive && skip "a session daemon is running (not ours to stop)"
    arch=$("$TRACE_MLP" record --dir "$T/out" 3 2>"$T/err") || fail "record without a daemon failed: $(cat "$T/err")"
    extract "$arch" "$T/x"
    check_trace "$T/x/trace" "$T/bt" 3
    pid=$(sed -n 's/.*started lttng-sessiond \([0-9]*\).*/\1/p' "$T/err")
    # (another test may start a daemon meanwhile: go by the pid)
    [ -n "$pid" ] || fail "the recorder did not start a session daemon, yet none was running"
    kill -0 "$pid" 2>/dev/null && fail "the recorder left the session daemon it started ($pid) running"
    note "the recorder started lttng-sessiond $pid and stopped it"
    ;;
*) fail "usage: record_sessiond.sh running|none" ;;
esac
check_no_session_left
echo PASS
