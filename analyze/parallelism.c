/* parallelism.c -- the average parallelism of a trace's data-flow graph
 * (see parallelism.h).
 *
 * Each op record of a step is kept (its begin and end, its inputs and
 * outputs) until the step ends; then the records are taken in the order of
 * their begins (a topological order: an op begins after the ops whose
 * outputs it reads have ended) and each op's finish on an unbounded machine
 * is its own time plus the latest finish of the ops that wrote its inputs
 * in this step. The critical path is the latest finish. */
#include "analyze/parallelism.h"

#include "tracer/isolate.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct par_rec {
    uint64_t begin, end;
    uint32_t first, nin, nout; /* its tensor ids: ids[first .. first+nin+nout) */
} par_rec;

/* The latest finish of each tensor written in the current step: open
 * addressing on the trace's tensor id, entries of older steps ignored by
 * their stamp. */
typedef struct par_slot {
    uint32_t id, stamp;
    uint64_t finish;
    uint32_t path; /* ops on the longest chain ending there */
} par_slot;

typedef struct par_state {
    analyze_par_trace *out;
    par_rec *recs;
    size_t nrecs, caprecs;
    uint32_t *ids;
    size_t nids, capids;
    par_slot *slots;
    size_t capslots;   /* a power of two */
    uint32_t stamp;
    int in_step, steps_seen, flow_seen;
    double *step_op, *step_cp, *step_ops, *step_cpops; /* per completed step */
    size_t nsteps, capsteps;
    int nomem;
} par_state;

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int cmp_begin(const void *a, const void *b)
{
    const par_rec *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end > y->end) - (x->end < y->end);
}

static par_slot *slot_of(par_state *s, uint32_t id, int insert)
{
    size_t mask = s->capslots - 1, i = (id * 2654435761u) & mask;
    for (;; i = (i + 1) & mask) {
        par_slot *e = &s->slots[i];
        if (e->stamp != s->stamp) {
            if (!insert)
                return NULL;
            e->stamp = s->stamp, e->id = id, e->finish = 0, e->path = 0;
            return e;
        }
        if (e->id == id)
            return e;
    }
}

/* Computes the critical path of the buffered records as one step. */
static int close_step(par_state *s)
{
    if (!s->nrecs)
        return 0;
    size_t need = 16;
    while (need < 2 * s->nids + 16)
        need *= 2;
    if (need > s->capslots) {
        free(s->slots);
        s->slots = calloc(need, sizeof *s->slots);
        if (!s->slots)
            return -1;
        s->capslots = need;
        s->stamp = 0;
    }
    if (++s->stamp == 0) { /* wrapped: clear */
        memset(s->slots, 0, s->capslots * sizeof *s->slots);
        s->stamp = 1;
    }
    qsort(s->recs, s->nrecs, sizeof *s->recs, cmp_begin);
    uint64_t total = 0, cp = 0;
    uint32_t cpops = 0;
    for (size_t r = 0; r < s->nrecs; r++) {
        const par_rec *x = &s->recs[r];
        uint64_t ready = 0, dur = x->end - x->begin;
        uint32_t path = 0;
        for (uint32_t i = 0; i < x->nin; i++) {
            const par_slot *e = slot_of(s, s->ids[x->first + i], 0);
            if (e && (e->finish > ready || (e->finish == ready && e->path > path)))
                ready = e->finish, path = e->path;
        }
        uint64_t fin = ready + dur;
        total += dur;
        for (uint32_t o = 0; o < x->nout; o++) {
            par_slot *e = slot_of(s, s->ids[x->first + x->nin + o], 1);
            e->finish = fin;
            e->path = path + 1;
        }
        if (fin > cp || (fin == cp && path + 1 > cpops))
            cp = fin, cpops = path + 1;
    }
    if (grow((void **)&s->step_op, &s->capsteps, s->nsteps + 1, sizeof(double)))
        return -1;
    size_t cap = s->capsteps; /* the four arrays share one capacity */
    double *a = realloc(s->step_cp, cap * sizeof *a);
    if (!a)
        return -1;
    s->step_cp = a;
    if (!(a = realloc(s->step_ops, cap * sizeof *a)))
        return -1;
    s->step_ops = a;
    if (!(a = realloc(s->step_cpops, cap * sizeof *a)))
        return -1;
    s->step_cpops = a;
    s->step_op[s->nsteps] = (double)total;
    s->step_cp[s->nsteps] = (double)cp;
    s->step_ops[s->nsteps] = (double)s->nrecs;
    s->step_cpops[s->nsteps] = cpops;
    s->nsteps++;
    s->nrecs = s->nids = 0;
    return 0;
}

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

