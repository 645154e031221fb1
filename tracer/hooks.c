/* hooks.c -- the engine hooks that fire the `fathom` tracepoints.
 *
 * The one compilation unit that defines the tracepoints (lttng-ust's
 * LTTNG_UST_TRACEPOINT_DEFINE) with dynamic probe linkage: the probes live
 * in libfathom-tp.so, which tracer_hooks_install() dlopen()s.  Until then
 * (and in every untraced run) the engine's hook pointer is NULL: one
 * predicted branch per op. */
#define _GNU_SOURCE
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "tracer/tp.h"

#include "tracer/hooks.h"

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "tracer/locate.h"
#include "tracer/opspack.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const mode_names[] = { FATHOM_TP_MODE_NAMES };

static const char *nz(const char *s) { return s ? s : ""; }

/* ---- the statedump (FATHOM_TRACE_RESTATE) ------------------------------
 * A live viewer starts at the newest data: it never sees run_begin nor the
 * node_defs, nor the ops before it joined.  With restating on, the hooks
 * keep each node's totals (count, ns, min, max of its op invocations inside
 * steps) and the step times, and every period (and at SIGUSR1: the
 * recorder saw a viewer attach) re-announce them at the next step_begin:
 * run_state (run_begin's description and the steps so far), then each
 * graph's node_defs and its graph_totals before its next run.  Off (the
 * default) it costs nothing: no totals are kept. */
typedef struct gtotals {
    uint32_t cap;                           /* nodes the arrays hold */
    uint32_t *nodes;                        /* scratch for the event */
    uint64_t *count, *ns, *min_ns, *max_ns; /* by node id */
} gtotals;

static struct {
    uint64_t period_ns; /* 0: off */
    uint64_t last_ns;   /* the last statedump */
    volatile sig_atomic_t asked;
    pthread_mutex_t lock; /* the totals (ops hooks of several threads) */
    gtotals *g;           /* by graph id */
    uint32_t ng;
    _Atomic int in_step;
    uint64_t outside_ops;
    uint64_t step_t0, steps_done, step_ns, step_min_ns, step_max_ns;
    int have_run;
    struct fathom_tp_run run; /* run_begin's, strings owned */
} rs = { .lock = PTHREAD_MUTEX_INITIALIZER, .step_min_ns = UINT64_MAX };

static void on_sigusr1(int sig)
{
    (void)sig;
    rs.asked = 1;
}

/* g's totals with room for node `node` (under rs.lock); NULL out of memory. */
static gtotals *totals_of(uint32_t graph, uint32_t node)
{
    if (graph >= rs.ng) {
        uint32_t ng = graph + 8;
        gtotals *v = base_realloc(rs.g, ng * sizeof *v);
        if (!v)
            return NULL;
        memset(v + rs.ng, 0, (ng - rs.ng) * sizeof *v);
        rs.g = v, rs.ng = ng;
    }
    gtotals *t = &rs.g[graph];
    if (node >= t->cap) {
        uint32_t cap = node + 1 > 2 * t->cap ? node + 1 : 2 * t->cap;
        uint32_t *nodes = base_realloc(t->nodes, cap * sizeof *nodes);
        if (nodes)
            t->nodes = nodes;
        uint64_t **arr[] = { &t->count, &t->ns, &t->min_ns, &t->max_ns };
        int ok = nodes != NULL;
        for (size_t i = 0; ok && i < 4; i++) {
            uint64_t *a = base_realloc(*arr[i], cap * sizeof *a);
            if (!a) {
                ok = 0;
                break;
            }
            memset(a + t->cap, i == 2 ? 0xff : 0, (cap - t->cap) * sizeof *a);
            *arr[i] = a;
        }
        if (!ok) /* the arrays grown so far keep their old length's content */
            return NULL;
        t->cap = cap;
    }
    return t;
}

