/* load.c -- a replay program from a trace, through the one trace reader
 * (tracer/reader.h, decode.h): tensors from tensor_alloc, ops from the op
 * records (node_def's description, or schema 1's op_begin) in the order of
 * their recorded begins, with their recorded times; steps from
 * step_begin/end. */
#include "replay/load.h"

#include "base/alloc.h"
#include "base/error.h"
#include "replay/imported.h"
#include "tracer/archive.h"
#include "tracer/decode.h"
#include "tracer/isolate.h"
#include "tracer/reader.h"

#include <babeltrace2/babeltrace.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct loader {
    replay_program *p;
    exec_status status;
    uint32_t *op_step;  /* per op: its step ordinal, UINT32_MAX outside steps */
    uint64_t *op_begin; /* per op: its recorded begin (the program's order) */
    uint32_t cap_steps;
    uint64_t *step_ns; /* per step: duration */
    uint32_t nsteps;   /* completed steps */
    uint64_t step_begin_ts;
    int in_step;
    uint32_t cur_step;
    uint64_t run_begins;
    uint32_t *dev_which, *dev_step; /* per device record: its name in p->dev, its step ordinal */
    uint64_t *dev_ns;               /* and its time */
    uint32_t ndev_recs;
    size_t cap_which, cap_step, cap_ns;
    const char *source; /* the trace, for messages */
    int imported;       /* a trace `fathom import` wrote (run_begin's version
                         * names the source format, pytorch-...) */
} loader;

/* A callback's failure, after exec_fail set the thread's message: s kept
 * for replay_load (the first one), and -1 stops the decoding. */
static int stop(loader *L, exec_status s)
{
    if (!L->status)
        L->status = s;
    return -1;
}

static int cb_tensor_alloc(void *user, uint64_t ts, const tracer_tensor *x)
{
    (void)ts;
    loader *L = user;
    replay_tensor t = { .id = x->id };
    int r = -1, conv = 0;
    for (int i = 0; x->role && i < EXEC_ROLE_COUNT; i++)
        if (strcmp(x->role, exec_role_name((exec_role)i)) == 0)
            r = i;
    /* the engine's dtypes, or a framework's (imported traces), converted */
    int d = replay_fw_dtype(x->dtype, &conv);
    if (r < 0 || d < 0)
        return stop(L, exec_fail(EXEC_ERR_ARG, "tensor_alloc: unknown role or dtype '%s'",
                                 r < 0 ? (x->role ? x->role : "?") : (x->dtype ? x->dtype : "?")));
    t.role = (exec_role)r;
    t.dtype = (exec_dtype)d;
    t.converted = (uint8_t)conv;
    int usable = x->shape_ok && x->ndim <= EXEC_MAX_DIMS;
    for (uint32_t i = 0; usable && i < x->ndim; i++)
        usable = x->shape[i] > 0;
    /* an imported trace's tensor the engine cannot hold (more than 5
     * dimensions, an empty one) is left out: the ops reading it are demoted */
    if (!usable && L->imported)
        return 0;
    if (!x->shape_ok || x->ndim > EXEC_MAX_DIMS)
        return stop(L, exec_fail(EXEC_ERR_ARG, "tensor_alloc: a shape of more than 5 dimensions or none at all"));
    t.ndim = (int)x->ndim;
    for (uint32_t i = 0; i < x->ndim; i++)
        t.shape[i] = x->shape[i];
    if (replay_program_add_tensor(L->p, &t))
        return stop(L, exec_fail(EXEC_ERR_ARG, "%s", exec_errmsg()));
    return 0;
}

static int grow_steps(loader *L)
{
    if (L->p->nops + 1 <= L->cap_steps)
        return 0;
    uint32_t nc = L->cap_steps ? L->cap_steps * 2 : 1024;
    uint32_t *ns = base_realloc(L->op_step, nc * sizeof *ns);
    if (ns)
        L->op_step = ns;
    uint64_t *nb = ns ? base_realloc(L->op_begin, nc * sizeof *nb) : NULL;
    if (!nb)
        return stop(L, exec_fail(EXEC_ERR_NOMEM, "replay: out of memory"));
    L->op_begin = nb;
    L->cap_steps = nc;
    return 0;
}

/* A record of device time (an imported GPU trace's): its name in the
 * program's table, its step, its time; summed over the kept steps at the
 * end (keep_steps). */
