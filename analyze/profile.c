/* profile.c -- the profile model (see profile.h). */
#include "analyze/profile.h"
#include "analyze/device.h"

#include "base/alloc.h"
#include "base/table.h"

#include "tracer/critpath.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const phase_names[ANALYZE_NPHASE] = { "forward", "backward", "update", "other" };

const char *analyze_phase_name(analyze_phase p) { return (unsigned)p < ANALYZE_NPHASE ? phase_names[p] : "other"; }

analyze_phase analyze_phase_parse(const char *label)
{
    for (int i = 0; i < ANALYZE_PHASE_OTHER; i++)
        if (label && strcmp(label, phase_names[i]) == 0)
            return (analyze_phase)i;
    return ANALYZE_PHASE_OTHER;
}

void analyze_stat_init(analyze_stat *s)
{
    memset(s, 0, sizeof *s);
    s->min_ns = UINT64_MAX;
}

void analyze_stat_add(analyze_stat *s, uint64_t ns, uint64_t flops, uint64_t bytes)
{
    s->count++;
    s->ns += ns;
    s->flops += flops;
    s->bytes += bytes;
    if (ns < s->min_ns)
        s->min_ns = ns;
    if (ns > s->max_ns)
        s->max_ns = ns;
}

void analyze_stat_merge(analyze_stat *into, const analyze_stat *from)
{
    if (!from->count)
        return;
    into->count += from->count;
    into->ns += from->ns;
    into->flops += from->flops;
    into->bytes += from->bytes;
    if (from->min_ns < into->min_ns)
        into->min_ns = from->min_ns;
    if (from->max_ns > into->max_ns)
        into->max_ns = from->max_ns;
}

double analyze_stat_mean(const analyze_stat *s) { return s->count ? (double)s->ns / (double)s->count : 0.0; }

/* ---- private state ---------------------------------------------------------- */

/* Per-step (or total) accumulation: stats[op * ANALYZE_NPHASE + phase].
 * `touched` lists the indices whose count is non-zero, so folding a step
 * into the totals and resetting it cost the (op type, phase) pairs the step
 * used rather than every op type seen so far. */
typedef struct bucket {
    uint64_t ordinal, dur;
    tracer_critpath cp; /* the step's data flow (when followed) */
    size_t cap;         /* op types the array holds */
    analyze_stat *st;
    uint32_t *touched; /* cap * ANALYZE_NPHASE entries */
    size_t ntouched;
} bucket;

#define OUTSIDE UINT64_MAX

typedef struct tensor {
    uint32_t id; /* the key */
    int32_t role;
    uint64_t bytes;
} tensor;

typedef struct state {
    base_table tens; /* the live tensors by id */
    bucket total, outside, cur;
    int in_step;
    uint64_t next_ordinal; /* steps begun so far */
    uint64_t step_begin_ts;
    uint64_t mem_start, mem_peak; /* live bytes at step_begin, and the most since */
    struct {
        uint64_t ordinal, begin, end;
    } recent[8];      /* the last completed steps' spans */
    unsigned nrecent; /* steps completed (recent[nrecent % 8] is the next slot) */
    bucket *ring;     /* completed steps that may still be among the last skip_last */
    size_t ring_len, ring_head;
    int follow_flow;  /* analyze_profile_follow_flow */
    tracer_flow flow; /* the op records of the step under way */
} state;

