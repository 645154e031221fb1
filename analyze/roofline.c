/* roofline.c -- the roofline analysis (roofline.h): the ceilings from a
 * `fathom peak` file, each trace's op types and classes against them, the
 * trajectories across traces, in text, CSV and JSON. */
#include "analyze/roofline.h"
#include "analyze/analyze_status.h"

#include "analyze/out.h"
#include "base/alloc.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int analyze_rate_ok(double v) { return isfinite(v) && v >= ANALYZE_RATE_MIN && v <= ANALYZE_RATE_MAX; }

static int rate(const json_t *v) { return json_is_number(v) && analyze_rate_ok(json_number_value(v)); }

/* ---- ceilings ------------------------------------------------------------------------- */
analyze_status analyze_peaks_load(const char *path, analyze_peaks *pk)
{
    struct stat sb;
    if (stat(path, &sb) != 0) /* jansson's "unable to open PATH: ..." would name it twice */
        return analyze_fail(ANALYZE_ERR_INPUT, "%s: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return analyze_fail(ANALYZE_ERR_INPUT, "%s: %s", path, strerror(EISDIR));
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    analyze_status rc = ANALYZE_ERR_INPUT;
    if (!root) {
        if (je.line > 0)
            analyze_fail(ANALYZE_ERR_INPUT, "%s: not JSON (line %d: %s)", path, je.line, je.text);
        else
            analyze_fail(ANALYZE_ERR_INPUT, "%s: %s", path, je.text);
        return ANALYZE_ERR_INPUT;
    }
    memset(pk, 0, sizeof *pk);
    const json_t *g = json_object_get(root, "peak_gflops"), *b = json_object_get(root, "bandwidth_gbs");
    const json_t *cpu = json_object_get(root, "cpu"), *sg = json_object_get(root, "sgemm");
    if (!json_is_object(root) || !json_is_number(g) || !json_is_number(b)) {
        analyze_fail(ANALYZE_ERR_INPUT,
                     "%s: not a `fathom peak --format json` file (no numbers peak_gflops and "
                     "bandwidth_gbs)",
                     path);
        goto end;
    }
    if (!rate(g) || !rate(b)) {
        analyze_fail(ANALYZE_ERR_INPUT, "%s: peak_gflops %g and bandwidth_gbs %g must each lie in [%g, %g]", path,
                     json_number_value(g), json_number_value(b), ANALYZE_RATE_MIN, ANALYZE_RATE_MAX);
        goto end;
    }
    pk->gflops = json_number_value(g);
    pk->gbs = json_number_value(b);
    if (json_is_string(cpu))
        snprintf(pk->cpu, sizeof pk->cpu, "%s", json_string_value(cpu));
    if (sg && !json_is_array(sg)) {
        analyze_fail(ANALYZE_ERR_INPUT, "%s: sgemm is not an array", path);
        goto end;
    }
    size_t i;
    const json_t *e;
    json_array_foreach(sg, i, e)
    {
        const json_t *t = json_object_get(e, "threads"), *v = json_object_get(e, "gflops");
        if (!json_is_integer(t) || json_integer_value(t) < 1 || json_integer_value(t) > UINT32_MAX || !rate(v)) {
            analyze_fail(ANALYZE_ERR_INPUT, "%s: sgemm entry %zu wants a positive threads and gflops in [%g, %g]", path,
                         i, ANALYZE_RATE_MIN, ANALYZE_RATE_MAX);
            goto end;
        }
        if (pk->nsgemm == ANALYZE_PEAKS_MAX) {
            analyze_fail(ANALYZE_ERR_INPUT, "%s: more than %d sgemm entries", path, ANALYZE_PEAKS_MAX);
            goto end;
        }
        pk->sgemm_threads[pk->nsgemm] = (uint32_t)json_integer_value(t);
        pk->sgemm_gflops[pk->nsgemm++] = json_number_value(v);
    }
    rc = ANALYZE_OK;
end:
    json_decref(root);
    return rc;
}

double analyze_peaks_gflops_at(const analyze_peaks *pk, uint32_t threads, int *at_threads)
{
    *at_threads = 0;
    for (size_t i = 0; i < pk->nsgemm; i++)
        if (pk->sgemm_threads[i] == threads) {
            *at_threads = 1;
            return pk->sgemm_gflops[i];
        }
    return pk->gflops;
}

const char *analyze_bound_name(analyze_bound b)
{
    static const char *const names[] = { "none", "memory", "compute" };
    return b <= ANALYZE_BOUND_COMPUTE ? names[b] : "?";
}

/* ---- rows ---------------------------------------------------------------------------- */
static void row_fill(analyze_roof_row *r, const char *name, const char *cls, const analyze_stat *s, uint64_t total_ns,
                     double P, double B)
{
    *r = (analyze_roof_row){
        .name = name, .cls = cls, .count = s->count, .ns = s->ns, .flops = s->flops, .bytes = s->bytes
    };
    r->share = total_ns ? (double)s->ns / (double)total_ns : 0.0;
    r->intensity = s->bytes ? (double)s->flops / (double)s->bytes : NAN;
    r->gflops = s->ns ? (double)s->flops / (double)s->ns : NAN; /* FLOP/ns = GFLOP/s */
    r->gbs = s->ns ? (double)s->bytes / (double)s->ns : NAN;
    if (!s->flops && !s->bytes) {
        r->bound = ANALYZE_BOUND_NONE;
        r->roof = r->of_roof = NAN;
        return;
    }
    double ridge = P / B;
    if (!s->bytes || r->intensity >= ridge) {
        r->bound = ANALYZE_BOUND_COMPUTE;
        r->roof = P;
        r->of_roof = r->gflops / P;
    } else {
        r->bound = ANALYZE_BOUND_MEMORY;
        r->roof = r->intensity * B;
        r->of_roof = r->gbs / B;
    }
}

static int cmp_row(const void *x, const void *y)
{
    const analyze_roof_row *a = x, *b = y;
    if (a->ns != b->ns)
        return a->ns > b->ns ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int trace_fill(analyze_roofline_trace *t, const analyze_profile *p, const analyze_peaks *pk)
{
    t->p = p;
    t->peak_gflops = analyze_peaks_gflops_at(pk, p->meta.have_begin ? p->meta.threads : 0, &t->peak_at_threads);
    t->peak_gbs = pk->gbs;
    t->ridge = t->peak_gflops / t->peak_gbs;
    uint64_t total = analyze_profile_total_ns(p);
    analyze_stat all;
    analyze_stat_init(&all);
    t->ops = base_calloc(p->nops ? p->nops : 1, sizeof *t->ops);
    t->classes = base_calloc(p->nclasses ? p->nclasses : 1, sizeof *t->classes);
    analyze_stat *cs = base_calloc(p->nclasses ? p->nclasses : 1, sizeof *cs);
    if (!t->ops || !t->classes || !cs) {
        base_free(cs);
        return -1;
    }
    for (size_t i = 0; i < p->nops; i++) {
        const analyze_optype *o = &p->ops[i];
        if (!o->all.count)
            continue;
        analyze_stat_merge(&all, &o->all);
        row_fill(&t->ops[t->nops++], o->name, p->classes[o->cls], &o->all, total, t->peak_gflops, t->peak_gbs);
    }
    analyze_profile_class_stats(p, cs);
    for (size_t c = 0; c < p->nclasses; c++)
        if (cs[c].count)
            row_fill(&t->classes[t->nclasses++], p->classes[c], p->classes[c], &cs[c], total, t->peak_gflops,
                     t->peak_gbs);
    base_free(cs);
    qsort(t->ops, t->nops, sizeof *t->ops, cmp_row);
    qsort(t->classes, t->nclasses, sizeof *t->classes, cmp_row);
    row_fill(&t->total, "all ops", "all ops", &all, total, t->peak_gflops, t->peak_gbs);
    return 0;
}

/* trajectory order: model, mode, batch, threads, then argument order */
static const analyze_roofline *sort_ctx;
static int cmp_str0(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : ""); }
static int cmp_traj(const void *x, const void *y)
{
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    const analyze_meta *a = &sort_ctx->t[i].p->meta, *b = &sort_ctx->t[j].p->meta;
    int c = cmp_str0(a->model, b->model);
    if (!c)
        c = cmp_str0(a->mode, b->mode);
    if (!c && a->batch != b->batch)
        c = a->batch < b->batch ? -1 : 1;
    if (!c && a->threads != b->threads)
        c = a->threads < b->threads ? -1 : 1;
    return c ? c : (i < j ? -1 : i > j);
}

void analyze_roofline_destroy(analyze_roofline *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        base_free(r->t[i].ops);
        base_free(r->t[i].classes);
    }
    base_free(r->t);
    base_free(r->order);
    base_free(r);
}

