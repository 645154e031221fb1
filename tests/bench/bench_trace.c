/* bench_trace.c -- what tracing costs (ctest label "bench"; not a timed test).
 *
 *   1. a disabled op pair: the tracepoints op_begin + op_end while no session
 *      enables them (the probe loaded, the hooks installed), per pair, both
 *      as the raw tracepoint sites and through the engine's hook table;
 *   2. an enabled op pair: the same hook calls inside a recording (the real
 *      recorder: blocking channel, vpid/vtid/procname contexts), per pair:
 *      paced (short batches, each after a pause in which the consumer
 *      drains the buffers: caches cold, as between real ops) and back to
 *      back (caches warm; the consumer kept up in our runs);
 *   3. the traced / untraced step-time ratio per workload, measured in the
 *      same run: steps alternate between hooks installed (recording) and
 *      none; the ratio of the median step times.  Every workload of the
 *      registry at --preset (default small), plus a small MLP on the engine.
 *
 * usage: bench_trace [--steps N] [--preset P] [--models a,b,...] [--pairs N]
 *                    [--subbuf BYTES] [--nsubbuf N]   (the channel; default: the recorder's)
 *                    [--contexts all|none]   (none: without the vpid/vtid/procname
 *                                             contexts, to see lttng-ust's own floor)
 *
 * After the ratios it prints, per workload, the ratio that the per-event
 * floor alone would give: 1 + 2 x floor x ops per step / untraced step,
 * with floor the cost of the schema's smallest event (step_begin, one u32)
 * back to back.  No instrumentation that emits two LTTng events per op can
 * do better than that bound, whatever the hooks do.
 * The targets (DESIGN section 4): disabled pair < 2 ns, enabled pair < 400
 * ns, ratio <= 1.02.  Exit status 0 unless a measurement could not be made
 * (targets are reported, not asserted). */
#define _GNU_SOURCE
#include "exec/build.h"
#include "exec/exec.h"
#include "models/model.h"
#include "tracer/hooks.h"
#include "tracer/record.h"
#include "tracer/tp.h"

#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A node to trace: MatMul-like, 2 inputs, 1 output, 2 attrs. */
static uint32_t ins[2] = { 1, 3 }, outs[1] = { 7 };
static exec_node fake = { .id = 0, .op = 0, .phase = EXEC_PHASE_forward, .nin = 2, .nout = 1, .nattrs = 2, .in = ins, .out = outs };

#define BATCH 10000

/* the hooks map tensor ids through the graph (exec_trace_tensor_id) */
static exec_graph *bench_graph(void)
{
    static exec_graph *g;
    if (!g)
        exec_graph_create(&g, 1);
    return g;
}

/* ns per pair through the hook table: nb batches of `batch` pairs, each
 * after a pause of pause_ns (0: back to back); the median over the batches,
 * and in *mean the mean over the whole loop, pauses left out. */
static double pair_batches(int nb, int batch, long pause_ns, double *mean)
{
    const exec_hooks *volatile hp = tracer_hooks_table();
    const exec_hooks *h = hp;
    exec_graph *g = bench_graph();
    double *bt = malloc((size_t)nb * sizeof *bt), sum = 0;
    uint64_t seq = 0;
    for (int b = 0; b < nb; b++) {
        if (pause_ns) {
            struct timespec pause = { 0, pause_ns };
            nanosleep(&pause, NULL);
        }
        double s = now_ns();
        for (int i = 0; i < batch; i++, seq++) {
            h->op_begin(g, &fake, seq);
            h->op_end(g, &fake, seq, 1000, 2000);
        }
        double t = now_ns() - s;
        sum += t;
        bt[b] = t / batch;
    }
    if (mean)
        *mean = sum / ((double)nb * batch);
    double m = median(bt, nb);
    free(bt);
    return m;
}

/* Back to back, in BATCH-pair batches: median over batches and overall. */
static void hook_pairs(long pairs, double *med, double *mean)
{
    int nb = (int)(pairs / BATCH);
    *med = pair_batches(nb < 1 ? 1 : nb, BATCH, 0, mean);
}