static int bucket_fit(bucket *b, size_t nops)
{
    if (nops <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 16;
    while (cap < nops)
        cap *= 2;
    uint32_t *touched = base_realloc(b->touched, cap * ANALYZE_NPHASE * sizeof *touched);
    if (!touched)
        return -1;
    b->touched = touched;
    analyze_stat *st = base_realloc(b->st, cap * ANALYZE_NPHASE * sizeof *st);
    if (!st)
        return -1;
    for (size_t i = b->cap * ANALYZE_NPHASE; i < cap * ANALYZE_NPHASE; i++)
        analyze_stat_init(&st[i]);
    b->st = st;
    b->cap = cap;
    return 0;
}

static void bucket_reset(bucket *b)
{
    for (size_t i = 0; i < b->ntouched; i++)
        analyze_stat_init(&b->st[b->touched[i]]);
    b->ntouched = 0;
    b->dur = 0;
}

/* Adds one op invocation to stats[i] (the bucket fits i). */
static void bucket_add(bucket *b, size_t i, uint64_t ns, uint64_t flops, uint64_t bytes)
{
    if (b->st[i].count == 0)
        b->touched[b->ntouched++] = (uint32_t)i;
    analyze_stat_add(&b->st[i], ns, flops, bytes);
}

static int bucket_merge(bucket *into, const bucket *from)
{
    if (bucket_fit(into, from->cap))
        return -1;
    for (size_t k = 0; k < from->ntouched; k++) {
        uint32_t i = from->touched[k];
        if (into->st[i].count == 0)
            into->touched[into->ntouched++] = i;
        analyze_stat_merge(&into->st[i], &from->st[i]);
    }
    return 0;
}

static void state_free(state *s, size_t ring_cap);

analyze_profile *analyze_profile_create(const char *source, uint32_t skip_first, uint32_t skip_last)
{
    analyze_profile *p = base_calloc(1, sizeof *p);
    state *s = base_calloc(1, sizeof *s);
    if (!p || !s)
        goto oom;
    p->priv = s;
    s->tens = BASE_TABLE(tensor, sizeof(uint32_t));
    p->source = base_strdup(source ? source : "?");
    if (!p->source)
        goto oom;
    p->skip_first = skip_first;
    p->skip_last = skip_last;
    p->first_ns = UINT64_MAX;
    p->rank = p->world_size = -1;
    analyze_stat_init(&p->step);
    analyze_stat_init(&p->outside);
    if (skip_last && !(s->ring = base_calloc(skip_last, sizeof *s->ring)))
        goto oom;
    return p;
oom:
    state_free(s, 0);
    if (p)
        base_free(p->source);
    base_free(p);
    return NULL;
}

static void state_free(state *s, size_t ring_cap)
{
    if (!s)
        return;
    base_table_free(&s->tens);
    base_free(s->total.st), base_free(s->total.touched);
    base_free(s->outside.st), base_free(s->outside.touched);
    base_free(s->cur.st), base_free(s->cur.touched);
    for (size_t i = 0; s->ring && i < ring_cap; i++)
        base_free(s->ring[i].st), base_free(s->ring[i].touched);
    base_free(s->ring);
    tracer_flow_free(&s->flow);
    base_free(s);
}

void analyze_profile_destroy(analyze_profile *p)
{
    if (!p)
        return;
    state_free(p->priv, p->skip_last);
    for (size_t i = 0; i < p->nops; i++)
        base_free(p->ops[i].name);
    base_free(p->ops);
    for (size_t i = 0; i < p->nclasses; i++)
        base_free(p->classes[i]);
    base_free(p->classes);
    for (size_t i = 0; i < p->nroles; i++)
        base_free(p->roles[i]);
    base_free(p->roles);
    base_free(p->role_peak);
    base_free(p->role_live);
    base_free(p->role_at_peak);
    base_free(p->role_tensors);
    base_free(p->mem_steps);
    base_free(p->step_spans);
    analyze_devices_destroy(p->devices);
    analyze_meta *m = &p->meta;
    base_free(m->model), base_free(m->mode), base_free(m->preset), base_free(m->version), base_free(m->blas),
        base_free(m->cpu), base_free(m->skipped);
    base_free(p->source);
    base_free(p);
}

/* ---- snapshots ------------------------------------------------------------------ */
static int dup_field(char **dst, const char *src);
static void *dup_mem(const void *src, size_t n)
{
    if (!src || !n)
        return NULL;
    void *d = base_malloc(n);
    if (d)
        memcpy(d, src, n);
    return d;
}

static int dup_bucket(bucket *d, const bucket *b)
{
    *d = *b;
    d->st = NULL, d->touched = NULL;
    if (!b->cap)
        return 0;
    d->st = dup_mem(b->st, b->cap * ANALYZE_NPHASE * sizeof *b->st);
    d->touched = dup_mem(b->touched, b->cap * ANALYZE_NPHASE * sizeof *b->touched);
    return d->st && d->touched ? 0 : -1;
}

static int dup_names(char ***dst, char *const *src, size_t n)
{
    *dst = n ? base_calloc(n, sizeof **dst) : NULL;
    if (n && !*dst)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!((*dst)[i] = base_strdup(src[i])))
            return -1;
    return 0;
}

