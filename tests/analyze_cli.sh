#!/bin/sh
# analyze_cli.sh FATHOM CTFGEN_TOOL PLUGIN_DIR TMP -- `fathom analyze` as a user
# runs it, and the fathom-bt2.so plugin loaded by the babeltrace2 program.
set -u
FATHOM=$1 GEN=$2 PLUGINS=$3
. "$(dirname "$0")/cli_lib.sh"
cli_begin analyze-cli "$4"

# one-line error and a non-zero exit
expect_error() { # what, args...
    what=$1; shift
    "$FATHOM" analyze "$@" >"$T/out" 2>"$T/err"; rc=$?
    [ $rc -ne 0 ] || fail "$what: exit status 0"
    [ "$(wc -l <"$T/err")" -eq 1 ] || { fail "$what: stderr is not one line:"; cat "$T/err"; }
    [ ! -s "$T/out" ] || fail "$what: wrote to stdout"
}

"$GEN" "$T/a" conv alexnet train 4 || exit 1
"$GEN" "$T/ai" conv alexnet infer 4 seed=2 || exit 1
"$GEN" "$T/m" fc memnet train 4 seed=3 || exit 1
"$GEN" "$T/d" conv alexnet train 4 discard=5 seed=4 || exit 1
"$GEN" "$T/s9" conv alexnet train 2 schema=9 seed=5 || exit 1
"$GEN" "$T/f" conv x train 2 only_foreign seed=6 || exit 1
"$GEN" "$T/a2" conv alexnet train 6 seed=7 || exit 1
# scaling: op times 100%, 60%, 40% at 1, 2, 4 threads: t = 0.2 + 0.8/T of the 1-thread time
"$GEN" "$T/t1" conv alexnet train 3 threads=1 seed=8 || exit 1
"$GEN" "$T/t2" conv alexnet train 3 threads=2 scale_pct=60 seed=9 || exit 1
"$GEN" "$T/t4" conv alexnet train 3 threads=4 scale_pct=40 seed=10 || exit 1
"$GEN" "$T/t2b" conv alexnet train 3 threads=2 seed=11 || exit 1
"$GEN" "$T/t8v" conv vgg train 3 threads=8 scale_pct=30 seed=12 || exit 1
"$GEN" "$T/nb" conv alexnet train 3 no_run_begin seed=13 || exit 1
mkdir "$T/empty"
head -c 20000 /dev/urandom >"$T/random.bin"

# fathom --help names every analysis of the table (analyses.def)
n=0
for a in $("$FATHOM" analyze --help | sed -n 's/^\(usage:\)\{0,1\} *fathom analyze \([a-z]*\) .*/\2/p'); do
    n=$((n + 1))
    "$FATHOM" --help | grep "^  analyze " | grep -qw "$a" || fail "fathom --help does not name the analysis $a"
done
[ "$n" -ge 8 ] || fail "fathom analyze --help lists $n analyses"
expect_error "missing file" breakdown "$T/nope.tar.zst"
expect_error "random file" breakdown "$T/random.bin"
expect_error "empty dir" breakdown "$T/empty"
grep -q "no CTF trace found" "$T/err" || fail "empty dir: $(cat "$T/err")"
# a folder of archives where one trace was meant: the error says where they are
mkdir -p "$T/archives/run1"
: >"$T/archives/run1/a.tar.zst"
: >"$T/archives/run1/b.tar.zst"
expect_error "a folder of archives" breakdown "$T/archives"
grep -qF "$T/archives: no CTF trace, but 2 trace archives below it: name them ($T/archives/run1/*.tar.zst)" "$T/err" \
  || fail "a folder of archives: $(cat "$T/err")"
expect_error "schema 9" breakdown "$T/s9"
expect_error "foreign only" breakdown "$T/f"
expect_error "bad format" breakdown --format xml "$T/a"
expect_error "bad analysis" frobnicate "$T/a"
expect_error "no trace" similarity
expect_error "bad skip" breakdown --skip-first -1 "$T/a"
# a step window that keeps none of a trace's 4 steps: the error replay and tune give, for every analysis
for a in breakdown similarity parallelism "roofline --gflops 100 --gbs 10"; do
    expect_error "$a: all steps skipped" $a --skip-first 3 --skip-last 1 "$T/a2" "$T/a"
    grep -q "$T/a: skipping 3 + 1 of 4 steps leaves none" "$T/err" || fail "$a: all steps skipped: $(cat "$T/err")"
