/* sink.c -- Babeltrace2 messages -> profiles (see sink.h), through the one
 * trace decoder (tracer/decode.h): schema 2 and schema 1 give the same op
 * records.  Per profile, the op types of the op enum values and the roles
 * of the role values are interned once and cached, so an op record costs a
 * few array lookups and no string work. */
#include "analyze/sink.h"

#include "analyze/device.h"

#include "base/alloc.h"
#include "base/error.h"
#include "tracer/decode.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPCACHE_MAX 4096
#define SMALLCACHE_MAX 256

/* A profile and what the sink caches for it. */
typedef struct traceprof {
    const bt_trace *trace;
    analyze_profile *prof;
    analyze_sink *sink;
    int32_t opcache[OPCACHE_MAX];      /* op enum value -> op index + 1 */
    int8_t phcache[SMALLCACHE_MAX];    /* phase value -> analyze_phase + 1 */
    int32_t rolecache[SMALLCACHE_MAX]; /* role value -> role index + 1 */
    int8_t devcache[SMALLCACHE_MAX];   /* class value -> device class + 2, 1: a host class */
    int32_t kcache[OPCACHE_MAX];       /* op enum value -> device kernel + 1 */
} traceprof;

struct analyze_sink {
    analyze_sink_options o;
    char *source;
    tracer_decoder *dec;
    traceprof **tp; /* per_trace: one per trace; else tp[0] only */
    size_t ntp;
    analyze_progress_fn progress;
    void *progress_ctx;
    char err[512]; /* the sink's message (base/error.h, the object's message) */
};

const char *analyze_sink_error(const analyze_sink *s) { return s && s->err[0] ? s->err : "out of memory"; }

/* ---- the decoder's callbacks -------------------------------------------------- */
static traceprof *tp_make(analyze_sink *s, const bt_trace *trace, const char *name)
{
    traceprof **v = base_realloc(s->tp, (s->ntp + 1) * sizeof *v);
    if (!v)
        return NULL;
    s->tp = v;
    traceprof *t = base_calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->prof = analyze_profile_create(name, s->o.skip_first, s->o.skip_last);
    if (!t->prof || (s->o.dataflow && analyze_profile_follow_flow(t->prof))) {
        analyze_profile_destroy(t->prof);
        base_free(t);
        return NULL;
    }
    t->trace = trace;
    t->sink = s;
    v[s->ntp++] = t;
    return t;
}

static void *cb_trace_begin(void *ctx, const bt_trace *trace)
{
    analyze_sink *s = ctx;
    if (!s->o.per_trace)
        return s->ntp ? s->tp[0] : tp_make(s, NULL, s->source);
    const char *name = trace ? bt_trace_get_name(trace) : NULL;
    char buf[256];
    if (name) {
        name = base_printable(name, buf, sizeof buf); /* the session's: a table's line */
    } else {
        snprintf(buf, sizeof buf, "trace %zu", s->ntp + 1);
        name = buf;
    }
    return tp_make(s, trace, name);
}

static int cb_run_begin(void *user, const tracer_run *r)
{
    traceprof *t = user;
    analyze_profile *p = t->prof;
    if (!TRACER_SCHEMA_KNOWN(r->schema))
        return base_fail_into(t->sink->err, sizeof t->sink->err, -1, "%s: " TRACER_SCHEMA_UNKNOWN, p->source,
                              r->schema);
    analyze_meta m = {
        .schema = r->schema,
        .model = (char *)r->model,
        .mode = (char *)r->mode,
        .preset = (char *)r->preset,
        .version = (char *)r->version,
        .blas = (char *)r->blas,
        .cpu = (char *)r->cpu,
        .batch = r->batch,
        .steps = r->steps,
        .threads = r->threads,
        .inter = r->inter,
        .seed = r->seed,
    };
    return analyze_profile_run_begin(p, &m);
}

