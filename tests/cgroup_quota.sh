#!/bin/sh
# cgroup_quota.sh FATHOM -- fathom inside a cgroup whose CPU quota is half a
# CPU (a container run with --cpus=0.5): one thread by default (`fathom
# version` says why, `fathom run` and `fathom tune` use one), an explicit
# --threads still wins. Needs root and a cgroup hierarchy with the cpu
# controller (v1's cpu mount, or v2 with cpu in the root's
# subtree_control): skipped (77) otherwise, and where the process may run
# on one CPU only (nothing to change). Creates one uniquely named cgroup,
# runs in it, removes it.
set -u
FATHOM=$1
. "$(dirname "$0")/cli_lib.sh"
[ "$(id -u)" = 0 ] || { echo "skipped: not root"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "skipped: one CPU"; exit 77; }
# the mount points: v1's cpu controller, else the v2 hierarchy
mnt=$(awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "cgroup" && $(i + 3) ~ /(^|,)cpu(,|$)/) print $5 }' \
    /proc/self/mountinfo | head -n 1)
v2=
if [ -z "$mnt" ]; then
    mnt=$(awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "cgroup2") print $5 }' /proc/self/mountinfo | head -n 1)
    [ -n "$mnt" ] && grep -qw cpu "$mnt/cgroup.controllers" 2>/dev/null || { echo "skipped: no cpu controller"; exit 77; }
    grep -qw cpu "$mnt/cgroup.subtree_control" || echo +cpu >"$mnt/cgroup.subtree_control" 2>/dev/null ||
        { echo "skipped: cpu not enabled below the v2 root"; exit 77; }
    v2=1
fi
cg="$mnt/fathom-quota-$$"
mkdir "$cg" 2>/dev/null || { echo "skipped: cannot make a cgroup under $mnt"; exit 77; }
trap 'rmdir "$cg" 2>/dev/null' EXIT
if [ -n "$v2" ]; then
    echo "50000 100000" >"$cg/cpu.max" || fail "cannot set cpu.max"
else
    echo 100000 >"$cg/cpu.cfs_period_us" && echo 50000 >"$cg/cpu.cfs_quota_us" || fail "cannot set the quota"
fi
inside() { # runs its arguments in the cgroup
    sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}
export LTTNG_UST_REGISTER_TIMEOUT=0
out=$(inside "$FATHOM" version) || fail "version: $out"
echo "$out" | grep -q '^cpu quota: 0.50 CPUs (cgroup): 1 thread by default$' || fail "version does not say the quota: $out"
out=$(inside "$FATHOM" run memnet --preset tiny --steps 2 2>&1) || fail "run: $out"
echo "$out" | grep -q ', 1 thread, inter 1' || fail "run under the quota does not default to one thread: $out"
out=$(inside "$FATHOM" run memnet --preset tiny --steps 2 --threads 2 2>&1) || fail "run --threads 2: $out"
echo "$out" | grep -q ', 2 threads, inter 1' || fail "an explicit --threads 2 did not win: $out"
out=$(inside "$FATHOM" tune memnet --mode infer --preset tiny --budget 2 --format json 2>/dev/null) || fail "tune failed"
[ "$(echo "$out" | jq -r '.machine.cores')" = 1 ] || fail "tune's knob space is not one thread: $(echo "$out" | jq -c .machine)"
[ "$(echo "$out" | jq -r '.machine.cpu_quota')" = 0.5 ] || fail "tune's JSON has no quota: $(echo "$out" | jq -c .machine)"
# outside it: the CPUs
out=$("$FATHOM" version)
echo "$out" | grep -q '^cpu quota' && fail "a quota outside the cgroup: $out"
cli_end cgroup_quota