done
expect_error "memory --skip-first" memory --skip-first 1 "$T/a"
grep -q "does not apply to memory" "$T/err" || fail "memory --skip-first: $(cat "$T/err")"
expect_error "no pair" compare "$T/a" "$T/m"
grep -q "schema version 9" "$T/err" 2>/dev/null || true
expect_error "diff of one trace" diff "$T/a"
[ $rc -eq 2 ] || fail "diff of one trace: exit status $rc, not 2"
grep -q "exactly two traces" "$T/err" || { fail "diff of one trace: message"; cat "$T/err"; }
expect_error "diff of three traces" diff "$T/a" "$T/a2" "$T/ai"
[ $rc -eq 2 ] || fail "diff of three traces: exit status $rc, not 2"
expect_error "diff of no trace" diff
[ $rc -eq 2 ] || fail "diff of no trace: exit status $rc, not 2"
expect_error "diff missing file" diff "$T/a" "$T/nope.tar.zst"
grep -q "nope.tar.zst" "$T/err" || { fail "diff missing file: not named"; cat "$T/err"; }
expect_error "diff bad option" diff --pairs "$T/a" "$T/a2"

expect_error "scaling of one trace" scaling "$T/t1"
[ $rc -eq 2 ] || fail "scaling of one trace: exit status $rc, not 2"
grep -q "at least two traces" "$T/err" || { fail "scaling of one trace: message"; cat "$T/err"; }
expect_error "scaling of no trace" scaling
[ $rc -eq 2 ] || fail "scaling of no trace: exit status $rc, not 2"
expect_error "scaling at one thread count" scaling "$T/t1" "$T/t2" "$T/t2b"
[ $rc -eq 1 ] || fail "scaling at one thread count: exit status $rc, not 1"
grep -q "$T/t2 and $T/t2b both ran with 2 threads" "$T/err" || { fail "scaling duplicate: not named"; cat "$T/err"; }
"$FATHOM" analyze scaling "$T/t1" "$T/nb" >"$T/out" 2>"$T/err"; rc=$? # the reader warns first, then one error line
[ $rc -eq 1 ] || fail "scaling without threads: exit status $rc, not 1"
[ ! -s "$T/out" ] || fail "scaling without threads: wrote to stdout"
tail -1 "$T/err" | grep -q "$T/nb has no threads value (no run_begin)" || { fail "scaling without threads: not named"; cat "$T/err"; }
expect_error "scaling missing file" scaling "$T/t1" "$T/nope.tar.zst"
grep -q "nope.tar.zst" "$T/err" || { fail "scaling missing file: not named"; cat "$T/err"; }
expect_error "scaling bad option" scaling --pairs "$T/t1" "$T/t2"
"$FATHOM" analyze nonsense 2>&1 | grep -q "scaling" || fail "not-an-analysis message does not list scaling"
"$FATHOM" analyze --help | grep -q "fathom analyze scaling" || fail "--help does not list scaling"

# warnings: discarded events say so (and --strict makes them fatal)
"$FATHOM" analyze breakdown "$T/d" >/dev/null 2>"$T/err" || fail "discarded: non-zero exit"
grep -q "warning: .*5 events discarded" "$T/err" || { fail "discarded: no warning"; cat "$T/err"; }
"$FATHOM" analyze breakdown --strict "$T/d" >/dev/null 2>&1 && fail "--strict with warnings: exit 0"

# outputs
"$FATHOM" analyze breakdown --format csv "$T/a" >"$T/csv" || fail "csv"
head -1 "$T/csv" | grep -q '^trace,model,mode,level,name,class,count,ns,share,' || fail "csv header"
grep -q ',op,Conv2D,convolution,4,4000,' "$T/csv" || { fail "csv Conv2D row"; cat "$T/csv"; }
"$FATHOM" analyze breakdown --format json "$T/a" "$T/m" >"$T/json" || fail "json"
[ "$(jq '.traces | length' "$T/json")" = 2 ] || fail "json: two traces"
[ "$(jq '[.traces[0].op_types[].share] | add | . * 1e6 | round' "$T/json")" = 1000000 ] || fail "json: shares sum"
[ "$(jq -r '.traces[1].model' "$T/json")" = memnet ] || fail "json: model"
"$FATHOM" analyze compare --format json "$T/ai" "$T/a" >"$T/cmp" || fail "compare"
[ "$(jq -r '.pairs[0].train_only | map(.op) | join(",")' "$T/cmp")" = \
  "Conv2DBackpropFilter,Conv2DBackpropInput,ApplyAdam,MaxPoolGrad,ReluGrad" ] || fail "compare: train-only ops"
