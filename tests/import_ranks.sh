#!/bin/sh
# import_ranks.sh FATHOM SOURCE_DIR TMP -- one distributed job of four ranks
# that tests/fixtures/kineto_gen.py writes: `fathom import --dir` keeps each
# rank and the world size (distributedInfo, else the file's name, said
# once); a rank that cannot be read is one line naming it and leaves the
# other archives whole; `fathom analyze ranks` gives per rank and step the
# step time, busy, communication and idle time, and the stragglers, as
# tests/kineto_sums.py --ranks computes them from the JSON alone; similarity
# and diff work between ranks.
set -u
FATHOM=$1 SRC=$2
. "$(dirname "$0")/cli_lib.sh"
cli_begin import-ranks "$3"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 0; }
python3 "$SRC/tests/fixtures/kineto_gen.py" "$T/k" || { fail "the generator failed"; cli_end import-ranks; }
K=$T/k/ranks

# a job imported into one folder: an archive a rank, named after it
"$FATHOM" import --dir "$T/job" --model job "$K"/rank*.json >"$T/paths" 2>"$T/err" || fail "import: $(cat "$T/err")"
[ "$(grep -c . "$T/paths")" -eq 4 ] || fail "import: $(grep -c . "$T/paths") archives, not 4"
[ -s "$T/err" ] && fail "import of a job with distributedInfo said: $(cat "$T/err")"
for r in 0 1 2 3; do
    a=$(grep -- "-rank$r-" "$T/paths") || { fail "no archive named for rank $r: $(cat "$T/paths")"; continue; }
    "$FATHOM" info "$a" >"$T/info" 2>&1 || { fail "info rank $r: $(cat "$T/info")"; continue; }
    for kv in "source.rank $r" "source.world_size 4" "source.rank_from distributedInfo" "source.backend nccl" \
        "source.pg_count 2" "source.nccl_version 2.21.5"; do
        grep -q "^ *${kv% *} *${kv##* }\$" "$T/info" || fail "rank $r: no '$kv' in info: $(grep source "$T/info")"
    done
done

# no distributedInfo: the rank from the file's name, said once
"$FATHOM" import --dir "$T/noinfo" "$K/noinfo/trace_rank-3.json" "$T/k/rocm.json" >"$T/paths2" 2>"$T/err" ||
    fail "import noinfo: $(cat "$T/err")"
[ "$(grep -c . "$T/err")" -eq 1 ] && grep -q "2 traces without distributedInfo (the first: trace_rank-3.json)" "$T/err" ||
    fail "noinfo: not one note: $(cat "$T/err")"
"$FATHOM" info "$(grep -- -rank3- "$T/paths2")" >"$T/info" 2>&1
grep -q "source.rank *3$" "$T/info" && grep -q "source.rank_from *file name$" "$T/info" &&
    ! grep -q "source.world_size" "$T/info" || fail "noinfo: $(grep source "$T/info")"

# one rank unreadable: one line naming it, the others whole, nothing overwritten
head -c 3000 "$K/rank1.json" >"$T/rank1.json"
cp "$K/rank0.json" "$K/rank2.json" "$T/"
"$FATHOM" import --dir "$T/part" "$T/rank0.json" "$T/rank1.json" "$T/rank2.json" >"$T/paths3" 2>"$T/err" &&
    fail "a truncated rank imported without error"
[ "$(grep -c . "$T/err")" -eq 1 ] && grep -q "rank1.json" "$T/err" || fail "truncated rank: $(cat "$T/err")"
[ "$(grep -c . "$T/paths3")" -eq 2 ] || fail "truncated rank: the other ranks: $(cat "$T/paths3")"
for a in $(cat "$T/paths3"); do
    "$FATHOM" info "$a" >/dev/null 2>&1 || fail "$a: not whole"
done
[ "$(ls "$T/part" | grep -vc 'tar.zst$')" -eq 0 ] || fail "left behind: $(ls "$T/part")"

