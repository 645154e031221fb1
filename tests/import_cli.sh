# import_cli.sh -- `fathom import` and src.fathom.pytorch as a user meets
# them: the PyTorch fixtures (tests/fixtures/pytorch) imported and checked
# against their JSON by an independent counter (import_check.py), a GPU
# trace, the babeltrace2 CLI, and hostile or foreign input (one-line error
# or warning, nothing written at the output path).
# usage: sh import_cli.sh FATHOM PLUGIN_DIR FIXTURES TESTS_SRC TMP
set -u
FATHOM=$1 PLUGINS=$2 FIX=$3 SRC=$4
. "$SRC/cli_lib.sh"
cli_begin import "$5"
command -v babeltrace2 >/dev/null || { echo "SKIP: no babeltrace2"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }

# import FILE into $T/NAME.tar.zst and its text into $T/NAME.txt
import_text() { # file name
    "$FATHOM" import -o "$T/$2.tar.zst" "$1" >"$T/$2.out" 2>"$T/$2.err" || return 1
    [ "$(cat "$T/$2.out")" = "$T/$2.tar.zst" ] || { echo "import printed: $(cat "$T/$2.out")"; return 1; }
    mkdir -p "$T/$2.x" && tar -C "$T/$2.x" -xf "$T/$2.tar.zst" &&
        babeltrace2 --clock-seconds "$T/$2.x/trace" >"$T/$2.txt"
}

# ---- the fixtures: counts, nesting, steps, classes --------------------------
for f in mlp.json mlp.pt.trace.json.gz cnn.pt.trace.json.gz lstm.pt.trace.json.gz cnn.et.json.gz; do
    n=$(echo "$f" | tr . _)
    if ! import_text "$FIX/$f" "$n"; then
        fail "import $f: $(cat "$T/$n.err")"
        continue
    fi
    python3 "$SRC/import_check.py" "$FIX/$f" "$T/$n.txt" || fail "import_check $f"
    grep -q '^source=pytorch-' "$T/$n.x/MANIFEST" || fail "$f: MANIFEST has no source"
    grep -qx "source.file=$f" "$T/$n.x/MANIFEST" || fail "$f: MANIFEST has no source.file"
    grep -qx "source.size=$(wc -c <"$FIX/$f" | tr -d ' ')" "$T/$n.x/MANIFEST" || fail "$f: MANIFEST size"
    grep -q 'schema = 2' "$T/$n.txt" || fail "$f: run_begin is not schema 2"
done
grep -qx 'source=pytorch-et' "$T/cnn_et_json_gz.x/MANIFEST" || fail "cnn.et.json.gz: source is not pytorch-et"
grep -qx 'source=pytorch-profiler' "$T/mlp_json.x/MANIFEST" || fail "mlp.json: source is not pytorch-profiler"
grep -q 'fathom:tensor_alloc' "$T/cnn_et_json_gz.txt" || fail "the execution trace has no tensor_alloc"
grep -q 'op = ( "aten::conv2d".*attrs = \[ \[0\] = 1, \[1\] = 1, \[2\] = 1, \[3\] = 1 \]' "$T/cnn_et_json_gz.txt" ||
    fail "cnn.et: conv2d's attrs are not Conv2D's stride 1, pad 1"
grep -q 'op = ( "aten::max_pool2d".*attrs = \[ \[0\] = 2, \[1\] = 2, \[2\] = 2, \[3\] = 2, \[4\] = 0, \[5\] = 0 \]' \
    "$T/cnn_et_json_gz.txt" || fail "cnn.et: max_pool2d's attrs are not MaxPool's 2x2 stride 2"
grep -q 'op = ( "aten::conv2d".*cls = ( "convolution".*flops = [1-9]' "$T/cnn_pt_trace_json_gz.txt" ||
    fail "cnn: aten::conv2d without class convolution and FLOPs"
grep -q 'mode = ( "train"' "$T/cnn_pt_trace_json_gz.txt" || fail "cnn: not a training run"
grep -q 'phase = ( "backward"' "$T/cnn_pt_trace_json_gz.txt" || fail "cnn: no backward ops"
grep -q 'phase = ( "update"' "$T/mlp_json.txt" || fail "mlp: no optimizer ops"
grep -q 'execution trace has no op times' "$T/cnn_et_json_gz.err" || fail "untimed execution trace: no warning"

