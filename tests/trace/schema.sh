#!/bin/sh
# The trace's enums are the engine's tables: every op of `fathom ops`, and
# every class, phase, role, dtype and mode label, is in the CTF metadata of a
# recorded trace (and nothing is written twice: the labels come from
# exec/*.def at build time).
. "$(dirname "$0")/lib.sh"
ensure_sessiond
arch=$("$TRACE_MLP" record --dir "$T/out" 1) || fail "record failed"
extract "$arch" "$T/x"
meta=$(find "$T/x/trace" -name metadata | head -1)
[ -n "$meta" ] || fail "no metadata"
babeltrace2 --output-format=ctf-metadata "$(dirname "$meta")" >"$T/meta.tsdl" 2>/dev/null || cp "$meta" "$T/meta.tsdl"
grep -q 'enum' "$T/meta.tsdl" || fail "no enum in the metadata"
n=0
for op in $("$FATHOM" ops | awk '{print $1}'); do
    grep -q "\"$op\" = " "$T/meta.tsdl" || fail "op $op is not in the trace's op enum"
    n=$((n + 1))
done
[ $n -gt 10 ] || fail "fathom ops listed only $n ops"
for l in elementwise matrix reduction convolution random optimization data_movement forward backward update \
         input weight activation gradient optimizer workspace float32 int32 train infer; do
    grep -q "\"$l\" = " "$T/meta.tsdl" || fail "label $l is not in the metadata"
done
for ev in run_begin run_end step_begin step_end node_def ops tensor_alloc tensor_free; do
    grep -q "name = \"fathom:$ev\"" "$T/meta.tsdl" || fail "event fathom:$ev is not declared"
done
note "$n ops and all labels found in the metadata"
echo PASS
