#!/bin/sh
# bench_portable.sh NATIVE PORTABLE -- the cost of the portable default build
# (x86-64-v2, kernels chosen at run time: exec/isa.c) against one built with
# -DFATHOM_NATIVE=ON on this machine, on the step time of every workload's
# small preset, training and inference: bench_ab.sh with NATIVE as OLD and
# PORTABLE as NEW, both builds alternating in one run (new/old is
# portable/native; the issue's bound is 1.03). Env as bench_ab.sh's:
# ROUNDS (default here 4: even, so that each build runs first in half of
# them), STEPS (default here 20), PRESET (small); and THREADS (default:
# fathom's, the CPUs): THREADS=1 on a machine that other processes load,
# where a team of several threads waits for cores and the step time
# measures the scheduler more than the kernels (and FIELD=cpu_ms, the
# step's CPU time).
# Benchmark only (label bench): the numbers depend on the machine and its load.
set -u
[ $# -eq 2 ] || { echo "usage: bench_portable.sh NATIVE PORTABLE" >&2; exit 2; }
ROUNDS=${ROUNDS:-4} STEPS=${STEPS:-20} THREADS=${THREADS:-}
export ROUNDS STEPS
echo "native: $("$1" version | grep '^kernels:')"
echo "portable: $("$2" version | grep '^kernels:')"
set -- "$1" "$2"
for m in seq2seq memnet speech autoenc residual vgg alexnet deepq transformer; do
    for mode in train infer; do
        set -- "$@" "$m $mode 1${THREADS:+ $THREADS}"
    done
done
exec sh "$(dirname "$0")/bench_ab.sh" "$@"
