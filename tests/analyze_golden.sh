#!/bin/sh
# analyze_golden.sh -- every analysis prints the same bytes: `fathom analyze`
# (text, CSV, JSON), its help, its one-line errors, `info`, and the
# Babeltrace2 plugin's sinks, on the reference traces (traces/reference/)
# and on generated traces at three thread counts (scaling), compared byte
# for byte with outputs stored in tests/fixtures/analyze_golden/.  What a
# command writes on standard error is stored beside its output (NAME.err)
# when there is any.
#   analyze_golden.sh FATHOM CTFGEN_TOOL PLUGIN_DIR [--update]
#   (--update rewrites the stored outputs; ANALYZE_GOLDEN_QUICK=1, as the
#   sanitizer build sets it, reads all eighteen traces in text only)
set -u
FATHOM=$1 GEN=$2 PLUGINS=$3
update=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cli_lib.sh"
cli_begin analyze-golden "${TMPDIR:-/tmp}"
golden=$here/fixtures/analyze_golden
ref=$here/../traces/reference
mkdir -p "$golden"

# compare (or store) one output: NAME, FILE
same() {
    if [ "$update" = --update ]; then cp "$2" "$golden/$1"; return; fi
    if [ ! -f "$golden/$1" ]; then fail "$1: no stored output (run with --update)"; return; fi
    if ! cmp -s "$2" "$golden/$1"; then
        fail "$1 differs from the stored output:"
        diff "$golden/$1" "$2" | head -20
    fi
}
# stderr: stored when there is any, and must then stay the same
same_err() { # NAME, FILE
    if [ -s "$2" ] || [ -f "$golden/$1.err" ]; then same "$1.err" "$2"; fi
}
# NAME then the command line: exit 0, stdout and stderr as stored
check() {
    name=$1; shift
    "$@" > "$T/$name" 2> "$T/$name.err"
    rc=$?
    if [ "$rc" -ne 0 ]; then fail "$name: exit $rc: $(head -c 300 "$T/$name.err")"; return; fi
    same "$name" "$T/$name"
    same_err "$name" "$T/$name.err"
}
# NAME, the exit status wanted, then the command line: nothing on stdout,
# stderr as stored
check_error() {
    name=$1 want=$2; shift 2
    "$@" > "$T/$name" 2> "$T/$name.err"
    rc=$?
    [ "$rc" -eq "$want" ] || fail "$name: exit $rc, not $want"
    [ ! -s "$T/$name" ] || fail "$name: wrote to stdout"
    same "$name.err" "$T/$name.err"
}

cd "$ref" || exit 1
pick() { ls "$1"-*.tar.zst; }
at=$(pick alexnet-train); ai=$(pick alexnet-infer)
mt=$(pick memnet-train); mi=$(pick memnet-infer)
dt=$(pick deepq-train); di=$(pick deepq-infer)
rt=$(pick residual-train); vt=$(pick vgg-train)
tt=$(pick transformer-train); ti=$(pick transformer-infer)
all=$(ls *.tar.zst)
s1at=../../tests/fixtures/schema1/$(cd ../../tests/fixtures/schema1 && ls alexnet-train-*.tar.zst)

for fmt in text csv json; do
    [ -n "${ANALYZE_GOLDEN_QUICK:-}" ] && [ $fmt != text ] && every=: || every=
    $every check breakdown.$fmt "$FATHOM" analyze breakdown --skip-first 1 --format $fmt $all
    check breakdown-one.$fmt "$FATHOM" analyze breakdown --skip-first 1 --skip-last 1 --top 5 --format $fmt $vt
    $every check compare.$fmt "$FATHOM" analyze compare --skip-first 1 --format $fmt $all
    check compare-pairs.$fmt "$FATHOM" analyze compare --pairs --format $fmt $tt $ti $at $ai
    check compare-unpaired.$fmt "$FATHOM" analyze compare --format $fmt $at $ai $mt $dt
    $every check similarity.$fmt "$FATHOM" analyze similarity --skip-first 1 --format $fmt $all
    $every check similarity-class.$fmt "$FATHOM" analyze similarity --by class --format $fmt $all
    check diff.$fmt "$FATHOM" analyze diff --skip-first 1 --format $fmt $s1at $at
    check diff-top.$fmt "$FATHOM" analyze diff --top 4 --format $fmt $at $ai
    check diff-models.$fmt "$FATHOM" analyze diff --format $fmt $mt $dt
    check roofline.$fmt "$FATHOM" analyze roofline --gflops 150 --gbs 25 --skip-first 1 --format $fmt $at $dt $mt $rt
    check roofline-top.$fmt "$FATHOM" analyze roofline --gflops 80 --gbs 12.5 --top 3 --format $fmt $vt $ti
    $every check memory.$fmt "$FATHOM" analyze memory --format $fmt $all