static int cb_run_begin(void *user, const tracer_run *run)
{
    par_state *s = user;
    analyze_par_trace *t = s->out;
    if (!t->model[0]) {
        free(t->model), free(t->mode), free(t->preset);
        t->model = dup_or_empty(run->model);
        t->mode = dup_or_empty(run->mode);
        t->preset = dup_or_empty(run->preset);
        t->threads = run->threads;
        t->inter = run->inter;
        if (!t->model || !t->mode || !t->preset)
            return s->nomem = 1, -1;
    }
    return 0;
}

static int cb_step_begin(void *user, uint64_t ts, uint32_t step)
{
    (void)ts, (void)step;
    par_state *s = user;
    if (!s->steps_seen) /* ops before the first step are not part of one */
        s->nrecs = s->nids = 0;
    s->steps_seen = 1;
    s->in_step = 1;
    return 0;
}

static int cb_step_end(void *user, uint64_t ts, uint32_t step, double loss)
{
    (void)ts, (void)step, (void)loss;
    par_state *s = user;
    if (s->in_step && close_step(s))
        return s->nomem = 1, -1;
    s->in_step = 0;
    s->nrecs = s->nids = 0;
    return 0;
}

static int cb_op(void *user, const tracer_op *op)
{
    par_state *s = user;
    if (s->steps_seen && !s->in_step)
        return 0; /* between steps */
    const tracer_node *n = op->node;
    uint32_t nin = n->inputs ? n->nin : 0, nout = n->outputs ? n->nout : 0;
    if (nin || nout)
        s->flow_seen = 1;
    if (grow((void **)&s->recs, &s->caprecs, s->nrecs + 1, sizeof *s->recs) ||
        grow((void **)&s->ids, &s->capids, s->nids + nin + nout, sizeof *s->ids))
        return s->nomem = 1, -1;
    s->recs[s->nrecs++] = (par_rec){ .begin = op->begin, .end = op->end >= op->begin ? op->end : op->begin,
                                     .first = (uint32_t)s->nids, .nin = nin, .nout = nout };
    if (nin)
        memcpy(s->ids + s->nids, n->inputs, nin * sizeof *s->ids);
    if (nout)
        memcpy(s->ids + s->nids + nin, n->outputs, nout * sizeof *s->ids);
    s->nids += nin + nout;
    return 0;
}

static const tracer_decode_cbs par_cbs = {
    .run_begin = cb_run_begin,
    .step_begin = cb_step_begin,
    .step_end = cb_step_end,
    .op = cb_op,
};

static void state_free(par_state *s)
{
    free(s->recs), free(s->ids), free(s->slots);
    free(s->step_op), free(s->step_cp), free(s->step_ops), free(s->step_cpops);
}