/* A late viewer's start (decode.h): a fresh profile from the run so far. */
static int cb_run_state(void *user, const tracer_run *r, const tracer_state *st)
{
    traceprof *t = user;
    analyze_sink *s = t->sink;
    analyze_profile *p = analyze_profile_create(t->prof->source, s->o.skip_first, s->o.skip_last);
    if (!p || (s->o.dataflow && analyze_profile_follow_flow(p))) {
        analyze_profile_destroy(p);
        return -1;
    }
    analyze_profile_destroy(t->prof);
    t->prof = p;
    memset(t->opcache, 0, sizeof t->opcache);
    memset(t->phcache, 0, sizeof t->phcache);
    memset(t->rolecache, 0, sizeof t->rolecache);
    if (cb_run_begin(user, r))
        return -1;
    analyze_stat steps;
    analyze_stat_init(&steps);
    if (st->steps_done) {
        steps.count = st->steps_done;
        steps.ns = st->step_ns;
        steps.min_ns = st->step_min_ns;
        steps.max_ns = st->step_max_ns;
    }
    return analyze_profile_joined(p, &steps, st->outside_ops);
}

static int cb_run_end(void *user, int32_t status, uint64_t ops)
{
    analyze_profile_run_end(((traceprof *)user)->prof, status, ops);
    return 0;
}

static int cb_step_begin(void *user, uint64_t ts, uint32_t step)
{
    return analyze_profile_step_begin(((traceprof *)user)->prof, ts, step);
}

static int cb_step_end(void *user, uint64_t ts, uint32_t step, double loss)
{
    (void)loss;
    return analyze_profile_step_end(((traceprof *)user)->prof, ts, step);
}

/* A device activity (its class label is "device.<class>"): to the
 * profile's devices, never to its op times. */
static int device_op(traceprof *t, const tracer_op *o, int cls)
{
    const tracer_node *n = o->node;
    analyze_profile *p = t->prof;
    if (!p->devices && !(p->devices = analyze_devices_create()))
        return -1;
    int cacheable = n->op_value >= 0 && n->op_value < OPCACHE_MAX, k = -1;
    if (cacheable && t->kcache[n->op_value])
        k = t->kcache[n->op_value] - 1;
    if (k < 0 && (k = analyze_devices_kernel(p->devices, n->op, cls)) < 0)
        return -1;
    if (cacheable)
        t->kcache[n->op_value] = k + 1;
    p->ops_seen++; /* a record of the trace, as run_end counts them */
    return analyze_devices_add(p->devices, o->vtid, k, o->begin, o->end, o->launch, o->call);
}

/* n's op type and phase (interned once per enum value); -1 out of memory. */
static int op_of(traceprof *t, const tracer_node *n, analyze_phase *phase)
{
    int op = -1, cacheable = n->op_value >= 0 && n->op_value < OPCACHE_MAX;
    if (cacheable && t->opcache[n->op_value])
        op = t->opcache[n->op_value] - 1;
    if (op < 0) {
        op = analyze_profile_intern_op(t->prof, n->op, n->cls ? n->cls : "unknown");
        if (op < 0)
            return -1;
        if (cacheable)
            t->opcache[n->op_value] = op + 1;
    }
    int key = n->phase_value >= 0 && n->phase_value < SMALLCACHE_MAX ? (int)n->phase_value : -1;
    analyze_phase ph;
    if (key >= 0 && t->phcache[key]) {
        ph = (analyze_phase)(t->phcache[key] - 1);
    } else {
        ph = analyze_phase_parse(n->phase);
        if (key >= 0)
            t->phcache[key] = (int8_t)(ph + 1);
    }
    *phase = ph;
    return op;
}

static int cb_totals(void *user, const tracer_node *n, uint64_t count, uint64_t ns, uint64_t min_ns, uint64_t max_ns)
{
    traceprof *t = user;
    analyze_phase ph;
    int op = op_of(t, n, &ph);
    if (op < 0)
        return -1;
    analyze_stat st = { .count = count,
                        .ns = ns,
                        .min_ns = min_ns,
                        .max_ns = max_ns,
                        .flops = count * n->flops,
                        .bytes = count * n->bytes };
    return analyze_profile_totals(t->prof, op, ph, &st);
}