/* Paced: batches of PACED_BATCH pairs (about 150 KB of events, well inside
 * one sub-buffer set), each after a 10 ms pause in which the consumer
 * drains the buffers.  It came out higher than back to back here (570 vs
 * 448 ns): each batch starts with cold caches, as a pair between real ops
 * does. */
#define PACED_BATCH 1000
static double paced_pairs(int batches) { return pair_batches(batches, PACED_BATCH, 10 * 1000 * 1000, NULL); }

/* ns per event of op_begin alone, op_end alone (enabled). */
static void single_events(long n, double *b, double *e)
{
    const exec_hooks *volatile hp = tracer_hooks_table();
    const exec_hooks *h = hp;
    exec_graph *g = bench_graph();
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        h->op_begin(g, &fake, (uint64_t)i);
    double t1 = now_ns();
    for (long i = 0; i < n; i++)
        h->op_end(g, &fake, (uint64_t)i, 1000, 2000);
    *b = (t1 - t0) / (double)n;
    *e = (now_ns() - t1) / (double)n;
}

/* ns per pair of the raw tracepoint sites (disabled: the state check). */
static double raw_pairs(long pairs)
{
    struct fathom_tp_op o = { .op = 0, .cls = 1, .nin = 2, .nout = 1, .nattrs = 2, .in = ins, .out = outs,
                              .attrs = fake.attrs };
    const struct fathom_tp_op *volatile op = &o;
    double t0 = now_ns();
    for (long i = 0; i < pairs; i++) {
        lttng_ust_tracepoint(fathom, op_begin, (uint64_t)i, op);
        lttng_ust_tracepoint(fathom, op_end, (uint64_t)i, 1000, 2000);
    }
    return (now_ns() - t0) / (double)pairs;
}

/* ---- step ratios ------------------------------------------------------- */
typedef struct mlp { exec_graph *g; uint32_t x, y, loss; } mlp;

static int mlp_create(mlp *m)
{
    enum { B = 64, D = 512, H = 512, C = 10 };
    if (exec_graph_create(&m->g, 1))
        return -1;
    exec_graph *g = m->g;
    m->x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ B, D });
    m->y = exec_input(g, "y", EXEC_I32, 1, (int64_t[]){ B });
    uint32_t w1 = exec_weight(g, "w1", 2, (int64_t[]){ D, H }, EXEC_INIT_GLOROT);
    uint32_t b1 = exec_weight(g, "b1", 1, (int64_t[]){ H }, EXEC_INIT_ZERO);
    uint32_t w2 = exec_weight(g, "w2", 2, (int64_t[]){ H, C }, EXEC_INIT_GLOROT);
    uint32_t b2 = exec_weight(g, "b2", 1, (int64_t[]){ C }, EXEC_INIT_ZERO);
    uint32_t h = ex_relu(g, ex_bias_add(g, ex_matmul(g, m->x, w1, 0, 0), b1, 1));
    m->loss = ex_sparse_softmax_xent(g, ex_bias_add(g, ex_matmul(g, h, w2, 0, 0), b2, 1), m->y);
    if (exec_gradients(g, m->loss) || exec_optimizer_sgd(g, 0.01f) || exec_graph_status(g) || exec_graph_plan(g))
        return -1;
    float *x = exec_dataf(g, m->x);
    for (int i = 0; i < B * D; i++)
        x[i] = (float)(i % 13) / 13.0f - 0.5f;
    for (int i = 0; i < B; i++)
        exec_datai(g, m->y)[i] = i % C;
    return 0;
}

typedef exec_status (*step_fn)(void *ctx);
static exec_status mlp_step(void *ctx)
{
    exec_run_opts o = { .inter = 1, .max_phase = EXEC_PHASE_update };
    return exec_graph_run(((mlp *)ctx)->g, &o);
}
static exec_status model_step_fn(void *ctx)
{
    float loss;
    return model_step((model *)ctx, &loss);
}

/* What ratio() measured, for the floor bound printed at the end. */
#define MAX_RATIOS 16
typedef struct measured_ratio { const char *name; double ops, untraced_ns; } measured_ratio;
static measured_ratio measured[MAX_RATIOS];
static int nmeasured;

