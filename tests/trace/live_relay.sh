#!/bin/sh
# Live analysis through a real lttng-relayd on loopback: an analyzer started
# first waits for the session (named with --session), `fathom record
# --relay` creates an LTTng live session and prints the URL to read it
# with, `fathom analyze --list` lists it, `fathom analyze breakdown URL`
# prints the table so far while the recording runs (more than once before
# it ends) and, when the run is over, a final table equal to the offline
# analysis of what the relay stored.  Then two recorders at once, one of
# them on another "machine" (its own host name and session daemon, in
# namespaces of its own), into the same relay, analyzed together live.
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

# two recorders, two machines, one relay, one analysis of both
if ! unshare --uts --mount --propagation private true 2>/dev/null; then
    note "no namespaces here: the two-machine part is left out"
    echo PASS
    exit 0
fi
start_relayd
s1="live-a-$$" s2="live-b-$$"
u1="net://127.0.0.1:$l/host/$(hostname)/$s1" u2="net://127.0.0.1:$l/host/fathom-other-machine/$s2"
"$FATHOM" analyze breakdown --format csv "$u1" "$u2" >"$T/two.csv" 2>"$T/two.err" &
apid=$!
OWN_PIDS="$OWN_PIDS $apid"
sleep 0.5
"$FATHOM" record memnet --preset tiny --steps 200 --live-timer 200000 --relay "net://127.0.0.1:$c:$d" --session "$s1" \
    >"$T/r1.out" 2>"$T/r1.err" &
r1=$!
unshare --uts --mount --propagation private sh -c '
    hostname fathom-other-machine && mkdir -p /var/run/lttng &&
    mount -t tmpfs none /var/run/lttng && mount -t tmpfs none /dev/shm &&
    HOME=$1 exec "$2" record autoenc --preset tiny --steps 60 --live-timer 200000 --relay "$3" --session "$4"' \
    sh "$T" "$FATHOM" "net://127.0.0.1:$c:$d" "$s2" >"$T/r2.out" 2>"$T/r2.err" &
r2=$!
wait $r1 || fail "the first recorder failed: $(cat "$T/r1.err")"
wait $r2 || fail "the second recorder (another machine) failed: $(cat "$T/r2.err")"
grep -q "live at net://127.0.0.1:$l/host/fathom-other-machine/$s2 " "$T/r2.err" || fail "the other machine's URL: $(cat "$T/r2.err")"
wait $apid || fail "the live analysis of both failed: $(cat "$T/two.err")"
kill "$rpid"; wait "$rpid" 2>/dev/null
for pair in "$s1:$u1" "$s2:$u2"; do
    sn=${pair%%:*} url=${pair#*:}
    meta=$(find "$T/relay" -path "*$sn*" -name metadata | head -1)
    [ -n "$meta" ] || fail "the relay stored no trace of $sn"
    "$FATHOM" analyze breakdown --format csv "$(dirname "$meta")" | tail -n +2 | sed "s#^$(dirname "$meta"),##" >"$T/off.csv"
    grep "^$url," "$T/two.csv" | sed "s#^$url,##" >"$T/live2.csv"
    [ -s "$T/live2.csv" ] && cmp -s "$T/live2.csv" "$T/off.csv" ||
        { diff "$T/live2.csv" "$T/off.csv" | head -6 >&2; fail "$sn: the live rows differ from the offline analysis"; }
done
note "two recorders (hosts $(hostname) and fathom-other-machine) analyzed together live"
check_no_session_left
echo PASS