# which of the reference workloads does the imported CNN resemble? (by class:
# imported op names are the framework's, the references' the engine's)
REF="$SRC/../traces/reference"
if ls "$REF"/*-train-*.tar.zst >/dev/null 2>&1; then
    "$FATHOM" analyze similarity --by class --format json "$T/cnn_pt_trace_json_gz.tar.zst" "$REF"/*-train-*.tar.zst \
        >"$T/sim.json" 2>"$T/sim.err" || fail "similarity of the imported CNN: $(cat "$T/sim.err")"
    best=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); c = d["cosine"][0]
print(max(range(1, len(c)), key=lambda i: c[i]) and d["labels"][max(range(1, len(c)), key=lambda i: c[i])])' "$T/sim.json")
    case "$best" in
    alexnet/* | vgg/* | residual/* | deepq/*) ;;
    *) fail "the imported CNN resembles $best most, not a convolutional workload" ;;
    esac
fi

# the checker itself fails on a trace of another JSON
python3 "$SRC/import_check.py" "$FIX/cnn.pt.trace.json.gz" "$T/mlp_json.txt" >/dev/null &&
    fail "import_check passes a trace against the wrong JSON"

# ---- a GPU trace (Kineto's layout): kernels on their own track ----------------
cat >"$T/gpu.json" <<'JSON'
{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "Some GPU"}],
 "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 42, "tid": 42, "ts": 1700000000000000.0, "dur": 500},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 42, "tid": 42, "ts": 1700000000000010.5, "dur": 40,
   "args": {"Input Dims": [[64, 128], [128, 32]], "Input type": ["float", "float"], "External id": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "myns::custom", "pid": 42, "tid": 42, "ts": 1700000000000060, "dur": 20,
   "args": {"Input Dims": [[8]], "Input type": ["float"]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 42, "tid": 42, "ts": 1700000000000100, "dur": 10,
   "args": {"Input Dims": [[1, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []],
            "Input type": ["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar"],
            "Concrete Inputs": ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 42, "tid": 42, "ts": 1700000000000020, "dur": 5},
  {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 1700000000000030, "dur": 100,
   "args": {"External id": 1, "correlation": 11}},
  {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: MmBackward0", "pid": 42, "tid": 43,
   "ts": 1700000000000200, "dur": 50},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 42, "tid": 43, "ts": 1700000000000205, "dur": 30,
   "args": {"Input Dims": [[64, 32], [32, 128]], "Input type": ["float", "float"], "External id": 2}},
  {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nt", "pid": 0, "tid": 7, "ts": 1700000000000240, "dur": 20,
   "args": {"External id": 2, "correlation": 12}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0, "tid": 7, "ts": 1700000000000140, "dur": 10},
  {"ph": "f", "id": 1, "pid": 0, "tid": 7, "ts": 1700000000000030, "cat": "ac2g", "name": "ac2g"},
  {"ph": "M", "name": "thread_name", "pid": 42, "tid": 42, "args": {"name": "python"}}
 ]}
JSON
if import_text "$T/gpu.json" gpu; then
    python3 "$SRC/import_check.py" "$T/gpu.json" "$T/gpu.txt" || fail "import_check gpu.json"
    "$FATHOM" analyze breakdown "$T/gpu.tar.zst" >"$T/gpu.bd" 2>&1 || fail "gpu: breakdown: $(cat "$T/gpu.bd")"
    grep -q 'warning' "$T/gpu.bd" && fail "gpu: breakdown warns: $(grep warning "$T/gpu.bd")"
    grep -q '^volta_sgemm_128x64_nn  *gemm  *1 ' "$T/gpu.bd" || fail "gpu: the kernel is not in the breakdown's device"
    grep -q 'vpid = 0,' "$T/gpu.txt" && fail "gpu: the GPU stream is another process than the ops it runs"
    grep -q 'procname = "gpu 0 stream 7" }, { graph = 0, __nodes_len = 3' "$T/gpu.txt" ||
        fail "gpu: the kernels and the memcpy are not one ops event of the GPU stream"
    grep -q 'op = ( "volta_sgemm_128x64_nt".*phase = ( "backward"' "$T/gpu.txt" ||
        fail "gpu: the kernel a backward op launched (External id) is not backward"
    grep -q 'op = ( "volta_sgemm_128x64_nn".*phase = ( "forward"' "$T/gpu.txt" || fail "gpu: forward kernel"
    grep -q 'op = ( "volta_sgemm_128x64_nn".*cls = ( "device.gemm"' "$T/gpu.txt" || fail "gpu: sgemm kernel not device.gemm"
    grep -q 'op = ( "Memcpy DtoH.*cls = ( "device.memcpy"' "$T/gpu.txt" || fail "gpu: memcpy not device.memcpy"
    grep -q 'op = ( "myns::custom".*cls = ( "other"' "$T/gpu.txt" || fail "gpu: an unknown op is not class other"
    grep -q 'op = ( "aten::mm".*flops = 524288, bytes = 57344' "$T/gpu.txt" ||
        fail "gpu: aten::mm [64,128]x[128,32] is not 2*64*128*32 FLOPs, 4*(64*128+128*32+64*32) bytes"
    grep -q 'step_begin: .* step = 7' "$T/gpu.txt" || fail "gpu: ProfilerStep#7 is not step 7"
    grep -q 'op = ( "aten::conv2d".*attrs = \[ \[0\] = 2, \[1\] = 2, \[2\] = 1, \[3\] = 1 \], flops = 3456,' \
        "$T/gpu.txt" || fail "gpu: conv2d stride 2 pad 1 (Concrete Inputs): not attrs 2,2,1,1 and 2*4*4*4*27 FLOPs"
    grep -qx 'source.device=Some GPU' "$T/gpu.x/MANIFEST" || fail "gpu: MANIFEST has no source.device"
    grep -qx 'source.rank=3' "$T/gpu.x/MANIFEST" && grep -qx 'source.world_size=8' "$T/gpu.x/MANIFEST" ||
        fail "gpu: MANIFEST has no rank and world size"
    grep -q '^\[1700000000\.000000000\] .* fathom:step_begin' "$T/gpu.txt" || fail "gpu: step time is not the JSON's"
else
    fail "import gpu.json: $(cat "$T/gpu.err")"
fi

# ---- an execution trace with times, threads, phases and a cycle of parents --------
cat >"$T/et.json" <<'JSON'
{"schema": "1.0.3", "pid": 7, "nodes": [
 {"id": 1, "name": "[pytorch|profiler|execution_graph|thread]", "parent": 1, "tid": 1},
 {"id": 2, "name": "ProfilerStep#3", "parent": 1, "tid": 1},
 {"id": 3, "name": "aten::linear", "parent": 2, "tid": 1, "dur": 12.5,
  "inputs": [[10, 11, 0, 512, 4, "cpu"], [12, 13, 0, 1024, 4, "cpu"], [14, 15, 0, 32, 4, "cpu"]],
  "input_shapes": [[16, 32], [32, 32], [32]], "input_types": ["Tensor(float)", "Tensor(float)", "Tensor(float)"],
  "outputs": [[16, 17, 0, 512, 4, "cpu"]], "output_shapes": [[16, 32]], "output_types": ["Tensor(float)"]},
 {"id": 4, "name": "aten::addmm", "parent": 3, "tid": 1, "dur": 10,
  "inputs": [], "input_shapes": [], "input_types": [], "outputs": [], "output_shapes": [], "output_types": []},
 {"id": 5, "name": "autograd::engine::evaluate_function: AddmmBackward0", "parent": 2, "tid": 2},
 {"id": 6, "name": "aten::mm", "parent": 5, "tid": 2, "dur": 8,
  "inputs": [[16, 17, 0, 512, 4, "cpu"], [12, 13, 0, 1024, 4, "cpu"]],
  "input_shapes": [[16, 32], [32, 32]], "input_types": ["Tensor(float)", "Tensor(float)"],
  "outputs": [[18, 19, 0, 512, 4, "cpu"]], "output_shapes": [[16, 32]], "output_types": ["Tensor(float)"]},
 {"id": 7, "name": "Optimizer.step#SGD.step", "parent": 2, "tid": 1},
 {"id": 8, "name": "aten::add_", "parent": 7, "tid": 1, "dur": 2,
  "inputs": [[12, 13, 0, 1024, 4, "cpu"], [18, 19, 0, 512, 4, "cpu"]], "input_shapes": [[32, 32], [16, 32]],
  "input_types": ["Tensor(float)", "Tensor(float)"], "outputs": [], "output_shapes": [], "output_types": []},
 {"id": 9, "name": "aten::relu", "parent": 10, "tid": 1, "dur": 1},
 {"id": 10, "name": "aten::cycle", "parent": 9, "tid": 1, "dur": 1}
]}
JSON
if import_text "$T/et.json" et; then
    python3 "$SRC/import_check.py" "$T/et.json" "$T/et.txt" || fail "import_check et.json"
    grep -q 'op = ( "aten::linear".*phase = ( "forward".*inputs = \[ \[0\] = 0, \[1\] = 1, \[2\] = 2 \].*outputs = \[ \[0\] = 3 \].*flops = 33280,' \
        "$T/et.txt" || fail "et: aten::linear's tensors or FLOPs (2*16*32*32 + 16*32)"
    grep -q 'op = ( "aten::linear".*attrs = \[ \[0\] = 0, \[1\] = 1 \]' "$T/et.txt" ||
        fail "et: aten::linear's attrs are not MatMul's transpose_b"
    grep -q 'op = ( "aten::mm".*phase = ( "backward".*inputs = \[ \[0\] = 3, \[1\] = 1 \]' "$T/et.txt" ||
        fail "et: aten::mm is not a backward op reading linear's output"
    grep -q 'op = ( "aten::add_".*cls = ( "optimization".*phase = ( "update"' "$T/et.txt" || fail "et: add_ not an update"
    grep -q 'vtid = 2, .*fathom:ops\|fathom:ops: { vpid = 0, vtid = 2' "$T/et.txt" || fail "et: no ops of thread 2"
    grep -q 'step = 3' "$T/et.txt" || fail "et: ProfilerStep#3 is not step 3"
    grep -q 'no op times' "$T/et.err" && fail "et: timed nodes reported as untimed"
else
    fail "import et.json: $(cat "$T/et.err")"
fi
echo '{"nodes": [{"id": 1, "name": "aten::mm"}, 7]}' >"$T/etbad.json"
"$FATHOM" import -o "$T/etbad.tar.zst" "$T/etbad.json" >/dev/null 2>"$T/etbad.err" && fail "etbad.json: accepted"
grep -q 'node 1 is not an object' "$T/etbad.err" || fail "etbad.json: $(cat "$T/etbad.err")"
[ -e "$T/etbad.tar.zst" ] && fail "etbad.json: an archive was written"

# ---- the babeltrace2 CLI: src.fathom.pytorch from the plugin ----------------
if babeltrace2 --plugin-path="$PLUGINS" -c src.fathom.pytorch -p "inputs=[\"$FIX/mlp.json\"]" >"$T/cli.txt" 2>"$T/cli.err"; then
    [ "$(grep -c 'fathom:ops' "$T/cli.txt")" = "$(grep -c 'fathom:ops' "$T/mlp_json.txt")" ] ||
        fail "babeltrace2 -c src.fathom.pytorch: not the ops events fathom import wrote"
else
    fail "babeltrace2 -c src.fathom.pytorch: $(head -3 "$T/cli.err")"
fi

# ---- hostile and foreign input: one line, non-zero, nothing written ---------
reject() { # name, what the message must say
    out="$T/$1.tar.zst"
    if "$FATHOM" import -o "$out" "$T/$1" >/dev/null 2>"$T/$1.err"; then
        fail "$1: accepted"
    else
        [ "$(wc -l <"$T/$1.err")" -eq 1 ] || fail "$1: not one line: $(cat "$T/$1.err")"
        grep -q "$2" "$T/$1.err" || fail "$1: the error does not say '$2': $(cat "$T/$1.err")"
    fi
    [ -e "$out" ] && fail "$1: something was written at $out"
    ls "$T" | grep -q "$1.tar.zst.tmp" && fail "$1: a temporary archive was left"
    return 0
}
head -c 30000 "$FIX/mlp.json" >"$T/truncated.json"
reject truncated.json "truncated JSON"
gzip -dc "$FIX/cnn.pt.trace.json.gz" | head -c 20000 | gzip >"$T/truncated-inner.json.gz"
reject truncated-inner.json.gz "truncated JSON"
head -c 5000 "$FIX/cnn.pt.trace.json.gz" >"$T/truncated-gzip.json.gz"
reject truncated-gzip.json.gz "cannot read\|truncated"
echo '[1, 2, 3]' >"$T/numbers.json"
reject numbers.json "event 0 is not an object"
echo '{"traceEvents": [{"ph": "X", "name": "Layout", "cat": "blink", "ts": 1, "dur": 5, "pid": 1, "tid": 2}, {"ph": "B", "name": "Paint", "ts": 8, "pid": 1, "tid": 2}]}' >"$T/chrome.json"
reject chrome.json "no PyTorch ops found"
echo '{"displayTimeUnit": "ms", "otherData": {}}' >"$T/noevents.json"
reject noevents.json "neither traceEvents nor nodes"
echo '{"traceEvents": [{"ph": "X", "name": "aten::mm", "ts": 1, "dur": -4, "pid": 1, "tid": 1}, {"ph": "X", "name": "aten::add", "ts": 1, "pid": 1, "tid": 1}]}' >"$T/baddur.json"
reject baddur.json "no PyTorch ops found"
echo '{"traceEvents": [{"ph": "X", "name": "aten::mm", "ts": 1, "dur": 2, "pid": 1, "tid": 1}] } trailing' >"$T/trailing.json"
reject trailing.json "bytes after the document"
echo '{"traceEvents": [{"ph": "X", "name": "aten::mm", "ts": 1, "dur": 2, "pid": 1, "tid": 1,}]}' >"$T/syntax.json"
reject syntax.json "not JSON at byte"
: >"$T/empty.json"
reject empty.json "empty file"
printf '\001\002\003binary' >"$T/binary.json"
reject binary.json "not JSON"
reject missing.json "No such file"
# hostile elements (the fast path's scanner leaves them to jansson, or takes
# them in bounded memory): nesting of 100,000, numbers beyond a double, a
# string of 100 MB, invalid UTF-8, a key a million times
python3 - "$T" <<'PY'
import sys
t = sys.argv[1]
ev = '{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": 1, "tid": 1, "ts": %s, "dur": 5%s}'
def put(name, op="aten::mm", ts="10", extra="", enc="ascii"):
    open(t + "/" + name, "wb").write(('{"traceEvents": [' + ev % (op, ts, extra) + ']}').encode(enc))
put("deep.json", extra=', "args": {"x": ' + "[" * 100000 + "]" * 100000 + "}")
put("absurd.json", extra=', "args": {"External id": 1e999}')
put("absurd-ts.json", ts="1e400")
put("bigstr.json", op="aten::" + "a" * (100 << 20))
put("utf8.json", op="aten::\xff", enc="latin-1")
put("keys.json", extra="".join(', "k": 1' for _ in range(1000000)))
put("keys-ts.json", extra="".join(', "ts": 1' for _ in range(1000000)))
PY
reject deep.json "maximum parsing depth"
reject absurd.json "real number overflow"
reject absurd-ts.json "real number overflow"
reject bigstr.json "larger than 64 MiB"
reject utf8.json "unable to decode byte 0xff"
for f in keys keys-ts; do
    "$FATHOM" import -o "$T/$f.tar.zst" "$T/$f.json" >/dev/null 2>"$T/$f.err" || fail "$f.json: $(cat "$T/$f.err")"
    tar -xOf "$T/$f.tar.zst" MANIFEST | grep -qx 'ops=1' || fail "$f.json: not one op"
done
rm -f "$T/bigstr.json" "$T/deep.json" "$T/keys.json" "$T/keys-ts.json"
mkdir -p "$T/adir.json"
reject adir.json "not a regular file"
# --dir that cannot be written: said before anything is converted
: >"$T/afile"
if "$FATHOM" import --dir "$T/afile/sub" "$FIX/mlp.json" >/dev/null 2>"$T/dir.err"; then
    fail "--dir under a file: accepted"
else
    [ "$(wc -l <"$T/dir.err")" -eq 1 ] && grep -q -- "--dir $T/afile/sub: cannot write in $T/afile: Not a directory" "$T/dir.err" \
      || fail "--dir under a file: $(cat "$T/dir.err")"
fi

# the fixtures with random values in random places (fixed seeds): imported
# and analyzable, or refused in one line; never a crash
mkdir -p "$T/mut"
python3 - "$FIX" "$T/mut" <<'PY'
import gzip, json, random, sys
fix, out = sys.argv[1], sys.argv[2]
random.seed(13)
docs = [json.loads(gzip.decompress(open(fix + "/" + f, "rb").read())) for f in ("cnn.pt.trace.json.gz", "cnn.et.json.gz")]
vals = [None, -1, 0, 1, 2**31, 2**63 - 1, -2**63, 1e308, -0.5, "x", "", [], [[]], [[-1, 2]], [[2**40, 2**40]], {},
        True, [1] * 20, "ProfilerStep#", "ProfilerStep#99999999999", "aten::conv2d", "Optimizer.step#SGD.step",
        "autograd::engine::evaluate_function: X", [[1, 2], [3, 4]], "Tensor(float)", "GenericList[Int,Int]", "kernel"]
def mutate(o, depth):
    if isinstance(o, dict):
        for k in list(o):
            r = random.random()
            if r < 0.01: del o[k]
            elif r < 0.03: o[k] = random.choice(vals)
            else: mutate(o[k], depth + 1)
    elif isinstance(o, list):
        for i in range(len(o)):
            if depth >= 3 and random.random() < 0.05: o[i] = random.choice(vals)
            else: mutate(o[i], depth + 1)
for i in range(24):
    d = json.loads(json.dumps(docs[i % 2]))
    mutate(d, 0)
    json.dump(d, open("%s/m%02d.json" % (out, i), "w"))
PY
for f in "$T"/mut/m*.json; do
    if "$FATHOM" import -o "$f.tar.zst" "$f" >/dev/null 2>"$f.err"; then
        "$FATHOM" analyze breakdown "$f.tar.zst" >"$f.bd" 2>&1 || fail "$(basename "$f"): imported, not analyzable"
        grep -q 'node_def' "$f.bd" && fail "$(basename "$f"): $(grep node_def "$f.bd")"
    else
        [ $? -eq 1 ] && [ "$(grep -vc warning "$f.err")" -eq 1 ] || fail "$(basename "$f"): $(head -3 "$f.err")"
        [ -e "$f.tar.zst" ] && fail "$(basename "$f"): refused, but an archive was written"
    fi
done

# some bad events among good ones: imported, one warning line each
cat >"$T/mixed.json" <<'JSON'
{"traceEvents": [
 {"ph": "X", "name": "ProfilerStep#0", "ts": 0, "dur": 1000, "pid": 1, "tid": 1},
 {"ph": "X", "name": "aten::mm", "ts": 10, "dur": 100, "pid": 1, "tid": 1, "args": {"Input Dims": [[4, 8], [8, 16]], "Input type": ["float", "float"]}},
 {"ph": "X", "name": "aten::add", "ts": 200, "dur": -5, "pid": 1, "tid": 1},
 {"ph": "X", "name": "aten::relu", "ts": 300, "pid": 1, "tid": 1},
 {"ph": "X", "name": "aten::mul", "ts": "soon", "dur": 3, "pid": 1, "tid": 1},
 {"ph": "X", "name": "aten::mm", "ts": 400, "dur": 10, "pid": 1, "tid": 1, "args": {"Input Dims": [[-4, 8], [8, 16]], "Input type": ["float", "float"]}},
 {"ph": "X", "name": "aten::mm", "ts": 500, "dur": 10, "pid": 1, "tid": 1, "args": {"Input Dims": [[4000000000, 8], [8, 16]], "Input type": ["float", "float"]}},
 {"ph": "X", "name": "aten::mm", "ts": 600, "dur": 10, "pid": 1, "tid": 1, "args": {"Input Dims": [[2000000, 2000000], [2000000, 16]], "Input type": ["float", "float"]}},
 {"ph": "X", "name": "aten::mm", "ts": 700, "dur": 10, "pid": 1, "tid": 1, "args": {"Input Dims": [[1,1,1,1,1,1,1,1,1,1], [1, 1]], "Input type": ["float", "float"]}}
]}
JSON
if import_text "$T/mixed.json" mixed; then
    python3 "$SRC/import_check.py" "$T/mixed.json" "$T/mixed.txt" || fail "import_check mixed.json"
    [ "$(grep -c 'warning' "$T/mixed.err")" -eq 2 ] || fail "mixed: not two warning lines: $(cat "$T/mixed.err")"
    grep -q '3 spans with a missing, negative or absurd time' "$T/mixed.err" || fail "mixed: bad times not counted"
    grep -q '4 op call sites with an absurd shape' "$T/mixed.err" || fail "mixed: absurd shapes not counted"
    grep -q 'ops = 5 }' "$T/mixed.txt" || fail "mixed: not 5 ops kept"
else
    fail "import mixed.json: $(cat "$T/mixed.err")"
fi

# ---- the command line ---------------------------------------------------------
: >"$T/exists.tar.zst"
if "$FATHOM" import -o "$T/exists.tar.zst" "$FIX/mlp.json" >/dev/null 2>"$T/exists.err"; then
    fail "an existing -o was accepted"
fi
[ -s "$T/exists.tar.zst" ] && fail "an existing -o was overwritten"
grep -q 'nothing is overwritten' "$T/exists.err" || fail "existing -o: $(cat "$T/exists.err")"
"$FATHOM" import -o "$T/a.tar.zst" "$FIX/mlp.json" "$FIX/mlp.json" >/dev/null 2>&1 && fail "-o with two files accepted"
"$FATHOM" import >/dev/null 2>&1; [ $? -eq 2 ] || fail "import without a FILE: not a usage error"
"$FATHOM" import --bogus "$FIX/mlp.json" >/dev/null 2>&1; [ $? -eq 2 ] || fail "an unknown option: not a usage error"
mkdir -p "$T/dir"
"$FATHOM" import --dir "$T/dir" --model tinymlp "$FIX/mlp.json" "$FIX/cnn.pt.trace.json.gz" >"$T/dir.out" 2>/dev/null ||
    fail "import --dir of two files"
[ "$(ls "$T/dir" | wc -l)" -eq 2 ] || fail "--dir: not two archives: $(ls "$T/dir")"
grep -q '/tinymlp-train-imported-' "$T/dir.out" || fail "--model: not in the archive's name: $(cat "$T/dir.out")"
# a model name with control bytes: refused, shown with '?'; a file's name with them: the model's '?' each
"$FATHOM" import --dir "$T/dir" --model "$(printf 'evil\033[31m')" "$FIX/mlp.json" >/dev/null 2>"$T/esc.err"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$T/esc.err")" -eq 1 ] && grep -q "without control characters, not 'evil?\[31m'" "$T/esc.err" ||
    fail "--model with an ESC: rc $rc: $(cat -A "$T/esc.err")"
mkdir -p "$T/escdir"
cp "$FIX/mlp.json" "$T/escdir/$(printf 'bad\033name').json"
"$FATHOM" import --dir "$T/escdir" "$T/escdir/"bad*.json >"$T/esc.out" 2>/dev/null || fail "import of a file named with an ESC"
"$FATHOM" info "$(cat "$T/esc.out")" | grep -q '^  model        bad?name$' ||
    fail "a file named with an ESC: model $("$FATHOM" info "$(cat "$T/esc.out")" | grep -a model | cat -A)"
# a PyTorch file given where a trace goes: one line that points to import
for f in mlp.json cnn.pt.trace.json.gz; do
    for cmd in "analyze breakdown" "replay" "info"; do
        # shellcheck disable=SC2086
        if "$FATHOM" $cmd "$FIX/$f" >/dev/null 2>"$T/pt.err"; then fail "$cmd $f: exit status 0"; fi
        [ "$(wc -l <"$T/pt.err")" -eq 1 ] && grep -q "$f: a JSON file, .*'fathom import'" "$T/pt.err" ||
            fail "$cmd $f: $(cat "$T/pt.err")"
    done
done
"$FATHOM" import --help | grep -q 'usage: fathom import' || fail "import --help"
"$FATHOM" help | grep -q '^ *import' || fail "import is not in the command table"

cli_end import
