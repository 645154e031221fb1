#!/usr/bin/env bash
# regenerate.sh -- records the reference archives of traces/reference/ again:
# every workload, train and infer, with `fathom record --all`.
#   traces/regenerate.sh [PRESET [STEPS]]      (default: small 6)
# The old set stays in place until the new one is complete.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-small}
steps=${2:-6}
[ -x build/fathom ] || scripts/setup.sh build
new=$(mktemp -d traces/reference.new.XXXXXX)
trap 'rm -rf "$new" "$new.check"' EXIT
build/fathom record --all --modes train,infer --preset "$preset" --steps "$steps" --threads 2 --dir "$new"
n=$(find "$new" -name '*.tar.zst' | wc -l)
want=$((2 * $(build/fathom list --format json | jq length)))
if [ "$n" != "$want" ]; then
    echo "regenerate.sh: $n archives recorded, want $want; traces/reference/ left as it was" >&2
    exit 1
fi
# the new set must pass the checks the test suite makes of the shipped one
# (a recording taken while the machine was busy can invert train/infer)
if ! FATHOM=build/fathom TEST_TMP="$new.check" sh tests/reference_traces.sh "$new" build/plugins; then
    echo "regenerate.sh: the new set fails tests/reference_traces.sh (a busy machine?); traces/reference/ left as it was" >&2
    exit 1
fi
rm -rf "$new.check"
old=""
if [ -d traces/reference ]; then
    old=traces/reference.old.$$
    mv traces/reference "$old"
fi
mv "$new" traces/reference
trap - EXIT
[ -z "$old" ] || rm -rf "$old"
du -sh traces/reference