/* Alternates traced (hooks) and untraced (none) steps; prints the ratio. */
static int ratio(const char *name, step_fn step, void *ctx, int steps)
{
    double *on = malloc((size_t)steps * sizeof *on), *off = malloc((size_t)steps * sizeof *off);
    uint64_t ops0 = exec_ops_dispatched();
    for (int w = 0; w < 3; w++) /* warm up */
        if (step(ctx))
            return -1;
    uint64_t per_step = (exec_ops_dispatched() - ops0) / 3;
    char err[256];
    for (int i = 0; i < steps; i++) {
        for (int traced = 0; traced < 2; traced++) {
            int t = (i & 1) ? !traced : traced; /* alternate the order too */
            if (t)
                tracer_hooks_install(err, sizeof err);
            else
                tracer_hooks_remove();
            double s = now_ns();
            if (step(ctx))
                return -1;
            (t ? on : off)[i] = now_ns() - s;
        }
    }
    tracer_hooks_remove();
    double mon = median(on, steps), moff = median(off, steps);
    printf("ratio %-12s %8.3f ms untraced %8.3f ms traced  ratio %.4f  (%llu ops/step, %.0f ns/op added)%s\n", name,
           moff * 1e-6, mon * 1e-6, mon / moff, (unsigned long long)per_step,
           per_step ? (mon - moff) / (double)per_step : 0.0, mon / moff <= 1.02 ? "" : "  > 1.02");
    if (nmeasured < MAX_RATIOS)
        measured[nmeasured++] = (measured_ratio){ name, (double)per_step, moff };
    free(on);
    free(off);
    return 0;
}

static int child_enabled(int steps, const char *preset, const char *models, long pairs)
{
    char err[512];
    if (tracer_hooks_install_from_env(err, sizeof err) != 1) {
        fprintf(stderr, "bench_trace: not a traced run: %s\n", err);
        return 1;
    }
    int rc = 0;
    if (!models || strstr(models, "mlp")) {
        mlp m;
        if (mlp_create(&m) || ratio("mlp", mlp_step, &m, steps))
            rc = fprintf(stderr, "bench_trace: mlp: %s\n", exec_errmsg()) > 0;
        exec_graph_destroy(m.g);
    }
    for (int i = 0; i < model_registry_count; i++) {
        const model_def *d = model_registry[i];
        if (models && !strstr(models, d->name))
            continue;
        model_config cfg = { .mode = MODEL_TRAIN, .preset = (model_preset)model_preset_from_name(preset), .seed = 1,
                             .inter = 1, .plan = true };
        model *m = NULL;
        if (model_create(d, &cfg, &m) || ratio(d->name, model_step_fn, m, steps)) {
            fprintf(stderr, "bench_trace: %s: %s\n", d->name, exec_errmsg());
            rc = 1;
        }
        model_destroy(m);
        fflush(stdout);
    }
    /* last: the pair loops fill the buffers, which would slow the steps */
    double paced = paced_pairs(200);
    printf("enabled  pair (hooks -> tracepoints, recording): %.1f ns median of %d-pair batches after a pause each"
           "%s\n", paced, PACED_BATCH, paced < 400 ? "" : "  (target < 400 ns)");
    double med, mean;
    hook_pairs(pairs, &med, &mean);
    printf("enabled  pair back to back: %.1f ns median of %ld-pair batches, %.1f "
           "ns over %ld pairs\n", med, (long)BATCH, mean, pairs);
    double eb, ee;
    single_events(pairs / 4, &eb, &ee);
    /* the floor: the schema's smallest event (one u32, plus the contexts) */
    const exec_hooks *h = tracer_hooks_table();
    long nf = pairs / 4;
    double t0 = now_ns();
    for (long i = 0; i < nf; i++)
        h->step_begin((uint32_t)i);
    double floor_ns = (now_ns() - t0) / (double)nf;
    printf("enabled  op_begin alone %.1f ns, op_end alone %.1f ns, step_begin (one u32: the per-event floor) %.1f ns\n",
           eb, ee, floor_ns);
    for (int i = 0; i < nmeasured; i++)
        printf("bound    %-12s two floor events per op alone: ratio %.4f\n", measured[i].name,
               1.0 + 2.0 * floor_ns * measured[i].ops / measured[i].untraced_ns);
    fflush(stdout);
    return rc;
}

