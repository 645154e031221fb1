#!/bin/sh
# The provider's packed op records (schema 3, tracer/opspack.h) with
# records seconds apart and seconds long, handed to its ops hook by a thread
# of trace_mlp's own (run ... long): read back with the babeltrace2 CLI,
# without fathom's decoder, every record is exactly what the hook got; the
# split made the events the rule says (packed, packed, exact, packed); and
# fathom's decoder reads the trace with nothing malformed.
. "$(dirname "$0")/lib.sh"
ensure_sessiond
TRACE_MLP_LONG=$T/want.txt
export TRACE_MLP_LONG
arch=$("$TRACE_MLP" record --dir "$T/out" 1 1 long 2>"$T/rec.err") || fail "record: $(tail -3 "$T/rec.err")"
[ -s "$T/want.txt" ] || fail "trace_mlp wrote no long records"
extract "$arch" "$T/x"
babeltrace2 --clock-cycles "$T/x/trace" >"$T/bt.txt" 2>"$T/bt.err" || fail "babeltrace2: $(head -3 "$T/bt.err")"
# the ops events of the thread that is not the process's main one (vtid != vpid)
grep ' fathom:ops: ' "$T/bt.txt" | grep -v 'vpid = \([0-9]*\), vtid = \1,' >"$T/long.txt" ||
    fail "no ops event of the long records' thread"
seq_of() { # NAME LINE: the values of sequence NAME in LINE, one a line
    printf "%s\n" "$2" | sed -n "s/.* $1 = \[\(.*\)/\1/p" | sed 's/ \].*//' | tr ',' '\n' | sed 's/.*= //; /^ *$/d'
}
# each record as "node begin end", summed in the shell's 64-bit integers (an
# awk double is exact to 2^53 ns alone: 104 days); a packed record begins its
# gap after the end before it (the first, after the base); the events' forms,
# one letter each (p: packed, e: exact)
: >"$T/got.txt"
forms=
while read -r line; do
    seq_of nodes "$line" >"$T/n"
    if [ -n "$(seq_of gaps "$line")" ]; then
        forms=${forms}p
        at=$(printf "%s\n" "$line" | sed -n 's/.* base = \([0-9]*\).*/\1/p')
        seq_of gaps "$line" | paste "$T/n" - >"$T/nb"
        seq_of durations "$line" | paste "$T/nb" - | while read -r node gap dur; do
            echo "$node $((at + gap)) $((at + gap + dur))"
            at=$((at + gap + dur))
        done >>"$T/got.txt"
    else
        forms=${forms}e
        seq_of begins "$line" | paste -d' ' "$T/n" - >"$T/nb"
        seq_of ends "$line" | paste -d' ' "$T/nb" - >>"$T/got.txt"
    fi
done <"$T/long.txt"
diff "$T/want.txt" "$T/got.txt" >"$T/diff" || fail "the records read back differ (< handed to the hook, > in the trace):
$(head -10 "$T/diff")"
[ "$forms" = ppep ] || fail "the long records went out as events '$forms', not packed, packed, exact, packed"
"$FATHOM" info "$arch" >"$T/info.txt" 2>&1 || fail "fathom info: $(tail -3 "$T/info.txt")"
! grep -qi malformed "$T/info.txt" || fail "the decoder finds malformed events: $(grep -i malformed "$T/info.txt")"
note "$(wc -l <"$T/got.txt") long records in events $forms, read back exactly"
check_no_session_left
echo PASS
