#!/bin/sh
# `fathom replay` of traces `fathom import` wrote: the ops the framework op
# table (tracer/import_ops.def) maps to an engine op run with the recorded
# shapes, the others are demoted and counted; the coverage statement's
# numbers are those of a hand-checked profiler trace; the PyTorch fixtures
# replay; `--record` and `analyze diff IMPORTED REPLAYED` work. And `fathom
# import` leaves no temporary directory behind, even when killed.
# Env (besides lib.sh's): PYTORCH_FIXTURES (tests/fixtures/pytorch).
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "no jq"
FIX=$PYTORCH_FIXTURES

# ---- a hand-checked profiler trace -------------------------------------------
# Two steps of seven ops (durations in us):
#   aten::mm [4,8]x[8,16]           10  replayed: MatMul
#   aten::conv2d, no arguments      20  demoted: stride and padding not recorded
#   aten::conv2d, Concrete Inputs   30  replayed: Conv2D stride 1 pad 1
#   aten::relu [4,16]                5  replayed: Relu
#   myns::custom [8]                 7  demoted: not in the op table
#   aten::add [4,16] double          3  replayed (converted to float32): Add
#   aten::mm [4,8]x[9,16]            4  demoted: shapes do not fit MatMul
# Per step: 79 us recorded, 48 us of it replayed, 31 us demoted; 8 of 14 ops.
python3 - "$T/hand.json" <<'PY'
import json, sys
ops = [("aten::mm", 10, [[4, 8], [8, 16]], ["float", "float"], None),
       ("aten::conv2d", 20, [[1, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []],
        ["float", "float", "float", "", "", "", ""], None),
       ("aten::conv2d", 30, [[1, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []],
        ["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar"],
        ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"]),
       ("aten::relu", 5, [[4, 16]], ["float"], None),
       ("myns::custom", 7, [[8]], ["float"], None),
       ("aten::add", 3, [[4, 16], [4, 16]], ["double", "double"], None),
       ("aten::mm", 4, [[4, 8], [9, 16]], ["float", "float"], None)]
ev = []
for step in range(2):
    t0 = 1000 * step
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step, "pid": 1, "tid": 1,
               "ts": t0, "dur": 200})
    t = t0 + 5
    for name, dur, dims, types, concrete in ops:
        args = {"Input Dims": dims, "Input type": types}
        if concrete:
            args["Concrete Inputs"] = concrete
        ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": t, "dur": dur, "args": args})
        t += dur + 1
json.dump({"schemaVersion": 1, "traceEvents": ev}, open(sys.argv[1], "w"))
PY
"$FATHOM" import -o "$T/hand.tar.zst" "$T/hand.json" >/dev/null 2>"$T/err" || fail "import hand.json: $(cat "$T/err")"
"$FATHOM" replay "$T/hand.tar.zst" --format json --threads 1 --warmup 0 --iterations 1 --dump-ops "$T/hand.ops" \
    >"$T/hand.rep" 2>"$T/err" || fail "replay of the imported trace: $(cat "$T/err")"
jq -e '.coverage | .recorded_ops == 14 and .replayed_ops == 8 and .converted_ops == 2
       and .recorded_op_ns == 79000 and .replayed_recorded_ns == 48000 and .demoted_recorded_ns == 31000
       and (.time_share * 79 - 48 | fabs) < 1e-9 and (.op_share * 14 - 8 | fabs) < 1e-9' "$T/hand.rep" >/dev/null ||
    fail "coverage: $(jq -c .coverage "$T/hand.rep")"
jq -e '.recorded_op_ns == 48000 and .steps == 2
       and (.op_types | map({(.op): [.count, .recorded_ns, .converted]}) | add)
           == {"aten::mm": [1, 10000, 0], "aten::conv2d": [1, 30000, 0], "aten::relu": [1, 5000, 0],
               "aten::add": [1, 3000, 1]}
       and (.not_replayed | map({(.op): [.count, .recorded_ns]}) | add)
           == {"aten::conv2d": [1, 20000], "myns::custom": [1, 7000], "aten::mm": [1, 4000]}
       and (.not_replayed[] | select(.op == "aten::conv2d") | .why | test("not recorded"))
       and (.not_replayed[] | select(.op == "myns::custom") | .why | test("not in the op table"))
       and (.not_replayed[] | select(.op == "aten::mm") | .why | test("do not fit"))
       and .ops_executed == 8' "$T/hand.rep" >/dev/null ||
    fail "op types: $(jq -c '{op_types, not_replayed, ops_executed}' "$T/hand.rep")"
# the engine ran the recorded shapes
cat >"$T/hand.want" <<'EOF'
MatMul forward 4x8 8x16 -> 4x16 : 0 0
Conv2D forward 1x3x8x8 4x3x3x3 -> 1x4x8x8 : 1 1 1 1
Relu forward 4x16 -> 4x16 :
Add forward 4x16 4x16 -> 4x16 :
EOF
{ cat "$T/hand.want"; cat "$T/hand.want"; } >"$T/hand.want2"
cmp -s "$T/hand.ops" "$T/hand.want2" || fail "the engine's ops: $(cat "$T/hand.ops")"
"$FATHOM" replay "$T/hand.tar.zst" --threads 1 --warmup 0 --iterations 1 >"$T/hand.txt" 2>"$T/err" ||
    fail "replay (text): $(cat "$T/err")"
grep -q '^coverage: *8 of 14 recorded ops replayed (57.1%), 0.048 of 0.079 ms recorded op time per step (60.8%)' \
    "$T/hand.txt" || fail "text coverage: $(grep -A2 coverage "$T/hand.txt")"
grep -q '^aten::conv2d .* 1 *0.020 .*not recorded' "$T/hand.txt" || fail "text: the demoted conv2d: $(cat "$T/hand.txt")"
[ -s "$T/err" ] && fail "replay of an imported trace warns: $(cat "$T/err")"
"$FATHOM" replay "$T/hand.tar.zst" --format csv --threads 1 --warmup 0 --iterations 1 >"$T/hand.csv" 2>"$T/err" ||
    fail "replay (csv): $(cat "$T/err")"
grep -q '^coverage,replayed,,8,48000,' "$T/hand.csv" && grep -qx 'coverage,demoted,,6,31000,,' "$T/hand.csv" &&
    grep -q '^not_replayed,myns::custom,?,1,7000,,$' "$T/hand.csv" || fail "csv coverage: $(cat "$T/hand.csv")"
note "hand-checked trace: 8 of 14 ops, 48 of 79 us per step replayed; 3 demoted op types named with their reason"

# more op types than the report has rows: the last row takes the rest
python3 - "$T/many.json" <<'PY'
import json, sys
ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1, "ts": 0, "dur": 1000}]
ev += [{"ph": "X", "cat": "cpu_op", "name": "myns::op%d" % i, "pid": 1, "tid": 1, "ts": 1 + 2 * i, "dur": 1,
        "args": {"Input Dims": [[2]]}} for i in range(300)]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