analyze_status analyze_roofline_create(analyze_profile *const *p, size_t n, const analyze_peaks *pk,
                                       analyze_roofline **out)
{
    *out = NULL;
    if (!n) {
        analyze_fail(ANALYZE_ERR_INPUT, "roofline wants at least one trace");
        return ANALYZE_ERR_INPUT;
    }
    if (!(isfinite(pk->gflops) && pk->gflops > 0 && isfinite(pk->gbs) && pk->gbs > 0)) {
        analyze_fail(ANALYZE_ERR_INPUT, "roofline wants positive ceilings (GFLOP/s %g, GB/s %g)", pk->gflops, pk->gbs);
        return ANALYZE_ERR_INPUT;
    }
    analyze_roofline *r = base_calloc(1, sizeof *r);
    if (!r || !(r->t = base_calloc(n, sizeof *r->t)) || !(r->order = base_calloc(n, sizeof *r->order)))
        goto oom;
    r->peaks = *pk;
    r->n = n;
    for (size_t i = 0; i < n; i++) {
        r->order[i] = i;
        if (trace_fill(&r->t[i], p[i], pk))
            goto oom;
    }
    sort_ctx = r;
    qsort(r->order, n, sizeof *r->order, cmp_traj);
    sort_ctx = NULL;
    *out = r;
    return ANALYZE_OK;
oom:
    analyze_roofline_destroy(r);
    analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
    return ANALYZE_ERR_NOMEM;
}