analyze_profile *analyze_profile_snapshot(const analyze_profile *p)
{
    const state *s = p->priv;
    analyze_profile *c = analyze_profile_create(p->source, p->skip_first, p->skip_last);
    if (!c)
        return NULL;
    state *cs = c->priv;
    bucket *ring = cs->ring; /* allocated by create: skip_last slots */
    *cs = *s;
    cs->ring = ring;
    cs->tens = (base_table){ 0 };  /* the copies come below; until then nothing of s's is owned */
    cs->flow = (tracer_flow){ 0 }; /* the step under way's data flow is not the snapshot's */
    cs->total.st = cs->outside.st = cs->cur.st = NULL;
    cs->total.touched = cs->outside.touched = cs->cur.touched = NULL;
    char *src = c->source;
    analyze_meta m = p->meta;
    void *priv = c->priv;
    *c = *p;
    c->source = src, c->priv = priv;
    c->meta = (analyze_meta){ 0 };
    c->ops = NULL, c->classes = c->roles = NULL, c->nops = c->nclasses = c->nroles = 0;
    c->role_peak = c->role_live = c->role_at_peak = c->role_tensors = NULL;
    c->mem_steps = NULL, c->nmem_steps = 0;
    c->devices = NULL; /* a live trace's snapshot: its device activity and step spans are not copied */
    c->step_spans = NULL, c->nstep_spans = 0;
    c->meta = m; /* the counts and flags; then the strings, owned */
    c->meta.model = c->meta.mode = c->meta.preset = c->meta.version = c->meta.blas = c->meta.cpu = NULL;
    c->meta.skipped = NULL;
    if (dup_field(&c->meta.model, m.model) || dup_field(&c->meta.mode, m.mode) ||
        dup_field(&c->meta.preset, m.preset) || dup_field(&c->meta.version, m.version) ||
        dup_field(&c->meta.blas, m.blas) || dup_field(&c->meta.cpu, m.cpu) || dup_field(&c->meta.skipped, m.skipped))
        goto oom;
    c->diag = p->diag;
    if (p->nops) {
        if (!(c->ops = base_calloc(p->nops, sizeof *c->ops)))
            goto oom;
        for (size_t i = 0; i < p->nops; i++) {
            c->ops[i] = p->ops[i];
            c->ops[i].name = NULL;
        }
        c->nops = p->nops;
        for (size_t i = 0; i < p->nops; i++)
            if (!(c->ops[i].name = base_strdup(p->ops[i].name)))
                goto oom;
    }
    if (dup_names(&c->classes, p->classes, p->nclasses))
        goto oom;
    c->nclasses = p->nclasses;
    if (dup_names(&c->roles, p->roles, p->nroles))
        goto oom;
    c->nroles = p->nroles;
    if (p->nroles) {
        size_t n = p->nroles * sizeof(uint64_t);
        if (!(c->role_peak = dup_mem(p->role_peak, n)) || !(c->role_live = dup_mem(p->role_live, n)) ||
            !(c->role_at_peak = dup_mem(p->role_at_peak, n)) || !(c->role_tensors = dup_mem(p->role_tensors, n)))
            goto oom;
    }
    if (p->mem_steps) {
        if (!(c->mem_steps = base_malloc(ANALYZE_MEM_STEPS_MAX * sizeof *c->mem_steps)))
            goto oom;
        memcpy(c->mem_steps, p->mem_steps, p->nmem_steps * sizeof *c->mem_steps);
        c->nmem_steps = p->nmem_steps;
    }
    if (base_table_copy(&cs->tens, &s->tens))
        goto oom;
    if (dup_bucket(&cs->total, &s->total) || dup_bucket(&cs->outside, &s->outside) || dup_bucket(&cs->cur, &s->cur))
        goto oom;
    for (size_t i = 0; i < p->skip_last; i++)
        if (dup_bucket(&cs->ring[i], &s->ring[i]))
            goto oom;
    analyze_profile_finish(c);
    return c;
oom:
    analyze_profile_destroy(c);
    return NULL;
}

/* ---- interning --------------------------------------------------------------- */
static int intern(char ***names, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*names)[i], name) == 0)
            return (int)i;
    char **v = base_realloc(*names, (*n + 1) * sizeof *v);
    if (!v)
        return -1;
    *names = v;
    if (!(v[*n] = base_strdup(name)))
        return -1;
    return (int)(*n)++;
}