static int device_record(loader *L, const tracer_op *o)
{
    replay_program *p = L->p;
    const char *name = o->node->op;
    uint32_t i = p->ndev;
    if (L->ndev_recs && !strncmp(p->dev[L->dev_which[L->ndev_recs - 1]].name, name, sizeof p->dev->name - 1))
        i = L->dev_which[L->ndev_recs - 1]; /* one name after another: mostly the same */
    for (uint32_t k = 0; i == p->ndev && k < p->ndev; k++)
        if (!strncmp(p->dev[k].name, name, sizeof p->dev->name - 1))
            i = k;
    if (i == p->ndev) {
        if (base_grow(&p->dev, &p->cap_dev, p->ndev + 1, sizeof *p->dev))
            return stop(L, exec_fail(EXEC_ERR_NOMEM, "replay: out of memory"));
        snprintf(p->dev[i].name, sizeof p->dev[i].name, "%s", name);
        p->dev[i].ns = 0;
        p->ndev++;
    }
    if (base_grow(&L->dev_which, &L->cap_which, L->ndev_recs + 1, sizeof *L->dev_which) ||
        base_grow(&L->dev_step, &L->cap_step, L->ndev_recs + 1, sizeof *L->dev_step) ||
        base_grow(&L->dev_ns, &L->cap_ns, L->ndev_recs + 1, sizeof *L->dev_ns))
        return stop(L, exec_fail(EXEC_ERR_NOMEM, "replay: out of memory"));
    L->dev_which[L->ndev_recs] = i;
    L->dev_step[L->ndev_recs] = L->in_step ? L->nsteps : UINT32_MAX;
    L->dev_ns[L->ndev_recs++] = o->end >= o->begin ? o->end - o->begin : 0;
    return 0;
}

/* An op record: into the program (known op types) or kept in its place
 * (op types of a newer version); reordered by begin at the end. A device
 * record of an imported trace is device time, not an op. */
static int cb_op(void *user, const tracer_op *o)
{
    loader *L = user;
    const tracer_node *n = o->node;
    if (!n->op || !n->phase)
        return stop(L, exec_fail(EXEC_ERR_ARG, "op: an op or phase value without a label (a newer schema?)"));
    if (L->imported && n->cls && strncmp(n->cls, "device.", 7) == 0)
        return device_record(L, o);
    if (grow_steps(L))
        return -1;
    uint32_t step = L->in_step ? L->cur_step : UINT32_MAX;
    uint64_t ns = o->end >= o->begin ? o->end - o->begin : 0;
    const replay_fw_op *fw = NULL;
    if (exec_op_from_name(n->op) < 0 && (fw = replay_fw_lookup(n->op))) {
        /* a framework op of an imported trace: its inputs and attrs */
        if (n->nattrs > EXEC_MAX_ATTRS)
            return stop(L, exec_fail(EXEC_ERR_ARG, "op %s: attrs too long", n->op));
        if (replay_program_add_framework(L->p, fw, n->phase, step, (int)n->nin, n->inputs, (int)n->nout, n->outputs,
                                         (int)n->nattrs, n->attrs, ns))
            return stop(L, exec_fail(EXEC_ERR_ARG, "%s", exec_errmsg()));
    } else if (exec_op_from_name(n->op) < 0) {
        if (replay_program_add_unknown(L->p, n->op, step, ns))
            return stop(L, exec_fail(EXEC_ERR_ARG, "%s", exec_errmsg()));
    } else {
        if (n->nattrs > EXEC_MAX_ATTRS)
            return stop(L, exec_fail(EXEC_ERR_ARG, "op %s: inputs, outputs or attrs missing or too long", n->op));
        if (replay_program_add_op(L->p, n->op, n->phase, step, (int)n->nin, n->inputs, (int)n->nout, n->outputs,
                                  (int)n->nattrs, n->attrs, ns))
            return stop(L, exec_fail(EXEC_ERR_ARG, "%s", exec_errmsg()));
    }
    L->op_step[L->p->nops - 1] = L->in_step ? L->nsteps : UINT32_MAX;
    L->op_begin[L->p->nops - 1] = o->begin;
    return 0;
}

static int cb_step_begin(void *user, uint64_t ts, uint32_t step)
{
    loader *L = user;
    L->in_step = 1;
    L->cur_step = step;
    L->step_begin_ts = ts;
    return 0;
}