static int cb_op(void *user, const tracer_op *o)
{
    traceprof *t = user;
    const tracer_node *n = o->node;
    int ckey = n->cls_value >= 0 && n->cls_value < SMALLCACHE_MAX ? (int)n->cls_value : -1, dev;
    if (ckey >= 0 && t->devcache[ckey]) {
        dev = t->devcache[ckey] - 2;
    } else {
        dev = analyze_device_class_parse(n->cls);
        if (ckey >= 0)
            t->devcache[ckey] = (int8_t)(dev + 2);
    }
    if (dev >= 0)
        return device_op(t, o, dev);
    analyze_phase ph;
    int op = op_of(t, n, &ph);
    if (op < 0)
        return -1;
    /* the host op that launched device activity: its op type gets their time */
    if (o->launch && ((!t->prof->devices && !(t->prof->devices = analyze_devices_create())) ||
                      analyze_devices_launcher(t->prof->devices, o->launch, op)))
        return -1;
    if (t->sink->o.dataflow &&
        analyze_profile_flow_op(t->prof, o->begin, o->end, n->inputs, n->nin, n->outputs, n->nout))
        return -1;
    return analyze_profile_op(t->prof, o->begin, o->end, op, ph, n->flops, n->bytes);
}

static int cb_tensor_alloc(void *user, uint64_t ts, const tracer_tensor *x)
{
    (void)ts;
    traceprof *t = user;
    int key = x->role_value >= 0 && x->role_value < SMALLCACHE_MAX ? (int)x->role_value : -1, r;
    if (key >= 0 && t->rolecache[key]) {
        r = t->rolecache[key] - 1;
    } else {
        r = analyze_profile_intern_role(t->prof, x->role ? x->role : "unknown");
        if (key >= 0 && r >= 0)
            t->rolecache[key] = r + 1;
    }
    return r < 0 ? -1 : analyze_profile_tensor_alloc(t->prof, x->id, r, x->bytes);
}

static int cb_tensor_free(void *user, uint64_t ts, uint32_t id)
{
    (void)ts;
    analyze_profile_tensor_free(((traceprof *)user)->prof, id);
    return 0;
}

_Static_assert((int)ANALYZE_CALL_launch == TRACER_CALL_LAUNCH && (int)ANALYZE_CALL_sync == TRACER_CALL_SYNC &&
                   (int)ANALYZE_CALL_memcpy == TRACER_CALL_MEMCPY && (int)ANALYZE_CALL_other == TRACER_CALL_OTHER,
               "the runtime calls' kinds are the archive's");

/* A runtime call of an imported GPU trace: to the profile's devices. */
static int cb_call(void *user, const tracer_call *c)
{
    analyze_profile *p = ((traceprof *)user)->prof;
    if (!p->devices && !(p->devices = analyze_devices_create()))
        return -1;
    return analyze_devices_call(p->devices, c->id, (int)c->kind, c->begin, c->end);
}

static const tracer_decode_cbs sink_cbs = {
    .trace_begin = cb_trace_begin,
    .run_begin = cb_run_begin,
    .run_end = cb_run_end,
    .step_begin = cb_step_begin,
    .step_end = cb_step_end,
    .op = cb_op,
    .tensor_alloc = cb_tensor_alloc,
    .tensor_free = cb_tensor_free,
    .call = cb_call,
    .run_state = cb_run_state,
    .totals = cb_totals,
    .no_dataflow = 1,
};

/* ---- the sink ------------------------------------------------------------------ */
analyze_sink *analyze_sink_create(const analyze_sink_options *o)
{
    analyze_sink *s = base_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->o = *o;
    s->source = base_strdup(o->source ? o->source : "trace");
    tracer_decode_cbs cbs = sink_cbs; /* copied by the decoder */
    cbs.no_dataflow = !o->dataflow;
    s->dec = tracer_decoder_create(&cbs, s);
    if (!s->source || !s->dec) {
        analyze_sink_destroy(s);
        return NULL;
    }
    s->o.source = s->source;
    return s;
}

void analyze_sink_destroy(analyze_sink *s)
{
    if (!s)
        return;
    tracer_decoder_destroy(s->dec);
    for (size_t i = 0; i < s->ntp; i++) {
        analyze_profile_destroy(s->tp[i]->prof);
        base_free(s->tp[i]);
    }
    base_free(s->tp);
    base_free(s->source);
    base_free(s);
}

