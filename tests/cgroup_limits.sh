#!/bin/sh
# cgroup_limits.sh FATHOM -- fathom inside cgroups that limit it, as a
# container run with --cpus=0.5 or --memory=256m would: under half a CPU
# of time one thread by default (`fathom version` says why, `fathom run`
# and `fathom tune` use one) and an explicit --threads still wins; under
# 256 MiB a plan that needs more is a one-line error (exit 1) before it
# allocates, where it was a silent SIGKILL (137), a small one still runs,
# and the tuner leaves out a batch that does not fit, saying why. Needs root and the controller (v1's own mount, or v2 with it
# enabled below the root): each part is skipped otherwise, and the whole
# (77) when neither can run. Each part makes one uniquely named cgroup,
# runs in it and removes it.
set -u
FATHOM=$1
. "$(dirname "$0")/cli_lib.sh"
[ "$(id -u)" = 0 ] || { echo "skipped: not root"; exit 77; }
export LTTNG_UST_REGISTER_TIMEOUT=0
made=
trap 'for c in $made; do rmdir "$c" 2>/dev/null; done' EXIT
ran=0
# cgroup_make CONTROLLER: a new cgroup with the controller, its folder on
# stdout and in $cg; v2 sets $v2; non-zero where none can be made
cgroup_make() {
    v2= cg=
    mnt=$(awk -v c="$1" '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "cgroup" && $(i + 3) ~ "(^|,)" c "(,|$)") print $5 }' \
        /proc/self/mountinfo | head -n 1)
    if [ -z "$mnt" ]; then
        mnt=$(awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "cgroup2") print $5 }' /proc/self/mountinfo | head -n 1)
        [ -n "$mnt" ] && grep -qw "$1" "$mnt/cgroup.controllers" 2>/dev/null || return 1
        grep -qw "$1" "$mnt/cgroup.subtree_control" || echo "+$1" >"$mnt/cgroup.subtree_control" 2>/dev/null || return 1
        v2=1
    fi
    cg="$mnt/fathom-$1-$$"
    mkdir "$cg" 2>/dev/null || return 1
    made="$made $cg"
}
inside() { # runs its arguments in the cgroup $cg
    sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

# CPU: half a CPU's time
if [ "$(nproc)" -lt 2 ]; then
    echo "cpu: skipped (one CPU: nothing to change)"
elif ! cgroup_make cpu; then
    echo "cpu: skipped (no cgroup with the cpu controller can be made)"
else
    ran=$((ran + 1))
    if [ -n "$v2" ]; then
        echo "50000 100000" >"$cg/cpu.max" || fail "cannot set cpu.max"
    else
        echo 100000 >"$cg/cpu.cfs_period_us" && echo 50000 >"$cg/cpu.cfs_quota_us" || fail "cannot set the quota"
    fi
    out=$(inside "$FATHOM" version) || fail "version: $out"
    echo "$out" | grep -q '^cpu quota: 0.50 CPUs (cgroup): 1 thread by default$' || fail "version does not say the quota: $out"
    out=$(inside "$FATHOM" run memnet --preset tiny --steps 2 2>&1) || fail "run: $out"
    echo "$out" | grep -q ', 1 thread, inter 1' || fail "run under the quota does not default to one thread: $out"
    out=$(inside "$FATHOM" run memnet --preset tiny --steps 2 --threads 2 2>&1) || fail "run --threads 2: $out"
    echo "$out" | grep -q ', 2 threads, inter 1' || fail "an explicit --threads 2 did not win: $out"
    out=$(inside "$FATHOM" tune memnet --mode infer --preset tiny --budget 2 --format json 2>/dev/null) || fail "tune failed"
    [ "$(echo "$out" | jq -r '.machine.cores')" = 1 ] || fail "tune's knob space is not one thread: $(echo "$out" | jq -c .machine)"
    [ "$(echo "$out" | jq -r '.machine.cpu_quota')" = 0.5 ] || fail "tune's JSON has no quota: $(echo "$out" | jq -c .machine)"
    out=$("$FATHOM" version) # outside it: the CPUs
    echo "$out" | grep -q '^cpu quota' && fail "a quota outside the cgroup: $out"
fi

# memory: 256 MiB, alexnet's full preset needs about 1.4 GiB of tensors
if ! cgroup_make memory; then
    echo "memory: skipped (no cgroup with the memory controller can be made)"
else
    ran=$((ran + 1))
    if [ -n "$v2" ]; then
        echo $((256 << 20)) >"$cg/memory.max" || fail "cannot set memory.max"
    else
        echo $((256 << 20)) >"$cg/memory.limit_in_bytes" || fail "cannot set the memory limit"
    fi
    out=$(inside "$FATHOM" run alexnet --preset full --steps 1 2>&1)
    rc=$?
    [ $rc -eq 1 ] || fail "a plan over the memory limit: exit $rc, want 1: $out"
    [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "not one line: $out"
    echo "$out" | grep -q "more than the process's memory limit of 256.0 MiB" || fail "the error does not name the limit: $out"
    out=$(inside "$FATHOM" run memnet --preset tiny --steps 2 2>&1) || fail "a small plan under the limit failed: $out"
    out=$(inside "$FATHOM" version) || fail "version: $out"
    echo "$out" | grep -q "^memory: 256.0 MiB (its cgroup's)$" || fail "version does not say the memory limit: $out"
    # the tuner: a batch that does not fit is left out with the reason, the rest measured
    out=$(inside "$FATHOM" tune memnet --mode infer --preset tiny --batches 32,200000 --sweep --rounds 1 --format json \
        2>&1) || fail "tune with a batch over the limit failed: $out"
    echo "$out" | jq -e '[.proposals[] | select(test("^batch 200000 left out: plan: the tensors need .* memory limit of 256.0 MiB"))] | length == 1' \
        >/dev/null || fail "tune does not say why batch 200000 is left out: $(echo "$out" | jq -c .proposals)"
    echo "$out" | jq -e '(.candidates | length) > 0 and all(.candidates[]; .knobs.batch == 32)' >/dev/null ||
        fail "tune measured other batches than 32: $(echo "$out" | jq -c '[.candidates[].knobs.batch]')"
fi
[ $ran -gt 0 ] || { echo "skipped: no cgroup could be made"; exit 77; }
cli_end cgroup_limits
