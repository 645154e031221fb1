#!/usr/bin/env bash
# test.sh -- sets everything up and runs the test suite twice: a normal build
# (warnings are errors) and an AddressSanitizer + UBSan build.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

scripts/setup.sh build -DFATHOM_WERROR=ON
(cd build && ctest --output-on-failure -LE bench -j"$jobs")

echo "== sanitizer build (address, undefined) =="
scripts/setup.sh build-asan -DFATHOM_SANITIZE=ON -DFATHOM_WERROR=ON
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
(cd build-asan && ctest --output-on-failure -LE bench -j"$jobs")
