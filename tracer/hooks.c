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

#include "base/error.h"
#include "tracer/locate.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const mode_names[] = { FATHOM_TP_MODE_NAMES };

static const char *nz(const char *s) { return s ? s : ""; }

static void h_run_begin(void *ctx, const exec_run_info *info)
{
    (void)ctx;
    struct fathom_tp_run r = {
        .model = nz(info->model),
        .preset = nz(info->preset),
        .version = nz(info->version),
        .blas = nz(info->blas),
        .cpu = nz(info->cpu),
        .mode = UINT8_MAX, /* not a label: an unknown mode string */
        .batch = info->batch,
        .steps = info->steps,
        .threads = info->threads,
        .inter = info->inter,
        .seed = info->seed,
    };
    for (size_t i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++)
        if (info->mode && strcmp(info->mode, mode_names[i]) == 0)
            r.mode = (uint8_t)i;
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
    lttng_ust_tracepoint(fathom, step_begin, step);
}
static void h_step_end(void *ctx, uint32_t step, double loss)
{
    (void)ctx;
    lttng_ust_tracepoint(fathom, step_end, step, loss);
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

static void h_ops(void *ctx, const exec_graph *g, uint32_t n, const uint32_t *nodes, const uint64_t *begins,
                  const uint64_t *ends)
{
    (void)ctx;
    struct fathom_tp_ops b = {
        .graph = exec_trace_graph_id(g), .n = n, .nodes = nodes, .begins = begins, .ends = ends
    };
    lttng_ust_tracepoint(fathom, ops, &b);
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
    tracer_status rc = tracer_hooks_install();
    *installed = rc == TRACER_OK;
    return rc;
}

void tracer_hooks_remove(void) { exec_hooks_set(NULL); }

const char *tracer_hooks_probe_path(void) { return probe_handle ? probe_path : NULL; }
