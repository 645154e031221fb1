/* isa.c -- which vector instructions the engine's kernels use on this CPU.
 *
 * The default build targets x86-64-v2 (SSE4.2: every x86-64 server since
 * Nehalem, 2008, and the small cores without AVX: Atom, older Celeron and
 * Pentium) and carries AVX2
 * and AVX-512 variants of its vector kernels, chosen here at run time from
 * the CPU's features: the direct and Winograd convolutions and MatMul's
 * tiles choose theirs by exec_simd_set's level (target attributes,
 * exec/ops/conv_*.c, matmul_tile.c); the files of elementwise, reduction,
 * softmax, normalization, loss, optimizer, pooling and data movement
 * kernels are compiled once per set (exec/CMakeLists.txt, ISA_KERNELS),
 * and the level picks which copy's forward functions the executor calls
 * (exec_kernels_now) and which copy of the loops threads.c times for the
 * parallel thresholds (exec_calib_now). Nothing wider than the baseline runs before
 * exec_simd_best has said the CPU has it. */
#include "internal.h"
#include "ops/conv.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The forward functions of each set (ops/kernel_table.c, compiled per set
 * with the symbol suffix); without variants (FATHOM_NATIVE, or not x86-64)
 * every level uses the one table. */
#if FATHOM_ISA_VARIANTS
extern const exec_fwd_fn exec_kernels_avx2[EXEC_OP_COUNT];
extern const exec_fwd_fn exec_kernels_avx512[EXEC_OP_COUNT];
double exec_calib_stream_avx2(int64_t n, int reps);
double exec_calib_math_avx2(int64_t n, int reps);
double exec_calib_stream_avx512(int64_t n, int reps);
double exec_calib_math_avx512(int64_t n, int reps);
#endif

static _Atomic int simd_cap = EXEC_SIMD_AUTO;
static const exec_fwd_fn *_Atomic g_kernels;

exec_simd exec_simd_best(void)
{
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return EXEC_SIMD_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return EXEC_SIMD_AVX2;
#endif
    return EXEC_SIMD_SCALAR;
}

static const exec_fwd_fn *kernels_for(exec_simd s)
{
#if FATHOM_ISA_VARIANTS
    if (s == EXEC_SIMD_AVX512)
        return exec_kernels_avx512;
    if (s == EXEC_SIMD_AVX2)
        return exec_kernels_avx2;
#endif
    (void)s;
    return exec_kernels;
}

int exec_simd_from_name(const char *name)
{
    if (!name || !*name)
        return EXEC_SIMD_AUTO;
    if (strcmp(name, "avx512") == 0)
        return EXEC_SIMD_AVX512;
    if (strcmp(name, "avx2") == 0)
        return EXEC_SIMD_AVX2;
    if (strcmp(name, "baseline") == 0 || strcmp(name, FATHOM_ISA_BASELINE) == 0)
        return EXEC_SIMD_SCALAR;
    return -1;
}

exec_simd exec_simd_set(exec_simd s)
{
    exec_simd best = exec_simd_best();
    if (s == EXEC_SIMD_AUTO) { /* FATHOM_SIMD caps the default (a bad name: the driver says so) */
        int env = exec_simd_from_name(getenv("FATHOM_SIMD"));
        s = env > EXEC_SIMD_AUTO ? (exec_simd)env : best;
    }
    if (s > best)
        s = best;
    atomic_store(&simd_cap, (int)s);
    atomic_store(&g_kernels, kernels_for(s));
    return s;
}

exec_simd conv_simd(void)
{
    int s = atomic_load_explicit(&simd_cap, memory_order_relaxed);
    return s == EXEC_SIMD_AUTO ? exec_simd_set(EXEC_SIMD_AUTO) : (exec_simd)s;
}

const exec_fwd_fn *exec_kernels_now(void)
{
    const exec_fwd_fn *t = atomic_load_explicit(&g_kernels, memory_order_relaxed);
    if (__builtin_expect(t == NULL, 0)) {
        exec_simd_set(EXEC_SIMD_AUTO);
        t = atomic_load(&g_kernels);
    }
    return t;
}

exec_calib_fn exec_calib_now(exec_work w)
{
    const int math = w == EXEC_WORK_MATH;
#if FATHOM_ISA_VARIANTS
    exec_simd s = conv_simd();
    if (s == EXEC_SIMD_AVX512)
        return math ? exec_calib_math_avx512 : exec_calib_stream_avx512;
    if (s == EXEC_SIMD_AVX2)
        return math ? exec_calib_math_avx2 : exec_calib_stream_avx2;
#endif
    return math ? exec_calib_math : exec_calib_stream;
}

const char *exec_simd_name(exec_simd s)
{
    switch (s) {
    case EXEC_SIMD_AVX512: return "avx512";
    case EXEC_SIMD_AVX2: return "avx2";
    case EXEC_SIMD_SCALAR: return FATHOM_ISA_BASELINE;
    default: return "auto";
    }
}

const char *exec_simd_built(void) { return FATHOM_ISA_BUILT; }
