/* scaling.c -- traces of one model at several thread counts: speedup, efficiency, an Amdahl fit per op type. */
#include "analyze/scaling.h"

#include "analyze/out.h"
#include "base/alloc.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void scaling_row_free(analyze_scaling_row *r)
{
    if (r)
        base_free(r->ns);
}

void analyze_scaling_destroy(analyze_scaling *s)
{
    if (!s)
        return;
    for (size_t i = 0; s->ops && i < s->nops; i++)
        scaling_row_free(&s->ops[i]);
    for (size_t i = 0; s->classes && i < s->nclasses; i++)
        scaling_row_free(&s->classes[i]);
    scaling_row_free(&s->total);
    base_free(s->ops), base_free(s->classes);
    base_free(s->p), base_free(s->threads), base_free(s->per), base_free(s->step_ns), base_free(s->step_speedup),
        base_free(s->step_efficiency);
    base_free(s);
}

/* ns, speedup and efficiency in one block of 3n doubles; ns all NAN. 0 or -1. */
static int scaling_row_init(analyze_scaling_row *r, size_t n, const char *name, const char *cls)
{
    memset(r, 0, sizeof *r);
    r->name = name, r->cls = cls;
    r->ns = base_malloc(3 * n * sizeof *r->ns);
    if (!r->ns)
        return -1;
    r->speedup = r->ns + n, r->efficiency = r->ns + 2 * n;
    for (size_t i = 0; i < 3 * n; i++)
        r->ns[i] = NAN;
    return 0;
}

int analyze_amdahl_fit(const uint32_t *threads, const double *t, size_t n, double *a, double *b)
{
    double sx = 0, st = 0, m = 0;
    *a = *b = NAN;
    for (size_t i = 0; i < n; i++)
        if (isfinite(t[i]) && threads[i] > 0)
            sx += 1.0 / threads[i], st += t[i], m++;
    if (m < 2)
        return -1;
    double mx = sx / m, mt = st / m, sxx = 0, sxt = 0, sxx0 = 0, sxt0 = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(t[i]) && threads[i] > 0) {
            double x = 1.0 / threads[i];
            sxx += (x - mx) * (x - mx), sxt += (x - mx) * (t[i] - mt);
            sxx0 += x * x, sxt0 += x * t[i];
        }
    if (!(sxx > 0)) /* every point at one thread count: no slope to fit */
        return -1;
    double bb = sxt / sxx, aa = mt - bb * mx;
    if (bb < 0) /* slower with more threads: all serial */
        bb = 0, aa = mt;
    else if (aa < 0) /* better than linear: all parallel */
        aa = 0, bb = sxt0 / sxx0;
    /* rounding noise of a fit that is exactly serial or exactly parallel */
    double t0 = aa + bb * mx;
    if (aa < 1e-12 * t0)
        aa = 0;
    if (bb * mx < 1e-12 * t0)
        bb = 0;
    *a = aa, *b = bb;
    return 0;
}

/* Speedups, efficiencies and the fit of a row whose ns are set. */
static void scaling_row_finish(analyze_scaling_row *r, const analyze_scaling *s)
{
    for (size_t i = 0; i < s->n; i++) {
        r->speedup[i] = r->ns[0] > 0 && r->ns[i] > 0 ? r->ns[0] / r->ns[i] : NAN;
        r->efficiency[i] = r->speedup[i] * (double)s->threads[0] / (double)s->threads[i];
    }
    r->serial_fraction = r->limit_speedup = NAN;
    if (analyze_amdahl_fit(s->threads, r->ns, s->n, &r->a_ns, &r->b_ns) != 0)
        return;
    double at0 = r->a_ns + r->b_ns / (double)s->threads[0];
    if (at0 > 0) {
        r->serial_fraction = r->a_ns / at0;
        r->limit_speedup = r->serial_fraction > 0 ? 1.0 / r->serial_fraction : INFINITY;
    }
}

/* The row named `name` in rows[0..*n), appended when absent (room is the caller's). */
static analyze_scaling_row *scaling_row(analyze_scaling_row *rows, size_t *n, size_t nt, const char *name,
                                        const char *cls)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(rows[i].name, name) == 0)
            return &rows[i];
    if (scaling_row_init(&rows[*n], nt, name, cls) != 0)
        return NULL;
    return &rows[(*n)++];
}

