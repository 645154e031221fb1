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
during=$(grep -c '^== memnet/train on .*: [0-9]* steps so far, recording goes on' "$T/live.txt")
wait $apid || fail "the live analysis failed: $(cat "$T/live.err")"
[ "$during" -ge 2 ] || fail "want the table so far at least twice while recording, got $during"
grep -q '^== final' "$T/live.txt" || fail "no final table"
# before the session began: progress on stderr, nothing else
if grep -v ": waiting for the session's first events ([0-9.]* s)$" "$T/live.err" | grep -q .; then
    fail "the live analysis warned: $(cat "$T/live.err")"
fi
kill "$rpid"; wait "$rpid" 2>/dev/null
meta=$(find "$T/relay" -path "*$session*" -name metadata | head -1)
[ -n "$meta" ] || fail "the relay stored no trace of $session"
"$FATHOM" analyze breakdown --top 5 "$(dirname "$meta")" >"$T/offline.txt" || fail "offline analysis of the relay's trace"
sed -n '/^== final/,$p' "$T/live.txt" | tail -n +2 | sed "s#$url#SRC#" >"$T/final.txt"
sed "s#$(dirname "$meta")#SRC#" "$T/offline.txt" >"$T/offline2.txt"
cmp -s "$T/final.txt" "$T/offline2.txt" || { diff "$T/final.txt" "$T/offline2.txt" | head -10 >&2; fail "the final live table differs from the offline analysis"; }
note "$during tables while recording; the final one equals the offline analysis"
check_no_session_left

# A viewer that joins late (after 2 s and 100 steps): the recorder's
# statedump gives it the model and every op from the start, so its live
# table has the op types with counts before the recording ends, and its
# final counts are those of the offline analysis of what the relay stored.
start_relayd
"$FATHOM" record memnet --preset tiny --steps 1000000 --live-timer 200000 --relay "net://127.0.0.1:$c:$d" \
    >"$T/late-rec.out" 2>"$T/late-rec.err" &
rec=$!
OWN_PIDS="$OWN_PIDS $rec"
for _ in $(seq 100); do grep -q "live at" "$T/late-rec.err" && break; sleep 0.05; done
lurl=$(sed -n 's/^fathom record: live at \([^ ]*\) .*/\1/p' "$T/late-rec.err")
[ -n "$lurl" ] || fail "the recorder printed no URL: $(cat "$T/late-rec.err")"
sleep 2
joined=0
for _ in $(seq 20); do # until it joins after 100 steps (a loaded machine steps slowly)
    FATHOM_LIVE_LINGER=1 "$FATHOM" analyze breakdown --interval 0.5 "$lurl" >"$T/late.txt" 2>"$T/late.err" &
    apid=$!
    for _ in $(seq 100); do grep -q 'steps so far' "$T/late.txt" && break; sleep 0.1; done
    k=$(sed -n 's/^== .* (joined at step \([0-9]*\))$/\1/p' "$T/late.txt" | head -1)
    [ -n "$k" ] || fail "no live table of the late viewer: $(head -3 "$T/late.txt") $(cat "$T/late.err")"
    [ "$k" -ge 100 ] && { joined=$k; break; }
    kill "$apid"; wait "$apid" 2>/dev/null
    sleep 1
done
[ "$joined" -ge 100 ] || fail "the recording did not reach 100 steps"
OWN_PIDS="$OWN_PIDS $apid"
kill -0 "$rec" || fail "the recording ended before the late viewer's table"
first=$(awk '/steps so far, recording goes on/ { n++ } n == 1' "$T/late.txt")
echo "$first" | grep -q '^== memnet train (tiny' || fail "the late viewer's table does not name the model: $first"
echo "$first" | grep -Eq '^MatMul +matrix +[1-9][0-9]* ' || fail "the late viewer's table has no MatMul ops: $first"
kill -INT "$rec"
wait "$rec"
[ $? = 130 ] && grep -q "interrupted by signal 2; the relay has its trace" "$T/late-rec.err" ||
    fail "the recording stopped by SIGINT: $(cat "$T/late-rec.err")"
