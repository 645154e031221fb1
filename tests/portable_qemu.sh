#!/bin/sh
# portable_qemu.sh SOURCE_DIR FATHOM TMP -- the default build runs on other
# x86-64 CPUs and computes there what it computes here: under qemu-user
# (qemu-x86_64 -cpu NAME) as a Haswell (AVX2, no AVX-512) and a Nehalem (no
# AVX at all), fathom picks the kernels that CPU has (`fathom version`) and
#   - runs a tiny convolutional (deepq) and a recurrent (seq2seq) workload
#     with the losses of the native run (within 1e-5 relative),
#   - replays a reference trace executing the same op invocations,
#   - analyzes the trace with the same op counts and shares;
# and the folder scripts/bundle.sh makes does the same on its own loader.
# QEMU_CPUS overrides the CPU list. Skipped (77) without qemu-x86_64.
set -u
src=$1 fathom=$2 tmp=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
qemu=$(command -v qemu-x86_64) || { echo "portable_qemu: no qemu-x86_64 (Debian's qemu-user): skipped"; exit 77; }
command -v jq >/dev/null || { echo "portable_qemu: no jq: skipped"; exit 77; }
rm -rf "$tmp" && mkdir -p "$tmp" || fail "cannot create $tmp"
# Convolutions by im2col everywhere: AUTO picks an algorithm by the time it
# measures, which emulation changes, and Winograd rounds otherwise than
# im2col by more than 1e-5 after a step (residual's second loss: 3e-4)
export LTTNG_UST_REGISTER_TIMEOUT=0 OMP_NUM_THREADS=1 FATHOM_CONV_ALGO=im2col
trace=$(ls "$src"/traces/reference/memnet-infer-small-*.tar.zst | head -1)
[ -f "$trace" ] || fail "no memnet reference trace in $src/traces/reference"

# checks TAG COMMAND...: the checks' outputs as $tmp/TAG.*, COMMAND being
# fathom (natively, through qemu, or the bundle's)
checks() {
    tag=$1
    shift
    "$@" version >"$tmp/$tag.version" 2>&1 || fail "$tag: fathom version: $(tail -1 "$tmp/$tag.version")"
    for m in deepq seq2seq; do
        "$@" run $m --preset tiny --steps 2 --threads 1 --format json >"$tmp/$tag.$m" 2>"$tmp/$tag.err" ||
            fail "$tag: fathom run $m: $(tail -1 "$tmp/$tag.err")"
    done
    "$@" replay "$trace" --steps 1 --iterations 1 --warmup 0 --threads 1 --dump-ops "$tmp/$tag.ops" --format json \
        >"$tmp/$tag.replay" 2>"$tmp/$tag.err" || fail "$tag: fathom replay: $(tail -1 "$tmp/$tag.err")"
    "$@" analyze breakdown "$trace" --format json >"$tmp/$tag.breakdown" 2>"$tmp/$tag.err" ||
        fail "$tag: fathom analyze breakdown: $(tail -1 "$tmp/$tag.err")"
}

# losses TAG MODEL: TAG's run of MODEL has the native run's losses
losses() {
    jq -r 'select(.step != null) | .loss' "$tmp/native.$2" >"$tmp/native.$2.loss"
    jq -r 'select(.step != null) | .loss' "$tmp/$1.$2" >"$tmp/$1.$2.loss"
    [ -s "$tmp/native.$2.loss" ] || fail "native: $2 printed no step losses"
    paste "$tmp/native.$2.loss" "$tmp/$1.$2.loss" | awk -v what="$1: $2" '
        { d = $1 - $2; d = d < 0 ? -d : d; r = d / ($1 < 0 ? -$1 : $1)
          if ($2 == "" || r > 1e-5) { printf "%s: step %d loss %s, native %s\n", what, NR, $2, $1; bad = 1 } }
        END { exit bad }' >&2 || fail "$1: $2's losses differ from the native run's"
}

# same TAG: TAG's results against the native run's
same() {
    tag=$1
    for m in deepq seq2seq; do
        losses "$tag" $m
    done
    cmp -s "$tmp/native.ops" "$tmp/$tag.ops" ||
        fail "$tag: the replay executed other ops: $(diff "$tmp/native.ops" "$tmp/$tag.ops" | head -3)"
    for f in replay breakdown; do
        q='[.. | objects | (.ops_executed?, .count?) | numbers]'
        [ "$(jq -c "$q" "$tmp/native.$f")" = "$(jq -c "$q" "$tmp/$tag.$f")" ] ||
            fail "$tag: $f's op counts differ from the native run's"
    done
    cmp -s "$tmp/native.breakdown" "$tmp/$tag.breakdown" || fail "$tag: the breakdown differs from the native one"
}

t0=$(date +%s)
checks native "$fathom"
grep -q "^kernels: " "$tmp/native.version" || fail "fathom version names no kernels: $(cat "$tmp/native.version")"
[ "$(jq -r '.ops_executed' "$tmp/native.replay")" -gt 0 ] || fail "native: the replay executed no op"
sh "$src/scripts/bundle.sh" "$fathom" "$tmp/bundle" >"$tmp/bundle.out" 2>&1 || fail "bundle.sh: $(cat "$tmp/bundle.out")"
loader=$(ls "$tmp"/bundle/lib/ld-linux*.so* | head -1)
for cpu in ${QEMU_CPUS:-Haswell Nehalem}; do
    case $cpu in
    Nehalem* | Westmere*) want=x86-64-v2 ;;
    *) want=avx2 ;;
    esac
    # OpenBLAS 0.3.21 (Debian 12's DYNAMIC_ARCH build) picks its Haswell
    # kernels under qemu-user whatever the -cpu (Nehalem, Westmere and
    # SandyBridge measured; their CPUID leaves are right, fathom reads them
    # right): the emulated core is named to it, so the SIGILL this test
    # looks for is fathom's own
    export OPENBLAS_CORETYPE=$cpu
    t=$(date +%s)
    checks "$cpu" "$qemu" -cpu "$cpu" "$fathom"
    grep -q "^kernels: $want " "$tmp/$cpu.version" || fail "$cpu: fathom did not pick $want: $(grep kernels "$tmp/$cpu.version")"
    same "$cpu"
    echo "portable_qemu: $cpu ($want kernels): runs, replay and breakdown as native ($(($(date +%s) - t)) s)"
    t=$(date +%s)
    "$qemu" -cpu "$cpu" "$loader" --library-path "$tmp/bundle/lib" "$tmp/bundle/lib/fathom.bin" run deepq \
        --preset tiny --steps 2 --threads 1 --format json >"$tmp/$cpu-bundle.deepq" 2>"$tmp/$cpu-bundle.err" ||
        fail "$cpu: the bundle's fathom: $(tail -1 "$tmp/$cpu-bundle.err")"
    losses "$cpu-bundle" deepq
    echo "portable_qemu: $cpu: the bundle's deepq as native ($(($(date +%s) - t)) s)"
done
rm -rf "$tmp/bundle"
echo "portable_qemu: ok ($(($(date +%s) - t0)) s)"