/* By baseline time descending (absent at the baseline: last), ties by name. */
static int cmp_scaling_row(const void *x, const void *y)
{
    const analyze_scaling_row *a = x, *b = y;
    double ta = isfinite(a->ns[0]) ? a->ns[0] : -1, tb = isfinite(b->ns[0]) ? b->ns[0] : -1;
    if (ta != tb)
        return ta > tb ? -1 : 1;
    return strcmp(a->name, b->name);
}

analyze_status analyze_scaling_create(analyze_profile *const *p, size_t n, analyze_scaling **out)
{
    *out = NULL;
    analyze_scaling *s = NULL;
    analyze_stat *cs = NULL;
    if (n < 2) {
        analyze_fail(ANALYZE_ERR_INPUT, "scaling wants at least two traces at different thread counts, not %zu", n);
        return ANALYZE_ERR_INPUT;
    }
    for (size_t i = 0; i < n; i++)
        if (!p[i]->meta.have_begin || p[i]->meta.threads == 0) {
            analyze_fail(ANALYZE_ERR_INPUT, "%s has no threads value (%s): scaling cannot place it",
                         p[i]->source ? p[i]->source : "?", p[i]->meta.have_begin ? "threads is 0" : "no run_begin");
            return ANALYZE_ERR_INPUT;
        }
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (p[i]->meta.threads == p[j]->meta.threads) {
                analyze_fail(ANALYZE_ERR_INPUT,
                             "%s and %s both ran with %u thread%s: scaling wants one trace per thread count",
                             p[i]->source ? p[i]->source : "?", p[j]->source ? p[j]->source : "?", p[i]->meta.threads,
                             p[i]->meta.threads == 1 ? "" : "s");
                return ANALYZE_ERR_INPUT;
            }
    s = base_calloc(1, sizeof *s);
    if (!s)
        goto oom;
    s->n = n;
    s->p = base_malloc(n * sizeof *s->p);
    s->threads = base_malloc(n * sizeof *s->threads);
    s->per = base_malloc(n * sizeof *s->per);
    s->step_ns = base_malloc(n * sizeof *s->step_ns);
    s->step_speedup = base_malloc(n * sizeof *s->step_speedup);
    s->step_efficiency = base_malloc(n * sizeof *s->step_efficiency);
    size_t nops = 0, ncls = 0, maxcls = 1;
    for (size_t i = 0; i < n; i++) {
        nops += p[i]->nops, ncls += p[i]->nclasses;
        if (p[i]->nclasses > maxcls)
            maxcls = p[i]->nclasses;
    }
    s->ops = base_calloc(nops ? nops : 1, sizeof *s->ops);
    s->classes = base_calloc(ncls ? ncls : 1, sizeof *s->classes);
    cs = base_malloc(maxcls * sizeof *cs);
    if (!s->p || !s->threads || !s->per || !s->step_ns || !s->step_speedup || !s->step_efficiency || !s->ops ||
        !s->classes || !cs || scaling_row_init(&s->total, n, "op time", ""))
        goto oom;
    for (size_t i = 0; i < n; i++) /* insertion sort by threads: few traces */
        s->p[i] = p[i];
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && s->p[j]->meta.threads < s->p[j - 1]->meta.threads; j--) {
            const analyze_profile *t = s->p[j];
            s->p[j] = s->p[j - 1], s->p[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        const analyze_profile *q = s->p[i];
        uint64_t k = analyze_profile_steps_kept(q);
        s->threads[i] = q->meta.threads;
        s->per[i] = k ? (double)k : 1.0;
        s->step_ns[i] = analyze_step_ns(q);
        s->total.ns[i] = (double)analyze_profile_total_ns(q) / s->per[i];
        for (size_t o = 0; o < q->nops; o++) {
            if (!q->ops[o].all.count)
                continue;
            analyze_scaling_row *r = scaling_row(s->ops, &s->nops, n, q->ops[o].name, q->classes[q->ops[o].cls]);
            if (!r)
                goto oom;
            r->ns[i] = (isfinite(r->ns[i]) ? r->ns[i] : 0) + (double)q->ops[o].all.ns / s->per[i];
        }
        analyze_profile_class_stats(q, cs);
        for (size_t c = 0; c < q->nclasses; c++) {
            if (!cs[c].count)
                continue;
            analyze_scaling_row *r = scaling_row(s->classes, &s->nclasses, n, q->classes[c], q->classes[c]);
            if (!r)
                goto oom;
            r->ns[i] = (isfinite(r->ns[i]) ? r->ns[i] : 0) + (double)cs[c].ns / s->per[i];
        }
    }
    for (size_t i = 0; i < n; i++) {
        s->step_speedup[i] = s->step_ns[0] > 0 && s->step_ns[i] > 0 ? s->step_ns[0] / s->step_ns[i] : NAN;
        s->step_efficiency[i] = s->step_speedup[i] * (double)s->threads[0] / (double)s->threads[i];
    }
    scaling_row_finish(&s->total, s);
    for (size_t i = 0; i < s->nops; i++)
        scaling_row_finish(&s->ops[i], s);
    for (size_t i = 0; i < s->nclasses; i++)
        scaling_row_finish(&s->classes[i], s);
    qsort(s->ops, s->nops, sizeof *s->ops, cmp_scaling_row);
    qsort(s->classes, s->nclasses, sizeof *s->classes, cmp_scaling_row);
    base_free(cs);
    *out = s;
    return ANALYZE_OK;
oom:
    analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
    base_free(cs);
    analyze_scaling_destroy(s);
    return ANALYZE_ERR_NOMEM;
}

