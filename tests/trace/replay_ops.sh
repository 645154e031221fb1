#!/bin/sh
# `fathom replay` executes exactly the recorded op invocations, op for op:
# real workloads are recorded (tiny preset), the expected op sequence is read
# from the trace with the babeltrace2 CLI (bt_ops.awk: op, phase, input and
# output shapes from tensor_alloc, attrs), independently of replay's own
# loader, and compared line by line with what replay's first pass executed
# (--dump-ops, written from the engine's dispatch). A train trace's replay
# runs its backward and update ops; --skip-first/--steps select steps.
. "$(dirname "$0")/lib.sh"
AWK="$(dirname "$0")/bt_ops.awk"
models=$("$FATHOM" record --help | sed -n 's/^workloads: //p')
ensure_sessiond
n=0
for spec in seq2seq:train memnet:train alexnet:train speech:train residual:infer; do
    model=${spec%%:*} mode=${spec#*:}
    case " $models " in *" $model "*) ;; *) note "$model is not built in: left out"; continue ;; esac
    n=$((n + 1))
    arch="$T/$model-$mode.tar.zst"
    "$FATHOM" record "$model" --mode "$mode" --preset tiny --steps 3 --threads 1 -o "$arch" --quiet >/dev/null 2>"$T/err" ||
        fail "record $model $mode: $(cat "$T/err")"
    extract "$arch" "$T/x-$model"
    check_trace "$T/x-$model/trace" "$T/bt-$model" 3
    awk -f "$AWK" "$T/bt-$model.txt" >"$T/want-$model.txt" || fail "bt_ops.awk on $model"
    want=$(wc -l <"$T/want-$model.txt")
    nb=$(sed -n 's/.* fathom:run_end: .*[{,] ops = \([0-9]*\).*/\1/p' "$T/bt-$model.txt")
    [ "$want" -gt 0 ] || fail "$model: no ops in steps"

    "$FATHOM" replay "$arch" --threads 1 --warmup 1 --iterations 2 --dump-ops "$T/got-$model.txt" --format json \
        >"$T/rep-$model.json" 2>"$T/rep.err" || fail "replay $model $mode: $(cat "$T/rep.err")"
    [ ! -s "$T/rep.err" ] || fail "replay $model wrote to stderr: $(cat "$T/rep.err")"
    if ! cmp -s "$T/want-$model.txt" "$T/got-$model.txt"; then
        diff "$T/want-$model.txt" "$T/got-$model.txt" | head -10 >&2
        fail "$model $mode: the replay did not execute the recorded ops (want $want lines, got $(wc -l <"$T/got-$model.txt"))"
    fi
    # the timed passes ran the same program: 2 x the ops, and the JSON says so
    grep -Eq "\"ops_executed\": $((2 * want))[,}]?\$" "$T/rep-$model.json" ||
        fail "$model: ops_executed is not 2 x $want: $(grep ops_executed "$T/rep-$model.json")"
    grep -q '"not_replayed": \[\]' "$T/rep-$model.json" || fail "$model: ops were left out"
    types=$(awk '{print $1}' "$T/got-$model.txt" | sort -u | wc -l)
    note "$model $mode: $want ops in 3 steps ($nb recorded in all, $types op types) replayed op for op"

    if [ "$mode" = train ]; then
        for ph in backward update; do
            w=$(grep -c "^[^ ]* $ph " "$T/want-$model.txt") g=$(grep -c "^[^ ]* $ph " "$T/got-$model.txt")
            [ "$w" -gt 0 ] || fail "$model train: the recording has no $ph ops"
            [ "$w" = "$g" ] || fail "$model train: $w $ph ops recorded, $g replayed"
        done
        note "$model train: backward $(grep -c '^[^ ]* backward ' "$T/got-$model.txt"), update $(grep -c '^[^ ]* update ' "$T/got-$model.txt") ops replayed"
    fi
done
[ "$n" -gt 0 ] || skip "none of the workloads is built in"

# step selection: the second recorded step alone
"$FATHOM" replay "$arch" --skip-first 1 --steps 1 --iterations 1 --dump-ops "$T/one.txt" >/dev/null 2>"$T/rep.err" ||
    fail "replay --skip-first 1 --steps 1: $(cat "$T/rep.err")"
awk -v first=1 -v nsteps=1 -f "$AWK" "$T/bt-$model.txt" >"$T/want-one.txt"
cmp -s "$T/want-one.txt" "$T/one.txt" || fail "$model: --skip-first 1 --steps 1 did not replay recorded step 1 alone"
[ "$(wc -l <"$T/one.txt")" -gt 0 ] || fail "step 1 is empty"
# the dump to stdout, with the report after it
"$FATHOM" replay "$arch" --iterations 1 --dump-ops - >"$T/stdout.txt" || fail "replay --dump-ops -"
head -n "$(wc -l <"$T/want-$model.txt")" "$T/stdout.txt" | cmp -s - "$T/want-$model.txt" || fail "--dump-ops - differs"
check_no_session_left
echo PASS
