/* bench_dispatch.c -- the executor's fixed cost per op, and the small ops of
 * the recurrent workloads' inference steps.
 *
 * Part 1, fixed cost: a graph of N tiny ops (a chain on [4]-element tensors,
 * so each kernel's arithmetic is a few ns) run untraced, sequentially; the
 * wall time of a run over N is the engine's cost per op: the run loop, the
 * dispatch through the op table and whatever a kernel pays before its first
 * element (a parallel region entered and found too small, a scratch
 * request). One chain per kind of kernel entry: Reshape (a copy), Add and
 * Sigmoid (the elementwise macros), BiasAdd, Split + ConcatV2 (data
 * movement), MatMul [1,4]x[4,4].
 *
 * Part 2, small ops: the shapes of one LSTM step of seq2seq's small preset
 * (batch 32, 128 units) and the decoder's output (vocab 4000), each op a
 * one-node chain run the same way; ns per op.
 *
 *   bench_dispatch [--threads N] [--ops N] [--seconds S] [--cpu]
 *
 * --cpu: the process's CPU time instead of the clock's (with --threads 1 on
 * a loaded machine, the time spent waiting for a core is left out). Every
 * number is the median of repeated runs. A benchmark (ctest label bench). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/build.h"
#include "exec/exec.h"

#include "bench_stats.h"

static clockid_t g_clock = CLOCK_MONOTONIC;
static double g_seconds = 0.5;

static double now(void)
{
    struct timespec ts;
    clock_gettime(g_clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Median seconds of one run of g (after a warm-up run); NAN on error. */
static double time_runs(exec_graph *g)
{
    exec_run_opts o = { .inter = 1, .max_phase = EXEC_PHASE_forward };
    if (exec_graph_run(g, &o) != EXEC_OK)
        return -1.0;
    double t[512];
    int n = 0;
    double start = now();
    while (n < 512 && (n < 5 || now() - start < g_seconds)) {
        double t0 = now();
        if (exec_graph_run(g, &o) != EXEC_OK)
            return -1.0;
        t[n++] = now() - t0;
    }
    qsort(t, (size_t)n, sizeof t[0], bench_cmp_double);
    return t[n / 2];
}

typedef enum { K_RESHAPE, K_ADD, K_SIGMOID, K_BIASADD, K_SPLITCAT, K_MATMUL, K_COUNT } kind;
static const char *const kind_name[K_COUNT] = { "Reshape [4]",   "Add [4]+[4]",    "Sigmoid [4]",
                                                "BiasAdd [1,4]", "Split+ConcatV2", "MatMul [1,4]x[4,4]" };

/* A chain of `ops` nodes of one kind on tiny tensors; the ops it holds in *nops. */
static exec_graph *tiny_chain(kind kd, int ops, int *nops)
{
    exec_graph *g = NULL;
    if (exec_graph_create(&g, 1))
        return NULL;
    uint32_t x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ 1, 4 });
    uint32_t w = exec_weight(g, "w", 2, (int64_t[]){ 4, 4 }, EXEC_INIT_GLOROT);
    uint32_t b = exec_weight(g, "b", 1, (int64_t[]){ 4 }, EXEC_INIT_ZERO);
    uint32_t y = x;
    *nops = 0;
    while (*nops < ops) {
        switch (kd) {
        case K_RESHAPE: y = ex_reshape(g, y, 2, (int64_t[]){ 1, 4 }); break;
        case K_ADD: y = ex_add(g, y, x); break;
        case K_SIGMOID: y = ex_sigmoid(g, y); break;
        case K_BIASADD: y = ex_bias_add(g, y, b, 1); break;
        case K_SPLITCAT: {
            uint32_t parts[2];
            ex_split(g, y, 1, 2, parts);
            y = ex_concat(g, 2, parts, 1);
            ++*nops;
            break;
        }
        case K_MATMUL: y = ex_matmul(g, y, w, 0, 0); break;
        default: break;
        }
        ++*nops;
    }
    if (exec_graph_status(g) || exec_graph_plan(g)) {
        fprintf(stderr, "bench_dispatch: %s\n", exec_errmsg());
        exec_graph_destroy(g);
        return NULL;
    }
    return g;
}

/* One node's graph at a seq2seq shape; ops = 1. */
typedef struct shape_case {
    const char *name;
    int which;
} shape_case;

