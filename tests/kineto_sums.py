#!/usr/bin/env python3
"""kineto_sums.py TRACE.json[.gz] -- what a Kineto (PyTorch profiler) trace
holds, computed from its JSON alone, to check `fathom import` and
`fathom analyze breakdown` against: prints one JSON object.
kineto_sums.py --ranks TRACE... -- the same of the ranks of one job, for
`fathom analyze ranks`: see ranks() below.

  host_ns      the outermost namespaced ops (`aten::mm`, not `autograd::`)
               of each CPU thread, their spans summed (all of the trace)
  host_ops     how many
  aten_ns      the same for `aten::` ops only
  devices      per device (a GPU event's pid): kernel_ns (the durations of
               kernel events), busy_ns (the union of kernels, copies and
               fills), count (all three), streams
  device_ns    per host op type: the durations of the kernels, copies and
               fills that its outermost ops launched: the runtime call of
               the same correlation lies in that op (a CUDA graph's
               kernels have the cudaGraphLaunch's), else the host op of
               the same External id does
  unlaunched, unlaunched_ns   the device activities no host op launched
  gpu          per device, per step (the ProfilerStep#N spans, in time
               order, none overlapping the one before; without steps one,
               the first host op or activity to the last): step, ns, busy_ns (the
               union of its activity within the step), comm_ns (its
               communication kernels' time within the step: NCCL, RCCL
               names) and comm_overlap_ns (of that, the time some other
               kernel ran); steps are numbered from 0 in time order
  calls        whether the trace has runtime calls (cuda_runtime,
               cuda_driver, Runtime...): else fathom says the idle split
               and the launch statistics are unknown
  idle         per device, per step as in gpu: between_ns (idle time in
               which some activity of the device had its runtime call
               begun but had not started), sync_ns (the rest of the idle
               time in which a host thread was inside a synchronizing call:
               a name with Synchronize, or a copy without Async), host_ns
               (the rest); and `launches`, of the activities beginning in
               the step: activities, launched (paired with the call of
               their correlation), unpaired, calls, call_ns, launched_ns,
               kernel_ns, delay_{median,p90,max}_ns (per call, its first
               activity's begin less its begin, 0 if negative; nearest
               rank), short_kernels and short_ns (kernels that are their
               call's only activity and shorter than it); `all`: the same
               over all steps, with short_top (name -> count)
Events: complete ("ph": "X") with a name; kernels are categories `kernel`
and `Kernel`, copies and fills `gpu_memcpy`, `gpu_memset`, `Memcpy`,
`Memset`; host ops `cpu_op`, `Operator`, `operator` or no category.
Times are microseconds (decimals allowed, read exactly).  The trace's top level is an
object with traceEvents or a bare array.  Integers beyond 64 bits parse
(Python's are unbounded)."""
import decimal
import gzip
import json
import os
import re
import sys

KERNEL = {"kernel", "Kernel"}
COPY = {"gpu_memcpy", "gpu_memset", "Memcpy", "Memset"}
HOST = {"cpu_op", "Operator", "operator", None}
RUNTIME = {"cuda_runtime", "Runtime", "cuda_driver", "privateuse1_runtime", "mtia_runtime"}


def is_op_name(n):
    if any(ord(c) <= 32 or ord(c) == 127 for c in n):
        return False
    i = n.find("::")
    return i > 0 and not n.startswith(("autograd::", "torch::autograd::", "profiler::"))


def outermost(spans):
    """Sum and count of the outermost spans of one thread's (b, e) spans."""
    total = count = 0
    end = None
    for b, e in sorted(spans, key=lambda s: (s[0], -s[1])):
        if end is None or b >= end:
            total += e - b
            count += 1
            end = e
    return total, count


def outer_spans(spans):
    """The outermost (b, e, name) spans of one thread, in time order."""
    out = []
    for b, e, name in sorted(spans, key=lambda s: (s[0], -s[1])):
        if not out or b >= out[-1][1]:
            out.append((b, e, name))
    return out


def around(outer, t):
    """The name of the outermost span around time t, or None."""
    for b, e, name in outer:
        if b <= t <= e:
            return name
    return None


