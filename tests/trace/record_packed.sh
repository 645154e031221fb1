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
# the records of the ops events of the thread that is not the process's
# main one (vtid != vpid), one "node begin end" a line, and the events'
# forms, one letter each (p: packed, e: exact)
awk -v forms="$T/forms.txt" '
function arr(name, out,    i, s, e, n, parts, k, m) {
    i = index($0, " " name " = [")
    if (!i) return -1
    s = substr($0, i + length(name) + 5)
    e = index(s, " ]")
    n = split(substr(s, 1, e - 1), parts, ", ")
    m = 0
    for (k = 1; k <= n; k++) {
        sub(/^ *\[[0-9]+\] = /, "", parts[k])
        if (parts[k] != "") out[++m] = parts[k]
    }
    return m
}
function scalar(name,    i, s) {
    i = index($0, " " name " = ")
    s = substr($0, i + length(name) + 4)
    sub(/[,} ].*/, "", s)
    return s
}
/ fathom:ops: / && scalar("vtid") != scalar("vpid") {
    n = arr("nodes", nd)
    if (arr("gaps", ga) > 0) {
        arr("durations", du)
        base = scalar("base")
        for (k = 1; k <= n; k++) print "p", nd[k], (k == 1 ? base : "-"), ga[k], du[k]
        printf "p" >forms
    } else {
        arr("begins", bg); arr("ends", en)
        for (k = 1; k <= n; k++) print "e", nd[k], bg[k], en[k]
        printf "e" >forms
    }
}' "$T/bt.txt" >"$T/fields.txt" || fail "awk on the trace"
# the sums in the shell's 64-bit integers (an awk double is exact to 2^53 ns alone: 104 days):
# a packed record begins its gap after the end before it (the first, after the base)
at=0
while read -r form node a b c; do
    if [ "$form" = e ]; then echo "$node $a $b" && continue; fi
    [ "$a" = - ] || at=$a
    echo "$node $((at + b)) $((at + b + c))"
    at=$((at + b + c))
done <"$T/fields.txt" >"$T/got.txt"
diff "$T/want.txt" "$T/got.txt" >"$T/diff" || fail "the records read back differ (< handed to the hook, > in the trace):
$(head -10 "$T/diff")"
[ "$(cat "$T/forms.txt")" = "ppep" ] ||
    fail "the long records went out as events '$(cat "$T/forms.txt")', not packed, packed, exact, packed"
"$FATHOM" info "$arch" >"$T/info.txt" 2>&1 || fail "fathom info: $(tail -3 "$T/info.txt")"
! grep -qi malformed "$T/info.txt" || fail "the decoder finds malformed events: $(grep -i malformed "$T/info.txt")"
note "$(wc -l <"$T/got.txt") long records in events $(cat "$T/forms.txt"), read back exactly"
check_no_session_left
echo PASS
