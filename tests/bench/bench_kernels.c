/* bench_kernels.c -- GEMM-shaped kernels against the machine's raw sgemm.
 *
 * In one run: raw cblas_sgemm at a large square shape (the peak), then the
 * engine's MatMul (a one-node graph run repeatedly) at large shapes, then
 * Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter at AlexNet, VGG-19,
 * ResNet-50, DQN and the small VGG's layer shapes, each as im2col + GEMM,
 * as the direct kernels, as Winograd (3x3 stride 1) and as `auto` picks. Prints GFLOP/s and the ratio to the peak,
 * against the targets (MatMul >= 0.90, Conv2D >= 0.75, backprops >= 0.65;
 * for the convolutions, on the `auto` lines).
 * Each kernel is timed interleaved with the peak sgemm (see time_interleaved).
 * A benchmark, not a test: ctest label "bench" (ctest -L bench); --strict
 * makes a missed target the exit status.
 *
 *   bench_kernels [--threads N] [--batch B] [--seconds S] [--only TEXT] [--cpu] [--strict]
 *
 * --only keeps the measurements whose name contains TEXT (the peak is always
 * measured). --cpu times in the process's CPU time instead of the clock's:
 * with --threads 1 on a loaded machine, that leaves out the time the
 * process waited for a core (with more threads it would count the time
 * OpenMP threads spin at barriers). */
#include <cblas.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/build.h"
#include "exec/exec.h"

#include "bench_stats.h"

static clockid_t g_clock = CLOCK_MONOTONIC; /* --cpu: CLOCK_PROCESS_CPUTIME_ID */