"$FATHOM" analyze compare --format csv "$T/ai" "$T/a" | grep -q '^alexnet,step,step_ns,' || fail "compare csv"
"$FATHOM" analyze similarity --format json "$T/a" "$T/ai" "$T/m" >"$T/sim" || fail "similarity"
[ "$(jq '.cosine[0][0]' "$T/sim")" = 1 ] || [ "$(jq '.cosine[0][0]' "$T/sim")" = 1.0 ] || fail "similarity: diagonal"
[ "$(jq '.merges | length' "$T/sim")" = 2 ] || fail "similarity: merges"
"$FATHOM" analyze similarity --by class --format csv "$T/a" "$T/m" | head -1 | grep -q '^label,alexnet/train,memnet/train$' \
  || fail "similarity csv header"
"$FATHOM" analyze similarity "$T/a" "$T/m" | grep -q 'distance = 1 - cosine' || fail "dendrogram"

# diff: same model (per kept step: equal), another mode (a warning, one-sided ops)
"$FATHOM" analyze diff --skip-first 1 "$T/a" "$T/a2" >"$T/diff.txt" 2>"$T/err" || fail "diff text"
[ ! -s "$T/err" ] || { fail "diff of one model: stderr not empty"; cat "$T/err"; }
grep -q '^== diff' "$T/diff.txt" || fail "diff text: no header"
grep -q '3 steps kept' "$T/diff.txt" && grep -q '5 steps kept' "$T/diff.txt" || fail "diff text: kept steps"
grep -q '^Conv2DBackpropFilter  *convolution  *0.0015  *0.0015  *1.000 ' "$T/diff.txt" \
  || { fail "diff text: Conv2DBackpropFilter row"; cat "$T/diff.txt"; }
"$FATHOM" analyze diff --top 2 "$T/a" "$T/a2" | grep -q '^(9 more op types)' || fail "diff --top: rest line"
"$FATHOM" analyze diff --format json --skip-first 1 "$T/a" "$T/a2" >"$T/diff.json" || fail "diff json"
jq -e '.schema == 1 and .analysis == "diff" and .a.steps == 3 and .b.steps == 5 and .a.model == "alexnet"
       and .a.threads == 2 and .b.preset == "tiny" and .op_ratio == 1 and .step_ratio == 1
       and (.op_types | length) == 11 and (.classes | length) == 5
       and (.op_types[0] | keys) == ["a_count","a_ns","a_share","b_count","b_ns","b_share","class","delta_ns","op","ratio"]
       and (.classes[0] | keys) == ["a_ns","a_share","b_ns","b_share","class","dshare_pp","ratio"]
       and ([.op_types[].delta_ns] | all(. == 0))' "$T/diff.json" >/dev/null \
  || { fail "diff json: layout or values"; cat "$T/diff.json"; }