/* One source into t; 0, or -1 with err. */
static int read_one(const char *source, uint32_t skip_first, uint32_t skip_last, analyze_par_trace *t, char *err,
                    size_t errlen)
{
    par_state s = { .out = t };
    tracer_decode_diag diag = { 0 };
    int rc = -1;
    if (tracer_read_decode_isolated(source, &par_cbs, &s, &diag, err, errlen) != 0) {
        if (s.nomem)
            snprintf(err, errlen, "%s: out of memory", source);
        goto end;
    }
    if (diag.schema == 1) {
        snprintf(err, errlen, "%s: a schema-1 trace has no data flow (node_def); record it with this fathom", source);
        goto end;
    }
    if (!s.steps_seen && close_step(&s)) { /* a trace without steps: all of it, one step */
        snprintf(err, errlen, "%s: out of memory", source);
        goto end;
    }
    if (!s.flow_seen) {
        snprintf(err, errlen, "%s: no data flow (its ops name no input or output tensors)", source);
        goto end;
    }
    size_t lo = skip_first, hi = s.nsteps > skip_last ? s.nsteps - skip_last : 0;
    if (lo >= hi) {
        snprintf(err, errlen, "%s: no op in the kept steps (%zu steps with ops, skipping %u first and %u last)",
                 source, s.nsteps, skip_first, skip_last);
        goto end;
    }
    double op = 0, cp = 0, ops = 0, cpops = 0;
    t->min_step = 1e300, t->max_step = 0;
    for (size_t i = lo; i < hi; i++) {
        op += s.step_op[i], cp += s.step_cp[i], ops += s.step_ops[i], cpops += s.step_cpops[i];
        double p = s.step_cp[i] > 0 ? s.step_op[i] / s.step_cp[i] : 1.0;
        if (p < t->min_step)
            t->min_step = p;
        if (p > t->max_step)
            t->max_step = p;
    }
    t->steps = hi - lo;
    t->op_ns = op / (double)t->steps;
    t->critical_ns = cp / (double)t->steps;
    t->ops = ops / (double)t->steps;
    t->critical_ops = cpops / (double)t->steps;
    t->parallelism = cp > 0 ? op / cp : 1.0;
    rc = 0;
end:
    state_free(&s);
    return rc;
}

analyze_parallelism *analyze_parallelism_create(const char *const *sources, size_t n, uint32_t skip_first,
                                                uint32_t skip_last, char *err, size_t errlen)
{
    analyze_parallelism *a = calloc(1, sizeof *a);
    if (!a || !(a->t = calloc(n ? n : 1, sizeof *a->t))) {
        free(a);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (!n) {
        snprintf(err, errlen, "no trace given");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        analyze_par_trace *t = &a->t[a->n++];
        t->source = strdup(sources[i]);
        t->model = strdup(""), t->mode = strdup(""), t->preset = strdup("");
        if (!t->source || !t->model || !t->mode || !t->preset) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        if (read_one(sources[i], skip_first, skip_last, t, err, errlen))
            goto fail;
    }
    return a;
fail:
    analyze_parallelism_destroy(a);
    return NULL;
}

void analyze_parallelism_destroy(analyze_parallelism *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        free(a->t[i].source), free(a->t[i].model), free(a->t[i].mode), free(a->t[i].preset);
    free(a->t);
    free(a);
}

int analyze_parallelism_print(FILE *f, const analyze_parallelism *a, analyze_format fmt)
{
    if (fmt == CLI_JSON) {
        json_t *arr = json_array(), *root = json_pack("{s:i, s:o}", "schema", 1, "traces", arr);
        if (!root)
            return -1;
        for (size_t i = 0; i < a->n; i++) {
            const analyze_par_trace *t = &a->t[i];
            json_array_append_new(
                arr, json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "source",
                               t->source, "model", t->model, "mode", t->mode, "preset", t->preset, "threads",
                               (int)t->threads, "inter", (int)t->inter, "steps", (json_int_t)t->steps, "op_ns",
                               t->op_ns, "critical_ns", t->critical_ns, "ops", t->ops, "critical_ops",
                               t->critical_ops, "parallelism", t->parallelism, "min_step", t->min_step,
                               "max_step", t->max_step));
        }
        int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(root);
        fputc('\n', f);
        return rc || ferror(f) ? -1 : 0;
    }
    if (fmt == CLI_CSV) {
        fprintf(f, "source,model,mode,preset,threads,inter,steps,op_ms,critical_ms,ops,critical_ops,parallelism,"
                   "min_step,max_step\n");
        for (size_t i = 0; i < a->n; i++) {
            const analyze_par_trace *t = &a->t[i];
            fprintf(f, "\"%s\",%s,%s,%s,%u,%u,%llu,%.6f,%.6f,%.1f,%.1f,%.4f,%.4f,%.4f\n", t->source, t->model,
                    t->mode, t->preset, t->threads, t->inter, (unsigned long long)t->steps, t->op_ns / 1e6,
                    t->critical_ns / 1e6, t->ops, t->critical_ops, t->parallelism, t->min_step, t->max_step);
        }
        return ferror(f) ? -1 : 0;
    }
    for (size_t i = 0; i < a->n; i++) {
        const analyze_par_trace *t = &a->t[i];
        fprintf(f, "%s== %s %s (%s, %u thread%s x %u inter-op)  %s\n", i ? "\n" : "", t->model[0] ? t->model : "?",
                t->mode, t->preset, t->threads, t->threads == 1 ? "" : "s", t->inter, t->source);
        fprintf(f, "steps: %llu; per step: op time %.3f ms in %.0f ops, critical path %.3f ms in %.0f ops\n",
                (unsigned long long)t->steps, t->op_ns / 1e6, t->ops, t->critical_ns / 1e6, t->critical_ops);
        fprintf(f, "average parallelism %.2f (steps: lowest %.2f, highest %.2f)\n", t->parallelism, t->min_step,
                t->max_step);
    }
    return ferror(f) ? -1 : 0;
}

