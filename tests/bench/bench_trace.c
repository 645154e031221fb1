/* bench_trace.c -- what tracing costs (ctest label "bench"; not a timed test).
 *
 *   1. disabled: the `ops` tracepoint site while no session enables it (the
 *      probe loaded, the hooks installed), per event and per op of a batch;
 *   2. enabled, inside a recording (the real recorder: blocking channel,
 *      vpid/vtid/procname contexts): the executor's per-op path (two clock
 *      reads, a buffered record, one `ops` event per buffer) in ns per op,
 *      and one smallest event (step_begin) for scale;
 *   3. the traced / untraced step-time ratio per workload, measured in the
 *      same run: steps alternate between hooks installed (recording) and
 *      none; per round (--rounds, default 5, of --steps pairs) the ratio of
 *      the median step times, and the median of the rounds.  Every workload of the
 *      registry at --preset (default small), plus a small MLP on the engine.
 *      Beside it, where the cost goes, in CPU time (which other processes'
 *      load disturbs less than the step's wall time): the process's CPU
 *      time a step, traced and untraced (medians), and the CPU time the
 *      LTTng daemons (session, consumer, relay) spent during the traced
 *      steps, each per op.  On a machine with as many cores as the run has
 *      threads, the daemons' time is taken from the run.
 *
 * usage: bench_trace [--steps N] [--rounds R] [--preset P] [--models a,b,...] [--pairs N]
 *                    [--subbuf BYTES] [--nsubbuf N]   (the channel; default: the recorder's)
 *                    [--contexts all|none]
 *                    [--relay net://HOST:CTRL:DATA [--restate S]]  (stream live, with the
 *                    statedump for late viewers every S s: the recorder's default 1)
 *                    [--clock both]   (a third kind of step, traced with the op clock
 *                    on clock_gettime(): what the TSC saves, in the same run)
 *
 * Targets (docs/design.md, "The trace", schema 3): disabled under 2 ns an op, traced /
 * untraced at most 1.01 on every workload.  Exit status 0 unless a
 * measurement could not be made (targets are reported, not asserted).
 * tests/bench/bench_schema.sh compares archive bytes per op and analysis
 * speed of schema 1 and 2. */
#define _GNU_SOURCE
#include "base/clock.h"
#include "exec/build.h"
#include "exec/exec.h"
#include "models/model.h"
#include "tracer/hooks.h"
#include "tracer/opspack.h"
#include "tracer/record.h"
#include "tracer/tp.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_stats.h"

extern char **environ;

static double now_ns(void) { return (double)base_now_ns(); }

/* CPU time of every thread of this process, in ns (base/clock.h) */
static double cpu_ns(void) { return (double)base_cpu_ns(); }

/* CPU time of the LTTng daemons so far (lttng-sessiond, -consumerd,
 * -relayd: /proc/PID/stat's utime and stime), in ns; -1 where /proc says
 * nothing of them (clock ticks: 10 ms at 100 Hz, coarse over a short run) */
static double daemons_cpu_ns(void)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    double ticks = 0;
    int seen = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%.20s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        char *l = strchr(buf, '('), *r = strrchr(buf, ')');
        if (!l || !r ||
            (strncmp(l, "(lttng-sessiond)", 16) && strncmp(l, "(lttng-consumerd)", 17) &&
             strncmp(l, "(lttng-relayd)", 14)))
            continue;
        /* after ") ": the state, then utime and stime are the 12th and 13th numbers */
        unsigned long long ut = 0, st = 0;
        if (sscanf(r + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) == 2)
            ticks += (double)(ut + st), seen = 1;
    }
    closedir(d);
    return seen ? ticks * 1e9 / (double)sysconf(_SC_CLK_TCK) : -1;
}

/* The enabled per-op path as the executor runs it (executor.c,
 * dispatch_traced): two clock reads and three stores per op, and one `ops`
 * event through the hook table per `cap` records. ns per op over n ops. */
static double record_ops(long n, uint32_t cap)
{
    const exec_hooks *volatile hp = tracer_hooks_table();
    const exec_hooks *h = hp;
    static exec_graph *g;
    if (!g)
        exec_graph_create(&g, 1);
    uint32_t *nodes = malloc(cap * sizeof *nodes);
    uint64_t *begins = malloc(cap * sizeof *begins), *ends = malloc(cap * sizeof *ends);
    struct timespec ts;
    uint32_t k = 0;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t b = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        nodes[k] = (uint32_t)i & 1023;
        begins[k] = b;
        ends[k] = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
        if (++k == cap) {
            h->ops(h->ctx, g, k, nodes, begins, ends);
            k = 0;
        }
    }
    double per = (now_ns() - t0) / (double)n;
    free(nodes);
    free(begins);
    free(ends);
    return per;
}

/* ns per `ops` event of `cap` records through the raw tracepoint site
 * (disabled: the state check alone). */
