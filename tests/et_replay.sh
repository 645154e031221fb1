# et_replay.sh -- execution traces of every node layout (the flat one with
# bare tensor ids or tuples, the Chakra one, an unknown schema version),
# written by tests/fixtures/pytorch/make_et.py, imported and replayed: the
# op count, views sharing a storage, an in-place op, a node with no shapes,
# index tensors, a foreach optimizer step; and bad input (repeated node
# ids, a cycle of parents, a tensor of absurd size, a link where nothing
# matches).
# usage: sh et_replay.sh FATHOM TESTS_SRC TMP
set -u
FATHOM=$1 SRC=$2
. "$SRC/cli_lib.sh"
cli_begin et_replay "$3"
command -v babeltrace2 >/dev/null || { echo "SKIP: no babeltrace2"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
python3 "$SRC/fixtures/pytorch/make_et.py" "$T" || { echo "FAIL: make_et.py"; exit 1; }

# import FILE into $T/NAME.tar.zst and its text into $T/NAME.txt
import_text() { # name
    "$FATHOM" import -o "$T/$1.tar.zst" "$T/$1.et.json" >"$T/$1.out" 2>"$T/$1.err" || return 1
    mkdir -p "$T/$1.x" && tar -C "$T/$1.x" -xf "$T/$1.tar.zst" &&
        babeltrace2 --clock-seconds "$T/$1.x/trace" >"$T/$1.txt"
}
# the tensor id of input/output K of the first node_def of op OP
node_tensor() { # name op side next-member k
    grep -m1 "op = ( \"$2\"" "$T/$1.txt" | sed -n "s/.* $3 = \[ \(.*\) \], __$4_len.*/\1/p" |
        tr ',' '\n' | sed -n "s/.*\[$5\] = \([0-9]*\).*/\1/p"
}

# One training step of 17 outermost ops (make_et.py); replayed as 19
# engine ops: _foreach_add_ over three parameters runs three.
for n in flat-bare flat chakra-103 chakra-111 future; do
    if ! import_text $n; then
        fail "$n: import: $(cat "$T/$n.err")"
        continue
    fi
    grep -qx 'ops=17' "$T/$n.x/MANIFEST" || fail "$n: not 17 ops: $(grep '^ops=' "$T/$n.x/MANIFEST")"
    # views (view, t of W, t of dY2) share a storage: their bytes are 0
    # (bare tensor ids name no storage)
    v=$(grep -c 'fathom:tensor_alloc.*bytes = 0 ' "$T/$n.txt") want=3
    [ $n = flat-bare ] && want=0
    [ "$v" = $want ] || fail "$n: $v tensors of 0 bytes, want $want (the views)"
    # relu_ works in place: its output is its input
    i=$(node_tensor $n aten::relu_ inputs outputs 0) o=$(node_tensor $n aten::relu_ outputs attrs 0)
    [ -n "$i" ] && [ "$i" = "$o" ] || fail "$n: relu_ reads $i, writes $o: not in place"
    # mul records no shapes: its inputs are dW, the first mm's output
    i=$(node_tensor $n aten::mul inputs outputs 0) o=$(grep 'op = ( "aten::mm"' "$T/$n.txt" | sed -n 1p |
        sed -n 's/.* outputs = \[ \[0\] = \([0-9]*\) \].*/\1/p')
    [ -n "$i" ] && [ "$i" = "$o" ] || fail "$n: mul reads tensor '$i', not dW ('$o')"
    grep -q 'op = ( "aten::_foreach_add_".*inputs = \[ \[0\] = [0-9]*, \[1\] = [0-9]*, \[2\] = [0-9]*, \[3\] = [0-9]*, \[4\] = [0-9]*, \[5\] = [0-9]* \]' \
        "$T/$n.txt" || fail "$n: _foreach_add_ has not its 6 tensors"
    if "$FATHOM" replay --iterations 1 --warmup 0 "$T/$n.tar.zst" >"$T/$n.rep" 2>&1; then
        grep -q 'coverage: *all 17 recorded ops replayed' "$T/$n.rep" ||
            fail "$n: $(grep -A3 'coverage' "$T/$n.rep")"
        grep -q ' 19 engine ops per step' "$T/$n.rep" || fail "$n: $(grep 'workload' "$T/$n.rep")"
    else
        fail "$n: replay: $(tail -3 "$T/$n.rep")"
    fi
done
grep -q "schema \"2.0.0-chakra.9.9.9\" is not one this version knows.*read by its layout, Chakra" "$T/future.err" ||
    fail "future: no note on the unknown schema: $(cat "$T/future.err")"
grep -q "not one this version knows" "$T/chakra-111.err" && fail "chakra-111: a known schema noted as unknown"

# the backward ops under the autograd thread's own root, between the
# step's forward and update ops: the step's; the DDP scope around mul is
# none, its mul the op
if import_text autograd; then
    grep -qx 'ops=17' "$T/autograd.x/MANIFEST" || fail "autograd: $(grep '^ops=' "$T/autograd.x/MANIFEST")"
    grep -q 'reducer::mul_out' "$T/autograd.txt" && fail "autograd: the scope is an op"
    "$FATHOM" replay --iterations 1 --warmup 0 "$T/autograd.tar.zst" >"$T/autograd.rep" 2>&1 ||
        fail "autograd: replay: $(tail -2 "$T/autograd.rep")"
    grep -q 'coverage: *all 17 recorded ops replayed' "$T/autograd.rep" ||
        fail "autograd: $(grep -A3 coverage "$T/autograd.rep")"
    grep -q '^aten::threshold_backward .* 1 ' "$T/autograd.rep" || fail "autograd: backward not in the step"
else
    fail "autograd: $(cat "$T/autograd.err")"
fi

# ---- linked with a profiler trace of the same run ------------------------------
# linked.pt.trace.json: a forward-only step, then the ET's step with its
# k-th op k+1 us long: the second is the one matched (as many ops match
# from the first, skipping more); op time 1+...+17 = 153 us, the two mms
# 12+14 = 26 us.
if "$FATHOM" import -o "$T/linked.tar.zst" --profile "$T/linked.pt.trace.json" "$T/flat.et.json" \
    >/dev/null 2>"$T/linked.err"; then
    grep -q 'linked with linked.pt.trace.json: 17 of 17 ops matched' "$T/linked.err" ||
        fail "linked: $(cat "$T/linked.err")"
    mkdir -p "$T/linked.x" && tar -C "$T/linked.x" -xf "$T/linked.tar.zst"
    grep -qx 'source.linked=17' "$T/linked.x/MANIFEST" || fail "linked: MANIFEST has no source.linked=17"
    grep -q 'no op times' "$T/linked.err" && fail "linked: its ops still untimed"
    "$FATHOM" replay --format csv --iterations 1 --warmup 0 "$T/linked.tar.zst" >"$T/linked.csv" 2>&1 ||
        fail "linked: replay: $(tail -2 "$T/linked.csv")"
    grep -q '^op,aten::mm,matrix,2,26000,' "$T/linked.csv" || fail "linked: mm not 26 us: $(grep mm "$T/linked.csv")"
    grep -q '^coverage,replayed,,17,153000,' "$T/linked.csv" || fail "linked: $(grep coverage "$T/linked.csv")"
else
    fail "linked: $(cat "$T/linked.err")"
fi
# linked-gpu.pt.trace.json: the same ops on a GPU, kernels linked by their
# launch's correlation id (their External id is the same number, some
# other CPU op's too): 15 ops launched kernels, (k+1)*10 us for the k-th
# op, 1400 us in all, the two mms 120 + 140 us; the host times as above;
# the fill launched outside any op and the first step's kernels are none
# of them.
if "$FATHOM" import -o "$T/gpu.tar.zst" --profile "$T/linked-gpu.pt.trace.json" "$T/flat.et.json" \
    >/dev/null 2>"$T/gpu.err"; then
    grep -q '15 of the matched ops launched kernels (by correlation id): their device time, 1.400 ms' "$T/gpu.err" ||
        fail "gpu: $(cat "$T/gpu.err")"
    "$FATHOM" replay --format csv --iterations 1 --warmup 0 "$T/gpu.tar.zst" >"$T/gpu.csv" 2>&1 ||
        fail "gpu: replay: $(tail -2 "$T/gpu.csv")"
    grep -q '^op,aten::mm,matrix,2,26000,' "$T/gpu.csv" || fail "gpu: mm host not 26 us: $(grep mm "$T/gpu.csv")"
    grep -q '^device,aten::mm,matrix,2,260000,' "$T/gpu.csv" || fail "gpu: mm device not 260 us: $(grep mm "$T/gpu.csv")"
    grep -q '^device,all,,,1400000,' "$T/gpu.csv" || fail "gpu: $(grep '^device,all' "$T/gpu.csv")"
    grep -q '^device,aten::view' "$T/gpu.csv" && fail "gpu: view has device time"
    grep -q '^coverage,replayed,,17,153000,' "$T/gpu.csv" || fail "gpu: $(grep coverage "$T/gpu.csv")"
    "$FATHOM" replay --iterations 1 --warmup 0 "$T/gpu.tar.zst" >"$T/gpu.rep" 2>&1 || fail "gpu: replay text"
    grep -q 'device time: *measured 1.400 ms per step, 1.400 ms of it by the op types' "$T/gpu.rep" ||
        fail "gpu: $(grep -i device "$T/gpu.rep")"
    grep -q 'recorded on Test GPU, replayed on this CPU: the ratios are a cross-hardware prediction' "$T/gpu.rep" ||
        fail "gpu: no cross-hardware note: $(grep note "$T/gpu.rep")"
else
    fail "gpu: $(cat "$T/gpu.err")"
fi
"$FATHOM" import -o "$T/other.tar.zst" --profile "$T/other.pt.trace.json" "$T/flat.et.json" >/dev/null 2>"$T/other.err" &&
    fail "other: a link where nothing matches accepted"
[ "$(wc -l <"$T/other.err")" = 1 ] && grep -q 'none of its 5 host ops matches' "$T/other.err" ||
    fail "other: $(cat "$T/other.err")"
[ -e "$T/other.tar.zst" ] && fail "other: an archive was written"

# ---- bad input ---------------------------------------------------------------
if "$FATHOM" import -o "$T/dup.tar.zst" "$T/dup-ids.et.json" >/dev/null 2>"$T/dup.err"; then
    fail "dup-ids: accepted"
fi
[ "$(wc -l <"$T/dup.err")" = 1 ] && grep -q 'node id [0-9]* appears twice' "$T/dup.err" ||
    fail "dup-ids: $(cat "$T/dup.err")"
[ -e "$T/dup.tar.zst" ] && fail "dup-ids: an archive was written"
if import_text cycle; then
    grep -q '2 nodes are their own ancestors' "$T/cycle.err" || fail "cycle: $(cat "$T/cycle.err")"
    grep -qx 'ops=15' "$T/cycle.x/MANIFEST" || fail "cycle: the cycle's two ops not skipped"
else
    fail "cycle: $(cat "$T/cycle.err")"
fi
if import_text absurd; then
    grep -q '1 op call sites with an absurd shape' "$T/absurd.err" || fail "absurd: $(cat "$T/absurd.err")"
else
    fail "absurd: $(cat "$T/absurd.err")"
fi

cli_end et_replay