int analyze_profile_intern_op(analyze_profile *p, const char *name, const char *cls)
{
    for (size_t i = 0; i < p->nops; i++)
        if (strcmp(p->ops[i].name, name) == 0)
            return (int)i;
    int c = intern(&p->classes, &p->nclasses, cls ? cls : "unknown");
    if (c < 0)
        return -1;
    analyze_optype *v = base_realloc(p->ops, (p->nops + 1) * sizeof *v);
    if (!v)
        return -1;
    p->ops = v;
    analyze_optype *o = &v[p->nops];
    memset(o, 0, sizeof *o);
    if (!(o->name = base_strdup(name)))
        return -1;
    o->cls = c;
    for (int i = 0; i < ANALYZE_NPHASE; i++)
        analyze_stat_init(&o->phase[i]);
    analyze_stat_init(&o->all);
    return (int)p->nops++;
}

int analyze_profile_intern_role(analyze_profile *p, const char *name)
{
    size_t before = p->nroles;
    int r = intern(&p->roles, &p->nroles, name);
    if (r < 0 || p->nroles == before)
        return r;
    uint64_t **per_role[] = { &p->role_peak, &p->role_live, &p->role_at_peak, &p->role_tensors };
    for (size_t i = 0; i < sizeof per_role / sizeof per_role[0]; i++) {
        uint64_t *a = base_realloc(*per_role[i], p->nroles * sizeof *a);
        if (!a) {
            p->nroles--; /* keep the names consistent with the arrays (some may be longer: harmless) */
            base_free(p->roles[p->nroles]);
            return -1;
        }
        *per_role[i] = a;
        a[r] = 0;
    }
    return r;
}

/* ---- run metadata ---------------------------------------------------------- */
static int dup_field(char **dst, const char *src)
{
    base_free(*dst);
    *dst = NULL;
    if (src && !(*dst = base_strdup(src)))
        return -1;
    return 0;
}

int analyze_profile_run_begin(analyze_profile *p, const analyze_meta *m)
{
    analyze_meta *d = &p->meta;
    p->diag.run_begins++;
    d->have_begin = 1;
    d->schema = m->schema;
    d->batch = m->batch, d->steps = m->steps, d->threads = m->threads, d->inter = m->inter;
    d->seed = m->seed;
    if (dup_field(&d->model, m->model) || dup_field(&d->mode, m->mode) || dup_field(&d->preset, m->preset) ||
        dup_field(&d->version, m->version) || dup_field(&d->blas, m->blas) || dup_field(&d->cpu, m->cpu))
        return -1;
    return 0;
}

void analyze_profile_run_end(analyze_profile *p, int32_t status, uint64_t ops)
{
    p->meta.have_end = 1;
    p->meta.status = status;
    p->meta.ops = ops;
}

/* ---- steps ------------------------------------------------------------------ */
static void flow_fold(analyze_profile *p, const tracer_critpath *cp)
{
    if (!cp->ops)
        return;
    double par = cp->critical_ns ? (double)cp->total_ns / (double)cp->critical_ns : 1.0;
    if (!p->flow_steps || par < p->flow_min)
        p->flow_min = par;
    if (!p->flow_steps || par > p->flow_max)
        p->flow_max = par;
    p->flow_steps++;
    p->flow_op_ns += (double)cp->total_ns;
    p->flow_critical_ns += (double)cp->critical_ns;
    p->flow_ops += cp->ops;
    p->flow_critical_ops += cp->critical_ops;
}

static int fold_kept(analyze_profile *p, bucket *b)
{
    state *s = p->priv;
    if (bucket_merge(&s->total, b))
        return -1;
    analyze_stat_add(&p->step, b->dur, 0, 0);
    flow_fold(p, &b->cp);
    return 0;
}

int analyze_profile_follow_flow(analyze_profile *p)
{
    ((state *)p->priv)->follow_flow = 1;
    return 0;
}