int analyze_roofline_mismatch(const analyze_roofline *r, char *buf, size_t len)
{
    if (!r->peaks.cpu[0])
        return 0;
    for (size_t i = 0; i < r->n; i++) {
        const char *cpu = r->t[i].p->meta.cpu;
        if (cpu && *cpu && strcmp(cpu, r->peaks.cpu) != 0) {
            snprintf(buf, len, "the peaks were measured on '%s' but %s was recorded on '%s'", r->peaks.cpu,
                     r->t[i].p->source ? r->t[i].p->source : "a trace", cpu);
            return 1;
        }
    }
    return 0;
}

/* The row of op type `name` in trace t, or NULL. */
static const analyze_roof_row *op_row(const analyze_roofline_trace *t, const char *name)
{
    for (size_t i = 0; i < t->nops; i++)
        if (strcmp(t->ops[i].name, name) == 0)
            return &t->ops[i];
    return NULL;
}

/* Op type names of all traces, by time summed over them (descending). */
static const char **names_by_time(const analyze_roofline *r, size_t *n)
{
    analyze_names all = { 0 };
    *n = 0;
    for (size_t i = 0; i < r->n; i++)
        for (size_t k = 0; k < r->t[i].nops; k++)
            if (analyze_names_add(&all, r->t[i].ops[k].name)) {
                analyze_names_free(&all);
                return NULL;
            }
    analyze_roof_row *u = base_calloc(all.n ? all.n : 1, sizeof *u);
    const char **out = base_calloc(all.n ? all.n : 1, sizeof *out);
    if (!u || !out) {
        base_free(u), base_free(out), analyze_names_free(&all);
        return NULL;
    }
    for (size_t j = 0; j < all.n; j++)
        u[j].name = all.v[j];
    for (size_t i = 0; i < r->n; i++)
        for (size_t k = 0; k < r->t[i].nops; k++)
            u[analyze_names_index(&all, r->t[i].ops[k].name)].ns += r->t[i].ops[k].ns;
    *n = all.n;
    qsort(u, *n, sizeof *u, cmp_row);
    for (size_t j = 0; j < *n; j++)
        out[j] = u[j].name;
    base_free(u), analyze_names_free(&all);
    return out;
}

/* ---- JSON ------------------------------------------------------------------------------ */
static json_t *row_json(const analyze_roof_row *r, const char *key)
{
    return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:f, s:o, s:o, s:o, s:o, s:o, s:s}", key, r->name, "class", r->cls,
                     "count", (json_int_t)r->count, "ns", (json_int_t)r->ns, "flops", (json_int_t)r->flops, "bytes",
                     (json_int_t)r->bytes, "share", r->share, "intensity", analyze_out_jreal(r->intensity), "gflops",
                     analyze_out_jreal(r->gflops), "gbs", analyze_out_jreal(r->gbs), "roof_gflops",
                     analyze_out_jreal(r->roof), "of_roof", analyze_out_jreal(r->of_roof), "bound",
                     analyze_bound_name(r->bound));
}

