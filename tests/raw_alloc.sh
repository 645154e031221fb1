#!/bin/sh
# raw_alloc.sh -- every allocation of the libraries goes through base/'s
# allocator (base/alloc.h: byte accounting, injected failures), so the
# fault-injection tests cover it.  Fails on a raw malloc, calloc, realloc,
# free or strdup outside base/, but for the places below, which need one.
# usage: raw_alloc.sh SOURCE_DIR      (--selftest: sees a raw call added)
set -u
if [ "${1:-}" = --selftest ]; then
    src=$(mktemp -d) || exit 1
    trap 'rm -rf "$src"' EXIT
    for d in exec models tracer analyze replay driver; do
        cp -r "${2:?usage: raw_alloc.sh --selftest SOURCE_DIR}/$d" "$src/" || exit 1
    done
    printf 'static void leak(void) { (void)malloc(1); }\n' >>"$src/tracer/decode.c"
    if sh "$0" "$src" >/dev/null 2>&1; then
        echo "FAIL: raw_alloc missed a raw malloc"
        exit 1
    fi
    echo "PASS: raw_alloc --selftest"
    exit 0
fi
src=${1:?usage: raw_alloc.sh SOURCE_DIR}
cd "$src" || exit 1

# FILE COUNT: the raw calls a file must hold, and why.
allowed() {
    case $1 in
    # a probe's buffer, freed at once, kept out of the engine's byte
    # accounting and its injected failures (a probe that fails measures nothing)
    exec/ops/calibrate.c) echo 4 ;;
    exec/ops/matmul_tile.c) echo 2 ;;
    # buffers the C library or Jansson allocate: open_memstream, json_dumps
    analyze/html.c) echo 4 ;;
    analyze/chart.c) echo 1 ;;
    models/runner.c) echo 1 ;;
    models/cmd_list.c) echo 1 ;;
    *) echo 0 ;;
    esac
}

bad=0
for f in $(find exec models tracer analyze replay driver -name '*.[ch]' | sort); do
    n=$(grep -cE '(^|[^A-Za-z0-9_.>])(malloc|calloc|realloc|free|strdup|strndup)\(' "$f")
    want=$(allowed "$f")
    if [ "$n" -ne "$want" ]; then
        echo "FAIL: $f: $n raw allocator calls, $want allowed (use base/alloc.h's):"
        grep -nE '(^|[^A-Za-z0-9_.>])(malloc|calloc|realloc|free|strdup|strndup)\(' "$f" | head -5
        bad=1
    fi
done
total=0
for f in exec/ops/calibrate.c exec/ops/matmul_tile.c analyze/html.c analyze/chart.c models/runner.c models/cmd_list.c; do
    total=$((total + $(allowed "$f")))
done
[ $bad = 0 ] && echo "PASS: no raw allocator call outside base/ but the $total allowed"
exit $bad
