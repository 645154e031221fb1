#!/bin/sh
# Recording loses nothing while every core is busy, with buffers so small
# that the traced process must block (the channel waits, never discards).
. "$(dirname "$0")/lib.sh"
ensure_sessiond
ncpu=$(getconf _NPROCESSORS_ONLN)
for _ in $(seq "$ncpu"); do
    sh -c 'while :; do :; done' &
    OWN_PIDS="$OWN_PIDS $!"
done
# negative control: the same buffers in discard mode do lose events, and the
# recorder's check says so (so the run below really exercises blocking).
# The consumer daemon is held for a second in the middle of the run, so it
# surely falls behind (left alone it sometimes keeps up with 8 KiB).
"$TRACE_MLP" record --discard 1 --subbuf 4096 --nsubbuf 2 --dir "$T/lossy" 20000 2 >/dev/null 2>"$T/lossy.err" &
ctl=$!
sleep 1
for _ in $(seq 50); do # the consumer daemon starts with the first session
    pgrep -x lttng-consumerd >/dev/null && break
    sleep 0.2
done
pkill -STOP -x lttng-consumerd || fail "no lttng-consumerd to hold"
sleep 1
pkill -CONT -x lttng-consumerd
if wait $ctl; then
    fail "a discarding channel with tiny buffers lost nothing: the test cannot tell blocking from discarding"
fi
grep -q "discarded" "$T/lossy.err" || fail "the recorder did not report the loss: $(cat "$T/lossy.err")"
note "control: $(grep discarded "$T/lossy.err")"
arch=$("$TRACE_MLP" record --subbuf 4096 --nsubbuf 2 --dir "$T/out" 400 2) || fail "record failed under load"
extract "$arch" "$T/x"
check_trace "$T/x/trace" "$T/bt" 400
# a real workload under the same load: seq2seq (thousands of short ops a
# step) at 2 inter-op workers with small op buffers
arch=$("$FATHOM" record seq2seq --preset tiny --steps 3 --inter 2 --buffer 16 --quiet --dir "$T/out2") ||
    fail "record seq2seq failed under load"
extract "$arch" "$T/x2"
check_trace "$T/x2/trace" "$T/bt2" 3
echo PASS