wait "$apid" || fail "the late viewer failed: $(cat "$T/late.err")"
grep -q '^== final' "$T/late.txt" || fail "the late viewer has no final table"
if grep -v ": waiting for the session's first events ([0-9.]* s)$" "$T/late.err" | grep -q .; then
    fail "the late viewer warned: $(cat "$T/late.err")"
fi
# after the end: a one-line error, at once, naming where the relay stored it
t0=$(date +%s)
if "$FATHOM" analyze breakdown "$lurl" >/dev/null 2>"$T/after.err"; then fail "joining an ended session succeeded"; fi
[ $(( $(date +%s) - t0 )) -le 5 ] || fail "joining an ended session took more than 5 s"
[ "$(wc -l <"$T/after.err")" = 1 ] || fail "want one line joining an ended session: $(cat "$T/after.err")"
kill "$rpid"; wait "$rpid" 2>/dev/null
lsession=${lurl##*/}
meta=$(find "$T/relay" -path "*$lsession*" -name metadata | head -1)
[ -n "$meta" ] || fail "the relay stored no trace of $lsession"
ldir=$(find "$T/relay" -maxdepth 2 -type d -name "$lsession-*" | head -1)
grep -q "its trace is in $ldir " "$T/after.err" || fail "the error does not name $ldir: $(cat "$T/after.err")"
# offline, the statedumps change nothing: one definition per node, no warning
nsteps=$(babeltrace2 "$(dirname "$meta")" 2>/dev/null | grep -c ' fathom:step_end: ')
check_trace "$(dirname "$meta")" "$T/late-bt" "$nsteps"
nstate=$(grep -c ' fathom:run_state: ' "$T/late-bt.txt")
[ "$nstate" -ge 1 ] || fail "the relay's trace holds no statedump"
"$FATHOM" analyze breakdown "$ldir" >"$T/late-off.txt" 2>"$T/late-off.err" || fail "offline analysis of $ldir"
[ ! -s "$T/late-off.err" ] || fail "offline analysis of the statedumps warned: $(cat "$T/late-off.err")"
counts() { sed -n '/^op type/,/^$/p' "$1" | awk 'NR > 1 && NF >= 3 { print $1, $3 }' | sort; }
counts "$T/late-off.txt" >"$T/late-off.counts"
sed -n '/^== final/,$p' "$T/late.txt" >"$T/late-final.txt"
counts "$T/late-final.txt" >"$T/late-final.counts"
[ -s "$T/late-off.counts" ] && cmp -s "$T/late-final.counts" "$T/late-off.counts" ||
    { diff "$T/late-final.counts" "$T/late-off.counts" | head -6 >&2; fail "the late viewer's final op counts differ from the offline analysis"; }
note "joined at step $joined: $(wc -l <"$T/late-off.counts") op types, final counts equal offline ($nstate statedumps); after the end: $(cat "$T/after.err")"
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

# A fleet: two recorders in network namespaces of their own (each with its
# host name and session daemon), a relay in a third, joined by veth pairs;
# `analyze net://RELAY` lists both sessions, `--all` watches both live.
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
    note "not root (or no ip): the network-namespace fleet is left out"
    echo PASS
    exit 0
fi
NS="fathom$$"
netns_down() {
    for n in r a b; do ip netns del "$NS$n" 2>/dev/null; done
}
trap 'cleanup; netns_down' EXIT
ip netns add "${NS}r" 2>/dev/null || { note "cannot make network namespaces here: the fleet part is left out"; echo PASS; exit 0; }
ip netns add "${NS}a" && ip netns add "${NS}b" || fail "ip netns add"
ip -n "${NS}r" link set lo up && ip -n "${NS}a" link set lo up && ip -n "${NS}b" link set lo up || fail "lo up"
k=1
for n in a b; do # a veth pair from each recorder's namespace to the relay's: 10.77.k.2 -> 10.77.k.1
    ip link add "v$$$n" netns "$NS$n" type veth peer name "w$$$n" netns "${NS}r" || fail "ip link add veth"
    ip -n "$NS$n" addr add "10.77.$k.2/24" dev "v$$$n" && ip -n "$NS$n" link set "v$$$n" up &&
        ip -n "${NS}r" addr add "10.77.$k.1/24" dev "w$$$n" && ip -n "${NS}r" link set "w$$$n" up || fail "veth $n"
    k=$((k + 1))
done
ip netns exec "${NS}r" lttng-relayd -o "$T/fleet" >"$T/fleet-relayd.log" 2>&1 &
frelay=$!
OWN_PIDS="$OWN_PIDS $frelay"
for _ in $(seq 60); do ip netns exec "${NS}r" ss -ltn | grep -q ":5344 " && break; sleep 0.1; done
# a recorder on host fleet-$1, in namespace $2, to relay address $3 (default ports)
fleet_record() {
    ip netns exec "$2" unshare --uts --mount --propagation private sh -c '
        hostname "$1" && mkdir -p /var/run/lttng && mount -t tmpfs none /var/run/lttng &&
        mount -t tmpfs none /dev/shm && HOME=$2 exec "$3" record "$4" --preset tiny --steps 1000000 \
            --live-timer 200000 --relay "net://$5"' sh "fleet-$1" "$T" "$FATHOM" "$4" "$3" \
        >"$T/fleet-$1.out" 2>"$T/fleet-$1.err" &
}
fleet_record a "${NS}a" 10.77.1.1 memnet
fa=$!
fleet_record b "${NS}b" 10.77.2.1 autoenc
fb=$!
OWN_PIDS="$OWN_PIDS $fa $fb"
for f in a b; do
    for _ in $(seq 200); do grep -q "live at" "$T/fleet-$f.err" && break; sleep 0.05; done
    grep -q "live at net://10.77.*/host/fleet-$f/" "$T/fleet-$f.err" || fail "recorder $f: $(cat "$T/fleet-$f.err")"
done
ip netns exec "${NS}r" "$FATHOM" analyze breakdown net://127.0.0.1 >"$T/fleet-list.txt" 2>&1 ||
    fail "listing the fleet: $(cat "$T/fleet-list.txt")"
grep -Eq '^fleet-a +fathom-[^ ]+ +memnet +train ' "$T/fleet-list.txt" &&
    grep -Eq '^fleet-b +fathom-[^ ]+ +autoenc +train ' "$T/fleet-list.txt" ||
    fail "the list does not show both sessions with their model: $(cat "$T/fleet-list.txt")"
FATHOM_LIVE_LINGER=1 ip netns exec "${NS}r" "$FATHOM" analyze breakdown --all --interval 0.5 --top 3 net://127.0.0.1 \
    >"$T/fleet-all.txt" 2>"$T/fleet-all.err" &
fall=$!
OWN_PIDS="$OWN_PIDS $fall"
both=0
for _ in $(seq 300); do
    awk '/^== 2 live sessions/ { b = "" } { b = b $0 "\n" } END { printf "%s", b }' "$T/fleet-all.txt" >"$T/fleet-last.txt"
    if grep -Eq '^fleet-a .* memnet/train: [0-9]+ steps so far, .* in [1-9][0-9]* ops' "$T/fleet-last.txt" &&
        grep -Eq '^fleet-b .* autoenc/train: [0-9]+ steps so far, .* in [1-9][0-9]* ops' "$T/fleet-last.txt"; then
        both=1
        break
    fi
    sleep 0.1
done
[ $both = 1 ] || fail "--all did not show both sessions live: $(tail -4 "$T/fleet-all.txt") $(cat "$T/fleet-all.err")"
kill -INT "$fa" "$fb"
wait "$fa"; wait "$fb"
wait "$fall" || fail "--all failed: $(cat "$T/fleet-all.err")"
grep -q '^== memnet train (tiny' "$T/fleet-all.txt" && grep -q '^== autoenc train (tiny' "$T/fleet-all.txt" ||
    fail "--all's final analysis lacks a session: $(tail -20 "$T/fleet-all.txt")"
kill "$frelay"; wait "$frelay" 2>/dev/null
netns_down
note "fleet: fleet-a (memnet) and fleet-b (autoenc) in network namespaces, listed and watched live with --all"
echo PASS
