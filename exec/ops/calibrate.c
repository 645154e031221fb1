/* calibrate.c -- the loops threads.c times to set the elements past which a
 * kernel splits its loop over the team (exec_par_min).
 *
 * This file is one of the kernel files compiled once per vector set
 * (exec/CMakeLists.txt, ISA_KERNELS): the loop timed is then the loop the
 * kernels run on this CPU. Timed in the baseline's instructions alone, a
 * tanh took five times the AVX-512 kernel's time an element, and the
 * threshold came out five times smaller (88 thousand elements against 466
 * thousand in the -march=native build): the portable build split loops
 * that the native one ran on one thread. */
#include "../internal.h"
#include "mathkern.h"

#include <stdlib.h>

/* ns per element of y = a + b over n floats, the arrays written once
 * before (an op's inputs, just written by the ops before it, and its
 * output, written in the step before): the least of `reps` runs; 0 without
 * memory. Plain malloc: a probe's buffer, freed at once, stays out of the
 * engine's byte accounting and its injected failures. */
double exec_calib_stream(int64_t n, int reps)
{
    float *buf = malloc(3 * (size_t)n * sizeof *buf);
    if (!buf)
        return 0;
    float *a = buf, *b = buf + n, *y = buf + 2 * n;
    for (int64_t i = 0; i < n; i++)
        a[i] = (float)(i % 17) * 0.0625f - 0.5f, b[i] = (float)(i % 5) * 0.25f, y[i] = 0;
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = (double)base_now_ns();
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = a[i] + b[i];
        __asm__ volatile("" : : "r"(y) : "memory");
        double d = (double)base_now_ns() - t0;
        best = d < best ? d : best;
    }
    free(buf);
    return best / (double)n;
}

/* ns per element of y = tanh(a) over n floats in cache: the least of
 * `reps` runs; 0 without memory */
double exec_calib_math(int64_t n, int reps)
{
    float *buf = malloc(2 * (size_t)n * sizeof *buf);
    if (!buf)
        return 0;
    float *a = buf, *y = buf + n;
    for (int64_t i = 0; i < n; i++)
        a[i] = (float)(i % 17) * 0.0625f - 0.5f;
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = (double)base_now_ns();
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = math_tanhf(a[i]);
        __asm__ volatile("" : : "r"(y) : "memory");
        double d = (double)base_now_ns() - t0;
        best = d < best ? d : best;
    }
    free(buf);
    return best / (double)n;
}