int analyze_profile_flow_op(analyze_profile *p, uint64_t begin, uint64_t end, const uint32_t *in, uint32_t nin,
                            const uint32_t *out, uint32_t nout)
{
    state *s = p->priv;
    if (!s || !s->follow_flow)
        return 0;
    if ((in && nin) || (out && nout))
        p->flow_seen = 1;
    /* the step under way's ops (the executor flushes a step's records
     * before its step_end); with no step yet, the trace may have none: its
     * ops are one step */
    if (s->next_ordinal && !(s->in_step && begin >= s->step_begin_ts))
        return 0;
    return tracer_flow_add(&s->flow, begin, end, in, nin, out, nout);
}

int analyze_profile_step_begin(analyze_profile *p, uint64_t ts, uint32_t step)
{
    (void)step;
    state *s = p->priv;
    if (s->in_step) /* the previous step never ended: drop it */
        p->diag.unmatched_steps++;
    s->in_step = 1;
    tracer_flow_clear(&s->flow); /* ops before the first step, or between steps */
    s->cur.ordinal = s->next_ordinal++;
    if (bucket_fit(&s->cur, p->nops))
        return -1;
    bucket_reset(&s->cur);
    s->step_begin_ts = ts;
    s->mem_start = s->mem_peak = p->live_bytes;
    return 0;
}

int analyze_profile_step_end(analyze_profile *p, uint64_t ts, uint32_t step)
{
    (void)step;
    state *s = p->priv;
    if (!s->in_step) {
        p->diag.unmatched_steps++;
        return 0;
    }
    s->in_step = 0;
    p->steps_seen++;
    s->recent[s->nrecent % 8].ordinal = s->cur.ordinal;
    s->recent[s->nrecent % 8].begin = s->step_begin_ts;
    s->recent[s->nrecent % 8].end = ts;
    s->nrecent++;
    if (p->nmem_steps == ANALYZE_MEM_STEPS_MAX) {
        p->mem_steps_dropped++;
    } else {
        if (!p->mem_steps && !(p->mem_steps = base_malloc(ANALYZE_MEM_STEPS_MAX * sizeof *p->mem_steps)))
            return -1;
        p->mem_steps[p->nmem_steps++] = (analyze_mem_step){ s->mem_start, s->mem_peak, p->live_bytes };
    }
    if (p->nstep_spans == ANALYZE_MEM_STEPS_MAX) {
        p->step_spans_dropped++;
    } else {
        if (!p->step_spans && !(p->step_spans = base_malloc(ANALYZE_MEM_STEPS_MAX * sizeof *p->step_spans)))
            return -1;
        p->step_spans[p->nstep_spans++] = (analyze_step_span){ s->cur.ordinal, s->step_begin_ts, ts };
    }
    s->cur.dur = ts >= s->step_begin_ts ? ts - s->step_begin_ts : 0;
    if (tracer_flow_step(&s->flow, &s->cur.cp))
        return -1;
    if (s->cur.ordinal < p->skip_first)
        return 0;
    if (!p->skip_last)
        return fold_kept(p, &s->cur);
    /* the ring holds the last skip_last completed steps; the oldest one
     * leaves it as kept when a new one arrives */
    size_t cap = p->skip_last;
    bucket *slot;
    if (s->ring_len < cap) {
        slot = &s->ring[(s->ring_head + s->ring_len) % cap];
        s->ring_len++;
    } else {
        slot = &s->ring[s->ring_head];
        if (fold_kept(p, slot))
            return -1;
        s->ring_head = (s->ring_head + 1) % cap;
    }
    /* swap cur into the slot (the slot's array is reused by cur) */
    bucket tmp = *slot;
    *slot = s->cur;
    s->cur = tmp;
    s->cur.ordinal = OUTSIDE;
    return 0;
}

/* Where does an op of step `ordinal` go? NULL: dropped. */
static bucket *target(analyze_profile *p, uint64_t ordinal)
{
    state *s = p->priv;
    if (ordinal == OUTSIDE)
        return &s->outside;
    if (s->in_step && ordinal == s->cur.ordinal)
        return &s->cur;
    for (size_t i = 0; i < s->ring_len; i++) {
        bucket *b = &s->ring[(s->ring_head + i) % p->skip_last];
        if (b->ordinal == ordinal)
            return b;
    }
    /* its step has ended: skipped, folded into the totals, or (when newer
     * than the oldest step in the ring yet not in it) dropped as incomplete */
    if (ordinal < p->skip_first)
        return NULL;
    if (s->ring_len && ordinal > s->ring[s->ring_head].ordinal)
        return NULL;
    return &s->total;
}