"$FATHOM" import -o "$T/many.tar.zst" "$T/many.json" >/dev/null 2>"$T/err" || fail "import many.json: $(cat "$T/err")"
"$FATHOM" replay "$T/many.tar.zst" --format json --warmup 0 --iterations 1 >"$T/many.rep" 2>"$T/err" ||
    fail "replay of 300 op types: $(cat "$T/err")"
jq -e '(.not_replayed | length) == 256 and .not_replayed[254].op == "myns::op254"
       and .not_replayed[255] == {"op": "(more op types)", "count": 45, "recorded_ns": 45000, "class": "?",
                                  "why": "not in the op table (tracer/import_ops.def)"}
       and .coverage.recorded_ops == 300 and .coverage.replayed_ops == 0' "$T/many.rep" >/dev/null ||
    fail "300 op types: $(jq -c '[.not_replayed[-2:], .coverage]' "$T/many.rep")"

# ---- the PyTorch fixtures -----------------------------------------------------
for f in cnn.pt.trace.json.gz cnn-args.pt.trace.json.gz lstm.pt.trace.json.gz mlp.pt.trace.json.gz mlp.json \
    cnn.et.json.gz; do
    n=$(echo "$f" | tr . _)
    "$FATHOM" import -o "$T/$n.tar.zst" "$FIX/$f" >/dev/null 2>"$T/err" || fail "import $f: $(cat "$T/err")"
    "$FATHOM" replay "$T/$n.tar.zst" --format json --threads 1 --warmup 0 --iterations 1 >"$T/$n.json" 2>"$T/err" ||
        fail "replay $f: $(cat "$T/err")"
    "$FATHOM" analyze breakdown --format json "$T/$n.tar.zst" >"$T/$n.bd" 2>/dev/null || fail "breakdown $f"
    # every op of the kept steps is replayed or demoted; their times add up
    # (an execution trace has no times: the importer spaces its ops 1 us
    # apart, and the breakdown counts one at a step's very end in the step)
    tol=0
    case $f in *.et.*) tol=1 ;; esac
    jq -e --argjson tol $tol --slurpfile bd "$T/$n.bd" '.coverage
           | (.recorded_ops - ([$bd[0].traces[0].op_types[].count] | add) | fabs) <= $tol
           and .replayed_ops <= .recorded_ops
           and ((.replayed_recorded_ns + .demoted_recorded_ns - .recorded_op_ns) | fabs) < 1' "$T/$n.json" >/dev/null ||
        fail "$f: coverage $(jq -c .coverage "$T/$n.json") against the breakdown's op count"
    jq -e '([.not_replayed[].count] | add // 0) + ([.op_types[].count] | add // 0) >= 1' "$T/$n.json" >/dev/null ||
        fail "$f: no op types"
    note "$f: $(jq -r '.coverage | "\(.replayed_ops) of \(.recorded_ops) ops replayed, \(.time_share * 1000 | round / 10)% of the recorded op time"' "$T/$n.json")"