static void totals_add(uint32_t graph, uint32_t n, const uint32_t *nodes, const uint64_t *begins, const uint64_t *ends)
{
    if (!atomic_load_explicit(&rs.in_step, memory_order_relaxed)) {
        pthread_mutex_lock(&rs.lock);
        rs.outside_ops += n;
        pthread_mutex_unlock(&rs.lock);
        return;
    }
    uint32_t top = 0;
    for (uint32_t i = 0; i < n; i++)
        if (nodes[i] > top)
            top = nodes[i];
    pthread_mutex_lock(&rs.lock);
    gtotals *t = totals_of(graph, top);
    for (uint32_t i = 0; t && i < n; i++) {
        uint32_t k = nodes[i];
        uint64_t ns = ends[i] >= begins[i] ? ends[i] - begins[i] : 0;
        t->count[k]++;
        t->ns[k] += ns;
        if (ns < t->min_ns[k])
            t->min_ns[k] = ns;
        if (ns > t->max_ns[k])
            t->max_ns[k] = ns;
    }
    pthread_mutex_unlock(&rs.lock);
}

/* The value of label s among n names (an enum of the run's description);
 * -1 where s is none of them. */
static int label_value(const char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; s && i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return (int)i;
    return -1;
}

/* run_begin's fields from the engine's run description, row by row of
 * tracer/schema.def (a row whose member the description lacks does not
 * compile): strings never NULL, an enum's label as its value, or the
 * type's largest (not a label: an unknown mode string). */