# the ranks side by side against the JSON's own sums
"$FATHOM" analyze ranks --format json $(cat "$T/paths") >"$T/ranks.json" 2>"$T/err" || fail "ranks: $(cat "$T/err")"
"$FATHOM" analyze ranks $(cat "$T/paths") >"$T/ranks.txt" 2>"$T/err" || fail "ranks text: $(cat "$T/err")"
"$FATHOM" analyze ranks --format csv $(cat "$T/paths") >"$T/ranks.csv" 2>"$T/err" || fail "ranks csv: $(cat "$T/err")"
python3 "$SRC/tests/kineto_sums.py" --ranks "$K"/rank*.json >"$T/sums" || fail "kineto_sums --ranks"
# the folder of archives is its archives
"$FATHOM" analyze ranks --format json "$T/job/" >"$T/dir.json" 2>"$T/err" || fail "ranks DIR: $(cat "$T/err")"
sed 's|job//|job/|' "$T/dir.json" | cmp -s - "$T/ranks.json" || fail "ranks DIR/ differs from ranks DIR/*"
python3 - "$T/sums" "$T/ranks.json" "$T/ranks.csv" <<'EOF' || fail "ranks differ from the JSON's"
import csv, json, sys
s = json.load(open(sys.argv[1]))
a = json.load(open(sys.argv[2]))
def near(x, y, what):
    assert abs(x - y) <= 2, "%s: %d, the JSON says %d" % (what, x, y)
assert a["world_size"] == 4 and a["steps"] == s["steps"] == 3, (a["world_size"], a["steps"])
assert [r["rank"] for r in a["ranks"]] == [r["rank"] for r in s["ranks"]] == [0, 1, 2, 3]
for r, w in zip(a["ranks"], s["ranks"]):
    for k, (got, want) in enumerate(zip(r["steps"], w["steps"])):
        for key in ("step_ns", "busy_ns", "comm_ns", "idle_ns"):
            near(got[key], want[key], "rank %d step %d %s" % (r["rank"], k, key))
    for key in ("step_ns", "busy_ns", "comm_ns", "idle_ns"):
        near(r[key], sum(x[key] for x in w["steps"]) // len(w["steps"]), "rank %d mean %s" % (r["rank"], key))
for k, (got, want) in enumerate(zip(a["stragglers"], s["stragglers"])):
    for key in ("rank", "least_comm_rank"):
        assert got[key] == want[key], "step %d: %s %s, the JSON says %s" % (k, key, got[key], want[key])
    for key in ("step_ns", "median_ns", "behind_ns"):
        near(got[key], want[key], "step %d %s" % (k, key))
# the fixture's stragglers: rank 1 in the first step, rank 2 in the others
assert [x["rank"] for x in a["stragglers"]] == [1, 2, 2], a["stragglers"]
assert a["slowest"]["rank"] == 2 and a["slowest"]["steps"] == 2, a["slowest"]
rows = list(csv.DictReader(open(sys.argv[3])))
assert len(rows) == 12, len(rows)
slow = sorted((int(r["step"]), int(r["rank"])) for r in rows if r["slowest"] == "1")
assert [x[1] for x in slow] == [1, 2, 2], slow
EOF
grep -q "^4 ranks of 4, 3 steps compared" "$T/ranks.txt" || fail "ranks text: $(head -1 "$T/ranks.txt")"
grep -q "^slowest most often: rank 2, in 2 of 3 steps" "$T/ranks.txt" || fail "ranks text: $(tail -1 "$T/ranks.txt")"
# the steps a window leaves
"$FATHOM" analyze ranks --format json --skip-first 1 $(cat "$T/paths") >"$T/skip.json" 2>"$T/err" &&
    python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); assert a["steps"]==2 and [x["rank"] for x in a["stragglers"]]==[2,2]' \
        "$T/skip.json" || fail "ranks --skip-first 1: $(cat "$T/err")"

# one rank twice is an error; ranks without a rank: their order, said
a0=$(grep -- -rank0- "$T/paths")
"$FATHOM" analyze ranks "$a0" "$a0" >/dev/null 2>"$T/err" && fail "rank 0 twice accepted"
grep -q "rank 0 twice" "$T/err" || fail "rank twice: $(cat "$T/err")"
"$FATHOM" import -o "$T/cpu.tar.zst" "$T/k/rocm.json" >/dev/null 2>&1
"$FATHOM" analyze ranks "$a0" "$T/cpu.tar.zst" >"$T/out" 2>"$T/err" || fail "ranks by order: $(cat "$T/err")"
grep -q "gives no rank" "$T/err" && grep -q "(ranks: the traces' order)" "$T/out" || fail "by order: $(cat "$T/err")"
"$FATHOM" analyze ranks "$a0" >/dev/null 2>"$T/err" && fail "one rank accepted"
# ranks of other jobs: a warning, and with --strict the end
"$FATHOM" import -o "$T/r3.tar.zst" --model job "$K/noinfo/trace_rank-3.json" >/dev/null 2>&1 || fail "import noinfo -o"
"$FATHOM" analyze ranks --strict "$a0" "$(grep -- -rank2- "$T/paths")" "$T/r3.tar.zst" >/dev/null 2>"$T/err" ||
    fail "ranks: a rank without world size is no warning: $(cat "$T/err")"
