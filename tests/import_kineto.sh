#!/bin/sh
# import_kineto.sh FATHOM SOURCE_DIR TMP -- every Kineto variant that
# tests/fixtures/kineto_gen.py writes (PyTorch 1.8 to 2.x, CUDA and ROCm,
# CUDA graphs, hostile ids) imports, reads back, and gives the times that
# tests/kineto_sums.py computes from the JSON alone: host op time (the
# outermost namespaced ops per thread, never a kernel's time), per device
# kernel_ns, busy_ns (the union of all activity), activities and streams,
# per host op type the device time of what it launched (device_ns), and
# per device and step what its idle time waited on (launched work, a host
# sync, the host) and how its work was launched (delays, short kernels).
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
# analyze gpu: what the idle time waited on, and the launch statistics, from the runtime calls
for d in g["devices"]:
    pid = d["device"].split(":")[-1]
    if not s["calls"]:  # no runtime calls in the trace: unknown, not zero
        assert d["idle_between_ns"] is None and d["launches"] is None, "gpu: causes without calls: %s" % d
        assert all(x["idle_host_ns"] is None and x["launches"] is None for x in d["steps"]), d["steps"]
        continue
    want = s["idle"][pid]
    for got, w in zip(d["steps"], want["steps"]):
        at = "%s step %d " % (d["device"], w["step"])
        for k in ("between_ns", "sync_ns", "host_ns"):
            near(got["idle_" + k], w[k], at + "idle_" + k)
        assert got["idle_between_ns"] + got["idle_sync_ns"] + got["idle_host_ns"] == got["idle_ns"], at + "split"
        for k, v in w["launches"].items():
            near(got["launches"][k], v, at + k)
    for k in ("between_ns", "sync_ns", "host_ns"):
        near(d["idle_" + k], sum(x[k] for x in want["steps"]), d["device"] + " idle_" + k)
    for k, v in want["all"].items():
        if k != "short_top":
            near(d["launches"][k], v, d["device"] + " all " + k)
    top = {x["name"]: x["count"] for x in d["launches"]["short_top"]}
    assert len(top) == min(5, len(want["all"]["short_top"])), "short_top %s" % top
    assert all(want["all"]["short_top"].get(n) == c for n, c in top.items()), "short_top %s" % top
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
# the idle time's causes are all there in idle.json: the split is not one cause renamed
python3 - "$T" <<'EOF' || fail "idle causes and launches"
import json, sys
d = json.load(open("%s/idle.gpu" % sys.argv[1]))["traces"][0]["devices"][0]
for x in d["steps"]:
    assert x["idle_between_ns"] > 0 and x["idle_sync_ns"] > 0 and x["idle_host_ns"] > 0, x
    l = x["launches"]
    assert l["short_kernels"] == 5 and l["unpaired"] == 1 and l["launched"] == 11 and l["calls"] == 10, l
    assert 0 < l["delay_median_ns"] < l["delay_p90_ns"] < l["delay_max_ns"], l
L = d["launches"]
assert [(k["name"], k["count"]) for k in L["short_top"]] == [("void at::native::fill_kernel<float>", 8),
                                                              ("void at::native::relu_kernel", 2)], L
t = json.load(open("%s/stream.gpu" % sys.argv[1]))["traces"][0]["devices"][0]
assert t["launches"] is None and t["idle_sync_ns"] is None, "stream.json has no runtime calls"
EOF
"$FATHOM" analyze gpu "$T/idle.tar.zst" >"$T/idle.txt" 2>"$T/err" || fail "gpu text (idle): $(cat "$T/err")"
grep -q "short kernels (shorter than their launch call): 10, 0.022 ms" "$T/idle.txt" &&
    grep -q "ms in host syncs" "$T/idle.txt" || fail "gpu text: no idle causes or short kernels: $(cat "$T/idle.txt")"
"$FATHOM" analyze gpu "$T/stream.tar.zst" | grep -q "launch statistics: n/a" || fail "gpu text: no n/a without calls"
"$FATHOM" analyze gpu --format csv "$T/idle.tar.zst" >"$T/idle.csv" 2>"$T/err" || fail "gpu csv (idle)"
python3 - "$T/idle.csv" "$T/idle.gpu" <<'EOF' || fail "gpu csv: the idle split and launch columns"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))["traces"][0]["devices"][0]
assert len(rows) == len(d["steps"]) == 2, rows
for r, x in zip(rows, d["steps"]):
    for k in ("idle_between_ns", "idle_sync_ns", "idle_host_ns"):
        assert int(r[k]) == x[k], (k, r, x)
    assert int(r["short_kernels"]) == x["launches"]["short_kernels"], r
    assert int(r["delay_p90_ns"]) == x["launches"]["delay_p90_ns"], r
EOF
# a runtime event missing a field (a damaged archive): counted as malformed, the rest reads, the causes n/a
mkdir -p "$T/bad" && tar -C "$T/bad" -xf "$T/idle.tar.zst" &&
    sed -i 's/_kinds\[___kinds_len\]/_kindz[___kinds_len]/' "$T/bad/trace/metadata" || fail "damage the idle archive"
"$FATHOM" analyze gpu "$T/bad/trace" >"$T/bad.txt" 2>"$T/bad.err" || fail "gpu on a damaged runtime event: $(cat "$T/bad.err")"
grep -q "2 fathom events with missing or mistyped fields ignored" "$T/bad.err" && grep -q "busy 0.822 ms" "$T/bad.txt" &&
    grep -q "launch statistics: n/a" "$T/bad.txt" || fail "gpu on a damaged runtime event: $(cat "$T/bad.err" "$T/bad.txt")"
"$FATHOM" report "$T/idle.tar.zst" -o "$T/irep" >/dev/null 2>"$T/err" || fail "report (idle): $(cat "$T/err")"
[ -s "$T/irep/gpu.svg" ] && [ -s "$T/irep/launches.svg" ] && grep -q 'id="gpu"' "$T/irep/index.html" &&
    grep -q "idle: host sync" "$T/irep/gpu.svg" && grep -q "short kernels" "$T/irep/launches.svg" ||
    fail "report: no GPU charts: $(ls "$T/irep")"
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
