#!/usr/bin/env python3
"""import_check.py -- checks an imported trace against the JSON it came from,
counting independently of the importer (python3's json, no fathom code).

usage: import_check.py SOURCE.json[.gz] TRACE.txt
  TRACE.txt: `babeltrace2 --clock-seconds CTF_DIR` of the imported trace.

Checks: the number of ops (outermost ops of each thread's nests, GPU kernels;
for execution traces, op nodes with no op above them) and of steps; run_end's
op count; every op of a step inside the step and, per thread, the sum of its
op times no more than the step's wall time (no double counting of nested
ops); the class of the ops the table knows.  Prints one line per failure,
exits 1 if any.
"""
import gzip
import json
import re
import sys

KERNEL_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
CLASSES = {"aten::conv2d": "convolution", "aten::convolution_backward": "convolution",
           "aten::addmm": "matrix", "aten::mm": "matrix", "aten::linear": "matrix",
           "aten::relu": "elementwise", "aten::max_pool2d": "reduction",
           "aten::batch_norm": "reduction", "aten::lstm": "matrix", "aten::view": "data_movement"}


def is_op(name):
    i = name.find("::")
    return i > 0 and not any(ord(ch) <= 32 or ord(ch) == 127 for ch in name) and not name.startswith(("autograd::", "torch::autograd::", "profiler::"))


def ns(us):
    return int(round(us * 1000))


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def expected(doc):
    """(ops, steps) the JSON holds."""
    if isinstance(doc, dict) and "nodes" in doc:
        nodes = {n["id"]: n for n in doc["nodes"]}
        ops = 0
        steps = set()
        for n in doc["nodes"]:
            if n["name"].startswith("ProfilerStep#"):
                steps.add(n["name"])
            if not is_op(n["name"]):
                continue
            p, inner, seen = nodes.get(n.get("parent")), False, 0
            while p is not None and seen < 256:
                inner |= is_op(p["name"])
                p, seen = nodes.get(p.get("parent")), seen + 1
            ops += not inner
        return ops, max(len(steps), 1)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    tracks, steps = {}, 0
    for e in events:
        if e.get("ph") != "X" or not e.get("name"):
            continue
        ts, dur = e.get("ts"), e.get("dur")
        if not isinstance(ts, (int, float)) or not isinstance(dur, (int, float)) or ts < 0 or dur < 0:
            continue
        name, cat = e["name"], e.get("cat")
        if name.startswith("ProfilerStep#"):
            steps += cat != "gpu_user_annotation"
            continue
        kernel = cat in KERNEL_CATS
        if not kernel and not (is_op(name) and cat in (None, "cpu_op", "Operator", "operator")):
            continue
        key = (kernel, str(e.get("pid")), str(e.get("tid")))
        tracks.setdefault(key, []).append((ns(ts), ns(ts + dur)))
    ops = 0
    for spans in tracks.values():
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for b, en in spans:
            while stack and stack[-1] <= b:
                stack.pop()
            ops += not stack
            stack.append(en)
    return ops, max(steps, 1)


EVENT = re.compile(r"^\[(\d+)\.(\d+)\] \(\S+\) ([\w:]+): \{ vpid = (-?\d+), vtid = (-?\d+), procname = \"([^\"]*)\" \}, \{ (.*) \}$")


def arrays(payload):
    out = {}
    for m in re.finditer(r"(\w+) = \[ (.*?) \]", payload):
        out[m.group(1)] = [int(v) for v in re.findall(r"\[\d+\] = (\d+)", m.group(2))]
    return out


def main():
    src, text = sys.argv[1], sys.argv[2]
    fails = []
    want_ops, want_steps = expected(load(src))
    nodes, ops, steps, run_end_ops = {}, 0, [], None
    cur = None
    per_step = {}
    for line in open(text):
        m = EVENT.match(line.rstrip("\n"))
        if not m:
            continue
        t = int(m.group(1)) * 10**9 + int(m.group(2).ljust(9, "0")[:9])
        ev, vtid, payload = m.group(3), int(m.group(5)), m.group(7)
        if ev == "fathom:node_def":
            node = int(re.search(r"node = (\d+)", payload).group(1))
            op = re.search(r'op = \( "(.*?)" :', payload).group(1)
            cls = re.search(r'cls = \( "([\w.]+)" :', payload).group(1)
            phase = re.search(r'phase = \( "(\w+)" :', payload).group(1)
            nodes[node] = (op, cls, phase)
        elif ev == "fathom:step_begin":
            cur = {"b": t, "ops": []}
        elif ev == "fathom:step_end":
            if cur is None:
                fails.append("step_end without step_begin")
                continue
            cur["e"] = t
            steps.append(cur)
            cur = None
        elif ev == "fathom:ops":
            a = arrays(payload)
            if not (len(a["nodes"]) == len(a["begins"]) == len(a["ends"])):
                fails.append("an ops event with arrays of different lengths")
            ops += len(a["nodes"])
            for n in a["nodes"]:
                if n not in nodes:
                    fails.append("ops names node %d before its node_def" % n)
            if cur is not None:
                cur["ops"] += [(vtid, b, e) for b, e in zip(a["begins"], a["ends"])]
        elif ev == "fathom:run_end":
            run_end_ops = int(re.search(r"ops = (\d+)", payload).group(1))
    if ops != want_ops:
        fails.append("ops: the trace has %d, the JSON %d" % (ops, want_ops))
    if run_end_ops != ops:
        fails.append("run_end says %s ops, the ops events hold %d" % (run_end_ops, ops))
    if len(steps) != want_steps:
        fails.append("steps: the trace has %d, the JSON %d" % (len(steps), want_steps))
    for k, s in enumerate(steps):
        wall = s["e"] - s["b"]
        by_thread = {}
        for vtid, b, e in s["ops"]:
            if e < b or b < s["b"] or b > s["e"]:
                fails.append("step %d: an op [%d, %d] outside the step [%d, %d]" % (k, b, e, s["b"], s["e"]))
            by_thread[vtid] = by_thread.get(vtid, 0) + (e - b)
        for vtid, total in by_thread.items():
            if total > wall:
                fails.append("step %d, thread %d: op times sum to %d ns, more than the step's %d" % (k, vtid, total, wall))
    for op, cls, phase in nodes.values():
        want = "optimization" if phase == "update" else CLASSES.get(op)
        if want and cls != want:
            fails.append("%s (%s) has class %s, not %s" % (op, phase, cls, want))
    for f in fails[:20]:
        print("FAIL: %s: %s" % (src, f))
    if not fails:
        print("ok: %s: %d ops, %d steps, %d nodes" % (src, ops, len(steps), len(nodes)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
