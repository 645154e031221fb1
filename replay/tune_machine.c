/* tune_machine.c -- this machine as the tuner sees it (see tune_machine.h). */
#include "replay/tune_machine.h"

#include "replay/tune.h"

#include "base/alloc.h"
#include "base/clock.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

/* The bytes of a read stream's rep: up to max of g's arenas, whole
 * floats, into spans (one per arena); their count. */
typedef struct span {
    const float *p;
    int64_t n; /* floats */
} span;
static int stream_spans(const exec_graph *g, double max, span *sp, double *bytes)
{
    int n = 0;
    *bytes = 0;
    for (int r = 0; g && r < EXEC_ROLE_COUNT && *bytes < max; r++) {
        size_t b = 0;
        const void *p = exec_graph_arena(g, (exec_role)r, &b);
        int64_t f = (int64_t)(fmin((double)b, max - *bytes) / sizeof(float));
        if (p && f > 0)
            sp[n++] = (span){ p, f }, *bytes += (double)f * sizeof(float);
    }
    return n;
}

exec_status replay_tune_ceilings(const exec_graph *g, double *gflops, double *gbs, double *stream_mb)
{
    const int n = 256, reps = 5;
    float *a = base_malloc((size_t)n * n * 3 * sizeof *a);
    if (!a)
        return exec_fail(EXEC_ERR_NOMEM, "out of memory for the ceilings' sgemm");
    for (int64_t i = 0; i < (int64_t)n * n * 3; i++)
        a[i] = (float)(i & 7) * 0.25f;
    /* the stream reads the workload's own memory: a triad over fresh
     * arrays paid each page's first touch, on this kind's VMs 1.4 ms a MiB
     * (the hypervisor backing it) against 0.15 for pages the process had
     * used: 0.19-0.21 s of seq2seq's and deepq's 0.5-0.7 s small training
     * tuners, over 135-150 MiB */
    span sp[EXEC_ROLE_COUNT];
    double bytes;
    const int ns = stream_spans(g, REPLAY_TUNE_STREAM_MAX_MB * 0x1p20, sp, &bytes);
    /* the best of a few: the stream costs its reads alone (12 MB at 50
     * GB/s: a quarter of a millisecond), and the best of two spread 24-75
     * GB/s over one night's rows; a stream of more reads
     * REPLAY_TUNE_STREAM_READ_MB in all and two passes at least (seq2seq's
     * 138 MiB, 4 ms a pass: 35.4, 36.0, 35.6, 33.0 and 33.3 GB/s, and
     * 36.3, 35.2, 36.8, 31.5 and 33.1 in two tuners; deepq's 36 MiB, 1 ms
     * a pass, rose 30-57 GB/s over its five) */
    const int passes = ns ? (int)fmin(reps, fmax(2, ceil(REPLAY_TUNE_STREAM_READ_MB / (bytes / 0x1p20)))) : 0;
    double best = 0, bw = 0;
    volatile float sink = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = base_now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, a + n * n, n, 0.0f, a + 2 * n * n,
                    n);
        double t = base_now_s() - t0;
        if (t > 0 && 2.0 * n * n * n / t / 1e9 > best)
            best = 2.0 * n * n * n / t / 1e9;
        if (r >= passes)
            continue;
        t0 = base_now_s();
        float sum = 0;
        for (int k = 0; k < ns; k++) {
            const float *x = sp[k].p;
            const int64_t m = sp[k].n;
#pragma omp parallel for simd reduction(+ : sum) schedule(static)
            for (int64_t i = 0; i < m; i++)
                sum += x[i];
        }
        t = base_now_s() - t0;
        sink = sink + sum; /* the reads kept */
        if (t > 0 && bytes / t / 1e9 > bw)
            bw = bytes / t / 1e9;
    }
    (void)sink;
    base_free(a);
    *gflops = best, *gbs = bw, *stream_mb = ns ? bytes / 0x1p20 : 0;
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