/* ---- ops ----------------------------------------------------------------------- */
int analyze_profile_op(analyze_profile *p, uint64_t begin, uint64_t end, int op, analyze_phase phase, uint64_t flops,
                       uint64_t bytes)
{
    state *s = p->priv;
    uint64_t ns = end >= begin ? end - begin : 0;
    p->ops_seen++;
    if (begin < p->first_ns)
        p->first_ns = begin;
    if (end > p->last_ns)
        p->last_ns = end;
    /* the step it began in: the one in progress, or one that ended since
     * (records arrive when the op ends, or later in a batch) */
    uint64_t ordinal = OUTSIDE;
    if (s->in_step && begin >= s->step_begin_ts) {
        ordinal = s->cur.ordinal;
    } else {
        unsigned n = s->nrecent < 8 ? s->nrecent : 8;
        for (unsigned i = 1; i <= n; i++) {
            unsigned k = (s->nrecent - i) % 8;
            if (s->recent[k].begin <= begin && begin <= s->recent[k].end) {
                ordinal = s->recent[k].ordinal;
                break;
            }
        }
    }
    bucket *t = target(p, ordinal);
    if (!t)
        return 0;
    if (bucket_fit(t, p->nops))
        return -1;
    bucket_add(t, (size_t)op * ANALYZE_NPHASE + phase, ns, flops, bytes);
    return 0;
}

int analyze_profile_joined(analyze_profile *p, const analyze_stat *steps, uint64_t outside_ops)
{
    state *s = p->priv;
    p->joined = 1;
    p->joined_step = steps->count;
    p->steps_seen = steps->count;
    s->next_ordinal = steps->count;
    analyze_stat_merge(&p->step, steps);
    p->ops_seen += outside_ops;
    return 0;
}

int analyze_profile_totals(analyze_profile *p, int op, analyze_phase phase, const analyze_stat *st)
{
    state *s = p->priv;
    if (op < 0 || (size_t)op >= p->nops || !st->count)
        return 0;
    if (bucket_fit(&s->total, p->nops))
        return -1;
    size_t i = (size_t)op * ANALYZE_NPHASE + phase;
    if (s->total.st[i].count == 0)
        s->total.touched[s->total.ntouched++] = (uint32_t)i;
    analyze_stat_merge(&s->total.st[i], st);
    p->ops_seen += st->count;
    return 0;
}

/* ---- tensors ------------------------------------------------------------------ */
static void tensor_release(analyze_profile *p, tensor *t)
{
    p->role_live[t->role] -= t->bytes;
    p->live_bytes -= t->bytes;
    p->tensors_live--;
}

int analyze_profile_tensor_alloc(analyze_profile *p, uint32_t id, int role, uint64_t bytes)
{
    state *s = p->priv;
    tensor *t;
    base_table_status st = base_table_put(&s->tens, &id, (void **)&t);
    if (st == BASE_TABLE_NOMEM)
        return -1;
    if (st == BASE_TABLE_FOUND) /* re-allocated without a free: replace it */
        tensor_release(p, t);
    t->role = role, t->bytes = bytes;
    p->tensors++;
    p->tensors_live++;
    p->role_tensors[role]++;
    p->role_live[role] += bytes;
    if (p->role_live[role] > p->role_peak[role])
        p->role_peak[role] = p->role_live[role];
    p->live_bytes += bytes;
    if (p->live_bytes > p->peak_bytes) {
        p->peak_bytes = p->live_bytes;
        memcpy(p->role_at_peak, p->role_live, p->nroles * sizeof *p->role_at_peak);
        p->peak_in_step = s->in_step;
        p->peak_step = s->in_step ? s->cur.ordinal : s->next_ordinal;
    }
    if (s->in_step && p->live_bytes > s->mem_peak)
        s->mem_peak = p->live_bytes;
    return 0;
}

void analyze_profile_tensor_free(analyze_profile *p, uint32_t id)
{
    state *s = p->priv;
    tensor *t = base_table_get(&s->tens, &id);
    if (!t) {
        if (!p->joined) /* a late viewer never saw the allocations before it joined */
            p->diag.unknown_frees++;
        return;
    }
    tensor_release(p, t);
    base_table_del(&s->tens, t);
}

