/* tune.c -- `fathom tune`'s engine (see tune.h): the profile through the
 * engine's hooks, the proposals, the alternating measured runs, the pick. */
#include "replay/tune.h"
#include "replay/tune_machine.h"
#include "replay/tune_race.h"

#include "base/alloc.h"
#include "base/clock.h"
#include "tracer/critpath.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- profiling through the engine's hooks -------------------------------- */
/* One tuner's profile. Every instance it opens runs with `hooks`
 * (exec_settings.hooks, borrowed for the instance's life): during a
 * profiled step they are prof_ops on this profile; between, the process's
 * (a tracer's) or none, so the measured runs are timed as any other run. */
typedef struct prof {
    pthread_mutex_t mu;
    double type_ns[EXEC_OP_COUNT];
    double type_flops[EXEC_OP_COUNT], type_bytes[EXEC_OP_COUNT];
    double class_ns[EXEC_CLASS_COUNT];
    int flow;         /* keep the records' data flow */
    tracer_flow recs; /* the step's records (tracer/critpath.h) */
    uint32_t *idbuf;  /* one node's tensor ids */
    size_t idcap;
    int nomem;
    exec_hooks hooks; /* what the instances' runs see */
} prof;

static void prof_ops(void *ctx, const exec_graph *g, uint32_t n, const uint32_t *nodes, const uint64_t *begins,
                     const uint64_t *ends)
{
    prof *P = ctx;
    pthread_mutex_lock(&P->mu);
    for (uint32_t i = 0; i < n; i++) {
        const exec_node *nd = exec_node_get(g, nodes[i]);
        if (!nd)
            continue;
        uint64_t f = 0, b = 0, d = ends[i] > begins[i] ? ends[i] - begins[i] : 0;
        exec_node_cost(g, nd, &f, &b);
        P->type_ns[nd->op] += (double)d;
        P->type_flops[nd->op] += (double)f;
        P->type_bytes[nd->op] += (double)b;
        P->class_ns[exec_op_table[nd->op].cls] += (double)d;
        if (!P->flow || P->nomem)
            continue;
        size_t k = (size_t)nd->nin + (size_t)nd->nout;
        if (k > P->idcap) { /* the trace's tensor ids of this node, inputs first */
            uint32_t *v = base_realloc(P->idbuf, k * sizeof *v);
            if (!v) {
                P->nomem = 1;
                continue;
            }
            P->idbuf = v, P->idcap = k;
        }
        for (int j = 0; j < nd->nin; j++)
            P->idbuf[j] = exec_trace_tensor_id(g, nd->in[j]);
        for (int j = 0; j < nd->nout; j++)
            P->idbuf[nd->nin + j] = exec_trace_tensor_id(g, nd->out[j]);
        if (tracer_flow_add(&P->recs, begins[i], begins[i] + d, P->idbuf, (uint32_t)nd->nin, P->idbuf + nd->nin,
                            (uint32_t)nd->nout))
            P->nomem = 1;
    }
    pthread_mutex_unlock(&P->mu);
}

/* The instances' hooks between profiled steps: the process's, or none. */
static void prof_idle(prof *P)
{
    const exec_hooks *cur = exec_hooks_cur();
    P->hooks = cur ? *cur : (exec_hooks){ 0 };
}

static void prof_init(prof *P)
{
    memset(P, 0, sizeof *P);
    pthread_mutex_init(&P->mu, NULL);
    prof_idle(P);
}

static void prof_reset(prof *P, int flow)
{
    memset(P->type_ns, 0, sizeof P->type_ns);
    memset(P->type_flops, 0, sizeof P->type_flops);
    memset(P->type_bytes, 0, sizeof P->type_bytes);
    memset(P->class_ns, 0, sizeof P->class_ns);
    P->flow = flow;
    tracer_flow_clear(&P->recs);
    P->nomem = 0;
}

static void prof_free(prof *P)
{
    tracer_flow_free(&P->recs);
    base_free(P->idbuf);
    P->idbuf = NULL, P->idcap = 0;
    pthread_mutex_destroy(&P->mu);
}

/* The critical path of the step's records, added to *total and *cp. */
static exec_status critical_path(prof *P, double *total, double *cp)
{
    tracer_critpath c;
    if (tracer_flow_step(&P->recs, &c))
        return exec_fail(EXEC_ERR_NOMEM, "out of memory");
    *total += (double)c.total_ns;
    *cp += (double)c.critical_ns;
    return EXEC_OK;
}

/* ---- candidates ------------------------------------------------------------ */
/* Adds k (or gives the role to the same point already there); its index or -1 when full. */
static int add_cand(replay_tune_result *r, const replay_tune_knobs *k, const char *role, double pred)
{
    for (int i = 0; i < r->n; i++)
        if (replay_tune_same_knobs(&r->c[i].k, k)) {
            if (strcmp(role, "candidate") != 0 && strcmp(r->c[i].role, "candidate") == 0)
                r->c[i].role = role;
            else if (strcmp(role, "vendors") == 0 && strcmp(r->c[i].role, "defaults") == 0)
                r->c[i].role = "defaults = vendors";
            return i;
        }
    if (r->n >= REPLAY_TUNE_MAX_CANDIDATES)
        return -1;
    r->c[r->n] = (replay_tune_cand){ .k = *k, .role = role, .predicted_ns = pred };
    return r->n++;
}