done
check breakdown-top.text "$FATHOM" analyze breakdown --skip-first 2 --skip-last 1 --top 4 $dt $mi
check info.text "$FATHOM" info $mt
check info-transformer.text "$FATHOM" info $ti
check info.json "$FATHOM" info --format json $dt
check info-transformer.json "$FATHOM" info --format json $tt

# help and one-line errors
check help.text "$FATHOM" analyze --help
for a in breakdown compare similarity diff scaling roofline memory ranks; do
    check help-$a.text "$FATHOM" analyze $a --help
done
check help-report.text "$FATHOM" report --help
check_error no-analysis 2 "$FATHOM" analyze
check_error bad-analysis 2 "$FATHOM" analyze frobnicate $at
check_error bad-format 2 "$FATHOM" analyze breakdown --format xml $at
check_error bad-option 2 "$FATHOM" analyze similarity --top 3 $at
check_error bad-by 2 "$FATHOM" analyze similarity --by op $at
check_error bad-skip 2 "$FATHOM" analyze breakdown --skip-first -1 $at
check_error bad-gflops 2 "$FATHOM" analyze roofline --gflops 0 --gbs 1 $at
check_error no-trace 2 "$FATHOM" analyze memory
check_error diff-one 2 "$FATHOM" analyze diff $at
check_error scaling-one 2 "$FATHOM" analyze scaling $at
check_error scaling-same 1 "$FATHOM" analyze scaling $at $ai
check_error roofline-no-peak 2 "$FATHOM" analyze roofline $at
check_error roofline-peak-missing 1 "$FATHOM" analyze roofline --peak nope.json $at
check_error compare-no-pair 1 "$FATHOM" analyze compare $at $mt
check_error compare-pairs-odd 1 "$FATHOM" analyze compare --pairs $at $ai $mt
check_error diff-strict 1 "$FATHOM" analyze diff --strict $mt $dt

# scaling: one generated model at 1, 2 and 4 threads (t = 0.2 + 0.8/T of
# the 1-thread time), and a trace of another model
cd "$T" || exit 1
"$GEN" t1 conv alexnet train 3 threads=1 seed=8 || exit 1
"$GEN" t2 conv alexnet train 3 threads=2 scale_pct=60 seed=9 || exit 1
"$GEN" t4 conv alexnet train 3 threads=4 scale_pct=40 seed=10 || exit 1
"$GEN" t8v conv vgg train 3 threads=8 scale_pct=30 seed=12 || exit 1
for fmt in text csv json; do
    check scaling.$fmt "$FATHOM" analyze scaling --format $fmt t4 t1 t2
    check scaling-top.$fmt "$FATHOM" analyze scaling --skip-first 1 --top 2 --format $fmt t1 t2 t4 t8v
done
check_error scaling-strict 1 "$FATHOM" analyze scaling --strict t1 t2 t8v

# the Babeltrace2 plugin's sinks on CTF folders of reference traces
for f in $at $ai $mt $dt; do
    m=${f%%-small-*}
    mkdir "$m" && tar --zstd -xf "$ref/$f" -C "$m" || exit 1
done
bt() { # NAME, sink, params: all four traces
    name=$1 sink=$2; shift 2
    check "$name" babeltrace2 --plugin-path="$PLUGINS" alexnet-train alexnet-infer memnet-train deepq-train \
        -c sink.fathom.$sink "$@"
}
for fmt in text csv json; do
    bt plugin-breakdown.$fmt breakdown -p "format=\"$fmt\",skip-first=1,top=6"
    bt plugin-compare.$fmt compare -p "format=\"$fmt\""
    bt plugin-similarity.$fmt similarity -p "format=\"$fmt\",by=\"class\""
    bt plugin-roofline.$fmt roofline -p "format=\"$fmt\",gflops=150,gbs=25.0,top=4"
    bt plugin-memory.$fmt memory -p "format=\"$fmt\""
done
# each sink's description and help (the plugin's path left out)
for s in breakdown compare similarity roofline memory; do
    check plugin-help-$s.text sh -c 'babeltrace2 --plugin-path="$1" help "sink.fathom.$2" | grep -v "^  Path: "' \
        sh "$PLUGINS" $s
done
cli_end "analyze golden"