/* ---- finish and views ---------------------------------------------------------- */
void analyze_profile_finish(analyze_profile *p)
{
    if (p->finished)
        return;
    p->finished = 1;
    state *s = p->priv;
    if (s->in_step)
        p->diag.unmatched_steps++;
    bucket *src = &s->total;
    if (s->next_ordinal == 0) {
        src = &s->outside; /* no steps: every op counts */
        tracer_critpath cp;
        if (tracer_flow_step(&s->flow, &cp) == 0)
            flow_fold(p, &cp);
        else
            p->flow_nomem = 1;
    }
    if (bucket_fit(src, p->nops) == 0) {
        for (size_t o = 0; o < p->nops; o++) {
            analyze_optype *t = &p->ops[o];
            for (int ph = 0; ph < ANALYZE_NPHASE; ph++) {
                t->phase[ph] = src->st[o * ANALYZE_NPHASE + ph];
                analyze_stat_merge(&t->all, &t->phase[ph]);
            }
        }
    }
    if (bucket_fit(&s->outside, p->nops) == 0)
        for (size_t i = 0; i < p->nops * ANALYZE_NPHASE; i++)
            analyze_stat_merge(&p->outside, &s->outside.st[i]);
    state_free(s, p->skip_last);
    p->priv = NULL;
}

uint64_t analyze_profile_total_ns(const analyze_profile *p)
{
    uint64_t t = 0;
    for (size_t i = 0; i < p->nops; i++)
        t += p->ops[i].all.ns;
    return t;
}

uint64_t analyze_profile_steps_kept(const analyze_profile *p) { return p->step.count; }

size_t analyze_profile_kept_spans(const analyze_profile *p, const analyze_step_span **v)
{
    size_t i = 0, n = p->nstep_spans;
    while (i < n && p->step_spans[i].ordinal < p->skip_first)
        i++;
    /* the last skip_last completed steps are dropped: those past the held
     * spans first */
    uint64_t last = p->skip_last > p->step_spans_dropped ? p->skip_last - p->step_spans_dropped : 0;
    n = n - i > last ? n - last : i;
    *v = p->step_spans ? p->step_spans + i : NULL;
    return n - i;
}

void analyze_profile_class_stats(const analyze_profile *p, analyze_stat *out)
{
    for (size_t c = 0; c < p->nclasses; c++)
        analyze_stat_init(&out[c]);
    for (size_t i = 0; i < p->nops; i++)
        analyze_stat_merge(&out[p->ops[i].cls], &p->ops[i].all);
}

void analyze_profile_phase_stats(const analyze_profile *p, analyze_stat *out)
{
    for (int ph = 0; ph < ANALYZE_NPHASE; ph++) {
        analyze_stat_init(&out[ph]);
        for (size_t i = 0; i < p->nops; i++)
            analyze_stat_merge(&out[ph], &p->ops[i].phase[ph]);
    }
}

