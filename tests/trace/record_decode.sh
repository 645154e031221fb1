#!/bin/sh
# A recorded run decodes with babeltrace2 and passes the schema-2 lossless
# checks (check_trace: records sum to run_end.ops, node_defs first, ordered
# per thread, inside their steps, nothing discarded); sequential
# and with 2 inter-op workers; no session or temporary file left behind.
. "$(dirname "$0")/lib.sh"
ensure_sessiond
for inter in 1 2; do
    arch=$("$TRACE_MLP" record --dir "$T/out$inter" 7 $inter) || fail "record (inter $inter) failed"
    [ -f "$arch" ] || fail "no archive at '$arch'"
    case "$arch" in "$T/out$inter"/mlp-train-tiny-*.tar.zst) ;; *) fail "unexpected archive name $arch" ;; esac
    extract "$arch" "$T/x$inter"
    check_trace "$T/x$inter/trace" "$T/bt$inter" 7
    grep -q '^events.fathom:ops=' "$T/x$inter/MANIFEST" || fail "MANIFEST lacks event counts"
    for k in schema model mode preset host cpu blas threads created; do
        grep -q "^$k=" "$T/x$inter/MANIFEST" || fail "MANIFEST lacks $k"
    done
    grep -q '^discarded=0$' "$T/x$inter/MANIFEST" || fail "MANIFEST: discarded is not 0"
done
# a real workload at 2 inter-op workers with small buffers: records from
# both workers, many ops events a step, still lossless
arch=$("$FATHOM" record alexnet --preset tiny --steps 3 --inter 2 --buffer 5 --quiet --dir "$T/outw") ||
    fail "record alexnet --inter 2 --buffer 5 failed"
extract "$arch" "$T/xw"
check_trace "$T/xw/trace" "$T/btw" 3
nt=$(grep ' fathom:ops: ' "$T/btw.txt" | sed 's/.*vtid = \([0-9]*\).*/\1/' | sort -u | wc -l)
[ "$nt" -ge 2 ] || fail "the ops records of --inter 2 come from $nt thread(s), want the 2 workers"
big=$(grep ' fathom:ops: ' "$T/btw.txt" | grep -c '_nodes_length = \([6-9]\|[1-9][0-9]\)')
[ "$big" = 0 ] || fail "$big ops events hold more than --buffer 5 records"
check_no_session_left
[ -z "$(ls -A "$TMPDIR")" ] || fail "temporary files left: $(ls -A "$TMPDIR")"
echo PASS