static json_t *rows_json(const analyze_roof_row *rows, size_t n, const char *key)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, row_json(&rows[i], key))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *trace_json(const analyze_roofline_trace *t)
{
    const analyze_meta *m = &t->p->meta;
    return json_pack(
        "{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:I, s:f, s:f, s:f, s:b, s:o, s:o, s:o}", "source",
        t->p->source ? t->p->source : "", "model", analyze_profile_model(t->p), "mode", analyze_profile_mode(t->p),
        "preset", analyze_out_jstr(m->preset), "batch", m->have_begin ? json_integer(m->batch) : json_null(), "threads",
        m->have_begin ? json_integer(m->threads) : json_null(), "cpu", analyze_out_jstr(m->cpu), "steps",
        (json_int_t)analyze_profile_steps_kept(t->p), "peak_gflops", t->peak_gflops, "peak_gbs", t->peak_gbs, "ridge",
        t->ridge, "peak_at_threads", t->peak_at_threads, "total", row_json(&t->total, "name"), "op_types",
        rows_json(t->ops, t->nops, "op"), "classes", rows_json(t->classes, t->nclasses, "class_name"));
}

static int roofline_json(FILE *f, const analyze_roofline *r)
{
    json_t *traces = json_array(), *traj = json_array();
    size_t nn = 0;
    const char **names = names_by_time(r, &nn);
    for (size_t i = 0; traces && i < r->n; i++)
        json_array_append_new(traces, trace_json(&r->t[i]));
    for (size_t k = 0; traj && names && r->n > 1 && k < nn; k++) {
        json_t *pts = json_array();
        for (size_t j = 0; pts && j < r->n; j++) {
            const analyze_roofline_trace *t = &r->t[r->order[j]];
            const analyze_roof_row *row = op_row(t, names[k]);
            const analyze_meta *m = &t->p->meta;
            if (row)
                json_array_append_new(pts, json_pack("{s:I, s:o, s:o, s:o, s:o, s:o}", "trace", (json_int_t)r->order[j],
                                                     "batch", m->have_begin ? json_integer(m->batch) : json_null(),
                                                     "threads", m->have_begin ? json_integer(m->threads) : json_null(),
                                                     "intensity", analyze_out_jreal(row->intensity), "gflops",
                                                     analyze_out_jreal(row->gflops), "of_roof",
                                                     analyze_out_jreal(row->of_roof)));
        }
        json_array_append_new(traj, json_pack("{s:s, s:o}", "op", names[k], "points", pts ? pts : json_null()));
    }
    base_free(names);
    if (!names) {
        json_decref(traces), json_decref(traj);
        return -1;
    }
    return analyze_out_json(f, json_pack("{s:i, s:{s:f, s:f, s:o}, s:o, s:o}", "schema", 1, "peaks", "gflops",
                                         r->peaks.gflops, "gbs", r->peaks.gbs, "cpu", analyze_out_jstr(r->peaks.cpu),
                                         "traces", traces, "trajectories", traj));
}

/* ---- CSV ------------------------------------------------------------------------------- */
static void csv_row(FILE *f, const analyze_roofline_trace *t, const char *level, const analyze_roof_row *r)
{
    char lb[512];
    analyze_out_csv_str(f, t->p->source);
    fputc(',', f);
    analyze_out_csv_str(f, analyze_out_label(t->p, lb, sizeof lb));
    fprintf(f, ",%s,", level);
    analyze_out_csv_str(f, r->name);
    fputc(',', f);
    analyze_out_csv_str(f, r->cls);
    if (t->p->meta.have_begin)
        fprintf(f, ",%u,%u", t->p->meta.batch, t->p->meta.threads);
    else
        fputs(",,", f);
    fprintf(f, ",%llu,%llu,%llu,%llu,%.6f", (unsigned long long)r->count, (unsigned long long)r->ns,
            (unsigned long long)r->flops, (unsigned long long)r->bytes, r->share);
    analyze_out_csv_num(f, "%.6g", r->intensity);
    analyze_out_csv_num(f, "%.6g", r->gflops);
    analyze_out_csv_num(f, "%.6g", r->gbs);
    analyze_out_csv_num(f, "%.6g", r->roof);
    analyze_out_csv_num(f, "%.6f", r->of_roof);
    fprintf(f, ",%s,%.6g,%.6g\n", analyze_bound_name(r->bound), t->peak_gflops, t->peak_gbs);
}

