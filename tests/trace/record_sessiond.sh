#!/bin/sh
# Recording works when a session daemon is already running (and leaves it
# running) and when none is (the recorder starts one and stops it after).
. "$(dirname "$0")/lib.sh"
case "${1:-}" in
running)
    ensure_sessiond
    arch=$("$TRACE_MLP" record --dir "$T/out" 3) || fail "record with a running daemon failed"
    sessiond_alive || fail "the recorder stopped a session daemon it did not start"
    extract "$arch" "$T/x"
    check_trace "$T/x/trace" "$T/bt" 3
    ;;
none)
    sessiond_alive && skip "a session daemon is running (not ours to stop)"
    arch=$("$TRACE_MLP" record --dir "$T/out" 3) || fail "record without a daemon failed"
    extract "$arch" "$T/x"
    check_trace "$T/x/trace" "$T/bt" 3
    sleep 0.2
    sessiond_alive && fail "the recorder left the session daemon it started running"
    pgrep -x lttng-sessiond >/dev/null && fail "an lttng-sessiond process is left"
    ;;
*) fail "usage: record_sessiond.sh running|none" ;;
esac
check_no_session_left
echo PASS