static double raw_ops_events(long n, uint32_t cap)
{
    uint32_t *nodes = calloc(cap, sizeof *nodes);
    uint64_t *t = calloc(cap, sizeof *t);
    struct fathom_tp_ops o = {
        .graph = 0, .n = cap, .npacked = cap, .nodes = nodes, .gaps = nodes, .durations = nodes, .begins = t, .ends = t
    };
    const struct fathom_tp_ops *volatile op = &o;
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        lttng_ust_tracepoint(fathom, ops, op);
    double per = (now_ns() - t0) / (double)n;
    free(nodes);
    free(t);
    return per;
}

/* ns per record of packing batches of `cap` records (tracer/opspack.h, as
 * the provider does before each ops event), over n records. */
static double pack_ops(long n, uint32_t cap)
{
    uint64_t *b = malloc(cap * sizeof *b), *e = malloc(cap * sizeof *e);
    uint32_t *off = malloc(2 * (size_t)cap * sizeof *off);
    uint64_t t = base_now_ns(), sum = 0;
    for (uint32_t i = 0; i < cap; i++) { /* ops of 1 to 4 us, back to back */
        b[i] = t;
        e[i] = t += 1000 + 1000 * (i % 4);
    }
    long rounds = n / cap + 1;
    double t0 = now_ns();
    for (long r = 0; r < rounds; r++) {
        for (uint32_t i = 0; i < cap;) {
            int packed;
            i += tracer_ops_next(cap - i, b + i, e + i, off + i, off + cap + i, &packed);
        }
        sum += off[cap + (uint32_t)r % cap];
        e[cap - 1] += sum & 1; /* each round's input differs: nothing hoisted */
    }
    double per = (now_ns() - t0) / (double)(rounds * cap);
    free(b);
    free(e);
    free(off);
    return per;
}

/* ---- step ratios ------------------------------------------------------- */
typedef struct mlp {
    exec_graph *g;
    uint32_t x, y, loss;
} mlp;

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

/* Alternates traced (hooks) and untraced (none) steps; prints the ratio. */
static int g_rounds = 5;
/* --clock both: a third kind of step, traced with the op clock on
 * clock_gettime() (the other traced steps read the TSC where it is usable) */
static int g_clocks;

/* Alternates traced (hooks) and untraced (none) steps, in g_rounds rounds
 * of `steps` pairs: each round's ratio of the median step times, and the
 * median of the rounds. */