/* clang-format off */
#define RUN_OF(x, group, name, kind, ctype, src, len, need) RUN_OF_##kind(ctype, src)
#define RUN_OF_SCHEMA(ctype, src)
#define RUN_OF_INT(ctype, src) r.src = info->src;
#define RUN_OF_FLOAT(ctype, src) r.src = info->src;
#define RUN_OF_STRING(ctype, src) r.src = nz(info->src);
#define RUN_OF_ENUM(ctype, src) \
    r.src = (ctype)label_value(src##_names, sizeof src##_names / sizeof src##_names[0], info->src);
/* clang-format on */

static struct fathom_tp_run run_of(const exec_run_info *info)
{
    struct fathom_tp_run r;
    FATHOM_SCHEMA_RUN(RUN_OF, _)
    return r;
}

/* The strings of the run's description, by their place in it. */
#define RUN_STRING(x, group, name, kind, ctype, src, len, need) RUN_STRING_##kind(src)
#define RUN_STRING_SCHEMA(src)
#define RUN_STRING_INT(src)
#define RUN_STRING_FLOAT(src)
#define RUN_STRING_ENUM(src)
#define RUN_STRING_STRING(src) offsetof(struct fathom_tp_run, src),
static const size_t run_strings[] = { FATHOM_SCHEMA_RUN(RUN_STRING, _) };
#define NRUN_STRINGS (sizeof run_strings / sizeof run_strings[0])

static const char **run_string(struct fathom_tp_run *r, size_t i)
{
    return (const char **)(void *)((char *)r + run_strings[i]);
}

/* Keeps r, its strings copied, for the statedumps. */
static void run_keep(const struct fathom_tp_run *r)
{
    for (size_t i = 0; i < NRUN_STRINGS; i++)
        base_free((void *)*run_string(&rs.run, i));
    rs.run = *r;
    rs.have_run = 1;
    for (size_t i = 0; i < NRUN_STRINGS; i++)
        if (!(*run_string(&rs.run, i) = base_strdup(*run_string(&rs.run, i))))
            rs.have_run = 0;
    if (!rs.have_run) { /* out of memory: no statedump rather than a wrong one */
        for (size_t i = 0; i < NRUN_STRINGS; i++)
            base_free((void *)*run_string(&rs.run, i));
        memset(&rs.run, 0, sizeof rs.run);
    }
}

/* At a step boundary (step_begin, before the event): run_state now, and
 * each graph's node_defs and graph_totals before its next run. */
static void restate_now(uint64_t now)
{
    rs.last_ns = now;
    rs.asked = 0;
    if (!rs.have_run)
        return;
    pthread_mutex_lock(&rs.lock);
    struct fathom_tp_state st = {
        .run = &rs.run,
        .steps_done = rs.steps_done,
        .step_ns = rs.step_ns,
        .step_min_ns = rs.steps_done ? rs.step_min_ns : 0,
        .step_max_ns = rs.step_max_ns,
        .outside_ops = rs.outside_ops,
    };
    pthread_mutex_unlock(&rs.lock);
    lttng_ust_tracepoint(fathom, run_state, &st);
    exec_trace_restate();
}

static void h_run_begin(void *ctx, const exec_run_info *info)
{
    (void)ctx;
    struct fathom_tp_run r = run_of(info);
    if (rs.period_ns) {
        run_keep(&r);
        rs.last_ns = base_now_ns();
    }
    lttng_ust_tracepoint(fathom, run_begin, &r);
}

static void h_run_end(void *ctx, int32_t status, uint64_t ops)
{
    (void)ctx;
    lttng_ust_tracepoint(fathom, run_end, status, ops);
}
static void h_step_begin(void *ctx, uint32_t step)
{
    (void)ctx;
    if (rs.period_ns) {
        uint64_t now = base_now_ns();
        if (rs.asked || now - rs.last_ns >= rs.period_ns)
            restate_now(now);
        rs.step_t0 = base_now_ns();
        atomic_store_explicit(&rs.in_step, 1, memory_order_relaxed);
    }
    lttng_ust_tracepoint(fathom, step_begin, step);
}
static void h_step_end(void *ctx, uint32_t step, double loss)
{
    (void)ctx;
    lttng_ust_tracepoint(fathom, step_end, step, loss);
    if (rs.period_ns && atomic_load_explicit(&rs.in_step, memory_order_relaxed)) {
        uint64_t d = base_now_ns() - rs.step_t0;
        atomic_store_explicit(&rs.in_step, 0, memory_order_relaxed);
        pthread_mutex_lock(&rs.lock);
        rs.steps_done++;
        rs.step_ns += d;
        if (d < rs.step_min_ns)
            rs.step_min_ns = d;
        if (d > rs.step_max_ns)
            rs.step_max_ns = d;
        pthread_mutex_unlock(&rs.lock);
    }
}

/* Tensor and graph ids in the trace are unique in the process
 * (exec_trace_tensor_id, exec_trace_graph_id): a process may run several
 * graphs (deepq's target network). */
static void h_node_def(void *ctx, const exec_graph *g, const exec_node *n, uint64_t flops, uint64_t bytes)
{
    (void)ctx;
    uint32_t ids[n->nin + n->nout + 1];
    for (int i = 0; i < n->nin; i++)
        ids[i] = exec_trace_tensor_id(g, n->in[i]);
    for (int i = 0; i < n->nout; i++)
        ids[n->nin + i] = exec_trace_tensor_id(g, n->out[i]);
    struct fathom_tp_node d = {
        .graph = exec_trace_graph_id(g),
        .node = n->id,
        .op = (uint16_t)n->op,
        .cls = (uint8_t)exec_op_table[n->op].cls,
        .phase = (uint8_t)n->phase,
        .nin = (uint32_t)n->nin,
        .nout = (uint32_t)n->nout,
        .nattrs = (uint32_t)n->nattrs,
        .in = ids,
        .out = ids + n->nin,
        .attrs = n->attrs,
        .flops = flops,
        .bytes = bytes,
    };
    lttng_ust_tracepoint(fathom, node_def, &d);
}

/* ---- op records, packed (schema 3: tracer/opspack.h) -------------------
 * Each thread packs its batches into a scratch of its own, gaps then
 * durations, grown to the largest batch it has flushed: no allocation a
 * flush after the first, freed when the thread exits. */
static pthread_key_t pack_key;
static pthread_once_t pack_once = PTHREAD_ONCE_INIT;
static _Thread_local uint32_t *t_pack;
static _Thread_local size_t t_pack_cap; /* records */

static void pack_release(void *p)
{
    base_free(p);
    t_pack = NULL;
    t_pack_cap = 0;
}

static void pack_key_make(void) { pthread_key_create(&pack_key, pack_release); }

/* The calling thread's scratch for n records (2n u32); NULL out of memory. */
static uint32_t *pack_scratch(uint32_t n)
{
    if (n <= t_pack_cap)
        return t_pack;
    pthread_once(&pack_once, pack_key_make);
    uint32_t *v = base_realloc(t_pack, 2 * (size_t)n * sizeof *v);
    if (!v)
        return NULL;
    t_pack = v, t_pack_cap = n;
    pthread_setspecific(pack_key, v);
    return v;
}

static void h_ops(void *ctx, const exec_graph *g, uint32_t n, const uint32_t *nodes, const uint64_t *begins,
                  const uint64_t *ends)
{
    (void)ctx;
    struct fathom_tp_ops b = { .graph = exec_trace_graph_id(g) };
    if (rs.period_ns) /* before the event: a statedump never misses records that precede it */
        totals_add(b.graph, n, nodes, begins, ends);
    if (!lttng_ust_tracepoint_enabled(fathom, ops)) /* no session wants them: not packed for nothing */
        return;
    uint32_t *gap = pack_scratch(n);
    if (!gap) { /* out of memory: every record exact, in one event */
        b.n = b.nwide = n, b.nodes = nodes, b.begins = begins, b.ends = ends;
        lttng_ust_tracepoint(fathom, ops, &b);
        return;
    }
    uint32_t *dur = gap + n;
    for (uint32_t i = 0; i < n;) {
        int packed;
        uint32_t k = tracer_ops_next(n - i, begins + i, ends + i, gap + i, dur + i, &packed);
        b.n = k, b.nodes = nodes + i;
        b.npacked = packed ? k : 0, b.base = begins[i], b.gaps = gap + i, b.durations = dur + i;
        b.nwide = packed ? 0 : k, b.begins = begins + i, b.ends = ends + i;
        lttng_ust_tracepoint(fathom, ops, &b);
        i += k;
    }
}

/* After a graph's node_defs: its nodes' totals (the nodes that ran). */
static void h_graph_described(void *ctx, const exec_graph *g)
{
    (void)ctx;
    if (!rs.period_ns)
        return;
    uint32_t graph = exec_trace_graph_id(g);
    pthread_mutex_lock(&rs.lock);
    if (graph < rs.ng && rs.g[graph].cap) {
        gtotals *t = &rs.g[graph];
        uint32_t n = 0;
        for (uint32_t k = 0; k < t->cap; k++)
            if (t->count[k]) { /* packed in place of the ones that did not run */
                t->nodes[n] = k;
                n++;
            }
        uint64_t *v[4] = { base_malloc(n * sizeof(uint64_t) + 1), base_malloc(n * sizeof(uint64_t) + 1),
                           base_malloc(n * sizeof(uint64_t) + 1), base_malloc(n * sizeof(uint64_t) + 1) };
        if (v[0] && v[1] && v[2] && v[3]) {
            for (uint32_t i = 0; i < n; i++) {
                uint32_t k = t->nodes[i];
                v[0][i] = t->count[k], v[1][i] = t->ns[k], v[2][i] = t->min_ns[k], v[3][i] = t->max_ns[k];
            }
            struct fathom_tp_totals e = {
                .graph = graph, .n = n, .nodes = t->nodes, .counts = v[0], .ns = v[1], .min_ns = v[2], .max_ns = v[3]
            };
            lttng_ust_tracepoint(fathom, graph_totals, &e);
        }
        for (int i = 0; i < 4; i++)
            base_free(v[i]);
    } else {
        struct fathom_tp_totals e = { .graph = graph };
        uint64_t none = 0;
        uint32_t nonode = 0;
        e.nodes = &nonode, e.counts = e.ns = e.min_ns = e.max_ns = &none;
        lttng_ust_tracepoint(fathom, graph_totals, &e);
    }
    pthread_mutex_unlock(&rs.lock);
}

/* bytes: what the tensor adds to the process's memory (0 where it shares
 * an input's buffer: buffer forwarding, exec/forwarding.c) */
static void h_tensor_alloc(void *ctx, const exec_graph *g, const exec_tensor *t)
{
    (void)ctx;
    uint32_t shape[EXEC_MAX_DIMS];
    for (int i = 0; i < t->ndim && i < EXEC_MAX_DIMS; i++)
        shape[i] = t->shape[i] > UINT32_MAX ? UINT32_MAX : (uint32_t)t->shape[i];
    lttng_ust_tracepoint(fathom, tensor_alloc, exec_trace_tensor_id(g, t->id), (uint8_t)t->role, (uint8_t)t->dtype,
                         (uint32_t)t->ndim, shape, (uint64_t)(t->storage == t->id ? t->bytes : 0));
}

static void h_tensor_free(void *ctx, const exec_graph *g, const exec_tensor *t)
{
    (void)ctx;
    lttng_ust_tracepoint(fathom, tensor_free, exec_trace_tensor_id(g, t->id));
}

static const exec_hooks hooks = {
    .node_def = h_node_def,
    .ops = h_ops,
    .tensor_alloc = h_tensor_alloc,
    .tensor_free = h_tensor_free,
    .run_begin = h_run_begin,
    .run_end = h_run_end,
    .step_begin = h_step_begin,
    .step_end = h_step_end,
    .graph_described = h_graph_described,
};

const exec_hooks *tracer_hooks_table(void) { return &hooks; }

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static void *probe_handle;
static char probe_path[PATH_MAX];

static int try_load(const char *path, char *why, size_t whylen)
{
    size_t len = strlen(path);
    if (len >= sizeof probe_path) {
        snprintf(why, whylen, "path longer than %zu bytes", sizeof probe_path - 1);
        return -1;
    }
    if (access(path, R_OK) != 0)
        return -1;
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        snprintf(why, whylen, "%s", dlerror());
        return -1;
    }
    probe_handle = h;
    memcpy(probe_path, path, len + 1);
    return 0;
}

