#!/bin/sh
# portable_isa.sh FATHOM -- the default build runs on any x86-64-v2 CPU: in
# the disassembly of FATHOM, an instruction beyond x86-64-v2 (AVX, AVX2, FMA,
# AVX-512, BMI, LZCNT, MOVBE) appears only in a function whose name carries
# _avx2 or _avx512, the functions the engine reaches after exec_simd_best
# has seen the CPU has the set (exec/isa.c; the kernel files' copies, the
# direct and Winograd convolutions, MatMul's tiles). A function without
# the suffix holding one is a SIGILL on a CPU without the set, and fails
# here with its name and the instruction.
set -u
fathom=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v objdump >/dev/null || { echo "portable_isa: no objdump: skipped"; exit 77; }
out=$(objdump -d --no-show-raw-insn "$fathom" | awk '
    /^[0-9a-f]+ <.*>:$/ { fn = $2; gsub(/[<>:]/, "", fn); nfn++; next }
    NF < 2 { next }
    {
        insn = $0; sub(/^[ \t]*[0-9a-f]+:[ \t]*/, "", insn)
        split(insn, w, /[ \t]+/); m = w[1]
        if (m ~ /^(rex|data16|lock|rep|repz|repnz|notrack|bnd|cs|ds|addr32)/ && w[2] != "") m = w[2]
        wide = m ~ /^v/ || m ~ /^k(mov|and|or|xor|not|add|shift|test|unpck|ortest)/ ||
               m ~ /^(andn|bextr|blsi|blsmsk|blsr|bzhi|mulx|pdep|pext|rorx|sarx|shlx|shrx|lzcnt|tzcnt|movbe)$/ ||
               insn ~ /%[yz]mm/
        if (!wide) next
        nwide++
        if (fn ~ /_avx(2|512)/) { nok++; next }
        bad[fn] = insn; nbad++
    }
    END {
        for (f in bad) { print "BAD " f ": " bad[f]; if (++shown == 20) break }
        printf "SUM %d functions, %d instructions beyond x86-64-v2, %d in _avx2/_avx512 functions, %d elsewhere\n", nfn, nwide, nok, nbad
    }')
echo "$out" | grep "^SUM" | sed 's/^SUM /portable_isa: /'
if echo "$out" | grep -q "^BAD"; then
    echo "$out" | grep "^BAD" | sed 's/^BAD /  /' >&2
    fail "instructions beyond x86-64-v2 outside the functions reached after a CPU check"
fi
# the check must see what it checks for: the kernels' copies exist
echo "$out" | grep -q "^SUM .*, [1-9][0-9]* in _avx2" || fail "no _avx2/_avx512 function with AVX instructions: nothing was checked"
echo "portable_isa: ok"
