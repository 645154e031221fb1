#!/bin/sh
# report_cli.sh FATHOM CTFGEN_TOOL TMP -- `fathom report` as a user runs it:
# the folder, its charts (SVG and PNG, sized by the data) and index.html
# with the sections the traces call for; nothing overwritten; bad input.
set -u
FATHOM=$1 GEN=$2
. "$(dirname "$0")/cli_lib.sh"
cli_begin report-cli "$3"

"$GEN" "$T/a" conv alexnet train 3 || exit 1
"$GEN" "$T/ai" conv alexnet infer 3 seed=2 || exit 1
"$GEN" "$T/m" fc memnet train 3 seed=3 || exit 1
"$GEN" "$T/r&4" roofline mlp infer 2 seed=4 || exit 1
"$GEN" "$T/r8" roofline mlp infer 2 batch=8 seed=5 || exit 1
"$GEN" "$T/a2" conv alexnet train 2 seed=6 || exit 1
"$GEN" "$T/ai2" conv alexnet infer 2 seed=7 || exit 1

is_svg() { head -c 5 "$1" | grep -q '<?xml' && grep -q '<svg' "$1" && tail -c 8 "$1" | grep -q '</svg>'; }
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{ print $1*16777216 + $2*65536 + $3*256 + $4 "x" $5*16777216 + $6*65536 + $7*256 + $8 }'; }

# four traces, no ceilings: every chart but the roofline
out=$("$FATHOM" report -o "$T/r1" "$T/a" "$T/ai" "$T/m" "$T/r&4" 2>"$T/err") || { fail "report: exit"; cat "$T/err"; }
[ "$out" = "$T/r1/index.html" ] || fail "report: stdout is '$out', not the page's path"
[ ! -s "$T/err" ] || { fail "report: stderr not empty"; cat "$T/err"; }
[ "$(ls "$T/r1" | tr '\n' ' ')" = "classes.svg compare.svg index.html memory.svg optypes.svg similarity.svg " ] \
  || fail "report: files $(ls "$T/r1" | tr '\n' ' ')"
for f in classes compare optypes memory similarity; do is_svg "$T/r1/$f.svg" || fail "$f.svg is not an SVG document"; done
for s in 'aria-label="op time by class"' 'id="classes-surface' 'aria-label="training and inference step time"' \
         'aria-label="share of op time by op type"' 'aria-label="tensor memory at the peak by role"' \
         'aria-label="cosine similarity matrix and dendrogram"' 'id="similarity-surface' '<details><summary>table: fathom analyze breakdown' \
         'id="breakdown"' 'id="compare"' 'id="similarity"' 'id="memory"' '4 traces' 'r&amp;4' \
         '== alexnet: training' 'average-linkage' '== at each trace'; do
    grep -qF "$s" "$T/r1/index.html" || fail "index.html lacks '$s'"
done
[ "$(grep -c '^<svg' "$T/r1/index.html")" = 5 ] || fail "index.html does not hold the 5 charts inline"
grep -q 'aria-label="roofline"' "$T/r1/index.html" && fail "index.html has a roofline without ceilings"
grep -q 'No roofline in this report' "$T/r1/index.html" || fail "index.html does not say why it has no roofline"
grep -q 'No parallelism in this report' "$T/r1/index.html" || fail "index.html does not say why it has no parallelism"
# schema-2 traces (their node_defs carry the data flow) beside a schema-1 one:
# the parallelism of the two, the third left out and said so
"$GEN" "$T/a2s" conv alexnet train 3 schema=2 seed=8 || exit 1
"$GEN" "$T/m2s" fc memnet train 3 schema=2 seed=9 || exit 1
"$FATHOM" report -o "$T/r5" "$T/a2s" "$T/m2s" "$T/a" >/dev/null 2>"$T/err" || { fail "report r5: exit"; cat "$T/err"; }
is_svg "$T/r5/parallelism.svg" || fail "parallelism.svg missing or not SVG"
for s in 'id="parallelism"' 'aria-label="op time and critical path per step"' 'table: fathom analyze parallelism' \
         'Traces without a data flow (schema 1, or ops that name no tensors) are left out' "average parallelism 1.00"; do
    grep -qF "$s" "$T/r5/index.html" || fail "r5 index.html lacks '$s'"
done
[ "$(sed -n '/table: fathom analyze parallelism/,/<\/pre>/p' "$T/r5/index.html" | grep -c '== [a-z]* train (tiny')" = 2 ] \
  || fail "r5: the parallelism table does not hold the two schema-2 traces alone"
# the charts first: no table before the first chart
[ "$(grep -n -m1 '^<svg' "$T/r1/index.html" | cut -d: -f1)" -lt "$(grep -n -m1 '<details>' "$T/r1/index.html" | cut -d: -f1)" ] \
  || fail "index.html: a table comes before the first chart"
grep -qF 'r&4' "$T/r1/index.html" && fail "index.html: a path not escaped"
tail -1 "$T/r1/index.html" | grep -qx '</html>' || fail "index.html does not end with </html>"

# ceilings: the roofline too; one model, so no similarity
"$FATHOM" report -o "$T/r2" --gflops 100 --gbs 10 "$T/r&4" "$T/r8" >/dev/null 2>"$T/err" || { fail "report --gflops"; cat "$T/err"; }
is_svg "$T/r2/roofline.svg" || fail "roofline.svg missing or not SVG"
[ -e "$T/r2/similarity.svg" ] && fail "similarity.svg for one model"
[ -e "$T/r2/compare.svg" ] && fail "compare.svg without a training trace"
grep -qF 'aria-label="roofline"' "$T/r2/index.html" && grep -q 'ridge point 10.00 FLOP/byte' "$T/r2/index.html" \
  || fail "index.html: no roofline section"