int analyze_sink_consume(analyze_sink *s, const bt_message *msg)
{
    if (!s->dec)
        return base_fail_into(s->err, sizeof s->err, -1, "out of memory");
    if (tracer_decoder_consume(s->dec, msg) == 0)
        return 0;
    if (!s->err[0])
        base_fail_into(s->err, sizeof s->err, -1, "%s",
                       *tracer_decoder_error(s->dec) ? tracer_decoder_error(s->dec) : "out of memory");
    return -1;
}

/* The decoder's diagnostics of a profile's traces, into its diag. */
static void diag_merge(analyze_profile *p, const tracer_decode_diag *g)
{
    analyze_diag *d = &p->diag;
    d->events += g->events;
    d->foreign_events += g->foreign_events;
    d->unknown_events += g->unknown_events;
    d->malformed_events += g->malformed_events;
    d->discarded_events += g->discarded_events;
    d->discarded_packets += g->discarded_packets;
    d->discarded_unknown += g->discarded_unknown;
    d->unmatched_begin += g->unmatched_begin;
    d->unmatched_end += g->unmatched_end;
    d->duplicate_begin += g->duplicate_begin;
    d->negative_time += g->negative_time;
    d->undefined_nodes += g->undefined_nodes;
    d->redefined_nodes += g->redefined_nodes;
}

const tracer_decode_cbs *analyze_sink_callbacks(void) { return &sink_cbs; }

void analyze_sink_set_progress(analyze_sink *s, analyze_progress_fn fn, void *ctx)
{
    s->progress = fn;
    s->progress_ctx = ctx;
}

int analyze_sink_tick(void *sink)
{
    analyze_sink *s = sink;
    if (!s->progress)
        return 0;
    /* nothing yet (a live session still to begin): an empty profile says so */
    analyze_profile *snap = s->ntp ? analyze_profile_snapshot(s->tp[0]->prof) : analyze_profile_create(s->source, 0, 0);
    if (snap && !s->ntp)
        analyze_profile_finish(snap);
    if (!snap)
        return base_fail_into(s->err, sizeof s->err, -1, "out of memory");
    int rc = s->progress(s->progress_ctx, snap);
    analyze_profile_destroy(snap);
    return rc;
}

int analyze_sink_failed(const analyze_sink *s) { return s->err[0] != '\0'; }

int analyze_sink_described(const analyze_sink *s) { return s->ntp && s->tp[0]->prof->meta.have_begin; }

/* Hands the profiles over, each with its traces' diagnostics: from the
 * sink's decoder, or `diag` (decoding done elsewhere: one profile). */
static analyze_profile **take(analyze_sink *s, const tracer_decode_diag *diag, size_t *n)
{
    size_t cnt = s->ntp;
    analyze_profile **v = base_calloc(cnt ? cnt : 1, sizeof *v);
    *n = 0;
    if (!v)
        return NULL;
    for (size_t i = 0; i < cnt; i++) {
        tracer_decode_diag g = { 0 };
        if (diag)
            g = *diag;
        else
            tracer_decoder_diag_sum(s->dec, s->tp[i], &g);
        v[i] = s->tp[i]->prof;
        s->tp[i]->prof = NULL;
        diag_merge(v[i], &g);
        analyze_profile_finish(v[i]);
        if (s->o.per_trace && v[i]->meta.model && v[i]->meta.mode) {
            /* a trace of the babeltrace2 CLI is named after its folder
             * (vm/ust/uid/0/64-bit): say which run it holds instead */
            size_t n = strlen(v[i]->meta.model) + strlen(v[i]->meta.mode) + 2;
            char *name = base_malloc(n);
            if (name) {
                snprintf(name, n, "%s/%s", v[i]->meta.model, v[i]->meta.mode);
                base_free(v[i]->source);
                v[i]->source = name;
            }
        }
        base_free(s->tp[i]);
    }
    s->ntp = 0;
    /* a new decoder: the sink keeps nothing of the taken traces */
    tracer_decoder_destroy(s->dec);
    s->dec = tracer_decoder_create(&sink_cbs, s);
    *n = cnt;
    return v;
}

analyze_profile **analyze_sink_take(analyze_sink *s, size_t *n)
{
    tracer_decoder_finish(s->dec);
    return take(s, NULL, n);
}

analyze_profile **analyze_sink_take_decoded(analyze_sink *s, const tracer_decode_diag *diag, size_t *n)
{
    return take(s, diag, n);
}