static double now(void)
{
    struct timespec ts;
    clock_gettime(g_clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double g_seconds = 1.0; /* time budget per measurement */

/* Runs f(arg) until the budget is spent (at least 3 times, after a warm-up
 * run) and returns the median seconds per call. */
static double time_median(void (*f)(void *), void *arg)
{
    f(arg);
    double t[256];
    int n = 0;
    double start = now();
    while (n < 256 && (n < 3 || now() - start < g_seconds)) {
        double t0 = now();
        f(arg);
        t[n++] = now() - t0;
    }
    qsort(t, (size_t)n, sizeof t[0], bench_cmp_double);
    return t[n / 2];
}

/* The machine may be shared and its load drift, so every kernel is timed
 * interleaved with the peak sgemm: one call of each in turn, medians of
 * both, and the ratio is taken against that local peak. */
static void (*g_peak_fn)(void *);
static void *g_peak_arg;
static double g_peak_flops, g_local_peak;

static double time_interleaved(void (*f)(void *), void *arg)
{
    f(arg);
    g_peak_fn(g_peak_arg);
    double t[128], u[128];
    int n = 0;
    double start = now();
    while (n < 128 && (n < 5 || now() - start < 2 * g_seconds)) {
        double t0 = now();
        f(arg);
        double t1 = now();
        g_peak_fn(g_peak_arg);
        u[n] = now() - t1;
        t[n++] = t1 - t0;
    }
    qsort(t, (size_t)n, sizeof t[0], bench_cmp_double);
    qsort(u, (size_t)n, sizeof u[0], bench_cmp_double);
    g_local_peak = g_peak_flops / u[n / 2] * 1e-9;
    return t[n / 2];
}

static float *rand_buf(size_t n)
{
    float *p = malloc(n * sizeof *p);
    if (!p) {
        fprintf(stderr, "bench_kernels: out of memory\n");
        exit(1);
    }
    unsigned s = 12345;
    for (size_t i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        p[i] = (float)((s >> 9) & 0xffff) / 65536.0f - 0.5f;
    }
    return p;
}

/* ---- raw sgemm ---------------------------------------------------------- */
typedef struct sg {
    int m, n, k;
    float *a, *b, *c;
} sg;
static void run_sgemm(void *p)
{
    sg *s = p;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->m, s->n, s->k, 1.0f, s->a, s->k, s->b, s->n, 0.0f, s->c,
                s->n);
}

static sg g_sg;
static double raw_sgemm(int m, int n, int k)
{
    g_sg = (sg){ m, n, k, rand_buf((size_t)m * k), rand_buf((size_t)k * n), rand_buf((size_t)m * n) };
    double t = time_median(run_sgemm, &g_sg);
    g_peak_fn = run_sgemm;
    g_peak_arg = &g_sg;
    g_peak_flops = 2.0 * m * n * k;
    return g_peak_flops / t * 1e-9;
}

/* ---- one-node engine graphs --------------------------------------------- */
static void run_graph(void *p)
{
    exec_run_opts o = { .max_phase = EXEC_PHASE_forward };
    if (exec_graph_run(p, &o)) {
        fprintf(stderr, "bench_kernels: run failed: %s\n", exec_errmsg());
        exit(1);
    }
}

typedef struct tdesc {
    int ndim;
    int64_t shape[4];
} tdesc;

/* GFLOP/s of one node of `op` on random inputs of the given shapes. */
static double bench_node(exec_op op, int nin, const tdesc *ins, int nattrs, const int64_t *attrs)
{
    exec_graph *g = NULL;
    if (exec_graph_create(&g, 1))
        exit(1);
    uint32_t ids[4];
    for (int i = 0; i < nin; i++)
        ids[i] = exec_input(g, "in", EXEC_F32, ins[i].ndim, ins[i].shape);
    exec_op_add(g, op, nin, ids, nattrs, attrs, NULL);
    if (exec_graph_status(g) || exec_graph_plan(g)) {
        fprintf(stderr, "bench_kernels: %s: %s\n", exec_op_name(op), exec_errmsg());
        exit(1);
    }
    for (int i = 0; i < nin; i++) {
        exec_tensor *t = exec_tensor_get(g, ids[i]);
        float *r = rand_buf((size_t)t->numel);
        memcpy(t->data, r, t->bytes);
        free(r);
    }
    uint64_t flops = 0, bytes = 0;
    exec_node_cost(g, exec_node_get(g, 0), &flops, &bytes);
    double t = time_interleaved(run_graph, g);
    exec_graph_destroy(g);
    return (double)flops / t * 1e-9;
}

/* Milliseconds and GB/s (the op table's bytes) of one node of a
 * memory-bound op, its median time alone (no peak sgemm between). */
static void bench_mem(const char *what, exec_op op, int nin, const tdesc *ins, int nattrs, const int64_t *attrs)
{
    exec_graph *g = NULL;
    if (exec_graph_create(&g, 1))
        exit(1);
    uint32_t ids[8];
    for (int i = 0; i < nin; i++)
        ids[i] = exec_input(g, "in", EXEC_F32, ins[i].ndim, ins[i].shape);
    exec_op_add(g, op, nin, ids, nattrs, attrs, NULL);
    if (exec_graph_status(g) || exec_graph_plan(g)) {
        fprintf(stderr, "bench_kernels: %s: %s\n", exec_op_name(op), exec_errmsg());
        exit(1);
    }
    for (int i = 0; i < nin; i++) {
        exec_tensor *t = exec_tensor_get(g, ids[i]);
        float *r = rand_buf((size_t)t->numel);
        for (int64_t e = 0; e < t->numel; e++)
            r[e] += 1.0f; /* positive: LRN's y, batch norm's variances */
        memcpy(t->data, r, t->bytes);
        free(r);
    }
    uint64_t flops = 0, bytes = 0;
    exec_node_cost(g, exec_node_get(g, 0), &flops, &bytes);
    double t = time_median(run_graph, g);
    exec_graph_destroy(g);
    printf("%-52s %8.3f ms  %6.1f GB/s\n", what, t * 1e3, (double)bytes / t * 1e-9);
    fflush(stdout);
}

static double g_peak;
static int g_missed;

static void report(const char *what, double gf, double target)
{
    double r = gf / g_local_peak;
    if (target <= 0) { /* an alternative, for comparison */
        printf("%-52s %6.1f GFLOP/s  peak %5.1f  %5.2f of peak\n", what, gf, g_local_peak, r);
        fflush(stdout);
        return;
    }
    int ok = r >= target;
    g_missed += !ok;
    printf("%-52s %6.1f GFLOP/s  peak %5.1f  %5.2f of peak  (target %.2f: %s)\n", what, gf, g_local_peak, r, target,
           ok ? "met" : "MISSED");
    fflush(stdout);
}

typedef struct layer {
    const char *name;
    int64_t c, h, w, oc, k, s, p;
} layer;

int main(int argc, char **argv)
{
    int threads = 2, strict = 0, avx2 = 0;
    int64_t batch = 8;
    const char *only = "";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            batch = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            g_seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--strict"))
            strict = 1;
        else if (!strcmp(argv[i], "--cpu"))
            g_clock = CLOCK_PROCESS_CPUTIME_ID;
        else if (!strcmp(argv[i], "--avx2"))
            avx2 = 1;
        else {
            fprintf(
                stderr,
                "usage: bench_kernels [--threads N] [--batch B] [--seconds S] [--only TEXT] [--cpu] [--avx2] [--strict]\n");
            return 2;
        }
    }
    if (threads < 1 || batch < 1 || !(g_seconds > 0)) {
        fprintf(stderr, "bench_kernels: threads, batch and seconds must be positive\n");
        return 2;
    }
    exec_threads_set(threads);
    if (avx2 && exec_simd_set(EXEC_SIMD_AVX2) != EXEC_SIMD_AVX2) {
        fprintf(stderr, "bench_kernels: --avx2: this CPU lacks AVX2\n");
        return 2;
    }
    printf("bench_kernels: %d thread%s, batch %lld, %s\nBLAS: %s\n\n", exec_threads_get(),
           exec_threads_get() == 1 ? "" : "s", (long long)batch, exec_cpu_model(), exec_blas_config());

    g_peak = raw_sgemm(2048, 2048, 2048);
    printf("%-52s %8.1f GFLOP/s  (the peak)\n", "raw cblas_sgemm 2048x2048x2048", g_peak);

    /* m, n, k, transpose_a, transpose_b: large shapes, then DQN's fc4 at
     * batch B (forward, input and weight gradients) */
    const int64_t mm[][5] = { { 2048, 2048, 2048, 0, 0 }, { 4096, 1024, 1024, 0, 0 }, { 1024, 4096, 2048, 0, 0 },
                              { batch, 512, 3136, 0, 0 }, { batch, 3136, 512, 0, 1 }, { 3136, 512, batch, 1, 0 } };
    for (size_t i = 0; i < sizeof mm / sizeof mm[0]; i++) {
        int64_t m = mm[i][0], n = mm[i][1], k = mm[i][2], ta = mm[i][3], tb = mm[i][4];
        tdesc in[2] = { { 2, { ta ? k : m, ta ? m : k } }, { 2, { tb ? n : k, tb ? k : n } } };
        char what[96];
        snprintf(what, sizeof what, "MatMul %lldx%lldx%lld%s%s", (long long)m, (long long)n, (long long)k,
                 ta ? " a^T" : "", tb ? " b^T" : "");
        if (!strstr(what, only))
            continue;
        report(what, bench_node(EXEC_OP_MatMul, 2, in, 2, (int64_t[]){ ta, tb }), i < 3 ? 0.90 : 0.0);
    }
    printf("\n");

    static const layer layers[] = {
        { "AlexNet conv1 224x224x3->64 11x11/4", 3, 224, 224, 64, 11, 4, 2 },
        { "AlexNet conv2 27x27x64->192 5x5", 64, 27, 27, 192, 5, 1, 2 },
        { "ResNet-50 conv1 224x224x3->64 7x7/2", 3, 224, 224, 64, 7, 2, 3 },
        { "ResNet-50 3x3/2 56x56x128->128", 128, 56, 56, 128, 3, 2, 1 },
        { "VGG-19 conv1_1 224x224x3->64 3x3", 3, 224, 224, 64, 3, 1, 1 },
        { "VGG-19 conv1_2 224x224x64->64 3x3", 64, 224, 224, 64, 3, 1, 1 },
        { "VGG-19 conv3_1 56x56x128->256 3x3", 128, 56, 56, 256, 3, 1, 1 },
        { "ResNet-50 3x3 56x56x64->64", 64, 56, 56, 64, 3, 1, 1 },
        { "VGG small 64x64x3->16 3x3", 3, 64, 64, 16, 3, 1, 1 },
        { "VGG small 64x64x16->16 3x3", 16, 64, 64, 16, 3, 1, 1 },
        { "VGG small 32x32x16->32 3x3", 16, 32, 32, 32, 3, 1, 1 },
        { "VGG small 32x32x32->32 3x3", 32, 32, 32, 32, 3, 1, 1 },
        { "VGG small 16x16x64->64 3x3", 64, 16, 16, 64, 3, 1, 1 },
        { "VGG small 8x8x128->128 3x3", 128, 8, 8, 128, 3, 1, 1 },
        { "VGG small 4x4x128->128 3x3", 128, 4, 4, 128, 3, 1, 1 },
        { "ResNet-50 1x1 56x56x64->256", 64, 56, 56, 256, 1, 1, 0 },
        { "ResNet-50 3x3 14x14x256->256", 256, 14, 14, 256, 3, 1, 1 },
        { "ResNet-50 3x3 7x7x512->512", 512, 7, 7, 512, 3, 1, 1 },
        { "DQN conv1 84x84x4->32 8x8/4", 4, 84, 84, 32, 8, 4, 0 },
        { "DQN conv2 20x20x32->64 4x4/2", 32, 20, 20, 64, 4, 2, 0 },
        { "DQN conv3 9x9x64->64 3x3", 64, 9, 9, 64, 3, 1, 0 },
    };
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
        const layer *L = &layers[i];
        if (!strstr(L->name, only))
            continue;
        int64_t oh = (L->h + 2 * L->p - L->k) / L->s + 1, ow = (L->w + 2 * L->p - L->k) / L->s + 1;
        tdesc x = { 4, { batch, L->c, L->h, L->w } }, f = { 4, { L->oc, L->c, L->k, L->k } };
        tdesc dy = { 4, { batch, L->oc, oh, ow } };
        /* each op im2col, direct (ops/conv_direct.c), Winograd (3x3
         * stride 1), then as AUTO picks, which has the target */
        const struct {
            exec_op op;
            tdesc in[2];
            int64_t attrs[8];
            int nattrs;
            double target;
        } ops[] = {
            { EXEC_OP_Conv2D, { x, f }, { L->s, L->s, L->p, L->p }, 4, 0.75 },
            { EXEC_OP_Conv2DBackpropInput, { f, dy }, { L->s, L->s, L->p, L->p, batch, L->c, L->h, L->w }, 8, 0.65 },
            { EXEC_OP_Conv2DBackpropFilter, { x, dy }, { L->s, L->s, L->p, L->p, L->oc, L->c, L->k, L->k }, 8, 0.65 },
        };
        static const struct {
            exec_conv_algo a;
            const char *tag;
        } algos[] = { { EXEC_CONV_IM2COL, "im2col" },
                      { EXEC_CONV_DIRECT, "direct" },
                      { EXEC_CONV_WINOGRAD, "wino" },
                      { EXEC_CONV_AUTO, "auto" } };
        const size_t nalgo = sizeof algos / sizeof algos[0];
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
            for (size_t j = 0; j < nalgo; j++) {
                char what[128];
                if (algos[j].a == EXEC_CONV_WINOGRAD && (L->k != 3 || L->s != 1))
                    continue;
                exec_conv_algo_set(algos[j].a);
                snprintf(what, sizeof what, "%-20s %-6s %s", exec_op_name(ops[o].op), algos[j].tag, L->name);
                report(what, bench_node(ops[o].op, 2, ops[o].in, ops[o].nattrs, ops[o].attrs),
                       j == nalgo - 1 ? ops[o].target : 0.0);
            }
    }
    /* memory-bound ops at AlexNet small's first LRN (conv1: 32 channels of
     * 31x31) and a batch norm of ResNet small's first stage (16 channels
     * of 32x32 at batch 16) */
    {
        const int64_t B = batch;
        tdesc a = { 4, { B, 32, 31, 31 } }, b = { 4, { B, 16, 32, 32 } }, v = { 1, { 16 } };
        const int64_t lrn[4] = { 2, exec_attr_f(2.0f), exec_attr_f(1e-4f), exec_attr_f(0.75f) };
        const int64_t bn[3] = { exec_attr_f(1e-3f), exec_attr_f(0.9f), 1 }, bng[2] = { exec_attr_f(1e-3f), 1 };
        printf("\n");
        if (strstr("LRN AlexNet small conv1", only))
            bench_mem("LRN AlexNet small conv1", EXEC_OP_LRN, 1, &a, 4, lrn);
        if (strstr("LRNGrad AlexNet small conv1", only))
            bench_mem("LRNGrad AlexNet small conv1", EXEC_OP_LRNGrad, 3, (tdesc[]){ a, a, a }, 4, lrn);
        if (strstr("FusedBatchNorm ResNet small 32x32x16", only))
            bench_mem("FusedBatchNorm ResNet small 32x32x16", EXEC_OP_FusedBatchNorm, 5, (tdesc[]){ b, v, v, v, v }, 3,
                      bn);
        const tdesc px = { 4, { B, 16, 64, 64 } }, py = { 4, { B, 16, 32, 32 } };
        const int64_t pool[6] = { 2, 2, 2, 2, 0, 0 };
        if (strstr("MaxPool VGG small 64x64x16", only))
            bench_mem("MaxPool VGG small 64x64x16", EXEC_OP_MaxPool, 1, &px, 6, pool);
        const tdesc rx = { 4, { B, 64, 112, 112 } };
        const int64_t pool3[6] = { 3, 3, 2, 2, 1, 1 };
        if (strstr("MaxPool ResNet-50 112x112x64 3x3/2", only))
            bench_mem("MaxPool ResNet-50 112x112x64 3x3/2", EXEC_OP_MaxPool, 1, &rx, 6, pool3);
        const tdesc ry = { 4, { B, 64, 56, 56 } };
        if (strstr("MaxPoolGrad ResNet-50 112x112x64 3x3/2", only))
            bench_mem("MaxPoolGrad ResNet-50 112x112x64 3x3/2", EXEC_OP_MaxPoolGrad, 3, (tdesc[]){ rx, ry, ry }, 6,
                      pool3);
        if (strstr("MaxPoolGrad VGG small 64x64x16", only))
            bench_mem("MaxPoolGrad VGG small 64x64x16", EXEC_OP_MaxPoolGrad, 3, (tdesc[]){ px, py, py }, 6, pool);
        if (strstr("FusedBatchNormGrad ResNet small 32x32x16", only))
            bench_mem("FusedBatchNormGrad ResNet small 32x32x16", EXEC_OP_FusedBatchNormGrad, 5,
                      (tdesc[]){ b, b, v, v, v }, 2, bng);
    }
    printf("\n%d target(s) missed\n", g_missed);
    return strict && g_missed ? 1 : 0;
}
