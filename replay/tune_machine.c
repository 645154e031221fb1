/* tune_machine.c -- this machine as the tuner sees it (see tune_machine.h). */
#include "replay/tune_machine.h"

#include "replay/tune.h"

#include "base/alloc.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

double replay_tune_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The largest CPU cache, bytes, from sysfs (cpu0's caches; 0: unknown).
 * Not sysconf(_SC_LEVEL3_CACHE_SIZE): glibc's cpuid reading gave 320 MB
 * for this EPYC VM's 32 MB L3. */
static double last_cache_bytes(void)
{
    double best = 0;
    for (int i = 0; i < 16; i++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f)
            break;
        unsigned long v = 0;
        char unit = 0;
        if (fscanf(f, "%lu%c", &v, &unit) >= 1) {
            double b = (double)v * (unit == 'K' ? 0x1p10 : unit == 'M' ? 0x1p20 : unit == 'G' ? 0x1p30 : 1);
            best = b > best ? b : best;
        }
        fclose(f);
    }
    return best;
}

exec_status replay_tune_ceilings(size_t footprint, double *gflops, double *gbs, double *triad_mb)
{
    const int n = 256, reps = 5;
    /* past twice the largest cache a stream is memory's, and each MB more
     * costs its first touch (about 2 ms a MB on this VM: 384 MB took 0.8 s
     * of speech's training tuner) */
    const double llc = last_cache_bytes(), cap = llc > 0 ? 2 * llc : 64 * 0x1p20;
    const double lo = REPLAY_TUNE_TRIAD_MIN_MB * 0x1p20, hi = fmin(REPLAY_TUNE_TRIAD_MAX_MB * 0x1p20, fmax(lo, cap));
    const double want = (double)footprint < lo ? lo : (double)footprint > hi ? hi : (double)footprint;
    const int64_t m = (int64_t)(want / (3 * sizeof(float))) & ~(int64_t)15; /* floats per array */
    float *a = exec_malloc((size_t)n * n * 3 * sizeof *a), *x = exec_malloc((size_t)m * 3 * sizeof *x);
    if (!a || !x) {
        exec_free(a), exec_free(x);
        return exec_fail(EXEC_ERR_NOMEM, "out of memory for the ceilings' %.0f MB", want / 0x1p20);
    }
    for (int64_t i = 0; i < (int64_t)n * n * 3; i++)
        a[i] = (float)(i & 7) * 0.25f;
    float *y = x, *b = x + m, *c = x + 2 * m;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < m; i++) /* first touch by the threads that stream it */
        y[i] = 0, b[i] = (float)(i & 3), c[i] = (float)(i & 1);
    /* the best of a few: once the pages are touched, a rep costs the
     * stream alone (12 MB at 50 GB/s: a quarter of a millisecond), and
     * the best of two spread 24-75 GB/s over one night's rows */
    double best = 0, bw = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = replay_tune_now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, a + n * n, n, 0.0f, a + 2 * n * n,
                    n);
        double t = replay_tune_now_s() - t0;
        if (t > 0 && 2.0 * n * n * n / t / 1e9 > best)
            best = 2.0 * n * n * n / t / 1e9;
        t0 = replay_tune_now_s();
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < m; i++)
            y[i] = b[i] + 3.0f * c[i];
        t = replay_tune_now_s() - t0;
        if (t > 0 && 12.0 * (double)m / t / 1e9 > bw)
            bw = 12.0 * (double)m / t / 1e9;
    }
    exec_free(a), exec_free(x);
    *gflops = best, *gbs = bw, *triad_mb = 12.0 * (double)m / 0x1p20;
    return EXEC_OK;
}

/* The bounds' names, for the text and for the JSON, by REPLAY_TUNE_BOUND_*. */
static const char *const bound_names[][2] = {
    [REPLAY_TUNE_BOUND_UNKNOWN] = { "bound unknown", "unknown" },
    [REPLAY_TUNE_BOUND_MEMORY] = { "memory-bound", "memory" },
    [REPLAY_TUNE_BOUND_COMPUTE] = { "compute-bound", "compute" },
};

const char *replay_tune_bound_name(int bound)
{
    return bound >= 0 && bound <= REPLAY_TUNE_BOUND_COMPUTE ? bound_names[bound][0] : "?";
}

const char *replay_tune_bound_key(int bound)
{
    return bound >= 0 && bound <= REPLAY_TUNE_BOUND_COMPUTE ? bound_names[bound][1] : "?";
}

int replay_tune_offered_binds(int cores, char *out, const char **why)
{
    int n = 0;
    out[n++] = EXEC_BIND_NONE;
    *why = exec_bind_unavailable(EXEC_BIND_CLOSE);
    if (*why)
        return n;
    out[n++] = EXEC_BIND_CLOSE;
    int differs = 0;
    for (int t = 1; t <= cores && !differs; t++)
        for (int i = 0; i < t && !differs; i++)
            differs = exec_bind_cpu(EXEC_BIND_CLOSE, i, t) != exec_bind_cpu(EXEC_BIND_SPREAD, i, t);
    if (differs)
        out[n++] = EXEC_BIND_SPREAD;
    return n;
}

long replay_tune_preemptions(void)
{
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_nivcsw : 0;
}