int analyze_scaling_mismatch(const analyze_scaling *s, char *buf, size_t len)
{
    const analyze_profile *first = NULL;
    for (size_t i = 0; i < s->n; i++) {
        const analyze_meta *m = &s->p[i]->meta;
        if (!m->model || !*m->model || !m->mode || !*m->mode)
            continue;
        if (!first) {
            first = s->p[i];
            continue;
        }
        if (analyze_profile_named_differently(first->meta.model, m->model) ||
            analyze_profile_named_differently(first->meta.mode, m->mode)) {
            char la[128], lb[128];
            if (buf && len)
                snprintf(buf, len, "%s is %s, %s is %s: not traces of one model and mode",
                         first->source ? first->source : "?", analyze_out_label(first, la, sizeof la),
                         s->p[i]->source ? s->p[i]->source : "?", analyze_out_label(s->p[i], lb, sizeof lb));
            return 1;
        }
    }
    return 0;
}

static json_t *json_reals(const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, analyze_out_jreal(v[i]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *scaling_json_row(const analyze_scaling_row *r, size_t n, const char *key)
{
    json_t *o = json_pack("{s:s}", key, r->name);
    int bad = !o;
    if (!bad && strcmp(key, "op") == 0)
        bad |= json_object_set_new(o, "class", json_string(r->cls ? r->cls : ""));
    if (!bad) {
        bad |= json_object_set_new(o, "ns", json_reals(r->ns, n));
        bad |= json_object_set_new(o, "speedup", json_reals(r->speedup, n));
        bad |= json_object_set_new(o, "efficiency", json_reals(r->efficiency, n));
        bad |= json_object_set_new(o, "serial_ns", analyze_out_jreal(r->a_ns));
        bad |= json_object_set_new(o, "parallel_ns", analyze_out_jreal(r->b_ns));
        bad |= json_object_set_new(o, "serial_fraction", analyze_out_jreal(r->serial_fraction));
        bad |= json_object_set_new(o, "limit_speedup", analyze_out_jreal(r->limit_speedup));
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static int scaling_json(FILE *f, const analyze_scaling *s)
{
    json_t *root = json_object(), *traces = json_array(), *th = json_array(), *ops = json_array(), *cls = json_array(),
           *total = scaling_json_row(&s->total, s->n, "name");
    int bad = !root || !traces || !th || !ops || !cls || !total;
    if (bad) {
        json_decref(root), json_decref(traces), json_decref(th), json_decref(ops), json_decref(cls);
        json_decref(total);
        return -1;
    }
    json_object_del(total, "name");
    bad |= json_object_set_new(total, "step_ns", json_reals(s->step_ns, s->n));
    bad |= json_object_set_new(total, "step_speedup", json_reals(s->step_speedup, s->n));
    bad |= json_object_set_new(total, "step_efficiency", json_reals(s->step_efficiency, s->n));
    bad |= json_object_set_new(root, "schema", json_integer(1));
    bad |= json_object_set_new(root, "analysis", json_string("scaling"));
    bad |= json_object_set_new(root, "traces", traces);
    bad |= json_object_set_new(root, "threads", th);
    bad |= json_object_set_new(root, "op_types", ops);
    bad |= json_object_set_new(root, "classes", cls);
    bad |= json_object_set_new(root, "total", total);
    for (size_t i = 0; i < s->n && !bad; i++) {
        const analyze_profile *q = s->p[i];
        bad |= json_array_append_new(th, json_integer((json_int_t)s->threads[i]));
        bad |= json_array_append_new(
            traces, json_pack("{s:s, s:s, s:s, s:I, s:I, s:f, s:f}", "source", q->source ? q->source : "", "model",
                              analyze_profile_model(q), "mode", analyze_profile_mode(q), "threads",
                              (json_int_t)s->threads[i], "steps", (json_int_t)analyze_profile_steps_kept(q), "step_ns",
                              s->step_ns[i], "op_ns", s->total.ns[i]));
    }
    for (size_t i = 0; i < s->nops && !bad; i++)
        bad |= json_array_append_new(ops, scaling_json_row(&s->ops[i], s->n, "op"));
    for (size_t i = 0; i < s->nclasses && !bad; i++)
        bad |= json_array_append_new(cls, scaling_json_row(&s->classes[i], s->n, "class"));
    if (bad) {
        json_decref(root);
        return -1;
    }
    return analyze_out_json(f, root);
}

/* A CSV number: empty when it is not one, "inf" when infinite. */
static void csv_num_inf(FILE *f, const char *fmt, double v)
{
    if (isinf(v) && v > 0)
        fputs(",inf", f);
    else
        analyze_out_csv_num(f, fmt, v);
}

static void scaling_csv_row(FILE *f, const analyze_scaling *s, const char *level, const analyze_scaling_row *r, int fit)
{
    for (size_t i = 0; i < s->n; i++) {
        fprintf(f, "%s,", level);
        analyze_out_csv_str(f, r->name);
        fputc(',', f);
        analyze_out_csv_str(f, r->cls);
        fprintf(f, ",%u", s->threads[i]);
        analyze_out_csv_num(f, "%.1f", r->ns[i]);
        analyze_out_csv_num(f, "%.6f", r->speedup[i]);
        analyze_out_csv_num(f, "%.6f", r->efficiency[i]);
        if (fit) {
            analyze_out_csv_num(f, "%.9f", r->serial_fraction);
            csv_num_inf(f, "%.6f", r->limit_speedup);
        } else {
            fputs(",,", f);
        }
        fputc('\n', f);
    }
}

static int scaling_csv(FILE *f, const analyze_scaling *s)
{
    fputs("level,name,class,threads,ns,speedup,efficiency,serial_fraction,limit_speedup\n", f);
    analyze_scaling_row step = {
        .name = "step_ns", .cls = "", .ns = s->step_ns, .speedup = s->step_speedup, .efficiency = s->step_efficiency
    };
    analyze_scaling_row op = s->total;
    op.name = "op_ns";
    scaling_csv_row(f, s, "step", &step, 0);
    scaling_csv_row(f, s, "step", &op, 1);
    for (size_t i = 0; i < s->nops; i++)
        scaling_csv_row(f, s, "op_type", &s->ops[i], 1);
    for (size_t i = 0; i < s->nclasses; i++)
        scaling_csv_row(f, s, "class", &s->classes[i], 1);
    return ferror(f) ? -1 : 0;
}

/* "  0.100" / "    inf" / "      -" in `w` columns. */
static void text_limit(FILE *f, int w, double v)
{
    if (isinf(v) && v > 0)
        fprintf(f, " %*s", w, "inf");
    else
        analyze_out_text_real(f, w, 3, v);
}

static void scaling_text_row(FILE *f, const analyze_scaling *s, int nw, int cw, const analyze_scaling_row *r)
{
    fprintf(f, "%-*s", nw, r->name);
    if (cw)
        fprintf(f, " %-*s", cw, r->cls ? r->cls : "");
    for (size_t i = 0; i < s->n; i++)
        if (isfinite(r->ns[i]))
            fprintf(f, " %10.4f", r->ns[i] / 1e6);
        else
            fprintf(f, " %10s", "-");
    analyze_out_text_real(f, 8, 3, r->speedup[s->n - 1]);
    analyze_out_text_real(f, 8, 3, r->serial_fraction);
    text_limit(f, 8, r->limit_speedup);
    fputc('\n', f);
}

static void scaling_text_head(FILE *f, const analyze_scaling *s, int nw, const char *what, int cw)
{
    fprintf(f, "\n%-*s", nw, what);
    if (cw)
        fprintf(f, " %-*s", cw, "class");
    for (size_t i = 0; i < s->n; i++) {
        char h[32];
        snprintf(h, sizeof h, "ms@%u", s->threads[i]);
        fprintf(f, " %10s", h);
    }
    char sp[32];
    snprintf(sp, sizeof sp, "x@%u", s->threads[s->n - 1]);
    fprintf(f, " %8s %8s %8s\n", sp, "serial f", "limit");
}

static int scaling_text(FILE *f, const analyze_scaling *s, size_t top)
{
    char l[128];
    fprintf(f, "== scaling: %s at", analyze_out_label(s->p[0], l, sizeof l));
    for (size_t i = 0; i < s->n; i++)
        fprintf(f, "%s %u", i ? "," : "", s->threads[i]);
    fprintf(f, " threads; baseline %u thread%s; per kept step\n", s->threads[0], s->threads[0] == 1 ? "" : "s");
    fprintf(f, "%7s %6s %10s %8s %8s %10s %8s %8s  %s\n", "threads", "steps", "step ms", "speedup", "effic.", "op ms",
            "speedup", "effic.", "source");
    for (size_t i = 0; i < s->n; i++) {
        uint64_t k = analyze_profile_steps_kept(s->p[i]);
        fprintf(f, "%7u %6llu ", s->threads[i], (unsigned long long)k);
        if (k)
            fprintf(f, "%10.4f", s->step_ns[i] / 1e6);
        else
            fprintf(f, "%10s", "-");
        analyze_out_text_real(f, 8, 3, s->step_speedup[i]);
        analyze_out_text_real(f, 8, 3, s->step_efficiency[i]);
        fprintf(f, " %10.4f", s->total.ns[i] / 1e6);
        analyze_out_text_real(f, 8, 3, s->total.speedup[i]);
        analyze_out_text_real(f, 8, 3, s->total.efficiency[i]);
        fprintf(f, "  %s\n", s->p[i]->source ? s->p[i]->source : "?");
    }
    for (size_t i = 0; i < s->n; i++)
        if (!analyze_profile_steps_kept(s->p[i]))
            fprintf(f, "note: %s has no kept steps: its whole-trace totals are used\n",
                    s->p[i]->source ? s->p[i]->source : "?");
    const analyze_scaling_row *t = &s->total;
    fprintf(f, "op time: speedup");
    analyze_out_text_real(f, 0, 3, t->speedup[s->n - 1]);
    fprintf(f, " at %u threads; Amdahl fit t(T) = a + b/T:", s->threads[s->n - 1]);
    if (isfinite(t->a_ns))
        fprintf(f, " a %.4f ms, b %.4f ms; serial fraction", t->a_ns / 1e6, t->b_ns / 1e6);
    else
        fprintf(f, " none; serial fraction");
    analyze_out_text_real(f, 0, 3, t->serial_fraction);
    fprintf(f, ", limit speedup");
    text_limit(f, 0, t->limit_speedup);
    fputc('\n', f);

    int nw = 30; /* the op name column fits the longest name */
    for (size_t i = 0; i < s->nops; i++)
        nw = analyze_out_width(nw, s->ops[i].name);
    scaling_text_head(f, s, nw, "op type", 13);
    size_t shown = top && top < s->nops ? top : s->nops;
    for (size_t i = 0; i < shown; i++)
        scaling_text_row(f, s, nw, 13, &s->ops[i]);
    if (shown < s->nops) {
        char label[64];
        analyze_scaling_row rest;
        snprintf(label, sizeof label, "(%zu more op types)", s->nops - shown);
        if (scaling_row_init(&rest, s->n, label, "") != 0)
            return -1;
        for (size_t i = shown; i < s->nops; i++)
            for (size_t k = 0; k < s->n; k++)
                if (isfinite(s->ops[i].ns[k]))
                    rest.ns[k] = (isfinite(rest.ns[k]) ? rest.ns[k] : 0) + s->ops[i].ns[k];
        scaling_row_finish(&rest, s);
        scaling_text_row(f, s, nw, 13, &rest);
        scaling_row_free(&rest);
    }
    scaling_text_head(f, s, 30, "class", 0);
    for (size_t i = 0; i < s->nclasses; i++)
        scaling_text_row(f, s, 30, 0, &s->classes[i]);
    fprintf(f,
            "\nms@T: time per step at T threads; x@%u: speedup over %u thread%s; serial f: Amdahl serial "
            "fraction at %u; limit: 1 / serial f\n\n",
            s->threads[s->n - 1], s->threads[0], s->threads[0] == 1 ? "" : "s", s->threads[0]);
    return ferror(f) ? -1 : 0;
}

int analyze_scaling_print(FILE *f, const analyze_scaling *s, cli_format fmt, size_t top)
{
    if (fmt == CLI_JSON)
        return scaling_json(f, s);
    if (fmt == CLI_CSV)
        return scaling_csv(f, s);
    return scaling_text(f, s, top);
}

/* ---- the row ------------------------------------------------------------------------- */
static analyze_status create(analyze_profile *const *p, size_t n, const analyze_options *o, void **out)
{
    (void)o;
    analyze_scaling *s = NULL;
    analyze_status st = analyze_scaling_create(p, n, &s);
    if (st)
        return st;
    *out = s;
    return ANALYZE_OK;
}

static analyze_status print(FILE *f, const void *r, cli_format fmt, const analyze_options *o)
{
    return analyze_out_status(f, analyze_scaling_print(f, r, fmt, o->top));
}

static void destroy(void *r) { analyze_scaling_destroy(r); }

static int mismatch(const void *r, char *buf, size_t len) { return analyze_scaling_mismatch(r, buf, len); }

/* traces without kept steps (the text output says so itself) */
static void notes(const void *r, cli_format fmt, analyze_note_fn fn, void *ctx)
{
    const analyze_scaling *s = r;
    for (size_t i = 0; i < s->n && fmt != CLI_TEXT; i++) {
        if (analyze_profile_steps_kept(s->p[i]))
            continue;
        char line[2048];
        snprintf(line, sizeof line, "%s has no kept steps: its whole-trace totals are used", s->p[i]->source);
        fn(ctx, line);
    }
}

const analyze_analysis analyze_row_scaling = {
    .name = "scaling",
    .args = "[options] TRACE TRACE...",
    .summary = "traces of one model at different thread counts: step time,\n"
               "speedup and efficiency; per op type and class, time per step\n"
               "at each thread count and an Amdahl fit (serial fraction)",
    .about = "Traces of one model at different thread counts: step time, speedup and\n"
             "efficiency; per op type and class the time per step at each thread count and an\n"
             "Amdahl fit (the serial fraction).\n",
    .options = "  --top N                 show only the first N op types (text)\n",
    .takes = ANALYZE_TAKES_TOP | ANALYZE_TAKES_WINDOW,
    .min_traces = 2,
    .traces_rule = "at least two traces (one model at different thread counts)",
    .create = create,
    .print = print,
    .destroy = destroy,
    .mismatch = mismatch,
    .notes = notes,
};