grep -q '== trajectories' "$T/r2/index.html" || fail "index.html: no trajectories for two batch sizes"

# one model at 1, 2 and 4 threads: a scaling chart and its section
"$GEN" "$T/t1" conv alexnet train 3 threads=1 seed=8 || exit 1
"$GEN" "$T/t2" conv alexnet train 3 threads=2 scale_pct=60 seed=9 || exit 1
"$GEN" "$T/t4" conv alexnet train 3 threads=4 scale_pct=40 seed=10 || exit 1
"$FATHOM" report -o "$T/r3" "$T/t4" "$T/t1" "$T/t2" >/dev/null 2>"$T/err" || { fail "report of a thread sweep"; cat "$T/err"; }
is_svg "$T/r3/scaling-alexnet-train.svg" || fail "scaling-alexnet-train.svg missing or not SVG"
grep -qF 'id="scaling-alexnet-train-surface' "$T/r3/index.html" && grep -q 'serial fraction 0.200' "$T/r3/index.html" \
  || fail "index.html: no scaling section"
ls "$T/r1" | grep -q scaling && fail "a scaling chart without a thread sweep"
# a model name from the trace never makes a path
"$GEN" "$T/u1" fc "../x y" train 2 threads=1 seed=11 || exit 1
"$GEN" "$T/u2" fc "../x y" train 2 threads=2 seed=12 || exit 1
"$FATHOM" report -o "$T/r4" "$T/u1" "$T/u2" >/dev/null 2>"$T/err" || { fail "report of an odd model name"; cat "$T/err"; }
[ -f "$T/r4/scaling-___x_y-train.svg" ] && [ ! -e "$T/x y-train.svg" ] || fail "odd model name: $(ls "$T/r4")"

# PNG, and the bar charts grow with the traces
"$FATHOM" report -o "$T/p2" --format png "$T/a" "$T/ai" >/dev/null 2>&1 || fail "report --format png"
"$FATHOM" report -o "$T/p4" --format png "$T/a" "$T/ai" "$T/a2" "$T/ai2" >/dev/null 2>&1 || fail "report --format png (4)"
[ "$(od -An -tx1 -N8 "$T/p2/classes.png" | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "classes.png is not a PNG"
s2=$(png_size "$T/p2/classes.png") s4=$(png_size "$T/p4/classes.png")
h2=${s2#*x} h4=${s4#*x}
[ "${s2%x*}" -gt 400 ] && [ "${s2%x*}" = "${s4%x*}" ] && [ $((h4 - h2)) -eq 52 ] || fail "classes.png: $s2 for 2 traces, $s4 for 4 (want 2 x 26 px more)"
grep -qF 'img src="classes.png"' "$T/p2/index.html" || fail "index.html does not point to the PNGs"

# an empty folder is fine; a folder with something in it, or a file, is never touched
mkdir "$T/empty"
"$FATHOM" report -o "$T/empty" "$T/a" >/dev/null 2>&1 || fail "report into an empty folder"
[ -s "$T/empty/index.html" ] || fail "report into an empty folder: no page"
before=$(ls -l "$T/r1" | md5sum)
"$FATHOM" report -o "$T/r1" "$T/a" >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "is not empty: nothing is overwritten" "$T/err" \
  || { fail "report into a full folder: rc $rc"; cat "$T/err"; }
[ "$(ls -l "$T/r1" | md5sum)" = "$before" ] || fail "report into a full folder changed it"
echo keep >"$T/file"
"$FATHOM" report -o "$T/file" "$T/a" >/dev/null 2>"$T/err" && fail "report onto a file: exit 0"
[ "$(cat "$T/file")" = keep ] || fail "report onto a file changed it"

# bad input: one line, non-zero, no folder left behind
"$FATHOM" report -o "$T/bad1" "$T/nope.tar.zst" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -e "$T/bad1" ] || { fail "missing trace: rc $rc"; cat "$T/err"; }
"$FATHOM" report -o "$T/bad2" --format jpg "$T/a" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "svg or png" "$T/err" && [ ! -e "$T/bad2" ] || fail "bad --format: rc $rc"
"$FATHOM" report -o "$T/bad3" --gflops 10 "$T/a" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && [ ! -e "$T/bad3" ] || fail "--gflops without --gbs: rc $rc"
"$FATHOM" report -o "$T/bad4" --peak "$T/nope.json" "$T/a" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "nope.json" "$T/err" && [ ! -e "$T/bad4" ] || fail "missing peak file: rc $rc"
"$FATHOM" report -o "$T/a/rep" "$T/a" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "inside the input" "$T/err" && [ ! -e "$T/a/rep" ] || fail "report into its input: rc $rc"
"$FATHOM" report >/dev/null 2>&1 && fail "report without traces: exit 0"
"$FATHOM" report --pairs "$T/a" >/dev/null 2>&1 && fail "report --pairs: exit 0"
"$FATHOM" report --help | grep -q -- "-o, --output DIR" || fail "report --help"
"$FATHOM" --help | grep -q "report" || fail "fathom --help does not list report"

cli_end "report"