static const analyze_profile *sort_p;
static int by_time(const void *a, const void *b)
{
    const analyze_optype *x = &sort_p->ops[*(const size_t *)a], *y = &sort_p->ops[*(const size_t *)b];
    if (x->all.ns != y->all.ns)
        return x->all.ns > y->all.ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

void analyze_profile_ops_by_time(const analyze_profile *p, size_t *out)
{
    for (size_t i = 0; i < p->nops; i++)
        out[i] = i;
    sort_p = p;
    qsort(out, p->nops, sizeof *out, by_time);
    sort_p = NULL;
}

const char *analyze_profile_model(const analyze_profile *p)
{
    return p->meta.model && *p->meta.model ? p->meta.model : "?";
}

const char *analyze_profile_mode(const analyze_profile *p)
{
    return p->meta.mode && *p->meta.mode ? p->meta.mode : "?";
}

static int add_line(char *buf, size_t len, size_t *pos, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int add_line(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
    if (*pos < len) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
        va_end(ap);
        if (n > 0)
            *pos += (size_t)n < len - *pos ? (size_t)n : len - *pos - 1;
    }
    return 1;
}

int analyze_profile_warnings(const analyze_profile *p, char *buf, size_t len)
{
    size_t pos = 0;
    int n = 0;
    const analyze_diag *d = &p->diag;
    if (buf && len)
        buf[0] = 0;
    if (!buf)
        len = 0;
#define W(cond, ...) \
    if (cond)        \
    n += add_line(buf, len, &pos, __VA_ARGS__)
    W(d->discarded_events, "%llu events discarded by the tracer: op times and counts are incomplete\n",
      (unsigned long long)d->discarded_events);
    W(d->discarded_unknown, "%llu discarded-events records without a count: events were lost\n",
      (unsigned long long)d->discarded_unknown);
    W(d->discarded_packets, "%llu packets discarded by the tracer: op times and counts are incomplete\n",
      (unsigned long long)d->discarded_packets);
    W(d->unmatched_begin, "%llu op_begin events without their op_end (not counted)\n",
      (unsigned long long)d->unmatched_begin);
    W(d->unmatched_end, "%llu op_end events without their op_begin (not counted)\n",
      (unsigned long long)d->unmatched_end);
    W(d->negative_time,
      "%llu ops with impossible times, ending before they begin or outside their thread's ops events "
      "(counted as 0 ns)\n",
      (unsigned long long)d->negative_time);
    W(d->undefined_nodes, "%llu op records name a node no node_def describes (not counted)\n",
      (unsigned long long)d->undefined_nodes);
    W(d->redefined_nodes, "%llu node_def events describe an already described node differently\n",
      (unsigned long long)d->redefined_nodes);
    W(d->unmatched_steps, "%llu step_begin/step_end events without their pair (steps dropped)\n",
      (unsigned long long)d->unmatched_steps);
    W(d->foreign_events, "%llu events of other providers ignored\n", (unsigned long long)d->foreign_events);
    W(d->unknown_events, "%llu fathom events of unknown types ignored\n", (unsigned long long)d->unknown_events);
    W(d->malformed_events, "%llu fathom events with missing or mistyped fields ignored\n",
      (unsigned long long)d->malformed_events);
    W(d->unknown_frees, "%llu tensor_free events of unknown tensors\n", (unsigned long long)d->unknown_frees);
    W(d->run_begins > 1, "%llu run_begin events: several runs are summed\n", (unsigned long long)d->run_begins);
    W(!p->meta.have_begin, "no fathom:run_begin event: model and mode unknown\n");
    W(p->meta.skipped, "skipped %s\n", p->meta.skipped);
    W(p->meta.have_end && p->meta.ops != p->ops_seen + d->unmatched_begin + d->undefined_nodes,
      "run_end says %llu ops ran, the trace holds %llu\n", (unsigned long long)p->meta.ops,
      (unsigned long long)(p->ops_seen + d->unmatched_begin + d->undefined_nodes));
    W(p->steps_seen && !p->step.count, "all %llu steps skipped (--skip-first %u --skip-last %u): nothing left\n",
      (unsigned long long)p->steps_seen, p->skip_first, p->skip_last);
#undef W
    return n;
}

size_t analyze_ops_for_share(const analyze_profile *p, const size_t *ord, double target)
{
    uint64_t total = analyze_profile_total_ns(p);
    if (!total || !p->nops)
        return 0;
    uint64_t cum = 0;
    size_t k = 0;
    while (k < p->nops) {
        cum += p->ops[ord[k++]].all.ns;
        if ((double)cum >= target * (double)total - 1e-9)
            break;
    }
    return k;
}

size_t *analyze_profile_classes_by_time(const analyze_profile *p, analyze_stat *cs)
{
    size_t *ord = base_malloc((p->nclasses ? p->nclasses : 1) * sizeof *ord);
    if (!ord)
        return NULL;
    analyze_profile_class_stats(p, cs);
    for (size_t i = 0; i < p->nclasses; i++)
        ord[i] = i;
    for (size_t i = 1; i < p->nclasses; i++) /* insertion sort: few classes */
        for (size_t j = i; j > 0 && cs[ord[j]].ns > cs[ord[j - 1]].ns; j--) {
            size_t t = ord[j];
            ord[j] = ord[j - 1], ord[j - 1] = t;
        }
    return ord;
}

double analyze_step_ns(const analyze_profile *p) { return analyze_stat_mean(&p->step); }

int analyze_profile_named_differently(const char *x, const char *y) { return x && y && *x && *y && strcmp(x, y) != 0; }