static exec_graph *shape_graph(int which)
{
    exec_graph *g = NULL;
    if (exec_graph_create(&g, 1))
        return NULL;
    const int B = 32, U = 128, V = 4000;
    uint32_t h = exec_input(g, "h", EXEC_F32, 2, (int64_t[]){ B, U });
    uint32_t h2 = exec_input(g, "h2", EXEC_F32, 2, (int64_t[]){ B, U });
    uint32_t gates = exec_input(g, "gates", EXEC_F32, 2, (int64_t[]){ B, 4 * U });
    uint32_t logits = exec_input(g, "logits", EXEC_F32, 2, (int64_t[]){ B, V });
    uint32_t one = exec_const(g, "one", 1, (int64_t[]){ 1 }, 1.0f);
    uint32_t b4 = exec_weight(g, "b4", 1, (int64_t[]){ 4 * U }, EXEC_INIT_ZERO);
    uint32_t bv = exec_weight(g, "bv", 1, (int64_t[]){ V }, EXEC_INIT_ZERO);
    uint32_t st = exec_input(g, "states", EXEC_F32, 3, (int64_t[]){ 10, B, U });
    uint32_t parts[4];
    switch (which) {
    case 0: ex_sigmoid(g, h); break;
    case 1: ex_tanh(g, h); break;
    case 2: ex_mul(g, h, h2); break;
    case 3: ex_add(g, h, one); break;
    case 4: ex_bias_add(g, gates, b4, 1); break;
    case 5: ex_split(g, gates, 1, 4, parts); break;
    case 6: ex_concat(g, 2, (uint32_t[]){ h, h2 }, 1); break;
    case 7: ex_bias_add(g, logits, bv, 1); break;
    case 8: ex_argmax(g, logits, 1); break;
    case 9: ex_tanh(g, st); break;
    case 10: ex_add(g, st, h); break;
    case 11: ex_reshape(g, st, 2, (int64_t[]){ 10 * B, U }); break;
    default: break;
    }
    if (exec_graph_status(g) || exec_graph_plan(g)) {
        fprintf(stderr, "bench_dispatch: %s\n", exec_errmsg());
        exec_graph_destroy(g);
        return NULL;
    }
    return g;
}

static const char *const shape_name[] = {
    "Sigmoid [32,128]", "Tanh [32,128]",       "Mul [32,128]x[32,128]",    "Add [32,128]+[1]",
    "BiasAdd [32,512]", "Split [32,512] in 4", "ConcatV2 2x[32,128]",      "BiasAdd [32,4000]",
    "ArgMax [32,4000]", "Tanh [10,32,128]",    "Add [10,32,128]+[32,128]", "Reshape [10,32,128]",
};

int main(int argc, char **argv)
{
    int threads = 0, ops = 2000;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--threads"))
            threads = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--ops"))
            ops = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--seconds"))
            g_seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--cpu"))
            g_clock = CLOCK_PROCESS_CPUTIME_ID;
        else {
            fprintf(stderr, "usage: bench_dispatch [--threads N] [--ops N] [--seconds S] [--cpu]\n");
            return 2;
        }
    }
    if (ops < 2 || ops > 1000000 || g_seconds <= 0) {
        fprintf(stderr, "bench_dispatch: --ops wants 2..1000000 and --seconds a positive time\n");
        return 2;
    }
    exec_threads_set(threads);
    printf("threads %d, %s time; ns per op, median of runs\n", exec_threads_get(),
           g_clock == CLOCK_MONOTONIC ? "wall" : "CPU");
    int failed = 0;
    printf("-- fixed cost: chains of %d tiny ops\n", ops);
    for (int kd = 0; kd < K_COUNT; kd++) {
        int n = 0;
        exec_graph *g = tiny_chain((kind)kd, ops, &n);
        double t = g ? time_runs(g) : -1.0;
        exec_graph_destroy(g);
        failed |= t < 0;
        printf("%-28s %10.1f ns/op\n", kind_name[kd], t < 0 ? -1.0 : t * 1e9 / n);
    }
    printf("-- small ops at seq2seq's small shapes (one op a run; the run's own cost included)\n");
    for (int w = 0; w < (int)(sizeof shape_name / sizeof shape_name[0]); w++) {
        exec_graph *g = shape_graph(w);
        double t = g ? time_runs(g) : -1.0;
        exec_graph_destroy(g);
        failed |= t < 0;
        printf("%-28s %10.1f ns/op\n", shape_name[w], t < 0 ? -1.0 : t * 1e9);
    }
    return failed;
}