static int child_disabled(long pairs)
{
    char err[512];
    if (tracer_hooks_install(err, sizeof err) != 0) {
        fprintf(stderr, "bench_trace: %s\n", err);
        return 1;
    }
    double med, mean;
    raw_pairs(pairs); /* warm */
    double raw = raw_pairs(pairs * 10);
    hook_pairs(pairs * 10, &med, &mean);
    printf("disabled pair (raw tracepoint sites): %.2f ns%s\n", raw, raw < 2 ? "" : "  (target < 2 ns)");
    printf("disabled pair (hooks installed, tracepoints off): %.2f ns\n", med);
    tracer_hooks_remove();
    return 0;
}

int main(int argc, char **argv)
{
    int steps = 30;
    long pairs = 200000;
    const char *preset = "small", *models = NULL;
    size_t subbuf = 0, nsubbuf = 0;
    int no_contexts = 0;
    if (argc >= 2 && !strcmp(argv[1], "child-disabled"))
        return child_disabled(atol(argv[2]));
    if (argc >= 2 && !strcmp(argv[1], "child-enabled"))
        return child_enabled(atoi(argv[2]), argv[3], argc > 5 ? argv[5] : NULL, atol(argv[4]));
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--steps"))
            steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--preset"))
            preset = argv[i + 1];
        else if (!strcmp(argv[i], "--models"))
            models = argv[i + 1];
        else if (!strcmp(argv[i], "--pairs"))
            pairs = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--subbuf"))
            subbuf = (size_t)atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--nsubbuf"))
            nsubbuf = (size_t)atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--contexts") && (!strcmp(argv[i + 1], "all") || !strcmp(argv[i + 1], "none")))
            no_contexts = !strcmp(argv[i + 1], "none");
        else {
            fprintf(stderr, "usage: bench_trace [--steps N] [--preset P] [--models a,b] [--pairs N] [--subbuf BYTES] "
                            "[--nsubbuf N] [--contexts all|none]\n");
            return 2;
        }
    }
    if (model_preset_from_name(preset) < 0) {
        fprintf(stderr, "bench_trace: unknown preset %s\n", preset);
        return 2;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 1;
    exe[n] = '\0';
    char np[32], ns[32];
    snprintf(np, sizeof np, "%ld", pairs);
    snprintf(ns, sizeof ns, "%d", steps);

    /* 1. disabled: a plain child, no session (and no FATHOM_TRACE) */
    char *dargv[] = { exe, "child-disabled", np, NULL };
    pid_t pid;
    int st;
    if (posix_spawn(&pid, exe, NULL, NULL, dargv, environ) != 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
        WEXITSTATUS(st)) {
        fprintf(stderr, "bench_trace: the disabled measurement failed\n");
        return 1;
    }
    fflush(stdout);

    /* 2 and 3: a recording, through the real recorder */
    char dir[] = "/tmp/fathom-bench-XXXXXX";
    const char *tmpdir = getenv("TMPDIR");
    char dbuf[PATH_MAX];
    snprintf(dbuf, sizeof dbuf, "%s/fathom-bench-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    char *d = mkdtemp(dbuf);
    if (!d)
        d = mkdtemp(dir);
    char *eargv[] = { exe, "child-enabled", ns, (char *)preset, np, (char *)models, NULL };
    tracer_record_opts o = { .argv = eargv, .out_dir = d, .label = "bench", .show_output = 1,
                             .subbuf_size = subbuf, .num_subbuf = nsubbuf, .no_contexts = no_contexts };
    static tracer_record_result r;
    char err[1024];
    tracer_record_status rs = tracer_record(&o, &r, err, sizeof err);
    int rc = 0;
    /* INCOMPLETE is expected: the bench fires op pairs outside any run */
    if (rs == TRACER_RECORD_OK || rs == TRACER_RECORD_INCOMPLETE) {
        printf("recorded %llu events, %llu discarded\n", (unsigned long long)r.stats.events,
               (unsigned long long)r.stats.discarded_events);
        if (r.stats.discarded_events)
            rc = 1;
        unlink(r.archive);
    } else {
        fprintf(stderr, "bench_trace: %s\n", err);
        rc = 1;
    }
    rmdir(d);
    return rc;
}
