#!/bin/sh
# `fathom record` end to end on a real workload (the first of the registry,
# tiny preset, train and infer): the archive decodes and is complete, and
# its tensors show buffer forwarding; the MANIFEST names the mode of
# denormal floats (the inference recorded with FATHOM_DENORMALS=keep).
# Skipped while no workload is built in.
. "$(dirname "$0")/lib.sh"
models=$("$FATHOM" record --help | sed -n 's/^workloads: //p')
case "$models" in ""|"(none built in)") skip "no workloads are built in yet" ;; esac
model=${FATHOM_TEST_MODEL:-${models%% *}}
ensure_sessiond
for mode in train infer; do
    denorm=flush
    [ $mode = infer ] && denorm=keep
    FATHOM_DENORMALS=$denorm "$FATHOM" record "$model" --mode $mode --preset tiny --steps 3 --dir "$T/out" >"$T/path" 2>"$T/err" ||
        fail "fathom record $model --mode $mode failed: $(cat "$T/err")"
    arch=$(cat "$T/path")
    case "$arch" in "$T/out/$model-$mode-tiny-"*.tar.zst) ;; *) fail "unexpected archive path '$arch'" ;; esac
    extract "$arch" "$T/x-$mode"
    check_trace "$T/x-$mode/trace" "$T/bt-$mode" 3
    # buffer forwarding: an output written over its input adds no bytes (fathom-trace(5))
    grep -q ' fathom:tensor_alloc: .*role = ( "activation".* bytes = 0 }' "$T/bt-$mode.txt" ||
        fail "$mode: no activation's tensor_alloc with bytes = 0 (no buffer forwarding)"
    grep -q "^model=$model\$" "$T/x-$mode/MANIFEST" || fail "MANIFEST model"
    grep -q "^mode=$mode\$" "$T/x-$mode/MANIFEST" || fail "MANIFEST mode"
    grep -qx "denormals=$denorm" "$T/x-$mode/MANIFEST" || fail "MANIFEST denormals: $(cat "$T/x-$mode/MANIFEST")"
    grep -q ' fathom:run_begin: .*model = "'"$model"'", mode = ( "'$mode'"' "$T/bt-$mode.txt" || fail "run_begin model/mode"
    "$FATHOM" info "$arch" >/dev/null || fail "fathom info on $arch"
done
check_no_session_left
echo PASS
