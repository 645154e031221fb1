#!/bin/sh
# run.sh MODE FUZZER WORK SEEDS REGRESS [libFuzzer options...]
# MODE `regress`: run every input of REGRESS and SEEDS once.
# MODE N (seconds): fuzz for N seconds from SEEDS and REGRESS into a fresh
# WORK/corpus, libFuzzer seed 1 (options: -timeout, -max_len).  Either way a
# crash, a hang (past -timeout), a leak
# or a UBSan report fails the test, and the input is kept in WORK/ with the
# command that reproduces it.
set -u
mode=$1 bin=$2 work=$3 seeds=$4 regress=$5
shift 5
[ -x "$bin" ] || { echo "no fuzz target $bin"; exit 1; }
rm -rf "$work"
mkdir -p "$work/corpus" "$work/tmp"
export FUZZ_TMP="$work/tmp"
if [ "$mode" = regress ]; then
    "$bin" -runs=0 -rss_limit_mb=2048 -artifact_prefix="$work/" "$@" "$work/corpus" "$regress" "$seeds" \
        >"$work/log" 2>&1
else
    "$bin" -max_total_time="$mode" -seed=1 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/" "$@" "$work/corpus" "$seeds" "$regress" >"$work/log" 2>&1
fi
rc=$?
grep -E '^(INFO: +[0-9]+ files found|Done|stat::number_of_executed_units|#[0-9]+ *DONE)' "$work/log"
if [ $rc -ne 0 ]; then
    grep -E 'ERROR|SUMMARY|Test unit written' "$work/log"
    for a in "$work"/crash-* "$work"/timeout-* "$work"/leak-* "$work"/oom-*; do
        [ -e "$a" ] && echo "reproduce: $bin $a   (fix, then add it to $regress/)"
    done
    tail -n 40 "$work/log"
    exit 1
fi
exit 0
