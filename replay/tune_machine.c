/* tune_machine.c -- this machine as the tuner sees it (see tune_machine.h). */
#include "replay/tune_machine.h"

#include "base/alloc.h"

#include <cblas.h>
#include <sys/resource.h>
#include <time.h>

double replay_tune_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

exec_status replay_tune_ceilings(double *gflops, double *gbs)
{
    const int n = 256;
    const int64_t m = 1 << 20; /* 12 MB in all: past the caches of most CPUs */
    float *a = exec_malloc((size_t)n * n * 3 * sizeof *a), *x = exec_malloc((size_t)m * 3 * sizeof *x);
    if (!a || !x) {
        exec_free(a), exec_free(x);
        return exec_fail(EXEC_ERR_NOMEM, "out of memory");
    }
    for (int64_t i = 0; i < (int64_t)n * n * 3; i++)
        a[i] = (float)(i % 7) * 0.25f;
    for (int64_t i = 0; i < m * 3; i++)
        x[i] = (float)(i % 5);
    double best = 0, bw = 0;
    for (int r = 0; r < 2; r++) {
        double t0 = replay_tune_now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, a + n * n, n, 0.0f, a + 2 * n * n,
                    n);
        double t = replay_tune_now_s() - t0;
        if (t > 0 && 2.0 * n * n * n / t / 1e9 > best)
            best = 2.0 * n * n * n / t / 1e9;
        float *y = x, *b = x + m, *c = x + 2 * m;
        t0 = replay_tune_now_s();
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < m; i++)
            y[i] = b[i] + 3.0f * c[i];
        t = replay_tune_now_s() - t0;
        if (t > 0 && 12.0 * (double)m / t / 1e9 > bw)
            bw = 12.0 * (double)m / t / 1e9;
    }
    exec_free(a), exec_free(x);
    *gflops = best, *gbs = bw;
    return EXEC_OK;
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
