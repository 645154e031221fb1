#!/bin/sh
# import_kineto.sh FATHOM SOURCE_DIR TMP -- every Kineto variant that
# tests/fixtures/kineto_gen.py writes (PyTorch 1.8 to 2.x, CUDA and ROCm,
# CUDA graphs, hostile ids) imports, reads back, and gives the times that
# tests/kineto_sums.py computes from the JSON alone: host op time (the
# outermost namespaced ops per thread, never a kernel's time), per device
# kernel_ns, busy_ns (the union of all activity), activities and streams,
# and per host op type the device time of what it launched (device_ns).
set -u
FATHOM=$1 SRC=$2
. "$(dirname "$0")/cli_lib.sh"
cli_begin import-kineto "$3"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 0; }
python3 "$SRC/tests/fixtures/kineto_gen.py" "$T/k" || { fail "the generator failed"; cli_end import-kineto; }
python3 "$SRC/tests/fixtures/kineto_gen.py" "$T/s" --kernels 20000 || fail "the generator failed (stream)"
mv "$T/s/stream.json" "$T/k/" 2>/dev/null

for f in "$T"/k/*.json; do
    b=$(basename "$f" .json)
    "$FATHOM" import "$f" -o "$T/$b.tar.zst" >/dev/null 2>"$T/$b.err" || { fail "$b: import: $(cat "$T/$b.err")"; continue; }
    "$FATHOM" info "$T/$b.tar.zst" >/dev/null 2>"$T/err" || fail "$b: info: $(cat "$T/err")"
    "$FATHOM" analyze breakdown "$T/$b.tar.zst" >"$T/$b.txt" 2>"$T/err" || fail "$b: breakdown: $(cat "$T/err")"
    "$FATHOM" analyze breakdown --format json "$T/$b.tar.zst" >"$T/$b.bd" 2>"$T/err" ||
        { fail "$b: breakdown json: $(cat "$T/err")"; continue; }
    "$FATHOM" analyze gpu --format json "$T/$b.tar.zst" >"$T/$b.gpu" 2>"$T/err" ||
        { fail "$b: gpu json: $(cat "$T/err")"; continue; }
    python3 "$SRC/tests/kineto_sums.py" "$f" >"$T/$b.sums" || { fail "$b: kineto_sums"; continue; }
    python3 - "$T/$b.sums" "$T/$b.bd" "$b" "$T/$b.gpu" <<'EOF' || fail "$b: times differ from the JSON's"
import json, sys
s = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))["traces"][0]
g = json.load(open(sys.argv[4]))["traces"][0]
name = sys.argv[3]
def near(a, b, what):
    assert abs(a - b) <= max(2, b * 1e-4), "%s: %s is %d, the JSON says %d" % (name, what, a, b)
near(t["total_ns"], s["host_ns"], "host op time")
near(sum(o["count"] for o in t["op_types"]), s["host_ops"], "host ops")
kernel = sum(d["kernel_ns"] for d in s["devices"].values())
assert not kernel or abs(t["total_ns"] - s["host_ns"] - kernel) > 2, "device time in host op time"
assert len(t["devices"]) == len(s["devices"]), "%d devices, the JSON has %d" % (len(t["devices"]), len(s["devices"]))
for d in t["devices"]:
    pid = d["device"].split(":")[-1]
    want = s["devices"][pid]
    for k in ("kernel_ns", "busy_ns", "count", "streams"):
        near(d[k], want[k], d["device"] + " " + k)
    assert d["idle_ns"] == d["span_ns"] - d["busy_ns"], "idle is not span minus busy"
    assert sum(c["ns"] for c in d["classes"]) == sum(k["ns"] for k in d["kernels"]), "classes and kernels disagree"
# device_ns per host op type: what its ops launched, by correlation or External id
if s["devices"]:
    got = {o["op"]: o["device_ns"] for o in t["op_types"]}
    for op in set(got) | set(s["device_ns"]):
        near(got.get(op, 0), s["device_ns"].get(op, 0), op + " device_ns")
    near(t["device_unlaunched_ns"], s["unlaunched_ns"], "device time launched by no op")
    near(t["device_unlaunched"], s["unlaunched"], "device activities launched by no op")
# analyze gpu: per device and step, busy, idle, communication and its overlap with compute
assert len(g["devices"]) == len(s["gpu"]), "gpu: %d devices, the JSON has %d" % (len(g["devices"]), len(s["gpu"]))
for d in g["devices"]:
    want = s["gpu"][d["device"].split(":")[-1]]
    assert [x["step"] for x in d["steps"]] == [x["step"] for x in want], "gpu: steps %s" % d["steps"]
    for got, w in zip(d["steps"], want):
        for k in ("ns", "busy_ns", "comm_ns", "comm_overlap_ns"):
            near(got[k], w[k], "%s step %d %s" % (d["device"], w["step"], k))
        assert got["idle_ns"] == got["ns"] - got["busy_ns"], "gpu: idle is not step minus busy"
    near(d["comm_overlap_ns"], sum(x["comm_overlap_ns"] for x in want), d["device"] + " comm_overlap_ns")
EOF
done

# what the variants must show beyond the sums
grep -q '^device cuda:0: 3 streams' "$T/cuda2x.txt" || fail "cuda2x: no device line in the text: $(grep device "$T/cuda2x.txt")"
python3 - "$T" <<'EOF' || fail "device classes"
import json, sys
def kernels(b):
    t = json.load(open("%s/%s.bd" % (sys.argv[1], b)))["traces"][0]
    return {k["name"]: k["class"] for d in t["devices"] for k in d["kernels"]}
k = kernels("cuda2x")
assert k["ncclDevKernel_AllReduce_Sum_f32_RING_LL"] == "communication", k
assert k["ampere_sgemm_128x64_nn"] == "gemm" and k["Memcpy HtoD (Pageable -> Device)"] == "memcpy", k
assert k["Memset (Device)"] == "memset" and k["void at::native::softmax_warp_forward<float>"] == "reduction", k
assert kernels("rocm")["Cijk_Ailk_Bljk_SB_MT64x64x16_MI32x32x2x1"] == "gemm"
assert kernels("early2021")["implicit_convolve_sgemm"] == "convolution"
g = kernels("graphs")
assert g["void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits>"] == "attention", g
assert g["triton_poi_fused_add_0"] == "elementwise" and g["triton_red_fused_rms_norm_1"] == "reduction", g
t = json.load(open("%s/rocm.bd" % sys.argv[1]))["traces"][0]
assert [d["device"] for d in t["devices"]] == ["hip:2"], t["devices"]
EOF
# the link is real: each fixture has device time launched and (graphs, hostile) some launched by none
python3 - "$T" <<'EOF' || fail "device_ns"
import json, sys
def trace(b):
    return json.load(open("%s/%s.bd" % (sys.argv[1], b)))["traces"][0]
def dev(b):
    return {o["op"]: o["device_ns"] for o in trace(b)["op_types"]}
assert dev("cuda2x")["aten::mm"] > 0 and dev("cuda2x")["aten::sum"] > 0, dev("cuda2x")
assert dev("graphs")["cudagraphs::replay"] > 0 and trace("graphs")["device_unlaunched"] == 5, trace("graphs")
assert dev("early2021")["aten::conv2d"] > 0 and dev("rocm")["aten::mm"] > 0
assert trace("hostile")["device_unlaunched"] == 1
# the overlap is real: cuda2x's NCCL kernel runs half under a gemm, on another stream
d = json.load(open("%s/cuda2x.gpu" % sys.argv[1]))["traces"][0]["devices"][0]
assert d["comm_ns"] == 400000 and d["comm_overlap_ns"] == 200000 and d["overlap_share"] == 0.5, d
EOF
"$FATHOM" analyze gpu "$T/cuda2x.tar.zst" >"$T/gpu.txt" 2>"$T/err" || fail "gpu text: $(cat "$T/err")"
grep -q "communication 0.400 ms, 0.200 ms of it under compute kernels (50.0%)" "$T/gpu.txt" ||
    fail "gpu text: no overlap line: $(cat "$T/gpu.txt")"
"$FATHOM" analyze gpu --format csv "$T/rocm.tar.zst" >"$T/gpu.csv" 2>"$T/err" || fail "gpu csv: $(cat "$T/err")"
[ "$(grep -c ',hip:2,' "$T/gpu.csv")" -eq 2 ] || fail "gpu csv: not one row per step: $(cat "$T/gpu.csv")"
grep -q "aten::mm, 0.200 ms on the CPU, 0.500 ms of GPU activity" "$T/cuda2x.txt" ||
    fail "cuda2x: no line of the op that launched most: $(grep 'GPU activity' "$T/cuda2x.txt")"
grep -q "5 device activities (0.600 ms) launched by no host op" "$T/graphs.err" ||
    fail "graphs: the kernels launched by no op are not said: $(cat "$T/graphs.err")"
# hostile input: warnings, one a line, never a refusal
grep -q "integers beyond 64 bits" "$T/hostile.err" || fail "hostile: no note of the big integers: $(cat "$T/hostile.err")"
grep -q 'categories this importer does not know (the first: "mystery_category")' "$T/hostile.err" ||
    fail "hostile: no note of the unknown category"
grep -q "negative or absurd time" "$T/hostile.err" || fail "hostile: the negative duration is not noted"
[ "$(grep -c . "$T/rocm.err")" -eq 0 ] || fail "rocm: warnings: $(cat "$T/rocm.err")"
# source.device from computeProperties (Kineto before 1.10)
"$FATHOM" info "$T/rocm.tar.zst" | grep -q "source.device AMD Instinct MI250X" || fail "rocm: computeProperties not read"
"$FATHOM" report "$T/cuda2x.tar.zst" -o "$T/rep" >/dev/null 2>"$T/err" || fail "report: $(cat "$T/err")"
cli_end "import-kineto"
