#!/bin/sh
# `fathom replay TRACE --record`: the replay traced into a new archive by the
# recorder. Its MANIFEST carries the source's model, mode and preset and
# replay_of=<source>; every pass is traced as steps with the recorded ops of
# each step (checked with the babeltrace2 CLI against the source); `fathom
# analyze breakdown SOURCE REPLAYED` shows both; a replay of the replay works.
. "$(dirname "$0")/lib.sh"
AWK="$(dirname "$0")/bt_ops.awk"
models=$("$FATHOM" record --help | sed -n 's/^workloads: //p')
case " $models " in *" memnet "*) model=memnet ;; *) model=${models%% *} ;; esac
case "$model" in ""|"(none") skip "no workloads are built in" ;; esac
ensure_sessiond
src="$T/src.tar.zst"
"$FATHOM" record "$model" --preset tiny --steps 3 --threads 1 -o "$src" --quiet >/dev/null 2>"$T/err" ||
    fail "record: $(cat "$T/err")"
extract "$src" "$T/xs"
check_trace "$T/xs/trace" "$T/bts" 3
awk -f "$AWK" "$T/bts.txt" >"$T/src.ops"
per=$(($(wc -l <"$T/src.ops") / 3))

rep="$T/rep.tar.zst"
"$FATHOM" replay "$src" --record -o "$rep" --threads 1 --denormals keep --warmup 0 --iterations 2 --format json >"$T/rep.json" 2>"$T/rep.err" ||
    fail "replay --record: $(cat "$T/rep.err")"
grep -q "^fathom replay: recorded the replay in $rep " "$T/rep.err" || fail "no 'recorded' line: $(cat "$T/rep.err")"
grep -q '"ops_executed": '$((6 * per)) "$T/rep.json" || fail "the report (the child's stdout) is not ours: $(head -3 "$T/rep.json")"
[ -f "$rep" ] || fail "no archive at $rep"
extract "$rep" "$T/xr"
check_trace "$T/xr/trace" "$T/btr" 6
for kv in "model=$model" "mode=train" "preset=tiny" "replay_of=src.tar.zst" "ops=$((6 * per))" "threads=1" "denormals=keep"; do
    grep -qx "$kv" "$T/xr/MANIFEST" || fail "MANIFEST lacks $kv: $(cat "$T/xr/MANIFEST")"
done
grep -q ' fathom:run_begin: .*model = "'"$model"'", mode = ( "train"' "$T/btr.txt" || fail "run_begin model/mode"
# each pass: the recorded steps, op for op
awk -v first=0 -v nsteps=3 -f "$AWK" "$T/btr.txt" >"$T/pass1.ops"
awk -v first=3 -v nsteps=3 -f "$AWK" "$T/btr.txt" >"$T/pass2.ops"
cmp -s "$T/src.ops" "$T/pass1.ops" || fail "pass 1 of the traced replay differs from the source's ops"
cmp -s "$T/src.ops" "$T/pass2.ops" || fail "pass 2 of the traced replay differs from the source's ops"
note "the replay's trace: 2 passes x 3 steps x $per ops, op for op the source's"

# side by side
"$FATHOM" analyze breakdown "$src" "$rep" >"$T/bd.txt" 2>"$T/bd.err" || fail "analyze breakdown: $(cat "$T/bd.err")"
[ "$(grep -c "^== $model train (tiny" "$T/bd.txt")" = 2 ] || fail "breakdown does not show both traces: $(head -5 "$T/bd.txt")"
grep -q "rep.tar.zst" "$T/bd.txt" && grep -q "src.tar.zst" "$T/bd.txt" || fail "breakdown does not name both"
"$FATHOM" analyze breakdown --format json "$src" "$rep" >"$T/bd.json" || fail "analyze breakdown --format json"
if command -v python3 >/dev/null && python3 -c 'import json' 2>/dev/null; then
    python3 - "$T/bd.json" "$model" <<'PY' || fail "breakdown JSON"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["traces"]
assert len(t) == 2, len(t)
assert all(x["model"] == sys.argv[2] and x["mode"] == "train" for x in t), t
a = {o["op"]: o["count"] for o in t[0]["op_types"]}
b = {o["op"]: o["count"] for o in t[1]["op_types"]}
assert set(a) == set(b), (set(a) ^ set(b))
print("op types in both:", len(a), file=sys.stderr)
PY
fi
# the replay of the replay
"$FATHOM" replay "$rep" --iterations 1 --steps 3 --dump-ops "$T/rr.ops" >/dev/null 2>"$T/rr.err" || fail "replay of the replay: $(cat "$T/rr.err")"
cmp -s "$T/src.ops" "$T/rr.ops" || fail "the replay of the replay differs"

# --dir, a default name; with --dump-ops and a warm-up pass (traced too)
"$FATHOM" replay "$src" --record --dir "$T/d" --threads 1 --warmup 1 --iterations 1 --dump-ops "$T/d.ops" >/dev/null 2>"$T/d.err" ||
    fail "replay --record --dir: $(cat "$T/d.err")"
n=$(ls "$T/d" | wc -l)
[ "$n" = 1 ] || fail "want one archive in --dir, got $n"
cmp -s "$T/src.ops" "$T/d.ops" || fail "--dump-ops under --record differs"
extract "$T/d/$(ls "$T/d")" "$T/xd"
check_trace "$T/xd/trace" "$T/btd" 6
# never overwrite; usage
"$FATHOM" replay "$src" --record -o "$rep" >/dev/null 2>"$T/e.err" && fail "--record -o over an archive succeeded"
[ "$(wc -l <"$T/e.err")" = 1 ] && grep -q exists "$T/e.err" || fail "overwrite: $(cat "$T/e.err")"
"$FATHOM" replay "$src" --record -o "$T/x.tar.zst" --dir "$T/d" >/dev/null 2>"$T/e.err" && fail "-o with --dir succeeded"
# a source that cannot be replayed: the child's one-line error, no archive
: >"$T/empty"
"$FATHOM" replay "$T/empty" --record -o "$T/none.tar.zst" >/dev/null 2>"$T/e.err" && fail "replay --record of nothing succeeded"
grep -q "^fathom replay: .*empty file" "$T/e.err" || fail "the child's error is not shown: $(cat "$T/e.err")"
[ ! -e "$T/none.tar.zst" ] || fail "an archive was written for a failed replay"
[ -z "$(ls -A "$TMPDIR")" ] || fail "temporary files left: $(ls -A "$TMPDIR")"
check_no_session_left
echo PASS