"$FATHOM" analyze diff --format json "$T/a" "$T/ai" >"$T/diff2.json" 2>"$T/err" || fail "diff train/infer: exit"
[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "warning: A is alexnet/train, B is alexnet/infer" "$T/err" \
  || { fail "diff train/infer: no one-line warning"; cat "$T/err"; }
jq -e '(.op_types | map(select(.b_ns == 0 and .ratio == null)) | map(.op) | sort)
         == ["ApplyAdam","Conv2DBackpropFilter","Conv2DBackpropInput","MaxPoolGrad","ReluGrad"]
       and (.op_types[] | select(.op == "MatMul") | .a_ns == 900 and .b_ns == 300 and .a_count == 2)
       and (.classes[] | select(.class == "optimization") | .ratio == null and .b_share == 0)' "$T/diff2.json" >/dev/null \
  || { fail "diff train/infer: json"; cat "$T/diff2.json"; }
"$FATHOM" analyze diff --strict "$T/a" "$T/ai" >/dev/null 2>&1 && fail "diff --strict with another mode: exit 0"
"$FATHOM" analyze diff --format csv "$T/a" "$T/ai" >"$T/diff.csv" || fail "diff csv"
head -1 "$T/diff.csv" | grep -qx 'level,name,class,a_ns,b_ns,ratio,delta_ns,a_share,b_share,dshare_pp,a_count,b_count' \
  || fail "diff csv header"
grep -q '^step,step_ns,,5930.0,1820.0,' "$T/diff.csv" || { fail "diff csv: step row"; cat "$T/diff.csv"; }
grep -q '^op_type,Conv2D,convolution,1000.0,1000.0,1.000000,0.0,' "$T/diff.csv" || fail "diff csv: Conv2D row"
grep -q '^op_type,ApplyAdam,optimization,400.0,0.0,,-400.0,' "$T/diff.csv" || fail "diff csv: one-sided row"
grep -q '^class,convolution,convolution,' "$T/diff.csv" || fail "diff csv: class row"
[ "$(awk -F, '{ print NF }' "$T/diff.csv" | sort -u)" = 12 ] || fail "diff csv: not 12 columns on every row"

# scaling: given out of order, sorted by threads; serial fraction 0.2 everywhere
"$FATHOM" analyze scaling --top 3 "$T/t4" "$T/t1" "$T/t2" >"$T/sc.txt" 2>"$T/err" || fail "scaling text"
[ ! -s "$T/err" ] || { fail "scaling: stderr not empty"; cat "$T/err"; }
grep -q '^== scaling: alexnet/train at 1, 2, 4 threads' "$T/sc.txt" || { fail "scaling text: header"; cat "$T/sc.txt"; }
grep -q 'serial fraction 0.200, limit speedup 5.000' "$T/sc.txt" || { fail "scaling text: total fit"; cat "$T/sc.txt"; }
grep -q '^Conv2DBackpropFilter  *convolution  *0.0015  *0.0009  *0.0006  *2.500  *0.200  *5.000$' "$T/sc.txt" \
  || { fail "scaling text: Conv2DBackpropFilter row"; cat "$T/sc.txt"; }
grep -q '^(8 more op types)' "$T/sc.txt" || fail "scaling --top: rest line"
"$FATHOM" analyze scaling --format json "$T/t4" "$T/t1" "$T/t2" >"$T/sc.json" || fail "scaling json"
jq -e '.schema == 1 and .analysis == "scaling" and .threads == [1,2,4] and ([.traces[].threads] == [1,2,4])
       and (.traces[0] | keys) == ["mode","model","op_ns","source","step_ns","steps","threads"]
       and .traces[0].model == "alexnet" and .traces[2].steps == 3 and .traces[0].op_ns == 5770
       and (.op_types | length) == 11 and (.classes | length) == 5
       and (.op_types[0] | keys) == ["class","efficiency","limit_speedup","ns","op","parallel_ns","serial_fraction","serial_ns","speedup"]
       and .op_types[0].op == "Conv2DBackpropFilter" and .op_types[0].ns == [1500,900,600]
       and .op_types[0].speedup[2] == 2.5
       and ([.op_types[].serial_fraction] | all(. > 0.1999999 and . < 0.2000001))
       and (.total.limit_speedup > 4.999999 and .total.limit_speedup < 5.000001)
       and (.total.step_ns | length) == 3' "$T/sc.json" >/dev/null \
  || { fail "scaling json: layout or values"; cat "$T/sc.json"; }
"$FATHOM" analyze scaling --format csv "$T/t1" "$T/t2" "$T/t4" >"$T/sc.csv" || fail "scaling csv"
head -1 "$T/sc.csv" | grep -qx 'level,name,class,threads,ns,speedup,efficiency,serial_fraction,limit_speedup' \
  || fail "scaling csv header"
grep -q '^step,op_ns,,4,2308.0,2.500000,0.625000,0.200000000,5.000000$' "$T/sc.csv" || { fail "scaling csv: op row"; cat "$T/sc.csv"; }
grep -q '^op_type,Conv2D,convolution,2,600.0,1.666667,0.833333,' "$T/sc.csv" || fail "scaling csv: Conv2D row"
[ "$(grep -c '^op_type,' "$T/sc.csv")" -eq 33 ] || fail "scaling csv: not 11 op types x 3 thread counts"
[ "$(awk -F, '{ print NF }' "$T/sc.csv" | sort -u)" = 9 ] || fail "scaling csv: not 9 columns on every row"
"$FATHOM" analyze scaling "$T/t1" "$T/t8v" >/dev/null 2>"$T/err" || fail "scaling of two models: exit"
[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "warning: .*alexnet/train.*vgg/train" "$T/err" \
  || { fail "scaling of two models: no one-line warning"; cat "$T/err"; }
"$FATHOM" analyze scaling --strict "$T/t1" "$T/t8v" >/dev/null 2>&1 && fail "scaling --strict with another model: exit 0"

# control bytes in a trace's own strings (run_begin's model here) are '?' in every text and CSV table
"$GEN" "$T/esc" fc "$(printf 'evil\033[31mRED\007')" train 4 seed=16 || exit 1
for f in text csv; do
    "$FATHOM" analyze breakdown --format $f "$T/esc" >"$T/esc.$f" 2>"$T/err" || { fail "breakdown --format $f of an ESC model"; cat "$T/err"; }
    if tr -d '\n' <"$T/esc.$f" | LC_ALL=C grep -q '[[:cntrl:]]'; then fail "breakdown --format $f printed a control byte"; fi
    grep -q 'evil?\[31mRED?' "$T/esc.$f" || fail "breakdown --format $f: the model not shown with '?': $(head -3 "$T/esc.$f")"
done
"$FATHOM" info "$T/esc" | grep -q '^run: evil?\[31mRED? train' || fail "info: the run's model not shown with '?'"

# roofline: known flops and bytes (ctfgen's roofline recipe) against ceilings
"$GEN" "$T/r" roofline mlp infer 2 seed=14 || exit 1
"$GEN" "$T/r8" roofline mlp infer 2 batch=8 seed=15 || exit 1
expect_error "roofline without ceilings" roofline "$T/r"
[ $rc -eq 2 ] && grep -q "fathom peak --format json" "$T/err" || { fail "roofline without ceilings: $rc"; cat "$T/err"; }
expect_error "roofline with one ceiling" roofline --gflops 100 "$T/r"
[ $rc -eq 2 ] || fail "roofline with one ceiling: exit status $rc, not 2"
expect_error "roofline bad --gflops" roofline --gflops -3 --gbs 10 "$T/r"
[ $rc -eq 2 ] && grep -q "gflops wants a number in \[0.001, 1e+09\], not .-3." "$T/err" || fail "roofline bad --gflops: $rc"
expect_error "roofline absurd --gbs" roofline --gflops 100 --gbs 1e-300 "$T/r"
[ $rc -eq 2 ] && grep -q "gbs wants a number in \[0.001, 1e+09\]" "$T/err" || { fail "roofline absurd --gbs: $rc"; cat "$T/err"; }
# a live table's interval: at most ten redraws a second (1e-300 s redrew it without pause), at least one a day
expect_error "breakdown --interval too short" breakdown --interval 1e-300 "$T/r"
[ $rc -eq 2 ] && grep -q "interval wants a number in \[0.1, 86400\]" "$T/err" || { fail "breakdown --interval 1e-300: $rc"; cat "$T/err"; }
expect_error "roofline --peak without a file" roofline "$T/r" --peak
[ $rc -eq 2 ] || fail "roofline --peak without a file: exit status $rc, not 2"
expect_error "roofline missing peak file" roofline --peak "$T/nope.json" "$T/r"
[ $rc -eq 1 ] && grep -q "nope.json" "$T/err" || { fail "roofline missing peak file: $rc"; cat "$T/err"; }
printf 'peak: 100 GFLOP/s\n' >"$T/bad.json"
expect_error "roofline corrupt peak file" roofline --peak "$T/bad.json" "$T/r"
[ $rc -eq 1 ] && grep -q "bad.json: not JSON" "$T/err" || { fail "roofline corrupt peak file: $rc"; cat "$T/err"; }
expect_error "roofline --pairs" roofline --pairs --gflops 1 --gbs 1 "$T/r"
cat >"$T/peak.json" <<'JSON'
{"schema": 1, "cpu": "Test CPU @ 1.0GHz", "sgemm": [{"threads": 1, "gflops": 60}, {"threads": 2, "gflops": 100}],
 "peak_gflops": 120, "bandwidth_gbs": 10}
JSON
"$FATHOM" analyze roofline --peak "$T/peak.json" --format json "$T/r8" "$T/r" >"$T/rl.json" 2>"$T/err" \
  || { fail "roofline json: exit"; cat "$T/err"; }
[ ! -s "$T/err" ] || { fail "roofline, same CPU: stderr not empty"; cat "$T/err"; }
jq -e '.schema == 1 and .peaks.gflops == 120 and .peaks.gbs == 10 and (.traces | length) == 2
       and .traces[0].batch == 8 and .traces[0].peak_gflops == 100 and .traces[0].peak_at_threads == true
       and (.traces[0].op_types | map(.op)) == ["Conv2D","MatMul","Relu","Reshape","Tile"]
       and (.traces[0].op_types[1] | .intensity == 50 and .gflops == 50 and .of_roof == 0.5 and .bound == "compute")
       and (.traces[0].op_types[2] | .intensity == 0.125 and .gbs == 8 and .roof_gflops == 1.25 and .bound == "memory")
       and (.traces[0].op_types[4] | .bound == "none" and .of_roof == null)
       and (.trajectories[0] | .op == "Conv2D" and (.points | map(.batch)) == [4, 8] and (.points | map(.trace)) == [1, 0])' \
  "$T/rl.json" >/dev/null || { fail "roofline json: layout or values"; cat "$T/rl.json"; }
"$FATHOM" analyze roofline --peak "$T/peak.json" --gflops 50 --format json "$T/r" >"$T/rl2.json" || fail "roofline --gflops"
jq -e '.traces[0].peak_gflops == 50 and .traces[0].peak_at_threads == false and .traces[0].op_types[1].of_roof == 1' \
  "$T/rl2.json" >/dev/null || { fail "roofline: --gflops does not override the peak file"; cat "$T/rl2.json"; }
"$FATHOM" analyze roofline --gflops 100 --gbs 10 "$T/r" >"$T/rl.txt" || fail "roofline text"
grep -q '^ceilings: 100.0 GFLOP/s (peak), 10.0 GB/s; ridge point 10.00 FLOP/byte$' "$T/rl.txt" \
  || { fail "roofline text: ceilings"; cat "$T/rl.txt"; }
grep -q '^MatMul  *matrix  *21.1%  *50.00  *50.00  *1.00  *100.00  *0.50  compute$' "$T/rl.txt" \
  || { fail "roofline text: MatMul row"; cat "$T/rl.txt"; }
grep -q '^Tile  *data_movement  *5.3%  *-  *0.00  *0.00  *-  *-  none$' "$T/rl.txt" \
  || { fail "roofline text: Tile row"; cat "$T/rl.txt"; }
"$FATHOM" analyze roofline --gflops 100 --gbs 10 --format csv "$T/r" >"$T/rl.csv" || fail "roofline csv"
[ "$(awk -F, '{ print NF }' "$T/rl.csv" | sort -u)" = 20 ] || fail "roofline csv: not 20 columns on every row"
[ "$(wc -l <"$T/rl.csv")" -eq 11 ] || fail "roofline csv: not header + total + 5 op types + 4 classes"
sed 's/Test CPU @ 1.0GHz/Another CPU/' "$T/peak.json" >"$T/peak2.json"
"$FATHOM" analyze roofline --peak "$T/peak2.json" "$T/r" >/dev/null 2>"$T/err" || fail "roofline, other CPU: exit"
[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "warning: the peaks were measured on 'Another CPU'" "$T/err" \
  || { fail "roofline, other CPU: no one-line warning"; cat "$T/err"; }
"$FATHOM" analyze roofline --strict --peak "$T/peak2.json" "$T/r" >/dev/null 2>&1 && fail "roofline --strict, other CPU: exit 0"
"$FATHOM" analyze nonsense 2>&1 | grep -q "roofline" || fail "not-an-analysis message does not list roofline"
"$FATHOM" analyze --help | grep -q "fathom analyze roofline" || fail "--help does not list roofline"

# memory: four 512 B weights before the steps, a 2048 B activation in each step
"$FATHOM" analyze memory "$T/a" "$T/ai" >"$T/mem.txt" 2>"$T/err" || { fail "memory text: exit"; cat "$T/err"; }
grep -q '^peak 4.00 KiB of tensors (8 allocated in all), reached in step 0$' "$T/mem.txt" \
  || { fail "memory text: peak line"; cat "$T/mem.txt"; }
grep -q '^alexnet/infer  *0.0  *0.0  *0.0$' "$T/mem.txt" || { fail "memory text: table row"; cat "$T/mem.txt"; }
"$FATHOM" analyze memory --format json "$T/a" >"$T/mem.json" || fail "memory json"
jq -e '.schema == 1 and .analysis == "memory" and .traces[0].peak_bytes == 4096 and .traces[0].peak_step == 0
       and .traces[0].peak_in_step and (.traces[0].roles | map(.role)) == ["activation","weight"]
       and (.traces[0].steps | length) == 4 and (.traces[0].steps | all(.start_bytes == 2048 and .peak_bytes == 4096))' \
  "$T/mem.json" >/dev/null || { fail "memory json: layout or values"; cat "$T/mem.json"; }
"$FATHOM" analyze memory --format csv "$T/a" >"$T/mem.csv" || fail "memory csv"
[ "$(awk -F, '{ print NF }' "$T/mem.csv" | sort -u)" = 10 ] || fail "memory csv: not 10 columns on every row"
expect_error "memory missing file" memory "$T/nope.tar.zst"
expect_error "memory bad option" memory --top 3 "$T/a"
[ $rc -eq 2 ] || fail "memory bad option: exit status $rc, not 2"

# the plugin, loaded by the babeltrace2 program itself: same numbers as fathom analyze
babeltrace2 --plugin-path="$PLUGINS" "$T/a" -c sink.fathom.breakdown -p 'format="json"' >"$T/bt.json" 2>"$T/bt.err" \
  || { fail "babeltrace2 sink.fathom.breakdown"; cat "$T/bt.err"; }
"$FATHOM" analyze breakdown --format json "$T/a" >"$T/cli.json"
cmp -s "$T/bt.json" "$T/cli.json" || { fail "plugin JSON differs from fathom analyze"; diff "$T/bt.json" "$T/cli.json" | head; }
babeltrace2 --plugin-path="$PLUGINS" "$T/a" -c sink.fathom.breakdown >"$T/bt.txt" 2>&1 || fail "plugin text"
head -1 "$T/bt.txt" | grep -q ') *alexnet/train$' || fail "the plugin does not label the trace by model/mode: $(head -1 "$T/bt.txt")"
babeltrace2 --plugin-path="$PLUGINS" "$T/d" -c sink.fathom.breakdown >/dev/null 2>"$T/bt.err" || fail "plugin on discarded"
grep -q "5 events discarded" "$T/bt.err" || fail "plugin: no discarded warning"
babeltrace2 --plugin-path="$PLUGINS" "$T/a" "$T/ai" -c sink.fathom.compare -p 'format="json"' 2>/dev/null \
  | jq -e '.pairs[0].model == "alexnet"' >/dev/null || fail "plugin compare"
babeltrace2 --plugin-path="$PLUGINS" "$T/a" "$T/m" -c sink.fathom.similarity -p 'by="class"' 2>/dev/null \
  | grep -q 'average-linkage' || fail "plugin similarity"
# output=PATH: written whole, never over an existing file
babeltrace2 --plugin-path="$PLUGINS" "$T/a" -c sink.fathom.breakdown -p "output=\"$T/bt-out.json\",format=\"json\"" \
  >/dev/null 2>"$T/bt.err" && cmp -s "$T/bt-out.json" "$T/bt.json" || { fail "plugin output="; cat "$T/bt.err"; }
echo keep >"$T/bt-keep.txt"
babeltrace2 --plugin-path="$PLUGINS" "$T/a" -c sink.fathom.breakdown -p "output=\"$T/bt-keep.txt\"" \
  >/dev/null 2>"$T/bt.err" && fail "plugin output= over an existing file: exit 0"
[ "$(cat "$T/bt-keep.txt")" = keep ] || fail "plugin output= overwrote a file"
tr '\n' ' ' <"$T/bt.err" | tr -s ' ' | grep -q "nothing is overwritten" || fail "plugin output=: no reason given"
ls -A "$T" | grep -q fathom-tmp && fail "plugin output=: temporary file left"
babeltrace2 --plugin-path="$PLUGINS" "$T/a" -c sink.fathom.breakdown -p 'nonsense=1' >/dev/null 2>&1 \
  && fail "plugin accepts an unknown parameter"
# memory follows the whole run: a step window is refused, by the command and by the sink
babeltrace2 --plugin-path="$PLUGINS" "$T/a" -c sink.fathom.memory -p 'skip-first=1' >/dev/null 2>&1 \
  && fail "sink.fathom.memory accepts skip-first"
babeltrace2 --plugin-path="$PLUGINS" "$T/a" -c sink.fathom.breakdown -p 'skip-first=1' >/dev/null 2>&1 \
  || fail "sink.fathom.breakdown refuses skip-first"
babeltrace2 --plugin-path="$PLUGINS" "$T/r" -c sink.fathom.roofline -p "format=\"json\",peak=\"$T/peak.json\"" \
  >"$T/bt-rl.json" 2>"$T/bt.err" || { fail "babeltrace2 sink.fathom.roofline"; cat "$T/bt.err"; }
"$FATHOM" analyze roofline --peak "$T/peak.json" --format json "$T/r" >"$T/cli-rl.json"
[ "$(jq -c '.traces[0].op_types' "$T/bt-rl.json")" = "$(jq -c '.traces[0].op_types' "$T/cli-rl.json")" ] \
  && jq -e '.traces[0].peak_gflops == 100' "$T/bt-rl.json" >/dev/null || fail "plugin roofline differs from fathom analyze"
babeltrace2 --plugin-path="$PLUGINS" "$T/r" -c sink.fathom.roofline -p 'gflops=100.0,gbs=10' 2>/dev/null \
  | grep -q '^MatMul  *matrix .* 0.50  compute$' || fail "plugin roofline with gflops and gbs"
babeltrace2 --plugin-path="$PLUGINS" "$T/a" -c sink.fathom.memory -p 'format="json"' 2>/dev/null \
  | jq -e '.traces[0].peak_bytes == 4096 and (.traces[0].steps | length) == 4' >/dev/null || fail "plugin memory"
babeltrace2 --plugin-path="$PLUGINS" "$T/r" -c sink.fathom.roofline >/dev/null 2>"$T/bt.err" \
  && fail "plugin roofline without ceilings: exit 0"
grep -q "wants the ceilings" "$T/bt.err" || { fail "plugin roofline without ceilings: message"; cat "$T/bt.err"; }
babeltrace2 --plugin-path="$PLUGINS" "$T/r" -c sink.fathom.roofline -p "peak=\"$T/bad.json\"" >/dev/null 2>"$T/bt.err" \
  && fail "plugin roofline with a corrupt peak file: exit 0"
tr -s "\n " "  " <"$T/bt.err" | grep -q "bad.json: not JSON" || { fail "plugin roofline, corrupt peak file: message"; cat "$T/bt.err"; }

# schema 2 (node_def + batched ops records) and schema 1 (op_begin/op_end)
# of the same op sequences analyze to the same tables (memory differs by
# design: the schema-2 scenario keeps one activation for every step)
for recipe in conv fc; do
    "$GEN" "$T/v1-$recipe" $recipe alexnet train 5 seed=21 setup_ops=3 || exit 1
    "$GEN" "$T/v2-$recipe" $recipe alexnet train 5 seed=21 setup_ops=3 schema=2 || exit 1
    for a in breakdown; do
        "$FATHOM" analyze $a --skip-first 1 --format csv "$T/v1-$recipe" | sed "s#$T/v1-$recipe#X#" >"$T/v1.csv"
        "$FATHOM" analyze $a --skip-first 1 --format csv "$T/v2-$recipe" | sed "s#$T/v2-$recipe#X#" >"$T/v2.csv"
        [ -s "$T/v1.csv" ] && cmp -s "$T/v1.csv" "$T/v2.csv" || { fail "$a of $recipe: schema 2 differs from schema 1"; diff "$T/v1.csv" "$T/v2.csv" | head -5; }
    done
done
cli_end "analyze CLI"