static int ratio(const char *name, step_fn step, void *ctx, int steps)
{
    double *on = malloc((size_t)steps * sizeof *on), *off = malloc((size_t)steps * sizeof *off);
    double *con = malloc((size_t)steps * sizeof *con), *coff = malloc((size_t)steps * sizeof *coff);
    double *mono = malloc((size_t)steps * sizeof *mono), *cmono = malloc((size_t)steps * sizeof *cmono);
    double rr[64], rm[64], mon_all = 0, moff_all = 0, mmono_all = 0, cpu_on = 0, cpu_off = 0, cpu_mono = 0;
    int kinds = g_clocks ? 3 : 2;
    int rounds = g_rounds < 64 ? g_rounds : 64;
    tracer_hooks_install(); /* warm up, traced: counts the ops */
    /* a run as the runner makes it: run_begin, and step events around each
     * traced step (where a live recording's statedumps happen) */
    exec_run_info info = { .model = name,
                           .mode = "train",
                           .preset = "bench",
                           .version = "bench",
                           .blas = "",
                           .cpu = "",
                           .steps = (uint32_t)steps };
    exec_trace_run_begin(&info);
    uint64_t ops0 = exec_ops_dispatched();
    for (int w = 0; w < 3; w++)
        if (step(ctx))
            return -1;
    uint64_t per_step = (exec_ops_dispatched() - ops0) / 3;
    double dmn0 = daemons_cpu_ns();
    /* BENCH_TRACE_STEPLOG=FILE: each step's kind and CLOCK_MONOTONIC span, to
     * attribute `perf record -k mono` samples to traced or untraced steps */
    const char *logp = getenv("BENCH_TRACE_STEPLOG");
    FILE *steplog = logp && *logp ? fopen(logp, "a") : NULL;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < steps; i++) {
            for (int traced = 0; traced < kinds; traced++) {
                int t = (traced + i) % kinds; /* alternate the order too */
                if (t)
                    tracer_hooks_install();
                else
                    tracer_hooks_remove();
                if (g_clocks)
                    exec_trace_clock_set(t == 2 ? EXEC_TRACE_CLOCK_MONOTONIC : EXEC_TRACE_CLOCK_AUTO);
                double s = now_ns(), c = cpu_ns();
                if (t)
                    exec_trace_step_begin((uint32_t)i);
                if (step(ctx))
                    return -1;
                if (t)
                    exec_trace_step_end((uint32_t)i, 0.0);
                (t == 2 ? mono : t ? on : off)[i] = now_ns() - s;
                (t == 2 ? cmono : t ? con : coff)[i] = cpu_ns() - c;
                if (steplog)
                    fprintf(steplog, "%s %d %.0f %.0f\n", name, t, s, now_ns());
            }
        }
        double mon = bench_median(on, steps), moff = bench_median(off, steps);
        rr[r] = mon / moff;
        mon_all += mon / rounds, moff_all += moff / rounds;
        cpu_on += bench_median(con, steps) / rounds, cpu_off += bench_median(coff, steps) / rounds;
        if (g_clocks) {
            double mm = bench_median(mono, steps);
            rm[r] = mm / moff;
            mmono_all += mm / rounds;
            cpu_mono += bench_median(cmono, steps) / rounds;
        }
    }
    if (steplog)
        fclose(steplog);
    if (g_clocks)
        exec_trace_clock_set(EXEC_TRACE_CLOCK_AUTO);
    /* the daemons' share, over every traced step of the rounds */
    double dmn1 = daemons_cpu_ns(), traced_ops = (double)per_step * steps * rounds;
    /* a live recording's statedump (hooks.c): each graph describes its
     * nodes again, with their totals, before its next run; its cost is the
     * traced step's time with one minus without (medians) */
    double dump_us = -1;
    if (getenv(TRACER_ENV_RESTATE) && steps >= 4) {
        for (int i = 0; i < steps; i++) {
            for (int dump = 0; dump < 2; dump++) {
                if (dump)
                    exec_trace_restate();
                double s = now_ns();
                if (step(ctx))
                    return -1;
                (dump ? on : off)[i] = now_ns() - s;
            }
        }
        /* the fastest of each: a loaded machine's noise (ms) would swamp the tens of us */
        double mon = on[0], moff = off[0];
        for (int i = 1; i < steps; i++)
            mon = on[i] < mon ? on[i] : mon, moff = off[i] < moff ? off[i] : moff;
        dump_us = (mon - moff) * 1e-3;
    }
    tracer_hooks_remove();
    if (getenv(TRACER_ENV_RESTATE) && steps >= 4)
        printf("statedump    %-12s %8.1f us (node_defs and graph_totals of its graphs): once a second, %.4f%% of the "
               "time\n",
               name, dump_us, dump_us * 1e-4);
    double sorted[64];
    memcpy(sorted, rr, (size_t)rounds * sizeof *rr);
    double med = bench_median(sorted, rounds), lo = sorted[0], hi = sorted[rounds - 1];
    printf("ratio %-12s %8.3f ms untraced %8.3f ms traced  ratio %.4f (rounds %.4f-%.4f)  (%llu ops/step, %.0f ns/op "
           "added)%s\n",
           name, moff_all * 1e-6, mon_all * 1e-6, med, lo, hi, (unsigned long long)per_step,
           per_step ? (mon_all - moff_all) / (double)per_step : 0.0, med <= 1.01 ? "" : "  > 1.01");
    printf("cpu   %-12s %8.3f ms untraced %8.3f ms traced  in the process %+.0f ns/op, in the LTTng daemons ", name,
           cpu_off * 1e-6, cpu_on * 1e-6, per_step ? (cpu_on - cpu_off) / (double)per_step : 0.0);
    if (dmn0 >= 0 && dmn1 >= 0 && traced_ops > 0)
        printf("%.0f ns/op\n", (dmn1 - dmn0) / traced_ops * (kinds - 1));
    else
        printf("? (not in /proc)\n");
    if (g_clocks) {
        memcpy(sorted, rm, (size_t)rounds * sizeof *rm);
        double mmed = bench_median(sorted, rounds);
        printf("clock %-12s %8.3f ms traced on clock_gettime  ratio %.4f (rounds %.4f-%.4f); cpu %+.0f ns/op in the "
               "process against the %s steps'\n",
               name, mmono_all * 1e-6, mmed, sorted[0], sorted[rounds - 1],
               per_step ? (cpu_mono - cpu_on) / (double)per_step : 0.0,
               exec_trace_clock_get() == EXEC_TRACE_CLOCK_TSC ? "TSC" : "(also clock_gettime)");
    }
    free(on);
    free(off);
    free(con);
    free(coff);
    free(mono);
    free(cmono);
    return 0;
}