done
# the profiler fixture records no scalar arguments: convolutions are demoted
jq -e '.not_replayed[] | select(.op == "aten::conv2d") | .why | test("not recorded")' "$T/cnn_pt_trace_json_gz.json" \
    >/dev/null || fail "cnn profiler trace: conv2d is not demoted for its unrecorded stride"
jq -e '(.op_types | map(.op)) as $o | ["aten::batch_norm", "aten::relu", "aten::linear", "aten::threshold_backward",
        "aten::native_batch_norm_backward"] - $o == []' "$T/cnn_pt_trace_json_gz.json" >/dev/null ||
    fail "cnn profiler trace: replayed $(jq -c '[.op_types[].op]' "$T/cnn_pt_trace_json_gz.json")"
# with the arguments Kineto records (Concrete Inputs), convolutions, pools and
# their gradients run too: all but the views and allocations
jq -e '(.op_types | map(.op)) as $o | ["aten::conv2d", "aten::convolution_backward", "aten::max_pool2d",
        "aten::max_pool2d_with_indices_backward", "aten::batch_norm", "aten::linear"] - $o == []
       and .coverage.time_share > 0.99' "$T/cnn-args_pt_trace_json_gz.json" >/dev/null ||
    fail "cnn-args: replayed $(jq -c '[.op_types[].op], .coverage' "$T/cnn-args_pt_trace_json_gz.json")"
# the execution trace records them too
jq -e '(.op_types | map(.op)) as $o | ["aten::conv2d", "aten::convolution_backward", "aten::max_pool2d",
        "aten::batch_norm", "aten::linear"] - $o == []' "$T/cnn_et_json_gz.json" >/dev/null ||
    fail "cnn execution trace: replayed $(jq -c '[.op_types[].op]' "$T/cnn_et_json_gz.json")"
"$FATHOM" replay "$T/cnn_et_json_gz.tar.zst" --threads 1 --warmup 0 --iterations 1 --steps 1 --dump-ops - \
    >"$T/et.ops" 2>"$T/err" || fail "replay --dump-ops of the execution trace: $(cat "$T/err")"
grep -qx 'Conv2D forward 8x3x32x32 16x3x3x3 -> 8x16x32x32 : 1 1 1 1' "$T/et.ops" || fail "et: first Conv2D"
grep -qx 'Conv2D forward 8x16x16x16 32x16x3x3 -> 8x32x16x16 : 1 1 1 1' "$T/et.ops" || fail "et: second Conv2D"
grep -qx 'Conv2DBackpropFilter backward 8x16x16x16 8x32x16x16 -> 32x16x3x3 : 1 1 1 1 32 16 3 3' "$T/et.ops" ||
    fail "et: the filter gradient of the second convolution"