static int cb_step_end(void *user, uint64_t ts, uint32_t step, double loss)
{
    (void)step, (void)loss;
    loader *L = user;
    if (!L->in_step)
        return 0;
    L->in_step = 0;
    uint64_t *sn = base_realloc(L->step_ns, (L->nsteps + 1) * sizeof *sn);
    if (!sn)
        return stop(L, exec_fail(EXEC_ERR_NOMEM, "replay: out of memory"));
    L->step_ns = sn;
    L->step_ns[L->nsteps++] = ts >= L->step_begin_ts ? ts - L->step_begin_ts : 0;
    return 0;
}

static void copy_str(char *out, size_t len, const char *s) { snprintf(out, len, "%s", s ? s : ""); }

static int cb_run_begin(void *user, const tracer_run *r)
{
    loader *L = user;
    if (!TRACER_SCHEMA_KNOWN(r->schema)) {
        char why[BASE_ERRMSG_MAX];
        snprintf(why, sizeof why, "%s: " TRACER_SCHEMA_UNKNOWN, L->source, r->schema);
        return stop(L, exec_fail(EXEC_ERR_ARG, "%s", why));
    }
    replay_machine *m = &L->p->rec;
    copy_str(m->model, sizeof m->model, r->model);
    snprintf(m->mode, sizeof m->mode, "%s", r->mode ? r->mode : "?");
    copy_str(m->preset, sizeof m->preset, r->preset);
    copy_str(m->cpu, sizeof m->cpu, r->cpu);
    copy_str(m->blas, sizeof m->blas, r->blas);
    copy_str(m->version, sizeof m->version, r->version);
    m->threads = r->threads;
    m->inter = r->inter;
    m->batch = r->batch;
    m->steps = r->steps;
    L->imported = L->p->imported = r->version && strncmp(r->version, "pytorch-", 8) == 0;
    m->schema = r->schema;
    L->run_begins++;
    return 0;
}

static const tracer_decode_cbs load_cbs = {
    .run_begin = cb_run_begin,
    .step_begin = cb_step_begin,
    .step_end = cb_step_end,
    .op = cb_op,
    .tensor_alloc = cb_tensor_alloc,
};

/* The program's ops in the order of their recorded begins (records of
 * several threads arrive per thread). */