static const char usage_text[] =
    "usage: fathom analyze parallelism [--format text|csv|json] [--skip-first N] [--skip-last N] TRACE...\n\n"
    "The average parallelism of each trace's data-flow graph: per step, the total op\n"
    "time over the time of the critical path (the longest chain of ops each reading\n"
    "what the previous one wrote, weighted by the recorded op times). 1.0 is a chain;\n"
    "an inter-op worker per unit above 1 has work to do. Needs the data flow of trace\n"
    "schema 2. See fathom-analyze(1).\n";

/* "fathom analyze parallelism: message" on stderr; returns rc. */
static int say(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int say(int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fathom analyze parallelism: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return rc;
}

/* A count option: plain decimal digits in [0, 1000000]. */
static int parse_count(const char *opt, const char *v, long *out)
{
    char *end = NULL;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!*v || strspn(v, "0123456789") != strlen(v) || errno || *end || x > 1000000)
        return say(-1, "%s wants an integer in [0, 1000000], not '%s'", opt, v);
    *out = x;
    return 0;
}

int analyze_parallelism_main(int argc, char **argv)
{
    analyze_format fmt = CLI_TEXT;
    long skip_first = 0, skip_last = 0;
    const char **traces = calloc((size_t)argc + 1, sizeof *traces);
    size_t nt = 0;
    int rc = 2;
    if (!traces)
        return say(1, "out of memory");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            rc = 0;
            goto end;
        }
        if (a[0] != '-') {
            traces[nt++] = a;
            continue;
        }
        if (i + 1 >= argc) {
            say(2, "%s needs a value, or is not an option; see --help", a);
            goto end;
        }
        const char *v = argv[++i];
        if (strcmp(a, "--format") == 0) {
            int f = cli_format_from(v, 1);
            if (f < 0) {
                say(2, "unknown format '%s' (use text, csv or json)", v);
                goto end;
            }
            fmt = (analyze_format)f;
        } else if (strcmp(a, "--skip-first") == 0) {
            if (parse_count(a, v, &skip_first))
                goto end;
        } else if (strcmp(a, "--skip-last") == 0) {
            if (parse_count(a, v, &skip_last))
                goto end;
        } else {
            say(2, "unknown option '%s'; see 'fathom analyze parallelism --help'", a);
            goto end;
        }
    }
    if (!nt) {
        say(2, "which trace? (an archive or a CTF directory)");
        goto end;
    }
    char err[1024];
    analyze_parallelism *p =
        analyze_parallelism_create(traces, nt, (uint32_t)skip_first, (uint32_t)skip_last, err, sizeof err);
    if (!p) {
        rc = say(1, "%s", err);
        goto end;
    }
    rc = analyze_parallelism_print(stdout, p, fmt) ? say(1, "cannot write the output") : 0;
    analyze_parallelism_destroy(p);
end:
    free(traces);
    return rc;
}
