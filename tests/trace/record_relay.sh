#!/bin/sh
# --relay: the trace streams to a real lttng-relayd on loopback (random
# free ports) and arrives, decodable and complete, in the relay's output.
. "$(dirname "$0")/lib.sh"
ensure_sessiond
start_relayd
out=$("$TRACE_MLP" record --relay "net://127.0.0.1:$c:$d" 5) || fail "record --relay failed"
session=${out#session }
kill "$rpid"; wait "$rpid" 2>/dev/null
meta=$(find "$T/relay" -path "*$session*" -name metadata | head -1)
[ -n "$meta" ] || fail "no trace of session $session under $T/relay: $(find "$T/relay" | head)"
check_trace "$(dirname "$meta")" "$T/bt" 5
# fathom info reads what the relay stored (no MANIFEST there)
nb=$(sed -n 's/.* fathom:run_end: .*[{,] ops = \([0-9]*\).*/\1/p' "$T/bt.txt")
"$FATHOM" info "$(dirname "$meta")" >"$T/info.txt" || fail "fathom info on the relay's trace failed"
grep -q "^manifest: none" "$T/info.txt" || fail "info: manifest"
grep -q "^ops: $nb records in .* run_end says $nb\$" "$T/info.txt" || fail "info on the relay's trace: $(cat "$T/info.txt")"
# the relay is gone now: a clear error, no session left behind
if "$TRACE_MLP" record --relay "net://127.0.0.1:$c:$d" 2 >/dev/null 2>"$T/err"; then fail "record to a dead relay succeeded"; fi
grep -q "relay" "$T/err" || fail "unclear error for a dead relay: $(cat "$T/err")"
[ "$(wc -l <"$T/err")" = 1 ] || fail "want one line of error for a dead relay: $(cat "$T/err")"
note "dead relay: $(cat "$T/err")"
check_no_session_left
echo PASS