static void line(replay_tune_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(replay_tune_result *r, const char *fmt, ...)
{
    if (r->nlines >= REPLAY_TUNE_MAX_LINES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->lines[r->nlines++], sizeof r->lines[0], fmt, ap);
    va_end(ap);
}

/* The op time per step predicted at t intra-op threads: the nearest
 * measured level at or below t (levels are sorted ascending). */
static double op_at(const replay_tune_result *r, int t)
{
    double v = r->level_op_ns[0];
    for (int i = 0; i < r->nlevels; i++)
        if (r->level_threads[i] <= t)
            v = r->level_op_ns[i];
    return v;
}

/* The step predicted at t intra-op threads shared by m inter-op workers,
 * plus rest (the time outside the ops): between the bounds of list
 * scheduling, for work W = the op time at t/m threads and a critical path C
 * scaled from the one-thread step alike: no schedule beats max(W/m, C), a
 * greedy one is no slower than W/m + C(1 - 1/m) (Graham). The midpoint: the
 * lower bound alone ranked two workers first where they lost to one by
 * 10-50% in sweeps (residual's, deepq's, the Transformer's training), the
 * upper bound alone ranked out vgg's training, whose two workers won by 7%. */
static double predict_step(const replay_tune_result *r, int t, int m, double rest)
{
    double w = op_at(r, t / m), c = r->op_ns > 0 ? r->critical_ns * w / r->op_ns : w;
    double lo = fmax(w / m, c), hi = w / m + c * (1 - 1.0 / m);
    return (lo + hi) / 2 + rest;
}

static void progress(const replay_tune_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const replay_tune_opts *o, const char *fmt, ...)
{
    if (!o->progress)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("\r\33[Kfathom tune: ", o->progress);
    vfprintf(o->progress, fmt, ap);
    fflush(o->progress);
    va_end(ap);
}

/* Open instances, each running one point at a time: with t->retune, one
 * per batch, switched between the points that share it (the engine's
 * settings are a run's: nothing else of the instance changes), and between
 * one inter-op worker (the calling thread) and one number of them above
 * (the process's pool starts anew at another number: each number's points,
 * an instance's, run back to back in a round); without it, one per point. */
typedef struct hosts {
    void *inst[REPLAY_TUNE_MAX_CANDIDATES + REPLAY_TUNE_MAX_LEVELS];
    replay_tune_knobs cur[REPLAY_TUNE_MAX_CANDIDATES + REPLAY_TUNE_MAX_LEVELS];
    int pool[REPLAY_TUNE_MAX_CANDIDATES + REPLAY_TUNE_MAX_LEVELS]; /* its inter-op workers above 1 (0: none yet) */
    int n;
    /* the points warmed up (a step at those knobs: threads started, AUTO's
     * convolution timings at that thread count taken) */
    replay_tune_knobs warm[REPLAY_TUNE_MAX_CANDIDATES + REPLAY_TUNE_MAX_LEVELS];
    int nwarm;
    /* 1: only a new instance, or one's first run with its pool, needs a
     * warm-up step (its memory touched, its data made, its threads
     * started); a switch of a warm one to other settings does not, as no
     * convolution of note has AUTO's per-thread-count timings to take */
    int new_only;
    int last_inter;          /* the inter-op workers of the last point run (0: none yet) */
    const exec_hooks *hooks; /* what every instance's runs see (the tuner's profile's) */
} hosts;

static int host_takes(const replay_tune_target *t, const hosts *h, int i, const replay_tune_knobs *k)
{
    if (!t->retune)
        return replay_tune_same_knobs(&h->cur[i], k);
    return h->cur[i].batch == k->batch && (k->inter <= 1 || h->pool[i] == 0 || h->pool[i] == k->inter);
}

/* The instance running k: an open one switched to k, or a new one; a first
 * step at k warms up a new instance or pool, and a switched one unless
 * new_only (*warm_ns its time, 0 when none ran), and an untimed step
 * starts the pool anew at another number of workers or after a point
 * without them (*ran_ns the time of the untimed step that ran, either,
 * 0 when none did). */
static exec_status host_get(const replay_tune_target *t, hosts *h, const replay_tune_knobs *k, void **inst,
                            double *warm_ns, double *ran_ns)
{
    exec_status s = EXEC_OK;
    int i = 0;
    *warm_ns = *ran_ns = 0;
    while (i < h->n && !host_takes(t, h, i, k))
        i++;
    int fresh = i == h->n;
    if (fresh) {
        if (h->n == (int)(sizeof h->inst / sizeof h->inst[0]))
            return exec_fail(EXEC_ERR_STATE, "tune: too many instances");
        if ((s = t->open(t->ctx, k, h->hooks, &h->inst[i])))
            return s;
        h->cur[i] = *k, h->pool[i] = 0;
        h->n++;
    } else if (!replay_tune_same_knobs(&h->cur[i], k)) {
        if ((s = t->retune(h->inst[i], k, h->hooks)))
            return s;
        h->cur[i] = *k;
    }
    if (k->inter > 1 && h->pool[i] == 0)
        h->pool[i] = k->inter, fresh = 1; /* its pool starts at this run */
    *inst = h->inst[i];
    /* a point is measured with its own threads alone, as in `fathom run`:
     * before one without inter-op workers, the pool's threads and their
     * OpenMP teams go (exec_workers_release: idle teams beside the calling
     * thread's slow its regions; on a 16-core machine speech's inference
     * at 16 threads took 40 ms a step beside them, 21 without); the pool
     * then starts anew at the next point with workers, as it does at
     * another number of them, and an untimed step takes the start */
    if (k->inter <= 1 && h->last_inter > 1)
        exec_workers_release();
    int restart = k->inter > 1 && k->inter != h->last_inter;
    h->last_inter = k->inter;
    int w = 0;
    while (w < h->nwarm && !replay_tune_same_knobs(&h->warm[w], k))
        w++;
    int warm_up = w == h->nwarm && (fresh || !h->new_only);
    if (warm_up || restart) {
        uint64_t ns = 0;
        if ((s = t->step(*inst, &ns)))
            return s;
        *ran_ns = (double)ns;
        if (warm_up)
            *warm_ns = (double)ns;
    }
    if (w == h->nwarm)
        h->warm[h->nwarm++] = *k;
    return EXEC_OK;
}

static void hosts_close(const replay_tune_target *t, hosts *h)
{
    for (int i = 0; i < h->n; i++)
        t->close(h->inst[i]);
    h->n = 0;
    exec_workers_release();
}

/* Steps of instance inst until *sum, their wall time added up, reaches
 * until_ns, or with slack comes within slack times the last step of it (a
 * step that would end past until_ns by more than that share of its length
 * is not run; the last of *n steps already in *sum taken as their mean):
 * at least one where *n is 0 (a first step), at most 1000 in all (*n
 * counts them). */
static exec_status steps_until(const replay_tune_target *t, void *inst, double until_ns, double slack, double *sum,
                               int *n)
{
    exec_status s = EXEC_OK;
    double last = *n > 0 ? *sum / *n : 0;
    while (!s && *n < 1000 && (*n == 0 || *sum + slack * last < until_ns)) {
        uint64_t v = 0;
        s = t->step(inst, &v);
        *sum += (double)v, last = (double)v, (*n)++;
    }
    return s;
}

/* What profile_level measured of one level. */
typedef struct level_meas {
    double total, cp; /* the first step's data flow: op time and critical path */
    double step_ns;   /* the profiled steps' mean wall time */
    double wall_ns;   /* their sum */
    double warm_ns;   /* the warm-up step's (0: none ran) */
    long preempt;     /* involuntary context switches during the profiled steps */
    int steps;        /* profiled steps */
    /* where the first step is shorter than a sample: the steps after it,
     * run until they last a sample, as one (tune_rounds: the point's
     * first) -- their mean and count; 0 where none */
    double sample_ns;
    int sample_steps;
} level_meas;

/* One measured level: op time per type in P, per step, over profiled
 * steps at k (warmed up first): one, or where steps are short as many as
 * last a sample (REPLAY_TUNE_SAMPLE_MS): one step of memnet's inference,
 * 0.3 ms, took 0.38-0.77 ms of op time at one thread in three profiles,
 * against 0.33 ms in the sweeps, and ranked one thread out where it was
 * the sweeps' best by 1.3x. The data flow (where flow) is the first
 * step's. Where that step is shorter than a sample, the steps after it
 * last a sample by themselves: the point's first sample in the rounds
 * (the hooks' cost, timed against the same steps without them, alternating
 * ten times: 0.96-1.05x at memnet's and autoenc's 0.4-8 ms steps, as often
 * below 1 as above). Steps of 2.5-10 ms ran until the first one and those
 * after it lasted a sample, which the rounds then measured again from
 * nothing (autoenc's training: 4 ms steps, three in the profile and three
 * more, with the settling steps before them, in the defaults' first
 * round). */
static exec_status profile_level(prof *P, const replay_tune_target *t, hosts *h, const replay_tune_knobs *k, int flow,
                                 level_meas *m)
{
    void *inst = NULL;
    *m = (level_meas){ 0 };
    double ran;
    exec_status s = host_get(t, h, k, &inst, &m->warm_ns, &ran);
    if (s)
        return s;
    const double sample_ns = REPLAY_TUNE_SAMPLE_MS * 1e6;
    prof_reset(P, flow);
    long p0 = replay_tune_preemptions();
    P->hooks = (exec_hooks){ .ctx = P, .ops = prof_ops };
    s = steps_until(t, inst, 0, 0, &m->wall_ns, &m->steps); /* one step, its records kept where flow */
    if (!s && m->warm_ns > 0 && m->wall_ns > 2 * m->warm_ns) {
        /* a first step that a busy moment stretched past twice the warm-up
         * step (which took the first touch and is no faster for real) is
         * run again, once: its op times stand for the level (autoenc's
         * tiny training under ASan: 113 ms at two threads, 3.6 at one) */
        prof_reset(P, flow);
        m->wall_ns = 0, m->steps = 0;
        s = steps_until(t, inst, 0, 0, &m->wall_ns, &m->steps);
    }
    P->flow = 0;
    if (!s && m->wall_ns < sample_ns) {
        double rest = 0;
        int n = 0;
        s = steps_until(t, inst, sample_ns, 0, &rest, &n);
        m->wall_ns += rest, m->steps += n;
        m->sample_ns = rest / n, m->sample_steps = n;
    }
    prof_idle(P);
    m->preempt = replay_tune_preemptions() - p0;
    if (!s && P->nomem)
        s = exec_fail(EXEC_ERR_NOMEM, "out of memory for the op records");
    if (!s && flow)
        s = critical_path(P, &m->total, &m->cp);
    for (int op = 0; op < EXEC_OP_COUNT; op++)
        P->type_ns[op] /= m->steps, P->type_flops[op] /= m->steps, P->type_bytes[op] /= m->steps;
    for (int c = 0; c < EXEC_CLASS_COUNT; c++)
        P->class_ns[c] /= m->steps;
    m->step_ns = m->wall_ns / m->steps;
    return s;
}

/* One measured sample of instance inst: steps until they took sample_ns
 * (1 to 1000 of them); *ns per recorded step, *steps how many. */
static exec_status sample(const replay_tune_target *t, void *inst, double sample_ns, double *ns, int *steps)
{
    double sum = 0;
    int n = 0;
    exec_status s = steps_until(t, inst, sample_ns, 0, &sum, &n);
    *ns = sum / n / (t->steps_per_run > 0 ? t->steps_per_run : 1);
    *steps += n;
    return s;
}

/* Untimed steps of instance inst until they, after an untimed step of
 * ran_ns that host_get ran (0: none), took settle_ns to the nearest step
 * (at least one step in all; slack 0.5: autoenc's training, 4.2 ms steps,
 * settles one step where two, 8.4 ms, were run for 5 ms; 2.6 ms steps
 * still two). */
static exec_status settle_steps(const replay_tune_target *t, void *inst, double settle_ns, double ran_ns)
{
    double sum = ran_ns;
    int n = ran_ns > 0;
    return steps_until(t, inst, settle_ns, 0.5, &sum, &n);
}

/* ---- one run of the tuner ---------------------------------------------------- */
enum { MAX_ROUNDS = REPLAY_TUNE_SAMPLES_MAX, TUNE_ROUNDS = 5 }; /* samples kept a candidate; rounds of a race */

/* What the phases of one run share (replay_tune: profile, propose,
 * rounds, pick). */
typedef struct tuner {
    const replay_tune_target *t; /* borrowed */
    const replay_tune_opts *o;   /* borrowed */
    replay_tune_result *r;       /* borrowed: what the run finds */
    prof P;
    hosts *h;
    double t0, budget;
    int fixed; /* a sweep or given points: a fixed set of points, no budget, no race */
    int B0, nb, spr;
    int batches[16];
    replay_tune_knobs def;                            /* fathom's defaults */
    replay_tune_knobs points[REPLAY_TUNE_MAX_POINTS]; /* the points to compare, completed */
    const char *bind_why;                             /* why no binding takes effect (NULL: one does) */
    /* the profile */
    double def_step_ns, min_step_ns;
    double flow_step_ns; /* the step whose data flow r holds */
    int one_prof;        /* the one-thread level's index in prof_k (-1: not profiled) */
    double one_est_s;    /* the one-thread level's predicted cost, where the budget left it out */
    replay_tune_knobs prof_k[REPLAY_TUNE_MAX_LEVELS]; /* the profiled points, their steps and warm-ups */
    double prof_ns[REPLAY_TUNE_MAX_LEVELS], prof_warm[REPLAY_TUNE_MAX_LEVELS];
    double prof_sample[REPLAY_TUNE_MAX_LEVELS]; /* level_meas.sample_ns (0: none) */
    int prof_sample_steps[REPLAY_TUNE_MAX_LEVELS];
    int nprof;
    /* the measured rounds (their samples: r->samples, the result's) */
    void **inst;
    int *active;
} tuner;

/* The points to compare, the knobs not given taking the defaults' values;
 * each must run here as given (as fathom run refuses what cannot). */
static exec_status tune_points(tuner *tu)
{
    for (int i = 0; i < tu->o->npoints; i++) {
        replay_tune_knobs *k = &tu->points[i];
        const replay_tune_knobs *def = &tu->def;
        *k = tu->o->points[i];
        k->threads = k->threads > 0 ? k->threads : def->threads;
        k->inter = k->inter > 0 ? k->inter : def->inter;
        k->conv_algo = k->conv_algo != EXEC_CONV_DEFAULT ? k->conv_algo : def->conv_algo;
        k->bind = k->bind != EXEC_BIND_DEFAULT ? k->bind : def->bind;
        k->batch = k->batch > 0 ? k->batch : def->batch;
        if (k->batch != tu->B0 && tu->t->batch_fixed)
            return exec_fail(EXEC_ERR_ARG, "--batch %d: a trace's batch is its own (%d)", k->batch, tu->B0);
        exec_status s = exec_bind_parse(exec_bind_name(k->bind), &k->bind);
        if (s)
            return s;
    }
    return EXEC_OK;
}

/* A kept level's statistics, from its profiled steps in P (threads
 * threads, step_ns long on average; tot and cp the first step's data flow's
 * op time and critical path): into r the op time per recorded step (the
 * steps' mean) and the critical path (at the first step's share of it),
 * the convolutions' share, the dominant op types with their intensity. */
static void profile_stats(tuner *tu, double tot, double cp, double step_ns, int threads)
{
    replay_tune_result *r = tu->r;
    const prof *P = &tu->P;
    double per = 1.0 / tu->spr; /* per recorded step */
    double all = 0, conv = P->class_ns[EXEC_CLASS_convolution];
    for (int c2 = 0; c2 < EXEC_CLASS_COUNT; c2++)
        all += P->class_ns[c2];
    r->op_ns = all * per, r->critical_ns = tot > 0 ? r->op_ns * cp / tot : 0, r->flow_threads = threads;
    tu->flow_step_ns = step_ns;
    r->conv_share = all > 0 ? conv / all : 0;
    tu->h->new_only = r->conv_share < 0.05;
    /* the dominant op types, with their intensity */
    int used[EXEC_OP_COUNT] = { 0 };
    for (r->ntop = 0; r->ntop < 4; r->ntop++) {
        int b = -1;
        for (int op = 0; op < EXEC_OP_COUNT; op++)
            if (!used[op] && P->type_ns[op] > 0 && (b < 0 || P->type_ns[op] > P->type_ns[b]))
                b = op;
        if (b < 0)
            break;
        used[b] = 1;
        snprintf(r->top[r->ntop].op, sizeof r->top[0].op, "%s", exec_op_name((exec_op)b));
        r->top[r->ntop].share = all > 0 ? P->type_ns[b] / all : 0;
        r->top[r->ntop].intensity = P->type_bytes[b] > 0 ? P->type_flops[b] / P->type_bytes[b] : 0;
    }
}

/* 1. Measurements: a profiled step at each intra-op thread level, into
 * r's levels, parallelism and dominant op types; the ceilings where an op
 * type's bound is in doubt. All cores first (the defaults: the shortest
 * step, from which the others' cost is predicted), then one thread (the
 * data flow without a descheduled team member's waits, and the op time
 * that inter-op workers of one thread share: its statistics replace the
 * first level's), then the levels between, the most threads first. The
 * tuner profiles a level after the first only where its predicted cost --
 * the first level's step, and its warm-up where convolutions take AUTO's
 * timings anew, times cores over threads, as if nothing scaled -- ends
 * the profile within half the budget, and a level between only while a
 * fifth of it is left (vgg's full preset: a first step of 77 s at one
 * thread, which a budget of 5 s paid in full before). */
static exec_status tune_profile(tuner *tu)
{
    replay_tune_result *res = tu->r;
    exec_status s = EXEC_OK;
    int levels[REPLAY_TUNE_MAX_LEVELS], nl = 0;
    for (int v = 1; v < res->cores && nl < REPLAY_TUNE_MAX_LEVELS - 1; v *= 2)
        levels[nl++] = v;
    levels[nl++] = res->cores;
    double type_ns[REPLAY_TUNE_MAX_LEVELS][EXEC_OP_COUNT];
    double prof_wall = 0;
    long preempt = 0;
    int got[REPLAY_TUNE_MAX_LEVELS] = { 0 }, steps[REPLAY_TUNE_MAX_LEVELS] = { 0 };
    prof *P = &tu->P;
    for (int pass = 0; pass < nl; pass++) {
        int li = pass == 0 ? nl - 1 : pass == 1 ? 0 : nl - pass;
        if (pass > 0 && !tu->fixed) {
            double el = base_now_s() - tu->t0,
                   est = ((tu->h->new_only ? 0 : tu->prof_warm[0]) + tu->prof_ns[0]) * res->cores / levels[li] * 1e-9;
            if (el + est > 0.5 * tu->budget || (pass > 1 && el > 0.2 * tu->budget)) {
                if (li == 0)
                    tu->one_est_s = est;
                if (pass > 1)
                    break; /* the levels left cost more */
                continue;
            }
        }
        if (pass > 1 && tu->fixed)
            break; /* a sweep measures every point anyway */
        replay_tune_knobs k = {
            .threads = levels[li], .inter = 1, .conv_algo = EXEC_CONV_AUTO, .bind = EXEC_BIND_NONE, .batch = tu->B0
        };
        progress(tu->o, "profiling at %d intra-op thread%s", k.threads, k.threads == 1 ? "" : "s");
        const int first = pass == 0 || li == 0; /* a level whose data flow and statistics are kept */
        level_meas m;
        if ((s = profile_level(P, tu->t, tu->h, &k, first, &m)))
            return s;
        preempt += m.preempt, prof_wall += m.wall_ns;
        if (li == 0)
            tu->one_prof = tu->nprof;
        tu->prof_k[tu->nprof] = k, tu->prof_warm[tu->nprof] = m.warm_ns, tu->prof_ns[tu->nprof] = m.step_ns;
        tu->prof_sample[tu->nprof] = m.sample_ns, tu->prof_sample_steps[tu->nprof++] = m.sample_steps;
        if (li == nl - 1)
            tu->def_step_ns = res->default_step_ns = m.step_ns;
        if (tu->min_step_ns == 0 || m.step_ns < tu->min_step_ns)
            tu->min_step_ns = m.step_ns;
        if (first)
            profile_stats(tu, m.total, m.cp, m.step_ns, k.threads);
        steps[li] = m.steps;
        for (int op = 0; op < EXEC_OP_COUNT; op++)
            type_ns[li][op] = P->type_ns[op] / tu->spr;
        got[li] = 1;
    }
    res->profile_s = base_now_s() - tu->t0;
    res->preempt_per_s = prof_wall > 0 ? (double)preempt / (prof_wall * 1e-9) : 0;
    for (int li = 0; li < nl; li++)
        if (got[li]) {
            double sum = 0;
            for (int op = 0; op < EXEC_OP_COUNT; op++)
                sum += type_ns[li][op];
            res->level_threads[res->nlevels] = levels[li], res->level_steps[res->nlevels] = steps[li];
            res->level_op_ns[res->nlevels++] = sum;
        }
    if (res->op_ns <= 0)
        return exec_fail(EXEC_ERR_STATE, "no op ran in a step");
    res->parallelism = res->critical_ns > 0 ? res->op_ns / res->critical_ns : 1;
    for (int i = 0; i < res->ntop; i++) { /* each dominant type's speedup from 1 thread to all */
        int op = exec_op_from_name(res->top[i].op);
        res->top[i].speedup =
            got[0] && got[nl - 1] && op >= 0 && type_ns[nl - 1][op] > 0 ? type_ns[0][op] / type_ns[nl - 1][op] : 0;
    }
    /* the ridge: an op type below 1 FLOP/byte is memory-bound and one above
     * 64 compute-bound on any CPU (their ridges lie between); only one in
     * between, of 10% of op time or more, needs this machine's, measured
     * here unless given (fathom peak's, --peak): a read stream over the
     * workload's own tensors (the profiled instance's arenas), whose
     * bandwidth its ops see, a cache's where they fit in one (a triad over
     * 12 MB, inside an EPYC's 32 MB L3, measured 24-75 GB/s there, against
     * fathom peak's 34 GB/s over 384 MB) */
    int doubt = 0;
    for (int i = 0; i < res->ntop; i++)
        doubt |= res->top[i].share >= 0.1 && res->top[i].intensity >= 1 && res->top[i].intensity <= 64;
    if (tu->o->peak_gflops > 0 && tu->o->peak_gbs > 0) {
        res->peak_gflops = tu->o->peak_gflops, res->peak_gbs = tu->o->peak_gbs, res->ceilings_given = 1;
        res->ridge = res->peak_gflops / res->peak_gbs;
    } else if (doubt && !tu->fixed) {
        double c0 = base_now_s();
        progress(tu->o, "measuring the machine's ceilings");
        const exec_graph *g = tu->t->graph && tu->h->n > 0 ? tu->t->graph(tu->h->inst[0]) : NULL;
        if ((s = replay_tune_ceilings(g, &res->peak_gflops, &res->peak_gbs, &res->stream_mb)))
            return s;
        res->ridge = res->peak_gbs > 0 ? res->peak_gflops / res->peak_gbs : 0;
        res->ceilings_s = base_now_s() - c0;
    }
    for (int i = 0; i < res->ntop; i++) {
        const double x = res->top[i].intensity;
        res->top[i].bound = res->ridge > 0 ? (x < res->ridge ? REPLAY_TUNE_BOUND_MEMORY : REPLAY_TUNE_BOUND_COMPUTE)
                            : x < 1        ? REPLAY_TUNE_BOUND_MEMORY
                            : x > 64       ? REPLAY_TUNE_BOUND_COMPUTE
                                           : REPLAY_TUNE_BOUND_UNKNOWN; /* under 10%: no ceilings measured for it */
    }
    return EXEC_OK;
}

/* What the measurements propose, knob by knob (tune_propose). */
typedef struct proposal {
    int best_level;   /* r's level of the least op time */
    int tbest;        /* its threads */
    int mmax;         /* inter-op workers up to this */
    int convs;        /* convolutions count: the algorithms are measured */
    int nalgo;        /* algorithms a sweep measures */
    exec_bind bstar;  /* the binding measured against none */
    int full_unbound; /* ... but not for threads that fill alike CPUs one each (full_bind_moot) */
    int short_bound;  /* ... workers of one thread that fill them measured bound only (short steps) */
} proposal;

/* 2a. A value or a range for each knob, with one line each (r->lines)
 * saying which measurement led there. */
static void tune_propose(const tuner *tu, proposal *pr)
{
    replay_tune_result *res = tu->r;
    pr->best_level = 0;
    for (int i = 1; i < res->nlevels; i++)
        if (res->level_op_ns[i] < res->level_op_ns[pr->best_level])
            pr->best_level = i;
    int tbest = pr->tbest = res->level_threads[pr->best_level];
    char left_out[128] = "";
    if (tu->one_est_s > 0)
        snprintf(left_out, sizeof left_out,
                 "%sa step at one thread, with its warm-up, predicted at up to %.1f s: past half the budget%s",
                 res->nlevels > 1 ? "; not measured: " : " (", tu->one_est_s, res->nlevels > 1 ? "" : ")");
    if (res->nlevels > 1)
        line(res, "intra-op threads %d: op time per step %.2f ms at %d thread%s, %.2f ms at %d (speedup %.2f)%s%s",
             tbest, res->level_op_ns[0] / 1e6, res->level_threads[0], res->level_threads[0] == 1 ? "" : "s",
             res->level_op_ns[res->nlevels - 1] / 1e6, res->level_threads[res->nlevels - 1],
             res->level_op_ns[res->nlevels - 1] > 0 ? res->level_op_ns[0] / res->level_op_ns[res->nlevels - 1] : 0,
             tbest < res->cores ? ": the ops stop scaling before all cores" : ": the ops scale to all cores", left_out);
    else
        line(res, "intra-op threads %d: %s%s", tbest,
             res->cores > 1              ? "the budget left no time to measure fewer threads"
             : res->cores < exec_cores() ? "one CPU's time (the cgroup's CPU quota)"
                                         : "one core",
             left_out);
    for (int i = 0; i < res->ntop && i < 2; i++) {
        const int bound = res->top[i].bound;
        char ridge[200], ceil_text[160];
        if (replay_tune_ceilings_text(res, ceil_text, sizeof ceil_text))
            snprintf(ridge, sizeof ridge, "ridge %.1f: %s", res->ridge, ceil_text);
        else if (bound == REPLAY_TUNE_BOUND_UNKNOWN)
            snprintf(ridge, sizeof ridge, "between 1 and 64 FLOP/byte, where CPUs' ridges lie: %s",
                     tu->fixed ? "a sweep or --compare measures no ceilings (--peak gives them)"
                               : "under 10% of op time, ceilings not measured");
        else
            snprintf(ridge, sizeof ridge, "%s every CPU's ridge; ceilings not measured",
                     bound == REPLAY_TUNE_BOUND_MEMORY ? "below 1 FLOP/byte," : "above 64 FLOP/byte,");
        line(res, "%s, %.0f%% of op time: %.2f FLOP/byte, %s (%s)%s", res->top[i].op, 100 * res->top[i].share,
             res->top[i].intensity, replay_tune_bound_name(bound), ridge,
             bound == REPLAY_TUNE_BOUND_MEMORY ? ": more threads than the bandwidth needs do not help it" : "");
    }
    int mmax = (int)ceil(res->parallelism - 0.2); /* 1.2 and above: a second worker has work */
    if (mmax > res->cores)
        mmax = res->cores;
    if (mmax > 4)
        mmax = 4;
    if (res->parallelism >= 1.2 && mmax >= 2)
        line(res,
             "inter-op workers up to %d: average parallelism %.2f (op time %.2f ms over a critical path of %.2f ms "
             "per step): independent ops can run side by side",
             mmax, res->parallelism, res->op_ns / 1e6, res->critical_ns / 1e6);
    else {
        line(res, "inter-op workers 1: average parallelism %.2f%s", res->parallelism,
             res->cores < 2 ? " on one core" : " (below 1.2): the critical path is nearly all of the op time");
        mmax = 1;
    }
    int convs = res->conv_share >= 0.05;
    pr->nalgo = tu->o->sweep && res->conv_share > 0 ? 3 : 1;
    if (convs)
        line(res,
             "convolution algorithm: convolutions are %.0f%% of op time: auto (one timing per shape at its first "
             "step, which a busy moment misleads), im2col and direct measured at the threads measured fastest, "
             "one inter-op worker",
             100 * res->conv_share);
    else
        line(res, "convolution algorithm auto: convolutions are %.1f%% of op time, not worth a measurement",
             100 * res->conv_share);
    if (tu->nb > 1)
        line(res, "batch: %d sizes measured as throughput (time per sample)", tu->nb);
    /* binding: the one that suits the machine's layout, measured against
     * none; the preemptions say whether other work competes for the cores */
    exec_bind bstar = EXEC_BIND_NONE;
    pr->full_unbound = 0;
    if (res->nbinds < 2)
        line(res, "thread binding none: %s", tu->bind_why ? tu->bind_why : "no binding takes effect here");
    else {
        int spread = res->nbinds > 2, smt = res->cores > res->physical;
        int membound = res->sockets > 1 && res->ntop > 0 && res->top[0].bound == REPLAY_TUNE_BOUND_MEMORY;
        bstar = spread && (membound || (smt && tbest <= res->physical)) ? EXEC_BIND_SPREAD : EXEC_BIND_CLOSE;
        /* threads that fill every CPU, alike CPUs (one socket, no SMT
         * siblings) -- one worker's team, or workers of one thread each:
         * each thread has a CPU of its own bound or not, the same placement
         * up to a permutation of alike CPUs (no team to keep together);
         * bound, a thread only cannot leave a CPU that other work takes.
         * Measured on a 2-CPU VM, close over none in 136 pairs of sweep
         * points each: two threads, one worker, median 1.003, geometric
         * mean 1.019, 10th and 90th percentiles 0.96 and 1.07; two workers
         * of one thread, 1.001, 0.997, 0.98 and 1.02: a tie at best, and
         * the point bound cost every race a third candidate, which the
         * noise of two alike points kept to all five rounds (vgg's and the
         * Transformer's training: 0.32-0.35 of the sweep's time; seq2seq's,
         * two workers bound and not, 35.8 and 37.0 ms: 0.53) */
        pr->full_unbound = !smt && res->sockets == 1 && res->cores == exec_cores(); /* not under a quota */
        /* ... but workers of one thread each, where steps are short (under
         * a quarter of a sample at the defaults), are measured bound, not
         * unbound: a worker woken for the next op lands at times on the
         * CPU of the one that woke it, and two share a CPU for a while, a
         * long while beside a step of a millisecond. memnet's sweeps on a
         * 2-CPU VM (seven of each mode, two workers): the slowest sample
         * 1.35-2.85x the median unbound in inference (0.22-0.27 ms
         * steps), 1.01-1.18x bound; the median bound at or below the
         * unbound one's in 13 of 14, by up to 12%; the sweep's best point
         * was the bound one in most runs, and unbound picks lost duels by
         * 1.07 and 1.24. Longer steps (autoenc's and seq2seq's, 2-34 ms)
         * tie bound or not. */
        pr->short_bound = pr->full_unbound && bstar != EXEC_BIND_NONE && mmax >= res->cores &&
                          tu->def_step_ns < REPLAY_TUNE_SAMPLE_MS * 1e6 / 4;
        line(res,
             "thread binding %s vs none: %d CPUs, %d cores, %d socket%s (sysfs)%s; %.0f preemptions/s profiling: %s",
             exec_bind_name(bstar), res->cores, res->physical, res->sockets, res->sockets == 1 ? "" : "s",
             bstar == EXEC_BIND_SPREAD ? (membound ? ", memory-bound ops: spread uses every socket's memory"
                                                   : ", SMT siblings: spread gives each thread a core")
             : spread                  ? ", close keeps the threads on neighbouring cores"
             : pr->short_bound         ? ", no SMT siblings (spread = close; one worker's team of all CPUs: each "
                                         "thread has its CPU bound or not, so none)"
                                       : ", no SMT siblings (spread = close; threads that fill all CPUs one each, "
                                         "one worker's team or one-thread workers: each has its CPU bound or not, "
                                         "so none)",
             res->preempt_per_s,
             res->preempt_per_s > 50 ? "the cores run other work, a pinned thread cannot leave a busy one"
                                     : "the cores are free, a pinned thread keeps its caches");
        if (pr->short_bound)
            line(res,
                 "thread binding %s for %d inter-op workers of one thread: steps of %.2f ms at the defaults, under "
                 "%.1f ms, where unbound workers woken for the next op share a CPU at times (their slowest samples "
                 "1.4-2.9x their median in memnet's sweeps, bound 1.0-1.2x)",
                 exec_bind_name(bstar), res->cores, tu->def_step_ns / 1e6, REPLAY_TUNE_SAMPLE_MS / 4);
    }
    pr->mmax = mmax, pr->convs = convs, pr->bstar = bstar;
}

/* What starting the candidates so far has warmed: AUTO's timings at a
 * worker's thread count, an instance of a batch. */
typedef struct start_costs {
    int timed[REPLAY_TUNE_MAX_CANDIDATES], batch[REPLAY_TUNE_MAX_CANDIDATES];
    int n;
} start_costs;

/* The candidate k is started: its batch built and, under AUTO, its
 * worker's thread count timed (-1: a forced algorithm times nothing). */
static void start_costs_add(start_costs *sc, const replay_tune_knobs *k)
{
    if (sc->n >= REPLAY_TUNE_MAX_CANDIDATES)
        return;
    sc->timed[sc->n] = k->conv_algo == EXEC_CONV_AUTO ? k->threads / (k->inter > 0 ? k->inter : 1) : -1;
    sc->batch[sc->n++] = k->batch;
}

/* The predicted cost of starting a point k (its steps step_ns long) after
 * those in sc: a new instance for another batch, its first step at that
 * batch (the defaults' first step scaled by the batch); AUTO's timings at
 * a worker's thread count not yet profiled or started, where convolutions
 * take them (vgg's full preset: about 21 s at 2 threads), the defaults' first
 * step scaled by cores over those threads, as if nothing scaled; else a
 * warm-up step, where one runs (host_get). */
static double start_cost_ns(const tuner *tu, const start_costs *sc, const replay_tune_knobs *k, double step_ns)
{
    const int p = k->threads / (k->inter > 0 ? k->inter : 1);
    int timed = 0, built = k->batch == tu->B0;
    for (int j = 0; j < tu->nprof; j++)
        timed |= tu->prof_k[j].threads == p && k->batch == tu->B0;
    for (int j = 0; j < sc->n; j++) {
        timed |= sc->timed[j] == p && sc->batch[j] == k->batch;
        built |= sc->batch[j] == k->batch;
    }
    const double first = tu->prof_warm[0] > 0 ? tu->prof_warm[0] : step_ns;
    if (!built)
        return first * k->batch / tu->B0;
    if (!tu->h->new_only && k->conv_algo == EXEC_CONV_AUTO && !timed)
        return first * tu->r->cores / (p > 0 ? p : 1);
    return !tu->h->new_only || k->inter > 1 ? step_ns : 0;
}

/* 2b. The candidates, the defaults and the vendors' settings first: every
 * point of the knob space (a sweep), the points given, or the proposal's
 * best few by their prediction, as many as the budget leaves time for. */
static exec_status tune_candidates(const tuner *tu, const proposal *pr)
{
    replay_tune_result *res = tu->r;
    const replay_tune_opts *opts = tu->o;
    const replay_tune_knobs def = tu->def;
    const int B0 = tu->B0, nb = tu->nb, *batches = tu->batches;
    const int tbest = pr->tbest, best_level = pr->best_level, mmax = pr->mmax, convs = pr->convs;
    const exec_bind bstar = pr->bstar;
    const double one = tu->flow_step_ns / tu->spr, rest = one > res->op_ns ? one - res->op_ns : 0; /* outside the ops */
    replay_tune_knobs ven = { res->physical, res->sockets, EXEC_CONV_AUTO, EXEC_BIND_NONE, B0 };
    add_cand(res, &def, "defaults", 0);
    add_cand(res, &ven, "vendors", 0);
    res->defaults = 0;
    res->vendors = replay_tune_same_knobs(&def, &ven) ? 0 : 1;
    const exec_conv_algo algos[] = { EXEC_CONV_AUTO, EXEC_CONV_IM2COL, EXEC_CONV_DIRECT };
    if (opts->sweep) {
        int tmax = res->cores;
        for (int T = 1; T <= tmax; T++) {
            if (tmax > 8 && (T & (T - 1)) && T != tmax)
                continue; /* many cores: powers of two and all */
            for (int M = 1; M <= 4 && M <= T; M++)
                for (int a = 0; a < pr->nalgo; a++)
                    for (int bd = 0; bd < res->nbinds; bd++)
                        for (int b = 0; b < nb; b++) {
                            replay_tune_knobs k = { T, M, algos[a], (exec_bind)res->binds[bd], batches[b] };
                            if (add_cand(res, &k, "candidate", 0) < 0) {
                                return exec_fail(EXEC_ERR_ARG,
                                                 "the knob space has more than %d points, too many for a sweep: "
                                                 "fewer --batches",
                                                 REPLAY_TUNE_MAX_CANDIDATES);
                            }
                        }
        }
    } else if (opts->npoints > 0) {
        for (int i = 0; i < opts->npoints; i++)
            add_cand(res, &tu->points[i], "compared", 0);
    } else {
        /* (threads, inter) pairs ranked by the prediction (predict_step),
         * at the best level, all cores, and the level below the best (its
         * measured gain may be drift: the runs will tell) */
        int tset[3] = { tbest, res->cores, 0 }, nt = tbest == res->cores ? 1 : 2;
        if (best_level > 0)
            tset[nt++] = res->level_threads[best_level - 1];
        struct {
            int T, M;
            double pred;
        } pairs[24];
        int np = 0;
        for (int i = 0; i < nt; i++)
            for (int M = 1; M <= mmax && np < 24; M++) {
                if (M > tset[i])
                    continue;
                pairs[np].T = tset[i], pairs[np].M = M;
                pairs[np++].pred = predict_step(res, tset[i], M, rest);
            }
        for (int i = 0; i < np; i++) /* insertion sort by prediction */
            for (int j = i; j > 0 && pairs[j].pred < pairs[j - 1].pred; j--) {
                __typeof__(pairs[0]) x = pairs[j];
                pairs[j] = pairs[j - 1], pairs[j - 1] = x;
            }
        /* the best three, none predicted slower than 1.25x the best: a
         * point far off its prediction costs the budget rounds that the
         * close ones need; the best with the binding proposed. The best
         * measured level with one worker is measured whatever its rank:
         * its op time was measured, the others' sharing among workers is
         * only predicted (memnet's training, op time 1.33 ms at one thread
         * and 2.64 at two, was predicted at 0.7 ms with two workers of one
         * thread and took 1.2-1.4; one thread, 1.13-1.14 in two sweeps, was
         * ranked out); and it is the one measured with each convolution
         * algorithm forced where convolutions count: the algorithms' times
         * are the ops' at its threads (deepq's training: direct at two
         * threads, one worker, was the sweep's best, and the tuner forced
         * the algorithms at two workers, predicted faster). And where the
         * parallelism proposes inter-op workers, the best-predicted point
         * with more than one is measured whatever its rank: the prediction
         * rests on one profiled step at one thread (vgg's training, 30-44
         * ms, so two workers were predicted at 1.2-1.5x one, and ranked out
         * at 1.48x, where two sweeps had them 6-8% faster) */
        int inter_first = -1;
        for (int i = 0; i < np && inter_first < 0; i++)
            if (pairs[i].M > 1)
                inter_first = i;
        for (int i = 0; i < np; i++) {
            int measured = pairs[i].T == tbest && pairs[i].M == 1;
            if (!(i < 3 && pairs[i].pred <= 1.25 * pairs[0].pred) && !measured && i != inter_first)
                continue;
            /* workers of one thread that fill the CPUs, where steps are short: bound only */
            const int one_each = pairs[i].T == res->cores && pairs[i].M == pairs[i].T && pairs[i].M > 1;
            const exec_bind b0 = pr->short_bound && one_each ? bstar : EXEC_BIND_NONE;
            for (int b = 0; b < nb; b++) {
                replay_tune_knobs k = { pairs[i].T, pairs[i].M, EXEC_CONV_AUTO, b0, batches[b] };
                add_cand(res, &k, "candidate", pairs[i].pred * batches[b] / B0);
                k.bind = EXEC_BIND_NONE;
                if (i == 0 && bstar != EXEC_BIND_NONE &&
                    !(pr->full_unbound && pairs[i].T == res->cores && (pairs[i].M == 1 || pairs[i].M == pairs[i].T))) {
                    k.bind = bstar;
                    add_cand(res, &k, "candidate", pairs[i].pred * batches[b] / B0);
                    k.bind = EXEC_BIND_NONE;
                }
                for (int a = 1; measured && convs && a < 3; a++) {
                    k.conv_algo = algos[a];
                    add_cand(res, &k, "candidate", pairs[i].pred * batches[b] / B0);
                }
            }
        }
        /* with batches, the defaults' settings at each batch too: the
         * batch's own effect, whatever the profile predicted of the
         * threads (autoenc's training: a noisy profile put 2 threads at
         * 0.94x 1, so 2 threads and one worker, the sweeps' best at batch
         * 256, was measured only at the defaults' 128; the pick, 128, was
         * 6% slower in a duel) */
        for (int b = 0; b < nb; b++) {
            replay_tune_knobs k = def;
            k.batch = batches[b];
            add_cand(res, &k, "candidate", predict_step(res, def.threads, 1, rest) * batches[b] / B0);
        }
    }
    const double sample_ns = REPLAY_TUNE_SAMPLE_MS * 1e6;
    if (!tu->fixed) {
        /* each candidate costs its warm-up and a sample a round: keep, in
         * order (defaults and vendors first, then by prediction), those
         * whose cost (start_cost_ns) still leaves time for two rounds;
         * where none does, the defaults alone (and the vendors' settings
         * where they differ) */
        double el = base_now_s() - tu->t0, left = tu->budget - el - 2.0 * fmax(tu->def_step_ns, sample_ns) * 1e-9;
        int least = res->vendors ? 2 : 1, kept = least, n0 = res->n;
        start_costs sc = { .n = 0 };
        for (int i = least; i < n0; i++) {
            double step = res->c[i].predicted_ns > 0 ? res->c[i].predicted_ns : tu->def_step_ns;
            double cost = (start_cost_ns(tu, &sc, &res->c[i].k, step) + 2.0 * fmax(step, sample_ns)) * 1e-9;
            if (cost <= left) {
                start_costs_add(&sc, &res->c[i].k);
                res->c[kept++] = res->c[i], left -= cost;
            }
        }
        res->n = kept;
        if (kept == least && n0 > kept)
            line(res,
                 "after the profile (%.1f s), the budget (%.0f s) leaves no time for a candidate (a step takes %.2f s "
                 "at the defaults): the defaults %salone are measured; a budget of %.0f s or more leaves time for "
                 "candidates",
                 el, tu->budget, tu->def_step_ns * 1e-9, least == 2 ? "and the vendors' settings " : "",
                 10 * ceil((2 * (el + tu->one_est_s) + 6 * fmax(tu->def_step_ns, sample_ns) * 1e-9) / 10));
        else if (n0 > kept)
            line(res,
                 "the budget leaves time to measure %d of %d candidates (a step takes %.2f s at the defaults, "
                 "%.2f s at best): the rest are left out by their predicted warm-up and samples",
                 kept, n0, tu->def_step_ns * 1e-9, tu->min_step_ns * 1e-9);
    }
    return EXEC_OK;
}

/* 3. Alternating measured runs of the candidates, into r->samples:
 * rounds_max rounds, or until the race ends or the budget does. */
/* The candidate whose start last ran a step (its warm-up, its pool's
 * start): its threads ran last, and that step settles its first sample
 * where it comes first in the rounds. */
typedef struct last_started {
    void *inst;
    int pool;      /* 1: it runs inter-op workers */
    double ran_ns; /* the step its start ran (0: none since) */
} last_started;

/* Starts every candidate: its instance opened and warmed up, kept open so
 * that the rounds alternate over all of them.  The profiled ones are warm
 * already.  A batch that does not fit (a cgroup's memory limit) is left
 * out with the reason; so are the candidates the budget leaves no time to
 * start. */
static exec_status start_candidates(tuner *tu, last_started *started)
{
    replay_tune_result *res = tu->r;
    exec_status status = EXEC_OK;
    for (int cand = 0; cand < res->n && !status; cand++) {
        double elapsed = base_now_s() - tu->t0;
        if (!tu->fixed && cand >= (res->vendors ? 2 : 1) && elapsed > tu->budget) {
            /* their warm-ups (AUTO's timings at new thread counts) outran the budget */
            line(res, "the budget (%.0f s) ran out while starting candidates (%.1f s): %d of %d measured", tu->budget,
                 elapsed, cand, res->n);
            res->n = cand;
            break;
        }
        progress(tu->o, "starting candidate %d/%d", cand + 1, res->n);
        double warm = 0, ran;
        const replay_tune_knobs *k = &res->c[cand].k;
        status = host_get(tu->t, tu->h, k, &tu->inst[cand], &warm, &ran);
        if (!status && ran > 0)
            *started = (last_started){ tu->inst[cand], k->inter > 1, ran };
        else if (!status && k->inter <= 1 && started->pool)
            started->inst = NULL; /* host_get released the pool that ran last */
        if (status == EXEC_ERR_NOMEM && k->batch != tu->B0) {
            const int batch = k->batch;
            line(res, "batch %d left out: %s", batch, exec_errmsg());
            int kept = cand;
            for (int other = cand; other < res->n; other++)
                if (res->c[other].k.batch != batch)
                    res->c[kept++] = res->c[other];
            res->n = kept;
            status = EXEC_OK;
            cand--;
        }
    }
    return status;
}

/* A profiled point's first sample, taken from its profile where that
 * holds one.  With short steps, that is the sample after the profiled
 * first step (profile_level).  Its one untimed step is then as in a round
 * after a point of the same threads.  With long steps, the profiled step
 * itself is a sample: the hooks cost a few hundred ns an op, nothing beside
 * such a step.  The step must be long for real, though.  At one thread,
 * its warm-up step, where one ran, was as long.  At more threads, it is no
 * slower than 1.25x the one-thread step; without one, its warm-up was as
 * long.  A short step that a busy moment stretched past a sample's length
 * (a team's first steps on a loaded machine) is no sample of it. */
static void seed_profiled_samples(tuner *tu, double sample_ns)
{
    replay_tune_result *res = tu->r;
    const int one = tu->one_prof;
    for (int cand = 0; cand < res->n; cand++)
        for (int lvl = 0; lvl < tu->nprof; lvl++) {
            if (!replay_tune_same_knobs(&tu->prof_k[lvl], &res->c[cand].k) || res->c[cand].rounds > 0)
                continue;
            const int long_step = tu->prof_ns[lvl] >= sample_ns &&
                                  (lvl == one ? tu->prof_warm[lvl] == 0 || tu->prof_warm[lvl] >= sample_ns
                                   : one >= 0 ? tu->prof_ns[lvl] <= 1.25 * tu->prof_ns[one]
                                              : tu->prof_warm[lvl] >= sample_ns);
            if (tu->prof_sample[lvl] <= 0 && !long_step)
                continue;
            double first = tu->prof_sample[lvl] > 0 ? tu->prof_sample[lvl] : tu->prof_ns[lvl];
            res->samples[(size_t)cand * MAX_ROUNDS] = first / tu->spr;
            res->c[cand].rounds = res->c[cand].profiled = 1;
            res->c[cand].steps = tu->prof_sample[lvl] > 0 ? tu->prof_sample_steps[lvl] : 1;
        }
}

/* What the rounds share from one to the next. */
typedef struct rounds_state {
    int *group;        /* each candidate's threads: an instance's calling thread and team, or its pool */
    int *order;        /* the round's order of candidates */
    int *first;        /* 1: goes first in the round (only its profiled sample so far) */
    int settle;        /* untimed steps before a sample after a point of the same threads */
    int settle_switch; /* ... and after other threads ran */
    int last_group;    /* the threads that ran last (-1: not known) */
    double started_ns; /* the step the last start ran, settling its first sample (0: none) */
    uint64_t rng;
} rounds_state;

/* The threads each candidate runs on, as a group number: twice its host's
 * index, plus one for its pool of inter-op workers. */
static void thread_groups(const tuner *tu, int *group)
{
    const hosts *h = tu->h;
    for (int cand = 0; cand < tu->r->n; cand++) {
        int host = h->n - 1;
        while (host > 0 && h->inst[host] != tu->inst[cand])
            host--;
        group[cand] = 2 * host + (tu->r->c[cand].k.inter > 1);
    }
}

/* One round: a sample of each active candidate, in this round's order.
 * After each sample from the second round on, a candidate REPLAY_TUNE_FAR
 * slower than the leader on a sample of its own is out.  *ended is 1 when
 * that leaves one candidate: the race ends within the round.  (memnet's
 * training: the defaults' first sample of their own was 1.3x the leader's,
 * with two bound inter-op workers, and the leader needed no second
 * sample.) */
static exec_status run_round(tuner *tu, rounds_state *st, int round, double sample_ns, int *ended)
{
    replay_tune_result *res = tu->r;
    exec_status status = EXEC_OK;
    for (int cand = 0; cand < res->n; cand++)
        st->first[cand] = round == 1 && res->c[cand].profiled && res->c[cand].rounds == 1;
    replay_tune_round_order(res->n, st->group, 2 * tu->h->n, tu->fixed ? NULL : st->first, &st->rng, st->order);
    *ended = 0;
    for (int pos = 0; pos < res->n && !status && !*ended; pos++) {
        int cand = st->order[pos];
        if (!tu->active[cand] || res->c[cand].rounds > round)
            continue;
        progress(tu->o, "round %d: candidate %d/%d", round + 1, pos + 1, res->n);
        double *out = &res->samples[(size_t)cand * MAX_ROUNDS + round], warm, ran;
        if ((status = host_get(tu->t, tu->h, &res->c[cand].k, &tu->inst[cand], &warm, &ran)))
            break;

        /* a pool started anew is other threads too: its untimed step is
         * part of the settling */
        const bool switched = st->group[cand] != st->last_group || ran > 0;
        if (!switched && st->started_ns > 0)
            ran = st->started_ns; /* the first sample right after its own start */
        st->started_ns = 0;
        if ((switched ? st->settle_switch : st->settle) &&
            (status = settle_steps(tu->t, tu->inst[cand], switched ? REPLAY_TUNE_SETTLE_MS * 1e6 : 0, ran)))
            break;
        st->last_group = st->group[cand];

        status = sample(tu->t, tu->inst[cand], sample_ns, out, &res->c[cand].steps);
        res->c[cand].rounds++;
        int tie;
        if (!tu->fixed && !status && round >= 1)
            *ended = replay_tune_race(res->samples, MAX_ROUNDS, res->c, res->n, tu->active, REPLAY_TUNE_FAR, &tie) <= 1;
    }
    return status;
}

static exec_status tune_rounds(tuner *tu)
{
    replay_tune_result *res = tu->r;
    const double sample_ns = REPLAY_TUNE_SAMPLE_MS * 1e6;
    res->samples = base_calloc((size_t)res->n * MAX_ROUNDS, sizeof *res->samples);
    tu->inst = base_calloc((size_t)res->n, sizeof *tu->inst);
    tu->active = base_calloc((size_t)res->n, sizeof *tu->active);
    if (!res->samples || !tu->inst || !tu->active)
        return exec_fail(EXEC_ERR_NOMEM, "out of memory");
    int rounds_max = tu->fixed ? (tu->o->rounds > 0 ? tu->o->rounds : 5) : TUNE_ROUNDS;
    if (rounds_max > MAX_ROUNDS)
        rounds_max = MAX_ROUNDS;

    double start_t0 = base_now_s();
    last_started started = { 0 };
    exec_status status = start_candidates(tu, &started);
    res->start_s = base_now_s() - start_t0;
    if (status)
        return status;
    seed_profiled_samples(tu, sample_ns);

    /* The order of a round: see replay_tune_round_order.  A fixed order
     * would measure each point always after the same one, so under that
     * one's after-effects.  (After other threads ran, the scheduler takes
     * milliseconds to settle the placement of unbound inter-op workers; in
     * them a short step can take twice as long.)  Untimed steps settle a
     * sample: REPLAY_TUNE_SETTLE_MS of them after other threads ran, where
     * steps are shorter than REPLAY_TUNE_SETTLE_UNDER_MS; one after another
     * point of the same threads, where steps are shorter than a quarter of
     * a sample.  (autoenc's training, 2.6 ms steps, took 12.6 and 13.7 ms
     * in the one step of each of its defaults' samples, each right after
     * two inter-op workers ran: the defaults dropped out and a point 1.4x
     * slower won.) */
    int *scratch = base_calloc((size_t)res->n * 3 + 1, sizeof *scratch);
    if (!scratch)
        return exec_fail(EXEC_ERR_NOMEM, "out of memory");
    rounds_state st = {
        .group = scratch,
        .order = scratch + res->n,
        .first = scratch + 2 * res->n,
        .settle = tu->min_step_ns < sample_ns / 4,
        .last_group = -1,
        .started_ns = started.ran_ns,
        .rng = 0x9e3779b97f4a7c15u,
    };
    st.settle_switch = st.settle || tu->min_step_ns < REPLAY_TUNE_SETTLE_UNDER_MS * 1e6;
    res->settle_ms = st.settle_switch ? REPLAY_TUNE_SETTLE_MS : 0;
    thread_groups(tu, st.group);
    for (int host = 0; started.inst && host < tu->h->n; host++)
        if (tu->h->inst[host] == started.inst)
            st.last_group = 2 * host + started.pool;
    for (int cand = 0; cand < res->n; cand++)
        tu->active[cand] = 1;

    double measure_t0 = base_now_s(), per_round = 0;
    for (int round = 0; round < rounds_max && !status; round++) {
        double round_t0 = base_now_s();
        if (!tu->fixed && round >= 1 && base_now_s() - tu->t0 + per_round > tu->budget)
            break;
        if (!tu->fixed && round >= 1 && res->n == 1)
            break; /* a race of one: its sample is its time (autoenc's inference: 16 ms of its 75 for a second) */
        int ended;
        status = run_round(tu, &st, round, sample_ns, &ended);
        res->rounds++;
        if (ended)
            break;
        per_round = base_now_s() - round_t0;

        /* One sample each tells a candidate 20% slower from the leader.  A
         * sample was 1.2x its point's median in 1.2% of the 10200 samples
         * of five bench_tune.sh sweeps.  A point more than 3% faster than
         * another had its sample 1.2x the other's in the same round in
         * 0.29% of 60965 such pairs. */
        int tie = 0;
        const double margin = res->rounds >= 2 ? REPLAY_TUNE_TIE : REPLAY_TUNE_FAR;
        if (!tu->fixed && replay_tune_race(res->samples, MAX_ROUNDS, res->c, res->n, tu->active, margin, &tie) <= 1)
            break;
        if (!tu->fixed && res->rounds >= 2 && tie)
            break;
    }
    res->measure_s = base_now_s() - measure_t0;
    base_free(scratch);
    return status;
}

/* 4. The pick: each candidate's statistics, the fastest by median time
 * per sample, or the one of auto and a forced convolution algorithm that
 * tie that another process will more likely find fast. */
static void tune_pick(tuner *tu)
{
    replay_tune_result *res = tu->r;
    const double *samples = res->samples;
    res->best = 0;
    for (int i = 0; i < res->n; i++) {
        double med, mn, mx;
        replay_tune_stats(samples + (size_t)i * MAX_ROUNDS, &res->c[i], &med, &mn, &mx);
        const double b = replay_tune_batch(&res->c[i]);
        res->c[i].per_sample_ns = med;
        res->c[i].median_ns = med * b, res->c[i].min_ns = mn * b, res->c[i].max_ns = mx * b;
        if (res->c[i].per_sample_ns < res->c[res->best].per_sample_ns)
            res->best = i;
    }
    if (tu->fixed)
        return;
    /* Within REPLAY_TUNE_TIE of the fastest, the defaults: nothing measured
     * says a change of settings gains (residual's training: two workers
     * 31.26 ms at the median, the defaults 31.52, their samples 24.4-37.6
     * in the tuner's process; in a duel after, 31.4 against 26.5) */
    const int d = replay_tune_defaults_tie(res->c, res->best, res->defaults);
    if (d != res->best) {
        char flags[160];
        replay_tune_flags(&res->c[res->best].k, tu->nb > 1, flags, sizeof flags);
        line(res, "the defaults: within %.1f%% of the fastest (%s: %.3f ms a sample against %.3f): no measured gain",
             100 * REPLAY_TUNE_TIE, flags, res->c[res->best].per_sample_ns / 1e6, res->c[d].per_sample_ns / 1e6);
        res->best = d;
    }
    /* Between auto and a forced convolution algorithm within
     * REPLAY_TUNE_CONV_TIE of each other, whichever is faster here is not
     * the rule.
     * - The forced one wins where auto chose it for two thirds of the
     *   shapes or more (deepq's: direct for 2 of 3 shapes in inference, 7
     *   of 9 in training).  auto's choice per shape rests on timings at the
     *   first step, made anew in every process, so the same auto point
     *   measures differently from process to process; a forced one's time
     *   does not hang on them.  (deepq's inference: auto 1.96 ms and direct
     *   1.97 in the tuner, 2.20-2.22 and 2.08-2.11 in two sweeps, direct the
     *   best of both.)
     * - auto wins where it mixes the algorithms.  A tie then says its
     *   choices in this process were poor ones, and the next process's are
     *   likely better.  (residual's inference, direct for 10 of 20 shapes:
     *   tied with direct in the tuner, 6.28 and 6.29 ms, then 0.82-0.96 of
     *   direct's time in five of six sweeps and 0.91 in a duel.  alexnet's,
     *   2 of 5: 22.22 and 22.25 ms, then 0.87 in a duel.  residual's
     *   training, 31 of 59: direct 23.64 ms and auto 23.93, then auto
     *   0.89-0.91 of direct in a duel.)
     * A forced best ties only its own point under auto. */
    const int best_auto = res->c[res->best].k.conv_algo == EXEC_CONV_AUTO;
    const int tied = replay_tune_conv_tie(res->c, res->n, res->best);
    if (tied >= 0) {
        const int f = best_auto ? tied : res->best, a = best_auto ? res->best : tied;
        const char *fname = exec_conv_algo_name(res->c[f].k.conv_algo);
        int shapes = 0, same = 0;
        exec_conv_auto_agreement(res->c[f].k.conv_algo, res->c[a].k.threads, &shapes, &same);
        if (3 * same >= 2 * shapes) {
            line(res,
                 "convolution algorithm %s: within %.1f%% of auto, which chose it for %d of %d shapes; its time "
                 "does not hang on auto's timings at the first step, made anew in every process",
                 fname, 100 * REPLAY_TUNE_CONV_TIE, same, shapes);
            res->best = f;
        } else {
            line(res,
                 "convolution algorithm auto: within %.1f%% of %s, which it chose for only %d of %d shapes: a mix "
                 "no forced algorithm runs (a tie says this process's timings chose poorly)",
                 100 * REPLAY_TUNE_CONV_TIE, fname, same, shapes);
            res->best = a;
        }
    }
}

exec_status replay_tune(const replay_tune_target *t, const replay_tune_opts *o, replay_tune_result *r)
{
    memset(r, 0, sizeof *r);
    const int fixed = o->sweep || o->npoints > 0;
    if (!fixed && !(o->budget_s > 0))
        return exec_fail(EXEC_ERR_ARG, "the budget must be positive");
    if (o->npoints < 0 || o->npoints > REPLAY_TUNE_MAX_POINTS || (o->npoints > 0 && (o->sweep || !o->points)))
        return exec_fail(EXEC_ERR_ARG, "up to %d points to compare, and not with a sweep", REPLAY_TUNE_MAX_POINTS);
    tuner *tu = base_calloc(1, sizeof *tu);
    hosts *h = base_calloc(1, sizeof *h);
    if (!tu || !h) {
        base_free(tu), base_free(h);
        return exec_fail(EXEC_ERR_NOMEM, "out of memory");
    }
    *tu = (tuner){
        .t = t, .o = o, .r = r, .h = h, .t0 = base_now_s(), .budget = o->budget_s, .fixed = fixed, .one_prof = -1
    };
    prof_init(&tu->P);
    h->hooks = &tu->P.hooks;
    r->cores = exec_cpus(); /* fewer than the CPUs under a cgroup's CPU quota */
    r->budget_s = fixed ? 0 : o->budget_s;
    r->mode = o->sweep ? "sweep" : o->npoints > 0 ? "compare" : "tune";
    exec_cpu_topology(&r->physical, &r->sockets);
    r->nbinds = replay_tune_offered_binds(r->cores, r->binds, &tu->bind_why);
    tu->B0 = t->batch > 0 ? t->batch : 1;
    tu->nb = o->nbatches > 0 && !t->batch_fixed ? o->nbatches : 1;
    tu->spr = t->steps_per_run > 0 ? t->steps_per_run : 1;
    for (int i = 0; i < tu->nb && i < 16; i++)
        tu->batches[i] = o->nbatches > 0 && !t->batch_fixed ? o->batches[i] : tu->B0;
    tu->def = (replay_tune_knobs){ r->cores, 1, EXEC_CONV_AUTO, EXEC_BIND_NONE, tu->B0 }; /* fathom's defaults */
    proposal pr;
    exec_status s;
    if ((s = tune_points(tu)) || (s = tune_profile(tu)))
        goto end;
    tune_propose(tu, &pr);
    if ((s = tune_candidates(tu, &pr)) || (s = tune_rounds(tu)))
        goto end;
    tune_pick(tu);
end:
    progress(o, "%s", "");
    if (o->progress)
        fputs("\r\33[K", o->progress);
    hosts_close(t, h);
    base_free(h);
    base_free(tu->inst);
    base_free(tu->active);
    prof_free(&tu->P);
    r->wall_s = base_now_s() - tu->t0;
    base_free(tu);
    return s;
}

const char *replay_tune_ceilings_text(const replay_tune_result *r, char *buf, size_t n)
{
    if (r->ceilings_given)
        snprintf(buf, n, "sgemm %.1f GFLOP/s, triad %.1f GB/s, given (fathom peak)", r->peak_gflops, r->peak_gbs);
    else if (r->ridge > 0)
        snprintf(buf, n, "sgemm %.1f GFLOP/s, a read stream %.1f GB/s over the workload's %.0f MiB", r->peak_gflops,
                 r->peak_gbs, r->stream_mb);
    else
        return NULL;
    return buf;
}

void replay_tune_result_release(replay_tune_result *r)
{
    base_free(r->samples);
    r->samples = NULL;
}
