#!/usr/bin/env bash
# fuzz.sh -- a long fuzzing campaign on the libFuzzer targets of fuzz/.
#   scripts/fuzz.sh [-t SECONDS] [-c CPU] [-P] [TARGET...]
# TARGET: manifest, archive, trace, import (default: all four, one after another;
# with -P all at once).  -t: seconds per target (default 3600).  -c: the CPU
# to pin every target to (taskset; with -P they share it).  Runs at the
# lowest priority (nice 19).  Builds the
# targets with clang into build-fuzz/, makes the seed corpora from
# traces/reference and tests/fixtures/pytorch (fuzz/seeds.sh), and keeps a growing corpus per target in
# fuzz-work/TARGET/corpus (kept between campaigns); crashing, hanging or
# leaking inputs land in fuzz-work/TARGET/ as crash-*, timeout-*, leak-*,
# oom-*: reproduce one with build-fuzz/fuzz_TARGET FILE, fix it and add it to
# fuzz/regress/TARGET/ (run by the suite).  Each target's log is
# fuzz-work/TARGET/log; the summary (executions, coverage, findings) is
# printed at the end and in fuzz-work/summary.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=3600 cpu= par=0 targets=()
while (($#)); do
  case $1 in
    -t) secs=$2; shift 2 ;;
    -c) cpu=$2; shift 2 ;;
    -P) par=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    manifest|archive|trace|import) targets+=("$1"); shift ;;
    *) echo "fuzz.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
((${#targets[@]})) || targets=(manifest archive trace import)
clang=$(command -v clang || command -v clang-14 || true)
[ -n "$clang" ] || { echo "fuzz.sh: clang is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
# the generated headers the targets include come from the main build
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target fathom-tp-enums >/dev/null
cmake -S fuzz -B build-fuzz -DCMAKE_C_COMPILER="$clang" -DFATHOM_BUILD_DIR="$PWD/build" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
nice -n 19 cmake --build build-fuzz -j"$(nproc)" >/dev/null
mkdir -p fuzz-work
sh fuzz/seeds.sh traces/reference fuzz-work/seeds
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/fuzz/fuzz_lsan.supp:print_suppressions=0
pin=()
[ -n "$cpu" ] && pin=(taskset -c "$cpu")
: >fuzz-work/summary
campaign() { # target
  local t=$1 w=fuzz-work/$1 rc=0 extra=() execs cov found
  mkdir -p "$w/corpus" "$w/tmp"
  local asan=$ASAN_OPTIONS
  # trace: full stacks through Babeltrace2 for the leak suppressions.  The
  # decoder child is a fork of the fuzzer and inherits libFuzzer's malloc
  # hook: a corrupt sequence length makes Babeltrace2 ask for gigabytes
  # there, which the child's own limits and the parent's error path answer
  # for (the run is a one-line error).  So libFuzzer's per-malloc limit is
  # lifted and ASan's allocation cap (which the child also dies of, as a
  # plain abort) keeps the parent honest instead; -rss_limit_mb still holds.
  [ "$t" = trace ] && extra=(-max_len=262144 -timeout=90 -malloc_limit_mb=1048576) \
    && asan=$asan:fast_unwind_on_malloc=0:max_allocation_size_mb=2048
  [ "$t" = import ] && extra=(-max_len=300000 -timeout=60)
  echo "fuzz.sh: $t for ${secs}s (log: $w/log)" >&2
  ASAN_OPTIONS=$asan FUZZ_TMP=$PWD/$w/tmp "${pin[@]}" nice -n 19 build-fuzz/fuzz_"$t" -max_total_time="$secs" -timeout=20 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$w/" "${extra[@]}" \
    "$w/corpus" fuzz-work/seeds/"$t" fuzz/regress/"$t" >"$w/log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$w/log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$w/log" | tail -n 1 || true)
  found=$(ls "$w" | grep -cE '^(crash|timeout|leak|oom)-' || true)
  # a slow unit (over 10 s, well under -timeout) is no hang: counted apart
  slow=$(ls "$w" | grep -c '^slow-unit-' || true)
  echo "$t: exit $rc, $execs executions, ${cov:-cov ?}, corpus $(ls "$w/corpus" | wc -l) inputs, $found findings, $slow slow units" \
    | tee -a fuzz-work/summary
}
for t in "${targets[@]}"; do
  if ((par)); then campaign "$t" & else campaign "$t"; fi
done
wait