static int roofline_csv(FILE *f, const analyze_roofline *r)
{
    fputs("source,trace,level,name,class,batch,threads,count,ns,flops,bytes,share,intensity,gflops,gbs,roof_gflops,"
          "of_roof,bound,peak_gflops,peak_gbs\n",
          f);
    for (size_t i = 0; i < r->n; i++) {
        const analyze_roofline_trace *t = &r->t[i];
        csv_row(f, t, "total", &t->total);
        for (size_t k = 0; k < t->nops; k++)
            csv_row(f, t, "op", &t->ops[k]);
        for (size_t k = 0; k < t->nclasses; k++)
            csv_row(f, t, "class", &t->classes[k]);
    }
    return ferror(f) ? -1 : 0;
}

/* ---- text ------------------------------------------------------------------------------ */
static void text_head(FILE *f, int nw)
{
    fprintf(f, "%-*s %-13s %7s %9s %9s %8s %9s %7s  %s\n", nw, "", "class", "time", "FLOP/B", "GFLOP/s", "GB/s",
            "roof GF/s", "of roof", "bound");
}

static void text_row(FILE *f, int nw, const analyze_roof_row *r, int show_cls)
{
    fprintf(f, "%-*s %-13s %6.1f%%", nw, r->name, show_cls ? r->cls : "", 100 * r->share);
    analyze_out_text_real(f, 9, 2, r->intensity);
    analyze_out_text_real(f, 9, 2, r->gflops);
    analyze_out_text_real(f, 8, 2, r->gbs);
    analyze_out_text_real(f, 9, 2, r->roof);
    analyze_out_text_real(f, 7, 2, r->of_roof);
    fprintf(f, "  %s\n", analyze_bound_name(r->bound));
}

static void text_trace(FILE *f, const analyze_roofline_trace *t, size_t top)
{
    const analyze_meta *m = &t->p->meta;
    fprintf(f, "== %s %s", analyze_profile_model(t->p), analyze_profile_mode(t->p));
    if (m->have_begin)
        fprintf(f, " (%s, batch %u, %u thread%s)", analyze_out_or_unknown(m->preset), m->batch, m->threads,
                m->threads == 1 ? "" : "s");
    fprintf(f, " -- %s\n", t->p->source ? t->p->source : "?");
    fprintf(f, "ceilings: %.1f GFLOP/s (%s), %.1f GB/s; ridge point %.2f FLOP/byte\n", t->peak_gflops,
            t->peak_at_threads ? "sgemm at this thread count" : "peak", t->peak_gbs, t->ridge);
    int nw = analyze_out_width(20, "op type");
    size_t shown = top && top < t->nops ? top : t->nops;
    for (size_t k = 0; k < shown; k++)
        nw = analyze_out_width(nw, t->ops[k].name);
    for (size_t k = 0; k < t->nclasses; k++)
        nw = analyze_out_width(nw, t->classes[k].name);
    fprintf(f, "%-*s", nw, "op type");
    text_head(f, 0);
    for (size_t k = 0; k < shown; k++)
        text_row(f, nw, &t->ops[k], 1);
    if (shown < t->nops)
        fprintf(f, "(%zu more op types: --top 0 shows them all)\n", t->nops - shown);
    text_row(f, nw, &t->total, 0);
    fprintf(f, "%-*s", nw, "by class");
    text_head(f, 0);
    for (size_t k = 0; k < t->nclasses; k++)
        text_row(f, nw, &t->classes[k], 0);
}