static int child_enabled(int steps, const char *preset, const char *models, long pairs)
{
    int traced = 0;
    if (tracer_hooks_install_from_env(&traced) != TRACER_OK || !traced) {
        fprintf(stderr, "bench_trace: not a traced run: %s\n", traced ? "" : base_errmsg());
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
        model_config cfg = { .mode = MODEL_TRAIN,
                             .preset = (model_preset)model_preset_from_name(preset),
                             .seed = 1,
                             .inter = 1,
                             .plan = true };
        model *m = NULL;
        if (model_create(d, &cfg, &m) || ratio(d->name, model_step_fn, m, steps)) {
            fprintf(stderr, "bench_trace: %s: %s\n", d->name, exec_errmsg());
            rc = 1;
        }
        model_destroy(m);
        fflush(stdout);
    }
    /* last: these loops fill the buffers, which would slow the steps */
    uint32_t cap = exec_trace_buffer_get();
    const exec_hooks *h = tracer_hooks_table();
    if (getenv(TRACER_ENV_RESTATE)) /* inside a step: the statedump's totals are kept too */
        h->step_begin(h->ctx, 0);
    record_ops(pairs / 10, cap); /* warm */
    double per_op = record_ops(pairs, cap);
    if (getenv(TRACER_ENV_RESTATE))
        h->step_end(h->ctx, 0, 0.0);
    printf("enabled  per op (two clock_gettime() reads, a buffered record, one ops event per %u records%s): %.1f ns\n",
           cap, getenv(TRACER_ENV_RESTATE) ? ", each node's totals kept" : "", per_op);
    long nf = pairs / 4;
    double t0 = now_ns();
    for (long i = 0; i < nf; i++)
        h->step_begin(h->ctx, (uint32_t)i);
    double floor_ns = (now_ns() - t0) / (double)nf;
    printf("enabled  one LTTng-UST event of one u32 (step_begin, the per-event floor): %.1f ns\n", floor_ns);
    pack_ops(pairs / 10, cap); /* warm */
    printf("packing  the records into 12 bytes each (tracer/opspack.h), batches of %u: %.2f ns a record\n", cap,
           pack_ops(pairs * 10, cap));
    fflush(stdout);
    return rc;
}

static int child_disabled(long pairs)
{
    if (tracer_hooks_install() != TRACER_OK) {
        fprintf(stderr, "bench_trace: %s\n", base_errmsg());
        return 1;
    }
    uint32_t cap = exec_trace_buffer_get();
    raw_ops_events(pairs, cap); /* warm */
    double ev = raw_ops_events(pairs * 10, cap);
    printf(
        "disabled ops event site (no session enables it): %.2f ns an event, %.4f ns an op at %u records an event%s\n",
        ev, ev / cap, cap, ev / cap < 2 ? "" : "  (target < 2 ns)");
    tracer_hooks_remove();
    return 0;
}

int main(int argc, char **argv)
{
    int steps = 30;
    long pairs = 200000;
    const char *preset = "small", *models = NULL, *relay = NULL;
    double restate = 0;
    size_t subbuf = 0, nsubbuf = 0;
    int no_contexts = 0;
    if (argc >= 2 && !strcmp(argv[1], "child-disabled"))
        return child_disabled(atol(argv[2]));
    const char *rounds = getenv("BENCH_TRACE_ROUNDS");
    if (rounds && atoi(rounds) > 0)
        g_rounds = atoi(rounds);
    g_clocks = getenv("BENCH_TRACE_CLOCKS") != NULL;
    if (argc >= 2 && !strcmp(argv[1], "child-enabled"))
        return child_enabled(atoi(argv[2]), argv[3], argc > 5 ? argv[5] : NULL, atol(argv[4]));
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--steps"))
            steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds"))
            setenv("BENCH_TRACE_ROUNDS", argv[i + 1], 1); /* for the recorded child */
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
        else if (!strcmp(argv[i], "--relay"))
            relay = argv[i + 1];
        else if (!strcmp(argv[i], "--restate"))
            restate = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--clock") && !strcmp(argv[i + 1], "both"))
            setenv("BENCH_TRACE_CLOCKS", "1", 1); /* for the recorded child */
        else {
            fprintf(
                stderr,
                "usage: bench_trace [--steps N] [--rounds R] [--preset P] [--models a,b] [--pairs N] [--subbuf BYTES] "
                "[--nsubbuf N] [--contexts all|none] [--relay net://HOST:CTRL:DATA [--restate S]] [--clock both]\n");
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
    tracer_record_opts o = { .argv = eargv,
                             .out_dir = d,
                             .label = "bench",
                             .show_output = 1,
                             .subbuf_size = subbuf,
                             .num_subbuf = nsubbuf,
                             .no_contexts = no_contexts,
                             .relay_url = relay,
                             .restate_s = restate };
    static tracer_record_result r;
    tracer_record_status rs = tracer_record(&o, &r);
    const char *err = base_errmsg();
    int rc = 0;
    /* INCOMPLETE is expected: the bench fires op pairs outside any run */
    if (relay && rs == TRACER_RECORD_OK) {
        printf("streamed to %s\n", relay);
    } else if (rs == TRACER_RECORD_OK || rs == TRACER_RECORD_INCOMPLETE) {
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