grep -qx 'MaxPool forward 8x16x32x32 -> 8x16x16x16 : 2 2 2 2 0 0' "$T/et.ops" || fail "et: MaxPool"
# the first convolution's backward computed no input gradient (its recorded
# first output is undefined): its filter's gradient alone runs
grep -qx 'Conv2DBackpropFilter backward 8x3x32x32 8x16x32x32 -> 16x3x3x3 : 1 1 1 1 16 3 3 3' "$T/et.ops" ||
    fail "et: the first convolution's filter gradient"
grep -q '^Conv2DBackpropInput backward 16x3x3x3 ' "$T/et.ops" &&
    fail "et: the input gradient of the first convolution, which PyTorch did not compute, was replayed"
grep -qx 'MaxPoolGrad backward 8x32x16x16 8x32x8x8 8x32x8x8 -> 8x32x16x16 : 2 2 2 2 0 0' "$T/et.ops" ||
    fail "et: MaxPoolGrad"
# no shapes at all (the autograd profiler's own export): nothing replayed, all counted
jq -e '.coverage.replayed_ops == 0 and .coverage.recorded_ops > 0' "$T/mlp_json.json" >/dev/null ||
    fail "mlp.json (no shapes): $(jq -c .coverage "$T/mlp_json.json")"

# ---- --record, then diff: PyTorch's time against the engine's, per op type --------
ensure_sessiond
"$FATHOM" replay "$T/hand.tar.zst" --record -o "$T/rep.tar.zst" --threads 1 --warmup 0 --iterations 1 \
    >/dev/null 2>"$T/err" || fail "replay --record: $(cat "$T/err")"
"$FATHOM" analyze diff --format json "$T/hand.tar.zst" "$T/rep.tar.zst" >"$T/diff.json" 2>"$T/err" ||
    fail "diff IMPORTED REPLAYED: $(cat "$T/err")"
# the framework's op types under the engine ops that computed them: both sides
# count the replayed ones; the demoted conv2d and mm are A's alone
jq -e '(.op_types | map({(.op): [.a_count, .b_count]}) | add) as $r
       | $r.MatMul == [2, 1] and $r.Conv2D == [2, 1] and $r.Relu == [1, 1] and $r.Add == [1, 1]
         and $r["myns::custom"] == [1, 0]' "$T/diff.json" >/dev/null ||
    fail "diff: $(jq -c '[.op_types[] | {op, a_count, b_count}]' "$T/diff.json")"
"$FATHOM" analyze diff "$T/hand.tar.zst" "$T/rep.tar.zst" >"$T/diff.txt" 2>&1 || fail "diff (text)"
grep -q '^Relu  *elementwise ' "$T/diff.txt" || fail "diff text: $(cat "$T/diff.txt")"

# ---- fathom import leaves no temporary directory, killed or not ---------------
[ -z "$(ls "$TMPDIR" | grep '^fathom-import-')" ] || fail "imports left $(ls "$TMPDIR" | grep '^fathom-import-')"
python3 -c "
import json
ev = [{'ph': 'X', 'cat': 'cpu_op', 'name': 'aten::mm', 'pid': 1, 'tid': 1, 'ts': 2 * i, 'dur': 1,
       'args': {'Input Dims': [[4, 8], [8, 16]]}} for i in range(200000)]
json.dump({'traceEvents': ev}, open('$T/big.json', 'w'))"
killed=0
for sig in TERM INT; do
    "$FATHOM" import -o "$T/big-$sig.tar.zst" "$T/big.json" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 1000); do
        ls "$TMPDIR" | grep -q '^fathom-import-' && break
        sleep 0.01
    done
    kill -$sig $pid 2>/dev/null
    wait $pid
    rc=$?
    [ $rc -gt 128 ] && killed=$((killed + 1))
    [ -z "$(ls "$TMPDIR" | grep '^fathom-import-')" ] || fail "an import killed by SIG$sig (rc $rc) left its temporary directory"
    [ -e "$T/big-$sig.tar.zst" ] && [ $rc -gt 128 ] && fail "a killed import wrote its archive"
done
note "import killed $killed of 2 times mid-way: no temporary directory left"
exit 0