static int roofline_text(FILE *f, const analyze_roofline *r, size_t top)
{
    for (size_t i = 0; i < r->n; i++) {
        if (i)
            fputc('\n', f);
        text_trace(f, &r->t[i], top);
    }
    if (r->n < 2)
        return ferror(f) ? -1 : 0;
    size_t nn = 0;
    const char **names = names_by_time(r, &nn);
    if (!names)
        return -1;
    size_t shown = top && top < nn ? top : nn;
    int lw = 24;
    char lb[512];
    for (size_t j = 0; j < r->n; j++)
        lw = analyze_out_width(lw, analyze_out_label(r->t[j].p, lb, sizeof lb));
    fprintf(f, "\n== trajectories (each op type across the traces, by model, mode, batch, threads)\n");
    fprintf(f, "%-*s %6s %7s %9s %9s %7s  %s\n", lw, "op type / trace", "batch", "threads", "FLOP/B", "GFLOP/s",
            "of roof", "bound");
    for (size_t k = 0; k < shown; k++) {
        fprintf(f, "%s\n", names[k]);
        for (size_t j = 0; j < r->n; j++) {
            const analyze_roofline_trace *t = &r->t[r->order[j]];
            const analyze_roof_row *row = op_row(t, names[k]);
            if (!row)
                continue;
            fprintf(f, "  %-*s", lw - 2, analyze_out_label(t->p, lb, sizeof lb));
            if (t->p->meta.have_begin)
                fprintf(f, " %6u %7u", t->p->meta.batch, t->p->meta.threads);
            else
                fprintf(f, " %6s %7s", "?", "?");
            analyze_out_text_real(f, 9, 2, row->intensity);
            analyze_out_text_real(f, 9, 2, row->gflops);
            analyze_out_text_real(f, 7, 2, row->of_roof);
            fprintf(f, "  %s\n", analyze_bound_name(row->bound));
        }
    }
    if (shown < nn)
        fprintf(f, "(%zu more op types: --top 0 shows them all)\n", nn - shown);
    base_free(names);
    return ferror(f) ? -1 : 0;
}

int analyze_roofline_print(FILE *f, const analyze_roofline *r, cli_format fmt, size_t top)
{
    switch (fmt) {
    case CLI_JSON: return roofline_json(f, r);
    case CLI_CSV: return roofline_csv(f, r);
    default: return roofline_text(f, r, top);
    }
}

int analyze_peaks_override(analyze_peaks *pk, int have_file, double gflops, double gbs)
{
    if (!have_file && (!gflops || !gbs))
        return -1;
    if (gflops) /* one ceiling for every thread count */
        pk->gflops = gflops, pk->nsgemm = 0;
    if (gbs)
        pk->gbs = gbs;
    return 0;
}

/* ---- the row ------------------------------------------------------------------------- */
static analyze_status create(analyze_profile *const *p, size_t n, const analyze_options *o, void **out)
{
    if (!o->peaks)
        return analyze_fail(ANALYZE_ERR_INPUT, "roofline wants the ceilings");
    analyze_roofline *r = NULL;
    analyze_status st = analyze_roofline_create(p, n, o->peaks, &r);
    if (st)
        return st;
    *out = r;
    return ANALYZE_OK;
}

static analyze_status print(FILE *f, const void *r, cli_format fmt, const analyze_options *o)
{
    return analyze_out_status(f, analyze_roofline_print(f, r, fmt, o->top));
}

static void destroy(void *r) { analyze_roofline_destroy(r); }

static int mismatch(const void *r, char *buf, size_t len) { return analyze_roofline_mismatch(r, buf, len); }

const analyze_analysis analyze_row_roofline = {
    .name = "roofline",
    .args = "[options] --peak FILE | --gflops X --gbs Y TRACE...",
    .summary = "per op type and class: arithmetic intensity (FLOP/byte), achieved\n"
               "GFLOP/s and GB/s against the recording machine's ceilings (from\n"
               "`fathom peak --format json > FILE` run there), the fraction of\n"
               "the roof reached, memory- or compute-bound; with several traces\n"
               "(batch sizes, thread counts) each op type's trajectory",
    .about = "Per op type and class: arithmetic intensity (FLOP/byte), achieved GFLOP/s and\n"
             "GB/s against the recording machine's ceilings (from `fathom peak --format json >\n"
             "FILE` run there), the fraction of the roof reached, memory- or compute-bound;\n"
             "with several traces (batch sizes, thread counts) each op type's trajectory.\n",
    .options = "  --peak FILE             the ceilings, from `fathom peak --format json`\n"
               "  --gflops X, --gbs Y     the compute and memory ceilings (override --peak)\n"
               "  --top N                 show only the first N op types (text)\n",
    .takes = ANALYZE_TAKES_TOP | ANALYZE_TAKES_PEAKS | ANALYZE_TAKES_WINDOW,
    .min_traces = 1,
    .create = create,
    .print = print,
    .destroy = destroy,
    .mismatch = mismatch,
};