def union(spans):
    total = 0
    cb = ce = None
    for b, e in sorted(spans):
        if ce is None or b > ce:
            if ce is not None:
                total += ce - cb
            cb, ce = b, e
        elif e > ce:
            ce = e
    return total + (ce - cb if ce is not None else 0)


def ns(x):
    """Microseconds (an int, or a Decimal as the JSON wrote it) in ns, exactly:
    a float would lose the nanoseconds of today's epoch times."""
    return int((decimal.Decimal(x) * 1000).quantize(1, rounding=decimal.ROUND_HALF_UP))


COMM = ("nccl", "Nccl", "NCCL", "rccl", "AllReduce", "AllGather", "ReduceScatter", "SendRecv")


def clip(spans, b, e):
    return [(max(x, b), min(y, e)) for x, y in spans if min(y, e) > max(x, b)]


def merged(spans):
    out = []
    for b, e in sorted(spans):
        if out and b <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((b, e))
    return out


def covered(u, b, e):
    return sum(min(y, e) - max(x, b) for x, y in u if min(y, e) > max(x, b))


def arg(e, key):
    v = (e.get("args") or {}).get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def call_kind(name):
    """launch, sync, memcpy or other, by a runtime call's name."""
    if "Synchronize" in name:
        return "sync"
    if "Memcpy" in name:
        return "memcpy" if "Async" in name else "sync"
    if "Memset" in name:
        return "memcpy"
    return "launch" if "Launch" in name else "other"