sed 's/"world_size": 4/"world_size": 8/' "$K/rank1.json" >"$T/w8.json"
"$FATHOM" import -o "$T/w8.tar.zst" "$T/w8.json" >/dev/null 2>&1 || fail "import w8"
"$FATHOM" analyze ranks --strict "$a0" "$T/w8.tar.zst" >/dev/null 2>"$T/err" && fail "world sizes 4 and 8: no --strict end"
grep -q "different world sizes" "$T/err" || fail "world sizes: $(cat "$T/err")"
cp "$K/noinfo/trace_rank-3.json" "$T/rank9.json"
"$FATHOM" import -o "$T/r9.tar.zst" "$T/rank9.json" >/dev/null 2>&1 || fail "import rank9"
"$FATHOM" analyze ranks "$T/r9.tar.zst" "$(grep -- -rank2- "$T/paths")" >/dev/null 2>"$T/err" || fail "rank 9 of 4"
grep -q "rank 9 (.*) is past the world size 4" "$T/err" || fail "rank 9 of 4: $(cat "$T/err")"

# a rank without ProfilerStep: one step, from its first op or activity to its last;
# the other ranks' first step compared with it, and said
python3 - "$K/rank1.json" "$T/nostep.json" <<'EOF' || fail "nostep: the generator"
import json, sys
d = json.load(open(sys.argv[1]))
d["traceEvents"] = [e for e in d["traceEvents"] if not e.get("name", "").startswith("ProfilerStep#")]
json.dump(d, open(sys.argv[2], "w"))
EOF
"$FATHOM" import -o "$T/nostep.tar.zst" "$T/nostep.json" >/dev/null 2>&1 || fail "import nostep"
"$FATHOM" analyze ranks --format json "$a0" "$T/nostep.tar.zst" >"$T/nostep.out" 2>"$T/err" ||
    fail "nostep: $(cat "$T/err")"
grep -q "rank 0 kept 3 steps: its first 1 are compared" "$T/err" || fail "nostep: $(cat "$T/err")"
python3 - "$SRC/tests" "$T/nostep.json" "$T/nostep.out" <<'EOF' || fail "nostep: the one step's times"
import json, sys
sys.path.insert(0, sys.argv[1])
from kineto_sums import clipped_union, ns
ev = [e for e in json.load(open(sys.argv[2]))["traceEvents"] if e.get("ph") == "X"]
host = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ev if e["cat"] == "cpu_op"]
dev = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ev if e["cat"] in ("kernel", "gpu_memcpy")]
b, e = min(x for x, _ in host + dev), max(y for _, y in host + dev)
r = json.load(open(sys.argv[3]))["ranks"][1]["steps"][0]
assert abs(r["step_ns"] - (e - b)) <= 2 and abs(r["busy_ns"] - clipped_union(dev, b, e)) <= 2, (r, e - b)
EOF

# similarity and diff between ranks
"$FATHOM" analyze similarity --format json $(cat "$T/paths") >"$T/sim" 2>"$T/err" || fail "similarity: $(cat "$T/err")"
python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["labels"]; assert l==["job/infer/rank%d" % r for r in range(4)], l' \
    "$T/sim" || fail "similarity: the ranks are not apart"
"$FATHOM" analyze diff "$a0" "$(grep -- -rank2- "$T/paths")" >"$T/diff" 2>"$T/err" || fail "diff: $(cat "$T/err")"
grep -q "aten::mm" "$T/diff" || fail "diff between ranks: $(cat "$T/diff")"
# the report: a ranks chart and its table
"$FATHOM" report -o "$T/rep" "$T/job" >/dev/null 2>"$T/err" || fail "report: $(cat "$T/err")"
[ -s "$T/rep/ranks.svg" ] && grep -q 'id="ranks"' "$T/rep/index.html" && grep -q "slowest most often: rank 2" \
    "$T/rep/index.html" || fail "report: no ranks section"
"$FATHOM" report -o "$T/rep2" "$a0" "$a0" >/dev/null 2>"$T/err" || fail "report of rank 0 twice: $(cat "$T/err")"
[ ! -e "$T/rep2/ranks.svg" ] && grep -q "No ranks in this report: rank 0 twice" "$T/rep2/index.html" ||
    fail "report of rank 0 twice: a ranks chart"
cli_end import-ranks
