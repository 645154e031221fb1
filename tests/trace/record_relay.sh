#!/bin/sh
# --relay: the trace streams to a real lttng-relayd on loopback (random
# free ports) and arrives, decodable and complete, in the relay's output.
. "$(dirname "$0")/lib.sh"
command -v lttng-relayd >/dev/null || fail "lttng-relayd is not installed"
ensure_sessiond
started=0
for _ in 1 2 3 4 5 6 7 8; do
    base=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom) % 30000 ))
    c=$base; d=$((base + 1)); l=$((base + 2))
    rm -rf "$T/relay"
    lttng-relayd -C "tcp://127.0.0.1:$c" -D "tcp://127.0.0.1:$d" -L "tcp://127.0.0.1:$l" -o "$T/relay" \
        >"$T/relayd.log" 2>&1 &
    rpid=$!
    OWN_PIDS="$OWN_PIDS $rpid"
    up=0
    for _ in $(seq 40); do
        kill -0 "$rpid" 2>/dev/null || break
        if ss -ltn 2>/dev/null | grep -q "127.0.0.1:$c " && ss -ltn | grep -q "127.0.0.1:$d "; then up=1; break; fi
        sleep 0.05
    done
    if [ $up = 1 ]; then started=1; break; fi
    kill "$rpid" 2>/dev/null; wait "$rpid" 2>/dev/null
done
[ $started = 1 ] || fail "cannot start lttng-relayd: $(tail -3 "$T/relayd.log")"
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
