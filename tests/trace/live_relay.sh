#!/bin/sh
# Live analysis through a real lttng-relayd on loopback: an analyzer started
# first waits for the session (named with --session), `fathom record
# --relay` creates an LTTng live session and prints the URL to read it
# with, `fathom analyze --list` lists it, `fathom analyze breakdown URL`
# prints the table so far while the recording runs (more than once before
# it ends) and, when the run is over, a final table equal to the offline
# analysis of what the relay stored.
. "$(dirname "$0")/lib.sh"
ensure_sessiond
start_relayd

session="live-$$-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
url="net://127.0.0.1:$l/host/$(hostname)/$session"
"$FATHOM" analyze breakdown --top 5 --interval 0.5 "$url" >"$T/live.txt" 2>"$T/live.err" &
apid=$!
OWN_PIDS="$OWN_PIDS $apid"
sleep 0.5
"$FATHOM" record memnet --preset small --steps 600 --live-timer 200000 --relay "net://127.0.0.1:$c:$d" --session "$session" \
    >"$T/rec.out" 2>"$T/rec.err" &
rec=$!
# the URL, printed when the recording starts
for _ in $(seq 100); do grep -q "live at" "$T/rec.err" && break; sleep 0.05; done
grep -q "live at $url " "$T/rec.err" || fail "the recorder did not print $url: $(cat "$T/rec.err")"
"$FATHOM" analyze --list "net://127.0.0.1:$l" >"$T/list.txt" 2>&1 || fail "analyze --list: $(cat "$T/list.txt")"
grep -q "^$url " "$T/list.txt" || fail "analyze --list does not show $url: $(cat "$T/list.txt")"
wait $rec || fail "record --relay failed: $(cat "$T/rec.err")"
during=$(grep -c '^== so far' "$T/live.txt")
wait $apid || fail "the live analysis failed: $(cat "$T/live.err")"
[ "$during" -ge 2 ] || fail "want the table so far at least twice while recording, got $during"
grep -q '^== final' "$T/live.txt" || fail "no final table"
[ ! -s "$T/live.err" ] || fail "the live analysis warned: $(cat "$T/live.err")"
kill "$rpid"; wait "$rpid" 2>/dev/null
meta=$(find "$T/relay" -path "*$session*" -name metadata | head -1)
[ -n "$meta" ] || fail "the relay stored no trace of $session"
"$FATHOM" analyze breakdown --top 5 "$(dirname "$meta")" >"$T/offline.txt" || fail "offline analysis of the relay's trace"
sed -n '/^== final/,$p' "$T/live.txt" | tail -n +2 | sed "s#$url#SRC#" >"$T/final.txt"
sed "s#$(dirname "$meta")#SRC#" "$T/offline.txt" >"$T/offline2.txt"
cmp -s "$T/final.txt" "$T/offline2.txt" || { diff "$T/final.txt" "$T/offline2.txt" | head -10 >&2; fail "the final live table differs from the offline analysis"; }
note "$during tables while recording; the final one equals the offline analysis"
check_no_session_left
echo PASS