static const uint64_t *g_sort_begin;
static int by_begin(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (g_sort_begin[x] != g_sort_begin[y])
        return g_sort_begin[x] < g_sort_begin[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

static exec_status order_by_begin(loader *L)
{
    replay_program *p = L->p;
    uint32_t n = p->nops;
    int sorted = 1;
    for (uint32_t k = 1; k < n && sorted; k++)
        sorted = L->op_begin[k - 1] <= L->op_begin[k];
    if (sorted)
        return EXEC_OK;
    uint32_t *idx = base_malloc((n + 1) * sizeof *idx);
    replay_op *ops = base_malloc((n + 1) * sizeof *ops);
    uint32_t *st = base_malloc((n + 1) * sizeof *st);
    if (!idx || !ops || !st) {
        base_free(idx);
        base_free(ops);
        base_free(st);
        return exec_fail(EXEC_ERR_NOMEM, "replay: out of memory");
    }
    for (uint32_t k = 0; k < n; k++)
        idx[k] = k;
    g_sort_begin = L->op_begin;
    qsort(idx, n, sizeof *idx, by_begin);
    for (uint32_t k = 0; k < n; k++) {
        ops[k] = p->ops[idx[k]];
        st[k] = L->op_step[idx[k]];
    }
    memcpy(p->ops, ops, n * sizeof *ops);
    memcpy(L->op_step, st, n * sizeof *st);
    base_free(idx);
    base_free(ops);
    base_free(st);
    return EXEC_OK;
}

/* Keeps the ops of kept steps only, in recorded order. */
static void keep_steps(loader *L, const replay_load_opts *o)
{
    replay_program *p = L->p;
    uint32_t first = o->skip_first, last = L->nsteps > o->skip_last ? L->nsteps - o->skip_last : 0;
    if (o->max_steps && last > first + o->max_steps)
        last = first + o->max_steps;
    uint32_t kept = 0;
    for (uint32_t k = 0; k < p->nops; k++) {
        uint32_t st = L->op_step[k];
        if (st != UINT32_MAX && st >= first && st < last) {
            p->ops[kept++] = p->ops[k];
        } else {
            base_free(p->ops[k].in_more);
            base_free(p->ops[k].out_more);
            p->skipped++;
        }
    }
    p->nops = kept;
    p->nsteps = last > first ? last - first : 0;
    p->rec_step_ns = 0;
    p->rec_op_ns = 0;
    for (uint32_t s = first; s < last; s++)
        p->rec_step_ns += L->step_ns[s];
    for (uint32_t k = 0; k < p->nops; k++)
        p->rec_op_ns += p->ops[k].rec_ns;
    p->rec_dev_ns = 0;
    for (uint32_t k = 0; k < L->ndev_recs; k++)
        if (L->dev_step[k] != UINT32_MAX && L->dev_step[k] >= first && L->dev_step[k] < last) {
            p->dev[L->dev_which[k]].ns += L->dev_ns[k];
            p->rec_dev_ns += L->dev_ns[k];
        }
}

exec_status replay_load(const char *source, const replay_load_opts *o, replay_program *p)
{
    tracer_trace *t = NULL;
    loader L = { .p = p, .source = source };
    exec_status s = EXEC_OK;
    tracer_decode_diag g = { 0 };
    if (tracer_read_open(source, &t))
        return exec_fail(EXEC_ERR_IO, "%s", base_errmsg());
    if (tracer_trace_get_kind(t) == TRACER_TRACE_LIVE) {
        s = exec_fail(EXEC_ERR_ARG,
                      "%s: replay reads recorded traces (an archive or a CTF directory), not live sessions", source);
        goto end;
    }
    if (tracer_decode_trace_isolated(t, source, &load_cbs, &L, &g)) {
        if (L.status)
            s = L.status;
        else if (strstr(base_errmsg(), "no fathom events"))
            s = exec_fail(EXEC_ERR_ARG, "%s: no fathom events (a trace of another tool?)", source);
        else
            s = exec_fail(EXEC_ERR_ARG, "%s", base_errmsg());
        goto end;
    }
    if (!L.run_begins) {
        s = exec_fail(EXEC_ERR_ARG, "%s: no fathom:run_begin event: the run's schema and metadata are unknown", source);
        goto end;
    }
    if (L.run_begins > 1) {
        s = exec_fail(EXEC_ERR_ARG, "%s: %llu run_begin events (several runs in one trace); replay reads one run",
                      source, (unsigned long long)L.run_begins);
        goto end;
    }
    if (g.discarded_events + g.discarded_unknown + g.discarded_packets) {
        s = exec_fail(EXEC_ERR_ARG, "%s: %llu events were discarded by the tracer: the op program is incomplete",
                      source, (unsigned long long)(g.discarded_events + g.discarded_unknown + g.discarded_packets));
        goto end;
    }
    if (g.unmatched_begin) {
        s = exec_fail(EXEC_ERR_ARG, "%s: truncated trace: %llu ops have no op_end", source,
                      (unsigned long long)g.unmatched_begin);
        goto end;
    }
    if (g.unmatched_end) {
        s = exec_fail(EXEC_ERR_ARG, "%s: damaged trace: %llu op_end events have no op_begin", source,
                      (unsigned long long)g.unmatched_end);
        goto end;
    }
    if (g.undefined_nodes || g.malformed_events) {
        s = exec_fail(EXEC_ERR_ARG,
                      "%s: damaged trace: %llu op records name undefined nodes, %llu events are malformed", source,
                      (unsigned long long)g.undefined_nodes, (unsigned long long)g.malformed_events);
        goto end;
    }
    if ((s = order_by_begin(&L)))
        goto end;
    if (!L.nsteps) {
        s = exec_fail(EXEC_ERR_ARG, "%s: the trace has no complete step", source);
        goto end;
    }
    if (o->skip_first + o->skip_last >= L.nsteps) {
        s = exec_fail(EXEC_ERR_ARG, "%s: skipping %u + %u of %u steps leaves none", source, o->skip_first, o->skip_last,
                      L.nsteps);
        goto end;
    }
    keep_steps(&L, o);
end:
    base_free(L.op_step);
    base_free(L.op_begin);
    base_free(L.step_ns);
    base_free(L.dev_which), base_free(L.dev_step), base_free(L.dev_ns);
    tracer_trace_close(t);
    return s;
}