def quantile(v, q10):
    """The ceil(q n)-th smallest of v (q = q10 / 10), 0 when empty."""
    v = sorted(v)
    return v[-(-q10 * len(v) // 10) - 1] if v else 0


def launch_stats(acts, calls):
    """acts: (b, e, corr, kernel, name) activities; calls: corr -> (b, e)."""
    out = {"activities": len(acts), "launched": 0, "unpaired": 0, "calls": 0, "call_ns": 0, "launched_ns": 0,
           "kernel_ns": sum(e - b for b, e, _, k, _ in acts if k), "short_kernels": 0, "short_ns": 0}
    by = {}
    for a in acts:
        if a[2] in calls:
            by.setdefault(a[2], []).append(a)
        else:
            out["unpaired"] += 1
    delays, top = [], {}
    for c, v in by.items():
        cb, ce = calls[c]
        out["calls"] += 1
        out["call_ns"] += ce - cb
        out["launched"] += len(v)
        out["launched_ns"] += sum(e - b for b, e, _, _, _ in v)
        first = min(b for b, _, _, _, _ in v)
        delays.append(max(first - cb, 0))
        if len(v) == 1 and v[0][3] and v[0][1] - v[0][0] < ce - cb:
            out["short_kernels"] += 1
            out["short_ns"] += v[0][1] - v[0][0]
            top[v[0][4]] = top.get(v[0][4], 0) + 1
    out["delay_median_ns"], out["delay_p90_ns"] = quantile(delays, 5), quantile(delays, 9)
    out["delay_max_ns"] = max(delays) if delays else 0
    return out, top


def complete_events(events):
    """The complete ("X") events with a name, a time and a duration, neither
    negative: each with its begin and end in ns, its category and name."""
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X" or not e.get("name"):
            continue
        if "ts" not in e or "dur" not in e or float(e["dur"]) < 0 or float(e["ts"]) < 0:
            continue
        b = ns(e["ts"])
        yield e, b, b + ns(e["dur"]), e.get("cat"), e["name"]


def idle_split(events, windows):
    """Per device: the idle split and launch statistics of each window."""
    calls, syncs, acts = {}, [], {}
    for e, b, en, cat, name in complete_events(events):
        if cat in RUNTIME and not (cat in HOST and is_op_name(name)):
            if call_kind(name) == "sync":
                syncs.append((b, en))
            if arg(e, "correlation") is not None:
                calls.setdefault(arg(e, "correlation"), (b, en))
        elif cat in KERNEL or cat in COPY:
            acts.setdefault(str(e.get("pid")), []).append((b, en, arg(e, "correlation"), cat in KERNEL, name))
    out = {}
    for pid, v in sorted(acts.items()):
        wins = windows(pid)
        busy = merged([(b, e) for b, e, _, _, _ in v])
        bq = merged([(b, e) for b, e, _, _, _ in v] +
                    [(calls[c][0], b) for b, e, c, _, _ in v if c in calls and calls[c][0] < b])
        bqs = merged(bq + syncs)
        steps = []
        for num, (wb, we) in enumerate(wins):
            cb, cq, cqs = covered(busy, wb, we), covered(bq, wb, we), covered(bqs, wb, we)
            stats, _ = launch_stats([a for a in v if wb <= a[0] < we], calls)
            steps.append({"step": num, "between_ns": cq - cb, "sync_ns": cqs - cq, "host_ns": we - wb - cqs,
                          "launches": stats})
        inside = [a for a in v if any(wb <= a[0] < we for wb, we in wins)]
        stats, top = launch_stats(inside, calls)
        stats["short_top"] = top
        out[pid] = {"steps": steps, "all": stats}
    return out


def sums(events):
    host, aten, dev = {}, {}, {}
    named, runtime, ext_op, activity, steps = {}, {}, {}, [], []
    runtime_all = False
    for e, b, en, cat, name in complete_events(events):
        if name.startswith("ProfilerStep#") and cat != "gpu_user_annotation":
            steps.append((b, en, int(name[13:]) if name[13:].isdigit() else 0))
        if cat in KERNEL or cat in COPY:
            d = dev.setdefault(str(e.get("pid")), {"kernel_ns": 0, "spans": [], "streams": set()})
            if cat in KERNEL:
                d["kernel_ns"] += en - b
            d["spans"].append((b, en))
            d["streams"].add(str(e.get("tid")))
            comm = cat in KERNEL and any(c in name for c in COMM)
            d.setdefault("comm", []).append((b, en)) if comm else None
            d.setdefault("compute", []).append((b, en)) if cat in KERNEL and not comm else None
            activity.append((en - b, arg(e, "correlation"), arg(e, "External id")))
        elif cat in RUNTIME and arg(e, "correlation") is not None:
            runtime_all = True
            runtime.setdefault(arg(e, "correlation"), ((str(e.get("pid")), str(e.get("tid"))), b))
        elif cat in RUNTIME:
            runtime_all = True
        elif cat in HOST and is_op_name(name) and not name.startswith("ProfilerStep#"):
            key = (str(e.get("pid")), str(e.get("tid")))
            host.setdefault(key, []).append((b, en))
            named.setdefault(key, []).append((b, en, name))
            if arg(e, "External id") is not None:
                ext_op.setdefault(arg(e, "External id"), (key, b))
            if name.startswith("aten::"):
                aten.setdefault(key, []).append((b, en))
    out = {"host_ns": 0, "host_ops": 0, "aten_ns": 0, "devices": {}}
    for spans in host.values():
        t, c = outermost(spans)
        out["host_ns"] += t
        out["host_ops"] += c
    for spans in aten.values():
        out["aten_ns"] += outermost(spans)[0]
    outer = {key: outer_spans(v) for key, v in named.items()}
    out["device_ns"], out["unlaunched"], out["unlaunched_ns"] = {}, 0, 0
    for ns_, corr, ext in activity:
        at = runtime.get(corr) if corr is not None else None
        if at is None and ext is not None:
            at = ext_op.get(ext)
        op = around(outer.get(at[0], []), at[1]) if at else None
        if op is None:
            out["unlaunched"] += 1
            out["unlaunched_ns"] += ns_
        else:
            out["device_ns"][op] = out["device_ns"].get(op, 0) + ns_
    kept = []
    for st in sorted(steps):
        if not kept or st[0] >= kept[-1][1]:
            kept.append(st)
    out["gpu"] = {}
    # without steps, fathom import makes the whole trace one: its first op
    # or activity to its last
    every = [x for v in host.values() for x in v] + [x for d in dev.values() for x in d["spans"]]
    whole = (min(b for b, _ in every), max(e for _, e in every), 0) if every else (0, 0, 0)
    for pid, d in sorted(dev.items()):
        win = kept or [whole]
        comp = merged(d.get("compute", []))
        out["gpu"][pid] = [{
            "step": num, "ns": e - b,
            "busy_ns": covered(merged(d["spans"]), b, e),
            "comm_ns": sum(y - x for x, y in clip(d.get("comm", []), b, e)),
            "comm_overlap_ns": sum(covered(comp, x, y) for x, y in clip(d.get("comm", []), b, e)),
        } for num, (b, e, _) in enumerate(win)]
    # the windows of a device: the kept steps, else its first activity to its last
    def windows(pid):
        if kept:
            return [(b, e) for b, e, _ in kept]
        sp = dev[pid]["spans"]
        return [(min(b for b, _ in sp), max(e for _, e in sp))]
    out["calls"] = bool(runtime_all)
    out["idle"] = idle_split(events, windows)
    for pid, d in sorted(dev.items()):
        out["devices"][pid] = {
            "kernel_ns": d["kernel_ns"],
            "busy_ns": union(d["spans"]),
            "count": len(d["spans"]),
            "streams": len(d["streams"]),
        }
    return out


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=decimal.Decimal)


def clipped_union(spans, b, e):
    return union([(max(x, b), min(y, e)) for x, y in spans if x < e and y > b])


def rank_of(doc, path, order):
    """distributedInfo's rank, else the file name's (rank3, rank-3, rank_3)."""
    d = doc.get("distributedInfo") if isinstance(doc, dict) else None
    if d and "rank" in d:
        return d["rank"]
    m = re.search(r"(?<![A-Za-z])rank[-_.]?(\d+)", os.path.basename(path), re.I)
    return int(m.group(1)) if m else order


def rank_steps(events):
    """Per host step (ProfilerStep#N on the CPU, in time order): step_ns,
    busy_ns (the union of the device's kernels, copies and fills within
    it), comm_ns (the union of NCCL/RCCL kernels within it), idle_ns."""
    steps, act, comm = [], [], []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e or "dur" not in e:
            continue
        b = ns(e["ts"])
        en = b + ns(e["dur"])
        cat, name = e.get("cat"), e.get("name", "")
        if cat in KERNEL or cat in COPY:
            act.append((b, en))
            if cat in KERNEL and ("nccl" in name.lower() or "rccl" in name.lower()):
                comm.append((b, en))
        elif name.startswith("ProfilerStep#") and cat in ("user_annotation", "Operator", "cpu_op"):
            steps.append((b, en))
    out = []
    for b, e in sorted(steps):
        busy = clipped_union(act, b, e)
        out.append({"step_ns": e - b, "busy_ns": busy, "comm_ns": clipped_union(comm, b, e), "idle_ns": e - b - busy})
    return out


def ranks(paths):
    """Per rank (by rank) its steps; per step the slowest rank, the median
    step time, how far behind it the slowest is, and the rank with the
    least communication."""
    rs = []
    for i, p in enumerate(paths):
        doc = load(p)
        events = doc if isinstance(doc, list) else doc.get("traceEvents", [])
        rs.append({"rank": rank_of(doc, p, i), "file": p, "steps": rank_steps(events)})
    rs.sort(key=lambda r: r["rank"])
    n = min(len(r["steps"]) for r in rs)
    strag = []
    for k in range(n):
        times = sorted(r["steps"][k]["step_ns"] for r in rs)
        m = len(times)
        median = times[m // 2] if m % 2 else times[m // 2 - 1] + (times[m // 2] - times[m // 2 - 1]) // 2
        slow = max(rs, key=lambda r: r["steps"][k]["step_ns"])  # the first of equals
        comm = [r for r in rs if r["steps"][k]["comm_ns"]]
        least = min(comm, key=lambda r: r["steps"][k]["comm_ns"])["rank"] if comm else None
        strag.append({"rank": slow["rank"], "step_ns": slow["steps"][k]["step_ns"], "median_ns": median,
                      "behind_ns": slow["steps"][k]["step_ns"] - median, "least_comm_rank": least})
    return {"steps": n, "ranks": rs, "stragglers": strag}


def main():
    if sys.argv[1] == "--ranks":
        json.dump(ranks(sys.argv[2:]), sys.stdout, indent=1)
        print()
        return
    doc = load(sys.argv[1])
    events = doc if isinstance(doc, list) else doc.get("traceEvents", [])
    json.dump(sums(events), sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