/* $FATHOM_TP_LIB alone when set; else the candidates of locate.h in turn
 * (relative to the executable first, so a moved install tree works). */
static tracer_status load_probe(void)
{
    char why[512] = "";
    const char *env = getenv(TRACER_ENV_TP_LIB);
    if (env && *env) {
        if (try_load(env, why, sizeof why) == 0)
            return TRACER_OK;
        return base_fail(TRACER_ERR_SYSTEM, "cannot load the trace probe %s=%s: %s", TRACER_ENV_TP_LIB, env,
                         *why ? why : "not readable");
    }
    char cand[PATH_MAX];
    for (int i = 0; tracer_probe_candidate(i, cand, sizeof cand); i++)
        if (cand[0] && try_load(cand, why, sizeof why) == 0)
            return TRACER_OK;
    return base_fail(TRACER_ERR_SYSTEM, "cannot load the trace probe %s%s%s (set %s to its path)", TRACER_TP_LIB_NAME,
                     *why ? ": " : "", why, TRACER_ENV_TP_LIB);
}

tracer_status tracer_hooks_install(void)
{
    pthread_mutex_lock(&load_lock);
    tracer_status rc = probe_handle ? TRACER_OK : load_probe();
    pthread_mutex_unlock(&load_lock);
    if (rc == 0)
        exec_hooks_set(&hooks);
    return rc;
}

