#!/bin/sh
# schema1_golden.sh -- archives recorded with trace schema 1 stay readable
# with identical results: every analysis (text, CSV, JSON), `info` and
# replay's program dump of tests/fixtures/schema1/ compared byte for byte
# with outputs stored in tests/fixtures/schema1/golden/.
#   schema1_golden.sh FATHOM [--update]   (--update rewrites the stored outputs)
set -u
FATHOM=$1
update=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cli_lib.sh"
cli_begin schema1 "${TMPDIR:-/tmp}"
cd "$here/fixtures/schema1" || exit 1
golden=golden
mt=$(ls memnet-train-*.tar.zst); mi=$(ls memnet-infer-*.tar.zst)
at=$(ls alexnet-train-*.tar.zst); ai=$(ls alexnet-infer-*.tar.zst)
dt=$(ls deepq-train-*.tar.zst); di=$(ls deepq-infer-*.tar.zst)
all="$mt $mi $at $ai $dt $di"

# NAME then the command line (output on stdout)
check() {
    name=$1; shift
    "$@" > "$T/$name" 2> "$T/$name.err"
    rc=$?
    if [ "$rc" -ne 0 ]; then fail "$name: exit $rc: $(head -c 300 "$T/$name.err")"; return; fi
    if [ "$update" = --update ]; then cp "$T/$name" "$golden/$name"; return; fi
    if ! cmp -s "$T/$name" "$golden/$name"; then
        fail "$name differs from the stored output:"
        diff "$golden/$name" "$T/$name" | head -20
    fi
}

for fmt in text csv json; do
    check breakdown.$fmt "$FATHOM" analyze breakdown --skip-first 1 --format $fmt $all
    check compare.$fmt "$FATHOM" analyze compare --skip-first 1 --format $fmt $all
    check similarity.$fmt "$FATHOM" analyze similarity --skip-first 1 --format $fmt $all
    check similarity-class.$fmt "$FATHOM" analyze similarity --by class --format $fmt $all
    check diff.$fmt "$FATHOM" analyze diff --skip-first 1 --format $fmt $mt $mt
    check roofline.$fmt "$FATHOM" analyze roofline --gflops 150 --gbs 25 --skip-first 1 --format $fmt $at $dt $mt
    check memory.$fmt "$FATHOM" analyze memory --format $fmt $all
done
check breakdown-top.text "$FATHOM" analyze breakdown --skip-first 2 --skip-last 1 --top 4 $dt $mi
check info.text "$FATHOM" info $mt
check info.json "$FATHOM" info --format json $dt
for f in $mt $dt $ai; do
    m=${f%%-small-*}
    check replay-$m.ops sh -c '"$1" replay "$2" --iterations 1 --warmup 0 --threads 1 --dump-ops "$3" >/dev/null && cat "$3" && rm "$3"' \
        sh "$FATHOM" "$f" "$T/dump"
done
check export-memnet-infer.json sh -c '"$1" export --perfetto -o "$3" "$2" >/dev/null && cat "$3" && rm "$3"' \
    sh "$FATHOM" "$mi" "$T/export.json"
cli_end "schema-1 golden"
