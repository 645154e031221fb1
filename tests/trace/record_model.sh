#!/bin/sh
# `fathom record` end to end on a real workload (the first of the registry,
# tiny preset, train and infer): the archive decodes and is complete, and
# its tensors show buffer forwarding; the MANIFEST names the engine
# settings the trace does not carry: the training recorded with
# FATHOM_DENORMALS=keep inherited, the inference with the flags `fathom
# tune` recommends (--conv-algo, --bind where binding can take effect
# here, --denormals), which reach the workload (its own first line).
# Skipped while no workload is built in.
. "$(dirname "$0")/lib.sh"
models=$("$FATHOM" record --help | sed -n 's/^workloads: //p')
case "$models" in ""|"(none built in)") skip "no workloads are built in yet" ;; esac
model=${FATHOM_TEST_MODEL:-${models%% *}}
ensure_sessiond
bind=none
"$FATHOM" run "$model" --preset tiny --steps 1 --bind close >/dev/null 2>&1 && bind=close
for mode in train infer; do
    if [ $mode = train ]; then
        denorm=keep algo=auto b=none
        FATHOM_DENORMALS=keep "$FATHOM" record "$model" --mode $mode --preset tiny --steps 3 --dir "$T/out" >"$T/out.txt" 2>"$T/err" ||
            fail "fathom record $model --mode $mode failed: $(cat "$T/err")"
    else
        denorm=keep algo=direct b=$bind
        "$FATHOM" record "$model" --mode $mode --preset tiny --steps 3 --conv-algo $algo --bind $b --denormals keep \
            --verbose --dir "$T/out" >"$T/out.txt" 2>"$T/err" || fail "fathom record $model --mode $mode failed: $(cat "$T/err")"
        want="convolutions $algo"
        [ $b = close ] && want="$want, bound close"
        grep -q "inter 1, $want, denormals kept\$" "$T/out.txt" || fail "the flags did not reach the workload: $(head -n 1 "$T/out.txt")"
    fi
    tail -n 1 "$T/out.txt" >"$T/path"
    arch=$(cat "$T/path")
    case "$arch" in "$T/out/$model-$mode-tiny-"*.tar.zst) ;; *) fail "unexpected archive path '$arch'" ;; esac
    extract "$arch" "$T/x-$mode"
    check_trace "$T/x-$mode/trace" "$T/bt-$mode" 3
    # buffer forwarding: an output written over its input adds no bytes (fathom-trace(5))
    grep -q ' fathom:tensor_alloc: .*role = ( "activation".* bytes = 0 }' "$T/bt-$mode.txt" ||
        fail "$mode: no activation's tensor_alloc with bytes = 0 (no buffer forwarding)"
    grep -q "^model=$model\$" "$T/x-$mode/MANIFEST" || fail "MANIFEST model"
    grep -q "^mode=$mode\$" "$T/x-$mode/MANIFEST" || fail "MANIFEST mode"
    for kv in denormals=$denorm conv_algo=$algo bind=$b; do
        grep -qx "$kv" "$T/x-$mode/MANIFEST" || fail "MANIFEST $kv: $(cat "$T/x-$mode/MANIFEST")"
    done
    grep -q ' fathom:run_begin: .*model = "'"$model"'", mode = ( "'$mode'"' "$T/bt-$mode.txt" || fail "run_begin model/mode"
    "$FATHOM" info "$arch" >/dev/null || fail "fathom info on $arch"
done
check_no_session_left
echo PASS