tracer_status tracer_hooks_install_from_env(int *installed)
{
    *installed = 0;
    const char *v = getenv(TRACER_ENV_TRACE);
    if (!v || !*v || strcmp(v, "0") == 0)
        return TRACER_OK;
    if (strcmp(v, "1") != 0)
        return base_fail(TRACER_ERR_INPUT, "%s must be 1 or 0, not '%s'", TRACER_ENV_TRACE, v);
    const char *b = getenv(TRACER_ENV_BUFFER);
    if (b && *b) {
        char *end = NULL;
        unsigned long n = strtoul(b, &end, 10);
        if (!end || *end || b[0] == '-' || n < 1 || n > EXEC_TRACE_BUFFER_MAX) {
            return base_fail(TRACER_ERR_INPUT, "%s must be a record count from 1 to %d, not '%s'", TRACER_ENV_BUFFER,
                             EXEC_TRACE_BUFFER_MAX, b);
        }
        exec_trace_buffer_set((uint32_t)n);
    }
    const char *rp = getenv(TRACER_ENV_RESTATE);
    if (rp && *rp) {
        char *end = NULL;
        double sec = strtod(rp, &end);
        if (!end || *end || !(sec >= 0 && sec <= 86400))
            return base_fail(TRACER_ERR_INPUT, "%s must be seconds from 0 to 86400, not '%s'", TRACER_ENV_RESTATE, rp);
        rs.period_ns = (uint64_t)(sec * 1e9);
        if (rs.period_ns) { /* the recorder's word that a viewer attached */
            struct sigaction sa = { .sa_handler = on_sigusr1 };
            sigemptyset(&sa.sa_mask);
            sa.sa_flags = SA_RESTART;
            sigaction(SIGUSR1, &sa, NULL);
        }
    }
    tracer_status rc = tracer_hooks_install();
    *installed = rc == TRACER_OK;
    return rc;
}

void tracer_hooks_remove(void) { exec_hooks_set(NULL); }

const char *tracer_hooks_probe_path(void) { return probe_handle ? probe_path : NULL; }
